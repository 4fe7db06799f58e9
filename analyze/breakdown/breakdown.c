/*
 * analyze/breakdown/breakdown.c - `tracetool breakdown`: GPU time per rank and
 * device (busy, compute, communication, memory, idle and its causes), per
 * step and per stream, from the gpu_ops table.
 *
 * One ordered SQL pass per trace reads its kernels, memcpys and memsets by
 * device and start time, each with the name of the CPU op that launched it;
 * each row is folded into running unions (one per class and for the
 * device, its step and its stream) and into the totals of its kernel
 * family and its op per unit, so memory holds a few numbers per device,
 * step, stream, family and op, never the intervals. A trace
 * file goes through a lean temporary database first: the runtime-call
 * links that launch delays and host waits need are made by the ingest.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "analyze/breakdown/breakdown_state.h"
#include "store/ingest_rows.h"

#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>

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

void tt__bd_acc_row(struct bd_acc *a, int64_t kernel_wait_ns, tt_bd_row *x)
{
    if (a->gap_open)
        close_gap(a, kernel_wait_ns);
    x->start_ns = a->start;
    x->end_ns = a->end;
    x->window_ns = a->end - a->start;
    x->busy_ns = union_len(&a->u[BD_ALL]);
    x->idle_ns = x->window_ns - x->busy_ns;
    x->compute_ns = union_len(&a->u[BD_COMPUTE]);
    x->comm_ns = union_len(&a->u[BD_COMM]);
    x->memory_ns = union_len(&a->u[BD_MEMORY]);
    /* |comm n compute| = |comm| + |compute| - |comm u compute| */
    x->overlap_ns = x->comm_ns + x->compute_ns - union_len(&a->u[BD_COMM_COMPUTE]);
    x->exposed_comm_ns = x->comm_ns - x->overlap_ns;
    x->busy_pct = x->window_ns ? 100.0 * (double)x->busy_ns / (double)x->window_ns : NAN;
    x->overlap_pct = x->comm_ns ? 100.0 * (double)x->overlap_ns / (double)x->comm_ns : NAN;
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
    qsort(v, n, sizeof(*v), cmp_i64);
    return ((double)v[(n - 1) / 2] + (double)v[n / 2]) / 2.0;
}

