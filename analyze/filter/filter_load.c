/*
 * analyze/filter/filter_load.c - --under's ops of one trace (tt__flt_load):
 * a reading of its slices alone (the record stream, store/ingest_rows.h:
 * a file's through tt__ingest_rows, a database's through tt__db_rows) keeps
 * the interval of every slice whose whole name matches, with its thread;
 * they are sorted and reduced to each thread's outermost ones at the end.
 * An op may come anywhere in the file: the analysis's own reading comes
 * after this one. Memory grows with the matching ops only. A 'B' slice
 * closed after its row was handed over has no dur in one reading: the
 * file is then read as the SQL passes leave it (TT_ROWS_RELINK).
 */
#include "common/compat.h"
#include "common/log.h"
#include "analyze/filter/filter_state.h"

#include <stdlib.h>
#include <string.h>

/* the first reading's own --under verdicts by string id */
struct loader {
    tt__flt *fl;
    unsigned char *v;
    size_t nv;
};

static int load_string(struct loader *ld, const tt__cell *row, const char *text)
{
    const tt__cell *id = &row[TT_C_STR_ID], *s = &row[TT_C_STR_S];
    unsigned char *v;
    int m;
    if (id->type != TT_CELL_INT || s->type != TT_CELL_TEXT)
        return 0;
    if (!(v = tt__flt_verdict_slot(&ld->v, &ld->nv, id->i)))
        return id->i < 0 ? 0 : tt__oom();
    if ((m = tt__flt_match(&ld->fl->under_re, text + s->i, s->len)) < 0)
        return m;
    *v = (unsigned char)(V_SEEN | (m ? V_MATCH : 0));
    return 0;
}

static int load_slice(struct loader *ld, const tt__cell *row, const char *text)
{
    const tt__cell *nm = &row[TT_C_SL_NAME], *ts = &row[TT_C_SL_TS], *dur = &row[TT_C_SL_DUR];
    tt__tkey k;
    if (nm->type != TT_CELL_INT || nm->i < 0 || (uint64_t)nm->i >= ld->nv ||
        !(ld->v[nm->i] & V_MATCH) || ts->type != TT_CELL_INT)
        return 0;
    k = tt__tkey_of_cells(&row[TT_C_SL_PID], &row[TT_C_SL_TID], text);
    return tt__flt_add_op(ld->fl, &k, ts->i,
                          dur->type == TT_CELL_INT && dur->i > 0 ? ts->i + dur->i : ts->i);
}

static int load_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                     const char *text)
{
    struct loader *ld = ctx;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = load_string(ld, row, text);
        else if (table == TT_ROWS_SLICE)
            rc = load_slice(ld, row, text);
    }
    return rc;
}

/* everything but the slices (and the strings, which always come) */
#define LOAD_SKIP                                                                             \
    (1u << TT_ROWS_RUNTIME | 1u << TT_ROWS_GPU | 1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW |  \
     1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | 1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

static const uint64_t load_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_NAME) | TT_COL(TT_C_SL_PID) | TT_COL(TT_C_SL_TID) |
                      TT_COL(TT_C_SL_TS) | TT_COL(TT_C_SL_DUR),
};

/* one reading into ld (relink: TT_ROWS_RELINK) */
static int load_once(struct loader *ld, const char *path, struct tt_db *db, int64_t trace,
                     unsigned relink, int *again)
{
    tt__rowsink sink;
    tt__rows_result res;
    int rc;
    memset(&sink, 0, sizeof(sink));
    memset(&res, 0, sizeof(res));
    sink.ctx = ld;
    sink.rows = load_rows;
    sink.cols = load_cols;
    tt__flt_ops_clear(&ld->fl->ops);
    if (ld->v)
        memset(ld->v, 0, ld->nv);
    if (db)
        rc = tt__db_rows(db, trace, &sink, LOAD_SKIP | TT_ROWS_NO_ARGS, &res);
    else
        rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS,
                             LOAD_SKIP | (relink ? relink : TT_ROWS_NO_STOP), &res);
    free(res.metadata);
    /* with the runtime calls and GPU rows skipped, only a late 'B' end is left */
    *again = rc == 0 && !db && !relink && res.needs_db;
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}

int tt__flt_load(tt__flt *fl, const char *path, struct tt_db *db, int64_t trace)
{
    struct loader ld;
    int rc, again = 0;
    if (!fl)
        return 0;
    tt__flt_reset(fl);
    if (!fl->have_under)
        return 0;
    memset(&ld, 0, sizeof(ld));
    ld.fl = fl;
    rc = load_once(&ld, path, db, trace, 0, &again);
    if (rc == 0 && again) {
        tt__log(TT_LOG_DEBUG, "filter", "--under: %s: 'B' slices closed late, read twice", path);
        rc = load_once(&ld, path, db, trace, TT_ROWS_RELINK, &again);
    }
    free(ld.v);
    if (rc == 0)
        rc = tt__flt_seal(fl);
    if (rc == 0)
        tt__log(TT_LOG_DEBUG, "filter", "--under '%s': %zu ops on %zu threads", fl->f.under,
                fl->ops.niv, fl->ops.nth);
    return rc;
}
