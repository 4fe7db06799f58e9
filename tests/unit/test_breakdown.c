/*
 * tests/unit/test_breakdown.c - tt_breakdown_file_result /
 * tt_breakdown_db_result on small hand-made traces; every expected number
 * is worked out by hand in the comments (times in the traces are us, the
 * results ns).
 */
#include "common/compat.h"
#include "tracetool/breakdown.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(breakdown, .timeout = 60);

#define RT(ts, dur, corr)                                                                   \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1," \
    " \"tid\": 1, \"ts\": " #ts ", \"dur\": " #dur ", \"args\": {\"correlation\": " #corr "}},\n"
#define GPU(cat, name, stream, ts, dur, corr)                                               \
    "{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 0, \"tid\": "     \
    #stream ", \"ts\": " #ts ", \"dur\": " #dur ", \"args\": {\"device\": 0, \"stream\": "   \
    #stream ", \"correlation\": " #corr "}},\n"
#define STEP(n, ts, dur)                                                                    \
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" #n "\","        \
    " \"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"dur\": " #dur "},\n"
#define END "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"x\"}}]}\n"

/*
 * One device, two streams, two steps (times in us):
 *   call c1 at 0 (5)    -> K1 gemm_kernel     stream 7  [10, 30)
 *   call c2 at 6 (4)    -> K2 nccl all-reduce stream 20 [20, 50)
 *   call c3 at 40 (2)   -> M  memcpy HtoD     stream 7  [60, 70)
 *   call c4 at 100 (3)  -> K3 gemm_kernel     stream 7  [105, 120)
 *   call c5 at 110 (1)  -> K4 gemm_kernel     stream 7  [200, 210)
 *   ProfilerStep#1 [0, 50) launches c1..c3, ProfilerStep#2 [50, 150) c4, c5
 * The device's merged timeline: [10, 50) [60, 70) [105, 120) [200, 210);
 * gaps: [50, 60) M's call (40) was queued, 10 < 30: kernel wait 10;
 * [70, 105) K3's call (100) came after 70: host wait 35; [120, 200) K4's
 * call (110) was queued, 80 >= 30: other 80.
 */
