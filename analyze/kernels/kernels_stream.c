/*
 * analyze/kernels/kernels_stream.c - the summaries of `tracetool kernels` as one
 * consumer of the record stream (store/ingest_rows.h): the GPU rows (or the
 * runtime calls) of one trace, from a file (tt__ingest_rows) or a database
 * (tt__db_rows) alike, summed per group (by name, launch configuration,
 * stream, or the CPU op that launched them; memory operations by kind; the
 * runtime calls by name; the sizes of the memory operations by kind), and
 * the arithmetic every summary ends with (tt__kern_finish).
 *
 * A value goes into its group as its row comes. Without --steps or --by op
 * grouping needs no link, so a file is read to its end even when its rows
 * would need the SQL passes (TT_ROWS_NO_STOP). With them the source hands
 * over, before each GPU row, what its links point at (tt__rowsink.gpu_links:
 * the name of the CPU op that launched it, the start of its runtime call;
 * the in-stream linker of a file knows them, a database joins them): they
 * wait in a queue of one batch, so no map of the slices or the runtime
 * calls is kept. Whether a launch falls in a chosen step needs every
 * ProfilerStep#N slice: a database hands them over before any value (its
 * tables come one after another), but in a file they may come after the
 * kernels, so there the values wait (struct kept) in a buffer of KEPT_MAX
 * that spills to an unlinked temporary file, and are summed at the end.
 * The exact median and the deviation (summed around the mean, in a second
 * pass) come from each group's distinct values with their counts: memory
 * grows with distinct (group, value) pairs, not with the kernels (a
 * training loop repeats its durations and sizes).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "analyze/kernels/kernels_state.h"
#include "analyze/filter/filtering.h"
#include "common/i64map.h"
#include "common/log.h"
#include "store/ingest_rows.h"
#include "formats/spool.h"
#include "store/db_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

struct group {
    char *name;
    int64_t count, total, min, max, bytes;
    struct i64map d; /* distinct values -> how many times */
    int64_t launches, delay_sum, delay_min, delay_max; /* BY_OP: the launch delays */
};

/* the groups of one summary */
struct gset {
    struct group *g;
    size_t ng, ag;
    size_t *slot;        /* group name hash -> index + 1 */
    size_t nslot;
};

/* the links of a GPU row not yet handed over (tt__rowsink.gpu_links) */
struct link {
    int64_t op, name, rt, rt_ts;
};

/* a value waiting for the ProfilerStep#N slices of a file (--steps) */
struct kept {
    int64_t v, bytes, lt; /* bytes: TT_KERN_NULL when none; lt: its launch */
    int64_t delay;        /* its launch delay, TT_KERN_NULL when none (BY_OP) */
    size_t g;             /* its group in set[m] */
    int m;
};

#define KEPT_MAX 4096 /* values kept in memory; more go to a temporary file */

struct kstream {
    const tt_kern_options *o;
    int links;           /* the GPU rows' links are handed over (--steps, --by op) */
    int steps;           /* --steps */
    int spans_final;     /* every ProfilerStep#N slice came (a database) */
    int windows;         /* sp holds the chosen steps' windows */
    char **strs;         /* strings in arrival order */
    size_t nstrs, astrs;
    struct i64map sid;   /* string id -> index in strs */
    struct gset set[2];  /* kernels, memory operations */
    tt_buf key;
    struct link *ln;     /* links of rows to come: ln[hln..nln) */
    size_t hln, nln, aln;
    struct kept *kp;     /* values waiting (a file, --steps) */
    size_t nkp;
    FILE *spill;         /* more of them, KEPT_MAX at a time */
    size_t nspill;       /* values in spill */
    size_t peak;         /* most links and values held in memory at once */
    struct tt__kspan *sp; /* ProfilerStep#N slices (--steps) */
    size_t nsp, asp;
    tt__flt *fl;         /* the filters (NULL: none) */
};

static _Thread_local size_t last_peak;

size_t tt__kern_last_peak(void)
{
    return last_peak;
}

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

