/*
 * tests/unit/test_bd_diff_spill.c - breakdown and diff hold their rows in
 * spills (common/spill.h), not in memory: with a tiny memory limit (every
 * spill writes to its temporary file and merges) they print the same as
 * with the default one, on real shared traces; and on a generated trace of
 * N and 4N repeated steps the most records any spill held in memory is the
 * same bound.
 */
#include "common/compat.h"
#include "common/spill.h"
#include "tracetool/breakdown.h"
#include "tracetool/diff.h"

#include "shared_data.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(bd_diff_spill, .timeout = 300);

#define TINY 4096 /* bytes a spill may hold: 256 records of 16 bytes, fewer of more */

/* breakdown of path (by: TT_BD_BY_*) as JSON, malloc'd */
static char *breakdown_json(const char *path, int by)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    o.by = by;
    o.format = TT_FORMAT_JSON;
    cr_assert_eq(tt_breakdown_file(path, &o, f), 0, "%s: %s", path, tt_error_last()->message);
    fclose(f);
    return buf;
}

/* diff of base vs new as JSON, malloc'd */
static char *diff_json(const char *base, const char *new_)
{
    tt_diff_options o = TT_DIFF_OPTIONS_INIT;
    tt_diff_side *b = NULL, *n = NULL;
    tt_diff_result r;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cr_assert_eq(tt_diff_side_load(&base, 1, &o, 0, &b), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_diff_side_load(&new_, 1, &o, 1, &n), 0, "%s", tt_error_last()->message);
    memset(&r, 0, sizeof(r));
    cr_assert_eq(tt_diff_compare(b, n, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_diff_write(&r, &o, TT_FORMAT_JSON, f), 0);
    fclose(f);
    tt_diff_result_free(&r);
    tt_diff_side_free(b);
    tt_diff_side_free(n);
    return buf;
}

static uint64_t spilled_since_reset(size_t *peak)
{
    uint64_t n;
    size_t p;
    tt__spill_stats(&n, &p);
    if (peak)
        *peak = p;
    return n;
}

Test(bd_diff_spill, breakdown_same_when_spilled)
{
    const char *paths[2];
    int by, k;
    paths[0] = strdup(shared_path("hta/trace_diff/test/test.json.gz"));
    paths[1] = strdup(shared_path("param/resnet_pair/resnet_kineto.json.gz"));
    for (k = 0; k < 2; k++)
        for (by = TT_BD_BY_RANK; by <= TT_BD_BY_STREAM; by++) {
            char *mem, *disk;
            tt__spill_set_limit(0);
            tt__spill_stats_reset();
            mem = breakdown_json(paths[k], by);
            cr_assert_eq(spilled_since_reset(NULL), 0, "the default limit spilled");
            tt__spill_set_limit(TINY);
            disk = breakdown_json(paths[k], by);
            tt__spill_set_limit(0);
            cr_assert_gt(spilled_since_reset(NULL), 0, "nothing spilled");
            cr_assert_str_eq(disk, mem, "%s by %d", paths[k], by);
            free(mem);
            free(disk);
        }
    free((char *)paths[0]);
    free((char *)paths[1]);
}

Test(bd_diff_spill, diff_same_when_spilled)
{
    char *base = strdup(shared_path("hta/trace_diff/control/control.json.gz"));
    char *new_ = strdup(shared_path("hta/trace_diff/test/test.json.gz"));
    char *mem, *disk;
    tt__spill_set_limit(0);
    tt__spill_stats_reset();
    mem = diff_json(base, new_);
    cr_assert_eq(spilled_since_reset(NULL), 0, "the default limit spilled");
    tt__spill_set_limit(TINY);
    disk = diff_json(base, new_);
    tt__spill_set_limit(0);
    cr_assert_gt(spilled_since_reset(NULL), 0, "nothing spilled");
    cr_assert_str_eq(disk, mem);
    free(mem);
    free(disk);
    free(base);
    free(new_);
}

/* a trace of nsteps steps, each a cpu_op launching 8 kernels (and a memcpy)
 * through runtime calls, with memory events */
static char *repeated_trace(int nsteps, const char *tag)
{
    static char path[2][96];
    char *p = path[tag[0] == 'b'];
    FILE *f;
    int s, k, corr = 1;
    snprintf(p, 96, "/tmp/tt_spill_%d_%s.json", (int)getpid(), tag);
    cr_assert(f = fopen(p, "w"));
    fputs("{\"traceEvents\": [\n", f);
    for (s = 0; s < nsteps; s++) {
        long t0 = (long)s * 1000;
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\","
                   " \"pid\": 1, \"tid\": 1, \"ts\": %ld, \"dur\": 900},\n", s + 1, t0);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1,"
                   " \"tid\": 1, \"ts\": %ld, \"dur\": 500},\n", t0 + 1);
        for (k = 0; k < 9; k++, corr++) {
            long ts = t0 + 2 + k * 40;
            fprintf(f, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1,"
                       " \"tid\": 1, \"ts\": %ld, \"dur\": 5, \"args\": {\"correlation\": %d}},\n",
                    k < 8 ? "cudaLaunchKernel" : "cudaMemcpyAsync", ts, corr);
            fprintf(f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0,"
                       " \"tid\": 7, \"ts\": %ld, \"dur\": 20, \"args\": {\"device\": 0,"
                       " \"stream\": 7, \"correlation\": %d}},\n",
                    k < 8 ? "kernel" : "gpu_memcpy",
                    k < 8 ? "gemm_kernel" : "Memcpy HtoD (Pageable -> Device)", ts + 10 + k % 3,
                    corr);
        }
        fprintf(f, "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\":"
                   " \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": %ld, \"args\": {\"Device Type\":"
                   " 1, \"Device Id\": 0, \"Total Allocated\": %d, \"Total Reserved\": %d,"
                   " \"Bytes\": 4}},\n", t0 + 3, 1000 + s % 7, 4096);
    }
    fputs("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\":"
          " \"x\"}}]}\n", f);
    fclose(f);
    return p;
}

/* the most records a spill held in memory over a breakdown and a diff of
 * a generated trace of nsteps steps, with the tiny limit */
static size_t peak_for(int nsteps, const char *tag)
{
    char *path = repeated_trace(nsteps, tag), *a, *b;
    size_t peak;
    tt__spill_set_limit(TINY);
    tt__spill_stats_reset();
    a = breakdown_json(path, TT_BD_BY_STEP);
    b = diff_json(path, path);
    tt__spill_set_limit(0);
    cr_assert_gt(spilled_since_reset(&peak), 0);
    free(a);
    free(b);
    unlink(path);
    return peak;
}

Test(bd_diff_spill, peak_bounded_n_vs_4n)
{
    size_t p1 = peak_for(500, "a"), p4 = peak_for(2000, "b");
    /* the buffer (at most TINY / 16 records) and 64 read-ahead buffers of
     * a 64th of it, whatever the number of rows */
    size_t bound = TINY / 16 + 65 * (TINY / 16 / 64);
    cr_assert_leq(p1, bound, "N: peak %zu", p1);
    cr_assert_leq(p4, bound, "4N: peak %zu", p4);
}
