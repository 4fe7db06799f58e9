/*
 * store/ingest_fix.c - what the SQL passes after a load change in a trace's
 * rows, for a file read twice instead (tt__ingest_rows with TT_ROWS_RELINK,
 * store/ingest_rows.h): no database.
 *
 * Row ids are given in read order, so a second reading of the file builds
 * the same rows with the same ids. The first reading (FIX_COLLECT) hands no
 * row over: it keeps, in spills (common/spill.h: bounded memory, sorted on
 * disk past 4 MiB), what the passes of store/ingest.c finish_trace read:
 * every slice and runtime call with its thread, the 'B' slices closed after
 * their row left (JOB_END_B), the GPU rows linked to a call, left unlinked,
 * or annotations. From them, the same passes, in the same order and by the
 * same rules, over sorted spills instead of SQL:
 *   - 'B' durations (UPDATE slices SET dur),
 *   - the nesting of the threads whose slices came out of order
 *     (ig_renest_thread: ORDER BY ts, dur DESC, id),
 *   - runtime call -> op on the threads whose calls could not be linked in
 *     the stream (ig_link_runtime; ops on a tie of ts and dur in id order,
 *     the order of SQLite's sort),
 *   - GPU rows linked in the stream to such a call take its op
 *     (ig_link_runtime_gpu), GPU rows left unlinked get the call of their
 *     correlation and annotations the user_annotation of their External id
 *     (merge_link: the same merge join).
 * The result: fix-ups sorted by row id, one spill per table. The second
 * reading (FIX_APPLY) reads them with a cursor as its rows go: slices and
 * runtime calls as a batch is handed over, GPU rows as they are built (so
 * the gpu_links and kernel callbacks give the links the database gives).
 */
#include "common/compat.h"
#include "common/spill.h"
#include "store/ingest_state.h"
#include "formats/reader_internal.h"

enum { F_TS = 1, F_DUR = 2, F_OP = 4, F_UA = 8, F_EXT = 16, F_CORR = 32 };

#define NO_TS INT64_MIN /* a NULL ts: first in ORDER BY ts, as in merge_link */

/* a slice or a runtime call as read (in id order) */
struct fx_row {
    int64_t id, ts, dur, name, key; /* key: a slice's external id, a call's correlation */
    struct frame op;                /* a call: the op it was linked to in the stream */
    int64_t thr;                    /* its thread (index into g->threads), -1 none */
    int64_t f;                      /* F_* */
};

/* (id, value): a 'B' closed late (slice id, dur); a GPU row linked in the
 * stream (call id, GPU row id) */
struct fx_pair {
    int64_t id, v;
};

/* a slice to nest again, an op or a runtime call to link, in its thread */
struct fx_ord {
    int64_t thr, ts, dur, id, name, have_dur;
};

struct fx_nest {
    int64_t id, depth, parent;
};

/* a runtime call linked again (op.id 0: to none); rt: the call itself */
struct fx_link {
    int64_t rid;
    struct ig_rtlink rt;
    struct frame op;
};

/* a merge join's rows: the side looking (key, ts, id), the side found
 * (also what a match gives: the call's start, its op) */
struct fx_key {
    int64_t key, ts, id;
};
struct fx_src {
    int64_t key, ts, id;
    struct ig_rtlink rt;
    struct frame op;
};

/* a GPU row's final links */
struct fx_gpu {
    int64_t gid, rid;
    struct ig_rtlink rt;
    struct frame op;
};

struct ig_fix {
    /* the first reading */
    tt__spill *sl, *rt, *glink, *gun, *gann;
    /* fix-ups by row id; endb is both */
    tt__spill *endb, *nest, *link, *gpu;
    struct fx_pair e;
    struct fx_nest n;
    struct fx_link l;
    struct fx_gpu gp;
    int e_more, n_more, l_more, g_more;
};

#define CMP_(a, b) ((a) < (b) ? -1 : (a) > (b))

