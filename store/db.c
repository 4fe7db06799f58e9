/*
 * store/db.c - opening the trace store and its schema (docs/SCHEMA.md).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "store/db_internal.h"

#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

/* Schema version 2 (the tables of version 1 plus flow folding, below).
 * Keep in step with docs/SCHEMA.md. */
static const char schema_tables[] =
    "CREATE TABLE strings(id INTEGER PRIMARY KEY, s TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE traces(\n"
    "  id INTEGER PRIMARY KEY, path TEXT NOT NULL, file_name TEXT NOT NULL,\n"
    "  content_hash TEXT NOT NULL, bytes INTEGER, file_bytes INTEGER,\n"
    "  gzip INTEGER NOT NULL DEFAULT 0, format TEXT NOT NULL,\n"
    "  schema_version TEXT, rank INTEGER, world_size INTEGER, pid INTEGER,\n"
    "  base_time_ns INTEGER NOT NULL DEFAULT 0, display_time_unit TEXT,\n"
    "  trace_name TEXT, start_ns INTEGER, end_ns INTEGER,\n"
    "  events INTEGER NOT NULL DEFAULT 0, truncated INTEGER NOT NULL DEFAULT 0,\n"
    "  link_rule TEXT, metadata TEXT, ingested_at TEXT NOT NULL,\n"
    "  tool_version TEXT NOT NULL);\n"
    "CREATE INDEX traces_hash ON traces(content_hash);\n"
    "CREATE TABLE slices(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, ph TEXT NOT NULL,\n"
    "  cat INTEGER, name INTEGER NOT NULL, pid, tid, ts INTEGER, dur INTEGER,\n"
    "  depth INTEGER, parent_id INTEGER, external_id INTEGER, rf_id INTEGER,\n"
    "  seq_nr INTEGER, fwd_tid INTEGER, ev_idx INTEGER, input_dims INTEGER,\n"
    "  input_types INTEGER, args TEXT);\n"
    "CREATE TABLE runtime(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, cat INTEGER,\n"
    "  name INTEGER NOT NULL, pid, tid, ts INTEGER, dur INTEGER,\n"
    "  correlation INTEGER, external_id INTEGER, cbid INTEGER,\n"
    "  op_id INTEGER, args TEXT, flow INTEGER);\n"
    "CREATE TABLE gpu_ops(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, kind TEXT NOT NULL,\n"
    "  cat INTEGER, name INTEGER NOT NULL, pid, tid, device INTEGER,\n"
    "  stream INTEGER, context INTEGER, ts INTEGER, dur INTEGER,\n"
    "  correlation INTEGER, external_id INTEGER, grid_x INTEGER,\n"
    "  grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,\n"
    "  block_z INTEGER, registers INTEGER, shared_mem INTEGER,\n"
    "  bytes INTEGER, copy_kind TEXT, runtime_id INTEGER, op_id INTEGER,\n"
    "  args TEXT, flow INTEGER);\n"
    "CREATE TABLE memory(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, ph TEXT NOT NULL,\n"
    "  cat INTEGER, name INTEGER NOT NULL, pid, tid, ts INTEGER,\n"
    "  device_type INTEGER, device_id INTEGER, addr INTEGER, bytes INTEGER,\n"
    "  total_allocated INTEGER, total_reserved INTEGER, ev_idx INTEGER,\n"
    "  args TEXT);\n"
    "CREATE TABLE flow_events(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, ph TEXT NOT NULL,\n"
    "  cat INTEGER, name INTEGER NOT NULL, flow_id, pid, tid, ts INTEGER,\n"
    "  bp TEXT, args TEXT);\n"
    "CREATE TABLE instants(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, ph TEXT NOT NULL,\n"
    "  cat INTEGER, name INTEGER NOT NULL, pid, tid, ts INTEGER, dur INTEGER,\n"
    "  scope TEXT, event_id, args TEXT);\n"
    "CREATE TABLE metadata_events(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, ph TEXT NOT NULL,\n"
    "  cat INTEGER, name INTEGER NOT NULL, pid, tid, ts INTEGER, value TEXT,\n"
    "  sort_index INTEGER, args TEXT);\n"
    "CREATE TABLE et_nodes(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL,\n"
    "  node_id INTEGER NOT NULL, name INTEGER NOT NULL, parent INTEGER,\n"
    "  rf_id INTEGER, fw_parent INTEGER, seq_id INTEGER, scope INTEGER,\n"
    "  tid INTEGER, fw_tid INTEGER, op_schema INTEGER, inputs TEXT,\n"
    "  input_shapes TEXT, input_types TEXT, input_strides TEXT, outputs TEXT,\n"
    "  output_shapes TEXT, output_types TEXT, output_strides TEXT,\n"
    "  attrs TEXT, extra TEXT);\n"
    "CREATE TABLE memory_timeline(\n"
    "  id INTEGER PRIMARY KEY, trace_id INTEGER NOT NULL, ts INTEGER,\n"
    "  action INTEGER, bytes INTEGER, category INTEGER);\n"
    "CREATE TABLE import_issues(\n"
    "  trace_id INTEGER NOT NULL, kind TEXT NOT NULL, count INTEGER NOT NULL,\n"
    "  first_offset INTEGER, detail TEXT);\n"
    "CREATE VIEW slice_names AS SELECT s.*, n.s AS name_str, c.s AS cat_str,\n"
    "  d.s AS input_dims_str FROM slices s JOIN strings n ON n.id = s.name\n"
    "  LEFT JOIN strings c ON c.id = s.cat LEFT JOIN strings d ON d.id = s.input_dims;\n"
    "CREATE VIEW kernel_names AS SELECT g.*, n.s AS name_str FROM gpu_ops g\n"
    "  JOIN strings n ON n.id = g.name;\n"
    "CREATE VIEW processes AS SELECT trace_id, pid,\n"
    "  max(CASE WHEN n.s = 'process_name' THEN m.value END) AS name,\n"
    "  max(CASE WHEN n.s = 'process_labels' THEN m.value END) AS labels,\n"
    "  max(CASE WHEN n.s = 'process_sort_index' THEN m.sort_index END) AS sort_index\n"
    "  FROM metadata_events m JOIN strings n ON n.id = m.name\n"
    "  WHERE n.s LIKE 'process%' GROUP BY trace_id, pid;\n"
    "CREATE VIEW threads AS SELECT trace_id, pid, tid,\n"
    "  max(CASE WHEN n.s = 'thread_name' THEN m.value END) AS name,\n"
    "  max(CASE WHEN n.s = 'thread_sort_index' THEN m.sort_index END) AS sort_index\n"
    "  FROM metadata_events m JOIN strings n ON n.id = m.name\n"
    "  WHERE n.s LIKE 'thread%' GROUP BY trace_id, pid, tid;\n";

