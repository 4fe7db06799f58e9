/*
 * analyze/counters/counters_stream.c - the launch queues and the copies'
 * bandwidth of one trace from its rows (counters_state.h): a file
 * (tt__ingest_rows) or a trace of a database (tt__db_rows) alike.
 *
 * Queue: a runtime call whose name is a launch (its string id is one of the
 * launch names' ids, known as the strings come) is a record (id) of the
 * join spill; so is each GPU row with its runtime call's id and start (the
 * links the source hands over before the row: tt__rowsink.gpu_links), its
 * own start, device and stream. Sorted by runtime call id, a launch comes
 * just before the GPU rows it launched: each such row makes two changes of
 * its stream's queue (+1 at the launch, -1 at its start) in the queue
 * spill, sorted by device, stream, time, +1 first. Kineto writes a GPU
 * activity before the call that launched it, so nothing can be decided as
 * the rows come; the sorts keep memory bounded.
 *
 * Bandwidth: a GPU row whose name is a copy's (the kind of each string id
 * known as the strings come) and whose args hold "memory bandwidth
 * (GB/s)" is a start (+bw) and an end (-bw) in the bandwidth spill, sorted
 * by kind, time, ends first, then row order.
 */
#include "common/compat.h"
#include "common/i64map.h"
#include "common/spill.h"
#include "common/tmath.h"
#include "common/log.h"
#include "analyze/counters/counters_state.h"
#include "analyze/filter/filtering.h"
#include "formats/spool.h"

#include <math.h>

const char *const tt__ctr_kind_name[TT__BW_NKINDS] = {
    "memcpy AtoA", "memcpy AtoD", "memcpy AtoH", "memcpy DtoA", "memcpy DtoD", "memcpy DtoH",
    "memcpy HtoA", "memcpy HtoD", "memcpy HtoH", "memcpy PtoP", "memcpy unknown", "memset",
};
enum { KIND_UNKNOWN = 10, KIND_MEMSET = 11 };

/* HTA's runtime launch events (hta/common/trace_symbol_table.py) */
static const char *const launch_names[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaMemcpyAsync", "cudaMemsetAsync", "hipLaunchKernel", "hipExtModuleLaunchKernel",
    "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
    "runFunction - job_prep_and_submit_for_execution",
};

/* the links of a GPU row not yet handed over */
struct link {
    int64_t rt, rt_ts;
};

/* the join: a launch (kind 0) or a GPU row (kind 1), by runtime call id */
struct jrec {
    int64_t rt, rt_ts, gpu_ts, device, stream;
    int32_t kind, pad;
};

/* a change of a stream's queue */
struct qrec {
    int64_t device, stream, ts;
    int32_t delta, pad;
};

/* a copy's start (+bw) or end (-bw) */
struct brec {
    int32_t kind, start;
    int64_t ts, seq;
    double bw;
};

struct tt__ctr {
    unsigned what;
    const tt_filter *f;
    int links;            /* the GPU rows' links are wanted */
    struct i64map launch; /* string ids of the launch names */
    struct i64map copy;   /* string id -> its copy kind + 1 */
    struct link *ln;      /* links of rows to come: ln[hln..nln) */
    size_t hln, nln, aln;
    tt__spill *join, *queue, *bw;
    int64_t seq;          /* copies so far */
    /* reading the points: the series being walked and its value */
    int64_t qdev, qstream, qlen;
    int qnew, bnew;
    int bkind;
    int64_t bn;
    double bsum;
};

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int jcmp(const void *a, const void *b)
{
    const struct jrec *x = a, *y = b;
    int c = cmp_i64(x->rt, y->rt);
    return c ? c : cmp_i64(x->kind, y->kind);
}

static int qcmp(const void *a, const void *b)
{
    const struct qrec *x = a, *y = b;
    int c = cmp_i64(x->device, y->device);
    if (!c)
        c = cmp_i64(x->stream, y->stream);
    if (!c)
        c = cmp_i64(x->ts, y->ts);
    return c ? c : cmp_i64(y->delta, x->delta); /* launches (+1) first */
}

