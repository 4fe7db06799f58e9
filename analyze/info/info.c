/*
 * analyze/info/info.c - `tracetool info`: a per-trace summary, computed either
 * from an ingested database (SQL over the stored rows) or straight from a
 * trace file (streaming, nothing stored). Both paths fill the same
 * tt_info_summary (tt_info_db_result / tt_info_file_result return them) and
 * share one printer (its tables through tracetool/table.h), so the two
 * outputs agree by construction of the format,
 * and tests compare them against an independent count. The file path keeps
 * its categories, streams and threads in hash indexes: linear in the events
 * whatever their number of distinct values.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "common/hash.h"
#include "common/i64map.h"
#include "common/arena.h"
#include "analyze/info/info_ranks.h"
#include "formats/json.h"
#include "report/table_json.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <sys/stat.h>

/* open addressing: i = index + 1 into the summary's array (0 = empty), h =
 * the key's hash, so probes and rehashing touch no key */
struct slot {
    size_t i;
    uint64_t h;
};

struct slots {
    struct slot *v;
    size_t cap; /* 0 or a power of two */
};

struct info {
    tt_info_summary s;
    tt_kineto_meta meta; /* file mode: the top-level keys */
    size_t acats, ads;
    struct slots cat_ix, ds_ix, thr_ix;
    /* file mode: thread set, pairs (pid, tid) */
    tt_id *thr;
    size_t nthr, athr;
    /* file mode, for the rank overview of a directory: GPU activities per
     * device, the distinct ProfilerStep#N names, deviceProperties */
    struct i64map devn;
    char **stepn;
    size_t nstepn, astepn;
    char *devprops;
    int64_t db_steps; /* a database: its distinct ProfilerStep#% slice names */
};

static uint64_t hash_str(uint64_t h, const char *s)
{
    h ^= 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return tt_mix64(h);
}

static uint64_t hash_cat(char ph, const char *cat)
{
    return cat ? hash_str((unsigned char)ph, cat) : tt_mix64((unsigned char)ph + 0x9e37ULL);
}

static uint64_t hash_id(uint64_t h, const tt_id *id)
{
    if (!id->present)
        return tt_mix64(h ^ 0x51);
    return id->is_str ? hash_str(h ^ 0x52, id->str) : tt_mix64(h ^ (uint64_t)id->num ^ 0x53);
}

/* Make room for n entries (load <= 1/2), rehashing the n - 1 already in. */
static int slots_reserve(struct slots *t, size_t n)
{
    size_t cap = t->cap ? t->cap : 16, i, j;
    struct slot *v;
    if (2 * n <= t->cap)
        return 0;
    while (2 * n > cap)
        cap *= 2;
    if (!(v = calloc(cap, sizeof(*v))))
        return TT_ENOMEM;
    for (i = 0; i < t->cap; i++) {
        if (!t->v[i].i)
            continue;
        for (j = t->v[i].h & (cap - 1); v[j].i; j = (j + 1) & (cap - 1))
            ;
        v[j] = t->v[i];
    }
    free(t->v);
    t->v = v;
    t->cap = cap;
    return 0;
}

static void info_release(struct info *in)
{
    size_t i;
    tt_info_summary *s = &in->s;
    free(s->path);
    free(s->format);
    free(s->schema_version);
    for (i = 0; i < s->ncategories; i++)
        free(s->categories[i].cat);
    free(s->categories);
    free(s->streams);
    for (i = 0; i < in->nthr; i++) {
        if (in->thr[2 * i].is_str)
            free((char *)in->thr[2 * i].str);
        if (in->thr[2 * i + 1].is_str)
            free((char *)in->thr[2 * i + 1].str);
    }
    free(in->thr);
    tt__i64map_free(&in->devn);
    for (i = 0; i < in->nstepn; i++)
        free(in->stepn[i]);
    free(in->stepn);
    free(in->devprops);
    free(in->cat_ix.v);
    free(in->ds_ix.v);
    free(in->thr_ix.v);
    memset(in, 0, sizeof(*in));
}

static int add_cat(struct info *in, char ph, const char *cat, int64_t n)
{
    tt_info_summary *s = &in->s;
    size_t j;
    tt_info_category *c;
    uint64_t h = hash_cat(ph, cat);
    if (slots_reserve(&in->cat_ix, s->ncategories + 1) < 0)
        return TT_ENOMEM;
    for (j = h & (in->cat_ix.cap - 1); in->cat_ix.v[j].i; j = (j + 1) & (in->cat_ix.cap - 1)) {
        if (in->cat_ix.v[j].h != h)
            continue;
        c = &s->categories[in->cat_ix.v[j].i - 1];
        if (c->ph == ph && ((!c->cat && !cat) || (c->cat && cat && !strcmp(c->cat, cat)))) {
            c->count += n;
            return 0;
        }
    }
    if (TT_ALLOC_GROW(s->categories, s->ncategories + 1, in->acats) < 0)
        return TT_ENOMEM;
    c = &s->categories[s->ncategories];
    c->ph = ph;
    c->cat = cat ? strdup(cat) : NULL;
    c->count = n;
    if (cat && !c->cat)
        return TT_ENOMEM;
    in->cat_ix.v[j].h = h;
    in->cat_ix.v[j].i = ++s->ncategories;
    return 0;
}

static int add_ds(struct info *in, int64_t dev, int64_t stream, int64_t n)
{
    tt_info_summary *s = &in->s;
    size_t j;
    uint64_t h = tt_mix64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)stream);
    if (slots_reserve(&in->ds_ix, s->nstreams + 1) < 0)
        return TT_ENOMEM;
    for (j = h & (in->ds_ix.cap - 1); in->ds_ix.v[j].i; j = (j + 1) & (in->ds_ix.cap - 1)) {
        tt_info_stream *d = &s->streams[in->ds_ix.v[j].i - 1];
        if (d->device == dev && d->stream == stream) {
            d->activities += n;
            return 0;
        }
    }
    if (TT_ALLOC_GROW(s->streams, s->nstreams + 1, in->ads) < 0)
        return TT_ENOMEM;
    s->streams[s->nstreams].device = dev;
    s->streams[s->nstreams].stream = stream;
    s->streams[s->nstreams].activities = n;
    in->ds_ix.v[j].h = h;
    in->ds_ix.v[j].i = ++s->nstreams;
    return 0;
}

static int cmp_cat(const void *a, const void *b)
{
    const tt_info_category *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    if (x->ph != y->ph)
        return x->ph < y->ph ? -1 : 1;
    return strcmp(x->cat ? x->cat : "", y->cat ? y->cat : "");
}

