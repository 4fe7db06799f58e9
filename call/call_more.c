/*
 * call/call_more.c - tt_call's other commands of one input (breakdown,
 * queue, bandwidth, collectives, critical-path): the CLI's cli/cmd_<x>.c
 * with its option table keyed as the JSON object is.
 */
#define _GNU_SOURCE
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "call/call_internal.h"
#include "tracetool/analyze.h"
#include "tracetool/breakdown.h"
#include "tracetool/critpath.h"
#include "tracetool/store.h"
#include "tracetool/summary.h"

static int one_input(tc *t)
{
    return tc_inputs(t, 1, 1, "need exactly one input");
}

/* the options of queue, bandwidth and collectives: a flag, one choice, the
 * filters, --trace and --rank */
enum { S_FLAG, S_CHOICE, S_TRACE, S_RANK, S_TIME, S_NAME, S_UNDER, S_MAXQ };

struct simple {
    int *flag;
    int64_t *trace_id, *rank, *max_queue;
    tt_filter *filter;
    int *choice;
    const char *choices, *what;
};

static int simple_set(tc *t, void *ctx, int key, const char *arg)
{
    struct simple *s = ctx;
    int rc;
    if (tc_filter(t, key, S_TIME, S_NAME, S_UNDER, arg, s->filter, &rc))
        return rc;
    switch (key) {
    case S_FLAG: *s->flag = 1; return 0;
    case S_CHOICE:
        if ((rc = tc_choose(t, s->choices, arg, s->what)) < 0)
            return rc;
        *s->choice = rc;
        return 0;
    case S_TRACE: return tc_trace_id(t, arg, s->trace_id);
    case S_RANK: return tc_rank(t, arg, s->rank);
    default: return tc_i64(t, arg, 1, s->max_queue, "--max-queue", " (want a whole number >= 1)");
    }
}

#define SIMPLE_FILTERS                                                                     \
    { "trace", S_TRACE, 1 }, { "rank", S_RANK, 1 }, { "time-range", S_TIME, 1 },          \
        { "name", S_NAME, 1 }, { "under", S_UNDER, 1 }

/* ---- queue ---- */

static const tc_opt queue_opts[] = {
    { "series", S_FLAG, 0 }, { "max-queue", S_MAXQ, 1 }, SIMPLE_FILTERS, { NULL, 0, 0 },
};

static int queue_db(tc *t, tt_db *db, void *o)
{
    return tt_queue_db(db, o, t->out);
}

static int queue_file(tc *t, const char *path, void *o)
{
    return tt_queue_file(path, o, t->out);
}

int tc_queue(tc *t)
{
    tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
    struct simple s = { &o.series, &o.trace_id, &o.rank, &o.max_queue, &o.filter, NULL, NULL,
                        NULL };
    int rc;
    o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, queue_opts, NULL, simple_set, &s)) < 0 || (rc = one_input(t)) < 0)
        return rc;
    return tc_run_input(t, t->in[0], queue_db, queue_file, NULL, &o);
}

/* ---- bandwidth ---- */

static const tc_opt bw_opts[] = {
    { "series", S_FLAG, 0 }, SIMPLE_FILTERS, { NULL, 0, 0 },
};

static int bw_db(tc *t, tt_db *db, void *o)
{
    return tt_bandwidth_db(db, o, t->out);
}

static int bw_file(tc *t, const char *path, void *o)
{
    return tt_bandwidth_file(path, o, t->out);
}

int tc_bandwidth(tc *t)
{
    tt_bandwidth_options o = TT_BANDWIDTH_OPTIONS_INIT;
    struct simple s = { &o.series, &o.trace_id, &o.rank, NULL, &o.filter, NULL, NULL, NULL };
    int rc;
    o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, bw_opts, NULL, simple_set, &s)) < 0 || (rc = one_input(t)) < 0)
        return rc;
    return tc_run_input(t, t->in[0], bw_db, bw_file, NULL, &o);
}

/* ---- collectives ---- */

static const tc_opt coll_opts[] = {
    { "per-call", S_FLAG, 0 }, { "arrival", S_CHOICE, 1 }, SIMPLE_FILTERS, { NULL, 0, 0 },
};

static int coll_db(tc *t, tt_db *db, void *o)
{
    return tt_collectives_db(db, o, t->out);
}

static int coll_file(tc *t, const char *path, void *o)
{
    return tt_collectives_file(path, o, t->out);
}