static int cmp_pair(const void *x, const void *y)
{
    const struct fx_pair *a = x, *b = y;
    return a->id != b->id ? CMP_(a->id, b->id) : CMP_(a->v, b->v);
}

/* ORDER BY thread, ts, dur DESC (NULL last), id */
static int cmp_ord(const void *x, const void *y)
{
    const struct fx_ord *a = x, *b = y;
    if (a->thr != b->thr)
        return CMP_(a->thr, b->thr);
    if (a->ts != b->ts)
        return CMP_(a->ts, b->ts);
    if (a->have_dur != b->have_dur)
        return a->have_dur ? -1 : 1;
    if (a->have_dur && a->dur != b->dur)
        return CMP_(b->dur, a->dur);
    return CMP_(a->id, b->id);
}

/* ORDER BY thread, ts, id */
static int cmp_call(const void *x, const void *y)
{
    const struct fx_ord *a = x, *b = y;
    if (a->thr != b->thr)
        return CMP_(a->thr, b->thr);
    return a->ts != b->ts ? CMP_(a->ts, b->ts) : CMP_(a->id, b->id);
}

static int cmp_nest(const void *x, const void *y)
{
    return CMP_(((const struct fx_nest *)x)->id, ((const struct fx_nest *)y)->id);
}

static int cmp_link(const void *x, const void *y)
{
    return CMP_(((const struct fx_link *)x)->rid, ((const struct fx_link *)y)->rid);
}

static int cmp_key(const void *x, const void *y)
{
    const struct fx_key *a = x, *b = y;
    if (a->key != b->key)
        return CMP_(a->key, b->key);
    return a->ts != b->ts ? CMP_(a->ts, b->ts) : CMP_(a->id, b->id);
}

static int cmp_src(const void *x, const void *y)
{
    const struct fx_src *a = x, *b = y;
    if (a->key != b->key)
        return CMP_(a->key, b->key);
    return a->ts != b->ts ? CMP_(a->ts, b->ts) : CMP_(a->id, b->id);
}

static int cmp_gpu(const void *x, const void *y)
{
    return CMP_(((const struct fx_gpu *)x)->gid, ((const struct fx_gpu *)y)->gid);
}

int ig_fix_new(struct ingest *g)
{
    if (!(g->fix = calloc(1, sizeof(*g->fix))))
        return tt__oom();
    return 0;
}

void ig_fix_free(struct ig_fix *f)
{
    if (!f)
        return;
    tt__spill_free(f->sl);
    tt__spill_free(f->rt);
    tt__spill_free(f->glink);
    tt__spill_free(f->gun);
    tt__spill_free(f->gann);
    tt__spill_free(f->endb);
    tt__spill_free(f->nest);
    tt__spill_free(f->link);
    tt__spill_free(f->gpu);
    free(f);
}

/* ---- the first reading ---- */

int ig_fix_slice(struct ingest *g, int64_t thr, const tt_event *ev, int64_t id, int64_t name,
                 int is_op)
{
    struct fx_row r;
    memset(&r, 0, sizeof(r));
    r.id = id;
    r.thr = thr;
    r.name = name;
    r.ts = ev->has_ts ? ev->ts_ns : NO_TS;
    r.dur = ev->has_dur ? ev->dur_ns : 0;
    r.key = HAVE(TT_A_EXTERNAL_ID) ? ev->external_id : 0;
    r.f = (ev->has_ts ? F_TS : 0) | (ev->has_dur ? F_DUR : 0) | (is_op ? F_OP : 0) |
          (HAVE(TT_A_EXTERNAL_ID) ? F_EXT : 0) |
          (ev->cat && !strcmp(ev->cat, "user_annotation") ? F_UA : 0);
    return tt__spill_put(&g->fix->sl, sizeof(r), NULL, &r);
}