static int cmp_ds(const void *a, const void *b)
{
    const tt_info_stream *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* the categories and streams as tables: text shows the categories (count,
 * ph, category), JSON both lists inline */
enum { I_COUNT, I_PH, I_CAT, I_NCAT };
static const tt_table_col cat_cols[I_NCAT] = {
    { "count", "count", TT_COL_INT, 0, 0, 10, 0, 0, 0, 0 },
    { "ph", "ph", TT_COL_TEXT, 0, 0, 2, 0, 0, 0, 0 },
    { "category", "cat", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};
static const size_t cat_json[] = { I_PH, I_CAT, I_COUNT };

enum { I_DEVICE, I_STREAM, I_ACT, I_NDS };
static const tt_table_col ds_cols[I_NDS] = {
    { "device", "device", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "stream", "stream", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "activities", "activities", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

/* the table to out, or its rows into the JSON document jw writes (a
 * value each) when jw is given */
static int table_out(const tt_table *t, const tt_table_write_options *w, FILE *out, tt_jw *jw)
{
    return jw ? tt__table_json_rows(t, w, jw, -1) : tt_table_write(t, w, out);
}

/* cat_null: the text of a category-less row (NULL: a null cell) */
static int write_categories(const tt_info_summary *in, const tt_table_write_options *w,
                            const char *cat_null, int64_t limit, FILE *out, tt_jw *jw)
{
    tt_table *t = tt_table_new(cat_cols, I_NCAT);
    size_t i, n = limit >= 0 && (size_t)limit < in->ncategories ? (size_t)limit
                                                                : in->ncategories;
    int rc = t ? 0 : TT_ENOMEM;
    for (i = 0; rc == 0 && i < n; i++) {
        char ph[2] = { in->categories[i].ph, 0 };
        const char *cat = in->categories[i].cat ? in->categories[i].cat : cat_null;
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, I_PH, ph) < 0 ||
            tt_table_set_text(t, I_CAT, cat) < 0)
            rc = TT_ENOMEM;
        else
            tt_table_set_int(t, I_COUNT, in->categories[i].count);
    }
    if (rc == 0)
        rc = table_out(t, w, out, jw);
    tt_table_free(t);
    return rc;
}

static int write_streams(const tt_info_summary *in, const tt_table_write_options *w, FILE *out,
                         tt_jw *jw)
{
    tt_table *t = tt_table_new(ds_cols, I_NDS);
    size_t i;
    int rc = t ? 0 : TT_ENOMEM;
    for (i = 0; rc == 0 && i < in->nstreams; i++) {
        if (tt_table_add_row(t) < 0) {
            rc = TT_ENOMEM;
            break;
        }
        tt_table_set_int(t, I_DEVICE, in->streams[i].device);
        tt_table_set_int(t, I_STREAM, in->streams[i].stream);
        tt_table_set_int(t, I_ACT, in->streams[i].activities);
    }
    if (rc == 0)
        rc = table_out(t, w, out, jw);
    tt_table_free(t);
    return rc;
}

/* "key": v, or null without one */
static void kint_or_null(tt_jw *w, const char *key, int have, int64_t v)
{
    tt_jw_key(w, key);
    if (have)
        tt_jw_int(w, v);
    else
        tt_jw_null(w);
}

/* the summary as an object of "traces", on a line of its own (its tables
 * each on another) */
static int print_json(const tt_info_summary *in, tt_jw *w, int64_t limit)
{
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    int rc;
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "trace", in->path);
    if (in->trace_id)
        tt_jw_kint(w, "id", in->trace_id);
    tt_jw_kstr(w, "format", in->format);
    tt_jw_kstr(w, "schema_version", in->schema_version);
    tt_jw_kbool(w, "gzip", in->gzip);
    tt_jw_kint(w, "bytes", in->bytes);
    tt_jw_kbool(w, "truncated", in->truncated);
    kint_or_null(w, "rank", in->have_rank, in->rank);
    kint_or_null(w, "world_size", in->have_world_size, in->world_size);
    kint_or_null(w, "pid", in->have_pid, in->pid);
    tt_jw_kint(w, "base_time_ns", in->base_time_ns);
    if (in->have_span) {
        tt_jw_kint(w, "start_ns", in->start_ns);
        tt_jw_kint(w, "end_ns", in->end_ns);
        tt_jw_kint(w, "duration_ns", in->end_ns - in->start_ns);
    }
    tt_jw_kint(w, "events", in->events);
    o.cols = cat_json;
    o.ncols = TT_ARRAY_SIZE(cat_json);
    tt_jw_nl(w, 3);
    tt_jw_karr(w, "categories");
    if ((rc = write_categories(in, &o, NULL, limit, NULL, w)) < 0)
        return rc;
    tt_jw_end(w);
    o.cols = NULL;
    o.ncols = 0;
    tt_jw_nl(w, 3);
    tt_jw_karr(w, "gpu_streams");
    if ((rc = write_streams(in, &o, NULL, w)) < 0)
        return rc;
    tt_jw_end(w);
    tt_jw_nl(w, 3);
    tt_jw_kint(w, "cpu_threads", in->cpu_threads);
    tt_jw_kobj(w, "features");
    tt_jw_kint(w, "shapes", in->shapes);
    tt_jw_kint(w, "memory_events", in->memory_events);
    tt_jw_kint(w, "record_function_ids", in->rf_ids);
    tt_jw_kint(w, "flows", in->flows);
    tt_jw_kint(w, "gpu_kernels", in->gpu_kernels);
    tt_jw_kint(w, "python_functions", in->python_functions);
    tt_jw_kint(w, "et_nodes", in->et_nodes);
    tt_jw_kint(w, "memory_timeline_rows", in->memtl_rows);
    tt_jw_end(w);
    tt_jw_kint(w, "repaired", in->repaired);
    tt_jw_kint(w, "skipped", in->skipped);
    tt_jw_end(w);
    return 0;
}

static void human_bytes(char *buf, size_t n, int64_t b)
{
    if (b >= 1000000000)
        snprintf(buf, n, "%.2f GB", (double)b / 1e9);
    else if (b >= 1000000)
        snprintf(buf, n, "%.1f MB", (double)b / 1e6);
    else if (b >= 1000)
        snprintf(buf, n, "%.1f kB", (double)b / 1e3);
    else
        snprintf(buf, n, "%" PRId64 " B", b);
}

static void feature(FILE *out, int *first, const char *name, int64_t n)
{
    fprintf(out, "%s%s %s", *first ? "" : ", ", name, n ? "yes" : "no");
    if (n)
        fprintf(out, " (%" PRId64 ")", n);
    *first = 0;
}

static int print_text(const tt_info_summary *in, FILE *out, int64_t limit)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    size_t i;
    char b[32];
    int first = 1;
    tt_buf v = TT_BUF_INIT;
    if (in->trace_id)
        fprintf(out, "trace %" PRId64 ": %s\n", in->trace_id, tt_visible(&v, in->path));
    else
        fprintf(out, "trace: %s\n", tt_visible(&v, in->path));
    tt_buf_release(&v);
    human_bytes(b, sizeof(b), in->bytes);
    fprintf(out, "  format:       %s", in->format ? in->format : "unknown");
    if (in->schema_version)
        fprintf(out, " (schema %s)", in->schema_version);
    fprintf(out, ", %s%s%s\n", b, in->gzip ? ", gzip" : "",
            in->truncated ? ", TRUNCATED (salvaged)" : "");
    fputs("  rank:         ", out);
    if (in->have_rank)
        fprintf(out, "%" PRId64, in->rank);
    else
        fputs("unknown", out);
    if (in->have_world_size)
        fprintf(out, " of %" PRId64, in->world_size);
    if (in->have_pid)
        fprintf(out, ", pid %" PRId64, in->pid);
    fputc('\n', out);
    if (in->have_span) {
        int64_t d = in->end_ns - in->start_ns;
        fprintf(out, "  time span:    %.3f ms (%" PRId64 " .. %" PRId64 " ns", d / 1e6,
                in->start_ns, in->end_ns);
        if (in->base_time_ns)
            fprintf(out, ", + base %" PRId64, in->base_time_ns);
        fputs(")\n", out);
    }
    fprintf(out, "  events:       %" PRId64 "\n", in->events);
    fprintf(out, "  cpu threads:  %" PRId64 "\n", in->cpu_threads);
    if (in->nstreams) {
        fprintf(out, "  gpu devices:  %" PRId64 "\n", in->devices);
        for (i = 0; i < in->nstreams; i++)
            fprintf(out, "    device %" PRId64 " stream %" PRId64 ": %" PRId64
                         " activities\n",
                    in->streams[i].device, in->streams[i].stream, in->streams[i].activities);
    } else {
        fputs("  gpu devices:  none\n", out);
    }
    fputs("  features:     ", out);
    feature(out, &first, "shapes", in->shapes);
    feature(out, &first, "memory events", in->memory_events);
    feature(out, &first, "record-function ids", in->rf_ids);
    feature(out, &first, "flows", in->flows);
    feature(out, &first, "kernels", in->gpu_kernels);
    feature(out, &first, "python stacks", in->python_functions);
    feature(out, &first, "ET", in->et_nodes);
    if (in->memtl_rows)
        feature(out, &first, "memory timeline", in->memtl_rows);
    fputc('\n', out);
    if (in->repaired || in->skipped)
        fprintf(out, "  repaired:     %" PRId64 " values, skipped: %" PRId64 " elements\n",
                in->repaired, in->skipped);
    if (!in->ncategories)
        return 0;
    w.indent = "  ";
    w.flags = TT_TABLE_NO_RULE | TT_TABLE_BYTE_WIDTH;
    return write_categories(in, &w, "(none)", limit, out, NULL);
}

