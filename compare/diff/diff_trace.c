/*
 * compare/diff/diff_trace.c - one trace of `tracetool diff` as a side of one
 * sample per step, computed from the ingest's rows (tt__rowsink): a trace
 * file's (tt__ingest_rows) or a stored trace's (tt__db_rows) alike.
 *
 * A file interleaves the tables in file order and a database hands them
 * one after another, and a GPU activity's runtime call or CPU op (its
 * TT_C_GPU_RUNTIME_ID / TT_C_GPU_OP_ID links) may come before or after it;
 * so the rows are kept as they come (only the columns used, only the CPU
 * ops, steps, runtime calls, GPU work and memory events) and the summary is
 * made at the end, in the order a database's tables give: steps, CPU ops
 * and runtime calls by id, GPU activities as stored, memory events. Keys
 * are made in that order (a side's keys are listed in the order made).
 *
 * Per step (see diff_summary.c): CPU duration; per key the calls and
 * times; the GPU activities launched in it, whose union gives the busy
 * time and the device end; the peak Total Allocated / Reserved.
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"
#include "store/steps.h"
#include "common/arena.h"
#include "common/i64map.h"
#include "common/tmath.h"
#include "formats/json.h"
#include "store/ingest_rows.h"
#include "tracetool/analyze.h"
#include "tracetool/formats.h"

#include <math.h>
#include <string.h>

/* ---- the rows kept ---- */

enum { S_OPCAT = 1, S_STEP = 2 }; /* a string as a slice's cat / name */

/* a CPU op (cat cpu_op, Operator, user_annotation or none) or a step */
struct dslice {
    int64_t id, ts, dur, name, dims;
    unsigned char has_ts, has_dur, has_name, op;
};

struct drt {
    int64_t id, ts, dur, name;
    unsigned char has_ts;
};

/* a kernel, memcpy or memset with a ts */
struct dgpu {
    int64_t name, ts, dur, rt, op;
    unsigned char kind; /* 1 kernel, 2 memcpy, 3 memset */
    unsigned char has_rt, has_op;
};

/* a [memory] event with ts and Total Allocated; cls: 0 no Device Type, 1
 * an accelerator's, 2 the CPU's */
struct dmem {
    int64_t ts, alloc, res;
    unsigned char has_res, cls;
};

struct tt__diff_rows {
    const tt_diff_options *o;
    const struct tt__renames *ren;
    char **str; /* by index; sidx maps an id to index + 1 unless dense */
    unsigned char *sflags;
    size_t nstr, astr;
    int sparse; /* ids not 1, 2, 3, ... (a database's) */
    struct i64map sidx;
    struct dslice *sl;
    size_t nsl, asl;
    struct drt *rt;
    size_t nrt, art;
    struct dgpu *g;
    size_t ng, ag;
    struct dmem *mem;
    size_t nmem, amem;
    int sl_unsorted, rt_unsorted;
};

static int64_t cint(const tt__cell *c)
{
    return c->type == TT_CELL_INT ? c->i : 0; /* as sqlite3_column_int64 of NULL */
}

static int cnull(const tt__cell *c)
{
    return c->type == TT_CELL_NULL;
}

static int text_is(const tt__cell *c, const char *text, const char *lit)
{
    size_t n = strlen(lit);
    return c->type == TT_CELL_TEXT && c->len == n && !memcmp(text + c->i, lit, n);
}

/* the index + 1 of string id, 0 when there is none */
static size_t str_index(const struct tt__diff_rows *r, int64_t id)
{
    size_t v;
    if (!r->sparse)
        return id >= 1 && (uint64_t)id <= r->nstr ? (size_t)id : 0;
    return tt__i64map_get(&r->sidx, id, &v) ? v : 0;
}

/* string id -> its text ("" when none) */
static const char *str_of(const struct tt__diff_rows *r, int64_t id)
{
    size_t i = str_index(r, id);
    return i ? r->str[i - 1] : "";
}

