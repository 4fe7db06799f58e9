/*
 * cli/cmd_kernels.c - `tracetool kernels INPUT|DB`
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "tracetool/analyze.h"

static const char usage_line[] =
    "tracetool kernels [--by name|launch|stream|op] [--only kernels|memory]"
    " [--row-limit N] [--trace ID] [--rank R] [--format table|csv|json|markdown] INPUT|DB";

static const char help_text[] =
    "usage: tracetool kernels [options] INPUT|DB\n"
    "\n"
    "GPU kernel summary in the shape of Nsight Systems' cuda_gpu_kern_sum: Time %,\n"
    "Total Time, Instances, Avg, Med, Min, Max and StdDev (sample) in ns, per group,\n"
    "largest total first; then the memcpy/memset summary by kind with bytes and\n"
    "bandwidth. INPUT is a trace file or a database made by 'tracetool ingest'.\n"
    "\n"
    "options:\n"
    "  --by name|launch|stream|op  group kernels by name (default), by name plus\n"
    "                              grid/block, by device and stream, or by the CPU\n"
    "                              op that launched them\n"
    "  --only kernels|memory       print only one of the two summaries\n"
    "  --row-limit N               rows per summary (default -1 = all)\n"
    "  --trace ID, --rank R        only that trace / rank of a database\n"
    "  --format table|csv|json|markdown\n"
    "                              output format (default table)\n"
    "  -h, --help                  this text\n"
    "\n"
    "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.\n";

static int on_db(struct tt_db *db, void *o)
{
    return tt_kernels_db(db, o, stdout);
}

static int on_file(const char *path, void *o)
{
    return tt_kernels_file(path, o, stdout);
}

int cmd_kernels(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "by", required_argument, NULL, 'b' },
        { "only", required_argument, NULL, 'o' },
        { "row-limit", required_argument, NULL, 'n' },
        { "trace", required_argument, NULL, 't' },
        { "rank", required_argument, NULL, 'r' },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    int opt;
    const char *in;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            if (!strcmp(optarg, "name")) o.by = TT_KERN_BY_NAME;
            else if (!strcmp(optarg, "launch")) o.by = TT_KERN_BY_LAUNCH;
            else if (!strcmp(optarg, "stream")) o.by = TT_KERN_BY_STREAM;
            else if (!strcmp(optarg, "op")) o.by = TT_KERN_BY_OP;
            else die_usage("kernels", usage_line, "unknown grouping '%s'", optarg);
            break;
        case 'o':
            if (!strcmp(optarg, "kernels")) o.what = TT_KERN_KERNELS;
            else if (!strcmp(optarg, "memory")) o.what = TT_KERN_MEMORY;
            else die_usage("kernels", usage_line, "unknown summary '%s'", optarg);
            break;
        case 'n':
            if (parse_i64(optarg, &o.row_limit) < 0 || o.row_limit < -1)
                die_usage("kernels", usage_line, "bad row limit '%s'", optarg);
            break;
        case 't': o.trace_id = opt_trace_id("kernels", usage_line, optarg); break;
        case 'r': o.rank = opt_rank("kernels", usage_line, optarg); break;
        case 'f':
            if (!strcmp(optarg, "table")) o.format = TT_AVG_TABLE;
            else if (!strcmp(optarg, "csv")) o.format = TT_AVG_CSV;
            else if (!strcmp(optarg, "json")) o.format = TT_AVG_JSON;
            else if (!strcmp(optarg, "markdown")) o.format = TT_AVG_MARKDOWN;
            else die_usage("kernels", usage_line, "unknown format '%s'", optarg);
            break;
        case 'h':
            fputs(help_text, stdout);
            return 0;
        default:
            die_usage("kernels", usage_line, "unknown or incomplete option '%s'",
                      argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        die_usage("kernels", usage_line, "need exactly one input");
    in = argv[optind];
    return run_on_input("kernels", usage_line, in, o.trace_id, o.rank, on_db, on_file, &o);
}
