/*
 * analyze/breakdown/breakdown_state.h - what breakdown_rows.c (the record
 * stream of each trace, from a file; breakdown_db.c: from a database),
 * breakdown.c (the sweep over GPU activities, per device),
 * breakdown_launch.c (kernel families, launch percentiles),
 * breakdown_steps.c and breakdown_print.c share.
 * Internal to libtracetool.
 */
#ifndef TT_ANALYZE_BREAKDOWN_STATE_H
#define TT_ANALYZE_BREAKDOWN_STATE_H

#include "store/steps.h"
#include "common/spill.h"
#include "common/i64map.h"
#include "formats/kineto.h"
#include "store/ingest_rows.h"
#include "tracetool/breakdown.h"

#include <inttypes.h>
#include <stdio.h>

/* a union of intervals that arrive in start order: the merged interval
 * still open (lo, hi) and the length of those already closed */
struct bd_union {
    int64_t lo, hi, sum;
    int on;
};

enum { BD_ALL, BD_COMPUTE, BD_COMM, BD_MEMORY, BD_COMM_COMPUTE, BD_NU };

/* one row's running state (a device, a step of it or a stream of it) */
struct bd_acc {
    int any;
    int64_t start, end;
    struct bd_union u[BD_NU];
    int64_t kernels, comm_kernels, memory_ops;
    /* an idle gap [gap_lo, gap_hi) stays open while activities start at
     * gap_hi: queued when one of them was launched by then (or has no call) */
    int gap_open, gap_queued;
    int64_t gap_lo, gap_hi;
    int64_t host_wait, kernel_wait, other_idle;
};

/* fold in one activity [ts, end) of class cls (TT_BD_*); rt_ts: its runtime
 * call's start (has_rt 0: none) */
void tt__bd_acc_add(struct bd_acc *a, int cls, int64_t ts, int64_t end, int has_rt,
                    int64_t rt_ts, int64_t kernel_wait_ns);
/* close the state into a row's times (ids left as they are) */
void tt__bd_acc_row(struct bd_acc *a, int64_t kernel_wait_ns, tt_bd_row *row);

/* one trace analysed: its steps, and its rows until every trace is read
 * (they are put in (rank, id) order at the end, and a directory's ranks are
 * known only once its files are read) */
struct bd_trace {
    int64_t id, rank;
    struct tt__step *st;     /* its ProfilerStep#N spans (store/steps.h) */
    size_t nst;
    tt_bd_row *ranks, *rows; /* its device rows, its step / stream rows */
    size_t nranks, aranks, nrows, arows;
    struct i64map units;     /* family << 32 | its unit row -> ns */
    struct i64map op_units;  /* op << 32 | its unit row -> ns */
};

/* one launch, for the worst list and a family's worst */
struct bd_wl {
    int64_t delay, rt_dur, trace, ts, name, rt_name, device, stream;
    int64_t seq;             /* its place in the trace: the earlier of equals first */
    size_t fam;
    char *name_s, *rt_s;     /* the worst list's: the activity's and the call's names */
};

/* one kernel family (or memcpy/memset kind) met in the sweep */
struct bd_fam {
    char *name;
    int cls;
    int64_t count, total;
    int64_t nlaunch, nrt;    /* launches with a call start / with a call duration */
    int has_best;
    struct bd_wl best;       /* the family's worst launch */
};

/* one CPU op name met in the sweep */
struct bd_op {
    char *name;
    int64_t count, total;
};

/* a set of names, each with its index (families, ops) */
struct bd_names {
    char **s;
    size_t n, a;
    size_t *slot;            /* hash -> index + 1 */
    size_t nslot;
};

/* one GPU activity of the trace being read (kernel, memcpy or memset with
 * ts and dur), spilled until the trace is over (its steps known) */
struct bd_raw {
    int64_t device, stream, ts, dur, rt, op; /* rt, op: runtime, slice ids (0: none) */
    int64_t name;            /* string id */
    int64_t seq;             /* its place in the trace (ties in the worst list) */
    int64_t kind;            /* BD_KIND_* */
};

struct bd_rt {
    int64_t id, ts, dur, name;
    int64_t has_ts, has_dur;
};

/* an activity with its runtime call (has_call 0: none) */
struct bd_gcall {
    struct bd_raw g;
    struct bd_rt c;
    int64_t has_call;
};

/* the same activity once resolved (breakdown.c), for the sweep by device
 * and start */
