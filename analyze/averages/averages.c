/*
 * analyze/averages/averages.c - `tracetool averages`: torch's key_averages() and
 * table() recomputed from a stored trace (docs/TORCH.md 3).
 *
 * Computing and printing are apart: tt_averages_compute_db/_file give a
 * tt_avg_result (rows per trace, in the table's order, with the footer
 * totals), tt_averages_print prints it (averages_print.c), and
 * tt_averages_db/_file do both.
 *
 * Here: the database side of the pass. Each table of a trace is scanned as
 * stored (no ORDER BY) into the fixed-size records of averages_sort.c, and
 * the pass of averages_tree.c reads them in torch's order. A trace file is
 * read without a database when it can be (averages_stream.c), else through
 * a temporary database.
 */
#include "analyze/averages/averages_state.h"
#include "common/buf.h"
#include "common/tmath.h"

#include <string.h>

static void tkey_of_value(struct tkey *k, sqlite3_value *v)
{
    int t = sqlite3_value_type(v);
    memset(k, 0, sizeof(*k));
    k->is_null = t == SQLITE_NULL;
    k->is_str = t == SQLITE_TEXT;
    if (k->is_str) {
        k->str = (const char *)sqlite3_value_text(v);
        k->len = (size_t)sqlite3_value_bytes(v);
    } else {
        k->i = sqlite3_value_int64(v);
    }
}

static int64_t string_id(tt_db *db, const char *s)
{
    sqlite3_stmt *st;
    int64_t id = 0;
    if (sqlite3_prepare_v2(db->sql, "SELECT id FROM strings WHERE s = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, s, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

/* ---- the pass over a database ---- */

/*
 * The pass reads every event of the trace in torch's order: (ts, end DESC),
 * then kind so that a memory record at an op's start follows the op's push,
 * then id. kind: 0 CPU op (slices), 1 runtime call, 2 [memory] record, 3 GPU
 * activity, and with stacks KIND_PY, a python_function slice. Each table is
 * scanned as stored (no ORDER BY) into fixed-size records, sorted here in
 * runs of RUN_RECS (full runs spill to a temporary file) and merged: bounded
 * memory, and about twice as fast as SQLite's own sorter on the same rows.
 */
#define SCAN_PY 4 /* scan_sql[SCAN_PY]: the python_function slices */
static const char *const scan_sql[5] = {
    "SELECT s.id, s.name, s.pid, s.tid, s.ts, coalesce(s.dur, 0),"
    " coalesce(s.input_dims, ?6), CASE WHEN s.cat = ?2 THEN 1 ELSE 0 END, k.kernels,"
    " CASE WHEN ?5 > 0 THEN json_extract(s.args, '$.\"Call stack\"') END,"
    " CASE WHEN ?5 > 0 THEN s.seq_nr END, CASE WHEN ?5 > 0 THEN s.fwd_tid END"
    " FROM slices AS s LEFT JOIN temp.tt_avg_kernels AS k ON k.op_id = s.id"
    " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL AND (s.cat IS NULL OR s.cat IN (?2, ?3, ?4))",
    "SELECT r.id, r.name, r.pid, r.tid, r.ts, coalesce(r.dur, 0), NULL, 0, NULL, NULL, NULL, NULL"
    " FROM runtime AS r WHERE r.trace_id = ?1 AND r.ts IS NOT NULL",
    "SELECT m.id, m.name, m.pid, m.tid, m.ts, 0, m.device_type, m.bytes, NULL, NULL, NULL, NULL"
    " FROM memory AS m WHERE m.trace_id = ?1 AND m.ts IS NOT NULL AND m.bytes IS NOT NULL",
    "SELECT g.id, g.name, g.pid, g.tid, g.ts, coalesce(g.dur, 0),"
    " CASE g.kind WHEN 'annotation' THEN 1 ELSE 0 END, 0, NULL, NULL, NULL, NULL"
    " FROM gpu_ops AS g WHERE g.trace_id = ?1 AND g.ts IS NOT NULL"
    " AND g.kind IN ('kernel', 'memcpy', 'memset', 'annotation')",
    "SELECT s.id, s.name, s.pid, s.tid, s.ts, coalesce(s.dur, 0), NULL, 0, NULL, NULL, NULL, NULL"
    " FROM slices AS s WHERE s.trace_id = ?1 AND s.cat = ?2 AND s.ts IS NOT NULL",
};

/* ProfilerStep#N windows with from <= N <= to */
static int step_windows(tt_db *db, int64_t trace, const tt_avg_options *o, struct steps *w)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (!o->steps_set)
        return 0;
    if (tt_db_prepare(db, &st, "SELECT n.s, s.ts, s.ts + coalesce(s.dur, 0) FROM slices AS s"
                               " JOIN strings AS n ON n.id = s.name WHERE s.trace_id = ?1"
                               " AND n.s LIKE 'ProfilerStep#%'") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, trace);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *nm = (const char *)sqlite3_column_text(st, 0);
        long long k = atoll(nm + 13);
        tt__avg_steps_seen(w, k);
        if (k < o->step_from || k > o->step_to)
            continue;
        if ((rc = tt__avg_steps_add(w, sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 2))) < 0)
            break;
    }
    sqlite3_finalize(st);
    tt__avg_steps_normalize(w);
    return rc;
}

