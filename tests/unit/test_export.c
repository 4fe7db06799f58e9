/*
 * tests/unit/test_export.c - tt_export_db / tt_export_files on a hand-made
 * two-rank trace: written to temporary files, ingested, exported, and the
 * export read back with the project's own reader (tt_read_trace).
 *
 * Each rank has two steps (ProfilerStep#1 [0, 99] us, #2 [100, 200] us), a
 * kernel launched in step 1 that runs in step 2's time, ac2g flows with the
 * same correlation on both ranks, a [memory] instant and a counter; rank 1's
 * baseTimeNanoseconds is 5 us after rank 0's.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "tracetool/export.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(export, .timeout = 60);

#define BASE0 INT64_C(1700000000000000000)
#define BASE1 (BASE0 + 5000)

static const char trace_fmt[] =
    "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": %d, \"world_size\": 2},"
    " \"baseTimeNanoseconds\": %lld, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 100,"
    " \"tid\": 100, \"ts\": 0, \"dur\": 99},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 100,"
    " \"tid\": 100, \"ts\": 100, \"dur\": 100},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 10, \"dur\": 50, \"args\": {\"External id\": 1, \"Input Dims\": [[2, 3], [3, 4]],"
    " \"custom\": \"x\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100,"
    " \"tid\": 100, \"ts\": 20, \"dur\": 5, \"args\": {\"correlation\": 7, \"External id\": 1,"
    " \"cbid\": 211}},\n"
    "{\"ph\": \"s\", \"id\": 7, \"pid\": 100, \"tid\": 100, \"ts\": 20, \"cat\": \"ac2g\","
    " \"name\": \"ac2g\"},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 150,"
    " \"dur\": 30, \"args\": {\"correlation\": 7, \"External id\": 1, \"device\": 0,"
    " \"stream\": 7, \"grid\": [1, 2, 3], \"block\": [4, 5, 6]}},\n"
    "{\"ph\": \"f\", \"id\": 7, \"pid\": 0, \"tid\": 7, \"ts\": 150, \"cat\": \"ac2g\","
    " \"name\": \"ac2g\", \"bp\": \"e\"},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 100, \"tid\": 101,"
    " \"ts\": 120, \"dur\": 10},\n"
    "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 100,"
    " \"tid\": 100, \"ts\": 130, \"s\": \"t\", \"args\": {\"Device Type\": 1, \"Device Id\": 0,"
    " \"Addr\": 1234, \"Bytes\": 512, \"Total Allocated\": 512, \"Total Reserved\": 2048}},\n"
    "{\"ph\": \"C\", \"name\": \"queue\", \"pid\": 100, \"tid\": 100, \"ts\": 140,"
    " \"args\": {\"depth\": 3}},\n"
    "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 0, \"tid\": 0,"
    " \"args\": {\"labels\": \"GPU 0\"}},\n"
    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 7,"
    " \"args\": {\"name\": \"stream 7 \"}},\n"
    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 100, \"tid\": 100,"
    " \"args\": {\"name\": \"thread 100 (python3)\"}}\n"
    "]}\n";

static char dir[64], in0[128], in1[128], dbpath[128], out[128];

static void write_inputs(void)
{
    FILE *f;
    int r;
    snprintf(dir, sizeof(dir), "/tmp/tt_export_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    for (r = 0; r < 2; r++) {
        char *p = r ? in1 : in0;
        snprintf(p, sizeof(in0), "%s/rank%d.json", dir, r);
        cr_assert_not_null(f = fopen(p, "w"));
        fprintf(f, trace_fmt, r, (long long)(r ? BASE1 : BASE0));
        cr_assert_eq(fclose(f), 0);
    }
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    snprintf(out, sizeof(out), "%s/out.json", dir);
}

static void remove_all(void)
{
    char p[160];
    const char *names[] = { "rank0.json", "rank1.json", "t.db", "out.json", "out.json.gz",
                            "out.json.tmp" };
    size_t i;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void ingest_both(void)
{
    tt_db *db;
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_ingest_file(db, in0, NULL, NULL), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_ingest_file(db, in1, NULL, NULL), 0, "%s", tt_error_last()->message);
    tt_db_free(db);
}

/* what the reader sees in an export */
struct seen {
    int64_t base;
    int nproc, events[2];          /* non-metadata events per pid */
    int slices[2], runtime[2], kernels[2], flows[2], memory[2], counters[2];
    char procname[2][32];
    int64_t step1_ts[2], kernel_ts[2], flow_id[2][2];
    int nflow[2];
    char threads[8][64];           /* thread_name values */
    int64_t thread_pid[8];
    int nthreads;
    int dims_ok, custom_ok, grid_ok, mem_ok;
    int64_t last_ts[2];
    int ordered;
};

