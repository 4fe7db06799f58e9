/*
 * analyze/export/export.c - `tracetool export`: the chosen traces and steps of a
 * database as one Chrome trace (tracetool/export.h says what is written).
 *
 * One query per event table covers every chosen trace, ordered by (trace,
 * ts); the six cursors are merged here, so each trace comes out in time
 * order and each table is scanned and sorted once (SQLite sorts in bounded
 * memory, spilling to $TMPDIR). What stays in memory is per trace: its
 * threads, the names the source gave them, its step windows.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/strtab.h"
#include "common/tmath.h"
#include "formats/json.h"
#include "store/db_internal.h"
#include "tracetool/export.h"
#include "analyze/export/export_out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* tids, pids and sort indexes stay below 2^31 (Perfetto reads them as uint32) */
#define CLASS_SHIFT 24
/* flow and async ids are remapped within 2^53 (exact in a JavaScript number) */
#define ID_SPACE (((int64_t)1) << 53)

/* ---------------------------------------------------------------- traces */

struct xtrace {
    int64_t id, rank, cpu_pid, base, start, out_pid;
    int have_rank, have_cpu_pid;
    char *file;
    char *devprops, *distinfo; /* the source's deviceProperties, distributedInfo
                                * (minified JSON) or NULL */
    int64_t *win;         /* step windows [a, b], sorted, merged: 2 * nwin */
    size_t nwin, awin, nsteps;
};

enum { T_SLICE, T_RUNTIME, T_GPU, T_MEMORY, T_FLOW, T_INSTANT, T_COUNT };

struct cursor {
    sqlite3_stmt *st;
    int live;
    int64_t ord, ts;
};

/* a value of a pid or tid column, as a map key and for names */
struct idv {
    int type;            /* SQLITE_INTEGER, SQLITE_TEXT, SQLITE_NULL */
    int64_t i;
    const char *s;
};

struct ex {
    tt_db *db;
    const tt_export_options *o;
    tt_export_result *res;
    struct xout out;
    struct xtrace *tr;
    size_t ntr;
    int64_t base;        /* the smallest base_time_ns of the chosen traces */
    int64_t next_tid;    /* tids are unique over the whole file */
    size_t cur;          /* the trace being written (index into tr) */
    int cur_set;
    tt_strtab threads;   /* pid/tid key -> output tid, per trace */
    tt_strtab meta;      /* "P"pid / "T"pid,tid key -> 1 + index into names */
    char **names;
    size_t nnames, anames;
    int64_t other_seq;   /* sort order of tracks that are neither CPU nor GPU */
    tt_buf key, name;    /* scratch */
    int first_event;
    struct cursor cur_[T_COUNT];
};

static void id_of(struct idv *v, sqlite3_stmt *st, int c)
{
    v->type = sqlite3_column_type(st, c);
    v->i = 0;
    v->s = NULL;
    if (v->type == SQLITE_INTEGER)
        v->i = sqlite3_column_int64(st, c);
    else if (v->type != SQLITE_NULL) {
        v->type = SQLITE_TEXT;
        v->s = (const char *)sqlite3_column_text(st, c);
        if (!v->s)
            v->type = SQLITE_NULL;
    }
}

/* a key part: a type byte, then an integer's 8 bytes or a text with its NUL
 * (so no two values share one), without a printf per event */
static void key_add(tt_buf *k, const struct idv *v)
{
    tt_buf_addch(k, v->type == SQLITE_INTEGER ? 'i' : v->type == SQLITE_TEXT ? 't' : 'n');
    if (v->type == SQLITE_INTEGER)
        tt_buf_add(k, &v->i, sizeof(v->i));
    else if (v->type == SQLITE_TEXT)
        tt_buf_add(k, v->s, strlen(v->s) + 1);
}

static void id_text(tt_buf *b, const struct idv *v)
{
    if (v->type == SQLITE_INTEGER)
        tt_buf_addf(b, "%" PRId64, v->i);
    else if (v->type == SQLITE_TEXT && v->s[0])
        tt_buf_addstr(b, v->s);
    else
        tt_buf_addstr(b, "(none)");
}

static int64_t map_find(tt_strtab *t, const tt_buf *k)
{
    size_t slot;
    if (!t->nslots)
        return 0;
    return tt_strtab_find(t, k->buf, k->len, tt_strhash(k->buf, k->len), &slot);
}

