/*
 * analyze/filter/filtering.h - the filters of tracetool/filter.h as the
 * analyses apply them (internal to libtracetool).
 *
 * An analysis makes one tt__flt of its options' tt_filter (tt__flt_new; NULL
 * when nothing is limited, and every call below takes NULL as "everything
 * passes"), and for each trace it reads:
 *
 *   1. --under: tt__flt_load(fl, path | db, trace) before its own reading:
 *      a first reading of the trace's slices alone keeps, per thread, the
 *      intervals of the ops whose whole name matches (memory: those ops,
 *      not the trace's events; the file in any order);
 *   2. its own reading, through a sink that either
 *      - is wrapped (tt__flt_sink): the rows of the chosen tables that do
 *        not pass never reach the analysis (kernels, breakdown), or
 *      - asks row by row (tt__flt_slice, _runtime, _memory, _gpu) and
 *        keeps what it needs to (averages keeps every op in its tree but
 *        counts only those that pass; memtimeline's blocks follow their
 *        allocation).
 *      Either way every TT_ROWS_STR row goes to tt__flt_string first (the
 *      --name verdict of each string id, one regexec per distinct string),
 *      and when tt__flt_wants_launch says so the sink's gpu_launch goes to
 *      tt__flt_launch (a GPU activity is placed by its runtime call: its
 *      start for --time-range, its thread for --under); then tt__flt_gpu
 *      must see every GPU row, in order, once.
 *
 * What passes (tracetool/filter.h): a CPU op, runtime call or memory event
 * by its own start and thread; a GPU activity by its launching runtime
 * call (its own start when it has none; never under an op then); names by
 * a search of --name in the event's own name.
 */
#ifndef TT_ANALYZE_FILTER_FILTERING_H
#define TT_ANALYZE_FILTER_FILTERING_H

#include "tracetool/filter.h"
#include "store/ingest_rows.h"

#include <stddef.h>
#include <stdint.h>

/* whether a start ts (ns; a GPU activity: its launch's, see filter.h) is in
 * f's time range (f NULL: yes) */
static inline int tt__filter_in_time(const tt_filter *f, int64_t ts)
{
    return !f || (ts >= f->from_ns && ts < f->to_ns);
}

typedef struct tt__flt tt__flt;

/* f compiled into *out; *out NULL when f (or f NULL) limits nothing.
 * TT_EINVALID with tt_filter_check's message, TT_ENOMEM. */
int tt__flt_new(tt__flt **out, const tt_filter *f);
void tt__flt_free(tt__flt *fl);

/* what fl limits (NULL: nothing) */
const tt_filter *tt__flt_spec(const tt__flt *fl);
/* --under given: tt__flt_load before each trace */
int tt__flt_needs_load(const tt__flt *fl);
/* --time-range or --under given: GPU rows need their launch (gpu_launch) */
int tt__flt_wants_launch(const tt__flt *fl);

/*
 * --under's ops of one trace: the file path (read again later, so "-" and
 * pipes must be spooled first: formats/spool.h) or, db given, its trace
 * `trace`. What an earlier call loaded is dropped. No-op without --under.
 */
struct tt_db;
int tt__flt_load(tt__flt *fl, const char *path, struct tt_db *db, int64_t trace);
/* the ops loaded: how many matched, on how many threads (the tests) */
void tt__flt_loaded(const tt__flt *fl, size_t *ops, size_t *threads);

/* the start of a new trace's rows: the string verdicts and launches of
 * the last one forgotten (tt__flt_load does it too) */
void tt__flt_reset(tt__flt *fl);

/* a string of the stream (a TT_ROWS_STR row): its --name verdict */
int tt__flt_string(tt__flt *fl, int64_t id, const char *s, size_t len);
/* the string id's text contains a match of --name (yes without --name;
 * an id never handed over: no) */
int tt__flt_name(const tt__flt *fl, int64_t id);
/* the string id's text is a whole name --under matches (yes without
 * --under): for an analysis that walks the nesting itself (memtimeline) */
int tt__flt_under_name(const tt__flt *fl, int64_t id);
/* ts in --time-range */
int tt__flt_time(const tt__flt *fl, int64_t ts);
/* [ts, end] on thread t enclosed by an op --under chose (yes without
 * --under; end < ts counts as ts) */
int tt__flt_under(const tt__flt *fl, const tt__tkey *t, int64_t ts, int64_t end);

/* add an interval [ts, end] of thread t as --under's ops would (the
 * tests; tt__flt_load's reading), then tt__flt_seal before asking */
int tt__flt_add_op(tt__flt *fl, const tt__tkey *t, int64_t ts, int64_t end);
int tt__flt_seal(tt__flt *fl);

/*
 * Rows (cells TT_C_*, text the batch's) by all three filters: a slice or
 * a runtime call by its name, start, thread and end (ts + dur); a memory
 * event by its name, time and thread. 1 passes, 0 not. A row without a
 * time passes only when neither --time-range nor --under is given.
 */
int tt__flt_slice(const tt__flt *fl, const tt__cell *row, const char *text);
int tt__flt_runtime(const tt__flt *fl, const tt__cell *row, const char *text);
int tt__flt_memory(const tt__flt *fl, const tt__cell *row, const char *text);
/* the same, saying which fails: 0 (passes), or TT__FLT_NAME (--name) and
 * TT__FLT_SCOPE (--time-range or --under): an analysis whose totals count
 * every event in scope while its rows show those --name picks */
enum { TT__FLT_NAME = 1, TT__FLT_SCOPE = 2 };
int tt__flt_slice_fails(const tt__flt *fl, const tt__cell *row, const char *text);
int tt__flt_runtime_fails(const tt__flt *fl, const tt__cell *row, const char *text);
int tt__flt_memory_fails(const tt__flt *fl, const tt__cell *row, const char *text);

/* the sink's gpu_launch (call it for every one when tt__flt_wants_launch) */
int tt__flt_launch(tt__flt *fl, const tt__gpu_launch *l);
/* a GPU row: by its name, and its launch (the next one tt__flt_launch
 * took) or its own start; 1 passes, 0 not, < 0 an error (no launch came) */
int tt__flt_gpu(tt__flt *fl, const tt__cell *row, const char *text);
/* the same as TT__FLT_* bits (or < 0) */
int tt__flt_gpu_fails(tt__flt *fl, const tt__cell *row, const char *text);
/* the start the time range judged the last GPU row by (its call's, else its own) */
int64_t tt__flt_gpu_start(const tt__flt *fl);

/*
 * *out: a sink that hands inner's callbacks what passes: the rows of the
 * tables in `tables` (1 << TT_ROWS_SLICE, _RUNTIME, _GPU, _MEMORY) that
 * fail are left out of their batch (the GPU rows' gpu_links and
 * gpu_launch with them); strings, other tables and kernel() go through.
 * fl must live as long as *out; fl NULL: *out = *inner. 0 or TT_ENOMEM.
 */
int tt__flt_sink(tt__flt *fl, const tt__rowsink *inner, unsigned tables, tt__rowsink *out);

#endif
