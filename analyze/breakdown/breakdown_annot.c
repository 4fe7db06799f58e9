/*
 * analyze/breakdown/breakdown_annot.c - `tracetool breakdown --by annotation`:
 * GPU time per gpu_user_annotation (the GPU-side copies of record_function
 * ranges Kineto writes on each stream), rank by rank, as HTA's
 * get_gpu_user_annotation_breakdown; with --kernels, the time of the
 * kernels, memcpys and memsets under each annotation, as HTA's
 * get_gpu_kernels_with_user_annotations: each activity goes to the
 * shortest annotation on its pid/tid whose interval overlaps its own.
 *
 * One consumer of the record stream (store/ingest_rows.h) per trace, from a
 * file or a database alike (analyze/input/each.c picks and orders them).
 * Without --kernels each annotation goes into the sums of its name as it
 * comes. With it the annotations and the activities are spilled
 * (common/spill.h: bounded memory, the rest in a temporary file) and, once
 * the trace is over, swept per pid/tid in start order with the set of the
 * annotations that overlap the sweep's point: memory holds the strings, the
 * names' sums and that set, whatever the size of the trace. The time range
 * of options.filter keeps an annotation by its start and an activity by its
 * runtime call's start (its own without one); only then are the links of
 * the activities read (tt__rowsink.gpu_links).
 *
 * --name and --under (options version >= 4; analyze/filter/filtering.h)
 * keep what is counted: without --kernels the annotations whose name
 * matches, and those whose CPU user_annotation (the link of the same
 * External id, which only a database or a file read as one gives:
 * TT_ROWS_RELINK) lies under the op: the annotations are spilled by that
 * link, the user_annotations under the op by id, and joined once the trace
 * is over. With --kernels the activities that match / were launched under
 * the op (by their runtime call); the annotations they fall under are not
 * filtered.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/i64map.h"
#include "common/log.h"
#include "common/spill.h"
#include "common/tmath.h"
#include "analyze/breakdown/breakdown_state.h"
#include "analyze/filter/filtering.h"
#include "analyze/input/each.h"
#include "formats/spool.h"
#include "report/table_json.h"
#include "store/db_internal.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <math.h>

/* an annotation or an activity, spilled by (pid, tid, ts, seq) */
struct ba_ev {
    int64_t pid, tid, ts, end, dur, name, seq;
};

