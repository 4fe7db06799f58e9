/*
 * compare/diff/diff_trace.c - one trace of `tracetool diff` as a side of one
 * sample per step, computed from the ingest's rows (tt__rowsink): a trace
 * file's (tt__ingest_rows) or a stored trace's (tt__db_rows) alike.
 *
 * A file interleaves the tables in file order and a database hands them
 * one after another, a GPU activity's runtime call or CPU op (its
 * TT_C_GPU_RUNTIME_ID / TT_C_GPU_OP_ID links) may come before or after it,
 * and the ProfilerStep#N spans that decide a row's step are known only at
 * the end; so the rows wait (only the columns used, only the CPU ops,
 * steps, runtime calls, GPU work and memory events) in spills
 * (common/spill.h: a bounded buffer, the rest in a temporary file, read
 * back sorted): memory holds the strings, the step spans and the keys,
 * not the rows. The summary is made at the end, in the order a database's
 * tables give: steps, CPU ops and runtime calls by id, GPU activities as
 * stored (joined to their calls and ops by sorted merges first), memory
 * events. Keys are made in that order (a side's keys are listed in the
 * order made).
 *
 * Per step (see diff_summary.c): CPU duration; per key the calls and
 * times; the GPU activities launched in it, whose union gives the busy
 * time and the device end; the peak Total Allocated / Reserved.
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"
#include "store/steps.h"
#include "common/arena.h"
#include "common/spill.h"
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
    int64_t seq; /* as stored */
    unsigned char kind; /* 1 kernel, 2 memcpy, 3 memset */
    unsigned char has_rt, has_op;
};

/* a GPU activity on its way through the joins: its call's start, its op */
struct dgj {
    struct dgpu a;
    struct dslice op;
    int64_t call_ts;
    unsigned char has_call_ts, has_op;
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
    /* spilled: slices by id, runtime calls by id, GPU activities by runtime
     * id (then as stored), memory events as read */
    tt__spill *sl, *rt, *g, *mem;
    int64_t ng;
    int mem_gpu; /* a memory event of an accelerator was read */
    struct tt__step_slice *steps; /* the ProfilerStep#N slices */
    size_t nsteps, asteps;
};

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

static int cmp_seq(int64_t x, int64_t y)
{
    return x < y ? -1 : x > y;
}

/* GPU activities by runtime id, by op id, as stored (then as stored) */
static int cmp_gj_rt(const void *a, const void *b)
{
    const struct dgj *x = a, *y = b;
    if (x->a.rt != y->a.rt)
        return x->a.rt < y->a.rt ? -1 : 1;
    return cmp_seq(x->a.seq, y->a.seq);
}

static int cmp_gj_op(const void *a, const void *b)
{
    const struct dgj *x = a, *y = b;
    if (x->a.op != y->a.op)
        return x->a.op < y->a.op ? -1 : 1;
    return cmp_seq(x->a.seq, y->a.seq);
}

static int cmp_gj_seq(const void *a, const void *b)
{
    return cmp_seq(((const struct dgj *)a)->a.seq, ((const struct dgj *)b)->a.seq);
}

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

static int add_string(struct tt__diff_rows *r, int64_t id, const char *s, size_t len)
{
    char *copy;
    size_t had = r->astr;
    unsigned char *f;
    int64_t num;
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
                                         : tt__step_name_num(copy, &num) == 0 ? S_STEP
                                                                          : 0);
    r->str[r->nstr++] = copy;
    return 0;
}

