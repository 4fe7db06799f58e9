/*
 * tests/unit/test_memtimeline.c - tt_memtimeline_compute() on real traces
 * and on a leak, checked against numbers computed independently:
 *  - the real traces' numbers come from
 *    tests/fixtures/memtimeline/expected.py TRACE (Python standard library:
 *    torch's timeline tuples rebuilt from the [memory] events and coalesced
 *    per µs; run it to see where each number below comes from);
 *  - the leak's numbers follow from how it is written (N allocations never
 *    freed, each at its own µs), see leak_expect().
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "tracetool/render.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <unistd.h>

static char dir[64];
static tt_db *db;
static tt_memtl_result res;

static void setup(void)
{
    char path[128];
    snprintf(dir, sizeof(dir), "/tmp/tt_memtl_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/t.db", dir);
    db = NULL;
    memset(&res, 0, sizeof(res));
    cr_assert_eq(tt_db_open(&db, path, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
}

static void teardown(void)
{
    char cmd[160];
    tt_memtl_result_free(&res);
    tt_db_free(db);
    db = NULL;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(memtimeline, .init = setup, .fini = teardown);

static int64_t row_sum(const tt_memtl_result *r, int64_t i)
{
    int64_t s = 0;
    int c;
    for (c = 1; c < TT_MEMTL_NCOL; c++)
        s += r->sizes[i * TT_MEMTL_NCOL + c];
    return s;
}

static void ingest_shared(const char *path)
{
    if (access(path, R_OK) != 0)
        cr_skip_test("%s not present", path);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
}

static void compute(int no_categories)
{
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    o.no_categories = no_categories;
    tt_memtl_result_free(&res);
    cr_assert_eq(tt_memtimeline_compute(db, &o, &res), 0, "%s", tt_error_last()->message);
}

/* the numbers every trace is checked on (expected.py's output) */
struct expect {
    const char *device;
    size_t points;
    int64_t first_time, peak_total, peak_point, peak_time, final_total;
    int64_t peak_allocated, peak_alloc_t, peak_reserved;
    size_t n_top;
    int64_t top[TT_MEMTL_TOP_N];
};

static void check_result(const struct expect *x)
{
    size_t i;
    cr_assert_str_eq(res.device, x->device);
    cr_assert_eq(res.n, x->points, "points: %zu", res.n);
    cr_assert_eq(res.t_us[0], x->first_time, "first time %" PRId64, res.t_us[0]);
    cr_assert_eq(res.peak_total, x->peak_total, "peak %" PRId64, res.peak_total);
    cr_assert_eq(res.peak_point, x->peak_point, "peak point %" PRId64, res.peak_point);
    cr_assert_eq(res.t_us[res.peak_point], x->peak_time);
    cr_assert_eq(row_sum(&res, res.peak_point), x->peak_total);
    cr_assert_eq(res.final_total, x->final_total, "final %" PRId64, res.final_total);
    cr_assert_eq(row_sum(&res, (int64_t)res.n - 1), x->final_total);
    cr_assert_eq(res.peak_allocated, x->peak_allocated);
    cr_assert_eq(res.peak_t_us, x->peak_alloc_t);
    cr_assert_eq(res.peak_reserved, x->peak_reserved);
    cr_assert_eq(res.n_top, x->n_top, "top rows: %zu", res.n_top);
    for (i = 0; i < x->n_top; i++)
        cr_assert_eq(res.top[i].bytes, x->top[i], "top[%zu] = %" PRId64, i, res.top[i].bytes);
}

/* --no-categories: every byte is Unknown, at the peak too */
static void check_uncategorised(int64_t peak_point, int64_t peak_total)
{
    int c;
    compute(1);
    cr_assert_eq(res.peak_point, peak_point);
    for (c = 1; c < TT_MEMTL_NCOL; c++)
        cr_assert_eq(res.sizes[peak_point * TT_MEMTL_NCOL + c],
                     c == 1 + TT_CAT_UNKNOWN ? peak_total : 0, "column %d", c);
}

Test(memtimeline, hta_df_index_resolver)
{
    /* expected.py .../hta/df_index_resolver/df_index_resolver.json.gz */
    static const struct expect x = {
        "cuda:1", 26599, 1669783687404093, 6629508096, 3849, 1669783687579130, 4096614400,
        6629508096, 1669783687579130, 12782141440, 15,
        { 98566144, 98566144, 58720256, 58720256, 58720256, 58720256, 27262976, 27262976,
          27262976, 25165824, 25165824, 25165824, 25165824, 14680064, 14680064 },
    };
    ingest_shared(TT_SHARED "/testdata/hta/df_index_resolver/df_index_resolver.json.gz");
    compute(0);
    check_result(&x);
    check_uncategorised(x.peak_point, x.peak_total);
}