int ig_fix_runtime(struct ingest *g, int64_t thr, const tt_event *ev, int64_t rid,
                   int64_t op_id, int64_t name)
{
    struct fx_row r;
    memset(&r, 0, sizeof(r));
    r.id = rid;
    r.thr = thr;
    r.name = name;
    r.ts = ev->has_ts ? ev->ts_ns : NO_TS;
    r.dur = ev->has_dur ? ev->dur_ns : 0;
    r.key = HAVE(TT_A_CORRELATION) ? ev->correlation : 0;
    if (op_id)
        r.op = g->link_op; /* ig_link_runtime_event found it */
    r.f = (ev->has_ts ? F_TS : 0) | (ev->has_dur ? F_DUR : 0) |
          (HAVE(TT_A_CORRELATION) ? F_CORR : 0);
    return tt__spill_put(&g->fix->rt, sizeof(r), NULL, &r);
}

int ig_fix_end_b(struct ingest *g, int64_t id, int64_t dur)
{
    struct fx_pair p = { id, dur };
    return tt__spill_put(&g->fix->endb, sizeof(p), cmp_pair, &p);
}

/* a GPU row being built (gid: its id): kept (FIX_COLLECT), or its final
 * links taken from the fix-ups (FIX_APPLY) */
int ig_fix_gpu(struct ingest *g, int64_t gid, const tt_event *ev, int xc, int64_t *runtime_id,
               int64_t *op_id, struct frame *op, struct ig_rtlink *rt)
{
    struct ig_fix *f = g->fix;
    int rc = 0;
    if (g->fix_mode == FIX_APPLY) {
        while (f->g_more == 1 && f->gp.gid < gid)
            f->g_more = tt__spill_next(f->gpu, &f->gp);
        if (f->g_more < 0)
            return f->g_more;
        if (f->g_more == 1 && f->gp.gid == gid) {
            *runtime_id = f->gp.rid;
            *op_id = f->gp.op.id;
            *op = f->gp.op;
            *rt = f->gp.rt;
        }
        return 0;
    }
    if (*runtime_id) {
        struct fx_pair p = { *runtime_id, gid };
        rc = tt__spill_put(&f->glink, sizeof(p), cmp_pair, &p);
    } else if (xc != TT_XC_GPU_ANNOT && HAVE(TT_A_CORRELATION)) {
        struct fx_key k = { ev->correlation, ev->has_ts ? ev->ts_ns : NO_TS, gid };
        rc = tt__spill_put(&f->gun, sizeof(k), cmp_key, &k);
    }
    if (rc == 0 && xc == TT_XC_GPU_ANNOT && HAVE(TT_A_EXTERNAL_ID)) {
        struct fx_key k = { ev->external_id, ev->has_ts ? ev->ts_ns : NO_TS, gid };
        rc = tt__spill_put(&f->gann, sizeof(k), cmp_key, &k);
    }
    return rc;
}

/* ---- between the readings: the passes ---- */

/* the slices with their final dur: those of the threads to nest again
 * (nest), the ops of the threads to link again (ops), the user annotations
 * with an External id (ua) */
