/*
 * tests/unit/test_kernels.c - tt_kernels_file_result / tt_kernels_db_result
 * on real traces, checked against tests/fixtures/kernels_info_expect.py
 * (Python standard library, straight from the JSON):
 *
 *   python3 tests/fixtures/kernels_info_expect.py \
 *       testdata/kineto/simple_add_trace.json.gz \
 *       testdata/kineto/resnet50_2021-06_trace.json.gz \
 *       ../shared/testdata/hta/trace_diff/control/control.json.gz
 *
 * Every expected number below is copied from that script's output.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"

#include <criterion/criterion.h>

#include "tests/unit/shared_data.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(kernels, .timeout = 120);

struct krow {
    int64_t n, total, min, max;
    const char *prefix; /* the name starts with this */
};

struct mrow {
    int64_t n, total, bytes;
    const char *name;
};

struct kexp {
    size_t names;
    int64_t instances, total;
    struct krow top[3];
    struct mrow mem[4];
};

static void check_summaries(const tt_kern_result *r, const struct kexp *e)
{
    const tt_kern_summary *k, *m;
    int64_t inst = 0, tot = 0;
    size_t i;
    cr_assert_eq(r->nsummaries, 2);
    k = &r->summaries[0];
    m = &r->summaries[1];
    cr_assert_eq(k->memory, 0);
    cr_assert_eq(m->memory, 1);
    cr_expect_eq(k->nrows, e->names, "kernel names %zu, want %zu", k->nrows, e->names);
    cr_expect_eq(k->ngroups, (int64_t)e->names);
    cr_expect_eq(k->total_ns, e->total, "total %ld, want %ld", (long)k->total_ns, (long)e->total);
    for (i = 0; i < k->nrows; i++) {
        inst += k->rows[i].instances;
        tot += k->rows[i].total_ns;
        if (i)
            cr_expect(k->rows[i - 1].total_ns >= k->rows[i].total_ns, "sorted by total");
    }
    cr_expect_eq(inst, e->instances);
    cr_expect_eq(tot, e->total);
    for (i = 0; i < 3 && e->top[i].prefix; i++) {
        const tt_kern_row *x = &k->rows[i];
        const struct krow *w = &e->top[i];
        cr_expect_eq(strncmp(x->name, w->prefix, strlen(w->prefix)), 0, "row %zu: %.60s", i,
                     x->name);
        cr_expect_eq(x->instances, w->n, "row %zu instances %ld", i, (long)x->instances);
        cr_expect_eq(x->total_ns, w->total, "row %zu total %ld", i, (long)x->total_ns);
        cr_expect_eq(x->min_ns, w->min);
        cr_expect_eq(x->max_ns, w->max);
        cr_expect_float_eq(x->avg_ns, (double)w->total / (double)w->n, 1e-6);
        cr_expect_float_eq(x->time_pct, 100.0 * (double)w->total / (double)e->total, 1e-9);
    }
    for (i = 0; i < 4 && e->mem[i].name; i++) {
        const struct mrow *w = &e->mem[i];
        cr_assert(i < m->nrows, "memory row %zu missing", i);
        cr_expect_str_eq(m->rows[i].name, w->name);
        cr_expect_eq(m->rows[i].instances, w->n);
        cr_expect_eq(m->rows[i].total_ns, w->total);
        cr_expect_eq(m->rows[i].bytes, w->bytes);
    }
    cr_expect_eq(m->nrows, i, "memory rows %zu, want %zu", m->nrows, i);
}

static void check_file(const char *path, const struct kexp *e)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    cr_assert_eq(tt_kernels_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
    check_summaries(&r, e);
    tt_kern_result_free(&r);
    cr_expect_eq(r.nsummaries, 0);
}