/* Sort categories and streams, count the devices. */
static void finish(tt_info_summary *s)
{
    size_t i;
    if (s->ncategories)
        TT_QSORT(s->categories, s->ncategories, sizeof(*s->categories), cmp_cat);
    if (s->nstreams)
        TT_QSORT(s->streams, s->nstreams, sizeof(*s->streams), cmp_ds);
    s->devices = 0;
    for (i = 0; i < s->nstreams; i++)
        if (i == 0 || s->streams[i].device != s->streams[i - 1].device)
            s->devices++;
}

/* ---- CSV (one row per trace) and Markdown ---- */

enum { S_TRACE, S_PATH, S_FORMAT, S_SCHEMA, S_GZIP, S_BYTES, S_TRUNC, S_RANK, S_WORLD, S_PID,
       S_START, S_END, S_DUR, S_EVENTS, S_THREADS, S_DEVICES, S_SHAPES, S_MEM, S_RF, S_FLOWS,
       S_KERNELS, S_PY, S_ET, S_MTL, S_REPAIRED, S_SKIPPED, S_N };

/* the JSON keys, so that CSV and JSON name a number alike */
static const tt_table_col sum_cols[S_N] = {
    { "trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "path", "path", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "format", "format", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "schema", "schema_version", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "gzip", "gzip", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "bytes", "bytes", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "truncated", "truncated", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "world size", "world_size", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "pid", "pid", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "start (ns)", "start_ns", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "end (ns)", "end_ns", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "duration (ns)", "duration_ns", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "events", "events", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "cpu threads", "cpu_threads", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "gpu devices", "gpu_devices", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "shapes", "shapes", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "memory events", "memory_events", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "record-function ids", "record_function_ids", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "flows", "flows", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "kernels", "gpu_kernels", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "python stacks", "python_functions", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "ET nodes", "et_nodes", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "memory timeline rows", "memory_timeline_rows", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "repaired", "repaired", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "skipped", "skipped", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

static tt_table *summary_row(const tt_info_summary *in)
{
    tt_table *t = tt_table_new(sum_cols, S_N);
    if (!t || tt_table_add_row(t) < 0 || tt_table_set_text(t, S_PATH, in->path) < 0 ||
        tt_table_set_text(t, S_FORMAT, in->format) < 0 ||
        tt_table_set_text(t, S_SCHEMA, in->schema_version) < 0) {
        tt_table_free(t);
        return NULL;
    }
    if (in->trace_id)
        tt_table_set_int(t, S_TRACE, in->trace_id);
    tt_table_set_int(t, S_GZIP, in->gzip);
    tt_table_set_int(t, S_BYTES, in->bytes);
    tt_table_set_int(t, S_TRUNC, in->truncated);
    if (in->have_rank)
        tt_table_set_int(t, S_RANK, in->rank);
    if (in->have_world_size)
        tt_table_set_int(t, S_WORLD, in->world_size);
    if (in->have_pid)
        tt_table_set_int(t, S_PID, in->pid);
    if (in->have_span) {
        tt_table_set_int(t, S_START, in->start_ns);
        tt_table_set_int(t, S_END, in->end_ns);
        tt_table_set_int(t, S_DUR, in->end_ns - in->start_ns);
    }
    tt_table_set_int(t, S_EVENTS, in->events);
    tt_table_set_int(t, S_THREADS, in->cpu_threads);
    tt_table_set_int(t, S_DEVICES, in->devices);
    tt_table_set_int(t, S_SHAPES, in->shapes);
    tt_table_set_int(t, S_MEM, in->memory_events);
    tt_table_set_int(t, S_RF, in->rf_ids);
    tt_table_set_int(t, S_FLOWS, in->flows);
    tt_table_set_int(t, S_KERNELS, in->gpu_kernels);
    tt_table_set_int(t, S_PY, in->python_functions);
    tt_table_set_int(t, S_ET, in->et_nodes);
    tt_table_set_int(t, S_MTL, in->memtl_rows);
    tt_table_set_int(t, S_REPAIRED, in->repaired);
    tt_table_set_int(t, S_SKIPPED, in->skipped);
    return t;
}

static int print_csv(const tt_info_summary *in, FILE *out, int first)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = summary_row(in);
    int rc;
    if (!t)
        return TT_ENOMEM;
    w.format = TT_FORMAT_CSV;
    w.no_header = !first;
    rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    return rc;
}

/* a heading, the summary as a two-column table, then the categories */
static int print_markdown(const tt_info_summary *in, FILE *out, int first, int64_t limit)
{
    static const tt_table_col kv[2] = {
        { "field", "field", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
        { "value", "value", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    };
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *row = summary_row(in), *t = tt_table_new(kv, 2);
    char *buf = NULL;
    size_t len = 0, c;
    int rc = row && t ? 0 : TT_ENOMEM;
    w.format = TT_FORMAT_MARKDOWN;
    if (in->trace_id)
        fprintf(out, "%s### trace %" PRId64 ": ", first ? "" : "\n", in->trace_id);
    else
        fprintf(out, "%s### trace: ", first ? "" : "\n");
    tt_table_markdown_text(out, in->path ? in->path : "");
    fputs("\n\n", out);
    for (c = S_FORMAT; rc == 0 && c < S_N; c++) {
        /* each value as the CSV writer gives it, in one cell */
        tt_table_write_options cw = TT_TABLE_WRITE_OPTIONS_INIT;
        FILE *m = open_memstream(&buf, &len);
        size_t only = c;
        if (!m) {
            rc = TT_ENOMEM;
            break;
        }
        cw.format = TT_FORMAT_CSV;
        cw.no_header = 1;
        cw.cols = &only;
        cw.ncols = 1;
        rc = tt_table_write(row, &cw, m);
        fclose(m);
        if (rc == 0 && len && buf[len - 1] == '\n')
            buf[--len] = '\0';
        if (rc == 0 && len && (tt_table_add_row(t) < 0 ||
                               tt_table_set_text(t, 0, sum_cols[c].key) < 0 ||
                               tt_table_set_text(t, 1, buf) < 0))
            rc = TT_ENOMEM;
        free(buf);
        buf = NULL;
    }
    if (rc == 0)
        rc = tt_table_write(t, &w, out);
    if (rc == 0 && in->ncategories) {
        fputc('\n', out);
        rc = write_categories(in, &w, "(none)", limit, out, NULL);
    }
    tt_table_free(row);
    tt_table_free(t);
    return rc;
}

/* one trace's summary: JSON (an object of "traces") when jw writes the
 * document (wants_json), else as the format asks */
static int emit(const tt_info_summary *s, const tt_info_options *opts, FILE *out, int first,
                tt_jw *jw)
{
    int fmt = opts->version >= 2 ? opts->format : TT_FORMAT_TABLE;
    int64_t limit = opts->version >= 2 ? opts->row_limit : -1;
    int rc;
    if (jw)
        rc = print_json(s, jw, limit);
    else if (fmt == TT_FORMAT_CSV)
        rc = print_csv(s, out, first);
    else if (fmt == TT_FORMAT_MARKDOWN)
        rc = print_markdown(s, out, first, limit);
    else {
        if (!first)
            fputc('\n', out);
        rc = print_text(s, out, limit);
    }
    return rc < 0 ? tt_error_set(rc, "out of memory") : 0;
}

/* JSON, whichever way the options ask for it */
static int wants_json(const tt_info_options *o)
{
    return o->json || (o->version >= 2 && o->format == TT_FORMAT_JSON);
}

/* the JSON document's writer, w, when the options ask for JSON; else NULL */
static tt_jw *json_begin(tt_jw *w, const tt_info_options *opts, FILE *out)
{
    if (!wants_json(opts))
        return NULL;
    tt_jw_init_file(w, out, TT_JW_LINE);
    return w;
}

/* the JSON document written out (its last line ended) and its writer freed:
 * rc as it was, or the writer's error (a write error is the caller's to see,
 * ferror, as for the other formats) */
static int json_end(tt_jw *w, int rc)
{
    int wr;
    if (!w)
        return rc;
    wr = tt_jw_finish(w);
    if (rc < 0)
        return rc;
    if (wr == TT_EINVALID)
        return tt_error_set(wr, "info: the JSON was left unfinished (a bug)");
    if (wr == TT_ENOMEM)
        return wr; /* set */
    return rc;
}

/* Move a finished summary out of `in` (whose indexes are released). */
static void take_summary(struct info *in, tt_info_summary *dst)
{
    *dst = in->s;
    memset(&in->s, 0, sizeof(in->s));
    info_release(in);
}

static void summary_release(tt_info_summary *s)
{
    struct info in;
    memset(&in, 0, sizeof(in));
    in.s = *s;
    info_release(&in);
    memset(s, 0, sizeof(*s));
}

void tt_info_result_free(tt_info_result *res)
{
    size_t i;
    if (!res)
        return;
    for (i = 0; i < res->ntraces; i++)
        summary_release(&res->traces[i]);
    free(res->traces);
    res->traces = NULL;
    res->ntraces = 0;
}

/* ---- shared by the database and the directory ---- */

static int collect_one(void *ctx, struct info *in)
{
    tt_info_result *res = ctx;
    size_t alloc = res->ntraces; /* grows one by one: few traces */
    if (TT_ALLOC_GROW(res->traces, res->ntraces + 1, alloc) < 0)
        return tt__oom();
    take_summary(in, &res->traces[res->ntraces++]);
    return 0;
}

/* the format of the rank overview (-1: none: --trace picks one, CSV) */
static int ranks_format(const tt_info_options *opts)
{
    int fmt = opts->version >= 2 ? opts->format : TT_FORMAT_TABLE;
    if (opts->trace_id || (fmt == TT_FORMAT_CSV && !opts->json))
        return -1;
    return opts->json ? TT_FORMAT_JSON : fmt;
}

/* the rank overview of several traces (JSON: the document opened, its
 * "ranks" into jw): 1 written, 0 not, or an error */
static int print_ranks_of(const tt_info_ranks *r, int fmt, FILE *out, tt_jw *jw)
{
    int rc;
    if (fmt < 0 || r->n < 2)
        return 0;
    if (fmt == TT_FORMAT_JSON) {
        tt_jw_obj(jw);
        tt_jw_key(jw, "ranks");
        rc = tt__info_ranks_json(r, jw);
    } else if ((rc = tt__info_ranks_print(r, fmt, out)) == 0) {
        fputc('\n', out);
    }
    return rc < 0 ? rc : 1;
}

/* ---- straight from a file ---- */

static int id_same(const tt_id *a, const tt_id *b)
{
    if (a->present != b->present || a->is_str != b->is_str)
        return 0;
    return a->is_str ? !strcmp(a->str, b->str) : a->num == b->num;
}

static int add_thread(struct info *in, const tt_id *pid, const tt_id *tid)
{
    size_t j, n = in->nthr;
    uint64_t h = hash_id(hash_id(7, pid), tid);
    if (slots_reserve(&in->thr_ix, n + 1) < 0)
        return TT_ENOMEM;
    for (j = h & (in->thr_ix.cap - 1); in->thr_ix.v[j].i; j = (j + 1) & (in->thr_ix.cap - 1)) {
        size_t i = in->thr_ix.v[j].i - 1;
        if (in->thr_ix.v[j].h == h && id_same(&in->thr[2 * i], pid) && id_same(&in->thr[2 * i + 1], tid))
            return 0;
    }
    if (TT_ALLOC_GROW(in->thr, 2 * (n + 1), in->athr) < 0)
        return TT_ENOMEM;
    in->thr[2 * n] = *pid;
    in->thr[2 * n + 1] = *tid;
    in->thr[2 * n].str = in->thr[2 * n + 1].str = NULL;
    in->nthr++; /* from here info_release frees the copies */
    if (pid->is_str && !(in->thr[2 * n].str = strdup(pid->str)))
        return TT_ENOMEM;
    if (tid->is_str && !(in->thr[2 * n + 1].str = strdup(tid->str)))
        return TT_ENOMEM;
    in->thr_ix.v[j].h = h;
    in->thr_ix.v[j].i = n + 1;
    in->s.cpu_threads++;
    return 0;
}

/* ASCII case-insensitive prefix, as SQL's LIKE 'ProfilerStep#%' */
static int step_name(const char *s)
{
    static const char p[] = "profilerstep#";
    size_t i;
    for (i = 0; p[i]; i++)
        if (!s[i] || (s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]) != p[i])
            return 0;
    return 1;
}

/* what the rank overview counts, as a database stores it: GPU activities
 * (complete events) by device, distinct ProfilerStep#N slice names */
static int rank_facts(struct info *in, const tt_event *ev, int c)
{
    size_t i, n = 0;
    if (ev->ph == 'X' && c != TT_XC_SLICE && c != TT_XC_RUNTIME &&
        ((ev->have & TT_A_DEVICE) || (ev->pid.present && !ev->pid.is_str))) {
        int64_t dev = (ev->have & TT_A_DEVICE) ? ev->device : ev->pid.num;
        tt__i64map_get(&in->devn, dev, &n);
        if (tt__i64map_put(&in->devn, dev, n + 1) < 0)
            return TT_ENOMEM;
    }
    if ((ev->ph == 'B' || c == TT_XC_SLICE) && ev->name && step_name(ev->name)) {
        for (i = 0; i < in->nstepn; i++)
            if (!strcmp(in->stepn[i], ev->name))
                return 0;
        if (TT_ALLOC_GROW(in->stepn, in->nstepn + 1, in->astepn) < 0 ||
            !(in->stepn[in->nstepn] = strdup(ev->name)))
            return TT_ENOMEM;
        in->nstepn++;
    }
    return 0;
}

static int f_event(void *ctx, const tt_event *ev)
{
    struct info *in = ctx;
    if (!ev->ph)
        return 0;
    if ((ev->ph == 'X' || ev->ph == 'B') && rank_facts(in, ev, tt_kineto_class(ev->cat)) < 0)
        return tt__oom();
    if (ev->ph != 'E' && add_cat(in, ev->ph, ev->cat, 1) < 0)
        return tt__oom();
    if (ev->has_ts && ev->ph != 'M') {
        int64_t end = tt_end_ns(ev->ts_ns, ev->has_dur ? ev->dur_ns : 0);
        if (!in->s.have_span) {
            in->s.start_ns = ev->ts_ns;
            in->s.end_ns = end;
            in->s.have_span = 1;
        }
        if (ev->ts_ns < in->s.start_ns)
            in->s.start_ns = ev->ts_ns;
        if (end > in->s.end_ns)
            in->s.end_ns = end;
    }
    switch (ev->ph) {
    case 'X':
    case 'B': {
        int c = tt_kineto_class(ev->cat);
        if (c == TT_XC_SLICE) {
            if (add_thread(in, &ev->pid, &ev->tid) < 0)
                return tt__oom();
            if (ev->input_dims)
                in->s.shapes++;
            if ((ev->have & TT_A_RF_ID) && ev->rf_id != 0)
                in->s.rf_ids++;
            if (ev->cat && !strcmp(ev->cat, "python_function"))
                in->s.python_functions++;
            if (!in->s.have_pid && ev->cat && !ev->pid.is_str && ev->pid.present &&
                (!strcmp(ev->cat, "cpu_op") || !strcmp(ev->cat, "Operator"))) {
                in->s.pid = ev->pid.num;
                in->s.have_pid = 1;
            }
        } else if (c != TT_XC_RUNTIME) {
            int64_t dev = (ev->have & TT_A_DEVICE) ? ev->device : ev->pid.num;
            int64_t str = (ev->have & TT_A_STREAM) ? ev->stream : ev->tid.num;
            if (((ev->have & TT_A_DEVICE) || (ev->pid.present && !ev->pid.is_str)) &&
                ((ev->have & TT_A_STREAM) || (ev->tid.present && !ev->tid.is_str)))
                add_ds(in, dev, str, 1);
            if (c == TT_XC_KERNEL)
                in->s.gpu_kernels++;
        }
        break;
    }
    case 'i':
    case 'I':
        if (!strcmp(ev->name, "[memory]") || !strcmp(ev->name, "[OutOfMemory]"))
            in->s.memory_events++;
        break;
    case 's':
    case 'f':
    case 't':
        in->s.flows++;
        break;
    case 'M':
        if (ev->arg_labels && !strcmp(ev->arg_labels, "CPU") && ev->pid.present &&
            !ev->pid.is_str) {
            in->s.pid = ev->pid.num;
            in->s.have_pid = 1;
        }
        break;
    default:
        break;
    }
    return 0;
}

static int f_node(void *ctx, const tt_et_node *n)
{
    struct info *in = ctx;
    (void)n;
    in->s.et_nodes++;
    return 0;
}

static int f_memrow(void *ctx, const tt_memrow *m)
{
    struct info *in = ctx;
    in->s.memtl_rows++;
    if (m->ts < 0) /* torch's -1: live before the profile, not a time */
        return 0;
    if (!in->s.have_span || m->ts < in->s.start_ns)
        in->s.start_ns = m->ts;
    if (!in->s.have_span || m->ts > in->s.end_ns)
        in->s.end_ns = m->ts;
    in->s.have_span = 1;
    return 0;
}

static int f_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct info *in = ctx;
    if (tt_kineto_meta_key(&in->meta, key, json, len) < 0)
        return tt__oom();
    if (!strcmp(key, "deviceProperties") && !in->devprops &&
        !(in->devprops = strndup(json, len)))
        return tt__oom();
    if (!strcmp(key, "pid") && in->meta.have_pid) { /* in stream order, as ingest */
        in->s.pid = in->meta.pid;
        in->s.have_pid = 1;
    }
    return 0;
}

/* the top-level keys into the summary, as the ingest stores them */
static void take_meta(struct info *in)
{
    tt_kineto_meta *m = &in->meta;
    if (m->have_base)
        in->s.base_time_ns = m->base_time_ns;
    in->s.schema_version = m->schema_version;
    m->schema_version = NULL;
    if (m->have_rank) {
        in->s.rank = m->rank;
        in->s.have_rank = 1;
    }
    if (m->have_world) {
        in->s.world_size = m->world_size;
        in->s.have_world_size = 1;
    }
    tt_kineto_meta_release(m);
}

static int file_summary(const char *path, struct info *in)
{
    tt_trace_sink sink;
    tt_read_stats st;
    int rc;
    int64_t r;
    memset(in, 0, sizeof(*in));
    memset(&sink, 0, sizeof(sink));
    sink.ctx = in;
    sink.on_event = f_event;
    sink.on_et_node = f_node;
    sink.on_memrow = f_memrow;
    sink.on_meta = f_meta;
    rc = tt_read_trace(path, &sink, NULL, &st);
    take_meta(in);
    if (rc < 0) {
        info_release(in);
        return rc;
    }
    in->s.path = strdup(path);
    in->s.format = strdup(tt_format_name(st.format));
    if (!in->s.path || !in->s.format) {
        info_release(in);
        return tt__oom();
    }
    in->s.gzip = st.gzip;
    in->s.bytes = st.bytes;
    in->s.events = st.events;
    in->s.repaired = st.repaired;
    in->s.skipped = st.skipped;
    if (!in->s.have_rank && tt_rank_from_name(path, &r)) {
        in->s.rank = r;
        in->s.have_rank = 1;
    }
    finish(&in->s);
    return 0;
}

int tt_info_file_result(const char *path, const tt_info_options *opts, tt_info_result *res)
{
    struct info in;
    int rc;
    (void)opts;
    memset(res, 0, sizeof(*res));
    if ((rc = file_summary(path, &in)) < 0)
        return rc;
    if (!(res->traces = calloc(1, sizeof(*res->traces)))) {
        info_release(&in);
        return tt__oom();
    }
    take_summary(&in, &res->traces[0]);
    res->ntraces = 1;
    return 0;
}

/* ---- a directory of per-rank traces, each file streamed ---- */

/* the device most of the trace's GPU activities ran on (the lowest on a
 * tie), -1 without one */
static int64_t top_device(const struct i64map *m)
{
    int64_t best = -1;
    size_t i, n = 0;
    for (i = 0; i < m->cap; i++)
        if (m->used[i] && (m->v[i] > n || (m->v[i] == n && m->k[i] < best))) {
            best = m->k[i];
            n = m->v[i];
        }
    return best;
}

/* trace id (k + 1) of the directory into res and its row into r */
static int dir_trace(const char *path, int64_t id, tt_info_result *res, tt_info_ranks *r)
{
    struct info in;
    size_t ralloc = r->n; /* grows one by one: few traces */
    int rc;
    if ((rc = file_summary(path, &in)) < 0)
        return rc;
    in.s.trace_id = id;
    if (TT_ALLOC_GROW(r->rows, r->n + 1, ralloc) < 0) {
        info_release(&in);
        return tt__oom();
    }
    rc = tt__info_rank_row(&r->rows[r->n++], &in.s, top_device(&in.devn), (int64_t)in.nstepn,
                           in.devprops);
    if (rc == 0)
        rc = collect_one(res, &in);
    info_release(&in);
    return rc;
}

/* after the rank overview (rc: 1 written, 0 not, or an error): the traces'
 * summaries, "no traces" when there are none; JSON (jw): the document's
 * "traces", the document closed */
static int emit_traces(const tt_info_result *res, const tt_info_options *opts, FILE *out, int rc,
                       tt_jw *jw)
{
    size_t k;
    if (rc >= 0 && jw) {
        if (rc)
            tt_jw_nl(jw, 0); /* "traces" on the line after "ranks" */
        else
            tt_jw_obj(jw);
        tt_jw_karr(jw, "traces");
    }
    for (k = 0; rc >= 0 && k < res->ntraces; k++)
        rc = emit(&res->traces[k], opts, out, k == 0, jw);
    if (rc >= 0 && jw) {
        tt_jw_nl(jw, 0);
        tt_jw_end(jw);
        tt_jw_end(jw);
    } else if (rc >= 0 && !res->ntraces && (opts->version < 2 || opts->format == TT_FORMAT_TABLE))
        fputs("no traces\n", out);
    return rc;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* as a database of the directory's files (trace ids in the order of
 * tt_walk_traces), or of the one file dir names, prints it, without making
 * one */
static int info_dir(const char *dir, const tt_info_options *opts, FILE *out)
{
    tt_dir_walk w;
    tt_info_result res;
    tt_info_ranks r;
    tt_jw jw, *j;
    char *one[1];
    char **files = one;
    size_t k, n = 1;
    int rc = 0;
    memset(&res, 0, sizeof(res));
    memset(&r, 0, sizeof(r));
    memset(&w, 0, sizeof(w));
    one[0] = (char *)dir;
    if (is_dir(dir)) {
        if ((rc = tt_walk_traces(dir, &w)) == 0 && !w.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, dir, -1, "no trace files in this directory");
        files = w.files;
        n = w.nfiles;
    }
    for (k = 0; rc == 0 && k < n; k++)
        if (!opts->trace_id || opts->trace_id == (int64_t)k + 1)
            rc = dir_trace(files[k], (int64_t)k + 1, &res, &r);
    tt_dir_walk_free(&w);
    tt__info_ranks_sort(&r);
    j = rc == 0 ? json_begin(&jw, opts, out) : NULL;
    if (rc == 0)
        rc = print_ranks_of(&r, ranks_format(opts), out, j);
    rc = json_end(j, emit_traces(&res, opts, out, rc, j));
    if (rc >= 0 && opts->trace_id && !res.ntraces)
        rc = tt_error_set_at(TT_ENOTFOUND, dir, -1, "no trace with id %" PRId64, opts->trace_id);
    tt_info_ranks_free(&r);
    tt_info_result_free(&res);
    return rc < 0 ? rc : 0;
}

int tt_info_file(const char *path, const tt_info_options *opts, FILE *out)
{
    struct info in;
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    tt_info_result one;
    tt_jw jw, *j;
    int rc;
    if (!opts)
        opts = &def;
    if (is_dir(path) || opts->trace_id)
        return info_dir(path, opts, out); /* --trace on a file: as a database says it */
    if ((rc = file_summary(path, &in)) < 0)
        return rc;
    one.traces = &in.s;
    one.ntraces = 1;
    j = json_begin(&jw, opts, out);
    rc = json_end(j, emit_traces(&one, opts, out, 0, j));
    info_release(&in);
    return rc;
}

/* ---- a database: each trace's rows (tt__db_rows), no SQL of its own ---- */

/* what a trace's rows give besides the summary's own counts */
struct drows {
    struct info *in;
    tt_buf strs;          /* the strings' text, NUL after each */
    struct i64map sid;    /* string id -> offset in strs */
    struct i64map cats;   /* (cat id + 1) << 8 | ph -> events (0 << 8: no cat) */
    int64_t folded[2];    /* flows folded into runtime / GPU rows: 's', 'f' */
    int have_ac2g;        /* the string "ac2g", their category, is stored */
    struct i64map steps;  /* the names (ids) of ProfilerStep#% slices */
    tt_buf id[2];         /* a text pid and tid, NUL-terminated */
};

static const char *d_str(const struct drows *r, const tt__cell *c)
{
    size_t off;
    return c->type == TT_CELL_INT && tt__i64map_get(&r->sid, c->i, &off) ? r->strs.buf + off
                                                                         : NULL;
}

static int d_string(struct drows *r, const tt__cell *row, const char *text)
{
    const tt__cell *s = &row[TT_C_STR_S];
    size_t off = r->strs.len;
    tt_buf_add(&r->strs, text + s->i, s->len);
    tt_buf_addch(&r->strs, '\0');
    if (r->strs.oom || tt__i64map_put(&r->sid, row[TT_C_STR_ID].i, off) < 0)
        return TT_ENOMEM;
    if (s->len == 4 && !memcmp(text + s->i, "ac2g", 4))
        r->have_ac2g = 1;
    return 0;
}

/* one event of the events view: its phase (NULL: '?') and category */
static int d_cat(struct drows *r, const tt__cell *ph, const char *text, const tt__cell *cat)
{
    unsigned char p = ph->type == TT_CELL_TEXT ? (ph->len ? (unsigned char)text[ph->i] : 0) : '?';
    int64_t key = (cat->type == TT_CELL_INT ? (cat->i + 1) * 256 : 0) + p;
    size_t n = 0;
    tt__i64map_get(&r->cats, key, &n);
    return tt__i64map_put(&r->cats, key, n + 1);
}

/* a pid or tid cell as the file reader's id: NULL absent, text or number */
static void d_id(tt_buf *b, const tt__cell *c, const char *text, tt_id *id)
{
    memset(id, 0, sizeof(*id));
    id->present = c->type != TT_CELL_NULL;
    id->num = c->type == TT_CELL_INT ? c->i : 0;
    if (c->type == TT_CELL_TEXT) {
        tt_buf_reset(b);
        tt_buf_add(b, text + c->i, c->len);
        tt_buf_addch(b, '\0');
        id->is_str = 1;
        id->str = b->oom ? "" : b->buf;
    }
}

static int d_slice(struct drows *r, const tt__cell *row, const char *text)
{
    tt_info_summary *s = &r->in->s;
    const char *cat = d_str(r, &row[TT_C_SL_CAT]), *name;
    tt_id pid, tid;
    d_id(&r->id[0], &row[TT_C_SL_PID], text, &pid);
    d_id(&r->id[1], &row[TT_C_SL_TID], text, &tid);
    if (r->id[0].oom || r->id[1].oom || add_thread(r->in, &pid, &tid) < 0)
        return TT_ENOMEM;
    if (row[TT_C_SL_INPUT_DIMS].type != TT_CELL_NULL)
        s->shapes++;
    if (row[TT_C_SL_RF_ID].type == TT_CELL_INT && row[TT_C_SL_RF_ID].i != 0)
        s->rf_ids++;
    if (cat && !strcmp(cat, "python_function"))
        s->python_functions++;
    if ((name = d_str(r, &row[TT_C_SL_NAME])) && step_name(name) &&
        tt__i64map_put(&r->steps, row[TT_C_SL_NAME].i, 1) < 0)
        return TT_ENOMEM;
    return d_cat(r, &row[TT_C_SL_PH], text, &row[TT_C_SL_CAT]);
}

/* a runtime call or GPU activity: an 'X' event, and the flow folded into
 * it (1: its start 's', else its end 'f'), as the flows view gives it back */
static int d_launch(struct drows *r, const tt__cell *cat, const tt__cell *flow)
{
    static const tt__cell x = { TT_CELL_TEXT, 0, 1 };
    if (flow->type == TT_CELL_INT && flow->i != 0) {
        r->folded[flow->i == 1 ? 0 : 1]++;
        r->in->s.flows++;
    }
    return d_cat(r, &x, "X", cat);
}

static int d_gpu(struct drows *r, const tt__cell *row, const char *text)
{
    const tt__cell *dev = &row[TT_C_GPU_DEVICE], *str = &row[TT_C_GPU_STREAM];
    const tt__cell *kind = &row[TT_C_GPU_KIND];
    size_t n = 0;
    if (dev->type == TT_CELL_INT && str->type == TT_CELL_INT && add_ds(r->in, dev->i, str->i, 1) < 0)
        return TT_ENOMEM;
    if (dev->type == TT_CELL_INT) { /* the rank overview's device */
        tt__i64map_get(&r->in->devn, dev->i, &n);
        if (tt__i64map_put(&r->in->devn, dev->i, n + 1) < 0)
            return TT_ENOMEM;
    }
    if (kind->type == TT_CELL_TEXT && kind->len == 6 && !memcmp(text + kind->i, "kernel", 6))
        r->in->s.gpu_kernels++;
    return d_launch(r, &row[TT_C_GPU_CAT], &row[TT_C_GPU_FLOW]);
}

static int d_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                  const char *text)
{
    struct drows *r = ctx;
    tt_info_summary *s = &r->in->s;
    int i, rc = 0;
    for (i = 0; rc == 0 && i < nrows; i++) {
        const tt__cell *row = cells + (size_t)i * (size_t)ncols;
        switch (table) {
        case TT_ROWS_STR: rc = d_string(r, row, text); break;
        case TT_ROWS_SLICE: rc = d_slice(r, row, text); break;
        case TT_ROWS_RUNTIME: rc = d_launch(r, &row[TT_C_RT_CAT], &row[TT_C_RT_FLOW]); break;
        case TT_ROWS_GPU: rc = d_gpu(r, row, text); break;
        case TT_ROWS_MEMORY:
            s->memory_events++;
            rc = d_cat(r, &row[TT_C_MEM_PH], text, &row[TT_C_MEM_CAT]);
            break;
        case TT_ROWS_FLOW:
            s->flows++;
            rc = d_cat(r, &row[TT_C_FL_PH], text, &row[TT_C_FL_CAT]);
            break;
        case TT_ROWS_INSTANT: rc = d_cat(r, &row[TT_C_IN_PH], text, &row[TT_C_IN_CAT]); break;
        case TT_ROWS_META: rc = d_cat(r, &row[TT_C_MD_PH], text, &row[TT_C_MD_CAT]); break;
        case TT_ROWS_ET: s->et_nodes++; break;
        case TT_ROWS_MEMTL: s->memtl_rows++; break;
        default: break;
        }
    }
    return rc < 0 ? tt__oom() : rc;
}

