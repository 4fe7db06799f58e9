/*
 * tests/unit/test_averages.c - tt_averages_compute_file/_db: the rows and
 * footer totals of the result (not the printed text) on real traces and on
 * a hostile many-threads shape.
 *
 * Where the expected numbers come from (never from tracetool):
 *   - simple_add_trace and hta/nccl_parser_config: printed by
 *     tests/fixtures/avg_expected.py TRACE NAME..., which runs
 *     tests/tools/torch_averages.py, an independent Python re-implementation
 *     of torch's key_averages() (times there in ns; here in us = ns / 1000);
 *   - torch113/matmul: tests/fixtures/torch113/matmul.averages.json and
 *     matmul.table.txt, written by a real PyTorch 1.13 (key_averages() and
 *     table(sort_by="self_cpu_time_total"));
 *   - the many-threads trace: arithmetic on the generator below.
 */
#include "common/compat.h"
#include "store/db_internal.h"
#include "tracetool/analyze.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tt_avg_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(averages, .init = setup, .fini = teardown, .timeout = 120);

/* ---- helpers ---- */

struct want {
    const char *name;
    int device;
    int64_t count;
    int64_t self_cpu_ns, cpu_ns, self_dev_ns, dev_ns;
};

static const tt_avg_row *find_row(const tt_avg_trace *t, const char *name, int device)
{
    size_t i;
    for (i = 0; i < t->nrows; i++) {
        if (!strcmp(t->rows[i].name, name) && t->rows[i].device == device)
            return &t->rows[i];
    }
    return NULL;
}

/* us as computed (ns / 1000 summed in doubles) against exact ns */
static void eq_us(double us, int64_t ns, const char *what, const char *name)
{
    cr_expect(fabs(us * 1000.0 - (double)ns) < 0.5, "%s %s: %.3f us, expected %lld ns", name,
              what, us, (long long)ns);
}

static void check_rows(const tt_avg_trace *t, const struct want *w, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        const tt_avg_row *r = find_row(t, w[i].name, w[i].device);
        cr_assert_not_null(r, "no row %s", w[i].name);
        cr_expect_eq(r->count, w[i].count, "%s count %lld, expected %lld", w[i].name,
                     (long long)r->count, (long long)w[i].count);
        eq_us(r->self_cpu_us, w[i].self_cpu_ns, "self CPU", w[i].name);
        eq_us(r->cpu_total_us, w[i].cpu_ns, "CPU total", w[i].name);
        eq_us(r->self_device_us, w[i].self_dev_ns, "self device", w[i].name);
        eq_us(r->device_total_us, w[i].dev_ns, "device total", w[i].name);
    }
}

static tt_avg_result *compute_file(const char *path, const tt_avg_options *o)
{
    tt_avg_result *res = NULL;
    int rc = tt_averages_compute_file(path, o, &res);
    cr_assert_eq(rc, 0, "%s: %s", path, tt_error_last()->message);
    cr_assert_not_null(res);
    cr_assert_eq(res->ntraces, 1);
    return res;
}

static tt_avg_result *compute_via_db(const char *path, const tt_avg_options *o)
{
    char dbpath[128];
    tt_db *db = NULL;
    tt_avg_result *res = NULL;
    tt_ingest_options io = TT_INGEST_OPTIONS_INIT;
    tt_ingest_result ir;
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_ingest_file(db, path, &io, &ir), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_averages_compute_db(db, o, &res), 0, "%s", tt_error_last()->message);
    tt_db_free(db);
    cr_assert_eq(res->ntraces, 1);
    return res;
}

/* ---- simple_add_trace (tests/fixtures/avg_expected.py) ---- */

static const struct want simple_add[] = {
    { "aten::add", TT_AVG_DEV_CPU, 2, 579000, 676000, 6000, 6000 },
    { "aten::uniform_", TT_AVG_DEV_CPU, 2, 164000, 231000, 10000, 10000 },
    { "aten::mul", TT_AVG_DEV_CPU, 2, 45471000, 45966000, 0, 0 },
    { "cudaLaunchKernel", TT_AVG_DEV_CPU, 4, 161000, 161000, 0, 0 },
    { "[param|torch.add|0|0|0]", TT_AVG_DEV_CPU, 1, 3667000, 112752000, 0, 6000 },
    { "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>,"
      " at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>,"
      " at::detail::Array<char*, 3>)",
      TT_AVG_DEV_CUDA, 2, 0, 0, 6000, 6000 },
};

