/*
 * tests/unit/test_kernels_stream.c - `kernels --by op` and `--steps` as a
 * consumer of the record stream (analyze/kernels/kernels_stream.c): the
 * grouping of a hand-made trace whose answer is known by construction, from
 * the file and from a database, and the memory the consumer holds (its
 * peak count of links and waiting values, tt__kern_last_peak) staying the
 * same when the same kernels repeat N or 4N times.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "analyze/kernels/kernels_state.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(kernels_stream, .timeout = 300);

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/tt_kstream_%d_%s", (int)getpid(), name);
}

/* the result of `kernels` under o: from the file, or (db) through a
 * database the file is ingested into */
static void run(const char *path, int db, const tt_kern_options *o, tt_kern_result *r)
{
    if (!db) {
        cr_assert_eq(tt_kernels_file_result(path, o, r), 0, "%s", tt_error_last()->message);
        return;
    }
    {
        char dbp[256];
        tt_db *d;
        tmp_path(dbp, sizeof(dbp), "k.db");
        unlink(dbp);
        cr_assert_eq(tt_db_open(&d, dbp, TT_DB_CREATE), 0);
        cr_assert_eq(tt_ingest_file(d, path, NULL, NULL), 0, "%s", tt_error_last()->message);
        cr_assert_eq(tt_kernels_db_result(d, o, r), 0, "%s", tt_error_last()->message);
        tt_db_free(d);
        unlink(dbp);
    }
}

/* ---- the grouping by op, known by construction ---- */

#define OP(name, ts, dur)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "},"
#define RT(ts, corr)                                                                        \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"        \
    "\"tid\":1,\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}},"
#define KN(name, ts, dur, corr)                                                             \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr ",\"device\":0,\"stream\":7}},"
#define STEP(n, ts, dur)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"pid\":1,"  \
    "\"tid\":2,\"ts\":" #ts ",\"dur\":" #dur "}"

/*
 * aten::mm [10, 30] launches k1 (5 ns; its call first, as ROCm writes it)
 * at 12; aten::mm [40, 60] launches k2 (7 ns; the kernel first, as Kineto
 * writes it) at 42; aten::add [70, 80] launches k1 (3 ns) at 72 and a
 * memcpy (2 ns, 64 bytes) at 74; k3 (11 ns, at 30) has no call, so no op.
 * By op: aten::mm 2 kernels 12 ns (5 and 7), [no CPU op] 1 of 11 ns,
 * aten::add 1 of 3 ns; the memcpy is grouped by kind. The ProfilerStep
 * slices [0, 50) and [50, 100) come last in the file: step 1 holds the
 * launches at 12, 42 and k3's own start 30; step 2 those at 72 and 74.
 */
static const char OPDOC[] =
    "{\"traceEvents\": ["
    OP("aten::mm", 10, 20) RT(12, 1) KN("k1", 20, 0.005, 1)
    OP("aten::mm", 40, 20) KN("k2", 50, 0.007, 2) RT(42, 2)
    OP("aten::add", 70, 10) RT(72, 3) KN("k1", 75, 0.003, 3) RT(74, 4)
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
    "\"pid\":0,\"tid\":7,\"ts\":76,\"dur\":0.002,\"args\":{\"correlation\":4,\"device\":0,"
    "\"stream\":7,\"bytes\":64}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":30,"
    "\"dur\":0.011,\"args\":{\"device\":0,\"stream\":7}},"
    STEP(1, 0, 50) "," STEP(2, 50, 50) "]}";

static void expect_row(const tt_kern_summary *s, size_t i, const char *name, int64_t n,
                       int64_t total, int64_t min, int64_t max)
{
    cr_assert(i < s->nrows, "row %zu of %zu", i, s->nrows);
    cr_expect_str_eq(s->rows[i].name, name);
    cr_expect_eq(s->rows[i].instances, n, "%s: %ld instances", name, (long)s->rows[i].instances);
    cr_expect_eq(s->rows[i].total_ns, total, "%s: total %ld", name, (long)s->rows[i].total_ns);
    cr_expect_eq(s->rows[i].min_ns, min);
    cr_expect_eq(s->rows[i].max_ns, max);
}

static const char *write_doc(const char *name, const char *doc)
{
    static char path[256];
    FILE *f;
    tmp_path(path, sizeof(path), name);
    cr_assert_not_null(f = fopen(path, "w"));
    fputs(doc, f);
    fclose(f);
    return path;
}

Test(kernels_stream, by_op_grouping)
{
    const char *path = write_doc("byop.json", OPDOC);
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    int db;
    o.by = TT_KERN_BY_OP;
    for (db = 0; db < 2; db++) {
        tt_kern_result r;
        run(path, db, &o, &r);
        cr_assert_eq(r.nsummaries, 2);
        cr_expect_eq(r.summaries[0].nrows, 3, "%s: %zu groups", db ? "db" : "file",
                     r.summaries[0].nrows);
        expect_row(&r.summaries[0], 0, "aten::mm", 2, 12, 5, 7);
        expect_row(&r.summaries[0], 1, "[no CPU op]", 1, 11, 11, 11);
        expect_row(&r.summaries[0], 2, "aten::add", 1, 3, 3, 3);
        cr_expect_float_eq(r.summaries[0].rows[0].med_ns, 6.0, 1e-9);
        cr_expect_eq(r.summaries[0].total_ns, 26);
        cr_assert_eq(r.summaries[1].nrows, 1);
        cr_expect_str_eq(r.summaries[1].rows[0].name, "memcpy HtoD");
        cr_expect_eq(r.summaries[1].rows[0].bytes, 64);
        tt_kern_result_free(&r);
    }
    unlink(path);
}

