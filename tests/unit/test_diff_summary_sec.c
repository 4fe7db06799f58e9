/*
 * tests/unit/test_diff_summary_sec.c - diff's section of a per-rank summary
 * (compare/diff/diff_sumsec.c). Expected values: the side diff builds from
 * the traces themselves (the existing path, tt_diff_side_load on the trace
 * files or their directory), field by field, against the side rebuilt from
 * the sections (a section written and read back; a summary written by
 * tt_summarize / tt_summary_merge); and --rename applied to a section's keys
 * equal to a hand-made side whose renamed keys are summed.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "compare/diff/diff_sumsec.h" /* internal */
#include "tracetool/diff.h"
#include "tracetool/summary.h"

#define CTRL TT_SHARED "/testdata/hta/trace_diff/control/control.json.gz"
#define DLRM TT_SHARED "/testdata/param/dlrm_8rank/kineto"

static void need(const char *path)
{
    if (access(path, R_OK) != 0)
        cr_skip_test("shared test data missing: %s", path);
}

static int same_num(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* every field of two sides equal (label too when with_label) */
static void same_side(const struct tt_diff_side *a, const struct tt_diff_side *b, int with_label)
{
    size_t i, m, k;
    if (with_label)
        cr_expect_str_eq(a->label, b->label);
    cr_expect_str_eq(a->gpu, b->gpu);
    cr_expect_eq(a->world, b->world);
    cr_expect_eq(a->has_gpu, b->has_gpu);
    cr_expect_eq(a->has_mem, b->has_mem);
    cr_expect_eq(a->ntraces, b->ntraces);
    cr_expect_eq(a->nruns, b->nruns);
    cr_assert_eq(a->n, b->n, "samples %zu vs %zu", a->n, b->n);
    for (i = 0; i < a->n; i++) {
        cr_expect_eq(a->step[i], b->step[i]);
        cr_expect_eq(a->rank[i], b->rank[i]);
        cr_expect_eq(a->run[i], b->run[i]);
        for (m = 0; m < M_COUNT; m++)
            cr_expect(same_num(a->m[m][i], b->m[m][i]), "metric %zu sample %zu: %.17g vs %.17g", m,
                      i, a->m[m][i], b->m[m][i]);
    }
    cr_assert_eq(a->nkeys, b->nkeys, "keys %zu vs %zu", a->nkeys, b->nkeys);
    for (k = 0; k < a->nkeys; k++) {
        cr_assert_str_eq(a->keys[k].kind, b->keys[k].kind);
        cr_assert_str_eq(a->keys[k].key, b->keys[k].key, "key %zu in the same order", k);
        for (i = 0; i < a->n; i++)
            cr_expect(a->keys[k].count[i] == b->keys[k].count[i] &&
                          a->keys[k].ns[i] == b->keys[k].ns[i] &&
                          a->keys[k].dev[i] == b->keys[k].dev[i],
                      "key %s sample %zu", a->keys[k].key, i);
    }
}

struct text {
    const char *data;
    size_t len;
};

static void text_init(void *ctx, tt_jp *jp)
{
    struct text *t = ctx;
    tt_jp_init(jp, "section", t->data, 0, t->data, t->len);
}

/* s written as a section and read back (ren: NULL or rules) */
static struct tt_diff_side *round_trip(const struct tt_diff_side *s, int64_t rank,
                                       const struct tt__renames *ren, int64_t *rank_out)
{
    tt_buf b;
    tt_jw w;
    struct text t;
    struct tt_diff_side *back = NULL;
    tt_buf_init(&b);
    tt_jw_init(&w, &b, TT_JW_COMPACT);
    tt__diff_side_json(&w, s, rank);
    cr_assert_eq(tt_jw_finish(&w), 0);
    t.data = b.buf;
    t.len = b.len;
    cr_assert_eq(tt__diff_section_read(text_init, &t, "section", ren, &back, rank_out), 0, "%s",
                 tt_error_last()->message);
    tt_buf_release(&b);
    return back;
}

Test(diff_sumsec, section_round_trip)
{
    struct tt_diff_side *t = NULL, *back;
    int64_t rank = -2, r2 = -2;
    need(CTRL);
    cr_assert_eq(tt__diff_trace_one(NULL, 0, CTRL, &t, &rank), 0, "%s", tt_error_last()->message);
    cr_assert_not_null(t);
    cr_expect_eq(rank, 3, "control.json.gz is rank 3 of 8");
    cr_assert(t->n > 5 && t->nkeys > 10);
    back = round_trip(t, rank, NULL, &r2);
    cr_expect_eq(r2, rank);
    same_side(t, back, 1);
    tt_diff_side_free(back);
    tt_diff_side_free(t);
}

/* two samples, keys made in the order a, k, b */
static struct tt_diff_side *small_side(void)
{
    struct tt_diff_side *s = calloc(1, sizeof(*s));
    long a, k, b;
    size_t i;
    s->world = -1;
    cr_assert(tt__diff_add_sample(s, 1) == 0 && tt__diff_add_sample(s, 2) == 1);
    a = tt__diff_key(s, "op", "aten::alpha");
    k = tt__diff_key(s, "kernel", "gemm");
    b = tt__diff_key(s, "op", "aten::beta");
    for (i = 0; i < 2; i++) {
        s->m[M_CPU_STEP][i] = 1000.5 + (double)i;
        s->keys[a].count[i] = 1;
        s->keys[a].ns[i] = 10 + (double)i;
        s->keys[k].count[i] = 2;
        s->keys[k].ns[i] = s->keys[k].dev[i] = 7;
        s->keys[b].count[i] = 3;
        s->keys[b].ns[i] = 0.25;
    }
    return s;
}

Test(diff_sumsec, rename_on_read_sums_alike_keys)
{
    struct tt_diff_side *s = small_side(), *back;
    struct tt__renames ren;
    char path[] = "/tmp/tt-sumsec-renXXXXXX";
    int fd = mkstemp(path);
    int64_t r;
    size_t i;
    cr_assert(fd >= 0);
    cr_assert(write(fd, "aten::(alpha|beta) => aten::ab\n", 31) == 31);
    close(fd);
    memset(&ren, 0, sizeof(ren));
    cr_assert_eq(tt__renames_load(path, &ren), 0);
    back = round_trip(s, 5, &ren, &r);
    unlink(path);
    cr_expect_eq(r, 5);
    cr_assert_eq(back->nkeys, 2);
    cr_expect_str_eq(back->keys[0].key, "aten::ab", "the renamed key where its first part was");
    cr_expect_str_eq(back->keys[1].key, "gemm");
    for (i = 0; i < 2; i++) {
        cr_expect_eq(back->keys[0].count[i], 4);
        cr_expect_eq(back->keys[0].ns[i], 10.25 + (double)i);
        cr_expect_eq(back->m[M_CPU_STEP][i], 1000.5 + (double)i, "doubles exact");
        cr_expect(isnan(back->m[M_DEV_STEP][i]), "an unknown metric stays unknown");
    }
    tt__renames_free(&ren);
    tt_diff_side_free(back);
    tt_diff_side_free(s);
}

/* the side of inputs (n of them) */
static struct tt_diff_side *side_of(const char *const *in, size_t n, const tt_diff_options *o)
{
    struct tt_diff_side *s = NULL;
    cr_assert_eq(tt_diff_side_load(in, n, o, 0, &s), 0, "%s: %s", tt_error_last()->source,
                 tt_error_last()->message);
    return s;
}

Test(diff_sumsec, summary_side_is_the_traces_side)
{
    char dir[] = "/tmp/tt-sumsec-XXXXXX", one[4200], whole[4200], part[8][4200], merged[4200];
    const char *in[8], *names[8];
    tt_diff_options o = TT_DIFF_OPTIONS_INIT;
    tt_summarize_options so = TT_SUMMARIZE_OPTIONS_INIT;
    struct tt_diff_side *a, *b;
    tt_dir_walk w;
    size_t k;
    need(CTRL);
    need(DLRM);
    cr_assert(mkdtemp(dir));
    /* one trace */
    snprintf(one, sizeof(one), "%s/one.summary.json", dir);
    cr_assert_eq(tt_summarize(CTRL, &so, one), 0, "%s", tt_error_last()->message);
    in[0] = CTRL;
    a = side_of(in, 1, &o);
    in[0] = one;
    b = side_of(in, 1, &o);
    same_side(a, b, 1);
    tt_diff_side_free(a);
    tt_diff_side_free(b);
    /* eight ranks: the directory, its summary, the merge of per-rank summaries
     * given in reverse order */
    cr_assert_eq(tt_walk_traces(DLRM, &w), 0);
    cr_assert_eq(w.nfiles, 8);
    for (k = 0; k < 8; k++) {
        snprintf(part[k], sizeof(part[k]), "%s/r%zu.json", dir, k);
        cr_assert_eq(tt_summarize(w.files[k], &so, part[k]), 0, "%s", tt_error_last()->message);
        names[7 - k] = part[k];
    }
    snprintf(merged, sizeof(merged), "%s/merged.json.gz", dir);
    cr_assert_eq(tt_summary_merge(names, 8, merged), 0, "%s", tt_error_last()->message);
    snprintf(whole, sizeof(whole), "%s/whole.json", dir);
    cr_assert_eq(tt_summarize(DLRM, &so, whole), 0, "%s", tt_error_last()->message);
    in[0] = DLRM;
    a = side_of(in, 1, &o);
    for (k = 0; k < 2; k++) {
        in[0] = k ? merged : whole;
        b = side_of(in, 1, &o);
        same_side(a, b, 1);
        tt_diff_side_free(b);
    }
    tt_diff_side_free(a);
    /* each rank on its own: --rank-agg each, as ranks given one by one */
    o.rank_each = 1;
    for (k = 0; k < 8; k++)
        in[k] = w.files[k];
    a = side_of(in, 8, &o);
    in[0] = merged;
    b = side_of(in, 1, &o);
    same_side(a, b, 0);
    tt_diff_side_free(a);
    tt_diff_side_free(b);
    /* --match name: not in a summary */
    o.match = TT_MATCH_NAME;
    cr_expect_eq(tt_diff_side_load(in, 1, &o, 0, &b), TT_EUNSUPPORTED);
    cr_expect(strstr(tt_error_last()->message, "--match name") != NULL, "%s",
              tt_error_last()->message);
    for (k = 0; k < 8; k++)
        unlink(part[k]);
    unlink(one);
    unlink(whole);
    unlink(merged);
    rmdir(dir);
    tt_dir_walk_free(&w);
}
