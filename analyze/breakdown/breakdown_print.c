/*
 * analyze/breakdown/breakdown_print.c - `tracetool breakdown` output through the
 * table writer: the rank table with the skew, the step or stream table,
 * kernel families, CPU ops, launch statistics and the worst launches. CSV is the
 * one table of --by (one row per rank, step or stream); JSON holds every
 * table in one document; times are ns in CSV and JSON, ms or us in text
 * and Markdown.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "tracetool/breakdown.h"
#include "analyze/breakdown/breakdown_state.h"
#include "report/table_json.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <math.h>

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))
#define MS 1e6
#define US 1e3

/* ---- the rank / step / stream tables ---- */

enum { C_TRACE, C_RANK_TEXT, C_RANK, C_DEVICE, C_STEP, C_STREAM, C_STEPS, C_STEP_NS, C_START,
       C_END, C_WINDOW, C_BUSY, C_BUSY_PCT, C_COMPUTE, C_COMM, C_MEMORY, C_OVERLAP, C_EXPOSED,
       C_OVERLAP_PCT, C_IDLE, C_HOST, C_KWAIT, C_OTHER, C_KERNELS, C_COMMK, C_MEMOPS, C_COUNT };

static const tt_table_col row_cols[C_COUNT] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Device", "device", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Step", "step", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Stream", "stream", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Steps", "steps", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Step (ms)", "step_ns", TT_COL_NS, 0, 0, 0, 1, 3, MS, 0 },
    { "Start (ns)", "start_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "End (ns)", "end_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Window (ms)", "window_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Busy (ms)", "busy_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Busy %", "busy_pct", TT_COL_PCT, 0, 0, 0, 2, 1, 0, 0 },
    { "Compute (ms)", "compute_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Comm (ms)", "comm_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Memory (ms)", "memory_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Overlap (ms)", "overlap_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Exposed comm (ms)", "exposed_comm_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Overlap %", "overlap_pct", TT_COL_PCT, 0, 0, 0, 2, 1, 0, 0 },
    { "Idle (ms)", "idle_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Host wait (ms)", "host_wait_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Kernel wait (ms)", "kernel_wait_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Other idle (ms)", "other_idle_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Kernels", "kernels", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Comm kernels", "comm_kernels", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Memory ops", "memory_ops", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

#define TIMES_TEXT C_BUSY, C_BUSY_PCT, C_COMPUTE, C_COMM, C_MEMORY, C_EXPOSED, C_OVERLAP_PCT, \
                   C_IDLE, C_HOST, C_KWAIT, C_OTHER
#define TIMES_DATA C_START, C_END, C_WINDOW, C_BUSY, C_BUSY_PCT, C_COMPUTE, C_COMM, C_MEMORY, \
                   C_OVERLAP, C_EXPOSED, C_OVERLAP_PCT, C_IDLE, C_HOST, C_KWAIT, C_OTHER,     \
                   C_KERNELS, C_COMMK, C_MEMOPS

static const size_t text_rank[] = { C_RANK_TEXT, C_DEVICE, C_STEPS, C_STEP_NS, C_WINDOW,
                                    TIMES_TEXT };
static const size_t text_step[] = { C_RANK_TEXT, C_DEVICE, C_STEP, C_WINDOW, TIMES_TEXT };
static const size_t text_stream[] = { C_RANK_TEXT, C_DEVICE, C_STREAM, C_WINDOW, TIMES_TEXT };
static const size_t data_rank[] = { C_TRACE, C_RANK, C_DEVICE, C_STEPS, C_STEP_NS, TIMES_DATA };
static const size_t data_step[] = { C_TRACE, C_RANK, C_DEVICE, C_STEP, TIMES_DATA };
static const size_t data_stream[] = { C_TRACE, C_RANK, C_DEVICE, C_STREAM, TIMES_DATA };

static void set_num(tt_table *t, size_t col, double v)
{
    if (isfinite(v))
        tt_table_set_float(t, col, v);
}


static int row_add(tt_table *t, const tt_bd_row *x)
{
    char rb[48];
    if (tt_table_add_row(t) < 0 ||
        tt_table_set_text(t, C_RANK_TEXT, tt__bd_rank_text(rb, sizeof(rb), x->rank, x->trace_id)) < 0)
        return TT_ENOMEM;
    tt_table_set_int(t, C_TRACE, x->trace_id);
    if (x->rank >= 0)
        tt_table_set_int(t, C_RANK, x->rank);
    tt_table_set_int(t, C_DEVICE, x->device);
    if (x->step >= 0)
        tt_table_set_int(t, C_STEP, x->step);
    if (x->stream >= 0)
        tt_table_set_int(t, C_STREAM, x->stream);
    tt_table_set_int(t, C_STEPS, x->steps);
    set_num(t, C_STEP_NS, x->step_ns);
    tt_table_set_int(t, C_START, x->start_ns);
    tt_table_set_int(t, C_END, x->end_ns);
    tt_table_set_int(t, C_WINDOW, x->window_ns);
    tt_table_set_int(t, C_BUSY, x->busy_ns);
    set_num(t, C_BUSY_PCT, x->busy_pct);
    tt_table_set_int(t, C_COMPUTE, x->compute_ns);
    tt_table_set_int(t, C_COMM, x->comm_ns);
    tt_table_set_int(t, C_MEMORY, x->memory_ns);
    tt_table_set_int(t, C_OVERLAP, x->overlap_ns);
    tt_table_set_int(t, C_EXPOSED, x->exposed_comm_ns);
    set_num(t, C_OVERLAP_PCT, x->overlap_pct);
    tt_table_set_int(t, C_IDLE, x->idle_ns);
    tt_table_set_int(t, C_HOST, x->host_wait_ns);
    tt_table_set_int(t, C_KWAIT, x->kernel_wait_ns);
    tt_table_set_int(t, C_OTHER, x->other_idle_ns);
    tt_table_set_int(t, C_KERNELS, x->kernels);
    tt_table_set_int(t, C_COMMK, x->comm_kernels);
    tt_table_set_int(t, C_MEMOPS, x->memory_ops);
    return 0;
}

static size_t limit(size_t n, int64_t row_limit)
{
    return row_limit >= 0 && (uint64_t)row_limit < n ? (size_t)row_limit : n;
}

/* "rank 3", or "trace 2" */
static const char *unit_name(char *buf, size_t cap, int64_t rank, int64_t trace)
{
    if (rank >= 0)
        snprintf(buf, cap, "rank %" PRId64, rank);
    else
        snprintf(buf, cap, "trace %" PRId64, trace);
    return buf;
}

/* ---- families, CPU ops, launches, worst launches ---- */

enum { F_FAMILY, F_OP, F_CLASS, F_COUNT, F_TOTAL, F_MIN, F_MED, F_MAX, F_MAX_AT, F_MAX_TRACE,
       F_MAX_RANK, F_COUNT_COLS };

static const tt_table_col fam_cols[F_COUNT_COLS] = {
    { "Family", "family", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "CPU op", "op", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Class", "class", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Count", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Total (ms)", "total_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Min (ms)", "min_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Median (ms)", "median_ns", TT_COL_NS, 0, 0, 0, 1, 3, MS, 0 },
    { "Max (ms)", "max_ns", TT_COL_NS, 0, 0, 0, 0, 3, MS, 0 },
    { "Max at", "max_at", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Max trace", "max_trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Max rank", "max_rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};
static const size_t text_fam[] = { F_TOTAL, F_COUNT, F_MIN, F_MED, F_MAX, F_MAX_AT, F_CLASS,
                                   F_FAMILY };
static const size_t data_fam[] = { F_FAMILY, F_CLASS, F_COUNT, F_TOTAL, F_MIN, F_MED, F_MAX,
                                   F_MAX_AT, F_MAX_TRACE, F_MAX_RANK };
static const size_t text_op[] = { F_TOTAL, F_COUNT, F_MIN, F_MED, F_MAX, F_MAX_AT, F_OP };
static const size_t data_op[] = { F_OP, F_COUNT, F_TOTAL, F_MIN, F_MED, F_MAX, F_MAX_AT,
                                  F_MAX_TRACE, F_MAX_RANK };

enum { L_FAMILY, L_CLASS, L_COUNT, L_D50, L_D95, L_DMAX, L_RCOUNT, L_R50, L_R95, L_RMAX,
       L_WTRACE, L_WRANK, L_WTEXT, L_COUNT_COLS };

static const tt_table_col launch_cols[L_COUNT_COLS] = {
    { "Family", "family", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Class", "class", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Launches", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Delay p50 (us)", "delay_p50_ns", TT_COL_NS, 0, 0, 0, 1, 1, US, 0 },
    { "Delay p95 (us)", "delay_p95_ns", TT_COL_NS, 0, 0, 0, 1, 1, US, 0 },
    { "Delay max (us)", "delay_max_ns", TT_COL_NS, 0, 0, 0, 0, 1, US, 0 },
    { "Calls", "runtime_count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Call p50 (us)", "runtime_p50_ns", TT_COL_NS, 0, 0, 0, 1, 1, US, 0 },
    { "Call p95 (us)", "runtime_p95_ns", TT_COL_NS, 0, 0, 0, 1, 1, US, 0 },
    { "Call max (us)", "runtime_max_ns", TT_COL_NS, 0, 0, 0, 0, 1, US, 0 },
    { "Worst trace", "worst_trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Worst rank", "worst_rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Worst at", "worst_at", TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 0, 0, 0, 0, 0 },
};
static const size_t text_launch[] = { L_COUNT, L_D50, L_D95, L_DMAX, L_R50, L_R95, L_RMAX,
                                      L_WTEXT, L_CLASS, L_FAMILY };
static const size_t data_launch[] = { L_FAMILY, L_CLASS, L_COUNT, L_D50, L_D95, L_DMAX,
                                      L_RCOUNT, L_R50, L_R95, L_RMAX, L_WTRACE, L_WRANK };

enum { W_DELAY, W_RT, W_TRACE, W_RANK, W_RTEXT, W_DEVICE, W_STREAM, W_TS, W_RUNTIME, W_NAME,
       W_FAMILY, W_COUNT_COLS };

static const tt_table_col worst_cols[W_COUNT_COLS] = {
    { "Delay (us)", "delay_ns", TT_COL_NS, 0, 0, 0, 0, 1, US, 0 },
    { "Call (us)", "runtime_ns", TT_COL_NS, 0, 0, 0, 0, 1, US, 0 },
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 0, 0, 0, 0, 0 },
    { "Device", "device", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Stream", "stream", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Start (ns)", "ts_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Runtime call", "runtime", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Family", "family", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
};
static const size_t text_worst[] = { W_DELAY, W_RT, W_RTEXT, W_DEVICE, W_STREAM, W_RUNTIME,
                                     W_NAME };
static const size_t data_worst[] = { W_DELAY, W_RT, W_TRACE, W_RANK, W_DEVICE, W_STREAM, W_TS,
                                     W_RUNTIME, W_NAME, W_FAMILY };

static const char *class_name(int cls)
{
    return cls == TT_BD_COMM ? "communication" : cls == TT_BD_MEMORY ? "memory" : "compute";
}

static const char *by_unit(int by)
{
    return by == TT_BD_BY_STEP ? "step" : by == TT_BD_BY_STREAM ? "stream" : "rank";
}

/* a unit row named: "rank 3", "rank 3 step 12", "rank 3 stream 7" */
static void unit_text(char *buf, size_t cap, const tt_bd_result *res, size_t row)
{
    const tt_bd_row *x;
    char rb[48];
    size_t n;
    buf[0] = '\0';
    if (row == (size_t)-1)
        return;
    x = res->by == TT_BD_BY_RANK ? &res->ranks[row] : &res->rows[row];
    n = (size_t)snprintf(buf, cap, "%s", unit_name(rb, sizeof(rb), x->rank, x->trace_id));
    if (res->by == TT_BD_BY_STEP && n < cap)
        snprintf(buf + n, cap - n, " step %" PRId64, x->step);
    else if (res->by == TT_BD_BY_STREAM && n < cap)
        snprintf(buf + n, cap - n, " stream %" PRId64, x->stream);
}

/* a family's or an op's row: its name in column `col`, then the counts
 * and the spread over the units */
static int spread_row(tt_table *t, const tt_bd_result *res, size_t col, const char *name,
                      int64_t count, int64_t total, int64_t mn, double med, int64_t mx,
                      size_t max_row)
{
    char at[160];
    unit_text(at, sizeof(at), res, max_row);
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, col, name) < 0 ||
        tt_table_set_text(t, F_MAX_AT, at) < 0)
        return TT_ENOMEM;
    tt_table_set_int(t, F_COUNT, count);
    tt_table_set_int(t, F_TOTAL, total);
    tt_table_set_int(t, F_MIN, mn);
    set_num(t, F_MED, med);
    tt_table_set_int(t, F_MAX, mx);
    if (max_row != (size_t)-1) {
        const tt_bd_row *x = res->by == TT_BD_BY_RANK ? &res->ranks[max_row] : &res->rows[max_row];
        tt_table_set_int(t, F_MAX_TRACE, x->trace_id);
        if (x->rank >= 0)
            tt_table_set_int(t, F_MAX_RANK, x->rank);
    }
    return 0;
}

static tt_table *family_table(const tt_bd_result *res, int64_t row_limit)
{
    tt_table *t = tt_table_new(fam_cols, F_COUNT_COLS);
    size_t k, n = limit(res->nfamilies, row_limit);
    for (k = 0; t && k < n; k++) {
        const tt_bd_family *f = &res->families[k];
        if (spread_row(t, res, F_FAMILY, f->family, f->count, f->total_ns, f->min_ns,
                       f->median_ns, f->max_ns, f->max_row) < 0 ||
            tt_table_set_text(t, F_CLASS, class_name(f->cls)) < 0) {
            tt_table_free(t);
            return NULL;
        }
    }
    return t;
}

static tt_table *op_table(const tt_bd_result *res, int64_t row_limit)
{
    tt_table *t = tt_table_new(fam_cols, F_COUNT_COLS);
    size_t k, n = limit(res->nops, row_limit);
    for (k = 0; t && k < n; k++) {
        const tt_bd_op *x = &res->ops[k];
        if (spread_row(t, res, F_OP, x->op, x->count, x->total_ns, x->min_ns, x->median_ns,
                       x->max_ns, x->max_row) < 0) {
            tt_table_free(t);
            return NULL;
        }
    }
    return t;
}

static tt_table *launch_table(const tt_bd_result *res, int64_t row_limit)
{
    tt_table *t = tt_table_new(launch_cols, L_COUNT_COLS);
    size_t k, n = limit(res->nlaunches, row_limit);
    char rb[48];
    for (k = 0; t && k < n; k++) {
        const tt_bd_launch *l = &res->launches[k];
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, L_FAMILY, l->family) < 0 ||
            tt_table_set_text(t, L_CLASS, class_name(l->cls)) < 0 ||
            tt_table_set_text(t, L_WTEXT, unit_name(rb, sizeof(rb), l->worst_rank,
                                                    l->worst_trace_id)) < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, L_COUNT, l->count);
        set_num(t, L_D50, l->delay_p50_ns);
        set_num(t, L_D95, l->delay_p95_ns);
        tt_table_set_int(t, L_DMAX, l->delay_max_ns);
        tt_table_set_int(t, L_RCOUNT, l->runtime_count);
        set_num(t, L_R50, l->runtime_p50_ns);
        set_num(t, L_R95, l->runtime_p95_ns);
        if (l->runtime_count)
            tt_table_set_int(t, L_RMAX, l->runtime_max_ns);
        tt_table_set_int(t, L_WTRACE, l->worst_trace_id);
        if (l->worst_rank >= 0)
            tt_table_set_int(t, L_WRANK, l->worst_rank);
    }
    return t;
}

static tt_table *worst_table(const tt_bd_result *res, int64_t row_limit)
{
    tt_table *t = tt_table_new(worst_cols, W_COUNT_COLS);
    size_t k, n = limit(res->nworst, row_limit);
    char rb[48];
    for (k = 0; t && k < n; k++) {
        const tt_bd_worst *w = &res->worst[k];
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, W_NAME, w->name) < 0 ||
            tt_table_set_text(t, W_FAMILY, w->family) < 0 ||
            tt_table_set_text(t, W_RUNTIME, w->runtime) < 0 ||
            tt_table_set_text(t, W_RTEXT, tt__bd_rank_text(rb, sizeof(rb), w->rank, w->trace_id)) < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, W_DELAY, w->delay_ns);
        if (w->runtime_ns >= 0)
            tt_table_set_int(t, W_RT, w->runtime_ns);
        tt_table_set_int(t, W_TRACE, w->trace_id);
        if (w->rank >= 0)
            tt_table_set_int(t, W_RANK, w->rank);
        tt_table_set_int(t, W_DEVICE, w->device);
        tt_table_set_int(t, W_STREAM, w->stream);
        tt_table_set_int(t, W_TS, w->ts_ns);
    }
    return t;
}

