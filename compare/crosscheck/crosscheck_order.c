/*
 * compare/crosscheck/crosscheck_order.c - the per-thread order join of `tracetool
 * crosscheck`: PyTorch 2.0/2.1 give each thread its own External-id counter,
 * so the ops of one ET thread in rf_id order are aligned with a window of
 * one Kineto thread's ops in External-id order. Windows are found from rare
 * "anchor" ops and aligned greedily with a bounded look-ahead.
 */
#include "compare/crosscheck/crosscheck_state.h"

/* ---------------------------------------------------------------- per-thread order */

struct win {
    struct krow *rows;
    size_t n, qa;
    int th;
    int32_t *pa;        /* ET index -> row index, -1 */
    unsigned char *pk;  /* M_OK / M_NAME per ET index */
    unsigned char *pb;  /* row taken */
    int64_t eq, seq_eq;
    int has, ov;
    size_t qlo, qhi;
    int64_t ts_lo, ts_hi, ext0;
};

static void win_free(struct win *w)
{
    free(w->rows);
    free(w->pa);
    free(w->pk);
    free(w->pb);
    memset(w, 0, sizeof(*w));
}

/* nb Kineto ops of thread th before External id ext and na from it (the
 * candidate slice cid included), in External-id order */
static int load_rows(struct xc *x, struct pair *p, int th, int64_t ext, int64_t cid, size_t nb,
                     size_t na, struct win *w)
{
    const struct tinfo *kt = p->k;
    const uint32_t *by = kt->by_thr;
    size_t lo = 0, hi = kt->nkext, t0, t1, q, a, b, i;
    TT_UNUSED(x);
    /* the thread's run of the index, then the first op from ext */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kt->k[by[mid]].th < th)
            lo = mid + 1;
        else
            hi = mid;
    }
    t0 = lo;
    hi = kt->nkext;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct kop *k = &kt->k[by[mid]];
        if (k->th == th && k->ext < ext)
            lo = mid + 1;
        else
            hi = mid;
    }
    q = lo;
    for (t1 = q; t1 < kt->nkext && kt->k[by[t1]].th == th; t1++)
        if (t1 - q >= na + 8)
            break;
    a = q - t0 > nb ? q - nb : t0;
    b = t1;
    free(w->rows);
    w->rows = NULL;
    w->n = 0;
    w->qa = (size_t)-1;
    w->th = th;
    if (!(w->rows = malloc((b - a ? b - a : 1) * sizeof(*w->rows))))
        return xc_oom();
    for (i = a; i < b; i++) {
        const struct kop *k = &kt->k[by[i]];
        struct krow *r = &w->rows[w->n++];
        r->id = k->id;
        r->key = k->ext;
        r->name = k->name;
        r->ts = k->ts;
        r->dur = k->dur;
        r->seq = k->seq;
        if (i >= q && k->id == cid && w->qa == (size_t)-1)
            w->qa = w->n - 1;
    }
    return 0;
}

static int run_ok(const int64_t *a, size_t m, const struct krow *b, size_t n, ptrdiff_t i,
                  ptrdiff_t q, int dir)
{
    int r;
    for (r = 0; r < RUN; r++) {
        ptrdiff_t ii = i + r * dir, qq = q + r * dir;
        if (ii < 0 || ii >= (ptrdiff_t)m || qq < 0 || qq >= (ptrdiff_t)n)
            return r > 0;
        if (a[ii] != b[qq].name)
            return 0;
    }
    return 1;
}

/* Greedy alignment from (i, q) in direction dir: equal names pair up; at a
 * difference, the nearest resynchronisation point (at most LOOK ops skipped
 * on either side, then RUN agreeing names) is taken; skipped ops pair up as
 * "names differ" as far as both sides skipped, the rest stay unpaired. */
