/*
 * analyze/memtimeline/memtimeline.c - `tracetool memtimeline`: torch's memory timeline
 * (docs/TORCH.md 4) rebuilt from the [memory] events of a trace, or
 * re-rendered from torch's own raw export.
 *
 * A trace file (each file of a directory in turn) and a trace of a database
 * are read alike, as rows (memtimeline_stream.c), which also does pass 1;
 * the classifying passes (memtimeline_passes.c, memtimeline_et.c) give each
 * allocation its category; the emission pass here reads the events once
 * more in time order and builds a
 * tt_memtl_result: the timeline tuples (PREEXISTING, CREATE, DESTROY) in
 * torch's order, coalesced per torch's _coalesce_timeline into [times,
 * sizes], a peak-preserving downsampled copy for the plot and the largest
 * blocks live at the allocator's peak. The writers turn the result into
 * .json / .json.gz, .png or .html; only the .raw.json.gz rows are streamed
 * while the pass runs. Memory is bounded by the allocations live at one time
 * (plus the coalesced series when a caller asks for it).
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/log.h"
#include "report/json.h"
#include "report/out.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "analyze/filter/filtering.h"
#include "compare/crosscheck/links.h"
#include "formats/spool.h"
#include "store/db_internal.h" /* tt__db_none, the temporary database of --et */
#include "store/ingest_rows.h"
#include "store/records.h"
#include "tracetool/crosscheck.h"
#include "tracetool/render.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- downsampled series for the plot ---- */

struct series {
    int64_t t0, t1;
    size_t n;
    int64_t *t, *sizes; /* up to 2 * MAX_BUCKETS points */
    int64_t bucket;     /* current bucket */
    int64_t bmax_t, bmin_t, bmax[NCOL], bmin[NCOL], bmax_tot, bmin_tot;
    int have;
};

static int64_t total_of(const int64_t *s)
{
    int64_t t = 0;
    int c;
    for (c = 1; c < NCOL; c++)
        t += s[c];
    return t;
}

static void series_flush(struct series *s)
{
    if (!s->have)
        return;
    /* keep the bucket's lowest and highest points, in time order */
    if (s->bmin_t < s->bmax_t) {
        s->t[s->n] = s->bmin_t;
        memcpy(&s->sizes[s->n * NCOL], s->bmin, sizeof(s->bmin));
        s->n++;
    }
    s->t[s->n] = s->bmax_t;
    memcpy(&s->sizes[s->n * NCOL], s->bmax, sizeof(s->bmax));
    s->n++;
    if (s->bmin_t > s->bmax_t) {
        s->t[s->n] = s->bmin_t;
        memcpy(&s->sizes[s->n * NCOL], s->bmin, sizeof(s->bmin));
        s->n++;
    }
    s->have = 0;
}

static void series_add(struct series *s, int64_t t, const int64_t *sz)
{
    int64_t span = s->t1 > s->t0 ? s->t1 - s->t0 : 1;
    int64_t b = (int64_t)((double)(t - s->t0) / (double)span * (MAX_BUCKETS - 1));
    int64_t tot = total_of(sz);
    if (b != s->bucket)
        series_flush(s);
    s->bucket = b;
    if (!s->have || tot >= s->bmax_tot) {
        s->bmax_tot = tot;
        s->bmax_t = t;
        memcpy(s->bmax, sz, sizeof(s->bmax));
    }
    if (!s->have || tot < s->bmin_tot) {
        s->bmin_tot = tot;
        s->bmin_t = t;
        memcpy(s->bmin, sz, sizeof(s->bmin));
    }
    s->have = 1;
}

/*
 * torch computes int(t / 1000) in Python: the exact quotient rounded to the
 * nearest double (half to even), then truncated. For 19-digit ns times that
 * is q + 1 when the remainder rounds up to a whole unit; reproduce it
 * exactly with integers (q < 2^53 for any epoch time in µs).
 */
static int64_t py_div1000(int64_t t)
{
    int64_t q, r, n, rem;
    int e, m;
    if (t < 0)
        return t == INT64_MIN ? INT64_MIN / 1000 : -py_div1000(-t);
    q = t / 1000;
    r = t % 1000;
    if (q == 0)
        return 0;
    e = 63 - __builtin_clzll((unsigned long long)q);
    if (e >= 53)
        return q;
    m = 52 - e; /* the double's spacing near q is 2^-m */
    n = (r << m) / 1000;
    rem = (r << m) % 1000;
    if (rem * 2 > 1000 || (rem * 2 == 1000 && (n & 1)))
        n++;
    return n >= ((int64_t)1 << m) ? q + 1 : q;
}

/* ---- device selection ---- */

/* "cuda:0 (8220 events), cpu (4618 events)": the devices with [memory]
 * events, the most first (a tie: the higher device type, the lower index),
 * eight at most */
