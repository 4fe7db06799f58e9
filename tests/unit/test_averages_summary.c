/*
 * tests/unit/test_averages_summary.c - the averages section of a summary
 * (analyze/averages/averages_summary.c): written for stored traces and for
 * trace files, wrapped by hand in a struct tt_summary, read back with
 * tt_averages_summary_result, which must give what tt_averages_compute_db
 * gives on the database of the same traces: every field, doubles to the
 * bit, and every format printed to the same bytes.
 */
#include "common/compat.h"
#include "formats/sumfile.h"
#include "tracetool/analyze.h"
#include "tracetool/summary.h"

#include "shared_data.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tt_avgsum_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(avgsum, .init = setup, .fini = teardown, .timeout = 300);

/* ---- helpers ---- */

static tt_db *ingest(const char *const *paths, size_t n)
{
    char dbpath[128];
    tt_db *db = NULL;
    size_t i;
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
    for (i = 0; i < n; i++) {
        tt_ingest_options io = TT_INGEST_OPTIONS_INIT;
        tt_ingest_result ir;
        cr_assert_eq(tt_ingest_file(db, paths[i], &io, &ir), 0, "%s",
                     tt_error_last()->message);
    }
    return db;
}

/* one trace's section text (malloc'd), from src */
static char *section(const struct tt__sum_src *src, size_t *len)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    int rc;
    tt_jw_init(&w, &b, TT_JW_COMPACT);
    rc = tt__avg_sum_write(src, &w);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_jw_finish(&w), 0);
    cr_assert_not(b.oom);
    tt_buf_addch(&b, '\0');
    *len = b.len - 1;
    return b.buf;
}

/* a summary of the traces 1..n of db, their sections written from the database */
static tt_summary *summary_of_db(tt_db *db, size_t n)
{
    tt_summary *s = calloc(1, sizeof(*s));
    size_t i;
    cr_assert_not_null(s);
    s->path = strdup("hand.summary.json");
    s->traces = calloc(n, sizeof(*s->traces));
    s->n = n;
    for (i = 0; i < n; i++) {
        struct tt__sum_trace *t = &s->traces[i];
        struct tt__sum_src src = { db, (int64_t)i + 1, "stored" };
        tt_avg_options o = TT_AVG_OPTIONS_INIT;
        tt_avg_result *r = NULL;
        o.trace_id = (int64_t)i + 1;
        cr_assert_eq(tt_averages_compute_db(db, &o, &r), 0, "%s", tt_error_last()->message);
        t->id = (int64_t)i + 1;
        t->path = strdup(r->traces[0].path);
        t->content_hash = strdup("0");
        t->have_rank = r->traces[0].have_rank;
        t->rank = r->traces[0].rank;
        t->sec[TT__SEC_AVERAGES] = section(&src, &t->seclen[TT__SEC_AVERAGES]);
        t->secoff[TT__SEC_AVERAGES] = 100 * (int64_t)i;
        tt_avg_result_free(r);
    }
    return s;
}

static void summary_free(tt_summary *s)
{
    size_t i;
    int k;
    for (i = 0; i < s->n; i++) {
        free(s->traces[i].path);
        free(s->traces[i].content_hash);
        for (k = 0; k < TT__SEC_COUNT; k++)
            free(s->traces[i].sec[k]);
    }
    free(s->traces);
    free(s->path);
    free(s);
}