/*
 * Schema 2: an ac2g flow that only repeats its runtime call's or GPU
 * activity's thread, time and correlation (Kineto writes one per launch and
 * per kernel) is folded into that row (runtime.flow_out, gpu_ops.flow_in)
 * instead of a row of its own; the view flows gives them back.
 */
static const char flow_views_v2[] =
    "CREATE VIEW flows AS\n"
    "  SELECT id, trace_id, ph, cat, name, flow_id, pid, tid, ts, bp, args FROM flow_events\n"
    "  UNION ALL SELECT NULL, trace_id, CASE flow WHEN 1 THEN 's' ELSE 'f' END,\n"
    "   (SELECT id FROM strings WHERE s = 'ac2g'), (SELECT id FROM strings WHERE s = 'ac2g'),\n"
    "   correlation, pid, tid, ts, CASE flow WHEN 2 THEN 'e' END, NULL FROM runtime WHERE flow\n"
    "  UNION ALL SELECT NULL, trace_id, CASE flow WHEN 1 THEN 's' ELSE 'f' END,\n"
    "   (SELECT id FROM strings WHERE s = 'ac2g'), (SELECT id FROM strings WHERE s = 'ac2g'),\n"
    "   correlation, pid, tid, ts, CASE flow WHEN 2 THEN 'e' END, NULL FROM gpu_ops WHERE flow;\n"
    "CREATE VIEW events AS\n"
    "  SELECT trace_id, 'slices' AS tbl, id, ph, cat, name, pid, tid, ts, dur FROM slices\n"
    "  UNION ALL SELECT trace_id, 'runtime', id, 'X', cat, name, pid, tid, ts, dur FROM runtime\n"
    "  UNION ALL SELECT trace_id, 'gpu_ops', id, 'X', cat, name, pid, tid, ts, dur FROM gpu_ops\n"
    "  UNION ALL SELECT trace_id, 'memory', id, ph, cat, name, pid, tid, ts, NULL FROM memory\n"
    "  UNION ALL SELECT trace_id, 'flows', id, ph, cat, name, pid, tid, ts, NULL FROM flows\n"
    "  UNION ALL SELECT trace_id, 'instants', id, ph, cat, name, pid, tid, ts, dur FROM instants\n"
    "  UNION ALL SELECT trace_id, 'metadata_events', id, ph, cat, name, pid, tid, ts, NULL FROM metadata_events;\n";

