/*
 * compare/crosscheck/crosscheck_join.c - the join of `tracetool crosscheck` for one
 * (ET, Kineto) pair: loading the ET op nodes, PyTorch's rf_id rule, the join
 * on a key (Record function id, or External id at a constant offset), the
 * per-thread tallies and the verdict (docs/CROSSCHECK.md).
 *
 * Linear time: ops sharing an id are matched through one queue per name,
 * offsets are counted by binary search over sorted (rf_id, name) pairs, and
 * Kineto threads are found through a hash, so repeated ids and many threads
 * cost O(n log n). Kineto ops are looked up in the indexes of their trace
 * (struct tinfo, crosscheck_rows.c), in the order the SQL of earlier
 * versions read them.
 */
#include "compare/crosscheck/crosscheck_state.h"
#include "common/tmath.h"

/* ---------------------------------------------------------------- helpers */

const char *xc_val_fmt(const tt_xc_id *v, char *buf, size_t n)
{
    if (v->type == TT_XC_ID_INT)
        snprintf(buf, n, "%" PRId64, v->i);
    else if (v->type == TT_XC_ID_TEXT)
        snprintf(buf, n, "%s", v->s);
    else
        snprintf(buf, n, "-");
    return buf;
}

/* The string of an interned id, malloc'd ("" when unknown); NULL on OOM. */
char *xc_str_dup(struct xc *x, int64_t id)
{
    return strdup(id > 0 && (size_t)id <= x->str.n ? x->str.s[id - 1] : "");
}

/* ---------------------------------------------------------------- results */

void xc_result_free(struct result *r)
{
    if (!r)
        return;
    free(r->m);
    free(r->kt);
    free(r->kth);
    free(r->konly);
    free(r->kdups);
    free(r->rows);
    free(r);
}

static struct result *xc_result_new(struct xc *x, const struct pair *p, int key)
{
    struct result *r = calloc(1, sizeof(*r));
    size_t i;
    if (!r)
        return NULL;
    r->key = key;
    r->m = calloc(p->n ? p->n : 1, sizeof(*r->m));
    r->konly = calloc(x->limit ? x->limit : 1, sizeof(*r->konly));
    r->kdups = calloc(x->limit ? x->limit : 1, sizeof(*r->kdups));
    if (!r->m || !r->konly || !r->kdups) {
        xc_result_free(r);
        return NULL;
    }
    for (i = 0; i < p->n; i++)
        r->m[i].kt = -1;
    return r;
}

/* ---------------------------------------------------------------- loading */

/* The op nodes of the pair's ET (roots excluded, sorted by rf_id, nodes
 * without one last), loaded when first needed. */
int xc_load_et(struct xc *x, struct pair *p)
{
    struct tinfo *t = (struct tinfo *)p->et;
    int rc;
    if (!t->loaded && (rc = xc_load_db(x, t)) < 0)
        return rc;
    p->ops = t->ops;
    p->n = t->nops;
    p->nrf = t->nrf;
    p->et_nodes = t->et_nodes;
    p->et_roots = t->et_roots;
    p->dup_et = t->dup_et;
    return 0;
}

/* PyTorch's rule, and what the Kineto trace offers as keys. */
static int pytorch_rule(struct xc *x, struct pair *p)
{
    const struct tinfo *k = p->k;
    size_t e = 0, i;
    TT_UNUSED(x);
    p->rule_et_n = (int64_t)p->nrf;
    p->k_total = (int64_t)k->nk;
    p->k_rf_nonzero = k->k_rf_nonzero;
    p->k_ext = k->k_ext;
    for (i = 0; i < k->nk; i++) {
        int64_t v = k->rule[i];
        while (e < p->nrf && p->ops[e].rf < v) {
            p->rule_et_only++;
            e++;
        }
        if (e < p->nrf && p->ops[e].rf == v)
            e++;
        else
            p->rule_k_only++;
    }
    p->rule_et_only += (int64_t)(p->nrf - e);
    /* ET op nodes without an rf_id attribute do not enter PyTorch's list */
    p->rule_equal = p->rule_et_only == 0 && p->rule_k_only == 0;
    return 0;
}