static int same_double(double a, double b)
{
    return !memcmp(&a, &b, sizeof(a));
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static void expect_same_trace(const tt_avg_trace *a, const tt_avg_trace *b)
{
    size_t i;
    cr_expect_eq(a->trace_id, b->trace_id);
    cr_expect_str_eq(a->path, b->path);
    cr_expect_eq(a->have_rank, b->have_rank);
    cr_expect_eq(a->rank, b->rank);
    cr_expect_eq(a->show_memory, b->show_memory);
    cr_expect(same_double(a->self_cpu_total_us, b->self_cpu_total_us), "self CPU total %.17g %.17g",
              a->self_cpu_total_us, b->self_cpu_total_us);
    cr_expect(same_double(a->self_device_total_us, b->self_device_total_us),
              "self device total %.17g %.17g", a->self_device_total_us, b->self_device_total_us);
    cr_assert_eq(a->nrows, b->nrows, "rows %zu vs %zu", a->nrows, b->nrows);
    for (i = 0; i < a->nrows; i++) {
        const tt_avg_row *x = &a->rows[i], *y = &b->rows[i];
        cr_expect_str_eq(x->name, y->name, "row %zu", i);
        cr_expect(same_str(x->input_shapes, y->input_shapes), "row %zu shapes %s %s", i,
                  x->input_shapes ? x->input_shapes : "(null)",
                  y->input_shapes ? y->input_shapes : "(null)");
        cr_expect(same_str(x->stack, y->stack), "row %zu stack", i);
        cr_expect_eq(x->device, y->device, "row %zu", i);
        cr_expect_eq(x->is_user_annotation, y->is_user_annotation, "row %zu", i);
        cr_expect_eq(x->has_parent, y->has_parent, "row %zu", i);
        cr_expect_eq(x->count, y->count, "row %zu", i);
        cr_expect(same_double(x->self_cpu_us, y->self_cpu_us), "row %zu self cpu", i);
        cr_expect(same_double(x->cpu_total_us, y->cpu_total_us), "row %zu cpu total", i);
        cr_expect(same_double(x->self_device_us, y->self_device_us), "row %zu self dev", i);
        cr_expect(same_double(x->device_total_us, y->device_total_us), "row %zu dev total", i);
        cr_expect_eq(x->cpu_mem, y->cpu_mem, "row %zu", i);
        cr_expect_eq(x->self_cpu_mem, y->self_cpu_mem, "row %zu", i);
        cr_expect_eq(x->device_mem, y->device_mem, "row %zu", i);
        cr_expect_eq(x->self_device_mem, y->self_device_mem, "row %zu", i);
    }
}

static char *printed(const tt_avg_result *r, const tt_avg_options *o, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    cr_assert_not_null(f);
    cr_assert_eq(tt_averages_print(r, o, f), 0, "%s", tt_error_last()->message);
    fclose(f);
    return text;
}

/* o on the database and on the summary: the same result, printed the same in every format */
static void expect_same(tt_db *db, const tt_summary *s, tt_avg_options o, size_t want_traces)
{
    static const tt_output_format fmts[] = { TT_FORMAT_TABLE, TT_FORMAT_CSV, TT_FORMAT_JSON,
                                             TT_FORMAT_MARKDOWN };
    tt_avg_result *a = NULL, *b = NULL;
    size_t i, la, lb;
    cr_assert_eq(tt_averages_compute_db(db, &o, &a), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_averages_summary_result(s, &o, &b), 0, "%s", tt_error_last()->message);
    cr_assert_eq(a->ntraces, want_traces);
    cr_assert_eq(b->ntraces, a->ntraces);
    cr_expect_eq(b->header_per_trace, a->header_per_trace);
    for (i = 0; i < a->ntraces; i++)
        expect_same_trace(&a->traces[i], &b->traces[i]);
    for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
        char *pa, *pb;
        o.format = fmts[i];
        pa = printed(a, &o, &la);
        pb = printed(b, &o, &lb);
        cr_expect(la == lb && !memcmp(pa, pb, la), "format %d prints differently", (int)fmts[i]);
        cr_expect_gt(la, 100);
        free(pa);
        free(pb);
    }
    tt_avg_result_free(a);
    tt_avg_result_free(b);
}

/* ---- tests ---- */