struct bd_act {
    int64_t device, stream, ts, end, rt_ts, seq;
    int64_t step;
    int64_t has_rt, cls;     /* cls -1: not selected */
    uint64_t fam, op;        /* its family, the op that launched it */
};

struct bd_ref {
    int64_t id, name;        /* a cpu_op slice: its id and name */
};

/* the trace being read: what the rows of every table leave for the end */
struct bd_read {
    char *text;              /* the strings, each NUL-terminated */
    size_t ntext, atext;
    size_t *soff;            /* string id -> offset into text + 1 (0: none) */
    size_t nsoff;
    int64_t sid_cpu_op, sid_operator;
    /* spilled until the trace is over (common/spill.h): GPU activities by
     * runtime id, runtime calls by id, cpu_op slices (id, name) by id */
    tt__spill *gpu, *rt, *ops;
    int64_t ngpu;
    struct tt__step_slice *steps; /* ProfilerStep#N slices (store/steps.h) */
    size_t nsteps, asteps;
    struct i64map fam_of;    /* name string id * 4 + kind -> family * 4 + class + 1 */
    struct i64map op_of;     /* op name string id + 1 (0: no op) -> op + 1 */
};

/* the whole computation */
struct bd_run {
    const tt_bd_options *o;
    tt_bd_result *res;
    size_t aranks, arows;
    struct bd_trace *tr;     /* the traces analysed, in the order read */
    size_t ntr, atr;
    int64_t seen;            /* traces read, of any format */
    char first_fmt[32];      /* the format of the first one */
    struct bd_fam *fam;      /* families, in the order met */
    size_t nfam, afam;
    struct bd_names fnames;  /* their names */
    struct bd_op *op;        /* CPU op names, in the order met */
    size_t nop, aop;
    struct bd_names onames;  /* their names (not the "no op" one) */
    size_t *op_at;           /* onames index -> op index */
    size_t aop_at;
    long no_op;              /* the index of the "no op" op, or -1 */
    struct i64map units;     /* family << 32 | unit row -> ns */
    struct i64map op_units;  /* op << 32 | unit row -> ns */
    /* every launch's (family, delay) and (family, call duration), spilled
     * and sorted for the families' exact percentiles */
    tt__spill *delay, *rtdur;
    struct bd_wl top[TT_BD_WORST]; /* the worst launches so far */
    size_t ntop;
    tt_comm_rules comm;      /* options.comm_patterns, compiled */
    struct bd_read rd;       /* the trace being read */
    struct tt__flt *fl;      /* options.filter (NULL: none; analyze/filter/filtering.h) */
    /* keep_acts: the last trace's resolved activities are kept in acts
     * (by device and start), for tt__bd_sweep_again (summaries) */
    int keep_acts;
    tt__spill *acts;
};

/* kinds of the `fam_of` key */
enum { BD_KIND_KERNEL = 1, BD_KIND_MEMCPY = 2, BD_KIND_MEMSET = 3 };

/* the text of string id sid of the trace being read ("" when none) */
const char *tt__bd_str(const struct bd_read *rd, int64_t sid);

/* the step of trace t that holds ts: its index, or -1 */
long tt__bd_step_at(const struct bd_trace *t, int64_t ts);
/* whether an activity launched at ts (its call's start, else its own)
 * is in the selected steps */
int tt__bd_selected(const struct bd_run *r, const struct bd_trace *t, long step);
/* the step spans of the trace read (its ProfilerStep#N slices) into t */
int tt__bd_steps(struct bd_read *rd, struct bd_trace *t);

/* the family and class of a name (string id, BD_KIND_*) of the trace being
 * read: *fam, *cls; 0 or an error */
int tt__bd_family_of(struct bd_run *r, int64_t name_id, int kind, size_t *fam, int *cls);
/* the families of the result, with their spread over the unit rows
 * (nunits of them) */
int tt__bd_families(struct bd_run *r, size_t nunits);
/* the op of a launching op's name (string id; -1: no op) of the trace being
 * read: *op; 0 or an error */
int tt__bd_op_of(struct bd_run *r, int64_t name_id, size_t *op);
/* the ops of the result, spread as the families */
int tt__bd_ops(struct bd_run *r, size_t nunits);
/* one launch of a selected activity (w->fam set): its delay and call
 * duration (has_rt_dur) for the family's percentiles, the histogram, the
 * family's worst and the worst list; 0 or TT_ENOMEM */
