/*
 * analyze/critpath/critpath_read.c - the rows of one trace for `tracetool
 * critical-path`, as one consumer of the record stream
 * (store/ingest_rows.h): a file (tt__ingest_rows) or a trace of a database
 * (tt__db_rows) alike.
 *
 * Which events are in the window is known only once the chosen step's
 * slice has come, which in a file may be after them: every event that may
 * be in it (CPU slices and runtime calls with a duration, GPU activities
 * and cuda_sync events linked to a runtime call) goes, as it comes, to a
 * spill (common/spill.h: a bounded buffer, then an unlinked temporary
 * file); at the end those in the window are read back into memory, the
 * only events held. A kernel's queue lengths (how many launched activities
 * its stream held after its launch and after its start: HTA's
 * queue_length) count what came before the window too: every launch and
 * start goes to a second spill, sorted by stream then time, and one pass
 * over it gives the values of the window's kernels.
 *
 * --under (filter.under) chooses the window as HTA's annotation and
 * instance_id: the CPU slices whose whole name matches are spilled, by
 * start, and the window is the span of instances instance_from..to of them.
 * --name (filter.name) only marks the strings that match (CPS_NAME): the
 * path is the window's, the segments listed those at a matching event.
 */
#include "common/compat.h"
#include "analyze/critpath/critpath_state.h"
#include "common/arena.h"
#include "common/log.h"
#include "common/tmath.h"
#include "formats/json.h"
#include "formats/kineto.h"
#include "formats/spool.h"
#include "analyze/filter/filtering.h"

#include <inttypes.h>

/* the links of a GPU row not yet handed over */
struct cp_link {
    int64_t rt, rt_ts;
};

/* a launch (dir +1, at its runtime call's start) or a start (dir -1) of a
 * GPU activity on a stream */
struct cp_q {
    int64_t device, stream, ts, gid;
    int64_t dir;
};

static int cmp_q(const void *a, const void *b)
{
    const struct cp_q *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dir != y->dir) /* at one time a start before a launch: it was not queued */
        return x->dir < y->dir ? -1 : 1;
    return (x->gid > y->gid) - (x->gid < y->gid);
}

/* a slice --under matches (a window it may give), by start then id */
struct cp_inst {
    int64_t ts, end, id, name;
};