/* ---- writing ---- */

struct bd_out {
    const tt_bd_options *o;
    FILE *f;
    tt_jw jw; /* JSON: the document */
    int rc;
};

/* one table: a heading (text / Markdown) or a JSON key, then the table */
static void put_table(struct bd_out *w, tt_table *t, const char *heading, const char *key,
                      const size_t *tcols, size_t ntc, const size_t *dcols, size_t ndc)
{
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    int rc;
    if (!t) {
        if (w->rc == 0)
            w->rc = tt__oom();
        return;
    }
    switch (w->o->format) {
    case TT_FORMAT_JSON:
        wo.cols = dcols;
        wo.ncols = ndc;
        tt_jw_nl(&w->jw, 2);
        rc = tt__table_json_array(t, &wo, &w->jw, key, 4);
        if (w->rc == 0)
            w->rc = rc;
        tt_table_free(t);
        return;
    case TT_FORMAT_CSV:
        wo.format = TT_FORMAT_CSV;
        wo.cols = dcols;
        wo.ncols = ndc;
        break;
    case TT_FORMAT_MARKDOWN:
        fprintf(w->f, "\n### %s\n\n", heading);
        wo.format = TT_FORMAT_MARKDOWN;
        wo.cols = tcols;
        wo.ncols = ntc;
        break;
    default:
        fprintf(w->f, "\n%s\n\n", heading);
        wo.indent = " ";
        wo.cols = tcols;
        wo.ncols = ntc;
    }
    if (tt_table_nrows(t) || w->o->format == TT_FORMAT_CSV) {
        if (w->rc == 0)
            w->rc = tt_table_write(t, &wo, w->f);
    } else {
        fputs(w->o->format == TT_FORMAT_MARKDOWN ? "(none)\n" : " (none)\n", w->f);
    }
    tt_table_free(t);
}