static int slices_pass(struct ingest *g, tt__spill **nest, tt__spill **ops, tt__spill **ua)
{
    struct ig_fix *f = g->fix;
    struct fx_row r;
    struct fx_pair e;
    int rc, more;
    if ((rc = tt__spill_rewind(f->endb)) < 0 || (rc = tt__spill_rewind(f->sl)) < 0 ||
        (more = tt__spill_next(f->endb, &e)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(f->sl, &r)) == 1) {
        const struct thread *t = r.thr >= 0 ? &g->threads[r.thr] : NULL;
        struct fx_ord o;
        while (more == 1 && e.id < r.id)
            more = tt__spill_next(f->endb, &e);
        if (more < 0)
            return more;
        if (more == 1 && e.id == r.id) {
            r.dur = e.v;
            r.f |= F_DUR;
        }
        o.thr = r.thr;
        o.ts = r.ts;
        o.dur = r.dur;
        o.id = r.id;
        o.name = r.name;
        o.have_dur = (r.f & F_DUR) != 0;
        if (t && (r.f & F_TS) && t->disordered &&
            (rc = tt__spill_put(nest, sizeof(o), cmp_ord, &o)) < 0)
            return rc;
        if (t && (r.f & F_TS) && t->rt_dirty && (r.f & F_OP) &&
            (rc = tt__spill_put(ops, sizeof(o), cmp_ord, &o)) < 0)
            return rc;
        if ((r.f & F_UA) && (r.f & F_EXT)) {
            struct fx_src s;
            memset(&s, 0, sizeof(s));
            s.key = r.key;
            s.ts = r.ts;
            s.id = r.id;
            s.rt.ts = TT_ROWS_NO_TS;
            s.rt.thr = -1;
            s.op.id = r.id;
            s.op.ts = r.ts;
            s.op.end = r.ts + (o.have_dur && r.dur > 0 ? r.dur : 0);
            s.op.name = r.name;
            if ((rc = tt__spill_put(ua, sizeof(s), cmp_src, &s)) < 0)
                return rc;
        }
    }
    return rc;
}

/* ig_renest_thread for every thread in nest (sorted by cmp_ord) */
static int renest(struct ig_fix *f, tt__spill *nest)
{
    struct thread tmp;
    struct fx_ord o;
    int64_t thr = -1;
    int rc;
    memset(&tmp, 0, sizeof(tmp));
    if ((rc = tt__spill_rewind(nest)) < 0)
        return rc;
    while ((rc = tt__spill_next(nest, &o)) == 1) {
        struct fx_nest n;
        if (o.thr != thr) {
            free(tmp.stack);
            memset(&tmp, 0, sizeof(tmp));
            thr = o.thr;
        }
        n.id = o.id;
        if (ig_nest(&tmp, o.id, o.ts, o.have_dur ? o.dur : 0, &n.depth, &n.parent) < 0) {
            rc = tt__oom();
            break;
        }
        if ((rc = tt__spill_put(&f->nest, sizeof(n), cmp_nest, &n)) < 0)
            break;
    }
    free(tmp.stack);
    return rc;
}

/* an open op of the relink's walk: end as the SQL pass computes it (ts +
 * coalesce(dur, 0)), op as a link gives it */
struct fx_open {
    int64_t end;
    struct frame op;
};

/* the innermost op of the stack enclosing a call that ends at rend (as
 * ingest_link.c innermost_enclosing): index + 1, or 0 */
static size_t innermost(const struct fx_open *stack, size_t n, int64_t rend)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (stack[mid].end >= rend)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* what a call of thread thr (an index into g->threads, -1 none) that
 * starts at ts is, its thread as a key (its index means nothing in the
 * second reading, which may not have met the thread yet) */
static void rt_link(const struct ingest *g, int64_t thr, int64_t ts, int64_t name,
                    struct ig_rtlink *rt)
{
    memset(rt, 0, sizeof(*rt));
    rt->ts = ts;
    rt->name = name;
    rt->thr = -1;
    if (thr >= 0 && (size_t)thr < g->nthreads) {
        rt->key = tt__tkey_of_ids(&g->threads[thr].pid, &g->threads[thr].tid);
        rt->has_key = 1;
    }
}

/* ig_link_runtime for every thread of calls (sorted by cmp_call), its ops
 * in ops (sorted by cmp_ord): the links into f->link */