static unsigned str_flags(const struct tt__diff_rows *r, int64_t id)
{
    size_t i = str_index(r, id);
    return i ? r->sflags[i - 1] : 0;
}

/* GLOB 'ProfilerStep#[0-9]*' */
static int is_step_name(const char *s)
{
    return !strncmp(s, "ProfilerStep#", 13) && s[13] >= '0' && s[13] <= '9';
}

static int add_string(struct tt__diff_rows *r, int64_t id, const char *s, size_t len)
{
    char *copy;
    size_t had = r->astr;
    unsigned char *f;
    if (TT_ALLOC_GROW(r->str, r->nstr + 1, r->astr) < 0)
        return tt__oom();
    if (r->astr != had) {
        if (!(f = realloc(r->sflags, r->astr)))
            return tt__oom();
        r->sflags = f;
    }
    if (!(copy = strndup(s, len)))
        return tt__oom();
    if (!r->sparse && id != (int64_t)r->nstr + 1) {
        size_t i;
        r->sparse = 1; /* from now on by the map: the ids so far were 1..n */
        for (i = 0; i < r->nstr; i++)
            if (tt__i64map_put(&r->sidx, (int64_t)i + 1, i + 1) < 0) {
                free(copy);
                return tt__oom();
            }
    }
    if (r->sparse && tt__i64map_put(&r->sidx, id, r->nstr + 1) < 0) {
        free(copy);
        return tt__oom();
    }
    r->sflags[r->nstr] = (unsigned char)((!strcmp(copy, "cpu_op") || !strcmp(copy, "Operator") ||
                                          !strcmp(copy, "user_annotation")) ? S_OPCAT
                                         : is_step_name(copy)             ? S_STEP
                                                                          : 0);
    r->str[r->nstr++] = copy;
    return 0;
}

static int add_slice(struct tt__diff_rows *r, const tt__cell *row)
{
    struct dslice *s;
    int op = cnull(&row[TT_C_SL_CAT]) || (str_flags(r, cint(&row[TT_C_SL_CAT])) & S_OPCAT);
    if (!op && !(str_flags(r, cint(&row[TT_C_SL_NAME])) & S_STEP))
        return 0;
    if (TT_ALLOC_GROW(r->sl, r->nsl + 1, r->asl) < 0)
        return tt__oom();
    s = &r->sl[r->nsl];
    s->id = cint(&row[TT_C_SL_ID]);
    if (r->nsl && s->id < r->sl[r->nsl - 1].id)
        r->sl_unsorted = 1;
    s->ts = cint(&row[TT_C_SL_TS]);
    s->dur = cint(&row[TT_C_SL_DUR]);
    s->name = cint(&row[TT_C_SL_NAME]);
    s->dims = cint(&row[TT_C_SL_DIMS]);
    s->has_ts = !cnull(&row[TT_C_SL_TS]);
    s->has_dur = !cnull(&row[TT_C_SL_DUR]);
    s->has_name = !cnull(&row[TT_C_SL_NAME]);
    s->op = (unsigned char)op;
    r->nsl++;
    return 0;
}

static int add_runtime(struct tt__diff_rows *r, const tt__cell *row)
{
    struct drt *c;
    if (TT_ALLOC_GROW(r->rt, r->nrt + 1, r->art) < 0)
        return tt__oom();
    c = &r->rt[r->nrt];
    c->id = cint(&row[TT_C_RT_ID]);
    if (r->nrt && c->id < r->rt[r->nrt - 1].id)
        r->rt_unsorted = 1;
    c->ts = cint(&row[TT_C_RT_TS]);
    c->dur = cint(&row[TT_C_RT_DUR]);
    c->name = cint(&row[TT_C_RT_NAME]);
    c->has_ts = !cnull(&row[TT_C_RT_TS]);
    r->nrt++;
    return 0;
}