/* the text of string id, NULL when unknown */
static const char *str_id(const struct kstream *ks, int64_t id)
{
    size_t k;
    return tt__i64map_get(&ks->sid, id, &k) ? ks->strs[k] : NULL;
}

static const char *str_of(const struct kstream *ks, const tt__cell *c)
{
    const char *s = c->type == TT_CELL_INT ? str_id(ks, c->i) : NULL;
    return s ? s : "?";
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
    if (TT_ALLOC_GROW(ks->strs, ks->nstrs + 1, ks->astrs) < 0 ||
        !(copy = strndup(text + row[TT_C_STR_S].i, row[TT_C_STR_S].len)))
        return tt__oom();
    ks->strs[ks->nstrs++] = copy;
    if (tt__i64map_put(&ks->sid, row[TT_C_STR_ID].i, ks->nstrs - 1) < 0)
        return tt__oom();
    return 0;
}

/* one value (a duration, or a size) of a group; bytes, delay TT_KERN_NULL: none */
static int group_add(struct group *g, int64_t v, int64_t bytes, int64_t delay)
{
    if (delay != TT_KERN_NULL) {
        if (!g->launches || delay < g->delay_min)
            g->delay_min = delay;
        if (!g->launches || delay > g->delay_max)
            g->delay_max = delay;
        g->launches++;
        g->delay_sum = tt_sat_add(g->delay_sum, delay);
    }
    if (!g->count || v < g->min)
        g->min = v;
    if (!g->count || v > g->max)
        g->max = v;
    g->count++;
    g->total = tt_sat_add(g->total, v);
    if (bytes != TT_KERN_NULL)
        g->bytes = tt_sat_add(g->bytes, bytes);
    if (durs_add(&g->d, v) < 0)
        return tt__oom();
    return 0;
}

static int64_t cell_or_null(const tt__cell *c)
{
    return c->type == TT_CELL_INT ? c->i : TT_KERN_NULL;
}

static void note_peak(struct kstream *ks)
{
    size_t n = ks->nkp + (ks->nln - ks->hln);
    if (n > ks->peak)
        ks->peak = n;
}

/* the chosen steps' windows, once every ProfilerStep#N slice is in */
static void ks_windows(struct kstream *ks)
{
    if (!ks->windows) {
        ks->nsp = tt__kern_step_windows(ks->sp, ks->nsp, ks->o);
        ks->windows = 1;
    }
}

/* the values kept in memory out to the temporary file */
static int ks_spill(struct kstream *ks)
{
    if (!ks->spill && !(ks->spill = tt__tmpfile()))
        return TT_EIO; /* said which directory, and why */
    if (fwrite(ks->kp, sizeof(*ks->kp), ks->nkp, ks->spill) != ks->nkp)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    ks->nspill += ks->nkp;
    ks->nkp = 0;
    return 0;
}

/* value v of group g of summary m (bytes, delay: TT_KERN_NULL when none),
 * launched at lt: into its group now, or (--steps, a file) kept for the end */
static int ks_value(struct kstream *ks, int m, struct group *g, int64_t v, int64_t bytes,
                    int64_t lt, int64_t delay)
{
    struct kept *k;
    int rc;
    if (!ks->steps)
        return group_add(g, v, bytes, delay);
    if (ks->spans_final) {
        ks_windows(ks);
        return tt__kern_in_steps(ks->sp, ks->nsp, lt) ? group_add(g, v, bytes, delay) : 0;
    }
    if (!ks->kp && !(ks->kp = malloc(KEPT_MAX * sizeof(*ks->kp))))
        return tt__oom();
    if (ks->nkp == KEPT_MAX && (rc = ks_spill(ks)) < 0)
        return rc;
    k = &ks->kp[ks->nkp++];
    k->v = v;
    k->bytes = bytes;
    k->lt = lt;
    k->delay = delay;
    k->g = (size_t)(g - ks->set[m].g);
    k->m = m;
    note_peak(ks);
    return 0;
}