/* a new row in res->ranks or res->rows, ids filled; NULL when out of memory */
static tt_bd_row *new_row(struct bd_run *r, int rank_row, const struct bd_trace *t,
                          int64_t device)
{
    tt_bd_row **a = rank_row ? &r->res->ranks : &r->res->rows;
    size_t *n = rank_row ? &r->res->nranks : &r->res->nrows;
    tt_bd_row *x;
    if (TT_ALLOC_GROW(*a, *n + 1, *(rank_row ? &r->aranks : &r->arows)) < 0)
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
static int unit_rows(struct bd_run *r, const struct bd_trace *t, struct bd_dev *d, size_t *lmap)
{
    int64_t kw = r->o->kernel_wait_ns;
    size_t k;
    if (r->o->by == TT_BD_BY_STEP) {
        for (k = 0; k < t->nst; k++) {
            tt_bd_row *x;
            if (!d->steps[k].any)
                continue;
            if (!(x = new_row(r, 0, t, d->device)))
                return tt_error_set(TT_ENOMEM, "out of memory");
            tt__bd_acc_row(&d->steps[k], kw, x);
            x->step = t->st[k].num;
            lmap[k] = r->res->nrows - 1;
        }
    } else if (r->o->by == TT_BD_BY_STREAM) {
        struct bd_sacc **ord = malloc((d->nstreams ? d->nstreams : 1) * sizeof(*ord));
        if (!ord)
            return tt_error_set(TT_ENOMEM, "out of memory");
        for (k = 0; k < d->nstreams; k++)
            ord[k] = &d->streams[k];
        qsort(ord, d->nstreams, sizeof(*ord), cmp_stream);
        for (k = 0; k < d->nstreams; k++) {
            tt_bd_row *x = new_row(r, 0, t, d->device);
            if (!x) {
                free(ord);
                return tt_error_set(TT_ENOMEM, "out of memory");
            }
            tt__bd_acc_row(&ord[k]->acc, kw, x);
            x->stream = ord[k]->stream;
            lmap[ord[k] - d->streams] = r->res->nrows - 1;
        }
        free(ord);
    }
    return 0;
}

/* the family (or op) totals of the device's local units (src) into the
 * run's, by row (dst) */
static int move_units(struct bd_run *r, const struct i64map *src, struct i64map *dst,
                      const size_t *lmap, size_t rank_row)
{
    size_t i;
    for (i = 0; i < src->cap; i++) {
        int64_t key, idx, local;
        size_t unit, have = 0;
        if (!src->used[i])
            continue;
        idx = src->k[i] >> 32;
        local = src->k[i] & 0xffffffff;
        unit = r->o->by == TT_BD_BY_RANK ? rank_row : lmap[local];
        key = idx << 32 | (int64_t)unit;
        tt__i64map_get(dst, key, &have);
        if (tt__i64map_put(dst, key, (size_t)tt_sat_add((int64_t)have, (int64_t)src->v[i])) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
    }
    return 0;
}

/* the rows of a device whose activities are all read */
static int flush_device(struct bd_run *r, const struct bd_trace *t, struct bd_dev *d)
{
    int64_t *span;
    size_t k, n = 0, *lmap, nl, rank_row;
    tt_bd_row *x;
    int rc;
    if (!d->all.any)
        return 0;
    if (!(x = new_row(r, 1, t, d->device)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    rank_row = r->res->nranks - 1;
    tt__bd_acc_row(&d->all, r->o->kernel_wait_ns, x);
    if (!(span = malloc((t->nst ? t->nst : 1) * sizeof(*span))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    for (k = 0; k < t->nst; k++)
        if (d->steps[k].any)
            span[n++] = acc_span(&d->steps[k]);
    x->steps = (int64_t)n;
    x->step_ns = n ? tt__bd_median(span, n) : (double)x->window_ns;
    free(span);
    nl = t->nst > d->nstreams ? t->nst : d->nstreams;
    if (!(lmap = calloc(nl ? nl : 1, sizeof(*lmap))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    rc = unit_rows(r, t, d, lmap);
    if (rc == 0)
        rc = move_units(r, &d->fam, &r->units, lmap, rank_row);
    if (rc == 0)
        rc = move_units(r, &d->ops, &r->op_units, lmap, rank_row);
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

/* what one activity row adds to the device's state */
struct bd_act {
    int64_t stream, ts, end, rt_ts;
    int has_rt, has_rt_dur;
    size_t fam, op;          /* its family, the op that launched it */
    int cls;
};

/* ns more for index idx (a family or an op) in local unit `local` */
static int unit_add(struct i64map *m, size_t idx, size_t local, int64_t ns)
{
    int64_t key = (int64_t)idx << 32 | (int64_t)local;
    size_t have = 0;
    tt__i64map_get(m, key, &have);
    if (tt__i64map_put(m, key, (size_t)tt_sat_add((int64_t)have, ns)) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    return 0;
}

static int add_activity(struct bd_run *r, struct bd_dev *d, const struct bd_act *a, long step)
{
    int64_t kw = r->o->kernel_wait_ns;
    struct bd_fam *f = &r->fam[a->fam];
    struct bd_op *op = &r->op[a->op];
    struct bd_acc *sa;
    size_t slot, local = 0;
    tt__bd_acc_add(&d->all, a->cls, a->ts, a->end, a->has_rt, a->rt_ts, kw);
    if (step >= 0)
        tt__bd_acc_add(&d->steps[step], a->cls, a->ts, a->end, a->has_rt, a->rt_ts, kw);
    if (!(sa = stream_acc(d, a->stream, &slot)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    tt__bd_acc_add(sa, a->cls, a->ts, a->end, a->has_rt, a->rt_ts, kw);
    f->count++;
    f->total = tt_sat_add(f->total, a->end - a->ts);
    f->nlaunch += a->has_rt;
    f->nrt += a->has_rt && a->has_rt_dur;
    op->count++;
    op->total = tt_sat_add(op->total, a->end - a->ts);
    if (r->o->by == TT_BD_BY_STEP) {
        if (step < 0)
            return 0; /* outside every step: no step row to count it in */
        local = (size_t)step;
    } else if (r->o->by == TT_BD_BY_STREAM) {
        local = slot;
    }
    if (unit_add(&d->fam, a->fam, local, a->end - a->ts) < 0 ||
        unit_add(&d->ops, a->op, local, a->end - a->ts) < 0)
        return TT_ENOMEM;
    return 0;
}

static int kind_code(const unsigned char *k)
{
    if (!k)
        return 0;
    if (!strcmp((const char *)k, "kernel"))
        return BD_KIND_KERNEL;
    if (!strcmp((const char *)k, "memcpy"))
        return BD_KIND_MEMCPY;
    return !strcmp((const char *)k, "memset") ? BD_KIND_MEMSET : 0;
}

/* every GPU activity of one trace, by device and start */
static int sweep_trace(struct bd_run *r, const struct bd_trace *t)
{
    sqlite3_stmt *st;
    struct bd_dev d;
    int rc = 0, s;
    memset(&d, 0, sizeof(d));
    if (!(d.steps = calloc(t->nst ? t->nst : 1, sizeof(*d.steps))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (tt_db_prepare(r->db, &st,
                      "SELECT coalesce(g.device, -1), coalesce(g.stream, -1), g.ts, g.dur, g.kind,"
                      " g.name, r.ts, r.dur, CASE WHEN g.op_id IS NULL THEN -1"
                      " ELSE coalesce(o.name, 0) END FROM gpu_ops AS g LEFT JOIN runtime AS r"
                      " ON r.id = g.runtime_id LEFT JOIN slices AS o ON o.id = g.op_id"
                      " WHERE g.trace_id = ?1"
                      " AND g.kind IN ('kernel', 'memcpy', 'memset') AND g.ts IS NOT NULL"
                      " AND g.dur IS NOT NULL ORDER BY 1, g.ts") < 0) {
        free(d.steps);
        return TT_EDB;
    }
    sqlite3_bind_int64(st, 1, t->id);
    while (rc == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        struct bd_act a;
        int64_t device = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 3);
        int kind = kind_code(sqlite3_column_text(st, 4));
        long step;
        if (!kind)
            continue;
        if (d.on && device != d.device) {
            if ((rc = flush_device(r, t, &d)) < 0)
                break;
            dev_reset(&d, t->nst);
        }
        d.on = 1;
        d.device = device;
        a.stream = sqlite3_column_int64(st, 1);
        a.ts = sqlite3_column_int64(st, 2);
        a.end = tt_end_ns(a.ts, dur);
        a.has_rt = sqlite3_column_type(st, 6) != SQLITE_NULL;
        a.rt_ts = sqlite3_column_int64(st, 6);
        a.has_rt_dur = sqlite3_column_type(st, 7) != SQLITE_NULL;
        step = tt__bd_step_at(t, a.has_rt ? a.rt_ts : a.ts);
        if (!tt__bd_selected(r, t, step))
            continue;
        if ((rc = tt__bd_family_of(r, sqlite3_column_int64(st, 5), kind, &a.fam, &a.cls)) == 0 &&
            (rc = tt__bd_op_of(r, sqlite3_column_int64(st, 8), &a.op)) == 0)
            rc = add_activity(r, &d, &a, step);
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = tt_db_error(r->db, "cannot read the GPU activities");
    sqlite3_finalize(st);
    if (rc == 0 && d.on)
        rc = flush_device(r, t, &d);
    tt__i64map_free(&d.fam);
    tt__i64map_free(&d.ops);
    free(d.streams);
    free(d.steps);
    return rc;
}

/* ---- the traces of a database ---- */

static int load_traces(struct bd_run *r, int *any)
{
    sqlite3_stmt *st;
    int rc = 0, s;
    if (tt_db_prepare(r->db, &st,
                      "SELECT id, rank FROM traces WHERE format IN ('kineto-json', 'chrome-array')"
                      " AND (?1 = 0 OR id = ?1) AND (?2 < 0 OR rank = ?2)"
                      " ORDER BY coalesce(rank, -1), id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, r->o->trace_id);
    sqlite3_bind_int64(st, 2, r->o->rank);
    while (rc == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        struct bd_trace *t;
        *any = 1;
        if (TT_ALLOC_GROW(r->tr, r->ntr + 1, r->atr) < 0) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            break;
        }
        t = &r->tr[r->ntr];
        memset(t, 0, sizeof(*t));
        t->id = sqlite3_column_int64(st, 0);
        t->rank = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
        r->ntr++;
        if (tt__i64map_put(&r->tr_index, t->id, r->ntr) < 0)
            rc = tt_error_set(TT_ENOMEM, "out of memory");
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = tt_db_error(r->db, "cannot read the traces");
    sqlite3_finalize(st);
    return rc;
}

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

static int no_activity(struct bd_run *r)
{
    const char *src = r->db->source ? r->db->source : r->db->path;
    if (r->o->steps_set)
        return tt_error_set_at(TT_ENOTFOUND, src, -1,
                               "no GPU activity (kernel, memcpy, memset) launched in"
                               " ProfilerStep#%" PRId64 "..#%" PRId64, r->o->step_from,
                               r->o->step_to);
    return tt_error_set_at(TT_ENOTFOUND, src, -1,
                           "no GPU activity (kernel, memcpy, memset) in %s",
                           r->db->source ? "this trace" : "the selected traces");
}

int tt_breakdown_db_result(tt_db *db, const tt_bd_options *o, tt_bd_result *res)
{
    struct bd_run r;
    size_t k;
    int rc, any = 0;
    memset(res, 0, sizeof(*res));
    memset(&r, 0, sizeof(r));
    r.db = db;
    r.o = o;
    r.res = res;
    res->by = o->by;
    res->kernel_wait_ns = o->kernel_wait_ns;
    res->steps_set = o->steps_set;
    res->step_from = o->step_from;
    res->step_to = o->step_to;
    res->slowest = res->most_compute = (size_t)-1;
    rc = o->version >= 2 ? tt_comm_rules_compile(&r.comm, o->comm_patterns, o->ncomm_patterns) : 0;
    if (rc == 0)
        rc = load_traces(&r, &any);
    if (rc == 0 && !any)
        rc = tt__db_none(db, o->trace_id || o->rank >= 0, "Chrome/Kineto trace");
    if (rc == 0 && tt_db_prepare(db, &r.str, "SELECT s FROM strings WHERE id = ?1") < 0)
        rc = TT_EDB;
    for (k = 0; rc == 0 && k < r.ntr; k++) {
        size_t before = res->nranks;
        if ((rc = tt__step_spans(r.db, r.tr[k].id, &r.tr[k].st, &r.tr[k].nst)) == 0)
            rc = sweep_trace(&r, &r.tr[k]);
        res->no_gpu += res->nranks == before;
    }
    res->traces = r.ntr;
    if (rc == 0 && !res->nranks)
        rc = no_activity(&r);
    if (rc == 0) {
        res->step_skew = skew_of(res, 0, &res->slowest);
        res->compute_skew = skew_of(res, 1, &res->most_compute);
        rc = tt__bd_families(&r, o->by == TT_BD_BY_RANK ? res->nranks : res->nrows);
    }
    if (rc == 0)
        rc = tt__bd_ops(&r, o->by == TT_BD_BY_RANK ? res->nranks : res->nrows);
    if (rc == 0)
        rc = tt__bd_launches(&r);
    tt__bd_run_release(&r);
    if (rc < 0)
        tt_bd_result_free(res);
    return rc;
}

/* a directory: every trace file under it, into one temporary database */
static int open_dir(tt_db **db, const char *path)
{
    int rc = tt_db_open_input(db, path);
    if (rc == 0)
        tt_db_exec(*db, "PRAGMA cache_size=-16384; PRAGMA threads=2");
    return rc;
}

/* a file or "-" in a database with only the tables read here */
static int open_input(tt_db **db, const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return open_dir(db, path);
    return tt__open_ingested_temp_only(db, path, TT_READ_NO_ARGS,
                                       1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW |
                                           1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META |
                                           1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL);
}

int tt_breakdown_file_result(const char *path, const tt_bd_options *o, tt_bd_result *res)
{
    tt_db *db;
    int rc;
    memset(res, 0, sizeof(*res));
    if ((rc = open_input(&db, path)) < 0)
        return rc;
    rc = tt_breakdown_db_result(db, o, res);
    if (rc < 0) /* name the input, not the temporary database */
        tt_error_set_source(path);
    tt_db_free(db);
    return rc;
}

void tt__bd_run_release(struct bd_run *r)
{
    size_t k;
    for (k = 0; k < r->ntr; k++)
        free(r->tr[k].st);
    free(r->tr);
    tt__i64map_free(&r->tr_index);
    for (k = 0; k < r->nfam; k++)
        free(r->fam[k].name);
    free(r->fam);
    free(r->fslot);
    tt__i64map_free(&r->names);
    tt__i64map_free(&r->units);
    for (k = 0; k < r->nop; k++)
        free(r->op[k].name);
    free(r->op);
    tt__i64map_free(&r->op_names);
    tt__i64map_free(&r->op_units);
    sqlite3_finalize(r->str);
    tt_comm_rules_free(&r->comm);
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

int tt_breakdown_db(tt_db *db, const tt_bd_options *o, FILE *out)
{
    tt_bd_result res;
    int rc = tt_breakdown_db_result(db, o, &res);
    if (rc == 0)
        rc = tt_breakdown_print(&res, o, out);
    tt_bd_result_free(&res);
    return rc;
}

int tt_breakdown_file(const char *path, const tt_bd_options *o, FILE *out)
{
    tt_bd_result res;
    int rc = tt_breakdown_file_result(path, o, &res);
    if (rc == 0)
        rc = tt_breakdown_print(&res, o, out);
    tt_bd_result_free(&res);
    return rc;
}
