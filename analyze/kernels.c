/*
 * analyze/kernels.c - `tracetool kernels`: GPU kernel and memory-operation
 * summaries in the shape of Nsight Systems' cuda_gpu_kern_sum /
 * cuda_gpu_mem_time_sum (Time %, Total, Instances, Avg, Med, Min, Max,
 * StdDev, Name), from the gpu_ops table.
 *
 * Two passes over SQL, so memory stays bounded whatever the trace size: the
 * first aggregates count/sum/min/max/sum of squares per group; the second
 * streams each group's durations in sorted order and picks the median. Each
 * summary is computed into a tt_kern_summary (tt_kernels_db_result returns
 * them) and printed through the table writer (tracetool/table.h).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "analyze/kernels_state.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <math.h>

static const char *group_expr(int by, int memory)
{
    if (memory)
        return "g.kind || ' ' || coalesce(g.copy_kind, '?')";
    switch (by) {
    case TT_KERN_BY_LAUNCH:
        return "n.s || ' grid(' || coalesce(g.grid_x, '?') || ',' || coalesce(g.grid_y, '?') ||"
               " ',' || coalesce(g.grid_z, '?') || ') block(' || coalesce(g.block_x, '?') || ',' ||"
               " coalesce(g.block_y, '?') || ',' || coalesce(g.block_z, '?') || ')'";
    case TT_KERN_BY_STREAM:
        return "'device ' || coalesce(g.device, '?') || ' stream ' || coalesce(g.stream, '?')";
    case TT_KERN_BY_OP:
        return "coalesce((SELECT os.s FROM slices AS o JOIN strings AS os ON os.id = o.name"
               " WHERE o.id = g.op_id), '[no CPU op]')";
    default:
        return "n.s";
    }
}

static void summary_release(tt_kern_summary *s)
{
    size_t i;
    for (i = 0; i < s->nrows; i++)
        free(s->rows[i].name);
    free(s->rows);
    free(s->path);
    memset(s, 0, sizeof(*s));
}

static int prepare_groups(tt_db *db, sqlite3_stmt **st, int by, int memory, int medians,
                          int64_t trace)
{
    tt_buf sql = TT_BUF_INIT;
    const char *kinds = memory ? "('memcpy', 'memset')" : "('kernel')";
    if (medians)
        tt_buf_addf(&sql,
                    "SELECT %s AS grp, g.dur FROM gpu_ops AS g JOIN strings AS n ON n.id = g.name"
                    " WHERE g.trace_id = ?1 AND g.kind IN %s AND g.dur IS NOT NULL"
                    " ORDER BY grp, g.dur",
                    group_expr(by, memory), kinds);
    else
        tt_buf_addf(&sql,
                    "SELECT %s AS grp, count(*), tt_satsum(g.dur), min(g.dur), max(g.dur),"
                    " sum(CAST(g.dur AS REAL) * g.dur), coalesce(tt_satsum(g.bytes), 0)"
                    " FROM gpu_ops AS g JOIN strings AS n ON n.id = g.name"
                    " WHERE g.trace_id = ?1 AND g.kind IN %s AND g.dur IS NOT NULL"
                    " GROUP BY grp ORDER BY grp",
                    group_expr(by, memory), kinds);
    if (sql.oom) {
        tt_buf_release(&sql);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    if (tt_db_prepare(db, st, sql.buf) < 0) {
        tt_buf_release(&sql);
        return TT_EDB;
    }
    tt_buf_release(&sql);
    sqlite3_bind_int64(*st, 1, trace);
    return 0;
}

/* Pass 1: count, total, min, max, bytes per group (in SQL's group order);
 * the sums of squares go to *sumsq, one per row. */