static void align_dir(const int64_t *a, size_t m, struct win *w, ptrdiff_t i, ptrdiff_t q, int dir)
{
    const struct krow *b = w->rows;
    ptrdiff_t n = (ptrdiff_t)w->n;
    while (i >= 0 && i < (ptrdiff_t)m && q >= 0 && q < n) {
        int found = 0;
        ptrdiff_t di = 0, dq = 0, t, k;
        if (a[i] == b[q].name) {
            w->pa[i] = (int32_t)q;
            w->pk[i] = M_OK;
            w->pb[q] = 1;
            i += dir;
            q += dir;
            continue;
        }
        for (k = 1; k <= LOOK && !found; k++) {
            /* max(di, dq) == k, balanced shifts first */
            ptrdiff_t e;
            for (e = 0; e <= k && !found; e++) {
                ptrdiff_t opts[2][2] = { { k, k - e }, { k - e, k } };
                int o;
                for (o = 0; o < (e ? 2 : 1) && !found; o++) {
                    if (run_ok(a, m, b, (size_t)n, i + opts[o][0] * dir, q + opts[o][1] * dir,
                               dir)) {
                        di = opts[o][0];
                        dq = opts[o][1];
                        found = 1;
                    }
                }
            }
        }
        if (!found) {
            /* near the end of the ET thread nothing follows to confirm a
             * substitution: leave the rest unpaired (ET-only) */
            if ((dir > 0 ? (ptrdiff_t)m - i : i + 1) <= LOOK)
                break;
            di = dq = 1;
        }
        for (t = 0; t < (di < dq ? di : dq); t++) {
            ptrdiff_t ii = i + t * dir, qq = q + t * dir;
            if (ii < 0 || ii >= (ptrdiff_t)m || qq < 0 || qq >= n)
                break;
            w->pa[ii] = (int32_t)qq;
            w->pk[ii] = M_NAME;
            w->pb[qq] = 1;
        }
        i += di * dir;
        q += dq * dir;
    }
}

/* Align ET names a[0..m) (sequence numbers sq) with w->rows anchored at
 * a[ja] <-> rows[w->qa]; fills pa/pk/pb and the scores. */
static int align(const int64_t *a, const int64_t *sq, size_t m, size_t ja, struct win *w)
{
    size_t i;
    free(w->pa);
    free(w->pk);
    free(w->pb);
    w->pa = malloc((m ? m : 1) * sizeof(*w->pa));
    w->pk = calloc(m ? m : 1, 1);
    w->pb = calloc(w->n ? w->n : 1, 1);
    if (!w->pa || !w->pk || !w->pb)
        return xc_oom();
    for (i = 0; i < m; i++)
        w->pa[i] = -1;
    w->eq = w->seq_eq = 0;
    w->has = 0;
    if (w->qa >= w->n)
        return 0;
    align_dir(a, m, w, (ptrdiff_t)ja, (ptrdiff_t)w->qa, 1);
    if (ja > 0 && w->qa > 0)
        align_dir(a, m, w, (ptrdiff_t)ja - 1, (ptrdiff_t)w->qa - 1, -1);
    for (i = 0; i < m; i++) {
        const struct krow *r;
        if (w->pa[i] < 0)
            continue;
        r = &w->rows[w->pa[i]];
        if (!w->has) {
            w->has = 1;
            w->qlo = w->qhi = (size_t)w->pa[i];
            w->ts_lo = r->ts;
            w->ts_hi = r->ts + r->dur;
        }
        if ((size_t)w->pa[i] < w->qlo)
            w->qlo = (size_t)w->pa[i];
        if ((size_t)w->pa[i] > w->qhi)
            w->qhi = (size_t)w->pa[i];
        if (r->ts < w->ts_lo)
            w->ts_lo = r->ts;
        if (r->ts + r->dur > w->ts_hi)
            w->ts_hi = r->ts + r->dur;
        if (w->pk[i] == M_OK) {
            w->eq++;
            if (sq[i] >= 0 && sq[i] == r->seq)
                w->seq_eq++;
        }
    }
    w->ext0 = w->has ? w->rows[w->qlo].key : 0;
    return 0;
}

/* a is the better window: more agreeing names + sequence numbers, then time
 * overlap with the windows already chosen, then the earliest */
static int win_better(const struct win *a, const struct win *b)
{
    int64_t sa = a->eq + a->seq_eq, sb = b->eq + b->seq_eq;
    if (!b->has)
        return a->has;
    if (!a->has)
        return 0;
    if (sa != sb)
        return sa > sb;
    if (a->ov != b->ov)
        return a->ov > b->ov;
    return a->ext0 < b->ext0;
}

struct cand {
    int64_t id, ext, ts;
    int th;
    size_t k;      /* anchor index in the ET thread */
    int64_t score; /* probe: agreeing names + sequence numbers */
    int has, ov;   /* probe aligned anything; starts inside the windows placed so far */
};

/* best probes first: score, then time overlap, then the earliest */
static int cmp_cand(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->has != b->has)
        return a->has ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->ov != b->ov)
        return a->ov > b->ov ? -1 : 1;
    return a->ext < b->ext ? -1 : a->ext > b->ext;
}

/*
 * The candidates of an anchor: the Kineto ops of its name (and sequence
 * number), first by External id. A thread of m ops looks at no more than
 * CAND_BASE + CAND_PER_OP * m of them, so the search costs O(ops) however
 * many threads share the names (100k threads of 2 ops each probed 4096
 * candidates apiece before: quadratic in practice).
 */