static int cmp_inst(const void *a, const void *b)
{
    const struct cp_inst *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* ---- strings ---- */

static int is_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

/* HTA's CUDA_RUNTIME_EVENTS (the calls that share the runtime lock) and
 * CPGraph.BLOCKING_SYNC_CALLS */
static const char *const lock_calls[] = { "cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync",
                                          NULL };
static const char *const blocking_calls[] = { "cudaDeviceSynchronize", "cudaStreamSynchronize",
                                              "cudaEventQuery", "cudaEventSynchronize",
                                              "cudaMemcpy", "cudaMemcpyAsync", NULL };

static unsigned str_flags(const struct cp_run *r, const char *s)
{
    const tt_cp_options *o = r->o;
    unsigned f = 0;
    size_t i;
    if (!strcmp(s, "cpu_op") || !strcmp(s, "Operator"))
        f |= CPS_CPU_OP;
    if (!strcmp(s, "user_annotation"))
        f |= CPS_ANNOT;
    if (is_one_of(s, lock_calls))
        f |= CPS_LOCK;
    if (is_one_of(s, blocking_calls))
        f |= CPS_BLOCKING;
    if (!strcmp(s, "cudaEventRecord"))
        f |= CPS_RECORD;
    if (strstr(s, "forward"))
        f |= CPS_FORWARD;
    if (strstr(s, "autograd"))
        f |= CPS_AUTOGRAD;
    if (!strcmp(s, "Event Sync"))
        f |= CPS_EVENT_SYNC;
    else if (!strcmp(s, "Stream Wait Event"))
        f |= CPS_STREAM_WAIT;
    else if (!strcmp(s, "Stream Sync"))
        f |= CPS_STREAM_SYNC;
    else if (!strcmp(s, "Context Sync"))
        f |= CPS_CONTEXT_SYNC;
    if (o->step_set && !strncmp(s, "ProfilerStep#", 13)) {
        char want[40];
        snprintf(want, sizeof(want), "ProfilerStep#%" PRId64, o->step);
        if (!strcmp(s, want))
            f |= CPS_STEP;
    }
    if (tt_kineto_is_comm(s, NULL))
        f |= CPS_COMM;
    for (i = 0; i < o->ndata_load; i++)
        if (regexec(&r->data_load[i], s, 0, NULL, 0) == 0)
            f |= CPS_DATA_LOAD;
    return f;
}

static int cp_string(struct cp_run *r, const tt__cell *row, const char *text)
{
    char *copy;
    size_t alloc = r->astrs;
    if (TT_ALLOC_GROW(r->strs, r->nstrs + 1, r->astrs) < 0 ||
        TT_ALLOC_GROW(r->sflags, r->nstrs + 1, alloc) < 0 ||
        !(copy = strndup(text + row[TT_C_STR_S].i, row[TT_C_STR_S].len)))
        return tt__oom();
    r->strs[r->nstrs] = copy;
    r->sflags[r->nstrs] = str_flags(r, copy);
    if (r->fl) { /* --name, --under: their verdicts as flags */
        int64_t id = row[TT_C_STR_ID].i;
        int rc = tt__flt_string(r->fl, id, copy, row[TT_C_STR_S].len);
        if (rc < 0) {
            free(copy);
            return rc;
        }
        r->sflags[r->nstrs] |= (r->o->filter.name && tt__flt_name(r->fl, id) ? CPS_NAME : 0u) |
                               (r->o->filter.under && tt__flt_under_name(r->fl, id) ? CPS_UNDER
                                                                                    : 0u);
    }
    r->nstrs++;
    return tt__i64map_put(&r->sid, row[TT_C_STR_ID].i, r->nstrs - 1) < 0 ? tt__oom() : 0;
}

const char *tt__cp_str(const struct cp_run *r, int64_t id)
{
    size_t k;
    return id && tt__i64map_get(&r->sid, id, &k) ? r->strs[k] : "";
}

unsigned tt__cp_sflags(const struct cp_run *r, int64_t id)
{
    size_t k;
    return id && tt__i64map_get(&r->sid, id, &k) ? r->sflags[k] : 0;
}

/* ---- the rows ---- */

static int cell_is_int(const tt__cell *c)
{
    return c->type == TT_CELL_INT;
}

static int64_t cell_or(const tt__cell *c, int64_t none)
{
    return c->type == TT_CELL_INT ? c->i : none;
}

static void ev_init(struct cp_ev *e, int kind)
{
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->corr = e->device = e->stream = e->wait_stream = e->wait_corr = -1;
}

/* a CPU slice or a runtime call with a duration, on a thread with numbers */
static int cp_cpu(struct cp_run *r, const tt__cell *row, int kind)
{
    static const int sl[] = { TT_C_SL_ID, TT_C_SL_NAME, TT_C_SL_CAT, TT_C_SL_PID, TT_C_SL_TID,
                              TT_C_SL_TS, TT_C_SL_DUR };
    static const int rt[] = { TT_C_RT_ID, TT_C_RT_NAME, TT_C_RT_CAT, TT_C_RT_PID, TT_C_RT_TID,
                              TT_C_RT_TS, TT_C_RT_DUR };
    const int *c = kind == CP_SLICE ? sl : rt;
    struct cp_ev e;
    ev_init(&e, kind);
    if (!cell_is_int(&row[c[0]]) || !cell_is_int(&row[c[3]]) || !cell_is_int(&row[c[4]]) ||
        !cell_is_int(&row[c[5]]) || cell_or(&row[c[6]], 0) <= 0)
        return 0;
    e.id = row[c[0]].i;
    e.name = cell_or(&row[c[1]], 0);
    e.cat = cell_or(&row[c[2]], 0);
    e.pid = row[c[3]].i;
    e.tid = row[c[4]].i;
    e.ts = row[c[5]].i;
    e.dur = row[c[6]].i;
    if (kind == CP_RUNTIME)
        e.corr = cell_or(&row[TT_C_RT_CORRELATION], -1);
    else if ((tt__cp_sflags(r, e.name) & CPS_STEP) && (!r->have_step || e.ts < r->step_ts)) {
        r->have_step = 1;
        r->step_ts = e.ts;
        r->step_end = tt_end_ns(e.ts, e.dur);
    }
    return tt__spill_put(&r->evs, sizeof(e), NULL, &e);
}

/* --under: a slice whose whole name matches, a window it may give */
static int cp_under_op(struct cp_run *r, const tt__cell *row)
{
    struct cp_inst x;
    if (!(tt__cp_sflags(r, cell_or(&row[TT_C_SL_NAME], 0)) & CPS_UNDER) ||
        !cell_is_int(&row[TT_C_SL_TS]) || !cell_is_int(&row[TT_C_SL_ID]))
        return 0;
    x.ts = row[TT_C_SL_TS].i;
    x.end = tt_end_ns(x.ts, cell_or(&row[TT_C_SL_DUR], 0));
    x.id = row[TT_C_SL_ID].i;
    x.name = row[TT_C_SL_NAME].i;
    return tt__spill_put(&r->inst, sizeof(x), cmp_inst, &x);
}

/* wait_on_stream and wait_on_cuda_event_record_corr_id of a cuda_sync
 * event's args (bad args: none) */
static void sync_args(struct cp_ev *e, const tt__cell *args, const char *text)
{
    tt_arena a = TT_ARENA_INIT;
    const char *key;
    size_t klen;
    tt_jp jp;
    tt_jnum n;
    if (args->type != TT_CELL_TEXT)
        return;
    tt_jp_init(&jp, "args", text + args->i, 0, text + args->i, args->len);
    if (tt_jp_object_begin(&jp) == 0)
        while (tt_jp_object_next(&jp, &a, &key, &klen) > 0) {
            int64_t *slot = klen == 14 && !memcmp(key, "wait_on_stream", 14) ? &e->wait_stream
                            : klen == 33 && !memcmp(key, "wait_on_cuda_event_record_corr_id", 33)
                                ? &e->wait_corr
                                : NULL;
            if (slot && tt_jp_peek(&jp) == TT_JT_NUMBER) {
                if (tt_jp_number(&jp, &n) < 0)
                    break;
                if (n.fits)
                    *slot = n.i;
            } else if (tt_jp_skip(&jp) < 0) {
                break;
            }
        }
    tt_arena_release(&a);
    tt_error_clear();
}

static int text_is(const tt__cell *c, const char *text, const char *s)
{
    size_t n = strlen(s);
    return c->type == TT_CELL_TEXT && c->len == n && !memcmp(text + c->i, s, n);
}

/* a GPU row: an activity (kernel, memcpy, memset) or a cuda_sync event,
 * with the links handed over before it */
static int cp_gpu(struct cp_run *r, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    struct cp_link l = { 0, TT_ROWS_NO_TS };
    struct cp_ev e;
    int rc;
    if (r->hln < r->nln)
        l = r->ln[r->hln++];
    if (l.rt != cell_or(&row[TT_C_GPU_RUNTIME_ID], 0))
        return tt_error_set(TT_ERROR, "critical-path: a GPU activity came without its links");
    r->gpu_rows++;
    ev_init(&e, text_is(k, text, "sync") ? CP_SYNC : CP_GPU);
    if (!l.rt || l.rt_ts == TT_ROWS_NO_TS || !cell_is_int(&row[TT_C_GPU_TS]) ||
        !cell_is_int(&row[TT_C_GPU_DUR]) ||
        (e.kind == CP_GPU && !text_is(k, text, "kernel") && !text_is(k, text, "memcpy") &&
         !text_is(k, text, "memset")))
        return 0; /* never in a window: no launch (or an annotation) */
    e.id = r->gpu_rows;
    e.name = cell_or(&row[TT_C_GPU_NAME], 0);
    e.cat = cell_or(&row[TT_C_GPU_CAT], 0);
    e.pid = cell_or(&row[TT_C_GPU_PID], -1);
    e.tid = cell_or(&row[TT_C_GPU_TID], -1);
    e.ts = row[TT_C_GPU_TS].i;
    e.dur = row[TT_C_GPU_DUR].i < 0 ? 0 : row[TT_C_GPU_DUR].i;
    e.corr = cell_or(&row[TT_C_GPU_CORRELATION], -1);
    e.rt = l.rt;
    e.rt_ts = l.rt_ts;
    e.device = cell_or(&row[TT_C_GPU_DEVICE], -1);
    e.stream = cell_or(&row[TT_C_GPU_STREAM], -1);
    if (e.kind == CP_SYNC)
        sync_args(&e, &row[TT_C_GPU_ARGS], text);
    if ((rc = tt__spill_put(&r->evs, sizeof(e), NULL, &e)) < 0 || e.kind == CP_SYNC)
        return rc;
    {
        struct cp_q q[2] = { { e.device, e.stream, e.rt_ts, e.id, 1 },
                             { e.device, e.stream, e.ts, e.id, -1 } };
        if ((rc = tt__spill_put(&r->queue, sizeof(*q), cmp_q, &q[0])) == 0)
            rc = tt__spill_put(&r->queue, sizeof(*q), cmp_q, &q[1]);
    }
    return rc;
}

static int cp_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct cp_run *r = ctx;
    (void)op;
    (void)name;
    if (TT_ALLOC_GROW(r->ln, r->nln + 1, r->aln) < 0)
        return tt__oom();
    r->ln[r->nln].rt = rt;
    r->ln[r->nln++].rt_ts = rt_ts;
    return 0;
}

