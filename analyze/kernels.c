/*
 * analyze/kernels.c - `tracetool kernels`: GPU kernel and memory-operation
 * summaries in the shape of Nsight Systems' cuda_gpu_kern_sum /
 * cuda_gpu_mem_time_sum (Time %, Total, Instances, Avg, Med, Min, Max,
 * StdDev, Name), from the gpu_ops table.
 *
 * Two passes over SQL, so memory stays bounded whatever the trace size: the
 * first aggregates count/sum/min/max/sum of squares per group; the second
 * streams each group's durations in sorted order and picks the median.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/db_internal.h"

#include <inttypes.h>
#include <math.h>

struct kgroup {
    char *label;
    int64_t n, total, min, max, bytes;
    double sumsq, median;
};

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

static int cmp_total(const void *a, const void *b)
{
    const struct kgroup *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->label, y->label);
}

static void csvq(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static int summarize(tt_db *db, const tt_kern_options *o, int64_t trace, const char *label,
                     int memory, FILE *out, int *first_out)
{
    tt_buf sql = TT_BUF_INIT;
    sqlite3_stmt *st = NULL;
    struct kgroup *g = NULL;
    size_t n = 0, alloc = 0, i, k;
    int64_t grand = 0;
    int rc = 0, r;
    const char *expr = group_expr(o->by, memory);
    const char *kinds = memory ? "('memcpy', 'memset')" : "('kernel')";

    tt_buf_addf(&sql,
                "SELECT %s AS grp, count(*), sum(g.dur), min(g.dur), max(g.dur),"
                " sum(CAST(g.dur AS REAL) * g.dur), coalesce(sum(g.bytes), 0)"
                " FROM gpu_ops AS g JOIN strings AS n ON n.id = g.name"
                " WHERE g.trace_id = ?1 AND g.kind IN %s AND g.dur IS NOT NULL"
                " GROUP BY grp ORDER BY grp",
                expr, kinds);
    if (sql.oom || tt_db_prepare(db, &st, sql.buf) < 0) {
        rc = sql.oom ? tt_error_set(TT_ENOMEM, "out of memory") : TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(st, 1, trace);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *lab = (const char *)sqlite3_column_text(st, 0);
        if (TT_ALLOC_GROW(g, n + 1, alloc) < 0) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            goto out;
        }
        memset(&g[n], 0, sizeof(g[n]));
        g[n].label = strdup(lab ? lab : "?");
        g[n].n = sqlite3_column_int64(st, 1);
        g[n].total = sqlite3_column_int64(st, 2);
        g[n].min = sqlite3_column_int64(st, 3);
        g[n].max = sqlite3_column_int64(st, 4);
        g[n].sumsq = sqlite3_column_double(st, 5);
        g[n].bytes = sqlite3_column_int64(st, 6);
        grand += g[n].total;
        n++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (r != SQLITE_DONE) {
        rc = tt_db_error(db, "cannot summarise GPU activities");
        goto out;
    }
    /* medians: durations of each group in sorted order, groups in the same order */
    tt_buf_reset(&sql);
    tt_buf_addf(&sql,
                "SELECT %s AS grp, g.dur FROM gpu_ops AS g JOIN strings AS n ON n.id = g.name"
                " WHERE g.trace_id = ?1 AND g.kind IN %s AND g.dur IS NOT NULL"
                " ORDER BY grp, g.dur",
                expr, kinds);
    if (sql.oom || tt_db_prepare(db, &st, sql.buf) < 0) {
        rc = sql.oom ? tt_error_set(TT_ENOMEM, "out of memory") : TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(st, 1, trace);
    for (k = 0; k < n; k++) {
        int64_t j, lo = (g[k].n - 1) / 2, hi = g[k].n / 2, vlo = 0, vhi = 0;
        for (j = 0; j < g[k].n; j++) {
            if (sqlite3_step(st) != SQLITE_ROW) {
                rc = tt_db_error(db, "cannot read GPU activity durations");
                goto out;
            }
            if (j == lo)
                vlo = sqlite3_column_int64(st, 1);
            if (j == hi)
                vhi = sqlite3_column_int64(st, 1);
        }
        g[k].median = ((double)vlo + (double)vhi) / 2.0;
    }
    if (n)
        qsort(g, n, sizeof(*g), cmp_total);

    if (o->format == TT_AVG_JSON) {
        tt_buf lb = TT_BUF_INIT;
        tt_buf_add_json_string(&lb, label, strlen(label));
        fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"path\": %s, \"what\": \"%s\","
                     " \"group_by\": \"%s\", \"total_ns\": %" PRId64 ", \"rows\": [",
                *first_out ? "" : ",\n", trace, lb.buf, memory ? "memory" : "kernels",
                memory ? "kind" : o->by == TT_KERN_BY_LAUNCH ? "launch"
                : o->by == TT_KERN_BY_STREAM ? "stream" : o->by == TT_KERN_BY_OP ? "op" : "name",
                grand);
        tt_buf_release(&lb);
    } else if (o->format == TT_AVG_CSV) {
        if (*first_out)
            fputs("trace_id,what,time_pct,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,"
                  "stddev_ns,bytes,gb_per_s,name\n",
                  out);
    } else {
        fprintf(out, "%s%s summary, trace %" PRId64 ": %s\n\n", *first_out ? "" : "\n",
                memory ? "GPU memory operation" : "GPU kernel", trace, label);
        fprintf(out, " Time (%%)  Total Time (ns)  Instances    Avg (ns)      Med (ns)    "
                     "Min (ns)    Max (ns)    StdDev (ns)  %s%s\n",
                memory ? "Total (MB)  GB/s     " : "", "Name");
        fprintf(out, " --------  ---------------  ---------  ------------  ------------  "
                     "----------  ----------  -----------  %s%s\n",
                memory ? "----------  -------  " : "",
                "--------------------------------------------------");
    }
    for (k = 0; k < n; k++) {
        const struct kgroup *x = &g[k];
        double avg = (double)x->total / (double)x->n;
        double var = x->n > 1 ? (x->sumsq - (double)x->n * avg * avg) / (double)(x->n - 1) : 0;
        double sd = var > 0 ? sqrt(var) : 0;
        double pct = grand ? 100.0 * (double)x->total / (double)grand : 0;
        double gbps = x->total ? (double)x->bytes / (double)x->total : 0; /* bytes/ns = GB/s */
        if (o->row_limit >= 0 && (int64_t)k >= o->row_limit)
            break;
        if (o->format == TT_AVG_JSON) {
            tt_buf nb = TT_BUF_INIT;
            tt_buf_add_json_string(&nb, x->label, strlen(x->label));
            fprintf(out, "%s\n  {\"name\": %s, \"time_pct\": %.4f, \"total_ns\": %" PRId64
                         ", \"instances\": %" PRId64 ", \"avg_ns\": %.3f, \"med_ns\": %.1f"
                         ", \"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"stddev_ns\": %.3f",
                    k ? "," : "", nb.buf, pct, x->total, x->n, avg, x->median, x->min, x->max, sd);
            if (memory)
                fprintf(out, ", \"bytes\": %" PRId64 ", \"gb_per_s\": %.3f", x->bytes, gbps);
            fputc('}', out);
            tt_buf_release(&nb);
        } else if (o->format == TT_AVG_CSV) {
            fprintf(out, "%" PRId64 ",%s,%.4f,%" PRId64 ",%" PRId64 ",%.3f,%.1f,%" PRId64
                         ",%" PRId64 ",%.3f,%" PRId64 ",%.3f,",
                    trace, memory ? "memory" : "kernels", pct, x->total, x->n, avg, x->median,
                    x->min, x->max, sd, x->bytes, gbps);
            csvq(out, x->label);
            fputc('\n', out);
        } else {
            fprintf(out, " %8.1f  %15" PRId64 "  %9" PRId64 "  %12.1f  %12.1f  %10" PRId64
                         "  %10" PRId64 "  %11.1f  ",
                    pct, x->total, x->n, avg, x->median, x->min, x->max, sd);
            if (memory)
                fprintf(out, "%10.3f  %7.2f  ", (double)x->bytes / 1e6, gbps);
            fprintf(out, "%s\n", x->label);
        }
    }
    if (o->format == TT_AVG_JSON)
        fputs("\n]}", out);
    else if (o->format == TT_AVG_TABLE && n == 0)
        fputs(" (none)\n", out);
    *first_out = 0;
