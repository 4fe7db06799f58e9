/*
 * analyze/info/info_summary.c - info's section of a summary (docs/SUMMARY.md)
 * and `info` on a summary: what `info DB` computes for one trace (its
 * tt_info_summary and its row of the rank overview), written whole, read
 * back, and printed by info's own printer, so the output is the database's.
 */
#include "common/compat.h"
#include "analyze/info/info_ranks.h"
#include "formats/sumfile.h"
#include "store/db_internal.h"

#include <inttypes.h>

static void kopt(tt_jw *w, const char *k, int have, int64_t v)
{
    tt_jw_key(w, k);
    if (have)
        tt_jw_int(w, v);
    else
        tt_jw_null(w);
}

static void write_counts(tt_jw *w, const tt_info_summary *s)
{
    size_t i;
    tt_jw_karr(w, "categories");
    for (i = 0; i < s->ncategories; i++) {
        char ph[2] = { s->categories[i].ph, 0 };
        tt_jw_arr(w);
        tt_jw_str(w, ph);
        tt_jw_str(w, s->categories[i].cat);
        tt_jw_int(w, s->categories[i].count);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    tt_jw_karr(w, "streams");
    for (i = 0; i < s->nstreams; i++) {
        tt_jw_arr(w);
        tt_jw_int(w, s->streams[i].device);
        tt_jw_int(w, s->streams[i].stream);
        tt_jw_int(w, s->streams[i].activities);
        tt_jw_end(w);
    }
    tt_jw_end(w);
}

/* the integer fields, in the order written; read back by name */
#define INFO_INTS(X)                                                                           \
    X(gzip) X(truncated) X(bytes) X(base_time_ns) X(events) X(devices) X(cpu_threads)         \
    X(shapes) X(memory_events) X(rf_ids) X(flows) X(gpu_kernels) X(python_functions)        \
    X(et_nodes) X(memtl_rows) X(repaired) X(skipped)

static void write_info(tt_jw *w, const tt_info_summary *s, const tt_info_rank *r)
{
    tt_jw_obj(w);
    tt_jw_kstr(w, "format", s->format);
    tt_jw_kstr(w, "schema_version", s->schema_version);
#define W_INT(f) tt_jw_kint(w, #f, s->f);
    INFO_INTS(W_INT)
#undef W_INT
    kopt(w, "rank", s->have_rank, s->rank);
    kopt(w, "world_size", s->have_world_size, s->world_size);
    kopt(w, "pid", s->have_pid, s->pid);
    kopt(w, "start_ns", s->have_span, s->start_ns);
    kopt(w, "end_ns", s->have_span, s->end_ns);
    write_counts(w, s);
    tt_jw_kobj(w, "overview");
    tt_jw_kint(w, "device", r->device);
    tt_jw_kstr(w, "gpu", r->gpu);
    tt_jw_kint(w, "steps", r->steps);
    tt_jw_kbool(w, "span", r->have_span);
    tt_jw_end(w);
    tt_jw_end(w);
}

int tt__info_sum_write(const struct tt__sum_src *src, tt_jw *w)
{
    tt_db *db = src->db;
    tt_info_result one;
    tt_info_rank row;
    int64_t id = src->trace_id;
    int rc = 0;
    memset(&row, 0, sizeof(row));
    memset(&one, 0, sizeof(one));
    if (!db) { /* a file on its own: as summarize reads one */
        tt_ingest_result ir;
        if ((rc = tt__open_temp_db(&db, "summarize")) < 0)
            return rc;
        rc = tt_ingest_file(db, src->path, NULL, &ir);
        id = ir.trace_id;
    }
    if (rc == 0 && !(one.traces = calloc(1, sizeof(*one.traces))))
        rc = tt__oom();
    if (rc == 0) {
        one.ntraces = 1;
        rc = tt__info_db_trace(db, id, &one.traces[0], &row);
    }
    if (rc == 0)
        write_info(w, &one.traces[0], &row);
    tt_info_result_free(&one);
    free(row.path);
    free(row.gpu);
    if (db != src->db)
        tt_db_free(db);
    return rc;
}

/* ---- reading the section ---- */

struct rd {
    tt_jp jp;
    tt_arena a;
    const struct tt_summary *s;
};

static int bad(struct rd *r, const char *key)
{
    return tt_error_set_at(TT_EINVALID, r->s->path, tt_jp_offset(&r->jp),
                           "info section: \"%s\" has the wrong type", key);
}

/* "info section "KEY"", for the messages of the value readers */
static const char *what_of(char *buf, size_t cap, const char *key)
{
    snprintf(buf, cap, "info section \"%s\"", key);
    return buf;
}

/* an integer; with have, null too (*have 0) */
static int get_int(struct rd *r, const char *key, int64_t *v, int *have)
{
    char w[96];
    if (have && tt_jp_peek(&r->jp) == TT_JT_NULL) {
        *have = 0;
        *v = 0;
        return tt_jp_skip(&r->jp);
    }
    if (have)
        *have = 1;
    return tt__sum_int(&r->jp, what_of(w, sizeof(w), key), v);
}

/* a string or null into *out (malloc'd; NULL for null) */
static int get_str(struct rd *r, const char *key, char **out)
{
    char w[96];
    const char *v;
    size_t len;
    int rc = tt__sum_str(&r->jp, what_of(w, sizeof(w), key), &r->a, &v, &len);
    free(*out);
    *out = NULL;
    if (rc < 0 || !v)
        return rc;
    return (*out = strndup(v, len)) ? 0 : tt__oom();
}

static int get_category(struct rd *r, tt_info_category *c)
{
    char *ph = NULL;
    int rc;
    if (tt_jp_array_begin(&r->jp) < 0 || tt_jp_array_next(&r->jp) <= 0)
        return bad(r, "categories");
    rc = get_str(r, "categories", &ph);
    c->ph = ph ? ph[0] : 0;
    free(ph);
    if (rc == 0 && tt_jp_array_next(&r->jp) <= 0)
        rc = bad(r, "categories");
    if (rc == 0)
        rc = get_str(r, "categories", &c->cat);
    if (rc == 0 && tt_jp_array_next(&r->jp) <= 0)
        rc = bad(r, "categories");
    if (rc == 0)
        rc = get_int(r, "categories", &c->count, NULL);
    if (rc == 0 && tt_jp_array_next(&r->jp) != 0)
        rc = bad(r, "categories");
    return rc;
}

static int get_stream(struct rd *r, tt_info_stream *d)
{
    int64_t *v[3] = { &d->device, &d->stream, &d->activities };
    int k, rc = 0;
    if (tt_jp_array_begin(&r->jp) < 0)
        return bad(r, "streams");
    for (k = 0; rc == 0 && k < 3; k++)
        rc = tt_jp_array_next(&r->jp) <= 0 ? bad(r, "streams") : get_int(r, "streams", v[k], NULL);
    if (rc == 0 && tt_jp_array_next(&r->jp) != 0)
        rc = bad(r, "streams");
    return rc;
}

static int get_cats(struct rd *r, tt_info_summary *s)
{
    size_t alloc = 0;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_ARRAY || tt_jp_array_begin(&r->jp) < 0)
        return bad(r, "categories");
    while ((rc = tt_jp_array_next(&r->jp)) > 0) {
        if (TT_ALLOC_GROW(s->categories, s->ncategories + 1, alloc) < 0)
            return tt__oom();
        memset(&s->categories[s->ncategories], 0, sizeof(s->categories[0]));
        if ((rc = get_category(r, &s->categories[s->ncategories++])) < 0)
            return rc;
    }
    return rc;
}