static void check_simple_add(const tt_avg_result *res)
{
    const tt_avg_trace *t = &res->traces[0];
    cr_expect_eq(t->nrows, 25);
    eq_us(t->self_cpu_total_us, 19814171000LL, "footer self CPU", "trace");
    eq_us(t->self_device_total_us, 16000, "footer self device", "trace");
    check_rows(t, simple_add, TT_ARRAY_SIZE(simple_add));
}

Test(averages, simple_add_file)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res = compute_file(TT_TESTDATA "/kineto/simple_add_trace.json.gz", &o);
    cr_expect_eq(res->traces[0].trace_id, 1);
    check_simple_add(res);
    tt_avg_result_free(res);
}

Test(averages, simple_add_db)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res = compute_via_db(TT_TESTDATA "/kineto/simple_add_trace.json.gz", &o);
    check_simple_add(res);
    tt_avg_result_free(res);
}

/* sort_by orders the rows: descending, first occurrence on ties */
Test(averages, simple_add_sorted)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    size_t i;
    o.sort_by = "self_cpu_time_total";
    res = compute_file(TT_TESTDATA "/kineto/simple_add_trace.json.gz", &o);
    cr_assert_eq(res->traces[0].nrows, 25);
    /* the largest self CPU (tests/fixtures/avg_expected.py) */
    cr_expect_str_eq(res->traces[0].rows[0].name, "cudaDeviceGetStreamPriorityRange");
    for (i = 1; i < res->traces[0].nrows; i++)
        cr_expect(res->traces[0].rows[i - 1].self_cpu_us >= res->traces[0].rows[i].self_cpu_us);
    tt_avg_result_free(res);
}

/* ---- a shared GPU trace (tests/fixtures/avg_expected.py) ---- */

static const struct want nccl[] = {
    { "aten::cudnn_batch_norm", TT_AVG_DEV_CPU, 159, 28724589, 68306256, 10904529, 10904529 },
    { "aten::copy_", TT_AVG_DEV_CPU, 960, 26284975, 35334341, 2262781, 2262781 },
    { "cudaLaunchKernel", TT_AVG_DEV_CPU, 2550, 24428263, 24428263, 0, 0 },
    { "DistributedDataParallel.forward", TT_AVG_DEV_CPU, 3, 38234235, 308452280, 0, 38768022 },
    { "## backward ##", TT_AVG_DEV_CPU, 3, 308289938, 310566578, 0, 57312 },
    { "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", TT_AVG_DEV_CPU,
      483, 16157969, 75462643, 0, 48055354 },
};

Test(averages, nccl_parser_config)
{
    const char *path = TT_SHARED "/testdata/hta/nccl_parser_config/nccl_data.json.gz";
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    const tt_avg_trace *t;
    if (access(path, R_OK) != 0)
        cr_skip_test("%s not present", path);
    res = compute_file(path, &o);
    t = &res->traces[0];
    cr_expect_eq(t->nrows, 192);
    eq_us(t->self_cpu_total_us, 934762765, "footer self CPU", "trace");
    eq_us(t->self_device_total_us, 165185838, "footer self device", "trace");
    check_rows(t, nccl, TT_ARRAY_SIZE(nccl));
    tt_avg_result_free(res);
}

/* ---- real PyTorch 1.13 (tests/fixtures/torch113/matmul.*) ---- */

