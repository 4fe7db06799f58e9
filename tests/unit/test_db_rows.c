/*
 * tests/unit/test_db_rows.c - the two sources of the record stream agree:
 * a trace file's rows (tt__ingest_rows) and the rows of the same trace
 * after tt_ingest_file stored it (tt__db_rows) are the same rows, table by
 * table, once string ids are read as their strings; tt__db_traces lists
 * what was stored.
 */
#include "common/compat.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "shared_data.h"

/* every row of a source as one text line per row, per table */
struct collect {
    char **strs; /* by id */
    size_t nstrs;
    char **lines[TT_ROWS_COUNT];
    size_t nlines[TT_ROWS_COUNT], cap[TT_ROWS_COUNT];
    int64_t kernels; /* kernel callbacks */
    int64_t last_str_id;
    int ascending;
    int no_nesting; /* leave depth and parent_id out of the lines */
};

/* the columns holding string ids (docs/SCHEMA.md) */
static int is_string_col(int table, int c)
{
    switch (table) {
    case TT_ROWS_SLICE:
        return c == TT_C_SL_CAT || c == TT_C_SL_NAME || c == TT_C_SL_INPUT_DIMS ||
               c == TT_C_SL_INPUT_TYPES;
    case TT_ROWS_RUNTIME: return c == TT_C_RT_CAT || c == TT_C_RT_NAME;
    case TT_ROWS_GPU: return c == TT_C_GPU_CAT || c == TT_C_GPU_NAME;
    case TT_ROWS_MEMORY: return c == TT_C_MEM_CAT || c == TT_C_MEM_NAME;
    case TT_ROWS_FLOW: return c == TT_C_FL_CAT || c == TT_C_FL_NAME;
    case TT_ROWS_INSTANT: return c == TT_C_IN_CAT || c == TT_C_IN_NAME;
    case TT_ROWS_META: return c == TT_C_MD_CAT || c == TT_C_MD_NAME;
    default: return 0;
    }
}

static int on_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct collect *k = ctx;
    int r, c;
    for (r = 0; r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        tt_buf b = TT_BUF_INIT;
        if (table == TT_ROWS_STR) {
            int64_t id = row[TT_C_STR_ID].i;
            cr_assert_eq(row[TT_C_STR_ID].type, TT_CELL_INT);
            k->ascending &= id > k->last_str_id;
            k->last_str_id = id;
            if ((size_t)id >= k->nstrs) {
                size_t n = (size_t)id * 2 + 16;
                k->strs = realloc(k->strs, n * sizeof(char *));
                cr_assert(k->strs);
                memset(k->strs + k->nstrs, 0, (n - k->nstrs) * sizeof(char *));
                k->nstrs = n;
            }
            k->strs[id] = strndup(text + row[TT_C_STR_S].i, row[TT_C_STR_S].len);
            continue;
        }
        for (c = 0; c < ncols; c++) {
            const tt__cell *x = &row[c];
            if (k->no_nesting && table == TT_ROWS_SLICE &&
                (c == TT_C_SL_DEPTH || c == TT_C_SL_PARENT_ID))
                tt_buf_addstr(&b, "-");
            else if (x->type == TT_CELL_NULL)
                tt_buf_addstr(&b, "NULL");
            else if (x->type == TT_CELL_TEXT)
                tt_buf_addf(&b, "'%.*s'", (int)x->len, text + x->i);
            else if (is_string_col(table, c)) {
                cr_assert(x->i > 0 && (size_t)x->i < k->nstrs && k->strs[x->i],
                          "table %d column %d: string %lld handed over before its row", table,
                          c, (long long)x->i);
                tt_buf_addf(&b, "s:%s", k->strs[x->i]);
            } else
                tt_buf_addf(&b, "%lld", (long long)x->i);
            tt_buf_addch(&b, '|');
        }
        tt_buf_addch(&b, '\0');
        cr_assert(!b.oom);
        if (k->nlines[table] == k->cap[table]) {
            k->cap[table] = k->cap[table] ? k->cap[table] * 2 : 256;
            k->lines[table] = realloc(k->lines[table], k->cap[table] * sizeof(char *));
            cr_assert(k->lines[table]);
        }
        k->lines[table][k->nlines[table]++] = b.buf;
    }
    return 0;
}

