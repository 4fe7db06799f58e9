/*
 * analyze/kernels/kernels_summary.c - the "kernels" section of a summary
 * (docs/SUMMARY.md): what `tracetool kernels` prints for one trace, kept as
 * each group's distinct values with their counts, and the result rebuilt
 * from it (tt_kernels_summary_result).
 *
 * The section of a trace is one object, a key per grouping a summary
 * answers, each an array of groups (no key is left out; an empty array:
 * no such group):
 *
 *   {"name": [G...], "launch": [G...], "stream": [G...], "op": [G...],
 *    "memory": [G...], "runtime": [G...], "memsize": [G...]}
 *
 * name, launch, stream and op group the kernels as `kernels --by` does;
 * memory groups the memcpys and memsets by kind (the same under every
 * --by); runtime the runtime calls by name (--by runtime); memsize the
 * memory operations by kind with their sizes as values (--by memsize).
 * A group G:
 *
 *   {"name": KEY, "count": N, "total": SUM, "min": MIN, "max": MAX,
 *    "bytes": B, "values": [V1, C1, V2, C2, ...],
 *    "launches": L, "delay_sum": S, "delay_min": A, "delay_max": Z}
 *
 * values: the distinct values (durations in ns; memsize: sizes in bytes)
 * in increasing order, each followed by how many times it came (the counts
 * sum to N, the values times their counts to SUM); bytes the sum of the
 * memory operations' args bytes (left out when 0); the launch delays (op
 * only, left out without a launch) their count, sum, least and greatest.
 * Every statistic `kernels` prints (instances, total, min, max, average,
 * median, standard deviation, time %, GB/s, the delays) is recomputed from
 * these by the code that computes it from a trace (tt__kern_vals_stats,
 * tt__kern_finish): the median and the deviation come from the sorted
 * distinct values there too, so the same numbers in the same order give
 * the same doubles, and a merged summary prints byte for byte what a
 * database of the same traces prints.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/arena.h"
#include "common/tmath.h"
#include "analyze/kernels/kernels_state.h"
#include "formats/sumfile.h"
#include "store/db_internal.h"

#include <inttypes.h>

/* the section's keys */
enum { K_NAME = 0, K_LAUNCH, K_STREAM, K_OP, K_MEMORY, K_RUNTIME, K_MEMSIZE, K_COUNT };
static const char *const key_name[K_COUNT] = { "name",   "launch",  "stream", "op",
                                               "memory", "runtime", "memsize" };

/* ---- writing ---- */

/* the readings of a trace: each grouping, and the key of its kernel (or
 * runtime call) and memory summaries (-1: not written) */
static const int pass_by[] = { TT_KERN_BY_NAME, TT_KERN_BY_LAUNCH, TT_KERN_BY_STREAM,
                               TT_KERN_BY_OP, TT_KERN_BY_RUNTIME, TT_KERN_BY_MEMSIZE };
static const int pass_key[][2] = { { K_NAME, K_MEMORY }, { K_LAUNCH, -1 }, { K_STREAM, -1 },
                                   { K_OP, -1 },         { K_RUNTIME, -1 }, { -1, K_MEMSIZE } };
#define NPASS (sizeof(pass_by) / sizeof(pass_by[0]))

struct wctx {
    tt_jw *w;
    int open;    /* the key whose array is open; -1: none */
    int done[K_COUNT];
};

static void write_group(tt_jw *w, const tt__kgroup *g, const int64_t *v, size_t n, int op)
{
    size_t i;
    tt_jw_obj(w);
    tt_jw_kstr(w, "name", g->name);
    tt_jw_kint(w, "count", g->n);
    tt_jw_kint(w, "total", g->total);
    tt_jw_kint(w, "min", g->min);
    tt_jw_kint(w, "max", g->max);
    if (g->bytes)
        tt_jw_kint(w, "bytes", g->bytes);
    tt_jw_karr(w, "values");
    for (i = 0; i < 2 * n; i++)
        tt_jw_int(w, v[i]);
    tt_jw_end(w);
    if (op && g->launches) {
        tt_jw_kint(w, "launches", g->launches);
        tt_jw_kint(w, "delay_sum", g->delay_sum);
        tt_jw_kint(w, "delay_min", g->delay_min);
        tt_jw_kint(w, "delay_max", g->delay_max);
    }
    tt_jw_end(w);
}