/* ---------------------------------------------------------------- join by key */

struct grow {
    int64_t id, key, name, ts, dur;
    int kt, used;
};

struct nmidx {
    int64_t name;
    size_t j;
};

static int cmp_nmidx(const void *pa, const void *pb)
{
    const struct nmidx *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* Each Kineto op of the group, in order, takes the first ET op of [a, b)
 * not taken yet with the same name: one queue per name, O(n log n). */
static int match_names(struct pair *p, struct result *r, struct grow *g, size_t ng, size_t a,
                       size_t b)
{
    struct nmidx *q = malloc((b - a) * sizeof(*q));
    size_t *next, i, j;
    if (!q)
        return -1;
    if (!(next = malloc((b - a) * sizeof(*next)))) {
        free(q);
        return -1;
    }
    for (j = a; j < b; j++) {
        q[j - a].name = p->ops[j].name;
        q[j - a].j = j;
    }
    TT_QSORT(q, b - a, sizeof(*q), cmp_nmidx);
    /* next[s]: the next unused entry of the run of names starting at s */
    for (j = 0; j < b - a; j++)
        next[j] = j;
    for (i = 0; i < ng; i++) {
        size_t lo = 0, hi = b - a, s;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (q[mid].name < g[i].name)
                lo = mid + 1;
            else
                hi = mid;
        }
        s = lo;
        if (s == b - a || q[s].name != g[i].name)
            continue;
        j = next[s];
        if (j == b - a || q[j].name != g[i].name)
            continue;
        next[s] = j + 1;
        r->m[q[j].j].state = M_OK;
        g[i].used = (int)(q[j].j - a) + 1;
    }
    free(q);
    free(next);
    return 0;
}

static int join_group(struct xc *x, struct pair *p, struct result *r, struct grow *g, size_t ng,
                      int64_t off, size_t *e, int defer)
{
    int64_t target = tt_sat_sub(g[0].key, off);
    size_t a, b, i, j;
    while (*e < p->nrf && p->ops[*e].rf < target)
        (*e)++;
    a = *e;
    for (b = a; b < p->nrf && p->ops[b].rf == target; b++)
        ;
    if (!defer) {
        r->k_inwin += (int64_t)ng;
        if (ng > 1)
            xc_kdup_add(x, r, g[0].key, (int64_t)ng, g[0].name, g[1].name);
    }
    if ((b - a) * ng <= 64) {
        for (i = 0; i < ng; i++) {
            for (j = a; j < b; j++) {
                struct match *m = &r->m[j];
                if (m->state == M_NONE && p->ops[j].name == g[i].name) {
                    m->state = M_OK;
                    break;
                }
            }
            if (j < b)
                g[i].used = (int)(j - a) + 1;
        }
    } else if (match_names(p, r, g, ng, a, b) < 0) {
        return xc_oom();
    }
    /* the Kineto ops left take the first ET ops left, in order */
    for (i = 0, j = a; i < ng; i++) {
        if (g[i].used)
            continue;
        while (j < b && r->m[j].state != M_NONE)
            j++;
        if (j == b)
            break;
        r->m[j].state = M_NAME;
        g[i].used = (int)(j - a) + 1;
    }
    for (i = 0; i < ng; i++) {
        if (g[i].used) {
            struct match *m = &r->m[a + (size_t)g[i].used - 1];
            m->slice = g[i].id;
            m->kkey = g[i].key;
            m->kname = g[i].name;
            m->ts = g[i].ts;
            m->dur = g[i].dur;
            m->kt = g[i].kt;
        } else if (!defer) {
            struct koff k = { g[i].id, g[i].key, g[i].name, g[i].ts, g[i].kt };
            xc_konly_add(x, r, &k);
        }
    }
    return 0;
}

