/*
 * analyze/diff/diff_summary.c - one side of `tracetool diff`: its inputs (trace
 * files, directories of per-rank traces, databases) as per-step samples.
 *
 * Per trace, every ProfilerStep#N: its CPU duration; the device end of the
 * GPU activities launched in it (kernels, memcpys and memsets whose runtime
 * call starts inside the step; an activity without a runtime call counts by
 * its own start): the moment by which 99% of their busy time is done,
 * whence the device step time (that end minus the previous step's); GPU
 * busy time (the union of those activities); their counts;
 * the peak Total Allocated / Reserved of the [memory] events in the step;
 * and per key the calls and times (CPU ops by name: calls, CPU time, device
 * time of the kernels they launched; kernels by family, memcpy/memset by
 * name: calls, device time).
 *
 * The traces of one side are grouped into runs by rank (a second trace of
 * the same rank is a second run); per run and step number the sample is the
 * slowest rank's (synchronous training waits for it): by the device step
 * time where a rank has one, else by the CPU step time (single-step GPU
 * traces, whose primary step time falls back to the CPU's).
 */
#include "common/compat.h"
#include "analyze/diff/diff_state.h"
#include "analyze/steps/steps.h"
#include "common/i64map.h"
#include "store/db_internal.h"
#include "tracetool/analyze.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* ---- one trace ---- */

struct gact {
    size_t step;
    int64_t ts, end;
};

struct trace_job {
    tt_db *db;
    int64_t trace;
    struct tt_diff_side *t; /* one sample per step of the trace, in order */
    struct tt__step *st; /* the steps' CPU spans */
    size_t nst;
    struct i64map names; /* op name string id -> key index + 1 */
    struct i64map gnames; /* GPU activity name string id * 4 + kind -> key index + 1 */
    int64_t rank;
    int have_rank;
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
    return idx < 0 ? tt_error_set(TT_ENOMEM, "out of memory") : idx;
}

/* the step whose CPU span holds ts, or (size_t)-1 */
static size_t step_at(const struct trace_job *j, int64_t ts)
{
    return (size_t)tt__step_at(j->st, j->nst, ts);
}

/* a + b, saturated at the int64 range (times near its ends do not wrap) */
static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* a - b, saturated */
static int64_t sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r))
        return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

/* end - ts as a double, exact when it fits an int64 */
static double span_ns(int64_t end, int64_t ts)
{
    int64_t d;
    if (!__builtin_sub_overflow(end, ts, &d))
        return (double)d;
    return (double)end - (double)ts;
}

