/*
 * tests/unit/test_breakdown_annot.c - `breakdown --by annotation [--kernels]`
 * (analyze/breakdown/breakdown_annot.c) on a hand-made trace whose answer is
 * known by construction: nesting, an activity straddling an annotation's
 * end, one starting where another ends, a zero-length one, two annotations
 * of the same length, another stream; from the file (its events in order
 * and reversed) and a database, with the spills in memory and forced to
 * disk; the time range.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "tracetool/breakdown.h"
#include "kseq_doc.h"

#include <math.h>
#include <string.h>

static void cleanup(void);
TestSuite(breakdown_annot, .timeout = 300, .fini = cleanup);

#define AN(name, tid, ts, dur)                                                              \
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"" name "\",\"pid\":0,"         \
    "\"tid\":" #tid ",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"External id\":1}}"
#define KN(name, tid, ts, dur, corr)                                                        \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #tid         \
    ",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr ",\"device\":0,"     \
    "\"stream\":" #tid "}}"
#define RT(ts, corr)                                                                        \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"        \
    "\"tid\":1,\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}}"

/*
 * Stream 7: "outer" [0, 100) holds "inner" [10, 50); "tie1" [60, 70) and
 * "tie2" [62, 72) last as long; "inner" again [150, 160). k1 [20, 30) and
 * k3 [45, 55) (past inner's end) go to inner; k2 [5, 8), the zero-length k5
 * at 10 (inner starts there: no overlap) and k7 [95, 105) to outer; k8 [65,
 * 66) to tie2 (the later start of two as short); k4 [100, 110) starts where
 * outer ends: none. Stream 8: "other" [200, 300); k6 [20, 30): none. k1 was
 * launched at 1000 (its call), k2 at 1; the others have no call.
 */
static const char *const EVENTS[] = {
    AN("outer", 7, 0, 100), AN("inner", 7, 10, 40), AN("tie1", 7, 60, 10), AN("tie2", 7, 62, 10),
    AN("inner", 7, 150, 10), AN("other", 8, 200, 100),
    KN("k1", 7, 20, 10, 1), KN("k2", 7, 5, 3, 2), KN("k3", 7, 45, 10, 3), KN("k4", 7, 100, 10, 4),
    KN("k5", 7, 10, 0, 5), KN("k6", 8, 20, 10, 6), KN("k7", 7, 95, 10, 7), KN("k8", 7, 65, 1, 8),
    RT(1000, 1), RT(1, 2),
};
#define NEV (sizeof(EVENTS) / sizeof(EVENTS[0]))
#define US 1000

#define PREFIX "bdannot"

static void cleanup(void)
{
    kseq_cleanup(PREFIX);
}

static const char *write_doc(int reversed)
{
    return kseq_write(PREFIX, EVENTS, NEV, reversed);
}

static int run(const char *path, int db, const tt_bd_options *o, tt_bd_result *r)
{
    tt_db *d;
    int rc;
    if (!db)
        return tt_breakdown_file_result(path, o, r);
    rc = tt_breakdown_db_result(d = kseq_db_open(PREFIX, path), o, r);
    kseq_db_close(PREFIX, d);
    return rc;
}

static const tt_bd_annot *row_named(const tt_bd_result *r, const char *name)
{
    size_t i;
    for (i = 0; i < r->nannots; i++)
        if (!strcmp(r->annots[i].name, name))
            return &r->annots[i];
    return NULL;
}

static void expect_row(const tt_bd_result *r, const char *name, int64_t n, int64_t sum_us,
                       int64_t min_us, int64_t max_us)
{
    const tt_bd_annot *x = row_named(r, name);
    cr_assert_not_null(x, "no row %s", name);
    cr_expect_eq(x->count, n, "%s: count %ld", name, (long)x->count);
    cr_expect_eq(x->gpu_ns, sum_us * US, "%s: sum %ld", name, (long)x->gpu_ns);
    cr_expect_eq(x->min_ns, min_us * US, "%s: min %ld", name, (long)x->min_ns);
    cr_expect_eq(x->max_ns, max_us * US, "%s: max %ld", name, (long)x->max_ns);
    cr_expect_float_eq(x->mean_ns, (double)sum_us * US / (double)n, 1e-6);
    cr_expect_eq(x->rank, -1);
    cr_expect_eq(x->trace_id, 1);
}

