/*
 * tests/unit/test_filter.c - the filters' public side (tracetool/filter.h):
 * --time-range parsed into ns with its units and open sides, bad ranges and
 * bad expressions refused with a message; the machinery the analyses use
 * (analyze/filter/filtering.h): --under's intervals, names by string id, thread
 * keys, GPU rows by their launch, the wrapped sink, --under's reading.
 */
#define _GNU_SOURCE
#include "tracetool/filter.h"
#include "analyze/filter/filtering.h"
#include "formats/kineto.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void range_is(const char *arg, int64_t a, int64_t b)
{
    int64_t x = 1, y = 2;
    cr_assert_eq(tt_filter_parse_time_range(arg, &x, &y), 0, "%s: %s", arg,
                 tt_error_last()->message);
    cr_assert_eq(x, a, "%s: from %lld, want %lld", arg, (long long)x, (long long)a);
    cr_assert_eq(y, b, "%s: to %lld, want %lld", arg, (long long)y, (long long)b);
}

static void range_bad(const char *arg, const char *words)
{
    int64_t x = 1, y = 2;
    cr_assert_eq(tt_filter_parse_time_range(arg, &x, &y), TT_EINVALID, "%s accepted", arg);
    cr_assert(strstr(tt_error_last()->message, words), "%s: '%s' lacks '%s'", arg,
              tt_error_last()->message, words);
    cr_assert(x == 1 && y == 2, "%s: outputs changed on failure", arg);
}

Test(filter, time_range_units)
{
    range_is("10:20", 10000, 20000);
    range_is("1700000000123.5:1700000000124", INT64_C(1700000000123500),
             INT64_C(1700000000124000));
    range_is("5ns:7ns", 5, 7);
    range_is("1ms:2s", 1000000, 2000000000);
    range_is("0.001:0.002us", 1, 2);
    range_is(":20", TT_FILTER_OPEN_FROM, 20000);
    range_is("-5:", -5000, TT_FILTER_OPEN_TO);
    range_is(":", TT_FILTER_OPEN_FROM, TT_FILTER_OPEN_TO);
}

Test(filter, time_range_refused)
{
    range_bad("10", "want A:B");
    range_bad("1:2:3", "want A:B");
    range_bad("20:10", "not before");
    range_bad("10:10", "not before");
    range_bad("x:10", "not a number");
    range_bad("10:5h", "unknown unit");
    range_bad("1e30:", "out of range");
    range_bad("nan:", "not a number");
    range_bad("inf:", "not a number");
}

Test(filter, regex_checked)
{
    tt_filter f = TT_FILTER_INIT;
    cr_assert_eq(tt_filter_check(NULL), 0);
    cr_assert_not(tt_filter_active(&f));
    cr_assert_not(tt_filter_active(NULL));
    f.name = "^aten::(add|mul)";
    f.under = "ProfilerStep#[0-9]+";
    cr_assert_eq(tt_filter_check(&f), 0);
    cr_assert(tt_filter_active(&f));
    f.name = "(unclosed";
    cr_assert_eq(tt_filter_check(&f), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "--name '(unclosed'"));
    f.name = NULL;
    f.under = "a[";
    cr_assert_eq(tt_filter_check(&f), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "--under 'a['"));
    f = (tt_filter)TT_FILTER_INIT;
    f.to_ns = 5;
    cr_assert(tt_filter_active(&f));
    cr_assert(tt__filter_in_time(&f, 4));
    cr_assert_not(tt__filter_in_time(&f, 5));
    cr_assert(tt__filter_in_time(NULL, 5));
}

/* ---- the machinery the analyses use (analyze/filter/filtering.h) ---- */

static tt__tkey thr(int64_t pid, int64_t tid)
{
    tt__tkey k;
    memset(&k, 0, sizeof(k));
    k.pid = pid;
    k.tid = tid;
    k.pkind = k.tkind = TT_CELL_INT;
    return k;
}

static tt__flt *under_filter(const char *re)
{
    tt_filter f = TT_FILTER_INIT;
    tt__flt *fl = NULL;
    f.under = re;
    cr_assert_eq(tt__flt_new(&fl, &f), 0);
    cr_assert_not_null(fl);
    cr_assert(tt__flt_needs_load(fl));
    cr_assert(tt__flt_wants_launch(fl));
    return fl;
}

Test(filter, nothing_limited_is_null)
{
    tt_filter f = TT_FILTER_INIT;
    tt__flt *fl = (tt__flt *)1;
    tt__tkey k = thr(1, 1);
    cr_assert_eq(tt__flt_new(&fl, &f), 0);
    cr_assert_null(fl);
    cr_assert_eq(tt__flt_new(&fl, NULL), 0);
    cr_assert_null(fl);
    cr_assert(tt__flt_name(NULL, 5));
    cr_assert(tt__flt_under(NULL, &k, 1, 2));
    cr_assert(tt__flt_time(NULL, 7));
    cr_assert_not(tt__flt_needs_load(NULL));
    cr_assert_eq(tt__flt_load(NULL, "/nonexistent", NULL, 0), 0);
    f.name = "(";
    cr_assert_eq(tt__flt_new(&fl, &f), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "--name '('"));
}