Test(averages, torch113_matmul)
{
    /* matmul.averages.json (us): name, count, self_cpu_time_total,
     * cpu_time_total; in matmul.table.txt's order (sort_by self CPU) */
    static const struct {
        const char *name;
        int64_t count, self_cpu, cpu;
    } w[] = {
        { "aten::mm", 3, 19085, 19086 },       { "my_block", 3, 196, 19447 },
        { "aten::clamp_min", 3, 55, 55 },      { "ProfilerStep*", 3, 50, 19502 },
        { "aten::zeros", 9, 30, 38 },          { "aten::add_", 3, 30, 80 },
        { "aten::_to_copy", 3, 18, 34 },       { "aten::to", 3, 16, 50 },
        { "aten::relu", 3, 13, 68 },           { "aten::empty", 15, 9, 9 },
        { "aten::copy_", 3, 9, 9 },            { "aten::empty_strided", 3, 7, 7 },
        { "aten::zero_", 9, 1, 1 },            { "aten::resolve_conj", 9, 1, 1 },
    };
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    const tt_avg_trace *t;
    size_t i;
    o.sort_by = "self_cpu_time_total";
    res = compute_file(TT_TESTDATA "/../tests/fixtures/torch113/matmul.trace.json", &o);
    t = &res->traces[0];
    cr_assert_eq(t->nrows, TT_ARRAY_SIZE(w));
    for (i = 0; i < t->nrows; i++) {
        cr_expect_str_eq(t->rows[i].name, w[i].name, "row %zu", i);
        cr_expect_eq(t->rows[i].count, w[i].count, "%s count", w[i].name);
        eq_us(t->rows[i].self_cpu_us, w[i].self_cpu * 1000, "self CPU", w[i].name);
        eq_us(t->rows[i].cpu_total_us, w[i].cpu * 1000, "CPU total", w[i].name);
    }
    /* the table's footer: "Self CPU time total: 19.520ms" */
    eq_us(t->self_cpu_total_us, 19520000, "footer self CPU", "trace");
    tt_avg_result_free(res);
}

/* ---- hostile: many threads ---- */

#define NTHREADS 20000

/* Thread t (1..N) at (t % 7) us: aten::linear (8 us) holding aten::addmm
 * (+1, 3 us) and aten::relu (+5, 2 us), as bench/scale_averages_threads.py
 * but all threads at once (threads told apart wrongly nest wrongly) */
static char *many_threads(void)
{
    static char path[128];
    FILE *f;
    int t;
    snprintf(path, sizeof(path), "%s/threads.json", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
    for (t = 1; t <= NTHREADS; t++) {
        int base = t % 7;
        fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,"
                   "\"tid\":%d,\"ts\":%d,\"dur\":8},\n",
                t > 1 ? "," : "", t, base);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,"
                   "\"tid\":%d,\"ts\":%d,\"dur\":3},\n",
                t, base + 1);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,"
                   "\"tid\":%d,\"ts\":%d,\"dur\":2}\n",
                t, base + 5);
    }
    fputs("]}\n", f);
    fclose(f);
    return path;
}

static void check_many_threads(const tt_avg_result *res)
{
    static const struct want w[] = {
        /* self = 8 - 3 - 2 us per thread */
        { "aten::linear", TT_AVG_DEV_CPU, NTHREADS, 3000LL * NTHREADS, 8000LL * NTHREADS, 0, 0 },
        { "aten::addmm", TT_AVG_DEV_CPU, NTHREADS, 3000LL * NTHREADS, 3000LL * NTHREADS, 0, 0 },
        { "aten::relu", TT_AVG_DEV_CPU, NTHREADS, 2000LL * NTHREADS, 2000LL * NTHREADS, 0, 0 },
    };
    const tt_avg_trace *t = &res->traces[0];
    cr_assert_eq(t->nrows, 3);
    check_rows(t, w, TT_ARRAY_SIZE(w));
    cr_expect_str_eq(t->rows[0].name, "aten::linear"); /* first occurrence */
    cr_expect_eq(t->rows[0].has_parent, 0);
    cr_expect_eq(t->rows[1].has_parent, 1);
    eq_us(t->self_cpu_total_us, 8000LL * NTHREADS, "footer self CPU", "trace");
    eq_us(t->self_device_total_us, 0, "footer self device", "trace");
}

Test(averages, many_threads_file)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res = compute_file(many_threads(), &o);
    check_many_threads(res);
    tt_avg_result_free(res);
}

Test(averages, many_threads_db)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res = compute_via_db(many_threads(), &o);
    check_many_threads(res);
    tt_avg_result_free(res);
}