static const char migrate_v1_v2[] =
    "DROP VIEW events;\n"
    "ALTER TABLE flows RENAME TO flow_events;\n"
    "ALTER TABLE runtime ADD COLUMN flow INTEGER;\n"
    "ALTER TABLE gpu_ops ADD COLUMN flow INTEGER;\n";

static const char indexes_sql[] =
    "CREATE INDEX IF NOT EXISTS gpu_ops_op ON gpu_ops(trace_id, op_id);\n"
    "CREATE INDEX IF NOT EXISTS et_nodes_rf ON et_nodes(trace_id, rf_id);\n";

/*
 * Indexes made only once the data needs them (docs/SCHEMA.md): keeping each
 * up to date costs about a tenth of an ingest.
 */
static const char *const lazy_index_sql[] = {
    /* TT_IDX_SLICES_EXT: ET joins, GPU annotations -> their CPU range */
    "CREATE INDEX IF NOT EXISTS slices_ext ON slices(trace_id, external_id)",
    /* TT_IDX_RUNTIME_CORR: GPU activities whose runtime call was far away */
    "CREATE INDEX IF NOT EXISTS runtime_corr ON runtime(trace_id, correlation)",
    /*
     * TT_IDX_SLICES_THREAD: the ordered per-thread passes of an ingest whose
     * ops came out of order. Kept up to date while loading, it cost a
     * quarter of the ingest (slices of all threads interleave, so its keys
     * land all over the tree); no reader needs it.
     */
    "CREATE INDEX IF NOT EXISTS slices_thread ON slices(trace_id, pid, tid, ts)",
    /*
     * TT_IDX_SLICES_THREAD_EXT, TT_IDX_SLICES_NAME_EXT: crosscheck's join in
     * per-thread order (External ids from per-thread counters) looks ops up
     * by thread and by name around an External id, once per ET thread;
     * without them each lookup scans the trace (500 ET threads: 6 s -> 0.3 s).
     */
    "CREATE INDEX IF NOT EXISTS slices_thread_ext ON slices(trace_id, pid, tid, external_id)",
    "CREATE INDEX IF NOT EXISTS slices_name_ext ON slices(trace_id, name, external_id)",
};

int tt_db_error(tt_db *db, const char *what)
{
    return tt_error_set_at(TT_EDB, db->path, -1, "%s: %s", what,
                           sqlite3_errmsg(db->sql));
}

int tt_db_exec(tt_db *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db->sql, sql, NULL, NULL, &err) != SQLITE_OK) {
        tt_error_set_at(TT_EDB, db->path, -1, "database error: %s",
                        err ? err : sqlite3_errmsg(db->sql));
        sqlite3_free(err);
        return TT_EDB;
    }
    return 0;
}

int tt_db_prepare(tt_db *db, sqlite3_stmt **st, const char *sql)
{
    if (sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, st,
                           NULL) != SQLITE_OK)
        return tt_db_error(db, "cannot prepare statement");
    return 0;
}

int tt_db_create_indexes(tt_db *db)
{
    return tt_db_exec(db, indexes_sql);
}

int tt_db_ensure_index(tt_db *db, int which)
{
    if (which < 0 || which >= (int)(sizeof(lazy_index_sql) / sizeof(lazy_index_sql[0])))
        return 0;
    return tt_db_exec(db, lazy_index_sql[which]);
}

/*
 * Only a regular file can be a database. Anything else (a FIFO, /dev/stdin,
 * a process substitution) is not opened here: it can be read once only, and
 * the reader that follows must get all of it.
 */
int tt_is_sqlite_file(const char *path)
{
    char head[16];
    struct stat sb;
    FILE *f;
    size_t n;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || !(f = fopen(path, "rb")))
        return 0;
    n = fread(head, 1, sizeof(head), f);
    fclose(f);
    return n == 16 && memcmp(head, "SQLite format 3", 16) == 0;
}

