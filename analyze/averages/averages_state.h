/*
 * analyze/averages/averages_state.h - what the averages sources share (internal
 * to libtracetool):
 *   averages.c         the database scan, the results, the public entry points
 *   averages_tree.c    the pass: per-thread trees, memory, the aggregate
 *   averages_sort.c    the records' order: sorted runs, spilled and merged
 *   averages_stream.c  a trace file read without a database
 *   averages_print.c   torch's table, CSV, JSON and Markdown
 *   averages_stacks.c  Python stacks: frames, stack nodes, the collapsed stacks
 */
#ifndef TT_ANALYZE_AVERAGES_INTERNAL_H
#define TT_ANALYZE_AVERAGES_INTERNAL_H

#include "common/compat.h"
#include "common/i64map.h"
#include "store/ingest_rows.h"
#include "tracetool/analyze.h"

#include <pthread.h>
#include <stdio.h>

/* ---- aggregated rows ---- */

enum { DEV_CPU = TT_AVG_DEV_CPU, DEV_CUDA = TT_AVG_DEV_CUDA };

struct row {
    int64_t name;    /* string id (after the ProfilerStep rewrite) */
    int64_t shapes;  /* string id of Input Dims when grouping by shape, else 0 */
    int64_t stack;   /* local stack id when grouping by stack, else 0 */
    int device;      /* DEV_CPU / DEV_CUDA */
    int is_user_annotation;
    int has_parent;  /* of the first event (for --top-level-only) */
    int seen;        /* has_parent is set */
    int64_t count;
    double cpu_total, self_cpu, dev_total, self_dev; /* us */
    int64_t cpu_mem, self_cpu_mem, dev_mem, self_dev_mem;
    size_t order;    /* first occurrence */
};

struct agg {
    struct row *rows;
    size_t n, alloc;
    size_t *slots; /* hash: row index + 1 */
    size_t nslots;
};

/* ---- CPU event frames ---- */

struct ev_first {
    int64_t name, shapes, stack, full, start, end, kernels_ns;
    int64_t child_cpu_ns, child_dev_ns, child_mem[2], mem[2];
    int64_t dev_total_ns;
    int nchildren, has_parent, is_user_annotation;
    int out;                /* the filters left it out: EV_OUT_* */
};

struct ev {
    int64_t name, shapes, stack;
    int64_t full;           /* its whole Python stack (a stack node; 0: none) */
    int64_t own;            /* the same before the backward rule (its Python ancestors) */
    int64_t seq;            /* Sequence number (-1: none) */
    int bw_node;            /* a backward function (torch's BACKWARD_FUNCTION scope) */
    int fwd_tid;            /* "Fwd thread id" > 0 */
    int under_bw;           /* it or an ancestor is one */
    int64_t start, end;     /* ns */
    int64_t kernels_ns;     /* own linked device time */
    int64_t mem_start[2];   /* running memory totals (cpu, device) before start */
    int64_t mem_end[2];     /* ... at end; set when the end is passed */
    int have_end_mem;
    int has_parent;
    int is_user_annotation;
    int out;                /* the filters left it out: EV_OUT_* */
    /* children */
    int nchildren;
    int64_t child_cpu_ns, child_dev_ns;
    int64_t child_mem[2];
    /* the first child, held back for the same-name collapse */
    int have_first;
    struct ev_first first;
    size_t heap_pos; /* index in the end-heap, or SIZE_MAX when out */
    uint64_t serial;
    struct ev *parent; /* the enclosing frame at push time */
    int closed;        /* popped from its thread stack: finished once its end is passed */
};

struct thread_stack {
    int64_t pid_i, tid_i;
    char *pid_s, *tid_s;
    int pid_is_str, tid_is_str, pid_null, tid_null;
    uint64_t hash;
    struct ev **frames;
    size_t n, alloc;
    /* with stacks: the open python_function events of the thread */
    struct pyframe *py;
    size_t npy, apy;
    struct i64map fwd; /* Sequence number -> the first forward op's stack node */
};

struct pyframe {
    int64_t end;  /* ns */
    int64_t node; /* the stack up to and with this frame */
};

/* ---- Python stacks (averages_stacks.c) ---- */

/* a stack node: the stack of its parent node plus one frame; id = index + 1 */
struct snode {
    int64_t parent; /* node id, 0 = the root (empty stack) */
    int64_t frame;  /* index into stacks.fr */
    int64_t key;    /* memo: the group-by key's stack id (s->stacks) + 1, 0 = not yet */
};

/* collapsed stacks: (node, name) -> sums */
struct cstack {
    int64_t node, name, count, self_cpu_ns, self_dev_ns;
};

/* a stack entry's text, interned */
struct sframe {
    char *text;
    size_t len;
    int keep; /* 0: torch's _filter_stack_entry drops it */
};

