/*
 * cli/cmd_averages.c - `tracetool averages INPUT|DB`
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/summary.h"

enum {
    O_SHAPE, O_STACK, O_STACKS, O_METRIC, O_SORT, O_ROWS, O_TOP, O_NOANNOT, O_STEPS, O_TRACE,
    O_RANK, O_FORMAT, O_TIME, O_NAME, O_UNDER
};

static const struct cli_opt opts[] = {
    { "group-by-shape", O_SHAPE, NULL, "key_averages(group_by_input_shape=True)", 0 },
    { "group-by-stack", O_STACK, "N", "key_averages(group_by_stack_n=N): an op's Python stack\n"
      "is its \"Call stack\" arg, else the python_function events\naround it (traces taken with "
      "with_stack=True);\nadds torch's Source Location column", 0 },
    { "stacks", O_STACKS, "OUT", "also write the collapsed stacks to OUT, one line per\n"
      "stack and op: \"frame;...;op value\" (flamegraph.pl,\nspeedscope; torch's export_stacks, "
      "summed)", 0 },
    { "stacks-metric", O_METRIC, "cpu|device", "the value of --stacks: self CPU time (default) or\n"
      "the op's own device time, in us (torch's metrics\nself_cpu_time_total, self_cuda_time_total)",
      0 },
    { "sort-by", O_SORT, "KEY", "self_cpu_time_total, cpu_time_total, cpu_time,\n"
      "self_cuda_time_total, cuda_time_total, cuda_time,\ncpu_memory_usage, self_cpu_memory_usage,\n"
      "cuda_memory_usage, self_cuda_memory_usage, count\n(device_* aliases accepted); default: "
      "first-occurrence\norder, as torch's table(sort_by=None)", 0 },
    { "row-limit", O_ROWS, "N", "rows to print (default 100, -1 = all)", 0 },
    { "top", O_ROWS, "N", "the same as --row-limit N", 0 },
    { "top-level-only", O_TOP, NULL, "only ops without a parent (top_level_events_only)", 0 },
    { "no-gpu-annotations", O_NOANNOT, NULL, "leave out the rows of GPU user annotations (their\n"
      "Self CUDA % is against a total without them)", 0 },
    { "steps", O_STEPS, "N|A-B", "only events starting inside ProfilerStep#N\n"
      "(or #A..#B); a warning when that leaves nothing", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "count only the events whose name contains a\nmatch of the POSIX extended "
                    "regex; each keeps\nits numbers (self time net of every child)",
                    "count only the ops, runtime calls and [memory]\nevents inside an op whose "
                    "whole name matches\nthe regex (the op too), on its thread, and the\nGPU "
                    "activities they launched"),
    { "trace", O_TRACE, "ID", "only that trace of a database", 0 },
    { "rank", O_RANK, "R", "only that rank of a database", 0 },
    { "format", O_FORMAT, "table|csv|json|markdown",
      "table (torch's layout, default), csv, json, markdown", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "averages", "INPUT|DB",
    "Torch's prof.key_averages().table() recomputed from a trace on disk: which\n"
    "events count, ProfilerStep#N -> ProfilerStep*, the per-thread tree with torch's\n"
    "containment rule, the same-name single-child collapse, self and total CPU time,\n"
    "device time of the kernels/memcpy/memset each op launched, CPU/CUDA memory from\n"
    "[memory] events, and the table layout character for character.\n"
    "INPUT is a trace file (streamed, or read into a temporary database when it needs\n"
    "one) or a database made by 'tracetool ingest' (every Chrome/Kineto trace in it,\n"
    "one table each).",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.",
    1, 1, "need exactly one input",
};

/* the option of a key (the table holds aliases: its index is not the key) */
static const struct cli_opt *opt_of(int key)
{
    const struct cli_opt *o = opts;
    while (o->name && o->key != key)
        o++;
    return o;
}

struct args {
    tt_avg_options o;
    const char *stacks; /* --stacks OUT */
    int metric;         /* TT_AVG_STACKS_SELF_* */
    int metric_set;
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct args *a = ctx;
    tt_avg_options *o = &a->o;
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_SHAPE: o->group_by_shape = 1; break;
    case O_STACKS:
        if (!*arg || !strcmp(arg, "-"))
            cli_usage_error(c, "--stacks needs a file name (standard output has the table)");
        a->stacks = arg;
        o->collect_stacks = 1;
        break;
    case O_METRIC:
        a->metric = cli_choose(c, opt_of(O_METRIC), arg, "stacks metric") == 1
                        ? TT_AVG_STACKS_SELF_DEVICE : TT_AVG_STACKS_SELF_CPU;
        a->metric_set = 1;
        break;
    case O_STACK:
        if (parse_i64(arg, &o->group_by_stack) < 0 || o->group_by_stack < 1)
            cli_usage_error(c, "bad stack depth '%s'", arg);
        break;
    case O_SORT:
        if (!tt_avg_sort_key_valid(arg))
            cli_usage_error(c, "unknown sort key '%s'", arg);
        o->sort_by = arg;
        break;
    case O_ROWS: o->row_limit = opt_row_limit(c, arg); break;
    case O_TOP: o->top_level_only = 1; break;
    case O_NOANNOT: o->hide_gpu_annotations = 1; break;
    case O_STEPS: opt_steps(c, arg, &o->step_from, &o->step_to), o->steps_set = 1; break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    default: o->format = opt_format(c, opt_of(O_FORMAT), arg); break;
    }
}

