/*
 * tests/unit/test_ingest.c - tt_db_open + tt_ingest_file on small traces
 * written to temporary files, checked with SQL.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "tracetool/analyze.h"
#include "tracetool/formats.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];
static char dbpath[128];
static tt_db *db;

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tt_ingest_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    db = NULL;
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0, "%s",
                 tt_error_last()->message);
}

static void teardown(void)
{
    char cmd[160];
    tt_db_free(db);
    db = NULL;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(ingest, .init = setup, .fini = teardown, .timeout = 60);

/* ---- helpers ---- */

static char *write_file(const char *name, const void *data, size_t len)
{
    static char paths[8][160];
    static int next;
    char *p = paths[next++ % 8];
    FILE *f;
    snprintf(p, 160, "%s/%s", dir, name);
    f = fopen(p, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    return p;
}

static char *write_str(const char *name, const char *s)
{
    return write_file(name, s, strlen(s));
}

static sqlite3 *sql_open(void)
{
    sqlite3 *s = NULL;
    cr_assert_eq(sqlite3_open_v2(dbpath, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    return s;
}

/* first column of the first row as int64; NULL -> INT64_MIN; no row -> INT64_MAX */
static int64_t q_int(const char *fmt, ...) TT_PRINTF(1, 2);
static int64_t q_int(const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    sqlite3 *s = sql_open();
    sqlite3_stmt *st;
    int64_t v = INT64_MAX;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
                 sqlite3_errmsg(s));
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? INT64_MIN
                                                       : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(s);
    return v;
}
#define SQLNULL INT64_MIN
#define NOROW INT64_MAX

/* every row of a query as text: "a|b|c\n" per row ("NULL" for NULL) */
static char *q_text(const char *fmt, ...) TT_PRINTF(1, 2);
static char *q_text(const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    sqlite3 *s = sql_open();
    sqlite3_stmt *st;
    tt_buf b = TT_BUF_INIT;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
                 sqlite3_errmsg(s));
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i, n = sqlite3_column_count(st);
        for (i = 0; i < n; i++) {
            const unsigned char *t = sqlite3_column_text(st, i);
            if (i)
                tt_buf_addch(&b, '|');
            tt_buf_addstr(&b, t ? (const char *)t : "NULL");
        }
        tt_buf_addch(&b, '\n');
    }
    sqlite3_finalize(st);
    sqlite3_close(s);
    if (!b.alloc)
        return strdup("");
    return b.buf;
}

static void q_expect_at(int line, const char *want, const char *fmt, ...)
    TT_PRINTF(3, 4);
static void q_expect_at(int line, const char *want, const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    char *got;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    got = q_text("%s", sql);
    cr_assert_str_eq(got, want, "line %d: query: %s\n--- got:\n%s--- want:\n%s", line,
                     sql, got, want);
    free(got);
}
#define q_expect(...) q_expect_at(__LINE__, __VA_ARGS__)