/* the links of the next GPU row (tt__rowsink.gpu_links) */
static int ks_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct kstream *ks = ctx;
    struct link *l;
    if (TT_ALLOC_GROW(ks->ln, ks->nln + 1, ks->aln) < 0)
        return tt__oom();
    l = &ks->ln[ks->nln++];
    l->op = op;
    l->name = name;
    l->rt = rt;
    l->rt_ts = rt_ts;
    note_peak(ks);
    return 0;
}

/* BY_RUNTIME: a runtime call's duration in the group of its name */
static int ks_runtime(struct kstream *ks, const tt__cell *row)
{
    const char *name;
    struct group *g;
    if (ks->o->by != TT_KERN_BY_RUNTIME || row[TT_C_RT_DUR].type != TT_CELL_INT)
        return 0;
    name = str_of(ks, &row[TT_C_RT_NAME]);
    if (!(g = group_of(&ks->set[0], name, strlen(name))))
        return tt__oom();
    return ks_value(ks, 0, g, row[TT_C_RT_DUR].i, TT_KERN_NULL, cell_or_null(&row[TT_C_RT_TS]),
                    TT_KERN_NULL);
}

static int64_t cell_or_0(const tt__cell *c)
{
    return c->type == TT_CELL_INT ? c->i : 0;
}

/* the links handed over for this GPU row (NULL: none asked for) */
static int next_links(struct kstream *ks, const tt__cell *row, const struct link **out)
{
    const struct link *l;
    *out = NULL;
    if (!ks->links)
        return 0;
    if (ks->hln == ks->nln || (l = &ks->ln[ks->hln])->op != cell_or_0(&row[TT_C_GPU_OP_ID]) ||
        l->rt != cell_or_0(&row[TT_C_GPU_RUNTIME_ID]))
        return tt_error_set(TT_ERROR, "kernels: a GPU activity came without its links");
    ks->hln++;
    *out = l;
    return 0;
}

/* a GPU activity: its duration (BY_MEMSIZE: its size) in its group (BY_OP:
 * the name of its op, "[no CPU op]" without one), launched at its runtime
 * call's start (else its own) */
static int ks_gpu(struct kstream *ks, const tt__cell *row, const char *text)
{
    int size = ks->o->by == TT_KERN_BY_MEMSIZE, m, rc;
    const tt__cell *v = &row[size ? TT_C_GPU_BYTES : TT_C_GPU_DUR];
    const struct link *l;
    struct group *g;
    int64_t delay = TT_KERN_NULL;
    if ((rc = next_links(ks, row, &l)) < 0)
        return rc;
    if (ks->o->by == TT_KERN_BY_RUNTIME || v->type != TT_CELL_INT ||
        (m = summary_of(&row[TT_C_GPU_KIND], text)) < 0 || (size && m == 0))
        return 0;
    if (m == 0 && ks->o->by == TT_KERN_BY_OP) {
        const char *name = l && l->name ? str_id(ks, l->name) : NULL;
        if (!name)
            name = "[no CPU op]";
        g = group_of(&ks->set[0], name, strlen(name));
        if (l && l->rt && l->rt_ts != TT_ROWS_NO_TS && row[TT_C_GPU_TS].type == TT_CELL_INT)
            delay = row[TT_C_GPU_TS].i - l->rt_ts;
    } else {
        group_key(ks, m, row, text);
        g = ks->key.oom ? NULL : group_of(&ks->set[m], ks->key.buf, ks->key.len);
    }
    if (!g)
        return tt__oom();
    return ks_value(ks, m, g, v->i, size ? TT_KERN_NULL : cell_or_null(&row[TT_C_GPU_BYTES]),
                    l && l->rt && l->rt_ts != TT_ROWS_NO_TS ? l->rt_ts
                                                             : cell_or_null(&row[TT_C_GPU_TS]),
                    delay);
}