static int relink(const struct ingest *g, struct ig_fix *f, tt__spill *calls, tt__spill *ops)
{
    struct fx_open *stack = NULL;
    size_t n = 0, alloc = 0, i;
    struct fx_ord c, o;
    int64_t thr = -1;
    int rc, om;
    if ((rc = tt__spill_rewind(calls)) < 0 || (rc = tt__spill_rewind(ops)) < 0)
        return rc;
    om = tt__spill_next(ops, &o);
    while (om >= 0 && (rc = tt__spill_next(calls, &c)) == 1) {
        struct fx_link l;
        if (c.thr != thr) {
            thr = c.thr;
            n = 0;
            while (om == 1 && o.thr < thr)
                om = tt__spill_next(ops, &o);
        }
        while (om == 1 && o.thr == thr && o.ts <= c.ts) {
            int64_t end = o.ts + (o.have_dur ? o.dur : 0);
            while (n && stack[n - 1].end < end)
                n--;
            if (TT_ALLOC_GROW(stack, n + 1, alloc) < 0) {
                free(stack);
                return tt__oom();
            }
            stack[n].end = end;
            stack[n].op.id = o.id;
            stack[n].op.ts = o.ts;
            stack[n].op.end = o.ts + (o.have_dur && o.dur > 0 ? o.dur : 0);
            stack[n].op.name = o.name;
            n++;
            om = tt__spill_next(ops, &o);
        }
        i = innermost(stack, n, c.ts + (c.have_dur ? c.dur : 0));
        memset(&l, 0, sizeof(l));
        l.rid = c.id;
        rt_link(g, c.thr, c.ts, c.name, &l.rt);
        if (i)
            l.op = stack[i - 1].op;
        if ((rc = tt__spill_put(&f->link, sizeof(l), cmp_link, &l)) < 0)
            break;
    }
    free(stack);
    return om < 0 ? om : rc;
}

/* the calls of the threads to link again, by thread and start */
static int calls_pass(struct ingest *g, tt__spill **calls)
{
    struct fx_row r;
    int rc;
    if ((rc = tt__spill_rewind(g->fix->rt)) < 0)
        return rc;
    while ((rc = tt__spill_next(g->fix->rt, &r)) == 1) {
        struct fx_ord o;
        if (r.thr < 0 || !(r.f & F_TS) || !g->threads[r.thr].rt_dirty)
            continue;
        o.thr = r.thr;
        o.ts = r.ts;
        o.dur = r.dur;
        o.have_dur = (r.f & F_DUR) != 0;
        o.id = r.id;
        o.name = r.name;
        if ((rc = tt__spill_put(calls, sizeof(o), cmp_call, &o)) < 0)
            return rc;
    }
    return rc;
}

/* every call with a correlation and its final op (f->link applied), by
 * (correlation, ts, id): the source of the GPU rows' merge join */
static int corr_pass(const struct ingest *g, struct ig_fix *f, tt__spill **src)
{
    struct fx_row r;
    struct fx_link l;
    int rc, more;
    if ((rc = tt__spill_rewind(f->rt)) < 0 || (rc = tt__spill_rewind(f->link)) < 0 ||
        (more = tt__spill_next(f->link, &l)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(f->rt, &r)) == 1) {
        struct fx_src s;
        while (more == 1 && l.rid < r.id)
            more = tt__spill_next(f->link, &l);
        if (more < 0)
            return more;
        if (more == 1 && l.rid == r.id)
            r.op = l.op;
        if (!(r.f & F_CORR))
            continue;
        s.key = r.key;
        s.ts = r.ts;
        s.id = r.id;
        rt_link(g, r.thr, (r.f & F_TS) ? r.ts : TT_ROWS_NO_TS, r.name, &s.rt);
        s.op = r.op;
        if ((rc = tt__spill_put(src, sizeof(s), cmp_src, &s)) < 0)
            return rc;
    }
    return rc;
}

/* GPU rows linked in the stream to a call linked again: its op
 * (ig_link_runtime_gpu) */
static int relinked_gpu(struct ig_fix *f)
{
    struct fx_pair p;
    struct fx_link l;
    int rc, more;
    if ((rc = tt__spill_rewind(f->glink)) < 0 || (rc = tt__spill_rewind(f->link)) < 0 ||
        (more = tt__spill_next(f->link, &l)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(f->glink, &p)) == 1) {
        struct fx_gpu x;
        while (more == 1 && l.rid < p.id)
            more = tt__spill_next(f->link, &l);
        if (more < 0)
            return more;
        if (more != 1 || l.rid != p.id)
            continue;
        x.gid = p.v;
        x.rid = l.rid;
        x.rt = l.rt;
        x.op = l.op;
        if ((rc = tt__spill_put(&f->gpu, sizeof(x), cmp_gpu, &x)) < 0)
            return rc;
    }
    return rc;
}