static int add_slice(struct tt__diff_rows *r, const tt__cell *row)
{
    struct dslice s;
    int64_t num;
    int op = cnull(&row[TT_C_SL_CAT]) || (str_flags(r, cint(&row[TT_C_SL_CAT])) & S_OPCAT);
    int step = (str_flags(r, cint(&row[TT_C_SL_NAME])) & S_STEP) != 0, rc;
    if (!op && !step)
        return 0;
    memset(&s, 0, sizeof(s));
    s.id = cint(&row[TT_C_SL_ID]);
    s.ts = cint(&row[TT_C_SL_TS]);
    s.dur = cint(&row[TT_C_SL_DUR]);
    s.name = cint(&row[TT_C_SL_NAME]);
    s.dims = cint(&row[TT_C_SL_DIMS]);
    s.has_ts = !cnull(&row[TT_C_SL_TS]);
    s.has_dur = !cnull(&row[TT_C_SL_DUR]);
    s.has_name = !cnull(&row[TT_C_SL_NAME]);
    s.op = (unsigned char)op;
    if (step && s.has_ts && s.has_dur && tt__step_name_num(str_of(r, s.name), &num) == 0 &&
        (rc = tt__step_slice_add(&r->steps, &r->nsteps, &r->asteps, s.id, num, s.ts, s.dur)) < 0)
        return rc;
    return tt__spill_put(&r->sl, sizeof(s), cmp_slice_id, &s);
}

static int add_runtime(struct tt__diff_rows *r, const tt__cell *row)
{
    struct drt c;
    memset(&c, 0, sizeof(c));
    c.id = cint(&row[TT_C_RT_ID]);
    c.ts = cint(&row[TT_C_RT_TS]);
    c.dur = cint(&row[TT_C_RT_DUR]);
    c.name = cint(&row[TT_C_RT_NAME]);
    c.has_ts = !cnull(&row[TT_C_RT_TS]);
    return tt__spill_put(&r->rt, sizeof(c), cmp_rt_id, &c);
}

static int add_gpu(struct tt__diff_rows *r, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    int kind = text_is(k, text, "kernel") ? 1 : text_is(k, text, "memcpy") ? 2
               : text_is(k, text, "memset") ? 3 : 0;
    struct dgj j;
    struct dgpu *g = &j.a;
    if (!kind || cnull(&row[TT_C_GPU_TS]))
        return 0;
    memset(&j, 0, sizeof(j));
    g->kind = (unsigned char)kind;
    g->name = cint(&row[TT_C_GPU_NAME]);
    g->ts = row[TT_C_GPU_TS].i;
    g->dur = cint(&row[TT_C_GPU_DUR]);
    g->rt = cint(&row[TT_C_GPU_RUNTIME_ID]);
    g->op = cint(&row[TT_C_GPU_OP_ID]);
    g->has_rt = !cnull(&row[TT_C_GPU_RUNTIME_ID]);
    g->has_op = !cnull(&row[TT_C_GPU_OP_ID]);
    g->seq = r->ng++;
    return tt__spill_put(&r->g, sizeof(j), cmp_gj_rt, &j);
}

static int add_memory(struct tt__diff_rows *r, const tt__cell *row)
{
    struct dmem m;
    const tt__cell *dt = &row[TT_C_MEM_DEVICE_TYPE];
    if (cnull(&row[TT_C_MEM_TS]) || cnull(&row[TT_C_MEM_TOTAL_ALLOCATED]))
        return 0;
    memset(&m, 0, sizeof(m));
    m.ts = row[TT_C_MEM_TS].i;
    m.alloc = cint(&row[TT_C_MEM_TOTAL_ALLOCATED]);
    m.res = cint(&row[TT_C_MEM_TOTAL_RESERVED]);
    m.has_res = !cnull(&row[TT_C_MEM_TOTAL_RESERVED]);
    m.cls = cnull(dt) ? 0 : cint(dt) != 0 ? 1 : 2;
    r->mem_gpu |= m.cls == 1;
    return tt__spill_put(&r->mem, sizeof(m), NULL, &m);
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
    tt__spill_free(r->sl);
    tt__spill_free(r->rt);
    tt__spill_free(r->g);
    tt__spill_free(r->mem);
    free(r->steps);
    free(r);
}

/* ---- the summary ---- */

/* a GPU activity's interval, in the step it was launched in */
struct gact {
    int64_t step, ts, end;
};