static int cmp_ev(const void *a, const void *b)
{
    const struct ba_ev *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* --under without --kernels: an annotation by its user_annotation (op), or
 * a user_annotation under the op (op: its id; name, dur unused), by op */
struct ba_pend {
    int64_t op, name, dur, seq;
};

static int cmp_pend(const void *a, const void *b)
{
    const struct ba_pend *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* the running statistics of one name (Welford's) */
struct ba_stat {
    int64_t name;            /* string id; -1: no annotation */
    int64_t n, sum, min, max;
    double mean, m2;
};

struct ba_link {
    int64_t rt, rt_ts, op;
};

/* one trace being read */
struct ba {
    const tt_bd_options *o;
    int kernels, links;      /* --kernels; the links read (a time range, --under) */
    tt__flt *fl;             /* --name, --under (NULL: neither; not owned) */
    int ann_under;           /* --under without --kernels: the join below */
    int64_t ua_cat;          /* the string id of "user_annotation" (-1: none yet) */
    tt__spill *pend, *uas;   /* ann_under: annotations by op, user_annotations under by id */
    char *text;              /* the strings, each NUL-terminated */
    size_t ntext, atext;
    struct i64map soff;      /* string id -> offset into text */
    struct ba_stat *st;      /* per name */
    size_t nst, ast;
    struct i64map st_of;     /* string id + 1 (0: no annotation) -> index into st */
    struct ba_link *ln;      /* links of GPU rows to come: ln[hln..nln) */
    size_t hln, nln, aln;
    int64_t seq, nannot;     /* GPU rows read, annotations kept */
    tt__spill *ann, *act;
};

static int64_t int_or(const tt__cell *c, int64_t dflt)
{
    return c->type == TT_CELL_INT ? c->i : dflt;
}

static int64_t thread_id(const tt__cell *c, const char *text)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;
    if (c->type != TT_CELL_TEXT)
        return int_or(c, -1);
    for (i = 0; i < c->len; i++) /* a text id: below every number */
        h = (h ^ (unsigned char)text[c->i + i]) * 1099511628211ull;
    return (int64_t)(h >> 2) - INT64_MAX;
}

/* one duration more in the statistics of name (string id; -1: none) */
static int stat_add(struct ba *b, int64_t name, int64_t dur)
{
    struct ba_stat *s;
    size_t k;
    double d;
    if (!tt__i64map_get(&b->st_of, name + 1, &k)) {
        if (TT_ALLOC_GROW(b->st, b->nst + 1, b->ast) < 0 ||
            tt__i64map_put(&b->st_of, name + 1, b->nst) < 0)
            return tt__oom();
        k = b->nst++;
        memset(&b->st[k], 0, sizeof(b->st[k]));
        b->st[k].name = name;
    }
    s = &b->st[k];
    if (!s->n || dur < s->min)
        s->min = dur;
    if (!s->n || dur > s->max)
        s->max = dur;
    s->n++;
    s->sum = tt_sat_add(s->sum, dur);
    d = (double)dur - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * ((double)dur - s->mean);
    return 0;
}

static int ba_string(struct ba *b, const tt__cell *row, const char *text)
{
    const tt__cell *c = &row[TT_C_STR_S];
    size_t len = c->type == TT_CELL_TEXT ? c->len : 0;
    int64_t id = int_or(&row[TT_C_STR_ID], -1);
    if (id < 0)
        return 0;
    if (TT_ALLOC_GROW(b->text, b->ntext + len + 1, b->atext) < 0 ||
        tt__i64map_put(&b->soff, id, b->ntext) < 0)
        return tt__oom();
    memcpy(b->text + b->ntext, text + c->i, len);
    b->text[b->ntext + len] = '\0';
    if (b->ann_under && !strcmp(b->text + b->ntext, "user_annotation"))
        b->ua_cat = id;
    b->ntext += len + 1;
    return b->fl ? tt__flt_string(b->fl, id, text + c->i, len) : 0;
}

/* ann_under: a user_annotation slice under the op, kept by id */
static int ba_slice(struct ba *b, const tt__cell *row, const char *text)
{
    struct ba_pend u = { 0, 0, 0, 0 };
    const tt__cell *ts = &row[TT_C_SL_TS], *dur = &row[TT_C_SL_DUR];
    tt__tkey k;
    if (b->ua_cat < 0 || int_or(&row[TT_C_SL_CAT], -1) != b->ua_cat ||
        row[TT_C_SL_ID].type != TT_CELL_INT || ts->type != TT_CELL_INT)
        return 0;
    k = tt__tkey_of_cells(&row[TT_C_SL_PID], &row[TT_C_SL_TID], text);
    if (!tt__flt_under(b->fl, &k, ts->i, tt_sat_add(ts->i, int_or(dur, 0))))
        return 0;
    u.op = row[TT_C_SL_ID].i;
    return tt__spill_put(&b->uas, sizeof(u), cmp_pend, &u);
}

static int kind_is(const tt__cell *k, const char *text, const char *s)
{
    size_t n = strlen(s);
    return k->type == TT_CELL_TEXT && k->len == n && !memcmp(text + k->i, s, n);
}

static int ba_gpu(struct ba *b, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    int64_t launch = TT_ROWS_NO_TS, op = 0;
    int annot = kind_is(k, text, "annotation"), fails = 0;
    struct ba_ev e;
    if (b->links) {
        if (b->hln == b->nln || b->ln[b->hln].rt != int_or(&row[TT_C_GPU_RUNTIME_ID], 0))
            return tt_error_set(TT_ERROR, "breakdown: a GPU activity came without its links");
        op = b->ln[b->hln].op;
        launch = b->ln[b->hln++].rt_ts;
    }
    /* every GPU row once, in order (its launch taken): TT__FLT_* bits */
    if (b->fl && (fails = tt__flt_gpu_fails(b->fl, row, text)) < 0)
        return fails;
    if (row[TT_C_GPU_TS].type != TT_CELL_INT || row[TT_C_GPU_DUR].type != TT_CELL_INT ||
        !(annot || (b->kernels && (kind_is(k, text, "kernel") || kind_is(k, text, "memcpy") ||
                                   kind_is(k, text, "memset")))))
        return 0;
    memset(&e, 0, sizeof(e));
    e.ts = row[TT_C_GPU_TS].i;
    e.dur = row[TT_C_GPU_DUR].i;
    if (!tt__filter_in_time(&b->o->filter, annot || launch == TT_ROWS_NO_TS ? e.ts : launch))
        return 0;
    /* what is counted passes: an activity wholly, an annotation by its name
     * (its place under an op: the join) */
    if (b->kernels ? !annot && fails : annot && (fails & TT__FLT_NAME))
        return 0;
    e.name = int_or(&row[TT_C_GPU_NAME], 0);
    if (annot)
        b->nannot++;
    if (annot && b->ann_under) {
        struct ba_pend x = { op, e.name, e.dur, b->seq++ };
        return op ? tt__spill_put(&b->pend, sizeof(x), cmp_pend, &x) : 0;
    }
    if (annot && !b->kernels)
        return stat_add(b, e.name, e.dur);
    e.pid = thread_id(&row[TT_C_GPU_PID], text);
    e.tid = thread_id(&row[TT_C_GPU_TID], text);
    e.end = tt_sat_add(e.ts, e.dur > 0 ? e.dur : 0);
    e.seq = b->seq++;
    return tt__spill_put(annot ? &b->ann : &b->act, sizeof(e), cmp_ev, &e);
}

static int ba_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct ba *b = ctx;
    (void)name;
    if (TT_ALLOC_GROW(b->ln, b->nln + 1, b->aln) < 0)
        return tt__oom();
    b->ln[b->nln].rt = rt;
    b->ln[b->nln].op = op;
    b->ln[b->nln++].rt_ts = rt ? rt_ts : TT_ROWS_NO_TS;
    return 0;
}

static int ba_launch(void *ctx, const tt__gpu_launch *l)
{
    struct ba *b = ctx;
    return tt__flt_launch(b->fl, l);
}

static int ba_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct ba *b = ctx;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = ba_string(b, row, text);
        else if (table == TT_ROWS_GPU)
            rc = ba_gpu(b, row, text);
        else if (table == TT_ROWS_SLICE && b->ann_under)
            rc = ba_slice(b, row, text);
    }
    if (table == TT_ROWS_GPU && b->hln) { /* the links used; those of rows to come stay */
        memmove(b->ln, b->ln + b->hln, (b->nln - b->hln) * sizeof(*b->ln));
        b->nln -= b->hln;
        b->hln = 0;
    }
    return rc;
}

