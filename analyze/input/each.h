/*
 * analyze/input/each.h - the traces an analysis reads, and in which order.
 *
 * An analysis is given a trace file, a directory of per-rank trace files or
 * a database, with --trace ID and --rank R meaning the same everywhere:
 * trace ids are 1, 2, ... in the order tt_walk_traces finds a directory's
 * files (as an ingest of the directory numbers them; a file is trace 1),
 * only Chrome/Kineto traces are kept, and they are handed over by rank
 * (traces without one first) then id. Files are read one after another and
 * no database is made here: the visitor reads each trace (the file's rows,
 * or the stored trace's) into a result of its own, which is kept until its
 * turn comes.
 */
#ifndef TT_ANALYZE_INPUT_EACH_H
#define TT_ANALYZE_INPUT_EACH_H

#include "tracetool/store.h"
#include "store/ingest_rows.h"

struct tt__visit {
    void *ctx;
    /* read trace id (path, or trace id of db) into *r; res: its format and
     * rank (res->metadata is the visitor's to free) */
    int (*read)(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                void **r);
    /* a selected trace's result, in its turn (then owned by take) */
    int (*take)(void *ctx, void *r, int64_t id, const char *path);
    /* a result not taken: not selected, or after a failure */
    void (*drop)(void *ctx, void *r);
};

/*
 * Every trace of input (a file or a directory; or, when db is given, the
 * traces of db) that trace_id (0: any) and rank (-1: any) select, through v.
 * TT_ENOTFOUND / TT_EUNSUPPORTED, said in the words of a database's, when
 * none is selected.
 */
int tt__each_trace(int64_t trace_id, int64_t rank, const char *input, tt_db *db,
                   const struct tt__visit *v);

#endif