static int cp_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct cp_run *r = ctx;
    int i, rc = 0;
    for (i = 0; rc == 0 && i < nrows; i++) {
        const tt__cell *row = cells + (size_t)i * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = cp_string(r, row, text);
        else if (table == TT_ROWS_SLICE && (rc = cp_cpu(r, row, CP_SLICE)) == 0 &&
                 r->o->filter.under && r->fl)
            rc = cp_under_op(r, row);
        else if (table == TT_ROWS_RUNTIME)
            rc = cp_cpu(r, row, CP_RUNTIME);
        else if (table == TT_ROWS_GPU)
            rc = cp_gpu(r, row, text);
    }
    if (table == TT_ROWS_GPU && r->hln) { /* links used; those of rows to come stay */
        r->nln -= r->hln;
        memmove(r->ln, r->ln + r->hln, r->nln * sizeof(*r->ln));
        r->hln = 0;
    }
    return rc;
}

/* ---- reading a trace ---- */

/* the cells cp_rows reads: a database leaves the others out */
static const uint64_t cp_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_NAME) | TT_COL(TT_C_SL_CAT) |
                      TT_COL(TT_C_SL_PID) | TT_COL(TT_C_SL_TID) | TT_COL(TT_C_SL_TS) |
                      TT_COL(TT_C_SL_DUR),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_CAT) |
                        TT_COL(TT_C_RT_PID) | TT_COL(TT_C_RT_TID) | TT_COL(TT_C_RT_TS) |
                        TT_COL(TT_C_RT_DUR) | TT_COL(TT_C_RT_CORRELATION),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_CAT) |
                    TT_COL(TT_C_GPU_PID) | TT_COL(TT_C_GPU_TID) | TT_COL(TT_C_GPU_TS) |
                    TT_COL(TT_C_GPU_DUR) | TT_COL(TT_C_GPU_CORRELATION) |
                    TT_COL(TT_C_GPU_RUNTIME_ID) | TT_COL(TT_C_GPU_DEVICE) |
                    TT_COL(TT_C_GPU_STREAM) | TT_COL(TT_C_GPU_ARGS),
};

