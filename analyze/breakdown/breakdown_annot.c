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

/* the running statistics of one name (Welford's) */
struct ba_stat {
    int64_t name;            /* string id; -1: no annotation */
    int64_t n, sum, min, max;
    double mean, m2;
};

struct ba_link {
    int64_t rt, rt_ts;
};

/* one trace being read */
struct ba {
    const tt_bd_options *o;
    int kernels, links;      /* --kernels; the links read (a time range) */
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
    b->ntext += len + 1;
    return 0;
}

static int kind_is(const tt__cell *k, const char *text, const char *s)
{
    size_t n = strlen(s);
    return k->type == TT_CELL_TEXT && k->len == n && !memcmp(text + k->i, s, n);
}

static int ba_gpu(struct ba *b, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    int64_t launch = TT_ROWS_NO_TS;
    int annot = kind_is(k, text, "annotation");
    struct ba_ev e;
    if (b->links) {
        if (b->hln == b->nln || b->ln[b->hln].rt != int_or(&row[TT_C_GPU_RUNTIME_ID], 0))
            return tt_error_set(TT_ERROR, "breakdown: a GPU activity came without its links");
        launch = b->ln[b->hln++].rt_ts;
    }
    if (row[TT_C_GPU_TS].type != TT_CELL_INT || row[TT_C_GPU_DUR].type != TT_CELL_INT ||
        !(annot || (b->kernels && (kind_is(k, text, "kernel") || kind_is(k, text, "memcpy") ||
                                   kind_is(k, text, "memset")))))
        return 0;
    memset(&e, 0, sizeof(e));
    e.ts = row[TT_C_GPU_TS].i;
    e.dur = row[TT_C_GPU_DUR].i;
    if (!tt__filter_in_time(&b->o->filter, annot || launch == TT_ROWS_NO_TS ? e.ts : launch))
        return 0;
    e.name = int_or(&row[TT_C_GPU_NAME], 0);
    if (annot)
        b->nannot++;
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
    (void)op;
    (void)name;
    if (TT_ALLOC_GROW(b->ln, b->nln + 1, b->aln) < 0)
        return tt__oom();
    b->ln[b->nln].rt = rt;
    b->ln[b->nln++].rt_ts = rt ? rt_ts : TT_ROWS_NO_TS;
    return 0;
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
    memset(b, 0, sizeof(*b));
}

static void ba_init(struct ba *b, const tt_bd_options *o)
{
    memset(b, 0, sizeof(*b));
    b->o = o;
    b->kernels = o->annot_kernels;
    b->links = b->kernels && (o->filter.from_ns != TT_FILTER_OPEN_FROM ||
                              o->filter.to_ns != TT_FILTER_OPEN_TO);
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
    int rc;
    if (db)
        return tt__db_rows(db, trace, sink, skip | TT_ROWS_NO_ARGS, res);
    if (!b->links)
        return tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip | TT_ROWS_NO_STOP, res);
    if (tt__spool_needed(path)) {
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = ba_read(b, sink, rd, NULL, trace, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip, res)) != 0 || !res->needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "breakdown", "%s: read twice: %s", path,
            res->why_db ? res->why_db : "links");
    free(res->metadata);
    res->metadata = NULL;
    ba_release(b);
    ba_init(b, o);
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
    ba_init(&b, run->o);
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &b;
    sink.rows = ba_rows;
    sink.cols = ba_cols;
    sink.gpu_links = b.links ? ba_links : NULL;
    rc = ba_read(&b, &sink, path, db, id, res);
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0 && b.kernels)
        rc = ba_sweep(&b);
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
    int rc;
    memset(res, 0, sizeof(*res));
    res->by = TT_BD_BY_ANNOTATION;
    res->annot_kernels = o->annot_kernels;
    res->slowest = res->most_compute = (size_t)-1;
    if (o->steps_set || o->filter.name || o->filter.under)
        return tt_error_set(TT_EINVALID, "breakdown --by annotation takes --time-range, not "
                                         "--steps, --name or --under");
    run.o = o;
    run.res = res;
    run.alloc = 0;
    v.ctx = &run;
    v.read = trace_read;
    v.take = trace_take;
    v.drop = trace_drop;
    rc = tt__each_trace(o->trace_id, o->rank, input, db, &v);
    if (rc == 0 && !res->nannots)
        rc = tt_error_set_at(TT_ENOTFOUND, db ? (db->source ? db->source : db->path) : input, -1,
                             "no gpu_user_annotation event (the GPU side of record_function "
                             "ranges)%s in %s",
                             tt_filter_active(&o->filter) ? " in the time range" : "",
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