static void devices_present(const struct memtl_streamed *p, char *buf, size_t cap)
{
    size_t used[8] = { 0 };
    size_t len = 0, k, shown;
    buf[0] = '\0';
    for (shown = 0; shown < 8 && len + 64 < cap; shown++) {
        const struct memtl_devscan *b = NULL;
        size_t bi = 0;
        char dev[32];
        for (k = 0; k < p->ndev; k++) {
            const struct memtl_devscan *d = &p->dev[k];
            size_t u;
            for (u = 0; u < shown && used[u] != k + 1; u++)
                ;
            if (u < shown || !d->nall)
                continue;
            if (!b || d->nall > b->nall ||
                (d->nall == b->nall && (d->dtype > b->dtype || (d->dtype == b->dtype && d->did < b->did)))) {
                b = d;
                bi = k;
            }
        }
        if (!b)
            break;
        used[shown] = bi + 1;
        tt_device_format(b->dtype, b->did, dev, sizeof(dev));
        len += (size_t)snprintf(buf + len, cap - len, "%s%s (%lld events)", len ? ", " : "", dev,
                                (long long)b->nall);
    }
}

/* device (dtype, did) of the rows, NULL if it has no [memory] event */
static const struct memtl_devscan *pre_dev(const struct memtl_streamed *p, int dtype, int64_t did)
{
    size_t k;
    for (k = 0; k < p->ndev; k++)
        if (p->dev[k].dtype == dtype && p->dev[k].did == did)
            return &p->dev[k];
    return NULL;
}

/* The device with the most [memory] events that have a time and a size (a
 * tie: the higher device type, so a GPU before the CPU, then the lower
 * index); cpu_only: the CPU index with the most (the CPU is one device, c10
 * gives it index -1, but a trace may carry another index on its CPU
 * events). 0 when none. */
static int pre_busiest(const struct memtl_streamed *p, int cpu_only, int *dtype, int64_t *did)
{
    const struct memtl_devscan *b = NULL;
    size_t k;
    for (k = 0; k < p->ndev; k++) {
        const struct memtl_devscan *d = &p->dev[k];
        if (!d->nrec || (cpu_only && d->dtype != 0))
            continue;
        if (!b || d->nrec > b->nrec ||
            (d->nrec == b->nrec && (d->dtype > b->dtype || (d->dtype == b->dtype && d->did < b->did))))
            b = d;
    }
    if (!b)
        return 0;
    *dtype = b->dtype;
    *did = b->did;
    return 1;
}

/* ---- coalescing (torch's _coalesce_timeline) ---- */

struct coalesce {
    tt_memtl_result *res; /* the points go to res->t_us / res->sizes if keep */
    int keep;
    size_t cap;
    int err;
    int64_t last_t;
    int64_t cur[NCOL];
    int have;
    int64_t t_min;
    int64_t npoints;
    int64_t first_t_raw; /* -1 when the first point is PREEXISTING */
    struct series *plot;
    int64_t peak_total, peak_t, peak_point, peak_unknown;
};

static void co_emit_point(struct coalesce *c)
{
    int64_t tot = total_of(c->cur);
    if (c->keep && !c->err) {
        tt_memtl_result *r = c->res;
        if (r->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 1024;
            int64_t *t = realloc(r->t_us, cap * sizeof(*t));
            int64_t *s = t ? realloc(r->sizes, cap * NCOL * sizeof(*s)) : NULL;
            if (t)
                r->t_us = t;
            if (s)
                r->sizes = s;
            if (!t || !s) {
                c->err = 1;
                goto tail;
            }
            c->cap = cap;
        }
        r->t_us[r->n] = c->last_t;
        memcpy(&r->sizes[r->n * NCOL], c->cur, sizeof(c->cur));
        r->n++;
    }
tail:
    if (c->plot && c->last_t >= 0)
        series_add(c->plot, c->last_t, c->cur);
    if (tot > c->peak_total) {
        c->peak_total = tot;
        c->peak_t = c->last_t;
        c->peak_point = c->npoints;
        c->peak_unknown = c->cur[1 + TT_CAT_UNKNOWN];
    }
    c->npoints++;
}

/* add n bytes to category cat (0..7) at raw time t_ns (-1 = preexisting) */
static void co_add(struct coalesce *c, int64_t t_ns, int cat, int64_t n)
{
    int64_t t = t_ns == -1 ? -1 : py_div1000(t_ns);
    if (c->t_min == -1 || (t > 0 && t < c->t_min))
        c->t_min = t;
    if (!c->have) {
        c->have = 1;
        c->last_t = t;
        c->first_t_raw = t;
    } else if (t != c->last_t) {
        co_emit_point(c);
        c->last_t = t;
    }
    c->cur[cat + 1] += n;
}

/* ---- the emission pass ---- */

struct job {
    tt_db *db;      /* the database the trace is in (for the ET's links), or NULL */
    const tt_memtl_options *o;
    int64_t trace;  /* its id there */
    const char *label;
    int raw_input;  /* a torch raw export: re-render */
    int dtype;
    int64_t did;
    char device[32];
    int64_t base_ns;
    const struct memtl_streamed *pre; /* the trace's rows, pass 1 done */
    /* memtimeline FILE --et ET from the files: the ET file and its links */
    const char *et_path;
    const struct tt__xc_links *links;
};

struct emit {
    struct job *j;
    tt_memtl_result *res;
    struct coalesce co;
    struct series plot;
    tt_jw *raw;       /* .raw.json.gz rows, streamed (NULL: none) */
    struct livemap live;
    size_t aalloc;        /* room in res->alloc_t_us / allocated / reserved */
    int64_t peak_alloc, peak_t;
    struct addr_synth syn; /* the same made-up addresses as the category pass */
};

