/*
 * tests/unit/test_ingest_jobs.c - tt_ingest_files (store/ingest_jobs.c):
 * files read ahead with ids of their own give the rows, ids and strings of
 * files ingested one after another; each file's result comes back in order;
 * a failing file leaves the others.
 */
#include "common/compat.h"
#include "store/db_internal.h"
#include "tracetool/store.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <unistd.h>

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tt_ingest_jobs_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(ingest_jobs, .init = setup, .fini = teardown, .timeout = 60);

/* a trace of k ops on one thread, each with a runtime call and a kernel;
 * names shared between files and names of its own */
static void write_trace(const char *path, int k, int n)
{
    FILE *f = fopen(path, "w");
    int i;
    cr_assert_not_null(f);
    fprintf(f, "{\"traceEvents\": [\n");
    for (i = 0; i < n; i++) {
        long ts = 1000L * i;
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%d\",\"pid\":1,\"tid\":1,"
                   "\"ts\":%ld,\"dur\":500,\"args\":{\"Input Dims\":[[%d]]}},\n",
                i % 7, ts, k);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                   "\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":10,\"args\":{\"correlation\":%d}},\n",
                ts + 100, i + 1);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kern_%d_%d\",\"pid\":0,\"tid\":7,"
                   "\"ts\":%ld,\"dur\":50,\"args\":{\"correlation\":%d,\"device\":0,"
                   "\"stream\":7}},\n",
                k, i % 3, ts + 200, i + 1);
    }
    fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"r%d\"}}\n"
               "]}\n", k);
    fclose(f);
}

/* every row of the tables that hold ids, as one string */
static char *dump(const char *dbpath)
{
    static const char *const q[] = {
        "SELECT group_concat(id || ':' || s, ',') FROM (SELECT * FROM strings ORDER BY id)",
        "SELECT group_concat(id || ':' || trace_id || ':' || name || ':' || ifnull(parent_id, '-')"
        " || ':' || ifnull(input_dims, '-'), ',') FROM (SELECT * FROM slices ORDER BY id)",
        "SELECT group_concat(id || ':' || trace_id || ':' || ifnull(op_id, '-'), ',')"
        " FROM (SELECT * FROM runtime ORDER BY id)",
        "SELECT group_concat(id || ':' || trace_id || ':' || name || ':' || ifnull(runtime_id, '-')"
        " || ':' || ifnull(op_id, '-'), ',') FROM (SELECT * FROM gpu_ops ORDER BY id)",
        "SELECT group_concat(id || ':' || path, ',') FROM (SELECT * FROM traces ORDER BY id)",
    };
    sqlite3 *s;
    size_t i, len = 0;
    char *out = NULL;
    cr_assert_eq(sqlite3_open(dbpath, &s), SQLITE_OK);
    for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        sqlite3_stmt *st;
        const char *t;
        cr_assert_eq(sqlite3_prepare_v2(s, q[i], -1, &st, NULL), SQLITE_OK, "%s", q[i]);
        cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
        t = (const char *)sqlite3_column_text(st, 0);
        t = t ? t : "";
        out = realloc(out, len + strlen(t) + 2);
        cr_assert_not_null(out);
        memcpy(out + len, t, strlen(t));
        len += strlen(t);
        out[len++] = '\n';
        out[len] = 0;
        sqlite3_finalize(st);
    }
    sqlite3_close(s);
    return out;
}

struct seen {
    size_t n, order[16];
    int rc[16];
    int64_t trace_id[16];
    char msg[16][600];
};

static void each(void *payload, size_t index, const char *path, int rc,
                 const tt_ingest_result *res)
{
    struct seen *s = payload;
    (void)path;
    if (s->n < 16) {
        s->order[s->n] = index;
        s->rc[s->n] = rc;
        s->trace_id[s->n] = res ? res->trace_id : 0;
        snprintf(s->msg[s->n], sizeof(s->msg[0]), "%s", rc < 0 ? tt_error_last()->source : "");
    }
    s->n++;
}

static char *ingest_all(const char *name, const char *const *paths, size_t n, int jobs,
                        struct seen *seen)
{
    char dbpath[128];
    tt_db *db = NULL;
    tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
    o.jobs = jobs;
    snprintf(dbpath, sizeof(dbpath), "%s/%s", dir, name);
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0);
    memset(seen, 0, sizeof(*seen));
    cr_assert_eq(tt_ingest_files(db, paths, n, &o, each, seen), 0);
    tt_db_free(db);
    return dump(dbpath);
}

Test(ingest_jobs, same_ids_as_one_after_another)
{
    char p[5][128];
    const char *paths[5];
    struct seen s1, s3;
    char *a, *b;
    size_t i;
    for (i = 0; i < 5; i++) {
        snprintf(p[i], sizeof(p[i]), "%s/r%zu.json", dir, i);
        write_trace(p[i], (int)i, 200 + 50 * (int)i);
        paths[i] = p[i];
    }
    a = ingest_all("one.db", paths, 5, 1, &s1);
    b = ingest_all("three.db", paths, 5, 3, &s3);
    cr_assert_str_eq(b, a);
    cr_assert_eq(s3.n, 5);
    for (i = 0; i < 5; i++) {
        cr_assert_eq(s3.order[i], i, "results in order");
        cr_assert_eq(s3.rc[i], 0);
        cr_assert_eq(s3.trace_id[i], (int64_t)i + 1);
    }
    free(a);
    free(b);
}

Test(ingest_jobs, a_failing_file_leaves_the_others)
{
    char p[4][128];
    const char *paths[4];
    struct seen s1, s2;
    char *a, *b;
    size_t i;
    for (i = 0; i < 4; i++) {
        snprintf(p[i], sizeof(p[i]), "%s/f%zu.json", dir, i);
        paths[i] = p[i];
    }
    write_trace(p[0], 0, 300);
    snprintf(p[1], sizeof(p[1]), "%s/missing.json", dir);
    write_trace(p[2], 2, 300);
    write_trace(p[3], 0, 300); /* the same content as the first */
    a = ingest_all("one.db", paths, 4, 1, &s1);
    b = ingest_all("two.db", paths, 4, 2, &s2);
    cr_assert_str_eq(b, a);
    cr_assert_eq(s2.n, 4);
    cr_assert_eq(s2.rc[0], 0);
    cr_assert_eq(s2.rc[1], s1.rc[1]);
    cr_assert_lt(s2.rc[1], 0);
    cr_assert(strstr(s2.msg[1], "missing.json") != NULL, "the error names the file: %s",
              s2.msg[1]);
    cr_assert_eq(s2.rc[2], 0);
    cr_assert_eq(s2.trace_id[2], 2, "the failed file took no trace id");
    cr_assert_eq(s2.rc[3], TT_EEXISTS);
    free(a);
    free(b);
}

Test(ingest_jobs, default_jobs_is_at_least_one)
{
    cr_assert_geq(tt_ingest_default_jobs(), 1);
}
