/*
 * analyze/counters/counters.c - `tracetool queue` and `tracetool bandwidth`
 * (tracetool/counters.h): the selected traces (analyze/input/each.h), each
 * read into a consumer of its rows (counters_stream.c), then its summary
 * rows or its series in the traces' order; printing is counters_print.c.
 *
 * A summary is made as soon as its trace is read (the consumer is freed:
 * what waits for the traces' order is a few rows); a series keeps each
 * trace's consumer, whose points wait in its spills, until its turn.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "analyze/counters/counters_print.h"
#include "analyze/input/each.h"

/* one trace read, waiting for its turn */
struct held {
    struct tt__ctr *c; /* a series: the consumer */
    void *rows;        /* a summary: its rows */
    size_t nrows;
    int have_rank;
    int64_t rank;
};

struct walk {
    unsigned what;       /* TT__CTR_QUEUE or TT__CTR_BW */
    const tt_filter *f;
    unsigned version;    /* the options': < 2 takes no --name/--under */
    int series;
    int64_t max_queue;
    /* a summary: the rows of all traces */
    void *rows;
    size_t nrows, arows;
    /* a series: each point */
    tt_queue_point_fn qfn;
    tt_bandwidth_point_fn bfn;
    void *ctx;
};

static size_t row_size(const struct walk *w)
{
    return w->what == TT__CTR_QUEUE ? sizeof(tt_queue_row) : sizeof(tt_bandwidth_row);
}

/* ---------------------------------------------------------------- summaries */

/* the rows array grown by one (zeroed); NULL when out of memory */
static void *row_add(void **rows, size_t *n, size_t *alloc, size_t size)
{
    char *p;
    if (*n == *alloc) {
        size_t na = *alloc ? 2 * *alloc : 8;
        if (!(p = realloc(*rows, na * size)))
            return NULL;
        *rows = p;
        *alloc = na;
    }
    p = (char *)*rows + (*n)++ * size;
    memset(p, 0, size);
    return p;
}

/* a stream's statistics, from its changes in order */
static int queue_rows(struct walk *w, struct tt__ctr *c, int64_t id, struct held *h)
{
    struct tt__qpt p, prev;
    tt_queue_row *x = NULL;
    size_t alloc = 0;
    double sum = 0;
    int rc;
    memset(&prev, 0, sizeof(prev));
    while ((rc = tt__ctr_queue_next(c, &p)) > 0) {
        if (!x || p.device != x->device || p.stream != x->stream) {
            if (x)
                x->mean = sum / (double)x->count;
            if (!(x = row_add(&h->rows, &h->nrows, &alloc, sizeof(*x))))
                return tt__oom();
            x->trace_id = id;
            x->have_rank = h->have_rank;
            x->rank = h->rank;
            x->device = p.device;
            x->stream = p.stream;
            x->min = x->max = p.len;
            sum = 0;
        } else if (prev.len >= w->max_queue) {
            x->blocked_ns = tt_sat_add(x->blocked_ns, p.ts - prev.ts);
        }
        x->count++;
        sum += (double)p.len;
        if (p.len < x->min)
            x->min = p.len;
        if (p.len > x->max)
            x->max = p.len;
        prev = p;
    }
    if (x)
        x->mean = sum / (double)x->count;
    return rc;
}

/* a kind's statistics over its sums > 0 */
static int bw_rows(struct tt__ctr *c, int64_t id, struct held *h)
{
    tt_bandwidth_row *x = NULL;
    struct tt__bpt p;
    size_t alloc = 0;
    int rc;
    while ((rc = tt__ctr_bw_next(c, &p)) > 0) {
        if (!(p.gbps > 0))
            continue;
        if (!x || strcmp(x->kind, tt__ctr_kind_name[p.kind])) {
            if (x)
                x->mean_gbps /= (double)x->count;
            if (!(x = row_add(&h->rows, &h->nrows, &alloc, sizeof(*x))))
                return tt__oom();
            x->trace_id = id;
            x->have_rank = h->have_rank;
            x->rank = h->rank;
            x->kind = tt__ctr_kind_name[p.kind];
            x->min_gbps = x->max_gbps = p.gbps;
        }
        x->count++;
        x->mean_gbps += p.gbps; /* the sum until the kind ends */
        if (p.gbps < x->min_gbps)
            x->min_gbps = p.gbps;
        if (p.gbps > x->max_gbps)
            x->max_gbps = p.gbps;
    }
    if (x)
        x->mean_gbps /= (double)x->count;
    return rc;
}

/* ---------------------------------------------------------------- series */

static int queue_points(struct walk *w, struct tt__ctr *c, int64_t id, const struct held *h)
{
    tt_queue_point q;
    struct tt__qpt p;
    int rc;
    memset(&q, 0, sizeof(q));
    q.trace_id = id;
    q.have_rank = h->have_rank;
    q.rank = h->have_rank ? h->rank : -1;
    while ((rc = tt__ctr_queue_next(c, &p)) > 0) {
        q.device = p.device;
        q.stream = p.stream;
        q.ts_ns = p.ts;
        q.queue_length = p.len;
        if ((rc = w->qfn(w->ctx, &q)) != 0)
            return rc;
    }
    return rc;
}

