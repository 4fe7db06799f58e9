/*
 * tracetool/analyze.h - the SQLite trace store and what is computed from it.
 *
 * A tt_db is one SQLite file holding any number of traces (schema in
 * docs/SCHEMA.md, versioned with PRAGMA user_version). tt_ingest_file() reads
 * one trace, Execution Trace or memory-timeline export into it atomically: on
 * any failure the database is left exactly as it was.
 */
#ifndef TRACETOOL_ANALYZE_H
#define TRACETOOL_ANALYZE_H

#include <stdio.h>

#include "tracetool/common.h"
#include "tracetool/formats.h"

TT_BEGIN_DECL

#define TT_SCHEMA_VERSION 2

typedef struct tt_db tt_db;

enum { TT_DB_READONLY = 1, TT_DB_CREATE = 2 };

/* Open (and with TT_DB_CREATE create or upgrade) a database. */
TT_EXTERN(int) tt_db_open(tt_db **out, const char *path, unsigned flags);
/* NULL is a no-op. */
TT_EXTERN(void) tt_db_free(tt_db *db);
/* A database of any input: `path` itself (read-only) when it is a database;
 * a trace file, "-" (standard input) or a directory of per-rank traces read
 * into a temporary database, removed again by tt_db_free. What the commands
 * use when an input must be a database (a directory, --rank or --trace on a
 * file). TT_ENOTFOUND for a directory without traces; errors name path. */
TT_EXTERN(int) tt_db_open_input(tt_db **out, const char *path);
/* 1 if `path` is a regular file that starts with the SQLite file header, 0
 * otherwise; never opens anything but a regular file (a FIFO is read once). */
TT_EXTERN(int) tt_is_sqlite_file(const char *path);

enum {
    TT_INGEST_REPLACE = 1, /* replace a trace with the same content hash */
    TT_INGEST_SALVAGE = 2  /* keep the complete events of a truncated file */
};

typedef struct tt_ingest_options {
    unsigned int version;
    unsigned int flags;
    tt_progress_fn progress; /* may be NULL */
    void *progress_payload;
    /* version >= 2, may be NULL: called with progress_payload as each phase
     * after the read begins ("linking GPU activities", ...; "" when done) */
    void (*phase)(void *payload, const char *what);
} tt_ingest_options;
#define TT_INGEST_OPTIONS_VERSION 2
#define TT_INGEST_OPTIONS_INIT { TT_INGEST_OPTIONS_VERSION, 0, NULL, NULL, NULL }

typedef struct tt_ingest_result {
    int64_t trace_id;       /* id in table traces */
    int64_t replaced_id;    /* id of the replaced trace, 0 if none */
    tt_read_stats stats;    /* what the reader saw */
    int64_t rows;           /* rows written */
    int64_t unmatched_end;  /* 'E' events without a 'B' */
    int64_t no_phase;       /* events without "ph" (skipped) */
    int64_t linked_runtime; /* runtime calls linked to a CPU op */
    int64_t linked_gpu;     /* GPU activities linked to a runtime call */
    double seconds;
} tt_ingest_result;

/*
 * Ingest one file. Returns 0; TT_EEXISTS when the same content is already in
 * the database (unless TT_INGEST_REPLACE); TT_ETRUNCATED for a truncated
 * file (unless TT_INGEST_SALVAGE, which stores the complete events and marks
 * the trace truncated); or another error. On error nothing is written.
 */
TT_EXTERN(int) tt_ingest_file(tt_db *db, const char *path,
                              const tt_ingest_options *opts,
                              tt_ingest_result *res);

/* ---- info ---- */

typedef struct tt_info_options {
    unsigned int version;
    int64_t trace_id; /* 0 = all traces */
    int json;         /* 1: one JSON document instead of text */
    /* version >= 2: */
    int format;       /* TT_AVG_TABLE/CSV/JSON/MARKDOWN (json = 1 is JSON too):
                         CSV is one row per trace of the summary's numbers */
    int64_t row_limit; /* rows of the categories table; -1 = all */
} tt_info_options;
#define TT_INFO_OPTIONS_INIT { 2, 0, 0, 0, -1 }

/* Events of one phase and category. */
typedef struct tt_info_category {
    char ph;
    char *cat;          /* NULL when the events have none */
    int64_t count;
} tt_info_category;

/* GPU activities on one device and stream. */
typedef struct tt_info_stream {
    int64_t device, stream, activities;
} tt_info_stream;