out:
    sqlite3_finalize(st);
    for (i = 0; i < n; i++)
        free(g[i].label);
    free(g);
    tt_buf_release(&sql);
    return rc;
}

int tt_kernels_db(tt_db *db, const tt_kern_options *o, FILE *out)
{
    sqlite3_stmt *tr;
    int rc = 0, first = 1, any = 0;
    if (tt_db_prepare(db, &tr,
                      "SELECT id, path FROM traces WHERE format IN ('kineto-json', 'chrome-array')"
                      " AND (?1 = 0 OR id = ?1) AND (?2 < 0 OR rank = ?2) ORDER BY rank, id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, o->trace_id);
    sqlite3_bind_int64(tr, 2, o->rank);
    if (o->format == TT_AVG_JSON)
        fputs("{\"summaries\": [", out);
    while (sqlite3_step(tr) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(tr, 0);
        char *label = strdup(sqlite3_column_text(tr, 1) ? (const char *)sqlite3_column_text(tr, 1)
                                                          : "");
        any = 1;
        if (!label) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            break;
        }
        if (o->what != TT_KERN_MEMORY)
            rc = summarize(db, o, id, label, 0, out, &first);
        if (rc == 0 && o->what != TT_KERN_KERNELS)
            rc = summarize(db, o, id, label, 1, out, &first);
        free(label);
        if (rc < 0)
            break;
    }
    sqlite3_finalize(tr);
    if (o->format == TT_AVG_JSON && rc == 0)
        fputs("\n]}\n", out);
    if (rc == 0 && !any)
        return tt__db_none(db, o->trace_id || o->rank >= 0, "Chrome/Kineto trace");
    return rc;
}

int tt_kernels_file(const char *path, const tt_kern_options *opts, FILE *out)
{
    tt_db *db;
    int rc = tt__open_ingested_temp(&db, path);
    if (rc < 0)
        return rc;
    rc = tt_kernels_db(db, opts, out);
    tt_db_free(db);
    return rc;
}
