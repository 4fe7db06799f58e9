/*
 * cli/cmd_info.c - `tracetool info INPUT|DB`
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "tracetool/analyze.h"

static const char usage_line[] =
    "tracetool info [--format text|json] [--trace ID] INPUT|DB";

static const char help_text[] =
    "usage: tracetool info [options] INPUT|DB\n"
    "\n"
    "Summarise a trace: events per phase and category, time span, rank, pid,\n"
    "GPU devices and streams, CPU threads, and which features are present\n"
    "(shapes, memory events, record-function ids, flows, kernels, python stacks,\n"
    "execution-trace nodes). INPUT is read straight from the file (streaming, no\n"
    "database); a DB made by 'tracetool ingest' is summarised per trace.\n"
    "\n"
    "options:\n"
    "  --format text|json  output format (default text)\n"
    "  --trace ID          only this trace of a database\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.\n";

static int on_db(struct tt_db *db, void *o)
{
    return tt_info_db(db, o, stdout);
}

static int on_file(const char *path, void *o)
{
    return tt_info_file(path, o, stdout);
}

int cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "trace", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    tt_info_options o = TT_INFO_OPTIONS_INIT;
    int opt;
    const char *in;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            if (!strcmp(optarg, "json"))
                o.json = 1;
            else if (strcmp(optarg, "text"))
                die_usage("info", usage_line, "unknown format '%s' (text or json)", optarg);
            break;
        case 't': o.trace_id = opt_trace_id("info", usage_line, optarg); break;
        case 'h':
            fputs(help_text, stdout);
            return 0;
        default:
            die_usage("info", usage_line, "unknown or incomplete option '%s'",
                      argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        die_usage("info", usage_line, "need exactly one input");
    in = argv[optind];
    return run_on_input("info", usage_line, in, o.trace_id, -1, on_db, on_file, &o);
}