/* the tables the analysis does not read */
#define CP_SKIP                                                                            \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

/* what a reading gathered, dropped (before a second reading) */
static void read_reset(struct cp_run *r)
{
    size_t i;
    for (i = 0; i < r->nstrs; i++)
        free(r->strs[i]);
    free(r->strs);
    free(r->sflags);
    r->strs = NULL;
    r->sflags = NULL;
    r->nstrs = r->astrs = 0;
    tt__i64map_free(&r->sid);
    free(r->ln);
    r->ln = NULL;
    r->hln = r->nln = r->aln = 0;
    r->gpu_rows = 0;
    tt__spill_free(r->evs);
    tt__spill_free(r->queue);
    tt__spill_free(r->inst);
    r->evs = r->queue = r->inst = NULL;
    r->have_step = 0;
    r->win_name = r->ninst = 0;
    tt__flt_reset(r->fl);
    free(r->rres.metadata);
    memset(&r->rres, 0, sizeof(r->rres));
}

/* a file that can be read twice: its rows need the links only the SQL
 * passes after a load make (res.needs_db): read again (TT_ROWS_RELINK) */
static int read_file(struct cp_run *r, const tt__rowsink *sink, const char *path,
                     const char *label)
{
    int rc = tt__ingest_rows(path, sink, 0, CP_SKIP, &r->rres);
    if (rc != 0 || !r->rres.needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "critpath", "%s: read twice: %s", label,
            r->rres.why_db ? r->rres.why_db : "links");
    read_reset(r);
    return tt__ingest_rows(path, sink, 0, CP_SKIP | TT_ROWS_RELINK, &r->rres);
}

