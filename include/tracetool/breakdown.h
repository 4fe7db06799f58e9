/*
 * tracetool/breakdown.h - `tracetool breakdown`: where the GPU time goes,
 * rank by rank (HTA's temporal breakdown, idle time breakdown,
 * communication / computation overlap and kernel launch statistics).
 *
 * Per trace (rank) and device, over the window from the first GPU activity
 * (kernel, memcpy, memset) to the end of the last one:
 *   busy          length of the union of every activity interval
 *   idle          window - busy, split as HTA's get_idle_time_breakdown:
 *                 host wait (the activities that end an idle gap were
 *                 launched, by their runtime call, after the gap began),
 *                 kernel wait (else, a gap under kernel_wait_ns), other
 *   compute       union of the kernels that are not communication
 *   comm          union of the communication kernels: NCCL / RCCL / HCCL,
 *                 the collectives of NVSHMEM, multimem and custom all-reduce
 *                 implementations (formats/kineto.h, tt_kineto_is_comm), and
 *                 the names that match options.comm_patterns
 *   memory        union of memcpy and memset
 *   overlap       comm intersected with compute (= comm + compute - the
 *                 union of both); exposed comm = comm - overlap; overlap %
 *                 = overlap / comm (HTA's get_comm_comp_overlap)
 * plus, per kernel family (tt_kernel_family) and per CPU op that launched
 * the work (gpu_ops.op_id), GPU time spread over ranks, steps or streams,
 * and launch delay (kernel start - runtime call start) and runtime-call
 * duration percentiles, with the worst launches named.
 *
 * A trace file is read without a database (the rows of the ingest, one
 * trace at a time; a directory's files in turn): one trace's GPU activities
 * and runtime calls are held while it is read (about 150 bytes a kernel),
 * then folded per device in start order into running unions; percentiles
 * keep 16 bytes a launch. README.md, "tracetool breakdown", gives every
 * definition.
 */
#ifndef TRACETOOL_BREAKDOWN_H
#define TRACETOOL_BREAKDOWN_H

#include <stdio.h>

#include "tracetool/analyze.h"
#include "tracetool/common.h"
#include "tracetool/filter.h"

TT_BEGIN_DECL

/* TT_BD_BY_ANNOTATION (options version >= 3): instead of the breakdown, GPU
 * time per gpu_user_annotation (tt_bd_annot) */
enum { TT_BD_BY_RANK = 0, TT_BD_BY_STEP, TT_BD_BY_STREAM, TT_BD_BY_ANNOTATION };

/* HTA's consecutive_kernel_delay (30), which HTA compares with its
 * microsecond timestamps: 30 us */
#define TT_BD_KERNEL_WAIT_NS 30000
/* launches named in tt_bd_result.worst */
#define TT_BD_WORST 10
/* bins of the launch-delay histogram: under 1 us, then [2^(i-1), 2^i) us,
 * the last one also holding the longer delays (over 1 s) */
#define TT_BD_HIST 22

typedef struct tt_bd_options {
    unsigned int version;
    int64_t trace_id;        /* 0 = every Chrome/Kineto trace */
    int64_t rank;            /* -1 = every rank */
    int steps_set;           /* only activities launched in ProfilerStep#A..#B */
    int64_t step_from, step_to;
    int by;                  /* TT_BD_BY_*: the second table, and the units the
                                family and op spreads are taken over */
    /* version >= 3, TT_BD_BY_ANNOTATION: 0: the annotations' own durations;
     * 1: the kernels, memcpys and memsets under each (the innermost one).
     * Of the filter below, the time range applies (an annotation by its
     * start); from version 4 on --name and --under too: without --kernels
     * the annotations whose name matches / whose CPU user_annotation lies
     * under the op; with it the activities that match / were launched
     * under the op (the annotations they fall under are not filtered) */
    int annot_kernels;
    int64_t kernel_wait_ns;  /* an idle gap under this (not host wait) is kernel wait */
    int64_t row_limit;       /* rows per table; -1 = all */
    tt_output_format format;              /* TT_FORMAT_TABLE, TT_FORMAT_CSV, TT_FORMAT_JSON, TT_FORMAT_MARKDOWN */
    /* version >= 2: kernels whose name matches one of these POSIX extended
     * regular expressions (searched anywhere in the name, case-sensitive) are
     * communication too, besides the built-in rule; NULL with 0: none. A bad
     * one fails the computation (TT_EINVALID); tt_bd_comm_pattern_check
     * tells beforehand. */
    const char *const *comm_patterns;
    size_t ncomm_patterns;
    /* version >= 3: only the GPU activities that pass the filters
     * (tracetool/filter.h) count: name their own, time and --under by their
     * launching runtime call; a bad expression fails (TT_EINVALID) */
    tt_filter filter;
} tt_bd_options;
#define TT_BD_OPTIONS_INIT \
    { .version = 4, .rank = -1, .by = TT_BD_BY_RANK, .kernel_wait_ns = TT_BD_KERNEL_WAIT_NS, \
     .row_limit = -1, .format = TT_FORMAT_TABLE, .filter = TT_FILTER_INIT }