struct stacks {
    struct sframe *fr;
    size_t nf, af;
    size_t *fslots, nfslots; /* hash of the texts: index + 1 */
    struct i64map fname;     /* python_function name id -> frame index */
    struct snode *nodes;
    size_t nn, an;
    size_t *nslots, nnslots; /* hash of (parent, frame): index + 1 */
    struct i64map fwd_any;   /* Sequence number -> first forward stack of any thread */
    struct i64map fwd_thread; /* Sequence number -> the thread (index) of that op */
    struct cstack *cs;
    size_t ncs, acs;
    size_t *cslots, ncslots; /* hash of (node, name): index + 1 */
    int source;              /* TT_AVG_STACKS_* seen */
    int has_py;              /* the trace has python_function events */
};

/* a pid or tid as stored: NULL, an integer or a string (not NUL-terminated) */
struct tkey {
    int is_null, is_str;
    int64_t i;
    const char *str;
    size_t len;
};

/* strings by id, for a pass without a database (ids 1, 2, ... in order) */
struct memstr {
    char **s;
    size_t n, alloc;
};

/* string id of a pass without a database, NULL when out of range */
static inline const char *tt__avg_mem_string(const struct memstr *ms, int64_t id)
{
    return id >= 1 && (size_t)id <= ms->n ? ms->s[id - 1] : NULL;
}

/* int64 -> small int, open addressing (name classes by string id) */
struct idmap {
    int64_t *keys;
    signed char *vals;
    size_t n, nslots;
};

struct state {
    const struct memstr *ms; /* the stream's strings, by id */
    const tt_avg_options *o;
    struct agg agg;
    struct thread_stack *threads;
    size_t nthreads, athreads;
    size_t *tslots, ntslots; /* hash of threads by (pid, tid): index + 1 */
    /* heap of open events by end time, for memory totals at their end */
    struct ev **heap;
    size_t nheap, aheap;
    int64_t mem_total[2], mem_lt[2], mem_ts;
    int have_mem_ts;
    struct ev *free_list;
    uint64_t serial;
    int64_t step_name; /* string id of "ProfilerStep*" (0 until needed) */
    char **stacks;     /* distinct first-N stack entries ('\n'-joined); id = index + 1 */
    size_t nstacks, astacks;
    size_t *sslots, nsslots; /* hash of stacks: index + 1 */
    struct idmap names;      /* name class by string id (database pass) */
    int64_t steps_lo, steps_hi, steps_n; /* the trace's ProfilerStep#N (with --steps) */
    int any_memory;
    int want_stacks;         /* group_by_stack or collect_stacks */
    struct stacks stk;
    double hidden_self_cpu, hidden_self_dev; /* us of the AREC_HIDE events (the totals) */
};

/* ---- the records of the pass, in torch's order ---- */

struct arec {
    int64_t ts, end, id, name;
    int64_t a;      /* kind 0: shapes id; 2: device type; 3: 1 for a GPU annotation */
    int64_t b;      /* kind 0: own device time (ns); 2: bytes */
    int64_t stack;  /* kind 0: the stack node of its "Call stack" (0: none) */
    int64_t seq;    /* kind 0: Sequence number (-1: none) */
    int32_t kind;   /* KIND_PY, 0 op, 1 runtime call, 2 [memory], 3 GPU activity */
    int32_t thread; /* kinds 0 and 1: index into state.threads */
    int32_t flags;  /* kind 0: AREC_* */
    int32_t pad;
};

enum {
    AREC_USER_ANNOTATION = 1, /* an op of cat user_annotation */
    AREC_DEVICE_WORK = 2,     /* not an op: device time (b) of op id (fs_kernel) */
    AREC_FWD_TID = 4,         /* kind 0: "Fwd thread id" > 0 */
    AREC_OUT = 8,             /* outside --time-range / --under: not counted at all */
    AREC_HIDE = 16            /* in them, but not --name's: in the totals only */
};

/* struct ev.out: counted, left out (AREC_OUT), in the totals only (AREC_HIDE) */
enum { EV_OUT_NO = 0, EV_OUT_SCOPE = 1, EV_OUT_NAME = 2 };

/* a python_function event (with stacks): sorts before the ops of the same
 * start and end, as the caller that encloses them */
#define KIND_PY (-1)

struct runs {
    struct arec *buf; /* the run being filled */
    size_t n, cap;
    FILE *spill;      /* full runs, one after another */
    size_t nruns;
    size_t *run_len;  /* records per spilled run */
    size_t arun;
    /* a full run is sorted and written by a helper thread while the next fills */
    struct arec *full; /* the run being spilled (or the spare buffer) */
    size_t nfull;
    pthread_t th;
    int busy;          /* th is running */
    int th_rc;
    tt_error th_err;
};

struct cursor {
    struct arec *buf;
    size_t pos, n;      /* in buf */
    size_t left;        /* records of the run not yet read into buf */
    int64_t off;        /* file offset of the next record to read */
};