/* External-id window: from the smallest to the largest External id paired
 * with an ET op; every Kineto op in it that no ET op took is Kineto-only. */
static int window_pass(struct xc *x, struct pair *p, struct result *r)
{
    const struct tinfo *kt = p->k;
    int64_t *ids = NULL, prev = 0, lo = 0, hi = 0, name1 = 0, name2 = 0;
    size_t nids = 0, i, run = 0, a, b;
    int has = 0, rc = 0;
    for (i = 0; i < p->n; i++) {
        if (r->m[i].state != M_NONE)
            xc_widen(&has, &lo, &hi, r->m[i].kkey, r->m[i].kkey);
    }
    if (!has)
        return 0;
    r->has_key = 1;
    r->key_lo = lo;
    r->key_hi = hi;
    if (!(ids = malloc(p->n * sizeof(*ids))))
        return xc_oom();
    for (i = 0; i < p->n; i++) {
        if (r->m[i].state != M_NONE)
            ids[nids++] = r->m[i].slice;
    }
    TT_QSORT(ids, nids, sizeof(*ids), xc_cmp_i64);
    xc_ext_range(kt, kt->by_ext, kt->nkext, lo, hi, &a, &b);
    for (; a < b; a++) {
        const struct kop *ko = &kt->k[kt->by_ext[a]];
        int64_t id = ko->id, key = ko->ext, name = ko->name;
        size_t j = xc_lower_i64(ids, nids, id);
        r->k_inwin++;
        if (run && key == prev) {
            if (run++ == 1)
                name2 = name;
        } else {
            if (run > 1)
                xc_kdup_add(x, r, prev, (int64_t)run, name1, name2);
            run = 1;
            name1 = name;
        }
        prev = key;
        if (j >= nids || ids[j] != id) {
            struct koff k;
            k.slice = id;
            k.key = key;
            k.name = name;
            k.ts = ko->ts;
            if ((k.kt = xc_kt_index(r, &kt->th[ko->th].pid, &kt->th[ko->th].tid)) < 0) {
                rc = xc_oom();
                break;
            }
            xc_konly_add(x, r, &k);
        }
    }
    if (run > 1)
        xc_kdup_add(x, r, prev, (int64_t)run, name1, name2);
    free(ids);
    return rc;
}

/* Join on Kineto "Record function id" (key K_RF, window: every event with a
 * non-zero one) or on External id = rf_id + off (window: see window_pass). */
static int join_key(struct xc *x, struct pair *p, struct result *r, int key, int64_t off)
{
    const struct tinfo *kt = p->k;
    const uint32_t *by = key == K_RF ? kt->by_rf : kt->by_ext;
    struct grow *g = NULL;
    size_t ng = 0, ag = 0, e = 0, a = 0, b = kt->nkrf;
    int rc = 0;
    r->key = key;
    r->offset = off;
    if (!p->nrf)
        return 0;
    if (key != K_RF)
        xc_ext_range(kt, by, kt->nkext, tt_sat_add(p->ops[0].rf, off),
                     tt_sat_add(p->ops[p->nrf - 1].rf, off), &a, &b);
    for (; a < b; a++) {
        const struct kop *ko = &kt->k[by[a]];
        int64_t k = key == K_RF ? ko->rf : ko->ext;
        if (ng && g[0].key != k) {
            if ((rc = join_group(x, p, r, g, ng, off, &e, key != K_RF)) < 0)
                goto out;
            ng = 0;
        }
        if (TT_ALLOC_GROW(g, ng + 1, ag) < 0) {
            rc = xc_oom();
            goto out;
        }
        g[ng].id = ko->id;
        g[ng].key = k;
        g[ng].name = ko->name;
        g[ng].ts = ko->ts;
        g[ng].dur = ko->dur;
        g[ng].used = 0;
        if ((g[ng].kt = xc_kt_index(r, &kt->th[ko->th].pid, &kt->th[ko->th].tid)) < 0) {
            rc = xc_oom();
            goto out;
        }
        if (key == K_RF)
            xc_widen(&r->has_key, &r->key_lo, &r->key_hi, k, k);
        ng++;
    }
    if (ng && (rc = join_group(x, p, r, g, ng, off, &e, key != K_RF)) < 0)
        goto out;
    if (key != K_RF)
        rc = window_pass(x, p, r);
out:
    free(g);
    return rc;
}