/* the categories counted by id, by their text */
static int d_finish(struct drows *r)
{
    size_t i;
    for (i = 0; i < r->cats.cap; i++) {
        int64_t key = r->cats.k[i];
        tt__cell cat = { TT_CELL_INT, key / 256 - 1, 0 };
        if (r->cats.used[i] && add_cat(r->in, (char)(key % 256), key < 256 ? NULL : d_str(r, &cat),
                                       (int64_t)r->cats.v[i]) < 0)
            return TT_ENOMEM;
    }
    for (i = 0; i < 2; i++)
        if (r->folded[i] &&
            add_cat(r->in, i ? 'f' : 's', r->have_ac2g ? "ac2g" : NULL, r->folded[i]) < 0)
            return TT_ENOMEM;
    r->in->db_steps = (int64_t)r->steps.n;
    return 0;
}

static void d_release(struct drows *r)
{
    tt_buf_release(&r->strs);
    tt_buf_release(&r->id[0]);
    tt_buf_release(&r->id[1]);
    tt__i64map_free(&r->sid);
    tt__i64map_free(&r->cats);
    tt__i64map_free(&r->steps);
}

/* the deviceProperties key of a trace's top-level keys (minified) into
 * in->devprops, to name the rank's GPU */
static int d_devprops(struct info *in, const char *meta)
{
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    tt_buf b = TT_BUF_INIT;
    const char *k;
    size_t kl;
    int rc = 0;
    if (!meta)
        return 0;
    tt_jp_init(&jp, "", meta, 0, meta, strlen(meta));
    if (tt_jp_peek(&jp) == TT_JT_OBJECT && tt_jp_object_begin(&jp) == 0) {
        while (rc == 0 && !in->devprops && tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
            tt_buf_reset(&b);
            if (tt_jp_minify(&jp, &b) < 0)
                break;
            if (kl == 16 && !memcmp(k, "deviceProperties", 16) &&
                (b.oom || !(in->devprops = strndup(b.buf, b.len))))
                rc = TT_ENOMEM;
        }
    }
    tt_buf_release(&b);
    tt_arena_release(&a);
    return rc;
}

