/*
 * analyze/breakdown/breakdown_state.h - what breakdown.c (the sweep over GPU
 * activities, per device), breakdown_launch.c (kernel families, launch
 * percentiles) and breakdown_print.c share. Internal to libtracetool.
 */
#ifndef TT_ANALYZE_BREAKDOWN_STATE_H
#define TT_ANALYZE_BREAKDOWN_STATE_H

#include "analyze/steps/steps.h"
#include "common/i64map.h"
#include "formats/kineto.h"
#include "store/db_internal.h"
#include "tracetool/breakdown.h"

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

struct bd_trace {
    int64_t id, rank;
    struct tt__step *st;     /* its ProfilerStep#N spans (analyze/steps/steps.h) */
    size_t nst;
};

/* one kernel family (or memcpy/memset kind) met in the sweep */
struct bd_fam {
    char *name;
    int cls;
    int64_t count, total;
    int64_t nlaunch, nrt;    /* launches with a call start / with a call duration */
};

/* one CPU op name met in the sweep */
struct bd_op {
    char *name;
    int64_t count, total;
};

/* the whole computation */
struct bd_run {
    tt_db *db;
    const tt_bd_options *o;
    tt_bd_result *res;
    size_t aranks, arows;
    struct bd_trace *tr;     /* the traces analysed, in order */
    size_t ntr, atr;
    struct i64map tr_index;  /* trace id -> index into tr + 1 */
    struct bd_fam *fam;      /* families, in the order met */
    size_t nfam, afam;
    size_t *fslot;           /* family name hash -> index + 1 */
    size_t nfslot;
    struct i64map names;     /* name string id * 4 + kind -> family * 4 + class + 1 */
    struct i64map units;     /* family << 32 | unit row -> ns */
    struct bd_op *op;        /* CPU op names, in the order met */
    size_t nop, aop;
    struct i64map op_names;  /* op name string id -> index + 1 (-1: no op) */
    struct i64map op_units;  /* op << 32 | unit row -> ns */
    sqlite3_stmt *str;       /* a string by id */
    tt_comm_rules comm;      /* options.comm_patterns, compiled */
};

/* kinds of the `names` key */
enum { BD_KIND_KERNEL = 1, BD_KIND_MEMCPY = 2, BD_KIND_MEMSET = 3 };

/* the step of trace t that holds ts: its index, or -1 */
long tt__bd_step_at(const struct bd_trace *t, int64_t ts);
/* whether an activity launched at ts (its call's start, else its own)
 * is in the selected steps */
int tt__bd_selected(const struct bd_run *r, const struct bd_trace *t, long step);

/* the family and class of a name (string id, BD_KIND_*): *fam, *cls;
 * 0 or an error */
int tt__bd_family_of(struct bd_run *r, int64_t name_id, int kind, size_t *fam, int *cls);
/* the families of the result, with their spread over the unit rows
 * (nunits of them) */
int tt__bd_families(struct bd_run *r, size_t nunits);
/* the op of a launching op's name (string id; -1: no op): *op; 0 or an error */
int tt__bd_op_of(struct bd_run *r, int64_t name_id, size_t *op);
/* the ops of the result, spread as the families */
int tt__bd_ops(struct bd_run *r, size_t nunits);
/* launch-delay and runtime percentiles per family, the worst launches */
int tt__bd_launches(struct bd_run *r);
void tt__bd_run_release(struct bd_run *r);

/* median of v[0..n) (sorted in place); NaN when n is 0 */
double tt__bd_median(int64_t *v, size_t n);

#endif
