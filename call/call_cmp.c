/*
 * call/call_cmp.c - tt_call's memtimeline, crosscheck and diff: the CLI's
 * cli/cmd_<x>.c with its option table keyed as the JSON object is.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call/call_internal.h"
#include "tracetool/analyze.h"
#include "tracetool/crosscheck.h"
#include "tracetool/diff.h"
#include "tracetool/formats.h"
#include "tracetool/store.h"

/* ---- memtimeline: JSON, as OUTPUT '-' prints it ---- */

enum { M_DEVICE, M_NOCAT, M_ET, M_TRACE, M_RANK, M_TIME, M_NAME, M_UNDER };
static const tc_opt mt_opts[] = {
    { "device", M_DEVICE, 1 }, { "no-categories", M_NOCAT, 0 }, { "et", M_ET, 1 },
    { "time-range", M_TIME, 1 }, { "name", M_NAME, 1 }, { "under", M_UNDER, 1 },
    { "trace", M_TRACE, 1 },   { "rank", M_RANK, 1 },           { NULL, 0, 0 },
};

static int mt_set(tc *t, void *ctx, int key, const char *arg)
{
    tt_memtl_options *o = ctx;
    int type, rc;
    int64_t index;
    if (tc_filter(t, key, M_TIME, M_NAME, M_UNDER, arg, &o->filter, &rc))
        return rc;
    switch (key) {
    case M_DEVICE:
        if (tt_device_parse(arg, &type, &index) < 0)
            return tc_usage(t, "%s", tt_error_last()->message);
        o->device = arg;
        return 0;
    case M_NOCAT: o->no_categories = 1; return 0;
    case M_ET: o->et_path = arg; return 0;
    case M_TRACE: return tc_trace_id(t, arg, &o->trace_id);
    default: return tc_rank(t, arg, &o->rank);
    }
}

/* the timeline's JSON, as OUTPUT '-' prints it, into the call's stream */
static int mt_run(tc *t, tt_memtl_options *o, int is_db)
{
    tt_db *db;
    int rc;
    o->json_stream = t->out;
    if (!is_db)
        return tt_memtimeline_file(t->in[0], o, "-");
    if ((rc = tt_db_open_input(&db, t->in[0])) == 0) {
        rc = tt_memtimeline_db(db, o, "-");
        tt_db_free(db);
    }
    return rc;
}

int tc_memtimeline(tc *t)
{
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    int rc, is_db;
    if ((rc = tc_parse(t, mt_opts, NULL, mt_set, &o)) < 0 ||
        (rc = tc_inputs(t, 1, 1, "need exactly one input (the JSON is the result)")) < 0)
        return rc;
    is_db = tt_is_sqlite_file(t->in[0]);
    if (o.et_path && is_db)
        return tc_usage(t, "--et needs a trace file; for a database, 'tracetool ingest %s %s'"
                           " joins the ET to its trace", t->in[0], o.et_path);
    if (!is_db && (rc = tc_refuse_summaries(t, t->in, 1)) < 0)
        return rc;
    return mt_run(t, &o, is_db);
}

/* ---- crosscheck ---- */

enum { X_KEY, X_LIMIT, X_STRICT, X_NOSTORE, X_TRACE, X_RANK };
static const tc_opt xc_opts[] = {
    { "key", X_KEY, 1 },          { "row-limit", X_LIMIT, 1 }, { "limit", X_LIMIT, 1 },
    { "strict", X_STRICT, 0 },    { "no-store", X_NOSTORE, 0 }, { "trace", X_TRACE, 1 },
    { "rank", X_RANK, 1 },        { NULL, 0, 0 },
};

static int xc_set(tc *t, void *ctx, int key, const char *arg)
{
    tt_xc_options *o = ctx;
    switch (key) {
    case X_KEY:
        if (!strcmp(arg, "auto"))
            o->key = TT_XC_KEY_AUTO;
        else if (!strcmp(arg, "rf") || !strcmp(arg, "rf_id"))
            o->key = TT_XC_KEY_RF;
        else if (!strcmp(arg, "external") || !strcmp(arg, "external_id"))
            o->key = TT_XC_KEY_EXTERNAL;
        else
            return tc_usage(t, "unknown key '%s'", arg);
        return 0;
    case X_LIMIT: return tc_i64(t, arg, 0, &o->limit, "limit", "");
    case X_STRICT: o->strict = 1; return 0;
    case X_NOSTORE: o->store = 0; return 0;
    case X_TRACE: return tc_trace_id(t, arg, &o->trace_id);
    default: return tc_rank(t, arg, &o->rank);
    }
}

