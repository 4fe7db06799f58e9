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

enum { O_REPLACE, O_SKIP, O_SALVAGE, O_QUIET, O_JOBS };

static const struct cli_opt opts[] = {
    { "replace", O_REPLACE, NULL, "replace a trace whose content is already in the database\n"
      "(default: refuse it, exit code 5)", 0 },
    { "skip-existing", O_SKIP, NULL, "skip a trace whose content is already in the database\n"
      "(a re-run over the same directory succeeds)", 0 },
    { "salvage", O_SALVAGE, NULL, "keep every complete event of a truncated file and mark the\n"
      "trace truncated (default: refuse it, exit code 3)", 0 },
    { "quiet", O_QUIET, NULL, "no per-file summary and no progress display", 'q' },
    { "jobs", O_JOBS, "N", "threads to keep busy (default: the CPUs this process may use);\n"
      "1 reads and writes on one thread; with N >= 2 and several files, up\n"
      "to N - 1 files are read at once while one writer stores them in order\n"
      "(the database is the same as with --jobs 1)", 'j' },
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
    int jobs; /* --jobs (0: the default) */
    /* the files of all INPUTs, in order (several at once with --jobs) */
    struct infile {
        const char *path;
        int in_dir;  /* found in a directory */
        int arg;     /* which INPUT (argv index) */
    } *files;
    size_t nf, af;
    int *counted;    /* per argv index: files read (or already there) */
    /* the progress line of several files at once */
    struct cli_progress prog;
    size_t done;
    int64_t bytes;
    int tty;
};

/* a file given in a directory that turns out not to be a trace (a stray
 * config.json) is skipped with a warning; one named on the command line is
 * an error */
static void report_one(struct ctx *c, const struct infile *f, int rc,
                       const tt_ingest_result *res)
{
    const char *path = f->path;
    int in_dir = f->in_dir;
    tt_ingest_result r;
    if (res)
        r = *res;
    else
        memset(&r, 0, sizeof(r));
    if (rc == TT_EUNSUPPORTED && in_dir) {
        char line[2048];
        tt_error_format(tt_error_last(), line, sizeof(line));
        fprintf(stderr, "tracetool: warning: skipped, not a trace: %s\n", line);
        return;
    }
    c->nfiles++;
    c->counted[f->arg]++;
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

static void ingest_one(struct ctx *c, const struct infile *f)
{
    tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
    tt_ingest_result r;
    struct cli_progress p;
    int rc;
    progress_start(&p, f->path, 0);
    o.flags = c->flags;
    o.jobs = c->jobs;
    if (!c->quiet && c->tty) {
        o.progress = on_progress;
        o.phase = on_phase;
        o.progress_payload = &p;
    }
    rc = tt_ingest_file(c->db, f->path, &o, &r);
    progress_clear(&p);
    report_one(c, f, rc, rc < 0 ? NULL : &r);
}

/* tt_ingest_files: each file as its transaction ends, then one progress
 * line for them all (files done / total, MB, MB/s) */
static void on_file(void *payload, size_t index, const char *path, int rc,
                    const tt_ingest_result *res)
{
    struct ctx *c = payload;
    (void)path;
    progress_clear(&c->prog);
    report_one(c, &c->files[index], rc, res);
    fflush(stdout);
    c->done++;
    if (res)
        c->bytes += res->stats.bytes;
    if (!c->quiet && c->tty && c->done < c->nf) {
        double t = cli_now() - c->prog.t0;
        c->prog.shown = 1;
        fprintf(stderr, "\r\033[Kingest: %zu/%zu files, %.1f MB, %.0f MB/s", c->done, c->nf,
                (double)c->bytes / 1e6, t > 0 ? (double)c->bytes / 1e6 / t : 0.0);
        fflush(stderr);
    }
}

static int add_file(struct ctx *c, const char *path, int in_dir, int arg)
{
    if (c->nf == c->af) {
        size_t na = c->af ? 2 * c->af : 16;
        struct infile *nf = realloc(c->files, na * sizeof(*nf));
        if (!nf)
            return -1;
        c->files = nf;
        c->af = na;
    }
    c->files[c->nf].path = path;
    c->files[c->nf].in_dir = in_dir;
    c->files[c->nf].arg = arg;
    c->nf++;
    return 0;
}

/* the trace files under a directory, each once (tt_walk_traces); w is
 * kept until they are ingested */
static void walk(struct ctx *c, const char *dir, int arg, tt_dir_walk *wp)
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
    for (i = 0; i < w.nfiles; i++) {
        if (add_file(c, w.files[i], 1, arg) < 0 && !c->rc)
            c->rc = report_error(TT_ENOMEM);
    }
    *wp = w;
}

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct ctx *x = ctx;
    if (key == O_JOBS) {
        char *end;
        long n = strtol(arg, &end, 10);
        if (end == arg || *end || n < 1 || n > 1024)
            cli_usage_error(c, "--jobs takes a number of threads from 1 to 1024, not '%s'", arg);
        x->jobs = (int)n;
    } else if (key == O_REPLACE)
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
    struct ctx c;
    tt_dir_walk *walks;
    size_t k;
    int i, rc, first;
    memset(&c, 0, sizeof(c));
    first = cli_parse(&cmd, argc, argv, set, &c);
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
    walks = calloc((size_t)argc, sizeof(*walks));
    c.counted = calloc((size_t)argc, sizeof(*c.counted));
    if (!walks || !c.counted)
        return report_error(TT_ENOMEM);
    for (i = first + 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "-") && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            walk(&c, argv[i], i, &walks[i]);
        else if (add_file(&c, argv[i], 0, i) < 0 && !c.rc)
            c.rc = report_error(TT_ENOMEM);
    }
    c.tty = isatty(2);
    if (!c.jobs)
        c.jobs = tt_ingest_default_jobs();
    if (c.jobs < 2 || c.nf < 2) {
        for (k = 0; k < c.nf; k++)
            ingest_one(&c, &c.files[k]);
    } else {
        tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
        const char **paths = malloc(c.nf * sizeof(*paths));
        o.flags = c.flags;
        o.jobs = c.jobs;
        for (k = 0; paths && k < c.nf; k++)
            paths[k] = c.files[k].path;
        progress_start(&c.prog, "ingest", 0);
        rc = paths ? tt_ingest_files(c.db, paths, c.nf, &o, on_file, &c) : TT_ENOMEM;
        progress_clear(&c.prog);
        free(paths);
        if (rc < 0 && !c.rc)
            c.rc = report_error(rc);
    }
    for (i = first + 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "-") && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) &&
            !c.counted[i]) {
            fprintf(stderr, "tracetool: %s: no trace files (*.json, *.json.gz, *.gz) in this directory\n",
                    argv[i]);
            if (!c.rc)
                c.rc = EXIT_BADINPUT;
        }
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
    for (i = 0; i < argc; i++)
        tt_dir_walk_free(&walks[i]);
    free(walks);
    free(c.counted);
    free(c.files);
    return c.rc;
}
