/*
 * tracetool/memtimeline.h - torch's export_memory_timeline, from the trace.
 */
#ifndef TRACETOOL_MEMTIMELINE_H
#define TRACETOOL_MEMTIMELINE_H

#include <stdio.h>

#include "tracetool/filter.h"
#include "tracetool/store.h"

TT_BEGIN_DECL

typedef struct tt_memtl_options {
    unsigned int version;
    int64_t trace_id;     /* 0 = the first trace with memory events */
    int64_t rank;         /* -1 = any */
    const char *device;   /* c10's "cuda:N", "cpu", "hip:N", ... (tt_device_parse);
                             NULL = the device with the most [memory] events */
    int no_categories;    /* plain per-device totals */
    const char *et_path;  /* file input: the trace's Execution Trace, joined by
                             the crosscheck rules to name tensors (NULL: none) */
    /* version >= 2, may be NULL: told what a user should know of a result
     * (the categories cover less than half of the peak); one line, no
     * newline */
    void (*warn)(void *ctx, const char *message);
    void *warn_ctx;
    /* version >= 3: the filters (tracetool/filter.h): --name and --under
     * choose blocks by their allocation (the op around it: its name; inside
     * an --under op on its thread), each with its free, and then leave the
     * allocator's totals out; --time-range keeps the events in the range, as
     * if the trace had been taken over it. A raw export ignores them. */
    tt_filter filter;
    /* version >= 4, may be NULL: with OUTPUT "-", the JSON goes to this
     * stream instead of standard output (what tt_call writes it into) */
    FILE *json_stream;
} tt_memtl_options;
#define TT_MEMTL_OPTIONS_INIT \
    { .version = 4, .rank = -1, .filter = TT_FILTER_INIT }

/* Write the timeline; the format follows OUTPUT's suffix as torch's
 * export_memory_timeline does (.json, .json.gz, .raw.json.gz, .html) plus
 * .png, and "-" for JSON on standard output. */
TT_EXTERN(int) tt_memtimeline_db(tt_db *db, const tt_memtl_options *opts, const char *output);
TT_EXTERN(int) tt_memtimeline_file(const char *path, const tt_memtl_options *opts,
                                   const char *output);

/* What tt_memtimeline_compute() finds: torch's timeline and its peak. */
#define TT_MEMTL_NCOL 9   /* a sizes row: baseline (always 0) + the 8 TT_CAT_* */
#define TT_MEMTL_TOP_N 15 /* rows of the peak table */

typedef struct tt_memtl_block {
    int64_t addr;
    int64_t bytes;
    int64_t t_us;     /* allocation time, µs (as the series' times; -1 before the trace) */
    char *op;         /* enclosing op at allocation, "" if none */
    int category;     /* TT_CAT_* (tracetool/render.h) */
    const char *rule; /* which heuristic gave the category (static text) */
} tt_memtl_block;

typedef struct tt_memtl_result {
    char device[32];  /* "cuda:0", "cpu", ... */
    int categories;   /* 0 with no_categories: everything is Unknown */
    /* torch's timeline coalesced per µs, as .json holds it: n points,
     * sizes[i * TT_MEMTL_NCOL + 1 + TT_CAT_*] bytes live at t_us[i]; the
     * first time is the earliest one when the first point is PREEXISTING */
    size_t n;
    int64_t *t_us;
    int64_t *sizes;
    int64_t peak_total;  /* the largest sum of a point's categories (0: none above 0) */
    int64_t peak_point;  /* the first point with it, -1 if none */
    int64_t peak_unknown; /* of peak_total, the Unknown category's bytes */
    int64_t final_total; /* the sum of the last point's categories */
    /* memory live before the trace and never freed in it: the allocator's
     * Total Allocated less the blocks the timeline knows (0 when the trace
     * has no totals). It is in Unknown from the first (PREEXISTING) point, so
     * each point's sum is the allocator's total, as torch's timeline holds
     * such tensors; the plot draws it as its own band. */
    int64_t before;
    /* the allocator's own view (Total Allocated / Reserved of the [memory]
     * events; 0 when the trace has none) and the first event at its peak */
    int64_t peak_allocated, peak_reserved;
    int64_t peak_t_us;   /* the allocated peak, else the peak point (-1: preexisting) */
    char *peak_op;       /* the peak event's enclosing op / ProfilerStep#N, "" if none */
    char *peak_step;
    /* the largest blocks live just after the allocated peak's event, largest first */
    size_t n_top;
    tt_memtl_block top[TT_MEMTL_TOP_N];
    /* the plot's copy: at most two points (lowest, highest) per time bucket
     * and the allocator's highest sample per bucket; times in µs from plot_t0 */
    int64_t plot_t0;
    size_t plot_n;
    int64_t *plot_t_us;
    int64_t *plot_sizes;
    size_t n_alloc;
    int64_t *alloc_t_us, *allocated, *reserved;
} tt_memtl_result;

/* Compute the timeline of the first matching trace of DB (the trace and
 * device chosen as tt_memtimeline_db() does) into *result, to be released
 * with tt_memtl_result_free() (also after a failure). */
TT_EXTERN(int) tt_memtimeline_compute(tt_db *db, const tt_memtl_options *opts,
                                      tt_memtl_result *result);
/* NULL is a no-op. */
TT_EXTERN(void) tt_memtl_result_free(tt_memtl_result *result);

TT_END_DECL

#endif