static int on_kernel(void *ctx, int64_t op_id, int64_t op_ts, int64_t op_end, int64_t dur)
{
    struct collect *k = ctx;
    cr_assert(op_id > 0 && op_end >= op_ts && dur >= 0);
    k->kernels++;
    return 0;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void collect_free(struct collect *k)
{
    size_t i;
    int t;
    for (i = 0; i < k->nstrs; i++)
        free(k->strs[i]);
    free(k->strs);
    for (t = 0; t < TT_ROWS_COUNT; t++) {
        for (i = 0; i < k->nlines[t]; i++)
            free(k->lines[t][i]);
        free(k->lines[t]);
    }
}

/*
 * the rows of path from the file and from a database it was ingested into;
 * disordered: the file's threads are out of start order, so the stream's
 * nesting is not final (compared without depth and parent_id)
 */
static void check_same_rows(const char *path, int want_gpu, int disordered)
{
    char dir[] = "/tmp/tt-dbrows-XXXXXX", dbp[64];
    struct collect f, d;
    tt__rowsink sf = { &f, on_rows, on_kernel, NULL, NULL, NULL };
    tt__rowsink sd = { &d, on_rows, on_kernel, NULL, NULL, NULL };
    tt__rows_result rf, rd;
    tt__db_trace *tr;
    size_t ntr, i;
    tt_db *db;
    int t;

    memset(&f, 0, sizeof(f));
    memset(&d, 0, sizeof(d));
    f.ascending = d.ascending = 1;
    f.no_nesting = d.no_nesting = disordered;
    cr_assert(mkdtemp(dir));
    snprintf(dbp, sizeof(dbp), "%s/t.db", dir);
    cr_assert_eq(tt__ingest_rows(path, &sf, 0, 0, &rf), 0, "%s", tt_error_last()->message);
    cr_assert(!rf.needs_db, "%s: %s", path, rf.why_db);
    cr_assert_eq(rf.disordered_threads > 0, disordered, "%s: %lld threads out of order", path,
                 (long long)rf.disordered_threads);
    cr_assert_eq(tt_db_open(&db, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt__db_traces(db, &tr, &ntr), 0);
    cr_assert_eq(ntr, 1);
    cr_assert_eq(tr[0].format, rf.format);
    cr_assert_eq(tr[0].have_rank, rf.have_rank);
    cr_assert_eq(tt__db_rows(db, tr[0].id, &sd, 0, &rd), 0, "%s", tt_error_last()->message);
    cr_assert(d.ascending, "string ids ascend");
    cr_assert_eq(rd.format, rf.format);
    cr_assert_eq(rd.have_rank, rf.have_rank);
    cr_assert_eq(rd.rank, rf.rank);
    cr_assert(rd.metadata && rd.metadata[0] == '{');
    cr_assert_gt(f.nlines[TT_ROWS_SLICE], 0, "%s has slices", path);
    if (want_gpu) {
        cr_assert_gt(f.nlines[TT_ROWS_GPU], 0, "%s has GPU activities", path);
        cr_assert_gt(d.kernels, 0, "kernels linked to their ops");
    }
    for (t = 0; t < TT_ROWS_COUNT; t++) {
        if (t == TT_ROWS_STR)
            continue;
        cr_assert_eq(f.nlines[t], d.nlines[t], "%s: table %d: %zu rows from the file, %zu stored",
                     path, t, f.nlines[t], d.nlines[t]);
        if (f.nlines[t]) {
            qsort(f.lines[t], f.nlines[t], sizeof(char *), cmp_line);
            qsort(d.lines[t], d.nlines[t], sizeof(char *), cmp_line);
        }
        for (i = 0; i < f.nlines[t]; i++)
            cr_assert_str_eq(f.lines[t][i], d.lines[t][i], "%s: table %d:\nfile %s\nstored %s", path, t, f.lines[t][i], d.lines[t][i]);
    }
    /* the stream calls kernel() only for kernels of the op it just linked;
     * the database for every linked one: never fewer */
    cr_assert_geq(d.kernels, f.kernels);
    tt__db_traces_free(tr, ntr);
    free(rf.metadata);
    free(rd.metadata);
    tt_db_free(db);
    unlink(dbp);
    rmdir(dir);
    collect_free(&f);
    collect_free(&d);
}

Test(db_rows, a_file_and_its_database_give_the_same_rows)
{
    check_same_rows(TT_TESTDATA "/kineto/simple_add_trace.json.gz", 1, 0);
    check_same_rows(TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", 1, 1);
    check_same_rows(TT_TESTDATA "/kineto/rank-70_large_integer.json.gz", 0, 0);
}

Test(db_rows, the_same_for_a_torch_compile_trace)
{
    /* its threads are written shortest first on a start tie: re-nested in the
     * stream (ig_retie), so its nesting is final and compared too */
    check_same_rows(shared_path("hta/trace_diff/test/test.json.gz"), 1, 0);
}

static int args_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                     const char *text)
{
    int64_t *n = ctx; /* [0] args cells with text, [1] slices */
    int r;
    (void)text;
    if (table != TT_ROWS_SLICE)
        return 0;
    for (r = 0; r < nrows; r++) {
        n[0] += cells[(size_t)r * (size_t)ncols + TT_C_SL_ARGS].type == TT_CELL_TEXT;
        n[1]++;
    }
    return 0;
}

Test(db_rows, no_args_leaves_the_args_out)
{
    char dir[] = "/tmp/tt-dbrows-XXXXXX", dbp[64];
    int64_t with[2] = { 0, 0 }, without[2] = { 0, 0 };
    tt__rowsink a = { with, args_rows, NULL, NULL, NULL, NULL };
    tt__rowsink b = { without, args_rows, NULL, NULL, NULL, NULL };
    tt_db *db;
    cr_assert(mkdtemp(dir));
    snprintf(dbp, sizeof(dbp), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", NULL,
                                NULL),
                 0);
    cr_assert_eq(tt__db_rows(db, 1, &a, 0, NULL), 0);
    cr_assert_eq(tt__db_rows(db, 1, &b, TT_ROWS_NO_ARGS, NULL), 0);
    cr_assert_gt(with[0], 0, "the stored slices have args");
    cr_assert_eq(without[0], 0, "TT_ROWS_NO_ARGS: none");
    cr_assert_eq(with[1], without[1], "the same slices");
    tt_db_free(db);
    unlink(dbp);
    rmdir(dir);
}

static int stop_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                     const char *text)
{
    (void)nrows, (void)ncols, (void)cells, (void)text;
    return table == TT_ROWS_SLICE ? ++*(int *)ctx : 0;
}

Test(db_rows, a_consumer_stops_it_and_an_unknown_trace_is_not_found)
{
    char dir[] = "/tmp/tt-dbrows-XXXXXX", dbp[64];
    tt__rowsink s = { NULL, stop_rows, NULL, NULL, NULL, NULL };
    tt__rows_result res;
    tt_db *db;
    int calls = 0;
    s.ctx = &calls;
    cr_assert(mkdtemp(dir));
    snprintf(dbp, sizeof(dbp), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, TT_TESTDATA "/kineto/resnet50_2021-06_trace.json.gz", NULL,
                                NULL),
                 0);
    cr_assert_eq(tt__db_rows(db, 1, &s, 0, &res), TT_ECANCELED);
    cr_assert_eq(calls, 1, "stopped at the first batch");
    cr_assert_null(res.metadata);
    cr_assert_eq(tt__db_rows(db, 99, &s, 0, &res), TT_ENOTFOUND);
    cr_assert(strstr(tt_error_last()->message, "no trace 99"));
    tt_db_free(db);
    unlink(dbp);
    rmdir(dir);
}
