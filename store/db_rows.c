/*
 * store/db_rows.c - a stored trace handed back as the ingest's rows
 * (tt__db_rows), and the list of a database's traces (tt__db_traces).
 *
 * The analyses are consumers of tt__rowsink (store/ingest_rows.h): a trace
 * file reaches them through tt__ingest_rows, a database through this file.
 * The SELECT lists come from the same record declarations as the INSERTs
 * (store/records.h), so a column added there reaches both sources at once.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"

#include <stdlib.h>
#include <string.h>

enum { BATCH_ROWS = 512 };

#define COLNAME_(P, NAME, SQL) SQL,
#define COLS_(ID, REC, TABLE) static const char *const cols_##REC[] = { TT_REC_##REC(COLNAME_) };
TT_RECORDS(COLS_)

static const struct {
    const char *table;
    const char *const *cols;
    int ncols;
} tables[TT_ROWS_COUNT] = {
#define ROW_(ID, REC, TABLE) [ID] = { TABLE, cols_##REC, TT_NC_##REC },
    TT_RECORDS(ROW_)
};
#undef ROW_
#undef COLS_
#undef COLNAME_

/* one batch of rows being filled; only the cells of the selected columns
 * are ever written (the others stay NULL from calloc) */
struct batch {
    tt__cell *cells;
    int nrows, ncols;
    int nsel, sel[64]; /* the cell of each selected column */
    tt_buf text;
};

/* "SELECT c1, c2, ... FROM table [WHERE trace_id = ?1] ORDER BY rowid" of
 * the columns in mask (0: all) but the args with no_args; bt->sel says
 * which cell each one fills */
static char *select_sql(int t, int no_args, uint64_t mask, struct batch *bt)
{
    tt_buf b;
    int c;
    tt_buf_init(&b);
    tt_buf_addstr(&b, "SELECT ");
    bt->nsel = 0;
    for (c = 0; c < tables[t].ncols && c < 64; c++) {
        if ((mask && !(mask & TT_COL(c))) || (no_args && !strcmp(tables[t].cols[c], "args")))
            continue;
        if (bt->nsel)
            tt_buf_addstr(&b, ", ");
        tt_buf_addstr(&b, tables[t].cols[c]);
        bt->sel[bt->nsel++] = c;
    }
    if (!bt->nsel)
        tt_buf_addstr(&b, "NULL"); /* no cell wanted: the rows still count */
    tt_buf_addstr(&b, " FROM ");
    tt_buf_addstr(&b, tables[t].table);
    /* a trace's rows were inserted together: their rowids are one range,
     * read in order straight from the table (the trace_id index would cost
     * a table seek a row); +trace_id keeps SQLite off that index */
    tt_buf_addstr(&b, t == TT_ROWS_STR ? " ORDER BY id"
                                       : " WHERE rowid BETWEEN ?2 AND ?3 AND +trace_id = ?1"
                                         " ORDER BY rowid");
    if (b.oom) {
        tt_buf_release(&b);
        return NULL;
    }
    tt_buf_addch(&b, '\0');
    return b.buf;
}

/* the current row of st, from column off, as the batch's next row */
static int take_row(struct batch *bt, sqlite3_stmt *st, int off)
{
    tt__cell *row = bt->cells + (size_t)bt->nrows * (size_t)bt->ncols;
    int k;
    for (k = 0; k < bt->nsel; k++) {
        tt__cell *cell = &row[bt->sel[k]];
        int col = k + off;
        switch (sqlite3_column_type(st, col)) {
        case SQLITE_NULL:
            cell->type = TT_CELL_NULL;
            cell->i = 0;
            cell->len = 0;
            break;
        case SQLITE_INTEGER:
            cell->type = TT_CELL_INT;
            cell->i = sqlite3_column_int64(st, col);
            cell->len = 0;
            break;
        case SQLITE_FLOAT: /* never written by the ingest; a hand-edited database */
            cell->type = TT_CELL_INT;
            cell->i = (int64_t)sqlite3_column_double(st, col);
            cell->len = 0;
            break;
        default: {
            const unsigned char *str = sqlite3_column_text(st, col);
            int n = sqlite3_column_bytes(st, col);
            cell->type = TT_CELL_TEXT;
            cell->i = (int64_t)bt->text.len;
            cell->len = (size_t)n;
            if (str)
                tt_buf_add(&bt->text, str, (size_t)n);
            if (bt->text.oom)
                return tt__oom();
        }
        }
    }
    bt->nrows++;
    return 0;
}

