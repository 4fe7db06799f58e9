/*
 * cli/cmd_kernels.c - `tracetool kernels INPUT|DB`
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/summary.h"

enum { O_BY, O_ONLY, O_ROWS, O_TRACE, O_RANK, O_FORMAT, O_STEPS, O_TIME, O_NAME, O_UNDER, O_SEQ,
       O_UNDER_OP };

static const struct cli_opt opts[] = {
    { "by", O_BY, "name|launch|stream|op|runtime|memsize|activity",
      "group kernels by name (default), by name plus\n"
      "grid/block, by device and stream, or by the CPU\nop that launched them; or instead:\n"
      "runtime: the CUDA/HIP runtime calls by name\n(cuda_api_sum); memsize: memcpy/memset "
      "sizes by\nkind (cuda_gpu_mem_size_sum); activity: one row\nper kernel, memcpy and memset "
      "by start\n(cuda_gpu_trace)", 0 },
    { "only", O_ONLY, "kernels|memory", "print only one of the two summaries (--by\n"
      "activity: only those activities)", 0 },
    { "row-limit", O_ROWS, "N", "rows per summary, or activities per trace\n"
      "(default -1 = all)", 0 },
    { "top", O_ROWS, "N", "the same as --row-limit N", 0 },
    { "steps", O_STEPS, "N|A-B", "only what was launched in ProfilerStep#N\n"
      "(#A..#B): an activity by its runtime call's\nstart, as breakdown --steps", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "only the kernels, memcpys and memsets (--by\nruntime: runtime calls) whose "
                    "name contains\na match of the POSIX extended regex (--sequences:\n"
                    "runs of those only)",
                    "only what was launched under an op whose whole\nname matches the regex "
                    "(its runtime call on\nthe op's thread, inside it)"),
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    { "rank", O_RANK, "R", "only that rank", 0 },
    { "sequences", O_SEQ, "N", "instead: the most frequent runs of N consecutive\n"
      "GPU activities on a stream (fusion candidates),\nwith their count, GPU time, the "
      "CPU time of their\nlaunches and the ops that launched them", 0 },
    { "under-op", O_UNDER_OP, "NAME", "with --sequences N: HTA's frequent CUDA kernel\n"
      "sequences: under each outermost op whose name\ncontains NAME, the activities it "
      "launched (at\nleast N), counted per sequence", 0 },
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "kernels", "INPUT|DB",
    "GPU kernel summary in the shape of Nsight Systems' cuda_gpu_kern_sum: Time %,\n"
    "Total Time, Instances, Avg, Med, Min, Max and StdDev (sample) in ns, per group,\n"
    "largest total first; then the memcpy/memset summary by kind with bytes and\n"
    "bandwidth. --by runtime, memsize and activity give Nsight's cuda_api_sum,\n"
    "cuda_gpu_mem_size_sum and cuda_gpu_trace instead. INPUT is a trace file, a\n"
    "directory of per-rank traces or a database made by 'tracetool ingest'; a\n"
    "summary (tracetool summarize) prints what its traces' database prints\n"
    "(not --by activity, --sequences, --steps or the filters).",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.",
    1, 1, "need exactly one input",
};

static int seq_given, by_given; /* --sequences, --by */

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_kern_options *o = ctx;
    static const int by[] = { TT_KERN_BY_NAME, TT_KERN_BY_LAUNCH, TT_KERN_BY_STREAM,
                              TT_KERN_BY_OP, TT_KERN_BY_RUNTIME, TT_KERN_BY_MEMSIZE,
                              TT_KERN_BY_ACTIVITY };
    static const int only[] = { TT_KERN_KERNELS, TT_KERN_MEMORY };
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_BY:
        o->by = by[cli_choose(c, cli_opt_of(c, O_BY), arg, "grouping")];
        by_given = 1;
        break;
    case O_ONLY: o->what = only[cli_choose(c, cli_opt_of(c, O_ONLY), arg, "summary")]; break;
    case O_ROWS: o->row_limit = opt_row_limit(c, arg); break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    case O_STEPS:
        opt_steps(c, arg, &o->step_from, &o->step_to);
        o->steps_set = 1;
        break;
    case O_SEQ:
        if (parse_i64(arg, &o->seq_len) < 0 || o->seq_len < 1)
            cli_usage_error(c, "bad --sequences '%s' (want N >= 1)", arg);
        seq_given = 1;
        break;
    case O_UNDER_OP: o->seq_op = arg; break;
    default: o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg); break;
    }
}

/* --sequences: what goes with it */
static void check_sequences(tt_kern_options *o)
{
    if (seq_given && by_given)
        cli_usage_error(&cmd, "--sequences does not go with --by");
    if (seq_given)
        o->by = TT_KERN_BY_SEQUENCE;
    if (o->by != TT_KERN_BY_SEQUENCE && o->seq_op)
        cli_usage_error(&cmd, "--under-op needs --sequences N");
    if (o->by != TT_KERN_BY_SEQUENCE)
        return;
    if (o->seq_op && !*o->seq_op)
        cli_usage_error(&cmd, "--under-op needs a name");
    if (!o->seq_op && o->seq_len > TT_KERN_SEQ_MAX)
        cli_usage_error(&cmd, "--sequences %" PRId64 " is too long on streams (at most %d)",
                        o->seq_len, TT_KERN_SEQ_MAX);
    if (o->what != TT_KERN_BOTH || o->steps_set)
        cli_usage_error(&cmd, "--sequences does not go with --%s (use --time-range)",
                        o->steps_set ? "steps" : "only");
}

static int on_db(struct tt_db *db, void *o)
{
    return tt_kernels_db(db, o, stdout);
}

/* a trace file or a directory of them, --trace and --rank included: read
 * straight from the files, no database */
static int on_file(const char *path, void *o)
{
    return tt_kernels_file(path, o, stdout);
}

/* a summary (tracetool summarize): what its traces' database prints */
static int on_sum(tt_summary *s, void *o)
{
    tt_kern_result res;
    int rc = tt_kernels_summary_result(s, o, &res);
    if (rc < 0)
        return rc;
    rc = tt_kern_result_print(&res, o, stdout);
    tt_kern_result_free(&res);
    return rc;
}

int cmd_kernels(int argc, char **argv)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    if ((o.by == TT_KERN_BY_RUNTIME && o.what != TT_KERN_BOTH) ||
        (o.by == TT_KERN_BY_MEMSIZE && o.what == TT_KERN_KERNELS))
        cli_usage_error(&cmd, "--only %s does not go with --by %s",
                        o.what == TT_KERN_KERNELS ? "kernels" : "memory",
                        o.by == TT_KERN_BY_RUNTIME ? "runtime" : "memsize");
    check_sequences(&o);
    return run_on_input_sum(argv[first], on_db, on_file, on_sum, &o);
}
