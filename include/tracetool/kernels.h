/*
 * tracetool/kernels.h - the GPU kernel / memory-operation summaries (Nsight shapes).
 */
#ifndef TRACETOOL_KERNELS_H
#define TRACETOOL_KERNELS_H

#include <stdio.h>

#include "tracetool/filter.h"
#include "tracetool/store.h"

TT_BEGIN_DECL

/*
 * by: the first four group the kernel summary (the memory summary beside it
 * is by kind); the last three are Nsight's other reports instead:
 * TT_KERN_BY_RUNTIME one summary of the CUDA/HIP runtime and driver calls
 * by name (cuda_api_sum), TT_KERN_BY_MEMSIZE the memory operations by kind
 * with the statistics of their sizes (cuda_gpu_mem_size_sum),
 * TT_KERN_BY_ACTIVITY no summary: one row per kernel, memcpy and memset by
 * start (cuda_gpu_trace; tt_kernels_*_activities). TT_KERN_BY_SEQUENCE (options
 * version >= 3): the most frequent sequences of GPU activities instead
 * (tt_kern_seq; seq_len, seq_op).
 */
enum { TT_KERN_BY_NAME = 0, TT_KERN_BY_LAUNCH, TT_KERN_BY_STREAM, TT_KERN_BY_OP,
       TT_KERN_BY_RUNTIME, TT_KERN_BY_MEMSIZE, TT_KERN_BY_ACTIVITY, TT_KERN_BY_SEQUENCE };
enum { TT_KERN_BOTH = 0, TT_KERN_KERNELS, TT_KERN_MEMORY };
/* the longest sequence counted on streams (TT_KERN_BY_SEQUENCE, seq_op NULL) */
#define TT_KERN_SEQ_MAX 1024

typedef struct tt_kern_options {
    unsigned int version;
    int64_t trace_id;  /* 0 = every trace */
    int64_t rank;      /* -1 = every rank */
    int by;            /* TT_KERN_BY_* (above) */
    int what;          /* TT_KERN_*: kernels, memcpy/memset, or both (TT_KERN_BY_ACTIVITY:
                          the activities listed; not for BY_RUNTIME, BY_MEMSIZE) */
    int64_t row_limit; /* -1 = all (rows per summary, or per trace of activities) */
    tt_output_format format;        /* TT_AVG_TABLE, TT_AVG_CSV, TT_AVG_JSON or TT_AVG_MARKDOWN */
    /*
     * version >= 3, TT_KERN_BY_SEQUENCE: seq_op NULL: every run of seq_len
     * (1..TT_KERN_SEQ_MAX) consecutive GPU activities (kernels, memcpys,
     * memsets) on a stream, counted by their names; else HTA's
     * get_frequent_cuda_kernel_sequences: under each outermost CPU op whose
     * name contains seq_op, the names of the activities it launched, in
     * start order, when there are at least seq_len of them. Of the filter
     * below, the time range applies (an op by its start); from version 4
     * on, --name and --under too: only the activities that pass are in the
     * streams and under the ops (the ops themselves by the time range only).
     */
    int64_t seq_len;
    const char *seq_op;
    /* version >= 2: only what was launched in ProfilerStep#step_from..#step_to
     * (a GPU activity by its runtime call's start, its own start without
     * one; a runtime call by its start), as breakdown's --steps */
    int steps_set;
    int64_t step_from, step_to;
    /* version >= 3: only the kernels, memcpys and memsets (--by runtime:
     * the runtime calls) that pass the filters (tracetool/filter.h): name
     * their own, time and --under by their launching runtime call */
    tt_filter filter;
} tt_kern_options;
#define TT_KERN_OPTIONS_INIT \
    { .version = 4, .rank = -1, .by = TT_KERN_BY_NAME, .what = TT_KERN_BOTH, \
     .row_limit = -1, .format = TT_FORMAT_TABLE, .filter = TT_FILTER_INIT }

/*
 * One group of a summary (durations in ns, from gpu_ops.dur or runtime.dur).
 * Medians of an even count are the mean of the two middle values; standard
 * deviations are the sample's (n - 1), 0 for one value, as Nsight's.
 */
typedef struct tt_kern_row {
    char *name;         /* the group: kernel name, name + launch, "device D stream S",
                           CPU op, runtime call, or "memcpy HtoD" etc. for memory
                           operations */
    int64_t instances, total_ns, min_ns, max_ns; /* (BY_MEMSIZE: instances only) */
    int64_t bytes;      /* sum of args bytes (memory operations; else 0) */
    double avg_ns, med_ns, stddev_ns; /* stddev: sample (n - 1); 0 for one instance */
    double time_pct;    /* share of the summary's total_ns */
    double gb_per_s;    /* bytes / total_ns */
    /* TT_KERN_BY_MEMSIZE only: the sizes (args bytes) of the `instances`
     * operations with one; `bytes` is their sum */
    int64_t min_bytes, max_bytes;
    double avg_bytes, med_bytes, stddev_bytes;
    /* TT_KERN_BY_OP kernels: the launch delay (kernel start - its runtime
     * call's start, HTA's runtime_delay) of the `launches` kernels that
     * have a call; 0 (avg NaN) when none has */
    int64_t launches, delay_min_ns, delay_max_ns;
    double delay_avg_ns;
} tt_kern_row;