static int on_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct seen *s = ctx;
    (void)len;
    if (!strcmp(key, "baseTimeNanoseconds"))
        s->base = atoll(json);
    return 0;
}

static void on_meta_event(struct seen *s, const tt_event *ev)
{
    int64_t pid = ev->pid.num;
    if (!strcmp(ev->name, "process_name") && pid >= 0 && pid < 2 && ev->arg_name) {
        snprintf(s->procname[pid], sizeof(s->procname[pid]), "%s", ev->arg_name);
        s->nproc++;
    } else if (!strcmp(ev->name, "thread_name") && s->nthreads < 8 && ev->arg_name) {
        snprintf(s->threads[s->nthreads], sizeof(s->threads[0]), "%s", ev->arg_name);
        s->thread_pid[s->nthreads++] = pid;
    }
}

static int on_event(void *ctx, const tt_event *ev)
{
    struct seen *s = ctx;
    int64_t pid = ev->pid.num;
    const char *cat = ev->cat ? ev->cat : "";
    cr_assert(ev->pid.present && !ev->pid.is_str && ev->tid.present && !ev->tid.is_str);
    if (ev->ph == 'M') {
        on_meta_event(s, ev);
        return 0;
    }
    cr_assert(pid == 0 || pid == 1, "pid %ld is a rank", (long)pid);
    s->events[pid]++;
    if (ev->ts_ns < s->last_ts[pid])
        s->ordered = 0;
    s->last_ts[pid] = ev->ts_ns;
    if (ev->ph == 'X' && (!strcmp(cat, "user_annotation") || !strcmp(cat, "cpu_op"))) {
        s->slices[pid]++;
        if (!strcmp(ev->name, "ProfilerStep#1"))
            s->step1_ts[pid] = ev->ts_ns;
        if (!strcmp(ev->name, "aten::mm")) {
            s->dims_ok = ev->input_dims && !strcmp(ev->input_dims, "[[2,3],[3,4]]") &&
                         ev->external_id == 1;
            s->custom_ok = ev->args && strstr(ev->args, "\"custom\":\"x\"") != NULL;
        }
    } else if (ev->ph == 'X' && !strcmp(cat, "cuda_runtime")) {
        s->runtime[pid]++;
    } else if (ev->ph == 'X' && !strcmp(cat, "kernel")) {
        s->kernels[pid]++;
        s->kernel_ts[pid] = ev->ts_ns;
        s->grid_ok = (ev->have & TT_A_GRID) && ev->grid[2] == 3 && ev->block[0] == 4 &&
                     ev->correlation == 7 && ev->stream == 7;
    } else if (ev->ph == 's' || ev->ph == 'f') {
        if (s->nflow[pid] < 2)
            s->flow_id[pid][s->nflow[pid]++] = ev->id.num;
        s->flows[pid]++;
    } else if (!strcmp(ev->name, "[memory]")) {
        s->memory[pid]++;
        s->mem_ok = ev->bytes == 512 && ev->addr == 1234 && ev->total_reserved == 2048;
    } else if (ev->ph == 'C') {
        s->counters[pid]++;
    }
    return 0;
}

static void read_back(const char *path, struct seen *s)
{
    tt_trace_sink sink;
    tt_read_stats st;
    memset(s, 0, sizeof(*s));
    memset(&sink, 0, sizeof(sink));
    s->ordered = 1;
    s->last_ts[0] = s->last_ts[1] = INT64_MIN;
    sink.ctx = s;
    sink.on_meta = on_meta;
    sink.on_event = on_event;
    cr_assert_eq(tt_read_trace(path, &sink, NULL, &st), 0, "%s", tt_error_last()->message);
    cr_expect_eq(st.repaired + st.skipped, 0);
}