/* ---------------------------------------------------------------- constant offset */

struct anch {
    int64_t name, rf;
};

static int cmp_anch(const void *a, const void *b)
{
    const struct anch *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return x->rf < y->rf ? -1 : x->rf > y->rf;
}

static int cmp_rfname(const void *a, const void *b)
{
    const struct anch *x = a, *y = b;
    if (x->rf != y->rf)
        return x->rf < y->rf ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* is (rf, name) among the sorted pairs rn[0..n)? */
static int has_rfname(const struct anch *rn, size_t n, int64_t rf, int64_t name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rn[mid].rf < rf || (rn[mid].rf == rf && rn[mid].name < name))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && rn[lo].rf == rf && rn[lo].name == name;
}

/* name-agreeing pairs at External id = rf_id + off (rn: the ET ops' (rf_id,
 * name) sorted, from the smallest rf_id rf0 to the largest rf1) */
static int count_offset(struct xc *x, struct pair *p, const struct anch *rn, int64_t off,
                        int64_t *count)
{
    const struct tinfo *kt = p->k;
    size_t a, b;
    TT_UNUSED(x);
    *count = 0;
    if (!p->nrf)
        return 0;
    xc_ext_range(kt, kt->by_ext, kt->nkext, tt_sat_add(rn[0].rf, off),
                 tt_sat_add(rn[p->nrf - 1].rf, off), &a, &b);
    for (; a < b; a++) {
        const struct kop *ko = &kt->k[kt->by_ext[a]];
        if (has_rfname(rn, p->nrf, tt_sat_sub(ko->ext, off), ko->name))
            (*count)++;
    }
    return 0;
}

/* The constant offset External id - rf_id agreeing on the most names: ET ops
 * with rare names vote (every Kineto op of the same name gives one offset),
 * the most voted offsets (and 0) are counted in full. */
