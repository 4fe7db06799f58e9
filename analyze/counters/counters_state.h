/*
 * analyze/counters/counters_state.h - HTA's trace counters of one trace
 * (tracetool/counters.h) as one consumer of the record stream
 * (store/ingest_rows.h), shared by `tracetool queue`, `tracetool
 * bandwidth` (counters.c, counters_print.c) and `export --counters`.
 * Internal to libtracetool.
 *
 * The consumer keeps no map of the rows: it knows the string ids of the
 * launch names and of the copies' names (a few), and puts compact records
 * in spills (common/spill.h, bounded memory): launches and GPU rows by
 * runtime call id, joined once the rows are over into queue changes sorted
 * by device, stream and time; copies' starts and ends sorted by kind and
 * time. The points are then read back (as many times as wanted).
 */
#ifndef TT_ANALYZE_COUNTERS_STATE_H
#define TT_ANALYZE_COUNTERS_STATE_H

#include "tracetool/counters.h"
#include "store/ingest_rows.h"

/* what a consumer computes */
enum { TT__CTR_QUEUE = 1u, TT__CTR_BW = 2u };

/* the kinds of copies, sorted by name */
enum { TT__BW_NKINDS = 12 };
extern const char *const tt__ctr_kind_name[TT__BW_NKINDS];

/* a stream's queue length after a change */
struct tt__qpt {
    int64_t device, stream, ts, len; /* device: TT_COUNTERS_NULL when none */
};

/* a kind's bandwidth (GB/s) after a change: the sum over the copies in flight */
struct tt__bpt {
    int kind;
    int64_t ts;
    double gbps;
};

struct tt__ctr;

/* what (TT__CTR_*), f's time range (NULL: none; not copied) */
int tt__ctr_new(struct tt__ctr **out, unsigned what, const tt_filter *f);
void tt__ctr_free(struct tt__ctr *c);
/* whether the consumer needs the GPU rows' links (tt__rowsink.gpu_links) */
int tt__ctr_wants_links(const struct tt__ctr *c);
/* tt__rowsink.rows and .gpu_links, ctx the consumer */
int tt__ctr_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                 const char *text);
int tt__ctr_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts);
/* the cells tt__ctr_rows reads (tt__rowsink.cols) */
extern const uint64_t tt__ctr_cols[TT_ROWS_COUNT];

/* after the last row: the join and the sorts; then the points */
int tt__ctr_finish(struct tt__ctr *c);
/* (again) to the first point of each series */
int tt__ctr_rewind(struct tt__ctr *c);
/* the next point: 1, 0 at the end, or an error */
int tt__ctr_queue_next(struct tt__ctr *c, struct tt__qpt *p);
int tt__ctr_bw_next(struct tt__ctr *c, struct tt__bpt *p);

/*
 * One trace read into a new finished consumer *out: the file path (db
 * NULL; read twice when its rows need the links only the store's passes
 * make) or trace id of db. res: the trace's format and rank (metadata
 * freed). On failure *out is NULL.
 */
int tt__ctr_read(unsigned what, const tt_filter *f, const char *path, tt_db *db, int64_t id,
                 tt__rows_result *res, struct tt__ctr **out);

#endif