static int bw_points(struct walk *w, struct tt__ctr *c, int64_t id, const struct held *h)
{
    tt_bandwidth_point q;
    struct tt__bpt p;
    int rc;
    memset(&q, 0, sizeof(q));
    q.trace_id = id;
    q.have_rank = h->have_rank;
    q.rank = h->have_rank ? h->rank : -1;
    while ((rc = tt__ctr_bw_next(c, &p)) > 0) {
        q.kind = tt__ctr_kind_name[p.kind];
        q.ts_ns = p.ts;
        q.gbps = p.gbps;
        if ((rc = w->bfn(w->ctx, &q)) != 0)
            return rc;
    }
    return rc;
}

/* ---------------------------------------------------------------- the traces */

static void v_drop(void *ctx, void *r)
{
    struct held *h = r;
    (void)ctx;
    if (!h)
        return;
    tt__ctr_free(h->c);
    free(h->rows);
    free(h);
}

static int v_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                  void **r)
{
    struct walk *w = ctx;
    struct held *h = calloc(1, sizeof(*h));
    int rc;
    if (!h)
        return tt__oom();
    if ((rc = tt__ctr_read(w->what, w->f, path, db, id, res, &h->c)) < 0) {
        free(h);
        return rc;
    }
    h->have_rank = res->have_rank;
    h->rank = res->rank;
    if (!w->series) {
        rc = w->what == TT__CTR_QUEUE ? queue_rows(w, h->c, id, h) : bw_rows(h->c, id, h);
        tt__ctr_free(h->c);
        h->c = NULL;
    }
    if (rc < 0) {
        v_drop(ctx, h);
        return rc;
    }
    *r = h;
    return 0;
}

static int v_take(void *ctx, void *r, int64_t id, const char *path)
{
    struct walk *w = ctx;
    struct held *h = r;
    size_t size = row_size(w), i;
    int rc = 0;
    (void)path;
    if (w->series) {
        rc = w->what == TT__CTR_QUEUE ? queue_points(w, h->c, id, h) : bw_points(w, h->c, id, h);
    } else {
        for (i = 0; rc == 0 && i < h->nrows; i++) {
            void *x = row_add(&w->rows, &w->nrows, &w->arows, size);
            if (!x)
                rc = tt__oom();
            else
                memcpy(x, (char *)h->rows + i * size, size);
        }
    }
    v_drop(ctx, h);
    return rc;
}

/* options of version 1 knew no --name/--under: refused, as they were */
static int check_filter(const struct walk *w, const char *cmd)
{
    if (w->version < 2 && w->f && (w->f->name || w->f->under))
        return tt_error_set(TT_EINVALID, "%s: --name and --under need options version 2",
                            cmd);
    return tt_filter_check(w->f);
}

/* every selected trace of input (or db) through w */
static int walk(struct walk *w, int64_t trace_id, int64_t rank, const char *input, tt_db *db)
{
    struct tt__visit v;
    int rc = check_filter(w, w->what == TT__CTR_QUEUE ? "queue" : "bandwidth");
    if (rc < 0)
        return rc;
    v.ctx = w;
    v.read = v_read;
    v.take = v_take;
    v.drop = v_drop;
    return tt__each_trace(trace_id, rank, input, db, &v); /* > 0: a callback's */
}

/* the summary rows of every selected trace (*rows: free() them) */
static int summary(struct walk *w, int64_t trace_id, int64_t rank, const char *input,
                   tt_db *db, void **rows, size_t *n)
{
    int rc = walk(w, trace_id, rank, input, db);
    *rows = NULL;
    *n = 0;
    if (rc < 0) {
        free(w->rows);
        return rc;
    }
    *rows = w->rows;
    *n = w->nrows;
    return 0;
}

/* every point of every selected trace through w's function */
static int series(struct walk *w, int64_t trace_id, int64_t rank, const char *input, tt_db *db,
                  void *ctx)
{
    w->series = 1;
    w->ctx = ctx;
    return walk(w, trace_id, rank, input, db);
}

/* the summary, or (series) every point, printed */
static int print(struct walk *w, int64_t trace_id, int64_t rank, int all,
                 tt_output_format format, const char *input, tt_db *db, FILE *out)
{
    int queue = w->what == TT__CTR_QUEUE, rc;
    struct tt__cprint p;
    size_t n;
    void *rows;
    if (all) {
        w->qfn = tt__cprint_queue_point;
        w->bfn = tt__cprint_bw_point;
        if ((rc = tt__cprint_begin(&p, queue ? TT__CP_QUEUE_SERIES : TT__CP_BW_SERIES, format,
                                   out)) == 0)
            rc = series(w, trace_id, rank, input, db, &p);
        return tt__cprint_end(&p, rc);
    }
    if ((rc = summary(w, trace_id, rank, input, db, &rows, &n)) < 0)
        return rc;
    if ((rc = tt__cprint_begin(&p, queue ? TT__CP_QUEUE : TT__CP_BW, format, out)) == 0)
        rc = queue ? tt__cprint_queue_rows(&p, rows, n) : tt__cprint_bw_rows(&p, rows, n);
    free(rows);
    return tt__cprint_end(&p, rc);
}