/* the stack node of an op's "Call stack" (column 9) into e; 0 or an error */
static int scan_call_stack(struct state *s, sqlite3_stmt *st, struct arec *e)
{
    e->seq = sqlite3_column_type(st, 10) == SQLITE_INTEGER ? sqlite3_column_int64(st, 10) : -1;
    if (sqlite3_column_int64(st, 11) > 0)
        e->flags |= AREC_FWD_TID;
    if (sqlite3_column_type(st, 9) != SQLITE_TEXT)
        return 0;
    e->stack = tt__avg_callstack_node(s, (const char *)sqlite3_column_text(st, 9));
    return e->stack < 0 ? tt_error_set(TT_ENOMEM, "out of memory") : 0;
}

/* Read the trace's events of one kind (scan_sql index) into the runs. */
static int scan_kind(struct state *s, struct runs *runs, int kind, int64_t trace,
                     const int64_t ids[5])
{
    sqlite3_stmt *st;
    int r, rc = 0;
    if (kind == SCAN_PY && !ids[4])
        return 0; /* no python_function event (or no stacks wanted) */
    if (tt_db_prepare(s->db, &st, scan_sql[kind]) < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, trace);
    if (kind == SCAN_PY)
        sqlite3_bind_int64(st, 2, ids[4]);
    if (kind == 0) {
        sqlite3_bind_int64(st, 2, ids[0]);
        sqlite3_bind_int64(st, 3, ids[1]);
        sqlite3_bind_int64(st, 4, ids[2]);
        sqlite3_bind_int64(st, 5, s->want_stacks);
        /* an op without Input Dims has torch's input_shapes [] */
        if (ids[3])
            sqlite3_bind_int64(st, 6, ids[3]);
        else
            sqlite3_bind_null(st, 6);
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct arec e;
        int64_t dur = sqlite3_column_int64(st, 5);
        memset(&e, 0, sizeof(e));
        e.kind = kind == SCAN_PY ? KIND_PY : kind;
        e.seq = -1;
        e.id = sqlite3_column_int64(st, 0);
        e.name = sqlite3_column_int64(st, 1);
        e.ts = sqlite3_column_int64(st, 4);
        e.end = tt_sat_add(e.ts, dur); /* the order uses ts + dur as stored */
        e.a = sqlite3_column_int64(st, 6);
        e.b = kind == 0 ? sqlite3_column_int64(st, 8) : sqlite3_column_int64(st, 7);
        e.flags = kind == 0 && sqlite3_column_int(st, 7) ? AREC_USER_ANNOTATION : 0;
        if (kind <= 1 || kind == SCAN_PY) {
            struct tkey pk, tk;
            struct thread_stack *t;
            tkey_of_value(&pk, sqlite3_column_value(st, 2));
            tkey_of_value(&tk, sqlite3_column_value(st, 3));
            t = tt__avg_thread_for(s, &pk, &tk);
            if (!t) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                break;
            }
            e.thread = (int32_t)(t - s->threads);
        }
        if (kind == 0 && s->want_stacks && (rc = scan_call_stack(s, st, &e)) < 0)
            break;
        if (kind == SCAN_PY)
            s->stk.has_py = 1;
        if ((rc = tt__avg_runs_add(runs, &e)) < 0)
            break;
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(s->db, "cannot read events");
    sqlite3_finalize(st);
    return rc;
}
/* device time launched by each op, keyed by op id (bounded: SQLite) */
static int sum_kernels(tt_db *db, int64_t trace)
{
    sqlite3_stmt *k;
    int rc, r;
    if ((rc = tt_db_exec(db, "DROP TABLE IF EXISTS temp.tt_avg_kernels;"
                             "CREATE TEMP TABLE tt_avg_kernels(op_id INTEGER PRIMARY KEY,"
                             " kernels INTEGER)")) < 0 ||
        (rc = tt_db_prepare(db, &k,
                            "INSERT INTO temp.tt_avg_kernels SELECT op_id, tt_satsum(dur) FROM gpu_ops"
                            " WHERE trace_id = ?1 AND op_id IS NOT NULL"
                            " AND kind IN ('kernel', 'memcpy', 'memset') GROUP BY op_id")) < 0)
        return rc;
    sqlite3_bind_int64(k, 1, trace);
    r = sqlite3_step(k);
    sqlite3_finalize(k);
    return r == SQLITE_DONE ? 0 : tt_db_error(db, "cannot sum device time per op");
}