static int load_groups(tt_db *db, const tt_kern_options *o, tt_kern_summary *s, double **sumsq)
{
    sqlite3_stmt *st;
    size_t alloc = 0, salloc = 0;
    int rc, r;
    if ((rc = prepare_groups(db, &st, o->by, s->memory, 0, s->trace_id)) < 0)
        return rc;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *lab = (const char *)sqlite3_column_text(st, 0);
        tt_kern_row *x;
        if (TT_ALLOC_GROW(s->rows, s->nrows + 1, alloc) < 0 ||
            TT_ALLOC_GROW(*sumsq, s->nrows + 1, salloc) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        x = &s->rows[s->nrows];
        memset(x, 0, sizeof(*x));
        if (!(x->name = strdup(lab ? lab : "?"))) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        x->instances = sqlite3_column_int64(st, 1);
        x->total_ns = sqlite3_column_int64(st, 2);
        x->min_ns = sqlite3_column_int64(st, 3);
        x->max_ns = sqlite3_column_int64(st, 4);
        (*sumsq)[s->nrows] = sqlite3_column_double(st, 5);
        x->bytes = sqlite3_column_int64(st, 6);
        s->total_ns = tt_sat_add(s->total_ns, x->total_ns);
        s->nrows++;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return tt_db_error(db, "cannot summarise GPU activities");
    return 0;
}

/* Pass 2: each group's durations in sorted order, groups in pass 1's order:
 * one sort of all durations, the median picked while streaming. */
static int load_medians(tt_db *db, const tt_kern_options *o, tt_kern_summary *s)
{
    sqlite3_stmt *st;
    size_t k;
    int rc;
    if ((rc = prepare_groups(db, &st, o->by, s->memory, 1, s->trace_id)) < 0)
        return rc;
    for (k = 0; k < s->nrows; k++) {
        tt_kern_row *x = &s->rows[k];
        int64_t j, lo = (x->instances - 1) / 2, hi = x->instances / 2, vlo = 0, vhi = 0;
        for (j = 0; j < x->instances; j++) {
            if (sqlite3_step(st) != SQLITE_ROW) {
                rc = tt_db_error(db, "cannot read GPU activity durations");
                sqlite3_finalize(st);
                return rc;
            }
            if (j == lo)
                vlo = sqlite3_column_int64(st, 1);
            if (j == hi)
                vhi = sqlite3_column_int64(st, 1);
        }
        x->med_ns = ((double)vlo + (double)vhi) / 2.0;
    }
    sqlite3_finalize(st);
    return 0;
}

/* One summary (kernels or memory operations) of one trace. */
static int compute_summary(tt_db *db, const tt_kern_options *o, int64_t trace, const char *path,
                           int memory, tt_kern_summary *s)
{
    double *sumsq = NULL;
    int rc;
    memset(s, 0, sizeof(*s));
    s->trace_id = trace;
    s->memory = memory;
    s->by = o->by;
    if (!(s->path = strdup(path)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    rc = load_groups(db, o, s, &sumsq);
    if (rc == 0)
        rc = load_medians(db, o, s);
    if (rc == 0)
        tt__kern_finish(s, o, sumsq);
    free(sumsq);
    if (rc < 0)
        summary_release(s);
    return rc;
}

/* ---- printing, through the table writer ---- */

enum { C_TRACE, C_WHAT, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD, C_BYTES,
       C_GBPS, C_NAME, C_COUNT };

/* Nsight's cuda_gpu_kern_sum layout in text; csv/json keys as before. */
static const tt_table_col kern_cols[C_COUNT] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "What", "what", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Time (%)", "time_pct", TT_COL_PCT, 0, 0, 8, 4, 1, 0, 0 },
    { "Total Time (ns)", "total_ns", TT_COL_NS, 0, 0, 15, 0, 0, 0, 0 },
    { "Instances", "count", TT_COL_INT, 0, 0, 9, 0, 0, 0, 0 },
    { "Avg (ns)", "avg_ns", TT_COL_NS, 0, TT_ALIGN_CENTER, 12, 3, 1, 0, 0 },
    { "Med (ns)", "med_ns", TT_COL_NS, 0, TT_ALIGN_CENTER, 12, 1, 1, 0, 0 },
    { "Min (ns)", "min_ns", TT_COL_NS, 0, TT_ALIGN_LEFT, 10, 0, 0, 0, 0 },
    { "Max (ns)", "max_ns", TT_COL_NS, 0, TT_ALIGN_LEFT, 10, 0, 0, 0, 0 },
    { "StdDev (ns)", "stddev_ns", TT_COL_NS, 0, 0, 11, 3, 1, 0, 0 },
    { "Total (MB)", "bytes", TT_COL_BYTES, 0, TT_ALIGN_LEFT, 10, 0, 3, 1e6, 0 },
    { "GB/s", "gb_per_s", TT_COL_FLOAT, 0, TT_ALIGN_LEFT, 7, 3, 2, 0, 0 },
    { "Name", "name", TT_COL_TEXT, 0, 0, 50, 0, 0, 0, TT_COL_QUOTE },
};

static const size_t text_kern[] = { C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD,
                                    C_NAME };
static const size_t text_mem[] = { C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD,
                                   C_BYTES, C_GBPS, C_NAME };
static const size_t csv_cols[] = { C_TRACE, C_WHAT, C_PCT, C_TOTAL, C_N, C_AVG, C_MED,
                                   C_MIN, C_MAX, C_SD, C_BYTES, C_GBPS, C_NAME };
static const size_t json_kern[] = { C_NAME, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN,
                                    C_MAX, C_SD };
static const size_t json_mem[] = { C_NAME, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN,
                                   C_MAX, C_SD, C_BYTES, C_GBPS };
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static tt_table *summary_table(const tt_kern_summary *s)
{
    tt_table *t = tt_table_new(kern_cols, C_COUNT);
    size_t k;
    for (k = 0; t && k < s->nrows; k++) {
        const tt_kern_row *x = &s->rows[k];
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, C_NAME, x->name) < 0 ||
            tt_table_set_text(t, C_WHAT, s->memory ? "memory" : "kernels") < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, C_TRACE, s->trace_id);
        tt_table_set_float(t, C_PCT, x->time_pct);
        tt_table_set_int(t, C_TOTAL, x->total_ns);
        tt_table_set_int(t, C_N, x->instances);
        tt_table_set_float(t, C_AVG, x->avg_ns);
        tt_table_set_float(t, C_MED, x->med_ns);
        tt_table_set_int(t, C_MIN, x->min_ns);
        tt_table_set_int(t, C_MAX, x->max_ns);
        tt_table_set_float(t, C_SD, x->stddev_ns);
        tt_table_set_int(t, C_BYTES, x->bytes);
        tt_table_set_float(t, C_GBPS, x->gb_per_s);
    }
    return t;
}

