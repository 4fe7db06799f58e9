/*
 * tests/unit/test_info.c - tt_info_file_result / tt_info_db_result on real
 * traces, checked against tests/fixtures/kernels_info_expect.py (Python
 * standard library, straight from the JSON):
 *
 *   python3 tests/fixtures/kernels_info_expect.py \
 *       testdata/kineto/simple_add_trace.json.gz \
 *       testdata/kineto/resnet50_2021-06_trace.json.gz \
 *       ../shared/testdata/hta/trace_diff/control/control.json.gz
 *
 * Every expected number below is copied from that script's output. The file
 * path and the database path must both give them.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"

#include <criterion/criterion.h>

#include "tests/unit/shared_data.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(info, .timeout = 120);

struct cexp {
    char ph;
    const char *cat; /* NULL: none */
    int64_t n;
};

struct sexp {
    int64_t device, stream, n;
};

struct iexp {
    int64_t events, start, end, threads, devices, kernels;
    struct cexp cats[12];
    struct sexp streams[5];
};

static void check_summary(const tt_info_summary *s, const struct iexp *e)
{
    size_t i, n = 0;
    cr_expect_eq(s->events, e->events, "events %ld", (long)s->events);
    cr_expect(s->have_span);
    cr_expect_eq(s->start_ns, e->start, "start %ld", (long)s->start_ns);
    cr_expect_eq(s->end_ns, e->end, "end %ld", (long)s->end_ns);
    cr_expect_eq(s->cpu_threads, e->threads, "threads %ld", (long)s->cpu_threads);
    cr_expect_eq(s->devices, e->devices, "devices %ld", (long)s->devices);
    cr_expect_eq(s->gpu_kernels, e->kernels);
    /* same order as the script: most events first, then ph, then cat */
    for (n = 0; e->cats[n].ph; n++)
        ;
    cr_expect_eq(s->ncategories, n, "categories %zu, want %zu", s->ncategories, n);
    for (i = 0; i < n && i < s->ncategories; i++) {
        const tt_info_category *c = &s->categories[i];
        cr_expect_eq(c->ph, e->cats[i].ph, "category %zu ph %c", i, c->ph);
        if (e->cats[i].cat)
            cr_expect_str_eq(c->cat ? c->cat : "(null)", e->cats[i].cat);
        else
            cr_expect_null(c->cat);
        cr_expect_eq(c->count, e->cats[i].n, "category %zu (%s) count %ld", i,
                     c->cat ? c->cat : "-", (long)c->count);
    }
    for (n = 0; e->streams[n].n; n++)
        ;
    cr_expect_eq(s->nstreams, n);
    for (i = 0; i < n && i < s->nstreams; i++) {
        cr_expect_eq(s->streams[i].device, e->streams[i].device);
        cr_expect_eq(s->streams[i].stream, e->streams[i].stream);
        cr_expect_eq(s->streams[i].activities, e->streams[i].n);
    }
}

