/*
 * analyze/breakdown/breakdown_summary.c - breakdown's section of a per-rank
 * summary (formats/sumfile.h, docs/SUMMARY.md) and `breakdown` on a
 * summary.
 *
 * breakdown combines across ranks: the families and ops tables (spread over
 * the units of every rank), the launch percentiles (over all launches of a
 * family), the worst launches, the histogram and the skews. What a trace
 * leaves before that combination (struct bd_trace, and its share of the
 * run's families, ops, launch values, worst list and histogram) is its
 * section; `breakdown` on a summary rebuilds that state trace by trace into
 * a bd_run and hands it to tt__bd_finish, the step a database's traces end
 * with, so the result is the database's to the byte.
 *
 * A section (one JSON object, written in this key order, which the reader
 * relies on: families and ops before what refers to them):
 *   "version": 1, "chrome": 1 (0: not a Chrome/Kineto trace: nothing else
 *   counts), "kernel_wait_ns": the idle split's threshold (the default,
 *   TT_BD_KERNEL_WAIT_NS; other values are refused on a summary),
 *   "ranks": its device rows, each ROW below,
 *   "families": [[name, class, count, total_ns, [delay, n, ...],
 *                 [call duration, n, ...]], ...]  (launch values distinct,
 *                 ascending, with their counts: exact percentiles),
 *   "ops": [[name (null: activities without an op), count, total_ns], ...],
 *   "worst": its own worst launches (TT_BD_WORST at most, worst first):
 *            [[delay, call duration (-1: none), device, stream, ts, name,
 *              family (index into "families"), runtime call], ...],
 *   "hist": the TT_BD_HIST bins of its launch delays,
 *   "by": {"rank" | "step" | "stream": {"rows": [ROW, ...] (step / stream
 *          rows; none for rank), "fam": [[family, unit row, ns], ...],
 *          "ops": [[op, unit row, ns], ...]}}  (unit row: into "ranks" for
 *          rank, into that grouping's "rows" otherwise)
 *   ROW: [device, stream, step, steps, step_ns (null: NaN), start_ns,
 *         end_ns, busy_ns, compute_ns, comm_ns, memory_ns, overlap_ns,
 *         host_wait_ns, kernel_wait_ns, other_idle_ns, kernels,
 *         comm_kernels, memory_ops] (window, idle, exposed comm and the
 *         percentages follow from them)
 * --by annotation, --steps, the filters and --comm-pattern need the
 * traces: a summary refuses them (tt__sum_unsupported).
 */
#include "common/compat.h"
#include "common/arena.h"
#include "common/tmath.h"
#include "analyze/breakdown/breakdown_state.h"
#include "formats/sumfile.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#define BD_SUM_VERSION 1
#define BD_NBY 3 /* TT_BD_BY_RANK, _STEP, _STREAM */
#define BD_ROW_N 18
static const char *const by_key[BD_NBY] = { "rank", "step", "stream" };

/* ---- writing ---- */

/* one trace read with one grouping, not finished */
struct one {
    tt_bd_options o;
    tt_bd_result res;
    struct bd_run r;
};

static int one_read(struct one *x, const struct tt__sum_src *src, int by)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    int rc;
    x->o = o;
    x->o.by = by;
    if ((rc = tt__bd_run_init(&x->r, &x->o, &x->res)) < 0)
        return rc;
    x->r.keep_acts = 1;
    return src->db ? tt__bd_read_db_trace(&x->r, src->db, src->trace_id)
                   : tt__bd_read_file(&x->r, src->path, 1);
}

static void one_free(struct one *x)
{
    tt__bd_run_release(&x->r);
    tt_bd_result_free(&x->res);
}

static void put_row(tt_jw *w, const tt_bd_row *x)
{
    const int64_t a[] = { x->device, x->stream, x->step, x->steps };
    const int64_t b[] = { x->start_ns, x->end_ns, x->busy_ns, x->compute_ns, x->comm_ns,
                          x->memory_ns, x->overlap_ns, x->host_wait_ns, x->kernel_wait_ns,
                          x->other_idle_ns, x->kernels, x->comm_kernels, x->memory_ops };
    size_t k;
    tt_jw_arr(w);
    for (k = 0; k < sizeof(a) / sizeof(*a); k++)
        tt_jw_int(w, a[k]);
    tt_jw_num(w, x->step_ns, -1);
    for (k = 0; k < sizeof(b) / sizeof(*b); k++)
        tt_jw_int(w, b[k]);
    tt_jw_end(w);
}

