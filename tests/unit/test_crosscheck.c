/*
 * tests/unit/test_crosscheck.c - tt_crosscheck_run on real ET/Kineto pairs and
 * on a hostile one (every op with the same rf_id), asserting on the result
 * structs. The expected numbers come from an independent Python computation:
 * tests/fixtures/crosscheck/expected.py (run it with the shared testdata
 * folder to print them).
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "tracetool/crosscheck.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static char dbpath[128];
static tt_db *db;
static tt_xcheck_result *res;

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tt_xcheck_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    db = NULL;
    res = NULL;
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
}

static void teardown(void)
{
    char cmd[160];
    tt_xcheck_result_free(res);
    tt_db_free(db);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(crosscheck, .init = setup, .fini = teardown, .timeout = 120);

static void ingest(const char *path)
{
    if (access(path, R_OK) != 0)
        cr_skip_test("%s not present", path);
    cr_assert_eq(tt_ingest_file(db, path, NULL, NULL), 0, "%s: %s", path,
                 tt_error_last()->message);
}

/* run with default options (no store) and return the only pair */
static const tt_xc_pair *run_one(void)
{
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    o.store = 0;
    cr_assert_eq(tt_crosscheck_run(db, &o, &res), 0, "%s", tt_error_last()->message);
    cr_assert_not_null(res);
    cr_assert_eq(res->npairs, 1);
    cr_assert_eq(res->summary.pairs, 1);
    cr_assert(res->pairs[0].paired);
    return &res->pairs[0];
}

static int64_t thread_ops(const tt_xc_pair *p)
{
    size_t i;
    int64_t n = 0;
    for (i = 0; i < p->nthreads; i++)
        n += p->threads[i].et_ops;
    return n;
}

/* expected.py: hta_simple_add {"duplicate_et": 0, "duplicate_kineto": 0,
 * "et_only": 0, "et_ops": 36, "key": "external_offset", "kineto_ops": 36,
 * "matched": 36, "name_mismatch": 0, "offset": 0, "rule_holds": 0}
 * (the bundled testdata copies of the HTA pair) */
Test(crosscheck, simple_add_external_id_equals_rf_id)
{
    const tt_xc_pair *p;
    ingest(TT_TESTDATA "/et/simple_add_et.json.gz");
    ingest(TT_TESTDATA "/kineto/simple_add_trace.json.gz");
    p = run_one();
    cr_expect_eq(p->et_ops, 36);
    cr_expect_eq(p->kineto_ops, 36);
    cr_expect_eq(p->key, TT_XC_JOIN_EXT_OFFSET);
    cr_expect_eq(p->offset, 0);
    cr_expect_eq(p->matched, 36);
    cr_expect_eq(p->et_only, 0);
    cr_expect_eq(p->kineto_only, 0);
    cr_expect_eq(p->name_mismatch, 0);
    cr_expect_eq(p->duplicate_et, 0);
    cr_expect_eq(p->duplicate_kineto, 0);
    cr_expect_eq(p->rule_applies, 0); /* no "Record function id" in this Kineto trace */
    cr_expect_eq(p->rule_holds, 0);
    cr_expect(p->consistent);
    cr_expect_eq(p->nthreads, 1);
    cr_expect_eq(thread_ops(p), 36);
    cr_expect_eq(res->summary.consistent, 1);
}

/* the same pair from the shared folder */
Test(crosscheck, hta_execution_trace_pair)
{
    const tt_xc_pair *p;
    ingest(TT_SHARED "/testdata/hta/execution_trace/benchmark_simple_add_et.json.gz");
    ingest(TT_SHARED "/testdata/hta/execution_trace/benchmark_simple_add_trace.json.gz");
    p = run_one();
    cr_expect_eq(p->et_ops, 36);
    cr_expect_eq(p->matched, 36);
    cr_expect_eq(p->key, TT_XC_JOIN_EXT_OFFSET);
    cr_expect_eq(p->offset, 0);
    cr_expect(p->consistent);
}

/* expected.py: resnet_pair {"duplicate_et": 0, "et_ops": 1310, "et_threads": 2,
 * "key": "external_order", "kineto_ops": 39506, "matched": 1310, "rule_holds": 0} */
Test(crosscheck, resnet_pair_per_thread_order)
{
    const tt_xc_pair *p;
    ingest(TT_SHARED "/testdata/param/resnet_pair/resnet_et.json.gz");
    ingest(TT_SHARED "/testdata/param/resnet_pair/resnet_kineto.json.gz");
    p = run_one();
    cr_expect_eq(p->et_ops, 1310);
    cr_expect_eq(p->kineto_ops, 39506);
    cr_expect_eq(p->key, TT_XC_JOIN_EXT_ORDER);
    cr_expect_eq(p->matched, 1310);
    cr_expect_eq(p->et_only, 0);
    cr_expect_eq(p->name_mismatch, 0);
    cr_expect_eq(p->duplicate_et, 0);
    cr_expect_eq(p->rule_holds, 0);
    cr_expect_eq(p->nthreads, 2);
    cr_expect_eq(thread_ops(p), 1310);
    cr_expect(p->has_constant);
}

/* expected.py: dlrm_rank1 {"duplicate_et": 0, "et_ops": 1672, "et_threads": 2,
 * "key": "external_order", "kineto_ops": 1673, "matched": 1672, "rule_holds": 0} */
