/*
 * analyze/memtimeline/memtimeline_passes.c - the memory timeline's classifying passes
 * over the device's [memory] events (docs/TORCH.md 4, docs/MEMTIMELINE.md):
 *  1. context: each event's innermost enclosing CPU op on its thread and the
 *     phase around it (forward, backward, AccumulateGrad, Optimizer.step,
 *     ProfilerStep#N), from a per-thread stack walk (temp table memctx);
 *  2. pairing in time order by address: each allocation's free time and the
 *     category the heuristics give it (temp table memcat), the blocks freed
 *     before any allocation (PREEXISTING) and the allocator's peak event.
 * Memory is bounded by the allocations live at one time.
 */
#include "common/compat.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "tracetool/render.h"

#include <errno.h>

const char *const tt__memtl_cat_rule[TT_CAT_COUNT] = {
    "PARAMETER: never freed and allocated outside any profiler step",
    "OPTIMIZER_STATE: allocated in Optimizer.step and still live after it",
    "INPUT: allocated in a step before the first op of the model (data loading/copies)",
    "TEMPORARY: freed before the op that allocated it ended",
    "ACTIVATION: allocated in the forward pass and freed in the backward pass",
    "GRADIENT: allocated under AccumulateGrad (or a backward op) and live after it",
    "AUTOGRAD_DETAIL: allocated and freed inside the backward pass",
    "Unknown: no rule applied (or live before the trace started)",
};

/* ---- context pass ---- */