static void put_rows(tt_jw *w, const char *key, const tt_bd_row *x, size_t n)
{
    size_t k;
    tt_jw_karr(w, key);
    for (k = 0; k < n; k++)
        put_row(w, &x[k]);
    tt_jw_end(w);
}

static int cmp_key(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return x < y ? -1 : x > y;
}

/* a units map (index << 32 | unit row -> ns) as [[index, unit, ns], ...],
 * by index then unit */
static int put_units(tt_jw *w, const char *key, const struct i64map *m)
{
    int64_t *kv = malloc((m->n ? m->n : 1) * 2 * sizeof(*kv));
    size_t i, n = 0;
    if (!kv)
        return tt__oom();
    for (i = 0; i < m->cap; i++)
        if (m->used[i]) {
            kv[2 * n] = m->k[i];
            kv[2 * n++ + 1] = (int64_t)m->v[i];
        }
    TT_QSORT(kv, n, 2 * sizeof(*kv), cmp_key);
    tt_jw_karr(w, key);
    for (i = 0; i < n; i++) {
        tt_jw_arr(w);
        tt_jw_int(w, kv[2 * i] >> 32);
        tt_jw_int(w, kv[2 * i] & 0xffffffff);
        tt_jw_int(w, kv[2 * i + 1]);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    free(kv);
    return 0;
}

/* a spill reader with one record looked ahead */
struct peek {
    int have;
    size_t fam;
    int64_t v;
};

static int peek_next(struct bd_run *r, int rt, struct peek *p)
{
    int rc = tt__bd_launch_next(r, rt, &p->fam, &p->v);
    p->have = rc == 1;
    return rc < 0 ? rc : 0;
}

/* family fam's values (the next ones of the spill) as [v, n, ...] */
static int put_values(tt_jw *w, struct bd_run *r, int rt, size_t fam, struct peek *p)
{
    int rc = 0;
    tt_jw_arr(w);
    while (rc == 0 && p->have && p->fam == fam) {
        int64_t v = p->v, n = 0;
        while (rc == 0 && p->have && p->fam == fam && p->v == v) {
            n++;
            rc = peek_next(r, rt, p);
        }
        tt_jw_int(w, v);
        tt_jw_int(w, n);
    }
    tt_jw_end(w);
    return rc;
}

static int put_families(tt_jw *w, struct bd_run *r)
{
    struct peek pd, pr;
    size_t k;
    int rc;
    if ((rc = tt__bd_launch_rewind(r, 0)) < 0 || (rc = tt__bd_launch_rewind(r, 1)) < 0 ||
        (rc = peek_next(r, 0, &pd)) < 0 || (rc = peek_next(r, 1, &pr)) < 0)
        return rc;
    tt_jw_karr(w, "families");
    for (k = 0; rc == 0 && k < r->nfam; k++) {
        const struct bd_fam *f = &r->fam[k];
        tt_jw_arr(w);
        tt_jw_str(w, f->name);
        tt_jw_int(w, f->cls);
        tt_jw_int(w, f->count);
        tt_jw_int(w, f->total);
        if ((rc = put_values(w, r, 0, k, &pd)) == 0)
            rc = put_values(w, r, 1, k, &pr);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    return rc;
}

/* what the grouping does not change: rows, families, ops, launches */
static int put_common(tt_jw *w, struct bd_run *r)
{
    const struct bd_trace *t = &r->tr[0];
    size_t k;
    int rc;
    put_rows(w, "ranks", t->ranks, t->nranks);
    if ((rc = put_families(w, r)) < 0)
        return rc;
    tt_jw_karr(w, "ops");
    for (k = 0; k < r->nop; k++) {
        tt_jw_arr(w);
        tt_jw_str(w, (long)k == r->no_op ? NULL : r->op[k].name);
        tt_jw_int(w, r->op[k].count);
        tt_jw_int(w, r->op[k].total);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    tt_jw_karr(w, "worst");
    for (k = 0; k < r->ntop; k++) {
        const struct bd_wl *x = &r->top[k];
        tt_jw_arr(w);
        tt_jw_int(w, x->delay);
        tt_jw_int(w, x->rt_dur);
        tt_jw_int(w, x->device);
        tt_jw_int(w, x->stream);
        tt_jw_int(w, x->ts);
        tt_jw_str(w, x->name_s);
        tt_jw_int(w, (int64_t)x->fam);
        tt_jw_str(w, x->rt_s);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    tt_jw_karr(w, "hist");
    for (k = 0; k < TT_BD_HIST; k++)
        tt_jw_int(w, r->res->delay_hist[k]);
    tt_jw_end(w);
    return 0;
}

/* one grouping's rows and unit totals, from trace t */
static int put_grouping(tt_jw *w, int by, const struct bd_trace *t)
{
    int rc;
    tt_jw_kobj(w, by_key[by]);
    put_rows(w, "rows", t->rows, t->nrows);
    if ((rc = put_units(w, "fam", &t->units)) == 0)
        rc = put_units(w, "ops", &t->op_units);
    tt_jw_end(w);
    return rc;
}

/* the groupings: rank from the reading, step and stream from its
 * activities swept again (the families and ops are the reading's) */
static int put_groupings(tt_jw *w, struct one *x)
{
    const struct bd_trace *t = &x->r.tr[0];
    int by, rc = put_grouping(w, TT_BD_BY_RANK, t);
    for (by = TT_BD_BY_STEP; rc == 0 && by <= TT_BD_BY_STREAM; by++) {
        struct bd_trace u;
        memset(&u, 0, sizeof(u));
        u.id = t->id;
        u.rank = t->rank;
        u.st = t->st;
        u.nst = t->nst;
        x->o.by = by;
        if ((rc = tt__bd_sweep_again(&x->r, &u)) == 0)
            rc = put_grouping(w, by, &u);
        free(u.ranks);
        free(u.rows);
        tt__i64map_free(&u.units);
        tt__i64map_free(&u.op_units);
    }
    return rc;
}

/* The trace is read once (its rows, --by rank); its resolved activities
 * are kept and swept again for the other groupings. */
int tt__bd_sum_write(const struct tt__sum_src *src, tt_jw *w)
{
    struct one x;
    int rc, chrome;
    memset(&x, 0, sizeof(x));
    rc = one_read(&x, src, TT_BD_BY_RANK);
    chrome = rc == 0 && x.r.ntr == 1;
    tt_jw_obj(w);
    tt_jw_kint(w, "version", BD_SUM_VERSION);
    tt_jw_kint(w, "chrome", chrome);
    tt_jw_kint(w, "kernel_wait_ns", x.o.kernel_wait_ns);
    if (chrome && (rc = put_common(w, &x.r)) == 0) {
        tt_jw_kobj(w, "by");
        rc = put_groupings(w, &x);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    one_free(&x);
    return rc;
}

/* ---- reading ---- */

struct rdr {
    const tt_summary *s;
    const struct tt__sum_trace *t;
    const tt_bd_options *o;
    tt_jp jp;
    tt_arena a;
    struct bd_run *r;
    struct bd_trace *tr;
    int chrome;
    size_t *fmap, nfmap, afmap;  /* the section's family index -> the run's */
    size_t *omap, nomap, aomap;  /* the same for ops */
    char what[512];              /* "trace N (PATH): breakdown section", for messages */
};

static int bad(struct rdr *d, const char *what)
{
    return tt_error_set_at(TT_EINVALID, d->s->path, tt_jp_offset(&d->jp), "%s: %s", d->what,
                           what);
}

static int get_i64(struct rdr *d, int64_t *v)
{
    return tt__sum_int(&d->jp, d->what, v);
}

/* a double written "%.17g", or null (NaN) */
static int get_f64(struct rdr *d, double *v)
{
    return tt__sum_num(&d->jp, d->what, v);
}

/* a string (NUL-terminated, in the arena) or null (NULL) */
static int get_str(struct rdr *d, const char **s)
{
    return tt__sum_str(&d->jp, d->what, &d->a, s, NULL);
}

static int arr_begin(struct rdr *d)
{
    if (tt_jp_peek(&d->jp) != TT_JT_ARRAY)
        return bad(d, "an array expected");
    return tt_jp_array_begin(&d->jp);
}

/* the next element of an array that must have one */
static int elem(struct rdr *d)
{
    int rc = tt_jp_array_next(&d->jp);
    return rc < 0 ? rc : rc == 0 ? bad(d, "an array too short") : 0;
}

/* the end of an array that must have no more */
static int arr_end(struct rdr *d)
{
    int rc = tt_jp_array_next(&d->jp);
    return rc < 0 ? rc : rc == 1 ? bad(d, "an array too long") : 0;
}

/* n integers in an array of them */
static int get_ints(struct rdr *d, int64_t *v, size_t n)
{
    size_t k;
    int rc = arr_begin(d);
    for (k = 0; rc == 0 && k < n; k++)
        if ((rc = elem(d)) == 0)
            rc = get_i64(d, &v[k]);
    return rc < 0 ? rc : arr_end(d);
}

static int get_row(struct rdr *d, tt_bd_row *x)
{
    int64_t v[BD_ROW_N];
    size_t k;
    int rc = arr_begin(d);
    for (k = 0; rc == 0 && k < BD_ROW_N; k++)
        if ((rc = elem(d)) == 0)
            rc = k == 4 ? get_f64(d, &x->step_ns) : get_i64(d, &v[k]);
    if (rc < 0 || (rc = arr_end(d)) < 0)
        return rc;
    x->trace_id = d->tr->id;
    x->rank = d->tr->rank;
    x->device = v[0];
    x->stream = v[1];
    x->step = v[2];
    x->steps = v[3];
    x->start_ns = v[5];
    x->end_ns = v[6];
    x->busy_ns = v[7];
    x->compute_ns = v[8];
    x->comm_ns = v[9];
    x->memory_ns = v[10];
    x->overlap_ns = v[11];
    x->host_wait_ns = v[12];
    x->kernel_wait_ns = v[13];
    x->other_idle_ns = v[14];
    x->kernels = v[15];
    x->comm_kernels = v[16];
    x->memory_ops = v[17];
    tt__bd_row_derive(x);
    return 0;
}

static int get_rows(struct rdr *d, tt_bd_row **rows, size_t *n, size_t *alloc)
{
    int rc = arr_begin(d);
    while (rc == 0 && (rc = tt_jp_array_next(&d->jp)) == 1) {
        if (TT_ALLOC_GROW(*rows, *n + 1, *alloc) < 0)
            return tt__oom();
        memset(&(*rows)[*n], 0, sizeof(**rows));
        if ((rc = get_row(d, &(*rows)[(*n)++])) < 0)
            return rc;
        rc = 0;
    }
    return rc;
}

/* a family's values [v, n, ...] into the run's spill (rt: call durations):
 * *count launches, the largest value *max */
static int get_values(struct rdr *d, int rt, size_t fam, int64_t *count, int64_t *max)
{
    int64_t v, n, i;
    int rc = arr_begin(d);
    *count = 0;
    while (rc == 0 && (rc = tt_jp_array_next(&d->jp)) == 1) {
        if ((rc = get_i64(d, &v)) < 0 || (rc = elem(d)) < 0 || (rc = get_i64(d, &n)) < 0)
            return rc;
        if (n <= 0)
            return bad(d, "a launch value's count is not positive");
        for (i = 0; i < n; i++)
            if ((rc = tt__bd_launch_value(d->r, rt, fam, v)) < 0)
                return rc;
        *count += n;
        *max = v;
    }
    return rc;
}

/* the trace's worst launch of family g: the family's when it is worse
 * (as tt__bd_launch_add keeps it) */
static void family_best(struct bd_run *r, size_t g, int64_t delay, int64_t trace)
{
    struct bd_fam *f = &r->fam[g];
    struct bd_wl w;
    memset(&w, 0, sizeof(w));
    w.delay = delay;
    w.trace = trace;
    w.fam = g;
    if (!f->has_best || tt__bd_worse(&w, &f->best)) {
        f->best = w;
        f->has_best = 1;
    }
}

static int get_family(struct rdr *d)
{
    int64_t v[3], nl = 0, nrt = 0, dmax = 0, rmax = 0;
    const char *name;
    long g;
    int rc;
    if ((rc = arr_begin(d)) < 0 || (rc = elem(d)) < 0 || (rc = get_str(d, &name)) < 0)
        return rc;
    if (!name)
        return bad(d, "a family without a name");
    if ((rc = elem(d)) < 0 || (rc = get_i64(d, &v[0])) < 0 || (rc = elem(d)) < 0 ||
        (rc = get_i64(d, &v[1])) < 0 || (rc = elem(d)) < 0 || (rc = get_i64(d, &v[2])) < 0)
        return rc;
    if (v[0] < TT_BD_COMPUTE || v[0] > TT_BD_MEMORY)
        return bad(d, "a family's class is not 0, 1 or 2");
    if ((g = tt__bd_fam_named(d->r, name, (int)v[0])) < 0)
        return tt__oom();
    if (TT_ALLOC_GROW(d->fmap, d->nfmap + 1, d->afmap) < 0)
        return tt__oom();
    d->fmap[d->nfmap++] = (size_t)g;
    if ((rc = elem(d)) < 0 || (rc = get_values(d, 0, (size_t)g, &nl, &dmax)) < 0 ||
        (rc = elem(d)) < 0 || (rc = get_values(d, 1, (size_t)g, &nrt, &rmax)) < 0)
        return rc;
    d->r->fam[g].count += v[1];
    d->r->fam[g].total = tt_sat_add(d->r->fam[g].total, v[2]);
    d->r->fam[g].nlaunch += nl;
    d->r->fam[g].nrt += nrt;
    if (nl)
        family_best(d->r, (size_t)g, dmax, d->tr->id);
    return arr_end(d);
}

static int get_op(struct rdr *d)
{
    int64_t v[2];
    const char *name;
    long g;
    int rc;
    if ((rc = arr_begin(d)) < 0 || (rc = elem(d)) < 0 || (rc = get_str(d, &name)) < 0 ||
        (rc = elem(d)) < 0 || (rc = get_i64(d, &v[0])) < 0 || (rc = elem(d)) < 0 ||
        (rc = get_i64(d, &v[1])) < 0 || (rc = arr_end(d)) < 0)
        return rc;
    if ((g = tt__bd_op_named(d->r, name)) < 0 || TT_ALLOC_GROW(d->omap, d->nomap + 1, d->aomap) < 0)
        return tt__oom();
    d->omap[d->nomap++] = (size_t)g;
    d->r->op[g].count += v[0];
    d->r->op[g].total = tt_sat_add(d->r->op[g].total, v[1]);
    return 0;
}

/* one of the trace's worst launches, the k-th: its place in the trace's
 * own order stands for its name and place (the tie-breaks after the trace) */
static int get_worst(struct rdr *d, int64_t k)
{
    int64_t v[5], fam;
    const char *name, *rt;
    struct bd_wl w;
    size_t i;
    int rc = arr_begin(d);
    for (i = 0; rc == 0 && i < 5; i++)
        if ((rc = elem(d)) == 0)
            rc = get_i64(d, &v[i]);
    if (rc < 0 || (rc = elem(d)) < 0 || (rc = get_str(d, &name)) < 0 || (rc = elem(d)) < 0 ||
        (rc = get_i64(d, &fam)) < 0 || (rc = elem(d)) < 0 || (rc = get_str(d, &rt)) < 0 ||
        (rc = arr_end(d)) < 0)
        return rc;
    if (fam < 0 || (size_t)fam >= d->nfmap)
        return bad(d, "a worst launch's family is not in \"families\"");
    memset(&w, 0, sizeof(w));
    w.delay = v[0];
    w.rt_dur = v[1];
    w.device = v[2];
    w.stream = v[3];
    w.ts = v[4];
    w.trace = d->tr->id;
    w.name = w.rt_name = w.seq = k;
    w.fam = d->fmap[fam];
    w.name_s = strdup(name ? name : "");
    w.rt_s = strdup(rt ? rt : "");
    return tt__bd_top_insert(d->r, &w);
}

/* [[index, unit, ns], ...] into m, the index mapped by map (n of them),
 * the unit under nunits */
static int get_units(struct rdr *d, struct i64map *m, const size_t *map, size_t n,
                     size_t nunits)
{
    int64_t v[3];
    int rc = arr_begin(d);
    while (rc == 0 && (rc = tt_jp_array_next(&d->jp)) == 1) {
        size_t have = 0;
        int64_t key;
        if ((rc = get_ints(d, v, 3)) < 0)
            return rc;
        if (v[0] < 0 || (size_t)v[0] >= n || v[1] < 0 || (size_t)v[1] >= nunits)
            return bad(d, "a unit total names no family, op or row");
        key = (int64_t)map[v[0]] << 32 | v[1];
        tt__i64map_get(m, key, &have);
        if (tt__i64map_put(m, key, (size_t)tt_sat_add((int64_t)have, v[2])) < 0)
            return tt__oom();
    }
    return rc;
}

/* the grouping's rows and unit totals */
static int get_by(struct rdr *d)
{
    struct bd_trace *t = d->tr;
    const char *k;
    size_t kl;
    int rc = tt_jp_object_begin(&d->jp);
    while (rc == 0 && (rc = tt_jp_object_next(&d->jp, &d->a, &k, &kl)) == 1) {
        size_t nunits = d->o->by == TT_BD_BY_RANK ? t->nranks : t->nrows;
        if (kl == 4 && !memcmp(k, "rows", 4))
            rc = get_rows(d, &t->rows, &t->nrows, &t->arows);
        else if (kl == 3 && !memcmp(k, "fam", 3))
            rc = get_units(d, &t->units, d->fmap, d->nfmap, nunits);
        else if (kl == 3 && !memcmp(k, "ops", 3))
            rc = get_units(d, &t->op_units, d->omap, d->nomap, nunits);
        else
            rc = tt_jp_skip(&d->jp);
    }
    return rc;
}

static int get_groupings(struct rdr *d, int *found)
{
    const char *k;
    size_t kl;
    int rc;
    if (tt_jp_peek(&d->jp) != TT_JT_OBJECT)
        return bad(d, "\"by\" is not an object");
    rc = tt_jp_object_begin(&d->jp);
    while (rc == 0 && (rc = tt_jp_object_next(&d->jp, &d->a, &k, &kl)) == 1) {
        const char *want = by_key[d->o->by];
        if (kl == strlen(want) && !memcmp(k, want, kl)) {
            *found = 1;
            if (tt_jp_peek(&d->jp) != TT_JT_OBJECT)
                return bad(d, "a grouping is not an object");
            rc = get_by(d);
        } else {
            rc = tt_jp_skip(&d->jp);
        }
    }
    return rc;
}

/* each element of an array through fn */
static int each_elem(struct rdr *d, int (*fn)(struct rdr *d))
{
    int rc = arr_begin(d);
    while (rc == 0 && (rc = tt_jp_array_next(&d->jp)) == 1)
        rc = fn(d);
    return rc;
}

static int get_worst_list(struct rdr *d)
{
    int64_t k = 0;
    int rc = arr_begin(d);
    while (rc == 0 && (rc = tt_jp_array_next(&d->jp)) == 1)
        rc = get_worst(d, k++);
    return rc;
}

static int get_hist(struct rdr *d)
{
    int64_t h[TT_BD_HIST];
    size_t k;
    int rc = get_ints(d, h, TT_BD_HIST);
    for (k = 0; rc == 0 && k < TT_BD_HIST; k++)
        d->r->res->delay_hist[k] += h[k];
    return rc;
}

static int key_is(const char *k, size_t kl, const char *s)
{
    return kl == strlen(s) && !memcmp(k, s, kl);
}

/* one member of the section */
static int get_member(struct rdr *d, const char *k, size_t kl, int *found)
{
    int64_t v;
    int rc;
    if (key_is(k, kl, "version") || key_is(k, kl, "chrome") || key_is(k, kl, "kernel_wait_ns")) {
        if ((rc = get_i64(d, &v)) < 0)
            return rc;
        if (key_is(k, kl, "version") && v > BD_SUM_VERSION)
            return tt_error_set_at(TT_EUNSUPPORTED, d->s->path, -1,
                                   "trace %" PRId64 ": breakdown section version %" PRId64
                                   " is newer than this tracetool reads (%d)",
                                   d->t->id, v, BD_SUM_VERSION);
        if (key_is(k, kl, "chrome"))
            d->chrome = v != 0;
        if (key_is(k, kl, "kernel_wait_ns") && v != d->o->kernel_wait_ns)
            return tt__sum_unsupported(d->s, "--kernel-wait other than the summary's "
                                             "(30000 ns)");
        return 0;
    }
    if (!d->chrome)
        return tt_jp_skip(&d->jp);
    if (key_is(k, kl, "ranks"))
        return get_rows(d, &d->tr->ranks, &d->tr->nranks, &d->tr->aranks);
    if (key_is(k, kl, "families"))
        return each_elem(d, get_family);
    if (key_is(k, kl, "ops"))
        return each_elem(d, get_op);
    if (key_is(k, kl, "worst"))
        return get_worst_list(d);
    if (key_is(k, kl, "hist"))
        return get_hist(d);
    if (key_is(k, kl, "by"))
        return get_groupings(d, found);
    return tt_jp_skip(&d->jp);
}

/* trace t's section into r: a new trace of it, its share of the rest */
static int load_trace(struct bd_run *r, const tt_summary *s, const struct tt__sum_trace *t)
{
    struct rdr d;
    const char *k;
    size_t kl;
    int rc, found = 0;
    if (!t->sec[TT__SEC_BREAKDOWN])
        return tt__sum_missing(s, t, TT__SEC_BREAKDOWN);
    if (TT_ALLOC_GROW(r->tr, r->ntr + 1, r->atr) < 0)
        return tt__oom();
    memset(&d, 0, sizeof(d));
    d.s = s;
    d.t = t;
    snprintf(d.what, sizeof(d.what), "trace %" PRId64 " (%s): breakdown section", t->id,
             t->path);
    d.o = r->o;
    d.r = r;
    d.tr = &r->tr[r->ntr++];
    memset(d.tr, 0, sizeof(*d.tr));
    d.tr->id = t->id;
    d.tr->rank = t->have_rank ? t->rank : -1;
    tt__sum_section_jp(s, t, TT__SEC_BREAKDOWN, &d.jp);
    if (tt_jp_peek(&d.jp) != TT_JT_OBJECT)
        rc = bad(&d, "not an object");
    else
        rc = tt_jp_object_begin(&d.jp);
    while (rc == 0 && (rc = tt_jp_object_next(&d.jp, &d.a, &k, &kl)) == 1)
        rc = get_member(&d, k, kl, &found);
    if (rc == 0)
        rc = tt_jp_finish(&d.jp);
    if (rc == 0 && d.chrome && !found)
        rc = bad(&d, "no rows for this --by");
    if (rc == 0 && !d.chrome) { /* not a Chrome/Kineto trace: not analysed */
        r->ntr--;
        free(d.tr->ranks);
        free(d.tr->rows);
        tt__i64map_free(&d.tr->units);
        tt__i64map_free(&d.tr->op_units);
    }
    free(d.fmap);
    free(d.omap);
    tt_arena_release(&d.a);
    return rc;
}

/* what a summary cannot answer */
static int check_options(const tt_summary *s, const tt_bd_options *o)
{
    if (TT__BD_ANNOT(o))
        return tt__sum_unsupported(s, "--by annotation");
    if (o->by < TT_BD_BY_RANK || o->by > TT_BD_BY_STREAM)
        return tt_error_set_at(TT_EINVALID, s->path, -1, "unknown breakdown grouping %d", o->by);
    if (o->steps_set)
        return tt__sum_unsupported(s, "--steps");
    if (o->version >= 3 && tt_filter_active(&o->filter))
        return tt__sum_unsupported(s, "--time-range, --name or --under");
    if (o->version >= 2 && o->ncomm_patterns)
        return tt__sum_unsupported(s, "--comm-pattern");
    return 0;
}

int tt_breakdown_summary_result(const tt_summary *s, const tt_bd_options *o, tt_bd_result *res)
{
    struct bd_run r;
    size_t k;
    int rc;
    memset(res, 0, sizeof(*res));
    memset(&r, 0, sizeof(r));
    if ((rc = check_options(s, o)) < 0)
        return rc;
    rc = tt__bd_run_init(&r, o, res);
    for (k = 0; rc == 0 && k < s->n; k++) {
        const struct tt__sum_trace *t = &s->traces[k];
        if ((o->trace_id && t->id != o->trace_id) ||
            (o->rank >= 0 && (!t->have_rank || t->rank != o->rank)))
            continue;
        rc = load_trace(&r, s, t);
    }
    if (rc == 0 && !r.ntr)
        rc = tt_error_set_at(TT_ENOTFOUND, s->path, -1, "no Chrome/Kineto trace %s",
                             o->trace_id || o->rank >= 0 ? "matches --trace/--rank"
                                                         : "in this summary");
    else if (rc == 0)
        rc = tt__bd_finish(&r, s->path, 1);
    tt__bd_run_release(&r);
    if (rc < 0)
        tt_bd_result_free(res);
    return rc;
}