Test(crosscheck, dlrm_rank1_per_thread_order)
{
    const tt_xc_pair *p;
    ingest(TT_SHARED "/testdata/param/dlrm_8rank/et/dlrm_eg_1.json.gz");
    ingest(TT_SHARED
           "/testdata/param/dlrm_8rank/kineto/worker1_step_12.1694128201556.pt.trace.json.gz");
    p = run_one();
    cr_expect_eq(p->et_ops, 1672);
    cr_expect_eq(p->kineto_ops, 1673);
    cr_expect_eq(p->key, TT_XC_JOIN_EXT_ORDER);
    cr_expect_eq(p->matched, 1672);
    cr_expect_eq(p->et_only, 0);
    cr_expect_eq(p->name_mismatch, 0);
    cr_expect_eq(p->nthreads, 2);
    cr_expect_eq(thread_ops(p), 1672);
}

/* The hostile case of bench/scale_crosscheck_rfid.py (shape rf) at N = 2000:
 * every ET op has rf_id 7 and every Kineto op "Record function id" 7, names
 * cycling over 6. expected.py: hostile_rf {"duplicate_et": 1999,
 * "duplicate_kineto": 1999, "et_only": 0, "et_ops": 2000, "key": "rf",
 * "kineto_ops": 2000, "matched": 2000, "name_mismatch": 0, "rule_holds": 1} */
Test(crosscheck, hostile_repeated_rf_id)
{
    static const char *const names[] = { "aten::add", "aten::mul", "aten::empty",
                                         "aten::copy_", "aten::relu", "aten::mm" };
    const int n = 2000;
    char pe[160], pk[160];
    FILE *f;
    int i;
    const tt_xc_pair *p;
    snprintf(pe, sizeof(pe), "%s/et.json", dir);
    snprintf(pk, sizeof(pk), "%s/kineto.json", dir);
    cr_assert_not_null(f = fopen(pe, "w"));
    fprintf(f, "{\"schema\": \"1.0.1\", \"pid\": 4242, \"time\": \"2024-01-01 00:00:00\","
               " \"start_ts\": 0, \"nodes\": [{\"name\": \"[pytorch|profiler|execution_trace|"
               "thread]\", \"id\": 1, \"rf_id\": 0, \"parent\": 0, \"seq_id\": -1, \"tid\": 1}");
    for (i = 0; i < n; i++)
        fprintf(f, ", {\"name\": \"%s\", \"id\": %d, \"rf_id\": 7, \"parent\": 1, \"seq_id\": -1,"
                   " \"tid\": 1, \"op_schema\": \"\", \"inputs\": [], \"input_shapes\": [],"
                   " \"input_types\": [], \"outputs\": [], \"output_shapes\": [],"
                   " \"output_types\": []}",
                names[i % 6], i + 2);
    fprintf(f, "]}\n");
    fclose(f);
    cr_assert_not_null(f = fopen(pk, "w"));
    fprintf(f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0}, \"traceEvents\": [");
    for (i = 0; i < n; i++)
        fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 4242,"
                   " \"tid\": 1001, \"ts\": %d, \"dur\": 1, \"args\": {\"External id\": 7,"
                   " \"Record function id\": 7}}",
                i ? ", " : "", names[i % 6], 1000 + 2 * i);
    fprintf(f, "]}\n");
    fclose(f);
    ingest(pe);
    ingest(pk);
    p = run_one();
    cr_expect_eq(p->et_ops, 2000);
    cr_expect_eq(p->kineto_ops, 2000);
    cr_expect_eq(p->key, TT_XC_JOIN_RF);
    cr_expect_eq(p->matched, 2000);
    cr_expect_eq(p->et_only, 0);
    cr_expect_eq(p->kineto_only, 0);
    cr_expect_eq(p->name_mismatch, 0);
    cr_expect_eq(p->duplicate_et, 1999);
    cr_expect_eq(p->duplicate_kineto, 1999);
    cr_expect(p->rule_applies);
    cr_expect(p->rule_holds);
    cr_expect(!p->consistent); /* duplicate ids */
    cr_expect_eq(p->nduplicates, 2); /* limit 5: one ET run, one Kineto run */
}

/* The report of files (read from their rows) is the report of a database
 * holding the same files in the same order (slice ids included), in every
 * format. */
static char *report_of(int from_files, const char *const *paths, size_t n, tt_output_format f)
{
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    tt_xc_summary sum;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    o.store = 0;
    o.format = f;
    o.key = TT_XC_KEY_EXTERNAL; /* offenders: Kineto-only ops named by slice id */
    if (from_files)
        cr_assert_geq(tt_crosscheck_files(paths, n, &o, out, &sum), 0, "%s",
                      tt_error_last()->message);
    else
        cr_assert_geq(tt_crosscheck_db(db, &o, out, &sum), 0, "%s", tt_error_last()->message);
    fclose(out);
    return buf;
}

Test(crosscheck, files_and_database_report_alike)
{
    /* a Kineto trace first: the second one's slice ids follow its ids */
    const char *paths[] = { TT_SHARED "/testdata/param/resnet_pair/resnet_kineto.json.gz",
                            TT_TESTDATA "/kineto/simple_add_trace.json.gz",
                            TT_TESTDATA "/et/simple_add_et.json.gz",
                            TT_SHARED "/testdata/param/resnet_pair/resnet_et.json.gz" };
    tt_output_format fmts[] = { TT_FORMAT_TABLE, TT_FORMAT_JSON, TT_FORMAT_CSV };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(paths); i++)
        ingest(paths[i]);
    for (i = 0; i < TT_ARRAY_SIZE(fmts); i++) {
        char *a = report_of(0, paths, TT_ARRAY_SIZE(paths), fmts[i]);
        char *b = report_of(1, paths, TT_ARRAY_SIZE(paths), fmts[i]);
        cr_expect(strlen(a) > 100 && strstr(a, "simple_add_et"), "format %zu: %s", i, a);
        cr_expect_str_eq(b, a, "format %zu", i);
        free(a);
        free(b);
    }
}