static int bcmp_(const void *a, const void *b)
{
    const struct brec *x = a, *y = b;
    int c = cmp_i64(x->kind, y->kind);
    if (!c)
        c = cmp_i64(x->ts, y->ts);
    if (!c)
        c = cmp_i64(x->start, y->start); /* ends first */
    return c ? c : cmp_i64(x->seq, y->seq);
}

int tt__ctr_new(struct tt__ctr **out, unsigned what, const tt_filter *f)
{
    struct tt__ctr *c = calloc(1, sizeof(*c));
    *out = NULL;
    if (!c)
        return tt__oom();
    c->what = what;
    c->f = f;
    c->links = (what & TT__CTR_QUEUE) ||
               (f && (f->from_ns != TT_FILTER_OPEN_FROM || f->to_ns != TT_FILTER_OPEN_TO));
    *out = c;
    return 0;
}

void tt__ctr_free(struct tt__ctr *c)
{
    if (!c)
        return;
    tt__i64map_free(&c->launch);
    tt__i64map_free(&c->copy);
    free(c->ln);
    tt__spill_free(c->join);
    tt__spill_free(c->queue);
    tt__spill_free(c->bw);
    free(c);
}

int tt__ctr_wants_links(const struct tt__ctr *c)
{
    return c->links;
}

/* ---------------------------------------------------------------- the rows */

/* the kind of a copy named so (HTA's get_memory_kernel_type), -1: no copy */
static int copy_kind(const char *s, size_t n)
{
    size_t k;
    if (memmem(s, n, "ncclKernel", 10)) /* HTA's communication test comes first */
        return -1;
    if (n >= 6 && !memcmp(s, "Memset", 6))
        return KIND_MEMSET;
    if (n >= 3 && !memcmp(s, "dma", 3))
        return KIND_UNKNOWN;
    if (n < 6 || memcmp(s, "Memcpy", 6))
        return -1;
    for (k = 0; n >= 11 && s[6] == ' ' && k < KIND_UNKNOWN; k++)
        if (!memcmp(s + 7, tt__ctr_kind_name[k] + 7, 4))
            return (int)k;
    return KIND_UNKNOWN;
}

static int on_string(struct tt__ctr *c, const tt__cell *row, const char *text)
{
    const char *s = text + row[TT_C_STR_S].i;
    size_t n = row[TT_C_STR_S].len, k;
    int kind;
    if (row[TT_C_STR_ID].type != TT_CELL_INT || row[TT_C_STR_S].type != TT_CELL_TEXT)
        return 0;
    if (c->what & TT__CTR_QUEUE) {
        for (k = 0; k < TT_ARRAY_SIZE(launch_names); k++)
            if (strlen(launch_names[k]) == n && !memcmp(s, launch_names[k], n))
                return tt__i64map_put(&c->launch, row[TT_C_STR_ID].i, 1) < 0 ? tt__oom() : 0;
    }
    if ((c->what & TT__CTR_BW) && (kind = copy_kind(s, n)) >= 0)
        return tt__i64map_put(&c->copy, row[TT_C_STR_ID].i, (size_t)kind + 1) < 0 ? tt__oom()
                                                                                  : 0;
    return 0;
}

/* a launch: a runtime call of a launch name */
static int on_runtime(struct tt__ctr *c, const tt__cell *row)
{
    const tt__cell *nm = &row[TT_C_RT_NAME], *id = &row[TT_C_RT_ID];
    struct jrec j;
    size_t v;
    if (!(c->what & TT__CTR_QUEUE) || nm->type != TT_CELL_INT || id->type != TT_CELL_INT ||
        !tt__i64map_get(&c->launch, nm->i, &v))
        return 0;
    memset(&j, 0, sizeof(j));
    j.rt = id->i;
    return tt__spill_put(&c->join, sizeof(j), jcmp, &j);
}

int tt__ctr_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct tt__ctr *c = ctx;
    (void)op;
    (void)name;
    if (TT_ALLOC_GROW(c->ln, c->nln + 1, c->aln) < 0)
        return tt__oom();
    c->ln[c->nln].rt = rt;
    c->ln[c->nln].rt_ts = rt_ts;
    c->nln++;
    return 0;
}

