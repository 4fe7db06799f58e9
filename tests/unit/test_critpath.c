/*
 * tests/unit/test_critpath.c - `tracetool critical-path` (analyze/critpath/):
 * the result of a hand-made trace whose path is known by construction
 * (tests/fixtures/critpath/gpu_bound.json: make_traces.py works it out),
 * from the file and from a database, with the spills on disk too; only
 * the window's events held; HTA's own trace giving HTA's numbers; the
 * longest path's tie-breaking (networkx's) and a cycle; the errors.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "analyze/critpath/critpath_state.h"
#include "common/spill.h"
#include "shared_data.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(critpath, .timeout = 300);

#define FIX TT_TESTDATA "/../tests/fixtures/critpath/"

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/tmp/tt_critpath_%d_%s", (int)getpid(), name);
}

/* trace path ingested into a new database at dbp */
static tt_db *ingested(const char *path, char *dbp, size_t n)
{
    tt_db *d = NULL;
    tmp_path(dbp, n, "c.db");
    unlink(dbp);
    cr_assert_eq(tt_db_open(&d, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(d, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    return d;
}

/* the critical path of path under o: from the file, or through a database */
static void run(const char *path, int db, const tt_cp_options *o, tt_cp_result *r)
{
    char dbp[256];
    tt_db *d = db ? ingested(path, dbp, sizeof(dbp)) : NULL;
    int rc = d ? tt_critpath_db_result(d, o, r) : tt_critpath_file_result(path, o, r);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    if (d) {
        tt_db_free(d);
        unlink(dbp);
    }
}

/*
 * gpu_bound.json, step 1: aten::mm 110 -> its launch 120 (10, cpu) ->
 * gemm_a 135 (15, launch) -> 535 (400) -> gemm_b 540 (5, kernel-kernel)
 * -> 940 (400); the window holds ProfilerStep#1, aten::mm, two launches
 * and two kernels (ProfilerStep#2 and its op are outside).
 */
static void check_gpu_bound(const tt_cp_result *r)
{
    static const int kinds[5] = { TT_CP_EDGE_OPERATOR, TT_CP_EDGE_LAUNCH_DELAY,
                                  TT_CP_EDGE_OPERATOR, TT_CP_EDGE_KERNEL_KERNEL,
                                  TT_CP_EDGE_OPERATOR };
    static const int64_t ns[5] = { 10000, 15000, 400000, 5000, 400000 };
    size_t i;
    cr_assert_eq(r->length_ns, 830000);
    cr_assert_eq(r->nsegments, 5);
    cr_assert_eq(r->events, 6);
    cr_assert_eq(r->step, 1);
    cr_assert_eq(r->bound_ns[TT_CP_CPU], 10000);
    cr_assert_eq(r->bound_ns[TT_CP_LAUNCH], 15000);
    cr_assert_eq(r->bound_ns[TT_CP_GPU_COMPUTE], 800000);
    cr_assert_eq(r->bound_ns[TT_CP_KERNEL_KERNEL], 5000);
    for (i = 0; i < 5; i++) {
        cr_assert_eq(r->segments[i].kind, kinds[i], "segment %zu", i);
        cr_assert_eq(r->segments[i].ns, ns[i], "segment %zu", i);
    }
    cr_assert_str_eq(r->segments[0].from_event, "aten::mm");
    cr_assert_str_eq(r->segments[2].name, "gemm_a");
    cr_assert_eq(r->segments[2].gpu, 1);
    cr_assert_eq(r->segments[2].stream, 7);
    cr_assert_str_eq(r->segments[4].to_event, "gemm_b");
    cr_assert_eq(r->segments[4].to_end, 1);
    cr_assert_eq(r->segments[1].from_ns, 120000);
}

Test(critpath, gpu_bound_file_and_db)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    int db;
    o.step_set = 1;
    o.step = 1;
    for (db = 0; db < 2; db++) {
        run(FIX "gpu_bound.json", db, &o, &r);
        check_gpu_bound(&r);
        tt_cp_result_free(&r);
    }
}

/* every spill on disk: the same path */
Test(critpath, spilled)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    uint64_t spilled;
    size_t peak;
    o.step_set = 1;
    o.step = 1;
    tt__spill_set_limit(64);
    tt__spill_stats_reset();
    run(FIX "gpu_bound.json", 0, &o, &r);
    tt__spill_stats(&spilled, &peak);
    tt__spill_set_limit(0);
    cr_assert_geq(spilled, 1);
    check_gpu_bound(&r);
    tt_cp_result_free(&r);
}

/* no step: the whole trace, ProfilerStep#2 and its op too: aten::mm 110 ->
 * 160 through its two launches (50), then (a dependency between the
 * thread's top-level ops) aten::next_step_op 1210 -> 2110 (900) */
Test(critpath, whole_trace)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    run(FIX "gpu_bound.json", 0, &o, &r);
    cr_assert_eq(r.events, 8);
    cr_assert_eq(r.step, -1);
    cr_assert_eq(r.length_ns, 950000);
    cr_assert_eq(r.nsegments, 7);
    cr_assert_str_eq(r.segments[6].name, "aten::next_step_op");
    tt_cp_result_free(&r);
}