/* What `tracetool info` shows for one trace. */
typedef struct tt_info_summary {
    char *path;
    int64_t trace_id;       /* 0 when read straight from a file */
    char *format;           /* tt_format_name(); NULL if unknown */
    char *schema_version;   /* NULL when absent */
    int gzip, truncated;
    int64_t bytes;          /* file size */
    int have_rank, have_world_size, have_pid, have_span;
    int64_t rank, world_size, pid;
    int64_t base_time_ns, start_ns, end_ns; /* span: events' ts .. ts + dur, as written */
    int64_t events;
    tt_info_category *categories; /* most events first, then ph, then cat */
    size_t ncategories;
    tt_info_stream *streams;      /* by device, then stream */
    size_t nstreams;
    int64_t devices;              /* distinct devices among streams */
    int64_t cpu_threads;          /* distinct (pid, tid) of CPU slices */
    /* features: how many of each */
    int64_t shapes, memory_events, rf_ids, flows, gpu_kernels, python_functions, et_nodes,
        memtl_rows;
    int64_t repaired, skipped;    /* values repaired / elements skipped by the reader */
} tt_info_summary;

typedef struct tt_info_result {
    tt_info_summary *traces;
    size_t ntraces;
} tt_info_result;

/* The summaries of an ingested database (opts->trace_id or every trace, by id)
 * and of a trace file (one); free with tt_info_result_free. */
TT_EXTERN(int) tt_info_db_result(tt_db *db, const tt_info_options *opts, tt_info_result *res);
TT_EXTERN(int) tt_info_file_result(const char *path, const tt_info_options *opts,
                                   tt_info_result *res);
/* NULL-safe; leaves *res empty. */
TT_EXTERN(void) tt_info_result_free(tt_info_result *res);

/* One trace of a database in the rank overview that `info` starts with when
 * the database holds several traces. */
typedef struct tt_info_rank {
    int64_t trace_id;
    char *path;
    int have_rank, have_world_size, have_span;
    int64_t rank, world_size;
    int64_t device;   /* the device most of its GPU activities ran on; -1: none */
    char *gpu;        /* that device's name in deviceProperties (else the first
                         entry's); NULL when the trace has none */
    int64_t steps;    /* distinct ProfilerStep#N annotations */
    int64_t start_ns, end_ns, events;
} tt_info_rank;

typedef struct tt_info_ranks {
    tt_info_rank *rows; /* by rank (unknown ranks last), then trace id */
    size_t n;
} tt_info_ranks;

TT_EXTERN(int) tt_info_ranks_db(tt_db *db, tt_info_ranks *out);
/* NULL-safe; leaves *r empty. */
TT_EXTERN(void) tt_info_ranks_free(tt_info_ranks *r);

/* Print a per-trace summary of an ingested database to `out`; with several
 * traces (and no trace_id), the rank overview first (not in CSV). */
TT_EXTERN(int) tt_info_db(tt_db *db, const tt_info_options *opts, FILE *out);
/* Read a trace file (streaming, no database) and print the same summary. */
TT_EXTERN(int) tt_info_file(const char *path, const tt_info_options *opts,
                             FILE *out);

/* ---- key averages (torch's key_averages().table()) ---- */

enum { TT_AVG_TABLE = 0, TT_AVG_CSV, TT_AVG_JSON, TT_AVG_MARKDOWN };

typedef struct tt_avg_options {
    unsigned int version;
    int64_t trace_id;      /* 0 = every Chrome/Kineto trace */
    int64_t rank;          /* -1 = every rank */
    int group_by_shape;    /* key_averages(group_by_input_shape=True) */
    const char *sort_by;   /* torch's sort keys; NULL = first-occurrence order */
    int64_t row_limit;     /* -1 = all rows */
    int top_level_only;    /* table(top_level_events_only=True) */
    int steps_set;         /* only events starting inside ProfilerStep#N, */
    int64_t step_from, step_to; /* step_from <= N <= step_to */
    int format;            /* TT_AVG_* */
    int header_per_trace;  /* print "trace N (rank R): path" above each table */
    /* key_averages(group_by_stack_n=N): an op's Python stack from its "Call
     * stack" arg, else from the python_function events around it; 0 = off */
    int64_t group_by_stack;
    /* version >= 2: leave out the rows of GPU user annotations (torch shows
     * them, with a Self CUDA % against a total that excludes them) */
    int hide_gpu_annotations;
    /* version >= 3: also collect each trace's collapsed stacks
     * (tt_avg_trace.stacks, for tt_averages_write_stacks) */
    int collect_stacks;
} tt_avg_options;
#define TT_AVG_OPTIONS_INIT { 3, 0, -1, 0, NULL, 100, 0, 0, 0, 0, TT_AVG_TABLE, 0, 0, 0, 0 }

