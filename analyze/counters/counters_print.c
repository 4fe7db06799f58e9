/*
 * analyze/counters/counters_print.c - the tables of `tracetool queue` and
 * `tracetool bandwidth` (counters_print.h): one set of columns, a layout
 * per table, CHUNK rows at a time through the table writer. Text and
 * Markdown: a title, then the table (its header once); CSV: the header
 * once; JSON: {"streams"|"rows"|"series": [one object per row]}.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/counters/counters_print.h"
#include "report/table_json.h"

#define CHUNK 1024 /* rows per write of the table writer */

enum { C_TRACE, C_RANK, C_DEVICE, C_STREAM, C_KIND, C_COUNT, C_MEAN, C_MIN, C_MAX,
       C_BLOCKED, C_TS, C_QLEN, C_BMEAN, C_BMIN, C_BMAX, C_GBPS, C_NCOLS };

/* fixed widths: the chunks of one table line up in text */
static const tt_table_col cols[C_NCOLS] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Device", "device", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Stream", "stream", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Kind", "kind", TT_COL_TEXT, 0, 0, 14, 0, 0, 0, 0 },
    { "Count", "count", TT_COL_INT, 0, 0, 9, 0, 0, 0, 0 },
    { "Mean", "mean", TT_COL_FLOAT, 0, 0, 9, 6, 3, 0, 0 },
    { "Min", "min", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Max", "max", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Blocked (ns)", "blocked_ns", TT_COL_NS, 0, 0, 15, 0, 0, 0, 0 },
    { "Time (ns)", "ts_ns", TT_COL_NS, 0, 0, 19, 0, 0, 0, 0 },
    { "Queue length", "queue_length", TT_COL_INT, 0, 0, 12, 0, 0, 0, 0 },
    { "Mean (GB/s)", "mean_gbps", TT_COL_FLOAT, 0, 0, 12, 12, 3, 0, 0 },
    { "Min (GB/s)", "min_gbps", TT_COL_FLOAT, 0, 0, 12, 12, 3, 0, 0 },
    { "Max (GB/s)", "max_gbps", TT_COL_FLOAT, 0, 0, 12, 12, 3, 0, 0 },
    { "GB/s", "gbps", TT_COL_FLOAT, 0, 0, 12, 12, 3, 0, 0 },
};

static const size_t l_queue[] = { C_TRACE, C_RANK, C_DEVICE, C_STREAM, C_COUNT, C_MEAN,
                                  C_MIN, C_MAX, C_BLOCKED };
static const size_t l_qseries[] = { C_TRACE, C_RANK, C_DEVICE, C_STREAM, C_TS, C_QLEN };
static const size_t l_bw[] = { C_TRACE, C_RANK, C_KIND, C_COUNT, C_BMEAN, C_BMIN, C_BMAX };
static const size_t l_bseries[] = { C_TRACE, C_RANK, C_KIND, C_TS, C_GBPS };

static const struct layout {
    const size_t *cols;
    size_t ncols;
    const char *title, *key; /* text/Markdown title, the JSON array's key */
} layouts[] = {
    [TT__CP_QUEUE] = { l_queue, TT_ARRAY_SIZE(l_queue),
                       "Launch queue length per stream (HTA's queue length summary)", "streams" },
    [TT__CP_QUEUE_SERIES] = { l_qseries, TT_ARRAY_SIZE(l_qseries),
                              "Launch queue length per stream, each change", "series" },
    [TT__CP_BW] = { l_bw, TT_ARRAY_SIZE(l_bw),
                    "Memory bandwidth of the copies in flight per kind (HTA's memory bandwidth "
                    "summary)", "rows" },
    [TT__CP_BW_SERIES] = { l_bseries, TT_ARRAY_SIZE(l_bseries),
                           "Memory bandwidth of the copies in flight per kind, each change",
                           "series" },
};

int tt__cprint_begin(struct tt__cprint *p, int what, tt_output_format format, FILE *out)
{
    const struct layout *l = &layouts[what];
    memset(p, 0, sizeof(*p));
    p->what = what;
    p->format = format;
    p->out = out;
    tt_jw_init_file(&p->jw, out, TT_JW_LINE);
    if (format == TT_FORMAT_JSON) {
        tt_jw_obj(&p->jw);
        tt_jw_karr(&p->jw, l->key);
    } else if (format == TT_FORMAT_MARKDOWN) {
        fprintf(out, "### %s\n\n", l->title);
    } else if (format != TT_FORMAT_CSV) {
        fprintf(out, "%s\n\n", l->title);
    }
    return (p->t = tt_table_new(cols, C_NCOLS)) ? 0 : tt__oom();
}

