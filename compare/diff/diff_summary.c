/*
 * compare/diff/diff_summary.c - one side of `tracetool diff`: its inputs (trace
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
 * name: calls, device time). diff_trace.c computes it from the trace's rows.
 *
 * Each trace reaches it as the ingest's rows: a trace file (each file of a
 * directory in turn) streamed by tt__ingest_rows, without a database; a
 * database's traces through tt__db_rows. A file whose rows lack links that
 * the SQL passes after a load make (res.needs_db) is read again, twice
 * (TT_ROWS_RELINK: no database), into the same consumer; one that can be
 * read only once (a pipe) from a spill copy (TT_DEBUG_DIFF says which way).
 *
 * The traces of one side are grouped into runs by rank (a second trace of
 * the same rank is a second run); per run and step number the sample is the
 * slowest rank's (synchronous training waits for it): by the device step
 * time where a rank has one, else by the CPU step time (single-step GPU
 * traces, whose primary step time falls back to the CPU's).
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"
#include "compare/diff/diff_sumsec.h"
#include "formats/sumfile.h"
#include "common/log.h"
#include "store/ingest_rows.h"
#include "formats/spool.h"
#include "tracetool/analyze.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* ---- a side from its traces ---- */

struct tref {
    struct tt_diff_side *t;
    int64_t rank; /* -1 unknown */
    size_t run;
    size_t seq; /* its place among the traces of its input, as read */
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
                return tt__oom();
            }
            c[n].step = tr[a].t->step[i];
            c[n].a = a;
            c[n++].i = i;
        }
    }
    if (n)
        TT_QSORT(c, n, sizeof(*c), cmp_cand);
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
                    rc = tt__oom();
            } else if (!isnan(v) && (isnan(bv) || v > bv)) {
                bv = v;
                best = i;
            }
        }
        if (!o->rank_each && rc == 0 && take(s, tr[c[best].a].t, c[best].i, tr[c[best].a].rank) < 0)
            rc = tt__oom();
        g = e;
    }
    free(c);
    return rc;
}

/* ---- the traces of one input ---- */

/* the tables diff reads none of */
#define DIFF_SKIP                                                                                  \
    (1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | 1u << TT_ROWS_ET |          \
     1u << TT_ROWS_MEMTL)

/* one input being read: a database, a directory or a trace file */
struct input {
    const char *in;
    const tt_diff_options *o;
    const struct tt__renames *ren;
    struct tref **tr;
    size_t *ntr, *atr, first; /* its traces: (*tr)[first..*ntr) */
    size_t nfmt[TT_FMT_MEMTL_RAW + 1]; /* its traces by format */
    int64_t only_id; /* a database's trace of this id only (0: every one) */
};

static int is_kineto(tt_trace_format f)
{
    return f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY;
}

/* the summary of the rows read as the input's next trace */
static int add_trace(struct input *in, struct tt__diff_rows *r, const struct tt__diff_env *env)
{
    struct tref *t;
    int rc;
    if (TT_ALLOC_GROW(*in->tr, *in->ntr + 1, *in->atr) < 0)
        return tt__oom();
    t = &(*in->tr)[*in->ntr];
    memset(t, 0, sizeof(*t));
    if ((rc = tt__diff_rows_summary(r, env, &t->t)) < 0) {
        if (!tt_error_last()->source[0])
            tt_error_set_source(in->in);
        return rc;
    }
    t->rank = env->have_rank ? env->rank : -1;
    t->seq = *in->ntr - in->first;
    (*in->ntr)++;
    return 0;
}

/* what a trace's summary takes besides its rows, from either source */
static void env_of(struct tt__diff_env *env, const char *path, const tt__rows_result *res)
{
    memset(env, 0, sizeof(*env));
    env->path = path;
    env->have_rank = res->have_rank;
    env->rank = res->rank;
    env->world = res->have_world ? res->world_size : -1;
    env->have_span = res->have_span;
    env->start_ns = res->start_ns;
    env->end_ns = res->end_ns;
    env->metadata = res->metadata;
}

