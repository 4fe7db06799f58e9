/*
 * analyze/averages/averages_summary.c - the "averages" section of a summary
 * (include/tracetool/summary.h, formats/sumfile.h): what `tracetool
 * averages` prints for one trace, written by summarize and read back into
 * the tt_avg_result the database path gives for the same traces.
 *
 * The section of a trace (one JSON value; null for a trace that is not a
 * Chrome/Kineto one, which averages leaves out):
 *
 *   {"v": 1, "rank": R or null, "show_memory": 0 or 1,
 *    "by_name":  GROUPING,    key_averages()
 *    "by_shape": GROUPING}    key_averages(group_by_input_shape=True)
 *   GROUPING = {"self_cpu_total_us": D, "self_device_total_us": D,
 *               "rows": [ROW, ...]}       every row, in first-occurrence order
 *   ROW = [name, input_shapes (null in by_name), device (0 CPU, 1 CUDA),
 *          is_user_annotation, has_parent, count, self_cpu_us, cpu_total_us,
 *          self_device_us, device_total_us, cpu_mem, self_cpu_mem,
 *          device_mem, self_device_mem]
 *
 * D are doubles written "%.17g" (read back to the same bits), the footer
 * totals as the database path summed them (its order, not re-added here).
 * The rows are kept unsorted: --sort-by sorts them on reading with the
 * database path's sort (tt__avg_sort_rows: by the key, ties in
 * first-occurrence order), and --row-limit, --top-level-only and
 * --no-gpu-annotations are the printer's, so every format prints the
 * database's bytes.
 *
 * Not stored, refused on a summary (the traces answer them):
 * --group-by-stack N (its rows sum each event's double microseconds per
 * first-N-frames key; rows kept for the full stacks would add them up in
 * another order, which is not the same bytes), --stacks (the collapsed
 * stacks: a trace's whole Python stacks, far from compact), the filters and
 * --steps (they choose events, which a summary no longer has).
 */
#include "analyze/averages/averages_state.h"
#include "formats/sumfile.h"
#include "common/arena.h"
#include "store/ingest_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AVG_SUM_VERSION 1
#define ROW_FIELDS 14

static const char *const grouping_key[2] = { "by_name", "by_shape" };

/* ---- writing ---- */

static void write_row(tt_jw *w, const tt_avg_row *r)
{
    tt_jw_arr(w);
    tt_jw_str(w, r->name);
    tt_jw_str(w, r->input_shapes);
    tt_jw_int(w, r->device);
    tt_jw_int(w, r->is_user_annotation);
    tt_jw_int(w, r->has_parent);
    tt_jw_int(w, r->count);
    tt_jw_num(w, r->self_cpu_us, -1);
    tt_jw_num(w, r->cpu_total_us, -1);
    tt_jw_num(w, r->self_device_us, -1);
    tt_jw_num(w, r->device_total_us, -1);
    tt_jw_int(w, r->cpu_mem);
    tt_jw_int(w, r->self_cpu_mem);
    tt_jw_int(w, r->device_mem);
    tt_jw_int(w, r->self_device_mem);
    tt_jw_end(w);
}

static void write_grouping(tt_jw *w, const char *key, const tt_avg_trace *t)
{
    size_t i;
    tt_jw_kobj(w, key);
    tt_jw_knum(w, "self_cpu_total_us", t->self_cpu_total_us, -1);
    tt_jw_knum(w, "self_device_total_us", t->self_device_total_us, -1);
    tt_jw_karr(w, "rows");
    for (i = 0; i < t->nrows; i++)
        write_row(w, &t->rows[i]);
    tt_jw_end(w);
    tt_jw_end(w);
}

/* whether stored trace id of db is a Chrome/Kineto trace (averages reads no other) */
static int db_is_chrome(tt_db *db, int64_t id, int *yes)
{
    tt__db_trace *tr = NULL;
    size_t n = 0, i;
    int rc = tt__db_traces(db, &tr, &n);
    *yes = 0;
    for (i = 0; rc == 0 && i < n; i++) {
        if (tr[i].id == id)
            *yes = tr[i].format == TT_FMT_CHROME || tr[i].format == TT_FMT_CHROME_ARRAY;
    }
    tt__db_traces_free(tr, n);
    return rc;
}