int tc_crosscheck(tc *t)
{
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    tt_xc_summary sum;
    size_t i;
    int rc;
    o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, xc_opts, NULL, xc_set, &o)) < 0 ||
        (rc = tc_inputs(t, 1, 2, "need ET and KINETO, or a database")) < 0 ||
        (rc = tc_refuse_summaries(t, t->in, t->nin)) < 0)
        return rc;
    if (t->nin == 1 && tt_is_sqlite_file(t->in[0])) {
        tt_db *db;
        if ((rc = tt_db_open(&db, t->in[0], o.store ? 0 : TT_DB_READONLY)) < 0)
            return rc;
        rc = tt_crosscheck_db(db, &o, t->out, &sum);
        tt_db_free(db);
    } else {
        for (i = 0; i < t->nin; i++)
            if (tt_is_sqlite_file(t->in[i]))
                return tc_usage(t, "a database is checked on its own: tracetool crosscheck DB");
        rc = tt_crosscheck_files(t->in, t->nin, &o, t->out, &sum);
    }
    if (rc == 0)
        t->exit_code = tt_xc_exit_code(&sum);
    return rc;
}

/* ---- diff ---- */

enum { D_BASE, D_NEW, D_STEPS, D_NEW_STEPS, D_SKIP, D_GATE, D_THR, D_OPTHR, D_MEMTHR, D_ALPHA,
       D_FDR, D_NOSTATS, D_ALLOW, D_FAILINC, D_CLOCK, D_TOP, D_MATCH, D_RENAME, D_RANK_AGG,
       D_RANK_MAP };
static const tc_opt diff_opts[] = {
    { "base", D_BASE, 1 },          { "new", D_NEW, 1 },
    { "steps", D_STEPS, 1 },        { "new-steps", D_NEW_STEPS, 1 },
    { "skip-first", D_SKIP, 1 },    { "gate", D_GATE, 1 },
    { "threshold", D_THR, 1 },      { "op-threshold", D_OPTHR, 1 },
    { "mem-threshold", D_MEMTHR, 1 }, { "alpha", D_ALPHA, 1 },
    { "fdr", D_FDR, 1 },            { "no-stats", D_NOSTATS, 0 },
    { "allow-env-mismatch", D_ALLOW, 0 }, { "fail-on-inconclusive", D_FAILINC, 0 },
    { "step-clock", D_CLOCK, 1 },   { "top", D_TOP, 1 },
    { "match", D_MATCH, 1 },        { "rename", D_RENAME, 1 },
    { "rank-agg", D_RANK_AGG, 1 },  { "rank-map", D_RANK_MAP, 1 },
    { NULL, 0, 0 },
};
static const char *const diff_writes[] = { "markdown", "json", "junit", "save-summary", NULL };

struct diff_args {
    tt_diff_options o;
    const char **base, **new_;
    size_t nb, nn;
    int64_t *rank_map;
};

static int add_input(const char ***v, size_t *n, const char *s)
{
    const char **p = realloc(*v, (*n + 1) * sizeof(*p));
    if (!p)
        return tt_error_set(TT_ENOMEM, "out of memory");
    p[(*n)++] = s;
    *v = p;
    return 0;
}

/* --rank-map 0:4,1:5 */
static int rank_map(tc *t, struct diff_args *x, const char *arg)
{
    const char *p = arg;
    size_t n = 0;
    while (*p) {
        char *end;
        long long a = strtoll(p, &end, 10), b;
        int64_t *m;
        if (end == p || *end != ':' || a < 0)
            return tc_usage(t, "bad --rank-map '%s' (want B:N,...)", arg);
        p = end + 1;
        b = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',') || b < 0)
            return tc_usage(t, "bad --rank-map '%s' (want B:N,...)", arg);
        if (!(m = realloc(x->rank_map, (n + 1) * 2 * sizeof(*m))))
            return tt_error_set(TT_ENOMEM, "out of memory");
        m[2 * n] = a;
        m[2 * n + 1] = b;
        x->rank_map = m;
        n++;
        p = *end ? end + 1 : end;
    }
    x->o.rank_map = x->rank_map;
    x->o.nrank_map = n;
    return 0;
}

/* the CLI's step range: N or A-B, no sign */
static int diff_range(tc *t, const char *arg, int64_t *lo, int64_t *hi)
{
    int rc;
    if (arg[0] == '-')
        return tc_usage(t, "bad step range '%s' (want N or A-B)", arg);
    if ((rc = tc_steps(t, arg, lo, hi)) < 0 && !strchr(arg, '-'))
        return tc_usage(t, "bad step range '%s' (want N or A-B)", arg);
    return rc;
}

static int pos_num(tc *t, const char *name, const char *arg, double max, double *v)
{
    char *end;
    double x = strtod(arg, &end);
    if (end == arg || *end || !(x >= 0) || x > max)
        return tc_usage(t, "bad --%s '%s'", name, arg);
    *v = x;
    return 0;
}

static int parse_gate(tc *t, const char *arg, unsigned *gate)
{
    static const char *const words[] = { "step", "memory", "ops", "kernels", "none" };
    unsigned g = 0;
    const char *p = arg;
    if (arg[0] == '+')
        g = TT_GATE_STEP | TT_GATE_MEMORY, p++;
    if (!*p)
        return tc_usage(t, "empty --gate (want step, memory, ops, kernels or none)");
    for (;;) {
        size_t len = strcspn(p, ",+");
        int k;
        for (k = 0; k < 5 && !(strlen(words[k]) == len && !strncmp(p, words[k], len)); k++)
            ;
        if (!len)
            return tc_usage(t, "an empty item in --gate '%s' (want step, memory, ops, kernels"
                               " or none)", arg);
        if (k == 5)
            return tc_usage(t, "unknown gate '%.*s' (want step, memory, ops, kernels or none)",
                            (int)(len > 64 ? 64 : len), p);
        if (k < 4)
            g |= 1u << k;
        if (!p[len])
            break;
        p += len + 1;
    }
    *gate = g;
    return 0;
}

