/*
 * cli/cmd_merge.c - `tracetool merge -o OUT S...`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/summary.h"

enum { O_OUT };

static const struct cli_opt opts[] = {
    { "output", O_OUT, "OUT", "the merged summary (gzip when it ends in .gz;\n- = standard "
      "output); required", 'o' },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "merge", "S...",
    "Merge summaries (tracetool summarize) into one: the union of their traces,\n"
    "each trace (path and content hash) once, numbered by path as an ingest of\n"
    "their directory numbers them. Exact, and the same whatever the order or\n"
    "grouping of the inputs. A directory operand stands for the summaries in\n"
    "it (its files that are summaries; the others are left alone). The same\n"
    "path with different contents in two inputs is an error naming both.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O error.",
    1, -1, "need at least one summary",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    (void)c;
    (void)key;
    *(const char **)ctx = arg;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

struct list {
    char **v;
    size_t n, alloc;
};

static int push(struct list *l, const char *s)
{
    if (l->n == l->alloc) {
        size_t a = l->alloc ? 2 * l->alloc : 16;
        char **v = realloc(l->v, a * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->alloc = a;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

static int oom(void)
{
    fputs("tracetool: out of memory\n", stderr);
    return EXIT_IO;
}

/* the operands, each directory replaced by the summaries in it */
static int expand(char **ops, int n, struct list *l)
{
    int i;
    size_t k;
    for (i = 0; i < n; i++) {
        tt_dir_walk w;
        int found = 0;
        if (!is_dir(ops[i])) {
            if (push(l, ops[i]) < 0)
                return oom();
            continue;
        }
        if (tt_walk_traces(ops[i], &w) < 0) {
            tt_dir_walk_free(&w);
            return report_error(TT_ENOMEM);
        }
        for (k = 0; k < w.nfiles; k++) {
            if (!tt_is_summary_file(w.files[k]))
                continue;
            found = 1;
            if (push(l, w.files[k]) < 0) {
                tt_dir_walk_free(&w);
                return oom();
            }
        }
        tt_dir_walk_free(&w);
        if (!found) {
            fprintf(stderr, "tracetool: %s: no summaries in this directory\n", ops[i]);
            return EXIT_IO;
        }
    }
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    struct list l = { NULL, 0, 0 };
    int rc, first;
    size_t k;
    if (!(first = cli_parse(&cmd, argc, argv, set, &out)))
        return 0;
    if (!out)
        cli_usage_error(&cmd, "-o OUT is required");
    check_outputs_not_inputs(&cmd, out, (const char *const *)(argv + first), argc - first);
    rc = expand(argv + first, argc - first, &l);
    if (rc == 0) {
        check_outputs_not_inputs(&cmd, out, (const char *const *)l.v, (int)l.n);
        rc = tt_summary_merge((const char *const *)l.v, l.n, out);
        rc = rc < 0 ? report_error(rc) : EXIT_OK;
    }
    for (k = 0; k < l.n; k++)
        free(l.v[k]);
    free(l.v);
    return rc;
}