static const char TRACE[] = "{\"traceEvents\": [\n"
    STEP(1, 0, 50) STEP(2, 50, 100)
    RT(0, 5, 1) RT(6, 4, 2) RT(40, 2, 3) RT(100, 3, 4) RT(110, 1, 5)
    GPU("kernel", "gemm_kernel", 7, 10, 20, 1)
    GPU("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        20, 20, 30, 2)
    GPU("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 60, 10, 3)
    GPU("kernel", "gemm_kernel", 7, 105, 15, 4)
    GPU("kernel", "gemm_kernel", 7, 200, 10, 5)
    END;

/* a second rank: one kernel [0, 100) without steps */
static const char TRACE2[] = "{\"distributedInfo\": {\"rank\": 1, \"world_size\": 2},"
    " \"traceEvents\": [\n" RT(0, 2, 1) GPU("kernel", "other_kernel", 7, 0, 100, 1) END;

static char *write_trace(const char *text, const char *tag)
{
    static char paths[4][64];
    static int k;
    char *p = paths[k++ % 4];
    FILE *f;
    snprintf(p, 64, "/tmp/tt_bd_%d_%s.json", (int)getpid(), tag);
    cr_assert(f = fopen(p, "w"));
    fputs(text, f);
    fclose(f);
    return p;
}

#define US(x) ((int64_t)(x) * 1000)

static void check_device(const tt_bd_row *x)
{
    cr_expect_eq(x->device, 0);
    cr_expect_eq(x->start_ns, US(10));
    cr_expect_eq(x->end_ns, US(210));
    cr_expect_eq(x->window_ns, US(200));
    /* 40 + 10 + 15 + 10 */
    cr_expect_eq(x->busy_ns, US(75), "busy %ld", (long)x->busy_ns);
    cr_expect_eq(x->idle_ns, US(125));
    cr_expect_eq(x->compute_ns, US(45)); /* K1 20 + K3 15 + K4 10 */
    cr_expect_eq(x->comm_ns, US(30));
    cr_expect_eq(x->memory_ns, US(10));
    cr_expect_eq(x->overlap_ns, US(10)); /* [20, 30): K1 under K2 */
    cr_expect_eq(x->exposed_comm_ns, US(20));
    cr_expect_float_eq(x->overlap_pct, 100.0 / 3, 1e-9);
    cr_expect_float_eq(x->busy_pct, 37.5, 1e-9);
    cr_expect_eq(x->host_wait_ns, US(35), "host %ld", (long)x->host_wait_ns);
    cr_expect_eq(x->kernel_wait_ns, US(10), "kernel wait %ld", (long)x->kernel_wait_ns);
    cr_expect_eq(x->other_idle_ns, US(80), "other %ld", (long)x->other_idle_ns);
    cr_expect_eq(x->kernels, 4);
    cr_expect_eq(x->comm_kernels, 1);
    cr_expect_eq(x->memory_ops, 1);
    /* step spans: #1 [10, 70) 60, #2 [105, 210) 105; median 82.5 */
    cr_expect_eq(x->steps, 2);
    cr_expect_float_eq(x->step_ns, 82500.0, 1e-9);
}

static const tt_bd_launch *launch(const tt_bd_result *r, const char *fam)
{
    size_t k;
    for (k = 0; k < r->nlaunches; k++)
        if (!strcmp(r->launches[k].family, fam))
            return &r->launches[k];
    cr_assert_fail("no launch row %s", fam);
    return NULL;
}

Test(breakdown, one_device)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    const tt_bd_launch *l;
    char *p = write_trace(TRACE, "one");
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nranks, 1);
    check_device(&r.ranks[0]);
    /* families: gemm_kernel 3 kernels 45 us, nccl 30, memcpy 10 */
    cr_assert_eq(r.nfamilies, 3);
    cr_expect_str_eq(r.families[0].family, "gemm_kernel");
    cr_expect_eq(r.families[0].count, 3);
    cr_expect_eq(r.families[0].total_ns, US(45));
    cr_expect_eq(r.families[0].cls, TT_BD_COMPUTE);
    cr_expect_str_eq(r.families[1].family, "nccl:allreduce:f32");
    cr_expect_eq(r.families[1].cls, TT_BD_COMM);
    cr_expect_str_eq(r.families[2].family, "memcpy HtoD");
    cr_expect_eq(r.families[2].cls, TT_BD_MEMORY);
    /* one rank: min = median = max, at row 0 */
    cr_expect_eq(r.families[0].min_ns, US(45));
    cr_expect_eq(r.families[0].max_ns, US(45));
    cr_expect_eq(r.families[0].max_row, 0);
    /* gemm delays 10, 5, 90 -> sorted 5 10 90: p50 10; p95 at 1.9: 10 + 0.9 * 80 = 82;
     * calls 5, 3, 1 -> 1 3 5: p50 3, p95 3 + 0.9 * 2 = 4.8 */
    l = launch(&r, "gemm_kernel");
    cr_expect_eq(l->count, 3);
    cr_expect_float_eq(l->delay_p50_ns, 10000.0, 1e-9);
    cr_expect_float_eq(l->delay_p95_ns, 82000.0, 1e-9);
    cr_expect_eq(l->delay_max_ns, US(90));
    cr_expect_float_eq(l->runtime_p50_ns, 3000.0, 1e-9);
    cr_expect_float_eq(l->runtime_p95_ns, 4800.0, 1e-9);
    cr_expect_eq(l->runtime_max_ns, US(5));
    l = launch(&r, "nccl:allreduce:f32");
    cr_expect_float_eq(l->delay_p95_ns, 14000.0, 1e-9); /* 20 - 6, one launch */
    l = launch(&r, "memcpy HtoD");
    cr_expect_eq(l->delay_max_ns, US(20));
    /* the worst launch: K4, 200 - 110 */
    cr_assert(r.nworst == 5);
    cr_expect_eq(r.worst[0].delay_ns, US(90));
    cr_expect_eq(r.worst[0].ts_ns, US(200));
    cr_expect_str_eq(r.worst[0].runtime, "cudaLaunchKernel");
    cr_expect_eq(r.worst[4].delay_ns, US(5));
    tt_bd_result_free(&r);
    unlink(p);
}