Test(kernels, simple_add)
{
    static const struct kexp e = {
        2, 4, 16000,
        { { 2, 10000, 5000, 5000,
            "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<" },
          { 2, 6000, 3000, 3000,
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3>)" } },
        { { 0, 0, 0, NULL } },
    };
    check_file(TT_TESTDATA "/kineto/simple_add_trace.json.gz", &e);
}

Test(kernels, resnet50)
{
    static const struct kexp e = {
        67, 8772, 591532000,
        { { 162, 80756000, 323000, 1017000, "void cudnn::detail::dgrad_engine<float, 512, 6, 5," },
          { 156, 66472000, 345000, 745000, "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7," },
          { 264, 59642000, 45000, 915000, "void cudnn::bn_bw_1C11_kernel_new<float, float, float2," } },
        { { 12, 11492000, 115607040, "memcpy HtoD" }, { 312, 534000, 366475920, "memset Device" } },
    };
    check_file(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", &e);
}

Test(kernels, hta_control)
{
    static const struct kexp e = {
        170, 8568, 446813000,
        { { 42, 130655000, 17000, 12621000, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)" },
          { 6, 36180000, 5679000, 6513000,
            "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<" },
          { 18, 32880000, 65000, 4796000, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)" } },
        { { 150, 50656000, 423923260, "memcpy HtoD" },
          { 18, 2735000, 1821299360, "memcpy DtoD" },
          { 654, 1256000, 76353248, "memset Device" },
          { 60, 107000, 100896, "memcpy DtoH" } },
    };
    check_file(shared_path("hta/trace_diff/control/control.json.gz"), &e);
}

/* row_limit keeps the largest groups and the grand total; by stream sums per
 * (device, stream): script output "streams: [((3, 7), ...)...]" counts all GPU
 * activities, so only the kernel total is compared here. */
Test(kernels, row_limit_and_by_stream)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    o.row_limit = 2;
    o.what = TT_KERN_KERNELS;
    cr_assert_eq(tt_kernels_file_result(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", &o,
                                        &r), 0);
    cr_assert_eq(r.nsummaries, 1);
    cr_expect_eq(r.summaries[0].nrows, 2);
    cr_expect_eq(r.summaries[0].ngroups, 67);
    cr_expect_eq(r.summaries[0].total_ns, 591532000);
    cr_expect_eq(r.summaries[0].rows[1].total_ns, 66472000);
    tt_kern_result_free(&r);
    o.row_limit = -1;
    o.by = TT_KERN_BY_STREAM;
    cr_assert_eq(tt_kernels_file_result(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", &o,
                                        &r), 0);
    cr_assert_eq(r.nsummaries, 1);
    cr_assert_eq(r.summaries[0].nrows, 1);
    cr_expect_str_eq(r.summaries[0].rows[0].name, "device 0 stream 7");
    cr_expect_eq(r.summaries[0].rows[0].instances, 8772);
    cr_expect_eq(r.summaries[0].rows[0].total_ns, 591532000);
    cr_expect_float_eq(r.summaries[0].rows[0].time_pct, 100.0, 1e-12);
    tt_kern_result_free(&r);
}

/* A database with two traces: one summary pair per trace. */
Test(kernels, database)
{
    char dir[] = "/tmp/tt_kern_XXXXXX", db_path[64], cmd[96];
    tt_db *db = NULL;
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(db_path, sizeof(db_path), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, db_path, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, TT_TESTDATA "/kineto/simple_add_trace.json.gz", NULL, NULL), 0);
    cr_assert_eq(tt_ingest_file(db, TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", NULL,
                                NULL), 0);
    cr_assert_eq(tt_kernels_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nsummaries, 4);
    /* by rank then id: resnet50 has no rank (NULL sorts first), simple_add rank 0 */
    cr_expect_eq(r.summaries[0].total_ns, 591532000);
    cr_expect_eq(r.summaries[1].total_ns, 11492000 + 534000);
    cr_expect_eq(r.summaries[2].total_ns, 16000);
    cr_expect_eq(r.summaries[3].ngroups, 0);
    tt_kern_result_free(&r);
    o.trace_id = 99;
    cr_expect_lt(tt_kernels_db_result(db, &o, &r), 0);
    cr_expect_eq(r.nsummaries, 0);
    tt_db_free(db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* ---- a file read without a database (analyze/kernels/kernels_stream.c) ---- */

static const char *write_trace(const char *name, const char *doc)
{
    static char path[256];
    FILE *f;
    snprintf(path, sizeof(path), "/tmp/tt_kern_%d_%s", (int)getpid(), name);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(doc, f);
    fclose(f);
    return path;
}

/*
 * k1 runs 1, 3, 5 and 7 ns (an even count: the median is the mean of 3 and
 * 5; the sample deviation sqrt(20 / 3)); k2 once, 10 ns; a memcpy of 64
 * bytes in 2 ns. The kernels come before their runtime calls in the file,
 * far from them, which makes the rows need the SQL passes: the grouping
 * needs no link, so the file is read to its end anyway.
 */
#define KDOC \
    "{\"traceEvents\": [" \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":0.001," \
    "\"args\":{\"correlation\":1,\"device\":0,\"stream\":7}}," \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":101,\"dur\":0.003," \
    "\"args\":{\"correlation\":2,\"device\":0,\"stream\":7}}," \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":102,\"dur\":0.005," \
    "\"args\":{\"correlation\":3,\"device\":0,\"stream\":7}}," \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":103,\"dur\":0.007," \
    "\"args\":{\"correlation\":4,\"device\":0,\"stream\":7}}," \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":8,\"ts\":104,\"dur\":0.010," \
    "\"args\":{\"correlation\":5,\"device\":0,\"stream\":8}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\"," \
    "\"pid\":0,\"tid\":7,\"ts\":105,\"dur\":0.002,\"args\":{\"correlation\":6,\"device\":0," \
    "\"stream\":7,\"bytes\":64}}," \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1," \
    "\"ts\":1,\"dur\":1,\"args\":{\"correlation\":1}}]}"

Test(kernels, file_without_a_database)
{
    const char *path = write_trace("stream.json", KDOC);
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r, rdb;
    tt_db *db;
    size_t i, j;
    cr_assert_eq(tt_kernels_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nsummaries, 2);
    cr_assert_eq(r.summaries[0].memory, 0);
    cr_assert_eq(r.summaries[0].nrows, 2);
    cr_assert_str_eq(r.summaries[0].rows[0].name, "k1"); /* 16 ns before 10 ns */
    cr_assert_eq(r.summaries[0].rows[0].instances, 4);
    cr_assert_eq(r.summaries[0].rows[0].total_ns, 16);
    cr_assert_eq(r.summaries[0].rows[0].min_ns, 1);
    cr_assert_eq(r.summaries[0].rows[0].max_ns, 7);
    cr_assert_float_eq(r.summaries[0].rows[0].med_ns, 4.0, 1e-9);
    cr_assert_float_eq(r.summaries[0].rows[0].stddev_ns, 2.5819888974716112, 1e-9);
    cr_assert_str_eq(r.summaries[0].rows[1].name, "k2");
    cr_assert_float_eq(r.summaries[0].rows[1].med_ns, 10.0, 1e-9);
    cr_assert_eq(r.summaries[1].nrows, 1);
    cr_assert_str_eq(r.summaries[1].rows[0].name, "memcpy HtoD");
    cr_assert_eq(r.summaries[1].rows[0].bytes, 64);
    /* the same as through a database */
    cr_assert_eq(tt_db_open(&db, "/tmp/tt_kern_stream.db", TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_kernels_db_result(db, &o, &rdb), 0);
    cr_assert_eq(rdb.nsummaries, r.nsummaries);
    for (i = 0; i < r.nsummaries; i++) {
        cr_assert_eq(rdb.summaries[i].nrows, r.summaries[i].nrows);
        for (j = 0; j < r.summaries[i].nrows; j++) {
            const tt_kern_row *a = &r.summaries[i].rows[j], *b = &rdb.summaries[i].rows[j];
            cr_assert_str_eq(a->name, b->name);
            cr_assert_eq(a->instances, b->instances);
            cr_assert_eq(a->total_ns, b->total_ns);
            cr_assert_float_eq(a->med_ns, b->med_ns, 1e-9);
            cr_assert_float_eq(a->stddev_ns, b->stddev_ns, 1e-9);
        }
    }
    tt_kern_result_free(&r);
    tt_kern_result_free(&rdb);
    tt_db_free(db);
    unlink("/tmp/tt_kern_stream.db");
    unlink(path);
}

/* ---- the rest of nsys stats: --by runtime, memsize, activity ---- */

/*
 * Runtime calls: cudaLaunchKernel 2, 4, 4, 10 ns (an even count: the
 * median is the mean of 4 and 4; mean 5, squared deviations 9 + 1 + 1 +
 * 25 = 36, the sample deviation sqrt(36 / 3)), cudaMemcpyAsync 30 ns once,
 * the driver's cuLaunchKernel 1 ns: 51 ns in all. Memory operations: three
 * memcpy HtoD of 100, 300, 200 bytes (median 200, deviation sqrt(20000 / 2)
 * = 100), two memsets of 64 and 32 bytes (median 48, sqrt(2 * 16^2 / 1)),
 * a memcpy DtoH without a size (left out of the sizes). The activities in
 * the file are out of start order.
 */
#define NDOC \
    "{\"traceEvents\": [" \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1," \
    "\"ts\":10,\"dur\":0.002,\"args\":{\"correlation\":1}}," \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1," \
    "\"ts\":11,\"dur\":0.004,\"args\":{\"correlation\":2}}," \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1," \
    "\"ts\":12,\"dur\":0.004,\"args\":{\"correlation\":3}}," \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1," \
    "\"ts\":13,\"dur\":0.010,\"args\":{\"correlation\":4}}," \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1," \
    "\"ts\":14,\"dur\":0.030,\"args\":{\"correlation\":5}}," \
    "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\",\"pid\":1,\"tid\":1," \
    "\"ts\":15,\"dur\":0.001,\"args\":{\"correlation\":6}}," \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":200," \
    "\"dur\":0.005,\"args\":{\"correlation\":1,\"device\":0,\"stream\":7,\"context\":1," \
    "\"grid\":[4,2,1],\"block\":[128,1,1],\"registers per thread\":32," \
    "\"shared memory\":1024}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\"," \
    "\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":0.002,\"args\":{\"correlation\":5,\"device\":0," \
    "\"stream\":7,\"bytes\":100}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\"," \
    "\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":0.003,\"args\":{\"device\":0,\"stream\":7," \
    "\"bytes\":300}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\"," \
    "\"pid\":0,\"tid\":7,\"ts\":250,\"dur\":0.001,\"args\":{\"device\":0,\"stream\":7," \
    "\"bytes\":200}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":8," \
    "\"ts\":400,\"dur\":0.001,\"args\":{\"device\":0,\"stream\":8,\"bytes\":64}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":8," \
    "\"ts\":450,\"dur\":0.001,\"args\":{\"device\":0,\"stream\":8,\"bytes\":32}}," \
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pageable)\"," \
    "\"pid\":0,\"tid\":7,\"ts\":500,\"dur\":0.001,\"args\":{\"device\":0,\"stream\":7}}]}"

static void check_runtime(const tt_kern_result *r)
{
    const tt_kern_summary *s;
    cr_assert_eq(r->nsummaries, 1);
    s = &r->summaries[0];
    cr_expect_eq(s->by, TT_KERN_BY_RUNTIME);
    cr_expect_eq(s->memory, 0);
    cr_expect_eq(s->total_ns, 51);
    cr_assert_eq(s->nrows, 3);
    cr_expect_str_eq(s->rows[0].name, "cudaMemcpyAsync"); /* 30 ns, 20 ns, 1 ns */
    cr_expect_str_eq(s->rows[1].name, "cudaLaunchKernel");
    cr_expect_str_eq(s->rows[2].name, "cuLaunchKernel");
    cr_expect_eq(s->rows[1].instances, 4);
    cr_expect_eq(s->rows[1].total_ns, 20);
    cr_expect_eq(s->rows[1].min_ns, 2);
    cr_expect_eq(s->rows[1].max_ns, 10);
    cr_expect_float_eq(s->rows[1].avg_ns, 5.0, 1e-12);
    cr_expect_float_eq(s->rows[1].med_ns, 4.0, 1e-12);
    cr_expect_float_eq(s->rows[1].stddev_ns, 3.4641016151377544, 1e-12);
    cr_expect_float_eq(s->rows[1].time_pct, 100.0 * 20 / 51, 1e-12);
    cr_expect_float_eq(s->rows[0].stddev_ns, 0.0, 0); /* one call */
    cr_expect_float_eq(s->rows[0].time_pct, 100.0 * 30 / 51, 1e-12);
}

static void check_memsize(const tt_kern_result *r)
{
    const tt_kern_summary *s;
    cr_assert_eq(r->nsummaries, 1);
    s = &r->summaries[0];
    cr_expect_eq(s->by, TT_KERN_BY_MEMSIZE);
    cr_expect_eq(s->memory, 1);
    cr_expect_eq(s->total_bytes, 696);
    cr_assert_eq(s->nrows, 2, "memcpy DtoH has no size: %zu rows", s->nrows);
    cr_expect_str_eq(s->rows[0].name, "memcpy HtoD");
    cr_expect_eq(s->rows[0].instances, 3);
    cr_expect_eq(s->rows[0].bytes, 600);
    cr_expect_eq(s->rows[0].min_bytes, 100);
    cr_expect_eq(s->rows[0].max_bytes, 300);
    cr_expect_float_eq(s->rows[0].avg_bytes, 200.0, 1e-12);
    cr_expect_float_eq(s->rows[0].med_bytes, 200.0, 1e-12);
    cr_expect_float_eq(s->rows[0].stddev_bytes, 100.0, 1e-12);
    cr_expect_str_eq(s->rows[1].name, "memset Device");
    cr_expect_eq(s->rows[1].instances, 2);
    cr_expect_eq(s->rows[1].bytes, 96);
    cr_expect_float_eq(s->rows[1].med_bytes, 48.0, 1e-12);
    cr_expect_float_eq(s->rows[1].stddev_bytes, 22.627416997969522, 1e-12);
}

/* the same summaries from the file (no database) and from a database */
Test(kernels, runtime_and_memsize)
{
    const char *path = write_trace("nsys.json", NDOC);
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    tt_db *db;
    o.by = TT_KERN_BY_RUNTIME;
    cr_assert_eq(tt_kernels_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
    check_runtime(&r);
    tt_kern_result_free(&r);
    o.by = TT_KERN_BY_MEMSIZE;
    cr_assert_eq(tt_kernels_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
    check_memsize(&r);
    tt_kern_result_free(&r);
    unlink("/tmp/tt_kern_nsys.db");
    cr_assert_eq(tt_db_open(&db, "/tmp/tt_kern_nsys.db", TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_kernels_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    check_memsize(&r);
    tt_kern_result_free(&r);
    o.by = TT_KERN_BY_RUNTIME;
    cr_assert_eq(tt_kernels_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    check_runtime(&r);
    tt_kern_result_free(&r);
    /* the row limit keeps the largest, the total stays */
    o.row_limit = 1;
    cr_assert_eq(tt_kernels_db_result(db, &o, &r), 0);
    cr_expect_eq(r.summaries[0].nrows, 1);
    cr_expect_eq(r.summaries[0].ngroups, 3);
    cr_expect_eq(r.summaries[0].total_ns, 51);
    tt_kern_result_free(&r);
    /* activities have no summary */
    o.by = TT_KERN_BY_ACTIVITY;
    cr_expect_eq(tt_kernels_db_result(db, &o, &r), TT_EINVALID);
    tt_db_free(db);
    unlink("/tmp/tt_kern_nsys.db");
    unlink(path);
}

struct acts {
    size_t n;
    int64_t start[16], dur[16], bytes[16], stream[16];
    char kind[16][8], copy[16][8], src[16][16], dst[16][16];
    tt_kern_activity first_kernel;
};

static int collect_act(void *ctx, const tt_kern_activity *a)
{
    struct acts *x = ctx;
    cr_assert_lt(x->n, 16);
    x->start[x->n] = a->start_ns;
    x->dur[x->n] = a->dur_ns;
    x->bytes[x->n] = a->bytes;
    x->stream[x->n] = a->stream;
    snprintf(x->kind[x->n], sizeof(x->kind[0]), "%s", a->kind);
    snprintf(x->copy[x->n], sizeof(x->copy[0]), "%s", a->copy_kind ? a->copy_kind : "-");
    snprintf(x->src[x->n], sizeof(x->src[0]), "%s", a->src_kind ? a->src_kind : "-");
    snprintf(x->dst[x->n], sizeof(x->dst[0]), "%s", a->dst_kind ? a->dst_kind : "-");
    if (!strcmp(a->kind, "kernel") && !x->first_kernel.kind) {
        x->first_kernel = *a;
        x->first_kernel.name = NULL; /* not kept past the call */
    }
    x->n++;
    return 0;
}

Test(kernels, activities)
{
    const char *path = write_trace("acts.json", NDOC);
    static const int64_t starts[] = { 150000, 200000, 250000, 300000, 400000, 450000, 500000 };
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    struct acts x;
    const tt_kern_activity *k = &x.first_kernel;
    size_t i;
    o.by = TT_KERN_BY_ACTIVITY;
    memset(&x, 0, sizeof(x));
    cr_assert_eq(tt_kernels_file_activities(path, &o, collect_act, &x), 0, "%s",
                 tt_error_last()->message);
    cr_assert_eq(x.n, 7);
    for (i = 0; i < x.n; i++)
        cr_expect_eq(x.start[i], starts[i], "row %zu starts at %ld", i, (long)x.start[i]);
    cr_expect_str_eq(x.kind[1], "kernel");
    cr_expect_eq(k->dur_ns, 5);
    cr_expect_eq(k->correlation, 1);
    cr_expect(k->grid[0] == 4 && k->grid[1] == 2 && k->grid[2] == 1);
    cr_expect(k->block[0] == 128 && k->block[1] == 1 && k->block[2] == 1);
    cr_expect_eq(k->registers, 32);
    cr_expect_eq(k->shared_mem, 1024);
    cr_expect_eq(k->bytes, TT_KERN_NULL);
    cr_expect_eq(k->device, 0);
    cr_expect_eq(k->context, 1);
    cr_expect_eq(k->stream, 7);
    cr_expect_null(k->copy_kind);
    cr_expect_str_eq(x.kind[0], "memcpy");
    cr_expect_eq(x.bytes[0], 100);
    cr_expect_str_eq(x.copy[0], "HtoD");
    cr_expect_str_eq(x.src[0], "Pageable");
    cr_expect_str_eq(x.dst[0], "Device");
    cr_expect_str_eq(x.src[2], "Pinned");
    cr_expect_str_eq(x.kind[4], "memset");
    cr_expect_str_eq(x.copy[4], "Device");
    cr_expect_str_eq(x.src[4], "-");
    cr_expect_eq(x.stream[4], 8);
    cr_expect_eq(x.bytes[6], TT_KERN_NULL); /* the DtoH without a size */
    cr_expect_str_eq(x.copy[6], "DtoH");
    /* --only kernels, --only memory with a row limit */
    o.what = TT_KERN_KERNELS;
    memset(&x, 0, sizeof(x));
    cr_assert_eq(tt_kernels_file_activities(path, &o, collect_act, &x), 0);
    cr_expect_eq(x.n, 1);
    o.what = TT_KERN_MEMORY;
    o.row_limit = 2;
    memset(&x, 0, sizeof(x));
    cr_assert_eq(tt_kernels_file_activities(path, &o, collect_act, &x), 0);
    cr_assert_eq(x.n, 2);
    cr_expect_eq(x.start[0], 150000);
    cr_expect_eq(x.start[1], 250000);
    unlink(path);
}

/* nothing of the kind asked for: TT_ENOTFOUND naming the file, no row */
Test(kernels, nothing_found)
{
    const char *path = write_trace("cpu.json",
                                   "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\","
                                   "\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":1,"
                                   "\"dur\":2}]}");
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    struct acts x;
    memset(&x, 0, sizeof(x));
    o.by = TT_KERN_BY_RUNTIME;
    cr_expect_eq(tt_kernels_file_result(path, &o, &r), TT_ENOTFOUND);
    cr_expect_eq(r.nsummaries, 0);
    cr_expect(strstr(tt_error_last()->message, "no CUDA/HIP runtime") != NULL, "%s",
              tt_error_last()->message);
    o.by = TT_KERN_BY_MEMSIZE;
    cr_expect_eq(tt_kernels_file_result(path, &o, &r), TT_ENOTFOUND);
    o.by = TT_KERN_BY_ACTIVITY;
    cr_expect_eq(tt_kernels_file_activities(path, &o, collect_act, &x), TT_ENOTFOUND);
    cr_expect_eq(x.n, 0);
    unlink(path);
}

/* real traces: the numbers of tests/fixtures/kernels_nsys_expect.py */
Test(kernels, runtime_real)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    const tt_kern_row *x;
    o.by = TT_KERN_BY_RUNTIME;
    cr_assert_eq(tt_kernels_file_result(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", &o,
                                        &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nsummaries, 1);
    cr_expect_eq(r.summaries[0].total_ns, 120433000);
    cr_assert_eq(r.summaries[0].nrows, 8);
    x = &r.summaries[0].rows[0];
    cr_expect_str_eq(x->name, "cudaLaunchKernel");
    cr_expect_eq(x->instances, 8772);
    cr_expect_eq(x->total_ns, 83793000);
    cr_expect_eq(x->min_ns, 4000);
    cr_expect_eq(x->max_ns, 30000);
    cr_expect_float_eq(x->med_ns, 9000.0, 1e-9);
    cr_expect_float_eq(x->stddev_ns, 2887.1722502424027, 1e-6);
    x = &r.summaries[0].rows[2];
    cr_expect_str_eq(x->name, "cudaMemcpyAsync");
    cr_expect_eq(x->instances, 12);
    cr_expect_float_eq(x->med_ns, 940000.0, 1e-9); /* even count */
    cr_expect_float_eq(x->stddev_ns, 1036547.1053045064, 1e-6);
    tt_kern_result_free(&r);
    o.by = TT_KERN_BY_MEMSIZE;
    cr_assert_eq(tt_kernels_file_result(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", &o,
                                        &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.summaries[0].nrows, 2);
    x = &r.summaries[0].rows[0];
    cr_expect_str_eq(x->name, "memset Device");
    cr_expect_eq(x->instances, 312);
    cr_expect_eq(x->bytes, 366475920);
    cr_expect_eq(x->min_bytes, 128);
    cr_expect_eq(x->max_bytes, 9437184);
    cr_expect_float_eq(x->med_bytes, 262144.0, 1e-9);
    cr_expect_float_eq(x->stddev_bytes, 1981634.4105125682, 1e-6);
    x = &r.summaries[0].rows[1];
    cr_expect_str_eq(x->name, "memcpy HtoD");
    cr_expect_float_eq(x->med_bytes, 9633920.0, 1e-9);
    cr_expect_float_eq(x->stddev_bytes, 10062033.884308752, 1e-6);
    tt_kern_result_free(&r);
}
