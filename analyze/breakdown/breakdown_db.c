/*
 * analyze/breakdown/breakdown_db.c - `tracetool breakdown DB`: the Chrome/Kineto
 * traces of a database (tt__db_traces, --trace and --rank), by rank then
 * id, each handed to the consumer of breakdown_rows.c by tt__db_rows. No
 * SQL here: the handle's names (db->source, db->path) are all it reads of
 * the store's internals.
 */
#include "common/compat.h"
#include "analyze/breakdown/breakdown_state.h"
#include "analyze/filter/filtering.h"
#include "store/db_internal.h"

static int cmp_db_trace(const void *a, const void *b)
{
    const tt__db_trace *x = a, *y = b;
    int64_t rx = x->have_rank ? x->rank : -1, ry = y->have_rank ? y->rank : -1;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int is_kineto(const tt__db_trace *t)
{
    return t->format == TT_FMT_CHROME || t->format == TT_FMT_CHROME_ARRAY;
}

int tt__bd_read_db_trace(struct bd_run *r, tt_db *db, int64_t id)
{
    tt__rowsink sink = { 0 };
    tt__db_trace *tl = NULL;
    size_t n = 0, k;
    int rc = tt__db_traces(db, &tl, &n);
    tt__bd_sink(r, &sink);
    for (k = 0; rc == 0 && k < n; k++)
        if (tl[k].id == id && (rc = tt__flt_load(r->fl, NULL, db, id)) == 0 &&
            (rc = tt__db_rows(db, id, &sink, TT__BD_SKIP | TT_ROWS_NO_ARGS, NULL)) == 0)
            rc = tt__bd_trace_end(r, id, tl[k].have_rank ? tl[k].rank : -1, tl[k].format);
    tt__db_traces_free(tl, n);
    return rc;
}

int tt_breakdown_db_result(tt_db *db, const tt_bd_options *o, tt_bd_result *res)
{
    struct bd_run r;
    tt__rowsink sink = { 0 };
    tt__db_trace *tl = NULL;
    size_t n = 0, k;
    int rc;
    if (TT__BD_ANNOT(o))
        return tt__bd_annot_result(NULL, db, o, res);
    rc = tt__bd_run_init(&r, o, res);
    if (rc == 0)
        rc = tt__db_traces(db, &tl, &n);
    if (rc == 0)
        TT_QSORT(tl, n, sizeof(*tl), cmp_db_trace);
    tt__bd_sink(&r, &sink);
    for (k = 0; rc == 0 && k < n; k++) {
        tt__db_trace *t = &tl[k];
        if (!is_kineto(t) || (o->trace_id && t->id != o->trace_id) ||
            (o->rank >= 0 && (!t->have_rank || t->rank != o->rank)))
            continue;
        if ((rc = tt__flt_load(r.fl, NULL, db, t->id)) == 0 &&
            (rc = tt__db_rows(db, t->id, &sink, TT__BD_SKIP | TT_ROWS_NO_ARGS, NULL)) == 0)
            rc = tt__bd_trace_end(&r, t->id, t->have_rank ? t->rank : -1, t->format);
    }
    if (rc == 0 && !r.ntr)
        rc = tt__db_none(db, o->trace_id || o->rank >= 0, "Chrome/Kineto trace");
    else if (rc == 0)
        rc = tt__bd_finish(&r, db->source ? db->source : db->path, !db->source);
    tt__db_traces_free(tl, n);
    tt__bd_run_release(&r);
    if (rc < 0)
        tt_bd_result_free(res);
    return rc;
}