/* One row: a rank's device, one step of it or one stream of it. Times in
 * ns on the trace's clock. */
typedef struct tt_bd_row {
    int64_t trace_id;
    int64_t rank;            /* -1: the trace has none */
    int64_t device;          /* -1: none in the trace */
    int64_t stream;          /* stream rows; else -1 */
    int64_t step;            /* step rows: the ProfilerStep number; else -1 */
    int64_t steps;           /* rank rows: steps with GPU activity */
    double step_ns;          /* rank rows: median GPU span of those steps (the
                                window when there are none); else NaN */
    int64_t start_ns, end_ns, window_ns;
    int64_t busy_ns, idle_ns, compute_ns, comm_ns, memory_ns;
    int64_t overlap_ns, exposed_comm_ns;
    double busy_pct;         /* busy / window; NaN for an empty window */
    double overlap_pct;      /* overlap / comm; NaN without communication */
    int64_t host_wait_ns, kernel_wait_ns, other_idle_ns; /* sum to idle_ns */
    int64_t kernels, comm_kernels, memory_ops;
} tt_bd_row;

enum { TT_BD_COMPUTE = 0, TT_BD_COMM, TT_BD_MEMORY };

/* GPU time of one kernel family, spread over the units of `by`. */
typedef struct tt_bd_family {
    char *family;            /* tt_kernel_family(); memcpy/memset: "memcpy HtoD" */
    int cls;                 /* TT_BD_COMPUTE, TT_BD_COMM or TT_BD_MEMORY */
    int64_t count, total_ns;
    /* the family's total per unit (rank rows, step rows or stream rows;
       0 where it has none): */
    int64_t min_ns, max_ns;
    double median_ns;
    size_t max_row;          /* the unit with max_ns: index into ranks (by rank)
                                or rows */
} tt_bd_family;

/* GPU time launched by one CPU op name: the activities whose runtime call
 * lies in an op of that name (gpu_ops.op_id, the innermost cpu_op enclosing
 * the call on its thread), spread over the units of `by` as the families */
typedef struct tt_bd_op {
    char *op;                /* the op's name; "(no op)": activities without one */
    int64_t count, total_ns; /* activities, sum of their durations */
    int64_t min_ns, max_ns;  /* the op's total per unit (0 where it has none) */
    double median_ns;
    size_t max_row;          /* the unit with max_ns, as tt_bd_family.max_row */
} tt_bd_op;

#define TT_BD_NO_OP "(no op)"

/* Launch statistics of one family (activities with a runtime call).
 * Percentiles interpolate linearly between the two nearest ranks (numpy's
 * default, Python's statistics.quantiles(method='inclusive')). */
typedef struct tt_bd_launch {
    char *family;
    int cls;
    int64_t count;           /* launches (activities with a runtime call) */
    double delay_p50_ns, delay_p95_ns;
    int64_t delay_max_ns;    /* kernel start - runtime call start */
    int64_t runtime_count;   /* of those, calls with a duration */
    double runtime_p50_ns, runtime_p95_ns;
    int64_t runtime_max_ns;
    int64_t worst_trace_id, worst_rank; /* where delay_max_ns happened */
} tt_bd_launch;

/* One of the launches with the largest delay. */
typedef struct tt_bd_worst {
    int64_t delay_ns, runtime_ns; /* runtime_ns -1: the call has no duration */
    int64_t trace_id, rank, device, stream;
    int64_t ts_ns;           /* the activity's start */
    char *name, *family, *runtime; /* the activity, its family, the runtime call */
} tt_bd_worst;

