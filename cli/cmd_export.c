/*
 * cli/cmd_export.c - `tracetool export DB|INPUT... OUT`
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/export.h"

enum { O_RANK, O_STEPS, O_TRACE, O_COUNTERS };

static const struct cli_opt opts[] = {
    { "rank", O_RANK, "R,...", "only these ranks (comma-separated)", 0 },
    { "steps", O_STEPS, "A-B", "only ProfilerStep#A..#B (or one, N): the events that\n"
      "start inside them; a GPU activity goes with the\nruntime call that launched it", 0 },
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    { "counters", O_COUNTERS, NULL, "add counter tracks to each process: the launch\n"
      "queue length of each GPU stream, the memory\nbandwidth of each kind of copy in flight "
      "(as\n'tracetool queue/bandwidth --series') and the\nmemory allocated per device "
      "(Total Allocated\nof the [memory] events)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "export", "DB|INPUT... OUT",
    "One Chrome trace (Trace Event Format) that ui.perfetto.dev and chrome://tracing\n"
    "open: every trace a process named 'rank N', its CPU threads and GPU streams its\n"
    "threads ('thread 1234 (python3)', 'GPU 0 stream 7'), cut to the chosen steps.\n"
    "CPU ops and annotations, runtime calls, GPU kernels/memcpy/memset, [memory]\n"
    "events, instants, counters and the ac2g flows, with their args as stored.\n"
    "Timestamps keep each trace's own clock (us; relative to the smallest\n"
    "baseTimeNanoseconds when every trace has one, else absolute), so ranks are never\n"
    "shifted against each other. The inputs are one database made by 'tracetool\n"
    "ingest', or trace files and directories of them (each read once as it\n"
    "streams). OUT ending in .gz is gzipped; '-' is standard output. OUT is written\n"
    "to OUT.tmp and renamed when complete; an input is never overwritten.",
    opts,
    "exit codes: 0 ok; 2 usage (also: OUT is an input); 3 bad input; 4 I/O or\n"
    "database error (also: no trace or step matches).",
    2, -1, "need one or more inputs and an output",
};

struct job {
    tt_export_options o;
    int64_t *ranks;
    size_t nranks;
};

/* --rank 0,3,5 (repeatable: the lists add up) */
static void set_ranks(struct job *j, const struct cli_cmd *c, const char *arg)
{
    const char *p = arg;
    while (1) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char word[32];
        int64_t *r;
        if (!len || len >= sizeof(word))
            cli_usage_error(c, "bad rank list '%s'", arg);
        memcpy(word, p, len);
        word[len] = '\0';
        if (!(r = realloc(j->ranks, (j->nranks + 1) * sizeof(*r)))) {
            fputs("tracetool export: out of memory\n", stderr);
            exit(EXIT_IO);
        }
        j->ranks = r;
        j->ranks[j->nranks++] = opt_rank(c, word);
        if (!e)
            break;
        p = e + 1;
    }
}

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct job *j = ctx;
    switch (key) {
    case O_RANK: set_ranks(j, c, arg); break;
    case O_STEPS: opt_steps(c, arg, &j->o.step_from, &j->o.step_to), j->o.steps_set = 1; break;
    case O_COUNTERS: j->o.counters = 1; break;
    default: j->o.trace_id = opt_trace_id(c, arg); break;
    }
}

static void print_summary(const char *out, const tt_export_result *r)
{
    int k, n = 0;
    fprintf(stderr, "tracetool export: %s: %" PRId64 " process%s, %" PRId64 " threads, %" PRId64
                    " events (", strcmp(out, "-") ? out : "standard output", r->processes,
            r->processes == 1 ? "" : "es", r->threads, r->events);
    for (k = 0; k < TT_EXPORT_NKINDS; k++) {
        if (r->counts[k])
            fprintf(stderr, "%s%s %" PRId64, n++ ? ", " : "", tt_export_kind_name(k),
                    r->counts[k]);
    }
    fprintf(stderr, "), %.1f MB\n", (double)r->bytes / 1e6);
    if (r->no_step)
        fprintf(stderr, "tracetool export: warning: %" PRId64 " of the traces %s none of the"
                        " chosen steps\n", r->no_step, r->no_step == 1 ? "has" : "have");
    if (r->skipped_files)
        fprintf(stderr, "tracetool export: warning: %" PRId64 " file%s in the directories %s"
                        " no trace: skipped\n", r->skipped_files,
                r->skipped_files == 1 ? "" : "s", r->skipped_files == 1 ? "was" : "were");
}

int cmd_export(int argc, char **argv)
{
    struct job j;
    tt_export_result res;
    const char *out;
    int first, nin, i, rc;
    memset(&j, 0, sizeof(j));
    j.o = (tt_export_options)TT_EXPORT_OPTIONS_INIT;
    if (!(first = cli_parse(&cmd, argc, argv, set, &j)))
        return 0;
    nin = argc - first - 1;
    out = argv[argc - 1];
    j.o.ranks = j.ranks;
    j.o.nranks = j.nranks;
    for (i = 0; i < nin; i++) {
        if (strcmp(argv[first + i], "-") && tt_is_sqlite_file(argv[first + i]) && nin > 1)
            cli_usage_error(&cmd, "a database must be the only input ('%s')", argv[first + i]);
    }
    /* OUT must not be an input, nor a trace in an input directory */
    check_outputs_not_inputs(&cmd, out, (const char *const *)(argv + first), nin);
    if ((rc = refuse_summaries((const char *const *)(argv + first), nin)))
        return rc;
    if (nin == 1 && strcmp(argv[first], "-") && tt_is_sqlite_file(argv[first])) {
        tt_db *db;
        if ((rc = tt_db_open(&db, argv[first], TT_DB_READONLY)) == 0) {
            rc = tt_export_db(db, &j.o, out, &res);
            tt_db_free(db);
        }
    } else {
        rc = tt_export_files((const char *const *)(argv + first), (size_t)nin, &j.o, out, &res);
    }
    free(j.ranks);
    if (rc < 0)
        return report_error(rc);
    print_summary(out, &res);
    return 0;
}
