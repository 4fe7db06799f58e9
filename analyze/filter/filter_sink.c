/*
 * analyze/filter/filter_sink.c - a sink in front of an analysis's sink
 * (tt__flt_sink): the rows of the chosen tables that the filters leave out
 * never reach it, and a GPU row's gpu_links and gpu_launch reach it only
 * with the row. The rows that pass are copied into a batch of their own
 * (the text stays the source's), in their order.
 */
#include "common/compat.h"
#include "analyze/filter/filter_state.h"

#include <string.h>

/* the cells the verdicts read, besides what the analysis reads */
static const uint64_t need_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_NAME) | TT_COL(TT_C_SL_TS) | TT_COL(TT_C_SL_DUR) |
                      TT_COL(TT_C_SL_PID) | TT_COL(TT_C_SL_TID),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_TS) | TT_COL(TT_C_RT_DUR) |
                        TT_COL(TT_C_RT_PID) | TT_COL(TT_C_RT_TID),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_TS),
    [TT_ROWS_MEMORY] = TT_COL(TT_C_MEM_NAME) | TT_COL(TT_C_MEM_TS) | TT_COL(TT_C_MEM_PID) |
                       TT_COL(TT_C_MEM_TID),
};

static int wants_gpu(const tt__flt *fl)
{
    return (fl->tables & (1u << TT_ROWS_GPU)) != 0;
}

/* the launches queue when a verdict or the analysis needs them */
static int queue_launches(const tt__flt *fl)
{
    return (wants_gpu(fl) && tt__flt_wants_launch(fl)) || fl->inner.gpu_launch;
}

/* the GPU rows go through gpu_row: filtered, or their links held for them */
static int through_gpu_row(const tt__flt *fl)
{
    return wants_gpu(fl) || fl->inner.gpu_links || fl->inner.gpu_launch;
}

static int w_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    tt__flt *fl = ctx;
    struct flt_link *l;
    if (fl->links_head && fl->links_head == fl->nlinks)
        fl->links_head = fl->nlinks = 0;
    if (TT_ALLOC_GROW(fl->links, fl->nlinks + 1, fl->alinks) < 0)
        return tt__oom();
    l = &fl->links[fl->nlinks++];
    l->op = op;
    l->name = name;
    l->rt = rt;
    l->rt_ts = rt_ts;
    return 0;
}

static int w_launch(void *ctx, const tt__gpu_launch *l)
{
    return tt__flt_launch(ctx, l);
}

static int w_kernel(void *ctx, int64_t op_id, int64_t op_ts, int64_t op_end, int64_t dur)
{
    tt__flt *fl = ctx;
    return fl->inner.kernel(fl->inner.ctx, op_id, op_ts, op_end, dur);
}

/* one GPU row: its waiting links and launch taken; 1 when it passes (and
 * they went on to the analysis) */
static int gpu_row(tt__flt *fl, const tt__cell *row)
{
    const tt__gpu_launch *l = NULL;
    const struct flt_link *k = NULL;
    int pass = 1, rc;
    if (fl->inner.gpu_links) {
        if (fl->links_head == fl->nlinks)
            return tt_error_set(TT_ERROR, "filters: a GPU activity came without its links");
        k = &fl->links[fl->links_head++];
    }
    if (queue_launches(fl) && !(l = tt__flt_launch_next(fl)))
        return tt_error_set(TT_ERROR, "filters: a GPU activity came without its launch");
    if (wants_gpu(fl) && (pass = tt__flt_gpu_fails_with(fl, row, l)) != 0)
        return pass < 0 ? pass : 0;
    if (k && (rc = fl->inner.gpu_links(fl->inner.ctx, k->op, k->name, k->rt, k->rt_ts)) != 0)
        return rc < 0 ? rc : TT_ECANCELED;
    if (l && fl->inner.gpu_launch && (rc = fl->inner.gpu_launch(fl->inner.ctx, l)) != 0)
        return rc < 0 ? rc : TT_ECANCELED;
    return 1;
}

/* one row of a filtered table: 1 passes, 0 not, < 0 an error */
static int row_passes(tt__flt *fl, int table, const tt__cell *row, const char *text)
{
    switch (table) {
    case TT_ROWS_SLICE: return tt__flt_slice(fl, row, text);
    case TT_ROWS_RUNTIME: return tt__flt_runtime(fl, row, text);
    case TT_ROWS_MEMORY: return tt__flt_memory(fl, row, text);
    case TT_ROWS_GPU: return gpu_row(fl, row);
    default: return 1;
    }
}

static int w_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                  const char *text)
{
    tt__flt *fl = ctx;
    size_t kept = 0;
    int r, rc;
    if (table == TT_ROWS_STR) {
        for (r = 0; r < nrows; r++) {
            const tt__cell *row = cells + (size_t)r * (size_t)ncols;
            if (row[TT_C_STR_ID].type == TT_CELL_INT && row[TT_C_STR_S].type == TT_CELL_TEXT &&
                (rc = tt__flt_string(fl, row[TT_C_STR_ID].i, text + row[TT_C_STR_S].i,
                                     row[TT_C_STR_S].len)) < 0)
                return rc;
        }
    }
    if (!(fl->tables & (1u << table)) && !(table == TT_ROWS_GPU && through_gpu_row(fl)))
        return fl->inner.rows(fl->inner.ctx, table, nrows, ncols, cells, text);
    if (TT_ALLOC_GROW(fl->cells, (size_t)nrows * (size_t)ncols + 1, fl->acells) < 0)
        return tt__oom();
    for (r = 0; r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if ((rc = row_passes(fl, table, row, text)) < 0)
            return rc;
        if (rc)
            memcpy(fl->cells + kept++ * (size_t)ncols, row, (size_t)ncols * sizeof(*row));
    }
    return kept ? fl->inner.rows(fl->inner.ctx, table, (int)kept, ncols, fl->cells, text) : 0;
}

int tt__flt_sink(tt__flt *fl, const tt__rowsink *inner, unsigned tables, tt__rowsink *out)
{
    int t;
    *out = *inner;
    if (!fl)
        return 0;
    fl->inner = *inner;
    fl->tables = tables;
    memset(out, 0, sizeof(*out));
    out->ctx = fl;
    out->rows = w_rows;
    out->kernel = inner->kernel ? w_kernel : NULL;
    out->gpu_links = inner->gpu_links ? w_links : NULL;
    out->gpu_launch = queue_launches(fl) ? w_launch : NULL;
    if (inner->cols) {
        /* the columns asked for and those the verdicts read */
        for (t = 0; t < TT_ROWS_COUNT; t++)
            fl->cols[t] = inner->cols[t] && (tables & (1u << t)) ? inner->cols[t] | need_cols[t]
                                                                 : inner->cols[t];
        out->cols = fl->cols;
    }
    return 0;
}
