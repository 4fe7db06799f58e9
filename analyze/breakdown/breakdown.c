/*
 * analyze/breakdown/breakdown.c - `tracetool breakdown`: GPU time per rank and
 * device (busy, compute, communication, memory, idle and its causes), per
 * step and per stream, from the GPU activities of each trace.
 *
 * When a trace is read (breakdown_rows.c, which spills its kernels, memcpys
 * and memsets, runtime calls and cpu_op slices: common/spill.h), its
 * activities get their runtime call (a merge of the activities by runtime
 * id with the calls by id) and the name of the CPU op that launched them
 * (a merge by op id with the cpu_op slices), are sorted by device and start
 * time (spilled again), and are folded into running unions (one per class
 * and for the device, its step and its stream) and into the totals of
 * their kernel family and their op per unit. Memory is thus bounded by the
 * spills' limit and what the output holds (devices, steps, streams,
 * families, ops), not by the number of rows. The trace keeps its output
 * rows until every trace is read; then they are put in (rank, id) order
 * and the result is made.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "analyze/breakdown/breakdown_state.h"
#include "analyze/filter/filtering.h"

#include <inttypes.h>
#include <math.h>

/* ---- running unions ---- */

static void union_add(struct bd_union *u, int64_t ts, int64_t end)
{
    if (!u->on) {
        u->on = 1;
        u->lo = ts;
        u->hi = end;
    } else if (ts > u->hi) {
        u->sum += u->hi - u->lo;
        u->lo = ts;
        u->hi = end;
    } else if (end > u->hi) {
        u->hi = end;
    }
}

static int64_t union_len(const struct bd_union *u)
{
    return u->on ? u->sum + u->hi - u->lo : 0;
}

/* HTA's idle categories: host wait when nothing that ends the gap was
 * queued when it began, else kernel wait under the threshold, else other */
static void close_gap(struct bd_acc *a, int64_t kernel_wait_ns)
{
    int64_t len = a->gap_hi - a->gap_lo;
    if (!a->gap_queued)
        a->host_wait += len;
    else if (len < kernel_wait_ns)
        a->kernel_wait += len;
    else
        a->other_idle += len;
    a->gap_open = 0;
}

void tt__bd_acc_add(struct bd_acc *a, int cls, int64_t ts, int64_t end, int has_rt,
                    int64_t rt_ts, int64_t kernel_wait_ns)
{
    if (a->gap_open && ts > a->gap_hi)
        close_gap(a, kernel_wait_ns);
    if (!a->any) {
        a->any = 1;
        a->start = ts;
        a->end = end;
    } else if (ts > a->u[BD_ALL].hi) {
        a->gap_open = 1;
        a->gap_queued = 0;
        a->gap_lo = a->u[BD_ALL].hi;
        a->gap_hi = ts;
    }
    if (a->gap_open && ts == a->gap_hi && (!has_rt || rt_ts <= a->gap_lo))
        a->gap_queued = 1;
    if (end > a->end)
        a->end = end;
    union_add(&a->u[BD_ALL], ts, end);
    switch (cls) {
    case TT_BD_COMM:
        a->comm_kernels++;
        union_add(&a->u[BD_COMM], ts, end);
        union_add(&a->u[BD_COMM_COMPUTE], ts, end);
        break;
    case TT_BD_MEMORY:
        a->memory_ops++;
        union_add(&a->u[BD_MEMORY], ts, end);
        return;
    default:
        union_add(&a->u[BD_COMPUTE], ts, end);
        union_add(&a->u[BD_COMM_COMPUTE], ts, end);
    }
    a->kernels++;
}

void tt__bd_row_derive(tt_bd_row *x)
{
    x->window_ns = x->end_ns - x->start_ns;
    x->idle_ns = x->window_ns - x->busy_ns;
    x->exposed_comm_ns = x->comm_ns - x->overlap_ns;
    x->busy_pct = x->window_ns ? 100.0 * (double)x->busy_ns / (double)x->window_ns : NAN;
    x->overlap_pct = x->comm_ns ? 100.0 * (double)x->overlap_ns / (double)x->comm_ns : NAN;
}

