/*
 * tests/unit/test_counters.c - HTA's trace counters (tracetool/counters.h,
 * analyze/counters/): the launch queues and the copies' bandwidth of
 * hand-made traces whose answers are known by construction, from a file
 * and from a database; the tie orders (launches before kernel starts, ends
 * before starts); the kinds of copies; a file read twice for its links;
 * the same answers when every spill writes to disk; --name and --under;
 * what is refused.
 */
#include "common/compat.h"
#include "common/spill.h"
#include "tracetool/analyze.h"
#include "tracetool/counters.h"
#include "shared_data.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(counters, .timeout = 300);

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/tt_counters_%d_%s", (int)getpid(), name);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

#define RT(name, ts, corr)                                                                  \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,"      \
    "\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr "}},"
#define KN(ts, corr, stream)                                                                \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":" #stream ",\"ts\":" #ts \
    ",\"dur\":2,\"args\":{\"correlation\":" #corr ",\"device\":0,\"stream\":" #stream "}},"
#define CP(cat, name, ts, dur, bw)                                                          \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"memory bandwidth (GB/s)\":" #bw \
    "}},"
#define END "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"x\"}}]}"

/* stream 7: 1 2 3 2 1 0; stream 8: 1 0 (the cooperative launch, the launch
 * without a kernel, the kernel without a launch do not count); stream 9:
 * the second launch at the very time the first kernel starts */
static const char queue_trace[] =
    "{\"traceEvents\":["
    KN(30, 1, 7) RT("cudaLaunchKernel", 0, 1) KN(40, 2, 7) RT("cudaLaunchKernel", 10, 2)
    KN(50, 3, 7) RT("cudaLaunchKernel", 20, 3)
    KN(15, 4, 8) RT("cudaLaunchKernel", 5, 4) KN(16, 5, 8) RT("cudaLaunchCooperativeKernel", 6, 5)
    RT("cudaLaunchKernel", 7, 6) KN(17, 99, 8)
    KN(110, 10, 9) RT("cuLaunchKernel", 100, 10) KN(120, 11, 9) RT("cudaMemsetAsync", 110, 11)
    END;