int tc_collectives(tc *t)
{
    tt_coll_options o = TT_COLL_OPTIONS_INIT;
    static const int arrival[] = { TT_COLL_ARRIVE_GPU, TT_COLL_ARRIVE_CPU };
    int choice = -1, rc;
    struct simple s = { &o.per_call, &o.trace_id, &o.rank, NULL, &o.filter, &choice, "gpu|cpu",
                        "arrival" };
    o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, coll_opts, NULL, simple_set, &s)) < 0 || (rc = one_input(t)) < 0)
        return rc;
    if (choice >= 0)
        o.arrival = arrival[choice];
    return tc_run_input(t, t->in[0], coll_db, coll_file, NULL, &o);
}

/* ---- breakdown ---- */

enum { B_STEPS, B_RANK, B_TRACE, B_BY, B_KWAIT, B_ROWS, B_COMM, B_TIME, B_NAME, B_UNDER,
       B_KERNELS };
static const tc_opt bd_opts[] = {
    { "steps", B_STEPS, 1 },     { "time-range", B_TIME, 1 }, { "name", B_NAME, 1 },
    { "under", B_UNDER, 1 },     { "rank", B_RANK, 1 },       { "trace", B_TRACE, 1 },
    { "by", B_BY, 1 },           { "kernels", B_KERNELS, 0 }, { "kernel-wait", B_KWAIT, 1 },
    { "row-limit", B_ROWS, 1 },  { "top", B_ROWS, 1 },        { "comm-pattern", B_COMM, 1 },
    { NULL, 0, 0 },
};
static const char *const bd_writes[] = { "html", NULL };

struct bd_args {
    tt_bd_options o;
    const char **comm;
    size_t ncomm;
};

static int bd_set(tc *t, void *ctx, int key, const char *arg)
{
    struct bd_args *a = ctx;
    tt_bd_options *o = &a->o;
    static const int by[] = { TT_BD_BY_RANK, TT_BD_BY_STEP, TT_BD_BY_STREAM, TT_BD_BY_ANNOTATION };
    char err[160];
    const char **n;
    int rc;
    if (tc_filter(t, key, B_TIME, B_NAME, B_UNDER, arg, &o->filter, &rc))
        return rc;
    switch (key) {
    case B_STEPS: o->steps_set = 1; return tc_steps(t, arg, &o->step_from, &o->step_to);
    case B_RANK: return tc_rank(t, arg, &o->rank);
    case B_TRACE: return tc_trace_id(t, arg, &o->trace_id);
    case B_BY:
        if ((rc = tc_choose(t, "rank|step|stream|annotation", arg, "grouping")) < 0)
            return rc;
        o->by = by[rc];
        return 0;
    case B_KWAIT: return tc_i64(t, arg, 0, &o->kernel_wait_ns, "--kernel-wait", " (want ns, >= 0)");
    case B_ROWS: return tc_row_limit(t, arg, &o->row_limit);
    case B_KERNELS: o->annot_kernels = 1; return 0;
    default:
        if (!*arg)
            return tc_usage(t, "--comm-pattern needs a regular expression");
        if (tt_bd_comm_pattern_check(arg, err, sizeof(err)) < 0)
            return tc_usage(t, "bad --comm-pattern '%s': %s", arg, err);
        if (!(n = realloc(a->comm, (a->ncomm + 1) * sizeof(*n))))
            return tt_error_set(TT_ENOMEM, "out of memory");
        n[a->ncomm++] = arg;
        a->comm = n;
        o->comm_patterns = a->comm;
        o->ncomm_patterns = a->ncomm;
        return 0;
    }
}

static int bd_check(tc *t, const struct bd_args *a)
{
    const tt_bd_options *o = &a->o;
    if (o->by != TT_BD_BY_ANNOTATION && o->annot_kernels)
        return tc_usage(t, "--kernels needs --by annotation");
    if (o->by == TT_BD_BY_ANNOTATION && (o->steps_set || a->ncomm))
        return tc_usage(t, "--by annotation does not go with --%s",
                        o->steps_set ? "steps (--time-range does the same)" : "comm-pattern");
    return 0;
}

