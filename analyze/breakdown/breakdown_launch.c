/*
 * analyze/breakdown/breakdown_launch.c - kernel families for `tracetool breakdown`:
 * the family and class of each activity name (tt_kernel_family,
 * tt_kineto_is_comm with --comm-pattern), a family's GPU time spread over ranks, steps or
 * streams, and its launch percentiles.
 *
 * Percentiles are exact: the (family, delay) of every launch and the
 * (family, duration) of its call are spilled (common/spill.h, 16 bytes a
 * launch, bounded memory), sorted and read back family by family at the
 * end, keeping only the values at the percentiles' ranks. A
 * name is looked up once per trace (its string id), a family once per
 * distinct family text.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/tmath.h"
#include "analyze/breakdown/breakdown_state.h"
#include "formats/kineto.h"
#include "tracetool/formats.h"

#include <inttypes.h>
#include <math.h>

/* ---- families ---- */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

/* the index of `name` in the set (added when new: *added 1), or -1 when out
 * of memory */
static long name_index(struct bd_names *ns, const char *name, int *added)
{
    size_t k;
    *added = 0;
    if (2 * (ns->n + 1) > ns->nslot) {
        size_t cap = ns->nslot ? 2 * ns->nslot : 64, i;
        size_t *sl = calloc(cap, sizeof(*sl));
        if (!sl)
            return -1;
        for (i = 0; i < ns->n; i++) {
            k = (size_t)name_hash(ns->s[i]) & (cap - 1);
            while (sl[k])
                k = (k + 1) & (cap - 1);
            sl[k] = i + 1;
        }
        free(ns->slot);
        ns->slot = sl;
        ns->nslot = cap;
    }
    k = (size_t)name_hash(name) & (ns->nslot - 1);
    while (ns->slot[k]) {
        if (!strcmp(ns->s[ns->slot[k] - 1], name))
            return (long)ns->slot[k] - 1;
        k = (k + 1) & (ns->nslot - 1);
    }
    if (TT_ALLOC_GROW(ns->s, ns->n + 1, ns->a) < 0 || !(ns->s[ns->n] = strdup(name)))
        return -1;
    ns->slot[k] = ++ns->n;
    *added = 1;
    return (long)ns->n - 1;
}

/* the index of family `name` (added when new), or -1 when out of memory */
static long fam_index(struct bd_run *r, const char *name, int cls)
{
    int added;
    long f = name_index(&r->fnames, name, &added);
    if (f < 0 || !added)
        return f;
    if (TT_ALLOC_GROW(r->fam, r->nfam + 1, r->afam) < 0)
        return -1; /* the name stays in the set: freed with it */
    memset(&r->fam[r->nfam], 0, sizeof(r->fam[r->nfam]));
    r->fam[r->nfam].name = r->fnames.s[f];
    r->fam[r->nfam].cls = cls;
    r->nfam++;
    return f;
}

/* the family text of an activity name: a kernel's family, or "memcpy HtoD" */
static int family_text(const struct bd_run *r, const char *name, int kind, char *out, size_t cap)
{
    const char *ck;
    size_t n;
    if (kind == BD_KIND_KERNEL) {
        tt_kernel_family(name, out, cap);
        if (!out[0])
            snprintf(out, cap, "%s", name[0] ? name : "?");
        return tt_kineto_is_comm(name, &r->comm) ? TT_BD_COMM : TT_BD_COMPUTE;
    }
    n = tt_kineto_copy_kind(name, &ck);
    snprintf(out, cap, "%s %.*s", kind == BD_KIND_MEMCPY ? "memcpy" : "memset",
             n ? (int)n : 1, n ? ck : "?");
    return TT_BD_MEMORY;
}

int tt__bd_family_of(struct bd_run *r, int64_t name_id, int kind, size_t *fam, int *cls)
{
    int64_t key = name_id * 4 + kind;
    const char *name = tt__bd_str(&r->rd, name_id);
    char *buf;
    size_t v, cap;
    long f;
    int c;
    if (tt__i64map_get(&r->rd.fam_of, key, &v)) {
        *fam = (v - 1) >> 2;
        *cls = (int)((v - 1) & 3);
        return 0;
    }
    /* a family is never cut: TILE for "nn" is the only token that grows */
    cap = 2 * strlen(name) + 32;
    if (!(buf = malloc(cap)))
        return tt__oom();
    c = family_text(r, name, kind, buf, cap);
    f = fam_index(r, buf, c);
    free(buf);
    if (f < 0 || tt__i64map_put(&r->rd.fam_of, key, (size_t)f * 4 + (size_t)c + 1) < 0)
        return tt__oom();
    *fam = (size_t)f;
    *cls = c;
    return 0;
}

