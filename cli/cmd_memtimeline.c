/*
 * cli/cmd_memtimeline.c - `tracetool memtimeline INPUT|DB OUTPUT`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/formats.h"

enum { O_DEVICE, O_NOCAT, O_ET, O_TRACE, O_RANK, O_TIME, O_NAME, O_UNDER };

static const struct cli_opt opts[] = {
    { "device", O_DEVICE, "TYPE:N", "a device as c10 names it: cuda:N (cuda = cuda:0), cpu,\n"
      "hip:N, xpu:N, mps:0, mtia:N, privateuseone:N, ...;\n"
      "default: the device with the most memory events", 0 },
    { "no-categories", O_NOCAT, NULL, "plain per-device totals (everything Unknown)", 0 },
    { "et", O_ET, "ET", "the Execution Trace taken with INPUT (a file INPUT\n"
      "only; for a database, 'tracetool ingest DB ET'\njoins them)", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "only the blocks allocated inside an op whose name\ncontains a match of the "
                    "POSIX extended regex\n(the innermost op), with their frees; the\n"
                    "allocator's totals are then left out",
                    "only the blocks allocated inside an op whose whole\nname matches the regex "
                    "(on its thread), with\ntheir frees; the allocator's totals are then\n"
                    "left out"),
    { "trace", O_TRACE, "ID", "which trace of a database (default: the first)", 0 },
    { "rank", O_RANK, "R", "which rank of a database", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "memtimeline", "INPUT|DB OUTPUT",
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
    "identities decide GRADIENT, ACTIVATION and AUTOGRAD_DETAIL where they can.",
    opts,
    "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error (also: no\n"
    "memory events for the device).",
    2, 2, "need an input and an output",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_memtl_options *o = ctx;
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_DEVICE: {
        int type;
        int64_t index;
        if (tt_device_parse(arg, &type, &index) < 0)
            cli_usage_error(c, "%s", tt_error_last()->message);
        o->device = arg;
        break;
    }
    case O_NOCAT: o->no_categories = 1; break;
    case O_ET: o->et_path = arg; break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    default: o->rank = opt_rank(c, arg); break;
    }
}

static void on_warn(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "tracetool memtimeline: warning: %s\n", message);
}

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

/* an OUTPUT whose suffix names a format ("-": JSON on standard output) */
static int known_output(const char *out)
{
    static const char *const suffix[] = { ".json", ".json.gz", ".html", ".png" };
    size_t i, n = strlen(out), k;
    if (!strcmp(out, "-"))
        return 1;
    for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        k = strlen(suffix[i]);
        if (n > k && !strcmp(out + n - k, suffix[i]))
            return 1;
    }
    return 0; /* .raw.json.gz ends in .json.gz */
}

int cmd_memtimeline(int argc, char **argv)
{
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    struct job job;
    const char *in;
    int first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    in = argv[first];
    if (o.et_path && strcmp(in, "-") && tt_is_sqlite_file(in))
        cli_usage_error(&cmd, "--et needs a trace file; for a database, 'tracetool ingest %s %s'"
                        " joins the ET to its trace", in, o.et_path);
    o.warn = on_warn;
    job.o = &o;
    job.output = argv[first + 1];
    /* the output must never replace an input (nor a file a link leads to) */
    {
        const char *ins[2];
        ins[0] = in;
        ins[1] = o.et_path;
        check_outputs_not_inputs(&cmd, job.output, ins, o.et_path ? 2 : 1);
    }
    if (!known_output(job.output))
        cli_usage_error(&cmd, "cannot tell the format of '%s' from its name: end it in .json,"
                        " .json.gz, .raw.json.gz, .html or .png, or write '-' for JSON on"
                        " standard output", job.output);
    /* a file or a directory of per-rank traces is read as rows, --trace and
     * --rank counting its traces as a database of them would */
    if (!strcmp(in, "-") || !tt_is_sqlite_file(in)) {
        int rc = refuse_summaries(&in, 1);
        if (rc)
            return rc;
        rc = on_file(in, &job);
        return rc < 0 ? report_error(rc) : 0;
    }
    return run_on_input(in, on_db, on_file, &job);
}
