/*
 * store/db_internal.h - the tt_db handle and SQL helpers shared by the
 * analyze/ sources. Internal.
 */
#ifndef TT_STORE_DB_INTERNAL_H
#define TT_STORE_DB_INTERNAL_H

#include <sqlite3.h>

#include "tracetool/analyze.h"
#include "formats/kineto.h"
#include "store/ingest_rows.h"

struct tt_db {
    sqlite3 *sql;
    char *path;
    int readonly;
    char *source;       /* the trace file a temporary database was made from */
};


/* Record a SQLite failure as the last error; returns TT_EDB. */
int tt_db_error(tt_db *db, const char *what);
/* Run SQL text (no results). 0 or TT_EDB. */
int tt_db_exec(tt_db *db, const char *sql);
int tt_db_prepare(tt_db *db, sqlite3_stmt **st, const char *sql);

/* an empty database in $TMPDIR (mode 0600), removed from the directory at
 * once: it lives as long as *out is open, whatever ends the process */
int tt__open_temp_db(tt_db **out, const char *what);
/* The same with only what one analysis reads: read_flags TT_READ_* for the
 * reader (TT_READ_NO_ARGS: args columns NULL), skip 1 << TT_ROWS_* of the
 * tables left empty (TT_ROWS_RUNTIME and TT_ROWS_GPU together, flows,
 * instants, metadata: store/ingest_rows.h). */
int tt__open_ingested_temp_only(tt_db **out, const char *trace, unsigned read_flags,
                                unsigned skip);

/* Create the indexes the readers need (idempotent). */
int tt_db_create_indexes(tt_db *db);
/* an index made only when the data needs it; no-op when it exists */
enum { TT_IDX_SLICES_EXT = 0, TT_IDX_RUNTIME_CORR, TT_IDX_SLICES_THREAD,
       TT_IDX_SLICES_THREAD_EXT, TT_IDX_SLICES_NAME_EXT };
int tt_db_ensure_index(tt_db *db, int which);

#endif
