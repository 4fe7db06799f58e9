/*
 * tracetool/store.h - the SQLite trace store: tt_db and tt_ingest_file.
 *
 * A tt_db is one SQLite file holding any number of traces (schema in
 * docs/SCHEMA.md, versioned with PRAGMA user_version). tt_ingest_file() reads
 * one trace, Execution Trace or memory-timeline export into it atomically: on
 * any failure the database is left exactly as it was.
 */
#ifndef TRACETOOL_STORE_H
#define TRACETOOL_STORE_H

#include <stdio.h>

#include "tracetool/common.h"
#include "tracetool/formats.h"

TT_BEGIN_DECL

#define TT_SCHEMA_VERSION 2

typedef struct tt_db tt_db;

enum { TT_DB_READONLY = 1, TT_DB_CREATE = 2 };

/* Open (and with TT_DB_CREATE create or upgrade) a database. */
TT_EXTERN(int) tt_db_open(tt_db **out, const char *path, unsigned flags);
/* NULL is a no-op. */
TT_EXTERN(void) tt_db_free(tt_db *db);
/* A database of any input: `path` itself (read-only) when it is a database;
 * a trace file, "-" (standard input) or a directory of per-rank traces read
 * into a temporary database, removed again by tt_db_free: for a caller that
 * wants SQL over any input (the commands read trace files as a stream and
 * open only databases with this). TT_ENOTFOUND for a directory without
 * traces; errors name path. */
TT_EXTERN(int) tt_db_open_input(tt_db **out, const char *path);
/* 1 if `path` is a regular file that starts with the SQLite file header, 0
 * otherwise; never opens anything but a regular file (a FIFO is read once). */
TT_EXTERN(int) tt_is_sqlite_file(const char *path);

enum {
    TT_INGEST_REPLACE = 1, /* replace a trace with the same content hash */
    TT_INGEST_SALVAGE = 2  /* keep the complete events of a truncated file */
};

typedef struct tt_ingest_options {
    unsigned int version;
    unsigned int flags;
    tt_progress_fn progress; /* may be NULL */
    void *progress_payload;
    /* version >= 2, may be NULL: called with progress_payload as each phase
     * after the read begins ("linking GPU activities", ...; "" when done) */
    void (*phase)(void *payload, const char *what);
    /* version >= 3: threads an ingest keeps busy; 1: everything on the
     * calling thread; 0: the default (tt_ingest_file: a reader thread and
     * the writer; tt_ingest_files: tt_ingest_default_jobs()) */
    int jobs;
} tt_ingest_options;
#define TT_INGEST_OPTIONS_VERSION 3
#define TT_INGEST_OPTIONS_INIT \
    { .version = TT_INGEST_OPTIONS_VERSION }

typedef struct tt_ingest_result {
    int64_t trace_id;       /* id in table traces */
    int64_t replaced_id;    /* id of the replaced trace, 0 if none */
    tt_read_stats stats;    /* what the reader saw */
    int64_t rows;           /* rows written */
    int64_t unmatched_end;  /* 'E' events without a 'B' */
    int64_t no_phase;       /* events without "ph" (skipped) */
    int64_t linked_runtime; /* runtime calls linked to a CPU op */
    int64_t linked_gpu;     /* GPU activities linked to a runtime call */
    double seconds;
} tt_ingest_result;

/*
 * Ingest one file. Returns 0; TT_EEXISTS when the same content is already in
 * the database (unless TT_INGEST_REPLACE); TT_ETRUNCATED for a truncated
 * file (unless TT_INGEST_SALVAGE, which stores the complete events and marks
 * the trace truncated); or another error. On error nothing is written.
 */
TT_EXTERN(int) tt_ingest_file(tt_db *db, const char *path,
                              const tt_ingest_options *opts,
                              tt_ingest_result *res);

/*
 * Ingest n files in the order given, each its own transaction, as n calls
 * of tt_ingest_file would (same trace ids, row ids and contents), with
 * opts->jobs threads (store/ingest_jobs.c): one writer (the calling
 * thread) and up to jobs - 1 files read and linked at once, a file read
 * ahead of its turn holding a bounded number of row batches. each (may be
 * NULL) is called on the calling thread after each file, in order, with
 * that file's result: rc 0 or its error (also the thread's last error).
 * opts->progress is not called (readers run at once). Returns 0, or an
 * error that stopped everything (out of memory before any file).
 */
typedef void (*tt_ingest_each_fn)(void *payload, size_t index, const char *path, int rc,
                                  const tt_ingest_result *res);
TT_EXTERN(int) tt_ingest_files(tt_db *db, const char *const *paths, size_t n,
                               const tt_ingest_options *opts, tt_ingest_each_fn each,
                               void *payload);
/* the CPUs this process may run on (affinity, and a cgroup quota), >= 1 */
TT_EXTERN(int) tt_ingest_default_jobs(void);

TT_END_DECL

#endif