/*
 * The kernels of a batch of GPU rows: those linked to a CPU op, by rowid
 * range (+trace_id keeps SQLite off the (trace_id, op_id) index, which
 * would read all the trace's GPU rows for every batch).
 */
#define KERNELS_SQL                                                                        \
    "SELECT g.op_id, s.ts, s.dur, g.dur FROM gpu_ops AS g JOIN slices AS s"                 \
    " ON s.id = g.op_id WHERE +g.trace_id = ?1 AND g.rowid BETWEEN ?2 AND ?3"               \
    " AND g.kind IN ('kernel', 'memcpy', 'memset') AND g.dur IS NOT NULL"                   \
    " AND s.ts IS NOT NULL ORDER BY g.rowid"

/*
 * The links of a batch of GPU rows (sink->gpu_links, sink->gpu_launch), one
 * row each, as the batch reads them: the op's name and the runtime call's
 * start, name and thread, looked up by id (the rowids of slices and runtime).
 */
#define LINKS_SQL                                                                          \
    "SELECT g.op_id, s.name, g.runtime_id, r.ts, r.name, r.pid, r.tid FROM gpu_ops AS g"    \
    " LEFT JOIN slices AS s ON s.id = g.op_id LEFT JOIN runtime AS r ON r.id = g.runtime_id" \
    " WHERE g.rowid BETWEEN ?2 AND ?3 AND +g.trace_id = ?1 ORDER BY g.rowid"

static int64_t col_or(sqlite3_stmt *st, int col, int64_t none)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? none : sqlite3_column_int64(st, col);
}

/* a column of LINKS_SQL as the id the reader gives a pid or tid */
static void id_of(sqlite3_stmt *st, int col, tt_id *id)
{
    int t = sqlite3_column_type(st, col);
    memset(id, 0, sizeof(*id));
    id->present = t != SQLITE_NULL;
    id->is_str = t == SQLITE_TEXT || t == SQLITE_BLOB;
    if (id->is_str)
        id->str = (const char *)sqlite3_column_text(st, col);
    else if (id->present)
        id->num = sqlite3_column_int64(st, col);
    if (id->is_str && !id->str)
        id->str = "";
}

/* sink->gpu_launch for the row of LINKS_SQL st is on */
static int launch_of(sqlite3_stmt *st, const tt__rowsink *sink)
{
    tt__gpu_launch l;
    memset(&l, 0, sizeof(l));
    l.op_id = col_or(st, 0, 0);
    l.op_name = col_or(st, 1, 0);
    l.rt_id = col_or(st, 2, 0);
    l.rt_ts = l.rt_id ? col_or(st, 3, TT_ROWS_NO_TS) : TT_ROWS_NO_TS;
    if (l.rt_id && sqlite3_column_type(st, 4) != SQLITE_NULL) { /* the call is there */
        tt_id pid, tid;
        l.rt_name = col_or(st, 4, 0);
        id_of(st, 5, &pid);
        id_of(st, 6, &tid);
        l.rt_thread = tt__tkey_of_ids(&pid, &tid);
        l.has_thread = 1;
    }
    return sink->gpu_launch(sink->ctx, &l);
}

/* for a batch of GPU rows (rowids lo..hi), each row of st (KERNELS_SQL or
 * LINKS_SQL): sink->kernel for those linked to a CPU op (after the batch),
 * or sink->gpu_links for each of them (links; before it) */
static int batch_calls(tt_db *db, sqlite3_stmt *st, int64_t trace_id, int64_t lo, int64_t hi,
                       const tt__rowsink *sink, int links)
{
    int r, rc = 0;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, trace_id);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        if (links) {
            int64_t rt = col_or(st, 2, 0);
            if (sink->gpu_links)
                rc = sink->gpu_links(sink->ctx, col_or(st, 0, 0), col_or(st, 1, 0), rt,
                                     rt ? col_or(st, 3, TT_ROWS_NO_TS) : TT_ROWS_NO_TS);
            if (rc == 0 && sink->gpu_launch)
                rc = launch_of(st, sink);
        } else {
            int64_t ts = sqlite3_column_int64(st, 1), dur = sqlite3_column_int64(st, 2);
            rc = sink->kernel(sink->ctx, sqlite3_column_int64(st, 0), ts,
                              dur < 0 ? ts : ts + dur, sqlite3_column_int64(st, 3));
        }
        if (rc > 0)
            rc = TT_ECANCELED;
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(db, links ? "cannot read the GPU activities' links"
                                   : "cannot read the GPU activities' ops");
    return rc;
}

