/*
 * analyze/kernels/kernels_stream.c - `tracetool kernels FILE` without a database, and
 * the arithmetic every summary ends with (tt__kern_finish), for the SQL path
 * of kernels.c too:
 * the GPU rows of the ingest (tt__ingest_rows: same decoding, no SQLite)
 * summed per group as the SQL of kernels.c groups them (by name, launch
 * configuration, stream, or kind for memory operations; the runtime calls
 * by name; the sizes of the memory operations by kind).
 *
 * Grouping needs no link, so the file is read once to its end even when the
 * rows would need the SQL passes (TT_ROWS_NO_STOP); only `--by op` (the CPU
 * op of each kernel) goes through a temporary database. The exact median
 * and the deviation (summed around the mean, in a second pass) come from
 * each group's distinct values with their counts: memory grows with
 * distinct (group, value) pairs, not with the kernels (a training loop
 * repeats its durations and sizes).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "analyze/kernels/kernels_state.h"
#include "common/i64map.h"
#include "store/ingest_rows.h"
#include "store/db_internal.h"
#include "analyze/steps/steps.h"

#include <inttypes.h>
#include <math.h>

struct group {
    char *name;
    int64_t count, total, min, max, bytes;
    struct i64map d; /* distinct values -> how many times */
};

/* the groups of one summary */
struct gset {
    struct group *g;
    size_t ng, ag;
    size_t *slot;        /* group name hash -> index + 1 */
    size_t nslot;
};