/* the rows so far as one part of the table; final: its last */
static int flush(struct tt__cprint *p, int final)
{
    const struct layout *l = &layouts[p->what];
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    int rc;
    if (!final && tt_table_nrows(p->t) == 0)
        return 0;
    w.cols = l->cols;
    w.ncols = l->ncols;
    if (p->format == TT_FORMAT_JSON) {
        rc = tt__table_json_rows(p->t, &w, &p->jw, 2);
    } else if (final && !p->rows && p->format == TT_FORMAT_MARKDOWN) {
        fputs("(none)\n", p->out);
        rc = 0;
    } else {
        w.format = p->format == TT_FORMAT_CSV ? TT_FORMAT_CSV
                   : p->format == TT_FORMAT_MARKDOWN ? TT_FORMAT_MARKDOWN
                                                      : TT_FORMAT_TABLE;
        w.no_header = p->parts > 0;
        w.indent = p->format == TT_FORMAT_TABLE ? " " : NULL;
        rc = tt_table_write(p->t, &w, p->out);
        if (rc == 0 && final && !p->rows && p->format == TT_FORMAT_TABLE)
            fputs(" (none)\n", p->out);
    }
    p->parts++;
    tt_table_free(p->t);
    p->t = NULL;
    if (rc == 0 && !final && !(p->t = tt_table_new(cols, C_NCOLS)))
        rc = tt__oom();
    return rc;
}

/* a new row (the chunk before it written when full), its trace and rank set */
static int row(struct tt__cprint *p, int64_t trace, int have_rank, int64_t rank)
{
    int rc;
    if (tt_table_nrows(p->t) >= CHUNK && (rc = flush(p, 0)) < 0)
        return rc;
    if (tt_table_add_row(p->t) < 0)
        return tt__oom();
    p->rows++;
    tt_table_set_int(p->t, C_TRACE, trace);
    if (have_rank)
        tt_table_set_int(p->t, C_RANK, rank);
    return 0;
}

static void set_device(tt_table *t, int64_t device, int64_t stream)
{
    if (device != TT_COUNTERS_NULL)
        tt_table_set_int(t, C_DEVICE, device);
    tt_table_set_int(t, C_STREAM, stream);
}

int tt__cprint_queue_rows(struct tt__cprint *p, const void *rows, size_t n)
{
    size_t i;
    int rc;
    for (i = 0; i < n; i++) {
        const tt_queue_row *x = (const tt_queue_row *)rows + i;
        if ((rc = row(p, x->trace_id, x->have_rank, x->rank)) < 0)
            return rc;
        set_device(p->t, x->device, x->stream);
        tt_table_set_int(p->t, C_COUNT, x->count);
        tt_table_set_float(p->t, C_MEAN, x->mean);
        tt_table_set_int(p->t, C_MIN, x->min);
        tt_table_set_int(p->t, C_MAX, x->max);
        tt_table_set_int(p->t, C_BLOCKED, x->blocked_ns);
    }
    return 0;
}

int tt__cprint_bw_rows(struct tt__cprint *p, const void *rows, size_t n)
{
    size_t i;
    int rc;
    for (i = 0; i < n; i++) {
        const tt_bandwidth_row *x = (const tt_bandwidth_row *)rows + i;
        if ((rc = row(p, x->trace_id, x->have_rank, x->rank)) < 0 ||
            (rc = tt_table_set_text(p->t, C_KIND, x->kind)) < 0)
            return rc;
        tt_table_set_int(p->t, C_COUNT, x->count);
        tt_table_set_float(p->t, C_BMEAN, x->mean_gbps);
        tt_table_set_float(p->t, C_BMIN, x->min_gbps);
        tt_table_set_float(p->t, C_BMAX, x->max_gbps);
    }
    return 0;
}

int tt__cprint_queue_point(void *ctx, const tt_queue_point *q)
{
    struct tt__cprint *p = ctx;
    int rc = row(p, q->trace_id, q->have_rank, q->rank);
    if (rc < 0)
        return rc;
    set_device(p->t, q->device, q->stream);
    tt_table_set_int(p->t, C_TS, q->ts_ns);
    tt_table_set_int(p->t, C_QLEN, q->queue_length);
    return 0;
}

int tt__cprint_bw_point(void *ctx, const tt_bandwidth_point *q)
{
    struct tt__cprint *p = ctx;
    int rc = row(p, q->trace_id, q->have_rank, q->rank);
    if (rc < 0 || (rc = tt_table_set_text(p->t, C_KIND, q->kind)) < 0)
        return rc;
    tt_table_set_int(p->t, C_TS, q->ts_ns);
    tt_table_set_float(p->t, C_GBPS, q->gbps);
    return 0;
}

int tt__cprint_end(struct tt__cprint *p, int rc)
{
    if (rc == 0 && p->t)
        rc = flush(p, 1);
    tt_table_free(p->t);
    p->t = NULL;
    if (p->format == TT_FORMAT_JSON) {
        int jrc;
        if (rc == 0) {
            tt_jw_nl(&p->jw, 0);
            tt_jw_end(&p->jw); /* the rows */
            tt_jw_end(&p->jw);
        }
        jrc = tt_jw_finish(&p->jw); /* what was written so far, and free */
        if (rc == 0 && jrc == TT_ENOMEM)
            rc = tt__oom();
    } else {
        tt_jw_finish(&p->jw);
    }
    return rc;
}