/* hand the batch over; GPU batches also give their links before (through
 * lst) and their kernels after (through kst) */
static int flush(tt_db *db, sqlite3_stmt *kst, sqlite3_stmt *lst, int64_t trace_id, int t,
                 struct batch *bt, int64_t lo, int64_t hi, const tt__rowsink *sink)
{
    int rc;
    if (!bt->nrows)
        return 0;
    if (lst && (rc = batch_calls(db, lst, trace_id, lo, hi, sink, 1)) < 0)
        return rc;
    rc = sink->rows(sink->ctx, t, bt->nrows, bt->ncols, bt->cells, bt->text.buf ? bt->text.buf : "");
    if (rc)
        return rc < 0 ? rc : TT_ECANCELED;
    if (kst && (rc = batch_calls(db, kst, trace_id, lo, hi, sink, 0)) < 0)
        return rc;
    bt->nrows = 0;
    bt->text.len = 0;
    return 0;
}

/* the first and last rowid of the trace's rows in table t ([1, 0]: none);
 * single: the database holds this trace alone */
static int rowid_span(tt_db *db, int64_t trace_id, int t, int single, int64_t span[2])
{
    char sql[256];
    sqlite3_stmt *st;
    int r;
    span[0] = 1;
    span[1] = 0;
    /*
     * min(rowid) and max(rowid) under a WHERE read the trace's index
     * entries, or the whole table where no index starts with trace_id, once
     * per table and trace. With one trace in the database, the table's two
     * ends bound its rows (SQLite finds a lone min or max through the
     * b-tree): the range read keeps its +trace_id test, so a stray row of
     * another trace is still left out.
     */
    if (single)
        snprintf(sql, sizeof(sql), "SELECT (SELECT min(rowid) FROM %s), (SELECT max(rowid) FROM %s)",
                 tables[t].table, tables[t].table);
    else
        snprintf(sql, sizeof(sql), "SELECT min(rowid), max(rowid) FROM %s WHERE trace_id = ?1",
                 tables[t].table);
    if (tt_db_prepare(db, &st, sql) < 0)
        return TT_EDB;
    if (!single)
        sqlite3_bind_int64(st, 1, trace_id);
    r = sqlite3_step(st);
    if (r == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        span[0] = sqlite3_column_int64(st, 0);
        span[1] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return r == SQLITE_ROW ? 0 : tt_db_error(db, "cannot read the stored rows");
}

static int table_rows(tt_db *db, int64_t trace_id, int t, const tt__rowsink *sink,
                      int no_args, int single)
{
    struct batch bt;
    sqlite3_stmt *st = NULL, *kst = NULL, *lst = NULL;
    char *sql;
    int r, rc = 0;
    int64_t lo = 0, hi = 0;

    memset(&bt, 0, sizeof(bt));
    sql = select_sql(t, no_args, t != TT_ROWS_STR && sink->cols ? sink->cols[t] : 0, &bt);
    bt.ncols = tables[t].ncols;
    tt_buf_init(&bt.text);
    if (!sql || !(bt.cells = calloc((size_t)BATCH_ROWS * (size_t)bt.ncols, sizeof(*bt.cells)))) {
        free(sql);
        return tt__oom();
    }
    /* GPU rows: their rowid too, for the kernels of the batch */
    if (t == TT_ROWS_GPU) {
        char *q = malloc(strlen(sql) + 16);
        if (!q) {
            rc = tt__oom();
            goto out;
        }
        memcpy(q, "SELECT rowid, ", 14);
        strcpy(q + 14, sql + 7);
        free(sql);
        sql = q;
    }
    if (tt_db_prepare(db, &st, sql) < 0 ||
        (t == TT_ROWS_GPU && sink->kernel && tt_db_prepare(db, &kst, KERNELS_SQL) < 0) ||
        (t == TT_ROWS_GPU && (sink->gpu_links || sink->gpu_launch) &&
         tt_db_prepare(db, &lst, LINKS_SQL) < 0)) {
        rc = TT_EDB;
        goto out;
    }
    if (t != TT_ROWS_STR) {
        int64_t span[2];
        if ((rc = rowid_span(db, trace_id, t, single, span)) < 0)
            goto out;
        sqlite3_bind_int64(st, 1, trace_id);
        sqlite3_bind_int64(st, 2, span[0]);
        sqlite3_bind_int64(st, 3, span[1]);
    }
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        if (t == TT_ROWS_GPU) { /* column 0 is the rowid, the cells follow */
            if (!bt.nrows)
                lo = sqlite3_column_int64(st, 0);
            hi = sqlite3_column_int64(st, 0);
        }
        rc = take_row(&bt, st, t == TT_ROWS_GPU);
        if (rc == 0 && bt.nrows == BATCH_ROWS)
            rc = flush(db, kst, lst, trace_id, t, &bt, lo, hi, sink);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read the stored rows");
    if (rc == 0)
        rc = flush(db, kst, lst, trace_id, t, &bt, lo, hi, sink);
out:
    sqlite3_finalize(st);
    sqlite3_finalize(kst);
    sqlite3_finalize(lst);
    free(sql);
    free(bt.cells);
    tt_buf_release(&bt.text);
    return rc;
}

static tt_trace_format format_of(const char *name)
{
    int f;
    for (f = TT_FMT_CHROME; f <= TT_FMT_MEMTL_RAW; f++)
        if (name && !strcmp(name, tt_format_name((tt_trace_format)f)))
            return (tt_trace_format)f;
    return TT_FMT_UNKNOWN;
}

/* res: the trace's format, rank, world size, span and metadata;
 * TT_ENOTFOUND when absent */
static int trace_res(tt_db *db, int64_t trace_id, tt__rows_result *res)
{
    sqlite3_stmt *st;
    int r, rc = 0;
    if (tt_db_prepare(db, &st, "SELECT format, rank, metadata, events, world_size,"
                               " start_ns, end_ns, pid FROM traces WHERE id = ?1") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, trace_id);
    r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        if (res) {
            const char *md = (const char *)sqlite3_column_text(st, 2);
            res->format = format_of((const char *)sqlite3_column_text(st, 0));
            res->have_rank = sqlite3_column_type(st, 1) != SQLITE_NULL;
            res->rank = res->have_rank ? sqlite3_column_int64(st, 1) : 0;
            res->stats.events = sqlite3_column_int64(st, 3);
            res->have_world = sqlite3_column_type(st, 4) != SQLITE_NULL;
            res->world_size = sqlite3_column_int64(st, 4);
            res->have_span = sqlite3_column_type(st, 5) != SQLITE_NULL &&
                             sqlite3_column_type(st, 6) != SQLITE_NULL;
            res->start_ns = sqlite3_column_int64(st, 5);
            res->end_ns = sqlite3_column_int64(st, 6);
            res->have_pid = sqlite3_column_type(st, 7) == SQLITE_INTEGER;
            res->pid = sqlite3_column_int64(st, 7);
            if (!(res->metadata = strdup(md ? md : "{}")))
                rc = tt__oom();
        }
    } else if (r == SQLITE_DONE) {
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no trace %lld in this database",
                             (long long)trace_id);
    } else {
        rc = tt_db_error(db, "cannot read the trace");
    }
    sqlite3_finalize(st);
    return rc;
}