/* the trace of src with (group 1) or without grouping by shape, rows unsorted */
static int compute(const struct tt__sum_src *src, int by_shape, tt_avg_result **res)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    int rc;
    o.group_by_shape = by_shape;
    o.row_limit = -1;
    if (src->db) {
        o.trace_id = src->trace_id;
        rc = tt_averages_compute_db(src->db, &o, res);
    } else {
        rc = tt_averages_compute_file(src->path, &o, res);
    }
    if (rc == 0 && (*res)->ntraces != 1) {
        rc = tt_error_set_at(TT_EINVALID, src->path, -1,
                             "averages: %zu traces where the summary expects one",
                             (*res)->ntraces);
    }
    return rc;
}

int tt__avg_sum_write(const struct tt__sum_src *src, tt_jw *w)
{
    tt_avg_result *r[2] = { NULL, NULL };
    const tt_avg_trace *t;
    int rc = 0, g, chrome = 1;
    if (src->db && (rc = db_is_chrome(src->db, src->trace_id, &chrome)) < 0)
        return rc;
    if (!chrome) {
        tt_jw_null(w);
        return 0;
    }
    for (g = 0; g < 2 && rc == 0; g++)
        rc = compute(src, g, &r[g]);
    if (rc == 0) {
        t = &r[0]->traces[0];
        tt_jw_obj(w);
        tt_jw_kint(w, "v", AVG_SUM_VERSION);
        tt_jw_key(w, "rank");
        if (t->have_rank)
            tt_jw_int(w, t->rank);
        else
            tt_jw_null(w);
        tt_jw_kint(w, "show_memory", t->show_memory);
        for (g = 0; g < 2; g++)
            write_grouping(w, grouping_key[g], &r[g]->traces[0]);
        tt_jw_end(w);
    }
    tt_avg_result_free(r[0]);
    tt_avg_result_free(r[1]);
    return rc;
}

/* ---- reading ---- */

struct rd {
    const struct tt_summary *s;
    tt_jp jp;
    tt_arena a;
};

static int bad(struct rd *d, const char *what)
{
    return tt_error_set_at(TT_EINVALID, d->s->path, tt_jp_offset(&d->jp),
                           "averages section: %s", what);
}

#define WHAT "averages section"

static int rd_int(struct rd *d, int64_t *v)
{
    return tt__sum_int(&d->jp, WHAT, v);
}

static int rd_num(struct rd *d, double *v)
{
    return tt__sum_num(&d->jp, WHAT, v);
}

/* a string or null, malloc'd (*out NULL for null) */
static int rd_str(struct rd *d, char **out)
{
    const char *str;
    size_t len;
    int rc = tt__sum_str(&d->jp, WHAT, &d->a, &str, &len);
    *out = NULL;
    if (rc < 0 || !str)
        return rc;
    return (*out = strndup(str, len)) ? 0 : tt__oom();
}

static int rd_row(struct rd *d, tt_avg_row *r)
{
    int64_t iv[8];
    double dv[4];
    int rc, k = 0;
    if (tt_jp_peek(&d->jp) != TT_JT_ARRAY || tt_jp_array_begin(&d->jp) < 0)
        return bad(d, "a row (an array) expected");
    rc = tt_jp_array_next(&d->jp) == 1 ? rd_str(d, &r->name) : bad(d, "a short row");
    if (rc == 0)
        rc = tt_jp_array_next(&d->jp) == 1 ? rd_str(d, &r->input_shapes) : bad(d, "a short row");
    for (k = 0; rc == 0 && k < 12; k++) {
        if (tt_jp_array_next(&d->jp) != 1)
            rc = bad(d, "a short row");
        else if (k >= 4 && k < 8)
            rc = rd_num(d, &dv[k - 4]);
        else
            rc = rd_int(d, &iv[k < 4 ? k : k - 4]);
    }
    if (rc == 0 && tt_jp_array_next(&d->jp) != 0)
        rc = bad(d, "a row of more than 14 fields");
    if (rc < 0)
        return rc;
    if (!r->name)
        return bad(d, "a row without a name");
    r->device = (int)iv[0];
    r->is_user_annotation = (int)iv[1];
    r->has_parent = (int)iv[2];
    r->count = iv[3];
    r->self_cpu_us = dv[0];
    r->cpu_total_us = dv[1];
    r->self_device_us = dv[2];
    r->device_total_us = dv[3];
    r->cpu_mem = iv[4];
    r->self_cpu_mem = iv[5];
    r->device_mem = iv[6];
    r->self_device_mem = iv[7];
    return 0;
}

