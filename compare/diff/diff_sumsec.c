/*
 * compare/diff/diff_sumsec.c - diff's section of a per-rank summary
 * (tracetool.summary/1): for each trace, its part of a side as
 * tt__diff_rows_summary makes it (every step's sample, the keys by family
 * in the order they were made, world, GPU name, has_gpu/has_mem) and its
 * rank; and a summary given to diff as an input, read back as the traces
 * it holds, which diff_summary.c then combines as the traces of a directory
 * (runs by rank, the slowest rank per step, has_gpu "in every trace", ...),
 * so a summary gives the side its traces give.
 */
#include "common/compat.h"
#include "compare/diff/diff_sumsec.h"
#include "analyze/summary/sumfile.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tt__diff_sum_write(const struct tt__sum_src *src, tt_jw *w)
{
    struct tt_diff_side *t = NULL;
    int64_t rank = -1;
    int rc = tt__diff_trace_one(src->db, src->trace_id, src->path, &t, &rank);
    if (rc < 0)
        return rc;
    if (!t) { /* not a Chrome/Kineto trace: nothing for diff */
        tt_jw_null(w);
        return 0;
    }
    tt__diff_side_json(w, t, rank);
    tt_diff_side_free(t);
    return 0;
}

int tt__diff_is_sumfile(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && tt_is_summary_file(path);
}

struct sec {
    const struct tt_summary *s;
    const struct tt__sum_trace *t;
};

static void sec_init(void *ctx, tt_jp *jp)
{
    const struct sec *c = ctx;
    tt__sum_section_jp(c->s, c->t, TT__SEC_DIFF, jp);
}

/* the one trace's path, or the directory its traces share (as a directory
 * input names its side) */
static void label_of(const struct tt_summary *s, char *label, size_t cap)
{
    size_t i, n, k;
    const char *p;
    if (!s->n) {
        snprintf(label, cap, "%s", s->path);
        return;
    }
    p = s->traces[0].path;
    n = strlen(p);
    for (i = 1; i < s->n; i++) {
        const char *q = s->traces[i].path;
        for (k = 0; k < n && p[k] == q[k]; k++)
            ;
        n = k;
    }
    if (s->n > 1) {
        while (n > 0 && p[n - 1] != '/')
            n--;
        while (n > 1 && p[n - 1] == '/')
            n--;
    }
    if (!n) /* traces of no directory in common */
        snprintf(label, cap, "%s", s->path);
    else
        snprintf(label, cap, "%.*s", (int)n, p);
}

static const char *match_word(int m)
{
    return m == TT_MATCH_NAME ? "--match name" : m == TT_MATCH_OP ? "--match op" : "--match shape";
}

int tt__diff_sum_input(const char *path, const tt_diff_options *o, const struct tt__renames *ren,
                       int (*add)(void *ctx, struct tt_diff_side *t, int64_t rank), void *ctx,
                       char *label, size_t cap)
{
    tt_summary *s = NULL;
    size_t i;
    int rc = tt_summary_load(path, &s);
    if (rc < 0)
        return rc;
    if (o->match != TT_MATCH_FAMILY) /* its keys are the families */
        rc = tt__sum_unsupported(s, match_word(o->match));
    for (i = 0; rc == 0 && i < s->n; i++) {
        struct sec c = { s, &s->traces[i] };
        struct tt_diff_side *t = NULL;
        int64_t rank = -1;
        tt_jp jp;
        if (!c.t->sec[TT__SEC_DIFF]) {
            rc = tt__sum_missing(s, c.t, TT__SEC_DIFF);
            break;
        }
        sec_init(&c, &jp);
        if (tt_jp_peek(&jp) == TT_JT_NULL) /* not a Chrome/Kineto trace */
            continue;
        if ((rc = tt__diff_section_read(sec_init, &c, s->path, ren, &t, &rank)) == 0)
            rc = add(ctx, t, rank);
    }
    if (rc == 0)
        label_of(s, label, cap);
    tt_summary_free(s);
    return rc;
}

/* a diff-summary/1 among the inputs: it holds one side, not its traces */
static int old_summary(const char *path)
{
    return !tt__diff_is_sumfile(path) && tt__diff_is_summary(path);
}

int tt_diff_save_summary(const char *const *inputs, size_t n, const char *out_path)
{
    tt_summarize_options so = TT_SUMMARIZE_OPTIONS_INIT;
    char (*part)[4096];
    int *slot, rc = 0;
    size_t k, made = 0;
    for (k = 0; k < n; k++)
        if (old_summary(inputs[k]))
            return tt_error_set_at(TT_EUNSUPPORTED, inputs[k], -1,
                                   "a %s holds a whole side, not its traces: --save-summary"
                                   " writes a tracetool.summary/1 from traces, directories,"
                                   " databases or summaries", "tracetool.diff-summary/1");
    if (n == 1)
        return tt_summarize(inputs[0], &so, out_path);
    /* several inputs: each summarised into a temporary, then merged */
    part = calloc(n ? n : 1, sizeof(*part));
    slot = calloc(n ? n : 1, sizeof(*slot));
    if (!part || !slot) {
        free(part);
        free(slot);
        return tt__oom();
    }
    for (k = 0; k < n && rc == 0; k++) {
        int fd = tt__mkstemp(part[k], sizeof(part[k]), "diffsum");
        if (fd < 0) {
            rc = TT_EIO; /* set: which directory, why */
            break;
        }
        close(fd);
        slot[k] = tt__partial_add(part[k]);
        made++;
        rc = tt_summarize(inputs[k], &so, part[k]);
    }
    if (rc == 0) {
        const char **names = malloc(n * sizeof(*names));
        if (!names)
            rc = tt__oom();
        for (k = 0; rc == 0 && k < n; k++)
            names[k] = part[k];
        if (rc == 0)
            rc = tt_summary_merge(names, n, out_path);
        free(names);
    }
    for (k = 0; k < made; k++) {
        unlink(part[k]);
        tt__partial_remove(slot[k]);
    }
    free(part);
    free(slot);
    return rc;
}