/* queue's result of path, from the file or (db) its database */
static void queue_of(const char *path, int db, const tt_queue_options *o, tt_queue_result *r)
{
    char dbp[256];
    tt_db *d;
    if (!db) {
        cr_assert_eq(tt_queue_file_result(path, o, r), 0, "%s", tt_error_last()->message);
        return;
    }
    tmp_path(dbp, sizeof(dbp), "q.db");
    unlink(dbp);
    cr_assert_eq(tt_db_open(&d, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(d, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_queue_db_result(d, o, r), 0, "%s", tt_error_last()->message);
    tt_db_free(d);
    unlink(dbp);
}

static void check_row(const tt_queue_row *x, int64_t stream, int64_t count, int64_t max,
                      double mean, int64_t blocked)
{
    cr_expect_eq(x->stream, stream);
    cr_expect_eq(x->device, 0);
    cr_expect_not(x->have_rank);
    cr_expect_eq(x->count, count, "stream %lld: count %lld", (long long)stream,
                 (long long)x->count);
    cr_expect_eq(x->min, 0);
    cr_expect_eq(x->max, max, "stream %lld: max %lld", (long long)stream, (long long)x->max);
    cr_expect(fabs(x->mean - mean) < 1e-12, "stream %lld: mean %g", (long long)stream, x->mean);
    cr_expect_eq(x->blocked_ns, blocked, "stream %lld: blocked %lld", (long long)stream,
                 (long long)x->blocked_ns);
}

Test(counters, queue_by_construction)
{
    char path[256];
    int db;
    tmp_path(path, sizeof(path), "q.json");
    write_file(path, queue_trace);
    for (db = 0; db < 2; db++) {
        tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
        tt_queue_result r;
        o.max_queue = 2;
        queue_of(path, db, &o, &r);
        cr_assert_eq(r.nrows, 3, "db %d: %zu streams", db, r.nrows);
        check_row(&r.rows[0], 7, 6, 3, 1.5, 30000); /* >= 2 from 10 us to 40 us */
        check_row(&r.rows[1], 8, 2, 1, 0.5, 0);
        check_row(&r.rows[2], 9, 4, 2, 1.0, 0); /* 2 at 110 us, 1 at once: no time */
        tt_queue_result_free(&r);
        o.filter.to_ns = 15000; /* the launches before 15 us */
        queue_of(path, db, &o, &r);
        cr_assert_eq(r.nrows, 2);
        check_row(&r.rows[0], 7, 4, 2, 1.0, 30000 - 10000);
        tt_queue_result_free(&r);
    }
    unlink(path);
}

struct pts {
    tt_queue_point p[32];
    int n, stop_at;
};

static int collect(void *ctx, const tt_queue_point *q)
{
    struct pts *s = ctx;
    if (s->n == s->stop_at)
        return 42;
    cr_assert_lt(s->n, 32);
    s->p[s->n++] = *q;
    return 0;
}

Test(counters, queue_series_launch_first_at_ties)
{
    static const int64_t ts9[] = { 100000, 110000, 110000, 120000 }, len9[] = { 1, 2, 1, 0 };
    tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
    struct pts s;
    char path[256];
    int i;
    tmp_path(path, sizeof(path), "qs.json");
    write_file(path, queue_trace);
    memset(&s, 0, sizeof(s));
    s.stop_at = -1;
    cr_assert_eq(tt_queue_file_series(path, &o, collect, &s), 0);
    cr_assert_eq(s.n, 12);
    for (i = 0; i < 4; i++) {
        const tt_queue_point *q = &s.p[8 + i];
        cr_expect_eq(q->stream, 9);
        cr_expect_eq(q->ts_ns, ts9[i]);
        cr_expect_eq(q->queue_length, len9[i], "point %d: %lld", i, (long long)q->queue_length);
        cr_expect_eq(q->trace_id, 1);
    }
    memset(&s, 0, sizeof(s));
    s.stop_at = 3; /* a callback's non-zero stops the walk and comes back */
    cr_expect_eq(tt_queue_file_series(path, &o, collect, &s), 42);
    cr_expect_eq(s.n, 3);
    unlink(path);
}

/* HtoD on two streams: 2, 5, 3 (the end first at 10 us), 7, 4, 0; a 0 us
 * memset lasts 1 us; PtoP; names that are no kind of HTA's, or no copy */
static const char bw_trace[] =
    "{\"traceEvents\":["
    CP("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 10, 2.0)
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,"
    "\"tid\":8,\"ts\":5,\"dur\":10,\"args\":{\"device\":0,\"stream\":8,"
    "\"memory bandwidth (GB/s)\":3}},"
    CP("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 10, 10, 4.0)
    CP("gpu_memset", "Memset (Device)", 30, 0, 1.5)
    CP("gpu_memcpy", "Memcpy PtoP (Device -> Device)", 40, 2, 6)
    CP("gpu_memcpy", "Memcpy XtoY (odd)", 50, 2, 0.25)
    CP("gpu_memcpy", "dma_transfer", 60, 2, 0.5)
    CP("gpu_memcpy", "Memcpy DtoD via ncclKernel", 70, 2, 9)
    CP("kernel", "gemm", 80, 2, 9)
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\",\"pid\":0,"
    "\"tid\":7,\"ts\":90,\"dur\":2,\"args\":{\"device\":0,\"stream\":7}},"
    END;

Test(counters, bandwidth_by_construction)
{
    static const struct {
        const char *kind;
        int64_t count;
        double mean, min, max;
    } want[] = {
        { "memcpy HtoD", 5, 4.2, 2, 7 },
        { "memcpy PtoP", 1, 6, 6, 6 },
        { "memcpy unknown", 2, 0.375, 0.25, 0.5 }, /* Memcpy XtoY and dma: 0.25, 0.5 */
        { "memset", 1, 1.5, 1.5, 1.5 },
    };
    tt_bandwidth_options o = TT_BANDWIDTH_OPTIONS_INIT;
    tt_bandwidth_result r;
    char path[256];
    size_t i;
    tmp_path(path, sizeof(path), "bw.json");
    write_file(path, bw_trace);
    cr_assert_eq(tt_bandwidth_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nrows, TT_ARRAY_SIZE(want));
    for (i = 0; i < r.nrows; i++) {
        const tt_bandwidth_row *x = &r.rows[i];
        cr_expect_str_eq(x->kind, want[i].kind);
        cr_expect_eq(x->count, want[i].count, "%s: count %lld", x->kind, (long long)x->count);
        cr_expect(fabs(x->mean_gbps - want[i].mean) < 1e-12, "%s: mean %g", x->kind,
                  x->mean_gbps);
        cr_expect(x->min_gbps == want[i].min && x->max_gbps == want[i].max, "%s: %g..%g",
                  x->kind, x->min_gbps, x->max_gbps);
    }
    tt_bandwidth_result_free(&r);
    unlink(path);
}

struct bpts {
    int64_t ts[16];
    double v[16];
    int n;
};

static int collect_bw(void *ctx, const tt_bandwidth_point *q)
{
    struct bpts *s = ctx;
    if (strcmp(q->kind, "memcpy HtoD") && strcmp(q->kind, "memset"))
        return 0;
    cr_assert_lt(s->n, 16);
    s->ts[s->n] = q->ts_ns;
    s->v[s->n++] = q->gbps;
    return 0;
}

Test(counters, bandwidth_series_ends_first)
{
    static const int64_t ts[] = { 0, 5000, 10000, 10000, 15000, 20000, 30000, 31000 };
    static const double v[] = { 2, 5, 3, 7, 4, 0, 1.5, 0 };
    tt_bandwidth_options o = TT_BANDWIDTH_OPTIONS_INIT;
    struct bpts s;
    char path[256];
    int i;
    tmp_path(path, sizeof(path), "bws.json");
    write_file(path, bw_trace);
    memset(&s, 0, sizeof(s));
    cr_assert_eq(tt_bandwidth_file_series(path, &o, collect_bw, &s), 0);
    cr_assert_eq(s.n, 8);
    for (i = 0; i < 8; i++)
        cr_expect(s.ts[i] == ts[i] && s.v[i] == v[i], "point %d: %lld %g", i,
                  (long long)s.ts[i], s.v[i]);
    unlink(path);
}

/* a trace whose rows need the store's passes ('B' closed far away): read
 * twice, the links then right */
Test(counters, file_read_twice_for_links)
{
    tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
    tt_queue_result r;
    char path[256];
    FILE *f;
    int i;
    tmp_path(path, sizeof(path), "be.json");
    cr_assert(f = fopen(path, "w"));
    fputs("{\"traceEvents\":[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":0},",
          f);
    for (i = 0; i < 300; i++)
        fprintf(f,
                "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                "\"tid\":1,\"ts\":%d,\"dur\":3,\"args\":{\"correlation\":%d}},"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%d,"
                "\"dur\":4,\"args\":{\"correlation\":%d,\"device\":0,\"stream\":7}},",
                10 + 30 * i, i, 15 + 30 * i, i);
    fputs("{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":100000}]}", f);
    fclose(f);
    cr_assert_eq(tt_queue_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nrows, 1);
    check_row(&r.rows[0], 7, 600, 1, 0.5, 0);
    tt_queue_result_free(&r);
    unlink(path);
}

static int same_queue(const tt_queue_result *a, const tt_queue_result *b)
{
    size_t i;
    if (a->nrows != b->nrows)
        return 0;
    for (i = 0; i < a->nrows; i++) {
        const tt_queue_row *x = &a->rows[i], *y = &b->rows[i];
        if (x->stream != y->stream || x->count != y->count || x->min != y->min ||
            x->max != y->max || x->blocked_ns != y->blocked_ns || x->mean != y->mean)
            return 0;
    }
    return 1;
}

/* every spill writing to disk: the same answers, a bounded number of
 * records held in memory */
Test(counters, spilled_same_answers)
{
    const char *path = shared_path("hta/trace_filter/sampled_rank-0.json.gz");
    tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
    tt_bandwidth_options bo = TT_BANDWIDTH_OPTIONS_INIT;
    tt_queue_result a, b;
    tt_bandwidth_result ba, bb;
    uint64_t spilled;
    size_t peak, i;
    o.max_queue = 2;
    cr_assert_eq(tt_queue_file_result(path, &o, &a), 0);
    cr_assert_eq(tt_bandwidth_file_result(path, &bo, &ba), 0);
    tt__spill_set_limit(64 * 32); /* 64 queue or bandwidth records, 42 of the join */
    tt__spill_stats_reset();
    cr_assert_eq(tt_queue_file_result(path, &o, &b), 0);
    cr_assert_eq(tt_bandwidth_file_result(path, &bo, &bb), 0);
    tt__spill_stats(&spilled, &peak);
    tt__spill_set_limit(0);
    cr_expect_gt(spilled, 0);
    cr_expect_leq(peak, 64, "peak %zu records", peak);
    cr_assert_gt(a.nrows, 2);
    cr_expect(same_queue(&a, &b));
    cr_assert_eq(ba.nrows, bb.nrows);
    for (i = 0; i < ba.nrows; i++)
        cr_expect(!strcmp(ba.rows[i].kind, bb.rows[i].kind) &&
                      ba.rows[i].count == bb.rows[i].count &&
                      fabs(ba.rows[i].mean_gbps - bb.rows[i].mean_gbps) <=
                          1e-9 * ba.rows[i].mean_gbps,
                  "%s", ba.rows[i].kind);
    tt_queue_result_free(&a);
    tt_queue_result_free(&b);
    tt_bandwidth_result_free(&ba);
    tt_bandwidth_result_free(&bb);
}

/* --name and --under: an op "outer" (0..12 us) holds the launches at 0 and
 * 10 us, not the one at 20; the kernels gemm_a, relu_b, gemm_c start at 30,
 * 40, 50 us on stream 7; two copies on stream 8, the first launched in
 * "outer" (at 2 us; the second at 14) */
#define OP(name, ts, dur)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "},"
#define KNAMED(name, ts, corr)                                                              \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":2,\"args\":{\"correlation\":" #corr ",\"device\":0,\"stream\":7}},"
#define CPL(ts, corr, bw)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\","      \
    "\"pid\":0,\"tid\":8,\"ts\":" #ts ",\"dur\":10,\"args\":{\"device\":0,\"stream\":8,"     \
    "\"correlation\":" #corr ",\"memory bandwidth (GB/s)\":" #bw "}},"
static const char filter_trace[] =
    "{\"traceEvents\":["
    OP("outer", 0, 12) RT("cudaLaunchKernel", 0, 1) KNAMED("gemm_a", 30, 1)
    RT("cudaLaunchKernel", 10, 2) KNAMED("relu_b", 40, 2)
    RT("cudaLaunchKernel", 20, 3) KNAMED("gemm_c", 50, 3)
    RT("cudaMemcpyAsync", 2, 4) CPL(20, 4, 2) RT("cudaMemcpyAsync", 14, 5) CPL(25, 5, 3)
    END;

Test(counters, filters)
{
    static const struct {
        const char *name, *under;
        size_t rows; /* stream 7, and the copies' stream 8 */
        int64_t count, max, blocked;
        double mean;
    } q[] = {
        { NULL, NULL, 2, 6, 3, 30000, 1.5 },    /* 1 2 3 2 1 0; >= 2 from 10 to 40 us */
        { "gemm", NULL, 1, 4, 2, 10000, 1.0 },  /* 0 and 20 us: 1 2 1 0, 2 from 20 to 30 */
        { NULL, "outer", 2, 4, 2, 20000, 1.0 }, /* 0 and 10 us: 2 from 10 to 30 */
        { "gemm", "o.*r", 1, 2, 1, 0, 0.5 },    /* gemm_a alone */
    };
    char path[256];
    size_t i;
    int db;
    tmp_path(path, sizeof(path), "flt.json");
    write_file(path, filter_trace);
    for (db = 0; db < 2; db++) {
        for (i = 0; i < TT_ARRAY_SIZE(q); i++) {
            tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
            tt_queue_result r;
            o.max_queue = 2;
            o.filter.name = q[i].name;
            o.filter.under = q[i].under;
            queue_of(path, db, &o, &r);
            cr_assert_eq(r.nrows, q[i].rows, "db %d case %zu: %zu streams", db, i, r.nrows);
            check_row(&r.rows[0], 7, q[i].count, q[i].max, q[i].mean, q[i].blocked);
            tt_queue_result_free(&r);
        }
    }
    unlink(path);
}

Test(counters, bandwidth_filters)
{
    static const struct {
        const char *name, *under;
        size_t rows;
        int64_t count;
        double mean;
    } b[] = {
        { NULL, NULL, 1, 3, 10.0 / 3 }, /* 2 (20 us), 5 (25), 3 (30), 0 (35) */
        { NULL, "outer", 1, 1, 2 },     /* the copy launched at 2 us */
        { "Pinned", "inner", 0, 0, 0 }, /* no such op */
        { "DtoH", NULL, 0, 0, 0 },
        { "HtoD", NULL, 1, 3, 10.0 / 3 },
    };
    char path[256];
    size_t i;
    tmp_path(path, sizeof(path), "bwf.json");
    write_file(path, filter_trace);
    for (i = 0; i < TT_ARRAY_SIZE(b); i++) {
        tt_bandwidth_options o = TT_BANDWIDTH_OPTIONS_INIT;
        tt_bandwidth_result r;
        o.filter.name = b[i].name;
        o.filter.under = b[i].under;
        cr_assert_eq(tt_bandwidth_file_result(path, &o, &r), 0, "%s", tt_error_last()->message);
        cr_assert_eq(r.nrows, b[i].rows, "case %zu: %zu kinds", i, r.nrows);
        if (r.nrows) {
            cr_expect_str_eq(r.rows[0].kind, "memcpy HtoD");
            cr_expect_eq(r.rows[0].count, b[i].count, "case %zu", i);
            cr_expect(fabs(r.rows[0].mean_gbps - b[i].mean) < 1e-12, "case %zu: mean %g", i,
                      r.rows[0].mean_gbps);
        }
        tt_bandwidth_result_free(&r);
    }
    unlink(path);
}

Test(counters, refused_and_empty)
{
    tt_queue_options o = TT_QUEUE_OPTIONS_INIT;
    tt_bandwidth_options bo = TT_BANDWIDTH_OPTIONS_INIT;
    tt_queue_result r;
    tt_bandwidth_result br;
    char path[256];
    o.version = 1; /* knew no --name: refused */
    o.filter.name = "gemm";
    tmp_path(path, sizeof(path), "cpu.json");
    write_file(path, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\","
                     "\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]}");
    cr_expect_eq(tt_queue_file_result(path, &o, &r), TT_EINVALID);
    cr_expect_eq(r.nrows, 0);
    o.filter.name = NULL;
    cr_expect_eq(tt_queue_file_result(path, &o, &r), 0); /* no GPU: no stream */
    cr_expect_eq(r.nrows, 0);
    tt_queue_result_free(&r);
    cr_expect_eq(tt_bandwidth_file_result(path, &bo, &br), 0);
    cr_expect_eq(br.nrows, 0);
    tt_bandwidth_result_free(&br);
    cr_expect_lt(tt_queue_file_result("/nonexistent/t.json", &o, &r), 0);
    write_file(path, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\"");
    cr_expect_lt(tt_bandwidth_file_result(path, &bo, &br), 0);
    unlink(path);
}
