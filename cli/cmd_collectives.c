/*
 * cli/cmd_collectives.c - `tracetool collectives INPUT|DB`
 */
#include <stdio.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"

enum { O_PER_CALL, O_ARRIVAL, O_TRACE, O_RANK, O_TIME, O_NAME, O_UNDER, O_FORMAT };

static const struct cli_opt opts[] = {
    { "per-call", O_PER_CALL, NULL, "one row per call of each rank, by the earliest\n"
      "arrival at it, then the ranks' summary", 0 },
    { "arrival", O_ARRIVAL, "gpu|cpu", "when a rank arrives at a call: its first\n"
      "kernel's start (gpu, default; the op's start\nwithout a kernel) or the start of the "
      "CPU op\nthat launched it (cpu)", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "only the calls whose collective (allreduce, ...)\nor name (as the trace "
                    "names it) contains a\nmatch of the POSIX extended regex",
                    "only the calls made under an op whose whole\nname matches the regex: their "
                    "record_param_comms\nop, nccl:* op or a kernel's runtime call on the\nop's "
                    "thread, inside it"),
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    { "rank", O_RANK, "R", "only that rank", 0 },
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "collectives", "INPUT|DB",
    "The NCCL/RCCL collective calls of each rank: process group, sizes and dtype,\n"
    "kernel time, algorithm and bus bandwidth (nccl-tests' formulas); the same call\n"
    "matched across ranks (by its sequence number, else its order), the rank that\n"
    "arrived last at it and the skew (latest - earliest arrival); per rank, how often\n"
    "it was last and the skew it caused. INPUT is a trace file, a directory of\n"
    "per-rank traces or a database made by 'tracetool ingest'.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error, or no\n"
          "collective in the input.",
    1, 1, "need exactly one input",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_coll_options *o = ctx;
    static const int arrival[] = { TT_COLL_ARRIVE_GPU, TT_COLL_ARRIVE_CPU };
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_PER_CALL: o->per_call = 1; break;
    case O_ARRIVAL:
        o->arrival = arrival[cli_choose(c, cli_opt_of(c, O_ARRIVAL), arg, "arrival")];
        break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    default: o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg); break;
    }
}

static int on_db(struct tt_db *db, void *o)
{
    return tt_collectives_db(db, o, stdout);
}

/* a trace file or a directory of them: read straight from the files */
static int on_file(const char *path, void *o)
{
    return tt_collectives_file(path, o, stdout);
}

int cmd_collectives(int argc, char **argv)
{
    tt_coll_options o = TT_COLL_OPTIONS_INIT;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    return run_on_input(argv[first], on_db, on_file, &o);
}