static void check_both(const char *path, const struct iexp *e)
{
    char dir[] = "/tmp/tt_info_XXXXXX", db_path[64], cmd[96];
    tt_info_result r;
    tt_db *db = NULL;
    cr_assert_eq(tt_info_file_result(path, NULL, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.ntraces, 1);
    cr_expect_eq(r.traces[0].trace_id, 0);
    cr_expect_str_eq(r.traces[0].path, path);
    cr_expect_str_eq(r.traces[0].format, "kineto-json");
    check_summary(&r.traces[0], e);
    tt_info_result_free(&r);

    cr_assert_not_null(mkdtemp(dir));
    snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, db_path, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_info_db_result(db, NULL, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.ntraces, 1);
    cr_expect_eq(r.traces[0].trace_id, 1);
    check_summary(&r.traces[0], e);
    tt_info_result_free(&r);
    tt_db_free(db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(info, simple_add)
{
    static const struct iexp e = {
        111, 1689360788459677000, 1689360808308238000, 2, 1, 4,
        { { 'M', NULL, 34 }, { 'X', "cpu_op", 28 }, { 'X', "cuda_runtime", 15 },
          { 'f', "ac2g", 10 }, { 's', "ac2g", 9 }, { 'X', "user_annotation", 8 },
          { 'X', "kernel", 4 }, { 'i', NULL, 2 }, { 'X', "Trace", 1 } },
        { { 0, 7, 4 } },
    };
    check_both(TT_TESTDATA "/kineto/simple_add_trace.json.gz", &e);
}

Test(info, resnet50)
{
    static const struct iexp e = {
        75718, 1623142623460016000, 1623142624633484000, 3, 1, 8772,
        { { 'X', "Operator", 23646 }, { 'i', NULL, 12840 }, { 'X', "Runtime", 11923 },
          { 'f', "async", 9096 }, { 's', "async", 9096 }, { 'X', "Kernel", 8772 },
          { 'X', "Memset", 312 }, { 'M', NULL, 20 }, { 'X', "Memcpy", 12 },
          { 'X', "Trace", 1 } },
        { { 0, 7, 9096 } },
    };
    check_both(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", &e);
}

Test(info, hta_control)
{
    static const struct iexp e = {
        109123, 1661203462584767000, 1661203463125562000, 3, 1, 8568,
        { { 'X', "cpu_op", 40506 }, { 'X', "cuda_runtime", 24692 },
          { 'f', "async_cpu_to_gpu", 24692 }, { 's', "async_cpu_to_gpu", 9450 },
          { 'X', "kernel", 8568 }, { 'X', "gpu_memset", 654 }, { 'X', "user_annotation", 288 },
          { 'X', "gpu_memcpy", 228 }, { 'M', NULL, 42 }, { 'i', NULL, 2 }, { 'X', "Trace", 1 } },
        { { 3, 7, 8964 }, { 3, 20, 282 }, { 3, 21, 60 }, { 3, 22, 144 } },
    };
    const char *p = shared_path("hta/trace_diff/control/control.json.gz");
    check_both(p, &e);
}

Test(info, no_such_trace)
{
    char dir[] = "/tmp/tt_info_XXXXXX", db_path[64], cmd[96];
    tt_info_options o = TT_INFO_OPTIONS_INIT;
    tt_info_result r;
    tt_db *db = NULL;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, db_path, TT_DB_CREATE), 0);
    cr_expect_eq(tt_info_db_result(db, NULL, &r), 0);
    cr_expect_eq(r.ntraces, 0);
    o.trace_id = 5;
    cr_expect_eq(tt_info_db_result(db, &o, &r), TT_ENOTFOUND);
    cr_expect_eq(r.ntraces, 0);
    tt_db_free(db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* the rank overview of the 8-rank DLRM job ingested in the wrong order:
 * rows by rank, each on its own V100 (device = rank), one step, world 8
 * (the values of the traces' distributedInfo, deviceProperties and
 * ProfilerStep#10 annotation, read with Python's json) */
Test(info, ranks_dlrm)
{
    static const char *const names[] = {
        "worker7_step_12.1694128201553", "worker3_step_12.1694128201557",
        "worker0_step_12.1694128201545", "worker5_step_12.1694128201549",
        "worker1_step_12.1694128201556", "worker6_step_12.1694128201553",
        "worker2_step_12.1694128201554", "worker4_step_12.1694128201547",
    };
    static const int64_t events[8] = { 3290, 3424, 3268, 3474, 3310, 3250, 3272, 3250 };
    char dir[] = "/tmp/tt_info_XXXXXX", db_path[64], cmd[96], rel[128];
    tt_info_ranks r;
    tt_db *db = NULL;
    size_t i;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, db_path, TT_DB_CREATE), 0);
    for (i = 0; i < 8; i++) {
        snprintf(rel, sizeof(rel), "param/dlrm_8rank/kineto/%s.pt.trace.json.gz", names[i]);
        cr_assert_eq(tt_ingest_file(db, shared_path(rel), NULL, NULL), 0, "%s",
                     tt_error_last()->message);
    }
    cr_assert_eq(tt_info_ranks_db(db, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.n, 8);
    for (i = 0; i < 8; i++) {
        cr_expect(r.rows[i].have_rank && r.rows[i].rank == (int64_t)i, "row %zu", i);
        cr_expect(r.rows[i].have_world_size && r.rows[i].world_size == 8);
        cr_expect_eq(r.rows[i].device, (int64_t)i);
        cr_expect_str_eq(r.rows[i].gpu, "Tesla V100-SXM2-32GB");
        cr_expect_eq(r.rows[i].steps, 1);
        cr_expect_eq(r.rows[i].events, events[i]);
        cr_expect(r.rows[i].have_span && r.rows[i].end_ns > r.rows[i].start_ns);
    }
    tt_info_ranks_free(&r);
    tt_info_ranks_free(&r); /* emptied: a second free is harmless */
    tt_db_free(db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}