/* a row of torch's raw export: [t_ns, action, bytes, category] */
static void raw_row(struct emit *e, int64_t t, int64_t action, int64_t n, int cat)
{
    if (!e->raw)
        return;
    tt_jw_arr(e->raw);
    tt_jw_int(e->raw, t);
    tt_jw_int(e->raw, action);
    tt_jw_int(e->raw, n);
    tt_jw_int(e->raw, cat);
    tt_jw_end(e->raw);
}

/* string id -> a copy of it ("" for 0 or none) */
static char *name_of(const struct memtl_streamed *p, int64_t id)
{
    const char *s = tt__memtl_str(p, id);
    return strdup(s ? s : "");
}

/* the largest live blocks just after the allocated peak's event */
static int snapshot_peak(struct emit *e, int64_t op_name, int64_t step_name)
{
    tt_memtl_result *r = e->res;
    int64_t top_op[TOP_N];
    size_t i, ntop = 0;
    for (i = 0; i < e->live.cap; i++) {
        const struct live *l = &e->live.e[i];
        size_t k;
        if (!l->used)
            continue;
        for (k = ntop; k > 0 && r->top[k - 1].bytes < l->bytes; k--)
            ;
        if (k >= TOP_N)
            continue;
        if (ntop == TOP_N)
            ntop--;
        memmove(&r->top[k + 1], &r->top[k], (ntop - k) * sizeof(r->top[0]));
        memmove(&top_op[k + 1], &top_op[k], (ntop - k) * sizeof(top_op[0]));
        r->top[k].addr = l->addr;
        r->top[k].bytes = l->bytes;
        r->top[k].t_us = l->ts;
        r->top[k].op = NULL;
        r->top[k].category = l->cat;
        r->top[k].rule = l->rule > 0 && l->rule < ETR_COUNT ? tt__memtl_et_rule[l->rule]
                                                             : tt__memtl_cat_rule[l->cat];
        top_op[k] = l->op_name;
        ntop++;
    }
    r->n_top = ntop;
    r->peak_op = name_of(e->j->pre, op_name);
    r->peak_step = name_of(e->j->pre, step_name);
    for (i = 0; i < ntop; i++)
        r->top[i].op = name_of(e->j->pre, top_op[i]);
    return 0;
}

/* the allocator's view of one event: one sample per plot bucket (the max) */
static int alloc_sample(struct emit *e, int64_t t_ns, int64_t al, int64_t re)
{
    tt_memtl_result *r = e->res;
    int64_t tu = t_ns / 1000, t0 = e->plot.t0;
    int64_t span = e->plot.t1 > t0 ? e->plot.t1 - t0 : 1;
    int64_t bk = (int64_t)((double)(tu - t0) / (double)span * (MAX_BUCKETS - 1));
    size_t na = r->n_alloc;
    if (na && bk == (int64_t)((double)(r->alloc_t_us[na - 1] - t0) / (double)span *
                              (MAX_BUCKETS - 1))) {
        if (al > r->allocated[na - 1]) {
            r->alloc_t_us[na - 1] = tu;
            r->allocated[na - 1] = al;
        }
        if (re > r->reserved[na - 1])
            r->reserved[na - 1] = re;
    } else {
        if (na == e->aalloc) {
            size_t cap = e->aalloc ? e->aalloc * 2 : 256;
            int64_t *a = realloc(r->alloc_t_us, cap * sizeof(*a));
            if (a)
                r->alloc_t_us = a;
            if (!a || !(a = realloc(r->allocated, cap * sizeof(*a))))
                return tt__oom();
            r->allocated = a;
            if (!(a = realloc(r->reserved, cap * sizeof(*a))))
                return tt__oom();
            r->reserved = a;
            e->aalloc = cap;
        }
        r->alloc_t_us[na] = tu;
        r->allocated[na] = al;
        r->reserved[na] = re;
        r->n_alloc++;
    }
    if (al > e->peak_alloc) {
        e->peak_alloc = al;
        e->peak_t = tu;
    }
    if (re > r->peak_reserved)
        r->peak_reserved = re;
    return 0;
}

/* blocks freed before any allocation we saw: PREEXISTING at -1 */
static int emit_preexisting(struct emit *e, const struct memtl_scan *sc)
{
    size_t i;
    if (sc->have_before) { /* live before the trace, never freed in it */
        raw_row(e, -1, 1, sc->before, TT_CAT_UNKNOWN);
        co_add(&e->co, -1, TT_CAT_UNKNOWN, sc->before);
        e->res->before = sc->before;
    }
    for (i = 0; i < sc->npre; i++) {
        struct live *p;
        raw_row(e, -1, 1, sc->pre[i].bytes, TT_CAT_UNKNOWN);
        co_add(&e->co, -1, TT_CAT_UNKNOWN, sc->pre[i].bytes);
        /* it will be destroyed at its free: track it as live */
        if (!(p = tt__live_put(&e->live, sc->pre[i].addr)))
            return tt__oom();
        p->bytes = sc->pre[i].bytes;
        p->cat = TT_CAT_UNKNOWN;
        p->ts = -1;
    }
    return 0;
}