/* 1 when db holds one trace, 0 when several, or TT_EDB */
static int single_trace(tt_db *db)
{
    sqlite3_stmt *st;
    int r, n = 0;
    if (tt_db_prepare(db, &st, "SELECT count(*) FROM (SELECT 1 FROM traces LIMIT 2)") < 0)
        return TT_EDB;
    if ((r = sqlite3_step(st)) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return r == SQLITE_ROW ? n == 1 : tt_db_error(db, "cannot count the traces");
}

int tt__db_rows(tt_db *db, int64_t trace_id, const tt__rowsink *sink, unsigned skip,
                tt__rows_result *res)
{
    static const int order[] = { TT_ROWS_STR, TT_ROWS_SLICE, TT_ROWS_RUNTIME, TT_ROWS_GPU,
                                 TT_ROWS_MEMORY, TT_ROWS_FLOW, TT_ROWS_INSTANT, TT_ROWS_META,
                                 TT_ROWS_ET, TT_ROWS_MEMTL };
    size_t i;
    int rc, single;
    if (res)
        memset(res, 0, sizeof(*res));
    tt_error_clear();
    if ((rc = trace_res(db, trace_id, res)) < 0 || (rc = single_trace(db)) < 0)
        return rc;
    single = rc;
    for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        if (order[i] != TT_ROWS_STR && (skip & (1u << order[i])))
            continue;
        if ((rc = table_rows(db, trace_id, order[i], sink, (skip & TT_ROWS_NO_ARGS) != 0,
                             single)) != 0)
            break;
    }
    if (rc != 0 && res) {
        free(res->metadata);
        res->metadata = NULL;
    }
    return rc;
}

