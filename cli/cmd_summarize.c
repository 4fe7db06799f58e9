/*
 * cli/cmd_summarize.c - `tracetool summarize [-o OUT] [--trace ID] [--rank R] INPUT`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/summary.h"

enum { O_OUT, O_TRACE, O_RANK };

static const struct cli_opt opts[] = {
    { "output", O_OUT, "OUT", "the summary to write (gzip when it ends in .gz;\n"
      "- = standard output); default: INPUT's name less\n.json/.gz, plus .summary.json.gz, "
      "in the\ncurrent directory", 'o' },
    { "trace", O_TRACE, "ID", "only this trace (ids as a database of INPUT\nnumbers them)", 0 },
    { "rank", O_RANK, "R", "only the traces of this rank", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "summarize", "INPUT",
    "Write a per-rank summary: for each Chrome/Kineto trace of INPUT (a trace\n"
    "file, a directory of per-rank traces, a database or a summary), what info,\n"
    "averages, kernels, breakdown and diff need to print what they print for\n"
    "it, in a compact, versioned file (docs/SUMMARY.md). Summaries of single\n"
    "ranks merge exactly with 'tracetool merge', and those commands take a\n"
    "summary as INPUT. Each trace file is ingested into a temporary database\n"
    "of its own (one at a time), then summarised.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error.",
    1, 1, "need exactly one input",
};

struct job {
    tt_summarize_options o;
    const char *out;
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct job *j = ctx;
    if (key == O_OUT)
        j->out = arg;
    else if (key == O_TRACE)
        j->o.trace_id = opt_trace_id(c, arg);
    else
        j->o.rank = opt_rank(c, arg);
}

static int ends(const char *s, size_t *n, const char *suffix)
{
    size_t k = strlen(suffix);
    if (*n > k && !memcmp(s + *n - k, suffix, k)) {
        *n -= k;
        return 1;
    }
    return 0;
}

/* INPUT's base name less .gz and .json (a directory's, less its slashes),
 * plus .summary.json.gz; NULL for standard input */
static char *default_out(const char *in)
{
    char *copy, *base, *out;
    size_t n;
    if (!strcmp(in, "-"))
        return NULL;
    if (!(copy = strdup(in)))
        return NULL;
    for (n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
        copy[n - 1] = '\0';
    base = strrchr(copy, '/');
    base = base && base[1] ? base + 1 : copy;
    n = strlen(base);
    ends(base, &n, ".gz");
    ends(base, &n, ".json");
    if (!ends(base, &n, ".summary"))
        ends(base, &n, ".db");
    base[n] = '\0';
    if (asprintf(&out, "%s.summary.json.gz", n && strcmp(base, "/") ? base : "input") < 0)
        out = NULL;
    free(copy);
    return out;
}

int cmd_summarize(int argc, char **argv)
{
    struct job j;
    const char *in;
    char *def = NULL;
    int rc, first;
    memset(&j, 0, sizeof(j));
    j.o = (tt_summarize_options)TT_SUMMARIZE_OPTIONS_INIT;
    if (!(first = cli_parse(&cmd, argc, argv, set, &j)))
        return 0;
    in = argv[first];
    if (!j.out) {
        if (!strcmp(in, "-"))
            cli_usage_error(&cmd, "standard input needs -o OUT");
        if (!(def = default_out(in))) {
            fputs("tracetool: out of memory\n", stderr);
            return EXIT_IO;
        }
        j.out = def;
    }
    check_outputs_not_inputs(&cmd, j.out, &in, 1);
    rc = tt_summarize(in, &j.o, j.out);
    free(def);
    return rc < 0 ? report_error(rc) : EXIT_OK;
}
