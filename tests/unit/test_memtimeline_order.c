/*
 * tests/unit/test_memtimeline_order.c - the memory timeline's context pass
 * reads the stored ops and [memory] events in id order when each thread's
 * rows are in time order (no sort), and falls back to the sorted query when
 * they are not. The same small trace, written in three orders, must give
 * the same result, and that result is known from how the trace is built
 * (each block's rule in docs/MEMTIMELINE.md, see the table below). The file
 * path (tt_memtimeline_file: a temporary database with only the tables the
 * passes read) must write the same .json as the database path.
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
    snprintf(dir, sizeof(dir), "/tmp/tt_memtlo_XXXXXX");
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

TestSuite(memtimeline_order, .init = setup, .fini = teardown);

#define BASE INT64_C(1700000000000000) /* µs */

/* ops: thread, name, start, duration (µs after BASE) */
static const struct op {
    int tid;
    const char *name;
    int ts, dur;
} ops[] = {
    { 1, "ProfilerStep#0", 1000, 200 },
    { 1, "aten::to", 1000, 2 },  /* same start as the step, shorter: inside it */
    { 1, "aten::mul", 1010, 10 },
    { 1, "aten::empty", 1020, 5 },
    { 1, "aten::relu", 1028, 10 },
    { 1, "autograd::engine::evaluate_function: MulBackward0", 1050, 20 },
    { 1, "autograd::engine::evaluate_function: AddBackward0", 1075, 10 },
    { 1, "torch::autograd::AccumulateGrad", 1088, 5 },
    { 2, "Optimizer.step#SGD.step", 1200, 50 },
};

/* [memory] events: thread, time, address, bytes (< 0 a free), and what the
 * passes must make of the block:
 *   P 8192   at 500, outside any op and step, never freed  -> PARAMETER
 *   E 128    at 1000 in aten::to, never freed               -> Unknown (op aten::to)
 *   A 1024   at 1012 in aten::mul, freed at 1015 inside it  -> TEMPORARY
 *   B 2048   at 1021 in aten::empty, never freed            -> Unknown
 *   D 32768  at 1030 in aten::relu, freed in MulBackward0   -> ACTIVATION
 *   X 256    at 1045 after aten::relu ended, in the step only, freed
 *            at 1047 (before the step's end)                -> TEMPORARY
 *   C 4096   at 1055 in MulBackward0, freed in AddBackward0 -> AUTOGRAD_DETAIL
 *   G 65536  at 1090 in AccumulateGrad, never freed         -> GRADIENT
 *   O 16384  at 1210 in Optimizer.step (thread 2), kept     -> OPTIMIZER_STATE */
static const struct mem {
    int tid, ts;
    int64_t addr, bytes;
} mems[] = {
    { 1, 500, 0x1000, 8192 },   { 1, 1000, 0x2000, 128 },   { 1, 1012, 0x3000, 1024 },
    { 1, 1015, 0x3000, -1024 }, { 1, 1021, 0x4000, 2048 },  { 1, 1030, 0x5000, 32768 },
    { 1, 1045, 0x9000, 256 },   { 1, 1047, 0x9000, -256 },
    { 1, 1055, 0x6000, 4096 },  { 1, 1062, 0x5000, -32768 }, { 1, 1080, 0x6000, -4096 },
    { 1, 1090, 0x7000, 65536 }, { 2, 1210, 0x8000, 16384 },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))
#define NMEM (sizeof(mems) / sizeof(mems[0]))

/* the coalesced timeline: one point per event (each at its own µs); the
 * bytes of each category after it (columns TT_CAT_* + 1) */
static const struct point {
    int t;
    int cat;      /* the category that changed */
    int64_t after; /* its bytes after the event */
} points[] = {
    { 500, TT_CAT_PARAMETER, 8192 },     { 1000, TT_CAT_UNKNOWN, 128 },
    { 1012, TT_CAT_TEMPORARY, 1024 },    { 1015, TT_CAT_TEMPORARY, 0 },
    { 1021, TT_CAT_UNKNOWN, 2176 },      { 1030, TT_CAT_ACTIVATION, 32768 },
    { 1045, TT_CAT_TEMPORARY, 256 },     { 1047, TT_CAT_TEMPORARY, 0 },
    { 1055, TT_CAT_AUTOGRAD_DETAIL, 4096 }, { 1062, TT_CAT_ACTIVATION, 0 },
    { 1080, TT_CAT_AUTOGRAD_DETAIL, 0 }, { 1090, TT_CAT_GRADIENT, 65536 },
    { 1210, TT_CAT_OPTIMIZER_STATE, 16384 },
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))

enum { SORTED, REVERSED, TIE_SHORTER_FIRST };

static void write_op(FILE *f, const struct op *o, int *first)
{
    fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d,"
               " \"ts\": %" PRId64 ", \"dur\": %d}",
            *first ? "" : ",\n", !strncmp(o->name, "Profiler", 8) ? "user_annotation" : "cpu_op",
            o->name, o->tid, BASE + o->ts, o->dur);
    *first = 0;
}

static void write_mem(FILE *f, const struct mem *m, int64_t total, int *first)
{
    fprintf(f, "%s{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1,"
               " \"tid\": %d, \"ts\": %" PRId64 ", \"args\": {\"Device Type\": 1,"
               " \"Device Id\": 0, \"Addr\": %" PRId64 ", \"Bytes\": %" PRId64 ","
               " \"Total Allocated\": %" PRId64 ", \"Total Reserved\": %" PRId64 "}}",
            *first ? "" : ",\n", m->tid, BASE + m->ts, m->addr, m->bytes, total,
            total + (INT64_C(1) << 30));
    *first = 0;
}