static int has_thread(const struct seen *s, int64_t pid, const char *name)
{
    int i;
    for (i = 0; i < s->nthreads; i++)
        if (s->thread_pid[i] == pid && !strcmp(s->threads[i], name))
            return 1;
    return 0;
}

Test(export, two_ranks_all_steps)
{
    tt_export_options o = TT_EXPORT_OPTIONS_INIT;
    tt_export_result r;
    struct seen s;
    tt_db *db;
    int p;
    write_inputs();
    ingest_both();
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_READONLY), 0);
    cr_assert_eq(tt_export_db(db, &o, out, &r), 0, "%s", tt_error_last()->message);
    tt_db_free(db);
    cr_expect_eq(r.processes, 2);
    cr_expect_eq(r.counts[TT_EXPORT_SLICES], 8);
    cr_expect_eq(r.counts[TT_EXPORT_RUNTIME], 2);
    cr_expect_eq(r.counts[TT_EXPORT_KERNELS], 2);
    cr_expect_eq(r.counts[TT_EXPORT_FLOWS], 4);
    cr_expect_eq(r.counts[TT_EXPORT_MEMORY], 2);
    cr_expect_eq(r.counts[TT_EXPORT_COUNTERS], 2);
    cr_expect_eq(r.threads, 6, "3 threads a rank, got %ld", (long)r.threads);
    /* 3 per process, 2 per thread */
    cr_expect_eq(r.counts[TT_EXPORT_METADATA], 2 * 3 + 6 * 2);
    cr_expect_eq(r.events, 20 + 18);
    read_back(out, &s);
    cr_expect_eq(s.base, BASE0, "the smallest base is the file's base");
    cr_expect_eq(s.nproc, 2);
    for (p = 0; p < 2; p++) {
        char want[24];
        snprintf(want, sizeof(want), "rank %d", p);
        cr_expect_str_eq(s.procname[p], want);
        cr_expect_eq(s.events[p], 10);
        cr_expect_eq(s.slices[p], 4);
        cr_expect_eq(s.runtime[p], 1);
        cr_expect_eq(s.kernels[p], 1);
        cr_expect_eq(s.flows[p], 2);
        cr_expect_eq(s.memory[p], 1);
        cr_expect_eq(s.counters[p], 1);
        cr_expect(has_thread(&s, p, "thread 100 (python3)"), "rank %d: CPU thread named", p);
        cr_expect(has_thread(&s, p, "GPU 0 stream 7"), "rank %d: stream named", p);
        cr_expect(has_thread(&s, p, "pid 100 tid 101") || has_thread(&s, p, "thread 101"),
                  "rank %d: unnamed thread", p);
        /* the pair of one rank shares an id; the ranks' ids differ */
        cr_expect_eq(s.nflow[p], 2);
        cr_expect_eq(s.flow_id[p][0], s.flow_id[p][1]);
    }
    cr_expect_neq(s.flow_id[0][0], s.flow_id[1][0], "flow ids never join two ranks");
    /* each rank on its own clock: rank 1 started 5 us after rank 0 */
    cr_expect_eq(s.step1_ts[0], 0);
    cr_expect_eq(s.step1_ts[1], 5000);
    cr_expect_eq(s.kernel_ts[1], 155000);
    cr_expect(s.ordered, "events in time order within a rank");
    cr_expect(s.dims_ok, "Input Dims and External id kept");
    cr_expect(s.custom_ok, "stored args kept");
    cr_expect(s.grid_ok, "kernel grid/block/correlation/stream kept");
    cr_expect(s.mem_ok, "memory args kept");
    remove_all();
}