/* nested ops, added in any order, on two threads: an event is under one
 * when an op encloses it whole, the op itself included */
Test(filter, under_intervals_nested_any_order)
{
    tt__flt *fl = under_filter("step");
    tt__tkey a = thr(1, 10), b = thr(1, 11), c = thr(2, 10);
    size_t ops, threads;
    /* thread a: [100, 200] with [120, 150] inside, [300, 400]; b: [150, 500] */
    cr_assert_eq(tt__flt_add_op(fl, &a, 300, 400), 0);
    cr_assert_eq(tt__flt_add_op(fl, &b, 150, 500), 0);
    cr_assert_eq(tt__flt_add_op(fl, &a, 120, 150), 0);
    cr_assert_eq(tt__flt_add_op(fl, &a, 100, 200), 0);
    cr_assert_eq(tt__flt_add_op(fl, &a, 100, 130), 0); /* same start, shorter */
    cr_assert_eq(tt__flt_seal(fl), 0);
    tt__flt_loaded(fl, &ops, &threads);
    cr_assert_eq(ops, 3, "outermost ops kept: %zu", ops);
    cr_assert_eq(threads, 2);
    cr_assert(tt__flt_under(fl, &a, 100, 200), "the op itself");
    cr_assert(tt__flt_under(fl, &a, 125, 140));
    cr_assert(tt__flt_under(fl, &a, 160, 199), "inside the outer, after the inner");
    cr_assert_not(tt__flt_under(fl, &a, 190, 210), "crosses the end");
    cr_assert_not(tt__flt_under(fl, &a, 99, 120), "starts before");
    cr_assert_not(tt__flt_under(fl, &a, 250, 260), "between the ops");
    cr_assert(tt__flt_under(fl, &a, 300, 300));
    cr_assert(tt__flt_under(fl, &a, 400, 350), "end before start counts as start");
    cr_assert_not(tt__flt_under(fl, &a, 401, 401));
    cr_assert(tt__flt_under(fl, &b, 160, 170), "the other thread's op");
    cr_assert_not(tt__flt_under(fl, &b, 110, 120), "a's op is not b's");
    cr_assert_not(tt__flt_under(fl, &c, 160, 170), "another pid, same tid");
    tt__flt_free(fl);
}

Test(filter, under_overlapping_not_nested)
{
    /* ops that overlap without nesting (a broken trace): an event inside
     * either one is under */
    tt__flt *fl = under_filter("x");
    tt__tkey a = thr(1, 1);
    cr_assert_eq(tt__flt_add_op(fl, &a, 0, 100), 0);
    cr_assert_eq(tt__flt_add_op(fl, &a, 50, 150), 0);
    cr_assert_eq(tt__flt_seal(fl), 0);
    cr_assert(tt__flt_under(fl, &a, 10, 90));
    cr_assert(tt__flt_under(fl, &a, 60, 140));
    cr_assert_not(tt__flt_under(fl, &a, 40, 120), "inside neither");
    tt__flt_free(fl);
}

Test(filter, thread_keys)
{
    const char text[] = "25738main-7-0007";
    tt__cell p = { TT_CELL_INT, 9, 0 }, t_int = { TT_CELL_INT, 25738, 0 };
    tt__cell t_txt = { TT_CELL_TEXT, 0, 5 }, t_main = { TT_CELL_TEXT, 5, 4 };
    tt__cell t_neg = { TT_CELL_TEXT, 9, 2 }, t_zero = { TT_CELL_TEXT, 11, 4 };
    tt__cell nul = { TT_CELL_NULL, 0, 0 };
    tt__tkey a = tt__tkey_of_cells(&p, &t_int, text), b = tt__tkey_of_cells(&p, &t_txt, text);
    tt__tkey c = tt__tkey_of_cells(&p, &t_main, text), d = tt__tkey_of_cells(&p, &t_neg, text);
    tt__tkey e = tt__tkey_of_cells(&p, &t_zero, text), n = tt__tkey_of_cells(&p, &nul, text);
    tt_id pid = { 1, 0, 9, NULL }, tid = { 1, 1, 0, "25738" }, mid = { 1, 1, 0, "main" };
    tt__tkey f = tt__tkey_of_ids(&pid, &tid), g = tt__tkey_of_ids(&pid, &mid);
    cr_assert(tt__tkey_eq(&a, &b), "a tid written as text is the number");
    cr_assert(tt__tkey_eq(&a, &f), "the reader's id and the row's cell agree");
    cr_assert(tt__tkey_eq(&c, &g));
    cr_assert_not(tt__tkey_eq(&a, &c));
    cr_assert(d.tkind == TT_CELL_INT && d.tid == -7, "-7: %lld", (long long)d.tid);
    cr_assert(e.tkind == TT_CELL_TEXT, "0007 is a text, not 7");
    cr_assert(n.tkind == TT_CELL_NULL);
    cr_assert_not(tt__tkey_eq(&n, &a));
}

