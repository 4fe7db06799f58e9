/*
 * call/call_cmds.c - tt_call's commands of one input (info, averages,
 * kernels, queue, bandwidth, collectives): each the CLI's cli/cmd_<x>.c with
 * its option table keyed as the JSON object is, printing JSON into t->out.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "call/call_internal.h"
#include "tracetool/analyze.h"
#include "tracetool/summary.h"

/* the one-input commands' operand check (the CLI's words) */
static int one_input(tc *t)
{
    return tc_inputs(t, 1, 1, "need exactly one input");
}

/* ---- info ---- */

enum { I_TRACE, I_ROWS };
static const tc_opt info_opts[] = {
    { "trace", I_TRACE, 1 }, { "row-limit", I_ROWS, 1 }, { NULL, 0, 0 },
};

static int info_set(tc *t, void *ctx, int key, const char *arg)
{
    tt_info_options *o = ctx;
    return key == I_TRACE ? tc_trace_id(t, arg, &o->trace_id) : tc_row_limit(t, arg, &o->row_limit);
}

static int info_db(tc *t, tt_db *db, void *o)
{
    return tt_info_db(db, o, t->out);
}

static int info_file(tc *t, const char *path, void *o)
{
    return tt_info_file(path, o, t->out);
}

static int info_sum(tc *t, tt_summary *s, void *o)
{
    return tt_info_summary_print(s, o, t->out);
}

int tc_info(tc *t)
{
    tt_info_options o = TT_INFO_OPTIONS_INIT;
    int rc;
    o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, info_opts, NULL, info_set, &o)) < 0 || (rc = one_input(t)) < 0)
        return rc;
    return tc_run_input(t, t->in[0], info_db, info_file, info_sum, &o);
}

/* ---- averages ---- */

enum { A_SHAPE, A_STACK, A_METRIC, A_SORT, A_ROWS, A_TOP, A_NOANNOT, A_STEPS, A_TRACE, A_RANK,
       A_TIME, A_NAME, A_UNDER };
static const tc_opt avg_opts[] = {
    { "group-by-shape", A_SHAPE, 0 }, { "group-by-stack", A_STACK, 1 },
    { "stacks-metric", A_METRIC, 1 }, { "sort-by", A_SORT, 1 },
    { "row-limit", A_ROWS, 1 },       { "top", A_ROWS, 1 },
    { "top-level-only", A_TOP, 0 },   { "no-gpu-annotations", A_NOANNOT, 0 },
    { "steps", A_STEPS, 1 },          { "trace", A_TRACE, 1 },
    { "rank", A_RANK, 1 },            { "time-range", A_TIME, 1 },
    { "name", A_NAME, 1 },            { "under", A_UNDER, 1 },
    { NULL, 0, 0 },
};
static const char *const avg_writes[] = { "stacks", NULL };

static int avg_set(tc *t, void *ctx, int key, const char *arg)
{
    tt_avg_options *o = ctx;
    int rc;
    if (tc_filter(t, key, A_TIME, A_NAME, A_UNDER, arg, &o->filter, &rc))
        return rc;
    switch (key) {
    case A_SHAPE: o->group_by_shape = 1; return 0;
    case A_METRIC: /* checked, then refused: --stacks is not available here */
        if ((rc = tc_choose(t, "cpu|device", arg, "stacks metric")) < 0)
            return rc;
        return tc_usage(t, "--stacks-metric needs --stacks OUT");
    case A_STACK: return tc_i64(t, arg, 1, &o->group_by_stack, "stack depth", "");
    case A_SORT:
        if (!tt_avg_sort_key_valid(arg))
            return tc_usage(t, "unknown sort key '%s'", arg);
        o->sort_by = arg;
        return 0;
    case A_ROWS: return tc_row_limit(t, arg, &o->row_limit);
    case A_TOP: o->top_level_only = 1; return 0;
    case A_NOANNOT: o->hide_gpu_annotations = 1; return 0;
    case A_STEPS: o->steps_set = 1; return tc_steps(t, arg, &o->step_from, &o->step_to);
    case A_TRACE: return tc_trace_id(t, arg, &o->trace_id);
    default: return tc_rank(t, arg, &o->rank);
    }
}

static int avg_print(tc *t, tt_avg_result *res, const tt_avg_options *o)
{
    int rc = tt_averages_print(res, o, t->out);
    tt_avg_result_free(res);
    return rc;
}

static int avg_db(tc *t, tt_db *db, void *o)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_db(db, o, &res);
    return rc < 0 ? rc : avg_print(t, res, o);
}

static int avg_file(tc *t, const char *path, void *o)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_file(path, o, &res);
    return rc < 0 ? rc : avg_print(t, res, o);
}

static int avg_sum(tc *t, tt_summary *s, void *o)
{
    tt_avg_result *res;
    int rc = tt_averages_summary_result(s, o, &res);
    return rc < 0 ? rc : avg_print(t, res, o);
}

int tc_averages(tc *t)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    int rc;
    o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, avg_opts, avg_writes, avg_set, &o)) < 0 || (rc = one_input(t)) < 0)
        return rc;
    return tc_run_input(t, t->in[0], avg_db, avg_file, avg_sum, &o);
}