/* k-way merge of the spilled runs and the one in memory */
struct merge {
    struct runs *r;
    struct cursor *c;
    size_t nc;
    size_t *heap; /* cursor indexes, min-heap on the current record */
    size_t nheap;
};

/* averages_sort.c */
int tt__avg_runs_add(struct runs *r, const struct arec *e);
void tt__avg_runs_release(struct runs *r);
int tt__avg_merge_start(struct merge *m, struct runs *r);
/* the next record in order into *out: 1, or 0 at the end, or an error */
int tt__avg_merge_next(struct merge *m, struct arec *out);
void tt__avg_merge_release(struct merge *m);

/* ---- the pass (averages_tree.c) ---- */

/* ProfilerStep windows: [start, end] pairs, made sorted and disjoint by
 * tt__avg_steps_normalize before in_steps looks them up */
struct steps {
    int64_t *win;
    size_t n, alloc;
    int64_t seen_lo, seen_hi, seen_n; /* every ProfilerStep#N of the trace (with --steps) */
};
int tt__avg_steps_add(struct steps *w, int64_t start, int64_t end);
void tt__avg_steps_seen(struct steps *w, int64_t num);
void tt__avg_steps_normalize(struct steps *w);

struct fstream;
/* complete an op record with what the end of the file told (averages_stream.c) */
/* a file read straight into the pass (averages_stream.c) */
struct fstream {
    struct state *s;
    struct runs runs;
    struct memstr strs;
    int64_t id_cpu_op, id_ua, id_operator, id_memory, id_empty, id_pyfunc; /* 0: not seen */
    struct i64map *kmap;          /* op id -> device ns, when known beforehand */
    int64_t mem_rowid, gpu_rowid; /* what SQLite would number them */
    struct steps win;             /* ProfilerStep windows, with --steps */
    int neg_dur;                  /* an op with a negative dur (see fs_kernel) */
    struct tt__flt *fl;           /* options.filter (NULL: none) */
};

void tt__avg_fstream_fix(const struct fstream *fs, struct arec *e);

struct thread_stack *tt__avg_thread_for(struct state *s, const struct tkey *pid,
                                        const struct tkey *tid);
/* ---- Python stacks (averages_stacks.c) ---- */

/* The stack node of a ';'-joined "Call stack" (innermost first; torch's
 * entry filter applied): 0 for none, -1 out of memory. */
int64_t tt__avg_callstack_node(struct state *s, const char *cs);
/* a python_function event [ts, end] named name (string id) on thread t */
int tt__avg_py_frame(struct state *s, struct thread_stack *t, int64_t ts, int64_t end,
                     int64_t name);
/* Give a CPU event its stacks (e->full, and e->stack when grouping by stack):
 * its "Call stack" node (e->own on entry), else its Python ancestors (the
 * python_function events open on its thread, ...); under a backward
 * function, the forward op's (torch's _set_backward_stacktraces). Call with
 * e->parent set. */
int tt__avg_stack_assign(struct state *s, struct thread_stack *t, struct ev *e);
/* add a finished event's self times to the collapsed stacks */
int tt__avg_stack_add(struct state *s, int64_t full, int64_t name, int64_t self_cpu_ns,
                      int64_t self_dev_ns);
/* the collapsed stacks of the pass into t (frames and names looked up) */
int tt__avg_stacks_result(struct state *s, tt_avg_trace *t);
void tt__avg_stacks_release(struct stacks *k);
/* a string of the pass by id ("ProfilerStep*" for -2): malloc'd, NULL if out of memory */
char *tt__avg_lookup(struct state *s, int64_t id); /* averages_strings.c */
/*
 * The pass proper: events in order from the runs; fs (reading a file without
 * a database) completes op records with what was only known at the end.
 */
int tt__avg_pass_merge(struct state *s, struct runs *runs, const struct steps *win,
                       int64_t mem_name, const struct fstream *fs);
void tt__avg_state_release(struct state *s);

/* ---- results (averages.c) and printing (averages_print.c) ---- */

/* The result of a finished pass (rows resolved and sorted). Releases the state. */
int tt__avg_trace_result(struct state *s, int64_t trace, const char *label, int have_rank,
                         int64_t rank, int profile_memory, tt_avg_trace *out);
/* Append one trace to a result (takes it over; zeroed on success). */
int tt__avg_result_add(tt_avg_result *res, tt_avg_trace *t);
void tt__avg_trace_release(tt_avg_trace *t);
/* sort value of a row for torch's key (a valid key) */
double tt__avg_sort_value(const tt_avg_row *r, const char *k);
/* sort t's rows (in first-occurrence order) by torch's key, descending, ties
 * in that order (NULL: kept); the database's sort, also a summary's */
int tt__avg_sort_rows(tt_avg_trace *t, const char *key);
/* every trace of a file, a directory of them or a database (db) that o
 * selects, by (rank, id), into res (averages_stream.c) */
int tt__avg_each(const char *input, tt_db *db, const tt_avg_options *o, tt_avg_result *res);

#endif
