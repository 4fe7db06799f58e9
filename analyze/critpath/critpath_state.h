/*
 * analyze/critpath/critpath_state.h - what the files of `tracetool
 * critical-path` share (internal to libtracetool):
 *   critpath_read.c   the rows of one trace (the record stream) into spills,
 *                     the window, its events into memory, the queue lengths
 *   critpath_graph.c  the graph of the window (HTA's CPGraph): nodes, edges
 *   critpath_path.c   the longest path, the result
 *   critpath_overlay.c the window written with the path marked
 *   critpath.c        the public calls, the trace chosen, printing
 */
#ifndef TT_ANALYZE_CRITPATH_STATE_H
#define TT_ANALYZE_CRITPATH_STATE_H

#include "tracetool/critpath.h"
#include "common/i64map.h"
#include "common/spill.h"
#include "store/ingest_rows.h"

#include <regex.h>

/* an event's kind */
enum { CP_SLICE = 0, CP_RUNTIME, CP_GPU, CP_SYNC };

/* what a string is, for the rules (bits of cp_read.sflags) */
enum {
    CPS_CPU_OP = 1u << 0,     /* a category: cpu_op, Operator */
    CPS_ANNOT = 1u << 1,      /* a category: user_annotation */
    CPS_LOCK = 1u << 2,       /* a call that takes the CUDA runtime lock */
    CPS_BLOCKING = 1u << 3,   /* a call that blocks (cudaStreamSynchronize, ...) */
    CPS_RECORD = 1u << 4,     /* cudaEventRecord */
    CPS_FORWARD = 1u << 5,    /* has "forward" */
    CPS_AUTOGRAD = 1u << 6,   /* has "autograd" */
    CPS_DATA_LOAD = 1u << 7,  /* matches a data_load pattern */
    CPS_EVENT_SYNC = 1u << 8, /* the cuda_sync events, by name */
    CPS_STREAM_WAIT = 1u << 9,
    CPS_STREAM_SYNC = 1u << 10,
    CPS_CONTEXT_SYNC = 1u << 11,
    CPS_STEP = 1u << 12,      /* the chosen step's name: "ProfilerStep#N" */
    CPS_COMM = 1u << 13,      /* a communication kernel's name */
    CPS_NAME = 1u << 14,      /* has a match of filter.name (given) */
    CPS_UNDER = 1u << 15,     /* is a whole name filter.under matches (given) */
};

#define CP_NONE (-1) /* no event, node */

/* one event (a spill record, then one of the window's) */
struct cp_ev {
    int64_t ts, dur;          /* ns */
    int64_t id;               /* slice id, runtime id, or the GPU row's number */
    int64_t name, cat;        /* string ids (0: none) */
    int64_t pid, tid;
    int64_t corr;             /* correlation (-1: none) */
    int64_t rt, rt_ts;        /* a GPU row: its runtime call's id (0: none), start */
    int64_t device, stream;   /* a GPU row (-1: none) */
    int64_t wait_stream, wait_corr; /* a sync row: wait_on_stream,
                                       wait_on_cuda_event_record_corr_id (-1: none) */
    int32_t kind;             /* CP_* */
    int32_t pad;
};

/* what the analysis knows of a window event besides its row */
struct cp_info {
    int32_t start, end;       /* its nodes (CP_NONE: none) */
    int32_t rt;               /* a GPU row: its runtime call's event; a runtime call:
                                 the GPU activity it launched (CP_NONE) */
    int32_t parent;           /* a CPU event: its parent on the call stack (CP_NONE) */
    int32_t child, next;      /* its first child, its next sibling (CP_NONE) */
    int32_t sync_src;         /* a kernel: the kernel a Stream Wait Event makes it wait for */
    unsigned nf, cf;          /* its name's and its category's flags (CPS_*) */
    int64_t tid;              /* the thread its call stack is on (remapped) */
    int64_t q_launch, q_start; /* queue length on its stream after its launch, its start
                                  (INT64_MIN: unknown) */
};

