/*
 * tracetool/averages.h - torch's key_averages().table() from a trace file or a database.
 */
#ifndef TRACETOOL_AVERAGES_H
#define TRACETOOL_AVERAGES_H

#include <stdio.h>

#include "tracetool/filter.h"
#include "tracetool/store.h"

TT_BEGIN_DECL

/* the earlier names of tt_output_format's first four */
#define TT_AVG_TABLE TT_FORMAT_TABLE
#define TT_AVG_CSV TT_FORMAT_CSV
#define TT_AVG_JSON TT_FORMAT_JSON
#define TT_AVG_MARKDOWN TT_FORMAT_MARKDOWN

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
    tt_output_format format; /* TT_FORMAT_TABLE, _CSV, _JSON or _MARKDOWN */
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
    /* version >= 4: only the events that pass the filters (tracetool/filter.h)
     * are counted in the rows, each with the numbers it has in the whole
     * trace (its self time still net of every child): ops and runtime calls
     * by their own name, start and thread, GPU activities by their name and
     * launching runtime call, [memory] by its time and thread */
    tt_filter filter;
} tt_avg_options;
#define TT_AVG_OPTIONS_INIT \
    { .version = 4, .rank = -1, .row_limit = 100, .format = TT_FORMAT_TABLE, \
      .filter = TT_FILTER_INIT }

/* 1 if k is a sort key torch accepts (or NULL). */
TT_EXTERN(int) tt_avg_sort_key_valid(const char *k);
/* Key averages of the traces of an ingested database. */
TT_EXTERN(int) tt_averages_db(tt_db *db, const tt_avg_options *opts, FILE *out);
/* Key averages of a trace file (streamed; read twice when its rows need the
 * passes of an ingest, never through a database). */
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

TT_END_DECL

#endif