static void ba_release(struct ba *b)
{
    free(b->text);
    tt__i64map_free(&b->soff);
    free(b->st);
    tt__i64map_free(&b->st_of);
    free(b->ln);
    tt__spill_free(b->ann);
    tt__spill_free(b->act);
    tt__spill_free(b->pend);
    tt__spill_free(b->uas);
    memset(b, 0, sizeof(*b));
}

static void ba_init(struct ba *b, const tt_bd_options *o, tt__flt *fl)
{
    int under = tt__flt_needs_load(fl);
    memset(b, 0, sizeof(*b));
    b->o = o;
    b->fl = fl;
    b->kernels = o->annot_kernels;
    b->ann_under = under && !b->kernels;
    b->ua_cat = -1;
    b->links = under || (b->kernels && (o->filter.from_ns != TT_FILTER_OPEN_FROM ||
                                        o->filter.to_ns != TT_FILTER_OPEN_TO));
}

/* ann_under: the annotations whose user_annotation is under the op, from
 * the two spills in op order */
static int ba_join(struct ba *b)
{
    struct ba_pend a, u = { 0, 0, 0, 0 };
    int rc, more;
    if ((rc = tt__spill_rewind(b->pend)) < 0 || (rc = tt__spill_rewind(b->uas)) < 0 ||
        (rc = more = tt__spill_next(b->uas, &u)) < 0)
        return rc;
    while ((rc = tt__spill_next(b->pend, &a)) == 1) {
        while (more == 1 && u.op < a.op)
            if ((more = tt__spill_next(b->uas, &u)) < 0)
                return more;
        if (more == 1 && u.op == a.op && (rc = stat_add(b, a.name, a.dur)) < 0)
            return rc;
    }
    return rc;
}