/* the whole logical content of the database, to check "unchanged" */
static char *dump_db(void)
{
    sqlite3 *s = sql_open();
    sqlite3_stmt *st;
    tt_buf b = TT_BUF_INIT;
    char **tables = NULL;
    size_t n = 0, i;
    cr_assert_eq(sqlite3_prepare_v2(s,
                                    "SELECT name FROM sqlite_schema WHERE type = 'table'"
                                    " ORDER BY name",
                                    -1, &st, NULL),
                 SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        tables = realloc(tables, (n + 1) * sizeof(*tables));
        tables[n++] = strdup((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(s);
    for (i = 0; i < n; i++) {
        char *t = q_text("SELECT * FROM \"%s\" ORDER BY rowid", tables[i]);
        tt_buf_addf(&b, "== %s\n", tables[i]);
        tt_buf_addstr(&b, t);
        free(t);
        free(tables[i]);
    }
    free(tables);
    tt_buf_addf(&b, "user_version %lld\n", (long long)q_int("PRAGMA user_version"));
    return b.buf;
}

static int ingest(const char *path, unsigned flags, tt_ingest_result *res)
{
    tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
    tt_ingest_result local;
    o.flags = flags;
    return tt_ingest_file(db, path, &o, res ? res : &local);
}

static unsigned char *gzip_of(const void *data, size_t len, size_t *outlen)
{
    z_stream zs;
    size_t cap = compressBound((uLong)len) + 64;
    unsigned char *out = malloc(cap);
    memset(&zs, 0, sizeof(zs));
    cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *outlen = cap - zs.avail_out;
    deflateEnd(&zs);
    return out;
}

/* ---- the main Kineto trace ---- */

static const char kineto[] =
    "{\n"
    "  \"schemaVersion\": 1,\n"
    "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8},\n"
    "  \"deviceProperties\": [{\"id\": 0, \"name\": \"H100\"}],\n"
    "  \"traceEvents\": [\n"
    "  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 100, \"tid\": 0, \"args\": {\"name\": \"python\"}},\n"
    "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 100, \"tid\": 1, \"args\": {\"name\": \"main\"}},\n"
    "  {\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 0, \"tid\": 0, \"args\": {\"labels\": \"GPU 0\"}},\n"
    "  {\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": 0, \"tid\": 0, \"args\": {\"sort_index\": 5}},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 100, \"tid\": 1, \"ts\": 900, \"dur\": 800, \"args\": {\"External id\": 1}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 100, \"tid\": 1, \"ts\": 1000, \"dur\": 500,"
    " \"args\": {\"External id\": 2, \"Record function id\": 10, \"Sequence number\": 5, \"Fwd thread id\": 0, \"Ev Idx\": 1,"
    " \"Input Dims\": [[2, 3], [4, 3]], \"Input type\": [\"float\", \"float\"]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 100, \"tid\": 1, \"ts\": 1100, \"dur\": 300, \"args\": {\"External id\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"my_region\", \"pid\": 100, \"tid\": 1, \"ts\": 1150, \"dur\": 200, \"args\": {\"External id\": 4}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 100, \"tid\": 1, \"ts\": 1600, \"dur\": 50, \"args\": {\"External id\": 5}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 1, \"ts\": 1200, \"dur\": 50,"
    " \"args\": {\"cbid\": 211, \"correlation\": 77, \"External id\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 100, \"tid\": 1, \"ts\": 1610, \"dur\": 20,"
    " \"args\": {\"cbid\": 41, \"correlation\": 78, \"External id\": 5}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": 100, \"tid\": 1, \"ts\": 1750, \"dur\": 10,"
    " \"args\": {\"cbid\": 165, \"correlation\": 79}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"volta_sgemm\", \"pid\": 0, \"tid\": 7, \"ts\": 1300, \"dur\": 100,"
    " \"args\": {\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 77, \"External id\": 3,"
    " \"registers per thread\": 32, \"shared memory\": 1024, \"block\": [128, 1, 1]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 1640, \"dur\": 5,"
    " \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 78, \"External id\": 5, \"bytes\": 4096}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 8, \"ts\": 1660, \"dur\": 2,"
    " \"args\": {\"device\": 0, \"stream\": 8, \"correlation\": 80, \"bytes\": 64}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"my_region\", \"pid\": 0, \"tid\": 7, \"ts\": 1300, \"dur\": 100,"
    " \"args\": {\"External id\": 4}},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": 1, \"ts\": 1120,"
    " \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 140000000000000, \"Bytes\": 512,"
    " \"Total Allocated\": 1536, \"Total Reserved\": 2097152}},\n"
    "  {\"ph\": \"s\", \"id\": 77, \"pid\": 100, \"tid\": 1, \"ts\": 1200, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
    "  {\"ph\": \"f\", \"id\": 77, \"pid\": 0, \"tid\": 7, \"ts\": 1300, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
    "  {\"ph\": \"i\", \"s\": \"g\", \"name\": \"Iteration Start: PyTorch Profiler\", \"pid\": 100, \"tid\": 1, \"ts\": 900},\n"
    "  {\"ph\": \"C\", \"name\": \"mem\", \"pid\": 100, \"tid\": 1, \"ts\": 950, \"args\": {\"bytes\": 5}}\n"
    "  ],\n"
    "  \"traceName\": \"host_100.json\",\n"
    "  \"displayTimeUnit\": \"ms\",\n"
    "  \"baseTimeNanoseconds\": 1700000000000000000\n"
    "}\n";
#define KINETO_EVENTS 21

/* slice rows as "name|depth|parent name" in name order, for one tid */
#define SLICE_TREE(tid)                                                        \
    "SELECT n.s, s.depth, coalesce(pn.s, '-') FROM slices s"                   \
    " JOIN strings n ON n.id = s.name LEFT JOIN slices p ON p.id = s.parent_id" \
    " LEFT JOIN strings pn ON pn.id = p.name WHERE s.tid = " tid " ORDER BY n.s"

Test(ingest, schema_version_and_reopen)
{
    cr_assert_eq(q_int("PRAGMA user_version"), 2);
    cr_assert_eq(q_int("SELECT count(*) FROM traces"), 0);
    tt_db_free(db);
    db = NULL;
    cr_assert_eq(tt_db_open(&db, dbpath, 0), 0);
    cr_assert_eq(q_int("PRAGMA user_version"), 2);
    cr_assert_eq(tt_is_sqlite_file(dbpath), 1);
}

Test(ingest, kineto_rows_in_the_right_tables)
{
    tt_ingest_result res;
    char *path = write_str("trace.json", kineto);
    int rc = ingest(path, 0, &res);
    int64_t tid;
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    tid = res.trace_id;
    cr_assert_gt(tid, 0);
    cr_assert_eq(res.stats.events, KINETO_EVENTS);
    cr_assert_eq(res.stats.truncated, 0);
    cr_assert_eq(res.replaced_id, 0);

    /* traces */
    cr_assert_eq(q_int("SELECT count(*) FROM traces"), 1);
    cr_assert_eq(q_int("SELECT id FROM traces"), tid);
    q_expect("kineto-json|3|8|1700000000000000000|0|21|0|0\n",
             "SELECT format, rank, world_size, base_time_ns, gzip, events, truncated,"
             " bytes <> %zu FROM traces",
             strlen(kineto));
    q_expect("trace.json|1|host_100.json|ms|100\n",
             "SELECT file_name, schema_version, trace_name, display_time_unit, pid"
             " FROM traces");
    cr_assert_eq(q_int("SELECT start_ns FROM traces"), 900000);
    cr_assert_eq(q_int("SELECT end_ns FROM traces"), 1760000);
    cr_assert_eq(q_int("SELECT bytes FROM traces"), (int64_t)strlen(kineto));
    cr_assert_eq(q_int("SELECT length(content_hash) FROM traces"), 32);
    cr_assert_eq(q_int("SELECT json_valid(metadata) FROM traces"), 1);
    cr_assert_eq(q_int("SELECT json_extract(metadata, '$.distributedInfo.rank') FROM traces"),
                 3);
    cr_assert_eq(q_int("SELECT json_extract(metadata, '$.baseTimeNanoseconds') FROM traces"),
                 1700000000000000000LL);

    /* every row belongs to the trace */
    cr_assert_eq(q_int("SELECT count(*) FROM slices WHERE trace_id <> %lld", (long long)tid), 0);

    /* slices: cpu_op + user_annotation */
    q_expect("ProfilerStep#1|user_annotation|900000|800000\n"
             "aten::addmm|cpu_op|1100000|300000\n"
             "aten::linear|cpu_op|1000000|500000\n"
             "aten::relu|cpu_op|1600000|50000\n"
             "my_region|user_annotation|1150000|200000\n",
             "SELECT n.s, c.s, s.ts, s.dur FROM slices s JOIN strings n ON n.id = s.name"
             " JOIN strings c ON c.id = s.cat ORDER BY n.s");
    q_expect("X|100|1|2|10|5|0|1|[[2,3],[4,3]]|[\"float\",\"float\"]\n",
             "SELECT s.ph, s.pid, s.tid, s.external_id, s.rf_id, s.seq_nr, s.fwd_tid,"
             " s.ev_idx, d.s, t.s FROM slices s JOIN strings n ON n.id = s.name"
             " JOIN strings d ON d.id = s.input_dims JOIN strings t ON t.id = s.input_types"
             " WHERE n.s = 'aten::linear'");
    q_expect("ProfilerStep#1|0|-\n"
             "aten::addmm|2|aten::linear\n"
             "aten::linear|1|ProfilerStep#1\n"
             "aten::relu|1|ProfilerStep#1\n"
             "my_region|3|aten::addmm\n",
             SLICE_TREE("1"));

    /* runtime: op_id = innermost enclosing cpu_op, never the user_annotation */
    q_expect("cudaDeviceSynchronize|1750000|10000|79|NULL|165|-\n"
             "cudaLaunchKernel|1200000|50000|77|3|211|aten::addmm\n"
             "cudaMemcpyAsync|1610000|20000|78|5|41|aten::relu\n",
             "SELECT n.s, r.ts, r.dur, r.correlation, r.external_id, r.cbid,"
             " coalesce(o.s, '-') FROM runtime r JOIN strings n ON n.id = r.name"
             " LEFT JOIN slices s ON s.id = r.op_id LEFT JOIN strings o ON o.id = s.name"
             " ORDER BY n.s");
    cr_assert_eq(res.linked_runtime, 2);

    /* gpu_ops: kinds, links through correlation */
    q_expect("Memcpy HtoD (Pageable -> Device)|memcpy|0|7|78|cudaMemcpyAsync|aten::relu|4096\n"
             "Memset (Device)|memset|0|8|80|-|-|64\n"
             "my_region|annotation|0|7|NULL|-|my_region|NULL\n"
             "volta_sgemm|kernel|0|7|77|cudaLaunchKernel|aten::addmm|NULL\n",
             "SELECT n.s, g.kind, g.device, g.stream, g.correlation, coalesce(rn.s, '-'),"
             " coalesce(o.s, '-'), g.bytes FROM gpu_ops g"
             " JOIN strings n ON n.id = g.name LEFT JOIN runtime r ON r.id = g.runtime_id"
             " LEFT JOIN strings rn ON rn.id = r.name LEFT JOIN slices s ON s.id = g.op_id"
             " LEFT JOIN strings o ON o.id = s.name ORDER BY n.s");
    q_expect("HtoD\n", "SELECT copy_kind FROM gpu_ops WHERE kind = 'memcpy'");
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops WHERE kind IN ('kernel', 'annotation')"
                       " AND copy_kind IS NOT NULL"),
                 0);
    q_expect("1|32|1024|128|1|1\n",
             "SELECT context, registers, shared_mem, block_x, block_y, block_z FROM gpu_ops"
             " WHERE kind = 'kernel'");
    /* the annotation links to the CPU user_annotation with the same External id */
    cr_assert_eq(q_int("SELECT g.op_id = s.id FROM gpu_ops g, slices s JOIN strings c ON"
                       " c.id = s.cat WHERE g.kind = 'annotation' AND c.s = 'user_annotation'"
                       " AND s.external_id = 4"),
                 1);
    /* the runtime row of a linked GPU op is on the same correlation; op_id is the
     * runtime's op */
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"
                       " WHERE r.correlation = g.correlation AND g.op_id IS r.op_id"),
                 2);
    cr_assert_eq(res.linked_gpu, 2);

    /* memory */
    q_expect("i|100|1|1120000|1|0|140000000000000|512|1536|2097152\n",
             "SELECT ph, pid, tid, ts, device_type, device_id, addr, bytes,"
             " total_allocated, total_reserved FROM memory");
    /* flows: neither is next to its event (the kernel, linked as it came to
     * its runtime call written before it, is followed by other rows): two
     * rows, the same flows */
    q_expect("s|77|100|1|1200000|NULL\nf|77|0|7|1300000|e\n",
             "SELECT ph, flow_id, pid, tid, ts, bp FROM flows ORDER BY ts");
    q_expect("s\nf\n", "SELECT ph FROM flow_events ORDER BY ts");
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops WHERE flow IS NOT NULL"), 0);
    /* metadata events */
    q_expect("process_name|100|python|NULL\n"
             "thread_name|100|main|NULL\n"
             "process_labels|0|GPU 0|NULL\n"
             "process_sort_index|0|NULL|5\n",
             "SELECT n.s, m.pid, m.value, m.sort_index FROM metadata_events m"
             " JOIN strings n ON n.id = m.name ORDER BY m.id");
    /* instants: global instant + counter */
    q_expect("i|Iteration Start: PyTorch Profiler|900000|g\nC|mem|950000|NULL\n",
             "SELECT i.ph, n.s, i.ts, i.scope FROM instants i JOIN strings n ON"
             " n.id = i.name ORDER BY i.id");
    cr_assert_eq(q_int("SELECT count(*) FROM et_nodes"), 0);
    cr_assert_eq(q_int("SELECT count(*) FROM memory_timeline"), 0);
    /* no issue to report */
    cr_assert_eq(q_int("SELECT count(*) FROM import_issues"), 0);
    /* metadata: every top-level key except the event array */
    q_expect("baseTimeNanoseconds\ndeviceProperties\ndisplayTimeUnit\ndistributedInfo\n"
             "schemaVersion\ntraceName\n",
             "SELECT j.key FROM traces, json_each(traces.metadata) j ORDER BY j.key");
    cr_assert_eq(q_int("SELECT link_rule IS NOT NULL FROM traces"), 1);
    /* the pivot views */
    q_expect("0|NULL|GPU 0|5\n100|python|NULL|NULL\n",
             "SELECT pid, name, labels, sort_index FROM processes ORDER BY pid");
    q_expect("100|1|main\n", "SELECT pid, tid, name FROM threads");
    q_expect("flows|2\ngpu_ops|4\ninstants|2\nmemory|1\nmetadata_events|4\nruntime|3\n"
             "slices|5\n",
             "SELECT tbl, count(*) FROM events GROUP BY tbl ORDER BY tbl");
    /* every event stored once */
    cr_assert_eq(q_int("SELECT (SELECT count(*) FROM slices) + (SELECT count(*) FROM runtime)"
                       " + (SELECT count(*) FROM gpu_ops) + (SELECT count(*) FROM memory)"
                       " + (SELECT count(*) FROM flows) + (SELECT count(*) FROM instants)"
                       " + (SELECT count(*) FROM metadata_events)"),
                 KINETO_EVENTS);
}