/* HTA's own trace: HTA's numbers (tests/fixtures/hta/expected/critical_path) */
Test(critpath, hta_event_sync)
{
    const char *p =
        shared_path("hta/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz");
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    run(p, 0, &o, &r);
    cr_assert_eq(r.nsegments + 1, 59);
    cr_assert_eq(r.length_ns, 1178000);
    cr_assert_eq(r.bound_ns[TT_CP_CPU], 1025000);
    cr_assert_eq(r.bound_ns[TT_CP_GPU_COMPUTE], 124000);
    cr_assert_eq(r.bound_ns[TT_CP_KERNEL_KERNEL], 15000);
    cr_assert_eq(r.bound_ns[TT_CP_LAUNCH], 14000);
    cr_assert_eq(r.graph_nodes, 78);
    tt_cp_result_free(&r);
}

/* ---- the longest path alone ---- */

static void graph(struct cp_run *r, struct cp_node *nodes, size_t nn, struct cp_edge *e,
                  size_t ne)
{
    memset(r, 0, sizeof(*r));
    r->nodes = nodes;
    r->nnodes = nn;
    r->edges = e;
    r->nedges = ne;
}

/*
 * 0 -> 1 -> 3 and 0 -> 2 -> 3 weigh the same (5 + 5): node 3 takes its
 * first predecessor in the order the edges were added (1, then 2 when
 * 0 -> 2 -> 3 is added first); 3 -> 4 weighs 0, so the path ends at the
 * first node of greatest length in topological order: 3, not 4.
 */
Test(critpath, longest_ties)
{
    struct cp_node n[5];
    struct cp_edge e[5] = { { 0, 1, 0, CP_NONE, 5 }, { 0, 2, 0, CP_NONE, 5 },
                            { 1, 3, 0, CP_NONE, 5 }, { 2, 3, 0, CP_NONE, 5 },
                            { 3, 4, 0, CP_NONE, 0 } };
    struct cp_edge f[5] = { e[1], e[3], e[0], e[2], e[4] };
    struct cp_run r;
    memset(n, 0, sizeof(n));
    graph(&r, n, 5, e, 5);
    cr_assert_eq(tt__cp_longest(&r), 0);
    cr_assert_eq(r.npath, 3);
    cr_assert_eq(r.path[0], 0);
    cr_assert_eq(r.path[1], 1);
    cr_assert_eq(r.path[2], 3);
    free(r.path);
    graph(&r, n, 5, f, 5);
    cr_assert_eq(tt__cp_longest(&r), 0);
    cr_assert_eq(r.npath, 3);
    cr_assert_eq(r.path[1], 2);
    free(r.path);
}

Test(critpath, longest_cycle)
{
    struct cp_node n[3];
    struct cp_edge e[3] = { { 0, 1, 0, CP_NONE, 1 }, { 1, 2, 0, CP_NONE, 1 },
                            { 2, 1, 0, CP_NONE, 1 } };
    struct cp_run r;
    memset(n, 0, sizeof(n));
    graph(&r, n, 3, e, 3);
    cr_assert_eq(tt__cp_longest(&r), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "cycle"));
    free(r.path);
}

/* ---- errors ---- */

Test(critpath, errors)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    const char *bad[] = { "((" };
    o.step_set = 1;
    o.step = 9;
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_ENOTFOUND);
    cr_assert(strstr(tt_error_last()->message, "ProfilerStep#9"));
    o.step = 1;
    o.rank = 5;
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_ENOTFOUND);
    o.rank = -1;
    o.data_load = bad;
    o.ndata_load = 1;
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_EINVALID);
    o.ndata_load = 0;
    o.version = 0;
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_EINVALID);
    o.version = 1;
    cr_assert_eq(tt_critpath_file_result(FIX, &o, &r), TT_EINVALID); /* several traces */
    cr_assert(strstr(tt_error_last()->message, "--rank"));
    cr_assert_eq(r.nsegments, 0);
}

/* the overlay: the window's events, the path marked */
Test(critpath, overlay)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    char out[256], buf[8192];
    FILE *f;
    size_t n;
    tmp_path(out, sizeof(out), "ov.json");
    o.step_set = 1;
    o.step = 1;
    o.overlay = out;
    run(FIX "gpu_bound.json", 0, &o, &r);
    tt_cp_result_free(&r);
    cr_assert_not_null(f = fopen(out, "r"));
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(out);
    cr_assert(strstr(buf, "\"critical\":1"));
    cr_assert(strstr(buf, "\"name\":\"critical_path\""));
    cr_assert_null(strstr(buf, "next_step_op"));
}