static tt_table *rows_table(const tt_bd_row *rows, size_t n, int64_t row_limit)
{
    tt_table *t = tt_table_new(row_cols, C_COUNT);
    size_t k;
    n = limit(n, row_limit);
    for (k = 0; t && k < n; k++)
        if (row_add(t, &rows[k]) < 0) {
            tt_table_free(t);
            return NULL;
        }
    return t;
}

/* the lines under the rank table: the skew of step time and compute */
static void put_skew(struct bd_out *w, const tt_bd_result *res)
{
    const char *ind = w->o->format == TT_FORMAT_MARKDOWN ? "" : " ";
    char rb[48];
    const tt_bd_row *x;
    if (res->nranks < 2)
        return;
    fputc('\n', w->f);
    if (res->slowest != (size_t)-1 && isfinite(res->step_skew)) {
        x = &res->ranks[res->slowest];
        fprintf(w->f, "%sstep time skew %.3f (max / median); slowest: %s%s, device %" PRId64
                      ", %.3f ms\n", ind, res->step_skew, x->rank >= 0 ? "rank " : "",
                tt__bd_rank_text(rb, sizeof(rb), x->rank, x->trace_id), x->device, x->step_ns / MS);
    }
    if (res->most_compute != (size_t)-1 && isfinite(res->compute_skew)) {
        x = &res->ranks[res->most_compute];
        fprintf(w->f, "%s%scompute skew %.3f (max / median); most compute: %s%s, device %" PRId64
                      ", %.3f ms\n", w->o->format == TT_FORMAT_MARKDOWN ? "\n" : "", ind,
                res->compute_skew, x->rank >= 0 ? "rank " : "",
                tt__bd_rank_text(rb, sizeof(rb), x->rank, x->trace_id), x->device,
                (double)x->compute_ns / MS);
    }
}