Test(memtimeline, kineto_tb_plugin_2021_06)
{
    /* expected.py .../kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz:
     * no Addr (a free takes the latest live block of its size) and no Total
     * Allocated: the running sum of Bytes, peak 2.60 GiB */
    static const struct expect x = {
        "cuda:0", 8220, 1623142623529058, 2791636480, 433, 1623142623582083, 0,
        2791636480, 1623142623582083, 0, 0, { 0 },
    };
    ingest_shared(TT_SHARED
                  "/testdata/kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz");
    compute(0);
    check_result(&x);
    check_uncategorised(x.peak_point, x.peak_total);
}

/* N CUDA blocks of 512 * (1 + i % 64) bytes never freed, 8 per op inside
 * ProfilerStep#0, block i at BASE + (i / 8) * 20 + 2 + (i % 8) * 2 µs (the
 * shape of bench/scale_memtimeline_leak.py) */
#define LEAK_N 1000
#define LEAK_BASE INT64_C(1700000000000000)

static int64_t leak_time(int i)
{
    return LEAK_BASE + (i / 8) * 20 + 2 + (i % 8) * 2;
}

static void write_leak(const char *path)
{
    FILE *f = fopen(path, "w");
    int64_t total = 0;
    int i;
    cr_assert_not_null(f);
    fprintf(f, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\","
               " \"name\": \"ProfilerStep#0\", \"pid\": 1, \"tid\": 2, \"ts\": %" PRId64
               ", \"dur\": %d}",
            LEAK_BASE, LEAK_N / 8 * 20 + 40);
    for (i = 0; i < LEAK_N; i++) {
        int64_t b = 512 * (1 + i % 64);
        total += b;
        if (i % 8 == 0)
            fprintf(f, ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\","
                       " \"pid\": 1, \"tid\": 2, \"ts\": %" PRId64 ", \"dur\": 18}",
                    LEAK_BASE + (i / 8) * 20 + 1);
        fprintf(f, ",\n{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1,"
                   " \"tid\": 2, \"ts\": %" PRId64 ", \"args\": {\"Device Type\": 1,"
                   " \"Device Id\": 0, \"Addr\": %" PRId64 ", \"Bytes\": %" PRId64 ","
                   " \"Total Allocated\": %" PRId64 ", \"Total Reserved\": %" PRId64 "}}",
                leak_time(i), INT64_C(0x7f0000000000) + i * 32768, b, total,
                total + (INT64_C(1) << 30));
    }
    fputs("]}\n", f);
    cr_assert_eq(fclose(f), 0);
}

Test(memtimeline, leak)
{
    char path[128];
    struct expect x;
    int64_t total = 0;
    int i, c;
    snprintf(path, sizeof(path), "%s/leak.json", dir);
    write_leak(path);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    for (i = 0; i < LEAK_N; i++)
        total += 512 * (1 + i % 64);
    memset(&x, 0, sizeof(x));
    x.device = "cuda:0";
    x.points = LEAK_N;             /* one point per block: each at its own µs */
    x.first_time = leak_time(0);
    x.peak_total = total;          /* nothing is freed: the last point is the peak */
    x.peak_point = LEAK_N - 1;
    x.peak_time = leak_time(LEAK_N - 1);
    x.final_total = total;
    x.peak_allocated = total;
    x.peak_alloc_t = leak_time(LEAK_N - 1);
    x.peak_reserved = total + (INT64_C(1) << 30);
    x.n_top = TT_MEMTL_TOP_N;      /* 15 blocks of 32 KiB: i % 64 == 63, i < 1000 */
    for (i = 0; i < TT_MEMTL_TOP_N; i++)
        x.top[i] = 512 * 64;
    compute(0);
    check_result(&x);
    /* allocated in a step, inside an op, never freed: no rule applies (Unknown) */
    for (c = 1; c < TT_MEMTL_NCOL; c++)
        cr_assert_eq(res.sizes[x.peak_point * TT_MEMTL_NCOL + c],
                     c == 1 + TT_CAT_UNKNOWN ? total : 0, "column %d", c);
    for (i = 0; i < TT_MEMTL_TOP_N; i++) {
        cr_assert_eq(res.top[i].category, TT_CAT_UNKNOWN);
        cr_assert_str_eq(res.top[i].op, "aten::empty");
    }
    cr_assert_str_eq(res.peak_op, "aten::empty");
    cr_assert_str_eq(res.peak_step, "ProfilerStep#0");
    /* the plot's copy keeps the peak as its last point */
    cr_assert_gt(res.plot_n, 0);
    cr_assert_eq(row_sum(&(tt_memtl_result){ .sizes = res.plot_sizes }, (int64_t)res.plot_n - 1),
                 total);
}

Test(memtimeline, no_trace)
{
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    cr_assert_lt(tt_memtimeline_compute(db, &o, &res), 0);
    tt_memtl_result_free(&res);
    tt_memtl_result_free(NULL);
}