/* the groups come by reading, then summary: each key's in one run */
static int on_group(void *ctx, size_t pass, int m, const tt__kgroup *g, const int64_t *v,
                    size_t n)
{
    struct wctx *x = ctx;
    int k = pass < NPASS ? pass_key[pass][m] : -1;
    if (k < 0)
        return 0;
    if (x->open != k) {
        if (x->open >= 0)
            tt_jw_end(x->w);
        tt_jw_karr(x->w, key_name[k]);
        x->open = k;
        x->done[k] = 1;
    }
    write_group(x->w, g, v, n, k == K_OP);
    return x->w->err == TT_ENOMEM ? tt__oom() : 0;
}

int tt__kern_sum_write(const struct tt__sum_src *src, tt_jw *w)
{
    struct wctx x;
    int rc, k;
    memset(&x, 0, sizeof(x));
    x.w = w;
    x.open = -1;
    tt_jw_obj(w);
    rc = tt__kern_trace_groups(pass_by, NPASS, src->path, src->db, src->db ? src->trace_id : 1,
                               on_group, &x);
    if (x.open >= 0)
        tt_jw_end(w);
    for (k = 0; rc == 0 && k < K_COUNT; k++)
        if (!x.done[k]) { /* no such group: an empty array */
            tt_jw_karr(w, key_name[k]);
            tt_jw_end(w);
        }
    tt_jw_end(w);
    if (rc == 0 && w->err == TT_ENOMEM)
        rc = tt__oom();
    return rc;
}

/* ---- reading ---- */

/* the groups of one key as they are read */
struct rgroups {
    tt__kgroup *g;
    size_t ng, ag;
    int64_t *v;  /* one group's values, reused */
    size_t nv, av;
};

static int bad(tt_jp *jp, const char *what)
{
    return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                           "kernels section: %s", what);
}

static int read_int(tt_jp *jp, int64_t *v)
{
    return tt__sum_int(jp, "kernels section", v);
}

