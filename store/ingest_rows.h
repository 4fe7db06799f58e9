/*
 * store/ingest_rows.h - the ingest's rows handed to a consumer other than
 * SQLite (internal to libtracetool).
 *
 * tt__ingest_rows() runs the same reader, decoding, interning and in-stream
 * linking as tt_ingest_file(), on the same worker thread, but gives each
 * batch of rows to a callback on the calling thread instead of inserting it.
 * Tables and columns are those of docs/SCHEMA.md, cells in the order of the
 * record declarations of store/records.h (the TT_C_* indexes). A string is
 * always delivered (table TT_ROWS_STR) before any row that uses its id.
 * What only the SQL passes after a load can do (relinking threads whose ops
 * came out of order, linking GPU activities to runtime calls far away,
 * closing 'B' slices already handed over) is not done: needs_db says so,
 * and the caller should use tt_ingest_file() on a database instead; reading
 * stops as soon as that is known (the rows so far are handed over, the rest
 * of the file is not read).
 */
#ifndef TT_STORE_INGEST_ROWS_H
#define TT_STORE_INGEST_ROWS_H

#include "store/records.h"
#include "tracetool/formats.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { TT_CELL_NULL, TT_CELL_INT, TT_CELL_TEXT };

typedef struct tt__cell {
    int type;
    int64_t i;  /* TT_CELL_INT: the value; TT_CELL_TEXT: offset into the batch's text */
    size_t len; /* TT_CELL_TEXT: bytes (no NUL) */
} tt__cell;

/* tables TT_ROWS_*, cells TT_C_<REC>_<COLUMN>: store/records.h */

struct tt__gpu_launch;

typedef struct tt__rowsink {
    void *ctx;
    /* nrows rows of ncols cells; text cells point into text. Non-zero stops. */
    int (*rows)(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                const char *text);
    /*
     * Optional: a kernel, memcpy or memset (with a dur) linked in the stream
     * to the cpu_op op_id, which starts at op_ts and ends at op_end (= op_ts
     * + dur, or op_ts when its dur is negative). Called as its row is built.
     */
    int (*kernel)(void *ctx, int64_t op_id, int64_t op_ts, int64_t op_end, int64_t dur);
    /*
     * Optional: for each table TT_ROWS_*, the cells the consumer reads (bit
     * 1 << TT_C_*); NULL, or 0 for a table: all. A database leaves the
     * others NULL (SQLite then does not decode them); a file may fill them.
     */
    const uint64_t *cols;
    /*
     * Optional: what a GPU row's links point at, once for every GPU row, in
     * row order, before the batch that holds it is handed to rows() (a
     * file: as the row is built; a database: before each batch): op_id (0:
     * none) and the name of that CPU op (its string id, already handed
     * over; 0: none), the runtime call rt_id (0: none) and its start
     * (TT_ROWS_NO_TS: none). A consumer thus needs no map of the slices or
     * the runtime calls to group by op or to place a launch.
     */
    int (*gpu_links)(void *ctx, int64_t op_id, int64_t op_name, int64_t rt_id, int64_t rt_ts);
    /*
     * Optional: the same links with what the runtime call is (struct
     * tt__gpu_launch below), called right after gpu_links (both may be
     * set), once for every GPU row, in row order, before its batch: for a
     * consumer that places a launch on its CPU thread (--under) or groups
     * by the launching call.
     */
    int (*gpu_launch)(void *ctx, const struct tt__gpu_launch *l);
} tt__rowsink;

/*
 * A thread as one comparable value, the same from a row's pid and tid
 * cells (tt__tkey_of_cells) and from the reader's ids (tt__tkey_of_ids):
 * an integer as itself, and so a text that spells one ("25738": old
 * traces write the tids of their ops as strings, of their memory events as
 * numbers), any other text by a 64-bit hash of its bytes, NULL apart
 * (kinds TT_CELL_*).
 */
typedef struct tt__tkey {
    int64_t pid, tid;
    int32_t pkind, tkind;
} tt__tkey;

/* a text's part of a key: the integer it spells (kind TT_CELL_INT), else
 * its hash (TT_CELL_TEXT) */