static void json_head(struct bd_out *w, const tt_bd_result *res)
{
    static const char *const by[] = { "rank", "step", "stream" };
    tt_jw *j = &w->jw;
    tt_jw_obj(j);
    tt_jw_kstr(j, "by", by[res->by % 3]);
    tt_jw_kint(j, "kernel_wait_ns", res->kernel_wait_ns);
    if (res->steps_set) {
        tt_jw_karr(j, "step_range");
        tt_jw_int(j, res->step_from);
        tt_jw_int(j, res->step_to);
        tt_jw_end(j);
    } else {
        tt_jw_knull(j, "step_range");
    }
    tt_jw_kuint(j, "traces", res->traces);
    tt_jw_kuint(j, "no_gpu_traces", res->no_gpu);
    tt_jw_knum(j, "step_skew", res->step_skew, 4);
    if (res->slowest != (size_t)-1)
        tt_jw_kint(j, "slowest_trace_id", res->ranks[res->slowest].trace_id);
    tt_jw_knum(j, "compute_skew", res->compute_skew, 4);
    if (res->most_compute != (size_t)-1)
        tt_jw_kint(j, "most_compute_trace_id", res->ranks[res->most_compute].trace_id);
}

static void text_head(struct bd_out *w, const tt_bd_result *res)
{
    char steps[96] = "";
    if (res->steps_set)
        snprintf(steps, sizeof(steps), " launched in ProfilerStep#%" PRId64 "..#%" PRId64,
                 res->step_from, res->step_to);
    fprintf(w->f, "%sGPU time per rank and device, from the first to the last GPU activity%s"
                  " (%zu trace%s",
            w->o->format == TT_FORMAT_MARKDOWN ? "### " : "", steps, res->traces,
            res->traces == 1 ? "" : "s");
    if (res->no_gpu)
        fprintf(w->f, "; %zu without GPU activity left out", res->no_gpu);
    fputs(")\n\n", w->f);
}