/* ---- the filters: --under picks the window, --name the segments ---- */

/* --under 'ProfilerStep#1' is --step 1 (the same window); its instances by
 * start: 'ProfilerStep#.*' instance 1 is step 2 alone (aten::next_step_op:
 * 900 us), instances 0-1 the whole trace */
Test(critpath, under_picks_the_window)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    int db;
    o.filter.under = "ProfilerStep#1";
    for (db = 0; db < 2; db++) {
        run(FIX "gpu_bound.json", db, &o, &r);
        r.step = 1; /* the rest as --step 1's */
        check_gpu_bound(&r);
        cr_assert_str_eq(r.window_op, "ProfilerStep#1");
        cr_assert_eq(r.instances, 1);
        cr_assert_eq(r.path_segments, 5);
        tt_cp_result_free(&r);
    }
    o.filter.under = "ProfilerStep#.*";
    o.instance_from = o.instance_to = 1;
    run(FIX "gpu_bound.json", 0, &o, &r);
    cr_assert_str_eq(r.window_op, "ProfilerStep#2");
    cr_assert_eq(r.instances, 2);
    cr_assert_eq(r.events, 2);
    cr_assert_eq(r.length_ns, 900000);
    cr_assert_eq(r.step, -1);
    tt_cp_result_free(&r);
    o.instance_from = 0;
    run(FIX "gpu_bound.json", 0, &o, &r);
    cr_assert_eq(r.events, 8);
    cr_assert_eq(r.length_ns, 950000);
    cr_assert_eq(r.nsegments, 7);
    cr_assert_eq(r.instance_to, 1);
    tt_cp_result_free(&r);
    o.filter.under = "aten::mm"; /* a cpu_op: [110, 160] holds the two launches */
    o.instance_to = 0;
    run(FIX "gpu_bound.json", 0, &o, &r);
    cr_assert_eq(r.events, 5);
    cr_assert_eq(r.from_ns, 110000);
    cr_assert_eq(r.to_ns, 160000);
    tt_cp_result_free(&r);
}

/* --name: the segments at a gemm (its launch delay, the two kernels, the
 * delay between them); the path, its length and breakdown stay whole */
Test(critpath, name_picks_the_segments)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    int db;
    o.step_set = 1;
    o.step = 1;
    o.filter.name = "gemm";
    for (db = 0; db < 2; db++) {
        run(FIX "gpu_bound.json", db, &o, &r);
        cr_assert_eq(r.path_segments, 5);
        cr_assert_eq(r.nsegments, 4);
        cr_assert_eq(r.length_ns, 830000);
        cr_assert_eq(r.bound_ns[TT_CP_CPU], 10000);
        cr_assert_eq(r.shown_ns, 820000);
        cr_assert_eq(r.start_ns, 110000);
        cr_assert_eq(r.segments[0].kind, TT_CP_EDGE_LAUNCH_DELAY);
        cr_assert_eq(r.segments[0].from_ns, 120000);
        cr_assert_str_eq(r.segments[3].to_event, "gemm_b");
        tt_cp_result_free(&r);
    }
    o.filter.name = "^aten::mm$"; /* its own edge: from its start to its launch's */
    run(FIX "gpu_bound.json", 0, &o, &r);
    cr_assert_eq(r.nsegments, 1);
    cr_assert_eq(r.shown_ns, 10000);
    tt_cp_result_free(&r);
    o.filter.name = "nothing";
    run(FIX "gpu_bound.json", 0, &o, &r);
    cr_assert_eq(r.nsegments, 0);
    cr_assert_eq(r.length_ns, 830000);
    tt_cp_result_free(&r);
}

Test(critpath, filter_errors)
{
    tt_cp_options o = TT_CP_OPTIONS_INIT;
    tt_cp_result r;
    o.filter.under = "ProfilerStep#.*";
    o.instance_from = o.instance_to = 2; /* two match: 0 and 1 */
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_ENOTFOUND);
    cr_assert(strstr(tt_error_last()->message, "2 ops match"), "%s", tt_error_last()->message);
    o.instance_from = 1;
    o.instance_to = 0;
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_EINVALID);
    o.instance_from = o.instance_to = 0;
    o.filter.under = "no such op";
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_ENOTFOUND);
    cr_assert(strstr(tt_error_last()->message, "no such op"));
    o.filter.under = "ProfilerStep#1";
    o.step_set = 1;
    o.step = 1;
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_EINVALID);
    o.step_set = 0;
    o.filter.under = "((";
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_EINVALID);
    o.filter.under = NULL;
    o.filter.name = "gemm";
    o.version = 1; /* version 1 knows no --name */
    cr_assert_eq(tt_critpath_file_result(FIX "gpu_bound.json", &o, &r), TT_EINVALID);
    cr_assert_eq(r.nsegments, 0);
}