long tt__bd_fam_named(struct bd_run *r, const char *name, int cls)
{
    return fam_index(r, name, cls);
}

/* ---- the spread of each family over the unit rows ---- */

struct uval {
    int64_t ns;
    size_t unit;
};

static int cmp_uval(const void *a, const void *b)
{
    const struct uval *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return x->unit < y->unit ? -1 : x->unit > y->unit;
}

static int cmp_family(const void *a, const void *b)
{
    const tt_bd_family *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->family, y->family);
}

/* a unit spread: min / median / max over the units and the unit of the max */
struct sp {
    int64_t min, max;
    double median;
    size_t max_row;
};

/* min / median / max over nunits units of the present values v (sorted;
 * the units without one count 0) */
static void spread(struct sp *o, const struct uval *v, size_t n, size_t nunits)
{
    size_t zeros = nunits > n ? nunits - n : 0, k;
    int64_t at[2];
    o->min = o->max = 0;
    o->max_row = (size_t)-1;
    if (!nunits) {
        o->median = NAN;
        return;
    }
    o->min = zeros || !n ? 0 : v[0].ns;
    if (n) {
        /* the first unit with the maximum */
        for (k = n; k > 0 && v[k - 1].ns == v[n - 1].ns; k--)
            ;
        o->max = v[n - 1].ns;
        o->max_row = v[k].unit;
    }
    for (k = 0; k < 2; k++) {
        size_t p = k ? nunits / 2 : (nunits - 1) / 2;
        at[k] = p < zeros ? 0 : v[p - zeros].ns;
    }
    o->median = ((double)at[0] + (double)at[1]) / 2.0;
}

/* the values of a units map (index << 32 | unit row -> ns) grouped by
 * index: index i's are v[start[i] .. start[i] + fill[i]) */
struct groups {
    size_t *start, *fill;
    struct uval *v;
};

static void groups_free(struct groups *g)
{
    free(g->start);
    free(g->fill);
    free(g->v);
}

static int group_units(const struct i64map *m, size_t n, struct groups *g)
{
    size_t i, k;
    g->start = calloc(n + 1, sizeof(*g->start));
    g->fill = calloc(n + 1, sizeof(*g->fill));
    g->v = malloc((m->n ? m->n : 1) * sizeof(*g->v));
    if (!g->start || !g->fill || !g->v) {
        groups_free(g);
        return tt__oom();
    }
    for (i = 0; i < m->cap; i++)
        if (m->used[i])
            g->start[(m->k[i] >> 32) + 1]++;
    for (k = 0; k < n; k++)
        g->start[k + 1] += g->start[k];
    for (i = 0; i < m->cap; i++) {
        size_t f, at;
        if (!m->used[i])
            continue;
        f = (size_t)(m->k[i] >> 32);
        at = g->start[f] + g->fill[f]++;
        g->v[at].ns = (int64_t)m->v[i];
        g->v[at].unit = (size_t)(m->k[i] & 0xffffffff);
    }
    return 0;
}

/* index i's spread over nunits units */
static void group_spread(struct groups *g, size_t i, size_t nunits, struct sp *o)
{
    TT_QSORT(g->v + g->start[i], g->fill[i], sizeof(*g->v), cmp_uval);
    spread(o, g->v + g->start[i], g->fill[i], nunits);
}

int tt__bd_families(struct bd_run *r, size_t nunits)
{
    tt_bd_result *res = r->res;
    struct groups g;
    size_t k;
    int rc;
    if ((rc = group_units(&r->units, r->nfam, &g)) < 0)
        return rc;
    if (!(res->families = calloc(r->nfam ? r->nfam : 1, sizeof(*res->families)))) {
        groups_free(&g);
        return tt__oom();
    }
    for (k = 0; k < r->nfam; k++) {
        tt_bd_family *f = &res->families[res->nfamilies];
        struct sp o;
        if (!r->fam[k].count)
            continue;
        if (!(f->family = strdup(r->fam[k].name))) {
            rc = tt__oom();
            break;
        }
        res->nfamilies++;
        f->cls = r->fam[k].cls;
        f->count = r->fam[k].count;
        f->total_ns = r->fam[k].total;
        group_spread(&g, k, nunits, &o);
        f->min_ns = o.min;
        f->max_ns = o.max;
        f->median_ns = o.median;
        f->max_row = o.max_row;
    }
    TT_QSORT(res->families, res->nfamilies, sizeof(*res->families), cmp_family);
    groups_free(&g);
    return rc;
}