int tt__bd_launch_add(struct bd_run *r, const struct bd_wl *w, int has_rt_dur);
/* launch-delay and runtime percentiles per family, the worst launches */
int tt__bd_launches(struct bd_run *r);
void tt__bd_run_release(struct bd_run *r);

/* the spills' orders: a cpu_op slice by id, a runtime call by id, a GPU
 * activity by runtime id (then as read) */
int tt__bd_cmp_ref(const void *a, const void *b);
int tt__bd_cmp_rt(const void *a, const void *b);
int tt__bd_cmp_raw_rt(const void *a, const void *b);

/* the GPU activities read of trace t (its steps set) swept into its rows */
int tt__bd_sweep(struct bd_run *r, struct bd_trace *t);
/* every trace read: the result (tt_bd_result) from their rows; src, db: the
 * input for messages */
int tt__bd_finish(struct bd_run *r, const char *src, int db);
/* the trace being read is over: id and rank (-1: none) as the database
 * would give them, its format (only Chrome/Kineto traces are analysed) */
int tt__bd_trace_end(struct bd_run *r, int64_t id, int64_t rank, tt_trace_format fmt);
void tt__bd_read_reset(struct bd_read *rd);

/* the tables breakdown reads: strings, slices, runtime calls, GPU rows */
#define TT__BD_SKIP \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)
/* options into r and res (emptied); 0 or TT_EINVALID (a bad --comm-pattern) */
int tt__bd_run_init(struct bd_run *r, const tt_bd_options *o, tt_bd_result *res);
/* the sink whose rows go into r->rd */
void tt__bd_sink(struct bd_run *r, tt__rowsink *sink);

/* breakdown_annot.c: TT_BD_BY_ANNOTATION into res (emptied first): from
 * input (a file or a directory) or db; its printing; its rows freed */
int tt__bd_annot_result(const char *input, tt_db *db, const tt_bd_options *o, tt_bd_result *res);
int tt__bd_annot_print(const tt_bd_result *res, const tt_bd_options *o, FILE *out);
void tt__bd_annot_free(tt_bd_result *res);
/* a row's rank: "3", or "trace 2" for a trace without a rank */
static inline const char *tt__bd_rank_text(char *buf, size_t cap, int64_t rank, int64_t trace)
{
    if (rank >= 0)
        snprintf(buf, cap, "%" PRId64, rank);
    else
        snprintf(buf, cap, "trace %" PRId64, trace);
    return buf;
}
/* whether o asks for the annotations (TT_BD_BY_ANNOTATION, version >= 3) */
#define TT__BD_ANNOT(o) ((o)->version >= 3 && (o)->by == TT_BD_BY_ANNOTATION)

/* ---- for per-rank summaries (breakdown_summary.c) ---- */
/* the kept activities (keep_acts) swept again into t (its id, rank and
 * steps set) with r->o->by as it is now */
int tt__bd_sweep_again(struct bd_run *r, struct bd_trace *t);
/* one trace into r, not finished: the file path (trace 1) or trace id of
 * db; 0 or an error */
int tt__bd_read_file(struct bd_run *r, const char *path, int64_t id);
int tt__bd_read_db_trace(struct bd_run *r, tt_db *db, int64_t id);
/* the index of family `name` of class cls, or of op `name` (NULL: the
 * "no op" one), added when new; -1 when out of memory */
long tt__bd_fam_named(struct bd_run *r, const char *name, int cls);
long tt__bd_op_named(struct bd_run *r, const char *name);
/* one launch value of family fam: its delay (rt 0) or its call's duration
 * (rt 1), for the percentiles */
int tt__bd_launch_value(struct bd_run *r, int rt, size_t fam, int64_t v);
/* the launch values of a trace read (not finished), by family then value:
 * rewind, then next until it returns 0 (1: *fam, *v set; < 0: an error) */
int tt__bd_launch_rewind(struct bd_run *r, int rt);
int tt__bd_launch_next(struct bd_run *r, int rt, size_t *fam, int64_t *v);
/* a row's window, idle, exposed comm and percentages from its other times */
void tt__bd_row_derive(tt_bd_row *x);
/* whether launch a goes before b in the worst list */
int tt__bd_worse(const struct bd_wl *a, const struct bd_wl *b);
/* x into the worst list when it belongs there; x->name_s and x->rt_s are
 * taken (freed when it does not) */
int tt__bd_top_insert(struct bd_run *r, struct bd_wl *x);

/* median of v[0..n) (sorted in place); NaN when n is 0 */
double tt__bd_median(int64_t *v, size_t n);

#endif