Test(kernels_stream, by_op_steps)
{
    const char *path = write_doc("steps.json", OPDOC);
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    int db;
    o.by = TT_KERN_BY_OP;
    o.steps_set = 1;
    for (db = 0; db < 2; db++) {
        tt_kern_result r;
        o.step_from = o.step_to = 2;
        run(path, db, &o, &r);
        cr_assert_eq(r.summaries[0].nrows, 1, "%s: %zu groups", db ? "db" : "file",
                     r.summaries[0].nrows);
        expect_row(&r.summaries[0], 0, "aten::add", 1, 3, 3, 3);
        cr_assert_eq(r.summaries[1].nrows, 1);
        cr_expect_eq(r.summaries[1].rows[0].instances, 1);
        tt_kern_result_free(&r);
        o.step_from = o.step_to = 1; /* k3 by its own start */
        run(path, db, &o, &r);
        cr_assert_eq(r.summaries[0].nrows, 2);
        expect_row(&r.summaries[0], 0, "aten::mm", 2, 12, 5, 7);
        expect_row(&r.summaries[0], 1, "[no CPU op]", 1, 11, 11, 11);
        cr_expect_eq(r.summaries[1].nrows, 0);
        tt_kern_result_free(&r);
    }
    o.by = TT_KERN_BY_NAME; /* a group by name: the launch by the runtime call too */
    o.step_from = o.step_to = 2;
    for (db = 0; db < 2; db++) {
        tt_kern_result r;
        run(path, db, &o, &r);
        cr_assert_eq(r.summaries[0].nrows, 1);
        expect_row(&r.summaries[0], 0, "k1", 1, 3, 3, 3);
        tt_kern_result_free(&r);
    }
    unlink(path);
}

/* ---- memory: the same kernels N and 4N times ---- */

/*
 * n iterations of 100 us: ProfilerStep#i [100 i, 100 i + 100) (all of them
 * last in the file), the op "op" [100 i + 10, +20] calling
 * cudaLaunchKernel at 100 i + 12 (correlation i + 1), which launches k of
 * (i % 7) + 1 ns.
 */
static const char *write_loop(const char *name, int n)
{
    static char path[256];
    FILE *f;
    int i;
    tmp_path(path, sizeof(path), name);
    cr_assert_not_null(f = fopen(path, "w"));
    fputs("{\"traceEvents\": [", f);
    for (i = 0; i < n; i++) {
        long b = 100L * i;
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,"
                "\"ts\":%ld,\"dur\":20},"
                "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                "\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":1,\"args\":{\"correlation\":%d}},"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                "\"ts\":%ld,\"dur\":0.00%d,\"args\":{\"correlation\":%d,\"device\":0,"
                "\"stream\":7}},",
                b + 10, b + 12, i + 1, b + 50, i % 7 + 1, i + 1);
    }
    for (i = 0; i < n; i++)
        fprintf(f,
                "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
                "\"pid\":1,\"tid\":2,\"ts\":%ld,\"dur\":100}",
                i ? "," : "", i, 100L * i);
    fputs("]}", f);
    fclose(f);
    return path;
}

/* the peak of `kernels` under o over the loop of n iterations; the op's
 * group holds the kernels of steps from..to (o) */
static size_t loop_peak(int n, const tt_kern_options *o, int db)
{
    const char *path = write_loop("loop.json", n);
    int64_t from = o->steps_set ? o->step_from : 0, to = o->steps_set ? o->step_to : n - 1;
    int64_t i, want_n = 0, want_total = 0;
    tt_kern_result r;
    size_t peak;
    run(path, db, o, &r);
    peak = tt__kern_last_peak();
    for (i = from; i <= to && i < n; i++) {
        want_n++;
        want_total += i % 7 + 1;
    }
    cr_assert_eq(r.summaries[0].nrows, 1);
    expect_row(&r.summaries[0], 0, "op", want_n, want_total, 1, 7);
    tt_kern_result_free(&r);
    unlink(path);
    return peak;
}

#define LOOP_N 6000 /* more than the values the consumer keeps in memory */

Test(kernels_stream, by_op_memory_bounded)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    size_t p1, p4;
    int db;
    o.by = TT_KERN_BY_OP;
    for (db = 0; db < 2; db++) {
        p1 = loop_peak(LOOP_N, &o, db);
        p4 = loop_peak(4 * LOOP_N, &o, db);
        cr_log_info("%s: peak %zu at N, %zu at 4N", db ? "db" : "file", p1, p4);
        /* a batch of rows' links at most: not one per kernel or per op */
        cr_expect(p4 <= 1024, "%s: peak %zu at 4N", db ? "db" : "file", p4);
        cr_expect(p4 <= p1 + 16, "%s: peak %zu at N, %zu at 4N", db ? "db" : "file", p1, p4);
    }
}

Test(kernels_stream, steps_memory_bounded)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    size_t p1, p4;
    int db;
    o.by = TT_KERN_BY_OP;
    o.steps_set = 1;
    o.step_from = 10;
    o.step_to = LOOP_N / 2;
    for (db = 0; db < 2; db++) {
        p1 = loop_peak(LOOP_N, &o, db);
        p4 = loop_peak(4 * LOOP_N, &o, db);
        cr_log_info("%s: peak %zu at N, %zu at 4N", db ? "db" : "file", p1, p4);
        /* the values waiting for the steps spill: fewer than the kernels */
        cr_expect(p4 < LOOP_N, "%s: peak %zu at 4N", db ? "db" : "file", p4);
        cr_expect(p4 <= p1 + 16, "%s: peak %zu at N, %zu at 4N", db ? "db" : "file", p1, p4);
    }
}