static int bd_run(tc *t, struct bd_args *a)
{
    const char *in = t->in[0];
    tt_bd_result res;
    int rc;
    if (tt_is_summary_file(in)) {
        tt_summary *s;
        if ((rc = tt_summary_load(in, &s)) < 0)
            return rc;
        rc = tt_breakdown_summary_result(s, &a->o, &res);
        tt_summary_free(s);
    } else if (tt_is_sqlite_file(in)) {
        tt_db *db;
        if ((rc = tt_db_open(&db, in, TT_DB_READONLY)) < 0)
            return rc;
        rc = tt_breakdown_db_result(db, &a->o, &res);
        tt_db_free(db);
    } else {
        rc = tt_breakdown_file_result(in, &a->o, &res);
    }
    if (rc < 0)
        return rc;
    rc = tt_breakdown_print(&res, &a->o, t->out);
    tt_bd_result_free(&res);
    return rc;
}

int tc_breakdown(tc *t)
{
    struct bd_args a = { TT_BD_OPTIONS_INIT, NULL, 0 };
    int rc;
    a.o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, bd_opts, bd_writes, bd_set, &a)) == 0 && (rc = one_input(t)) == 0 &&
        (rc = bd_check(t, &a)) == 0)
        rc = bd_run(t, &a);
    free(a.comm);
    return rc;
}

/* ---- critical-path ---- */

enum { C_STEP, C_TRACE, C_RANK, C_TIME, C_DATA_LOAD, C_NAME, C_UNDER, C_INSTANCE };
static const tc_opt cp_opts[] = {
    { "step", C_STEP, 1 },   { "rank", C_RANK, 1 },   { "trace", C_TRACE, 1 },
    { "time-range", C_TIME, 1 }, { "name", C_NAME, 1 }, { "under", C_UNDER, 1 },
    { "instance", C_INSTANCE, 1 }, { "data-load", C_DATA_LOAD, 1 }, { NULL, 0, 0 },
};
static const char *const cp_writes[] = { "overlay", NULL };

struct cp_args {
    tt_cp_options o;
    const char **load;
    size_t nload;
    int instance_set;
};

static int cp_set(tc *t, void *ctx, int key, const char *arg)
{
    struct cp_args *x = ctx;
    tt_cp_options *o = &x->o;
    const char **more;
    regex_t re;
    int rc;
    if (tc_filter(t, key, C_TIME, C_NAME, C_UNDER, arg, &o->filter, &rc))
        return rc;
    switch (key) {
    case C_STEP: o->step_set = 1; return tc_i64(t, arg, 0, &o->step, "step", " (want N >= 0)");
    case C_TRACE: return tc_trace_id(t, arg, &o->trace_id);
    case C_RANK: return tc_rank(t, arg, &o->rank);
    case C_INSTANCE:
        x->instance_set = 1;
        if (arg[0] == '-' || tc_steps(t, arg, &o->instance_from, &o->instance_to) < 0)
            return tc_usage(t, "bad --instance '%s' (want K or A-B, 0 <= A <= B)", arg);
        return 0;
    default:
        if (!(more = realloc(x->load, (x->nload + 1) * sizeof(*more))))
            return tt_error_set(TT_ENOMEM, "out of memory");
        more[x->nload++] = arg;
        x->load = more;
        if ((rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB)) != 0) {
            char msg[160];
            regerror(rc, &re, msg, sizeof(msg));
            return tc_usage(t, "bad --data-load pattern '%s': %s", arg, msg);
        }
        regfree(&re);
        return 0;
    }
}

int tc_critpath(tc *t)
{
    struct cp_args x;
    int rc;
    memset(&x, 0, sizeof(x));
    x.o = (tt_cp_options)TT_CP_OPTIONS_INIT;
    x.o.format = TT_FORMAT_JSON;
    if ((rc = tc_parse(t, cp_opts, cp_writes, cp_set, &x)) == 0 && (rc = one_input(t)) == 0) {
        x.o.data_load = x.load;
        x.o.ndata_load = x.nload;
        if (x.instance_set && !x.o.filter.under)
            rc = tc_usage(t, "--instance needs --under OP");
        else if (x.o.filter.under && x.o.step_set)
            rc = tc_usage(t, "--step and --under both choose the window (--under "
                             "'ProfilerStep#N' is --step N)");
        else if (tt_is_summary_file(t->in[0]))
            rc = tc_refuse_summaries(t, t->in, 1);
        else if (tt_is_sqlite_file(t->in[0])) {
            tt_db *db;
            if ((rc = tt_db_open_input(&db, t->in[0])) == 0) {
                rc = tt_critpath_db(db, &x.o, t->out);
                tt_db_free(db);
            }
        } else {
            rc = tt_critpath_file(t->in[0], &x.o, t->out);
        }
    }
    free(x.load);
    return rc;
}