/* one [memory] event in time order: CREATE, DESTROY or INCREMENT_VERSION */
static int emit_event(struct emit *e, const struct memev *ev, int cat, int rule,
                      const struct memtl_scan *sc)
{
    int64_t id = ev->id, ts = ev->ts;
    int64_t addr, b = ev->bytes;
    int64_t t_ns = ts + e->j->base_ns;
    struct live *a;
    int rc;
    if ((rc = tt__memtl_addr(&e->syn, ev->has & EV_ADDR, ev->addr, b, &addr)) < 0)
        return rc;
    a = tt__live_find(&e->live, addr);
    if ((ev->has & EV_TA) && (rc = alloc_sample(e, t_ns, ev->ta, ev->tr)) < 0)
        return rc;
    if (b > 0) {
        if (a) { /* allocated again while live: torch's INCREMENT_VERSION */
            co_add(&e->co, t_ns, a->cat, -a->bytes);
            raw_row(e, t_ns, 3, -a->bytes, a->cat);
            raw_row(e, t_ns, 3, b, cat);
        } else {
            raw_row(e, t_ns, 2, b, cat);
        }
        co_add(&e->co, t_ns, cat, b);
        if (!(a = tt__live_put(&e->live, addr)))
            return tt__oom();
        a->bytes = b;
        a->cat = cat;
        a->ts = t_ns / 1000;
        a->op_id = ev->op_id;
        a->op_name = ev->op_name;
        a->mem_id = id;
        a->rule = rule;
    } else if (b < 0 && a) {
        raw_row(e, t_ns, 4, -a->bytes, a->cat);
        co_add(&e->co, t_ns, a->cat, -a->bytes);
        tt__live_del(&e->live, a);
    }
    if (id == sc->peak_mem_id)
        return snapshot_peak(e, sc->peak_op, sc->peak_step);
    return 0;
}

/* the passes' times, to the log (topic "timing"; tracetool prints them with
 * TT_TIMING=1): the time since *t0, the last one of this trace (what NULL:
 * only start the clock) */
static void memtl_timing(double *t0, const char *what)
{
    struct timespec ts;
    double t;
    if (!tt__log_enabled(TT_LOG_INFO))
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    if (what)
        tt__log(TT_LOG_INFO, "timing", "%-12s %.3f s", what, t - *t0);
    *t0 = t;
}

/* passes 1b, 2 (pass 1 was done with the rows), then the timeline in time
 * order; PREEXISTING first */
static int emit_trace(struct emit *e)
{
    struct job *j = e->j;
    const struct memtl_streamed *p = j->pre;
    struct memtl_scan sc;
    struct i64map et;
    struct evspill sp;
    struct memev ev;
    size_t idx, pdev = (size_t)-1, k;
    double t0 = 0;
    int rc, r;
    memset(&sc, 0, sizeof(sc));
    memset(&et, 0, sizeof(et));
    memset(&sp, 0, sizeof(sp));
    memtl_timing(&t0, NULL);
    for (k = 0; k < p->ndev; k++)
        if (p->dev[k].dtype == j->dtype && p->dev[k].did == j->did) {
            sc = p->dev[k].sc;
            pdev = k;
        }
    if (pdev == (size_t)-1) /* select_job saw to it */
        return tt_error_set(TT_EINVALID, "no [memory] events for device %s", j->device);
    rc = j->links ? tt__memtl_et_pass_file(j->et_path, j->links, p, pdev, j->dtype, j->did,
                                           j->o->no_categories, &et)
                  : tt__memtl_et_pass(j->db, j->trace, j->dtype, j->did, j->o->no_categories,
                                      &p->cs, &et);
    if (rc < 0)
        goto out;
    memtl_timing(&t0, "et");
    if ((rc = tt__memtl_load_filtered(p, pdev, &p->cs, &et, &sp, p->fl)) < 0)
        goto out;
    if (p->fl && !sp.n && j->o->version >= 2 && j->o->warn)
        j->o->warn(j->o->warn_ctx, "no memory event passes --name/--under/--time-range");
    if (tt__flt_spec(p->fl) && sc.have_ts) { /* the plot over --time-range */
        const tt_filter *f = tt__flt_spec(p->fl);
        sc.ts_min = sc.ts_min > f->from_ns ? sc.ts_min : f->from_ns;
        sc.ts_max = sc.ts_max < f->to_ns - 1 ? sc.ts_max : f->to_ns - 1;
        sc.have_ts = sc.ts_min <= sc.ts_max;
    }
    memtl_timing(&t0, "load");
    if ((rc = tt__memtl_category_pass(&sp, j->o->no_categories, &sc)) < 0)
        goto out;
    memtl_timing(&t0, "category");
    /* the plot's time range */
    e->plot.t0 = ((sc.have_ts ? sc.ts_min : 0) + j->base_ns) / 1000;
    e->plot.t1 = ((sc.have_ts ? sc.ts_max : 0) + j->base_ns) / 1000;
    if ((rc = emit_preexisting(e, &sc)) < 0 || (rc = tt__evspill_rewind(&sp)) < 0)
        goto out;
    for (idx = 0; (r = tt__evspill_next(&sp, &ev)) == 1; idx++)
        if ((rc = emit_event(e, &ev, sp.cat[idx], sp.rule[idx], &sc)) < 0)
            goto out;
    rc = r < 0 ? r : 0;
    memtl_timing(&t0, "emission");
out:
    free(sc.pre);
    tt__i64map_free(&et);
    tt__evspill_free(&sp);
    tt__memtl_addr_free(&e->syn);
    return rc;
}

