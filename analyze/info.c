/*
 * analyze/info.c - `tracetool info`: a per-trace summary, computed either
 * from an ingested database (SQL over the stored rows) or straight from a
 * trace file (streaming, nothing stored). Both paths fill the same struct
 * and share one printer, so the two outputs agree by construction of the
 * format, and tests compare them against an independent count.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/db_internal.h"

#include <inttypes.h>

struct catcount {
    char ph;
    char *cat; /* NULL when absent */
    int64_t n;
};

struct devstream {
    int64_t device, stream, n;
};

struct info {
    char *label;
    int64_t trace_id;
    char *format;
    char *schema_version;
    int gzip, truncated;
    int64_t bytes;
    int have_rank, have_world, have_pid, have_span;
    int64_t rank, world, pid, base_time_ns, start_ns, end_ns, events;
    struct catcount *cats;
    size_t ncats, acats;
    struct devstream *ds;
    size_t nds, ads;
    int64_t cpu_threads, shapes, memory, rf_ids, flows, et_nodes, memtl_rows,
        kernels, python, repaired, skipped;
    /* file mode: thread set */
    tt_id *thr;
    size_t nthr, athr;
};

static void info_release(struct info *in)
{
    size_t i;
    free(in->label);
    free(in->format);
    free(in->schema_version);
    for (i = 0; i < in->ncats; i++)
        free(in->cats[i].cat);
    free(in->cats);
    free(in->ds);
    for (i = 0; i < in->nthr; i++) {
        if (in->thr[2 * i].is_str)
            free((char *)in->thr[2 * i].str);
        if (in->thr[2 * i + 1].is_str)
            free((char *)in->thr[2 * i + 1].str);
    }
    free(in->thr);
    memset(in, 0, sizeof(*in));
}

static int add_cat(struct info *in, char ph, const char *cat, int64_t n)
{
    size_t i;
    for (i = 0; i < in->ncats; i++) {
        struct catcount *c = &in->cats[i];
        if (c->ph == ph && ((!c->cat && !cat) || (c->cat && cat && !strcmp(c->cat, cat)))) {
            c->n += n;
            return 0;
        }
    }
    if (TT_ALLOC_GROW(in->cats, in->ncats + 1, in->acats) < 0)
        return TT_ENOMEM;
    in->cats[in->ncats].ph = ph;
    in->cats[in->ncats].cat = cat ? strdup(cat) : NULL;
    in->cats[in->ncats].n = n;
    if (cat && !in->cats[in->ncats].cat)
        return TT_ENOMEM;
    in->ncats++;
    return 0;
}

static int add_ds(struct info *in, int64_t dev, int64_t stream, int64_t n)
{
    size_t i;
    for (i = 0; i < in->nds; i++) {
        if (in->ds[i].device == dev && in->ds[i].stream == stream) {
            in->ds[i].n += n;
            return 0;
        }
    }
    if (TT_ALLOC_GROW(in->ds, in->nds + 1, in->ads) < 0)
        return TT_ENOMEM;
    in->ds[in->nds].device = dev;
    in->ds[in->nds].stream = stream;
    in->ds[in->nds].n = n;
    in->nds++;
    return 0;
}

static int cmp_cat(const void *a, const void *b)
{
    const struct catcount *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    if (x->ph != y->ph)
        return x->ph < y->ph ? -1 : 1;
    return strcmp(x->cat ? x->cat : "", y->cat ? y->cat : "");
}