static int find_cands(struct xc *x, struct pair *p, int64_t name, int64_t seq, size_t k,
                      size_t m, struct cand **c, size_t *nc, size_t *ac)
{
    const struct tinfo *kt = p->k;
    const uint32_t *by = kt->by_name;
    size_t budget = CAND_BASE + CAND_PER_OP * m, lo = 0, hi = kt->nkext, a;
    int pass;
    TT_UNUSED(x);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kt->k[by[mid]].name < name)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (pass = seq >= 0 ? 0 : 1; pass < 2; pass++) {
        size_t before = *nc, lim = pass == 0 ? (budget < CAND_SEQ_LIMIT ? budget : CAND_SEQ_LIMIT)
                                            : (budget < CAND_LIMIT ? budget : CAND_LIMIT);
        for (a = lo; a < kt->nkext && kt->k[by[a]].name == name && *nc - before < lim; a++) {
            const struct kop *ko = &kt->k[by[a]];
            struct cand *cd;
            if (pass == 0 && ko->seq != seq)
                continue;
            if (TT_ALLOC_GROW(*c, *nc + 1, *ac) < 0)
                return xc_oom();
            cd = &(*c)[(*nc)++];
            cd->id = ko->id;
            cd->ext = ko->ext;
            cd->th = ko->th;
            cd->ts = ko->ts;
            cd->k = k;
        }
        if (*nc > before)
            break;
    }
    return 0;
}

struct wspan {
    int has;
    int64_t lo, hi;
};

/* Window of one ET thread (ops idx[0..m), in rf_id order). */
static int order_thread(struct xc *x, struct pair *p, struct result *r, const size_t *idx,
                        size_t m, struct wspan *span)
{
    int64_t *a = NULL, *sq = NULL, *sorted = NULL;
    struct cand *c = NULL;
    size_t nc = 0, ac = 0, i, t, nfull;
    struct win probe, best;
    int rc = 0, have_best = 0;
    memset(&probe, 0, sizeof(probe));
    memset(&best, 0, sizeof(best));
    a = malloc(m * sizeof(*a));
    sq = malloc(m * sizeof(*sq));
    sorted = malloc(m * sizeof(*sorted));
    if (!a || !sq || !sorted) {
        rc = xc_oom();
        goto out;
    }
    for (i = 0; i < m; i++) {
        a[i] = p->ops[idx[i]].name;
        sq[i] = p->ops[idx[i]].seq;
        sorted[i] = a[i];
    }
    TT_QSORT(sorted, m, sizeof(*sorted), xc_cmp_i64);
    /* one anchor per third: the rarest name, with a sequence number if possible */
    for (t = 0; t < 3; t++) {
        size_t lo = t * m / 3, hi = (t + 1) * m / 3, k, bk = (size_t)-1, bc = 0;
        for (k = lo; k < hi; k++) {
            size_t cn = xc_count_sorted(sorted, m, a[k]) * 2 + (sq[k] < 0);
            if (bk == (size_t)-1 || cn < bc) {
                bk = k;
                bc = cn;
            }
        }
        if (bk != (size_t)-1 && (rc = find_cands(x, p, a[bk], sq[bk], bk, m, &c, &nc, &ac)) < 0)
            goto out;
    }
    /* probe each candidate on a few ops around its anchor */
    for (i = 0; i < nc; i++) {
        size_t k = c[i].k, lo = k > PROBE ? k - PROBE : 0, hi = k + PROBE < m ? k + PROBE : m;
        if ((rc = load_rows(x, p, c[i].th, c[i].ext, c[i].id, k - lo + 4,
                            hi - k + 4, &probe)) < 0 ||
            (rc = align(a + lo, sq + lo, hi - lo, k - lo, &probe)) < 0)
            goto out;
        c[i].has = probe.has;
        c[i].score = probe.eq + probe.seq_eq;
        c[i].ov = span->has && c[i].ts >= span->lo && c[i].ts <= span->hi;
    }
    if (nc)
        TT_QSORT(c, nc, sizeof(*c), cmp_cand);
    /* align the best probes in full: at least KEEP, then until a window
     * takes every op of the thread, at most FULL_MAX */
    for (i = 0, nfull = 0; i < nc && nfull < FULL_MAX; i++) {
        const struct cand *cd = &c[i];
        struct win w;
        size_t slack = 8 + m / 16;
        if (!cd->has)
            break;
        if (nfull >= KEEP && have_best && best.eq == (int64_t)m)
            break;
        nfull++;
        memset(&w, 0, sizeof(w));
        if ((rc = load_rows(x, p, cd->th, cd->ext, cd->id, cd->k + slack,
                            m - cd->k + slack, &w)) < 0 ||
            (rc = align(a, sq, m, cd->k, &w)) < 0) {
            win_free(&w);
            goto out;
        }
        w.ov = span->has && w.has && w.ts_lo <= span->hi && w.ts_hi >= span->lo;
        if (!have_best || win_better(&w, &best)) {
            win_free(&best);
            best = w;
            have_best = 1;
        } else {
            win_free(&w);
        }
    }
    {
        struct trow *tr;
        if (TT_ALLOC_GROW(r->rows, r->nrows + 1, r->arows) < 0) {
            rc = xc_oom();
            goto out;
        }
        tr = &r->rows[r->nrows++];
        memset(tr, 0, sizeof(*tr));
        tr->has_et = p->ops[idx[0]].has_tid;
        tr->et_tid = p->ops[idx[0]].tid;
        tr->kt = -1;
        tr->et_ops = (int64_t)m;
        if (!have_best || !best.has || best.eq == 0 || best.eq * 4 < (int64_t)m)
            goto out; /* no window: every op of the thread is ET-only */
        if ((tr->kt = xc_kt_index(r, &p->k->th[best.th].pid, &p->k->th[best.th].tid)) < 0) {
            rc = xc_oom();
            goto out;
        }
        for (i = 0; i < m; i++) {
            struct match *mt = &r->m[idx[i]];
            const struct krow *kr;
            if (best.pa[i] < 0)
                continue;
            kr = &best.rows[best.pa[i]];
            mt->state = best.pk[i];
            mt->slice = kr->id;
            mt->kkey = kr->key;
            mt->kname = kr->name;
            mt->ts = kr->ts;
            mt->dur = kr->dur;
            mt->kt = tr->kt;
        }
        for (i = best.qlo; i <= best.qhi; i++) {
            const struct krow *kr = &best.rows[i];
            r->k_inwin++;
            if (i > best.qlo && kr->key == best.rows[i - 1].key &&
                (i == best.qlo + 1 || best.rows[i - 2].key != kr->key)) {
                size_t j = i;
                while (j + 1 <= best.qhi && best.rows[j + 1].key == kr->key)
                    j++;
                xc_kdup_add(x, r, kr->key, (int64_t)(j - i + 2), best.rows[i - 1].name, kr->name);
            }
            if (!best.pb[i]) {
                struct koff k = { kr->id, kr->key, kr->name, kr->ts, tr->kt };
                xc_konly_add(x, r, &k);
                tr->k_only++;
            }
        }
        xc_widen(&span->has, &span->lo, &span->hi, best.ts_lo, best.ts_hi);
    }
out:
    win_free(&probe);
    win_free(&best);
    free(c);
    free(a);
    free(sq);
    free(sorted);
    return rc;
}