/* One sequence of GPU activities (TT_KERN_BY_SEQUENCE), over its occurrences. */
typedef struct tt_kern_seq {
    char *pattern;      /* the activities' names joined by '|'; under seq_op, the op's
                           name first (HTA's pattern) */
    char *ops;          /* the CPU ops that launched them, joined by '|' ("[no CPU op]"
                           for none), as in the earliest occurrence; under seq_op, the op */
    int64_t length;     /* activities in the sequence */
    int64_t count;      /* occurrences */
    int64_t gpu_ns;     /* sum of the activities' durations, over the occurrences */
    int64_t cpu_ns;     /* streams: sum of the durations of the runtime calls that
                           launched them; under seq_op: sum of the op's durations */
} tt_kern_seq;

typedef struct tt_kern_summary {
    int64_t trace_id;
    char *path;
    int memory;         /* 0: kernels (or runtime calls), 1: memcpy/memset */
    int by;             /* TT_KERN_BY_* it was made with: BY_RUNTIME (memory 0) the
                           runtime calls, BY_MEMSIZE (memory 1) the sizes */
    int64_t total_ns;   /* over all groups (BY_MEMSIZE: 0) */
    int64_t total_bytes; /* BY_MEMSIZE: over all groups; else 0 */
    int64_t ngroups;    /* groups, also those past row_limit */
    tt_kern_row *rows;  /* largest total first (BY_MEMSIZE: most bytes), then name;
                           at most row_limit */
    size_t nrows;
    /* BY_SEQUENCE (rows NULL, ngroups: distinct sequences): most frequent first,
       then pattern; at most row_limit */
    tt_kern_seq *seqs;
    size_t nseqs;
} tt_kern_summary;

typedef struct tt_kern_result {
    tt_kern_summary *summaries; /* per trace (rank, id order): kernels, then memory;
                                   BY_RUNTIME, BY_MEMSIZE: one per trace */
    size_t nsummaries;
} tt_kern_result;

/* Compute the summaries without printing; free with tt_kern_result_free.
 * TT_KERN_BY_RUNTIME / BY_MEMSIZE: TT_ENOTFOUND when no selected trace has a
 * runtime call / a memcpy or memset with a size; BY_ACTIVITY: TT_EINVALID. */
TT_EXTERN(int) tt_kernels_db_result(tt_db *db, const tt_kern_options *opts,
                                    tt_kern_result *res);
TT_EXTERN(int) tt_kernels_file_result(const char *path, const tt_kern_options *opts,
                                      tt_kern_result *res);
/* NULL-safe; leaves *res empty. */
TT_EXTERN(void) tt_kern_result_free(tt_kern_result *res);
/* Print a result (opts->format) as tt_kernels_db prints it: opts are those it
 * was made with. */
TT_EXTERN(int) tt_kern_result_print(const tt_kern_result *res, const tt_kern_options *opts,
                                    FILE *out);

/* A cell the trace did not have (tt_kern_activity). */
#define TT_KERN_NULL INT64_MIN

/* One GPU activity (TT_KERN_BY_ACTIVITY), Nsight's cuda_gpu_trace row. The
 * strings live until the callback returns; absent numbers are TT_KERN_NULL. */
typedef struct tt_kern_activity {
    int64_t trace_id;
    const char *kind;       /* "kernel", "memcpy" or "memset" */
    const char *name;
    int64_t start_ns, dur_ns; /* ts as stored (the trace's clock), dur */
    int64_t correlation;
    int64_t grid[3], block[3];
    int64_t registers;      /* per thread */
    int64_t shared_mem;     /* bytes per block (static + dynamic, as Kineto writes it) */
    int64_t bytes;          /* memcpy / memset */
    const char *copy_kind;  /* "HtoD", "DtoH", "DtoD", "Device", ...; NULL for kernels */
    const char *src_kind, *dst_kind; /* "Pageable", "Device", ... from "(Pageable -> Device)"
                                        in a memcpy's name; NULL without */
    int64_t device, context, stream;
} tt_kern_activity;

/* Non-zero from the callback stops the walk and is returned. */
typedef int (*tt_kern_activity_fn)(void *ctx, const tt_kern_activity *a);

/*
 * Each kernel, memcpy and memset (opts->what) of the selected traces (rank,
 * id order), by start then order in the file, at most row_limit per trace:
 * streamed from SQLite or read from the file as it comes, memory does not
 * grow with the trace (no database is made of a file). TT_ENOTFOUND when
 * there is none.
 */
TT_EXTERN(int) tt_kernels_db_activities(tt_db *db, const tt_kern_options *opts,
                                        tt_kern_activity_fn fn, void *ctx);
TT_EXTERN(int) tt_kernels_file_activities(const char *path, const tt_kern_options *opts,
                                          tt_kern_activity_fn fn, void *ctx);

/* Compute and print (opts->format; TT_KERN_BY_ACTIVITY: the activities). */
TT_EXTERN(int) tt_kernels_db(tt_db *db, const tt_kern_options *opts, FILE *out);
TT_EXTERN(int) tt_kernels_file(const char *path, const tt_kern_options *opts, FILE *out);

TT_END_DECL

#endif