int tt__cp_read(struct cp_run *r, const char *path, tt_db *db, int64_t id)
{
    tt__rowsink sink;
    int rc;
    read_reset(r);
    memset(&sink, 0, sizeof(sink));
    sink.ctx = r;
    sink.rows = cp_rows;
    sink.cols = cp_cols;
    sink.gpu_links = cp_links;
    if (db) {
        rc = tt__db_rows(db, id, &sink, CP_SKIP, &r->rres);
    } else {
        tt__spool sp; /* standard input or a pipe: from a copy, which can be read again */
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = read_file(r, &sink, rd, path);
        rc = tt__spool_end(&sp, path, rc);
    }
    free(r->rres.metadata);
    r->rres.metadata = NULL;
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}

/* ---- the window ---- */

static int in_window(const struct cp_run *r, int64_t ts)
{
    const tt_filter *f = &r->o->filter;
    return ts >= r->from_ns && ts <= r->to_ns && ts >= f->from_ns && ts < f->to_ns;
}

/* whether spilled event e may be in the window: a CPU event or an Event
 * Sync / Context Sync (HTA takes them for CPU events: their stream is -1)
 * by its start, with a duration; a GPU row by its runtime call's start
 * (whether that call is in the window is known later) */
static int may_be_in(const struct cp_run *r, const struct cp_ev *e)
{
    if (e->kind == CP_SLICE || e->kind == CP_RUNTIME || (e->kind == CP_SYNC && e->stream == -1))
        return in_window(r, e->ts) && (e->kind != CP_SYNC || e->dur > 0);
    return in_window(r, e->rt_ts);
}

static int cmp_ev(const void *a, const void *b)
{
    const struct cp_ev *x = a, *y = b;
    int kx = x->kind == CP_SYNC ? CP_GPU : x->kind, ky = y->kind == CP_SYNC ? CP_GPU : y->kind;
    if (kx != ky)
        return kx - ky;
    return (x->id > y->id) - (x->id < y->id);
}

/* the window's events from the spill, by kind then id (the order HTA's
 * event index gives ties); GPU rows whose runtime call is not in the
 * window left out */
static int load_events(struct cp_run *r)
{
    struct i64map rt = { 0 };
    struct cp_ev e;
    size_t alloc = 0, i, k = 0;
    int rc;
    if ((rc = tt__spill_rewind(r->evs)) < 0)
        return rc;
    while ((rc = tt__spill_next(r->evs, &e)) > 0) {
        if (!may_be_in(r, &e))
            continue;
        if (TT_ALLOC_GROW(r->ev, r->nev + 1, alloc) < 0)
            return tt__oom();
        r->ev[r->nev++] = e;
    }
    if (rc < 0)
        return rc;
    for (i = 0; i < r->nev; i++)
        if (r->ev[i].kind == CP_RUNTIME && tt__i64map_put(&rt, r->ev[i].id, i) < 0) {
            tt__i64map_free(&rt);
            return tt__oom();
        }
    for (i = 0; i < r->nev; i++) {
        size_t at;
        if ((r->ev[i].kind == CP_GPU || r->ev[i].kind == CP_SYNC) &&
            !tt__i64map_get(&rt, r->ev[i].rt, &at))
            continue;
        r->ev[k++] = r->ev[i];
    }
    r->nev = k;
    tt__i64map_free(&rt);
    TT_QSORT(r->ev, r->nev, sizeof(*r->ev), cmp_ev);
    return 0;
}

/* each event's links between events: a GPU row's runtime call, and the
 * GPU activity a runtime call launched (the last one: HTA keeps the last
 * partner of a correlation) */
static int link_events(struct cp_run *r)
{
    struct i64map rt = { 0 };
    size_t i, at;
    if (r->nev > (size_t)INT32_MAX / 2)
        return tt_error_set(TT_EINVALID, "critical-path: more than %d events in the window",
                            INT32_MAX / 2);
    if (!(r->in = malloc((r->nev ? r->nev : 1) * sizeof(*r->in))))
        return tt__oom();
    for (i = 0; i < r->nev; i++) {
        struct cp_info *n = &r->in[i];
        n->start = n->end = n->rt = n->parent = n->child = n->next = n->sync_src = CP_NONE;
        n->tid = r->ev[i].tid;
        n->nf = tt__cp_sflags(r, r->ev[i].name);
        n->cf = tt__cp_sflags(r, r->ev[i].cat);
        n->q_launch = n->q_start = INT64_MIN;
        if (r->ev[i].kind == CP_RUNTIME && tt__i64map_put(&rt, r->ev[i].id, i) < 0) {
            tt__i64map_free(&rt);
            return tt__oom();
        }
    }
    for (i = 0; i < r->nev; i++)
        if ((r->ev[i].kind == CP_GPU || r->ev[i].kind == CP_SYNC) &&
            tt__i64map_get(&rt, r->ev[i].rt, &at)) {
            r->in[i].rt = (int32_t)at;
            if (r->ev[i].kind == CP_GPU)
                r->in[at].rt = (int32_t)i;
        }
    tt__i64map_free(&rt);
    return 0;
}