static const char *by_name(int by)
{
    return by == TT_KERN_BY_LAUNCH ? "launch" : by == TT_KERN_BY_STREAM ? "stream"
                                              : by == TT_KERN_BY_OP     ? "op"
                                                                        : "name";
}

/* The lines above a summary's table (JSON: the object up to "rows": ). */
static void print_head(const tt_kern_summary *s, int format, FILE *out, int first)
{
    const char *what = s->memory ? "GPU memory operation" : "GPU kernel";
    if (format == TT_AVG_JSON) {
        tt_buf lb = TT_BUF_INIT;
        tt_buf_add_json_string(&lb, s->path, strlen(s->path));
        fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"path\": %s, \"what\": \"%s\","
                     " \"group_by\": \"%s\", \"total_ns\": %" PRId64 ", \"rows\": ",
                first ? "" : ",\n", s->trace_id, lb.buf, s->memory ? "memory" : "kernels",
                s->memory ? "kind" : by_name(s->by), s->total_ns);
        tt_buf_release(&lb);
    } else if (format == TT_AVG_MARKDOWN) {
        fprintf(out, "%s### %s summary, trace %" PRId64 ": ", first ? "" : "\n", what,
                s->trace_id);
        tt_table_markdown_text(out, s->path);
        fputs("\n\n", out);
    } else if (format != TT_AVG_CSV) {
        tt_buf v = TT_BUF_INIT;
        fprintf(out, "%s%s summary, trace %" PRId64 ": %s\n\n", first ? "" : "\n", what,
                s->trace_id, tt_visible(&v, s->path));
        tt_buf_release(&v);
    }
}