struct kstream {
    const tt_kern_options *o;
    char **strs;         /* string id - 1 -> text */
    size_t nstrs, astrs;
    struct gset set[2];  /* kernels, memory operations */
    tt_buf key;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    while (n--)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

/* one more run of a value in a group's map of distinct values */
static int durs_add(struct i64map *d, int64_t dur)
{
    size_t n = 0;
    tt__i64map_get(d, dur, &n);
    return tt__i64map_put(d, dur, n + 1);
}

/* the group of key (added when new); NULL when out of memory */
static struct group *group_of(struct gset *ks, const char *key, size_t len)
{
    size_t k;
    struct group *g;
    if (2 * (ks->ng + 1) > ks->nslot) {
        size_t ncap = ks->nslot ? 2 * ks->nslot : 256, i;
        size_t *ns = calloc(ncap, sizeof(*ns));
        if (!ns)
            return NULL;
        for (i = 0; i < ks->ng; i++) {
            k = (size_t)hash_bytes(ks->g[i].name, strlen(ks->g[i].name)) & (ncap - 1);
            while (ns[k])
                k = (k + 1) & (ncap - 1);
            ns[k] = i + 1;
        }
        free(ks->slot);
        ks->slot = ns;
        ks->nslot = ncap;
    }
    k = (size_t)hash_bytes(key, len) & (ks->nslot - 1);
    while (ks->slot[k]) {
        g = &ks->g[ks->slot[k] - 1];
        if (strlen(g->name) == len && !memcmp(g->name, key, len))
            return g;
        k = (k + 1) & (ks->nslot - 1);
    }
    if (TT_ALLOC_GROW(ks->g, ks->ng + 1, ks->ag) < 0)
        return NULL;
    g = &ks->g[ks->ng];
    memset(g, 0, sizeof(*g));
    if (!(g->name = strndup(key, len)))
        return NULL;
    ks->slot[k] = ++ks->ng;
    return g;
}

static const char *str_of(const struct kstream *ks, const tt__cell *c)
{
    if (c->type != TT_CELL_INT || c->i < 1 || (size_t)c->i > ks->nstrs)
        return "?";
    return ks->strs[c->i - 1];
}

static void add_int_or_q(tt_buf *b, const tt__cell *c)
{
    if (c->type == TT_CELL_INT)
        tt_buf_addf(b, "%" PRId64, c->i);
    else
        tt_buf_addch(b, '?');
}

/* the group key, as kernels.c's SQL builds it */
static void group_key(struct kstream *ks, int memory, const tt__cell *row, const char *text)
{
    tt_buf *b = &ks->key;
    tt_buf_reset(b);
    if (memory) {
        const tt__cell *k = &row[TT_C_GPU_KIND], *ck = &row[TT_C_GPU_COPY_KIND];
        tt_buf_add(b, text + k->i, k->len);
        tt_buf_addch(b, ' ');
        if (ck->type == TT_CELL_TEXT)
            tt_buf_add(b, text + ck->i, ck->len);
        else
            tt_buf_addch(b, '?');
        return;
    }
    if (ks->o->by == TT_KERN_BY_STREAM) {
        tt_buf_addstr(b, "device ");
        add_int_or_q(b, &row[TT_C_GPU_DEVICE]);
        tt_buf_addstr(b, " stream ");
        add_int_or_q(b, &row[TT_C_GPU_STREAM]);
        return;
    }
    tt_buf_addstr(b, str_of(ks, &row[TT_C_GPU_NAME]));
    if (ks->o->by == TT_KERN_BY_LAUNCH) {
        static const int dims[6] = { TT_C_GPU_GRID_X, TT_C_GPU_GRID_Y, TT_C_GPU_GRID_Z,
                                     TT_C_GPU_BLOCK_X, TT_C_GPU_BLOCK_Y, TT_C_GPU_BLOCK_Z };
        int i;
        for (i = 0; i < 6; i++) {
            tt_buf_addstr(b, i == 0 ? " grid(" : i == 3 ? ") block(" : ",");
            add_int_or_q(b, &row[dims[i]]);
        }
        tt_buf_addch(b, ')');
    }
}

/* 0: a kernel, 1: a memcpy or memset, -1: neither */
static int summary_of(const tt__cell *k, const char *text)
{
    const char *s = text + k->i;
    if (k->type != TT_CELL_TEXT || k->len != 6)
        return -1;
    if (!memcmp(s, "kernel", 6))
        return 0;
    return !memcmp(s, "memcpy", 6) || !memcmp(s, "memset", 6) ? 1 : -1;
}

static int ks_string(struct kstream *ks, const tt__cell *row, const char *text)
{
    char *copy;
    if (row[TT_C_STR_ID].i != (int64_t)ks->nstrs + 1)
        return tt_error_set(TT_ERROR, "string ids out of order (%" PRId64 ")",
                            row[TT_C_STR_ID].i);
    if (TT_ALLOC_GROW(ks->strs, ks->nstrs + 1, ks->astrs) < 0 ||
        !(copy = strndup(text + row[TT_C_STR_S].i, row[TT_C_STR_S].len)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    ks->strs[ks->nstrs++] = copy;
    return 0;
}

/* one value (a duration, or a size) of a group */
static int group_add(struct group *g, int64_t v, const tt__cell *bytes)
{
    if (!g->count || v < g->min)
        g->min = v;
    if (!g->count || v > g->max)
        g->max = v;
    g->count++;
    g->total = tt_sat_add(g->total, v);
    if (bytes && bytes->type == TT_CELL_INT)
        g->bytes = tt_sat_add(g->bytes, bytes->i);
    if (durs_add(&g->d, v) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    return 0;
}

/* a runtime call (TT_KERN_BY_RUNTIME): its duration in the group of its name */
static int ks_runtime(struct kstream *ks, const tt__cell *row)
{
    const char *name = str_of(ks, &row[TT_C_RT_NAME]);
    struct group *g;
    if (row[TT_C_RT_DUR].type != TT_CELL_INT)
        return 0;
    if (!(g = group_of(&ks->set[0], name, strlen(name))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    return group_add(g, row[TT_C_RT_DUR].i, NULL);
}

/* a GPU activity: its duration (BY_MEMSIZE: its size) in its group */
static int ks_gpu(struct kstream *ks, const tt__cell *row, const char *text)
{
    int size = ks->o->by == TT_KERN_BY_MEMSIZE, m;
    const tt__cell *v = &row[size ? TT_C_GPU_BYTES : TT_C_GPU_DUR];
    struct group *g;
    if (v->type != TT_CELL_INT || (m = summary_of(&row[TT_C_GPU_KIND], text)) < 0 ||
        (size && m == 0))
        return 0;
    group_key(ks, m, row, text);
    if (ks->key.oom || !(g = group_of(&ks->set[m], ks->key.buf, ks->key.len)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    return group_add(g, v->i, size ? NULL : &row[TT_C_GPU_BYTES]);
}

static int ks_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct kstream *ks = ctx;
    int runtime = ks->o->by == TT_KERN_BY_RUNTIME, r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = ks_string(ks, row, text);
        else if (table == TT_ROWS_RUNTIME && runtime)
            rc = ks_runtime(ks, row);
        else if (table == TT_ROWS_GPU && !runtime)
            rc = ks_gpu(ks, row, text);
    }
    return rc;
}

/* ---- the arithmetic of a summary (kernels_state.h), for both paths ---- */

static int cmp_total(const void *a, const void *b)
{
    const tt_kern_row *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_bytes(const void *a, const void *b)
{
    const tt_kern_row *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* a group's statistics into a row: of durations, or (size) of byte counts */
static void fill_row(tt_kern_row *x, const tt__kgroup *g, int size)
{
    double avg = (double)g->total / (double)g->n;
    double sd = g->n > 1 && g->m2 > 0 ? sqrt(g->m2 / (double)(g->n - 1)) : 0;
    x->name = g->name;
    x->instances = g->n;
    if (size) {
        x->bytes = g->total;
        x->min_bytes = g->min;
        x->max_bytes = g->max;
        x->avg_bytes = avg;
        x->med_bytes = g->med;
        x->stddev_bytes = sd;
        return;
    }
    x->total_ns = g->total;
    x->min_ns = g->min;
    x->max_ns = g->max;
    x->bytes = g->bytes;
    x->avg_ns = avg;
    x->med_ns = g->med;
    x->stddev_ns = sd;
    x->gb_per_s = x->total_ns ? (double)x->bytes / (double)x->total_ns : 0; /* bytes/ns */
}

int tt__kern_finish(tt_kern_summary *s, const tt_kern_options *o, tt__kgroup *g, size_t ng)
{
    int size = s->by == TT_KERN_BY_MEMSIZE;
    size_t k;
    if (!(s->rows = calloc(ng ? ng : 1, sizeof(*s->rows)))) {
        for (k = 0; k < ng; k++)
            free(g[k].name);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    for (k = 0; k < ng; k++) {
        fill_row(&s->rows[k], &g[k], size);
        g[k].name = NULL;
        if (size)
            s->total_bytes = tt_sat_add(s->total_bytes, g[k].total);
        else
            s->total_ns = tt_sat_add(s->total_ns, g[k].total);
    }
    s->nrows = ng;
    for (k = 0; !size && k < ng; k++)
        s->rows[k].time_pct =
            s->total_ns ? 100.0 * (double)s->rows[k].total_ns / (double)s->total_ns : 0;
    s->ngroups = (int64_t)s->nrows;
    if (s->nrows)
        qsort(s->rows, s->nrows, sizeof(*s->rows), size ? cmp_bytes : cmp_total);
    if (o->row_limit >= 0 && (int64_t)s->nrows > o->row_limit) {
        for (k = (size_t)o->row_limit; k < s->nrows; k++)
            free(s->rows[k].name);
        s->nrows = (size_t)o->row_limit;
    }
    return 0;
}

int tt__kern_wants(const tt_kern_options *o, int m)
{
    switch (o->by) {
    case TT_KERN_BY_RUNTIME: return m == TT__KSUM_KERNELS;
    case TT_KERN_BY_MEMSIZE: return m == TT__KSUM_MEMORY;
    case TT_KERN_BY_ACTIVITY: return 0;
    default: return o->what != (m ? TT_KERN_KERNELS : TT_KERN_MEMORY);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* median and m2 of a group, from its distinct values with their counts */
static int group_stats(const struct group *gr, tt__kgroup *out)
{
    const struct i64map *d = &gr->d;
    int64_t lo = (gr->count - 1) / 2, hi = gr->count / 2, seen = 0, vlo = 0, vhi = 0;
    int64_t *v = malloc((d->n ? d->n : 1) * 2 * sizeof(*v));
    double mean = (double)gr->total / (double)gr->count, m2 = 0;
    size_t i, n = 0;
    if (!v)
        return tt_error_set(TT_ENOMEM, "out of memory");
    for (i = 0; i < d->cap; i++)
        if (d->used[i]) {
            v[2 * n] = d->k[i];
            v[2 * n + 1] = (int64_t)d->v[i];
            n++;
        }
    qsort(v, n, 2 * sizeof(*v), cmp_i64);
    for (i = 0; i < n; i++) {
        int64_t next = seen + v[2 * i + 1];
        double dev = (double)v[2 * i] - mean;
        if (lo >= seen && lo < next)
            vlo = v[2 * i];
        if (hi >= seen && hi < next)
            vhi = v[2 * i];
        m2 += (double)v[2 * i + 1] * dev * dev;
        seen = next;
    }
    free(v);
    out->med = ((double)vlo + (double)vhi) / 2.0;
    out->m2 = m2;
    return 0;
}

static void ks_release(struct kstream *ks)
{
    size_t i;
    int m;
    for (i = 0; i < ks->nstrs; i++)
        free(ks->strs[i]);
    free(ks->strs);
    for (m = 0; m < 2; m++) {
        for (i = 0; i < ks->set[m].ng; i++) {
            free(ks->set[m].g[i].name);
            tt__i64map_free(&ks->set[m].g[i].d);
        }
        free(ks->set[m].g);
        free(ks->set[m].slot);
    }
    tt_buf_release(&ks->key);
}

/* one set of groups -> a summary in kernels.c's shape */
static int to_summary(struct gset *gs, const tt_kern_options *o, tt_kern_summary *s)
{
    tt__kgroup *kg = calloc(gs->ng ? gs->ng : 1, sizeof(*kg));
    size_t i;
    int rc = 0;
    if (!kg)
        return tt_error_set(TT_ENOMEM, "out of memory");
    for (i = 0; rc == 0 && i < gs->ng; i++) {
        struct group *g = &gs->g[i];
        kg[i].n = g->count;
        kg[i].total = g->total;
        kg[i].min = g->min;
        kg[i].max = g->max;
        kg[i].bytes = g->bytes;
        rc = group_stats(g, &kg[i]);
    }
    for (i = 0; i < gs->ng; i++) { /* the names move to the rows */
        kg[i].name = gs->g[i].name;
        gs->g[i].name = NULL;
    }
    if (rc == 0)
        rc = tt__kern_finish(s, o, kg, gs->ng);
    else
        for (i = 0; i < gs->ng; i++)
            free(kg[i].name);
    free(kg);
    return rc;
}

int tt__kernels_stream(const char *path, const tt_kern_options *o, tt_kern_summary out[2])
{
    struct kstream ks;
    tt__rowsink sink;
    tt__rows_result res;
    int rc, m;
    memset(&ks, 0, sizeof(ks));
    memset(out, 0, 2 * sizeof(*out));
    tt_buf_init(&ks.key);
    ks.o = o;
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &ks;
    sink.rows = ks_rows;
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS,
                         TT_ROWS_NO_STOP | 1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW |
                             1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | 1u << TT_ROWS_ET |
                             1u << TT_ROWS_MEMTL,
                         &res);
    if (rc == 0 && res.format != TT_FMT_CHROME && res.format != TT_FMT_CHROME_ARRAY)
        rc = tt_error_set_at(TT_EUNSUPPORTED, path, -1,
                             "no Chrome/Kineto trace in this file (read as %s)",
                             tt_format_name(res.format));
    for (m = 0; rc == 0 && m < 2; m++) {
        out[m].trace_id = 1;
        out[m].memory = m;
        out[m].by = o->by;
        if (!(out[m].path = strdup(path)))
            rc = tt_error_set(TT_ENOMEM, "out of memory");
        else
            rc = to_summary(&ks.set[m], o, &out[m]);
    }
    free(res.metadata);
    ks_release(&ks);
    return rc;
}

/* ---- shared by the summaries (kernels.c) and the activities (kernels_trace.c) ---- */

int tt__kern_steps_on(const tt_kern_options *o)
{
    return o->version >= 2 && o->steps_set;
}

int tt__kern_step_windows(tt_db *db, const tt_kern_options *o, int64_t trace)
{
    struct tt__step *st = NULL;
    sqlite3_stmt *ins;
    size_t n = 0, i;
    int rc;
    if (!tt__kern_steps_on(o))
        return 0;
    /* emptied, not dropped: a table cannot be dropped while the traces'
     * query is still reading */
    if (tt_db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS tt_kwin(a INTEGER PRIMARY KEY, b INTEGER);"
                       " DELETE FROM temp.tt_kwin") < 0 ||
        tt_db_prepare(db, &ins, "INSERT OR IGNORE INTO temp.tt_kwin(a, b) VALUES(?1, ?2)") < 0)
        return TT_EDB;
    if ((rc = tt__step_spans(db, trace, &st, &n)) < 0) {
        sqlite3_finalize(ins);
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        if (st[i].num < o->step_from || st[i].num > o->step_to)
            continue;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, st[i].ts);
        sqlite3_bind_int64(ins, 2, st[i].end);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = tt_db_error(db, "cannot note the chosen steps");
    }
    sqlite3_finalize(ins);
    free(st);
    return rc;
}

int tt__kern_nothing(const char *src, int file, const tt_kern_options *o)
{
    const char *what = o->by == TT_KERN_BY_RUNTIME
                           ? "CUDA/HIP runtime or driver call (cuda_runtime, cuda_driver)"
                       : o->by == TT_KERN_BY_MEMSIZE ? "memcpy or memset with a size (args bytes)"
                       : o->what == TT_KERN_KERNELS  ? "GPU kernel"
                       : o->what == TT_KERN_MEMORY   ? "GPU memcpy or memset"
                                                     : "GPU activity (kernel, memcpy, memset)";
    return tt_error_set_at(TT_ENOTFOUND, src, -1, "no %s in %s", what,
                           file ? "this trace" : "the selected traces");
}