static int user_version(tt_db *db, int *v)
{
    sqlite3_stmt *st;
    int rc;
    if (sqlite3_prepare_v2(db->sql, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return tt_db_error(db, "cannot read schema version");
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : tt_db_error(db, "cannot read schema version");
}

static int table_count(tt_db *db, int *n)
{
    sqlite3_stmt *st;
    int rc;
    if (sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM sqlite_schema", -1,
                           &st, NULL) != SQLITE_OK)
        return tt_db_error(db, "not a tracetool database");
    rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : tt_db_error(db, "not a tracetool database");
}

/*
 * Why the first read of a database failed. A database being written (an
 * ingest holds its lock past the busy timeout) or left with a hot journal
 * by a killed ingest is intact: say so, never "not a tracetool database",
 * which invites deleting it.
 */
static int first_read_error(tt_db *db, const char *path)
{
    int ext = sqlite3_extended_errcode(db->sql);
    if ((ext & 0xff) == SQLITE_BUSY || (ext & 0xff) == SQLITE_LOCKED)
        return tt_error_set_at(TT_EIO, path, -1,
                               "database is busy: another process (an ingest?) is writing it;"
                               " try again when it is done");
    if (ext == SQLITE_READONLY_ROLLBACK || ext == SQLITE_READONLY_RECOVERY)
        return tt_error_set_at(TT_EIO, path, -1,
                               "interrupted ingest: the database has a hot journal (it is"
                               " intact); run 'tracetool ingest %s' to recover it", path);
    if ((ext & 0xff) == SQLITE_NOTADB)
        return tt_error_set_at(TT_EINVALID, path, -1,
                               "not a tracetool database (cannot read it as SQLite)");
    return tt_error_set_at(TT_EIO, path, -1, "cannot read the database: %s",
                           sqlite3_errmsg(db->sql));
}

/*
 * Debian's SQLite keeps allocation statistics behind a global mutex: one
 * lock per malloc, measurable on a bulk load. We never read them.
 */
static void sqlite_setup(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* tt_satsum(x): sum() of integers (NULL when there is none) that sticks at
 * the int64 limits instead of failing with "integer overflow" (a total of
 * many huge durations) */
struct satsum {
    int64_t v;
    int any;
};

static void satsum_step(sqlite3_context *c, int argc, sqlite3_value **argv)
{
    struct satsum *acc = sqlite3_aggregate_context(c, (int)sizeof(*acc));
    TT_UNUSED(argc);
    if (acc && sqlite3_value_type(argv[0]) != SQLITE_NULL) {
        acc->v = tt_sat_add(acc->v, sqlite3_value_int64(argv[0]));
        acc->any = 1;
    }
}

static void satsum_final(sqlite3_context *c)
{
    struct satsum *acc = sqlite3_aggregate_context(c, 0);
    if (acc && acc->any)
        sqlite3_result_int64(c, acc->v);
    else
        sqlite3_result_null(c);
}

int tt_db_open(tt_db **out, const char *path, unsigned flags)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    tt_db *db;
    int oflags, v = 0, ntables = 0, rc;
    *out = NULL;
    pthread_once(&once, sqlite_setup);
    db = calloc(1, sizeof(*db));
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return tt__oom();
    }
    db->readonly = (flags & TT_DB_READONLY) != 0;
    oflags = SQLITE_OPEN_NOMUTEX | (db->readonly ? SQLITE_OPEN_READONLY
                          : SQLITE_OPEN_READWRITE |
                                ((flags & TT_DB_CREATE) ? SQLITE_OPEN_CREATE : 0));
    if (sqlite3_open_v2(path, &db->sql, oflags, NULL) != SQLITE_OK) {
        rc = tt_error_set_at(TT_EIO, path, -1, "cannot open database: %s",
                             db->sql ? sqlite3_errmsg(db->sql) : "out of memory");
        tt_db_free(db);
        return rc;
    }
    sqlite3_extended_result_codes(db->sql, 1);
    sqlite3_busy_timeout(db->sql, 5000);
    sqlite3_create_function(db->sql, "tt_satsum", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                            NULL, NULL, satsum_step, satsum_final);
    if ((rc = table_count(db, &ntables)) < 0 || (rc = user_version(db, &v)) < 0) {
        rc = first_read_error(db, path);
        tt_db_free(db);
        return rc;
    }
    if (v == 0 && ntables > 0) {
        tt_db_free(db);
        return tt_error_set_at(TT_EINVALID, path, -1,
                               "not a tracetool database (an SQLite file "
                               "with other tables)");
    }
    if (v > TT_SCHEMA_VERSION) {
        tt_db_free(db);
        return tt_error_set_at(TT_EUNSUPPORTED, path, -1,
                               "database schema version %d is newer than this "
                               "tracetool (%d); upgrade tracetool",
                               v, TT_SCHEMA_VERSION);
    }
    if (v == 0) {
        if (db->readonly) {
            tt_db_free(db);
            return tt_error_set_at(TT_EINVALID, path, -1,
                                   "not a tracetool database (empty)");
        }
        /*
         * 64 KiB pages: fewer page splits and writes while loading (1 GB
         * trace: ingest 3.68 -> 3.52 s) and no slower to read back
         * (averages 3.55 -> 3.50 s, kernels 1.19 -> 1.03 s); an empty
         * database takes about 1.3 MB.
         */
        if ((rc = tt_db_exec(db, "PRAGMA page_size=65536; BEGIN")) < 0 ||
            (rc = tt_db_exec(db, schema_tables)) < 0 ||
            (rc = tt_db_exec(db, flow_views_v2)) < 0 ||
            (rc = tt_db_exec(db, "PRAGMA user_version=2; COMMIT")) < 0) {
            tt_db_free(db);
            return rc;
        }
    } else if (v == 1 && !db->readonly) {
        /* a database from schema 1: same data, flows become foldable */
        if ((rc = tt_db_exec(db, "BEGIN")) < 0 || (rc = tt_db_exec(db, migrate_v1_v2)) < 0 ||
            (rc = tt_db_exec(db, flow_views_v2)) < 0 ||
            (rc = tt_db_exec(db, "PRAGMA user_version=2; COMMIT")) < 0) {
            sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
            tt_db_free(db);
            return rc;
        }
    }
    /*
     * Bounded memory whatever the trace size: a 64 MiB page cache when
     * writing, 16 MiB when reading. Readers sort (ORDER BY over millions of
     * rows): a second sorter thread uses the core the reader leaves idle
     * (averages on the 1 GB trace: 4.5 -> 3.7 s, 41 -> 74 MB).
     */
    tt_db_exec(db, db->readonly ? "PRAGMA cache_size=-16384; PRAGMA temp_store=FILE;"
                                  "PRAGMA threads=2;"
                                : "PRAGMA cache_size=-65536; PRAGMA temp_store=FILE;"
                                  "PRAGMA threads=1;");
    *out = db;
    return 0;
}