Test(ingest, gpu_events_before_their_runtime_calls)
{
    /* kineto may write the GPU record before its runtime call: same links */
    static const char doc[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":30},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":5,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch1\",\"pid\":1,\"tid\":1,\"ts\":25,\"dur\":5,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":70,\"dur\":5,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch2\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":5,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch3\",\"pid\":1,\"tid\":1,\"ts\":80,\"dur\":5,\"args\":{\"correlation\":3}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k3\",\"pid\":0,\"tid\":7,\"ts\":90,\"dur\":5,\"args\":{\"correlation\":3}}"
        "]}";
    tt_ingest_result res;
    int rc = ingest(write_str("t.json", doc), 0, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("k1|launch1|inner\nk2|launch2|op\nk3|launch3|op\n",
             "SELECT n.s, coalesce(rn.s, '-'), coalesce(o.s, '-') FROM gpu_ops g"
             " JOIN strings n ON n.id = g.name LEFT JOIN runtime r ON r.id = g.runtime_id"
             " LEFT JOIN strings rn ON rn.id = r.name LEFT JOIN slices s ON s.id = g.op_id"
             " LEFT JOIN strings o ON o.id = s.name ORDER BY n.s");
    cr_assert_eq(res.linked_gpu, 3);
    cr_assert_eq(res.linked_runtime, 3);
}

Test(ingest, memset_copy_kind_and_sync)
{
    /* docs/SCHEMA.md: copy_kind is HtoD, DtoH, DtoD, PtoP, Device, ... */
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,"
        "\"tid\":7,\"ts\":1,\"dur\":1,\"args\":{\"bytes\":64}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\","
        "\"pid\":0,\"tid\":7,\"ts\":2,\"dur\":1,\"args\":{\"bytes\":8}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Sync\",\"pid\":0,"
        "\"tid\":7,\"ts\":3,\"dur\":1,\"args\":{\"correlation\":9}}]";
    int rc = ingest(write_str("ms.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("memset|Device|64\nmemcpy|DtoD|8\nsync|NULL|NULL\n",
             "SELECT kind, copy_kind, bytes FROM gpu_ops ORDER BY ts");
}

Test(ingest, gpu_grid_columns)
{
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1,"
        "\"args\":{\"grid\":[80,2,1],\"block\":[256,1,1]}}]";
    int rc = ingest(write_str("g.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("256|1|1\n", "SELECT block_x, block_y, block_z FROM gpu_ops");
    q_expect("80|2|1\n", "SELECT grid_x, grid_y, grid_z FROM gpu_ops");
}

/* ---- nesting ---- */

/* a tree of cpu_ops on one thread */
static const char *const tree_name[] = { "A", "B", "C", "D", "E", "F", "G", "H" };
static const int tree_dur[] = { 1000, 400, 100, 100, 300, 50, 10, 500 };
static const int tree_ts[] = { 0, 100, 110, 300, 600, 600, 700, 2000 };
static const char tree_want[] = "A|0|-\nB|1|A\nC|2|B\nD|2|B\nE|1|A\nF|2|E\nG|2|E\nH|0|-\n";

static void add_tree(tt_buf *b, int tid, const int *order, int base)
{
    int i;
    for (i = 0; i < 8; i++) {
        int k = order[i];
        tt_buf_addstr(b, b->buf[b->len - 1] == '[' ? "" : ",");
        tt_buf_addf(b,
                    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,"
                    "\"tid\":%d,\"ts\":%d,\"dur\":%d}",
                    tree_name[k], tid, base + tree_ts[k], tree_dur[k]);
    }
}

Test(ingest, nesting_in_order_and_out_of_order)
{
    static const int in_order[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    static const int reversed[] = { 7, 6, 5, 4, 3, 2, 1, 0 };
    static const int shuffled[] = { 3, 7, 0, 5, 2, 6, 1, 4 };
    tt_buf doc = TT_BUF_INIT;
    int rc;
    /* in order: no index by thread (nothing needs it) */
    tt_buf_addstr(&doc, "{\"traceEvents\":[");
    add_tree(&doc, 9, in_order, 10000);
    tt_buf_addstr(&doc, "]}");
    cr_assert_eq(ingest(write_file("n1.json", doc.buf, doc.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM sqlite_schema WHERE name = 'slices_thread'"), 0);
    q_expect(tree_want, SLICE_TREE("9"));
    tt_buf_reset(&doc);

    tt_buf_addstr(&doc, "{\"traceEvents\":[");
    add_tree(&doc, 1, in_order, 10000);
    add_tree(&doc, 2, reversed, 10000);
    add_tree(&doc, 3, shuffled, 50000);
    /* a runtime call inside C and one inside G, on the disordered threads */
    tt_buf_addstr(&doc, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r2\",\"pid\":1,"
                        "\"tid\":2,\"ts\":10150,\"dur\":10,\"args\":{\"correlation\":1}}");
    tt_buf_addstr(&doc, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r3\",\"pid\":1,"
                        "\"tid\":3,\"ts\":50702,\"dur\":5,\"args\":{\"correlation\":2}}");
    tt_buf_addstr(&doc, "]}");
    rc = ingest(write_file("n.json", doc.buf, doc.len), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    /* out of order: the ordered passes made the index they read by */
    cr_assert_eq(q_int("SELECT count(*) FROM sqlite_schema WHERE name = 'slices_thread'"), 1);
    q_expect(tree_want, SLICE_TREE("1"));
    q_expect(tree_want, SLICE_TREE("2"));
    q_expect(tree_want, SLICE_TREE("3"));
    q_expect("r2|C\nr3|G\n",
             "SELECT n.s, o.s FROM runtime r JOIN strings n ON n.id = r.name"
             " JOIN slices s ON s.id = r.op_id JOIN strings o ON o.id = s.name ORDER BY n.s");
    /* the parent is always on the same thread */
    cr_assert_eq(q_int("SELECT count(*) FROM slices s JOIN slices p ON p.id = s.parent_id"
                       " WHERE p.tid <> s.tid"),
                 0);
    tt_buf_release(&doc);
}

Test(ingest, begin_end_slices)
{
    static const char doc[] =
        "[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":0},"
        "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":10},"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":50},"
        "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":60}]";
    tt_ingest_result res;
    int rc = ingest(write_str("be.json", doc), 0, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("inner|B|10000|10000|1|outer\nouter|B|0|50000|0|-\n",
             "SELECT n.s, s.ph, s.ts, s.dur, s.depth, coalesce(pn.s, '-') FROM slices s"
             " JOIN strings n ON n.id = s.name LEFT JOIN slices p ON p.id = s.parent_id"
             " LEFT JOIN strings pn ON pn.id = p.name ORDER BY n.s");
    cr_assert_eq(res.unmatched_end, 1);
    cr_assert_eq(q_int("SELECT count(*) FROM instants WHERE ph = 'E'"), 1);
    cr_assert_eq(q_int("SELECT count FROM import_issues WHERE kind = 'unmatched_end'"), 1);
}

Test(ingest, begin_end_far_apart)
{
    /*
     * Rows go to the writer 128 at a time: an 'E' whose 'B' row is still
     * being filled patches it in place, one whose 'B' row is already queued
     * becomes an UPDATE after it. 300 slices between them force the second.
     */
    tt_buf doc = TT_BUF_INIT;
    int i;
    tt_buf_addstr(&doc, "[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":0},"
                        "{\"ph\":\"B\",\"name\":\"near\",\"pid\":1,\"tid\":2,\"ts\":1},"
                        "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":4}");
    for (i = 0; i < 300; i++)
        tt_buf_addf(&doc, ",{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":%d,"
                          "\"dur\":2}", 10 + 3 * i);
    tt_buf_addstr(&doc, ",{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":1000}]");
    cr_assert_eq(ingest(write_file("far.json", doc.buf, doc.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    q_expect("near|B|1000|3000|0\nouter|B|0|1000000|0\n",
             "SELECT n.s, s.ph, s.ts, s.dur, s.depth FROM slices s JOIN strings n"
             " ON n.id = s.name WHERE s.ph = 'B' ORDER BY n.s");
    cr_assert_eq(q_int("SELECT count(*) FROM slices s JOIN slices p ON p.id = s.parent_id"
                       " JOIN strings n ON n.id = p.name WHERE n.s = 'outer'"),
                 300);
    tt_buf_release(&doc);
}

Test(ingest, write_failure_stops_the_reader_db_unchanged)
{
    /*
     * The database fills up while the worker is still reading: the write's
     * error comes back (not the worker's "stopped"), the worker stops, and
     * the transaction is rolled back.
     */
    tt_buf doc = TT_BUF_INIT;
    char *before, *after, sql[96];
    int i, rc;
    cr_assert_eq(ingest(write_str("small.json",
                                  "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
                                  "\"ts\":1,\"dur\":1}]"),
                        0, NULL),
                 0);
    before = dump_db();
    tt_buf_addch(&doc, '[');
    for (i = 0; i < 200000; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,"
                          "\"tid\":1,\"ts\":%d,\"dur\":1,\"args\":{\"External id\":%d}}",
                    i ? "," : "", i % 5000, 10 * i, i);
    tt_buf_addch(&doc, ']');
    snprintf(sql, sizeof(sql), "PRAGMA max_page_count=%lld",
             (long long)q_int("PRAGMA page_count") + 4);
    cr_assert_eq(tt_db_exec(db, sql), 0);
    rc = ingest(write_file("big.json", doc.buf, doc.len), 0, NULL);
    cr_assert_lt(rc, 0);
    cr_assert_neq(rc, TT_ECANCELED);
    cr_assert(strstr(tt_error_last()->message, "full") != NULL, "message: %s",
              tt_error_last()->message);
    cr_assert_str_eq(tt_error_last()->source, dbpath); /* the database is what failed */
    after = dump_db();
    cr_assert_str_eq(after, before);
    free(before);
    free(after);
    tt_buf_release(&doc);
}

/* ---- runtime calls stored before the op that encloses them ---- */

Test(ingest, runtime_before_enclosing_op_single_thread)
{
    /* ts-sorted order with the file's first event a runtime call: the op
     * that encloses the second call arrives after the first call */
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r0\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":2,"
        "\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r1\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":5,"
        "\"args\":{\"correlation\":2}}]";
    int rc = ingest(write_str("rt.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("r0|-\nr1|A\n",
             "SELECT n.s, coalesce(o.s, '-') FROM runtime r JOIN strings n ON n.id = r.name"
             " LEFT JOIN slices s ON s.id = r.op_id LEFT JOIN strings o ON o.id = s.name"
             " ORDER BY n.s");
}

Test(ingest, runtime_before_enclosing_op_in_file)
{
    /* the only runtime call is written before its enclosing op */
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r1\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":5,"
        "\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100}]";
    int rc = ingest(write_str("rt2.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("r1|A\n",
             "SELECT n.s, coalesce(o.s, '-') FROM runtime r JOIN strings n ON n.id = r.name"
             " LEFT JOIN slices s ON s.id = r.op_id LEFT JOIN strings o ON o.id = s.name"
             " ORDER BY n.s");
}

Test(ingest, runtime_interleaved_ts_sorted)
{
    /* ops and calls interleaved by time on one thread (cpu_op known first) */
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r1\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"pid\":1,\"tid\":1,\"ts\":150,\"dur\":30},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r2\",\"pid\":1,\"tid\":1,\"ts\":160,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r3\",\"pid\":1,\"tid\":1,\"ts\":190,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":300,\"dur\":30},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r4\",\"pid\":1,\"tid\":1,\"ts\":310,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"r5\",\"pid\":1,\"tid\":1,\"ts\":400,\"dur\":5}]";
    int rc = ingest(write_str("rt3.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("r1|A\nr2|B\nr3|A\nr4|C\nr5|-\n",
             "SELECT n.s, coalesce(o.s, '-') FROM runtime r JOIN strings n ON n.id = r.name"
             " LEFT JOIN slices s ON s.id = r.op_id LEFT JOIN strings o ON o.id = s.name"
             " ORDER BY n.s");
}

/* ---- duplicates, replace ---- */

Test(ingest, duplicate_refused_db_unchanged)
{
    tt_ingest_result res;
    char *p1 = write_str("a.json", kineto);
    char *p2 = write_str("copy_of_a.json", kineto);
    char *before, *after;
    size_t glen;
    unsigned char *gz;
    char *p3;
    int rc = ingest(p1, 0, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    before = dump_db();

    rc = ingest(p1, 0, &res);
    cr_assert_eq(rc, TT_EEXISTS, "rc %d", rc);
    cr_assert_eq(tt_error_last()->code, TT_EEXISTS);
    cr_assert_eq(res.trace_id, 0);
    after = dump_db();
    cr_assert_str_eq(after, before, "database changed by a refused duplicate");
    free(after);

    /* same content under another name */
    rc = ingest(p2, 0, &res);
    cr_assert_eq(rc, TT_EEXISTS, "rc %d", rc);
    after = dump_db();
    cr_assert_str_eq(after, before);
    free(after);

    /* same content gzipped: the hash is over the decompressed bytes */
    gz = gzip_of(kineto, strlen(kineto), &glen);
    p3 = write_file("a.json.gz", gz, glen);
    free(gz);
    rc = ingest(p3, 0, &res);
    cr_assert_eq(rc, TT_EEXISTS, "rc %d", rc);
    after = dump_db();
    cr_assert_str_eq(after, before);
    free(after);
    free(before);
}

Test(ingest, replace_replaces)
{
    tt_ingest_result r1, r2;
    char *p = write_str("a.json", kineto);
    int64_t slices, runtime, gpu;
    cr_assert_eq(ingest(p, 0, &r1), 0);
    slices = q_int("SELECT count(*) FROM slices");
    runtime = q_int("SELECT count(*) FROM runtime");
    gpu = q_int("SELECT count(*) FROM gpu_ops");
    cr_assert_eq(ingest(p, TT_INGEST_REPLACE, &r2), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r2.replaced_id, r1.trace_id);
    cr_assert_neq(r2.trace_id, r1.trace_id);
    cr_assert_eq(q_int("SELECT count(*) FROM traces"), 1);
    cr_assert_eq(q_int("SELECT id FROM traces"), r2.trace_id);
    cr_assert_eq(q_int("SELECT count(*) FROM slices"), slices);
    cr_assert_eq(q_int("SELECT count(*) FROM runtime"), runtime);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops"), gpu);
    cr_assert_eq(q_int("SELECT count(*) FROM slices WHERE trace_id <> %lld",
                       (long long)r2.trace_id),
                 0);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops WHERE trace_id <> %lld",
                       (long long)r2.trace_id),
                 0);
    cr_assert_eq(q_int("SELECT count(*) FROM metadata_events WHERE trace_id <> %lld",
                       (long long)r2.trace_id),
                 0);
    /* links still resolve inside the new trace */
    cr_assert_eq(q_int("SELECT count(*) FROM runtime r JOIN slices s ON s.id = r.op_id"
                       " WHERE s.trace_id = r.trace_id"),
                 2);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"),
                 2);
}

Test(ingest, two_different_traces_coexist)
{
    tt_ingest_result r1, r2;
    static const char other[] =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":5,\"tid\":5,"
        "\"ts\":1,\"dur\":1}]";
    cr_assert_eq(ingest(write_str("a.json", kineto), 0, &r1), 0);
    cr_assert_eq(ingest(write_str("b.json", other), 0, &r2), 0, "%s",
                 tt_error_last()->message);
    cr_assert_neq(r1.trace_id, r2.trace_id);
    cr_assert_eq(q_int("SELECT count(*) FROM traces"), 2);
    cr_assert_eq(q_int("SELECT count(*) FROM slices WHERE trace_id = %lld",
                       (long long)r2.trace_id),
                 1);
    /* names are shared through the strings table, not duplicated */
    cr_assert_eq(q_int("SELECT count(*) FROM strings WHERE s = 'aten::linear'"), 1);
    q_expect("chrome-array\n", "SELECT format FROM traces WHERE id = %lld",
             (long long)r2.trace_id);
    cr_assert_eq(q_int("SELECT rank FROM traces WHERE id = %lld", (long long)r2.trace_id),
                 SQLNULL);
}

/* ---- truncated files ---- */

Test(ingest, truncated_refused_then_salvaged)
{
    tt_ingest_result res;
    char *before, *after;
    const char *cut_at = strstr(kineto, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\"");
    size_t cut = (size_t)(cut_at - kineto) + 40;
    char *full = write_str("full.json", "[{\"ph\":\"X\",\"name\":\"x\",\"ts\":1}]");
    char *p = write_file("cut.json", kineto, cut);
    int rc;
    cr_assert_eq(ingest(full, 0, NULL), 0);
    before = dump_db();

    rc = ingest(p, 0, &res);
    cr_assert_eq(rc, TT_ETRUNCATED, "rc %d", rc);
    cr_assert_eq(tt_error_last()->code, TT_ETRUNCATED);
    cr_assert_eq(res.stats.truncated, 1);
    after = dump_db();
    cr_assert_str_eq(after, before, "database changed by a refused truncated file");
    free(after);

    rc = ingest(p, TT_INGEST_SALVAGE, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(res.stats.truncated, 1);
    /* 4 M + 5 slices + 1 runtime before the cut */
    cr_assert_eq(res.stats.events, 10);
    q_expect("1|10|3\n", "SELECT truncated, events, rank FROM traces WHERE id = %lld",
             (long long)res.trace_id);
    cr_assert_eq(q_int("SELECT count(*) FROM slices WHERE trace_id = %lld",
                       (long long)res.trace_id),
                 5);
    cr_assert_eq(q_int("SELECT count(*) FROM runtime WHERE trace_id = %lld",
                       (long long)res.trace_id),
                 1);
    cr_assert_eq(q_int("SELECT count FROM import_issues WHERE kind = 'truncated' AND"
                       " trace_id = %lld",
                       (long long)res.trace_id),
                 1);
    cr_assert_eq(q_int("SELECT traces.truncated FROM traces WHERE file_name = 'full.json'"), 0);
    free(before);
}

Test(ingest, truncated_gzip_refused)
{
    tt_buf doc = TT_BUF_INIT;
    size_t glen, i;
    unsigned char *gz;
    char *before, *after;
    int rc;
    tt_ingest_result res;
    tt_buf_addstr(&doc, "{\"traceEvents\":[");
    for (i = 0; i < 3000; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%zu\",\"pid\":1,"
                          "\"tid\":1,\"ts\":%zu,\"dur\":1}",
                    i ? "," : "", i * 7919 % 10007, i * 10);
    tt_buf_addstr(&doc, "]}");
    gz = gzip_of(doc.buf, doc.len, &glen);
    before = dump_db();
    rc = ingest(write_file("cut.json.gz", gz, glen / 2), 0, &res);
    cr_assert_eq(rc, TT_ETRUNCATED, "rc %d: %s", rc, tt_error_last()->message);
    after = dump_db();
    cr_assert_str_eq(after, before);
    free(after);
    rc = ingest(write_file("cut2.json.gz", gz, glen / 2), TT_INGEST_SALVAGE, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(q_int("SELECT truncated FROM traces"), 1);
    cr_assert_eq(q_int("SELECT gzip FROM traces"), 1);
    cr_assert_eq(q_int("SELECT count(*) FROM slices"), res.stats.events);
    cr_assert_gt(res.stats.events, 0);
    cr_assert_lt(res.stats.events, 3000);
    free(before);
    free(gz);
    tt_buf_release(&doc);
}

Test(ingest, invalid_files_leave_db_unchanged)
{
    char *before = dump_db(), *after;
    cr_assert_eq(ingest(write_str("e.json", ""), 0, NULL), TT_EEMPTY);
    cr_assert_eq(ingest(write_str("h.json", "hello"), 0, NULL), TT_EUNSUPPORTED);
    cr_assert_eq(ingest(write_str("o.json", "{}"), 0, NULL), TT_EUNSUPPORTED);
    cr_assert_eq(ingest(write_str("s.json", "[{\"ph\":\"X\"},{\"ph\":}]"), 0, NULL),
                 TT_EINVALID);
    {
        char missing[200];
        snprintf(missing, sizeof(missing), "%s/nope.json", dir);
        cr_assert_eq(ingest(missing, 0, NULL), TT_ENOTFOUND);
    }
    after = dump_db();
    cr_assert_str_eq(after, before);
    free(before);
    free(after);
}

/* ---- rank ---- */

Test(ingest, rank_from_file_name)
{
    static const char doc[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
        "\"ts\":1,\"dur\":1}]}";
    static const char doc2[] =
        "{\"distributedInfo\":{\"rank\":2},\"traceEvents\":[{\"ph\":\"X\",\"name\":\"b\","
        "\"ts\":1}]}";
    tt_ingest_result res;
    cr_assert_eq(ingest(write_str("rank-7.json", doc), 0, &res), 0);
    cr_assert_eq(q_int("SELECT rank FROM traces WHERE id = %lld", (long long)res.trace_id), 7);
    /* distributedInfo wins over the file name */
    cr_assert_eq(ingest(write_str("rank-9.json", doc2), 0, &res), 0);
    cr_assert_eq(q_int("SELECT rank FROM traces WHERE id = %lld", (long long)res.trace_id), 2);
}

Test(ingest, rank_from_name_patterns)
{
    static const struct {
        const char *path;
        int found;
        int64_t rank;
    } cases[] = {
        { "rank-70_large_integer.json.gz", 1, 70 },
        { "/x/y/rank_3.json", 1, 3 },
        { "trace_rank3.pt.trace.json", 1, 3 },
        { "worker5_host.1234.json", 1, 5 },
        { "/runs/rank-9/trace.json", 0, 0 }, /* only the last component */
        { "ranking.json", 0, 0 },
        { "trace.json", 0, 0 },
    };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(cases); i++) {
        int64_t r = -1;
        int got = tt_rank_from_name(cases[i].path, &r);
        cr_assert_eq(got, cases[i].found, "%s", cases[i].path);
        if (got)
            cr_assert_eq(r, cases[i].rank, "%s: %lld", cases[i].path, (long long)r);
    }
}

/* ---- Execution Trace and memory timeline ---- */

Test(ingest, et_nodes)
{
    static const char doc[] =
        "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 788625, \"nodes\": ["
        "{\"id\": 2, \"name\": \"[pytorch|profiler|execution_trace|thread]\", \"ctrl_deps\": 1,"
        " \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []},"
        " \"outputs\": {\"values\": [], \"shapes\": [], \"types\": []},"
        " \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 0},"
        " {\"name\": \"tid\", \"type\": \"uint64\", \"value\": 1}]},"
        "{\"id\": 5, \"name\": \"aten::empty\", \"parent\": 2, \"rf_id\": 3, \"fw_parent\": 0,"
        " \"seq_id\": -1, \"scope\": 0, \"tid\": 1, \"fw_tid\": 0,"
        " \"op_schema\": \"aten::empty() -> Tensor\", \"inputs\": [[256,256],6],"
        " \"input_shapes\": [[[],[]],[]], \"input_types\": [\"GenericList[Int,Int]\",\"Int\"],"
        " \"outputs\": [[6,7]], \"output_shapes\": [[256,256]], \"output_types\": [\"Tensor(float)\"],"
        " \"extra_key\": 1}"
        "], \"finish_ts\": 5}";
    tt_ingest_result res;
    int rc = ingest(write_str("et.json", doc), 0, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("execution-trace|1.0.2-chakra.0.0.4|788625|2\n",
             "SELECT format, schema_version, pid, events FROM traces");
    q_expect("2|[pytorch|profiler|execution_trace|thread]|1|0|NULL|1|NULL|[]|[]|[]\n"
             "5|aten::empty|2|3|0|1|aten::empty() -> Tensor|[[256,256],6]|[[[],[]],[]]|"
             "[\"GenericList[Int,Int]\",\"Int\"]\n",
             "SELECT e.node_id, n.s, e.parent, e.rf_id, e.fw_parent, e.tid, o.s, e.inputs,"
             " e.input_shapes, e.input_types FROM et_nodes e JOIN strings n ON n.id = e.name"
             " LEFT JOIN strings o ON o.id = e.op_schema ORDER BY e.node_id");
    q_expect("[[6,7]]|[[256,256]]|[\"Tensor(float)\"]|{\"extra_key\":1}\n",
             "SELECT outputs, output_shapes, output_types, extra FROM et_nodes"
             " WHERE node_id = 5");
    cr_assert_eq(q_int("SELECT count(*) FROM slices"), 0);
}

Test(ingest, et_real_file)
{
    const char *path = TT_TESTDATA "/et/simple_add_et.json.gz";
    int rc;
    if (access(path, R_OK) != 0)
        cr_skip_test("%s not present", path);
    rc = ingest(path, 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM et_nodes"), 38);
    q_expect("3|4\n", "SELECT e.rf_id, e.parent FROM et_nodes e JOIN strings n ON"
                      " n.id = e.name WHERE n.s = 'aten::empty' AND e.node_id = 5");
    cr_assert_eq(q_int("SELECT gzip FROM traces"), 1);
}

Test(ingest, memory_timeline)
{
    static const char doc[] = "[[1000, 1, 512, 3], [2000, 3, 512, null], [1500, 0, 64, 2]]";
    int rc = ingest(write_str("mem.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("1000|1|512|3\n2000|3|512|NULL\n1500|0|64|2\n",
             "SELECT ts, action, bytes, category FROM memory_timeline ORDER BY id");
    q_expect("memory-timeline-raw|3|1000|2000\n",
             "SELECT format, events, start_ns, end_ns FROM traces");
}

Test(ingest, readonly_db_refuses)
{
    tt_db *ro = NULL;
    int rc;
    cr_assert_eq(tt_db_open(&ro, dbpath, TT_DB_READONLY), 0);
    rc = tt_ingest_file(ro, write_str("x.json", kineto), NULL, NULL);
    cr_assert_lt(rc, 0);
    tt_db_free(ro);
    cr_assert_eq(q_int("SELECT count(*) FROM traces"), 0);
}

Test(ingest, not_a_tracetool_db)
{
    sqlite3 *s;
    char other[200];
    tt_db *d = NULL;
    snprintf(other, sizeof(other), "%s/other.db", dir);
    cr_assert_eq(sqlite3_open(other, &s), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(s, "CREATE TABLE x(a)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    cr_assert_eq(tt_db_open(&d, other, TT_DB_CREATE), TT_EINVALID);
    cr_assert_null(d);
}

/* ---- many GPU activities away from their runtime calls ---- */

Test(ingest, many_gpu_ops_link_by_correlation)
{
    /* 6000 launches: kernels written K events ahead of their runtime call
     * (in-stream matching with a busy pending table), then a block of
     * kernels whose calls come much later (more than the pending window) */
    enum { N = 6000, K = 37 };
    tt_buf doc = TT_BUF_INIT;
    int i, rc;
    int *corr = malloc(N * sizeof(int));
    tt_ingest_result res;
    for (i = 0; i < N; i++)
        corr[i] = (int)(((long long)i * 7919 + 13) % 1000003) * 64; /* distinct, spread */
    tt_buf_addstr(&doc, "{\"traceEvents\":[");
    /* one op per 10 launches on tid 1: op j covers ts [j*1000, j*1000+990] */
    for (i = 0; i < N / 10; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,"
                          "\"tid\":1,\"ts\":%d,\"dur\":990}",
                    i ? "," : "", i, i * 1000);
    for (i = 0; i < N + K; i++) {
        if (i < N / 2)
            tt_buf_addf(&doc, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                              "\"tid\":7,\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%d}}",
                        i * 100 + 50, corr[i]);
        if (i >= K && i - K < N)
            tt_buf_addf(&doc, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch\","
                              "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5,"
                              "\"args\":{\"correlation\":%d}}",
                        (i - K) * 100 + 10, corr[i - K]);
    }
    /* the second half of the kernels, after every runtime call */
    for (i = N / 2; i < N; i++)
        tt_buf_addf(&doc, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                          "\"tid\":7,\"ts\":%d,\"dur\":1,\"args\":{\"correlation\":%d}}",
                    i * 100 + 50, corr[i]);
    tt_buf_addstr(&doc, "]}");
    rc = ingest(write_file("many.json", doc.buf, doc.len), 0, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops"), N);
    cr_assert_eq(q_int("SELECT count(*) FROM runtime"), N);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops WHERE runtime_id IS NULL"), 0);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"
                       " WHERE r.correlation <> g.correlation"),
                 0);
    /* launch i is at ts i*100+10, inside op (i/10) */
    cr_assert_eq(q_int("SELECT count(*) FROM runtime r JOIN slices s ON s.id = r.op_id"
                       " JOIN strings n ON n.id = s.name"
                       " WHERE n.s = 'op' || (r.ts / 1000000)"),
                 N);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"
                       " WHERE g.op_id IS NOT r.op_id OR g.op_id IS NULL"),
                 0);
    /* kernel i (ts i*100+50) belongs to launch i (ts i*100+10) */
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"
                       " WHERE g.ts - r.ts <> 40000"),
                 0);
    cr_assert_eq(res.linked_gpu, N);
    cr_assert_eq(res.linked_runtime, N);
    free(corr);
    tt_buf_release(&doc);
}

Test(ingest, runtime_calls_out_of_order)
{
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"A1\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":20},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":400,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"rc\",\"pid\":1,\"tid\":1,\"ts\":450,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"ra1\",\"pid\":1,\"tid\":1,\"ts\":15,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"rb\",\"pid\":1,\"tid\":1,\"ts\":250,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"ra\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"rx\",\"pid\":1,\"tid\":1,\"ts\":350,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"ry\",\"pid\":1,\"tid\":2,\"ts\":15,\"dur\":5}]";
    int rc = ingest(write_str("ooo.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("ra|A\nra1|A1\nrb|B\nrc|C\nrx|-\nry|-\n",
             "SELECT n.s, coalesce(o.s, '-') FROM runtime r JOIN strings n ON n.id = r.name"
             " LEFT JOIN slices s ON s.id = r.op_id LEFT JOIN strings o ON o.id = s.name"
             " ORDER BY n.s");
}

Test(ingest, runtime_walk_over_many_ops)
{
    /*
     * 5000 op pairs per thread: more ops than one spool block holds, so the
     * walk reads blocks back from the temporary file. Each pair is a parent
     * P and a child C starting at the same time (the tie rule: longest
     * first), all under one long op L. The calls come in two chunks, the
     * second earlier than the first (a re-seek). Thread 1 has its ops in
     * start order (linked in the stream), thread 2 in reverse (relinked by
     * the ordered pass); both must give the same answer.
     */
    enum { N = 5000 };
    tt_buf doc = TT_BUF_INIT;
    int i, tid, rc;
    tt_buf_addstr(&doc, "{\"traceEvents\":[");
    for (tid = 1; tid <= 2; tid++) {
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"L\",\"pid\":1,"
                          "\"tid\":%d,\"ts\":0,\"dur\":10000000}",
                    tid == 1 ? "" : ",", tid);
        for (i = 0; i < N; i++) {
            int j = tid == 1 ? i : N - 1 - i;
            tt_buf_addf(&doc, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"P%d\",\"pid\":1,"
                              "\"tid\":%d,\"ts\":%d,\"dur\":900}"
                              ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"C%d\",\"pid\":1,"
                              "\"tid\":%d,\"ts\":%d,\"dur\":200}",
                        j, tid, j * 1000 + 1, j, tid, j * 1000 + 1);
        }
    }
    for (tid = 1; tid <= 2; tid++) {
        int chunk;
        for (chunk = 0; chunk < 2; chunk++) {
            int from = chunk ? 0 : N / 2, to = chunk ? N / 2 : N;
            for (i = from; i < to; i++)
                tt_buf_addf(&doc, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"a%d\","
                                  "\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":5}"
                                  ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"b%d\","
                                  "\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":5}",
                            i, tid, i * 1000 + 50, i, tid, i * 1000 + 500);
        }
        tt_buf_addf(&doc, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"z\","
                          "\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":5}",
                    tid, N * 1000 + 10);
    }
    tt_buf_addstr(&doc, "]}");
    rc = ingest(write_file("walk.json", doc.buf, doc.len), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM runtime"), 2 * (2 * N + 1));
    /* a<i> is inside C<i>, b<i> inside P<i> only, z inside L only */
    q_expect("1|5000|5000|1\n2|5000|5000|1\n",
             "SELECT r.tid,"
             " sum(substr(n.s, 1, 1) = 'a' AND o.s = 'C' || substr(n.s, 2)),"
             " sum(substr(n.s, 1, 1) = 'b' AND o.s = 'P' || substr(n.s, 2)),"
             " sum(n.s = 'z' AND o.s = 'L')"
             " FROM runtime r JOIN strings n ON n.id = r.name"
             " JOIN slices s ON s.id = r.op_id JOIN strings o ON o.id = s.name"
             " GROUP BY r.tid ORDER BY r.tid");
    tt_buf_release(&doc);
}

Test(ingest, ac2g_flows_folded_into_their_rows)
{
    /*
     * Flows right after their event (Kineto's order) fold into it, in every
     * combination seen in real traces ('s' after a runtime call, 'f' after a
     * kernel still waiting for its call, 'f' after a runtime call, 's' after
     * a GPU activity); the view flows gives back exactly the file's flows.
     * Flows that differ in anything (thread, time, id, bp, args, name) or
     * repeat stay rows of their own.
     */
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":3,"
        "\"args\":{\"correlation\":5}},"
        "{\"ph\":\"f\",\"id\":5,\"pid\":0,\"tid\":7,\"ts\":50,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,"
        "\"args\":{\"correlation\":5}},"
        "{\"ph\":\"s\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":10,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
        /* repeated: a second 's' for the same call stays a row */
        "{\"ph\":\"s\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":10,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"occupancy\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":1,"
        "\"args\":{\"correlation\":6}},"
        "{\"ph\":\"f\",\"id\":6,\"pid\":1,\"tid\":1,\"ts\":20,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset\",\"pid\":0,\"tid\":7,\"ts\":60,\"dur\":1},"
        "{\"ph\":\"s\",\"id\":9,\"pid\":0,\"tid\":7,\"ts\":60,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch2\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":5,"
        "\"args\":{\"correlation\":7}},"
        /* the 's' of launch2 (folded), then look-alikes that are not: other
         * time, other id, other name, args, other thread */
        "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":30,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
        "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":31,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
        "{\"ph\":\"s\",\"id\":8,\"pid\":1,\"tid\":1,\"ts\":30,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
        "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":30,\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\"},"
        "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":30,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"args\":{\"x\":1}},"
        "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":2,\"ts\":30,\"cat\":\"ac2g\",\"name\":\"ac2g\"}]";
    int rc = ingest(write_str("flows.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    /* the memset has no correlation: the 's' after it uses the id 9 it does not have */
    q_expect("s|5|1|1|10000|NULL|ac2g|ac2g|NULL\n"
             "s|5|1|1|10000|NULL|ac2g|ac2g|NULL\n"
             "f|5|0|7|50000|e|ac2g|ac2g|NULL\n"
             "f|6|1|1|20000|e|ac2g|ac2g|NULL\n"
             "s|9|0|7|60000|NULL|ac2g|ac2g|NULL\n"
             "s|7|1|1|30000|NULL|fwdbwd|fwdbwd|NULL\n"
             "s|7|1|1|30000|NULL|ac2g|ac2g|{\"x\":1}\n"
             "s|7|1|1|30000|NULL|ac2g|ac2g|NULL\n"
             "s|7|1|2|30000|NULL|ac2g|ac2g|NULL\n"
             "s|7|1|1|31000|NULL|ac2g|ac2g|NULL\n"
             "s|8|1|1|30000|NULL|ac2g|ac2g|NULL\n",
             "SELECT f.ph, f.flow_id, f.pid, f.tid, f.ts, f.bp, c.s, n.s, f.args FROM flows f"
             " JOIN strings c ON c.id = f.cat JOIN strings n ON n.id = f.name"
             " ORDER BY f.flow_id = 5 DESC, f.flow_id = 6 DESC, f.flow_id = 9 DESC, f.flow_id,"
             " f.ts, f.tid, c.s DESC, f.args IS NULL, f.ph");
    /* four folded: 'f' into the pending kernel, 's' and 'f' into runtime calls */
    cr_assert_eq(q_int("SELECT count(*) FROM flow_events"), 7);
    q_expect("k|2\n", "SELECT n.s, g.flow FROM gpu_ops g JOIN strings n ON n.id = g.name"
                      " WHERE g.flow IS NOT NULL");
    q_expect("launch|1\nlaunch2|1\noccupancy|2\n", "SELECT n.s, r.flow FROM runtime r"
                                         " JOIN strings n ON n.id = r.name WHERE r.flow IS NOT NULL"
                                         " ORDER BY n.s");
    q_expect("f|ac2g|2\ns|ac2g|8\ns|fwdbwd|1\n",
             "SELECT ph, c.s, count(*) FROM events e JOIN strings c ON c.id = e.cat"
             " WHERE tbl = 'flows' GROUP BY 1, 2 ORDER BY 1, 2");
}

Test(ingest, schema_1_database_migrated)
{
    /* a database made by schema 1 (flows a table of its own) opens, keeps
     * its flows, and takes folded ones */
    sqlite3 *s;
    /* schema 1 exactly: today's tables without the flow columns, flows a
     * table, the events view over it */
    tt_db_free(db);
    db = NULL;
    cr_assert_eq(sqlite3_open(dbpath, &s), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(s,
                              "DROP VIEW events; DROP VIEW flows;"
                              "ALTER TABLE flow_events RENAME TO flows;"
                              "ALTER TABLE runtime DROP COLUMN flow;"
                              "ALTER TABLE gpu_ops DROP COLUMN flow;"
                              "CREATE VIEW events AS"
                              "  SELECT trace_id, 'slices' AS tbl, id, ph, cat, name, pid, tid, ts, dur FROM slices"
                              "  UNION ALL SELECT trace_id, 'flows', id, ph, cat, name, pid, tid, ts, NULL FROM flows;"
                              "INSERT INTO strings VALUES(1, 'ac2g');"
                              "INSERT INTO flows VALUES(1, 1, 's', 1, 1, 42, 1, 1, 5, NULL, NULL);"
                              "PRAGMA user_version=1;",
                              NULL, NULL, NULL),
                 SQLITE_OK, "%s", sqlite3_errmsg(s));
    sqlite3_close(s);
    /* read-only: left as it is, still readable */
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_READONLY), 0);
    cr_assert_eq(q_int("PRAGMA user_version"), 1);
    tt_db_free(db);
    db = NULL;
    cr_assert_eq(tt_db_open(&db, dbpath, 0), 0, "%s", tt_error_last()->message);
    cr_assert_eq(q_int("PRAGMA user_version"), 2);
    q_expect("s|42|NULL|1\n", "SELECT ph, flow_id, bp, id FROM flows");
    q_expect("flows|s\n", "SELECT tbl, ph FROM events");
    cr_assert_eq(q_int("SELECT count(flow) FROM runtime") + q_int("SELECT count(flow) FROM gpu_ops"), 0);
}

Test(ingest, legacy_operator_and_runtime)
{
    /* PyTorch 1.8 array form: Operator / Runtime / Kernel, string tids */
    static const char doc[] =
        "[{\"name\":\"aten::mm\",\"ph\":\"X\",\"cat\":\"Operator\",\"ts\":100,\"dur\":50,"
        "\"pid\":\"3\",\"tid\":\"4\",\"args\":{\"external id\":11,\"Input dims\":[[2,3],[3,4]]}},"
        "{\"name\":\"cudaLaunchKernel\",\"ph\":\"X\",\"cat\":\"Runtime\",\"ts\":110,\"dur\":5,"
        "\"pid\":\"3\",\"tid\":\"4\",\"args\":{\"correlation\":21,\"external id\":11}},"
        "{\"name\":\"sgemm\",\"ph\":\"X\",\"cat\":\"Kernel\",\"ts\":120,\"dur\":30,"
        "\"pid\":0,\"tid\":\"stream 7\",\"args\":{\"correlation\":21,\"external id\":11,"
        "\"device\":0,\"stream\":7}}]";
    int rc = ingest(write_str("legacy.json", doc), 0, NULL);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("chrome-array|3\n", "SELECT format, pid FROM traces");
    q_expect("3|4|integer|11|[[2,3],[3,4]]\n",
             "SELECT s.pid, s.tid, typeof(s.tid), s.external_id, d.s FROM slices s"
             " JOIN strings d ON d.id = s.input_dims");
    q_expect("aten::mm\n", "SELECT o.s FROM runtime r JOIN slices s ON s.id = r.op_id"
                           " JOIN strings o ON o.id = s.name");
    q_expect("kernel|stream 7|7|aten::mm\n",
             "SELECT g.kind, g.tid, g.stream, o.s FROM gpu_ops g JOIN slices s ON"
             " s.id = g.op_id JOIN strings o ON o.id = s.name");
}

Test(ingest, import_issues_recorded)
{
    static const char doc[] =
        "{\"traceEvents\":[1,"
        "{\"name\":\"noph\",\"ts\":1},"
        "{\"ph\":\"X\",\"name\":\"bad\xff\",\"ts\":2,\"dur\":1},"
        "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":9,\"ts\":3}"
        "]}";
    tt_ingest_result res;
    int rc = ingest(write_str("issues.json", doc), 0, &res);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    q_expect("repaired|1|41\nskipped_no_phase|1|18\nskipped_non_object|1|16\n"
             "unclosed_begin|1|NULL\n",
             "SELECT kind, count, first_offset FROM import_issues ORDER BY kind");
    cr_assert_eq(res.no_phase, 1);
    q_expect("bad\xef\xbf\xbd|1000\nopen|NULL\n",
             "SELECT n.s, s.dur FROM slices s JOIN strings n ON n.id = s.name ORDER BY s.ts");
}

Test(ingest, profiled_pid_prefers_cpu_label)
{
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":100,\"tid\":1,\"ts\":1,\"dur\":1},"
        "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":200,\"args\":{\"labels\":\"CPU\"}}]";
    cr_assert_eq(ingest(write_str("pid.json", doc), 0, NULL), 0);
    cr_assert_eq(q_int("SELECT pid FROM traces"), 200);
}

Test(ingest, base_time_and_relative_ts)
{
    static const char doc[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
        "\"ts\":2413669096100.149,\"dur\":0.5}],\"baseTimeNanoseconds\":1699999999000000000}";
    cr_assert_eq(ingest(write_str("bt.json", doc), 0, NULL), 0);
    q_expect("2413669096100149|500|1699999999000000000\n",
             "SELECT s.ts, s.dur, t.base_time_ns FROM slices s, traces t");
}

/* store/records.h declares each record type's columns once; every list
 * must name exactly the columns of its table in the schema (in any order:
 * the tables keep the order of the schema's first version), less an `id`
 * that SQLite assigns (INTEGER PRIMARY KEY) */
#include "store/records.h"

#define REC_COLS_(P, NAME, SQL) SQL,
#define REC_CHECK_(ID, REC, TABLE)                                                  \
    {                                                                               \
        static const char *const cols[] = { TT_REC_##REC(REC_COLS_) };              \
        check_record_columns(TABLE, cols, sizeof(cols) / sizeof(cols[0]), TT_NC_##REC); \
    }

static void check_record_columns(const char *table, const char *const *cols, size_t n,
                                 int ncells)
{
    sqlite3_stmt *st;
    char sql[128];
    size_t found = 0, i, in_table = 0, auto_id = 0;
    cr_assert_eq((size_t)ncells, n, "%s: TT_NC", table);
    snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')", table);
    cr_assert_eq(sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        size_t had = found;
        in_table++;
        for (i = 0; i < n; i++)
            found += strcmp(c, cols[i]) == 0;
        auto_id += found == had && strcmp(c, "id") == 0;
    }
    sqlite3_finalize(st);
    cr_assert_eq(found, n, "%s: every declared column is in the table", table);
    cr_assert_eq(in_table - auto_id, n, "%s: every column of the table is declared", table);
}

Test(ingest, record_declarations_match_the_schema)
{
    TT_RECORDS(REC_CHECK_)
    cr_assert_eq(TT_C_SL_TS, 7);
    cr_assert_eq(TT_C_GPU_OP, 25);
    cr_assert_eq(TT_C_RT_ID, 12);
}

/* tt__ingest_rows stops reading once the rows need the SQL passes (here: a
 * thread's op arrives after a runtime call it encloses), instead of reading
 * the rest of the file that the caller will read into a database anyway */
#include "store/ingest_rows.h"

static int count_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                      const char *text)
{
    (void)ncols;
    (void)cells;
    (void)text;
    if (table == TT_ROWS_SLICE)
        *(int64_t *)ctx += nrows;
    return 0;
}

Test(ingest, rows_stop_when_a_database_is_needed)
{
    tt_buf b = TT_BUF_INIT;
    tt__rowsink sink = { NULL, count_rows, NULL, NULL, NULL, NULL };
    tt__rows_result res;
    int64_t slices = 0;
    int i;
    char *path;
    sink.ctx = &slices;
    tt_buf_addstr(&b, "{\"traceEvents\": [\n"
                      "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\","
                      " \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 1, \"args\": {\"correlation\": 1}},\n"
                      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1,"
                      " \"tid\": 1, \"ts\": 1, \"dur\": 10}");
    for (i = 0; i < 20000; i++)
        tt_buf_addf(&b, ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\","
                          " \"pid\": 1, \"tid\": 2, \"ts\": %d, \"dur\": 1}", 100 + 2 * i);
    tt_buf_addstr(&b, "\n]}\n");
    path = write_file("rows.json", b.buf, b.len);
    cr_assert_eq(tt__ingest_rows(path, &sink, 0, 0, &res), 0, "%s", tt_error_last()->message);
    cr_assert(res.needs_db);
    cr_assert_str_eq(res.why_db, "runtime calls to relink (ops out of order on a thread)");
    cr_assert_lt(res.stats.events, 20002, "read %lld events", (long long)res.stats.events);
    cr_assert_lt(slices, 20001);
    free(res.metadata);
    tt_buf_release(&b);
}

/* ---- links made in the stream (store/ingest_pend.c, the op spool) ---- */

#define X_OP "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":%d}"
#define X_RT                                                                               \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%d,"     \
    "\"dur\":2,\"args\":{\"correlation\":%d}}"
#define X_K                                                                                \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":1,"  \
    "\"args\":{\"correlation\":%d}}"

/* needs_db of the rows of doc (no database) */
static int rows_need_db(const char *name, const tt_buf *doc)
{
    int64_t slices = 0;
    tt__rowsink sink = { NULL, count_rows, NULL, NULL, NULL, NULL };
    tt__rows_result res;
    sink.ctx = &slices;
    cr_assert_eq(tt__ingest_rows(write_file(name, doc->buf, doc->len), &sink, 0, 0, &res), 0,
                 "%s", tt_error_last()->message);
    free(res.metadata);
    return res.needs_db;
}

/* "kernel correlation -> name of the op of its runtime call" rows */
#define GPU_OPS_SQL                                                                        \
    "SELECT g.correlation, coalesce(o.s, '-') FROM gpu_ops g LEFT JOIN slices s"           \
    " ON s.id = g.op_id LEFT JOIN strings o ON o.id = s.name ORDER BY g.correlation, g.ts"

Test(ingest, parent_written_after_children_of_its_start)
{
    /* Kineto sorts ops by start only: children of the same start may come
     * first. 400 groups, shifted by one op so one group spans two spool
     * blocks (1024 records). Each group: calls in the child, the middle op
     * and the parent only. */
    tt_buf b = TT_BUF_INIT;
    int i;
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    tt_buf_addf(&b, X_OP, "lead", 0, 5);
    for (i = 0; i < 400; i++) {
        int t = 1000 * (i + 1);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_OP, "child", t, 10);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_OP, "mid", t, 20);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_OP, "parent", t, 50);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_K, t + 500, 3 * i + 1);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_RT, "r_child", t + 2, 3 * i + 1);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_K, t + 600, 3 * i + 2);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_RT, "r_mid", t + 15, 3 * i + 2);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_K, t + 700, 3 * i + 3);
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_RT, "r_parent", t + 40, 3 * i + 3);
    }
    tt_buf_addstr(&b, "]}");
    cr_assert_not(rows_need_db("ties_rows.json", &b), "linked in the stream");
    cr_assert_eq(ingest(write_file("ties.json", b.buf, b.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM runtime r JOIN slices s ON s.id = r.op_id"
                       " JOIN strings n ON n.id = r.name JOIN strings o ON o.id = s.name"
                       " WHERE n.s = 'r_' || o.s"),
                 1200);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"
                       " WHERE g.op_id = r.op_id"),
                 1200);
    tt_buf_release(&b);
}