/* a node: an event's start or end */
struct cp_node {
    int64_t ts;
    int32_t ev;
    int32_t end;              /* 1: the end */
};

/* an edge */
struct cp_edge {
    int32_t u, v;
    int32_t kind;             /* TT_CP_EDGE_* */
    int32_t attr;             /* the event its time belongs to (CP_NONE) */
    int64_t w;                /* weight (ns; >= 0) */
};

/* a stream's last kernel (the kernels' pass) */
struct cp_stream {
    int64_t device, stream;
    int32_t last;             /* its last kernel's end node */
};

/* one trace's analysis */
struct cp_run {
    const tt_cp_options *o;
    const regex_t *data_load; /* compiled o->data_load (n: ndata_load) */
    struct tt__flt *fl;       /* filter.name and .under (NULL: neither; not owned) */
    /* strings: all of the trace's, by id */
    char **strs;
    unsigned *sflags;
    size_t nstrs, astrs;
    struct i64map sid;        /* string id -> index */
    /* the rows as they come */
    struct cp_link *ln;       /* GPU rows' links to come: ln[hln..nln) */
    size_t hln, nln, aln;
    int64_t gpu_rows;
    tt__spill *evs;           /* every event that may be in the window (struct cp_ev) */
    tt__spill *queue;         /* launches and starts, by stream then time (struct cp_q) */
    int have_step;            /* the chosen step's slice: the first by start */
    int64_t step_ts, step_end;
    tt__spill *inst;          /* filter.under: the matching ops (struct cp_inst) */
    int64_t win_name, ninst;  /* the window's op (string id), how many matched */
    tt__rows_result rres;     /* the trace's format, rank (metadata freed) */
    /* the window */
    int64_t from_ns, to_ns;   /* both included */
    struct cp_ev *ev;         /* its events, by kind then id */
    struct cp_info *in;
    size_t nev;
    /* the graph */
    struct cp_node *nodes;
    size_t nnodes;
    struct cp_edge *edges;
    size_t nedges, aedges;
    struct i64map edge_at;    /* (u, v) -> edge index */
    struct cp_stream *streams;
    size_t nstreams, astreams;
    struct i64map stream_at;  /* (device, stream) -> index */
    /* the path: node ids in order */
    int32_t *path;
    size_t npath;
    size_t graph_nodes;       /* nodes with an edge */
};

/* critpath_read.c */
/* read trace `id` of db, or the file path (db NULL), into r (made empty
 * first); r->rres gets its format and rank */
int tt__cp_read(struct cp_run *r, const char *path, tt_db *db, int64_t id);
/* the window of o and its events into memory, with their queue lengths;
 * TT_ENOTFOUND when the step is not in the trace, or the window is empty */
int tt__cp_window(struct cp_run *r, const char *src);
/* the text of string id ("" when unknown), and its flags */
const char *tt__cp_str(const struct cp_run *r, int64_t id);
unsigned tt__cp_sflags(const struct cp_run *r, int64_t id);
void tt__cp_run_release(struct cp_run *r);

/* critpath_graph.c: the graph of the window's events */
int tt__cp_graph(struct cp_run *r);

/* critpath_path.c: the longest path (TT_EINVALID: a cycle), and the
 * result from it */
int tt__cp_longest(struct cp_run *r);
int tt__cp_result(const struct cp_run *r, tt_cp_result *res);
/* edge u -> v (NULL: none) */
const struct cp_edge *tt__cp_edge(const struct cp_run *r, int32_t u, int32_t v);
/* the bound of an edge (TT_CP_*) */
int tt__cp_bound(const struct cp_run *r, const struct cp_edge *e);

/* critpath_overlay.c: the window with the path marked, to o->overlay */
int tt__cp_overlay(const struct cp_run *r, const char *path);

#endif