/* ---- CPU ops: the GPU time they launched ---- */

/* a new op named name (owned: the "no op" one), or -1 when out of memory */
static long op_new(struct bd_run *r, char *name)
{
    if (!name || TT_ALLOC_GROW(r->op, r->nop + 1, r->aop) < 0)
        return -1;
    memset(&r->op[r->nop], 0, sizeof(r->op[r->nop]));
    r->op[r->nop].name = name;
    return (long)r->nop++;
}

long tt__bd_op_named(struct bd_run *r, const char *name)
{
    long at;
    int added;
    if (!name) { /* activities without an op: their own row */
        if (r->no_op < 0) {
            char *s = strdup(TT_BD_NO_OP);
            if ((r->no_op = op_new(r, s)) < 0)
                free(s);
        }
        return r->no_op;
    }
    /* the op index of each name (onames index -> op index) */
    if ((at = name_index(&r->onames, name, &added)) < 0)
        return -1;
    if (added) {
        if (op_new(r, r->onames.s[at]) < 0 ||
            TT_ALLOC_GROW(r->op_at, (size_t)at + 1, r->aop_at) < 0)
            return -1;
        r->op_at[at] = r->nop - 1;
    }
    return (long)r->op_at[at];
}

int tt__bd_op_of(struct bd_run *r, int64_t name_id, size_t *op)
{
    size_t v;
    long k;
    if (tt__i64map_get(&r->rd.op_of, name_id + 1, &v)) {
        *op = v - 1;
        return 0;
    }
    k = tt__bd_op_named(r, name_id < 0 ? NULL : tt__bd_str(&r->rd, name_id));
    if (k < 0 || tt__i64map_put(&r->rd.op_of, name_id + 1, (size_t)k + 1) < 0)
        return tt__oom();
    *op = (size_t)k;
    return 0;
}

static int cmp_op(const void *a, const void *b)
{
    const tt_bd_op *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->op, y->op);
}

int tt__bd_ops(struct bd_run *r, size_t nunits)
{
    tt_bd_result *res = r->res;
    struct groups g;
    size_t k;
    int rc;
    if ((rc = group_units(&r->op_units, r->nop, &g)) < 0)
        return rc;
    if (!(res->ops = calloc(r->nop ? r->nop : 1, sizeof(*res->ops)))) {
        groups_free(&g);
        return tt__oom();
    }
    for (k = 0; k < r->nop; k++) {
        tt_bd_op *x = &res->ops[res->nops];
        struct sp o;
        if (!r->op[k].count)
            continue;
        if (!(x->op = strdup(r->op[k].name))) {
            rc = tt__oom();
            break;
        }
        res->nops++;
        x->count = r->op[k].count;
        x->total_ns = r->op[k].total;
        group_spread(&g, k, nunits, &o);
        x->min_ns = o.min;
        x->max_ns = o.max;
        x->median_ns = o.median;
        x->max_row = o.max_row;
    }
    TT_QSORT(res->ops, res->nops, sizeof(*res->ops), cmp_op);
    groups_free(&g);
    return rc;
}

/* ---- launch percentiles ---- */

/* a before b in the worst list: larger delay, then trace, start, name */
static int worse(const struct bd_wl *a, const struct bd_wl *b)
{
    if (a->delay != b->delay)
        return a->delay > b->delay;
    if (a->trace != b->trace)
        return a->trace < b->trace;
    if (a->ts != b->ts)
        return a->ts < b->ts;
    if (a->name != b->name)
        return a->name < b->name;
    return a->seq < b->seq; /* as read: the first one met */
}

int tt__bd_worse(const struct bd_wl *a, const struct bd_wl *b)
{
    return worse(a, b);
}