/* ---- --kernels: the sweep ---- */

static int same_thread(const struct ba_ev *a, const struct ba_ev *b)
{
    return a->pid == b->pid && a->tid == b->tid;
}

/* whether annotation a comes before activity k's thread, or starts before it ends */
static int ann_before(const struct ba_ev *a, const struct ba_ev *k)
{
    if (a->pid != k->pid)
        return a->pid < k->pid;
    if (a->tid != k->tid)
        return a->tid < k->tid;
    return a->ts < k->end;
}

/* the set of annotations that may overlap the activities to come */
struct ba_set {
    struct ba_ev *v;
    size_t n, a;
};

/* the innermost annotation of activity k (its name; -1: none): the set
 * updated with the annotations of k's thread that start before k ends
 * (from the spill, *next the one read ahead) and rid of those that end
 * before k starts; of those overlapping k, the shortest, then the one that
 * starts last, then the one read last */
static int innermost(struct ba *b, struct ba_set *set, struct ba_ev *next, int *more,
                     const struct ba_ev *k, int64_t *name)
{
    const struct ba_ev *best = NULL;
    size_t i, w = 0;
    while (*more == 1 && ann_before(next, k)) {
        if (same_thread(next, k)) {
            if (TT_ALLOC_GROW(set->v, set->n + 1, set->a) < 0)
                return tt__oom();
            set->v[set->n++] = *next;
        }
        if ((*more = tt__spill_next(b->ann, next)) < 0)
            return *more;
    }
    for (i = 0; i < set->n; i++) {
        const struct ba_ev *a = &set->v[i];
        if (!same_thread(a, k) || a->end <= k->ts)
            continue; /* no later activity (starting at k->ts or after) overlaps it */
        set->v[w++] = *a;
    }
    set->n = w;
    for (i = 0; i < set->n; i++) {
        const struct ba_ev *a = &set->v[i];
        if (!(a->ts < k->end && k->ts < a->end))
            continue;
        if (!best || a->dur < best->dur ||
            (a->dur == best->dur &&
             (a->ts > best->ts || (a->ts == best->ts && a->seq > best->seq))))
            best = a;
    }
    *name = best ? best->name : -1;
    return 0;
}

static int ba_sweep(struct ba *b)
{
    struct ba_set set = { NULL, 0, 0 };
    struct ba_ev k, next;
    int64_t name = -1;
    int rc, more = 0;
    if (!b->nannot) /* as HTA: no annotation, no table */
        return 0;
    if ((rc = tt__spill_rewind(b->ann)) < 0 || (rc = tt__spill_rewind(b->act)) < 0 ||
        (rc = more = tt__spill_next(b->ann, &next)) < 0)
        return rc;
    while ((rc = tt__spill_next(b->act, &k)) == 1)
        if ((rc = innermost(b, &set, &next, &more, &k, &name)) < 0 ||
            (rc = stat_add(b, name, k.dur)) < 0)
            break;
    free(set.v);
    return rc;
}

/* ---- one trace ---- */

#define ANNOT_SKIP                                                                         \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