static int cmp_pair(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* "values": the pairs, checked against the group's count and total; its
 * median and m2 from them */
static int read_values(tt_jp *jp, struct rgroups *r, tt__kgroup *g)
{
    int64_t off = tt_jp_offset(jp), n = 0;
    size_t i;
    int rc, sorted = 1;
    r->nv = 0;
    if ((rc = tt_jp_array_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_array_next(jp)) > 0) {
        if (TT_ALLOC_GROW(r->v, r->nv + 1, r->av) < 0)
            return tt__oom();
        if ((rc = read_int(jp, &r->v[r->nv++])) < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (r->nv % 2)
        return tt_error_set_at(TT_EINVALID, jp->name, off,
                               "kernels section: values holds an odd count of numbers");
    for (i = 0; i < r->nv; i += 2) {
        if (r->v[i + 1] <= 0)
            return tt_error_set_at(TT_EINVALID, jp->name, off,
                                   "kernels section: a value with a count below 1");
        if (i && r->v[i] <= r->v[i - 2])
            sorted = 0;
        n = tt_sat_add(n, r->v[i + 1]);
    }
    if (!sorted)
        TT_QSORT(r->v, r->nv / 2, 2 * sizeof(*r->v), cmp_pair);
    if (n != g->n || n <= 0)
        return tt_error_set_at(TT_EINVALID, jp->name, off,
                               "kernels section: the counts of values sum to %" PRId64
                               ", not to the group's count %" PRId64, n, g->n);
    tt__kern_vals_stats(r->v, r->nv / 2, g->n, g->total, g);
    return 0;
}

static int group_field(tt_jp *jp, tt_arena *a, struct rgroups *r, tt__kgroup *g,
                       const char *key, size_t klen, int *have_values)
{
    static const char *const ints[] = { "count",    "total",     "min",      "max",
                                        "bytes",    "launches",  "delay_sum", "delay_min",
                                        "delay_max" };
    int64_t *dst[9];
    size_t i;
    dst[0] = &g->n, dst[1] = &g->total, dst[2] = &g->min, dst[3] = &g->max;
    dst[4] = &g->bytes, dst[5] = &g->launches, dst[6] = &g->delay_sum;
    dst[7] = &g->delay_min, dst[8] = &g->delay_max;
    if (klen == 4 && !memcmp(key, "name", 4)) {
        const char *s;
        size_t n;
        int rc;
        if (tt_jp_peek(jp) != TT_JT_STRING)
            return bad(jp, "a group's name is not a string");
        if ((rc = tt_jp_string(jp, a, &s, &n)) < 0)
            return rc;
        free(g->name);
        return (g->name = strndup(s, n)) ? 0 : tt__oom();
    }
    if (klen == 6 && !memcmp(key, "values", 6)) {
        *have_values = 1;
        if (tt_jp_peek(jp) != TT_JT_ARRAY)
            return bad(jp, "a group's values are not an array");
        return read_values(jp, r, g); /* count and total come first */
    }
    for (i = 0; i < 9; i++)
        if (strlen(ints[i]) == klen && !memcmp(key, ints[i], klen))
            return read_int(jp, dst[i]);
    return tt_jp_skip(jp); /* a key of a later minor version */
}

static int read_group(tt_jp *jp, tt_arena *a, struct rgroups *r)
{
    int64_t off = tt_jp_offset(jp);
    const char *key;
    size_t klen;
    tt__kgroup *g;
    int rc, have_values = 0;
    if (tt_jp_peek(jp) != TT_JT_OBJECT)
        return bad(jp, "a group is not an object");
    if (TT_ALLOC_GROW(r->g, r->ng + 1, r->ag) < 0)
        return tt__oom();
    g = &r->g[r->ng++];
    memset(g, 0, sizeof(*g));
    if ((rc = tt_jp_object_begin(jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(jp, a, &key, &klen)) > 0)
        if ((rc = group_field(jp, a, r, g, key, klen, &have_values)) < 0)
            return rc;
    if (rc < 0)
        return rc;
    if (!g->name || !have_values)
        return tt_error_set_at(TT_EINVALID, jp->name, off,
                               "kernels section: a group without its %s",
                               g->name ? "values" : "name");
    return 0;
}

static void rgroups_release(struct rgroups *r)
{
    size_t i;
    for (i = 0; i < r->ng; i++)
        free(r->g[i].name);
    free(r->g);
    free(r->v);
    memset(r, 0, sizeof(*r));
}

/* the groups under key `want` of the section (jp at its start) into r */
static int read_key(tt_jp *jp, int want, struct rgroups *r)
{
    tt_arena a = TT_ARENA_INIT;
    const char *key;
    size_t klen;
    int rc, found = 0;
    if (tt_jp_peek(jp) != TT_JT_OBJECT)
        return bad(jp, "not an object");
    if ((rc = tt_jp_object_begin(jp)) < 0)
        return rc;
    while (rc >= 0 && (rc = tt_jp_object_next(jp, &a, &key, &klen)) > 0) {
        if (found || strlen(key_name[want]) != klen || memcmp(key, key_name[want], klen)) {
            rc = tt_jp_skip(jp);
            continue;
        }
        found = 1;
        if (tt_jp_peek(jp) != TT_JT_ARRAY || (rc = tt_jp_array_begin(jp)) < 0) {
            rc = rc < 0 ? rc : bad(jp, "a grouping is not an array");
            break;
        }
        while ((rc = tt_jp_array_next(jp)) > 0)
            if ((rc = read_group(jp, &a, r)) < 0)
                break;
    }
    tt_arena_release(&a);
    if (rc == 0 && !found)
        rc = tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                             "kernels section: no \"%s\" grouping", key_name[want]);
    return rc;
}

/* the key of summary m under o (-1: none) */
static int key_of(const tt_kern_options *o, int m)
{
    if (o->by == TT_KERN_BY_RUNTIME)
        return m == TT__KSUM_KERNELS ? K_RUNTIME : -1;
    if (o->by == TT_KERN_BY_MEMSIZE)
        return m == TT__KSUM_MEMORY ? K_MEMSIZE : -1;
    if (m == TT__KSUM_MEMORY)
        return K_MEMORY;
    return o->by == TT_KERN_BY_LAUNCH ? K_LAUNCH
           : o->by == TT_KERN_BY_STREAM ? K_STREAM
           : o->by == TT_KERN_BY_OP   ? K_OP
                                      : K_NAME;
}

int tt__kern_sum_summaries(const tt_jp *start, const tt_kern_options *o,
                           tt_kern_summary out[2])
{
    int m, rc = 0;
    memset(out, 0, 2 * sizeof(*out));
    for (m = 0; rc == 0 && m < 2; m++) {
        struct rgroups r;
        int k = key_of(o, m);
        memset(&r, 0, sizeof(r));
        out[m].memory = m;
        out[m].by = o->by;
        if (k >= 0) {
            tt_jp jp = *start; /* each grouping read from the section's start */
            rc = read_key(&jp, k, &r);
        }
        if (rc == 0) {
            rc = tt__kern_finish(&out[m], o, r.g, r.ng); /* the names move to the rows */
            r.ng = 0;
        }
        rgroups_release(&r);
    }
    return rc;
}

/* ---- the result of a summary ---- */

/* what a summary cannot answer: the option named, or NULL */
static const char *unsupported(const tt_kern_options *o)
{
    if (o->by == TT_KERN_BY_ACTIVITY)
        return "--by activity";
    if (o->version >= 3 && o->by == TT_KERN_BY_SEQUENCE)
        return "--sequences";
    if (tt__kern_steps_on(o))
        return "--steps";
    if (o->version >= 3 && (o->filter.from_ns != TT_FILTER_OPEN_FROM ||
                            o->filter.to_ns != TT_FILTER_OPEN_TO))
        return "--time-range";
    if (o->version >= 3 && o->filter.name)
        return "--name";
    if (o->version >= 3 && tt_filter_active(&o->filter))
        return "--under";
    return NULL;
}

static int cmp_trace(const void *a, const void *b)
{
    const struct tt__sum_trace *x = *(const struct tt__sum_trace *const *)a;
    const struct tt__sum_trace *y = *(const struct tt__sum_trace *const *)b;
    if (x->have_rank != y->have_rank)
        return x->have_rank ? 1 : -1; /* as a database: traces without a rank first */
    if (x->have_rank && x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* the selected traces (o->trace_id, o->rank) in a database's order */
static int selection(const tt_summary *s, const tt_kern_options *o,
                     const struct tt__sum_trace ***out, size_t *nout)
{
    const struct tt__sum_trace **t = calloc(s->n ? s->n : 1, sizeof(*t));
    size_t i, n = 0;
    if (!t)
        return tt__oom();
    for (i = 0; i < s->n; i++) {
        const struct tt__sum_trace *x = &s->traces[i];
        if ((o->trace_id <= 0 || x->id == o->trace_id) &&
            (o->rank < 0 || (x->have_rank && x->rank == o->rank)))
            t[n++] = x;
    }
    if (n > 1)
        TT_QSORT(t, n, sizeof(*t), cmp_trace);
    *out = t;
    *nout = n;
    if (n)
        return 0;
    free(t);
    *out = NULL;
    return tt_error_set_at(TT_ENOTFOUND, s->path, -1, "no Chrome/Kineto trace %s",
                           o->trace_id > 0 || o->rank >= 0 ? "matches --trace/--rank"
                                                           : "in this summary");
}

/* trace t's wanted summaries onto res */
static int one_trace(const tt_summary *s, const struct tt__sum_trace *t,
                     const tt_kern_options *o, tt_kern_result *res)
{
    tt_kern_summary two[2];
    tt_jp jp;
    int m, rc;
    if (!t->sec[TT__SEC_KERNELS])
        return tt__sum_missing(s, t, TT__SEC_KERNELS);
    tt__sum_section_jp(s, t, TT__SEC_KERNELS, &jp);
    rc = tt__kern_sum_summaries(&jp, o, two);
    for (m = 0; m < 2; m++) {
        two[m].trace_id = t->id;
        if (rc == 0 && tt__kern_wants(o, m)) {
            if (!(two[m].path = strdup(t->path)))
                rc = tt__oom();
            else
                res->summaries[res->nsummaries++] = two[m];
            if (rc == 0)
                continue;
        }
        tt__kern_summary_release(&two[m]);
    }
    return rc;
}

int tt_kernels_summary_result(const tt_summary *s, const tt_kern_options *o,
                              tt_kern_result *res)
{
    const struct tt__sum_trace **t = NULL;
    const char *what = unsupported(o);
    size_t n = 0, i;
    int rc;
    memset(res, 0, sizeof(*res));
    if (what)
        return tt__sum_unsupported(s, what);
    if ((rc = selection(s, o, &t, &n)) < 0)
        return rc;
    if (!(res->summaries = calloc(2 * n, sizeof(*res->summaries))))
        rc = tt__oom();
    for (i = 0; rc == 0 && i < n; i++)
        rc = one_trace(s, t[i], o, res);
    free(t);
    if (rc == 0 && (o->by == TT_KERN_BY_RUNTIME || o->by == TT_KERN_BY_MEMSIZE)) {
        for (i = 0; i < res->nsummaries && !res->summaries[i].ngroups; i++)
            ;
        if (i == res->nsummaries)
            rc = tt__kern_nothing(s->path, 0, o);
    }
    if (rc < 0)
        tt_kern_result_free(res);
    return rc;
}
