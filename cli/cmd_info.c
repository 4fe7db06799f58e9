/*
 * cli/cmd_info.c - `tracetool info INPUT|DB`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/summary.h"

enum { O_FORMAT, O_TRACE, O_ROWS };

static const struct cli_opt opts[] = {
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table; text =\n"
      "table); csv: one row per trace", 0 },
    { "trace", O_TRACE, "ID", "only this trace of a database", 0 },
    { "row-limit", O_ROWS, "N", "rows of the categories table (default -1 = all)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "info", "INPUT|DB",
    "Summarise a trace: events per phase and category, time span, rank, pid,\n"
    "GPU devices and streams, CPU threads, and which features are present\n"
    "(shapes, memory events, record-function ids, flows, kernels, python stacks,\n"
    "execution-trace nodes). INPUT is read straight from the file (streaming, no\n"
    "database); a DB made by 'tracetool ingest' is summarised per trace, and\n"
    "a summary (tracetool summarize) prints what its traces' database prints.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.",
    1, 1, "need exactly one input",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_info_options *o = ctx;
    if (key == O_TRACE) {
        o->trace_id = opt_trace_id(c, arg);
        return;
    }
    if (key == O_ROWS) {
        o->row_limit = opt_row_limit(c, arg);
        return;
    }
    o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg);
}

static int on_db(struct tt_db *db, void *o)
{
    return tt_info_db(db, o, stdout);
}

/* a trace file or a directory of them: read straight from the files */
static int on_file(const char *path, void *o)
{
    return tt_info_file(path, o, stdout);
}

/* a summary (tracetool summarize): what `info` prints for its traces' database */
static int on_sum(tt_summary *s, void *o)
{
    return tt_info_summary_print(s, o, stdout);
}

int cmd_info(int argc, char **argv)
{
    tt_info_options o = TT_INFO_OPTIONS_INIT;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    return run_on_input_sum(argv[first], on_db, on_file, on_sum, &o);
}