/* torch's own raw export: every row already carries its category */
static int emit_raw_input(struct emit *e)
{
    struct job *j = e->j;
    const struct memtl_streamed *p = j->pre;
    size_t i;
    e->plot.t0 = p->raw_min / 1000;
    e->plot.t1 = p->raw_max / 1000;
    for (i = 0; i < p->nraw; i++) {
        const struct memtl_rawrow *w = &p->raw[i];
        int cat = w->cat < 0 || w->cat >= TT_CAT_COUNT ? TT_CAT_UNKNOWN : (int)w->cat;
        if (j->o->no_categories)
            cat = TT_CAT_UNKNOWN;
        raw_row(e, w->ts, w->action, w->bytes, cat);
        co_add(&e->co, w->ts, cat, w->bytes);
    }
    return 0;
}

/* the result of a job; keep: with the whole coalesced series */
static int compute(struct job *j, tt_memtl_result *res, int keep, tt_jw *raw)
{
    struct emit e;
    size_t i;
    int rc;
    memset(res, 0, sizeof(*res));
    memset(&e, 0, sizeof(e));
    snprintf(res->device, sizeof(res->device), "%s", j->device);
    res->categories = !j->o->no_categories;
    res->peak_point = -1;
    e.j = j;
    e.res = res;
    e.raw = raw;
    e.co.res = res;
    e.co.keep = keep;
    e.co.t_min = -1;
    e.co.peak_point = -1;
    e.co.plot = &e.plot;
    e.plot.bucket = -1;
    e.plot.t = malloc(sizeof(int64_t) * 3 * MAX_BUCKETS);
    e.plot.sizes = malloc(sizeof(int64_t) * NCOL * 3 * MAX_BUCKETS);
    if (!e.plot.t || !e.plot.sizes) {
        rc = tt__oom();
        goto out;
    }
    rc = j->raw_input ? emit_raw_input(&e) : emit_trace(&e);
    if (rc < 0)
        goto out;
    if (e.co.have)
        co_emit_point(&e.co);
    if (e.co.err) {
        rc = tt__oom();
        goto out;
    }
    /* torch re-stamps the PREEXISTING time -1 with t_min */
    if (res->n && e.co.first_t_raw < 0 && e.co.t_min != -1)
        res->t_us[0] = e.co.t_min;
    res->peak_total = e.co.peak_total;
    res->peak_unknown = e.co.peak_unknown;
    res->peak_point = e.co.peak_point;
    res->final_total = total_of(e.co.cur);
    res->peak_allocated = e.peak_alloc ? e.peak_alloc : e.co.peak_total;
    res->peak_t_us = e.peak_alloc ? e.peak_t : e.co.peak_t;
    if (!res->peak_op)
        res->peak_op = strdup("");
    if (!res->peak_step)
        res->peak_step = strdup("");
    series_flush(&e.plot);
    res->plot_t0 = e.plot.t0;
    for (i = 0; i < e.plot.n; i++)
        e.plot.t[i] -= e.plot.t0;
    for (i = 0; i < res->n_alloc; i++)
        res->alloc_t_us[i] -= e.plot.t0;
    res->plot_n = e.plot.n;
    res->plot_t_us = e.plot.t;
    res->plot_sizes = e.plot.sizes;
    e.plot.t = e.plot.sizes = NULL;
    if (!res->peak_op || !res->peak_step)
        rc = tt__oom();
out:
    free(e.live.e);
    free(e.plot.t);
    free(e.plot.sizes);
    return rc;
}

void tt_memtl_result_free(tt_memtl_result *r)
{
    size_t i;
    if (!r)
        return;
    free(r->t_us);
    free(r->sizes);
    free(r->peak_op);
    free(r->peak_step);
    for (i = 0; i < r->n_top && i < TOP_N; i++)
        free(r->top[i].op);
    free(r->plot_t_us);
    free(r->plot_sizes);
    free(r->alloc_t_us);
    free(r->allocated);
    free(r->reserved);
    memset(r, 0, sizeof(*r));
}

/* ---- the writers ---- */