static const uint64_t ba_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_CAT) | TT_COL(TT_C_SL_PID) |
                      TT_COL(TT_C_SL_TID) | TT_COL(TT_C_SL_TS) | TT_COL(TT_C_SL_DUR),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_PID) |
                    TT_COL(TT_C_GPU_TID) | TT_COL(TT_C_GPU_TS) | TT_COL(TT_C_GPU_DUR) |
                    TT_COL(TT_C_GPU_RUNTIME_ID),
};

/* the rows of a file (db NULL) or of trace `trace` of db into b; without
 * links, slices and runtime calls are not even read, and a file to its end
 * (TT_ROWS_NO_STOP); with them a file whose links need the passes after a
 * load is read again, twice (TT_ROWS_RELINK) */
static int ba_read(struct ba *b, const tt__rowsink *sink, const char *path, tt_db *db,
                   int64_t trace, tt__rows_result *res)
{
    unsigned skip = ANNOT_SKIP | (b->links ? 0 : 1u << TT_ROWS_SLICE | 1u << TT_ROWS_RUNTIME);
    const tt_bd_options *o = b->o;
    tt__flt *fl = b->fl;
    int rc;
    if (db)
        return (rc = tt__flt_load(fl, NULL, db, trace)) < 0
                   ? rc
                   : tt__db_rows(db, trace, sink, skip | TT_ROWS_NO_ARGS, res);
    if (!b->links)
        return tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip | TT_ROWS_NO_STOP, res);
    if (tt__spool_needed(path)) {
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = ba_read(b, sink, rd, NULL, trace, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__flt_load(fl, path, NULL, 0)) < 0)
        return rc;
    /* the annotations' user_annotations: only a file read as a database */
    if (b->ann_under)
        return tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip | TT_ROWS_RELINK, res);
    if ((rc = tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip, res)) != 0 || !res->needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "breakdown", "%s: read twice: %s", path,
            res->why_db ? res->why_db : "links");
    free(res->metadata);
    res->metadata = NULL;
    ba_release(b);
    ba_init(b, o, fl);
    tt__flt_reset(fl);
    return tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip | TT_ROWS_RELINK, res);
}

/* a trace's rows (tt_bd_annot, trace_id and rank to be set) */
struct ba_trace {
    tt_bd_annot *rows;
    size_t n;
    int64_t rank;
};

static void rows_free(tt_bd_annot *rows, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
}

/* the statistics of b into t's rows */
static int ba_rows_of(const struct ba *b, struct ba_trace *t)
{
    size_t i, off;
    if (!(t->rows = calloc(b->nst ? b->nst : 1, sizeof(*t->rows))))
        return tt__oom();
    for (i = 0; i < b->nst; i++) {
        const struct ba_stat *s = &b->st[i];
        tt_bd_annot *x = &t->rows[t->n++];
        const char *name = s->name < 0                              ? TT_BD_NO_ANNOT
                           : tt__i64map_get(&b->soff, s->name, &off) ? b->text + off
                                                                     : "?";
        if (!(x->name = strdup(name)))
            return tt__oom();
        x->count = s->n;
        x->gpu_ns = s->sum;
        x->min_ns = s->min;
        x->max_ns = s->max;
        x->mean_ns = s->mean;
        x->std_ns = s->n > 1 && s->m2 > 0 ? sqrt(s->m2 / (double)(s->n - 1)) : 0;
    }
    return 0;
}

/* the computation: the options, the result being filled */
struct ba_run {
    const tt_bd_options *o;
    tt_bd_result *res;
    size_t alloc;
    tt__flt *fl;             /* --name, --under (NULL: neither) */
};

static void trace_drop(void *ctx, void *r)
{
    struct ba_trace *t = r;
    (void)ctx;
    if (t)
        rows_free(t->rows, t->n);
    free(t);
}