/* the traces table's columns into the summary */
static int d_trace_cols(struct info *in, const tt__db_trace *t)
{
    tt_info_summary *s = &in->s;
    s->trace_id = t->id;
    s->path = strdup(t->path);
    s->format = strdup(tt_format_name(t->format));
    s->schema_version = t->schema_version ? strdup(t->schema_version) : NULL;
    if (!s->path || !s->format || (t->schema_version && !s->schema_version))
        return TT_ENOMEM;
    s->gzip = t->gzip;
    s->bytes = t->bytes;
    s->have_rank = t->have_rank;
    s->rank = t->have_rank ? t->rank : 0;
    s->have_world_size = t->have_world;
    s->world_size = t->have_world ? t->world_size : 0;
    s->have_pid = t->have_pid;
    s->pid = t->have_pid ? t->pid : 0;
    s->base_time_ns = t->base_time_ns;
    if ((s->have_span = t->start_ns != INT64_MIN)) {
        s->start_ns = t->start_ns;
        s->end_ns = t->end_ns == INT64_MIN ? 0 : t->end_ns;
    }
    s->events = t->events;
    s->truncated = t->truncated;
    s->repaired = t->repaired;
    s->skipped = t->skipped;
    return 0;
}

/* the summary of trace t of db into in (memset here; the caller releases it) */
static int db_summary(tt_db *db, const tt__db_trace *t, struct info *in)
{
    struct drows r;
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    int rc;
    memset(in, 0, sizeof(*in));
    memset(&r, 0, sizeof(r));
    r.in = in;
    tt_buf_init(&r.strs);
    tt_buf_init(&r.id[0]);
    tt_buf_init(&r.id[1]);
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &r;
    sink.rows = d_rows;
    if (d_trace_cols(in, t) < 0) {
        d_release(&r);
        return tt__oom();
    }
    rc = tt__db_rows(db, t->id, &sink, TT_ROWS_NO_ARGS, &res);
    if (rc == 0) {
        if (d_finish(&r) < 0 || d_devprops(in, res.metadata) < 0)
            rc = tt__oom();
        free(res.metadata);
    }
    d_release(&r);
    if (rc == 0)
        finish(&in->s);
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}