static int rd_rows(struct rd *d, tt_avg_trace *t)
{
    size_t alloc = 0;
    int r;
    if (tt_jp_peek(&d->jp) != TT_JT_ARRAY || tt_jp_array_begin(&d->jp) < 0)
        return bad(d, "\"rows\" is not an array");
    while ((r = tt_jp_array_next(&d->jp)) == 1) {
        if (t->nrows == alloc) {
            size_t na = alloc ? alloc * 2 : 64;
            tt_avg_row *n = realloc(t->rows, sizeof(*n) * na);
            if (!n)
                return tt__oom();
            t->rows = n;
            alloc = na;
        }
        memset(&t->rows[t->nrows], 0, sizeof(t->rows[0]));
        t->nrows++; /* released with t, whole or not */
        if ((r = rd_row(d, &t->rows[t->nrows - 1])) < 0)
            return r;
    }
    return r < 0 ? TT_EINVALID : 0;
}

static int rd_grouping(struct rd *d, tt_avg_trace *t)
{
    const char *k;
    size_t kl;
    int r, rc = 0, have_rows = 0;
    if (tt_jp_peek(&d->jp) != TT_JT_OBJECT || tt_jp_object_begin(&d->jp) < 0)
        return bad(d, "a grouping (an object) expected");
    while (rc == 0 && (r = tt_jp_object_next(&d->jp, &d->a, &k, &kl)) == 1) {
        if (kl == 17 && !memcmp(k, "self_cpu_total_us", kl))
            rc = rd_num(d, &t->self_cpu_total_us);
        else if (kl == 20 && !memcmp(k, "self_device_total_us", kl))
            rc = rd_num(d, &t->self_device_total_us);
        else if (kl == 4 && !memcmp(k, "rows", kl) && (have_rows = 1))
            rc = rd_rows(d, t);
        else
            rc = tt_jp_skip(&d->jp) < 0 ? TT_EINVALID : 0;
    }
    if (rc == 0 && r < 0)
        rc = TT_EINVALID;
    return rc == 0 && !have_rows ? bad(d, "a grouping without \"rows\"") : rc;
}

/* trace st's section into t, the grouping of by_shape; 1: a trace averages leaves out */
static int rd_section(struct rd *d, const struct tt__sum_trace *st, int by_shape, tt_avg_trace *t)
{
    const char *k;
    size_t kl;
    int64_t v = 0;
    int r, rc = 0, have_v = 0, have_g = 0;
    tt__sum_section_jp(d->s, st, TT__SEC_AVERAGES, &d->jp);
    if (tt_jp_peek(&d->jp) == TT_JT_NULL)
        return 1;
    if (tt_jp_peek(&d->jp) != TT_JT_OBJECT || tt_jp_object_begin(&d->jp) < 0)
        return bad(d, "an object or null expected");
    while (rc == 0 && (r = tt_jp_object_next(&d->jp, &d->a, &k, &kl)) == 1) {
        if (kl == 1 && k[0] == 'v') {
            if ((rc = rd_int(d, &v)) == 0 && (have_v = 1) && (v < 1 || v > AVG_SUM_VERSION))
                rc = tt_error_set_at(TT_EUNSUPPORTED, d->s->path, tt_jp_offset(&d->jp),
                                     "averages section version %lld: this build reads 1 to %d",
                                     (long long)v, AVG_SUM_VERSION);
        } else if (kl == 4 && !memcmp(k, "rank", 4) && tt_jp_peek(&d->jp) != TT_JT_NULL) {
            rc = rd_int(d, &t->rank);
            t->have_rank = 1;
        } else if (kl == 11 && !memcmp(k, "show_memory", kl)) {
            rc = rd_int(d, &v);
            t->show_memory = v != 0;
        } else if (kl == strlen(grouping_key[by_shape]) &&
                   !memcmp(k, grouping_key[by_shape], kl)) {
            rc = rd_grouping(d, t);
            have_g = 1;
        } else {
            rc = tt_jp_skip(&d->jp) < 0 ? TT_EINVALID : 0;
        }
    }
    if (rc == 0 && r < 0)
        rc = TT_EINVALID;
    if (rc == 0 && (!have_v || !have_g))
        rc = bad(d, !have_v ? "no \"v\"" : "a grouping is missing");
    return rc;
}