/* --name: one verdict per string id, a search; --under's: whole names */
Test(filter, names_by_string_id)
{
    tt_filter f = TT_FILTER_INIT;
    tt__flt *fl = NULL;
    f.name = "aten::(add|mul)";
    f.under = "ProfilerStep#[0-9]+";
    cr_assert_eq(tt__flt_new(&fl, &f), 0);
    cr_assert_eq(tt__flt_string(fl, 1, "aten::add_", 10), 0);
    cr_assert_eq(tt__flt_string(fl, 2, "aten::sub", 9), 0);
    cr_assert_eq(tt__flt_string(fl, 5000, "ProfilerStep#12", 15), 0);
    cr_assert_eq(tt__flt_string(fl, 7, "xProfilerStep#1", 15), 0);
    cr_assert(tt__flt_name(fl, 1));
    cr_assert_not(tt__flt_name(fl, 2));
    cr_assert_not(tt__flt_name(fl, 3), "an id never handed over");
    cr_assert_not(tt__flt_name(fl, -1));
    cr_assert(tt__flt_under_name(fl, 5000));
    cr_assert_not(tt__flt_under_name(fl, 7), "--under matches whole names");
    cr_assert_not(tt__flt_under_name(fl, 1));
    tt__flt_reset(fl);
    cr_assert_not(tt__flt_name(fl, 1), "a new trace's strings start over");
    tt__flt_free(fl);
}

/* a GPU row by its launch: the call's start for the time range, the
 * call's thread for --under; without a call, its own start and under none */
Test(filter, gpu_rows_by_their_launch)
{
    tt_filter f = TT_FILTER_INIT;
    tt__flt *fl = NULL;
    tt__cell row[TT_NC_GPU];
    tt__gpu_launch l;
    tt__tkey a = thr(1, 10);
    memset(row, 0, sizeof(row));
    f.from_ns = 100;
    f.to_ns = 200;
    f.under = "step";
    cr_assert_eq(tt__flt_new(&fl, &f), 0);
    cr_assert_eq(tt__flt_add_op(fl, &a, 50, 180), 0);
    cr_assert_eq(tt__flt_seal(fl), 0);
    row[TT_C_GPU_TS].type = TT_CELL_INT;
    row[TT_C_GPU_TS].i = 500; /* runs long after its launch */
    row[TT_C_GPU_NAME].type = TT_CELL_INT;
    row[TT_C_GPU_NAME].i = 3;
    memset(&l, 0, sizeof(l));
    l.rt_id = 4;
    l.rt_ts = 150;
    l.has_thread = 1;
    l.rt_thread = a;
    cr_assert_eq(tt__flt_launch(fl, &l), 0);
    l.rt_ts = 190; /* in the range, outside the op */
    cr_assert_eq(tt__flt_launch(fl, &l), 0);
    l.rt_id = 0; /* no call: its own start, 500 */
    l.rt_ts = TT_ROWS_NO_TS;
    l.has_thread = 0;
    cr_assert_eq(tt__flt_launch(fl, &l), 0);
    cr_assert_eq(tt__flt_gpu(fl, row, ""), 1);
    cr_assert_eq(tt__flt_gpu_start(fl), 150);
    cr_assert_eq(tt__flt_gpu(fl, row, ""), 0);
    cr_assert_eq(tt__flt_gpu_fails(fl, row, ""), TT__FLT_SCOPE);
    cr_assert_eq(tt__flt_gpu_start(fl), 500);
    cr_assert_lt(tt__flt_gpu(fl, row, ""), 0, "a GPU row without its launch is an error");
    tt__flt_free(fl);
}

/* the wrapped sink: what fails is left out of the batch, with its links */
struct seen {
    int rows, links;
    int64_t last_link_op;
    int64_t ts[8];
};

static int seen_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                     const char *text)
{
    struct seen *s = ctx;
    int r;
    (void)text;
    for (r = 0; table == TT_ROWS_GPU && r < nrows; r++)
        s->ts[s->rows++] = cells[(size_t)r * (size_t)ncols + TT_C_GPU_TS].i;
    return 0;
}

static int seen_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct seen *s = ctx;
    (void)name, (void)rt, (void)rt_ts;
    s->links++;
    s->last_link_op = op;
    return 0;
}

