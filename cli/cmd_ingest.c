/*
 * cli/cmd_ingest.c - `tracetool ingest DB INPUT...`
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/crosscheck.h"

enum { O_REPLACE, O_SKIP, O_SALVAGE, O_QUIET };

static const struct cli_opt opts[] = {
    { "replace", O_REPLACE, NULL, "replace a trace whose content is already in the database\n"
      "(default: refuse it, exit code 5)", 0 },
    { "skip-existing", O_SKIP, NULL, "skip a trace whose content is already in the database\n"
      "(a re-run over the same directory succeeds)", 0 },
    { "salvage", O_SALVAGE, NULL, "keep every complete event of a truncated file and mark the\n"
      "trace truncated (default: refuse it, exit code 3)", 0 },
    { "quiet", O_QUIET, NULL, "no per-file summary and no progress display", 'q' },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "ingest", "DB [INPUT...]",
    "Read Kineto/Chrome traces, PyTorch Execution Traces and torch memory-timeline\n"
    "exports into the SQLite database DB (created if missing). INPUT is a file\n"
    "(plain or gzip, detected by content), '-' for standard input, or a directory,\n"
    "read recursively for *.json, *.json.gz and *.gz files in name order.\n"
    "Each file is one transaction: a failure leaves the database as it was, and\n"
    "the remaining inputs are still ingested. In a directory, a file that is not\n"
    "a trace (a stray config.json) is skipped with a warning. With no INPUT, DB is\n"
    "only opened for writing: that recovers a database an interrupted ingest left\n"
    "with a hot journal.",
    opts,
    "exit codes: 0 all inputs ingested; 2 usage; 3 bad input; 4 I/O or database\n"
    "error; 5 already ingested (unless --skip-existing). With several inputs, the\n"
    "first failure's code.",
    1, -1, "need a database (and inputs)",
};

/* the phases after the read: one line, rewritten in place */
static void on_phase(void *payload, const char *what)
{
    struct cli_progress *p = payload;
    if (!*what)
        return;
    p->shown = 1;
    fprintf(stderr, "\r\033[K%s: %s ...", p->name, what);
    fflush(stderr);
}

static void on_progress(void *payload, int64_t pos, int64_t size, int64_t bytes,
                        int64_t events)
{
    progress_show(payload, pos, size, bytes, events);
}

struct ctx {
    tt_db *db;
    unsigned flags;
    int quiet;
    int rc; /* first failure */
    int nfiles; /* traces read (or already there) */
    int skip_existing;
    int n_et; /* execution traces ingested by this run */
};

/* a file given in a directory that turns out not to be a trace (a stray
 * config.json) is skipped with a warning; one named on the command line is
 * an error */
static void ingest_one(struct ctx *c, const char *path, int in_dir)
{
    tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
    tt_ingest_result r;
    struct cli_progress p;
    int rc;
    progress_start(&p, path, 0);
    o.flags = c->flags;
    if (!c->quiet && isatty(2)) {
        o.progress = on_progress;
        o.phase = on_phase;
        o.progress_payload = &p;
    }
    rc = tt_ingest_file(c->db, path, &o, &r);
    progress_clear(&p);
    if (rc == TT_EUNSUPPORTED && in_dir) {
        char line[2048];
        tt_error_format(tt_error_last(), line, sizeof(line));
        fprintf(stderr, "tracetool: warning: skipped, not a trace: %s\n", line);
        return;
    }
    c->nfiles++;
    if (rc == TT_EEXISTS && c->skip_existing) {
        if (!c->quiet)
            printf("%s: already in the database, skipped\n", path);
        return;
    }
    if (rc < 0) {
        int code = report_error(rc);
        if (!c->rc)
            c->rc = code;
        return;
    }
    if (r.stats.format == TT_FMT_ET)
        c->n_et++;
    if (!c->quiet) {
        double mb = (double)r.stats.bytes / 1e6;
        char gz[48] = "";
        if (r.stats.gzip) /* the size is the decompressed one: say the file's too */
            snprintf(gz, sizeof(gz), " (%.1f MB gzip)", (double)r.stats.file_bytes / 1e6);
        printf("%s: trace %" PRId64 ", %s, %" PRId64 " %s, %.1f MB%s in %.2f s (%.0f MB/s)%s\n",
               path, r.trace_id, tt_format_name(r.stats.format), r.stats.events,
               r.stats.format == TT_FMT_ET ? "nodes"
               : r.stats.format == TT_FMT_MEMTL_RAW ? "rows" : "events",
               mb, gz, r.seconds,
               r.seconds > 0 ? mb / r.seconds : 0.0,
               r.stats.truncated ? " [TRUNCATED: salvaged]" : "");
        if (r.replaced_id)
            printf("  replaced trace %" PRId64 "\n", r.replaced_id);
        if (r.stats.repaired || r.stats.skipped)
            printf("  repaired %" PRId64 " values, skipped %" PRId64
                   " elements (see table import_issues)\n",
                   r.stats.repaired, r.stats.skipped);
        if (r.stats.bad_times || r.stats.dup_keys)
            printf("  %" PRId64 " ts/dur values that are not a time, %" PRId64
                   " duplicate top-level keys (see table import_issues)\n",
                   r.stats.bad_times, r.stats.dup_keys);
    }
}