Test(breakdown, by_step_and_steps)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    char *p = write_trace(TRACE, "steps");
    o.by = TT_BD_BY_STEP;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    check_device(&r.ranks[0]);
    cr_assert_eq(r.nrows, 2);
    /* #1: K1, K2, M: [10, 70), busy 40 + 10, gap [50, 60) kernel wait */
    cr_expect_eq(r.rows[0].step, 1);
    cr_expect_eq(r.rows[0].window_ns, US(60));
    cr_expect_eq(r.rows[0].busy_ns, US(50));
    cr_expect_eq(r.rows[0].kernel_wait_ns, US(10));
    cr_expect_eq(r.rows[0].overlap_ns, US(10));
    /* #2: K3, K4: [105, 210), busy 25, gap [120, 200) other (K4's call at 110) */
    cr_expect_eq(r.rows[1].step, 2);
    cr_expect_eq(r.rows[1].window_ns, US(105));
    cr_expect_eq(r.rows[1].busy_ns, US(25));
    cr_expect_eq(r.rows[1].other_idle_ns, US(80));
    cr_expect_eq(r.rows[1].host_wait_ns, 0);
    /* gemm per step: #1 20, #2 25 -> min 20, median 22.5, max 25 at step 2 */
    cr_expect_str_eq(r.families[0].family, "gemm_kernel");
    cr_expect_eq(r.families[0].min_ns, US(20));
    cr_expect_float_eq(r.families[0].median_ns, 22500.0, 1e-9);
    cr_expect_eq(r.families[0].max_ns, US(25));
    cr_expect_eq(r.families[0].max_row, 1);
    tt_bd_result_free(&r);
    /* --steps 2-2: only K3, K4 */
    o.by = TT_BD_BY_RANK;
    o.steps_set = 1;
    o.step_from = o.step_to = 2;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0);
    cr_expect_eq(r.ranks[0].window_ns, US(105));
    cr_expect_eq(r.ranks[0].busy_ns, US(25));
    cr_expect_eq(r.ranks[0].comm_ns, 0);
    cr_expect(isnan(r.ranks[0].overlap_pct));
    cr_expect_eq(r.nfamilies, 1);
    tt_bd_result_free(&r);
    /* a step that is not there: nothing to break down */
    o.step_from = o.step_to = 7;
    cr_expect_eq(tt_breakdown_file_result(p, &o, &r), TT_ENOTFOUND);
    cr_expect_eq(r.nranks, 0);
    unlink(p);
}

Test(breakdown, by_stream)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    char *p = write_trace(TRACE, "stream");
    o.by = TT_BD_BY_STREAM;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nrows, 2);
    /* stream 7: K1 [10,30) M [60,70) K3 [105,120) K4 [200,210): window 200,
     * busy 55; gaps [30,60) M's call at 40 > 30: host 30; [70,105) host 35;
     * [120,200) other 80 */
    cr_expect_eq(r.rows[0].stream, 7);
    cr_expect_eq(r.rows[0].busy_ns, US(55));
    cr_expect_eq(r.rows[0].host_wait_ns, US(65));
    cr_expect_eq(r.rows[0].other_idle_ns, US(80));
    cr_expect_eq(r.rows[0].kernel_wait_ns, 0);
    cr_expect(isnan(r.rows[0].overlap_pct));
    /* stream 20: K2 alone, nothing to overlap on it */
    cr_expect_eq(r.rows[1].stream, 20);
    cr_expect_eq(r.rows[1].comm_ns, US(30));
    cr_expect_eq(r.rows[1].exposed_comm_ns, US(30));
    cr_expect_float_eq(r.rows[1].overlap_pct, 0.0, 1e-12);
    tt_bd_result_free(&r);
    /* --kernel-wait 5 us: the 10 us gap is other now */
    o.by = TT_BD_BY_RANK;
    o.kernel_wait_ns = 5000;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0);
    cr_expect_eq(r.ranks[0].kernel_wait_ns, 0);
    cr_expect_eq(r.ranks[0].other_idle_ns, US(90));
    tt_bd_result_free(&r);
    unlink(p);
}

