/*
 * cli/cmd_averages.c - `tracetool averages INPUT|DB`
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "tracetool/analyze.h"

static const char usage_line[] =
    "tracetool averages [--group-by-shape] [--group-by-stack N] [--sort-by KEY] [--row-limit N]"
    " [--top-level-only] [--steps A-B] [--trace ID] [--rank R]"
    " [--format table|csv|json|markdown] INPUT|DB";

static const char help_text[] =
    "usage: tracetool averages [options] INPUT|DB\n"
    "\n"
    "Torch's prof.key_averages().table() recomputed from a trace on disk: which\n"
    "events count, ProfilerStep#N -> ProfilerStep*, the per-thread tree with torch's\n"
    "containment rule, the same-name single-child collapse, self and total CPU time,\n"
    "device time of the kernels/memcpy/memset each op launched, CPU/CUDA memory from\n"
    "[memory] events, and the table layout character for character.\n"
    "INPUT is a trace file (read into a temporary database) or a database made by\n"
    "'tracetool ingest' (every Chrome/Kineto trace in it, one table each).\n"
    "\n"
    "options:\n"
    "  --group-by-shape      key_averages(group_by_input_shape=True)\n"
    "  --group-by-stack N    key_averages(group_by_stack_n=N), from the events'\n"
    "                        \"Call stack\" (traces taken with with_stack=True);\n"
    "                        adds torch's Source Location column\n"
    "  --sort-by KEY         self_cpu_time_total, cpu_time_total, cpu_time,\n"
    "                        self_cuda_time_total, cuda_time_total, cuda_time,\n"
    "                        cpu_memory_usage, self_cpu_memory_usage,\n"
    "                        cuda_memory_usage, self_cuda_memory_usage, count\n"
    "                        (device_* aliases accepted); default: first-occurrence\n"
    "                        order, as torch's table(sort_by=None)\n"
    "  --row-limit N         rows to print (default 100, -1 = all)\n"
    "  --top-level-only      only ops without a parent (top_level_events_only)\n"
    "  --steps A-B           only events starting inside ProfilerStep#A..#B\n"
    "  --trace ID, --rank R  only that trace / rank of a database\n"
    "  --format FMT          table (torch's layout, default), csv, json, markdown\n"
    "  -h, --help            this text\n"
    "\n"
    "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.\n";

static int on_db(struct tt_db *db, void *o)
{
    return tt_averages_db(db, o, stdout);
}

static int on_file(const char *path, void *o)
{
    return tt_averages_file(path, o, stdout);
}

int cmd_averages(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "group-by-shape", no_argument, NULL, 'g' },
        { "group-by-stack", required_argument, NULL, 'k' },
        { "sort-by", required_argument, NULL, 's' },
        { "row-limit", required_argument, NULL, 'n' },
        { "top-level-only", no_argument, NULL, 'T' },
        { "steps", required_argument, NULL, 'S' },
        { "trace", required_argument, NULL, 't' },
        { "rank", required_argument, NULL, 'r' },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    int opt;
    const char *in;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'g': o.group_by_shape = 1; break;
        case 'k':
            if (parse_i64(optarg, &o.group_by_stack) < 0 || o.group_by_stack < 1)
                die_usage("averages", usage_line, "bad stack depth '%s'", optarg);
            break;
        case 's':
            if (!tt_avg_sort_key_valid(optarg))
                die_usage("averages", usage_line, "unknown sort key '%s'", optarg);
            o.sort_by = optarg;
            break;
        case 'n':
            if (parse_i64(optarg, &o.row_limit) < 0 || o.row_limit < -1)
                die_usage("averages", usage_line, "bad row limit '%s'", optarg);
            break;
        case 'T': o.top_level_only = 1; break;
        case 'S': {
            char *dash = strchr(optarg, '-');
            char a[32], *b;
            if (!dash || dash - optarg >= (long)sizeof(a))
                die_usage("averages", usage_line, "bad step range '%s' (want A-B)", optarg);
            memcpy(a, optarg, (size_t)(dash - optarg));
            a[dash - optarg] = '\0';
            b = dash + 1;
            if (parse_i64(a, &o.step_from) < 0 || parse_i64(b, &o.step_to) < 0 ||
                o.step_from > o.step_to)
                die_usage("averages", usage_line, "bad step range '%s' (want A-B)", optarg);
            o.steps_set = 1;
            break;
        }
        case 't': o.trace_id = opt_trace_id("averages", usage_line, optarg); break;
        case 'r': o.rank = opt_rank("averages", usage_line, optarg); break;
        case 'f':
            if (!strcmp(optarg, "table")) o.format = TT_AVG_TABLE;
            else if (!strcmp(optarg, "csv")) o.format = TT_AVG_CSV;
            else if (!strcmp(optarg, "json")) o.format = TT_AVG_JSON;
            else if (!strcmp(optarg, "markdown")) o.format = TT_AVG_MARKDOWN;
            else die_usage("averages", usage_line, "unknown format '%s'", optarg);
            break;
        case 'h':
            fputs(help_text, stdout);
            return 0;
        default:
            die_usage("averages", usage_line, "unknown or incomplete option '%s'",
                      argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        die_usage("averages", usage_line, "need exactly one input");
    in = argv[optind];
    return run_on_input("averages", usage_line, in, o.trace_id, o.rank, on_db, on_file, &o);
}