struct trace_job {
    struct tt__diff_rows *r;
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

/* the steps as samples; a trace without ProfilerStep#N is one sample
 * (step -1) over its span [start, end], when it has one */
static int load_steps(struct trace_job *j, const struct tt__diff_env *env)
{
    size_t k;
    int rc = tt__steps_from_slices(j->r->steps, j->r->nsteps, &j->st, &j->nst);
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

/* the op slices by id */
static int load_ops(struct trace_job *j)
{
    struct dslice s;
    int rc = tt__spill_rewind(j->r->sl);
    while (rc == 0 && (rc = tt__spill_next(j->r->sl, &s)) == 1) {
        size_t i;
        long k;
        rc = 0;
        if (!s.op || !s.has_ts || !s.has_dur || (i = step_at(j, s.ts)) == (size_t)-1)
            continue;
        if ((k = slice_key(j, &s)) == NO_KEY)
            continue;
        if (k < 0)
            return (int)k;
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)s.dur;
    }
    return rc;
}

/* runtime / driver calls by name (by id): a new synchronisation per step shows */
static int load_runtime(struct trace_job *j)
{
    struct drt c;
    int rc = tt__spill_rewind(j->r->rt);
    while (rc == 0 && (rc = tt__spill_next(j->r->rt, &c)) == 1) {
        size_t i, v;
        const char *name;
        long k;
        rc = 0;
        if (!c.has_ts || (i = step_at(j, c.ts)) == (size_t)-1)
            continue;
        if (tt__i64map_get(&j->gnames, c.name * 4, &v)) { /* runtime names: kind 0 */
            k = (long)v - 1;
        } else if (!*(name = str_of(j->r, c.name))) {
            continue;
        } else if ((k = key_of(j, "runtime", name)) < 0) {
            return (int)k;
        } else if (tt__i64map_put(&j->gnames, c.name * 4, (size_t)k + 1) < 0) {
            return tt__oom();
        }
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)c.dur;
    }
    return rc;
}

/* the GPU activities (by runtime id) given their call's start, into *out
 * by op id */
static int join_calls(struct tt__diff_rows *r, tt__spill **out)
{
    struct dgj g;
    struct drt c;
    int rc, more;
    if (!(*out = tt__spill_new(sizeof(g), cmp_gj_op)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(r->g)) < 0 || (rc = tt__spill_rewind(r->rt)) < 0 ||
        (more = tt__spill_next(r->rt, &c)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(r->g, &g)) == 1) {
        while (g.a.has_rt && more == 1 && c.id < g.a.rt)
            if ((more = tt__spill_next(r->rt, &c)) < 0)
                return more;
        g.has_call_ts = g.a.has_rt && more == 1 && c.id == g.a.rt && c.has_ts;
        g.call_ts = g.has_call_ts ? c.ts : 0;
        if ((rc = tt__spill_add(*out, &g)) < 0)
            return rc;
    }
    return rc;
}

/* the GPU activities (by op id) given their op slice, into *out as stored */
static int join_ops(struct tt__diff_rows *r, tt__spill *in, tt__spill **out)
{
    struct dgj g;
    struct dslice s;
    int rc, more;
    if (!(*out = tt__spill_new(sizeof(g), cmp_gj_seq)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(in)) < 0 || (rc = tt__spill_rewind(r->sl)) < 0 ||
        (more = tt__spill_next(r->sl, &s)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(in, &g)) == 1) {
        while (g.a.has_op && more == 1 && s.id < g.a.op)
            if ((more = tt__spill_next(r->sl, &s)) < 0)
                return more;
        /* an op without a name: as a NULL o.name */
        g.has_op = g.a.has_op && more == 1 && s.id == g.a.op && s.has_name;
        if (g.has_op)
            g.op = s;
        if ((rc = tt__spill_add(*out, &g)) < 0)
            return rc;
    }
    return rc;
}