/* every Chrome/Kineto trace of db, through the rows it hands back */
static int db_input(struct input *in, tt_db *db)
{
    tt__db_trace *tv;
    size_t n, i;
    int rc = tt__db_traces(db, &tv, &n);
    for (i = 0; rc == 0 && i < n; i++) {
        struct tt__diff_rows *r;
        struct tt__diff_env env;
        tt__rowsink sink = { 0 };
        tt__rows_result res;
        if (in->only_id && tv[i].id != in->only_id)
            continue;
        if (tv[i].format >= 0 && tv[i].format <= TT_FMT_MEMTL_RAW)
            in->nfmt[tv[i].format]++;
        if (!is_kineto(tv[i].format))
            continue;
        if (!(r = tt__diff_rows_new(in->o, in->ren))) {
            rc = tt__oom();
            break;
        }
        tt__diff_rows_sink(r, &sink);
        if ((rc = tt__db_rows(db, tv[i].id, &sink, DIFF_SKIP | TT_ROWS_NO_ARGS, &res)) == 0) {
            env_of(&env, tv[i].path, &res);
            rc = add_trace(in, r, &env);
            free(res.metadata);
        } else if (!tt_error_last()->source[0]) {
            tt_error_set_source(in->in);
        }
        tt__diff_rows_free(r);
    }
    tt__db_traces_free(tv, n);
    return rc;
}

static int file_rows(struct input *in, const char *path, const char *label);

/* one trace file; standard input or a pipe from a spill copy (the way back
 * through a database reads it again) */
static int file_input(struct input *in, const char *path)
{
    tt__spool sp;
    const char *rd;
    struct stat sb;
    int rc = tt__spool_input(&sp, path, &rd);
    if (rc == 0)
        rc = file_rows(in, rd, path);
    /* a pipe is read as a trace: a summary is never looked for in it */
    if (rc == TT_EUNSUPPORTED && rd != path && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        const tt_error *e = tt_error_last();
        char msg[sizeof(e->message)];
        snprintf(msg, sizeof(msg), "%s", e->message);
        tt_error_set_at(rc, path, e->offset, "%.300s (a diff summary is read from a"
                                             " regular file only)", msg);
    }
    return tt__spool_end(&sp, path, rc);
}

/* one trace file that can be read twice, streamed: no database unless its
 * rows need one; label: what the user named */
static int file_rows(struct input *in, const char *path, const char *label)
{
    struct tt__diff_rows *r;
    struct tt__diff_env env;
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    unsigned relink = 0;
    int rc;
again:
    if (!(r = tt__diff_rows_new(in->o, in->ren)))
        return tt__oom();
    tt__diff_rows_sink(r, &sink);
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, DIFF_SKIP | relink, &res);
    if (rc == 0 && res.needs_db) {
        /* links only the SQL passes after a load make: read again, twice */
        tt__log(TT_LOG_DEBUG, "diff", "%s: read twice: %s", label, res.why_db);
        tt__diff_rows_free(r);
        free(res.metadata);
        relink = TT_ROWS_RELINK;
        goto again;
    }
    if (rc == 0 && res.format >= 0 && res.format <= TT_FMT_MEMTL_RAW)
        in->nfmt[res.format]++;
    if (rc == 0 && is_kineto(res.format)) {
        if (!relink)
            tt__log(TT_LOG_DEBUG, "diff", "%s: read without a database", label);
        env_of(&env, label, &res);
        rc = add_trace(in, r, &env);
    }
    free(res.metadata);
    tt__diff_rows_free(r);
    return rc;
}

/* why an input holds nothing to compare: what its traces are (the most
 * common format; a tie to the first name) */
static void nothing_to_compare(const struct input *in, char *why, size_t cap)
{
    const char *f = NULL;
    size_t best = 0, k;
    for (k = 0; k <= TT_FMT_MEMTL_RAW; k++) {
        const char *name = tt_format_name((tt_trace_format)k);
        if (in->nfmt[k] > best || (in->nfmt[k] && in->nfmt[k] == best && strcmp(name, f) < 0)) {
            best = in->nfmt[k];
            f = name;
        }
    }
    snprintf(why, cap, "no Chrome/Kineto trace in it");
    if (f && !strcmp(f, "execution-trace"))
        snprintf(why, cap, "an Execution Trace, not a profiler trace (an ET alone cannot be"
                           " compared: diff needs the Chrome/Kineto trace)");
    else if (f && !strcmp(f, "memory-timeline-raw"))
        snprintf(why, cap, "a memory timeline (torch's export_memory_timeline or 'tracetool"
                           " memtimeline' output), not a profiler trace: it has no steps or"
                           " ops to compare");
    else if (f)
        snprintf(why, cap, "a %s file, not a Chrome/Kineto trace", f);
}