int tt__memtl_str_has(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

unsigned tt__memtl_flags_of(const char *name, int is_backward_seq)
{
    unsigned f = 0;
    if (!name)
        return 0;
    if (tt__memtl_str_has(name, "autograd::engine::evaluate_function") || tt__memtl_str_has(name, "Backward") ||
        is_backward_seq)
        f |= PH_BACKWARD;
    if (tt__memtl_str_has(name, "AccumulateGrad"))
        f |= PH_ACCUMGRAD;
    if (!strncmp(name, "Optimizer.step", 14) || !strncmp(name, "Optimizer.zero_grad", 19))
        f |= PH_OPTIMIZER;
    if (!strncmp(name, "ProfilerStep#", 13))
        f |= PH_STEP;
    return f;
}

void tt__memtl_bind_device(sqlite3_stmt *st, int64_t trace, int dtype, int64_t did)
{
    sqlite3_bind_int64(st, 1, trace);
    sqlite3_bind_int(st, 2, dtype);
    sqlite3_bind_int64(st, 3, did);
}

/*
 * The phase flags of a slice's name id: a fixed direct-mapped cache in front
 * of the strings table (names repeat), cheaper than joining every slice to
 * its name. -1: no such string (the slice is left out, as a join would).
 */
#define NAME_CACHE 4096

struct name_cache {
    sqlite3_stmt *st;
    int64_t id[NAME_CACHE];
    int flags[NAME_CACHE];
    unsigned char valid[NAME_CACHE];
};

static int name_flags(struct name_cache *nc, int64_t id)
{
    size_t k = (size_t)id & (NAME_CACHE - 1);
    if (!nc->valid[k] || nc->id[k] != id) {
        sqlite3_reset(nc->st);
        sqlite3_bind_int64(nc->st, 1, id);
        nc->flags[k] = sqlite3_step(nc->st) == SQLITE_ROW
                           ? (int)tt__memtl_flags_of((const char *)sqlite3_column_text(nc->st, 0), 0)
                           : -1;
        nc->id[k] = id;
        nc->valid[k] = 1;
    }
    return nc->flags[k];
}

static int same_value(sqlite3_value *a, sqlite3_value *b)
{
    return sqlite3_value_type(a) == sqlite3_value_type(b) &&
           sqlite3_value_int64(a) == sqlite3_value_int64(b) &&
           (sqlite3_value_type(a) != SQLITE_TEXT ||
            !strcmp((const char *)sqlite3_value_text(a), (const char *)sqlite3_value_text(b)));
}

/* a row of the walk's query: start a new thread's stack, pop what ended */
static void walk_row(struct memwalk *w, sqlite3_stmt *st, int64_t ts)
{
    sqlite3_value *pv = sqlite3_column_value(st, 2), *tv = sqlite3_column_value(st, 3);
    if (!w->cp || !same_value(pv, w->cp) || !same_value(tv, w->ct)) {
        sqlite3_value_free(w->cp);
        sqlite3_value_free(w->ct);
        w->cp = sqlite3_value_dup(pv);
        w->ct = sqlite3_value_dup(tv);
        w->n = 0;
    }
    while (w->n && w->stack[w->n - 1].end < ts)
        w->n--;
}

int tt__memtl_walk_push(struct memwalk *w, int64_t id, int64_t end, unsigned f, int64_t name)
{
    size_t n;
    while (w->n && w->stack[w->n - 1].end < end)
        w->n--;
    if (TT_ALLOC_GROW(w->stack, w->n + 1, w->alloc) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    n = w->n++;
    w->stack[n].id = id;
    w->stack[n].end = end;
    w->stack[n].flags = f | (n ? w->stack[n - 1].flags : 0);
    w->stack[n].name = name;
    w->stack[n].step_name = (f & PH_STEP) ? name : n ? w->stack[n - 1].step_name : 0;
    return 0;
}

/* the event's context: the innermost op around it */
void tt__memtl_store_context(struct ctxstore *cs, struct memtl_scan *sc, int64_t id, int64_t ts,
                          const struct memwalk *w)
{
    struct memctx *c;
    if (!sc->have_ts || ts < sc->ts_min)
        sc->ts_min = ts;
    if (!sc->have_ts || ts > sc->ts_max)
        sc->ts_max = ts;
    sc->have_ts = 1;
    if (id < cs->lo || (uint64_t)(id - cs->lo) >= cs->n || !w->n)
        return;
    c = &cs->v[id - cs->lo];
    c->op_id = w->stack[w->n - 1].id;
    c->op_end = w->stack[w->n - 1].end;
    c->flags = w->stack[w->n - 1].flags;
    c->op_name = w->stack[w->n - 1].name;
    c->step_name = w->stack[w->n - 1].step_name;
    c->has = 1;
    if (c->flags & PH_STEP)
        sc->has_steps = 1;
}

/* ---- context pass without a sort ---- */

/*
 * The usual trace stores each thread's ops and [memory] events in the
 * order the walk needs (time, then the longer op first): then one scan of
 * the slices in id order, beside one cursor per thread over its [memory]
 * events in id order, gives the same contexts as the sorted query below
 * without sorting the two tables. Any row out of that order, a thread that
 * is not a pair of integers or more than FAST_THREADS threads: returns 1
 * and the sorted query runs instead.
 */
#define FAST_THREADS 8

struct fthread {
    int64_t pid, tid;
    sqlite3_stmt *mem;        /* its device's events in id order */
    int have;                 /* mem is on a row */
    int64_t mid, mts;         /* that row */
    int64_t last_ts, last_dur; /* the last op pushed: the order check */
    int any;
    struct memwalk w;
};

struct fast {
    tt_db *db;
    struct ctxstore *cs;
    struct memtl_scan *sc;
    struct fthread th[FAST_THREADS];
    int nth;
};

void tt__memtl_walk_pop(struct memwalk *w, int64_t ts)
{
    while (w->n && w->stack[w->n - 1].end < ts)
        w->n--;
}

/* the thread's next event: 0, 1 out of order, <0 an error */
static int fast_next(struct fast *f, struct fthread *t)
{
    int r = sqlite3_step(t->mem);
    int64_t ts;
    if (r == SQLITE_DONE) {
        t->have = 0;
        return 0;
    }
    if (r != SQLITE_ROW)
        return tt_db_error(f->db, "cannot read memory events");
    ts = sqlite3_column_int64(t->mem, 1);
    if (t->have && ts < t->mts)
        return 1;
    t->mid = sqlite3_column_int64(t->mem, 0);
    t->mts = ts;
    t->have = 1;
    return 0;
}

/* the thread's events before time ts (all with ts < 0 meaning none left) */
static int fast_drain(struct fast *f, struct fthread *t, int64_t ts, int all)
{
    int rc;
    while (t->have && (all || t->mts < ts)) {
        tt__memtl_walk_pop(&t->w, t->mts);
        tt__memtl_store_context(f->cs, f->sc, t->mid, t->mts, &t->w);
        if ((rc = fast_next(f, t)) != 0)
            return rc;
    }
    return 0;
}

/* the device's threads, each with its cursor on its first event */
static int fast_threads(struct fast *f, int64_t trace, int dtype, int64_t did)
{
    sqlite3_stmt *st;
    int r, rc = 0;
    if (tt_db_prepare(f->db, &st, "SELECT DISTINCT pid, tid FROM memory WHERE trace_id = ?1"
                                  " AND device_type = ?2 AND coalesce(device_id, -1) = ?3"
                                  " AND ts IS NOT NULL") < 0)
        return TT_EDB;
    tt__memtl_bind_device(st, trace, dtype, did);
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        struct fthread *t = &f->th[f->nth];
        if (f->nth == FAST_THREADS || sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
            sqlite3_column_type(st, 1) != SQLITE_INTEGER) {
            rc = 1;
            break;
        }
        t->pid = sqlite3_column_int64(st, 0);
        t->tid = sqlite3_column_int64(st, 1);
        f->nth++;
        if (tt_db_prepare(f->db, &t->mem, "SELECT id, ts FROM memory WHERE trace_id = ?1"
                                          " AND device_type = ?2 AND coalesce(device_id, -1) = ?3"
                                          " AND ts IS NOT NULL AND pid = ?4 AND tid = ?5"
                                          " ORDER BY id") < 0) {
            rc = TT_EDB;
            break;
        }
        tt__memtl_bind_device(t->mem, trace, dtype, did);
        sqlite3_bind_int64(t->mem, 4, t->pid);
        sqlite3_bind_int64(t->mem, 5, t->tid);
        rc = fast_next(f, t);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(f->db, "cannot read memory events");
    sqlite3_finalize(st);
    return rc;
}

/* one op of the scan: the thread's events before it, then the op */
static int fast_slice(struct fast *f, struct name_cache *nc, sqlite3_stmt *st)
{
    struct fthread *t = NULL;
    int64_t ts = sqlite3_column_int64(st, 3), dur = sqlite3_column_int64(st, 4);
    int i, fl, rc;
    if (sqlite3_column_type(st, 1) != SQLITE_INTEGER || sqlite3_column_type(st, 2) != SQLITE_INTEGER)
        return sqlite3_column_type(st, 1) == SQLITE_FLOAT ||
               sqlite3_column_type(st, 2) == SQLITE_FLOAT; /* 5.0 would sort as 5 */
    for (i = 0; i < f->nth && !t; i++)
        if (f->th[i].pid == sqlite3_column_int64(st, 1) &&
            f->th[i].tid == sqlite3_column_int64(st, 2))
            t = &f->th[i];
    if (!t || (fl = name_flags(nc, sqlite3_column_int64(st, 5))) < 0)
        return 0;
    if (t->any && (ts < t->last_ts || (ts == t->last_ts && dur > t->last_dur)))
        return 1;
    t->any = 1;
    t->last_ts = ts;
    t->last_dur = dur;
    if ((rc = fast_drain(f, t, ts, 0)) != 0)
        return rc;
    tt__memtl_walk_pop(&t->w, ts);
    if (sqlite3_column_int(st, 6))
        fl |= PH_BACKWARD;
    return tt__memtl_walk_push(&t->w, sqlite3_column_int64(st, 0), ts + dur, (unsigned)fl,
                     sqlite3_column_int64(st, 5));
}

/* 0 done, 1 not in order (nothing kept), <0 an error */
static int context_fast(tt_db *db, int64_t trace, int dtype, int64_t did, struct ctxstore *cs,
                        struct name_cache *nc, struct memtl_scan *sc)
{
    struct fast *f = calloc(1, sizeof(*f));
    sqlite3_stmt *st = NULL;
    int rc, r = SQLITE_DONE, i;
    if (!f)
        return tt_error_set(TT_ENOMEM, "out of memory");
    f->db = db;
    f->cs = cs;
    f->sc = sc;
    if ((rc = fast_threads(f, trace, dtype, did)) != 0)
        goto out;
    if (tt_db_prepare(db, &st, "SELECT id, pid, tid, ts, coalesce(dur, 0), name,"
                               " (seq_nr IS NOT NULL AND coalesce(fwd_tid, 0) > 0) FROM slices"
                               " WHERE trace_id = ?1 AND ts IS NOT NULL ORDER BY id") < 0) {
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(st, 1, trace);
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW)
        rc = fast_slice(f, nc, st);
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read the ops");
    for (i = 0; rc == 0 && i < f->nth; i++)
        rc = fast_drain(f, &f->th[i], 0, 1);
out:
    sqlite3_finalize(st);
    for (i = 0; i < f->nth; i++) {
        sqlite3_finalize(f->th[i].mem);
        free(f->th[i].w.stack);
    }
    free(f);
    if (rc == 1) { /* start again with the sorted query */
        memset(sc, 0, sizeof(*sc));
        memset(cs->v, 0, cs->n * sizeof(*cs->v));
    }
    return rc;
}

/* room for the contexts of the device's events: by id, from the lowest */
static int ctx_alloc(tt_db *db, int64_t trace, int dtype, int64_t did, struct ctxstore *cs)
{
    int ok, ok2;
    int64_t lo = tt__memtl_q1(db, "SELECT min(id) FROM memory WHERE trace_id = ?1"
                                  " AND device_type = ?2 AND coalesce(device_id, -1) = ?3",
                              trace, dtype, did, &ok);
    int64_t hi = tt__memtl_q1(db, "SELECT max(id) FROM memory WHERE trace_id = ?1"
                                  " AND device_type = ?2 AND coalesce(device_id, -1) = ?3",
                              trace, dtype, did, &ok2);
    memset(cs, 0, sizeof(*cs));
    if (!ok || !ok2 || hi < lo)
        return 0;
    if ((uint64_t)(hi - lo) >= SIZE_MAX / sizeof(*cs->v) ||
        !(cs->v = calloc((size_t)(hi - lo) + 1, sizeof(*cs->v))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    cs->lo = lo;
    cs->n = (size_t)(hi - lo) + 1;
    return 0;
}

/* Each of the device's events' context into cs; note their time range and
 * whether any is in a ProfilerStep in sc. */
int tt__memtl_context_pass(tt_db *db, int64_t trace, int dtype, int64_t did,
                           struct memtl_scan *sc, struct ctxstore *cs)
{
    sqlite3_stmt *st = NULL;
    struct name_cache *nc = calloc(1, sizeof(*nc));
    struct memwalk w;
    int rc = 0, r;
    memset(&w, 0, sizeof(w));
    if (!nc)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if ((rc = ctx_alloc(db, trace, dtype, did, cs)) < 0)
        goto out;
    if (tt_db_prepare(db, &st,
                      "SELECT 0 AS k, s.id, s.pid, s.tid, s.ts, coalesce(s.dur, 0),"
                      "  s.name, (s.seq_nr IS NOT NULL AND coalesce(s.fwd_tid, 0) > 0)"
                      " FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL"
                      "  AND s.tid IN (SELECT DISTINCT tid FROM memory WHERE trace_id = ?1)"
                      " UNION ALL SELECT 1, m.id, m.pid, m.tid, m.ts, 0, NULL, 0 FROM memory AS m"
                      " WHERE m.trace_id = ?1 AND m.device_type = ?2 AND coalesce(m.device_id, -1) = ?3"
                      "  AND m.ts IS NOT NULL"
                      " ORDER BY 3, 4, 5, k, 6 DESC") < 0 ||
        tt_db_prepare(db, &nc->st, "SELECT s FROM strings WHERE id = ?1") < 0) {
        rc = TT_EDB;
        goto out;
    }
    if ((rc = context_fast(db, trace, dtype, did, cs, nc, sc)) <= 0)
        goto out;
    tt__memtl_bind_device(st, trace, dtype, did);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 1), ts = sqlite3_column_int64(st, 4);
        if (sqlite3_column_int(st, 0) == 0) {
            int f = name_flags(nc, sqlite3_column_int64(st, 6));
            if (f < 0)
                continue;
            walk_row(&w, st, ts);
            if (sqlite3_column_int(st, 7))
                f |= PH_BACKWARD;
            if ((rc = tt__memtl_walk_push(&w, id, ts + sqlite3_column_int64(st, 5), (unsigned)f,
                                sqlite3_column_int64(st, 6))) < 0)
                goto out;
            continue;
        }
        walk_row(&w, st, ts);
        tt__memtl_store_context(cs, sc, id, ts, &w);
    }
    rc = r == SQLITE_DONE ? 0 : tt_db_error(db, "cannot read memory events");
out:
    sqlite3_value_free(w.cp);
    sqlite3_value_free(w.ct);
    free(w.stack);
    sqlite3_finalize(nc->st);
    free(nc);
    sqlite3_finalize(st);
    return rc;
}

/* ---- live allocations by address (open addressing) ---- */

size_t tt__memtl_hash(int64_t a, size_t cap)
{
    uint64_t x = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17) & (cap - 1);
}

static int live_grow(struct livemap *m)
{
    struct livemap nm;
    size_t i;
    nm.cap = m->cap ? m->cap * 2 : 4096;
    nm.n = 0;
    nm.e = calloc(nm.cap, sizeof(*nm.e));
    if (!nm.e)
        return TT_ENOMEM;
    for (i = 0; i < m->cap; i++) {
        if (m->e[i].used) {
            size_t j = tt__memtl_hash(m->e[i].addr, nm.cap);
            while (nm.e[j].used)
                j = (j + 1) & (nm.cap - 1);
            nm.e[j] = m->e[i];
            nm.n++;
        }
    }
    free(m->e);
    *m = nm;
    return 0;
}

struct live *tt__live_find(struct livemap *m, int64_t addr)
{
    size_t j;
    if (!m->cap)
        return NULL;
    j = tt__memtl_hash(addr, m->cap);
    while (m->e[j].used) {
        if (m->e[j].addr == addr)
            return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

struct live *tt__live_put(struct livemap *m, int64_t addr)
{
    size_t j;
    if ((m->n + 1) * 2 > m->cap && live_grow(m) < 0)
        return NULL;
    j = tt__memtl_hash(addr, m->cap);
    while (m->e[j].used) {
        if (m->e[j].addr == addr)
            return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    memset(&m->e[j], 0, sizeof(m->e[j]));
    m->e[j].used = 1;
    m->e[j].addr = addr;
    m->n++;
    return &m->e[j];
}

void tt__live_del(struct livemap *m, struct live *e)
{
    size_t j = (size_t)(e - m->e), k;
    m->e[j].used = 0;
    m->n--;
    k = (j + 1) & (m->cap - 1);
    while (m->e[k].used) {
        struct live tmp = m->e[k];
        m->e[k].used = 0;
        m->n--;
        {
            size_t h = tt__memtl_hash(tmp.addr, m->cap);
            while (m->e[h].used)
                h = (h + 1) & (m->cap - 1);
            m->e[h] = tmp;
            m->n++;
        }
        k = (k + 1) & (m->cap - 1);
    }
}

/* the heuristics (docs/MEMTIMELINE.md), decided when the block is freed
 * (free_ts) or at the end of the trace (free_ts = -1) */
static int categorize(const struct live *a, int64_t free_ts, unsigned free_flags, int has_steps)
{
    /* torch's precedence: a gradient by identity beats a temporary */
    if (a->etcat == TT_CAT_GRADIENT)
        return a->etcat;
    if (free_ts >= 0 && a->op_id && free_ts <= a->op_end)
        return TT_CAT_TEMPORARY;
    if (a->etcat >= 0)
        return a->etcat;
    if (a->flags & PH_ACCUMGRAD)
        return TT_CAT_GRADIENT;
    if (a->flags & PH_OPTIMIZER)
        return free_ts < 0 || !(free_flags & PH_OPTIMIZER) ? TT_CAT_OPTIMIZER_STATE
                                                          : TT_CAT_TEMPORARY;
    if (a->flags & PH_BACKWARD)
        return free_ts >= 0 && (free_flags & PH_BACKWARD) ? TT_CAT_AUTOGRAD_DETAIL
                                                          : TT_CAT_GRADIENT;
    if ((a->flags & PH_STEP) && a->op_id && free_ts >= 0 && (free_flags & PH_BACKWARD))
        return TT_CAT_ACTIVATION;
    /* outside the steps of a trace that has them, and never freed: without
     * steps there is no "outside", and an op's output kept to the end (an
     * activation of a loop without ProfilerStep) is not a parameter */
    if (has_steps && !(a->flags & PH_STEP) && free_ts < 0)
        return TT_CAT_PARAMETER;
    return TT_CAT_UNKNOWN;
}

/* pass 2: category of every allocation -> sp->cat, sp->rule */
#define RULE_OF(a, cat) ((a)->etcat >= 0 && (a)->etcat == (cat) ? (a)->rule : 0)

static void store_cat(struct evspill *sp, const struct live *a, int cat)
{
    sp->cat[a->idx] = (unsigned char)cat;
    sp->rule[a->idx] = (unsigned char)RULE_OF(a, cat);
}

static int add_pre(struct memtl_scan *sc, int64_t addr, int64_t bytes)
{
    if (TT_ALLOC_GROW(sc->pre, sc->npre + 1, sc->apre) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    sc->pre[sc->npre].addr = addr;
    sc->pre[sc->npre].bytes = bytes;
    sc->npre++;
    return 0;
}

/* Also notes in sc the blocks freed before any allocation of their address
 * (PREEXISTING, in time order) and the first event at the highest
 * total_allocated: the emission pass reads the same records in the same
 * order. */
int tt__memtl_category_pass(struct evspill *sp, int nocat, struct memtl_scan *sc)
{
    struct livemap m = { NULL, 0, 0 };
    struct addr_synth syn;
    struct memev ev;
    int64_t peak_alloc = 0, live_sum = 0, last_alloc = 0;
    int have_alloc = 0;
    size_t i, idx;
    int rc = 0, r;
    memset(&syn, 0, sizeof(syn));
    if ((rc = tt__evspill_rewind(sp)) < 0)
        return rc;
    for (idx = 0; (r = tt__evspill_next(sp, &ev)) == 1; idx++) {
        int64_t addr, bytes = ev.bytes;
        struct live *a;
        if ((rc = tt__memtl_addr(&syn, ev.has & EV_ADDR, ev.addr, bytes, &addr)) < 0)
            goto out;
        a = tt__live_find(&m, addr);
        if (bytes > 0)
            live_sum += bytes - (a ? a->bytes : 0);
        else if (bytes < 0 && a)
            live_sum -= a->bytes;
        if (ev.has & EV_TA) {
            /* the allocator's total less what the timeline holds */
            last_alloc = ev.ta - live_sum;
            have_alloc = 1;
            if (ev.ta > peak_alloc) {
                peak_alloc = ev.ta;
                sc->peak_mem_id = ev.id;
                sc->peak_op = ev.op_name;
                sc->peak_step = ev.step_name;
            }
        }
        if (bytes > 0) {
            /* reallocated without a free we saw: close the old one */
            if (a)
                store_cat(sp, a, nocat ? TT_CAT_UNKNOWN : categorize(a, -1, 0, sc->has_steps));
            if (!(a = tt__live_put(&m, addr))) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                goto out;
            }
            a->bytes = bytes;
            a->mem_id = ev.id;
            a->idx = idx;
            a->ts = ev.ts;
            a->op_id = ev.op_id;
            a->op_end = ev.op_end;
            a->flags = ev.flags;
            a->etcat = ev.etcat;
            a->rule = ev.rule;
        } else if (bytes < 0 && a) {
            store_cat(sp, a, nocat ? TT_CAT_UNKNOWN : categorize(a, ev.ts, ev.flags, sc->has_steps));
            tt__live_del(&m, a);
        } else if (bytes < 0 && (rc = add_pre(sc, addr, -bytes)) < 0) {
            goto out;
        }
    }
    if (r < 0) {
        rc = r;
        goto out;
    }
    /* at the last event the PREEXISTING blocks are all freed: what the
     * allocator holds beyond the live blocks was there before the trace */
    sc->have_before = have_alloc && last_alloc > 0;
    sc->before = sc->have_before ? last_alloc : 0;
    for (i = 0; i < m.cap; i++)
        if (m.e[i].used)
            store_cat(sp, &m.e[i], nocat ? TT_CAT_UNKNOWN : categorize(&m.e[i], -1, 0, sc->has_steps));
out:
    tt__memtl_addr_free(&syn);
    free(m.e);
    return rc;
}

/* ---- the device's events in time order ---- */

int tt__memtl_runs(tt_db *db, int64_t trace, int dtype, int64_t did, struct memtl_scan *sc)
{
    sqlite3_stmt *st;
    int64_t last = 0;
    int r, n = 0;
    sc->nruns = 0;
    if (tt_db_prepare(db, &st, "SELECT m.id, m.ts FROM memory AS m" MEM_WHERE
                               " ORDER BY m.id") < 0)
        return TT_EDB;
    tt__memtl_bind_device(st, trace, dtype, did);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(st, 1);
        if (sqlite3_column_type(st, 1) != SQLITE_INTEGER) {
            n = 0; /* a time that is not an integer: sort */
            break;
        }
        if (!n || ts < last) {
            if (n == MEMRD_RUNS) {
                n = 0;
                break;
            }
            sc->run_lo[n++] = sqlite3_column_int64(st, 0);
        }
        last = ts;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE && r != SQLITE_ROW)
        return tt_db_error(db, "cannot read memory events");
    sc->nruns = n;
    return 0;
}

int tt__memrd_open(struct memrd *r, tt_db *db, const char *select, int64_t trace, int dtype,
                   int64_t did, const struct memtl_scan *sc)
{
    char *sql;
    int k, rc = 0;
    memset(r, 0, sizeof(*r));
    r->n = sc->nruns ? sc->nruns : 1;
    if (!(sql = malloc(strlen(select) + 256)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    sprintf(sql, "%s" MEM_WHERE "%s", select,
            sc->nruns ? " AND m.id >= ?4 AND m.id < ?5 ORDER BY m.id" : " ORDER BY m.ts, m.id");
    for (k = 0; k < r->n && rc == 0; k++) {
        if (tt_db_prepare(db, &r->st[k], sql) < 0) {
            rc = TT_EDB;
            break;
        }
        tt__memtl_bind_device(r->st[k], trace, dtype, did);
        if (sc->nruns) {
            sqlite3_bind_int64(r->st[k], 4, sc->run_lo[k]);
            sqlite3_bind_int64(r->st[k], 5, k + 1 < r->n ? sc->run_lo[k + 1] : INT64_MAX);
        }
    }
    free(sql);
    return rc;
}

/* cursor k onto its next row */
static int memrd_advance(struct memrd *r, int k)
{
    int rc = sqlite3_step(r->st[k]);
    r->have[k] = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW) {
        r->id[k] = sqlite3_column_int64(r->st[k], 0);
        r->ts[k] = sqlite3_column_int64(r->st[k], 1);
    }
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rc;
}

int tt__memrd_step(struct memrd *r)
{
    int k, best = -1, rc;
    if (r->n == 1) { /* one run, or the sorted query */
        r->cur = r->st[0];
        return sqlite3_step(r->st[0]);
    }
    if (!r->started) {
        r->started = 1;
        for (k = 0; k < r->n; k++)
            if ((rc = memrd_advance(r, k)) != 0)
                return rc;
    } else if (r->cur && (rc = memrd_advance(r, r->last)) != 0) {
        return rc;
    }
    for (k = 0; k < r->n; k++)
        if (r->have[k] && (best < 0 || r->ts[k] < r->ts[best] ||
                           (r->ts[k] == r->ts[best] && r->id[k] < r->id[best])))
            best = k;
    if (best < 0) {
        r->cur = NULL;
        return SQLITE_DONE;
    }
    r->last = best;
    r->cur = r->st[best];
    return SQLITE_ROW;
}

void tt__memrd_close(struct memrd *r)
{
    int k;
    for (k = 0; k < r->n; k++)
        sqlite3_finalize(r->st[k]);
    memset(r, 0, sizeof(*r));
}

/* ---- the records of the later passes (a temporary file) ---- */

int tt__memtl_spill_event(struct memev *ev, const struct ctxstore *cs, const struct i64map *et,
                          struct evspill *sp)
{
    const struct memctx *c = tt__memtl_ctx(cs, ev->id);
    size_t v;
    ev->op_id = c->op_id;
    ev->op_end = c->op_end;
    ev->op_name = c->op_name;
    ev->step_name = c->step_name;
    ev->flags = c->flags;
    ev->etcat = -1;
    if (et->n && tt__i64map_get(et, ev->id, &v)) {
        ev->etcat = (int)(v & 0xff);
        ev->rule = (int)(v >> 8);
    }
    if (fwrite(ev, sizeof(*ev), 1, sp->f) != 1)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    sp->n++;
    return 0;
}

int tt__memtl_spill_done(struct evspill *sp)
{
    if (!(sp->cat = malloc(sp->n + 1)) || !(sp->rule = calloc(sp->n + 1, 1)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    memset(sp->cat, TT_CAT_UNKNOWN, sp->n + 1);
    return 0;
}

int tt__memtl_load(tt_db *db, int64_t trace, int dtype, int64_t did, const struct memtl_scan *sc,
                   const struct ctxstore *cs, const struct i64map *et, struct evspill *sp)
{
    struct memrd rd;
    int rc, r;
    memset(sp, 0, sizeof(*sp));
    if (!(sp->f = tt__tmpfile()))
        return tt_error_last()->code ? tt_error_last()->code : TT_EIO;
    if ((rc = tt__memrd_open(&rd, db,
                             "SELECT m.id, m.ts, m.addr, m.bytes, m.total_allocated,"
                             " m.total_reserved FROM memory AS m",
                             trace, dtype, did, sc)) < 0)
        goto out;
    while ((r = tt__memrd_step(&rd)) == SQLITE_ROW) {
        sqlite3_stmt *st = rd.cur;
        struct memev ev;
        memset(&ev, 0, sizeof(ev));
        ev.id = sqlite3_column_int64(st, 0);
        ev.ts = sqlite3_column_int64(st, 1);
        ev.addr = sqlite3_column_int64(st, 2);
        ev.bytes = sqlite3_column_int64(st, 3);
        ev.ta = sqlite3_column_int64(st, 4);
        ev.tr = sqlite3_column_int64(st, 5);
        ev.has = (sqlite3_column_type(st, 2) != SQLITE_NULL ? EV_ADDR : 0) |
                 (sqlite3_column_type(st, 4) != SQLITE_NULL ? EV_TA : 0) |
                 (sqlite3_column_type(st, 5) != SQLITE_NULL ? EV_TR : 0);
        if ((rc = tt__memtl_spill_event(&ev, cs, et, sp)) < 0)
            goto out;
    }
    if (r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read memory events");
    else
        rc = tt__memtl_spill_done(sp);
out:
    tt__memrd_close(&rd);
    return rc;
}

int tt__evspill_rewind(struct evspill *sp)
{
    if (fflush(sp->f) != 0 || fseek(sp->f, 0, SEEK_SET) != 0)
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    return 0;
}

int tt__evspill_next(struct evspill *sp, struct memev *ev)
{
    if (fread(ev, sizeof(*ev), 1, sp->f) == 1)
        return 1;
    if (ferror(sp->f))
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    return 0;
}

void tt__evspill_free(struct evspill *sp)
{
    if (sp->f)
        fclose(sp->f);
    free(sp->cat);
    free(sp->rule);
    memset(sp, 0, sizeof(*sp));
}

/* ---- made-up addresses for events without one (memtimeline_state.h) ---- */

int tt__memtl_addr(struct addr_synth *s, int has, int64_t own, int64_t bytes, int64_t *addr)
{
    size_t k;
    struct synth_stack *sk;
    if (has) {
        *addr = own;
        return 0;
    }
    if (s->next == 0)
        s->next = -1;
    if (!tt__i64map_get(&s->by_size, bytes < 0 ? -bytes : bytes, &k)) {
        if (bytes < 0) { /* nothing of that size live: a block from before */
            *addr = s->next--;
            return 0;
        }
        if (TT_ALLOC_GROW(s->stk, s->nstk + 1, s->astk) < 0 ||
            tt__i64map_put(&s->by_size, bytes, s->nstk) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
        k = s->nstk++;
        memset(&s->stk[k], 0, sizeof(s->stk[k]));
    }
    sk = &s->stk[k];
    if (bytes < 0) {
        *addr = sk->n ? sk->a[--sk->n] : s->next--;
        return 0;
    }
    if (TT_ALLOC_GROW(sk->a, sk->n + 1, sk->cap) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    *addr = sk->a[sk->n++] = s->next--;
    return 0;
}

void tt__memtl_addr_free(struct addr_synth *s)
{
    size_t k;
    for (k = 0; k < s->nstk; k++)
        free(s->stk[k].a);
    free(s->stk);
    tt__i64map_free(&s->by_size);
    memset(s, 0, sizeof(*s));
}

int64_t tt__memtl_q1(tt_db *db, const char *sql, int64_t a, int b, int64_t c, int *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int(st, 2, b);
    sqlite3_bind_int64(st, 3, c);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        v = sqlite3_column_int64(st, 0);
        *ok = 1;
    }
    sqlite3_finalize(st);
    return v;
}