/* torch's .json: [[times], [[sizes row], ...]] */
static void write_json(tt_jw *w, const tt_memtl_result *r)
{
    size_t i;
    int c;
    tt_jw_arr(w);
    tt_jw_arr(w);
    for (i = 0; i < r->n; i++)
        tt_jw_int(w, r->t_us[i]);
    tt_jw_end(w);
    tt_jw_arr(w);
    for (i = 0; i < r->n; i++) {
        tt_jw_arr(w);
        for (c = 0; c < NCOL; c++)
            tt_jw_int(w, r->sizes[i * NCOL + c]);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    tt_jw_end(w);
}

/* the .png or .html page */
static int write_plot(const struct job *j, const tt_memtl_result *r, int png, const char *output)
{
    tt_memtl tl;
    tt_memtl_alloc top[TOP_N];
    size_t i;
    for (i = 0; i < r->n_top; i++) {
        top[i].addr = r->top[i].addr;
        top[i].bytes = r->top[i].bytes;
        top[i].t_us = r->top[i].t_us - r->plot_t0;
        top[i].op = r->top[i].op ? r->top[i].op : "";
        top[i].category = r->top[i].category;
        top[i].rule = r->top[i].rule;
    }
    memset(&tl, 0, sizeof(tl));
    /* the file's base name: the absolute path says nothing in a title */
    tl.title = strrchr(j->label, '/') ? strrchr(j->label, '/') + 1 : j->label;
    tl.device = r->device;
    tl.categories = r->categories;
    tl.n = r->plot_n;
    tl.t_us = r->plot_t_us;
    tl.sizes = r->plot_sizes;
    tl.n_alloc = r->n_alloc;
    tl.alloc_t_us = r->alloc_t_us;
    tl.allocated = r->allocated;
    tl.reserved = r->reserved;
    tl.peak_allocated = r->peak_allocated;
    tl.peak_reserved = r->peak_reserved;
    tl.peak_t_us = r->peak_t_us - r->plot_t0;
    tl.peak_op = r->peak_op ? r->peak_op : "";
    tl.peak_step = r->peak_step ? r->peak_step : "";
    tl.n_top = r->n_top;
    tl.top = top;
    if (r->before > 0 && r->plot_n) {
        /* the memory live before the trace: its own band, out of Unknown */
        int64_t *before = malloc(r->plot_n * sizeof(*before));
        int64_t *sizes = malloc(r->plot_n * NCOL * sizeof(*sizes));
        int rc;
        if (!before || !sizes) {
            free(before);
            free(sizes);
            return tt__oom();
        }
        memcpy(sizes, r->plot_sizes, r->plot_n * NCOL * sizeof(*sizes));
        for (i = 0; i < r->plot_n; i++) {
            int64_t *u = &sizes[i * NCOL + 1 + TT_CAT_UNKNOWN];
            before[i] = *u < r->before ? (*u > 0 ? *u : 0) : r->before;
            *u -= before[i];
        }
        tl.sizes = sizes;
        tl.before = before;
        rc = png ? tt_render_png(&tl, output) : tt_render_html(&tl, output);
        free(before);
        free(sizes);
        return rc;
    }
    return png ? tt_render_png(&tl, output) : tt_render_html(&tl, output);
}

/* ---- the whole job ---- */

enum { K_JSON, K_JSONGZ, K_STDOUT, K_RAW, K_HTML, K_PNG };

static int suffix_kind(const char *out)
{
    size_t n = strlen(out);
#define ENDS(s) (n >= strlen(s) && !strcmp(out + n - strlen(s), s))
    if (!strcmp(out, "-"))
        return K_STDOUT;
    if (ENDS(".raw.json.gz"))
        return K_RAW;
    if (ENDS(".html"))
        return K_HTML;
    if (ENDS(".png"))
        return K_PNG;
    if (ENDS(".gz"))
        return K_JSONGZ;
    return K_JSON;
#undef ENDS
}

/* The categories at the peak cover less than half of it: say so, since the
 * picture is then mostly one grey Unknown band. */
static void warn_coverage(const struct job *j, const tt_memtl_result *r)
{
    int64_t known = r->peak_total - r->peak_unknown;
    char msg[512];
    if (j->o->version < 2 || !j->o->warn || !r->categories || r->peak_total <= 0 ||
        2 * known >= r->peak_total)
        return;
    /* the pictures' unit family: B, KiB, MiB, GiB, TiB by the peak */
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double div = 1.0;
    int u = 0;
    while (u < 4 && (double)r->peak_total >= div * 1024.0) {
        div *= 1024.0;
        u++;
    }
    snprintf(msg, sizeof(msg),
             "the categories cover %.0f%% of the peak (%.2f of %.2f %s on %s); the rest is"
             " Unknown%s (docs/MEMTIMELINE.md says what a trace needs to name more)",
             100.0 * (double)known / (double)r->peak_total, (double)known / div,
             (double)r->peak_total / div, units[u], r->device,
             r->before ? ", much of it live before the trace" : "");
    j->o->warn(j->o->warn_ctx, msg);
}

static int run_job(struct job *j, const char *output)
{
    int kind = suffix_kind(output);
    int want_json = kind == K_JSON || kind == K_JSONGZ || kind == K_STDOUT;
    int want_raw = kind == K_RAW;
    tt_out o; /* the .json, .json.gz or .raw.json.gz (report/out.h) */
    tt_jw w;  /* its JSON */
    tt_memtl_result res;
    int rc = 0, opened = 0;
    memset(&res, 0, sizeof(res));
    if (kind == K_STDOUT && j->o->version >= 4 && j->o->json_stream) {
        tt_jw_init_file(&w, j->o->json_stream, 0); /* the caller's stream */
        opened = 2;
    } else if (want_json || want_raw) {
        if ((rc = tt_out_open(&o, output, TT_OUT_GZ_BY_NAME)) < 0)
            goto out;
        opened = 1;
        tt_jw_init_out(&w, &o, 0);
        if (want_raw)
            tt_jw_arr(&w);
    }
    if ((rc = compute(j, &res, want_json, want_raw ? &w : NULL)) < 0)
        goto out;
    warn_coverage(j, &res);
    if (want_json)
        write_json(&w, &res);
    else if (want_raw)
        tt_jw_end(&w);
    else
        rc = write_plot(j, &res, kind == K_PNG, output);
out:
    if (opened) {
        int wrc = tt_jw_finish(&w);
        wrc = rc ? rc : wrc == TT_ENOMEM ? tt__oom() : wrc;
        rc = opened == 1 ? tt_out_close(&o, wrc) : wrc;
    }
    tt_memtl_result_free(&res);
    return rc;
}

/* ---- choosing the trace and the device ---- */

#define WHAT "Kineto trace or memory-timeline export"

static int timeline_format(tt_trace_format f)
{
    return f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY || f == TT_FMT_MEMTL_RAW;
}

/* the device opts select, into j (whose trace is read into j->pre) */
static int select_device(struct job *j, const tt_memtl_options *opts)
{
    const struct memtl_streamed *pre = j->pre;
    const struct memtl_devscan *d;
    int rc;
    if (j->raw_input) {
        snprintf(j->device, sizeof(j->device), "%s", opts->device ? opts->device : "cuda:0");
        return 0;
    }
    if (opts->device) {
        if ((rc = tt_device_parse(opts->device, &j->dtype, &j->did)) < 0)
            return rc;
        if (j->dtype == 0) {
            int dt;
            pre_busiest(pre, 1, &dt, &j->did);
        }
    } else if (!pre_busiest(pre, 0, &j->dtype, &j->did)) {
        return tt_error_set_at(TT_ENOTFOUND, j->label, -1,
                               "no [memory] events (was the trace taken with"
                               " profile_memory=True?)");
    }
    tt_device_format(j->dtype, j->did, j->device, sizeof(j->device));
    if (!(d = pre_dev(pre, j->dtype, j->did)) || !d->nall) {
        char have[512];
        devices_present(pre, have, sizeof(have));
        return tt_error_set_at(TT_ENOTFOUND, j->label, -1,
                               "no [memory] events for device %s (%s%s)", j->device,
                               have[0] ? "the trace has: " : "was the trace taken with"
                                                            " profile_memory=True?",
                               have);
    }
    return 0;
}

/* the job of the trace read into pre; label: its path */
static int job_of(struct job *j, tt_db *db, int64_t trace, const tt_memtl_options *opts,
                  const struct memtl_streamed *pre, const char *label)
{
    memset(j, 0, sizeof(*j));
    j->db = db;
    j->trace = trace;
    j->o = opts;
    j->pre = pre;
    j->label = label;
    j->raw_input = pre->format == TT_FMT_MEMTL_RAW;
    j->base_ns = pre->base_ns;
    return select_device(j, opts);
}

/* the filters of opts (NULL before version 3) */
static const tt_filter *filter_of(const tt_memtl_options *opts)
{
    return opts->version >= 3 ? &opts->filter : NULL;
}

/* the first trace of db opts select: *trace, *label (allocated) */
static int db_pick(tt_db *db, const tt_memtl_options *opts, int64_t *trace, char **label)
{
    tt__db_trace *t;
    size_t n, i;
    int rc;
    *label = NULL;
    if ((rc = tt__db_traces(db, &t, &n)) < 0)
        return rc;
    for (i = 0; i < n; i++)
        if (timeline_format(t[i].format) && (!opts->trace_id || t[i].id == opts->trace_id) &&
            (opts->rank < 0 || (t[i].have_rank && t[i].rank == opts->rank)))
            break;
    if (i < n) {
        *trace = t[i].id;
        if (!(*label = strdup(t[i].path ? t[i].path : "")))
            rc = tt__oom();
    } else {
        rc = tt__db_none(db, opts->trace_id || opts->rank >= 0, WHAT);
    }
    tt__db_traces_free(t, n);
    return rc;
}

/* the selected trace of db read and handed to run (output) or computed
 * into res */
static int on_db(tt_db *db, const tt_memtl_options *opts, const char *output,
                 tt_memtl_result *res)
{
    struct memtl_streamed pre;
    struct job j;
    int64_t trace = 0;
    char *label;
    tt__flt *fl = NULL;
    int rc = db_pick(db, opts, &trace, &label);
    if (rc < 0 || (rc = tt__flt_new(&fl, filter_of(opts))) < 0) {
        free(label);
        return rc;
    }
    if ((rc = tt__memtl_read_db(db, trace, fl, &pre)) == 0) {
        tt__log(TT_LOG_DEBUG, "memtimeline", "read from the database's rows");
        if ((rc = job_of(&j, db, trace, opts, &pre, label)) == 0)
            rc = res ? compute(&j, res, 1, NULL) : run_job(&j, output);
        tt__memtl_streamed_free(&pre);
    }
    free(label);
    tt__flt_free(fl);
    return rc;
}

int tt_memtimeline_compute(tt_db *db, const tt_memtl_options *opts, tt_memtl_result *result)
{
    tt_memtl_options def = TT_MEMTL_OPTIONS_INIT;
    memset(result, 0, sizeof(*result));
    return on_db(db, opts ? opts : &def, NULL, result);
}

int tt_memtimeline_db(tt_db *db, const tt_memtl_options *opts, const char *output)
{
    tt_memtl_options def = TT_MEMTL_OPTIONS_INIT;
    return on_db(db, opts ? opts : &def, output, NULL);
}

/* --et given something that is not an ET (or a trace that is not Kineto) */
static int et_not_et(const tt_memtl_options *opts)
{
    return tt_error_set_at(TT_EINVALID, opts->et_path, -1, "not a PyTorch Execution Trace");
}

static int et_no_match(const tt_memtl_options *opts)
{
    return tt_error_set_at(TT_EINVALID, opts->et_path, -1,
                           "this Execution Trace does not match the trace's CPU ops"
                           " (see 'tracetool crosscheck')");
}

/* `memtimeline FILE --et ET` (path: where to read FILE, label: its name):
 * the trace's rows read once more with each slice's parent, the ET joined
 * to its ops in memory (crosscheck's join of the two files), no database */
static int file_with_et(const char *path, const char *label, const tt_memtl_options *opts,
                        const char *output)
{
    struct tt__xc_links links;
    struct memtl_streamed pre;
    struct job j;
    tt__flt *fl = NULL;
    int rc = tt__flt_new(&fl, filter_of(opts));
    if (rc < 0)
        return rc;
    rc = tt__xc_links_files(path, opts->et_path, &links);
    if (rc < 0 || !links.n) {
        tt__flt_free(fl);
        if (rc == TT_ENOTFOUND) /* no ET, or no Kineto trace, among the two */
            return et_not_et(opts);
        if (rc < 0)
            return rc;
        tt__xc_links_free(&links);
        return et_no_match(opts);
    }
    if ((rc = tt__memtl_read_file_parents(path, fl, &pre)) == 0) {
        if ((opts->trace_id && opts->trace_id != 1) ||
            (opts->rank >= 0 && !(pre.have_rank && pre.rank == opts->rank)))
            rc = tt_error_set_at(TT_ENOTFOUND, label, -1, "no %s matches --trace/--rank", WHAT);
        else if ((rc = job_of(&j, NULL, 0, opts, &pre, label)) == 0) {
            j.et_path = opts->et_path;
            j.links = &links;
            rc = run_job(&j, output);
        }
        tt__memtl_streamed_free(&pre);
    }
    tt__xc_links_free(&links);
    tt__flt_free(fl);
    return rc;
}

/* FILE --et ET: standard input or a pipe from a copy (read more than once) */
static int file_with_et_input(const char *path, const tt_memtl_options *opts, const char *output)
{
    tt__spool sp;
    const char *rd;
    int rc = tt__spool_input(&sp, path, &rd);
    if (rc == 0)
        rc = file_with_et(rd, path, opts, output);
    return tt__spool_end(&sp, path, rc);
}

/*
 * The trace files of a file or directory input (each read in turn, trace k
 * counted from 1 as a database made of them would number them) until one
 * that opts select: a timeline written from it. source: the input, for the
 * error when none is selected, as a database of the files would give it.
 */
static int files_run(const char *source, char *const *files, size_t n,
                     const tt_memtl_options *opts, const char *output, tt__flt *fl)
{
    int filtered = opts->trace_id || opts->rank >= 0;
    tt_trace_format first = TT_FMT_UNKNOWN;
    struct memtl_streamed pre;
    struct job j;
    size_t k;
    int rc;
    for (k = 0; k < n; k++) {
        if (opts->trace_id && opts->trace_id != (int64_t)k + 1)
            continue;
        if ((rc = tt__memtl_read_file(files[k], fl, &pre)) < 0)
            return rc;
        if (!k)
            first = pre.format;
        if (!timeline_format(pre.format) ||
            (opts->rank >= 0 && !(pre.have_rank && pre.rank == opts->rank))) {
            tt__memtl_streamed_free(&pre);
            continue;
        }
        if ((rc = job_of(&j, NULL, 0, opts, &pre, files[k])) == 0)
            rc = run_job(&j, output);
        tt__memtl_streamed_free(&pre);
        return rc;
    }
    if (filtered || !n)
        return tt_error_set_at(TT_ENOTFOUND, source, -1, "no %s matches --trace/--rank", WHAT);
    return tt_error_set_at(TT_EUNSUPPORTED, source, -1, "no %s in this file%s%s%s", WHAT,
                           first ? " (read as " : "", first ? tt_format_name(first) : "",
                           first ? ")" : "");
}

int tt_memtimeline_file(const char *path, const tt_memtl_options *opts, const char *output)
{
    tt_memtl_options def = TT_MEMTL_OPTIONS_INIT;
    struct stat sb;
    tt_dir_walk w;
    tt__flt *fl = NULL;
    int rc;
    if (!opts)
        opts = &def;
    if (opts->et_path)
        return file_with_et_input(path, opts, output);
    if ((rc = tt__flt_new(&fl, filter_of(opts))) < 0)
        return rc;
    if (strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* a directory of per-rank traces: its files in the walk's order */
        if ((rc = tt_walk_traces(path, &w)) == 0 && !w.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, path, -1, "no trace files in this directory");
        if (rc == 0)
            rc = files_run(path, w.files, w.nfiles, opts, output, fl);
        tt_dir_walk_free(&w);
    } else {
        char *one[1];
        one[0] = (char *)path;
        rc = files_run(path, one, 1, opts, output, fl);
    }
    tt__flt_free(fl);
    return rc;
}