static int64_t int_or(sqlite3_stmt *st, int c, int64_t dflt)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, c);
}

int tt__db_traces(tt_db *db, tt__db_trace **out, size_t *n)
{
    sqlite3_stmt *st;
    tt__db_trace *v = NULL;
    size_t cap = 0;
    int r, rc = 0;
    *out = NULL;
    *n = 0;
    if (tt_db_prepare(db, &st,
                      "SELECT id, path, format, rank, world_size, start_ns, end_ns, pid,"
                      " schema_version, gzip, bytes, base_time_ns, events, truncated,"
                      " (SELECT coalesce(sum(count), 0) FROM import_issues AS i"
                      "  WHERE i.trace_id = traces.id AND i.kind = 'repaired'),"
                      " (SELECT coalesce(sum(count), 0) FROM import_issues AS i"
                      "  WHERE i.trace_id = traces.id AND i.kind LIKE 'skipped%')"
                      " FROM traces ORDER BY id") < 0)
        return TT_EDB;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        tt__db_trace *t;
        const char *p = (const char *)sqlite3_column_text(st, 1);
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            tt__db_trace *nv = realloc(v, nc * sizeof(*nv));
            if (!nv) {
                rc = tt__oom();
                break;
            }
            v = nv;
            cap = nc;
        }
        t = &v[*n];
        memset(t, 0, sizeof(*t));
        t->id = sqlite3_column_int64(st, 0);
        t->format = format_of((const char *)sqlite3_column_text(st, 2));
        t->have_rank = sqlite3_column_type(st, 3) != SQLITE_NULL;
        t->rank = int_or(st, 3, 0);
        t->world_size = int_or(st, 4, -1);
        t->start_ns = int_or(st, 5, INT64_MIN);
        t->end_ns = int_or(st, 6, INT64_MIN);
        t->have_pid = sqlite3_column_type(st, 7) == SQLITE_INTEGER;
        t->pid = int_or(st, 7, 0);
        t->have_world = sqlite3_column_type(st, 4) != SQLITE_NULL;
        t->gzip = sqlite3_column_int(st, 9);
        t->bytes = sqlite3_column_int64(st, 10);
        t->base_time_ns = sqlite3_column_int64(st, 11);
        t->events = sqlite3_column_int64(st, 12);
        t->truncated = sqlite3_column_int(st, 13);
        t->repaired = sqlite3_column_int64(st, 14);
        t->skipped = sqlite3_column_int64(st, 15);
        if (!(t->path = strdup(p ? p : ""))) {
            rc = tt__oom();
            break;
        }
        if (sqlite3_column_type(st, 8) != SQLITE_NULL &&
            !(t->schema_version = strdup((const char *)sqlite3_column_text(st, 8)))) {
            free(t->path);
            rc = tt__oom();
            break;
        }
        (*n)++;
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read the traces");
    sqlite3_finalize(st);
    if (rc < 0) {
        tt__db_traces_free(v, *n);
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}

void tt__db_traces_free(tt__db_trace *t, size_t n)
{
    size_t i;
    for (i = 0; t && i < n; i++) {
        free(t[i].path);
        free(t[i].schema_version);
    }
    free(t);
}