/* the next row of a side of the join: 1, 0 at the end, or an error */
static int mj_next(tt__spill *s, void *rec, int *more)
{
    *more = tt__spill_next(s, rec);
    return *more < 0 ? *more : 0;
}

/*
 * ingest_link.c merge_link over spills: each row of act gets the row of src
 * with the same key that started last at or before it, else the first of
 * its key. annot: src rows are slices, whose id is the op (no runtime call).
 */
static int merge_join(struct ig_fix *f, tt__spill *act, tt__spill *src, int annot)
{
    struct fx_key a;
    struct fx_src r, first, best;
    int amore = 1, rmore = 1, have_first = 0, rc;
    memset(&r, 0, sizeof(r));
    memset(&first, 0, sizeof(first));
    memset(&best, 0, sizeof(best));
    if ((rc = tt__spill_rewind(act)) < 0 || (rc = tt__spill_rewind(src)) < 0 ||
        (rc = mj_next(src, &r, &rmore)) < 0)
        return rc;
    for (;;) {
        const struct fx_src *m;
        struct fx_gpu x;
        if ((rc = mj_next(act, &a, &amore)) < 0)
            return rc;
        if (!amore)
            break;
        if (have_first && first.key != a.key)
            have_first = 0;
        if (!have_first) {
            while (rmore && r.key < a.key) {
                if ((rc = mj_next(src, &r, &rmore)) < 0)
                    return rc;
            }
            if (!rmore || r.key != a.key)
                continue;
            first = best = r;
            have_first = 1;
            if ((rc = mj_next(src, &r, &rmore)) < 0)
                return rc;
        }
        while (rmore && r.key == a.key && r.ts <= a.ts) {
            best = r;
            if ((rc = mj_next(src, &r, &rmore)) < 0)
                return rc;
        }
        m = best.ts <= a.ts ? &best : &first;
        x.gid = a.id;
        x.rid = annot ? 0 : m->id;
        if (annot) {
            memset(&x.rt, 0, sizeof(x.rt));
            x.rt.ts = TT_ROWS_NO_TS;
            x.rt.thr = -1;
        } else {
            x.rt = m->rt;
        }
        x.op = m->op;
        if ((rc = tt__spill_put(&f->gpu, sizeof(x), cmp_gpu, &x)) < 0)
            return rc;
    }
    return 0;
}

/* the passes of finish_trace, in its order; then the fix-ups are read
 * from their start */
static int passes(struct ingest *g, tt__spill **nest, tt__spill **ops, tt__spill **ua,
                  tt__spill **calls, tt__spill **src)
{
    struct ig_fix *f = g->fix;
    int chrome = g->format == TT_FMT_CHROME || g->format == TT_FMT_CHROME_ARRAY;
    int rc;
    if ((rc = slices_pass(g, nest, ops, ua)) < 0 || (rc = renest(f, *nest)) < 0)
        return rc;
    if (!chrome)
        return 0;
    if (g->any_rt_dirty) {
        if ((rc = calls_pass(g, calls)) < 0 || (rc = relink(g, f, *calls, *ops)) < 0 ||
            (rc = relinked_gpu(f)) < 0)
            return rc;
    }
    if (f->gun && ((rc = corr_pass(g, f, src)) < 0 || (rc = merge_join(f, f->gun, *src, 0)) < 0))
        return rc;
    if (g->n_annot && f->gann && *ua && (rc = merge_join(f, f->gann, *ua, 1)) < 0)
        return rc;
    return 0;
}