/* stacks asked for and a trace without any: said once per trace on stderr */
static void warn_no_stacks(const tt_avg_result *res, const tt_avg_options *o)
{
    size_t i;
    const char *opt = o->group_by_stack > 0 ? "--group-by-stack" : "--stacks";
    for (i = 0; i < res->ntraces; i++) {
        const tt_avg_trace *t = &res->traces[i];
        char which[64] = "the trace";
        if (t->stack_source)
            continue;
        if (res->ntraces > 1 && t->have_rank)
            snprintf(which, sizeof(which), "trace %" PRId64 " (rank %" PRId64 ")", t->trace_id,
                     t->rank);
        else if (res->ntraces > 1)
            snprintf(which, sizeof(which), "trace %" PRId64, t->trace_id);
        fprintf(stderr, "tracetool averages: warning: %s: %s has no Python stacks (no \"Call"
                        " stack\" args, no python_function events; record with"
                        " with_stack=True)\n", opt, which);
    }
}

/* a filter that leaves nothing is said on stderr (the run still succeeds) */
static int print_result(tt_avg_result *res, const struct args *a)
{
    const tt_avg_options *o = &a->o;
    size_t i, rows = 0;
    int rc;
    for (i = 0; i < res->ntraces; i++)
        rows += res->traces[i].nrows;
    rc = tt_averages_print(res, o, stdout);
    if (rc == 0 && a->stacks)
        rc = tt_averages_write_stacks(res, a->metric, a->stacks);
    if (rc == 0 && (o->group_by_stack > 0 || a->stacks)) {
        fflush(stdout);
        warn_no_stacks(res, o);
    }
    if (rc == 0 && rows == 0 && o->steps_set) {
        char want[64], have[160] = "";
        size_t len = 0;
        fflush(stdout);
        if (o->step_from == o->step_to)
            snprintf(want, sizeof(want), "%" PRId64, o->step_from);
        else
            snprintf(want, sizeof(want), "%" PRId64 "-%" PRId64, o->step_from, o->step_to);
        /* the steps there are, so the next try can hit one */
        for (i = 0; i < res->ntraces && len + 48 < sizeof(have); i++) {
            const tt_avg_trace *t = &res->traces[i];
            int k = t->steps_n == 0 ? snprintf(have + len, sizeof(have) - len, "%sno ProfilerStep#N",
                                               i ? "; " : "")
                    : t->steps_n == 1 ? snprintf(have + len, sizeof(have) - len,
                                                 "%sProfilerStep#%" PRId64, i ? "; " : "", t->steps_lo)
                                      : snprintf(have + len, sizeof(have) - len,
                                                 "%s%" PRId64 " steps, ProfilerStep#%" PRId64
                                                 "..#%" PRId64, i ? "; " : "", t->steps_n,
                                                 t->steps_lo, t->steps_hi);
            len += k > 0 ? (size_t)k : 0;
        }
        fprintf(stderr, "tracetool averages: warning: --steps %s selects no event; the trace%s"
                        " %s %s%s\n", want, res->ntraces > 1 ? "s" : "",
                res->ntraces > 1 ? "have" : "has", have, i < res->ntraces ? "; ..." : "");
    } else if (rc == 0 && rows == 0 && tt_filter_active(&o->filter)) {
        fflush(stdout);
        fputs("tracetool averages: warning: no event passes --name/--under/--time-range\n",
              stderr);
    }
    tt_avg_result_free(res);
    return rc;
}

static int on_db(struct tt_db *db, void *ctx)
{
    struct args *a = ctx;
    tt_avg_result *res;
    int rc = tt_averages_compute_db(db, &a->o, &res);
    return rc < 0 ? rc : print_result(res, a);
}

static int on_file(const char *path, void *ctx)
{
    struct args *a = ctx;
    tt_avg_result *res;
    int rc = tt_averages_compute_file(path, &a->o, &res);
    return rc < 0 ? rc : print_result(res, a);
}

/* a summary (tracetool summarize): what the database of its traces prints */
static int on_sum(tt_summary *s, void *ctx)
{
    struct args *a = ctx;
    tt_avg_result *res;
    int rc = tt_averages_summary_result(s, &a->o, &res);
    return rc < 0 ? rc : print_result(res, a);
}

int cmd_averages(int argc, char **argv)
{
    struct args a = { TT_AVG_OPTIONS_INIT, NULL, TT_AVG_STACKS_SELF_CPU, 0 };
    int first = cli_parse(&cmd, argc, argv, set, &a);
    const char *in;
    if (!first)
        return 0;
    in = argv[first];
    if (a.metric_set && !a.stacks)
        cli_usage_error(&cmd, "--stacks-metric needs --stacks OUT");
    /* OUT is never an input (nor a trace of an input directory) */
    check_outputs_not_inputs(&cmd, a.stacks, &in, 1);
    return run_on_input_sum(in, on_db, on_file, on_sum, &a);
}