static int cmp_ds(const void *a, const void *b)
{
    const struct devstream *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static void json_str(FILE *out, const char *s)
{
    tt_buf b = TT_BUF_INIT;
    if (!s) {
        fputs("null", out);
        return;
    }
    tt_buf_add_json_string(&b, s, strlen(s));
    fputs(b.buf, out);
    tt_buf_release(&b);
}

static void print_json(const struct info *in, FILE *out, int first)
{
    size_t i;
    if (!first)
        fputs(",\n", out);
    fputs("  {\"trace\": ", out);
    json_str(out, in->label);
    if (in->trace_id)
        fprintf(out, ", \"id\": %" PRId64, in->trace_id);
    fputs(", \"format\": ", out);
    json_str(out, in->format);
    fputs(", \"schema_version\": ", out);
    json_str(out, in->schema_version);
    fprintf(out, ", \"gzip\": %s, \"bytes\": %" PRId64 ", \"truncated\": %s",
            in->gzip ? "true" : "false", in->bytes, in->truncated ? "true" : "false");
    if (in->have_rank)
        fprintf(out, ", \"rank\": %" PRId64, in->rank);
    else
        fputs(", \"rank\": null", out);
    if (in->have_world)
        fprintf(out, ", \"world_size\": %" PRId64, in->world);
    else
        fputs(", \"world_size\": null", out);
    if (in->have_pid)
        fprintf(out, ", \"pid\": %" PRId64, in->pid);
    else
        fputs(", \"pid\": null", out);
    fprintf(out, ", \"base_time_ns\": %" PRId64, in->base_time_ns);
    if (in->have_span)
        fprintf(out, ", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
                     ", \"duration_ns\": %" PRId64,
                in->start_ns, in->end_ns, in->end_ns - in->start_ns);
    fprintf(out, ", \"events\": %" PRId64 ",\n   \"categories\": [", in->events);
    for (i = 0; i < in->ncats; i++) {
        char ph[2] = { in->cats[i].ph, 0 };
        fprintf(out, "%s{\"ph\": ", i ? ", " : "");
        json_str(out, ph);
        fputs(", \"cat\": ", out);
        json_str(out, in->cats[i].cat);
        fprintf(out, ", \"count\": %" PRId64 "}", in->cats[i].n);
    }
    fputs("],\n   \"gpu_streams\": [", out);
    for (i = 0; i < in->nds; i++)
        fprintf(out, "%s{\"device\": %" PRId64 ", \"stream\": %" PRId64
                     ", \"activities\": %" PRId64 "}",
                i ? ", " : "", in->ds[i].device, in->ds[i].stream, in->ds[i].n);
    fprintf(out, "],\n   \"cpu_threads\": %" PRId64 ", \"features\": {\"shapes\": %" PRId64
                 ", \"memory_events\": %" PRId64 ", \"record_function_ids\": %" PRId64
                 ", \"flows\": %" PRId64 ", \"gpu_kernels\": %" PRId64
                 ", \"python_functions\": %" PRId64 ", \"et_nodes\": %" PRId64
                 ", \"memory_timeline_rows\": %" PRId64 "}, \"repaired\": %" PRId64
                 ", \"skipped\": %" PRId64 "}",
            in->cpu_threads, in->shapes, in->memory, in->rf_ids, in->flows, in->kernels,
            in->python, in->et_nodes, in->memtl_rows, in->repaired, in->skipped);
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

static void print_text(const struct info *in, FILE *out)
{
    size_t i;
    char b[32];
    int first = 1;
    if (in->trace_id)
        fprintf(out, "trace %" PRId64 ": %s\n", in->trace_id, in->label);
    else
        fprintf(out, "trace: %s\n", in->label);
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
    if (in->have_world)
        fprintf(out, " of %" PRId64, in->world);
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
    if (in->nds) {
        int64_t last = INT64_MIN;
        size_t ndev = 0;
        for (i = 0; i < in->nds; i++) {
            if (in->ds[i].device != last)
                ndev++;
            last = in->ds[i].device;
        }
        fprintf(out, "  gpu devices:  %zu\n", ndev);
        for (i = 0; i < in->nds; i++)
            fprintf(out, "    device %" PRId64 " stream %" PRId64 ": %" PRId64
                         " activities\n",
                    in->ds[i].device, in->ds[i].stream, in->ds[i].n);
    } else {
        fputs("  gpu devices:  none\n", out);
    }
    fputs("  features:     ", out);
    feature(out, &first, "shapes", in->shapes);
    feature(out, &first, "memory events", in->memory);
    feature(out, &first, "record-function ids", in->rf_ids);
    feature(out, &first, "flows", in->flows);
    feature(out, &first, "kernels", in->kernels);
    feature(out, &first, "python stacks", in->python);
    feature(out, &first, "ET", in->et_nodes);
    if (in->memtl_rows)
        feature(out, &first, "memory timeline", in->memtl_rows);
    fputc('\n', out);
    if (in->repaired || in->skipped)
        fprintf(out, "  repaired:     %" PRId64 " values, skipped: %" PRId64 " elements\n",
                in->repaired, in->skipped);
    if (in->ncats) {
        fprintf(out, "  %10s  %-2s  %s\n", "count", "ph", "category");
        for (i = 0; i < in->ncats; i++)
            fprintf(out, "  %10" PRId64 "  %-2c  %s\n", in->cats[i].n, in->cats[i].ph,
                    in->cats[i].cat ? in->cats[i].cat : "(none)");
    }
}

static void emit(struct info *in, const tt_info_options *opts, FILE *out, int first)
{
    if (in->ncats)
        qsort(in->cats, in->ncats, sizeof(*in->cats), cmp_cat);
    if (in->nds)
        qsort(in->ds, in->nds, sizeof(*in->ds), cmp_ds);
    if (opts->json)
        print_json(in, out, first);
    else {
        if (!first)
            fputc('\n', out);
        print_text(in, out);
    }
}

/* ---- database ---- */

static int64_t q1(tt_db *db, const char *sql, int64_t id)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static char *col_strdup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? strdup((const char *)s) : NULL;
}

static int info_from_db(tt_db *db, sqlite3_stmt *tr, struct info *in)
{
    sqlite3_stmt *st;
    int rc;
    in->trace_id = sqlite3_column_int64(tr, 0);
    in->label = col_strdup(tr, 1);
    in->format = col_strdup(tr, 2);
    in->schema_version = col_strdup(tr, 3);
    in->gzip = sqlite3_column_int(tr, 4);
    in->bytes = sqlite3_column_int64(tr, 5);
    if ((in->have_rank = sqlite3_column_type(tr, 6) != SQLITE_NULL))
        in->rank = sqlite3_column_int64(tr, 6);
    if ((in->have_world = sqlite3_column_type(tr, 7) != SQLITE_NULL))
        in->world = sqlite3_column_int64(tr, 7);
    if ((in->have_pid = sqlite3_column_type(tr, 8) != SQLITE_NULL))
        in->pid = sqlite3_column_int64(tr, 8);
    in->base_time_ns = sqlite3_column_int64(tr, 9);
    if ((in->have_span = sqlite3_column_type(tr, 10) != SQLITE_NULL)) {
        in->start_ns = sqlite3_column_int64(tr, 10);
        in->end_ns = sqlite3_column_int64(tr, 11);
    }
    in->events = sqlite3_column_int64(tr, 12);
    in->truncated = sqlite3_column_int(tr, 13);

    if (tt_db_prepare(db, &st,
                      "SELECT e.ph, c.s, count(*) FROM events AS e LEFT JOIN strings AS c"
                      " ON c.id = e.cat WHERE e.trace_id = ?1 GROUP BY e.ph, e.cat") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, in->trace_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *ph = (const char *)sqlite3_column_text(st, 0);
        if (add_cat(in, ph ? ph[0] : '?', (const char *)sqlite3_column_text(st, 1),
                    sqlite3_column_int64(st, 2)) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return tt_db_error(db, "cannot count events");
    if (tt_db_prepare(db, &st,
                      "SELECT device, stream, count(*) FROM gpu_ops WHERE trace_id = ?1"
                      " AND device IS NOT NULL AND stream IS NOT NULL GROUP BY 1, 2") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, in->trace_id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        add_ds(in, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
               sqlite3_column_int64(st, 2));
    sqlite3_finalize(st);
    in->cpu_threads = q1(db, "SELECT count(*) FROM (SELECT DISTINCT pid, tid FROM slices"
                             " WHERE trace_id = ?1)", in->trace_id);
    in->shapes = q1(db, "SELECT count(*) FROM slices WHERE trace_id = ?1 AND"
                        " input_dims IS NOT NULL", in->trace_id);
    in->memory = q1(db, "SELECT count(*) FROM memory WHERE trace_id = ?1", in->trace_id);
    in->rf_ids = q1(db, "SELECT count(*) FROM slices WHERE trace_id = ?1 AND rf_id <> 0",
                    in->trace_id);
    in->flows = q1(db, "SELECT count(*) FROM flows WHERE trace_id = ?1", in->trace_id);
    in->kernels = q1(db, "SELECT count(*) FROM gpu_ops WHERE trace_id = ?1 AND"
                         " kind = 'kernel'", in->trace_id);
    in->python = q1(db, "SELECT count(*) FROM slices AS s JOIN strings AS c ON c.id = s.cat"
                        " WHERE s.trace_id = ?1 AND c.s = 'python_function'", in->trace_id);
    in->et_nodes = q1(db, "SELECT count(*) FROM et_nodes WHERE trace_id = ?1", in->trace_id);
    in->memtl_rows = q1(db, "SELECT count(*) FROM memory_timeline WHERE trace_id = ?1",
                        in->trace_id);
    in->repaired = q1(db, "SELECT coalesce(sum(count), 0) FROM import_issues WHERE"
                          " trace_id = ?1 AND kind = 'repaired'", in->trace_id);
    in->skipped = q1(db, "SELECT coalesce(sum(count), 0) FROM import_issues WHERE"
                         " trace_id = ?1 AND kind LIKE 'skipped%'", in->trace_id);
    return 0;
}

int tt_info_db(tt_db *db, const tt_info_options *opts, FILE *out)
{
    sqlite3_stmt *tr;
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    int rc, n = 0;
    if (!opts)
        opts = &def;
    if (tt_db_prepare(db, &tr,
                      "SELECT id, path, format, schema_version, gzip, bytes, rank,"
                      " world_size, pid, base_time_ns, start_ns, end_ns, events, truncated"
                      " FROM traces WHERE ?1 = 0 OR id = ?1 ORDER BY id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, opts->trace_id);
    if (opts->json)
        fputs("{\"traces\": [\n", out);
    while ((rc = sqlite3_step(tr)) == SQLITE_ROW) {
        struct info in;
        memset(&in, 0, sizeof(in));
        if ((rc = info_from_db(db, tr, &in)) < 0) {
            info_release(&in);
            sqlite3_finalize(tr);
            return rc;
        }
        emit(&in, opts, out, n == 0);
        info_release(&in);
        n++;
    }
    sqlite3_finalize(tr);
    if (rc != SQLITE_DONE)
        return tt_db_error(db, "cannot read traces");
    if (opts->json)
        fputs("\n]}\n", out);
    else if (n == 0)
        fputs("no traces\n", out);
    if (opts->trace_id && n == 0)
        return tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no trace with id %" PRId64,
                               opts->trace_id);
    return 0;
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
    size_t i;
    for (i = in->nthr; i > 0; i--) {
        if (id_same(&in->thr[2 * (i - 1)], pid) && id_same(&in->thr[2 * (i - 1) + 1], tid))
            return 0;
    }
    if (TT_ALLOC_GROW(in->thr, 2 * (in->nthr + 1), in->athr) < 0)
        return TT_ENOMEM;
    in->thr[2 * in->nthr] = *pid;
    in->thr[2 * in->nthr + 1] = *tid;
    if (pid->is_str && !(in->thr[2 * in->nthr].str = strdup(pid->str)))
        return TT_ENOMEM;
    if (tid->is_str && !(in->thr[2 * in->nthr + 1].str = strdup(tid->str)))
        return TT_ENOMEM;
    in->nthr++;
    in->cpu_threads++;
    return 0;
}

static int f_event(void *ctx, const tt_event *ev)
{
    struct info *in = ctx;
    if (!ev->ph)
        return 0;
    if (ev->ph != 'E' && add_cat(in, ev->ph, ev->cat, 1) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (ev->has_ts && ev->ph != 'M') {
        int64_t end = ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
        if (!in->have_span) {
            in->start_ns = ev->ts_ns;
            in->end_ns = end;
            in->have_span = 1;
        }
        if (ev->ts_ns < in->start_ns)
            in->start_ns = ev->ts_ns;
        if (end > in->end_ns)
            in->end_ns = end;
    }
    switch (ev->ph) {
    case 'X':
    case 'B': {
        int c = tt_classify_cat(ev->cat);
        if (c == TT_XC_SLICE) {
            if (add_thread(in, &ev->pid, &ev->tid) < 0)
                return tt_error_set(TT_ENOMEM, "out of memory");
            if (ev->input_dims)
                in->shapes++;
            if ((ev->have & TT_A_RF_ID) && ev->rf_id != 0)
                in->rf_ids++;
            if (ev->cat && !strcmp(ev->cat, "python_function"))
                in->python++;
            if (!in->have_pid && ev->cat && !ev->pid.is_str && ev->pid.present &&
                (!strcmp(ev->cat, "cpu_op") || !strcmp(ev->cat, "Operator"))) {
                in->pid = ev->pid.num;
                in->have_pid = 1;
            }
        } else if (c != TT_XC_RUNTIME) {
            int64_t dev = (ev->have & TT_A_DEVICE) ? ev->device : ev->pid.num;
            int64_t str = (ev->have & TT_A_STREAM) ? ev->stream : ev->tid.num;
            if (((ev->have & TT_A_DEVICE) || (ev->pid.present && !ev->pid.is_str)) &&
                ((ev->have & TT_A_STREAM) || (ev->tid.present && !ev->tid.is_str)))
                add_ds(in, dev, str, 1);
            if (c == TT_XC_KERNEL)
                in->kernels++;
        }
        break;
    }
    case 'i':
    case 'I':
        if (!strcmp(ev->name, "[memory]") || !strcmp(ev->name, "[OutOfMemory]"))
            in->memory++;
        break;
    case 's':
    case 'f':
    case 't':
        in->flows++;
        break;
    case 'M':
        if (ev->arg_labels && !strcmp(ev->arg_labels, "CPU") && ev->pid.present &&
            !ev->pid.is_str) {
            in->pid = ev->pid.num;
            in->have_pid = 1;
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
    in->et_nodes++;
    return 0;
}

static int f_memrow(void *ctx, const tt_memrow *m)
{
    struct info *in = ctx;
    if (!in->have_span || m->ts < in->start_ns)
        in->start_ns = m->ts;
    if (!in->have_span || m->ts > in->end_ns)
        in->end_ns = m->ts;
    in->have_span = 1;
    in->memtl_rows++;
    return 0;
}

static int f_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct info *in = ctx;
    int64_t v;
    if (!strcmp(key, "baseTimeNanoseconds") && tt_parse_i64_public(json, len, &v) == 0)
        in->base_time_ns = v;
    else if (!strcmp(key, "schemaVersion") || !strcmp(key, "schema")) {
        free(in->schema_version);
        if (len >= 2 && json[0] == '"')
            in->schema_version = strndup(json + 1, len - 2);
        else
            in->schema_version = strndup(json, len);
    } else if (!strcmp(key, "pid") && tt_parse_i64_public(json, len, &v) == 0) {
        in->pid = v;
        in->have_pid = 1;
    } else if (!strcmp(key, "distributedInfo")) {
        const char *r = strstr(json, "\"rank\":");
        const char *w = strstr(json, "\"world_size\":");
        if (r) {
            char *e;
            long long x = strtoll(r + 7, &e, 10);
            if (e != r + 7) {
                in->rank = x;
                in->have_rank = 1;
            }
        }
        if (w) {
            char *e;
            long long x = strtoll(w + 13, &e, 10);
            if (e != w + 13) {
                in->world = x;
                in->have_world = 1;
            }
        }
    }
    return 0;
}

int tt_info_file(const char *path, const tt_info_options *opts, FILE *out)
{
    struct info in;
    tt_trace_sink sink;
    tt_read_stats st;
    tt_info_options def = TT_INFO_OPTIONS_INIT;
    int rc;
    int64_t r;
    if (!opts)
        opts = &def;
    memset(&in, 0, sizeof(in));
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &in;
    sink.on_event = f_event;
    sink.on_et_node = f_node;
    sink.on_memrow = f_memrow;
    sink.on_meta = f_meta;
    rc = tt_read_trace(path, &sink, NULL, &st);
    if (rc < 0) {
        info_release(&in);
        return rc;
    }
    in.label = strdup(path);
    in.format = strdup(tt_format_name(st.format));
    in.gzip = st.gzip;
    in.bytes = st.bytes;
    in.events = st.events;
    in.repaired = st.repaired;
    in.skipped = st.skipped;
    if (!in.have_rank && tt_rank_from_name(path, &r)) {
        in.rank = r;
        in.have_rank = 1;
    }
    if (opts->json)
        fputs("{\"traces\": [\n", out);
    emit(&in, opts, out, 1);
    if (opts->json)
        fputs("\n]}\n", out);
    info_release(&in);
    return 0;
}