/* "memory bandwidth (GB/s)" of a GPU row's args (minified JSON); 0: none */
static int args_bw(const tt__cell *a, const char *text, double *out)
{
    static const char key[] = "\"memory bandwidth (GB/s)\"";
    const char *s, *p, *e;
    char num[64], *end;
    size_t k = 0;
    if (a->type != TT_CELL_TEXT)
        return 0;
    s = text + a->i;
    e = s + a->len;
    if (!(p = memmem(s, a->len, key, sizeof(key) - 1)))
        return 0;
    for (p += sizeof(key) - 1; p < e && (*p == ' ' || *p == ':'); p++)
        ;
    while (p < e && k < sizeof(num) - 1 && strchr("+-.0123456789eE", *p) && *p)
        num[k++] = *p++;
    num[k] = '\0';
    if (!k)
        return 0;
    *out = strtod(num, &end);
    return end == num + k && isfinite(*out);
}

/* a copy's start and end, when it is one, has a bandwidth and is launched
 * in the time range (lt: its launch) */
static int on_copy(struct tt__ctr *c, const tt__cell *row, const char *text, int64_t lt)
{
    const tt__cell *nm = &row[TT_C_GPU_NAME], *ts = &row[TT_C_GPU_TS], *dur = &row[TT_C_GPU_DUR];
    struct brec b;
    size_t kind;
    double bw;
    int rc;
    if (nm->type != TT_CELL_INT || ts->type != TT_CELL_INT || dur->type != TT_CELL_INT ||
        !tt__i64map_get(&c->copy, nm->i, &kind) ||
        !tt__filter_in_time(c->f, lt == TT_ROWS_NO_TS ? ts->i : lt) ||
        !args_bw(&row[TT_C_GPU_ARGS], text, &bw))
        return 0;
    memset(&b, 0, sizeof(b));
    b.kind = (int32_t)kind - 1;
    b.seq = c->seq++;
    b.start = 1;
    b.ts = ts->i;
    b.bw = bw;
    if ((rc = tt__spill_put(&c->bw, sizeof(b), bcmp_, &b)) < 0)
        return rc;
    b.start = 0;
    b.ts = tt_sat_add(ts->i, dur->i ? dur->i : 1000); /* HTA: a 0 duration is 1 us */
    b.bw = -bw;
    return tt__spill_put(&c->bw, sizeof(b), bcmp_, &b);
}

/* a GPU row (on a stream): in the join, and a copy */
static int on_gpu(struct tt__ctr *c, const tt__cell *row, const char *text)
{
    const tt__cell *st = &row[TT_C_GPU_STREAM], *ts = &row[TT_C_GPU_TS];
    const struct link *l = NULL;
    int64_t lt = TT_ROWS_NO_TS;
    struct jrec j;
    int rc;
    if (c->links) {
        const tt__cell *rt = &row[TT_C_GPU_RUNTIME_ID];
        if (c->hln == c->nln ||
            c->ln[c->hln].rt != (rt->type == TT_CELL_INT ? rt->i : 0))
            return tt_error_set(TT_ERROR, "counters: a GPU activity came without its links");
        l = &c->ln[c->hln++];
        if (l->rt && l->rt_ts != TT_ROWS_NO_TS)
            lt = l->rt_ts;
    }
    if (st->type != TT_CELL_INT || st->i == -1 || ts->type != TT_CELL_INT)
        return 0; /* HTA's GPU rows: stream != -1 */
    if ((c->what & TT__CTR_BW) && (rc = on_copy(c, row, text, lt)) < 0)
        return rc;
    if (!(c->what & TT__CTR_QUEUE) || lt == TT_ROWS_NO_TS || !tt__filter_in_time(c->f, lt))
        return 0;
    memset(&j, 0, sizeof(j));
    j.kind = 1;
    j.rt = l->rt;
    j.rt_ts = lt;
    j.gpu_ts = ts->i;
    j.device = row[TT_C_GPU_DEVICE].type == TT_CELL_INT ? row[TT_C_GPU_DEVICE].i
                                                        : TT_COUNTERS_NULL;
    j.stream = st->i;
    return tt__spill_put(&c->join, sizeof(j), jcmp, &j);
}