static int print_summary(const tt_kern_summary *s, const tt_kern_options *o, FILE *out,
                         int first)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t;
    int rc;
    print_head(s, o->format, out, first);
    if (o->format == TT_AVG_MARKDOWN && s->ngroups == 0) {
        fputs("(none)\n", out);
        return 0;
    }
    if (!(t = summary_table(s)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    switch (o->format) {
    case TT_AVG_JSON:
        w.format = TT_TABLE_JSON;
        w.cols = s->memory ? json_mem : json_kern;
        w.ncols = s->memory ? NCOLS(json_mem) : NCOLS(json_kern);
        w.indent = "  ";
        break;
    case TT_AVG_CSV:
        w.format = TT_TABLE_CSV;
        w.cols = csv_cols;
        w.ncols = NCOLS(csv_cols);
        w.no_header = !first;
        break;
    default:
        w.format = o->format == TT_AVG_MARKDOWN ? TT_TABLE_MARKDOWN : TT_TABLE_TEXT;
        w.cols = s->memory ? text_mem : text_kern;
        w.ncols = s->memory ? NCOLS(text_mem) : NCOLS(text_kern);
        w.indent = " ";
    }
    rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    if (o->format == TT_AVG_JSON)
        fputc('}', out);
    else if (o->format == TT_AVG_TABLE && s->ngroups == 0)
        fputs(" (none)\n", out);
    return rc;
}

/* ---- the traces of a database ---- */

typedef int (*summary_fn)(void *ctx, tt_kern_summary *s); /* takes s over */

/* Calls fn on each summary; *any: whether a trace matched. */
static int each_summary(tt_db *db, const tt_kern_options *o, summary_fn fn, void *ctx, int *any)
{
    sqlite3_stmt *tr;
    int rc = 0, m;
    if (tt_db_prepare(db, &tr,
                      "SELECT id, path FROM traces WHERE format IN ('kineto-json', 'chrome-array')"
                      " AND (?1 = 0 OR id = ?1) AND (?2 < 0 OR rank = ?2) ORDER BY rank, id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, o->trace_id);
    sqlite3_bind_int64(tr, 2, o->rank);
    while (rc == 0 && sqlite3_step(tr) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(tr, 0);
        const char *p = (const char *)sqlite3_column_text(tr, 1);
        *any = 1;
        for (m = 0; rc == 0 && m < 2; m++) {
            tt_kern_summary s;
            if (o->what == (m ? TT_KERN_KERNELS : TT_KERN_MEMORY))
                continue;
            if ((rc = compute_summary(db, o, id, p ? p : "", m, &s)) == 0)
                rc = fn(ctx, &s);
        }
    }
    sqlite3_finalize(tr);
    return rc;
}

static int none_found(tt_db *db, const tt_kern_options *o)
{
    return tt__db_none(db, o->trace_id || o->rank >= 0, "Chrome/Kineto trace");
}

struct printer {
    const tt_kern_options *o;
    FILE *out;
    int first;
};

static int print_one(void *ctx, tt_kern_summary *s)
{
    struct printer *p = ctx;
    int rc = print_summary(s, p->o, p->out, p->first);
    p->first = 0;
    summary_release(s);
    return rc;
}

static int collect_one(void *ctx, tt_kern_summary *s)
{
    tt_kern_result *res = ctx;
    size_t alloc = res->nsummaries; /* grows one by one: few summaries */
    if (TT_ALLOC_GROW(res->summaries, res->nsummaries + 1, alloc) < 0) {
        summary_release(s);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    res->summaries[res->nsummaries++] = *s;
    return 0;
}

void tt_kern_result_free(tt_kern_result *res)
{
    size_t i;
    if (!res)
        return;
    for (i = 0; i < res->nsummaries; i++)
        summary_release(&res->summaries[i]);
    free(res->summaries);
    res->summaries = NULL;
    res->nsummaries = 0;
}

int tt_kernels_db_result(tt_db *db, const tt_kern_options *o, tt_kern_result *res)
{
    int rc, any = 0;
    memset(res, 0, sizeof(*res));
    rc = each_summary(db, o, collect_one, res, &any);
    if (rc == 0 && !any)
        rc = none_found(db, o);
    if (rc < 0)
        tt_kern_result_free(res);
    return rc;
}

/* a file is read without a database unless the grouping needs the links
 * (--by op) or a filter asks for a trace id or rank */
static int file_streams(const tt_kern_options *o)
{
    return o->by != TT_KERN_BY_OP && o->trace_id <= 1 && o->rank < 0;
}

int tt_kernels_file_result(const char *path, const tt_kern_options *opts, tt_kern_result *res)
{
    tt_kern_summary two[2];
    tt_db *db;
    int rc, m;
    memset(res, 0, sizeof(*res));
    if (!file_streams(opts)) {
        if ((rc = tt__open_ingested_temp(&db, path)) < 0)
            return rc;
        rc = tt_kernels_db_result(db, opts, res);
        tt_db_free(db);
        return rc;
    }
    rc = tt__kernels_stream(path, opts, two);
    for (m = 0; m < 2; m++) {
        if (rc == 0 && opts->what != (m ? TT_KERN_KERNELS : TT_KERN_MEMORY))
            rc = collect_one(res, &two[m]);
        else
            summary_release(&two[m]);
    }
    if (rc < 0)
        tt_kern_result_free(res);
    return rc;
}

int tt_kernels_db(tt_db *db, const tt_kern_options *o, FILE *out)
{
    struct printer p;
    int rc, any = 0;
    p.o = o;
    p.out = out;
    p.first = 1;
    if (o->format == TT_AVG_JSON)
        fputs("{\"summaries\": [", out);
    rc = each_summary(db, o, print_one, &p, &any);
    if (o->format == TT_AVG_JSON && rc == 0)
        fputs("\n]}\n", out);
    if (rc == 0 && !any)
        return none_found(db, o);
    return rc;
}

int tt_kernels_file(const char *path, const tt_kern_options *opts, FILE *out)
{
    tt_kern_result res;
    struct printer p;
    size_t i;
    int rc;
    if (!file_streams(opts)) {
        tt_db *db;
        if ((rc = tt__open_ingested_temp(&db, path)) < 0)
            return rc;
        rc = tt_kernels_db(db, opts, out);
        tt_db_free(db);
        return rc;
    }
    if ((rc = tt_kernels_file_result(path, opts, &res)) < 0)
        return rc;
    p.o = opts;
    p.out = out;
    p.first = 1;
    if (opts->format == TT_AVG_JSON)
        fputs("{\"summaries\": [", out);
    for (i = 0; rc == 0 && i < res.nsummaries; i++) {
        rc = print_summary(&res.summaries[i], opts, out, p.first);
        p.first = 0;
    }
    if (opts->format == TT_AVG_JSON && rc == 0)
        fputs("\n]}\n", out);
    tt_kern_result_free(&res);
    return rc;
}