/* qsort_r comparator of indices into the etop array `ops` (no global: two
 * crosschecks may sort on two threads at once) */
int xc_cmp_thread_idx(const void *pa, const void *pb, void *ops)
{
    const struct etop *o = ops;
    const struct etop *x = &o[*(const size_t *)pa], *y = &o[*(const size_t *)pb];
    size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
    if (x->has_tid != y->has_tid)
        return x->has_tid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return ia < ib ? -1 : ia > ib; /* ops are in rf_id order */
}

struct tgroup {
    size_t from, m;
};

static int cmp_tgroup(const void *a, const void *b)
{
    const struct tgroup *x = a, *y = b;
    if (x->m != y->m)
        return x->m > y->m ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

int xc_join_order(struct xc *x, struct pair *p, struct result *r)
{
    size_t *idx = NULL, i, ng = 0;
    struct tgroup *g = NULL;
    struct wspan span = { 0, 0, 0 };
    int rc = 0;
    r->key = K_EXT_ORDER;
    if (!p->nrf)
        return 0;
    idx = malloc(p->nrf * sizeof(*idx));
    g = malloc(p->nrf * sizeof(*g));
    if (!idx || !g) {
        rc = xc_oom();
        goto out;
    }
    for (i = 0; i < p->nrf; i++)
        idx[i] = i;
    TT_QSORT_R(idx, p->nrf, sizeof(*idx), xc_cmp_thread_idx, p->ops);
    for (i = 0; i < p->nrf; i++) {
        const struct etop *o = &p->ops[idx[i]], *prev = i ? &p->ops[idx[i - 1]] : NULL;
        if (!prev || prev->has_tid != o->has_tid || prev->tid != o->tid) {
            g[ng].from = i;
            g[ng++].m = 0;
        }
        g[ng - 1].m++;
    }
    /* largest thread first: its window decides the time span the others prefer */
    TT_QSORT(g, ng, sizeof(*g), cmp_tgroup);
    for (i = 0; i < ng; i++) {
        if ((rc = order_thread(x, p, r, idx + g[i].from, g[i].m, &span)) < 0)
            break;
    }
out:
    free(idx);
    free(g);
    return rc;
}