static int trace_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                      void **r)
{
    struct ba_run *run = ctx;
    struct ba_trace *t = calloc(1, sizeof(*t));
    struct ba b;
    tt__rowsink sink;
    int rc;
    if (!t)
        return tt__oom();
    memset(res, 0, sizeof(*res));
    ba_init(&b, run->o, run->fl);
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &b;
    sink.rows = ba_rows;
    sink.cols = ba_cols;
    sink.gpu_links = b.links ? ba_links : NULL;
    sink.gpu_launch = tt__flt_wants_launch(b.fl) ? ba_launch : NULL;
    rc = ba_read(&b, &sink, path, db, id, res);
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0 && b.kernels)
        rc = ba_sweep(&b);
    else if (rc == 0 && b.ann_under)
        rc = ba_join(&b);
    if (rc == 0)
        rc = ba_rows_of(&b, t);
    ba_release(&b);
    t->rank = res->have_rank ? res->rank : -1;
    if (rc != 0) {
        trace_drop(NULL, t);
        return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
    }
    *r = t;
    return 0;
}

static int cmp_annot(const void *a, const void *b)
{
    const tt_bd_annot *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns > y->gpu_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* a trace's rows into the result, in its turn (rank, then id) */
static int trace_take(void *ctx, void *r, int64_t id, const char *path)
{
    struct ba_run *run = ctx;
    struct ba_trace *t = r;
    tt_bd_result *res = run->res;
    size_t i;
    (void)path;
    res->traces++;
    TT_QSORT(t->rows, t->n, sizeof(*t->rows), cmp_annot);
    if (t->n && TT_ALLOC_GROW(res->annots, res->nannots + t->n, run->alloc) < 0) {
        trace_drop(NULL, t);
        return tt__oom();
    }
    for (i = 0; i < t->n; i++) {
        t->rows[i].trace_id = id;
        t->rows[i].rank = t->rank;
        res->annots[res->nannots++] = t->rows[i]; /* the names move */
    }
    free(t->rows);
    free(t);
    return 0;
}

void tt__bd_annot_free(tt_bd_result *res)
{
    rows_free(res->annots, res->nannots);
    res->annots = NULL;
    res->nannots = 0;
}

int tt__bd_annot_result(const char *input, tt_db *db, const tt_bd_options *o, tt_bd_result *res)
{
    struct ba_run run;
    struct tt__visit v;
    tt_filter nu = TT_FILTER_INIT; /* --name and --under: the time range is checked here */
    int rc;
    memset(res, 0, sizeof(*res));
    res->by = TT_BD_BY_ANNOTATION;
    res->annot_kernels = o->annot_kernels;
    res->slowest = res->most_compute = (size_t)-1;
    if (o->steps_set || (o->version < 4 && (o->filter.name || o->filter.under)))
        return tt_error_set(TT_EINVALID, "breakdown --by annotation takes --time-range, not "
                                         "--steps (--name and --under: options version 4)");
    nu.name = o->filter.name;
    nu.under = o->filter.under;
    memset(&run, 0, sizeof(run));
    run.o = o;
    run.res = res;
    if ((rc = tt__flt_new(&run.fl, &nu)) < 0)
        return rc;
    v.ctx = &run;
    v.read = trace_read;
    v.take = trace_take;
    v.drop = trace_drop;
    rc = tt__each_trace(o->trace_id, o->rank, input, db, &v);
    tt__flt_free(run.fl);
    if (rc == 0 && !res->nannots)
        rc = tt_error_set_at(TT_ENOTFOUND, db ? (db->source ? db->source : db->path) : input, -1,
                             "no gpu_user_annotation event (the GPU side of record_function "
                             "ranges)%s in %s",
                             !tt_filter_active(&o->filter) ? ""
                             : o->annot_kernels ? ", or no activity, that passes "
                                                  "--time-range/--name/--under"
                                                : " that passes --time-range/--name/--under",
                             db && !db->source ? "the selected traces" : "this trace");
    if (rc < 0)
        tt__bd_annot_free(res);
    return rc;
}

/* ---- printing ---- */

enum { A_TRACE, A_RANK_TEXT, A_RANK, A_NAME, A_COUNT, A_SUM, A_MEAN, A_MIN, A_MAX, A_STD,
       A_NCOLS };

static const tt_table_col annot_cols[A_NCOLS] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Annotation", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Count", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "GPU (ms)", "gpu_ns", TT_COL_NS, 0, 0, 0, 0, 3, 1e6, 0 },
    { "Mean (us)", "mean_ns", TT_COL_NS, 0, 0, 0, 3, 3, 1e3, 0 },
    { "Min (us)", "min_ns", TT_COL_NS, 0, 0, 0, 0, 3, 1e3, 0 },
    { "Max (us)", "max_ns", TT_COL_NS, 0, 0, 0, 0, 3, 1e3, 0 },
    { "Std (us)", "std_ns", TT_COL_NS, 0, 0, 0, 3, 3, 1e3, 0 },
};