void tt__bd_acc_row(struct bd_acc *a, int64_t kernel_wait_ns, tt_bd_row *x)
{
    if (a->gap_open)
        close_gap(a, kernel_wait_ns);
    x->start_ns = a->start;
    x->end_ns = a->end;
    x->busy_ns = union_len(&a->u[BD_ALL]);
    x->compute_ns = union_len(&a->u[BD_COMPUTE]);
    x->comm_ns = union_len(&a->u[BD_COMM]);
    x->memory_ns = union_len(&a->u[BD_MEMORY]);
    /* |comm n compute| = |comm| + |compute| - |comm u compute| */
    x->overlap_ns = x->comm_ns + x->compute_ns - union_len(&a->u[BD_COMM_COMPUTE]);
    tt__bd_row_derive(x);
    x->host_wait_ns = a->host_wait;
    x->kernel_wait_ns = a->kernel_wait;
    x->other_idle_ns = a->other_idle;
    x->kernels = a->kernels;
    x->comm_kernels = a->comm_kernels;
    x->memory_ops = a->memory_ops;
}


/* ---- one device of one trace ---- */

struct bd_sacc {
    int64_t stream;
    struct bd_acc acc;
};

struct bd_dev {
    int on;
    int64_t device;
    struct bd_acc all;
    struct bd_acc *steps;    /* one per step of the trace */
    struct bd_sacc *streams; /* in the order met */
    size_t nstreams, astreams;
    struct i64map fam;       /* family << 32 | local unit -> ns */
    struct i64map ops;       /* op << 32 | local unit -> ns */
};