static int cmp_gact(const void *a, const void *b)
{
    const struct gact *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* the union of each step's intervals (g: by step and start) as blocks:
 * each to f(ctx, step, lo, hi) in order */
static int union_blocks(tt__spill *g, void (*f)(void *ctx, size_t step, int64_t lo, int64_t hi),
                        void *ctx)
{
    struct gact x;
    int64_t lo = 0, hi = 0, step = 0;
    int rc, on = 0;
    if ((rc = tt__spill_rewind(g)) < 0)
        return rc;
    while ((rc = tt__spill_next(g, &x)) == 1) {
        if (on && (x.step != step || x.ts > hi)) {
            f(ctx, (size_t)step, lo, hi);
            on = 0;
        }
        if (!on) {
            on = 1;
            step = x.step;
            lo = x.ts;
            hi = x.end;
        } else if (x.end > hi) {
            hi = x.end;
        }
    }
    if (rc == 0 && on)
        f(ctx, (size_t)step, lo, hi);
    return rc;
}

/* per step: its union's length (saturated); then the moment by which
 * `need` ns of it are done (at: the last end until then) */
struct busy {
    int64_t *tot, *done, *at;
    unsigned char *have, *over;
};

static void busy_sum(void *ctx, size_t s, int64_t lo, int64_t hi)
{
    struct busy *b = ctx;
    b->tot[s] = tt_sat_add(b->tot[s], tt_sat_sub(hi, lo));
}

static void busy_block(void *ctx, size_t s, int64_t lo, int64_t hi)
{
    struct busy *b = ctx;
    int64_t len = tt_sat_sub(hi, lo), need = b->tot[s] - b->tot[s] / 100;
    if (b->over[s] || b->tot[s] <= 0)
        return;
    if (len >= need - b->done[s]) {
        b->at[s] = tt_sat_add(lo, need - b->done[s]);
        b->over[s] = 1;
        return;
    }
    b->done[s] += len;
}

/*
 * Per step: GPU busy time (the union of its activities' intervals) and its
 * device end: the moment by which 99% of that busy time is done (all of it
 * but the last 1%, so that one small activity that runs late, e.g. a 4 us
 * kernel launched at the end of the step and run 110 ms later, does not
 * move it; with no busy time, the last end). The device step time of step
 * k is its device end minus step k-1's. g: the activities by step and
 * start; b->at: each step's last end, b->have: whether it has any.
 */
static int step_device_times(struct trace_job *j, tt__spill *g, struct busy *b)
{
    double *busy = j->t->m[M_BUSY], *dev = j->t->m[M_DEV_STEP];
    size_t k;
    int rc;
    if ((rc = union_blocks(g, busy_sum, b)) < 0 || (rc = union_blocks(g, busy_block, b)) < 0)
        return rc;
    for (k = 0; k < j->nst; k++)
        if (b->have[k])
            busy[k] = (double)b->tot[k];
    for (k = 1; k < j->nst; k++)
        if (b->have[k] && b->have[k - 1] && b->at[k] >= b->at[k - 1])
            dev[k] = span_ns(b->at[k], b->at[k - 1]); /* else none: it ended before step k-1 */
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

/* one GPU activity (as stored) counted in step i: its key, its op's key */
static int gpu_count(struct trace_job *j, const struct dgj *g, size_t i)
{
    const struct dgpu *a = &g->a;
    const struct dslice *op = g->has_op ? &g->op : NULL;
    double *c = &j->t->m[a->kind == 1 ? M_NKERNEL : a->kind == 2 ? M_NMEMCPY : M_NMEMSET][i];
    long k;
    *c = (isnan(*c) ? 0 : *c) + 1;
    if ((k = gpu_key(j, a, op)) < 0)
        return (int)k;
    j->t->keys[k].count[i] += 1;
    j->t->keys[k].ns[i] += (double)a->dur;
    j->t->keys[k].dev[i] += (double)a->dur;
    if (op) {
        long ok = slice_key(j, op);
        if (ok < 0 && ok != NO_KEY)
            return (int)ok;
        if (ok >= 0)
            j->t->keys[ok].dev[i] += (double)a->dur;
    }
    return 0;
}

static void busy_free(struct busy *b)
{
    free(b->tot);
    free(b->done);
    free(b->at);
    free(b->have);
    free(b->over);
}

/* the activities as stored (their calls and ops joined) counted, their
 * intervals into *acts by step and start */
static int count_gpu(struct trace_job *j, tt__spill *in, tt__spill **acts, struct busy *b)
{
    struct dgj g;
    int rc;
    if (!(*acts = tt__spill_new(sizeof(struct gact), cmp_gact)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(in)) < 0)
        return rc;
    while ((rc = tt__spill_next(in, &g)) == 1) {
        size_t i = step_at(j, g.has_call_ts ? g.call_ts : g.a.ts);
        struct gact x;
        j->t->has_gpu = 1;
        if (i == (size_t)-1)
            continue;
        x.step = (int64_t)i;
        x.ts = g.a.ts;
        x.end = tt_sat_add(g.a.ts, g.a.dur > 0 ? g.a.dur : 0);
        if (!b->have[i] || x.end > b->at[i])
            b->at[i] = x.end;
        b->have[i] = 1;
        if ((rc = tt__spill_add(*acts, &x)) < 0 || (rc = gpu_count(j, &g, i)) < 0)
            return rc;
    }
    return rc;
}

/* kernels, memcpys and memsets: counted in the step of their runtime call
 * (or of their own start without one) */
static int load_gpu(struct trace_job *j)
{
    tt__spill *calls = NULL, *stored = NULL, *acts = NULL;
    size_t n = j->nst ? j->nst : 1;
    struct busy b;
    int rc;
    if (!j->r->g)
        return 0;
    b.tot = calloc(n, sizeof(*b.tot));
    b.done = calloc(n, sizeof(*b.done));
    b.at = calloc(n, sizeof(*b.at));
    b.have = calloc(n, 1);
    b.over = calloc(n, 1);
    if (!b.tot || !b.done || !b.at || !b.have || !b.over)
        rc = tt__oom();
    else if ((rc = join_calls(j->r, &calls)) == 0 && (rc = join_ops(j->r, calls, &stored)) == 0) {
        /* what is read no more goes before the next spill fills */
        tt__spill_free(calls);
        tt__spill_free(j->r->g);
        tt__spill_free(j->r->rt);
        tt__spill_free(j->r->sl);
        calls = j->r->g = j->r->rt = j->r->sl = NULL;
        if ((rc = count_gpu(j, stored, &acts, &b)) == 0)
            rc = step_device_times(j, acts, &b);
    }
    tt__spill_free(calls);
    tt__spill_free(stored);
    tt__spill_free(acts);
    busy_free(&b);
    return rc;
}

/* peak Total Allocated / Reserved per step: of the accelerator's allocator
 * when the trace has one, else the CPU's (events without a Device Type
 * count either way) */
static int load_memory(struct trace_job *j)
{
    struct dmem m;
    int rc = tt__spill_rewind(j->r->mem), gpu = j->r->mem_gpu;
    while (rc == 0 && (rc = tt__spill_next(j->r->mem, &m)) == 1) {
        double a = (double)m.alloc, res = (double)m.res;
        size_t i;
        rc = 0;
        if (gpu && m.cls == 2)
            continue;
        j->t->has_mem = 1;
        if ((i = step_at(j, m.ts)) == (size_t)-1)
            continue;
        if (isnan(j->t->m[M_PEAK_ALLOC][i]) || a > j->t->m[M_PEAK_ALLOC][i])
            j->t->m[M_PEAK_ALLOC][i] = a;
        if (m.has_res && (isnan(j->t->m[M_PEAK_RES][i]) || res > j->t->m[M_PEAK_RES][i]))
            j->t->m[M_PEAK_RES][i] = res;
    }
    return rc;
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
    if ((rc = load_steps(&j, env)) == 0 && (rc = load_ops(&j)) == 0 &&
        (rc = load_runtime(&j)) == 0 && (rc = load_gpu(&j)) == 0)
        rc = load_memory(&j);
    free(j.st);
    tt__i64map_free(&j.names);
    tt__i64map_free(&j.gnames);
    if (rc < 0)
        tt_diff_side_free(j.t);
    else
        *out = j.t;
    return rc;
}