/* a trace without ProfilerStep#N: the whole trace is one sample (step -1) */
static int whole_trace_step(struct trace_job *j)
{
    sqlite3_stmt *st;
    int r;
    if (tt_db_prepare(j->db, &st, "SELECT start_ns, end_ns FROM traces WHERE id = ?1"
                                  " AND start_ns IS NOT NULL AND end_ns IS NOT NULL") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, j->trace);
    if ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (!(j->st = malloc(sizeof(*j->st))) || tt__diff_add_sample(j->t, -1) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        j->st[0].num = -1;
        int64_t end = sqlite3_column_int64(st, 1);
        j->st[0].ts = sqlite3_column_int64(st, 0);
        j->st[0].end = add_sat(end, 1); /* [ts, end]: the last event inside */
        j->t->m[M_CPU_STEP][0] = span_ns(end, j->st[0].ts);
        j->nst = 1;
    }
    sqlite3_finalize(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : tt_db_error(j->db, "cannot read the trace");
}

static int load_steps(struct trace_job *j)
{
    size_t k;
    int rc = tt__step_spans(j->db, j->trace, &j->st, &j->nst);
    if (rc < 0)
        return rc;
    for (k = 0; k < j->nst; k++) {
        double d = span_ns(j->st[k].end, j->st[k].ts);
        if (tt__diff_add_sample(j->t, j->st[k].num) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
        j->t->m[M_CPU_STEP][k] = d >= 0 ? d : NAN; /* a negative dur is no time */
    }
    if (!j->nst)
        return whole_trace_step(j);
    return 0;
}

/* CPU ops: cpu_op and user_annotation slices, legacy ones (Operator, or
 * no category: the array traces of the legacy profiler); ProfilerStep#N is
 * torch's key "ProfilerStep*" (one a step), as key_averages and HTA count it */

/* string id -> its text ("" when none), valid until str is reset */
static const char *str_of(sqlite3_stmt *str, int64_t id)
{
    const char *t = NULL;
    sqlite3_reset(str);
    sqlite3_bind_int64(str, 1, id);
    if (sqlite3_step(str) == SQLITE_ROW)
        t = (const char *)sqlite3_column_text(str, 0);
    return t ? t : "";
}

/* torch's key of an op name: ProfilerStep#N -> ProfilerStep* */
static const char *torch_key(const char *name)
{
    return strncmp(name, "ProfilerStep#", 13) ? name : "ProfilerStep*";
}

/* the key of an op name and input shapes (string ids; --match shape) */
static long op_shape_key(struct trace_job *j, sqlite3_stmt *str, int64_t name, int64_t dims)
{
    const char *t = str_of(str, name), *d;
    char *n, *k;
    long r;
    if (!*t)
        return NO_KEY;
    if (!(n = strdup(torch_key(t))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    d = str_of(str, dims);
    if (!*d)
        d = "[]";
    if (!(k = malloc(strlen(n) + strlen(d) + 2))) {
        free(n);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    sprintf(k, "%s %s", n, d);
    free(n);
    r = key_of(j, "op", k);
    free(k);
    return r;
}

/* the key of an op name (string id) */
static long op_key(struct trace_job *j, sqlite3_stmt *str, int64_t name)
{
    const char *t;
    size_t v;
    long k;
    if (tt__i64map_get(&j->names, name, &v))
        return (long)v - 1;
    if (!*(t = str_of(str, name)))
        return NO_KEY;
    if ((k = key_of(j, "op", torch_key(t))) < 0)
        return k;
    if (tt__i64map_put(&j->names, name, (size_t)k + 1) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    return k;
}

static int load_ops(struct trace_job *j, sqlite3_stmt *str)
{
    sqlite3_stmt *st;
    int r;
    if (tt_db_prepare(j->db, &st, "SELECT s.ts, s.dur, s.name, s.input_dims FROM slices AS s"
                                  " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL AND s.dur IS NOT NULL"
                                  "  AND (s.cat IS NULL OR s.cat IN (SELECT id FROM strings WHERE s IN"
                                  "   ('cpu_op', 'Operator', 'user_annotation')))") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, j->trace);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        size_t i = step_at(j, sqlite3_column_int64(st, 0));
        long k;
        if (i == (size_t)-1)
            continue;
        if ((k = j->o->match == TT_MATCH_SHAPE
                     ? op_shape_key(j, str, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3))
                     : op_key(j, str, sqlite3_column_int64(st, 2))) == NO_KEY)
            continue;
        if (k < 0) {
            sqlite3_finalize(st);
            return (int)k;
        }
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? 0 : tt_db_error(j->db, "cannot read the CPU ops");
}

/* runtime / driver calls by name: a new synchronisation per step shows */
static int load_runtime(struct trace_job *j, sqlite3_stmt *str)
{
    sqlite3_stmt *st;
    int r;
    if (tt_db_prepare(j->db, &st, "SELECT r.ts, r.dur, r.name FROM runtime AS r"
                                  " WHERE r.trace_id = ?1 AND r.ts IS NOT NULL") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, j->trace);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        size_t i = step_at(j, sqlite3_column_int64(st, 0)), v;
        int64_t nid = sqlite3_column_int64(st, 2);
        const char *name;
        long k;
        if (i == (size_t)-1)
            continue;
        if (tt__i64map_get(&j->gnames, nid * 4, &v)) { /* runtime names: kind 0 */
            k = (long)v - 1;
        } else if (!*(name = str_of(str, nid))) {
            continue;
        } else if ((k = key_of(j, "runtime", name)) < 0 ||
                   (tt__i64map_put(&j->gnames, nid * 4, (size_t)k + 1) < 0 &&
                    (k = tt_error_set(TT_ENOMEM, "out of memory")) < 0)) {
            sqlite3_finalize(st);
            return (int)k;
        }
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? 0 : tt_db_error(j->db, "cannot read the runtime calls");
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
            sum = add_sat(sum, sub_sat(hi, lo));
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
    int64_t len = sub_sat(hi, lo);
    if (len >= b->need - b->done) {
        b->at = add_sat(lo, b->need - b->done);
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
static void step_device_times(struct trace_job *j, struct gact *g, size_t ng)
{
    size_t i = 0, k;
    double *busy = j->t->m[M_BUSY], *dev = j->t->m[M_DEV_STEP];
    int64_t *last = calloc(j->nst ? j->nst : 1, sizeof(*last));
    unsigned char *have = calloc(j->nst ? j->nst : 1, 1);
    if (!last || !have) {
        free(last);
        free(have);
        return;
    }
    if (ng)
        qsort(g, ng, sizeof(*g), cmp_gact);
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
}

/* the family (or key) of a GPU activity of that kind and name, malloc'd:
 * a kernel by family, raw name or launching op (--match), a memcpy / memset
 * by name */
static char *gpu_name_key(struct trace_job *j, sqlite3_stmt *str, sqlite3_stmt *st,
                          const char *kind, const char *name)
{
    char *fam;
    size_t cap = 2 * strlen(name) + 32; /* a family is at most twice its name */
    if (kind[0] != 'k' || j->o->match == TT_MATCH_NAME)
        return strdup(name);
    if (j->o->match == TT_MATCH_OP && sqlite3_column_type(st, 5) != SQLITE_NULL) {
        const char *op = str_of(str, sqlite3_column_int64(st, 5));
        if (*op) {
            if ((fam = malloc(strlen(op) + 13)))
                sprintf(fam, "launched by %s", op);
            return fam;
        }
    }
    if ((fam = malloc(cap)))
        tt_kernel_family(name, fam, cap);
    return fam;
}

/* the key of the GPU activity on row st, after --rename; or an error */
static long gpu_key(struct trace_job *j, sqlite3_stmt *str, sqlite3_stmt *st, const char *kind)
{
    int64_t nid = sqlite3_column_int64(st, 1);
    int64_t ck = nid * 4 + (kind[0] == 'k' ? 1 : kind[3] == 'c' ? 2 : 3);
    char *name, *fam;
    size_t v;
    long k;
    /* one key per name (and kind) unless the launching op decides it */
    int cache = kind[0] != 'k' || j->o->match != TT_MATCH_OP;
    if (cache && tt__i64map_get(&j->gnames, ck, &v))
        return (long)v - 1;
    if (!(name = strdup(str_of(str, nid))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    fam = gpu_name_key(j, str, st, kind, name);
    free(name);
    if (!fam)
        return tt_error_set(TT_ENOMEM, "out of memory");
    k = key_of(j, kind, fam);
    free(fam);
    if (k >= 0 && cache && tt__i64map_put(&j->gnames, ck, (size_t)k + 1) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    return k;
}

static int load_gpu(struct trace_job *j, sqlite3_stmt *str)
{
    sqlite3_stmt *st;
    struct gact *g = NULL;
    size_t ng = 0, ag = 0;
    int r, rc = 0;
    if (tt_db_prepare(j->db, &st, "SELECT g.kind, g.name, g.ts, g.dur, r.ts, o.name, o.input_dims"
                                  " FROM gpu_ops AS g"
                                  " LEFT JOIN runtime AS r ON r.id = g.runtime_id"
                                  " LEFT JOIN slices AS o ON o.id = g.op_id"
                                  " WHERE g.trace_id = ?1 AND g.ts IS NOT NULL"
                                  "  AND g.kind IN ('kernel', 'memcpy', 'memset')") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, j->trace);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(st, 0);
        int64_t ts = sqlite3_column_int64(st, 2), dur = sqlite3_column_int64(st, 3);
        int64_t at = sqlite3_column_type(st, 4) == SQLITE_NULL ? ts : sqlite3_column_int64(st, 4);
        size_t i = step_at(j, at);
        long k;
        j->t->has_gpu = 1;
        if (i == (size_t)-1)
            continue;
        if (TT_ALLOC_GROW(g, ng + 1, ag) < 0)
            goto oom;
        g[ng].step = i;
        g[ng].ts = ts;
        g[ng++].end = add_sat(ts, dur > 0 ? dur : 0);
        {
            double *c = &j->t->m[kind[0] == 'k' ? M_NKERNEL : kind[3] == 'c' ? M_NMEMCPY : M_NMEMSET][i];
            *c = (isnan(*c) ? 0 : *c) + 1;
        }
        if ((k = gpu_key(j, str, st, kind)) < 0) {
            rc = (int)k;
            goto out;
        }
        j->t->keys[k].count[i] += 1;
        j->t->keys[k].ns[i] += (double)dur;
        j->t->keys[k].dev[i] += (double)dur;
        if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
            long ok = j->o->match == TT_MATCH_SHAPE
                          ? op_shape_key(j, str, sqlite3_column_int64(st, 5),
                                         sqlite3_column_int64(st, 6))
                          : op_key(j, str, sqlite3_column_int64(st, 5));
            if (ok < 0 && ok != NO_KEY) {
                rc = (int)ok;
                goto out;
            }
            if (ok >= 0)
                j->t->keys[ok].dev[i] += (double)dur;
        }
    }
    if (r != SQLITE_DONE)
        rc = tt_db_error(j->db, "cannot read the GPU activities");
    else
        step_device_times(j, g, ng);
    goto out;
oom:
    rc = tt_error_set(TT_ENOMEM, "out of memory");
out:
    free(g);
    sqlite3_finalize(st);
    return rc;
}

static int load_memory(struct trace_job *j)
{
    sqlite3_stmt *st;
    int r, gpu_seen = 0;
    if (tt_db_prepare(j->db, &st, "SELECT ts, total_allocated, total_reserved, device_type"
                                  " FROM memory WHERE trace_id = ?1 AND ts IS NOT NULL"
                                  "  AND total_allocated IS NOT NULL"
                                  " ORDER BY (device_type = 0), id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, j->trace);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        size_t i = step_at(j, sqlite3_column_int64(st, 0));
        double a = (double)sqlite3_column_int64(st, 1), res = (double)sqlite3_column_int64(st, 2);
        int gpu = sqlite3_column_int(st, 3) != 0;
        /* the accelerator's allocator when the trace has one, else the CPU's */
        if (gpu)
            gpu_seen = 1;
        else if (gpu_seen)
            break;
        j->t->has_mem = 1;
        if (i == (size_t)-1)
            continue;
        if (isnan(j->t->m[M_PEAK_ALLOC][i]) || a > j->t->m[M_PEAK_ALLOC][i])
            j->t->m[M_PEAK_ALLOC][i] = a;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
            (isnan(j->t->m[M_PEAK_RES][i]) || res > j->t->m[M_PEAK_RES][i]))
            j->t->m[M_PEAK_RES][i] = res;
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE || r == SQLITE_ROW ? 0 : tt_db_error(j->db, "cannot read memory events");
}

static int load_env(struct trace_job *j)
{
    sqlite3_stmt *st;
    if (tt_db_prepare(j->db, &st, "SELECT rank, world_size,"
                                  " json_extract(metadata, '$.deviceProperties[0].name'), file_name"
                                  " FROM traces WHERE id = ?1") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, j->trace);
    if (sqlite3_step(st) == SQLITE_ROW) {
        j->have_rank = sqlite3_column_type(st, 0) == SQLITE_INTEGER;
        j->rank = sqlite3_column_int64(st, 0);
        j->t->world = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1) : -1;
        if (sqlite3_column_type(st, 2) == SQLITE_TEXT)
            snprintf(j->t->gpu, sizeof(j->t->gpu), "%s", (const char *)sqlite3_column_text(st, 2));
        snprintf(j->t->label, sizeof(j->t->label), "%s", (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    return 0;
}

/* one trace of db as a side of one sample per step */
static int trace_summary(tt_db *db, int64_t trace, const tt_diff_options *o,
                         const struct tt__renames *ren, struct tt_diff_side **out, int64_t *rank,
                         int *have_rank)
{
    struct trace_job j;
    sqlite3_stmt *str = NULL;
    int rc;
    memset(&j, 0, sizeof(j));
    *out = NULL;
    j.db = db;
    j.trace = trace;
    j.o = o;
    j.ren = ren;
    if (!(j.t = calloc(1, sizeof(*j.t))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    j.t->world = -1;
    if ((rc = load_env(&j)) < 0 || (rc = load_steps(&j)) < 0)
        goto out;
    if (tt_db_prepare(db, &str, "SELECT s FROM strings WHERE id = ?1") < 0) {
        rc = TT_EDB;
        goto out;
    }
    if ((rc = load_ops(&j, str)) < 0 || (rc = load_runtime(&j, str)) < 0 || (rc = load_gpu(&j, str)) < 0 ||
        (rc = load_memory(&j)) < 0)
        goto out;
    *rank = j.rank;
    *have_rank = j.have_rank;
out:
    sqlite3_finalize(str);
    free(j.st);
    tt__i64map_free(&j.names);
    tt__i64map_free(&j.gnames);
    if (rc < 0)
        tt_diff_side_free(j.t);
    else
        *out = j.t;
    return rc;
}

/* ---- a side from its traces ---- */

struct tref {
    struct tt_diff_side *t;
    int64_t rank;
    size_t run;
};

static int in_window(const tt_diff_options *o, int is_new, int64_t step)
{
    int64_t lo = o->steps_lo, hi = o->steps_hi;
    if (is_new && (o->new_steps_lo >= 0 || o->new_steps_hi >= 0)) {
        lo = o->new_steps_lo;
        hi = o->new_steps_hi;
    }
    return (lo < 0 || step >= lo) && (hi < 0 || step <= hi);
}

/* the primary value of sample i of t: device step time, else CPU */
static double primary(const struct tt_diff_side *t, size_t i, int device)
{
    return device ? t->m[M_DEV_STEP][i] : t->m[M_CPU_STEP][i];
}

/* copy sample i of trace t into a new sample of s */
static int take(struct tt_diff_side *s, const struct tt_diff_side *t, size_t i, int64_t rank)
{
    long n = tt__diff_add_sample(s, t->step[i]);
    size_t m, k;
    if (n < 0)
        return -1;
    s->rank[n] = rank;
    for (m = 0; m < M_COUNT; m++)
        s->m[m][n] = t->m[m][i];
    for (m = M_NKERNEL; m <= M_NMEMSET && t->has_gpu; m++)
        if (isnan(s->m[m][n]))
            s->m[m][n] = 0;
    for (k = 0; k < t->nkeys; k++) {
        long d;
        if (!t->keys[k].count[i] && !t->keys[k].ns[i] && !t->keys[k].dev[i])
            continue;
        if ((d = tt__diff_key(s, t->keys[k].kind, t->keys[k].key)) < 0)
            return -1;
        s->keys[d].count[n] = t->keys[k].count[i];
        s->keys[d].ns[n] = t->keys[k].ns[i];
        s->keys[d].dev[n] = t->keys[k].dev[i];
    }
    return 0;
}

/* a usable sample of a run: trace a's sample i */
struct cand {
    int64_t step;
    size_t a, i;
};

static int cmp_cand(const void *x, const void *y)
{
    const struct cand *p = x, *q = y;
    if (p->step != q->step)
        return p->step < q->step ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->i < q->i ? -1 : p->i > q->i;
}

/* the samples of one run, in step order: per step number the slowest
 * rank's (ties: the first trace), or every rank's with --rank-agg each;
 * sorted, so O(n log n) in the samples of the run */
static int merge_run(struct tt_diff_side *s, struct tref *tr, size_t ntr, size_t run,
                     const tt_diff_options *o, int is_new)
{
    size_t a, i, n = 0, cap = 0, g;
    struct cand *c = NULL;
    int device = s->has_gpu && o->step_clock == 0, rc = 0;
    s->cur_run = (int32_t)run;
    for (a = 0; a < ntr; a++) {
        if (tr[a].run != run)
            continue;
        for (i = (size_t)(o->skip_first > 0 ? o->skip_first : 0); i < tr[a].t->n; i++) {
            if (!in_window(o, is_new, tr[a].t->step[i]))
                continue;
            if (TT_ALLOC_GROW(c, n + 1, cap) < 0) {
                free(c);
                return tt_error_set(TT_ENOMEM, "out of memory");
            }
            c[n].step = tr[a].t->step[i];
            c[n].a = a;
            c[n++].i = i;
        }
    }
    if (n)
        qsort(c, n, sizeof(*c), cmp_cand);
    for (g = 0; g < n && rc == 0;) {
        size_t e = g, best = g;
        double bv = NAN;
        int by_dev = 0;
        while (e < n && c[e].step == c[g].step)
            e++;
        /* by the device step time when a rank has one; else (a trace's
         * first step, single-step traces) by the CPU's, the step time the
         * comparison falls back to: not the first rank's */
        for (i = g; i < e && device; i++)
            by_dev |= !isnan(primary(tr[c[i].a].t, c[i].i, 1));
        for (i = g; i < e && rc == 0; i++) {
            double v = primary(tr[c[i].a].t, c[i].i, by_dev);
            if (o->rank_each) {
                if (take(s, tr[c[i].a].t, c[i].i, tr[c[i].a].rank) < 0)
                    rc = tt_error_set(TT_ENOMEM, "out of memory");
            } else if (!isnan(v) && (isnan(bv) || v > bv)) {
                bv = v;
                best = i;
            }
        }
        if (!o->rank_each && rc == 0 && take(s, tr[c[best].a].t, c[best].i, tr[c[best].a].rank) < 0)
            rc = tt_error_set(TT_ENOMEM, "out of memory");
        g = e;
    }
    free(c);
    return rc;
}

/* why an input holds nothing to compare: what its traces are */
static void nothing_to_compare(tt_db *db, char *why, size_t cap)
{
    sqlite3_stmt *st;
    const char *f = NULL;
    snprintf(why, cap, "no Chrome/Kineto trace in it");
    if (tt_db_prepare(db, &st, "SELECT format FROM traces GROUP BY format"
                               " ORDER BY count(*) DESC, format LIMIT 1") < 0)
        return;
    if (sqlite3_step(st) == SQLITE_ROW)
        f = (const char *)sqlite3_column_text(st, 0);
    if (f && !strcmp(f, "execution-trace"))
        snprintf(why, cap, "an Execution Trace, not a profiler trace (an ET alone cannot be"
                           " compared: diff needs the Chrome/Kineto trace)");
    else if (f && !strcmp(f, "memory-timeline-raw"))
        snprintf(why, cap, "a memory timeline (torch's export_memory_timeline or 'tracetool"
                           " memtimeline' output), not a profiler trace: it has no steps or"
                           " ops to compare");
    else if (f)
        snprintf(why, cap, "a %s file, not a Chrome/Kineto trace", f);
    sqlite3_finalize(st);
}

/* every trace of one input: a database, a directory or a trace file; why
 * is set when it has none */
static int input_traces(const char *in, const tt_diff_options *o, const struct tt__renames *ren,
                        struct tref **tr, size_t *ntr, size_t *atr, char *why, size_t cap)
{
    size_t before = *ntr;
    tt_db *db = NULL;
    sqlite3_stmt *st = NULL;
    struct stat sb;
    int rc = 0, r;
    if (tt_is_sqlite_file(in)) {
        if ((rc = tt_db_open(&db, in, TT_DB_READONLY)) < 0)
            return rc;
    } else {
        if ((rc = tt__open_temp_db(&db, "diff")) < 0)
            return rc;
        if (stat(in, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            tt_dir_walk w;
            size_t k;
            if ((rc = tt_walk_traces(in, &w)) == 0 && !w.nfiles)
                rc = tt_error_set_at(TT_ENOTFOUND, in, -1, "no trace files in this directory");
            for (k = 0; rc == 0 && k < w.nfiles; k++)
                rc = tt_ingest_file(db, w.files[k], NULL, NULL);
            tt_dir_walk_free(&w);
        } else if ((rc = tt_ingest_file(db, in, NULL, NULL)) == TT_EUNSUPPORTED &&
                   stat(in, &sb) == 0 && !S_ISREG(sb.st_mode)) {
            /* a pipe is read once, as a trace: a summary is never looked for in it */
            const tt_error *e = tt_error_last();
            char msg[sizeof(e->message)], src[sizeof(e->source)];
            snprintf(msg, sizeof(msg), "%s", e->message);
            snprintf(src, sizeof(src), "%s", e->source);
            tt_error_set_at(rc, src, e->offset, "%.300s (a diff summary is read from a regular"
                                                " file only)", msg);
        }
        if (rc < 0)
            goto out;
    }
    if (tt_db_prepare(db, &st, "SELECT id FROM traces WHERE format IN ('kineto-json', 'chrome-array')"
                               " ORDER BY coalesce(rank, -1), id") < 0) {
        rc = TT_EDB;
        goto out;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct tref *t;
        int have_rank = 0;
        if (TT_ALLOC_GROW(*tr, *ntr + 1, *atr) < 0) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            goto out;
        }
        t = &(*tr)[*ntr];
        memset(t, 0, sizeof(*t));
        if ((rc = trace_summary(db, sqlite3_column_int64(st, 0), o, ren, &t->t, &t->rank, &have_rank)) < 0) {
            if (!tt_error_last()->source[0])
                tt_error_set_source(in);
            goto out;
        }
        if (!have_rank)
            t->rank = -1;
        (*ntr)++;
    }
    if (r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read the traces");
    else if (*ntr == before)
        nothing_to_compare(db, why, cap);
out:
    sqlite3_finalize(st);
    tt_db_free(db);
    return rc;
}

int tt_diff_side_load(const char *const *inputs, size_t n, const tt_diff_options *o, int is_new,
                      tt_diff_side **out)
{
    tt_diff_options def = TT_DIFF_OPTIONS_INIT;
    struct tref *tr = NULL;
    struct tt_diff_side **summ = NULL;
    struct tt__renames ren;
    size_t ntr = 0, atr = 0, i, k, run, nsumm = 0, asumm = 0;
    char why[256], w[256];
    const char *empty = NULL;
    struct tt_diff_side *s;
    int rc = 0;
    *out = NULL;
    if (!o)
        o = &def;
    if (!(s = calloc(1, sizeof(*s))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    s->world = -1;
    memset(&ren, 0, sizeof(ren));
    if (o->rename && (rc = tt__renames_load(o->rename, &ren)) < 0) {
        free(s);
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        size_t l = strlen(s->label);
        if (tt__diff_is_summary(inputs[i])) {
            struct tt_diff_side *sum;
            if ((rc = tt__diff_summary_read(inputs[i], &sum)) == 0) {
                /* the saved side's own label: the report reads as of its traces */
                snprintf(s->label + l, sizeof(s->label) - l, "%s%s", l ? ", " : "", sum->label);
                if (TT_ALLOC_GROW(summ, nsumm + 1, asumm) < 0) {
                    tt_diff_side_free(sum);
                    rc = tt_error_set(TT_ENOMEM, "out of memory");
                } else {
                    summ[nsumm++] = sum;
                }
            }
            continue;
        }
        snprintf(s->label + l, sizeof(s->label) - l, "%s%s", l ? ", " : "", inputs[i]);
        w[0] = '\0';
        rc = input_traces(inputs[i], o, &ren, &tr, &ntr, &atr, w, sizeof(w));
        if (rc == 0 && w[0] && !empty) { /* the first input with nothing to compare */
            empty = inputs[i];
            memcpy(why, w, sizeof(why));
        }
    }
    if (rc == 0 && !ntr && !nsumm)
        rc = tt_error_set_at(TT_EINVALID, empty ? empty : n ? inputs[n - 1] : "", -1, "%s",
                             empty ? why : "no Chrome/Kineto trace in it");
    /* runs: the k-th trace of a rank is in run k */
    s->has_gpu = ntr + nsumm > 0;
    for (i = 0; rc == 0 && i < nsumm; i++) {
        s->has_gpu &= summ[i]->has_gpu;
        s->has_mem |= summ[i]->has_mem;
        if (!s->gpu[0])
            snprintf(s->gpu, sizeof(s->gpu), "%s", summ[i]->gpu);
        if (summ[i]->world > s->world)
            s->world = summ[i]->world;
    }
    for (i = 0; rc == 0 && i < ntr; i++) {
        for (k = 0, tr[i].run = 0; k < i; k++)
            if (tr[k].rank == tr[i].rank)
                tr[i].run++;
        if (tr[i].run + 1 > s->nruns)
            s->nruns = tr[i].run + 1;
        s->has_gpu &= tr[i].t->has_gpu;
        s->has_mem |= tr[i].t->has_mem;
        if (!s->gpu[0])
            snprintf(s->gpu, sizeof(s->gpu), "%s", tr[i].t->gpu);
        if (tr[i].t->world > s->world)
            s->world = tr[i].t->world;
    }
    s->ntraces = ntr;
    for (run = 0; rc == 0 && run < s->nruns; run++)
        rc = merge_run(s, tr, ntr, run, o, is_new);
    /* a saved side: its samples as they are (in the step window), its runs
     * after the traces' */
    for (k = 0; rc == 0 && k < nsumm; k++) {
        for (i = 0; rc == 0 && i < summ[k]->n; i++) {
            size_t ru = (size_t)summ[k]->run[i];
            s->cur_run = (int32_t)(s->nruns + (ru < summ[k]->nruns ? ru : 0));
            if (in_window(o, is_new, summ[k]->step[i]) && take(s, summ[k], i, summ[k]->rank[i]) < 0)
                rc = tt_error_set(TT_ENOMEM, "out of memory");
        }
        s->ntraces += summ[k]->ntraces;
        s->nruns += summ[k]->nruns;
    }
    for (k = 0; k < nsumm; k++)
        tt_diff_side_free(summ[k]);
    free(summ);
    for (i = 0; i < ntr; i++)
        tt_diff_side_free(tr[i].t);
    free(tr);
    tt__renames_free(&ren);
    if (rc < 0) {
        tt_diff_side_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* a side whose samples are all whole traces (step -1: no ProfilerStep#N) */
static int whole_only(const struct tt_diff_side *s)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        if (s->step[i] != -1)
            return 0;
    return s->n > 0;
}

int tt__diff_steps_differ(const struct tt_diff_side *b, const struct tt_diff_side *n, char *why,
                          size_t cap)
{
    int wb = whole_only(b), wn = whole_only(n);
    const struct tt_diff_side *w = wb ? b : n;
    if (wb == wn || !b->n || !n->n)
        return 0;
    snprintf(why, cap,
             "NOT COMPARABLE: no ProfilerStep#N in %s (%.200s): a whole trace is compared only"
             " with another without steps",
             wb ? "BASE" : "NEW", w->label);
    return 1;
}
