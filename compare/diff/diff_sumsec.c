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
#include "formats/sumfile.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