/* db_internal.h: a database of this process alone, gone when it is closed */
int tt__open_temp_db(tt_db **out, const char *what)
{
    char path[4096];
    int fd = tt__mkstemp(path, sizeof(path), what), rc;
    *out = NULL;
    if (fd < 0)
        return TT_EIO;
    close(fd);
    rc = tt_db_open(out, path, TT_DB_CREATE);
    /*
     * The name goes at once: SQLite keeps its descriptor, and with no journal
     * it never needs the name again, so nothing stays behind after Ctrl-C or
     * a crash, and no other user ever sees it (it was 0600 meanwhile).
     */
    unlink(path);
    if (rc < 0)
        return rc;
    tt_db_exec(*out, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF");
    return 0;
}

void tt_db_free(tt_db *db)
{
    if (!db)
        return;
    if (db->sql)
        sqlite3_close_v2(db->sql);
    free(db->path);
    free(db->source);
    free(db);
}

int tt__db_none(tt_db *db, int filtered, const char *what)
{
    sqlite3_stmt *st;
    char fmt[64] = "";
    if (!db->source || filtered)
        return tt_error_set_at(TT_ENOTFOUND, db->source ? db->source : db->path, -1,
                               filtered ? "no %s matches --trace/--rank" : "no %s in this database",
                               what);
    if (sqlite3_prepare_v2(db->sql, "SELECT format FROM traces ORDER BY id LIMIT 1", -1, &st,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(fmt, sizeof(fmt), "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    /* a file of another kind (an ET given to averages): bad input, not I/O */
    return tt_error_set_at(TT_EUNSUPPORTED, db->source, -1, "no %s in this file%s%s%s", what,
                           fmt[0] ? " (read as " : "", fmt, fmt[0] ? ")" : "");
}