int tt__ctr_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                 const char *text)
{
    struct tt__ctr *c = ctx;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = on_string(c, row, text);
        else if (table == TT_ROWS_RUNTIME)
            rc = on_runtime(c, row);
        else if (table == TT_ROWS_GPU)
            rc = on_gpu(c, row, text);
    }
    if (table == TT_ROWS_GPU && c->hln) { /* the links used: those of rows to come stay */
        memmove(c->ln, c->ln + c->hln, (c->nln - c->hln) * sizeof(*c->ln));
        c->nln -= c->hln;
        c->hln = 0;
    }
    return rc;
}

const uint64_t tt__ctr_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_TS),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_TS) | TT_COL(TT_C_GPU_DUR) |
                    TT_COL(TT_C_GPU_DEVICE) | TT_COL(TT_C_GPU_STREAM) |
                    TT_COL(TT_C_GPU_RUNTIME_ID) | TT_COL(TT_C_GPU_ARGS),
};

/* ---------------------------------------------------------------- the points */

/* the join: each GPU row right after the launch it joins makes two changes */
static int join(struct tt__ctr *c)
{
    struct jrec j;
    struct qrec q;
    int64_t cur = 0;
    int have = 0, rc;
    if ((rc = tt__spill_rewind(c->join)) < 0)
        return rc;
    memset(&q, 0, sizeof(q));
    while ((rc = tt__spill_next(c->join, &j)) > 0) {
        if (j.kind == 0) {
            cur = j.rt;
            have = 1;
            continue;
        }
        if (!have || j.rt != cur)
            continue; /* launched by a call that is no launch, or not in the trace */
        q.device = j.device;
        q.stream = j.stream;
        q.ts = j.rt_ts;
        q.delta = 1;
        if ((rc = tt__spill_put(&c->queue, sizeof(q), qcmp, &q)) < 0)
            break;
        q.ts = j.gpu_ts;
        q.delta = -1;
        if ((rc = tt__spill_put(&c->queue, sizeof(q), qcmp, &q)) < 0)
            break;
    }
    tt__spill_free(c->join);
    c->join = NULL;
    return rc;
}

int tt__ctr_finish(struct tt__ctr *c)
{
    int rc = join(c);
    return rc < 0 ? rc : tt__ctr_rewind(c);
}

int tt__ctr_rewind(struct tt__ctr *c)
{
    int rc = tt__spill_rewind(c->queue);
    c->qnew = c->bnew = 1;
    return rc < 0 ? rc : tt__spill_rewind(c->bw);
}

int tt__ctr_queue_next(struct tt__ctr *c, struct tt__qpt *p)
{
    struct qrec q;
    int rc = tt__spill_next(c->queue, &q);
    if (rc <= 0)
        return rc;
    if (c->qnew || q.device != c->qdev || q.stream != c->qstream) {
        c->qnew = 0;
        c->qdev = q.device;
        c->qstream = q.stream;
        c->qlen = 0;
    }
    c->qlen += q.delta;
    p->device = q.device;
    p->stream = q.stream;
    p->ts = q.ts;
    p->len = c->qlen;
    return 1;
}

int tt__ctr_bw_next(struct tt__ctr *c, struct tt__bpt *p)
{
    struct brec b;
    int rc = tt__spill_next(c->bw, &b);
    if (rc <= 0)
        return rc;
    if (c->bnew || b.kind != c->bkind) {
        c->bnew = 0;
        c->bkind = b.kind;
        c->bsum = 0;
        c->bn = 0;
    }
    c->bsum += b.bw;
    c->bn += b.start ? 1 : -1;
    if (c->bn == 0)
        c->bsum = 0; /* nothing in flight: no rounding residue */
    p->kind = b.kind;
    p->ts = b.ts;
    p->gbps = c->bsum;
    return 1;
}