/* the trace files under a directory, each once (tt_walk_traces) */
static void walk(struct ctx *c, const char *dir)
{
    tt_dir_walk w;
    size_t i;
    if (tt_walk_traces(dir, &w) < 0) {
        int code = report_error(TT_ENOMEM);
        if (!c->rc)
            c->rc = code;
    }
    for (i = 0; i < w.nunreadable; i++) {
        fprintf(stderr, "tracetool: %s: cannot read directory\n", w.unreadable[i]);
        if (!c->rc)
            c->rc = EXIT_IO;
    }
    for (i = 0; i < w.nloops; i++)
        fprintf(stderr, "tracetool: %s: warning: leads to a directory already read"
                        " (a symbolic link loop?): skipped\n", w.loops[i]);
    for (i = 0; i < w.nfiles; i++)
        ingest_one(c, w.files[i], 1);
    tt_dir_walk_free(&w);
}

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct ctx *x = ctx;
    (void)c;
    (void)arg;
    if (key == O_REPLACE)
        x->flags |= TT_INGEST_REPLACE;
    else if (key == O_SKIP)
        x->skip_existing = 1;
    else if (key == O_SALVAGE)
        x->flags |= TT_INGEST_SALVAGE;
    else
        x->quiet = 1;
}

int cmd_ingest(int argc, char **argv)
{
    struct ctx c = { NULL, 0, 0, 0, 0, 0, 0 };
    int before;
    int i, rc, first = cli_parse(&cmd, argc, argv, set, &c);
    if (!first)
        return 0;
    if (c.skip_existing && (c.flags & TT_INGEST_REPLACE))
        cli_usage_error(&cmd, "--replace and --skip-existing contradict each other");
    if ((rc = refuse_summaries((const char *const *)(argv + first + 1), argc - first - 1)))
        return rc;
    for (i = first + 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "-") && stat(argv[i], &st) != 0) {
            fprintf(stderr, "tracetool: %s: no such file or directory\n", argv[i]);
            return EXIT_IO;
        }
    }
    if (first + 1 == argc) {
        /* no inputs: opening DB for writing rolls back a hot journal */
        if ((rc = tt_db_open(&c.db, argv[first], 0)) < 0)
            return report_error(rc);
        tt_db_free(c.db);
        if (!c.quiet)
            printf("%s: database ready\n", argv[first]);
        return 0;
    }
    if ((rc = tt_db_open(&c.db, argv[first], TT_DB_CREATE)) < 0)
        return report_error(rc);
    for (i = first + 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "-") && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            before = c.nfiles;
            walk(&c, argv[i]);
            if (c.nfiles == before) {
                fprintf(stderr, "tracetool: %s: no trace files (*.json, *.json.gz, *.gz) in this directory\n",
                        argv[i]);
                if (!c.rc)
                    c.rc = EXIT_BADINPUT;
            }
        } else
            ingest_one(&c, argv[i], 0);
    }
    if (c.n_et) {
        /* join the ETs to their Kineto traces now, so every CPU op row can be
         * joined to its ET node (table et_links); the report is
         * 'tracetool crosscheck DB' */
        tt_xc_options xo = TT_XC_OPTIONS_INIT;
        tt_xc_summary sum;
        if (tt_crosscheck_db(c.db, &xo, NULL, &sum) >= 0 && !c.quiet && sum.pairs)
            printf("linked %" PRId64 " ET nodes to Kineto ops in %" PRId64
                   " pair(s) (%" PRId64 " consistent); see 'tracetool crosscheck %s'\n",
                   sum.links, sum.pairs, sum.consistent, argv[first]);
    }
    tt_db_free(c.db);
    return c.rc;
}