static int best_offset(struct xc *x, struct pair *p, int64_t *best, int64_t *best_n)
{
    int64_t *names = NULL, *votes = NULL, cand[N_OFFSETS + 1], cnt[N_OFFSETS + 1];
    struct anch *an = NULL, *rn = NULL;
    const struct tinfo *kt = p->k;
    size_t nan = 0, nv = 0, i, j, ncand = 0, maxc;
    int rc = 0;
    *best = 0;
    *best_n = 0;
    if (!p->nrf)
        return 0;
    names = malloc(p->nrf * sizeof(*names));
    an = malloc(p->nrf * sizeof(*an));
    votes = malloc(sizeof(*votes) * 1024);
    rn = malloc(p->nrf * sizeof(*rn));
    if (!names || !an || !votes || !rn) {
        rc = xc_oom();
        goto out;
    }
    for (i = 0; i < p->nrf; i++)
        names[i] = p->ops[i].name;
    TT_QSORT(names, p->nrf, sizeof(*names), xc_cmp_i64);
    for (maxc = 1; maxc <= 4 && nan < 4; maxc += 3) {
        nan = 0;
        for (i = 0; i < p->nrf; i++) {
            if (xc_count_sorted(names, p->nrf, p->ops[i].name) <= maxc) {
                an[nan].name = p->ops[i].name;
                an[nan++].rf = p->ops[i].rf;
            }
        }
    }
    if (nan > N_ANCHORS) { /* spread over the rf_id range */
        for (i = 0; i < N_ANCHORS; i++)
            an[i] = an[i * nan / N_ANCHORS];
        nan = N_ANCHORS;
    }
    TT_QSORT(an, nan, sizeof(*an), cmp_anch);
    {
        size_t av = 1024, q;
        for (q = 0; q < kt->nkext; q++) {
            int64_t ext = kt->k[kt->by_ext[q]].ext, nm = kt->k[kt->by_ext[q]].name;
            size_t lo = 0, hi = nan;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (an[mid].name < nm)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (; lo < nan && an[lo].name == nm && nv < VOTE_CAP; lo++) {
                if (TT_ALLOC_GROW(votes, nv + 1, av) < 0) {
                    rc = xc_oom();
                    goto out;
                }
                votes[nv++] = tt_sat_sub(ext, an[lo].rf);
            }
        }
    }
    TT_QSORT(votes, nv, sizeof(*votes), xc_cmp_i64);
    /* the N_OFFSETS most voted */
    for (i = 0; i < nv; i = j) {
        int64_t c;
        size_t k;
        for (j = i; j < nv && votes[j] == votes[i]; j++)
            ;
        c = (int64_t)(j - i);
        if (ncand < N_OFFSETS) {
            k = ncand++;
        } else if (c > cnt[ncand - 1]) {
            k = ncand - 1;
        } else {
            continue;
        }
        while (k > 0 && cnt[k - 1] < c) {
            cand[k] = cand[k - 1];
            cnt[k] = cnt[k - 1];
            k--;
        }
        cand[k] = votes[i];
        cnt[k] = c;
    }
    for (i = 0; i < ncand && cand[i] != 0; i++)
        ;
    if (i == ncand)
        cand[ncand++] = 0;
    for (i = 0; i < p->nrf; i++) {
        rn[i].rf = p->ops[i].rf;
        rn[i].name = p->ops[i].name;
    }
    TT_QSORT(rn, p->nrf, sizeof(*rn), cmp_rfname);
    for (i = 0; i < ncand; i++) {
        int64_t n;
        if ((rc = count_offset(x, p, rn, cand[i], &n)) < 0)
            goto out;
        if (n > *best_n || (n == *best_n && n > 0 &&
                            (cand[i] < 0 ? -cand[i] : cand[i]) < (*best < 0 ? -*best : *best))) {
            *best = cand[i];
            *best_n = n;
        }
    }
out:
    free(names);
    free(an);
    free(rn);
    free(votes);
    return rc;
}

/* ---------------------------------------------------------------- tallies */

static int cmp_trow(int has_a, int64_t ta, size_t ia, int has_b, int64_t tb, size_t ib)
{
    if (has_a != has_b)
        return has_a < has_b ? -1 : 1;
    if (has_a && ta != tb)
        return ta < tb ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

/* qsort_r comparator of indices into the trow array `rows` */
static int cmp_row_idx(const void *pa, const void *pb, void *rows)
{
    const struct trow *rw = rows;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return cmp_trow(rw[a].has_et, rw[a].et_tid, a, rw[b].has_et, rw[b].et_tid, b);
}

/* the first of rows[0..n) (rowidx: their indices sorted by ET thread) of
 * o's ET thread, or NULL */
static struct trow *find_row(struct result *r, const size_t *rowidx, size_t n,
                             const struct etop *o)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_trow(r->rows[rowidx[mid]].has_et, r->rows[rowidx[mid]].et_tid, rowidx[mid],
                     o->has_tid, o->tid, 0) < 0 &&
            !(r->rows[rowidx[mid]].has_et == o->has_tid &&
              (!o->has_tid || r->rows[rowidx[mid]].et_tid == o->tid)))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && r->rows[rowidx[lo]].has_et == o->has_tid &&
        (!o->has_tid || r->rows[rowidx[lo]].et_tid == o->tid))
        return &r->rows[rowidx[lo]];
    return NULL;
}

/* Per-thread rows (key modes: ET tid -> the Kineto thread most of its ops
 * went to), per-row counts, offsets, ranges; totals of the result. */