/* ---------------------------------------------------------------- reading */

/* the tables no counter reads */
#define CTR_SKIP                                                                           \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

/* the consumer's sink (inner) behind --name/--under's (fl NULL: none) */
static int sink_of(struct tt__ctr *c, tt__flt *fl, tt__rowsink *inner, tt__rowsink *sink)
{
    memset(inner, 0, sizeof(*inner));
    inner->ctx = c;
    inner->rows = tt__ctr_rows;
    inner->cols = tt__ctr_cols;
    inner->gpu_links = c->links ? tt__ctr_links : NULL;
    return tt__flt_sink(fl, inner, 1u << TT_ROWS_GPU, sink);
}

/* the rows of a file (db NULL) or of a database's trace into *c, the GPU
 * rows that fail --name/--under (fl) left out; a file whose rows lack
 * links the counters or the filters use is read again, twice
 * (TT_ROWS_RELINK), into a new consumer */
static int read_rows(struct tt__ctr **c, tt__flt *fl, const char *path, tt_db *db, int64_t id,
                     tt__rows_result *res)
{
    unsigned what = (*c)->what, skip = CTR_SKIP;
    unsigned flags = what & TT__CTR_BW ? 0 : TT_READ_NO_ARGS;
    const tt_filter *f = (*c)->f;
    tt__rowsink inner, sink;
    int rc, links = (*c)->links || tt__flt_wants_launch(fl);
    if ((rc = sink_of(*c, fl, &inner, &sink)) < 0)
        return rc;
    if (db) {
        if ((rc = tt__flt_load(fl, NULL, db, id)) < 0)
            return rc;
        return tt__db_rows(db, id, &sink,
                           skip | 1u << TT_ROWS_SLICE | (flags ? TT_ROWS_NO_ARGS : 0) |
                               (what & TT__CTR_QUEUE ? 0 : 1u << TT_ROWS_RUNTIME),
                           res);
    }
    if ((links || tt__flt_needs_load(fl)) && tt__spool_needed(path)) {
        /* standard input or a pipe: from a copy, which the way back reads again */
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = read_rows(c, fl, rd, NULL, id, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__flt_load(fl, path, NULL, 0)) < 0)
        return rc;
    rc = tt__ingest_rows(path, &sink, flags, skip | (links ? 0 : TT_ROWS_NO_STOP), res);
    if (rc != 0 || !links || !res->needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "counters", "%s: %s, read twice", path,
            res->why_db ? res->why_db : "links");
    free(res->metadata);
    res->metadata = NULL;
    tt__ctr_free(*c);
    tt__flt_reset(fl);
    if ((rc = tt__ctr_new(c, what, f)) < 0 || (rc = sink_of(*c, fl, &inner, &sink)) < 0)
        return rc;
    return tt__ingest_rows(path, &sink, flags, skip | TT_ROWS_RELINK, res);
}

int tt__ctr_read(unsigned what, const tt_filter *f, const char *path, tt_db *db, int64_t id,
                 tt__rows_result *res, struct tt__ctr **out)
{
    struct tt__ctr *c = NULL;
    tt_filter nu = TT_FILTER_INIT; /* --name, --under: the time range is the consumer's */
    tt__flt *fl = NULL;
    int rc;
    memset(res, 0, sizeof(*res));
    *out = NULL;
    if (f) {
        nu.name = f->name;
        nu.under = f->under;
    }
    if ((rc = tt__flt_new(&fl, &nu)) == 0 && (rc = tt__ctr_new(&c, what, f)) == 0)
        rc = read_rows(&c, fl, path, db, id, res);
    tt__flt_free(fl);
    free(res->metadata);
    res->metadata = NULL;
    if (rc > 0)
        rc = tt_error_set(TT_ECANCELED, "cancelled");
    if (rc == 0 && c)
        rc = tt__ctr_finish(c);
    if (rc < 0) {
        tt__ctr_free(c);
        return rc;
    }
    *out = c;
    return 0;
}