/* shapes and [memory] events: every grouping and sort, every format */
Test(avgsum, resnet_shapes_memory)
{
    const char *p = shared_path("kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz");
    tt_db *db = ingest(&p, 1);
    tt_summary *s = summary_of_db(db, 1);
    static const char *const keys[] = { NULL, "self_cpu_time_total", "cuda_time_total",
                                        "count", "self_cpu_memory_usage" };
    size_t k;
    for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        tt_avg_options o = TT_AVG_OPTIONS_INIT;
        o.sort_by = keys[k];
        expect_same(db, s, o, 1);
        o.group_by_shape = 1;
        expect_same(db, s, o, 1);
        o.top_level_only = 1;
        o.hide_gpu_annotations = 1;
        o.row_limit = 7;
        expect_same(db, s, o, 1);
    }
    {
        /* the memory columns are there, and shapes */
        tt_avg_options o = TT_AVG_OPTIONS_INIT;
        tt_avg_result *r = NULL;
        o.group_by_shape = 1;
        cr_assert_eq(tt_averages_summary_result(s, &o, &r), 0);
        cr_expect(r->traces[0].show_memory);
        cr_expect_gt(r->traces[0].nrows, 50);
        cr_expect_not_null(strstr(s->traces[0].sec[TT__SEC_AVERAGES], "[[")); /* shapes */
        tt_avg_result_free(r);
    }
    summary_free(s);
    tt_db_free(db);
}

/* the section of a trace file read on its own is the stored trace's */
Test(avgsum, file_section_equals_db_section)
{
    const char *p = shared_path("kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz");
    tt_db *db = ingest(&p, 1);
    struct tt__sum_src fs = { NULL, 0, p }, ds = { db, 1, p };
    size_t la, lb;
    char *a = section(&fs, &la), *b = section(&ds, &lb);
    cr_expect(la == lb && !memcmp(a, b, la), "file and database sections differ (%zu, %zu bytes)",
              la, lb);
    cr_expect_lt(la, 400000, "section of %zu bytes", la);
    free(a);
    free(b);
    tt_db_free(db);
}

/* several ranks: (rank, id) order, --rank, --trace, header_per_trace */
Test(avgsum, dlrm_ranks)
{
    char p[3][512];
    const char *pp[3];
    static const char *const f[3] = {
        "param/dlrm_8rank/kineto/worker3_step_12.1694128201557.pt.trace.json.gz",
        "param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json.gz",
        "param/dlrm_8rank/kineto/worker1_step_12.1694128201556.pt.trace.json.gz" };
    tt_db *db;
    tt_summary *s;
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    int k;
    for (k = 0; k < 3; k++) {
        snprintf(p[k], sizeof(p[k]), "%s", shared_path(f[k]));
        pp[k] = p[k];
    }
    db = ingest(pp, 3);
    s = summary_of_db(db, 3);
    expect_same(db, s, o, 3);
    o.group_by_shape = 1;
    o.sort_by = "self_cpu_time_total";
    expect_same(db, s, o, 3);
    o.rank = 1;
    expect_same(db, s, o, 1);
    o.rank = -1;
    o.trace_id = 1;
    expect_same(db, s, o, 1);
    o.header_per_trace = 1;
    expect_same(db, s, o, 1);
    o.trace_id = 0;
    o.rank = 5; /* no such rank: the database's error code */
    {
        tt_avg_result *r = NULL;
        cr_expect_eq(tt_averages_summary_result(s, &o, &r), TT_ENOTFOUND);
        cr_expect_null(r);
        cr_expect_not_null(strstr(tt_error_last()->message, "--trace/--rank"));
    }
    summary_free(s);
    tt_db_free(db);
}

/* what a summary cannot answer, named */
Test(avgsum, refusals)
{
    const char *p = shared_path("param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json.gz");
    tt_db *db = ingest(&p, 1);
    tt_summary *s = summary_of_db(db, 1);
    struct { const char *opt; tt_avg_options o; } c[6];
    tt_avg_result *r = NULL;
    size_t i;
    for (i = 0; i < 6; i++)
        c[i].o = (tt_avg_options)TT_AVG_OPTIONS_INIT;
    c[0].opt = "--steps", c[0].o.steps_set = 1, c[0].o.step_from = c[0].o.step_to = 12;
    c[1].opt = "--group-by-stack", c[1].o.group_by_stack = 3;
    c[2].opt = "--stacks", c[2].o.collect_stacks = 1;
    c[3].opt = "--name", c[3].o.filter.name = "aten";
    c[4].opt = "--under", c[4].o.filter.under = "ProfilerStep.*";
    c[5].opt = "--time-range", c[5].o.filter.from_ns = 5;
    for (i = 0; i < 6; i++) {
        cr_expect_eq(tt_averages_summary_result(s, &c[i].o, &r), TT_EUNSUPPORTED, "%s", c[i].opt);
        cr_expect_null(r);
        cr_expect_not_null(strstr(tt_error_last()->message, c[i].opt), "%s: %s", c[i].opt,
                           tt_error_last()->message);
    }
    c[0].o = (tt_avg_options)TT_AVG_OPTIONS_INIT;
    c[0].o.sort_by = "no_such_key";
    cr_expect_eq(tt_averages_summary_result(s, &c[0].o, &r), TT_EINVALID);
    summary_free(s);
    tt_db_free(db);
}