static int get_streams(struct rd *r, tt_info_summary *s)
{
    size_t alloc = 0;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_ARRAY || tt_jp_array_begin(&r->jp) < 0)
        return bad(r, "streams");
    while ((rc = tt_jp_array_next(&r->jp)) > 0) {
        if (TT_ALLOC_GROW(s->streams, s->nstreams + 1, alloc) < 0)
            return tt__oom();
        if ((rc = get_stream(r, &s->streams[s->nstreams++])) < 0)
            return rc;
    }
    return rc;
}

static int get_overview(struct rd *r, tt_info_rank *row)
{
    const char *k;
    size_t kl;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_OBJECT || tt_jp_object_begin(&r->jp) < 0)
        return bad(r, "overview");
    while ((rc = tt_jp_object_next(&r->jp, &r->a, &k, &kl)) > 0) {
        enum tt_jtype t;
        if (kl == 6 && !memcmp(k, "device", 6))
            rc = get_int(r, "device", &row->device, NULL);
        else if (kl == 3 && !memcmp(k, "gpu", 3))
            rc = get_str(r, "gpu", &row->gpu);
        else if (kl == 5 && !memcmp(k, "steps", 5))
            rc = get_int(r, "steps", &row->steps, NULL);
        else if (kl == 4 && !memcmp(k, "span", 4))
            rc = (t = tt_jp_peek(&r->jp)) == TT_JT_TRUE || t == TT_JT_FALSE
                     ? (row->have_span = t == TT_JT_TRUE, tt_jp_skip(&r->jp))
                     : bad(r, "span");
        else
            rc = tt_jp_skip(&r->jp);
        if (rc < 0)
            return rc;
    }
    return rc;
}