int tt__bd_top_insert(struct bd_run *r, struct bd_wl *w)
{
    struct bd_wl x = *w;
    size_t k;
    int keep = r->ntop < TT_BD_WORST || worse(w, &r->top[TT_BD_WORST - 1]);
    if (!keep || !x.name_s || !x.rt_s) {
        free(x.name_s);
        free(x.rt_s);
        return keep ? tt__oom() : 0;
    }
    if (r->ntop == TT_BD_WORST) { /* the last one goes */
        free(r->top[TT_BD_WORST - 1].name_s);
        free(r->top[TT_BD_WORST - 1].rt_s);
    }
    k = r->ntop < TT_BD_WORST ? r->ntop++ : TT_BD_WORST - 1;
    for (; k > 0 && worse(&x, &r->top[k - 1]); k--)
        r->top[k] = r->top[k - 1];
    r->top[k] = x;
    return 0;
}

/* w into the worst list when it belongs there, with its names (of the
 * trace being read) */
static int keep_worst(struct bd_run *r, const struct bd_wl *w)
{
    struct bd_wl x = *w;
    if (r->ntop == TT_BD_WORST && !worse(w, &r->top[TT_BD_WORST - 1]))
        return 0;
    x.name_s = strdup(tt__bd_str(&r->rd, w->name));
    x.rt_s = strdup(tt__bd_str(&r->rd, w->rt_name));
    return tt__bd_top_insert(r, &x);
}

int64_t tt_bd_hist_lo_ns(size_t i)
{
    return i == 0 ? 0 : i < TT_BD_HIST ? (int64_t)1000 << (i - 1) : INT64_MAX;
}

/* the histogram bin of a delay (a negative one, clocks apart: the first) */
static size_t hist_bin(int64_t ns)
{
    size_t i = 1;
    if (ns < 1000)
        return 0;
    while (i + 1 < TT_BD_HIST && ns >= tt_bd_hist_lo_ns(i + 1))
        i++;
    return i;
}

/* a launch value spilled: its family, the value */
struct fval {
    int64_t fam, v;
};