static inline void tt__tkey_text(const char *s, size_t n, int64_t *v, int32_t *kind)
{
    uint64_t h = 1469598103934665603ull, x = 0; /* FNV-1a */
    size_t i = n && s[0] == '-';
    int num = n > i && n - i <= 18 && !(s[i] == '0' && n - i > 1);
    for (; i < n && num; i++) {
        num = s[i] >= '0' && s[i] <= '9';
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (num && !(n == 2 && s[0] == '-' && s[1] == '0')) {
        *v = s[0] == '-' ? -(int64_t)x : (int64_t)x;
        *kind = TT_CELL_INT;
        return;
    }
    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    *v = (int64_t)h;
    *kind = TT_CELL_TEXT;
}

static inline void tt__tkey_cell_(const tt__cell *c, const char *text, int64_t *v, int32_t *kind)
{
    *kind = c->type;
    *v = c->type == TT_CELL_INT ? c->i : 0;
    if (c->type == TT_CELL_TEXT)
        tt__tkey_text(text + c->i, c->len, v, kind);
}

static inline tt__tkey tt__tkey_of_cells(const tt__cell *pid, const tt__cell *tid,
                                         const char *text)
{
    tt__tkey k;
    tt__tkey_cell_(pid, text, &k.pid, &k.pkind);
    tt__tkey_cell_(tid, text, &k.tid, &k.tkind);
    return k;
}

/* the cell an id becomes in a row (as the ingest writes it) */
static inline void tt__tkey_id_(const tt_id *id, int64_t *v, int32_t *kind)
{
    *kind = !id->present ? TT_CELL_NULL : id->is_str ? TT_CELL_TEXT : TT_CELL_INT;
    *v = *kind == TT_CELL_INT ? id->num : 0;
    if (*kind == TT_CELL_TEXT)
        tt__tkey_text(id->str, strlen(id->str), v, kind);
}

static inline tt__tkey tt__tkey_of_ids(const tt_id *pid, const tt_id *tid)
{
    tt__tkey k;
    tt__tkey_id_(pid, &k.pid, &k.pkind);
    tt__tkey_id_(tid, &k.tid, &k.tkind);
    return k;
}

static inline int tt__tkey_eq(const tt__tkey *a, const tt__tkey *b)
{
    return a->pid == b->pid && a->tid == b->tid && a->pkind == b->pkind && a->tkind == b->tkind;
}

/* tt__rowsink.gpu_launch: a GPU row's links and its runtime call */
typedef struct tt__gpu_launch {
    int64_t op_id, op_name, rt_id, rt_ts; /* as gpu_links gives them */
    int64_t rt_name;  /* the call's name (a string id already handed over; 0: no call) */
    int has_thread;   /* rt_thread holds the call's thread (0: no call) */
    tt__tkey rt_thread;
} tt__gpu_launch;

/* tt__rowsink.gpu_links: no start */
#define TT_ROWS_NO_TS INT64_MIN

/* a bit of tt__rowsink.cols */
#define TT_COL(C) (UINT64_C(1) << (C))

typedef struct tt__rows_result {
    tt_read_stats stats;
    tt_trace_format format;
    int needs_db;      /* see above */
    const char *why_db; /* which of them, for messages */
    int have_rank;     /* distributedInfo.rank, else a rank in the file name */
    int64_t rank;
    int have_world;    /* distributedInfo.world_size */
    int64_t world_size;
    int have_pid;      /* the profiled process (traces.pid) */
    int64_t pid;
    /* the trace's span: the first ts and the last end of its events, flows
     * included even when skipped (traces.start_ns / end_ns) */
    int have_span;
    int64_t start_ns, end_ns;
    char *metadata;    /* the top-level keys as one JSON object (free() it) */
    /* threads whose slices came out of start order: their slices' depth and
     * parent_id cells are not final (a database has them right); a consumer
     * that needs the nesting builds it from ts/dur itself */
    int64_t disordered_threads;
} tt__rows_result;

/* in skip: read to the end even when the rows need the SQL passes (a
 * consumer that uses none of the links: kernels grouped by name) */
#define TT_ROWS_NO_STOP (1u << 30)
/*
 * in skip: the rows as a database gives them (needs_db never set, the
 * nesting of every thread final: disordered_threads 0). The file is read
 * twice (a path that can be read again: standard input is spooled first):
 * the first reading hands nothing over and keeps, in temporary files of
 * bounded memory, what the SQL passes after a load read; the second hands
 * the rows over with what those passes change ('B' durations, nesting,
 * runtime call -> op, GPU activity -> runtime call and op, annotation ->
 * user_annotation), in its gpu_links and kernel callbacks too. For a
 * consumer whose first reading said needs_db: it starts over with this.
 */
#define TT_ROWS_RELINK (1u << 28)

/*
 * read_flags: TT_READ_* for the reader (TT_READ_NO_ARGS: args cells NULL).
 * skip: 1 << TT_ROWS_* of tables the consumer ignores; flow and metadata
 * events are then dropped before any work (a quarter of a GPU trace).
 */
int tt__ingest_rows(const char *path, const tt__rowsink *sink, unsigned read_flags,
                    unsigned skip, tt__rows_result *res);

/*
 * The other source of the same rows: one trace of a database, handed to
 * sink->rows as tt__ingest_rows hands a file's (same tables, cells and
 * cell types; text cells point into the batch's text), table by table in
 * the order of the TT_ROWS_* enum, each in id order: first every string of
 * the database (TT_ROWS_STR; ids as stored, ascending, not necessarily
 * consecutive), then slices, runtime calls, GPU activities (after each
 * batch of them, sink->kernel for those linked to a CPU op, and before
 * it sink->gpu_links for each of its rows, as the file
 * stream calls it), memory events, flows, instants, metadata events, ET
 * nodes and memory-timeline rows. skip: 1 << TT_ROWS_* of tables not
 * wanted (TT_ROWS_STR cannot be skipped). res (may be NULL) gets the
 * trace's format, rank, world size, span and metadata (free
 * res->metadata); its stats are the event count only. A consumer written
 * on tt__rowsink thus reads a file and a database alike: this is the only
 * place that turns a stored trace back into rows. TT_ENOTFOUND when
 * trace_id is not in db.
 */
struct tt_db;

int tt__db_rows(struct tt_db *db, int64_t trace_id, const tt__rowsink *sink, unsigned skip,
                tt__rows_result *res);
/* in tt__db_rows' skip: every args cell NULL, as TT_READ_NO_ARGS makes a
 * file's (the args are most of a stored trace's bytes) */
#define TT_ROWS_NO_ARGS (1u << 29)

/*
 * TT_ENOTFOUND "no WHAT in this database" (or "matches --trace/--rank" when
 * filtered); for a temporary database made from a file, the message names
 * that file and the format it was read as.
 */
int tt__db_none(struct tt_db *db, int filtered, const char *what);

/* Ingest one trace file into a new temporary database (removed again by
 * tt_db_free): for a file whose rows need the SQL passes after a load
 * (needs_db), or standard input that must be read more than once. The
 * database is tuned for one analysis pass: no journal, small cache. */
int tt__open_ingested_temp(struct tt_db **out, const char *trace);

/* One trace of a database as the analyses choose them (--trace, --rank). */
typedef struct tt__db_trace {
    int64_t id;
    char *path;      /* as ingested */
    tt_trace_format format;
    int have_rank;
    int64_t rank;
    int64_t world_size; /* -1 when unknown */
    int64_t start_ns, end_ns; /* INT64_MIN when unknown */
    int have_pid;
    int64_t pid;              /* the profiled process (traces.pid) */
    /* the rest of what `tracetool info` shows of the traces table */
    char *schema_version;     /* NULL when absent */
    int gzip, truncated, have_world;
    int64_t bytes, base_time_ns, events;
    int64_t repaired, skipped; /* import_issues: values repaired, elements skipped */
} tt__db_trace;

/* Every trace of db in id order (*out NULL and *n 0 when there are none);
 * free with tt__db_traces_free. */
int tt__db_traces(struct tt_db *db, tt__db_trace **out, size_t *n);
void tt__db_traces_free(tt__db_trace *t, size_t n);

/*
 * A tap on an ingest into a database (tt__open_ingested_temp_tap): for a
 * consumer that needs some tables as a stream beside a database of the
 * others. The rows of the tables in `see` are handed to rows() in the
 * order they are written (first_rowid: the SQLite rowid of the first row of
 * a stored table; 0 for a table in `drop`, whose rows are not stored).
 * Strings are handed over before the rows that use them. start() runs
 * before the first row, finish() after the last one and before the commit;
 * end_b() tells of a 'B' slice closed after its row was handed over.
 * Non-zero from any of them stops the ingest (TT_ECANCELED when positive).
 */

typedef struct tt__rowtap {
    void *ctx;
    unsigned see, drop; /* 1 << TT_ROWS_* */
    int (*start)(void *ctx, struct tt_db *db);
    int (*rows)(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                const char *text, int64_t first_rowid);
    int (*end_b)(void *ctx, int64_t slice_id, int64_t dur);
    int (*finish)(void *ctx);
} tt__rowtap;

/* a file ingested into a temporary database, its rows also through tap
 * (above); read_flags and skip as tt__ingest_rows */
int tt__open_ingested_temp_tap(struct tt_db **out, const char *trace, unsigned read_flags,
                               unsigned skip, const tt__rowtap *tap);

#endif