Test(ingest, graph_launch_rocm_order_and_calls_outside_the_trace)
{
    /* five kernels of one cudaGraphLaunch before it; a ROCm-order launch
     * (call first); kernels whose call is not in the trace */
    tt_buf b = TT_BUF_INIT;
    int j;
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    tt_buf_addf(&b, X_OP, "replay", 0, 100);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_OP, "hip", 200, 100);
    for (j = 0; j < 5; j++) {
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_K, 1000 + j, 7);
    }
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_RT, "cudaGraphLaunch", 10, 7);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_RT, "hipLaunchKernel", 210, 8);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_K, 2000, 8);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_K, 3000, 99);
    tt_buf_addstr(&b, "]}");
    cr_assert_not(rows_need_db("graph_rows.json", &b), "linked in the stream");
    cr_assert_eq(ingest(write_file("graph.json", b.buf, b.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    q_expect("7|replay\n7|replay\n7|replay\n7|replay\n7|replay\n8|hip\n99|-\n", GPU_OPS_SQL);
    tt_buf_release(&b);
}

Test(ingest, late_calls_left_to_the_merge_join)
{
    /* 4200 kernels before their calls: more than the ring holds, so the
     * first ones are stored before their call comes (needs the database) */
    tt_buf b = TT_BUF_INIT;
    int j;
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    tt_buf_addf(&b, X_OP, "big", 0, 100000);
    for (j = 0; j < 4200; j++) {
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_K, 200000 + j, 1000 + j);
    }
    for (j = 0; j < 4200; j++) {
        tt_buf_addch(&b, ',');
        tt_buf_addf(&b, X_RT, "launch", 10 + j, 1000 + j);
    }
    tt_buf_addstr(&b, "]}");
    cr_assert(rows_need_db("late_rows.json", &b));
    cr_assert_eq(ingest(write_file("late.json", b.buf, b.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops WHERE op_id IS NOT NULL"), 4200);
    tt_buf_release(&b);
}

Test(ingest, repeated_correlation_left_to_the_merge_join)
{
    tt_buf b = TT_BUF_INIT;
    /* two calls of one correlation before its kernel (ROCm order): the
     * kernel is the merge join's, which takes the later call at or before it */
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    tt_buf_addf(&b, X_OP, "first", 0, 100);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_OP, "second", 200, 100);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_RT, "a", 10, 5);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_RT, "b", 210, 5);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_K, 250, 5);
    tt_buf_addstr(&b, "]}");
    cr_assert(rows_need_db("dup_rows.json", &b));
    cr_assert_eq(ingest(write_file("dup.json", b.buf, b.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    q_expect("5|second\n", GPU_OPS_SQL);
    tt_buf_release(&b);
}

/* ---- slices starting together, written shortest first (ig_retie) ---- */

#define X_TH "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"%s\",\"pid\":1,\"tid\":%d," \
             "\"ts\":%d,\"dur\":%d}"

/*
 * groups of: outer [t, t+100]; c1, c2, c3 all starting at t+10, written
 * shortest first (5, 20, 50: c3 encloses c2 encloses c1); a sibling at t+70.
 * others > 0: that many slices of other threads between c1 and c2.
 */
static char *tie_trace(const char *name, int groups, int others)
{
    tt_buf b = TT_BUF_INIT;
    char *p;
    int i, k;
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    for (i = 0; i < groups; i++) {
        int t = 1000 * (i + 1);
        tt_buf_addf(&b, "%s" X_TH, i ? "," : "", "outer", 1, t, 100);
        tt_buf_addf(&b, "," X_TH, "c1", 1, t + 10, 5);
        for (k = 0; k < others; k++)
            tt_buf_addf(&b, "," X_TH, "other", 2 + k, t, 1);
        tt_buf_addf(&b, "," X_TH, "c2", 1, t + 10, 20);
        tt_buf_addf(&b, "," X_TH, "c3", 1, t + 10, 50);
        tt_buf_addf(&b, "," X_TH, "sib", 1, t + 70, 10);
    }
    tt_buf_addstr(&b, "]}\n");
    p = write_file(name, b.buf, b.len);
    tt_buf_release(&b);
    return p;
}

/* slices of tid 1 whose depth or parent is not the one of the construction */
static int64_t misnested(void)
{
    return q_int("SELECT count(*) FROM slices s JOIN strings n ON n.id = s.name"
                 " LEFT JOIN slices p ON p.id = s.parent_id LEFT JOIN strings pn ON pn.id = p.name"
                 " WHERE s.tid = 1 AND NOT ("
                 " (n.s = 'outer' AND s.depth = 0 AND s.parent_id IS NULL) OR"
                 " (n.s = 'c3' AND s.depth = 1 AND pn.s = 'outer') OR"
                 " (n.s = 'c2' AND s.depth = 2 AND pn.s = 'c3') OR"
                 " (n.s = 'c1' AND s.depth = 3 AND pn.s = 'c2') OR"
                 " (n.s = 'sib' AND s.depth = 1 AND pn.s = 'outer'))");
}

static int64_t disordered_of(const char *path)
{
    int64_t slices = 0;
    tt__rowsink sink = { NULL, count_rows, NULL, NULL, NULL, NULL };
    tt__rows_result res;
    sink.ctx = &slices;
    cr_assert_eq(tt__ingest_rows(path, &sink, 0, 0, &res), 0, "%s", tt_error_last()->message);
    cr_assert(!res.needs_db);
    free(res.metadata);
    return res.disordered_threads;
}

Test(ingest, slices_of_one_start_written_shortest_first_are_nested_in_the_stream)
{
    /* 700 groups: 3500 rows, runs falling at every place of a 128-row batch */
    char *path = tie_trace("ties.json", 700, 0);
    cr_assert_eq(ingest(path, 0, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM slices WHERE tid = 1"), 3500);
    cr_assert_eq(misnested(), 0);
    /* the file's rows need no ordered pass: their nesting is final */
    cr_assert_eq(disordered_of(path), 0);
}

Test(ingest, a_tie_run_no_longer_held_back_is_nested_by_the_ordered_pass)
{
    /* 12 slices of other threads between c1 and c2: c1's row was handed on */
    char *path = tie_trace("ties_far.json", 50, 12);
    cr_assert_eq(ingest(path, 0, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(misnested(), 0);
    cr_assert_eq(disordered_of(path), 1);
}

Test(ingest, every_count_of_slices_held_back_at_the_end_is_written)
{
    /* the last batch holds up to RB_K + RB_KEEP - 1 rows: written in two */
    int n, i;
    for (n = 250; n <= 272; n++) {
        tt_buf b = TT_BUF_INIT;
        char name[32];
        tt_buf_addstr(&b, "{\"traceEvents\":[");
        for (i = 0; i < n; i++)
            tt_buf_addf(&b, "%s" X_TH, i ? "," : "", "s", 1, 10 * i, 5);
        tt_buf_addstr(&b, "]}\n");
        snprintf(name, sizeof(name), "held%d.json", n);
        cr_assert_eq(ingest(write_file(name, b.buf, b.len), 0, NULL), 0, "%d: %s", n,
                     tt_error_last()->message);
        cr_assert_eq(q_int("SELECT count(*) FROM slices WHERE trace_id = (SELECT max(id) FROM"
                           " traces)"), n);
        tt_buf_release(&b);
    }
}

Test(ingest, kernels_without_a_call_never_look_like_late_links)
{
    /*
     * 300k runtime calls of even correlations, and 50k kernels of odd ones
     * (their calls came before the trace began): none can be linked, so the
     * rows need no database. The Bloom filter the set of calls was before
     * answered "maybe" for about 7 of them at this size (so a 470 MB
     * trace went through a temporary database); the set is exact now.
     */
    tt_buf b = TT_BUF_INIT;
    int i;
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    for (i = 0; i < 300000; i++) {
        tt_buf_addf(&b, "%s" X_RT, i ? "," : "", "cudaLaunchKernel", 10 * i, 2 * i);
        if (i % 6 == 0) {
            tt_buf_addch(&b, ',');
            tt_buf_addf(&b, X_K, 10 * i + 5, 2 * i + 1);
        }
    }
    tt_buf_addstr(&b, "]}\n");
    cr_assert_not(rows_need_db("unlinked_odd.json", &b));
    tt_buf_release(&b);
}

Test(ingest, correlations_past_the_tracked_chunks_answer_maybe)
{
    /* calls 64k ids apart fill the 4096 chunks the set tracks (one more is
     * untracked): a kernel without a call in a tracked chunk is known to
     * have none; one in an untracked chunk may have had its call, so the
     * rows need the database's merge join, which links it */
    tt_buf b = TT_BUF_INIT;
    int i;
    tt_buf_addstr(&b, "{\"traceEvents\":[");
    for (i = 0; i < 4097; i++)
        tt_buf_addf(&b, "%s" X_RT, i ? "," : "", "cudaLaunchKernel", 10 * i, i * 65536);
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_K, 50000, 100 * 65536 + 1);
    {
        tt_buf t = TT_BUF_INIT;
        tt_buf_add(&t, b.buf, b.len);
        tt_buf_addstr(&t, "]}\n");
        cr_assert_not(rows_need_db("tracked.json", &t));
        tt_buf_release(&t);
    }
    /* the call of the untracked chunk's kernel came first, far before */
    tt_buf_addch(&b, ',');
    tt_buf_addf(&b, X_K, 50001, 4096 * 65536);
    tt_buf_addstr(&b, "]}\n");
    cr_assert(rows_need_db("untracked.json", &b));
    cr_assert_eq(ingest(write_file("untracked.json", b.buf, b.len), 0, NULL), 0, "%s",
                 tt_error_last()->message);
    cr_assert_eq(q_int("SELECT count(*) FROM gpu_ops g JOIN runtime r ON r.id = g.runtime_id"
                       " WHERE g.correlation = 4096 * 65536"), 1);
    tt_buf_release(&b);
}