/*
 * Ties: after the gap [10, 20), two kernels start at 20: k_b launched at
 * 15 (after the gap began), k_c at 5 (queued): not host wait, kernel wait
 * (10 < 30). After [30, 40), k_d has no runtime call: queued, kernel wait.
 * After [45, 50), k_e launched at 46 > 45: host wait 5.
 */
static const char TIES[] = "{\"traceEvents\": [\n"
    RT(0, 1, 1) RT(15, 1, 2) RT(5, 1, 3) RT(46, 1, 5)
    GPU("kernel", "k_a", 7, 0, 10, 1)
    GPU("kernel", "k_b", 7, 20, 10, 2)
    GPU("kernel", "k_c", 8, 20, 5, 3)
    GPU("kernel", "k_d", 7, 40, 5, 4)
    GPU("kernel", "k_e", 7, 50, 5, 5)
    END;

Test(breakdown, idle_ties)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    char *p = write_trace(TIES, "ties");
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nranks, 1);
    cr_expect_eq(r.ranks[0].idle_ns, US(25));
    cr_expect_eq(r.ranks[0].kernel_wait_ns, US(20));
    cr_expect_eq(r.ranks[0].host_wait_ns, US(5));
    cr_expect_eq(r.ranks[0].other_idle_ns, 0);
    /* k_d's correlation 4 has no call: 4 launches of 5 */
    cr_expect_eq(r.nworst, 4);
    tt_bd_result_free(&r);
    unlink(p);
}