int tt__kern_is_step(const char *s)
{
    return s && !strncmp(s, "ProfilerStep#", 13) && s[13] >= '0' && s[13] <= '9';
}

/* a CPU slice: a step's span (--steps) */
static int ks_slice(struct kstream *ks, const tt__cell *row)
{
    const tt__cell *id = &row[TT_C_SL_ID], *nm = &row[TT_C_SL_NAME];
    const char *name;
    struct tt__kspan *x;
    if (id->type != TT_CELL_INT || nm->type != TT_CELL_INT ||
        row[TT_C_SL_TS].type != TT_CELL_INT || row[TT_C_SL_DUR].type != TT_CELL_INT ||
        !tt__kern_is_step(name = str_id(ks, nm->i)))
        return 0;
    if (TT_ALLOC_GROW(ks->sp, ks->nsp + 1, ks->asp) < 0)
        return tt__oom();
    x = &ks->sp[ks->nsp++];
    x->ts = row[TT_C_SL_TS].i;
    x->id = id->i;
    x->end = tt_sat_add(x->ts, row[TT_C_SL_DUR].i);
    x->num = strtoll(name + 13, NULL, 10);
    return 0;
}

static int ks_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct kstream *ks = ctx;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = ks_string(ks, row, text);
        else if (table == TT_ROWS_SLICE && ks->steps)
            rc = ks_slice(ks, row);
        else if (table == TT_ROWS_RUNTIME)
            rc = ks_runtime(ks, row);
        else if (table == TT_ROWS_GPU)
            rc = ks_gpu(ks, row, text);
    }
    if (table == TT_ROWS_GPU && ks->hln) { /* the links used: those of rows to come stay */
        memmove(ks->ln, ks->ln + ks->hln, (ks->nln - ks->hln) * sizeof(*ks->ln));
        ks->nln -= ks->hln;
        ks->hln = 0;
    }
    return rc;
}

/* ---- the steps' windows; the values a file kept for them ---- */

static int cmp_span(const void *a, const void *b)
{
    const struct tt__kspan *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

size_t tt__kern_step_windows(struct tt__kspan *sp, size_t n, const tt_kern_options *o)
{
    size_t i, k = 0, w = 0;
    int64_t last_end = 0;
    if (n)
        TT_QSORT(sp, n, sizeof(*sp), cmp_span);
    for (i = 0; i < n; i++) {
        struct tt__kspan s = sp[i];
        if (k && s.ts < last_end)
            continue;
        k++;
        last_end = s.end;
        if (s.num < o->step_from || s.num > o->step_to || (w && sp[w - 1].ts == s.ts))
            continue;
        sp[w++] = s;
    }
    return w;
}

int tt__kern_in_steps(const struct tt__kspan *sp, size_t n, int64_t lt)
{
    size_t lo = 0, hi = n;
    if (lt == TT_KERN_NULL)
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp[mid].ts <= lt)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && sp[lo - 1].end > lt;
}

/* kept values into their groups: those launched in a chosen step */
static int kept_add(struct kstream *ks, const struct kept *k, size_t n)
{
    size_t i;
    int rc;
    for (i = 0; i < n; i++)
        if (tt__kern_in_steps(ks->sp, ks->nsp, k[i].lt) &&
            (rc = group_add(&ks->set[k[i].m].g[k[i].g], k[i].v, k[i].bytes, k[i].delay)) < 0)
            return rc;
    return 0;
}

/* the end of a file's rows (--steps): the values kept, in memory and spilled */
static int ks_flush(struct kstream *ks)
{
    size_t n;
    int rc;
    if (!ks->steps || ks->spans_final)
        return 0;
    ks_windows(ks);
    if ((rc = kept_add(ks, ks->kp, ks->nkp)) < 0 || !ks->spill)
        return rc;
    if (fflush(ks->spill) != 0 || fseek(ks->spill, 0, SEEK_SET) != 0)
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    while ((n = fread(ks->kp, sizeof(*ks->kp), KEPT_MAX, ks->spill)) > 0)
        if ((rc = kept_add(ks, ks->kp, n)) < 0)
            return rc;
    return ferror(ks->spill) ? tt_error_set(TT_EIO, "cannot read a temporary file") : 0;
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
    x->launches = g->launches;
    x->delay_min_ns = g->delay_min;
    x->delay_max_ns = g->delay_max;
    x->delay_avg_ns = g->launches ? (double)g->delay_sum / (double)g->launches : NAN;
}