int ig_fix_compute(struct ingest *g)
{
    struct ig_fix *f = g->fix;
    tt__spill *nest = NULL, *ops = NULL, *ua = NULL, *calls = NULL, *src = NULL;
    int rc = passes(g, &nest, &ops, &ua, &calls, &src);
    tt__spill_free(nest);
    tt__spill_free(ops);
    tt__spill_free(ua);
    tt__spill_free(calls);
    tt__spill_free(src);
    tt__spill_free(f->sl);
    tt__spill_free(f->rt);
    tt__spill_free(f->glink);
    tt__spill_free(f->gun);
    tt__spill_free(f->gann);
    f->sl = f->rt = f->glink = f->gun = f->gann = NULL;
    return rc < 0 ? rc : 0;
}

/* ---- the second reading ---- */

int ig_fix_start(struct ig_fix *f)
{
    int rc;
    if ((rc = tt__spill_rewind(f->endb)) < 0 || (rc = tt__spill_rewind(f->nest)) < 0 ||
        (rc = tt__spill_rewind(f->link)) < 0 || (rc = tt__spill_rewind(f->gpu)) < 0)
        return rc;
    if ((f->e_more = tt__spill_next(f->endb, &f->e)) < 0)
        return f->e_more;
    if ((f->n_more = tt__spill_next(f->nest, &f->n)) < 0)
        return f->n_more;
    if ((f->l_more = tt__spill_next(f->link, &f->l)) < 0)
        return f->l_more;
    f->g_more = tt__spill_next(f->gpu, &f->gp);
    return f->g_more < 0 ? f->g_more : 0;
}

static void set_int(tt__cell *c, int have, int64_t v)
{
    c->type = have ? CELL_INT : CELL_NULL;
    c->i = have ? v : 0;
}

/* the slices of a batch: their dur, depth and parent as the passes left them */
static int fix_slices(struct ig_fix *f, tt__cell *cells, int n, int ncols)
{
    int k;
    for (k = 0; k < n; k++) {
        tt__cell *row = &cells[(size_t)k * (size_t)ncols];
        int64_t id = row[TT_C_SL_ID].i;
        while (f->e_more == 1 && f->e.id < id)
            f->e_more = tt__spill_next(f->endb, &f->e);
        while (f->n_more == 1 && f->n.id < id)
            f->n_more = tt__spill_next(f->nest, &f->n);
        if (f->e_more < 0 || f->n_more < 0)
            return f->e_more < 0 ? f->e_more : f->n_more;
        if (f->e_more == 1 && f->e.id == id)
            set_int(&row[TT_C_SL_DUR], 1, f->e.v);
        if (f->n_more == 1 && f->n.id == id) {
            set_int(&row[TT_C_SL_DEPTH], 1, f->n.depth);
            set_int(&row[TT_C_SL_PARENT_ID], f->n.parent != 0, f->n.parent);
        }
    }
    return 0;
}

/* the runtime calls of a batch: the op of those linked again */
static int fix_runtime(struct ig_fix *f, tt__cell *cells, int n, int ncols)
{
    int k;
    for (k = 0; k < n; k++) {
        tt__cell *row = &cells[(size_t)k * (size_t)ncols];
        int64_t id = row[TT_C_RT_ID].i;
        while (f->l_more == 1 && f->l.rid < id)
            f->l_more = tt__spill_next(f->link, &f->l);
        if (f->l_more < 0)
            return f->l_more;
        if (f->l_more == 1 && f->l.rid == id)
            set_int(&row[TT_C_RT_OP_ID], f->l.op.id != 0, f->l.op.id);
    }
    return 0;
}

int ig_fix_rows(struct ingest *g, const struct job *j)
{
    if (j->table == R_SLICE)
        return fix_slices(g->fix, j->cells, j->n, g->rbuf[R_SLICE].ncols);
    if (j->table == R_RT)
        return fix_runtime(g->fix, j->cells, j->n, g->rbuf[R_RT].ncols);
    return 0;
}