static int run_pass(struct state *s, int64_t trace)
{
    int64_t cpu_op = string_id(s->db, "cpu_op"), ua = string_id(s->db, "user_annotation");
    int64_t op_legacy = string_id(s->db, "Operator");
    int64_t mem_name = string_id(s->db, "[memory]");
    int64_t ids[5];
    struct steps win = { NULL, 0, 0, 0, 0, 0 };
    int rc, kind;
    struct runs runs;

    memset(&runs, 0, sizeof(runs));
    if ((rc = step_windows(s->db, trace, s->o, &win)) < 0 ||
        (rc = sum_kernels(s->db, trace)) < 0) {
        free(win.win);
        return rc;
    }
    ids[0] = ua ? ua : -1;
    ids[1] = cpu_op ? cpu_op : -1;
    ids[2] = op_legacy ? op_legacy : -1;
    ids[3] = string_id(s->db, "[]");
    ids[4] = s->want_stacks ? string_id(s->db, "python_function") : 0;
    for (kind = 0; kind <= SCAN_PY && rc == 0; kind++)
        rc = scan_kind(s, &runs, kind, trace, ids);
    if (rc == 0)
        rc = tt__avg_pass_merge(s, &runs, &win, mem_name, NULL);
    tt__avg_runs_release(&runs);
    free(win.win);
    return rc;
}

/* ---- the public entry points ---- */

struct tinfo {
    int64_t id, rank;
    int have_rank, mem;
    char *label;
};