static int cmp_trace(const void *a, const void *b)
{
    const tt_avg_trace *x = a, *y = b;
    if (x->have_rank != y->have_rank)
        return x->have_rank ? 1 : -1; /* as the database: no rank first */
    if (x->have_rank && x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->trace_id > y->trace_id) - (x->trace_id < y->trace_id);
}

/* what a summary cannot answer: the option's name, NULL when it can */
static const char *unanswerable(const tt_avg_options *o)
{
    if (o->steps_set)
        return "--steps";
    if (o->group_by_stack > 0)
        return "--group-by-stack";
    if (o->version >= 3 && o->collect_stacks)
        return "--stacks";
    if (o->version >= 4 && o->filter.name)
        return "--name";
    if (o->version >= 4 && o->filter.under)
        return "--under";
    if (o->version >= 4 && tt_filter_active(&o->filter))
        return "--time-range";
    return NULL;
}

/* the traces of s that o selects into res, by (rank, id) */
static int summary_traces(const tt_summary *s, const tt_avg_options *o, tt_avg_result *res)
{
    struct rd d;
    size_t i;
    int rc = 0;
    memset(&d, 0, sizeof(d));
    d.s = s;
    for (i = 0; i < s->n && rc == 0; i++) {
        const struct tt__sum_trace *st = &s->traces[i];
        tt_avg_trace t;
        memset(&t, 0, sizeof(t));
        if (o->trace_id > 0 && st->id != o->trace_id)
            continue;
        if (!st->sec[TT__SEC_AVERAGES]) {
            rc = tt__sum_missing(s, st, TT__SEC_AVERAGES);
            break;
        }
        t.trace_id = st->id;
        rc = rd_section(&d, st, o->group_by_shape != 0, &t);
        tt_arena_reset(&d.a);
        if (rc == 0 && (o->rank < 0 || (t.have_rank && t.rank == o->rank))) {
            if (!(t.path = strdup(st->path)))
                rc = tt__oom();
            if (rc == 0)
                rc = tt__avg_sort_rows(&t, o->sort_by);
            if (rc == 0)
                rc = tt__avg_result_add(res, &t);
        }
        if (rc == 1)
            rc = 0;
        tt__avg_trace_release(&t);
    }
    tt_arena_release(&d.a);
    if (rc == 0 && res->ntraces == 0)
        rc = tt_error_set_at(o->trace_id > 0 || o->rank >= 0 ? TT_ENOTFOUND : TT_EUNSUPPORTED,
                             s->path, -1, o->trace_id > 0 || o->rank >= 0
                                              ? "no Chrome/Kineto trace matches --trace/--rank"
                                              : "no Chrome/Kineto trace in this summary");
    if (rc == 0 && res->ntraces > 1)
        TT_QSORT(res->traces, res->ntraces, sizeof(res->traces[0]), cmp_trace);
    res->header_per_trace = res->ntraces > 1 || o->header_per_trace;
    return rc;
}

int tt_averages_summary_result(const tt_summary *s, const tt_avg_options *o, tt_avg_result **out)
{
    tt_avg_result *res;
    const char *no = unanswerable(o);
    int rc;
    *out = NULL;
    if (!tt_avg_sort_key_valid(o->sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", o->sort_by);
    if (no)
        return tt__sum_unsupported(s, no);
    if (!(res = calloc(1, sizeof(*res))))
        return tt__oom();
    if ((rc = summary_traces(s, o, res)) < 0) {
        tt_avg_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