/* the queue lengths of the window's kernels: one pass over every launch
 * and start of the trace, by stream then time */
static int queue_lengths(struct cp_run *r)
{
    struct i64map gid = { 0 };
    struct cp_q q;
    int64_t dev = 0, str = 0, n = 0;
    size_t i, at;
    int rc = 0, first = 1;
    for (i = 0; rc == 0 && i < r->nev; i++)
        if (r->ev[i].kind == CP_GPU && tt__i64map_put(&gid, r->ev[i].id, i) < 0)
            rc = tt__oom();
    if (rc == 0)
        rc = tt__spill_rewind(r->queue);
    while (rc == 0 && (rc = tt__spill_next(r->queue, &q)) > 0) {
        rc = 0;
        if (first || q.device != dev || q.stream != str)
            n = 0;
        first = 0;
        dev = q.device;
        str = q.stream;
        n += q.dir;
        if (tt__i64map_get(&gid, q.gid, &at)) {
            if (q.dir > 0)
                r->in[at].q_launch = n;
            else
                r->in[at].q_start = n;
        }
    }
    tt__i64map_free(&gid);
    return rc;
}

/* --under: the window from instances instance_from..to of the matching ops */
static int under_window(struct cp_run *r, const char *src)
{
    const tt_cp_options *o = r->o;
    struct cp_inst x;
    int rc = tt__spill_rewind(r->inst);
    while (rc == 0 && (rc = tt__spill_next(r->inst, &x)) == 1) {
        rc = 0;
        if (r->ninst == o->instance_from) {
            r->from_ns = x.ts;
            r->to_ns = x.end;
            r->win_name = x.name;
        } else if (r->ninst > o->instance_from && r->ninst <= o->instance_to) {
            r->to_ns = x.end > r->to_ns ? x.end : r->to_ns;
        }
        r->ninst++;
    }
    if (rc < 0)
        return rc;
    if (!r->ninst)
        return tt_error_set_at(TT_ENOTFOUND, src, -1, "no op (CPU slice) whose whole name "
                               "matches --under '%s' in this trace", o->filter.under);
    if (o->instance_to >= r->ninst)
        return tt_error_set_at(TT_ENOTFOUND, src, -1, "%" PRId64 " op%s match%s --under '%s' "
                               "in this trace, numbered from 0: no instance %" PRId64,
                               r->ninst, r->ninst == 1 ? "" : "s", r->ninst == 1 ? "es" : "",
                               o->filter.under, o->instance_to);
    return 0;
}

int tt__cp_window(struct cp_run *r, const char *src)
{
    int rc;
    r->from_ns = INT64_MIN;
    r->to_ns = INT64_MAX;
    if (r->o->filter.under && r->fl && (rc = under_window(r, src)) < 0)
        return rc;
    if (r->o->step_set) {
        if (!r->have_step)
            return tt_error_set_at(TT_ENOTFOUND, src, -1, "no ProfilerStep#%" PRId64
                                   " in this trace", r->o->step);
        r->from_ns = r->step_ts;
        r->to_ns = r->step_end;
    }
    if ((rc = load_events(r)) < 0 || (rc = link_events(r)) < 0 || (rc = queue_lengths(r)) < 0)
        return rc;
    tt__spill_free(r->evs);
    tt__spill_free(r->queue);
    tt__spill_free(r->inst);
    r->evs = r->queue = r->inst = NULL;
    if (!r->nev)
        return tt_error_set_at(TT_ENOTFOUND, src, -1, "no CPU op, runtime call or GPU activity "
                               "in the window");
    return 0;
}

void tt__cp_run_release(struct cp_run *r)
{
    read_reset(r);
    free(r->ev);
    free(r->in);
    free(r->nodes);
    free(r->edges);
    tt__i64map_free(&r->edge_at);
    free(r->streams);
    tt__i64map_free(&r->stream_at);
    free(r->path);
    memset(r, 0, sizeof(*r));
}