int tt__kern_finish(tt_kern_summary *s, const tt_kern_options *o, tt__kgroup *g, size_t ng)
{
    int size = s->by == TT_KERN_BY_MEMSIZE;
    size_t k;
    if (!(s->rows = calloc(ng ? ng : 1, sizeof(*s->rows)))) {
        for (k = 0; k < ng; k++)
            free(g[k].name);
        return tt__oom();
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
        TT_QSORT(s->rows, s->nrows, sizeof(*s->rows), size ? cmp_bytes : cmp_total);
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
    case TT_KERN_BY_SEQUENCE: return m == TT__KSUM_KERNELS;
    default: return o->what != (m ? TT_KERN_KERNELS : TT_KERN_MEMORY);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* a group's distinct values with their counts, by value: (*v)[2i] the
 * value, (*v)[2i + 1] its count, *n pairs; the caller frees *v */
static int group_vals(const struct group *gr, int64_t **out, size_t *nout)
{
    const struct i64map *d = &gr->d;
    int64_t *v = malloc((d->n ? d->n : 1) * 2 * sizeof(*v));
    size_t i, n = 0;
    if (!v)
        return tt__oom();
    for (i = 0; i < d->cap; i++)
        if (d->used[i]) {
            v[2 * n] = d->k[i];
            v[2 * n + 1] = (int64_t)d->v[i];
            n++;
        }
    TT_QSORT(v, n, 2 * sizeof(*v), cmp_i64);
    *out = v;
    *nout = n;
    return 0;
}

void tt__kern_vals_stats(const int64_t *v, size_t n, int64_t count, int64_t total,
                         tt__kgroup *out)
{
    int64_t lo = (count - 1) / 2, hi = count / 2, seen = 0, vlo = 0, vhi = 0;
    double mean = (double)total / (double)count, m2 = 0;
    size_t i;
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
    out->med = ((double)vlo + (double)vhi) / 2.0;
    out->m2 = m2;
}

/* median and m2 of a group, from its distinct values with their counts */
static int group_stats(const struct group *gr, tt__kgroup *out)
{
    int64_t *v;
    size_t n;
    int rc = group_vals(gr, &v, &n);
    if (rc < 0)
        return rc;
    tt__kern_vals_stats(v, n, gr->count, gr->total, out);
    free(v);
    return 0;
}

static void ks_release(struct kstream *ks)
{
    size_t i;
    int m;
    for (i = 0; i < ks->nstrs; i++)
        free(ks->strs[i]);
    free(ks->strs);
    tt__i64map_free(&ks->sid);
    for (m = 0; m < 2; m++) {
        for (i = 0; i < ks->set[m].ng; i++) {
            free(ks->set[m].g[i].name);
            tt__i64map_free(&ks->set[m].g[i].d);
        }
        free(ks->set[m].g);
        free(ks->set[m].slot);
    }
    tt_buf_release(&ks->key);
    free(ks->ln);
    free(ks->kp);
    if (ks->spill)
        fclose(ks->spill);
    free(ks->sp);
    memset(ks, 0, sizeof(*ks));
}

static void ks_init(struct kstream *ks, const tt_kern_options *o)
{
    memset(ks, 0, sizeof(*ks));
    tt_buf_init(&ks->key);
    ks->o = o;
    ks->steps = tt__kern_steps_on(o);
    ks->links = o->by == TT_KERN_BY_OP || ks->steps;
}

/* a group's counts and sums into kg (not its name, median or m2) */
static void group_sums(const struct group *g, tt__kgroup *kg)
{
    kg->n = g->count;
    kg->total = g->total;
    kg->min = g->min;
    kg->max = g->max;
    kg->bytes = g->bytes;
    kg->launches = g->launches;
    kg->delay_sum = g->delay_sum;
    kg->delay_min = g->delay_min;
    kg->delay_max = g->delay_max;
}

/* one set of groups -> a summary in kernels.c's shape */
static int to_summary(struct gset *gs, const tt_kern_options *o, tt_kern_summary *s)
{
    tt__kgroup *kg = calloc(gs->ng ? gs->ng : 1, sizeof(*kg));
    size_t i, n = 0;
    int rc = 0;
    if (!kg)
        return tt__oom();
    for (i = 0; rc == 0 && i < gs->ng; i++) {
        struct group *g = &gs->g[i];
        if (!g->count) /* every value of it outside the chosen steps */
            continue;
        group_sums(g, &kg[n]);
        rc = group_stats(g, &kg[n]);
        kg[n++].name = g->name; /* the names move to the rows */
        g->name = NULL;
    }
    if (rc == 0)
        rc = tt__kern_finish(s, o, kg, n);
    else
        for (i = 0; i < n; i++)
            free(kg[i].name);
    free(kg);
    return rc;
}

/* the tables no summary reads */
#define KERN_SKIP                                                                          \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

/* the rows of a file (db NULL) or of a database's trace into ks; a file
 * whose rows lack links a summary uses (--by op, --steps) is read again,
 * twice (TT_ROWS_RELINK), into the same consumer. A database hands
 * over the slices (the steps' spans) before any value, and the links
 * through gpu_links: slices only for --steps, runtime calls only by
 * runtime */
static int ks_read(struct kstream *ks, const tt__rowsink *sink, const char *path, tt_db *db,
                   int64_t trace, tt__rows_result *res)
{
    const tt_kern_options *o = ks->o;
    int rc, links;
    unsigned dbskip = KERN_SKIP | TT_ROWS_NO_ARGS | (ks->steps ? 0 : 1u << TT_ROWS_SLICE) |
                      (o->by == TT_KERN_BY_RUNTIME ? 0 : 1u << TT_ROWS_RUNTIME);
    if (db) {
        ks->spans_final = 1;
        if ((rc = tt__flt_load(ks->fl, NULL, db, trace)) < 0)
            return rc;
        return tt__db_rows(db, trace, sink, dbskip, res);
    }
    if ((ks->links || tt__flt_needs_load(ks->fl)) && tt__spool_needed(path)) {
        /* standard input or a pipe: from a copy, which the way back reads again */
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = ks_read(ks, sink, rd, NULL, trace, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__flt_load(ks->fl, path, NULL, 0)) < 0)
        return rc;
    /* the filters place a GPU row by its runtime call: its links too */
    links = ks->links || tt__flt_wants_launch(ks->fl);
    rc = tt__ingest_rows(path, sink, TT_READ_NO_ARGS, KERN_SKIP | (links ? 0 : TT_ROWS_NO_STOP),
                         res);
    if (rc != 0 || !links || !res->needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "kernels", "kernels: %s: %s, read twice", path,
            res->why_db ? res->why_db : "links");
    free(res->metadata);
    res->metadata = NULL; /* the caller frees it, also after a failure below */
    {
        tt__flt *fl = ks->fl;
        ks_release(ks);
        ks_init(ks, o);
        ks->fl = fl;
        tt__flt_reset(fl);
    }
    return tt__ingest_rows(path, sink, TT_READ_NO_ARGS, KERN_SKIP | TT_ROWS_RELINK, res);
}

/* the cells ks_rows reads: a database leaves the others out */
static const uint64_t ks_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_NAME) | TT_COL(TT_C_SL_TS) |
                      TT_COL(TT_C_SL_DUR),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_TS) |
                        TT_COL(TT_C_RT_DUR),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_BLOCK_X) | TT_COL(TT_C_GPU_BLOCK_Y) |
                    TT_COL(TT_C_GPU_BLOCK_Z) | TT_COL(TT_C_GPU_BYTES) |
                    TT_COL(TT_C_GPU_COPY_KIND) | TT_COL(TT_C_GPU_DEVICE) | TT_COL(TT_C_GPU_DUR) |
                    TT_COL(TT_C_GPU_GRID_X) | TT_COL(TT_C_GPU_GRID_Y) | TT_COL(TT_C_GPU_GRID_Z) |
                    TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_OP_ID) |
                    TT_COL(TT_C_GPU_RUNTIME_ID) | TT_COL(TT_C_GPU_STREAM) | TT_COL(TT_C_GPU_TS),
};