Test(export, steps_and_ranks_from_files)
{
    tt_export_options o = TT_EXPORT_OPTIONS_INIT;
    tt_export_result r;
    const char *inputs[2];
    int64_t rank1 = 1;
    struct seen s;
    char gz[160];
    struct stat st;
    write_inputs();
    inputs[0] = in0;
    inputs[1] = in1;
    /* step 2: the kernel running in step 2's time was launched in step 1 */
    o.steps_set = 1;
    o.step_from = o.step_to = 2;
    cr_assert_eq(tt_export_files(inputs, 2, &o, out, &r), 0, "%s", tt_error_last()->message);
    cr_expect_eq(r.counts[TT_EXPORT_SLICES], 4, "ProfilerStep#2 and aten::add per rank");
    cr_expect_eq(r.counts[TT_EXPORT_KERNELS], 0);
    cr_expect_eq(r.counts[TT_EXPORT_RUNTIME], 0);
    cr_expect_eq(r.counts[TT_EXPORT_FLOWS], 0);
    cr_expect_eq(r.counts[TT_EXPORT_MEMORY], 2);
    cr_expect_eq(r.counts[TT_EXPORT_COUNTERS], 2);
    read_back(out, &s);
    cr_expect_eq(s.events[0] + s.events[1], 8);
    /* step 1 of rank 1, gzipped: the launch, its kernel and both flow ends */
    o.step_from = o.step_to = 1;
    o.ranks = &rank1;
    o.nranks = 1;
    snprintf(gz, sizeof(gz), "%s.gz", out);
    cr_assert_eq(tt_export_files(inputs, 2, &o, gz, &r), 0, "%s", tt_error_last()->message);
    cr_expect_eq(r.processes, 1);
    cr_expect_eq(r.counts[TT_EXPORT_KERNELS], 1);
    cr_expect_eq(r.counts[TT_EXPORT_RUNTIME], 1);
    cr_expect_eq(r.counts[TT_EXPORT_FLOWS], 2);
    cr_expect_eq(r.counts[TT_EXPORT_SLICES], 2, "ProfilerStep#1 and aten::mm");
    cr_assert_eq(stat(gz, &st), 0);
    cr_expect_eq(r.bytes, (int64_t)st.st_size);
    read_back(gz, &s);
    cr_expect_eq(s.events[0], 0);
    cr_expect_eq(s.events[1], 6);
    cr_expect_eq(s.kernels[1], 1);
    cr_expect_str_eq(s.procname[1], "rank 1");
    /* one rank alone: its base, its flow ids as they were */
    cr_expect_eq(s.base, BASE1);
    cr_expect_eq(s.flow_id[1][0], 7);
    remove_all();
}

Test(export, failures_leave_nothing)
{
    tt_export_options o = TT_EXPORT_OPTIONS_INIT;
    const char *inputs[1];
    char bad[160], tmp[160];
    int64_t rank9 = 9;
    write_inputs();
    inputs[0] = in0;
    /* no such step, no such rank: TT_ENOTFOUND and no file */
    o.steps_set = 1;
    o.step_from = o.step_to = 42;
    cr_expect_eq(tt_export_files(inputs, 1, &o, out, NULL), TT_ENOTFOUND);
    o.steps_set = 0;
    o.ranks = &rank9;
    o.nranks = 1;
    cr_expect_eq(tt_export_files(inputs, 1, &o, out, NULL), TT_ENOTFOUND);
    cr_expect_neq(access(out, F_OK), 0);
    /* an output directory that does not exist */
    o.ranks = NULL;
    snprintf(bad, sizeof(bad), "%s/missing/out.json", dir);
    cr_expect_eq(tt_export_files(inputs, 1, &o, bad, NULL), TT_EIO);
    /* a missing input, and a file that is no JSON */
    snprintf(bad, sizeof(bad), "%s/none.json", dir);
    inputs[0] = bad;
    cr_expect_eq(tt_export_files(inputs, 1, &o, out, NULL), TT_EIO);
    inputs[0] = dbpath; /* written below as text, not a database */
    {
        FILE *f = fopen(dbpath, "w");
        cr_assert_not_null(f);
        fputs("not json\n", f);
        fclose(f);
    }
    cr_expect(tt_export_files(inputs, 1, &o, out, NULL) < 0);
    snprintf(tmp, sizeof(tmp), "%s.tmp", out);
    cr_expect_neq(access(out, F_OK), 0, "no output after a failure");
    cr_expect_neq(access(tmp, F_OK), 0, "no .tmp after a failure");
    remove_all();
}
