/*
 * analyze/breakdown/breakdown_launch.c - kernel families for `tracetool breakdown`:
 * the family and class of each activity name (tt_kernel_family,
 * tt_kineto_is_comm with --comm-pattern), a family's GPU time spread over ranks, steps or
 * streams, and its launch percentiles.
 *
 * Percentiles are exact with bounded memory: the sweep counts each
 * family's launches, then one SQL pass sorted by (family, value) streams
 * them (SQLite's sorter spills to $TMPDIR past its cache) and the values at
 * the two ranks around each percentile are picked on the way. The family
 * of a row is a function registered for that pass (a lookup in the names
 * the sweep met), so nothing is written to the database.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/breakdown/breakdown_state.h"
#include "formats/kineto.h"
#include "tracetool/diff.h"

#include <inttypes.h>
#include <math.h>

/* ---- families ---- */

static uint64_t family_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

/* the index of family `name` (added when new), or -1 when out of memory */
static long fam_index(struct bd_run *r, const char *name, int cls)
{
    size_t k;
    if (2 * (r->nfam + 1) > r->nfslot) {
        size_t cap = r->nfslot ? 2 * r->nfslot : 64, i;
        size_t *ns = calloc(cap, sizeof(*ns));
        if (!ns)
            return -1;
        for (i = 0; i < r->nfam; i++) {
            k = (size_t)family_hash(r->fam[i].name) & (cap - 1);
            while (ns[k])
                k = (k + 1) & (cap - 1);
            ns[k] = i + 1;
        }
        free(r->fslot);
        r->fslot = ns;
        r->nfslot = cap;
    }
    k = (size_t)family_hash(name) & (r->nfslot - 1);
    while (r->fslot[k]) {
        if (!strcmp(r->fam[r->fslot[k] - 1].name, name))
            return (long)r->fslot[k] - 1;
        k = (k + 1) & (r->nfslot - 1);
    }
    if (TT_ALLOC_GROW(r->fam, r->nfam + 1, r->afam) < 0)
        return -1;
    memset(&r->fam[r->nfam], 0, sizeof(r->fam[r->nfam]));
    if (!(r->fam[r->nfam].name = strdup(name)))
        return -1;
    r->fam[r->nfam].cls = cls;
    r->fslot[k] = ++r->nfam;
    return (long)r->nfam - 1;
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
    const char *name = "";
    char *buf;
    size_t v, cap;
    long f;
    int c;
    if (tt__i64map_get(&r->names, key, &v)) {
        *fam = (v - 1) >> 2;
        *cls = (int)((v - 1) & 3);
        return 0;
    }
    sqlite3_reset(r->str);
    sqlite3_bind_int64(r->str, 1, name_id);
    if (sqlite3_step(r->str) == SQLITE_ROW && sqlite3_column_text(r->str, 0))
        name = (const char *)sqlite3_column_text(r->str, 0);
    /* a family is never cut: TILE for "nn" is the only token that grows */
    cap = 2 * strlen(name) + 32;
    if (!(buf = malloc(cap)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    c = family_text(r, name, kind, buf, cap);
    sqlite3_reset(r->str); /* no statement may be active when tt_bd_family is (un)registered */
    f = fam_index(r, buf, c);
    free(buf);
    if (f < 0 || tt__i64map_put(&r->names, key, (size_t)f * 4 + (size_t)c + 1) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    *fam = (size_t)f;
    *cls = c;
    return 0;
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
        return tt_error_set(TT_ENOMEM, "out of memory");
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
    qsort(g->v + g->start[i], g->fill[i], sizeof(*g->v), cmp_uval);
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
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    for (k = 0; k < r->nfam; k++) {
        tt_bd_family *f = &res->families[res->nfamilies];
        struct sp o;
        if (!r->fam[k].count)
            continue;
        if (!(f->family = strdup(r->fam[k].name))) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
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
    qsort(res->families, res->nfamilies, sizeof(*res->families), cmp_family);
    groups_free(&g);
    return rc;
}

/* ---- CPU ops: the GPU time they launched ---- */

static char *str_dup_id(struct bd_run *r, int64_t id);

int tt__bd_op_of(struct bd_run *r, int64_t name_id, size_t *op)
{
    struct bd_op *p;
    size_t v;
    if (tt__i64map_get(&r->op_names, name_id, &v)) {
        *op = v - 1;
        return 0;
    }
    if (TT_ALLOC_GROW(r->op, r->nop + 1, r->aop) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    p = &r->op[r->nop];
    memset(p, 0, sizeof(*p));
    if (!(p->name = name_id < 0 ? strdup(TT_BD_NO_OP) : str_dup_id(r, name_id)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (tt__i64map_put(&r->op_names, name_id, ++r->nop) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    *op = r->nop - 1;
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
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    for (k = 0; k < r->nop; k++) {
        tt_bd_op *x = &res->ops[res->nops];
        struct sp o;
        if (!r->op[k].count)
            continue;
        if (!(x->op = strdup(r->op[k].name))) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
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
    qsort(res->ops, res->nops, sizeof(*res->ops), cmp_op);
    groups_free(&g);
    return rc;
}

/* ---- launch percentiles ---- */

/* the family of a launch in the selection (trace, step of its call), else
 * NULL: tt_bd_family(trace_id, name * 4 + kind, call start) */
static void family_fn(sqlite3_context *cx, int argc, sqlite3_value **av)
{
    struct bd_run *r = sqlite3_user_data(cx);
    size_t ti, v;
    (void)argc;
    if (sqlite3_value_type(av[0]) == SQLITE_NULL || sqlite3_value_type(av[1]) == SQLITE_NULL ||
        !tt__i64map_get(&r->tr_index, sqlite3_value_int64(av[0]), &ti) ||
        !tt__bd_selected(r, &r->tr[ti - 1],
                         tt__bd_step_at(&r->tr[ti - 1], sqlite3_value_int64(av[2]))) ||
        !tt__i64map_get(&r->names, sqlite3_value_int64(av[1]), &v)) {
        sqlite3_result_null(cx);
        return;
    }
    sqlite3_result_int64(cx, (int64_t)((v - 1) >> 2));
}

/* the values at the ranks around p (linear interpolation between them) */
struct pct {
    int64_t lo, rem, x_lo, x_hi;
};

static void pct_init(struct pct *p, int64_t n, int pc)
{
    p->lo = n ? (n - 1) * pc / 100 : -1;
    p->rem = n ? (n - 1) * pc % 100 : 0;
    p->x_lo = p->x_hi = 0;
}

static void pct_see(struct pct *p, int64_t j, int64_t x)
{
    if (j == p->lo)
        p->x_lo = p->x_hi = x;
    else if (j == p->lo + 1 && p->rem)
        p->x_hi = x;
}

static double pct_value(const struct pct *p)
{
    if (p->lo < 0)
        return NAN;
    return (double)p->x_lo + (double)(p->x_hi - p->x_lo) * (double)p->rem / 100.0;
}

/* one launch of the delay pass, for the worst list */
struct wl {
    int64_t delay, rt_dur, trace, ts, name, rt_name, device, stream;
    size_t fam;
};

/* a before b in the worst list: larger delay, then trace, start, name */
static int worse(const struct wl *a, const struct wl *b)
{
    if (a->delay != b->delay)
        return a->delay > b->delay;
    if (a->trace != b->trace)
        return a->trace < b->trace;
    if (a->ts != b->ts)
        return a->ts < b->ts;
    return a->name < b->name;
}

struct lpass {
    struct wl top[TT_BD_WORST];
    size_t ntop;
    struct wl best;          /* the family's worst so far */
};

static void keep_worst(struct lpass *p, const struct wl *w)
{
    size_t k;
    if (p->ntop == TT_BD_WORST && !worse(w, &p->top[TT_BD_WORST - 1]))
        return;
    k = p->ntop < TT_BD_WORST ? p->ntop++ : TT_BD_WORST - 1;
    for (; k > 0 && worse(w, &p->top[k - 1]); k--)
        p->top[k] = p->top[k - 1];
    p->top[k] = *w;
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

static int64_t rank_of(const struct bd_run *r, int64_t trace)
{
    size_t ti;
    return tt__i64map_get(&r->tr_index, trace, &ti) ? r->tr[ti - 1].rank : -1;
}

/* a family's run is over: its percentiles into its launch row */
static void close_run(struct bd_run *r, tt_bd_launch *l, struct pct *p, int64_t last, int pass,
                      const struct lpass *lp)
{
    if (pass == 0) {
        l->delay_p50_ns = pct_value(&p[0]);
        l->delay_p95_ns = pct_value(&p[1]);
        l->delay_max_ns = last;
        l->worst_trace_id = lp->best.trace;
        l->worst_rank = rank_of(r, lp->best.trace);
    } else {
        l->runtime_p50_ns = pct_value(&p[0]);
        l->runtime_p95_ns = pct_value(&p[1]);
        l->runtime_max_ns = last;
    }
}

static int prepare_pass(struct bd_run *r, sqlite3_stmt **st, int pass)
{
    tt_buf sql = TT_BUF_INIT;
    size_t k;
    int rc = 0;
    tt_buf_addf(&sql,
                "SELECT tt_bd_family(g.trace_id, coalesce(g.name, 0) * 4 + CASE g.kind"
                " WHEN 'kernel' THEN %d WHEN 'memcpy' THEN %d ELSE %d END, r.ts) AS f, %s AS v,"
                " g.trace_id, g.ts, g.name, r.name, coalesce(g.device, -1),"
                " coalesce(g.stream, -1), r.dur FROM gpu_ops AS g JOIN runtime AS r"
                " ON r.id = g.runtime_id WHERE g.trace_id IN (",
                BD_KIND_KERNEL, BD_KIND_MEMCPY, BD_KIND_MEMSET, pass ? "r.dur" : "g.ts - r.ts");
    for (k = 0; k < r->ntr; k++)
        tt_buf_addf(&sql, "%s%" PRId64, k ? ", " : "", r->tr[k].id);
    tt_buf_addf(&sql, ") AND g.kind IN ('kernel', 'memcpy', 'memset') AND g.ts IS NOT NULL"
                      " AND g.dur IS NOT NULL AND r.ts IS NOT NULL%s AND f IS NOT NULL"
                      " ORDER BY f, v",
                pass ? " AND r.dur IS NOT NULL" : "");
    if (sql.oom)
        rc = tt_error_set(TT_ENOMEM, "out of memory");
    else if (tt_db_prepare(r->db, st, sql.buf) < 0)
        rc = TT_EDB;
    tt_buf_release(&sql);
    return rc;
}

/* one sorted pass: delays (pass 0) or runtime-call durations (pass 1) */
static int launch_pass(struct bd_run *r, const long *lrow, int pass, struct lpass *lp)
{
    sqlite3_stmt *st;
    struct pct p[2];
    int64_t cur = -1, j = 0, last = 0;
    int rc, s;
    if ((rc = prepare_pass(r, &st, pass)) < 0)
        return rc;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t f = sqlite3_column_int64(st, 0), x = sqlite3_column_int64(st, 1);
        if (f < 0 || (size_t)f >= r->nfam || lrow[f] < 0)
            continue;
        if (f != cur) {
            if (cur >= 0)
                close_run(r, &r->res->launches[lrow[cur]], p, last, pass, lp);
            cur = f;
            j = 0;
            pct_init(&p[0], pass ? r->fam[f].nrt : r->fam[f].nlaunch, 50);
            pct_init(&p[1], pass ? r->fam[f].nrt : r->fam[f].nlaunch, 95);
            lp->best.delay = INT64_MIN;
        }
        pct_see(&p[0], j, x);
        pct_see(&p[1], j, x);
        last = x;
        j++;
        if (pass == 0) {
            struct wl w;
            r->res->delay_hist[hist_bin(x)]++;
            w.delay = x;
            w.trace = sqlite3_column_int64(st, 2);
            w.ts = sqlite3_column_int64(st, 3);
            w.name = sqlite3_column_int64(st, 4);
            w.rt_name = sqlite3_column_int64(st, 5);
            w.device = sqlite3_column_int64(st, 6);
            w.stream = sqlite3_column_int64(st, 7);
            w.rt_dur = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 8);
            w.fam = (size_t)f;
            if (lp->best.delay == INT64_MIN || worse(&w, &lp->best))
                lp->best = w;
            keep_worst(lp, &w);
        }
    }
    if (cur >= 0)
        close_run(r, &r->res->launches[lrow[cur]], p, last, pass, lp);
    rc = s == SQLITE_DONE ? 0 : tt_db_error(r->db, "cannot sort the launches");
    sqlite3_finalize(st);
    return rc;
}

static char *str_dup_id(struct bd_run *r, int64_t id)
{
    const char *s = "";
    char *d;
    sqlite3_reset(r->str);
    sqlite3_bind_int64(r->str, 1, id);
    if (sqlite3_step(r->str) == SQLITE_ROW && sqlite3_column_text(r->str, 0))
        s = (const char *)sqlite3_column_text(r->str, 0);
    d = strdup(s);
    sqlite3_reset(r->str);
    return d;
}

/* the worst launches with their names */
static int name_worst(struct bd_run *r, const struct lpass *lp)
{
    size_t k;
    for (k = 0; k < lp->ntop; k++) {
        const struct wl *w = &lp->top[k];
        tt_bd_worst *x = &r->res->worst[r->res->nworst++];
        memset(x, 0, sizeof(*x));
        x->delay_ns = w->delay;
        x->runtime_ns = w->rt_dur;
        x->trace_id = w->trace;
        x->rank = rank_of(r, w->trace);
        x->device = w->device;
        x->stream = w->stream;
        x->ts_ns = w->ts;
        if (!(x->name = str_dup_id(r, w->name)) || !(x->runtime = str_dup_id(r, w->rt_name)) ||
            !(x->family = strdup(r->fam[w->fam].name)))
            return tt_error_set(TT_ENOMEM, "out of memory");
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
    long *lrow = malloc((r->nfam ? r->nfam : 1) * sizeof(*lrow));
    struct lpass *lp = calloc(1, sizeof(*lp));
    size_t k;
    int rc = 0, pass;
    res->launches = calloc(r->nfam ? r->nfam : 1, sizeof(*res->launches));
    if (!lrow || !lp || !res->launches) {
        rc = tt_error_set(TT_ENOMEM, "out of memory");
        goto out;
    }
    for (k = 0; k < r->nfam; k++) {
        tt_bd_launch *l = &res->launches[res->nlaunches];
        lrow[k] = -1;
        if (!r->fam[k].nlaunch)
            continue;
        if (!(l->family = strdup(r->fam[k].name))) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            goto out;
        }
        l->cls = r->fam[k].cls;
        l->count = r->fam[k].nlaunch;
        l->runtime_count = r->fam[k].nrt;
        l->runtime_p50_ns = l->runtime_p95_ns = NAN;
        l->worst_trace_id = l->worst_rank = -1;
        lrow[k] = (long)res->nlaunches++;
    }
    if (!res->nlaunches)
        goto out;
    if (sqlite3_create_function(r->db->sql, "tt_bd_family", 3, SQLITE_UTF8, r, family_fn, NULL,
                                NULL) != SQLITE_OK) {
        rc = tt_db_error(r->db, "cannot register a function");
        goto out;
    }
    for (pass = 0; rc == 0 && pass < 2; pass++)
        rc = launch_pass(r, lrow, pass, lp);
    /* the caller's connection outlives r: the function goes with it */
    if (sqlite3_create_function(r->db->sql, "tt_bd_family", 3, SQLITE_UTF8, NULL, NULL, NULL,
                                NULL) != SQLITE_OK && rc == 0)
        rc = tt_db_error(r->db, "cannot unregister a function");
    if (rc == 0)
        rc = name_worst(r, lp);
    qsort(res->launches, res->nlaunches, sizeof(*res->launches), cmp_launch);
out:
    free(lrow);
    free(lp);
    return rc;
}