static int64_t acc_span(const struct bd_acc *a)
{
    return a->end - a->start;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

double tt__bd_median(int64_t *v, size_t n)
{
    if (!n)
        return NAN;
    TT_QSORT(v, n, sizeof(*v), cmp_i64);
    return ((double)v[(n - 1) / 2] + (double)v[n / 2]) / 2.0;
}

/* a new row of trace t (a device row or a step / stream row), ids filled;
 * NULL when out of memory */
static tt_bd_row *new_row(struct bd_trace *t, int rank_row, int64_t device)
{
    tt_bd_row **a = rank_row ? &t->ranks : &t->rows;
    size_t *n = rank_row ? &t->nranks : &t->nrows;
    tt_bd_row *x;
    if (TT_ALLOC_GROW(*a, *n + 1, *(rank_row ? &t->aranks : &t->arows)) < 0)
        return NULL;
    x = &(*a)[(*n)++];
    memset(x, 0, sizeof(*x));
    x->trace_id = t->id;
    x->rank = t->rank;
    x->device = device;
    x->stream = -1;
    x->step = -1;
    x->step_ns = NAN;
    return x;
}

static int cmp_stream(const void *a, const void *b)
{
    const struct bd_sacc *x = *(const struct bd_sacc *const *)a;
    const struct bd_sacc *y = *(const struct bd_sacc *const *)b;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* the device's step or stream rows; lmap[local unit] = the row's index */
static int unit_rows(struct bd_run *r, struct bd_trace *t, struct bd_dev *d, size_t *lmap)
{
    int64_t kw = r->o->kernel_wait_ns;
    size_t k;
    if (r->o->by == TT_BD_BY_STEP) {
        for (k = 0; k < t->nst; k++) {
            tt_bd_row *x;
            if (!d->steps[k].any)
                continue;
            if (!(x = new_row(t, 0, d->device)))
                return tt__oom();
            tt__bd_acc_row(&d->steps[k], kw, x);
            x->step = t->st[k].num;
            lmap[k] = t->nrows - 1;
        }
    } else if (r->o->by == TT_BD_BY_STREAM) {
        struct bd_sacc **ord = malloc((d->nstreams ? d->nstreams : 1) * sizeof(*ord));
        if (!ord)
            return tt__oom();
        for (k = 0; k < d->nstreams; k++)
            ord[k] = &d->streams[k];
        TT_QSORT(ord, d->nstreams, sizeof(*ord), cmp_stream);
        for (k = 0; k < d->nstreams; k++) {
            tt_bd_row *x = new_row(t, 0, d->device);
            if (!x) {
                free(ord);
                return tt__oom();
            }
            tt__bd_acc_row(&ord[k]->acc, kw, x);
            x->stream = ord[k]->stream;
            lmap[ord[k] - d->streams] = t->nrows - 1;
        }
        free(ord);
    }
    return 0;
}

/* the family (or op) totals of src (index << 32 | unit -> ns) into dst,
 * unit u becoming off + lmap[u] (lmap NULL: off + `only`, or off + u when
 * only is BD_SAME) */
#define BD_SAME ((size_t)-1)
static int move_units(const struct i64map *src, struct i64map *dst, const size_t *lmap,
                      size_t only, size_t off)
{
    size_t i;
    for (i = 0; i < src->cap; i++) {
        int64_t key, idx, local;
        size_t unit, have = 0;
        if (!src->used[i])
            continue;
        idx = src->k[i] >> 32;
        local = src->k[i] & 0xffffffff;
        unit = (lmap ? lmap[local] : only == BD_SAME ? (size_t)local : only) + off;
        key = idx << 32 | (int64_t)unit;
        tt__i64map_get(dst, key, &have);
        if (tt__i64map_put(dst, key, (size_t)tt_sat_add((int64_t)have, (int64_t)src->v[i])) < 0)
            return tt__oom();
    }
    return 0;
}

/* the rows of a device whose activities are all read */
static int flush_device(struct bd_run *r, struct bd_trace *t, struct bd_dev *d)
{
    int64_t *span;
    size_t k, n = 0, *lmap, nl, rank_row;
    tt_bd_row *x;
    int rc, by_rank = r->o->by == TT_BD_BY_RANK;
    if (!d->all.any)
        return 0;
    if (!(x = new_row(t, 1, d->device)))
        return tt__oom();
    rank_row = t->nranks - 1;
    tt__bd_acc_row(&d->all, r->o->kernel_wait_ns, x);
    if (!(span = malloc((t->nst ? t->nst : 1) * sizeof(*span))))
        return tt__oom();
    for (k = 0; k < t->nst; k++)
        if (d->steps[k].any)
            span[n++] = acc_span(&d->steps[k]);
    x->steps = (int64_t)n;
    x->step_ns = n ? tt__bd_median(span, n) : (double)x->window_ns;
    free(span);
    nl = t->nst > d->nstreams ? t->nst : d->nstreams;
    if (!(lmap = calloc(nl ? nl : 1, sizeof(*lmap))))
        return tt__oom();
    rc = unit_rows(r, t, d, lmap);
    if (rc == 0)
        rc = move_units(&d->fam, &t->units, by_rank ? NULL : lmap, rank_row, 0);
    if (rc == 0)
        rc = move_units(&d->ops, &t->op_units, by_rank ? NULL : lmap, rank_row, 0);
    free(lmap);
    return rc;
}

static void dev_reset(struct bd_dev *d, size_t nst)
{
    d->on = 0;
    memset(&d->all, 0, sizeof(d->all));
    memset(d->steps, 0, (nst ? nst : 1) * sizeof(*d->steps));
    d->nstreams = 0;
    tt__i64map_free(&d->fam);
    tt__i64map_free(&d->ops);
}

static struct bd_acc *stream_acc(struct bd_dev *d, int64_t stream, size_t *slot)
{
    size_t k;
    for (k = 0; k < d->nstreams; k++)
        if (d->streams[k].stream == stream)
            break;
    if (k == d->nstreams) {
        if (TT_ALLOC_GROW(d->streams, d->nstreams + 1, d->astreams) < 0)
            return NULL;
        memset(&d->streams[k], 0, sizeof(d->streams[k]));
        d->streams[k].stream = stream;
        d->nstreams++;
    }
    *slot = k;
    return &d->streams[k].acc;
}

/* ns more for index idx (a family or an op) in local unit `local` */
static int unit_add(struct i64map *m, size_t idx, size_t local, int64_t ns)
{
    int64_t key = (int64_t)idx << 32 | (int64_t)local;
    size_t have = 0;
    tt__i64map_get(m, key, &have);
    if (tt__i64map_put(m, key, (size_t)tt_sat_add((int64_t)have, ns)) < 0)
        return tt__oom();
    return 0;
}

static int add_activity(struct bd_run *r, struct bd_dev *d, const struct bd_act *a)
{
    int64_t kw = r->o->kernel_wait_ns;
    struct bd_acc *sa;
    size_t slot, local = 0;
    tt__bd_acc_add(&d->all, a->cls, a->ts, a->end, a->has_rt, a->rt_ts, kw);
    if (a->step >= 0)
        tt__bd_acc_add(&d->steps[a->step], a->cls, a->ts, a->end, a->has_rt, a->rt_ts, kw);
    if (!(sa = stream_acc(d, a->stream, &slot)))
        return tt__oom();
    tt__bd_acc_add(sa, a->cls, a->ts, a->end, a->has_rt, a->rt_ts, kw);
    if (r->o->by == TT_BD_BY_STEP) {
        if (a->step < 0)
            return 0; /* outside every step: no step row to count it in */
        local = (size_t)a->step;
    } else if (r->o->by == TT_BD_BY_STREAM) {
        local = slot;
    }
    if (unit_add(&d->fam, a->fam, local, a->end - a->ts) < 0 ||
        unit_add(&d->ops, a->op, local, a->end - a->ts) < 0)
        return TT_ENOMEM;
    return 0;
}

/* ---- the links, by sorted merges of the spilled rows ---- */

int tt__bd_cmp_rt(const void *a, const void *b)
{
    const struct bd_rt *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int tt__bd_cmp_ref(const void *a, const void *b)
{
    const struct bd_ref *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int tt__bd_cmp_raw_rt(const void *a, const void *b)
{
    const struct bd_raw *x = a, *y = b;
    if (x->rt != y->rt)
        return x->rt < y->rt ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* activities with their calls: by the launching op's id, then as read */
static int cmp_gcall_op(const void *a, const void *b)
{
    const struct bd_gcall *x = a, *y = b;
    if (x->g.op != y->g.op)
        return x->g.op < y->g.op ? -1 : 1;
    return x->g.seq < y->g.seq ? -1 : x->g.seq > y->g.seq;
}

/* resolved activities: by device, start, then as read */
static int cmp_act(const void *a, const void *b)
{
    const struct bd_act *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* one GPU activity read, its links resolved (c: its call, or NULL;
 * op_name: its op's name string id, -1 for none): *a (a->cls -1: not
 * selected), its launch counted */
static int resolve(struct bd_run *r, const struct bd_trace *t, const struct bd_raw *g,
                   const struct bd_rt *c, int64_t op_name, struct bd_act *a)
{
    struct bd_fam *f;
    struct bd_op *op;
    size_t fam, opi;
    int rc, cls;
    a->device = g->device;
    a->stream = g->stream;
    a->ts = g->ts;
    a->seq = g->seq;
    a->end = tt_end_ns(g->ts, g->dur);
    a->has_rt = c && c->has_ts;
    a->rt_ts = a->has_rt ? c->ts : 0;
    a->step = tt__bd_step_at(t, a->has_rt ? a->rt_ts : a->ts);
    a->cls = -1;
    if (!tt__bd_selected(r, t, (long)a->step))
        return 0;
    if ((rc = tt__bd_family_of(r, g->name, (int)g->kind, &fam, &cls)) < 0 ||
        (rc = tt__bd_op_of(r, op_name, &opi)) < 0)
        return rc;
    a->fam = fam;
    a->op = opi;
    a->cls = cls;
    f = &r->fam[fam];
    op = &r->op[opi];
    f->count++;
    f->total = tt_sat_add(f->total, a->end - a->ts);
    op->count++;
    op->total = tt_sat_add(op->total, a->end - a->ts);
    if (a->has_rt) {
        struct bd_wl w;
        memset(&w, 0, sizeof(w));
        w.delay = a->ts - a->rt_ts;
        w.rt_dur = c->has_dur ? c->dur : -1;
        w.trace = t->id;
        w.ts = a->ts;
        w.seq = g->seq;
        w.name = g->name;
        w.rt_name = c->name;
        w.device = a->device;
        w.stream = a->stream;
        w.fam = fam;
        return tt__bd_launch_add(r, &w, (int)c->has_dur);
    }
    return 0;
}

/* the activities (by runtime id) joined with the calls (by id), into
 * *out by the launching op's id */
static int join_calls(struct bd_read *rd, tt__spill **out)
{
    struct bd_gcall gc;
    struct bd_rt c;
    int rc, more;
    if (!(*out = tt__spill_new(sizeof(gc), cmp_gcall_op)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(rd->gpu)) < 0 || (rc = tt__spill_rewind(rd->rt)) < 0)
        return rc;
    if ((more = tt__spill_next(rd->rt, &c)) < 0)
        return more;
    memset(&gc, 0, sizeof(gc));
    while ((rc = tt__spill_next(rd->gpu, &gc.g)) == 1) {
        while (more == 1 && c.id < gc.g.rt)
            if ((more = tt__spill_next(rd->rt, &c)) < 0)
                return more;
        gc.has_call = gc.g.rt && more == 1 && c.id == gc.g.rt;
        if (gc.has_call)
            gc.c = c;
        if ((rc = tt__spill_add(*out, &gc)) < 0)
            return rc;
    }
    return rc;
}

/* the activities (by op id) joined with the cpu_op slices (by id),
 * resolved, the selected ones into *out by device and start */
static int join_ops(struct bd_run *r, const struct bd_trace *t, tt__spill *in, tt__spill **out)
{
    struct bd_read *rd = &r->rd;
    struct bd_gcall gc;
    struct bd_ref o;
    struct bd_act a;
    int rc, more;
    if (!(*out = tt__spill_new(sizeof(a), cmp_act)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(in)) < 0 || (rc = tt__spill_rewind(rd->ops)) < 0)
        return rc;
    if ((more = tt__spill_next(rd->ops, &o)) < 0)
        return more;
    memset(&a, 0, sizeof(a));
    while ((rc = tt__spill_next(in, &gc)) == 1) {
        int64_t name = -1; /* no op */
        if (gc.g.op) {
            while (more == 1 && o.id < gc.g.op)
                if ((more = tt__spill_next(rd->ops, &o)) < 0)
                    return more;
            name = more == 1 && o.id == gc.g.op ? o.name : 0; /* 0: not a cpu_op */
        }
        if ((rc = resolve(r, t, &gc.g, gc.has_call ? &gc.c : NULL, name, &a)) < 0)
            return rc;
        if (a.cls >= 0 && (rc = tt__spill_add(*out, &a)) < 0)
            return rc;
    }
    return rc;
}

/* the activities of each device (by start) into its rows */
static int sweep_devices(struct bd_run *r, struct bd_trace *t, tt__spill *acts)
{
    struct bd_dev d;
    struct bd_act a;
    int rc, have = 0;
    memset(&d, 0, sizeof(d));
    if (!(d.steps = calloc(t->nst ? t->nst : 1, sizeof(*d.steps))))
        return tt__oom();
    if ((rc = tt__spill_rewind(acts)) == 0)
        while ((rc = tt__spill_next(acts, &a)) == 1) {
            if (have && a.device != d.device && (rc = flush_device(r, t, &d)) < 0)
                break;
            if (!have || a.device != d.device) {
                dev_reset(&d, t->nst);
                d.on = 1;
                d.device = a.device;
                have = 1;
            }
            if ((rc = add_activity(r, &d, &a)) < 0)
                break;
        }
    if (rc == 0 && have)
        rc = flush_device(r, t, &d);
    tt__i64map_free(&d.fam);
    tt__i64map_free(&d.ops);
    free(d.streams);
    free(d.steps);
    return rc;
}

int tt__bd_sweep(struct bd_run *r, struct bd_trace *t)
{
    tt__spill *calls = NULL, *acts = NULL;
    int rc = 0;
    if (r->rd.gpu && (rc = join_calls(&r->rd, &calls)) == 0) {
        /* what is read no more goes before the next spill fills */
        tt__spill_free(r->rd.gpu);
        tt__spill_free(r->rd.rt);
        r->rd.gpu = r->rd.rt = NULL;
        if ((rc = join_ops(r, t, calls, &acts)) == 0) {
            tt__spill_free(calls);
            calls = NULL;
            rc = sweep_devices(r, t, acts);
            if (rc == 0 && r->keep_acts) { /* for another grouping's sweep */
                r->acts = acts;
                acts = NULL;
            }
        }
    }
    tt__spill_free(calls);
    tt__spill_free(acts);
    return rc;
}

int tt__bd_sweep_again(struct bd_run *r, struct bd_trace *t)
{
    return r->acts ? sweep_devices(r, t, r->acts) : 0;
}

/* ---- the result, from the traces read ---- */

static double median_d(double *v, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) /* insertion sort: one value per rank */
        for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n ? (v[(n - 1) / 2] + v[n / 2]) / 2.0 : NAN;
}

/* max / median across the rank rows of one quantity */
static double skew_of(const tt_bd_result *res, int compute, size_t *at)
{
    double *v = malloc((res->nranks ? res->nranks : 1) * sizeof(*v)), mx = 0, med;
    size_t k;
    *at = (size_t)-1;
    if (!v)
        return NAN;
    for (k = 0; k < res->nranks; k++) {
        v[k] = compute ? (double)res->ranks[k].compute_ns : res->ranks[k].step_ns;
        if (*at == (size_t)-1 || v[k] > mx) {
            mx = v[k];
            *at = k;
        }
    }
    med = median_d(v, res->nranks);
    free(v);
    return med > 0 ? mx / med : NAN;
}

static int no_activity(struct bd_run *r, const char *src, int db)
{
    if (r->o->steps_set)
        return tt_error_set_at(TT_ENOTFOUND, src, -1,
                               "no GPU activity (kernel, memcpy, memset) launched in"
                               " ProfilerStep#%" PRId64 "..#%" PRId64, r->o->step_from,
                               r->o->step_to);
    return tt_error_set_at(TT_ENOTFOUND, src, -1,
                           "no GPU activity (kernel, memcpy, memset) in %s%s",
                           db ? "the selected traces" : "this trace",
                           r->fl ? " passes --name/--under/--time-range" : "");
}

/* traces by rank (none first), then id */
static int cmp_trace(const void *a, const void *b)
{
    const struct bd_trace *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* append n rows to *dst (*nd of them, *ad allocated) */
static int append_rows(tt_bd_row **dst, size_t *nd, size_t *ad, const tt_bd_row *src, size_t n)
{
    if (!n)
        return 0;
    if (TT_ALLOC_GROW(*dst, *nd + n, *ad) < 0)
        return tt__oom();
    memcpy(*dst + *nd, src, n * sizeof(*src));
    *nd += n;
    return 0;
}

/* the traces' rows, in (rank, id) order, into the result */
static int gather(struct bd_run *r)
{
    tt_bd_result *res = r->res;
    size_t k;
    int rc = 0;
    TT_QSORT(r->tr, r->ntr, sizeof(*r->tr), cmp_trace);
    for (k = 0; rc == 0 && k < r->ntr; k++) {
        struct bd_trace *t = &r->tr[k];
        size_t off = r->o->by == TT_BD_BY_RANK ? res->nranks : res->nrows;
        res->no_gpu += t->nranks == 0;
        if ((rc = move_units(&t->units, &r->units, NULL, BD_SAME, off)) == 0 &&
            (rc = move_units(&t->op_units, &r->op_units, NULL, BD_SAME, off)) == 0 &&
            (rc = append_rows(&res->ranks, &res->nranks, &r->aranks, t->ranks, t->nranks)) == 0)
            rc = append_rows(&res->rows, &res->nrows, &r->arows, t->rows, t->nrows);
    }
    return rc;
}

int tt__bd_finish(struct bd_run *r, const char *src, int db)
{
    tt_bd_result *res = r->res;
    int rc = gather(r);
    size_t nunits;
    res->traces = r->ntr;
    if (rc == 0 && !res->nranks)
        rc = no_activity(r, src, db);
    if (rc < 0)
        return rc;
    res->step_skew = skew_of(res, 0, &res->slowest);
    res->compute_skew = skew_of(res, 1, &res->most_compute);
    nunits = r->o->by == TT_BD_BY_RANK ? res->nranks : res->nrows;
    if ((rc = tt__bd_families(r, nunits)) == 0 && (rc = tt__bd_ops(r, nunits)) == 0)
        rc = tt__bd_launches(r);
    return rc;
}

static void trace_release(struct bd_trace *t)
{
    free(t->st);
    free(t->ranks);
    free(t->rows);
    tt__i64map_free(&t->units);
    tt__i64map_free(&t->op_units);
}

static void names_release(struct bd_names *n)
{
    size_t k;
    for (k = 0; k < n->n; k++)
        free(n->s[k]);
    free(n->s);
    free(n->slot);
}

/* the rows one trace left (breakdown_rows.c fills them) */
void tt__bd_read_reset(struct bd_read *rd)
{
    free(rd->text);
    free(rd->soff);
    tt__spill_free(rd->gpu);
    tt__spill_free(rd->rt);
    tt__spill_free(rd->ops);
    free(rd->steps);
    tt__i64map_free(&rd->fam_of);
    tt__i64map_free(&rd->op_of);
    memset(rd, 0, sizeof(*rd));
}

void tt__bd_run_release(struct bd_run *r)
{
    size_t k;
    for (k = 0; k < r->ntr; k++)
        trace_release(&r->tr[k]);
    free(r->tr);
    tt__spill_free(r->delay);
    tt__spill_free(r->rtdur);
    tt__spill_free(r->acts);
    free(r->fam);
    names_release(&r->fnames);
    tt__i64map_free(&r->units);
    for (k = 0; k < r->nop; k++)
        if ((long)k == r->no_op)
            free(r->op[k].name); /* the others' are in onames */
    free(r->op);
    names_release(&r->onames);
    free(r->op_at);
    tt__i64map_free(&r->op_units);
    for (k = 0; k < r->ntop; k++) {
        free(r->top[k].name_s);
        free(r->top[k].rt_s);
    }
    tt_comm_rules_free(&r->comm);
    tt__bd_read_reset(&r->rd);
    tt__flt_free(r->fl);
    memset(r, 0, sizeof(*r));
}

int tt_bd_comm_pattern_check(const char *pattern, char *err, size_t cap)
{
    regex_t re;
    int e = regcomp(&re, pattern ? pattern : "", REG_EXTENDED | REG_NOSUB);
    if (e == 0) {
        regfree(&re);
        return 0;
    }
    if (err && cap)
        regerror(e, &re, err, cap);
    return TT_EINVALID;
}

void tt_bd_result_free(tt_bd_result *res)
{
    size_t k;
    if (!res)
        return;
    tt__bd_annot_free(res);
    free(res->ranks);
    free(res->rows);
    for (k = 0; k < res->nfamilies; k++)
        free(res->families[k].family);
    free(res->families);
    for (k = 0; k < res->nops; k++)
        free(res->ops[k].op);
    free(res->ops);
    for (k = 0; k < res->nlaunches; k++)
        free(res->launches[k].family);
    free(res->launches);
    for (k = 0; k < res->nworst; k++) {
        free(res->worst[k].name);
        free(res->worst[k].family);
        free(res->worst[k].runtime);
    }
    memset(res, 0, sizeof(*res));
}