/* 1 if k is a sort key torch accepts (or NULL). */
TT_EXTERN(int) tt_avg_sort_key_valid(const char *k);
/* Key averages of the traces of an ingested database. */
TT_EXTERN(int) tt_averages_db(tt_db *db, const tt_avg_options *opts, FILE *out);
/* Key averages of a trace file (ingested into a temporary database first). */
TT_EXTERN(int) tt_averages_file(const char *path, const tt_avg_options *opts, FILE *out);

/* The same computed without printing: one tt_avg_trace per trace. */
enum { TT_AVG_DEV_CPU = 0, TT_AVG_DEV_CUDA = 1 };

typedef struct tt_avg_row {
    char *name;            /* after the ProfilerStep#N -> ProfilerStep* rewrite */
    char *input_shapes;    /* with group_by_shape: Python repr "[[2, 3], []]"; else NULL */
    char *stack;           /* with group_by_stack: the first N entries, '\n'-joined; else NULL */
    int device;            /* TT_AVG_DEV_*: a CPU event or a GPU activity */
    int is_user_annotation; /* of the first event (device rows: gpu_user_annotation) */
    int has_parent;        /* the first event had a parent (top_level_only hides the row) */
    int64_t count;
    double self_cpu_us, cpu_total_us, self_device_us, device_total_us;
    int64_t cpu_mem, self_cpu_mem, device_mem, self_device_mem; /* bytes */
} tt_avg_row;

/*
 * One collapsed stack of a trace (torch's export_stacks, summed): the CPU ops
 * (and runtime calls) that ran under the same Python stack with the same
 * name. Ops without a stack are not in the list.
 */
typedef struct tt_avg_stack {
    char *frames;          /* the stack, root (outermost frame) first, '\n'-joined */
    char *name;            /* the op (after the ProfilerStep#N -> ProfilerStep* rewrite) */
    int64_t count;         /* events */
    int64_t self_cpu_ns;   /* sum of self CPU time (torch's self_cpu_time_total) */
    int64_t self_device_ns; /* sum of the device time of the op's own kernels,
                               memcpys, memsets (self_cuda_time_total) */
} tt_avg_stack;

/* where a trace's stacks came from (tt_avg_trace.stack_source, bits); 0: none */
enum { TT_AVG_STACKS_CALL_STACK = 1, TT_AVG_STACKS_PYTHON = 2 };

typedef struct tt_avg_trace {
    int64_t trace_id;      /* 1 for a file read without a database */
    char *path;
    int have_rank;
    int64_t rank;
    int show_memory;       /* profile_memory or [memory] events: the table's memory columns */
    tt_avg_row *rows;      /* every row in the table's order (sort_by, else first
                              occurrence); row_limit and top_level_only are the printer's */
    size_t nrows;
    double self_cpu_total_us;    /* footer: "Self CPU time total" */
    double self_device_total_us; /* footer: "Self CUDA time total" (no GPU annotations) */
    /* with group_by_stack or collect_stacks: TT_AVG_STACKS_* seen (0: the trace
     * has no "Call stack" args and no python_function events) */
    int stack_source;
    tt_avg_stack *stacks;  /* with collect_stacks: by frames, then name */
    size_t nstacks;
    /* with steps_set: the trace's ProfilerStep#N, steps_n of them, numbered
     * steps_lo..steps_hi (0 when it has none) */
    int64_t steps_lo, steps_hi, steps_n;
} tt_avg_trace;

typedef struct tt_avg_result {
    tt_avg_trace *traces;  /* in the printed order (rank, id) */
    size_t ntraces;
    int header_per_trace;  /* the table prints "trace N (rank R): path" above each */
} tt_avg_result;

TT_EXTERN(int) tt_averages_compute_db(tt_db *db, const tt_avg_options *opts,
                                      tt_avg_result **out);
TT_EXTERN(int) tt_averages_compute_file(const char *path, const tt_avg_options *opts,
                                        tt_avg_result **out);
/* Print a result as tt_averages_db/_file do (format, row_limit, top_level_only,
 * group_by_shape of opts; opts should be those it was computed with). */