/* the summaries of db's traces (trace_id: only that one) into res, and the
 * rank overview's rows into ranks (each NULL when not wanted) */
static int db_pass(tt_db *db, int64_t trace_id, tt_info_result *res, tt_info_ranks *ranks)
{
    tt__db_trace *tr = NULL;
    size_t ntr = 0, i, ralloc = 0;
    int rc;
    if (res)
        memset(res, 0, sizeof(*res));
    if (ranks)
        memset(ranks, 0, sizeof(*ranks));
    if ((rc = tt__db_traces(db, &tr, &ntr)) < 0)
        return rc;
    for (i = 0; rc == 0 && i < ntr; i++) {
        const tt__db_trace *t = &tr[i];
        struct info in;
        if (trace_id && t->id != trace_id)
            continue;
        rc = db_summary(db, t, &in);
        if (rc == 0 && ranks) {
            if (TT_ALLOC_GROW(ranks->rows, ranks->n + 1, ralloc) < 0) {
                rc = tt__oom();
            } else {
                tt_info_rank *x = &ranks->rows[ranks->n++];
                rc = tt__info_rank_row(x, &in.s, top_device(&in.devn), in.db_steps, in.devprops);
                x->have_span = t->start_ns != INT64_MIN && t->end_ns != INT64_MIN;
            }
        }
        if (rc == 0 && res)
            rc = collect_one(res, &in);
        info_release(&in);
    }
    tt__db_traces_free(tr, ntr);
    if (ranks)
        tt__info_ranks_sort(ranks);
    return rc;
}