static int diff_set(tc *t, void *ctx, int key, const char *arg)
{
    struct diff_args *x = ctx;
    static const int match[] = { TT_MATCH_FAMILY, TT_MATCH_NAME, TT_MATCH_OP, TT_MATCH_SHAPE };
    struct stat st;
    int64_t n;
    int rc;
    switch (key) {
    case D_BASE: return add_input(&x->base, &x->nb, arg);
    case D_NEW: return add_input(&x->new_, &x->nn, arg);
    case D_STEPS: return diff_range(t, arg, &x->o.steps_lo, &x->o.steps_hi);
    case D_NEW_STEPS: return diff_range(t, arg, &x->o.new_steps_lo, &x->o.new_steps_hi);
    case D_SKIP: return tc_i64(t, arg, 0, &x->o.skip_first, "--skip-first", "");
    case D_GATE: return parse_gate(t, arg, &x->o.gate);
    case D_THR: return pos_num(t, "threshold", arg, 1e6, &x->o.threshold);
    case D_OPTHR: return pos_num(t, "op-threshold", arg, 1e6, &x->o.op_threshold);
    case D_MEMTHR: return pos_num(t, "mem-threshold", arg, 1e6, &x->o.mem_threshold);
    case D_ALPHA: return pos_num(t, "alpha", arg, 1, &x->o.alpha);
    case D_FDR: return pos_num(t, "fdr", arg, 1, &x->o.fdr);
    case D_NOSTATS: x->o.no_stats = 1; return 0;
    case D_ALLOW: x->o.allow_env_mismatch = 1; return 0;
    case D_FAILINC: x->o.fail_on_inconclusive = 1; return 0;
    case D_CLOCK:
        if ((rc = tc_choose(t, "device|cpu", arg, "step clock")) < 0)
            return rc;
        x->o.step_clock = rc;
        return 0;
    case D_MATCH:
        if ((rc = tc_choose(t, "family|name|op|shape", arg, "match")) < 0)
            return rc;
        x->o.match = match[rc];
        return 0;
    case D_RENAME:
        if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
            return tc_usage(t, "--rename '%s' is a directory (want a file of 'REGEX =>"
                               " REPLACEMENT' lines)", arg);
        if (stat(arg, &st) == 0 && !S_ISREG(st.st_mode))
            return tc_usage(t, "--rename '%s' is not a regular file (it is read once for each"
                               " side)", arg);
        x->o.rename = arg;
        return 0;
    case D_RANK_AGG:
        if ((rc = tc_choose(t, "max|each", arg, "rank aggregation")) < 0)
            return rc;
        x->o.rank_each = rc;
        return 0;
    case D_RANK_MAP: return rank_map(t, x, arg);
    default:
        if ((rc = tc_i64(t, arg, 0, &n, "--top", "")) < 0)
            return rc;
        if (n > 100000)
            return tc_usage(t, "bad --top '%s'", arg);
        x->o.top = (int)n;
        return 0;
    }
}

static int diff_run(tc *t, struct diff_args *x)
{
    tt_diff_side *b = NULL, *n = NULL;
    tt_diff_result r;
    size_t k;
    int rc;
    for (k = 0; k < t->nin; k++) {
        /* BASE NEW; one input is BASE unless "base" gave one */
        int to_base = k == 0 && (t->nin == 2 || !x->nb);
        if ((rc = add_input(to_base ? &x->base : &x->new_, to_base ? &x->nb : &x->nn,
                            t->in[k])) < 0)
            return rc;
    }
    if (!x->nb || !x->nn)
        return tc_usage(t, "need BASE and NEW (or -b/-n)");
    if ((rc = tt_diff_side_load(x->base, x->nb, &x->o, 0, &b)) == 0 &&
        (rc = tt_diff_side_load(x->new_, x->nn, &x->o, 1, &n)) == 0)
        rc = tt_diff_compare(b, n, &x->o, &r);
    tt_diff_side_free(b);
    tt_diff_side_free(n);
    if (rc < 0)
        return rc;
    rc = tt_diff_write(&r, &x->o, TT_FORMAT_JSON, t->out);
    t->exit_code = r.exit_code;
    tt_diff_result_free(&r);
    return rc;
}

int tc_diff(tc *t)
{
    struct diff_args x;
    int rc;
    memset(&x, 0, sizeof(x));
    x.o = (tt_diff_options)TT_DIFF_OPTIONS_INIT;
    if ((rc = tc_parse(t, diff_opts, diff_writes, diff_set, &x)) == 0 &&
        (rc = tc_inputs(t, 0, 2, "need BASE and NEW (or -b/-n)")) == 0)
        rc = diff_run(t, &x);
    free(x.base);
    free(x.new_);
    free(x.rank_map);
    return rc;
}