#define EACH_INPUT(path, db, tiny) KSEQ_EACH_INPUT(path, db, tiny, write_doc)

Test(breakdown_annot, own_durations)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    const char *path;
    int db, tiny;
    o.by = TT_BD_BY_ANNOTATION;
    EACH_INPUT(path, db, tiny) {
        tt_bd_result r;
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        cr_assert_eq(r.by, TT_BD_BY_ANNOTATION);
        cr_assert_eq(r.nannots, 5, "input %d: %zu rows", db, r.nannots);
        cr_expect_str_eq(r.annots[0].name, "other"); /* 100, then outer 100: by name */
        cr_expect_str_eq(r.annots[1].name, "outer");
        cr_expect_str_eq(r.annots[2].name, "inner");
        expect_row(&r, "inner", 2, 50, 10, 40);
        expect_row(&r, "outer", 1, 100, 100, 100);
        expect_row(&r, "tie2", 1, 10, 10, 10);
        cr_expect_float_eq(row_named(&r, "inner")->std_ns, sqrt(2 * 15.0 * 15.0) * US, 1e-6);
        cr_expect_float_eq(row_named(&r, "outer")->std_ns, 0, 1e-12);
        cr_expect_eq(r.traces, 1);
        tt_bd_result_free(&r);
    }
    tt__spill_set_limit(0);
}

Test(breakdown_annot, kernels_under_the_innermost)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    const char *path;
    int db, tiny;
    o.by = TT_BD_BY_ANNOTATION;
    o.annot_kernels = 1;
    EACH_INPUT(path, db, tiny) {
        tt_bd_result r;
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        cr_assert_eq(r.nannots, 4, "input %d: %zu rows", db, r.nannots);
        expect_row(&r, "inner", 2, 20, 10, 10);
        expect_row(&r, "outer", 3, 13, 0, 10);
        expect_row(&r, "tie2", 1, 1, 1, 1);
        expect_row(&r, TT_BD_NO_ANNOT, 2, 20, 10, 10);
        cr_expect_null(row_named(&r, "tie1"));
        cr_expect(r.annot_kernels);
        tt_bd_result_free(&r);
    }
    tt__spill_set_limit(0);
}

Test(breakdown_annot, time_range)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    int db;
    o.by = TT_BD_BY_ANNOTATION;
    o.annot_kernels = 1;
    o.filter.to_ns = 500 * US; /* k1, launched at 1000, is out; "other" is in */
    for (db = 0; db < 2; db++) {
        cr_assert_eq(run(write_doc(0), db, &o, &r), 0, "%s", tt_error_last()->message);
        expect_row(&r, "inner", 1, 10, 10, 10);
        expect_row(&r, "outer", 3, 13, 0, 10);
        tt_bd_result_free(&r);
    }
    o.filter.from_ns = 8 * US; /* outer starts at 0: out; k2 launched at 1: out */
    o.annot_kernels = 0;
    cr_assert_eq(run(write_doc(0), 0, &o, &r), 0);
    cr_expect_null(row_named(&r, "outer"));
    expect_row(&r, "inner", 2, 50, 10, 40);
    tt_bd_result_free(&r);
    o.annot_kernels = 1;
    cr_assert_eq(run(write_doc(0), 0, &o, &r), 0);
    expect_row(&r, "inner", 1, 10, 10, 10);     /* k3 */
    expect_row(&r, TT_BD_NO_ANNOT, 4, 30, 0, 10); /* k4, k5, k6, k7 */
    tt_bd_result_free(&r);
    o.filter.from_ns = 400 * US; /* no annotation: an error */
    cr_expect_eq(run(write_doc(0), 0, &o, &r), TT_ENOTFOUND);
    tt_bd_result_free(&r);
}