static int add_gpu(struct tt__diff_rows *r, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    int kind = text_is(k, text, "kernel") ? 1 : text_is(k, text, "memcpy") ? 2
               : text_is(k, text, "memset") ? 3 : 0;
    struct dgpu *g;
    if (!kind || cnull(&row[TT_C_GPU_TS]))
        return 0;
    if (TT_ALLOC_GROW(r->g, r->ng + 1, r->ag) < 0)
        return tt__oom();
    g = &r->g[r->ng++];
    g->kind = (unsigned char)kind;
    g->name = cint(&row[TT_C_GPU_NAME]);
    g->ts = row[TT_C_GPU_TS].i;
    g->dur = cint(&row[TT_C_GPU_DUR]);
    g->rt = cint(&row[TT_C_GPU_RUNTIME_ID]);
    g->op = cint(&row[TT_C_GPU_OP_ID]);
    g->has_rt = !cnull(&row[TT_C_GPU_RUNTIME_ID]);
    g->has_op = !cnull(&row[TT_C_GPU_OP_ID]);
    return 0;
}

static int add_memory(struct tt__diff_rows *r, const tt__cell *row)
{
    struct dmem *m;
    const tt__cell *dt = &row[TT_C_MEM_DEVICE_TYPE];
    if (cnull(&row[TT_C_MEM_TS]) || cnull(&row[TT_C_MEM_TOTAL_ALLOCATED]))
        return 0;
    if (TT_ALLOC_GROW(r->mem, r->nmem + 1, r->amem) < 0)
        return tt__oom();
    m = &r->mem[r->nmem++];
    m->ts = row[TT_C_MEM_TS].i;
    m->alloc = cint(&row[TT_C_MEM_TOTAL_ALLOCATED]);
    m->res = cint(&row[TT_C_MEM_TOTAL_RESERVED]);
    m->has_res = !cnull(&row[TT_C_MEM_TOTAL_RESERVED]);
    m->cls = cnull(dt) ? 0 : cint(dt) != 0 ? 1 : 2;
    return 0;
}

static int on_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct tt__diff_rows *r = ctx;
    int i, rc = 0;
    for (i = 0; i < nrows && rc == 0; i++) {
        const tt__cell *row = cells + (size_t)i * (size_t)ncols;
        switch (table) {
        case TT_ROWS_STR:
            rc = add_string(r, row[TT_C_STR_ID].i, text + row[TT_C_STR_S].i, row[TT_C_STR_S].len);
            break;
        case TT_ROWS_SLICE:
            rc = add_slice(r, row);
            break;
        case TT_ROWS_RUNTIME:
            rc = add_runtime(r, row);
            break;
        case TT_ROWS_GPU:
            rc = add_gpu(r, row, text);
            break;
        case TT_ROWS_MEMORY:
            rc = add_memory(r, row);
            break;
        default:
            return 0; /* flows, instants, metadata, ...: not used */
        }
    }
    return rc;
}

struct tt__diff_rows *tt__diff_rows_new(const tt_diff_options *o, const struct tt__renames *ren)
{
    struct tt__diff_rows *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->o = o;
    r->ren = ren;
    return r;
}

/* the cells on_rows keeps: a database leaves the others out */
static const uint64_t diff_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_CAT) | TT_COL(TT_C_SL_NAME) |
                      TT_COL(TT_C_SL_TS) | TT_COL(TT_C_SL_DUR) | TT_COL(TT_C_SL_DIMS),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_TS) |
                        TT_COL(TT_C_RT_DUR),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_DUR) | TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) |
                    TT_COL(TT_C_GPU_OP_ID) | TT_COL(TT_C_GPU_RUNTIME_ID) | TT_COL(TT_C_GPU_TS),
    [TT_ROWS_MEMORY] = TT_COL(TT_C_MEM_DEVICE_TYPE) | TT_COL(TT_C_MEM_TOTAL_ALLOCATED) |
                       TT_COL(TT_C_MEM_TOTAL_RESERVED) | TT_COL(TT_C_MEM_TS),
};

void tt__diff_rows_sink(struct tt__diff_rows *r, tt__rowsink *sink)
{
    memset(sink, 0, sizeof(*sink));
    sink->ctx = r;
    sink->rows = on_rows;
    sink->cols = diff_cols;
}