/* The traces the options select, in the printed order (rank, id). */
static int select_traces(tt_db *db, const tt_avg_options *o, struct tinfo **out, size_t *nout)
{
    sqlite3_stmt *tr;
    struct tinfo *ts = NULL;
    size_t nt = 0, at = 0;
    int rc = 0;
    *out = NULL;
    *nout = 0;
    if (tt_db_prepare(db, &tr,
                      "SELECT id, path, rank, metadata LIKE '%\"profile_memory\":1%' FROM traces"
                      " WHERE format IN ('kineto-json', 'chrome-array') AND (?1 = 0 OR id = ?1)"
                      " AND (?2 < 0 OR rank = ?2) ORDER BY rank, id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, o->trace_id);
    sqlite3_bind_int64(tr, 2, o->rank);
    while (sqlite3_step(tr) == SQLITE_ROW) {
        const char *label = (const char *)sqlite3_column_text(tr, 1);
        if (TT_ALLOC_GROW(ts, nt + 1, at) < 0 ||
            !(ts[nt].label = strdup(label ? label : ""))) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            break;
        }
        ts[nt].id = sqlite3_column_int64(tr, 0);
        ts[nt].have_rank = sqlite3_column_type(tr, 2) != SQLITE_NULL;
        ts[nt].rank = sqlite3_column_int64(tr, 2);
        ts[nt].mem = sqlite3_column_int(tr, 3);
        nt++;
    }
    sqlite3_finalize(tr);
    *out = ts;
    *nout = nt;
    return rc;
}

/*
 * Every selected trace of the database into res. The traces are collected
 * first: the per-trace pass drops and creates a temp table, which SQLite
 * refuses while another statement is reading.
 */
static int compute_db(tt_db *db, const tt_avg_options *o, tt_avg_result *res)
{
    struct tinfo *ts;
    size_t nt, k;
    int rc, txn;
    if (!tt_avg_sort_key_valid(o->sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", o->sort_by);
    /* one read transaction: each statement outside one takes and drops
     * the file's locks (a string looked up per distinct name or row) */
    txn = sqlite3_get_autocommit(db->sql) && tt_db_exec(db, "BEGIN") == 0;
    rc = select_traces(db, o, &ts, &nt);
    if (rc == 0 && nt == 0)
        rc = tt__db_none(db, o->trace_id || o->rank >= 0, "Chrome/Kineto trace");
    res->header_per_trace = nt > 1 || o->header_per_trace;
    for (k = 0; k < nt && rc == 0; k++) {
        struct state s;
        tt_avg_trace t;
        memset(&s, 0, sizeof(s));
        s.db = db;
        s.o = o;
        s.want_stacks = o->group_by_stack > 0 || (o->version >= 3 && o->collect_stacks);
        if ((rc = run_pass(&s, ts[k].id)) < 0) {
            tt__avg_state_release(&s);
            break;
        }
        rc = tt__avg_trace_result(&s, ts[k].id, ts[k].label, ts[k].have_rank, ts[k].rank,
                                  ts[k].mem, &t);
        if (rc == 0 && (rc = tt__avg_result_add(res, &t)) < 0)
            tt__avg_trace_release(&t);
    }
    for (k = 0; k < nt; k++)
        free(ts[k].label);
    free(ts);
    tt_db_exec(db, "DROP TABLE IF EXISTS temp.tt_avg_kernels");
    if (txn)
        tt_db_exec(db, "COMMIT");
    return rc;
}

int tt_averages_compute_db(tt_db *db, const tt_avg_options *opts, tt_avg_result **out)
{
    tt_avg_result *res = calloc(1, sizeof(*res));
    int rc;
    *out = NULL;
    if (!res)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if ((rc = compute_db(db, opts, res)) < 0) {
        tt_avg_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int tt_averages_compute_file(const char *path, const tt_avg_options *opts, tt_avg_result **out)
{
    tt_avg_result *res;
    tt_db *db;
    int rc;
    *out = NULL;
    if (!tt_avg_sort_key_valid(opts->sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", opts->sort_by);
    if (!(res = calloc(1, sizeof(*res))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    rc = tt__avg_stream(path, opts, res);
    if (rc == 1) {
        /* what only a database gives: ingest into a temporary one */
        if ((rc = tt__open_ingested_temp(&db, path)) == 0) {
            rc = compute_db(db, opts, res);
            tt_db_free(db);
        }
    }
    if (rc < 0) {
        tt_avg_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int tt_averages_db(tt_db *db, const tt_avg_options *opts, FILE *out)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_db(db, opts, &res);
    if (rc < 0)
        return rc;
    rc = tt_averages_print(res, opts, out);
    tt_avg_result_free(res);
    return rc;
}

int tt_averages_file(const char *path, const tt_avg_options *opts, FILE *out)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_file(path, opts, &res);
    if (rc < 0)
        return rc;
    rc = tt_averages_print(res, opts, out);
    tt_avg_result_free(res);
    return rc;
}