/* ---- kernels ---- */

enum { K_BY, K_ONLY, K_ROWS, K_TRACE, K_RANK, K_STEPS, K_TIME, K_NAME, K_UNDER, K_SEQ,
       K_UNDER_OP };
static const tc_opt kern_opts[] = {
    { "by", K_BY, 1 },           { "only", K_ONLY, 1 },   { "row-limit", K_ROWS, 1 },
    { "top", K_ROWS, 1 },        { "steps", K_STEPS, 1 }, { "time-range", K_TIME, 1 },
    { "name", K_NAME, 1 },       { "under", K_UNDER, 1 }, { "trace", K_TRACE, 1 },
    { "rank", K_RANK, 1 },       { "sequences", K_SEQ, 1 }, { "under-op", K_UNDER_OP, 1 },
    { NULL, 0, 0 },
};

struct kern_args {
    tt_kern_options o;
    int seq_given, by_given;
};

static int kern_set(tc *t, void *ctx, int key, const char *arg)
{
    struct kern_args *a = ctx;
    tt_kern_options *o = &a->o;
    static const int by[] = { TT_KERN_BY_NAME, TT_KERN_BY_LAUNCH, TT_KERN_BY_STREAM,
                              TT_KERN_BY_OP, TT_KERN_BY_RUNTIME, TT_KERN_BY_MEMSIZE,
                              TT_KERN_BY_ACTIVITY };
    static const int only[] = { TT_KERN_KERNELS, TT_KERN_MEMORY };
    int rc;
    if (tc_filter(t, key, K_TIME, K_NAME, K_UNDER, arg, &o->filter, &rc))
        return rc;
    switch (key) {
    case K_BY:
        if ((rc = tc_choose(t, "name|launch|stream|op|runtime|memsize|activity", arg,
                            "grouping")) < 0)
            return rc;
        o->by = by[rc];
        a->by_given = 1;
        return 0;
    case K_ONLY:
        if ((rc = tc_choose(t, "kernels|memory", arg, "summary")) < 0)
            return rc;
        o->what = only[rc];
        return 0;
    case K_ROWS: return tc_row_limit(t, arg, &o->row_limit);
    case K_TRACE: return tc_trace_id(t, arg, &o->trace_id);
    case K_RANK: return tc_rank(t, arg, &o->rank);
    case K_STEPS: o->steps_set = 1; return tc_steps(t, arg, &o->step_from, &o->step_to);
    case K_SEQ:
        a->seq_given = 1;
        return tc_i64(t, arg, 1, &o->seq_len, "--sequences", " (want N >= 1)");
    default: o->seq_op = arg; return 0;
    }
}

/* what goes with what (cli/cmd_kernels.c's checks, in its order) */
static int kern_check(tc *t, struct kern_args *a)
{
    tt_kern_options *o = &a->o;
    if ((o->by == TT_KERN_BY_RUNTIME && o->what != TT_KERN_BOTH) ||
        (o->by == TT_KERN_BY_MEMSIZE && o->what == TT_KERN_KERNELS))
        return tc_usage(t, "--only %s does not go with --by %s",
                        o->what == TT_KERN_KERNELS ? "kernels" : "memory",
                        o->by == TT_KERN_BY_RUNTIME ? "runtime" : "memsize");
    if (a->seq_given && a->by_given)
        return tc_usage(t, "--sequences does not go with --by");
    if (a->seq_given)
        o->by = TT_KERN_BY_SEQUENCE;
    if (o->by != TT_KERN_BY_SEQUENCE && o->seq_op)
        return tc_usage(t, "--under-op needs --sequences N");
    if (o->by != TT_KERN_BY_SEQUENCE)
        return 0;
    if (o->seq_op && !*o->seq_op)
        return tc_usage(t, "--under-op needs a name");
    if (!o->seq_op && o->seq_len > TT_KERN_SEQ_MAX)
        return tc_usage(t, "--sequences %" PRId64 " is too long on streams (at most %d)",
                        o->seq_len, TT_KERN_SEQ_MAX);
    if (o->what != TT_KERN_BOTH || o->steps_set)
        return tc_usage(t, "--sequences does not go with --%s (use --time-range)",
                        o->steps_set ? "steps" : "only");
    return 0;
}

static int kern_db(tc *t, tt_db *db, void *o)
{
    return tt_kernels_db(db, o, t->out);
}

static int kern_file(tc *t, const char *path, void *o)
{
    return tt_kernels_file(path, o, t->out);
}

static int kern_sum(tc *t, tt_summary *s, void *o)
{
    tt_kern_result res;
    int rc = tt_kernels_summary_result(s, o, &res);
    if (rc < 0)
        return rc;
    rc = tt_kern_result_print(&res, o, t->out);
    tt_kern_result_free(&res);
    return rc;
}

int tc_kernels(tc *t)
{
    struct kern_args a = { TT_KERN_OPTIONS_INIT, 0, 0 };
    int rc;
    a.o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, kern_opts, NULL, kern_set, &a)) < 0 || (rc = one_input(t)) < 0 ||
        (rc = kern_check(t, &a)) < 0)
        return rc;
    return tc_run_input(t, t->in[0], kern_db, kern_file, kern_sum, &a.o);
}
