/*
 * tracetool/critpath.h - the critical path of one rank's step (HTA's
 * critical path analysis, docs/HTA_critpath.md).
 *
 * The events of the window (the slice ProfilerStep#N of the chosen trace,
 * or the whole trace) make a graph: a start and an end node per CPU op,
 * runtime call and GPU activity; edges along each thread's call stacks,
 * between the runtime calls that share the CUDA runtime lock, from a
 * launch to its kernel (launch delay) or from one kernel to the next on a
 * stream (kernel-kernel delay), and the synchronisations (cudaEventRecord
 * then cudaStreamWaitEvent: GPU -> GPU; Event Sync, Stream Sync, Context
 * Sync: GPU -> CPU). An edge weighs the time between its nodes (dependency
 * and sync edges nothing, a negative weight 0). The critical path is the
 * longest path of that graph (a DAG), found by one pass in topological
 * order; each of its edges is put in a category as HTA's bound_by.
 */
#ifndef TRACETOOL_CRITPATH_H
#define TRACETOOL_CRITPATH_H

#include <stdio.h>

#include "tracetool/filter.h"
#include "tracetool/store.h"

TT_BEGIN_DECL

typedef struct tt_cp_options {
    unsigned int version;   /* 2 (1: no filter.name nor filter.under, no instances) */
    int64_t trace_id;       /* 0: the one trace of the input (several: an error) */
    int64_t rank;           /* -1: any */
    int step_set;           /* 1: the window is the slice ProfilerStep#step */
    int64_t step;
    /* its time range limits the window; version >= 2: under picks the
     * window (the span of an op whose whole name matches, instance_from
     * below), name the segments listed (those at an event whose name has a
     * match; the path is the whole window's) */
    tt_filter filter;
    tt_output_format format; /* TT_FORMAT_TABLE, _CSV, _JSON or _MARKDOWN */
    /* HTA's data_load_events: CPU events whose name has a match of one of
     * these POSIX extended regular expressions are nodes of the graph, and
     * their time on the path is data_loading instead of cpu_bound */
    const char *const *data_load;
    size_t ndata_load;
    /* not NULL: the trace's window written there (Chrome trace JSON, .gz
     * gzipped) with the path marked: args.critical = 1 on its events, and
     * "critical_path" flows between the path's consecutive events */
    const char *overlay;
    /* version >= 2, filter.under: the window is the span of the matching
     * ops number instance_from..instance_to (by start, the first is 0;
     * HTA's instance_id): from the first one's start to the latest end of
     * them, on every thread. Not with step_set. */
    int64_t instance_from, instance_to;
} tt_cp_options;
#define TT_CP_OPTIONS_INIT \
    { .version = 2, .rank = -1, .filter = TT_FILTER_INIT, .format = TT_FORMAT_TABLE }

/* what bounds an edge of the path (HTA's bound_by); TT_CP_NONE: a
 * dependency or sync edge (weight 0), HTA's "" */
enum { TT_CP_NONE = 0, TT_CP_CPU, TT_CP_DATA_LOADING, TT_CP_GPU_COMPUTE, TT_CP_GPU_COMM,
       TT_CP_KERNEL_KERNEL, TT_CP_LAUNCH, TT_CP_NBOUND };
/* the kind of an edge (HTA's CPEdgeType) */
enum { TT_CP_EDGE_OPERATOR = 0, TT_CP_EDGE_DEPENDENCY, TT_CP_EDGE_LAUNCH_DELAY,
       TT_CP_EDGE_KERNEL_KERNEL, TT_CP_EDGE_SYNC };

/* "cpu_bound", "data_loading", ..., "" for TT_CP_NONE */
TT_EXTERN(const char *) tt_cp_bound_name(int bound);
/* "operator", "dependency", "launch_delay", "kernel_kernel_delay", "sync" */
TT_EXTERN(const char *) tt_cp_edge_name(int kind);

/* one edge of the path, in path order (filter.name: those listed) */
typedef struct tt_cp_segment {
    int64_t from_ns, to_ns; /* its two nodes' times (trace clock, ns) */
    const char *from_event, *to_event; /* the events of its two nodes */
    int from_end, to_end;        /* 1: the node is its event's end, 0: start */
    int kind;               /* TT_CP_EDGE_* */
    int bound;              /* TT_CP_* */
    int64_t ns;             /* its weight */
    /* the event the time belongs to (HTA's attribution): an operator
     * edge's event, or the op enclosing the gap between two of its
     * children; a kernel-kernel delay's first kernel; NULL for the others */
    const char *name;
    int gpu;                /* name is a GPU activity: stream is set */
    int64_t pid, tid, stream;
} tt_cp_segment;

typedef struct tt_cp_result {
    int64_t trace_id;
    char *path;
    int have_rank;
    int64_t rank;
    int64_t step;           /* -1: the whole trace */
    int64_t from_ns, to_ns; /* the window (both included; INT64_MIN / MAX: open) */
    int64_t length_ns;      /* the path's length: the sum of its weights */
    int64_t bound_ns[TT_CP_NBOUND]; /* the path's time by TT_CP_* */
    tt_cp_segment *segments;
    size_t nsegments;       /* the path has path_segments + 1 nodes (below) */
    char **names;           /* the distinct event names the segments point into */
    size_t nnames;
    size_t graph_nodes, graph_edges; /* nodes with an edge, and edges */
    size_t events;          /* events of the window */
    /* filter.under: the op whose span is the window (the first instance's
     * name; NULL: none), the instances taken and how many ops match */
    char *window_op;
    int64_t instance_from, instance_to, instances;
    /* the path itself: its edges (filter.name: segments holds those at an
     * event whose name matches; else nsegments), its first node's time
     * (the segments' offsets are from it), the weights of the segments */
    size_t path_segments;
    int64_t start_ns;
    int64_t shown_ns;
} tt_cp_result;

/* The critical path of the selected trace; free with tt_cp_result_free.
 * TT_ENOTFOUND: no trace selected, no ProfilerStep#N in it, or nothing in
 * the window; TT_EINVALID: several traces selected, or the graph has a
 * cycle (the message says which). */
TT_EXTERN(int) tt_critpath_db_result(tt_db *db, const tt_cp_options *opts, tt_cp_result *res);
TT_EXTERN(int) tt_critpath_file_result(const char *path, const tt_cp_options *opts,
                                       tt_cp_result *res);
/* NULL-safe; leaves *res empty */
TT_EXTERN(void) tt_cp_result_free(tt_cp_result *res);

/* Print a result (opts->format): the breakdown, then the segments. */
TT_EXTERN(int) tt_critpath_print(const tt_cp_result *res, const tt_cp_options *opts, FILE *out);

/* Compute and print. */
TT_EXTERN(int) tt_critpath_db(tt_db *db, const tt_cp_options *opts, FILE *out);
TT_EXTERN(int) tt_critpath_file(const char *path, const tt_cp_options *opts, FILE *out);

TT_END_DECL

#endif