/* the printer prints what was computed: row_limit is the printer's */
Test(averages, print_limits_rows)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res = compute_file(many_threads(), &o);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    o.format = TT_FORMAT_CSV;
    o.row_limit = 2;
    cr_assert_eq(tt_averages_print(res, &o, f), 0);
    fclose(f);
    cr_expect_eq(res->traces[0].nrows, 3);
    cr_expect_not_null(strstr(buf, "\"aten::addmm\""));
    cr_expect_null(strstr(buf, "\"aten::relu\""));
    free(buf);
    tt_avg_result_free(res);
}

/* ---- Python stacks (tests/fixtures/stacks113, made by a real PyTorch 1.13) ----
 *
 * mlp.trace.json.gz holds python_function events and no "Call stack" args.
 * The expected numbers are torch's, from mlp.stacks.json.gz ("exact": torch
 * 1.13's own key_averages / FunctionEvents over the recorded ns times; see
 * tests/fixtures/make_stacks_fixtures.py), us * 1000 = ns.
 */
#define STACKS_DIR TT_TESTDATA "/../tests/fixtures/stacks113/"

/* the row of name whose '\n'-joined stack holds `frame` (NULL: no stack) */
static const tt_avg_row *stack_row(const tt_avg_trace *t, const char *name, const char *frame)
{
    size_t i;
    for (i = 0; i < t->nrows; i++) {
        const tt_avg_row *r = &t->rows[i];
        if (strcmp(r->name, name) || r->device != TT_AVG_DEV_CPU)
            continue;
        if (frame ? r->stack && strstr(r->stack, frame) : !r->stack)
            return r;
    }
    return NULL;
}

/* the collapsed stack of name whose frames end with `tail` */
static const tt_avg_stack *collapsed(const tt_avg_trace *t, const char *name, const char *tail)
{
    size_t i, n = strlen(tail);
    for (i = 0; i < t->nstacks; i++) {
        const tt_avg_stack *s = &t->stacks[i];
        size_t l = strlen(s->frames);
        if (!strcmp(s->name, name) && l >= n && !strcmp(s->frames + l - n, tail))
            return s;
    }
    return NULL;
}

static void check_python_stacks(const tt_avg_result *res)
{
    const tt_avg_trace *t = &res->traces[0];
    const tt_avg_row *r;
    const tt_avg_stack *c;
    int64_t events = 0;
    size_t i;
    cr_expect_eq(t->stack_source, TT_AVG_STACKS_PYTHON);
    /* a forward op: its first five frames, innermost first */
    r = stack_row(t, "aten::addmm", "\nnn.Module: Linear_1\n");
    cr_assert_not_null(r, "no aten::addmm row under Linear_1");
    cr_expect(!strncmp(r->stack, "<built-in function linear>\n"
                                 "torch/nn/modules/linear.py(113): forward\nnn.Module: Linear_1\n",
                       strlen("<built-in function linear>\n"
                              "torch/nn/modules/linear.py(113): forward\nnn.Module: Linear_1\n")),
              "stack %s", r->stack);
    cr_expect_eq(r->count, 2);
    eq_us(r->self_cpu_us, 187685, "self CPU", "aten::addmm/Linear_1");
    eq_us(r->cpu_total_us, 192393, "CPU total", "aten::addmm/Linear_1");
    /* a backward node has its forward op's stack (_set_backward_stacktraces) */
    r = stack_row(t, "AddmmBackward0", "\nnn.Module: Linear_0\n");
    cr_assert_not_null(r, "no AddmmBackward0 row with Linear_0's forward stack");
    cr_expect_eq(r->count, 2);
    eq_us(r->self_cpu_us, 2054, "self CPU", "AddmmBackward0/Linear_0");
    eq_us(r->cpu_total_us, 28784, "CPU total", "AddmmBackward0/Linear_0");
    /* AccumulateGrad: a backward node without a forward op: no stack */
    r = stack_row(t, "torch::autograd::AccumulateGrad", NULL);
    cr_assert_not_null(r, "no AccumulateGrad row without a stack");
    cr_expect_eq(r->count, 12);
    eq_us(r->self_cpu_us, 30930, "self CPU", "AccumulateGrad");
    /* collapsed: 97 (stack, op) pairs over the 334 events with a stack */
    cr_expect_eq(t->nstacks, 97);
    for (i = 0; i < t->nstacks; i++) {
        events += t->stacks[i].count;
        cr_expect(!strncmp(t->stacks[i].frames, "make_stacks_fixtures.py(", 24) &&
                      strstr(t->stacks[i].frames, "): <module>\n"),
                  "root first: %s", t->stacks[i].frames);
        if (i)
            cr_expect(strcmp(t->stacks[i - 1].frames, t->stacks[i].frames) <= 0, "sorted");
    }
    cr_expect_eq(events, 334);
    c = collapsed(t, "AddmmBackward0", "\nnn.Module: Linear_2\n"
                                       "torch/nn/modules/linear.py(113): forward\n"
                                       "<built-in function linear>");
    cr_assert_not_null(c, "no collapsed AddmmBackward0 under Linear_2");
    cr_expect_eq(c->count, 2);
    cr_expect_eq(c->self_cpu_ns, 9859);
    cr_expect_eq(c->self_device_ns, 0);
}