Test(filter, wrapped_sink)
{
    tt_filter f = TT_FILTER_INIT;
    tt__flt *fl = NULL;
    tt__rowsink in, out;
    struct seen s;
    tt__cell str[TT_NC_STR], g[3 * TT_NC_GPU];
    const char text[] = "ncclKernelgemm";
    int i;
    memset(&s, 0, sizeof(s));
    memset(&in, 0, sizeof(in));
    memset(g, 0, sizeof(g));
    in.ctx = &s;
    in.rows = seen_rows;
    in.gpu_links = seen_links;
    f.name = "^nccl";
    cr_assert_eq(tt__flt_new(&fl, &f), 0);
    cr_assert_eq(tt__flt_sink(fl, &in, 1u << TT_ROWS_GPU, &out), 0);
    cr_assert_null(out.gpu_launch, "--name alone needs no launches");
    str[TT_C_STR_ID] = (tt__cell){ TT_CELL_INT, 1, 0 };
    str[TT_C_STR_S] = (tt__cell){ TT_CELL_TEXT, 0, 10 };
    cr_assert_eq(out.rows(out.ctx, TT_ROWS_STR, 1, TT_NC_STR, str, text), 0);
    str[TT_C_STR_ID].i = 2;
    str[TT_C_STR_S] = (tt__cell){ TT_CELL_TEXT, 10, 4 };
    cr_assert_eq(out.rows(out.ctx, TT_ROWS_STR, 1, TT_NC_STR, str, text), 0);
    for (i = 0; i < 3; i++) { /* nccl, gemm, nccl */
        tt__cell *row = &g[i * TT_NC_GPU];
        row[TT_C_GPU_NAME] = (tt__cell){ TT_CELL_INT, i == 1 ? 2 : 1, 0 };
        row[TT_C_GPU_TS] = (tt__cell){ TT_CELL_INT, 10 * (i + 1), 0 };
        cr_assert_eq(out.gpu_links(out.ctx, 100 + i, 0, 0, TT_ROWS_NO_TS), 0);
    }
    cr_assert_eq(s.links, 0, "links wait for their rows");
    cr_assert_eq(out.rows(out.ctx, TT_ROWS_GPU, 3, TT_NC_GPU, g, text), 0);
    cr_assert_eq(s.rows, 2);
    cr_assert(s.ts[0] == 10 && s.ts[1] == 30);
    cr_assert_eq(s.links, 2, "the links of the rows that passed only");
    cr_assert_eq(s.last_link_op, 102);
    tt__flt_free(fl);
}

/* MTIA: its runtime calls and on-device CCP events mean what CUDA's do */
Test(filter, mtia_categories)
{
    cr_assert_eq(tt_kineto_class("mtia_runtime"), TT_XC_RUNTIME);
    cr_assert_eq(tt_kineto_class("mtia_ccp_events"), TT_XC_KERNEL);
    cr_assert_eq(tt_kineto_class("mtia_insight"), TT_XC_SLICE);
}

/* --under's first reading of a file: ops found wherever they come (here
 * after what they enclose), their thread as the rows give it */
Test(filter, load_a_file_in_any_order)
{
    static const char json[] =
        "{\"traceEvents\": ["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":\"7\",\"ts\":12,\"dur\":2},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":8,\"ts\":12,\"dur\":2},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":7,\"ts\":20,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":7,\"ts\":10,\"dur\":10},"
        "{\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":1,\"tid\":9,\"ts\":40},"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":50},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#x\",\"pid\":1,\"tid\":7,\"ts\":60,\"dur\":10}"
        "]}";
    char path[] = "/tmp/tt_test_filter_XXXXXX";
    int fd = mkstemp(path);
    tt__flt *fl = under_filter("ProfilerStep#[0-9]+");
    tt__tkey t7 = thr(1, 7), t8 = thr(1, 8), t9 = thr(1, 9);
    size_t ops, threads;
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, json, sizeof(json) - 1), (ssize_t)sizeof(json) - 1);
    close(fd);
    cr_assert_eq(tt__flt_load(fl, path, NULL, 0), 0, "%s", tt_error_last()->message);
    unlink(path);
    tt__flt_loaded(fl, &ops, &threads);
    cr_assert_eq(ops, 3, "ops %zu", ops);
    cr_assert_eq(threads, 2);
    /* ts in us in the file, ns here */
    cr_assert(tt__flt_under(fl, &t7, 12000, 14000), "before its op in the file, tid \"7\" is 7");
    cr_assert(tt__flt_under(fl, &t7, 25000, 30000));
    cr_assert_not(tt__flt_under(fl, &t8, 12000, 14000), "another thread");
    cr_assert(tt__flt_under(fl, &t9, 45000, 45000), "a 'B'/'E' pair's interval");
    cr_assert_not(tt__flt_under(fl, &t7, 65000, 66000), "ProfilerStep#x is no whole match");
    tt__flt_free(fl);
}