static int cmp_fval(const void *a, const void *b)
{
    const struct fval *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam < y->fam ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

static int put_fval(tt__spill **s, size_t fam, int64_t v)
{
    struct fval x;
    x.fam = (int64_t)fam;
    x.v = v;
    if (!*s && !(*s = tt__spill_new(sizeof(x), cmp_fval)))
        return TT_ENOMEM;
    return tt__spill_add(*s, &x);
}

int tt__bd_launch_value(struct bd_run *r, int rt, size_t fam, int64_t v)
{
    return put_fval(rt ? &r->rtdur : &r->delay, fam, v);
}

int tt__bd_launch_rewind(struct bd_run *r, int rt)
{
    tt__spill *s = rt ? r->rtdur : r->delay;
    return s ? tt__spill_rewind(s) : 0;
}

int tt__bd_launch_next(struct bd_run *r, int rt, size_t *fam, int64_t *v)
{
    tt__spill *s = rt ? r->rtdur : r->delay;
    struct fval x;
    int rc = s ? tt__spill_next(s, &x) : 0;
    if (rc == 1) {
        *fam = (size_t)x.fam;
        *v = x.v;
    }
    return rc;
}

int tt__bd_launch_add(struct bd_run *r, const struct bd_wl *w, int has_rt_dur)
{
    struct bd_fam *f = &r->fam[w->fam];
    int rc;
    if ((rc = put_fval(&r->delay, w->fam, w->delay)) < 0 ||
        (has_rt_dur && (rc = put_fval(&r->rtdur, w->fam, w->rt_dur)) < 0))
        return rc;
    f->nlaunch++;
    if (has_rt_dur)
        f->nrt++;
    r->res->delay_hist[hist_bin(w->delay)]++;
    if (!f->has_best || worse(w, &f->best)) {
        f->best = *w;
        f->has_best = 1;
    }
    return keep_worst(r, w);
}

static int64_t rank_of(const struct bd_run *r, int64_t trace)
{
    size_t k;
    for (k = 0; k < r->ntr; k++)
        if (r->tr[k].id == trace)
            return r->tr[k].rank;
    return -1;
}

/* the values of one family, n of them, read (sorted) from s: what the
 * p50, the p95 and the max need */
struct pcts {
    double p50, p95;
    int64_t max;
};

/* the value at percentile pc of n sorted values whose ranks lo and lo + 1
 * were kept (at[0], at[1]): linear interpolation, as over the whole array */
static double pct_at(size_t n, int pc, const int64_t *at)
{
    int64_t rem = ((int64_t)n - 1) * pc % 100;
    return (double)at[0] + (double)((rem ? at[1] : at[0]) - at[0]) * (double)rem / 100.0;
}

static int family_pcts(tt__spill *s, size_t n, struct pcts *o)
{
    size_t lo50 = (n - 1) * 50 / 100, lo95 = (n - 1) * 95 / 100, k;
    int64_t a50[2] = { 0, 0 }, a95[2] = { 0, 0 };
    struct fval x;
    int rc;
    for (k = 0; k < n; k++) {
        if ((rc = tt__spill_next(s, &x)) <= 0)
            return rc < 0 ? rc : tt_error_set(TT_EINVALID, "launch values lost");
        if (k == lo50 || k == lo50 + 1)
            a50[k - lo50] = x.v;
        if (k == lo95 || k == lo95 + 1)
            a95[k - lo95] = x.v;
        o->max = x.v;
    }
    o->p50 = pct_at(n, 50, a50);
    o->p95 = pct_at(n, 95, a95);
    return 0;
}

/* the family's percentiles into its launch row (its values next in the
 * delay and call-duration spills) */
static int family_launches(struct bd_run *r, struct bd_fam *f, tt_bd_launch *l)
{
    size_t n = (size_t)f->nlaunch, m = (size_t)f->nrt;
    struct pcts p;
    int rc;
    if ((rc = family_pcts(r->delay, n, &p)) < 0)
        return rc;
    l->delay_p50_ns = p.p50;
    l->delay_p95_ns = p.p95;
    l->delay_max_ns = p.max;
    l->worst_trace_id = f->best.trace;
    l->worst_rank = rank_of(r, f->best.trace);
    if (!m)
        return 0;
    if ((rc = family_pcts(r->rtdur, m, &p)) < 0)
        return rc;
    l->runtime_p50_ns = p.p50;
    l->runtime_p95_ns = p.p95;
    l->runtime_max_ns = p.max;
    return 0;
}

/* the worst launches with their names */
static int name_worst(struct bd_run *r)
{
    size_t k;
    for (k = 0; k < r->ntop; k++) {
        struct bd_wl *w = &r->top[k];
        tt_bd_worst *x = &r->res->worst[r->res->nworst++];
        memset(x, 0, sizeof(*x));
        x->delay_ns = w->delay;
        x->runtime_ns = w->rt_dur;
        x->trace_id = w->trace;
        x->rank = rank_of(r, w->trace);
        x->device = w->device;
        x->stream = w->stream;
        x->ts_ns = w->ts;
        x->name = w->name_s;
        x->runtime = w->rt_s;
        w->name_s = w->rt_s = NULL; /* moved to the result */
        if (!(x->family = strdup(r->fam[w->fam].name)))
            return tt__oom();
    }
    return 0;
}

static int cmp_launch(const void *a, const void *b)
{
    const tt_bd_launch *x = a, *y = b;
    if (x->delay_p95_ns != y->delay_p95_ns)
        return x->delay_p95_ns > y->delay_p95_ns ? -1 : 1;
    return strcmp(x->family, y->family);
}

int tt__bd_launches(struct bd_run *r)
{
    tt_bd_result *res = r->res;
    size_t k;
    int rc;
    if (!(res->launches = calloc(r->nfam ? r->nfam : 1, sizeof(*res->launches))))
        return tt__oom();
    if ((r->delay && (rc = tt__spill_rewind(r->delay)) < 0) ||
        (r->rtdur && (rc = tt__spill_rewind(r->rtdur)) < 0))
        return rc;
    for (k = 0; k < r->nfam; k++) {
        tt_bd_launch *l = &res->launches[res->nlaunches];
        if (!r->fam[k].nlaunch)
            continue;
        if (!(l->family = strdup(r->fam[k].name)))
            return tt__oom();
        res->nlaunches++;
        l->cls = r->fam[k].cls;
        l->count = r->fam[k].nlaunch;
        l->runtime_count = r->fam[k].nrt;
        l->runtime_p50_ns = l->runtime_p95_ns = NAN;
        if ((rc = family_launches(r, &r->fam[k], l)) < 0)
            return rc;
    }
    TT_QSORT(res->launches, res->nlaunches, sizeof(*res->launches), cmp_launch);
    return name_worst(r);
}
