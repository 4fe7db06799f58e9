/*
 * cli/cmd_queue.c - `tracetool queue INPUT|DB`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/counters.h"

enum { O_SERIES, O_MAXQ, O_TRACE, O_RANK, O_TIME, O_NAME, O_UNDER, O_FORMAT };

static const struct cli_opt opts[] = {
    { "series", O_SERIES, NULL, "print every change of each stream's queue\n"
      "length (rank, device, stream, ts, queue_length)\ninstead of the summary", 0 },
    { "max-queue", O_MAXQ, "N", "blocked_ns: the time a stream's queue held at\n"
      "least N launches (default 1024, CUDA's launch\nqueue)", 0 },
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    { "rank", O_RANK, "R", "only that rank", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "only the kernels, memcpys and memsets whose name\ncontains a match of "
                    "the POSIX extended regex,\nwith their launches: the queue of those alone",
                    "only what was launched under an op whose whole\nname matches the regex "
                    "(its runtime call on\nthe op's thread, inside it)"),
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "queue", "INPUT|DB",
    "The launch queue of each GPU stream, as HTA's queue length: +1 at the start of\n"
    "each runtime call that launches a kernel, memcpy or memset (cudaLaunchKernel,\n"
    "cudaMemcpyAsync, hipLaunchKernel, ...), -1 when that activity starts on its\n"
    "stream (joined by correlation); launches first at equal times. Per rank, device\n"
    "and stream: count, mean, min and max of the queue length after each change (not\n"
    "weighted by time, as HTA's), and the time the queue held at least --max-queue\n"
    "launches (blocked_ns). INPUT is a trace file, a directory of per-rank traces or\n"
    "a database made by 'tracetool ingest'.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.",
    1, 1, "need exactly one input",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_queue_options *o = ctx;
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_SERIES: o->series = 1; break;
    case O_MAXQ:
        if (parse_i64(arg, &o->max_queue) < 0 || o->max_queue < 1)
            cli_usage_error(c, "bad --max-queue '%s' (want a whole number >= 1)", arg);
        break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    default: o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg); break;
    }
}

static int on_db(struct tt_db *db, void *o)
{
    return tt_queue_db(db, o, stdout);
}

static int on_file(const char *path, void *o)
{
    return tt_queue_file(path, o, stdout);
}

int cmd_queue(int argc, char **argv)
{
    tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    return run_on_input(argv[first], on_db, on_file, &o);
}