/* trace `trace` of db (or the file path) read into ks (initialised here);
 * the caller releases ks and *fl, also after a failure */
static int ks_run(struct kstream *ks, const tt_kern_options *o, const char *path, tt_db *db,
                  int64_t trace, tt__rows_result *res, tt__flt **fl)
{
    tt__rowsink sink, fsink;
    int rc;
    memset(res, 0, sizeof(*res));
    ks_init(ks, o);
    memset(&sink, 0, sizeof(sink));
    sink.ctx = ks;
    sink.rows = ks_rows;
    sink.cols = ks_cols;
    sink.gpu_links = ks->links ? ks_links : NULL;
    /* the filters: the GPU rows and runtime calls that fail never come */
    if ((rc = tt__flt_new(fl, o->version >= 3 ? &o->filter : NULL)) == 0 &&
        (rc = tt__flt_sink(*fl, &sink, 1u << TT_ROWS_GPU | 1u << TT_ROWS_RUNTIME, &fsink)) == 0) {
        ks->fl = *fl;
        rc = ks_read(ks, &fsink, path, db, trace, res);
    }
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0)
        rc = ks_flush(ks);
    last_peak = ks->peak;
    return rc;
}

int tt__kern_trace(const tt_kern_options *o, const char *path, tt_db *db, int64_t trace,
                   tt_kern_summary out[2], tt__rows_result *res)
{
    struct kstream ks;
    tt__flt *fl = NULL;
    int rc, m;
    memset(out, 0, 2 * sizeof(*out));
    rc = ks_run(&ks, o, path, db, trace, res, &fl);
    for (m = 0; rc == 0 && m < 2; m++) {
        out[m].trace_id = trace;
        out[m].memory = m;
        out[m].by = o->by;
        rc = to_summary(&ks.set[m], o, &out[m]);
    }
    ks_release(&ks);
    tt__flt_free(fl);
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}