static int map_add(tt_strtab *t, const tt_buf *k, int64_t id)
{
    if (k->oom || tt_strtab_add(t, k->buf, k->len, tt_strhash(k->buf, k->len), id) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    return 0;
}

static void map_reset(tt_strtab *t)
{
    tt_strtab_release(t);
    tt_buf_init(&t->pool);
}

/* ---------------------------------------------------------------- choosing traces */

/* what errors name: the trace files of a temporary database, else its path */
static const char *db_name(const tt_db *db)
{
    return db->source ? db->source : db->path;
}

static int rank_chosen(const tt_export_options *o, const struct xtrace *t)
{
    size_t i;
    if (!o->ranks)
        return 1;
    for (i = 0; t->have_rank && i < o->nranks; i++)
        if (o->ranks[i] == t->rank)
            return 1;
    return 0;
}

/* the source's top-level deviceProperties and distributedInfo, from the
 * metadata object ingest kept (minified, malloc'd; NULL when absent) */
static int keep_meta(struct xtrace *t, const char *meta)
{
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    const char *k;
    size_t kl;
    int rc = 0;
    if (!meta)
        return 0;
    tt_jp_init(&jp, "", meta, 0, meta, strlen(meta));
    if (tt_jp_peek(&jp) != TT_JT_OBJECT || tt_jp_object_begin(&jp) != 0)
        return 0;
    while (rc == 0 && tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
        char **dst = kl == 16 && !memcmp(k, "deviceProperties", 16)  ? &t->devprops
                     : kl == 15 && !memcmp(k, "distributedInfo", 15) ? &t->distinfo
                                                                      : NULL;
        tt_buf b = TT_BUF_INIT;
        if (!dst || *dst) {
            if (tt_jp_skip(&jp) < 0)
                break;
            continue;
        }
        if (tt_jp_minify(&jp, &b) < 0) {
            tt_buf_release(&b);
            break;
        }
        if (b.oom || !(*dst = strndup(b.buf, b.len)))
            rc = tt_error_set(TT_ENOMEM, "out of memory");
        tt_buf_release(&b);
    }
    tt_arena_release(&a);
    return rc;
}

static int load_traces(struct ex *x)
{
    sqlite3_stmt *st;
    size_t alloc = 0;
    int r;
    if (tt_db_prepare(x->db, &st,
                      "SELECT id, rank, pid, base_time_ns, start_ns, file_name, metadata"
                      " FROM traces"
                      " WHERE format IN ('kineto-json', 'chrome-array')"
                      " ORDER BY rank IS NULL, rank, id") < 0)
        return TT_EDB;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct xtrace t;
        memset(&t, 0, sizeof(t));
        t.id = sqlite3_column_int64(st, 0);
        t.have_rank = sqlite3_column_type(st, 1) == SQLITE_INTEGER;
        t.rank = sqlite3_column_int64(st, 1);
        t.have_cpu_pid = sqlite3_column_type(st, 2) == SQLITE_INTEGER;
        t.cpu_pid = sqlite3_column_int64(st, 2);
        t.base = sqlite3_column_int64(st, 3);
        t.start = sqlite3_column_int64(st, 4);
        if ((x->o->trace_id && t.id != x->o->trace_id) || !rank_chosen(x->o, &t))
            continue;
        if (TT_ALLOC_GROW(x->tr, x->ntr + 1, alloc) < 0 ||
            !(t.file = strdup(sqlite3_column_text(st, 5) ? (const char *)sqlite3_column_text(st, 5)
                                                          : "")) ||
            keep_meta(&t, (const char *)sqlite3_column_text(st, 6)) < 0) {
            free(t.file);
            free(t.devprops);
            free(t.distinfo);
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        x->tr[x->ntr++] = t;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return tt_db_error(x->db, "cannot list the traces");
    if (!x->ntr && (x->o->trace_id || x->o->ranks))
        return tt_error_set_at(TT_ENOTFOUND, db_name(x->db), -1,
                               "no Chrome/Kineto trace matches --trace/--rank");
    return x->ntr ? 0 : tt__db_none(x->db, 0, "Chrome/Kineto trace");
}

/* pid = rank when the ranks are known, distinct and small; else a dense index.
 * The ranks are in order, so equal ones are neighbours. */
static void assign_pids(struct ex *x)
{
    size_t i;
    int by_rank = 1;
    int64_t maxpid = 0;
    x->base = x->tr[0].base;
    for (i = 0; i < x->ntr; i++) {
        const struct xtrace *t = &x->tr[i];
        if (!t->have_rank || t->rank < 0 || t->rank >= (1 << 20) ||
            (i && x->tr[i - 1].rank == t->rank))
            by_rank = 0;
        if (t->base < x->base)
            x->base = t->base;
    }
    for (i = 0; i < x->ntr; i++) {
        x->tr[i].out_pid = by_rank ? x->tr[i].rank : (int64_t)i;
        if (x->tr[i].out_pid > maxpid)
            maxpid = x->tr[i].out_pid;
    }
    /* tids never equal a pid: a viewer takes tid == pid for a main thread */
    x->next_tid = maxpid + 1;
}

/* ---------------------------------------------------------------- steps */

static int win_cmp(const void *a, const void *b)
{
    const int64_t *p = a, *q = b;
    return p[0] < q[0] ? -1 : p[0] > q[0];
}

static void win_normalize(struct xtrace *t)
{
    size_t i, k = 0;
    if (t->nwin > 1)
        qsort(t->win, t->nwin, 2 * sizeof(*t->win), win_cmp);
    for (i = 0; i < t->nwin; i++) {
        int64_t a = t->win[2 * i], b = t->win[2 * i + 1];
        if (b < a)
            continue;
        if (k && a <= t->win[2 * k - 1]) {
            if (b > t->win[2 * k - 1])
                t->win[2 * k - 1] = b;
            continue;
        }
        t->win[2 * k] = a;
        t->win[2 * k + 1] = b;
        k++;
    }
    t->nwin = k;
}

/* ts in a window (the windows are sorted and disjoint) */
static int in_windows(const struct xtrace *t, int64_t ts)
{
    size_t lo = 0, hi = t->nwin;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->win[2 * mid] <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ts <= t->win[2 * (lo - 1) + 1];
}

static struct xtrace *trace_by_id(struct ex *x, int64_t id)
{
    size_t i;
    for (i = 0; i < x->ntr; i++)
        if (x->tr[i].id == id)
            return &x->tr[i];
    return NULL;
}

/* The chosen ProfilerStep#N slices of every chosen trace, in one scan of
 * slices (the step names are a handful of strings). LIKE and atoll as in
 * `averages --steps`. */
static int load_steps(struct ex *x)
{
    sqlite3_stmt *st;
    int r;
    size_t i, with = 0;
    if (tt_db_exec(x->db, "DROP TABLE IF EXISTS temp.tt_exp_step;"
                          "CREATE TEMP TABLE tt_exp_step(id INTEGER PRIMARY KEY)") < 0 ||
        tt_db_prepare(x->db, &st, "SELECT id, s FROM strings WHERE s LIKE 'ProfilerStep#%'") < 0)
        return TT_EDB;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        long long k = atoll((const char *)sqlite3_column_text(st, 1) + 13);
        char sql[96];
        if (k < x->o->step_from || k > x->o->step_to)
            continue;
        snprintf(sql, sizeof(sql), "INSERT INTO temp.tt_exp_step VALUES(%" PRId64 ")",
                 (int64_t)sqlite3_column_int64(st, 0));
        if (tt_db_exec(x->db, sql) < 0) {
            sqlite3_finalize(st);
            return TT_EDB;
        }
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return tt_db_error(x->db, "cannot read the step names");
    if (tt_db_prepare(x->db, &st,
                      "SELECT s.trace_id, s.ts, s.ts + coalesce(s.dur, 0) FROM slices AS s"
                      " WHERE s.name IN (SELECT id FROM temp.tt_exp_step) AND s.ts IS NOT NULL") < 0)
        return TT_EDB;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct xtrace *t = trace_by_id(x, sqlite3_column_int64(st, 0));
        if (!t)
            continue;
        if (TT_ALLOC_GROW(t->win, 2 * t->nwin + 2, t->awin) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        t->win[2 * t->nwin] = sqlite3_column_int64(st, 1);
        t->win[2 * t->nwin + 1] = sqlite3_column_int64(st, 2);
        t->nwin++;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return tt_db_error(x->db, "cannot read the steps");
    for (i = 0; i < x->ntr; i++) {
        x->tr[i].nsteps = x->tr[i].nwin;
        win_normalize(&x->tr[i]);
        with += x->tr[i].nwin > 0;
    }
    x->res->no_step = (int64_t)(x->ntr - with);
    if (!with)
        return tt_error_set_at(TT_ENOTFOUND, db_name(x->db), -1,
                               "no ProfilerStep#%" PRId64 "..#%" PRId64 " in the chosen traces",
                               x->o->step_from, x->o->step_to);
    return 0;
}

/* temp.tt_exp_tr: the chosen traces, their order and the span of their
 * steps (NULL: the whole trace), which every cursor joins */
static int fill_trace_table(struct ex *x)
{
    sqlite3_stmt *st;
    size_t i;
    int rc = 0;
    if (tt_db_exec(x->db, "DROP TABLE IF EXISTS temp.tt_exp_tr;"
                          "CREATE TEMP TABLE tt_exp_tr(trace_id INTEGER PRIMARY KEY,"
                          " ord INTEGER NOT NULL, lo INTEGER, hi INTEGER)") < 0 ||
        tt_db_prepare(x->db, &st, "INSERT INTO temp.tt_exp_tr VALUES(?1, ?2, ?3, ?4)") < 0)
        return TT_EDB;
    for (i = 0; i < x->ntr && rc == 0; i++) {
        const struct xtrace *t = &x->tr[i];
        if (x->o->steps_set && !t->nwin)
            continue;
        sqlite3_bind_int64(st, 1, t->id);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        if (x->o->steps_set) {
            sqlite3_bind_int64(st, 3, t->win[0]);
            sqlite3_bind_int64(st, 4, t->win[2 * t->nwin - 1]);
        } else {
            sqlite3_bind_null(st, 3);
            sqlite3_bind_null(st, 4);
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = tt_db_error(x->db, "cannot choose the traces");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- cursors */

/*
 * Every cursor selects ord, ts, the step key (the ts that decides the step),
 * id, then its table's columns from C_FIRST on. A GPU activity's step key is
 * its runtime call's start when it has one.
 */
enum { C_ORD, C_TS, C_KEY, C_ID, C_FIRST };

enum { S_PH = C_FIRST, S_NAME, S_CAT, S_PID, S_TID, S_DUR, S_EXT, S_RF, S_SEQ, S_FWD, S_EVIDX,
       S_DIMS, S_TYPES, S_ARGS };
enum { R_NAME = C_FIRST, R_CAT, R_PID, R_TID, R_DUR, R_CORR, R_EXT, R_CBID, R_ARGS, R_FLOW };
enum { G_NAME = C_FIRST, G_CAT, G_PID, G_TID, G_DUR, G_DEVICE, G_STREAM, G_CONTEXT, G_CORR,
       G_EXT, G_GX, G_GY, G_GZ, G_BX, G_BY, G_BZ, G_REGS, G_SHMEM, G_BYTES, G_ARGS, G_FLOW,
       G_KIND };
enum { M_PH = C_FIRST, M_NAME, M_CAT, M_PID, M_TID, M_DEVTYPE, M_DEVID, M_ADDR, M_BYTES,
       M_TOTAL, M_RESERVED, M_EVIDX, M_ARGS };
enum { F_PH = C_FIRST, F_NAME, F_CAT, F_PID, F_TID, F_ID, F_BP, F_ARGS };
enum { I_PH = C_FIRST, I_NAME, I_CAT, I_PID, I_TID, I_DUR, I_SCOPE, I_ID, I_ARGS };

static const struct {
    const char *table, *cols, *joins;
} cursor_sql[T_COUNT] = {
    { "slices",
      "t.ph, n.s, c.s, t.pid, t.tid, t.dur, t.external_id, t.rf_id, t.seq_nr, t.fwd_tid,"
      " t.ev_idx, d.s, y.s, t.args",
      " LEFT JOIN strings AS d ON d.id = t.input_dims"
      " LEFT JOIN strings AS y ON y.id = t.input_types" },
    { "runtime",
      "n.s, c.s, t.pid, t.tid, t.dur, t.correlation, t.external_id, t.cbid, t.args, t.flow", "" },
    { "gpu_ops",
      "n.s, c.s, t.pid, t.tid, t.dur, t.device, t.stream, t.context, t.correlation,"
      " t.external_id, t.grid_x, t.grid_y, t.grid_z, t.block_x, t.block_y, t.block_z,"
      " t.registers, t.shared_mem, t.bytes, t.args, t.flow, t.kind", "" },
    { "memory",
      "t.ph, n.s, c.s, t.pid, t.tid, t.device_type, t.device_id, t.addr, t.bytes,"
      " t.total_allocated, t.total_reserved, t.ev_idx, t.args", "" },
    { "flow_events", "t.ph, n.s, c.s, t.pid, t.tid, t.flow_id, t.bp, t.args", "" },
    { "instants", "t.ph, n.s, c.s, t.pid, t.tid, t.dur, t.scope, t.event_id, t.args", "" },
};

/* CROSS JOIN keeps the event table outermost: one scan of it for every
 * chosen trace, the rest found by primary key */
static int cursor_open(struct ex *x, int k)
{
    tt_buf sql = TT_BUF_INIT;
    int launch = k == T_GPU && x->o->steps_set;
    const char *key = launch ? "coalesce(r.ts, t.ts)" : "t.ts";
    int rc = 0, r;
    tt_buf_addf(&sql,
                "SELECT x.ord, t.ts, %s, t.id, %s FROM %s AS t"
                " CROSS JOIN temp.tt_exp_tr AS x ON x.trace_id = t.trace_id"
                " JOIN strings AS n ON n.id = t.name LEFT JOIN strings AS c ON c.id = t.cat%s%s"
                " WHERE t.ts IS NOT NULL%s%s%s ORDER BY x.ord, t.ts, t.id",
                key, cursor_sql[k].cols, cursor_sql[k].table, cursor_sql[k].joins,
                launch ? " LEFT JOIN runtime AS r ON r.id = t.runtime_id" : "",
                x->o->steps_set ? " AND " : "", x->o->steps_set ? key : "",
                x->o->steps_set ? " BETWEEN x.lo AND x.hi" : "");
    if (sql.oom)
        rc = tt_error_set(TT_ENOMEM, "out of memory");
    else if (tt_db_prepare(x->db, &x->cur_[k].st, sql.buf) < 0)
        rc = TT_EDB;
    tt_buf_release(&sql);
    if (rc < 0)
        return rc;
    r = sqlite3_step(x->cur_[k].st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return tt_db_error(x->db, "cannot read the events");
    x->cur_[k].live = r == SQLITE_ROW;
    x->cur_[k].ord = x->cur_[k].live ? sqlite3_column_int64(x->cur_[k].st, C_ORD) : 0;
    x->cur_[k].ts = x->cur_[k].live ? sqlite3_column_int64(x->cur_[k].st, C_TS) : 0;
    return 0;
}

static int cursor_next(struct ex *x, struct cursor *c)
{
    int r = sqlite3_step(c->st);
    if (r == SQLITE_ROW) {
        c->ord = sqlite3_column_int64(c->st, C_ORD);
        c->ts = sqlite3_column_int64(c->st, C_TS);
        return 0;
    }
    c->live = 0;
    return r == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read the events");
}

/* the cursor with the smallest (trace, ts); ties in table order */
static struct cursor *cursor_min(struct ex *x)
{
    struct cursor *best = NULL;
    int k;
    for (k = 0; k < T_COUNT; k++) {
        struct cursor *c = &x->cur_[k];
        if (c->live && (!best || c->ord < best->ord || (c->ord == best->ord && c->ts < best->ts)))
            best = c;
    }
    return best;
}

/* ---------------------------------------------------------------- threads */

static int add_name(struct ex *x, const char *s)
{
    char *d;
    if (TT_ALLOC_GROW(x->names, x->nnames + 1, x->anames) < 0 || !(d = strdup(s)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    x->names[x->nnames++] = d;
    return 0;
}

static void drop_names(struct ex *x)
{
    size_t i;
    for (i = 0; i < x->nnames; i++)
        free(x->names[i]);
    x->nnames = 0;
    map_reset(&x->meta);
    map_reset(&x->threads);
}

/* the source's process and thread names of one trace: processes by their
 * labels ("GPU 0", "CPU") else their name, threads by their name */
static int load_names(struct ex *x, int64_t trace)
{
    static const char *const q[2] = {
        "SELECT pid, NULL, coalesce(labels, name) FROM processes WHERE trace_id = ?1",
        "SELECT pid, tid, name FROM threads WHERE trace_id = ?1",
    };
    int k, r, rc = 0;
    drop_names(x);
    for (k = 0; k < 2 && rc == 0; k++) {
        sqlite3_stmt *st;
        if (tt_db_prepare(x->db, &st, q[k]) < 0)
            return TT_EDB;
        sqlite3_bind_int64(st, 1, trace);
        while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
            struct idv p, t;
            const char *v = (const char *)sqlite3_column_text(st, 2);
            if (!v || !*v)
                continue;
            id_of(&p, st, 0);
            id_of(&t, st, 1);
            tt_buf_reset(&x->key);
            tt_buf_addstr(&x->key, k ? "T" : "P");
            key_add(&x->key, &p);
            if (k)
                key_add(&x->key, &t);
            if ((rc = add_name(x, v)) == 0)
                rc = map_add(&x->meta, &x->key, (int64_t)x->nnames);
        }
        if (rc == 0 && r != SQLITE_DONE)
            rc = tt_db_error(x->db, "cannot read the process and thread names");
        sqlite3_finalize(st);
    }
    return rc;
}

static const char *meta_name(struct ex *x, const char *kind, const struct idv *p,
                             const struct idv *t)
{
    int64_t i;
    tt_buf_reset(&x->key);
    tt_buf_addstr(&x->key, kind);
    key_add(&x->key, p);
    if (t)
        key_add(&x->key, t);
    i = map_find(&x->meta, &x->key);
    return i > 0 ? x->names[i - 1] : NULL;
}

/* The thread's name and sort index: CPU threads of the profiled process as
 * the source named them ("thread 1234 (python3)"), then GPU streams behind
 * their device ("GPU 0 stream 7"), then the rest ("Spans PyTorch Profiler"). */
static int64_t thread_label(struct ex *x, const struct xtrace *tr, const struct idv *p,
                            const struct idv *t)
{
    const char *tn = meta_name(x, "T", p, t), *pn;
    size_t n;
    tt_buf_reset(&x->name);
    if (p->type == SQLITE_INTEGER && tr->have_cpu_pid && p->i == tr->cpu_pid) {
        if (tn)
            tt_buf_addstr(&x->name, tn);
        else {
            tt_buf_addstr(&x->name, "thread ");
            id_text(&x->name, t);
        }
        return t->type == SQLITE_INTEGER && t->i >= 0 && t->i < (1 << CLASS_SHIFT)
                   ? t->i : (1 << CLASS_SHIFT) - 1;
    }
    pn = meta_name(x, "P", p, NULL);
    if (pn)
        tt_buf_addstr(&x->name, pn);
    else {
        tt_buf_addstr(&x->name, p->type == SQLITE_INTEGER ? "pid " : "");
        id_text(&x->name, p);
    }
    tt_buf_addch(&x->name, ' ');
    if (tn)
        tt_buf_addstr(&x->name, tn);
    else {
        tt_buf_addstr(&x->name, p->type != SQLITE_INTEGER ? ""
                                : pn && !strncmp(pn, "GPU", 3) ? "stream " : "tid ");
        id_text(&x->name, t);
    }
    /* Kineto's thread names end in a space ("stream 7 ") */
    for (n = x->name.len; n && x->name.buf[n - 1] == ' '; n--)
        x->name.buf[n - 1] = '\0';
    x->name.len = n;
    if (p->type == SQLITE_INTEGER && t->type == SQLITE_INTEGER)
        return ((int64_t)1 << CLASS_SHIFT) + ((p->i & 0xff) << 16) + (t->i & 0xffff);
    return ((int64_t)2 << CLASS_SHIFT) + (x->other_seq++ & 0xffffff);
}

static void begin_event(struct ex *x)
{
    if (x->first_event)
        x->first_event = 0;
    else
        PUTS(&x->out, ",\n");
    x->res->events++;
}

static void put_meta(struct ex *x, const char *what, int64_t pid, int64_t tid, int64_t ts,
                     const char *key, const char *text, int64_t num)
{
    begin_event(x);
    PUTS(&x->out, "{\"ph\":\"M\",\"name\":");
    xo_str(&x->out, what);
    PUTS(&x->out, ",\"pid\":");
    xo_i64(&x->out, pid);
    PUTS(&x->out, ",\"tid\":");
    xo_i64(&x->out, tid);
    PUTS(&x->out, ",\"ts\":");
    xo_us(&x->out, ts);
    PUTS(&x->out, ",\"args\":{");
    xo_str(&x->out, key);
    PUTS(&x->out, ":");
    if (text)
        xo_str(&x->out, text);
    else
        xo_i64(&x->out, num);
    PUTS(&x->out, "}}");
    x->res->counts[TT_EXPORT_METADATA]++;
}

/* the output tid of a source pid/tid; a thread seen for the first time gets
 * its thread_name and thread_sort_index here, before its first event */
static int thread_of(struct ex *x, sqlite3_stmt *st, int pc, int tc, int64_t ts, int64_t *tid)
{
    const struct xtrace *tr = &x->tr[x->cur];
    struct idv p, t;
    int64_t sort;
    int rc;
    id_of(&p, st, pc);
    id_of(&t, st, tc);
    tt_buf_reset(&x->key);
    key_add(&x->key, &p);
    key_add(&x->key, &t);
    if ((*tid = map_find(&x->threads, &x->key)) > 0)
        return 0;
    *tid = x->next_tid++;
    if ((rc = map_add(&x->threads, &x->key, *tid)) < 0)
        return rc;
    sort = thread_label(x, tr, &p, &t);
    if (x->name.oom)
        return tt_error_set(TT_ENOMEM, "out of memory");
    put_meta(x, "thread_name", tr->out_pid, *tid, ts, "name", x->name.buf, 0);
    put_meta(x, "thread_sort_index", tr->out_pid, *tid, ts, "sort_index", NULL, sort);
    x->res->threads++;
    return 0;
}

/* every process first: its name, order and the file it came from */
static void put_processes(struct ex *x)
{
    size_t i;
    for (i = 0; i < x->ntr; i++) {
        const struct xtrace *t = &x->tr[i];
        int64_t ts = tt_sat_add(t->start, tt_sat_sub(t->base, x->base));
        char label[64];
        if (!t->have_rank)
            snprintf(label, sizeof(label), "trace %" PRId64, t->id);
        else if (t->out_pid == t->rank)
            snprintf(label, sizeof(label), "rank %" PRId64, t->rank);
        else
            snprintf(label, sizeof(label), "rank %" PRId64 " (trace %" PRId64 ")", t->rank,
                     t->id);
        put_meta(x, "process_name", t->out_pid, 0, ts, "name", label, 0);
        put_meta(x, "process_sort_index", t->out_pid, 0, ts, "sort_index", NULL,
                 t->have_rank ? t->rank : t->out_pid);
        put_meta(x, "process_labels", t->out_pid, 0, ts, "labels", t->file, 0);
        x->res->processes++;
    }
}

/* ---------------------------------------------------------------- events */

/* A flow or async id made unique over the file: id * ntraces + trace when it
 * fits (one trace: the id itself), else a hash of both within 2^53. */
static void put_id(struct ex *x, sqlite3_stmt *st, int c)
{
    int64_t n = (int64_t)x->ntr, i = (int64_t)x->cur, v;
    char t[48];
    size_t len;
    if (sqlite3_column_type(st, c) == SQLITE_INTEGER) {
        v = sqlite3_column_int64(st, c);
        if (n == 1) {
            xo_i64(&x->out, v);
            return;
        }
        if (v >= 0 && v <= (ID_SPACE - 1 - i) / n) {
            xo_i64(&x->out, v * n + i);
            return;
        }
    } else if (n == 1) {
        xo_col(&x->out, st, c);
        return;
    }
    len = (size_t)snprintf(t, sizeof(t), "%" PRId64 ":", i);
    tt_buf_reset(&x->key);
    tt_buf_add(&x->key, t, len);
    tt_buf_add(&x->key, sqlite3_column_text(st, c), (size_t)sqlite3_column_bytes(st, c));
    xo_u64(&x->out, tt_strhash(x->key.buf, x->key.len) % (uint64_t)ID_SPACE);
}

/* {"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":.. of a row (the
 * thread's names first when it is new); *ts: the written ts in ns */
static int event_head(struct ex *x, sqlite3_stmt *st, const char *ph, int name_c, int cat_c,
                      int pid_c, int tid_c, int64_t *ts, int64_t *tid)
{
    const struct xtrace *tr = &x->tr[x->cur];
    int rc;
    *ts = tt_sat_add(sqlite3_column_int64(st, C_TS), tt_sat_sub(tr->base, x->base));
    if ((rc = thread_of(x, st, pid_c, tid_c, *ts, tid)) < 0)
        return rc;
    begin_event(x);
    PUTS(&x->out, "{\"ph\":");
    xo_str(&x->out, ph);
    if (sqlite3_column_type(st, cat_c) != SQLITE_NULL) {
        PUTS(&x->out, ",\"cat\":");
        xo_col(&x->out, st, cat_c);
    }
    PUTS(&x->out, ",\"name\":");
    xo_col(&x->out, st, name_c);
    PUTS(&x->out, ",\"pid\":");
    xo_i64(&x->out, tr->out_pid);
    PUTS(&x->out, ",\"tid\":");
    xo_i64(&x->out, *tid);
    PUTS(&x->out, ",\"ts\":");
    xo_us(&x->out, *ts);
    return 0;
}

/* ,"key":value when the column has one (put_id: a flow or async id) */
static void put_opt(struct ex *x, sqlite3_stmt *st, int c, const char *key, int id)
{
    if (sqlite3_column_type(st, c) == SQLITE_NULL)
        return;
    put(&x->out, ",\"", 2);
    PUTS(&x->out, key);
    put(&x->out, "\":", 2);
    if (id)
        put_id(x, st, c);
    else
        xo_col(&x->out, st, c);
}

static const char *col_ph(sqlite3_stmt *st, int c)
{
    const char *s = (const char *)sqlite3_column_text(st, c);
    return s && *s ? s : "i";
}

static void put_dur(struct ex *x, sqlite3_stmt *st, int c, int required)
{
    if (!required && sqlite3_column_type(st, c) == SQLITE_NULL)
        return;
    PUTS(&x->out, ",\"dur\":");
    xo_us(&x->out, sqlite3_column_int64(st, c)); /* a complete event needs one: 0 */
}

/* args: the columns the store took out of them, then what it kept as JSON */
static void arg_key(struct ex *x, int *n, const char *key)
{
    if ((*n)++)
        PUTS(&x->out, ",");
    else
        PUTS(&x->out, ",\"args\":{");
    xo_str(&x->out, key);
    PUTS(&x->out, ":");
}

static void arg_col(struct ex *x, int *n, sqlite3_stmt *st, int c, const char *key)
{
    if (sqlite3_column_type(st, c) == SQLITE_NULL)
        return;
    arg_key(x, n, key);
    xo_col(&x->out, st, c);
}

/* a column that holds JSON text (Input Dims): written as it is */
static void arg_raw(struct ex *x, int *n, sqlite3_stmt *st, int c, const char *key)
{
    if (sqlite3_column_type(st, c) == SQLITE_NULL)
        return;
    arg_key(x, n, key);
    put(&x->out, (const char *)sqlite3_column_text(st, c), (size_t)sqlite3_column_bytes(st, c));
}

static void arg_triple(struct ex *x, int *n, sqlite3_stmt *st, int c, const char *key)
{
    int k;
    if (sqlite3_column_type(st, c) == SQLITE_NULL)
        return;
    arg_key(x, n, key);
    for (k = 0; k < 3; k++) {
        PUTS(&x->out, k ? "," : "[");
        xo_col(&x->out, st, c + k);
    }
    PUTS(&x->out, "]");
}

/* the stored args object, its members after those of the columns */
static void args_end(struct ex *x, int *n, sqlite3_stmt *st, int c)
{
    const char *a = (const char *)sqlite3_column_text(st, c);
    size_t len = a ? (size_t)sqlite3_column_bytes(st, c) : 0;
    if (len > 2 && a[0] == '{' && a[len - 1] == '}') {
        if ((*n)++)
            PUTS(&x->out, ",");
        else
            PUTS(&x->out, ",\"args\":{");
        put(&x->out, a + 1, len - 2);
    }
    if (*n)
        PUTS(&x->out, "}");
}

static int w_slice(struct ex *x, sqlite3_stmt *st)
{
    int64_t ts, tid;
    int n = 0, rc = event_head(x, st, "X", S_NAME, S_CAT, S_PID, S_TID, &ts, &tid);
    if (rc < 0)
        return rc;
    put_dur(x, st, S_DUR, 1); /* a B/E pair is stored as one slice: written as X */
    arg_col(x, &n, st, S_EXT, "External id");
    arg_col(x, &n, st, S_RF, "Record function id");
    arg_col(x, &n, st, S_SEQ, "Sequence number");
    arg_col(x, &n, st, S_FWD, "Fwd thread id");
    arg_col(x, &n, st, S_EVIDX, "Ev Idx");
    arg_raw(x, &n, st, S_DIMS, "Input Dims");
    arg_raw(x, &n, st, S_TYPES, "Input type");
    args_end(x, &n, st, S_ARGS);
    PUTS(&x->out, "}");
    x->res->counts[TT_EXPORT_SLICES]++;
    return 0;
}

/* the ac2g flow the store folded into a runtime or GPU row (the view flows) */
static void put_folded_flow(struct ex *x, sqlite3_stmt *st, int flow_c, int corr_c, int64_t ts,
                            int64_t tid)
{
    int f;
    if (sqlite3_column_type(st, flow_c) == SQLITE_NULL)
        return;
    f = sqlite3_column_int(st, flow_c);
    begin_event(x);
    PUTS(&x->out, f == 1 ? "{\"ph\":\"s\",\"id\":" : "{\"ph\":\"f\",\"id\":");
    put_id(x, st, corr_c);
    PUTS(&x->out, ",\"pid\":");
    xo_i64(&x->out, x->tr[x->cur].out_pid);
    PUTS(&x->out, ",\"tid\":");
    xo_i64(&x->out, tid);
    PUTS(&x->out, ",\"ts\":");
    xo_us(&x->out, ts);
    PUTS(&x->out, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
    if (f != 1)
        PUTS(&x->out, ",\"bp\":\"e\"");
    PUTS(&x->out, "}");
    x->res->counts[TT_EXPORT_FLOWS]++;
}

static int w_runtime(struct ex *x, sqlite3_stmt *st)
{
    int64_t ts, tid;
    int n = 0, rc = event_head(x, st, "X", R_NAME, R_CAT, R_PID, R_TID, &ts, &tid);
    if (rc < 0)
        return rc;
    put_dur(x, st, R_DUR, 1);
    arg_col(x, &n, st, R_CBID, "cbid");
    arg_col(x, &n, st, R_CORR, "correlation");
    arg_col(x, &n, st, R_EXT, "External id");
    args_end(x, &n, st, R_ARGS);
    PUTS(&x->out, "}");
    x->res->counts[TT_EXPORT_RUNTIME]++;
    put_folded_flow(x, st, R_FLOW, R_CORR, ts, tid);
    return 0;
}

static int gpu_kind(const char *kind)
{
    if (!kind)
        return TT_EXPORT_GPU_OTHER;
    if (!strcmp(kind, "kernel"))
        return TT_EXPORT_KERNELS;
    if (!strcmp(kind, "memcpy"))
        return TT_EXPORT_MEMCPY;
    return strcmp(kind, "memset") ? TT_EXPORT_GPU_OTHER : TT_EXPORT_MEMSET;
}

static int w_gpu(struct ex *x, sqlite3_stmt *st)
{
    int64_t ts, tid;
    int n = 0, rc = event_head(x, st, "X", G_NAME, G_CAT, G_PID, G_TID, &ts, &tid);
    if (rc < 0)
        return rc;
    put_dur(x, st, G_DUR, 1);
    arg_col(x, &n, st, G_DEVICE, "device");
    arg_col(x, &n, st, G_STREAM, "stream");
    arg_col(x, &n, st, G_CONTEXT, "context");
    arg_col(x, &n, st, G_CORR, "correlation");
    arg_col(x, &n, st, G_EXT, "External id");
    arg_col(x, &n, st, G_REGS, "registers per thread");
    arg_col(x, &n, st, G_SHMEM, "shared memory");
    arg_col(x, &n, st, G_BYTES, "bytes");
    arg_triple(x, &n, st, G_GX, "grid");
    arg_triple(x, &n, st, G_BX, "block");
    args_end(x, &n, st, G_ARGS);
    PUTS(&x->out, "}");
    x->res->counts[gpu_kind((const char *)sqlite3_column_text(st, G_KIND))]++;
    put_folded_flow(x, st, G_FLOW, G_CORR, ts, tid);
    return 0;
}

static int w_memory(struct ex *x, sqlite3_stmt *st)
{
    const char *ph = col_ph(st, M_PH);
    int64_t ts, tid;
    int n = 0, rc = event_head(x, st, ph, M_NAME, M_CAT, M_PID, M_TID, &ts, &tid);
    if (rc < 0)
        return rc;
    if (ph[0] == 'i' || ph[0] == 'I')
        PUTS(&x->out, ",\"s\":\"t\"");
    arg_col(x, &n, st, M_DEVTYPE, "Device Type");
    arg_col(x, &n, st, M_DEVID, "Device Id");
    arg_col(x, &n, st, M_ADDR, "Addr");
    arg_col(x, &n, st, M_BYTES, "Bytes");
    arg_col(x, &n, st, M_TOTAL, "Total Allocated");
    arg_col(x, &n, st, M_RESERVED, "Total Reserved");
    arg_col(x, &n, st, M_EVIDX, "Ev Idx");
    args_end(x, &n, st, M_ARGS);
    PUTS(&x->out, "}");
    x->res->counts[TT_EXPORT_MEMORY]++;
    return 0;
}

static int w_flow(struct ex *x, sqlite3_stmt *st)
{
    int64_t ts, tid;
    int n = 0, rc = event_head(x, st, col_ph(st, F_PH), F_NAME, F_CAT, F_PID, F_TID, &ts, &tid);
    if (rc < 0)
        return rc;
    put_opt(x, st, F_ID, "id", 1);
    put_opt(x, st, F_BP, "bp", 0);
    args_end(x, &n, st, F_ARGS);
    PUTS(&x->out, "}");
    x->res->counts[TT_EXPORT_FLOWS]++;
    return 0;
}

static int w_instant(struct ex *x, sqlite3_stmt *st)
{
    const char *ph = col_ph(st, I_PH);
    int64_t ts, tid;
    int n = 0, rc = event_head(x, st, ph, I_NAME, I_CAT, I_PID, I_TID, &ts, &tid);
    if (rc < 0)
        return rc;
    put_dur(x, st, I_DUR, 0);
    put_opt(x, st, I_SCOPE, "s", 0);
    put_opt(x, st, I_ID, "id", 1);
    args_end(x, &n, st, I_ARGS);
    PUTS(&x->out, "}");
    x->res->counts[ph[0] == 'C' && !ph[1] ? TT_EXPORT_COUNTERS : TT_EXPORT_INSTANTS]++;
    return 0;
}

static int (*const writers[T_COUNT])(struct ex *, sqlite3_stmt *) = {
    w_slice, w_runtime, w_gpu, w_memory, w_flow, w_instant,
};

/* ---------------------------------------------------------------- the file */

static void put_header(struct ex *x)
{
    tt_buf *b = &x->out.b;
    size_t i;
    int same_dev = x->ntr && x->tr[0].devprops;
    tt_buf_addstr(b, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",");
    if (x->base)
        tt_buf_addf(b, "\"baseTimeNanoseconds\":%" PRId64 ",", x->base);
    /* the source's devices when every trace had the same; its rank and world
     * when one trace is written (each trace's are in processes[]) */
    for (i = 1; i < x->ntr && same_dev; i++)
        same_dev = x->tr[i].devprops && !strcmp(x->tr[i].devprops, x->tr[0].devprops);
    if (same_dev)
        tt_buf_addf(b, "\"deviceProperties\":%s,", x->tr[0].devprops);
    if (x->ntr == 1 && x->tr[0].distinfo)
        tt_buf_addf(b, "\"distributedInfo\":%s,", x->tr[0].distinfo);
    tt_buf_addstr(b, "\"tracetool_export\":{\"version\":\"" TT_VERSION "\",\"steps\":");
    if (x->o->steps_set)
        tt_buf_addf(b, "[%" PRId64 ",%" PRId64 "]", x->o->step_from, x->o->step_to);
    else
        tt_buf_addstr(b, "null");
    tt_buf_addstr(b, ",\"processes\":[");
    for (i = 0; i < x->ntr; i++) {
        const struct xtrace *t = &x->tr[i];
        tt_buf_addf(b, "%s{\"pid\":%" PRId64 ",\"trace_id\":%" PRId64 ",\"rank\":",
                    i ? "," : "", t->out_pid, t->id);
        if (t->have_rank)
            tt_buf_addf(b, "%" PRId64, t->rank);
        else
            tt_buf_addstr(b, "null");
        tt_buf_addstr(b, ",\"file\":");
        xo_str(&x->out, t->file);
        tt_buf_addf(b, ",\"steps\":%" PRId64, x->o->steps_set ? (int64_t)t->nsteps : -1);
        if (t->distinfo)
            tt_buf_addf(b, ",\"distributedInfo\":%s", t->distinfo);
        if (t->devprops)
            tt_buf_addf(b, ",\"deviceProperties\":%s", t->devprops);
        tt_buf_addstr(b, "}");
    }
    tt_buf_addstr(b, "]},\n\"traceEvents\":[\n");
}

static int write_events(struct ex *x)
{
    struct cursor *c;
    int rc = 0;
    while (rc == 0 && (c = cursor_min(x))) {
        size_t ord = (size_t)c->ord;
        if (!x->cur_set || ord != x->cur) {
            x->cur = ord;
            x->cur_set = 1;
            if ((rc = load_names(x, x->tr[ord].id)) < 0)
                break;
        }
        if (!x->o->steps_set || in_windows(&x->tr[ord], sqlite3_column_int64(c->st, C_KEY)))
            rc = writers[c - x->cur_](x, c->st);
        if (rc == 0 && x->out.b.len >= FLUSH_AT && xo_flush(&x->out) < 0)
            rc = tt_error_set_at(TT_EIO, x->out.path, -1, "write failed: %s",
                                 strerror(x->out.err));
        if (rc == 0)
            rc = cursor_next(x, c);
    }
    return rc;
}

static int64_t pragma_get(tt_db *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/*
 * The six sorts on the calling thread with a 4 MiB cache: SQLite's sorter
 * threads kept 2.7 times the memory for no gain here (1 GB trace: 205 vs
 * 76 MB peak, the same time), and the memory of a sort does not grow with its
 * size (twice the slices: +0.5 MB). The caller's settings come back after.
 */
static void sorter_settings(tt_db *db, int64_t saved[2], int restore)
{
    char sql[96];
    if (!restore) {
        saved[0] = pragma_get(db, "PRAGMA threads");
        saved[1] = pragma_get(db, "PRAGMA cache_size");
        tt_db_exec(db, "PRAGMA threads=0; PRAGMA cache_size=-4096");
        return;
    }
    snprintf(sql, sizeof(sql), "PRAGMA threads=%" PRId64 "; PRAGMA cache_size=%" PRId64,
             saved[0], saved[1]);
    tt_db_exec(db, sql);
}

static int path_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static void ex_release(struct ex *x)
{
    size_t i;
    int k;
    for (k = 0; k < T_COUNT; k++)
        sqlite3_finalize(x->cur_[k].st);
    sqlite3_exec(x->db->sql, "DROP TABLE IF EXISTS temp.tt_exp_tr;"
                             "DROP TABLE IF EXISTS temp.tt_exp_step", NULL, NULL, NULL);
    for (i = 0; i < x->ntr; i++) {
        free(x->tr[i].file);
        free(x->tr[i].devprops);
        free(x->tr[i].distinfo);
        free(x->tr[i].win);
    }
    free(x->tr);
    drop_names(x);
    free(x->names);
    tt_strtab_release(&x->meta);
    tt_strtab_release(&x->threads);
    tt_buf_release(&x->key);
    tt_buf_release(&x->name);
}

const char *tt_export_kind_name(int kind)
{
    static const char *const names[TT_EXPORT_NKINDS] = {
        "slices", "runtime", "kernels", "memcpy", "memset", "gpu_other", "memory", "flows",
        "counters", "instants", "metadata",
    };
    return kind >= 0 && kind < TT_EXPORT_NKINDS ? names[kind] : "?";
}

int tt_export_db(tt_db *db, const tt_export_options *o, const char *out_path,
                 tt_export_result *res)
{
    static const tt_export_options defaults = TT_EXPORT_OPTIONS_INIT;
    tt_export_result dummy;
    struct ex x;
    int64_t saved[2];
    int rc, k, opened = 0;
    memset(&x, 0, sizeof(x));
    x.db = db;
    x.o = o ? o : &defaults;
    x.res = res ? res : &dummy;
    memset(x.res, 0, sizeof(*x.res));
    tt_buf_init(&x.key);
    tt_buf_init(&x.name);
    tt_buf_init(&x.meta.pool);
    tt_buf_init(&x.threads.pool);
    x.first_event = 1;
    sorter_settings(db, saved, 0);
    if ((rc = load_traces(&x)) == 0) {
        assign_pids(&x);
        if (x.o->steps_set)
            rc = load_steps(&x);
    }
    if (rc == 0)
        rc = fill_trace_table(&x);
    /* the sorts run here, before the output exists */
    for (k = 0; rc == 0 && k < T_COUNT; k++)
        rc = cursor_open(&x, k);
    if (rc == 0 && (rc = xo_open(&x.out, out_path,
                                  x.o->gzip < 0 ? path_ends_with(out_path, ".gz") : x.o->gzip)) == 0)
        opened = 1;
    if (rc == 0) {
        put_header(&x);
        put_processes(&x);
        rc = write_events(&x);
        PUTS(&x.out, "\n]}\n");
    }
    if (opened) {
        rc = xo_close(&x.out, rc);
        x.res->bytes = x.out.bytes;
    }
    ex_release(&x);
    sorter_settings(db, saved, 1);
    return rc;
}

/* ---------------------------------------------------------------- files */

/* one file into the temporary database; the same content twice is read once */
static int ingest_one(tt_db *db, const char *path, int in_dir, int64_t *skipped)
{
    int rc = tt_ingest_file(db, path, NULL, NULL);
    if (rc == TT_EEXISTS || (rc == TT_EUNSUPPORTED && in_dir)) {
        /* in a directory, a file that is no trace (a config.json) is passed over */
        if (rc == TT_EUNSUPPORTED)
            (*skipped)++;
        tt_error_clear();
        return 0;
    }
    return rc;
}

static int ingest_input(tt_db *db, const char *in, int64_t *skipped)
{
    struct stat st;
    tt_dir_walk w;
    size_t i;
    int rc;
    if (strcmp(in, "-") && stat(in, &st) == 0 && S_ISDIR(st.st_mode)) {
        if ((rc = tt_walk_traces(in, &w)) == 0 && w.nunreadable)
            rc = tt_error_set_at(TT_EIO, w.unreadable[0], -1, "cannot read directory");
        if (rc == 0 && !w.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, in, -1,
                                 "no trace files (*.json, *.json.gz, *.gz) in this directory");
        for (i = 0; rc == 0 && i < w.nfiles; i++)
            rc = ingest_one(db, w.files[i], 1, skipped);
        tt_dir_walk_free(&w);
        return rc;
    }
    return ingest_one(db, in, 0, skipped);
}

int tt_export_files(const char *const *inputs, size_t n, const tt_export_options *o,
                    const char *out_path, tt_export_result *res)
{
    tt_db *db = NULL;
    sqlite3_stmt *st;
    int64_t skipped = 0, chrome = 0;
    size_t i;
    int rc;
    for (i = 0; i < n; i++) {
        struct stat sb;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &sb) != 0)
            return tt_error_set_at(TT_EIO, inputs[i], -1, "%s",
                                   errno == ENOENT ? "no such file or directory" : strerror(errno));
    }
    if ((rc = tt__open_temp_db(&db, "export")) < 0)
        return rc;
    if (!(db->source = strdup(n == 1 ? inputs[0] : "the inputs"))) {
        tt_db_free(db);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    for (i = 0; rc == 0 && i < n; i++)
        rc = ingest_input(db, inputs[i], &skipped);
    if (rc == 0 && tt_db_prepare(db, &st, "SELECT count(*) FROM traces"
                                          " WHERE format IN ('kineto-json', 'chrome-array')") == 0) {
        if (sqlite3_step(st) == SQLITE_ROW)
            chrome = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (!chrome)
            rc = tt_error_set_at(TT_EUNSUPPORTED, n ? inputs[0] : "", -1,
                                 "no Chrome/Kineto trace among the inputs");
    } else if (rc == 0) {
        rc = TT_EDB;
    }
    if (rc == 0) {
        rc = tt_export_db(db, o, out_path, res);
        if (res)
            res->skipped_files = skipped;
    }
    tt_db_free(db);
    return rc;
}