#define PUT(w, t, h, k, tc, dc) put_table(w, t, h, k, tc, NCOLS(tc), dc, NCOLS(dc))

int tt_breakdown_print(const tt_bd_result *res, const tt_bd_options *o, FILE *out)
{
    struct bd_out w;
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    const char *unit = by_unit(res->by);
    char h[200];
    int fmt = o->format;
    tt_table *t;
    if (res->by == TT_BD_BY_ANNOTATION)
        return tt__bd_annot_print(res, o, out);
    w.o = o;
    w.f = out;
    w.rc = 0;
    if (fmt == TT_FORMAT_CSV) {
        /* one table: the rows of --by */
        if (res->by == TT_BD_BY_RANK)
            PUT(&w, rows_table(res->ranks, res->nranks, o->row_limit), "", "", text_rank, data_rank);
        else if (res->by == TT_BD_BY_STEP)
            PUT(&w, rows_table(res->rows, res->nrows, o->row_limit), "", "", text_step, data_step);
        else
            PUT(&w, rows_table(res->rows, res->nrows, o->row_limit), "", "", text_stream,
                data_stream);
        return w.rc;
    }
    if (fmt == TT_FORMAT_JSON) {
        tt_jw_init_file(&w.jw, out, TT_JW_LINE);
        json_head(&w, res);
        PUT(&w, rows_table(res->ranks, res->nranks, o->row_limit), "", "ranks", text_rank,
            data_rank);
    } else {
        text_head(&w, res);
        if (!(t = rows_table(res->ranks, res->nranks, o->row_limit)))
            return tt__oom();
        wo.format = fmt == TT_FORMAT_MARKDOWN ? TT_FORMAT_MARKDOWN : TT_FORMAT_TABLE;
        wo.indent = " ";
        wo.cols = text_rank;
        wo.ncols = NCOLS(text_rank);
        w.rc = tt_table_write(t, &wo, out);
        tt_table_free(t);
        put_skew(&w, res);
        fprintf(out, "%s%sidle = host wait (the activity after a gap was launched after it began)"
                     " + kernel wait (other gaps under %.1f us) + other\n",
                fmt == TT_FORMAT_MARKDOWN ? "\n" : "", fmt == TT_FORMAT_MARKDOWN ? "" : " ",
                (double)res->kernel_wait_ns / US);
    }
    if (res->by == TT_BD_BY_STEP)
        PUT(&w, rows_table(res->rows, res->nrows, o->row_limit), "GPU time per step", "steps",
            text_step, data_step);
    else if (res->by == TT_BD_BY_STREAM)
        PUT(&w, rows_table(res->rows, res->nrows, o->row_limit), "GPU time per stream",
            "streams", text_stream, data_stream);
    snprintf(h, sizeof(h), "Kernel families: GPU time per %s (min / median / max over %zu %ss)",
             unit, res->by == TT_BD_BY_RANK ? res->nranks : res->nrows, unit);
    PUT(&w, family_table(res, o->row_limit), h, "families", text_fam, data_fam);
    snprintf(h, sizeof(h), "CPU ops: GPU time they launched per %s (min / median / max over"
             " %zu %ss)", unit, res->by == TT_BD_BY_RANK ? res->nranks : res->nrows, unit);
    PUT(&w, op_table(res, o->row_limit), h, "ops", text_op, data_op);
    PUT(&w, launch_table(res, o->row_limit),
        "Launches per family: delay = start - runtime call start, call = runtime call duration"
        " (p50, p95 interpolated)", "launches", text_launch, data_launch);
    PUT(&w, worst_table(res, o->row_limit), "Worst launches (largest delay)", "worst_launches",
        text_worst, data_worst);
    if (fmt == TT_FORMAT_JSON) {
        int rc;
        tt_jw_nl(&w.jw, 0);
        tt_jw_end(&w.jw);
        rc = tt_jw_finish(&w.jw);
        if (w.rc == 0 && rc == TT_ENOMEM)
            w.rc = tt__oom();
    }
    return w.rc; /* write errors are the caller's to check (ferror) */
}

/* compute, then print: the two steps of `tracetool breakdown` */
int tt_breakdown_db(tt_db *db, const tt_bd_options *o, FILE *out)
{
    tt_bd_result res;
    int rc = tt_breakdown_db_result(db, o, &res);
    if (rc == 0)
        rc = tt_breakdown_print(&res, o, out);
    tt_bd_result_free(&res);
    return rc;
}

int tt_breakdown_file(const char *path, const tt_bd_options *o, FILE *out)
{
    tt_bd_result res;
    int rc = tt_breakdown_file_result(path, o, &res);
    if (rc == 0)
        rc = tt_breakdown_print(&res, o, out);
    tt_bd_result_free(&res);
    return rc;
}