/* the groups of ks (those with a value) through fn, as reading `pass` */
static int emit_groups(struct kstream *ks, size_t pass, tt__kgroup_fn fn, void *ctx)
{
    size_t i;
    int rc = 0, m;
    for (m = 0; rc == 0 && m < 2; m++)
        for (i = 0; rc == 0 && i < ks->set[m].ng; i++) {
            const struct group *g = &ks->set[m].g[i];
            tt__kgroup kg;
            int64_t *v;
            size_t n;
            if (!g->count || (rc = group_vals(g, &v, &n)) < 0)
                continue; /* a group left out by --steps */
            memset(&kg, 0, sizeof(kg));
            group_sums(g, &kg);
            kg.name = g->name;
            rc = fn(ctx, pass, m, &kg, v, n);
            free(v);
        }
    return rc;
}

/* several groupings of one database reading: each row to each of them */
struct fan {
    struct kstream *ks;
    size_t n;
};

static int fan_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                    const char *text)
{
    struct fan *f = ctx;
    size_t i;
    int rc = 0;
    for (i = 0; rc == 0 && i < f->n; i++)
        rc = ks_rows(&f->ks[i], table, nrows, ncols, cells, text);
    return rc;
}

static int fan_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct fan *f = ctx;
    size_t i;
    int rc = 0;
    for (i = 0; rc == 0 && i < f->n; i++)
        rc = ks_links(&f->ks[i], op, name, rt, rt_ts);
    return rc;
}