Test(averages, python_stacks_file)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    o.group_by_stack = 5;
    o.collect_stacks = 1;
    res = compute_file(STACKS_DIR "mlp.trace.json.gz", &o);
    check_python_stacks(res);
    tt_avg_result_free(res);
}

Test(averages, python_stacks_db)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    o.group_by_stack = 5;
    o.collect_stacks = 1;
    res = compute_via_db(STACKS_DIR "mlp.trace.json.gz", &o);
    check_python_stacks(res);
    tt_avg_result_free(res);
}

Test(averages, python_stacks_write)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    const tt_avg_trace *t;
    char path[128], line[4096];
    size_t i, want = 0, lines = 0;
    int found = 0;
    FILE *f;
    o.collect_stacks = 1;
    res = compute_file(STACKS_DIR "mlp.trace.json.gz", &o);
    t = &res->traces[0];
    cr_expect_eq(t->nrows > 0, 1);
    cr_expect_null(t->rows[0].stack, "no Source Location without group_by_stack");
    for (i = 0; i < t->nstacks; i++)
        want += t->stacks[i].self_cpu_ns >= 500;
    snprintf(path, sizeof(path), "%s/stacks.txt", dir);
    cr_assert_eq(tt_averages_write_stacks(res, TT_AVG_STACKS_SELF_CPU, path), 0, "%s",
                 tt_error_last()->message);
    cr_assert_not_null(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f)) {
        lines++;
        cr_expect_null(strchr(line, '\t'));
        if (strstr(line, ";nn.Module:_Linear_2;torch/nn/modules/linear.py(113):_forward;"
                         "<built-in_function_linear>;AddmmBackward0 10\n"))
            found = 1;
    }
    fclose(f);
    cr_expect_eq(lines, want);
    cr_expect(found, "the AddmmBackward0 line (9.859 us -> 10)");
    /* the device metric: a CPU-only run has none: an empty file */
    cr_assert_eq(tt_averages_write_stacks(res, TT_AVG_STACKS_SELF_DEVICE, path), 0);
    cr_assert_not_null(f = fopen(path, "r"));
    cr_expect_null(fgets(line, sizeof(line), f));
    fclose(f);
    tt_avg_result_free(res);
}

Test(averages, no_stacks)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    size_t i;
    o.group_by_stack = 3;
    o.collect_stacks = 1;
    /* torch 1.13's own export_chrome_trace of the same run: no stacks */
    res = compute_file(STACKS_DIR "mlp.legacy.json.gz", &o);
    cr_expect_eq(res->traces[0].stack_source, 0);
    cr_expect_eq(res->traces[0].nstacks, 0);
    cr_expect_gt(res->traces[0].nrows, 0, "rows to check");
    for (i = 0; i < res->traces[0].nrows; i++)
        cr_expect_null(res->traces[0].rows[i].stack);
    tt_avg_result_free(res);
}