/* the trace with its events in one of the orders above */
static void write_trace(const char *path, int order)
{
    FILE *f = fopen(path, "w");
    int64_t totals[NMEM], total = 0;
    int first = 1;
    size_t i, k;
    cr_assert_not_null(f);
    for (i = 0; i < NMEM; i++)
        totals[i] = total += mems[i].bytes;
    fputs("{\"traceEvents\": [", f);
    if (order == REVERSED) {
        for (i = NMEM; i-- > 0;)
            write_mem(f, &mems[i], totals[i], &first);
        for (i = NOPS; i-- > 0;)
            write_op(f, &ops[i], &first);
    } else {
        /* ops and events merged by time, ops first */
        for (i = k = 0; i < NOPS || k < NMEM;) {
            if (k == NMEM || (i < NOPS && ops[i].ts <= mems[k].ts)) {
                size_t o = i++;
                if (order == TIE_SHORTER_FIRST && o < 2)
                    o = 1 - o; /* aten::to before the step that starts with it */
                write_op(f, &ops[o], &first);
            } else {
                write_mem(f, &mems[k], totals[k], &first);
                k++;
            }
        }
    }
    fputs("]}\n", f);
    cr_assert_eq(fclose(f), 0);
}

static void check(void)
{
    int64_t cur[TT_MEMTL_NCOL] = { 0 };
    static const struct {
        int64_t bytes;
        const char *op;
        int cat;
    } top[] = {
        { 65536, "torch::autograd::AccumulateGrad", TT_CAT_GRADIENT },
        { 16384, "Optimizer.step#SGD.step", TT_CAT_OPTIMIZER_STATE },
        { 8192, "", TT_CAT_PARAMETER },
        { 2048, "aten::empty", TT_CAT_UNKNOWN },
        { 128, "aten::to", TT_CAT_UNKNOWN },
    };
    size_t i;
    int c;
    cr_assert_eq(res.n, NPOINTS, "points: %zu", res.n);
    for (i = 0; i < NPOINTS; i++) {
        cur[1 + points[i].cat] = points[i].after;
        cr_assert_eq(res.t_us[i], BASE + points[i].t, "time of point %zu", i);
        for (c = 1; c < TT_MEMTL_NCOL; c++)
            cr_assert_eq(res.sizes[i * TT_MEMTL_NCOL + c], cur[c],
                         "point %zu (t %d) column %d: %" PRId64, i, points[i].t, c,
                         res.sizes[i * TT_MEMTL_NCOL + c]);
    }
    cr_assert_eq(res.peak_total, 8192 + 128 + 2048 + 65536 + 16384);
    cr_assert_eq(res.peak_point, (int64_t)NPOINTS - 1);
    cr_assert_str_eq(res.peak_op, "Optimizer.step#SGD.step");
    cr_assert_str_eq(res.peak_step, "");
    cr_assert_eq(res.n_top, sizeof(top) / sizeof(top[0]), "top rows: %zu", res.n_top);
    for (i = 0; i < res.n_top; i++) {
        cr_assert_eq(res.top[i].bytes, top[i].bytes, "top[%zu]", i);
        cr_assert_str_eq(res.top[i].op, top[i].op, "top[%zu]", i);
        cr_assert_eq(res.top[i].category, top[i].cat, "top[%zu]", i);
    }
}

static void run(int order)
{
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    char path[128];
    snprintf(path, sizeof(path), "%s/trace.json", dir);
    write_trace(path, order);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_memtimeline_compute(db, &o, &res), 0, "%s", tt_error_last()->message);
    check();
}

Test(memtimeline_order, in_time_order)
{
    run(SORTED);
}

Test(memtimeline_order, reversed)
{
    run(REVERSED);
}

Test(memtimeline_order, tie_shorter_op_first)
{
    run(TIE_SHORTER_FIRST);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b;
    cr_assert_not_null(f, "%s", path);
    b = malloc(1 << 20);
    cr_assert_not_null(b);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

/* the file path's lean temporary database: the same .json, byte for byte */
Test(memtimeline_order, file_equals_database)
{
    tt_memtl_options o = TT_MEMTL_OPTIONS_INIT;
    char path[128], a[160], b[160];
    size_t na, nb;
    char *x, *y;
    int order;
    for (order = SORTED; order <= TIE_SHORTER_FIRST; order++) {
        snprintf(path, sizeof(path), "%s/trace%d.json", dir, order);
        snprintf(a, sizeof(a), "%s/file%d.json", dir, order);
        snprintf(b, sizeof(b), "%s/db%d.json", dir, order);
        write_trace(path, order);
        cr_assert_eq(tt_memtimeline_file(path, &o, a), 0, "%s", tt_error_last()->message);
        tt_db_free(db);
        snprintf(b, sizeof(b), "%s/t%d.db", dir, order);
        cr_assert_eq(tt_db_open(&db, b, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
        cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
        snprintf(b, sizeof(b), "%s/db%d.json", dir, order);
        cr_assert_eq(tt_memtimeline_db(db, &o, b), 0, "%s", tt_error_last()->message);
        x = slurp(a, &na);
        y = slurp(b, &nb);
        cr_assert_gt(na, 100);
        cr_assert(na == nb && !memcmp(x, y, na), "order %d: %s and %s differ", order, a, b);
        free(x);
        free(y);
    }
}