static const size_t annot_text[] = { A_RANK_TEXT, A_COUNT, A_SUM, A_MEAN, A_MIN, A_MAX, A_STD,
                                     A_NAME };
static const size_t annot_data[] = { A_TRACE, A_RANK, A_NAME, A_COUNT, A_SUM, A_MIN, A_MAX,
                                     A_MEAN, A_STD };
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static tt_table *annot_table(const tt_bd_result *res, int64_t row_limit)
{
    tt_table *t = tt_table_new(annot_cols, A_NCOLS);
    size_t i, n = row_limit >= 0 && (uint64_t)row_limit < res->nannots ? (size_t)row_limit
                                                                         : res->nannots;
    char rb[48];
    for (i = 0; t && i < n; i++) {
        const tt_bd_annot *x = &res->annots[i];
        if (tt_table_add_row(t) < 0 ||
            tt_table_set_text(t, A_RANK_TEXT, tt__bd_rank_text(rb, sizeof(rb), x->rank,
                                                                x->trace_id)) < 0 ||
            tt_table_set_text(t, A_NAME, x->name) < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, A_TRACE, x->trace_id);
        if (x->rank >= 0)
            tt_table_set_int(t, A_RANK, x->rank);
        tt_table_set_int(t, A_COUNT, x->count);
        tt_table_set_int(t, A_SUM, x->gpu_ns);
        tt_table_set_float(t, A_MEAN, x->mean_ns);
        tt_table_set_int(t, A_MIN, x->min_ns);
        tt_table_set_int(t, A_MAX, x->max_ns);
        tt_table_set_float(t, A_STD, x->std_ns);
    }
    return t;
}

int tt__bd_annot_print(const tt_bd_result *res, const tt_bd_options *o, FILE *out)
{
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = annot_table(res, o->row_limit);
    int rc = 0, md = o->format == TT_FORMAT_MARKDOWN;
    if (!t)
        return tt__oom();
    wo.format = o->format;
    wo.cols = o->format == TT_FORMAT_TABLE || md ? annot_text : annot_data;
    wo.ncols = o->format == TT_FORMAT_TABLE || md ? NCOLS(annot_text) : NCOLS(annot_data);
    if (o->format == TT_FORMAT_JSON) {
        tt_jw w;
        tt_jw_init_file(&w, out, TT_JW_LINE);
        tt_jw_obj(&w);
        tt_jw_kstr(&w, "by", "annotation");
        tt_jw_kbool(&w, "kernels", res->annot_kernels);
        tt_jw_kuint(&w, "traces", res->traces);
        rc = tt__table_json_array(t, &wo, &w, "annotations", 2);
        tt_jw_end(&w);
        if (tt_jw_finish(&w) == TT_ENOMEM && rc == 0)
            rc = tt__oom();
    } else {
        if (o->format != TT_FORMAT_CSV)
            fprintf(out, "%s%s (%zu trace%s)\n\n", md ? "### " : "",
                    res->annot_kernels ? "GPU time of the kernels, memcpys and memsets under "
                                         "each gpu_user_annotation (the innermost)"
                                       : "GPU time per gpu_user_annotation (their own durations)",
                    res->traces, res->traces == 1 ? "" : "s");
        wo.indent = o->format == TT_FORMAT_TABLE ? " " : NULL;
        rc = tt_table_write(t, &wo, out);
    }
    tt_table_free(t);
    return rc;
}