void tt__diff_rows_free(struct tt__diff_rows *r)
{
    size_t i;
    if (!r)
        return;
    for (i = 0; i < r->nstr; i++)
        free(r->str[i]);
    free(r->str);
    free(r->sflags);
    tt__i64map_free(&r->sidx);
    free(r->sl);
    free(r->rt);
    free(r->g);
    free(r->mem);
    free(r);
}

/* ---- the summary ---- */

struct gact {
    size_t step;
    int64_t ts, end;
};

struct trace_job {
    const struct tt__diff_rows *r;
    struct tt_diff_side *t; /* one sample per step of the trace, in order */
    struct tt__step *st;    /* the steps' CPU spans */
    size_t nst;
    struct i64map names;  /* op name string id -> key index + 1 */
    struct i64map gnames; /* GPU activity name string id * 4 + kind -> key index + 1 */
    const tt_diff_options *o;
    const struct tt__renames *ren; /* --rename (n 0: none) */
};

/* a row without a name: no key */
#define NO_KEY (-1000L)

/* the index of key (kind, k after the --rename rules) in the trace's side,
 * or a negative error code (set). Keys are kept whole, however long. */
static long key_of(struct trace_job *j, const char *kind, const char *k)
{
    char *r = NULL;
    long idx;
    int rc;
    if (j->ren && j->ren->n) {
        if ((rc = tt__renames_apply(j->ren, k, &r)) < 0)
            return rc;
        k = r;
    }
    idx = tt__diff_key(j->t, kind, k);
    free(r);
    return idx < 0 ? tt__oom() : idx;
}

/* the step whose CPU span holds ts, or (size_t)-1 */
static size_t step_at(const struct trace_job *j, int64_t ts)
{
    return (size_t)tt__step_at(j->st, j->nst, ts);
}

/* end - ts as a double, exact when it fits an int64 */
static double span_ns(int64_t end, int64_t ts)
{
    int64_t d;
    if (!__builtin_sub_overflow(end, ts, &d))
        return (double)d;
    return (double)end - (double)ts;
}