#define KERN_MAX_PASSES 8

/* every grouping of trace `trace` of db in one reading of its rows */
static int groups_db(const int *bys, size_t nby, tt_db *db, int64_t trace, tt__kgroup_fn fn,
                     void *ctx)
{
    struct kstream ks[KERN_MAX_PASSES];
    tt_kern_options o[KERN_MAX_PASSES];
    tt__rowsink sink;
    tt__rows_result res;
    struct fan f = { ks, nby };
    size_t i;
    int rc;
    for (i = 0; i < nby; i++) {
        tt_kern_options init = TT_KERN_OPTIONS_INIT;
        o[i] = init;
        o[i].by = bys[i];
        ks_init(&ks[i], &o[i]);
        ks[i].links = 1; /* each takes the links of every GPU row */
        ks[i].spans_final = 1;
    }
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &f;
    sink.rows = fan_rows;
    sink.cols = ks_cols;
    sink.gpu_links = fan_links;
    rc = tt__db_rows(db, trace, &sink, KERN_SKIP | TT_ROWS_NO_ARGS | 1u << TT_ROWS_SLICE, &res);
    free(res.metadata);
    for (i = 0; rc == 0 && i < nby; i++)
        rc = emit_groups(&ks[i], i, fn, ctx);
    for (i = 0; i < nby; i++)
        ks_release(&ks[i]);
    return rc;
}

int tt__kern_trace_groups(const int *bys, size_t nby, const char *path, tt_db *db,
                          int64_t trace, tt__kgroup_fn fn, void *ctx)
{
    size_t i;
    int rc = 0;
    if (nby > KERN_MAX_PASSES)
        return tt_error_set(TT_EINVALID, "kernels: at most %d groupings at once",
                            KERN_MAX_PASSES);
    if (db)
        rc = groups_db(bys, nby, db, trace, fn, ctx);
    for (i = 0; !db && rc == 0 && i < nby; i++) { /* a file: one reading per grouping */
        tt_kern_options o = TT_KERN_OPTIONS_INIT;
        struct kstream ks;
        tt__rows_result res;
        tt__flt *fl = NULL;
        o.by = bys[i];
        if ((rc = ks_run(&ks, &o, path, NULL, trace, &res, &fl)) == 0)
            rc = emit_groups(&ks, i, fn, ctx);
        ks_release(&ks);
        tt__flt_free(fl);
    }
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}

/* ---- shared by the summaries and the activities (kernels_trace.c) ---- */

int tt__kern_steps_on(const tt_kern_options *o)
{
    return o->version >= 2 && o->steps_set;
}

int tt__kern_nothing(const char *src, int file, const tt_kern_options *o)
{
    const char *what = o->by == TT_KERN_BY_SEQUENCE
                           ? (o->seq_op && *o->seq_op
                                  ? "op whose name contains the --under-op text and that launched"
                                    " enough GPU activities"
                                  : "sequence of GPU activities that long on a stream")
                       : o->by == TT_KERN_BY_RUNTIME
                           ? "CUDA/HIP runtime or driver call (cuda_runtime, cuda_driver)"
                       : o->by == TT_KERN_BY_MEMSIZE ? "memcpy or memset with a size (args bytes)"
                       : o->what == TT_KERN_KERNELS  ? "GPU kernel"
                       : o->what == TT_KERN_MEMORY   ? "GPU memcpy or memset"
                                                     : "GPU activity (kernel, memcpy, memset)";
    return tt_error_set_at(TT_ENOTFOUND, src, -1, "no %s in %s%s", what,
                           file ? "this trace" : "the selected traces",
                           o->version >= 3 && tt_filter_active(&o->filter)
                               ? " passes --name/--under/--time-range" : "");
}

int tt__kern_each(const tt_kern_options *o, const char *input, tt_db *db,
                  const struct tt__visit *v)
{
    return tt__each_trace(o->trace_id, o->rank, input, db, v);
}
