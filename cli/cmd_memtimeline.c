/*
 * cli/cmd_memtimeline.c - `tracetool memtimeline INPUT|DB OUTPUT`
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "tracetool/analyze.h"

static const char usage_line[] =
    "tracetool memtimeline [--device cuda:N|cpu] [--no-categories] [--et ET] [--trace ID] [--rank R]"
    " INPUT|DB OUTPUT";

static const char help_text[] =
    "usage: tracetool memtimeline [options] INPUT|DB OUTPUT\n"
    "\n"
    "torch's memory timeline (prof.export_memory_timeline) from a trace on disk.\n"
    "INPUT is a Kineto trace taken with profile_memory=True, a database made by\n"
    "'tracetool ingest', or torch's own raw export (*.raw.json.gz) to re-render.\n"
    "OUTPUT's suffix picks the format, as torch does:\n"
    "  .json         [times, sizes]: times in us, 9 columns per point\n"
    "  .json.gz      the same, gzipped\n"
    "  .raw.json.gz  torch's raw event list [t_ns, action, bytes, category]\n"
    "  .html         one self-contained page: plot, interactive view, peak table\n"
    "  .png          the plot, 1600x960\n"
    "  -             JSON on standard output\n"
    "Categories are torch's eight; from a trace alone they come from documented\n"
    "heuristics (docs/MEMTIMELINE.md), the rest is Unknown. With the trace's\n"
    "Execution Trace (--et, or ingested into the database beside it) tensor\n"
    "identities decide GRADIENT, ACTIVATION and AUTOGRAD_DETAIL where they can.\n"
    "\n"
    "options:\n"
    "  --device D        cuda:N (or cuda = cuda:0) or cpu; default cuda:0 when the\n"
    "                    trace has CUDA memory events, else cpu\n"
    "  --no-categories   plain per-device totals (everything Unknown)\n"
    "  --et ET           the Execution Trace taken with INPUT (a file INPUT only;\n"
    "                    for a database, 'tracetool ingest DB ET' joins them)\n"
    "  --trace ID, --rank R  which trace of a database (default: the first)\n"
    "  -h, --help        this text\n"
    "\n"
    "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error (also: no\n"
    "memory events for the device).\n";

struct job {
    const tt_memtl_options *o;
    const char *output;
};

static int on_db(struct tt_db *db, void *ctx)
{
    const struct job *j = ctx;
    return tt_memtimeline_db(db, j->o, j->output);
}

static int on_file(const char *path, void *ctx)
{
    const struct job *j = ctx;
    return tt_memtimeline_file(path, j->o, j->output);
}

int cmd_memtimeline(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "device", required_argument, NULL, 'd' },
        { "no-categories", no_argument, NULL, 'N' },
        { "et", required_argument, NULL, 'e' },
        { "trace", required_argument, NULL, 't' },
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    struct job job;
    int opt;
    const char *in, *outp;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'd':
            if (strcmp(optarg, "cpu") && strncmp(optarg, "cuda", 4))
                die_usage("memtimeline", usage_line, "unknown device '%s'", optarg);
            o.device = optarg;
            break;
        case 'N': o.no_categories = 1; break;
        case 'e': o.et_path = optarg; break;
        case 't': o.trace_id = opt_trace_id("memtimeline", usage_line, optarg); break;
        case 'r': o.rank = opt_rank("memtimeline", usage_line, optarg); break;
        case 'h':
            fputs(help_text, stdout);
            return 0;
        default:
            die_usage("memtimeline", usage_line, "unknown or incomplete option '%s'",
                      argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        die_usage("memtimeline", usage_line, "need an input and an output");
    in = argv[optind];
    outp = argv[optind + 1];
    if (o.et_path && strcmp(in, "-") && tt_is_sqlite_file(in))
        die_usage("memtimeline", usage_line,
                  "--et needs a trace file; for a database, 'tracetool ingest %s %s'"
                  " joins the ET to its trace", in, o.et_path);
    job.o = &o;
    job.output = outp;
    return run_on_input("memtimeline", usage_line, in, o.trace_id, o.rank, on_db, on_file, &job);
}