Test(breakdown_annot, refused)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    o.by = TT_BD_BY_ANNOTATION;
    o.steps_set = 1;
    cr_expect_eq(run(write_doc(0), 0, &o, &r), TT_EINVALID);
    tt_bd_result_free(&r);
    o.steps_set = 0;
    o.filter.under = "op"; /* version 3: the time range only */
    o.version = 3;
    cr_expect_eq(run(write_doc(0), 0, &o, &r), TT_EINVALID);
    tt_bd_result_free(&r);
    o.version = 4;
    o.filter.under = NULL;
    cr_assert_eq(run(write_doc(0), 0, &o, &r), 0);
    cr_expect_eq(tt_breakdown_html(&r, "t", "/tmp/never_written.html"), TT_EINVALID);
    tt_bd_result_free(&r);
}

/* ---- --name and --under ---- */

#define UA(name, ts, dur, ext)                                                              \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,"  \
    "\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"External id\":" #ext "}}"
#define GA(name, ts, dur, ext)                                                              \
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"" name "\",\"pid\":0,"         \
    "\"tid\":7,\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"External id\":" #ext "}}"

/*
 * Thread 1: the op "step" [0, 100] holds the user_annotation "fwd" [10, 30]
 * and a launch at 20 (k_a); "bwd" [120, 150] and the launch at 130 (k_b)
 * are after it. Stream 7: their GPU annotations "fwd" [200, 250] and "bwd"
 * [300, 340] (by External id), k_a [210, 220] and k_b [310, 330].
 */
static const char *const FILTERED[] = {
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"step\",\"pid\":1,\"tid\":1,\"ts\":0,"
    "\"dur\":100}",
    UA("fwd", 10, 20, 11), RT(20, 21), UA("bwd", 120, 30, 12), RT(130, 22),
    GA("fwd", 200, 50, 11), GA("bwd", 300, 40, 12),
    KN("k_a", 7, 210, 10, 21), KN("k_b", 7, 310, 20, 22),
};

static const char *write_filtered(int reversed)
{
    return kseq_write(PREFIX, FILTERED, sizeof(FILTERED) / sizeof(FILTERED[0]), reversed);
}

/* one row only, name: count 1, dur_us */
static void expect_only(const tt_bd_result *r, const char *name, int64_t dur_us)
{
    cr_assert_eq(r->nannots, 1, "%zu rows", r->nannots);
    expect_row(r, name, 1, dur_us, dur_us, dur_us);
}

Test(breakdown_annot, name_and_under)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    const char *path;
    int db, tiny;
    o.by = TT_BD_BY_ANNOTATION;
    KSEQ_EACH_INPUT(path, db, tiny, write_filtered) {
        /* the annotations whose user_annotation is under "step": fwd */
        o.annot_kernels = 0;
        o.filter.under = "step";
        o.filter.name = NULL;
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        expect_only(&r, "fwd", 50);
        tt_bd_result_free(&r);
        /* --kernels: what was launched under "step" (k_a, under fwd) */
        o.annot_kernels = 1;
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        expect_only(&r, "fwd", 10);
        tt_bd_result_free(&r);
        /* --name: the annotations, with --kernels the activities */
        o.filter.under = NULL;
        o.filter.name = "k_b";
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        expect_only(&r, "bwd", 20);
        tt_bd_result_free(&r);
        o.annot_kernels = 0;
        o.filter.name = "^b";
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        expect_only(&r, "bwd", 40);
        tt_bd_result_free(&r);
    }
    tt__spill_set_limit(0);
    o.filter.name = "nothing"; /* nothing passes: an error naming the filters */
    cr_expect_eq(run(write_filtered(0), 0, &o, &r), TT_ENOTFOUND);
    cr_expect(strstr(tt_error_last()->message, "--name"), "%s", tt_error_last()->message);
    tt_bd_result_free(&r);
}