TT_EXTERN(int) tt_averages_print(const tt_avg_result *res, const tt_avg_options *opts,
                                 FILE *out);
/* NULL is a no-op. */
TT_EXTERN(void) tt_avg_result_free(tt_avg_result *res);

/* the value of tt_averages_write_stacks's lines */
enum { TT_AVG_STACKS_SELF_CPU = 0, TT_AVG_STACKS_SELF_DEVICE = 1 };
/*
 * Write the collapsed stacks of a result computed with collect_stacks to path,
 * whole or not at all: one line per stack and op, "frame;frame;...;op value"
 * (root first; in each frame and the op ' ', ';', tab and newline become '_',
 * as torch's export_stacks writes them), the value the op's self CPU time
 * (TT_AVG_STACKS_SELF_CPU) or own device time in whole microseconds, lines
 * whose value rounds to 0 left out: the input of flamegraph.pl and speedscope.
 * With several traces each stack starts with a frame "rank R" (or "trace N").
 */
TT_EXTERN(int) tt_averages_write_stacks(const tt_avg_result *res, int metric, const char *path);

/* ---- GPU kernel / memory-operation summary (Nsight cuda_gpu_kern_sum shape) ---- */

/*
 * by: the first four group the kernel summary (the memory summary beside it
 * is by kind); the last three are Nsight's other reports instead:
 * TT_KERN_BY_RUNTIME one summary of the CUDA/HIP runtime and driver calls
 * by name (cuda_api_sum), TT_KERN_BY_MEMSIZE the memory operations by kind
 * with the statistics of their sizes (cuda_gpu_mem_size_sum),
 * TT_KERN_BY_ACTIVITY no summary: one row per kernel, memcpy and memset by
 * start (cuda_gpu_trace; tt_kernels_*_activities).
 */
enum { TT_KERN_BY_NAME = 0, TT_KERN_BY_LAUNCH, TT_KERN_BY_STREAM, TT_KERN_BY_OP,
       TT_KERN_BY_RUNTIME, TT_KERN_BY_MEMSIZE, TT_KERN_BY_ACTIVITY };
enum { TT_KERN_BOTH = 0, TT_KERN_KERNELS, TT_KERN_MEMORY };

typedef struct tt_kern_options {
    unsigned int version;
    int64_t trace_id;  /* 0 = every trace */
    int64_t rank;      /* -1 = every rank */
    int by;            /* TT_KERN_BY_* (above) */
    int what;          /* TT_KERN_*: kernels, memcpy/memset, or both (TT_KERN_BY_ACTIVITY:
                          the activities listed; not for BY_RUNTIME, BY_MEMSIZE) */
    int64_t row_limit; /* -1 = all (rows per summary, or per trace of activities) */
    int format;        /* TT_AVG_TABLE, TT_AVG_CSV, TT_AVG_JSON or TT_AVG_MARKDOWN */
    /* version >= 2: only what was launched in ProfilerStep#step_from..#step_to
     * (a GPU activity by its runtime call's start, its own start without
     * one; a runtime call by its start), as breakdown's --steps */
    int steps_set;
    int64_t step_from, step_to;
} tt_kern_options;
#define TT_KERN_OPTIONS_INIT { 2, 0, -1, TT_KERN_BY_NAME, TT_KERN_BOTH, -1, TT_AVG_TABLE, 0, 0, 0 }

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
} tt_kern_row;

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
 * streamed from SQLite, memory does not grow with the trace (a file is
 * first read into a temporary database). TT_ENOTFOUND when there is none.
 */
TT_EXTERN(int) tt_kernels_db_activities(tt_db *db, const tt_kern_options *opts,
                                        tt_kern_activity_fn fn, void *ctx);
TT_EXTERN(int) tt_kernels_file_activities(const char *path, const tt_kern_options *opts,
                                          tt_kern_activity_fn fn, void *ctx);

/* Compute and print (opts->format; TT_KERN_BY_ACTIVITY: the activities). */
TT_EXTERN(int) tt_kernels_db(tt_db *db, const tt_kern_options *opts, FILE *out);
TT_EXTERN(int) tt_kernels_file(const char *path, const tt_kern_options *opts, FILE *out);

/* ---- memory timeline (torch's export_memory_timeline, from the trace) ---- */

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
} tt_memtl_options;
#define TT_MEMTL_OPTIONS_INIT { 2, 0, -1, NULL, 0, NULL, NULL, NULL }

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