/* ---------------------------------------------------------------- queue */

static struct walk *queue_walk(struct walk *w, const tt_queue_options *o)
{
    memset(w, 0, sizeof(*w));
    w->what = TT__CTR_QUEUE;
    w->f = &o->filter;
    w->version = o->version;
    w->max_queue = o->max_queue;
    return w;
}

static int queue_result(const char *input, tt_db *db, const tt_queue_options *o,
                        tt_queue_result *res)
{
    struct walk w;
    void *rows;
    int rc = summary(queue_walk(&w, o), o->trace_id, o->rank, input, db, &rows, &res->nrows);
    res->rows = rows;
    return rc;
}

int tt_queue_db_result(tt_db *db, const tt_queue_options *o, tt_queue_result *res)
{
    return queue_result(NULL, db, o, res);
}

int tt_queue_file_result(const char *path, const tt_queue_options *o, tt_queue_result *res)
{
    return queue_result(path, NULL, o, res);
}

void tt_queue_result_free(tt_queue_result *res)
{
    if (!res)
        return;
    free(res->rows);
    memset(res, 0, sizeof(*res));
}

int tt_queue_db_series(tt_db *db, const tt_queue_options *o, tt_queue_point_fn fn, void *ctx)
{
    struct walk w;
    queue_walk(&w, o)->qfn = fn;
    return series(&w, o->trace_id, o->rank, NULL, db, ctx);
}

int tt_queue_file_series(const char *path, const tt_queue_options *o, tt_queue_point_fn fn,
                         void *ctx)
{
    struct walk w;
    queue_walk(&w, o)->qfn = fn;
    return series(&w, o->trace_id, o->rank, path, NULL, ctx);
}

int tt_queue_db(tt_db *db, const tt_queue_options *o, FILE *out)
{
    struct walk w;
    return print(queue_walk(&w, o), o->trace_id, o->rank, o->series, o->format, NULL, db, out);
}

int tt_queue_file(const char *path, const tt_queue_options *o, FILE *out)
{
    struct walk w;
    return print(queue_walk(&w, o), o->trace_id, o->rank, o->series, o->format, path, NULL,
                 out);
}

/* ---------------------------------------------------------------- bandwidth */

static struct walk *bw_walk(struct walk *w, const tt_bandwidth_options *o)
{
    memset(w, 0, sizeof(*w));
    w->what = TT__CTR_BW;
    w->f = &o->filter;
    w->version = o->version;
    return w;
}

static int bw_result(const char *input, tt_db *db, const tt_bandwidth_options *o,
                     tt_bandwidth_result *res)
{
    struct walk w;
    void *rows;
    int rc = summary(bw_walk(&w, o), o->trace_id, o->rank, input, db, &rows, &res->nrows);
    res->rows = rows;
    return rc;
}

int tt_bandwidth_db_result(tt_db *db, const tt_bandwidth_options *o, tt_bandwidth_result *res)
{
    return bw_result(NULL, db, o, res);
}

int tt_bandwidth_file_result(const char *path, const tt_bandwidth_options *o,
                             tt_bandwidth_result *res)
{
    return bw_result(path, NULL, o, res);
}

void tt_bandwidth_result_free(tt_bandwidth_result *res)
{
    if (!res)
        return;
    free(res->rows);
    memset(res, 0, sizeof(*res));
}

int tt_bandwidth_db_series(tt_db *db, const tt_bandwidth_options *o, tt_bandwidth_point_fn fn,
                           void *ctx)
{
    struct walk w;
    bw_walk(&w, o)->bfn = fn;
    return series(&w, o->trace_id, o->rank, NULL, db, ctx);
}

int tt_bandwidth_file_series(const char *path, const tt_bandwidth_options *o,
                             tt_bandwidth_point_fn fn, void *ctx)
{
    struct walk w;
    bw_walk(&w, o)->bfn = fn;
    return series(&w, o->trace_id, o->rank, path, NULL, ctx);
}

int tt_bandwidth_db(tt_db *db, const tt_bandwidth_options *o, FILE *out)
{
    struct walk w;
    return print(bw_walk(&w, o), o->trace_id, o->rank, o->series, o->format, NULL, db, out);
}

int tt_bandwidth_file(const char *path, const tt_bandwidth_options *o, FILE *out)
{
    struct walk w;
    return print(bw_walk(&w, o), o->trace_id, o->rank, o->series, o->format, path, NULL, out);
}
