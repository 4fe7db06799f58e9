/*
 * analyze/kernels_stream.c - `tracetool kernels FILE` without a database, and
 * the arithmetic every summary ends with (tt__kern_finish), for the SQL path
 * of kernels.c too:
 * the GPU rows of the ingest (tt__ingest_rows: same decoding, no SQLite)
 * summed per group as the SQL of kernels.c groups them (by name, launch
 * configuration, stream, or kind for memory operations).
 *
 * Grouping needs no link, so the file is read once to its end even when the
 * rows would need the SQL passes (TT_ROWS_NO_STOP); only `--by op` (the CPU
 * op of each kernel) goes through a temporary database. The exact median
 * comes from each group's distinct durations with their counts: memory
 * grows with distinct (group, duration) pairs, not with the kernels (a
 * training loop repeats its durations).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "analyze/kernels_state.h"
#include "common/i64map.h"
#include "store/ingest_rows.h"

#include <inttypes.h>
#include <math.h>

struct group {
    char *name;
    int64_t count, total, min, max, bytes;
    long double sumsq;
    struct i64map d; /* distinct durations -> how many times */
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

/* one more run of dur in a group's map of distinct durations */
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

static int ks_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct kstream *ks = ctx;
    int r, rc;
    for (r = 0; r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        struct group *g;
        int64_t dur;
        int m;
        if (table == TT_ROWS_STR) {
            if ((rc = ks_string(ks, row, text)) < 0)
                return rc;
            continue;
        }
        if (table != TT_ROWS_GPU || row[TT_C_GPU_DUR].type != TT_CELL_INT ||
            (m = summary_of(&row[TT_C_GPU_KIND], text)) < 0)
            continue;
        group_key(ks, m, row, text);
        if (ks->key.oom || !(g = group_of(&ks->set[m], ks->key.buf, ks->key.len)))
            return tt_error_set(TT_ENOMEM, "out of memory");
        dur = row[TT_C_GPU_DUR].i;
        if (!g->count || dur < g->min)
            g->min = dur;
        if (!g->count || dur > g->max)
            g->max = dur;
        g->count++;
        g->total = tt_sat_add(g->total, dur);
        g->sumsq += (long double)dur * (long double)dur;
        if (row[TT_C_GPU_BYTES].type == TT_CELL_INT)
            g->bytes = tt_sat_add(g->bytes, row[TT_C_GPU_BYTES].i);
        if (durs_add(&g->d, dur) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
    }
    return 0;
}

/* ---- the arithmetic of a summary (kernels_state.h), for both paths ---- */

static int cmp_total(const void *a, const void *b)
{
    const tt_kern_row *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

void tt__kern_finish(tt_kern_summary *s, const tt_kern_options *o, const double *sumsq)
{
    size_t k;
    for (k = 0; k < s->nrows; k++) {
        tt_kern_row *x = &s->rows[k];
        double avg = (double)x->total_ns / (double)x->instances;
        double var = x->instances > 1 ? (sumsq[k] - (double)x->instances * avg * avg) /
                                            (double)(x->instances - 1)
                                      : 0;
        x->avg_ns = avg;
        x->stddev_ns = var > 0 ? sqrt(var) : 0;
        x->time_pct = s->total_ns ? 100.0 * (double)x->total_ns / (double)s->total_ns : 0;
        x->gb_per_s = x->total_ns ? (double)x->bytes / (double)x->total_ns : 0; /* bytes/ns */
    }
    s->ngroups = (int64_t)s->nrows;
    if (s->nrows)
        qsort(s->rows, s->nrows, sizeof(*s->rows), cmp_total);
    if (o->row_limit >= 0 && (int64_t)s->nrows > o->row_limit) {
        for (k = (size_t)o->row_limit; k < s->nrows; k++)
            free(s->rows[k].name);
        s->nrows = (size_t)o->row_limit;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* the mean of the two middle durations, from the distinct ones */
static double median(const struct i64map *d, int64_t count)
{
    int64_t lo = (count - 1) / 2, hi = count / 2, seen = 0, vlo = 0, vhi = 0;
    int64_t *v = malloc((d->n ? d->n : 1) * 2 * sizeof(*v));
    size_t i, n = 0;
    if (!v)
        return NAN;
    for (i = 0; i < d->cap; i++)
        if (d->used[i]) {
            v[2 * n] = d->k[i];
            v[2 * n + 1] = (int64_t)d->v[i];
            n++;
        }
    qsort(v, n, 2 * sizeof(*v), cmp_i64);
    for (i = 0; i < n; i++) {
        int64_t next = seen + v[2 * i + 1];
        if (lo >= seen && lo < next)
            vlo = v[2 * i];
        if (hi >= seen && hi < next)
            vhi = v[2 * i];
        seen = next;
    }
    free(v);
    return ((double)vlo + (double)vhi) / 2.0;
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
    double *sumsq;
    size_t i;
    if (!(s->rows = calloc(gs->ng ? gs->ng : 1, sizeof(*s->rows))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (!(sumsq = calloc(gs->ng ? gs->ng : 1, sizeof(*sumsq))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    for (i = 0; i < gs->ng; i++) {
        struct group *g = &gs->g[i];
        tt_kern_row *x = &s->rows[i];
        x->name = g->name;
        g->name = NULL;
        s->nrows = i + 1;
        x->instances = g->count;
        x->total_ns = g->total;
        x->min_ns = g->min;
        x->max_ns = g->max;
        x->bytes = g->bytes;
        x->med_ns = median(&g->d, g->count);
        sumsq[i] = (double)g->sumsq;
        s->total_ns = tt_sat_add(s->total_ns, g->total);
    }
    tt__kern_finish(s, o, sumsq);
    free(sumsq);
    return 0;
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