/* the traces of an input by rank (unknown first), then as read */
static int cmp_tref(const void *a, const void *b)
{
    const struct tref *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* one trace of a summary (diff_sumsec.c) as the input's next trace */
static int sum_add(void *ctx, struct tt_diff_side *t, int64_t rank)
{
    struct input *in = ctx;
    struct tref *r;
    if (TT_ALLOC_GROW(*in->tr, *in->ntr + 1, *in->atr) < 0) {
        tt_diff_side_free(t);
        return tt__oom();
    }
    r = &(*in->tr)[*in->ntr];
    memset(r, 0, sizeof(*r));
    r->t = t;
    r->rank = rank;
    r->seq = (*in->ntr)++ - in->first;
    return 0;
}

int tt__diff_trace_one(tt_db *db, int64_t trace_id, const char *path, struct tt_diff_side **out,
                       int64_t *rank)
{
    static const tt_diff_options def = TT_DIFF_OPTIONS_INIT;
    struct input in;
    struct tref *tr = NULL;
    size_t ntr = 0, atr = 0, i;
    int rc;
    memset(&in, 0, sizeof(in));
    in.in = path;
    in.o = &def;
    in.tr = &tr;
    in.ntr = &ntr;
    in.atr = &atr;
    in.only_id = trace_id;
    rc = db ? db_input(&in, db) : file_input(&in, path);
    *out = NULL;
    *rank = -1;
    if (rc == 0 && ntr) {
        *out = tr[0].t;
        *rank = tr[0].rank;
        tr[0].t = NULL;
    }
    for (i = 0; i < ntr; i++)
        tt_diff_side_free(tr[i].t);
    free(tr);
    return rc;
}

/* every trace of one input: a database, a summary, a directory or a trace
 * file; why is set when it has none; label: what the report calls the input */
static int input_traces(const char *path, const tt_diff_options *o, const struct tt__renames *ren,
                        struct tref **tr, size_t *ntr, size_t *atr, char *why, size_t cap,
                        char *label, size_t lcap)
{
    struct input in;
    struct stat sb;
    int rc = 0;
    memset(&in, 0, sizeof(in));
    in.in = path;
    in.o = o;
    in.ren = ren;
    in.tr = tr;
    in.ntr = ntr;
    in.atr = atr;
    in.first = *ntr;
    if (tt_is_sqlite_file(path)) {
        tt_db *db = NULL;
        if ((rc = tt_db_open(&db, path, TT_DB_READONLY)) < 0)
            return rc;
        rc = db_input(&in, db);
        tt_db_free(db);
    } else if (tt__diff_is_sumfile(path)) {
        rc = tt__diff_sum_input(path, o, ren, sum_add, &in, label, lcap);
    } else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        tt_dir_walk w;
        size_t k;
        if ((rc = tt_walk_traces(path, &w)) == 0 && !w.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, path, -1, "no trace files in this directory");
        for (k = 0; rc == 0 && k < w.nfiles; k++)
            rc = file_input(&in, w.files[k]);
        tt_dir_walk_free(&w);
    } else {
        rc = file_input(&in, path);
    }
    if (rc < 0)
        return rc;
    if (*ntr == in.first)
        nothing_to_compare(&in, why, cap);
    else
        TT_QSORT(*tr + in.first, *ntr - in.first, sizeof(**tr), cmp_tref);
    return 0;
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
        return tt__oom();
    s->world = -1;
    memset(&ren, 0, sizeof(ren));
    if (o->rename && (rc = tt__renames_load(o->rename, &ren)) < 0) {
        free(s);
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        size_t l = strlen(s->label);
        char lab[256];
        if (!tt__diff_is_sumfile(inputs[i]) && tt__diff_is_summary(inputs[i])) {
            struct tt_diff_side *sum;
            if ((rc = tt__diff_summary_read(inputs[i], &sum)) == 0) {
                /* the saved side's own label: the report reads as of its traces */
                snprintf(s->label + l, sizeof(s->label) - l, "%s%s", l ? ", " : "", sum->label);
                if (TT_ALLOC_GROW(summ, nsumm + 1, asumm) < 0) {
                    tt_diff_side_free(sum);
                    rc = tt__oom();
                } else {
                    summ[nsumm++] = sum;
                }
            }
            continue;
        }
        snprintf(lab, sizeof(lab), "%s", inputs[i]);
        w[0] = '\0';
        rc = input_traces(inputs[i], o, &ren, &tr, &ntr, &atr, w, sizeof(w), lab, sizeof(lab));
        snprintf(s->label + l, sizeof(s->label) - l, "%s%s", l ? ", " : "", lab);
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
                rc = tt__oom();
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

/* diff's section of a summary (formats/sumfile.h): one trace's side */
int tt__diff_sum_write(const struct tt__sum_src *src, tt_jw *w)
{
    struct tt_diff_side *t = NULL;
    int64_t rank = -1;
    int rc = tt__diff_trace_one(src->db, src->trace_id, src->path, &t, &rank);
    if (rc < 0)
        return rc;
    if (!t) { /* not a Chrome/Kineto trace: nothing for diff */
        tt_jw_null(w);
        return 0;
    }
    tt__diff_side_json(w, t, rank);
    tt_diff_side_free(t);
    return 0;
}
