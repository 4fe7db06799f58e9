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

enum { O_SHAPE, O_STACK, O_SORT, O_ROWS, O_TOP, O_NOANNOT, O_STEPS, O_TRACE, O_RANK, O_FORMAT };

static const struct cli_opt opts[] = {
    { "group-by-shape", O_SHAPE, NULL, "key_averages(group_by_input_shape=True)", 0 },
    { "group-by-stack", O_STACK, "N", "key_averages(group_by_stack_n=N), from the events'\n"
      "\"Call stack\" (traces taken with with_stack=True);\nadds torch's Source Location column", 0 },
    { "sort-by", O_SORT, "KEY", "self_cpu_time_total, cpu_time_total, cpu_time,\n"
      "self_cuda_time_total, cuda_time_total, cuda_time,\ncpu_memory_usage, self_cpu_memory_usage,\n"
      "cuda_memory_usage, self_cuda_memory_usage, count\n(device_* aliases accepted); default: "
      "first-occurrence\norder, as torch's table(sort_by=None)", 0 },
    { "row-limit", O_ROWS, "N", "rows to print (default 100, -1 = all)", 0 },
    { "top-level-only", O_TOP, NULL, "only ops without a parent (top_level_events_only)", 0 },
    { "no-gpu-annotations", O_NOANNOT, NULL, "leave out the rows of GPU user annotations (their\n"
      "Self CUDA % is against a total without them)", 0 },
    { "steps", O_STEPS, "N|A-B", "only events starting inside ProfilerStep#N\n"
      "(or #A..#B); a warning when that leaves nothing", 0 },
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

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_avg_options *o = ctx;
    switch (key) {
    case O_SHAPE: o->group_by_shape = 1; break;
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
    default: o->format = opt_format(c, &opts[O_FORMAT], arg); break;
    }
}

/* a filter that leaves nothing is said on stderr (the run still succeeds) */
static int print_result(tt_avg_result *res, const tt_avg_options *o)
{
    size_t i, rows = 0;
    int rc;
    for (i = 0; i < res->ntraces; i++)
        rows += res->traces[i].nrows;
    rc = tt_averages_print(res, o, stdout);
    if (rc == 0 && rows == 0 && o->steps_set) {
        fflush(stdout);
        if (o->step_from == o->step_to)
            fprintf(stderr, "tracetool averages: warning: --steps %" PRId64 " selects no event"
                            " (no ProfilerStep#%" PRId64 " in the trace?)\n", o->step_from,
                    o->step_from);
        else
            fprintf(stderr, "tracetool averages: warning: --steps %" PRId64 "-%" PRId64
                            " selects no event (no ProfilerStep#%" PRId64 "..#%" PRId64
                            " in the trace?)\n", o->step_from, o->step_to, o->step_from,
                    o->step_to);
    }
    tt_avg_result_free(res);
    return rc;
}

static int on_db(struct tt_db *db, void *o)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_db(db, o, &res);
    return rc < 0 ? rc : print_result(res, o);
}

static int on_file(const char *path, void *o)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_file(path, o, &res);
    return rc < 0 ? rc : print_result(res, o);
}

int cmd_averages(int argc, char **argv)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    return run_on_input(&cmd, argv[first], o.trace_id, o.rank, on_db, on_file, &o);
}