/* a damaged section: TT_EINVALID naming the summary and an offset in it */
Test(avgsum, damaged)
{
    static const char *const bad[] = {
        "{\"v\": 1, \"rank\": 0, \"show_memory\": 0}",
        "{\"v\": 9, \"by_name\": {\"rows\": []}, \"by_shape\": {\"rows\": []}}",
        "{\"v\": 1, \"by_name\": {\"self_cpu_total_us\": 1, \"self_device_total_us\": 0,"
        " \"rows\": [[\"a\", null, 0, 0, 0, 1, 1.5, 2, 0]]}, \"by_shape\": {\"rows\": []}}",
        "{\"v\": 1, \"by_name\": {\"rows\": [[\"a\", null, 0, 0, 0, \"x\", 1, 2, 0, 0, 0, 0, 0,"
        " 0]]}, \"by_shape\": {\"rows\": []}}",
        "[1, 2]",
    };
    static const int code[] = { TT_EINVALID, TT_EUNSUPPORTED, TT_EINVALID, TT_EINVALID,
                                TT_EINVALID };
    struct tt__sum_trace t;
    tt_summary s = { (char *)"bad.summary.json", &t, 1 };
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *r = NULL;
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&t, 0, sizeof(t));
        t.id = 1;
        t.path = (char *)"x.json";
        t.sec[TT__SEC_AVERAGES] = (char *)bad[i];
        t.seclen[TT__SEC_AVERAGES] = strlen(bad[i]);
        t.secoff[TT__SEC_AVERAGES] = 1000;
        cr_expect_eq(tt_averages_summary_result(&s, &o, &r), code[i], "case %zu: %s", i,
                     tt_error_last()->message);
        cr_expect_null(r);
        cr_expect_str_eq(tt_error_last()->source, "bad.summary.json", "case %zu", i);
        cr_expect_geq(tt_error_last()->offset, 1000, "case %zu: offset %lld", i,
                      (long long)tt_error_last()->offset);
    }
    /* a good one, with a row whose doubles need all 17 digits */
    {
        static const char good[] =
            "{\"v\": 1, \"rank\": null, \"show_memory\": 1, \"by_name\": {\"self_cpu_total_us\":"
            " 0.10000000000000001, \"self_device_total_us\": 3, \"rows\": [[\"a\", null, 1, 1,"
            " 1, 7, 0.10000000000000001, 1e-07, 2.5, 3, -4, 5, 6, 7]]}, \"by_shape\": {\"rows\":"
            " []}, \"future\": [1, {\"x\": 2}]}";
        memset(&t, 0, sizeof(t));
        t.id = 1;
        t.path = (char *)"x.json";
        t.sec[TT__SEC_AVERAGES] = (char *)good;
        t.seclen[TT__SEC_AVERAGES] = strlen(good);
        cr_assert_eq(tt_averages_summary_result(&s, &o, &r), 0, "%s", tt_error_last()->message);
        cr_assert_eq(r->ntraces, 1);
        cr_assert_eq(r->traces[0].nrows, 1);
        cr_expect(same_double(r->traces[0].rows[0].self_cpu_us, 0.1));
        cr_expect(same_double(r->traces[0].rows[0].cpu_total_us, 1e-7));
        cr_expect_eq(r->traces[0].rows[0].cpu_mem, -4);
        cr_expect_eq(r->traces[0].rows[0].self_device_mem, 7);
        cr_expect_eq(r->traces[0].rows[0].count, 7);
        cr_expect_eq(r->traces[0].rows[0].device, 1);
        cr_expect(r->traces[0].show_memory);
        cr_expect_not(r->traces[0].have_rank);
        tt_avg_result_free(r);
    }
}