/* the overview of every trace of db, from their rows; emptied on failure */
int tt_info_ranks_db(tt_db *db, tt_info_ranks *out)
{
    int rc = db_pass(db, 0, NULL, out);
    if (rc < 0)
        tt_info_ranks_free(out);
    return rc;
}

static int none_found(tt_db *db, const tt_info_options *opts, size_t n)
{
    if (opts->trace_id && n == 0)
        return tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no trace with id %" PRId64,
                               opts->trace_id);
    return 0;
}

int tt_info_db_result(tt_db *db, const tt_info_options *opts, tt_info_result *res)
{
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    int rc;
    if (!opts)
        opts = &def;
    rc = db_pass(db, opts->trace_id, res, NULL);
    if (rc == 0)
        rc = none_found(db, opts, res->ntraces);
    if (rc < 0)
        tt_info_result_free(res);
    return rc;
}

int tt_info_db(tt_db *db, const tt_info_options *opts, FILE *out)
{
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    tt_info_result res;
    tt_info_ranks r;
    tt_jw jw, *j;
    int rc, fmt;
    if (!opts)
        opts = &def;
    fmt = ranks_format(opts);
    rc = db_pass(db, opts->trace_id, &res, fmt >= 0 ? &r : NULL);
    j = rc == 0 ? json_begin(&jw, opts, out) : NULL;
    if (rc == 0 && fmt >= 0)
        rc = print_ranks_of(&r, fmt, out, j);
    rc = json_end(j, emit_traces(&res, opts, out, rc, j));
    if (rc >= 0)
        rc = none_found(db, opts, res.ntraces);
    if (fmt >= 0)
        tt_info_ranks_free(&r);
    tt_info_result_free(&res);
    return rc < 0 ? rc : 0;
}