static int tally(struct xc *x, struct pair *p, struct result *r)
{
    size_t *idx = NULL, *rowidx = NULL, i, j, nrows0 = r->nrows;
    int64_t *votes = NULL;
    int rc = 0;
    TT_UNUSED(x);
    votes = calloc(r->nkt + 1, sizeof(*votes));
    rowidx = malloc((nrows0 + 1) * sizeof(*rowidx));
    if (!votes || !rowidx || (p->n && !(idx = malloc(p->n * sizeof(*idx))))) {
        rc = xc_oom();
        goto out;
    }
    for (i = 0; i < nrows0; i++)
        rowidx[i] = i;
    if (nrows0)
        TT_QSORT_R(rowidx, nrows0, sizeof(*rowidx), cmp_row_idx, r->rows);
    for (i = 0; i < p->n; i++)
        idx[i] = i;
    if (p->n)
        TT_QSORT_R(idx, p->n, sizeof(*idx), xc_cmp_thread_idx, p->ops);
    for (i = 0; i < p->n; i = j) {
        const struct etop *o = &p->ops[idx[i]];
        struct trow *tr = NULL;
        size_t k;
        int64_t lastoff = 0;
        int have_last = 0;
        for (j = i; j < p->n && p->ops[idx[j]].has_tid == o->has_tid &&
                    (!o->has_tid || p->ops[idx[j]].tid == o->tid);
             j++)
            ;
        if (nrows0)
            tr = find_row(r, rowidx, nrows0, o);
        if (!tr) {
            if (TT_ALLOC_GROW(r->rows, r->nrows + 1, r->arows) < 0) {
                rc = xc_oom();
                goto out;
            }
            tr = &r->rows[r->nrows++];
            memset(tr, 0, sizeof(*tr));
            tr->has_et = o->has_tid;
            tr->et_tid = o->tid;
            tr->kt = -1;
            /* the Kineto thread most ops went to (ties: the first) */
            for (k = i; k < j; k++) {
                int kt = r->m[idx[k]].kt;
                if (kt >= 0)
                    votes[kt]++;
            }
            for (k = i; k < j; k++) {
                int kt = r->m[idx[k]].kt;
                if (kt >= 0 && (tr->kt < 0 || votes[kt] > votes[tr->kt] ||
                                (votes[kt] == votes[tr->kt] && kt < tr->kt)))
                    tr->kt = kt;
            }
            for (k = i; k < j; k++) {
                if (r->m[idx[k]].kt >= 0)
                    votes[r->m[idx[k]].kt] = 0;
            }
        }
        tr->et_ops = (int64_t)(j - i);
        tr->matched = tr->et_only = tr->name_diff = 0;
        for (k = i; k < j; k++) {
            const struct match *m = &r->m[idx[k]];
            const struct etop *op = &p->ops[idx[k]];
            if (m->state == M_OK)
                tr->matched++;
            else if (m->state == M_NAME)
                tr->name_diff++;
            else
                tr->et_only++;
            if (m->state != M_NONE) {
                xc_widen(&tr->has_key, &tr->key_lo, &tr->key_hi, m->kkey, m->kkey);
                xc_widen(&tr->has_ts, &tr->ts_lo, &tr->ts_hi, m->ts, m->ts + m->dur);
                xc_widen(&r->has_ts, &r->ts_lo, &r->ts_hi, m->ts, m->ts + m->dur);
                if (r->key == K_EXT_ORDER)
                    xc_widen(&r->has_key, &r->key_lo, &r->key_hi, m->kkey, m->kkey);
            }
            if (m->state == M_OK && op->has_rf) {
                int64_t off = tt_sat_sub(m->kkey, op->rf);
                if (!have_last || off != lastoff) {
                    tr->segs_total++;
                    if (tr->nsegs < MAX_SEGS) {
                        tr->segs[tr->nsegs].rf_from = op->rf;
                        tr->segs[tr->nsegs].off = off;
                        tr->segs[tr->nsegs++].n = 0;
                    }
                }
                if ((size_t)tr->segs_total == tr->nsegs)
                    tr->segs[tr->nsegs - 1].n++;
                lastoff = off;
                have_last = 1;
            }
        }
    }
    /* Kineto-only ops: key modes count them per Kineto thread */
    if (r->key != K_EXT_ORDER) {
        size_t nrows1 = r->nrows;
        for (i = 0; i < r->nkt; i++)
            votes[i] = -1;
        for (j = nrows1; j-- > 0;) { /* the first row of each Kineto thread */
            if (r->rows[j].kt >= 0)
                votes[r->rows[j].kt] = (int64_t)j;
        }
        for (i = 0; i < r->nkt; i++) {
            struct trow *tr = NULL;
            if (!r->kt[i].k_only)
                continue;
            if (votes[i] >= 0)
                tr = &r->rows[votes[i]];
            if (!tr) {
                if (TT_ALLOC_GROW(r->rows, r->nrows + 1, r->arows) < 0) {
                    rc = xc_oom();
                    goto out;
                }
                tr = &r->rows[r->nrows++];
                memset(tr, 0, sizeof(*tr));
                tr->kt = (int)i;
            }
            tr->k_only += r->kt[i].k_only;
        }
    }
    r->matched = r->et_only = r->name_diff = 0;
    for (i = 0; i < p->n; i++) {
        if (r->m[i].state == M_OK)
            r->matched++;
        else if (r->m[i].state == M_NAME)
            r->name_diff++;
        else
            r->et_only++;
    }
out:
    free(idx);
    free(rowidx);
    free(votes);
    return rc;
}

