/*
 * cli/cmd_bandwidth.c - `tracetool bandwidth INPUT|DB`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/counters.h"

enum { O_SERIES, O_TRACE, O_RANK, O_TIME, O_NAME, O_UNDER, O_FORMAT };

static const struct cli_opt opts[] = {
    { "series", O_SERIES, NULL, "print every change of each kind's bandwidth\n"
      "(rank, kind, ts, GB/s; sums of 0 included)\ninstead of the summary", 0 },
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    { "rank", O_RANK, "R", "only that rank", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "only the memcpys and memsets whose name contains\na match of the POSIX "
                    "extended regex\n('Memcpy HtoD', 'Memset', 'Pinned', ...)",
                    "only the copies launched under an op whose whole\nname matches the regex "
                    "(their runtime call on\nthe op's thread, inside it)"),
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "bandwidth", "INPUT|DB",
    "The memory bandwidth of the copies in flight, as HTA's memory bandwidth: each\n"
    "memcpy and memset adds the trace's args[\"memory bandwidth (GB/s)\"] at its start\n"
    "and takes it away at its end (a 0 duration counts as 1 us), summed per rank and\n"
    "kind (memcpy HtoD, DtoH, DtoD, PtoP, ..., unknown; memset) over every device and\n"
    "stream; ends first at equal times. Per rank and kind: count, mean, min and max\n"
    "of the sums > 0 after each change (not weighted by time, as HTA's). INPUT is a\n"
    "trace file, a directory of per-rank traces or a database made by 'tracetool\n"
    "ingest'.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.",
    1, 1, "need exactly one input",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_bandwidth_options *o = ctx;
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_SERIES: o->series = 1; break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    default: o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg); break;
    }
}

static int on_db(struct tt_db *db, void *o)
{
    return tt_bandwidth_db(db, o, stdout);
}

static int on_file(const char *path, void *o)
{
    return tt_bandwidth_file(path, o, stdout);
}

int cmd_bandwidth(int argc, char **argv)
{
    tt_bandwidth_options o = TT_BANDWIDTH_OPTIONS_INIT;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    return run_on_input(argv[first], on_db, on_file, &o);
}
