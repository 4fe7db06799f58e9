/*
 * cli/progress.c - the progress line on a terminal: one line on standard
 * error, rewritten in place (percent of the file, MB decoded, events, MB/s),
 * cleared when the file's read ends. `ingest` shows it per file through
 * tt_ingest_options; every other command that reads trace files shows it
 * through tt_set_file_progress (progress_install), so a long `diff` or
 * `breakdown` of a GB trace is not silent. Only when standard error is a
 * terminal: pipes, files and CI logs never see it.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "tracetool/formats.h"

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_start(struct cli_progress *p, const char *name, int at_once)
{
    p->name = name;
    p->t0 = cli_now();
    p->last = at_once ? 0 : p->t0; /* 0: the first call shows */
    p->shown = 0;
}

void progress_show(struct cli_progress *p, int64_t pos, int64_t size, int64_t bytes,
                   int64_t events)
{
    double t = cli_now(), el = t - p->t0;
    if (t - p->last < 0.2)
        return;
    p->last = t;
    p->shown = 1;
    fprintf(stderr, "\r%s: ", p->name);
    if (size > 0)
        fprintf(stderr, "%5.1f%%  ", 100.0 * (double)pos / (double)size);
    fprintf(stderr, "%.1f MB  %" PRId64 " events", bytes / 1e6, events);
    if (el >= 0.1) /* a rate over less is noise */
        fprintf(stderr, "  %.0f MB/s", bytes / 1e6 / el);
    fputs("   ", stderr);
    fflush(stderr);
}

void progress_clear(struct cli_progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = 0;
}

/* one file at a time: the library reads the files of a command in turn */
static struct cli_progress file_line;

static void on_file(void *payload, const char *path, int64_t pos, int64_t size, int64_t bytes,
                    int64_t events, int done)
{
    struct cli_progress *p = payload;
    if (done) {
        progress_clear(p);
        p->name = NULL;
        return;
    }
    if (p->name != path)
        progress_start(p, path, 1);
    if (events > 0)
        progress_show(p, pos, size, bytes, events);
}

void progress_install(void)
{
    if (isatty(2))
        tt_set_file_progress(on_file, &file_line);
}