/* ---------------------------------------------------------------- one pair */

int xc_check_pair(struct xc *x, struct pair *p)
{
    struct result *r1 = NULL, *r2 = NULL;
    int rc;
    int key = x->o->key;
    if (!p->k->loaded && (rc = xc_load_db(x, (struct tinfo *)p->k)) < 0)
        return rc;
    if ((rc = pytorch_rule(x, p)) < 0)
        return rc;
    if (key == TT_XC_KEY_AUTO)
        key = p->k_rf_nonzero > 0 ? TT_XC_KEY_RF : TT_XC_KEY_EXTERNAL;
    if (key == TT_XC_KEY_RF) {
        if (!(r1 = xc_result_new(x, p, K_RF)))
            return xc_oom();
        if ((rc = join_key(x, p, r1, K_RF, 0)) < 0 || (rc = tally(x, p, r1)) < 0)
            goto fail;
    } else {
        int64_t off = 0, n = 0;
        if ((rc = best_offset(x, p, &off, &n)) < 0)
            goto fail;
        if (!(r1 = xc_result_new(x, p, K_EXT_OFFSET)))
            return xc_oom();
        if ((rc = join_key(x, p, r1, K_EXT_OFFSET, off)) < 0 || (rc = tally(x, p, r1)) < 0)
            goto fail;
        if (r1->matched < (int64_t)p->nrf && p->k_ext > 0) {
            if (!(r2 = xc_result_new(x, p, K_EXT_ORDER))) {
                rc = xc_oom();
                goto fail;
            }
            if ((rc = xc_join_order(x, p, r2)) < 0 || (rc = tally(x, p, r2)) < 0)
                goto fail;
            if (r2->matched > r1->matched) {
                r2->has_const = 1;
                r2->const_off = off;
                r2->const_matched = r1->matched;
                xc_result_free(r1);
                r1 = r2;
            } else {
                xc_result_free(r2);
            }
            r2 = NULL;
        }
    }
    if (r1->key == K_RF) {
        /* every Kineto op carrying an id is in the window */
    }
    p->r = r1;
    p->consistent = r1->matched == (int64_t)p->n && r1->k_only == 0 && r1->name_diff == 0 &&
                    p->dup_et == 0 && r1->dup_k == 0 && p->n > 0 &&
                    (!x->o->strict || p->rule_equal);
    return 0;
fail:
    xc_result_free(r1);
    xc_result_free(r2);
    return rc;
}