/* ---- for summaries (analyze/info/info_summary.c) ---- */

int tt__info_db_trace(tt_db *db, int64_t id, tt_info_summary *s, tt_info_rank *row)
{
    tt__db_trace *tr = NULL;
    size_t ntr = 0, i;
    int rc = tt__db_traces(db, &tr, &ntr);
    for (i = 0; rc == 0 && i < ntr && tr[i].id != id; i++)
        ;
    if (rc == 0 && i == ntr)
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no trace with id %" PRId64, id);
    if (rc == 0) {
        struct info in;
        if ((rc = db_summary(db, &tr[i], &in)) == 0) {
            rc = tt__info_rank_row(row, &in.s, top_device(&in.devn), in.db_steps, in.devprops);
            row->have_span = tr[i].start_ns != INT64_MIN && tr[i].end_ns != INT64_MIN;
            take_summary(&in, s);
        }
        info_release(&in);
    }
    tt__db_traces_free(tr, ntr);
    return rc;
}

int tt__info_print(const tt_info_result *res, const tt_info_ranks *r, const tt_info_options *opts,
                   FILE *out)
{
    tt_jw jw, *j = json_begin(&jw, opts, out);
    int fmt = ranks_format(opts);
    int rc = fmt >= 0 ? print_ranks_of(r, fmt, out, j) : 0;
    rc = json_end(j, emit_traces(res, opts, out, rc, j));
    return rc < 0 ? rc : 0;
}