/*
 * GPU time of one gpu_user_annotation name on one rank (TT_BD_BY_ANNOTATION),
 * as HTA's get_gpu_user_annotation_breakdown: the annotations' own durations;
 * with annot_kernels, HTA's get_gpu_kernels_with_user_annotations: the
 * durations of the activities whose innermost annotation (the shortest one
 * on their pid/tid that overlaps them) has that name.
 */
typedef struct tt_bd_annot {
    int64_t trace_id, rank; /* rank -1: the trace has none */
    char *name;             /* TT_BD_NO_ANNOT: activities under none */
    int64_t count;          /* annotations (annot_kernels: activities) */
    int64_t gpu_ns, min_ns, max_ns; /* sum, min, max of their durations */
    double mean_ns, std_ns; /* std: sample (n - 1), 0 for one */
} tt_bd_annot;

#define TT_BD_NO_ANNOT "(no annotation)"

typedef struct tt_bd_result {
    int by;
    int64_t kernel_wait_ns;
    int steps_set;
    int64_t step_from, step_to;
    tt_bd_row *ranks;        /* by trace (rank, id order) and device */
    size_t nranks;
    tt_bd_row *rows;         /* by step / stream: per rank and device, by step / stream */
    size_t nrows;
    size_t traces;           /* traces analysed */
    size_t no_gpu;           /* of them, traces left out: no GPU activity (in the steps) */
    /* across rank rows: max / median of step_ns and of compute_ns (NaN with
       a zero median), and the row of the maximum ((size_t)-1: no rows) */
    double step_skew, compute_skew;
    size_t slowest, most_compute;
    tt_bd_family *families;  /* largest total first (then name) */
    size_t nfamilies;
    tt_bd_op *ops;           /* largest total first (then name) */
    size_t nops;
    tt_bd_launch *launches;  /* largest p95 delay first (then family) */
    size_t nlaunches;
    tt_bd_worst worst[TT_BD_WORST]; /* largest delay first */
    size_t nworst;
    int64_t delay_hist[TT_BD_HIST]; /* launches of every family by delay (tt_bd_hist_lo_ns) */
    /* TT_BD_BY_ANNOTATION (the tables above empty): by rank (trace id), then
     * gpu_ns (largest first), then name */
    int annot_kernels;
    tt_bd_annot *annots;
    size_t nannots;
} tt_bd_result;

/* the smallest delay of histogram bin i (0 for the first) */
TT_EXTERN(int64_t) tt_bd_hist_lo_ns(size_t i);
/* The page of `breakdown --html` (tracetool/render.h): each rank's window as
 * a stacked bar, the launch-delay histogram, the numbers. title: the input. */
TT_EXTERN(int) tt_breakdown_html(const tt_bd_result *res, const char *title, const char *path);

/* 0 when pattern is a POSIX extended regular expression; else TT_EINVALID
 * with regerror's words in err (cap bytes, NUL-terminated) */
TT_EXTERN(int) tt_bd_comm_pattern_check(const char *pattern, char *err, size_t cap);

/* Compute without printing; free with tt_bd_result_free (also after an
 * error). A file is read without a database unless its links need the SQL
 * passes of an ingest (then, and for "-", through a temporary one); a
 * directory: every trace file under it, in turn. TT_ENOTFOUND when no
 * trace has GPU activity. */
TT_EXTERN(int) tt_breakdown_db_result(tt_db *db, const tt_bd_options *opts, tt_bd_result *res);
TT_EXTERN(int) tt_breakdown_file_result(const char *path, const tt_bd_options *opts,
                                        tt_bd_result *res);
/* NULL-safe; leaves *res empty. */
TT_EXTERN(void) tt_bd_result_free(tt_bd_result *res);

/* Print a result (opts->format, opts->row_limit). */
TT_EXTERN(int) tt_breakdown_print(const tt_bd_result *res, const tt_bd_options *opts, FILE *out);
/* Compute and print. */
TT_EXTERN(int) tt_breakdown_db(tt_db *db, const tt_bd_options *opts, FILE *out);
TT_EXTERN(int) tt_breakdown_file(const char *path, const tt_bd_options *opts, FILE *out);

TT_END_DECL

#endif