/* one key of the section */
static int get_key(struct rd *r, const char *k, size_t kl, tt_info_summary *s, tt_info_rank *row)
{
    int have_end = 0;
#define KEY(name) (kl == sizeof(name) - 1 && !memcmp(k, name, kl))
#define R_INT(f)                                                                              \
    if (KEY(#f)) {                                                                            \
        int64_t v = 0;                                                                        \
        int rc = get_int(r, #f, &v, NULL);                                                    \
        s->f = (__typeof__(s->f))v;                                                           \
        return rc;                                                                            \
    }
    INFO_INTS(R_INT)
#undef R_INT
    if (KEY("format"))
        return get_str(r, "format", &s->format);
    if (KEY("schema_version"))
        return get_str(r, "schema_version", &s->schema_version);
    if (KEY("rank"))
        return get_int(r, "rank", &s->rank, &s->have_rank);
    if (KEY("world_size"))
        return get_int(r, "world_size", &s->world_size, &s->have_world_size);
    if (KEY("pid"))
        return get_int(r, "pid", &s->pid, &s->have_pid);
    if (KEY("start_ns"))
        return get_int(r, "start_ns", &s->start_ns, &s->have_span);
    if (KEY("end_ns"))
        return get_int(r, "end_ns", &s->end_ns, &have_end);
    if (KEY("categories"))
        return get_cats(r, s);
    if (KEY("streams"))
        return get_streams(r, s);
    if (KEY("overview"))
        return get_overview(r, row);
#undef KEY
    return tt_jp_skip(&r->jp);
}

static int read_info(const struct tt_summary *sum, const struct tt__sum_trace *t,
                     tt_info_summary *s, tt_info_rank *row)
{
    struct rd r;
    const char *k;
    size_t kl;
    int rc;
    if (!t->sec[TT__SEC_INFO])
        return tt__sum_missing(sum, t, TT__SEC_INFO);
    memset(&r, 0, sizeof(r));
    r.s = sum;
    tt__sum_section_jp(sum, t, TT__SEC_INFO, &r.jp);
    row->device = -1;
    if (tt_jp_peek(&r.jp) != TT_JT_OBJECT)
        rc = bad(&r, "info");
    else if ((rc = tt_jp_object_begin(&r.jp)) == 0)
        while ((rc = tt_jp_object_next(&r.jp, &r.a, &k, &kl)) > 0 &&
               (rc = get_key(&r, k, kl, s, row)) == 0)
            ;
    tt_arena_release(&r.a);
    if (rc < 0)
        return rc;
    s->trace_id = t->id;
    if (!(s->path = strdup(t->path)))
        return tt__oom();
    row->trace_id = t->id;
    if (!(row->path = strdup(t->path)))
        return tt__oom();
    row->have_rank = s->have_rank;
    row->rank = s->rank;
    row->have_world_size = s->have_world_size;
    row->world_size = s->world_size;
    row->start_ns = s->start_ns;
    row->end_ns = s->end_ns;
    row->events = s->events;
    return 0;
}

/* the traces of o->trace_id (0: all) into res and, ranks not NULL, their
 * overview rows (sorted) */
static int sum_pass(const tt_summary *s, const tt_info_options *o, tt_info_result *res,
                    tt_info_ranks *ranks)
{
    size_t i;
    int rc = 0;
    memset(res, 0, sizeof(*res));
    memset(ranks, 0, sizeof(*ranks));
    if (s->n && (!(res->traces = calloc(s->n, sizeof(*res->traces))) ||
                 !(ranks->rows = calloc(s->n, sizeof(*ranks->rows)))))
        return tt__oom();
    for (i = 0; rc == 0 && i < s->n; i++) {
        if (o->trace_id && o->trace_id != s->traces[i].id)
            continue;
        rc = read_info(s, &s->traces[i], &res->traces[res->ntraces++],
                       &ranks->rows[ranks->n++]);
    }
    if (rc == 0 && o->trace_id && !res->ntraces)
        rc = tt_error_set_at(TT_ENOTFOUND, s->path, -1, "no trace with id %" PRId64,
                             o->trace_id);
    tt__info_ranks_sort(ranks);
    return rc;
}

int tt_info_summary_result(const tt_summary *s, const tt_info_options *o, tt_info_result *res)
{
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    tt_info_ranks ranks;
    int rc = sum_pass(s, o ? o : &def, res, &ranks);
    tt_info_ranks_free(&ranks);
    if (rc < 0)
        tt_info_result_free(res);
    return rc;
}

int tt_info_summary_print(const tt_summary *s, const tt_info_options *o, FILE *out)
{
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    tt_info_result res;
    tt_info_ranks ranks;
    int rc;
    if (!o)
        o = &def;
    rc = sum_pass(s, o, &res, &ranks);
    if (rc == 0)
        rc = tt__info_print(&res, &ranks, o, out);
    tt_info_ranks_free(&ranks);
    tt_info_result_free(&res);
    return rc;
}