static int cmp_slice_id(const void *a, const void *b)
{
    const struct dslice *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_rt_id(const void *a, const void *b)
{
    const struct drt *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_step(const void *a, const void *b)
{
    const struct dslice *x = *(const struct dslice *const *)a, *y = *(const struct dslice *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The ProfilerStep#N slices by start (then id), disjoint: a step nested in
 * another (two profilers) or overlapping it is left out (as tt__step_spans
 * reads them from a database).
 */
static int step_spans(struct trace_job *j)
{
    const struct tt__diff_rows *r = j->r;
    const struct dslice **c = NULL;
    size_t n = 0, i, k = 0;
    for (i = 0; i < r->nsl; i++)
        n += r->sl[i].has_ts && r->sl[i].has_dur && (str_flags(r, r->sl[i].name) & S_STEP);
    if (!n)
        return 0;
    if (!(c = malloc(n * sizeof(*c))) || !(j->st = malloc(n * sizeof(*j->st)))) {
        free(c);
        return tt__oom();
    }
    for (i = 0, n = 0; i < r->nsl; i++)
        if (r->sl[i].has_ts && r->sl[i].has_dur && (str_flags(r, r->sl[i].name) & S_STEP))
            c[n++] = &r->sl[i];
    TT_QSORT(c, n, sizeof(*c), cmp_step);
    for (i = 0; i < n; i++) {
        if (k && c[i]->ts < j->st[k - 1].end)
            continue;
        j->st[k].ts = c[i]->ts;
        j->st[k].end = tt_sat_add(c[i]->ts, c[i]->dur);
        j->st[k].num = strtoll(str_of(r, c[i]->name) + 13, NULL, 10);
        k++;
    }
    j->nst = k;
    free(c);
    return 0;
}

/* the steps as samples; a trace without ProfilerStep#N is one sample
 * (step -1) over its span [start, end], when it has one */
static int load_steps(struct trace_job *j, const struct tt__diff_env *env)
{
    size_t k;
    int rc = step_spans(j);
    if (rc < 0)
        return rc;
    for (k = 0; k < j->nst; k++) {
        double d = span_ns(j->st[k].end, j->st[k].ts);
        if (tt__diff_add_sample(j->t, j->st[k].num) < 0)
            return tt__oom();
        j->t->m[M_CPU_STEP][k] = d >= 0 ? d : NAN; /* a negative dur is no time */
    }
    if (j->nst || !env->have_span)
        return 0;
    if (!(j->st = malloc(sizeof(*j->st))) || tt__diff_add_sample(j->t, -1) < 0)
        return tt__oom();
    j->st[0].num = -1;
    j->st[0].ts = env->start_ns;
    j->st[0].end = tt_sat_add(env->end_ns, 1); /* [ts, end]: the last event inside */
    j->t->m[M_CPU_STEP][0] = span_ns(env->end_ns, env->start_ns);
    j->nst = 1;
    return 0;
}

/* CPU ops: cpu_op and user_annotation slices, legacy ones (Operator, or
 * no category: the array traces of the legacy profiler); ProfilerStep#N is
 * torch's key "ProfilerStep*" (one a step), as key_averages and HTA count it */

/* torch's key of an op name: ProfilerStep#N -> ProfilerStep* */
static const char *torch_key(const char *name)
{
    return strncmp(name, "ProfilerStep#", 13) ? name : "ProfilerStep*";
}

/* the key of an op name and input shapes (string ids; --match shape) */
static long op_shape_key(struct trace_job *j, int64_t name, int64_t dims)
{
    const char *t = str_of(j->r, name), *d;
    char *k;
    long r;
    if (!*t)
        return NO_KEY;
    t = torch_key(t);
    d = str_of(j->r, dims);
    if (!*d)
        d = "[]";
    if (!(k = malloc(strlen(t) + strlen(d) + 2)))
        return tt__oom();
    sprintf(k, "%s %s", t, d);
    r = key_of(j, "op", k);
    free(k);
    return r;
}

/* the key of an op name (string id) */
static long op_key(struct trace_job *j, int64_t name)
{
    const char *t;
    size_t v;
    long k;
    if (tt__i64map_get(&j->names, name, &v))
        return (long)v - 1;
    if (!*(t = str_of(j->r, name)))
        return NO_KEY;
    if ((k = key_of(j, "op", torch_key(t))) < 0)
        return k;
    if (tt__i64map_put(&j->names, name, (size_t)k + 1) < 0)
        return tt__oom();
    return k;
}

/* the key of a slice's op (by name, or name and shapes) */
static long slice_key(struct trace_job *j, const struct dslice *s)
{
    return j->o->match == TT_MATCH_SHAPE ? op_shape_key(j, s->name, s->dims) : op_key(j, s->name);
}

static int load_ops(struct trace_job *j)
{
    size_t n;
    for (n = 0; n < j->r->nsl; n++) {
        const struct dslice *s = &j->r->sl[n];
        size_t i;
        long k;
        if (!s->op || !s->has_ts || !s->has_dur || (i = step_at(j, s->ts)) == (size_t)-1)
            continue;
        if ((k = slice_key(j, s)) == NO_KEY)
            continue;
        if (k < 0)
            return (int)k;
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)s->dur;
    }
    return 0;
}

/* runtime / driver calls by name: a new synchronisation per step shows */
static int load_runtime(struct trace_job *j)
{
    size_t n;
    for (n = 0; n < j->r->nrt; n++) {
        const struct drt *c = &j->r->rt[n];
        size_t i, v;
        const char *name;
        long k;
        if (!c->has_ts || (i = step_at(j, c->ts)) == (size_t)-1)
            continue;
        if (tt__i64map_get(&j->gnames, c->name * 4, &v)) { /* runtime names: kind 0 */
            k = (long)v - 1;
        } else if (!*(name = str_of(j->r, c->name))) {
            continue;
        } else if ((k = key_of(j, "runtime", name)) < 0) {
            return (int)k;
        } else if (tt__i64map_put(&j->gnames, c->name * 4, (size_t)k + 1) < 0) {
            return tt__oom();
        }
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)c->dur;
    }
    return 0;
}

/* the kept slice of id, or NULL (r->sl sorted by id) */
static const struct dslice *slice_by_id(const struct tt__diff_rows *r, int64_t id)
{
    size_t lo = 0, hi = r->nsl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->sl[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nsl && r->sl[lo].id == id ? &r->sl[lo] : NULL;
}

/* the runtime call of id, or NULL (r->rt sorted by id) */
static const struct drt *runtime_by_id(const struct tt__diff_rows *r, int64_t id)
{
    size_t lo = 0, hi = r->nrt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->rt[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nrt && r->rt[lo].id == id ? &r->rt[lo] : NULL;
}

static int cmp_gact(const void *a, const void *b)
{
    const struct gact *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* the union of the intervals of g[0..n) (sorted by start) as blocks: each
 * block to f(ctx, lo, hi) in order; the union's length (saturated) */
static int64_t union_walk(const struct gact *g, size_t n,
                          int (*f)(void *ctx, int64_t lo, int64_t hi), void *ctx)
{
    int64_t lo = g[0].ts, hi = g[0].end, sum = 0;
    size_t i;
    for (i = 1; i <= n; i++) {
        if (i == n || g[i].ts > hi) {
            sum = tt_sat_add(sum, tt_sat_sub(hi, lo));
            if (f && f(ctx, lo, hi))
                break;
            if (i < n)
                lo = g[i].ts, hi = g[i].end;
        } else if (g[i].end > hi) {
            hi = g[i].end;
        }
    }
    return sum;
}

/* the moment by which `need` ns of the union are done */
struct busy_at {
    int64_t need, done, at;
};

static int busy_block(void *ctx, int64_t lo, int64_t hi)
{
    struct busy_at *b = ctx;
    int64_t len = tt_sat_sub(hi, lo);
    if (len >= b->need - b->done) {
        b->at = tt_sat_add(lo, b->need - b->done);
        return 1;
    }
    b->done += len;
    return 0;
}

/*
 * Per step: GPU busy time (the union of its activities' intervals) and its
 * device end: the moment by which 99% of that busy time is done (all of it
 * but the last 1%, so that one small activity that runs late, e.g. a 4 us
 * kernel launched at the end of the step and run 110 ms later, does not
 * move it; with no busy time, the last end). The device step time of step
 * k is its device end minus step k-1's.
 */
static int step_device_times(struct trace_job *j, struct gact *g, size_t ng)
{
    size_t i = 0, k;
    double *busy = j->t->m[M_BUSY], *dev = j->t->m[M_DEV_STEP];
    int64_t *last = calloc(j->nst ? j->nst : 1, sizeof(*last));
    unsigned char *have = calloc(j->nst ? j->nst : 1, 1);
    if (!last || !have) {
        free(last);
        free(have);
        return tt__oom();
    }
    if (ng)
        TT_QSORT(g, ng, sizeof(*g), cmp_gact);
    while (i < ng) {
        size_t s = g[i].step, e = i;
        int64_t mx = g[i].end, tot;
        struct busy_at b;
        for (; e < ng && g[e].step == s; e++)
            if (g[e].end > mx)
                mx = g[e].end;
        tot = union_walk(g + i, e - i, NULL, NULL);
        busy[s] = (double)tot;
        b.need = tot - tot / 100;
        b.done = 0;
        b.at = mx;
        if (tot > 0)
            union_walk(g + i, e - i, busy_block, &b);
        last[s] = b.at;
        have[s] = 1;
        i = e;
    }
    for (k = 1; k < j->nst; k++)
        if (have[k] && have[k - 1] && last[k] >= last[k - 1])
            dev[k] = span_ns(last[k], last[k - 1]); /* else none: it ended before step k-1 */
    free(last);
    free(have);
    return 0;
}

static const char *const gpu_kinds[] = { "", "kernel", "memcpy", "memset" };

/* the family (or key) of a GPU activity, malloc'd: a kernel by family, raw
 * name or launching op (--match), a memcpy / memset by name */
static char *gpu_name_key(struct trace_job *j, const struct dgpu *a, const struct dslice *op,
                          const char *name)
{
    char *fam;
    size_t cap = 2 * strlen(name) + 32; /* a family is at most twice its name */
    if (a->kind != 1 || j->o->match == TT_MATCH_NAME)
        return strdup(name);
    if (j->o->match == TT_MATCH_OP && op) {
        const char *o = str_of(j->r, op->name);
        if (*o) {
            if ((fam = malloc(strlen(o) + 13)))
                sprintf(fam, "launched by %s", o);
            return fam;
        }
    }
    if ((fam = malloc(cap)))
        tt_kernel_family(name, fam, cap);
    return fam;
}

/* the key of a GPU activity (op: its launching op, or NULL), after
 * --rename; or an error */
static long gpu_key(struct trace_job *j, const struct dgpu *a, const struct dslice *op)
{
    int64_t ck = a->name * 4 + a->kind;
    char *fam;
    size_t v;
    long k;
    /* one key per name (and kind) unless the launching op decides it */
    int cache = a->kind != 1 || j->o->match != TT_MATCH_OP;
    if (cache && tt__i64map_get(&j->gnames, ck, &v))
        return (long)v - 1;
    if (!(fam = gpu_name_key(j, a, op, str_of(j->r, a->name))))
        return tt__oom();
    k = key_of(j, gpu_kinds[a->kind], fam);
    free(fam);
    if (k >= 0 && cache && tt__i64map_put(&j->gnames, ck, (size_t)k + 1) < 0)
        return tt__oom();
    return k;
}

/* kernels, memcpys and memsets: counted in the step of their runtime call
 * (or of their own start without one) */
static int load_gpu(struct trace_job *j)
{
    const struct tt__diff_rows *r = j->r;
    struct gact *g = NULL;
    size_t ng = 0, n;
    int rc = 0;
    if (r->ng && !(g = malloc(r->ng * sizeof(*g))))
        return tt__oom();
    for (n = 0; n < r->ng && rc == 0; n++) {
        const struct dgpu *a = &r->g[n];
        const struct drt *call = a->has_rt ? runtime_by_id(r, a->rt) : NULL;
        const struct dslice *op = a->has_op ? slice_by_id(r, a->op) : NULL;
        size_t i = step_at(j, call && call->has_ts ? call->ts : a->ts);
        double *c;
        long k;
        j->t->has_gpu = 1;
        if (i == (size_t)-1)
            continue;
        if (op && !op->has_name)
            op = NULL; /* as a NULL o.name */
        g[ng].step = i;
        g[ng].ts = a->ts;
        g[ng++].end = tt_sat_add(a->ts, a->dur > 0 ? a->dur : 0);
        c = &j->t->m[a->kind == 1 ? M_NKERNEL : a->kind == 2 ? M_NMEMCPY : M_NMEMSET][i];
        *c = (isnan(*c) ? 0 : *c) + 1;
        if ((k = gpu_key(j, a, op)) < 0) {
            rc = (int)k;
            break;
        }
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)a->dur;
        j->t->keys[k].dev[i] += (double)a->dur;
        if (op) {
            long ok = slice_key(j, op);
            if (ok < 0 && ok != NO_KEY)
                rc = (int)ok;
            else if (ok >= 0)
                j->t->keys[ok].dev[i] += (double)a->dur;
        }
    }
    if (rc == 0)
        rc = step_device_times(j, g, ng);
    free(g);
    return rc;
}

/* peak Total Allocated / Reserved per step: of the accelerator's allocator
 * when the trace has one, else the CPU's (events without a Device Type
 * count either way) */
static void load_memory(struct trace_job *j)
{
    const struct tt__diff_rows *r = j->r;
    size_t n;
    int gpu = 0;
    for (n = 0; n < r->nmem; n++)
        gpu |= r->mem[n].cls == 1;
    for (n = 0; n < r->nmem; n++) {
        const struct dmem *m = &r->mem[n];
        double a = (double)m->alloc, res = (double)m->res;
        size_t i;
        if (gpu && m->cls == 2)
            continue;
        j->t->has_mem = 1;
        if ((i = step_at(j, m->ts)) == (size_t)-1)
            continue;
        if (isnan(j->t->m[M_PEAK_ALLOC][i]) || a > j->t->m[M_PEAK_ALLOC][i])
            j->t->m[M_PEAK_ALLOC][i] = a;
        if (m->has_res && (isnan(j->t->m[M_PEAK_RES][i]) || res > j->t->m[M_PEAK_RES][i]))
            j->t->m[M_PEAK_RES][i] = res;
    }
}

/* deviceProperties[0].name of the trace's metadata object into out ("" when
 * it has none, or it is not a string) */
static void gpu_name(const char *meta, char *out, size_t cap)
{
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    const char *k, *s;
    size_t kl, len;
    out[0] = '\0';
    if (!meta)
        return;
    tt_jp_init(&jp, "", meta, 0, meta, strlen(meta));
    if (tt_jp_peek(&jp) != TT_JT_OBJECT || tt_jp_object_begin(&jp) != 0)
        return;
    while (tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
        if (kl != 16 || memcmp(k, "deviceProperties", 16)) {
            if (tt_jp_skip(&jp) < 0)
                break;
            continue;
        }
        /* the first element's "name" (the first key of that name) */
        if (tt_jp_peek(&jp) != TT_JT_ARRAY || tt_jp_array_begin(&jp) != 0 ||
            tt_jp_array_next(&jp) != 1 || tt_jp_peek(&jp) != TT_JT_OBJECT ||
            tt_jp_object_begin(&jp) != 0)
            break;
        while (tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
            if (kl == 4 && !memcmp(k, "name", 4)) {
                if (tt_jp_peek(&jp) == TT_JT_STRING && tt_jp_string(&jp, &a, &s, &len) == 0)
                    snprintf(out, cap, "%.*s", (int)len, s);
                break;
            }
            if (tt_jp_skip(&jp) < 0)
                break;
        }
        break;
    }
    tt_arena_release(&a);
}

int tt__diff_rows_summary(struct tt__diff_rows *r, const struct tt__diff_env *env,
                          struct tt_diff_side **out)
{
    struct trace_job j;
    const char *base = strrchr(env->path, '/');
    int rc;
    memset(&j, 0, sizeof(j));
    *out = NULL;
    j.r = r;
    j.o = r->o;
    j.ren = r->ren;
    if (!(j.t = calloc(1, sizeof(*j.t))))
        return tt__oom();
    j.t->world = env->world;
    gpu_name(env->metadata, j.t->gpu, sizeof(j.t->gpu));
    snprintf(j.t->label, sizeof(j.t->label), "%s", base ? base + 1 : env->path);
    if (r->sl_unsorted)
        TT_QSORT(r->sl, r->nsl, sizeof(*r->sl), cmp_slice_id);
    if (r->rt_unsorted)
        TT_QSORT(r->rt, r->nrt, sizeof(*r->rt), cmp_rt_id);
    r->sl_unsorted = r->rt_unsorted = 0;
    if ((rc = load_steps(&j, env)) == 0 && (rc = load_ops(&j)) == 0 &&
        (rc = load_runtime(&j)) == 0 && (rc = load_gpu(&j)) == 0)
        load_memory(&j);
    free(j.st);
    tt__i64map_free(&j.names);
    tt__i64map_free(&j.gnames);
    if (rc < 0)
        tt_diff_side_free(j.t);
    else
        *out = j.t;
    return rc;
}