/* two ranks in one database: the skew and the units of the families */
Test(breakdown, two_ranks_db)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    tt_db *db;
    char dbp[64];
    char *a = write_trace(TRACE, "r0"), *b = write_trace(TRACE2, "r1");
    snprintf(dbp, sizeof(dbp), "/tmp/tt_bd_%d.db", (int)getpid());
    unlink(dbp);
    cr_assert_eq(tt_db_open(&db, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, a, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_ingest_file(db, b, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_breakdown_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nranks, 2);
    cr_expect_eq(r.ranks[1].rank, 1);
    check_device(&r.ranks[0]);
    /* rank 1: no steps, step = window = 100 us; busy 100, no idle */
    cr_expect_eq(r.ranks[1].steps, 0);
    cr_expect_float_eq(r.ranks[1].step_ns, 100000.0, 1e-9);
    cr_expect_eq(r.ranks[1].idle_ns, 0);
    /* step: 82.5 and 100 -> median 91.25, skew 100 / 91.25; compute 45 and
     * 100 -> 100 / 72.5 */
    cr_expect_float_eq(r.step_skew, 100.0 / 91.25, 1e-12);
    cr_expect_eq(r.slowest, 1);
    cr_expect_float_eq(r.compute_skew, 100.0 / 72.5, 1e-12);
    cr_expect_eq(r.most_compute, 1);
    /* gemm_kernel: 45 on rank 0, none on rank 1 -> min 0, median 22.5 */
    cr_expect_str_eq(r.families[1].family, "gemm_kernel");
    cr_expect_eq(r.families[1].min_ns, 0);
    cr_expect_float_eq(r.families[1].median_ns, 22500.0, 1e-9);
    cr_expect_eq(r.families[1].max_row, 0);
    tt_bd_result_free(&r);
    o.rank = 1;
    cr_assert_eq(tt_breakdown_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    cr_expect_eq(r.nranks, 1);
    cr_expect_eq(r.nfamilies, 1);
    tt_bd_result_free(&r);
    tt_db_free(db);
    unlink(dbp);
    unlink(a);
    unlink(b);
}

/* ---- GPU time per CPU op ---- */

#define OP(name, ts, dur)                                                                   \
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 1, \"tid\": 1,"    \
    " \"ts\": " #ts ", \"dur\": " #dur "},\n"

/*
 * Rank 0 (times in us):
 *   aten::linear [0, 20) holds aten::addmm [1, 10)
 *     call c1 at 2 (3): in addmm (the innermost) -> gemm [10, 30)    addmm  20
 *     call c2 at 12 (2): in linear only          -> k2   [30, 35)    linear  5
 *   aten::copy_ [40, 50): call c3 at 41 (2)      -> memcpy [50, 60)  copy_  10
 *   call c4 at 60 (1), in no op                  -> k4   [70, 74)    (no op) 4
 *   correlation 9 has no call                    -> k9   [80, 81)    (no op) 1
 * Rank 1:
 *   aten::addmm [0, 10): call at 1 (2)           -> gemm [5, 55)     addmm  50
 *   aten::linear [20, 30): call at 21 (2)        -> k2   [30, 33)    linear  3
 */
static const char OPS0[] = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2},"
    " \"traceEvents\": [\n"
    OP("aten::linear", 0, 20) OP("aten::addmm", 1, 9) OP("aten::copy_", 40, 10)
    RT(2, 3, 1) RT(12, 2, 2) RT(41, 2, 3) RT(60, 1, 4)
    GPU("kernel", "gemm_kernel", 7, 10, 20, 1)
    GPU("kernel", "k2", 7, 30, 5, 2)
    GPU("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 50, 10, 3)
    GPU("kernel", "k4", 7, 70, 4, 4)
    GPU("kernel", "k9", 7, 80, 1, 9)
    END;
static const char OPS1[] = "{\"distributedInfo\": {\"rank\": 1, \"world_size\": 2},"
    " \"traceEvents\": [\n"
    OP("aten::addmm", 0, 10) OP("aten::linear", 20, 10)
    RT(1, 2, 1) RT(21, 2, 2)
    GPU("kernel", "gemm_kernel", 7, 5, 50, 1)
    GPU("kernel", "k2", 7, 30, 3, 2)
    END;

static void expect_op(const tt_bd_op *x, const char *name, int64_t count, int64_t total,
                      int64_t mn, double med, int64_t mx, size_t max_row)
{
    cr_expect_str_eq(x->op, name);
    cr_expect_eq(x->count, count, "%s count %ld", name, (long)x->count);
    cr_expect_eq(x->total_ns, total, "%s total %ld", name, (long)x->total_ns);
    cr_expect_eq(x->min_ns, mn, "%s min %ld", name, (long)x->min_ns);
    cr_expect_float_eq(x->median_ns, med, 1e-9, "%s median %f", name, x->median_ns);
    cr_expect_eq(x->max_ns, mx, "%s max %ld", name, (long)x->max_ns);
    cr_expect_eq(x->max_row, max_row, "%s max row %zu", name, x->max_row);
}

Test(breakdown, cpu_ops_two_ranks)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    tt_db *db;
    char dbp[64];
    char *a = write_trace(OPS0, "op0"), *b = write_trace(OPS1, "op1");
    snprintf(dbp, sizeof(dbp), "/tmp/tt_bd_ops_%d.db", (int)getpid());
    unlink(dbp);
    cr_assert_eq(tt_db_open(&db, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, a, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_ingest_file(db, b, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_breakdown_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nranks, 2);
    /* totals: addmm 20 + 50, copy_ 10, linear 5 + 3, (no op) 4 + 1; over the
     * two rank rows (rank 0 row 0, rank 1 row 1), 0 where an op has none:
     * addmm {20, 50}: median 35, max on rank 1; copy_ {10, 0}: median 5;
     * linear {5, 3}: median 4; (no op) {5, 0}: median 2.5 */
    cr_assert_eq(r.nops, 4);
    expect_op(&r.ops[0], "aten::addmm", 2, US(70), US(20), 35000.0, US(50), 1);
    expect_op(&r.ops[1], "aten::copy_", 1, US(10), 0, 5000.0, US(10), 0);
    expect_op(&r.ops[2], "aten::linear", 2, US(8), US(3), 4000.0, US(5), 0);
    expect_op(&r.ops[3], TT_BD_NO_OP, 2, US(5), 0, 2500.0, US(5), 0);
    tt_bd_result_free(&r);
    /* --rank 1: addmm 50, linear 3, one unit */
    o.rank = 1;
    cr_assert_eq(tt_breakdown_db_result(db, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nops, 2);
    expect_op(&r.ops[0], "aten::addmm", 1, US(50), US(50), 50000.0, US(50), 0);
    expect_op(&r.ops[1], "aten::linear", 1, US(3), US(3), 3000.0, US(3), 0);
    tt_bd_result_free(&r);
    tt_db_free(db);
    unlink(dbp);
    unlink(a);
    unlink(b);
}

/* TRACE has no CPU ops: everything under "(no op)", spread as the families */
Test(breakdown, cpu_ops_by_step)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    char *p = write_trace(TRACE, "opstep");
    o.by = TT_BD_BY_STEP;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    /* 5 activities, 20 + 30 + 10 + 15 + 10 = 85; step #1: K1, K2, M = 60,
     * #2: K3, K4 = 25 */
    cr_assert_eq(r.nops, 1);
    expect_op(&r.ops[0], TT_BD_NO_OP, 5, US(85), US(25), 42500.0, US(60), 0);
    tt_bd_result_free(&r);
    o.by = TT_BD_BY_STREAM;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    /* stream 7: 20 + 10 + 15 + 10 = 55, stream 20: 30 */
    cr_assert_eq(r.nops, 1);
    expect_op(&r.ops[0], TT_BD_NO_OP, 5, US(85), US(30), 42500.0, US(55), 0);
    tt_bd_result_free(&r);
    /* --steps 2-2: K3, K4 */
    o.by = TT_BD_BY_RANK;
    o.steps_set = 1;
    o.step_from = o.step_to = 2;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nops, 1);
    expect_op(&r.ops[0], TT_BD_NO_OP, 2, US(25), US(25), 25000.0, US(25), 0);
    tt_bd_result_free(&r);
    unlink(p);
}

Test(breakdown, no_gpu_activity)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    char *p = write_trace("{\"traceEvents\": [" RT(0, 1, 1) END, "cpu");
    cr_expect_eq(tt_breakdown_file_result(p, &o, &r), TT_ENOTFOUND);
    cr_expect(strstr(tt_error_last()->message, "no GPU activity") != NULL, "%s",
              tt_error_last()->message);
    tt_bd_result_free(&r);
    unlink(p);
}

/* options.comm_patterns (version 2): "^gemm_kernel$" makes K1, K3 and K4
 * communication too: comm = [10, 50) [105, 120) [200, 210) = 65 us, no
 * compute, so no overlap; a version 1 caller's patterns are not read; a bad
 * pattern fails the computation */
Test(breakdown, comm_patterns_option)
{
    static const char *const pats[] = { "^gemm_kernel$" }, *const bad[] = { "(" };
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result r;
    char *p = write_trace(TRACE, "pat");
    cr_expect_geq(o.version, 2);
    o.comm_patterns = pats;
    o.ncomm_patterns = 1;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    cr_expect_eq(r.ranks[0].comm_ns, US(65));
    cr_expect_eq(r.ranks[0].compute_ns, 0);
    cr_expect_eq(r.ranks[0].overlap_ns, 0);
    cr_expect_eq(r.ranks[0].comm_kernels, 4);
    cr_expect_eq(r.families[0].cls, TT_BD_COMM, "%s", r.families[0].family);
    tt_bd_result_free(&r);
    o.version = 1;
    cr_assert_eq(tt_breakdown_file_result(p, &o, &r), 0, "%s", tt_error_last()->message);
    check_device(&r.ranks[0]);
    tt_bd_result_free(&r);
    o.version = 2;
    o.comm_patterns = bad;
    cr_expect_eq(tt_breakdown_file_result(p, &o, &r), TT_EINVALID);
    cr_expect(strstr(tt_error_last()->message, "'('") != NULL, "%s", tt_error_last()->message);
    tt_bd_result_free(&r);
    cr_expect_eq(tt_bd_comm_pattern_check("a|b", NULL, 0), 0);
    cr_expect_eq(tt_bd_comm_pattern_check("a{2,1}", NULL, 0), TT_EINVALID);
    unlink(p);
}
