/*
 * analyze/kernels/kernels_state.h - what kernels.c (the public calls, printing),
 * kernels_stream.c (the summaries of one trace from its rows),
 * kernels_input.c (which traces, in which order) and kernels_trace.c (the
 * activities, one row each) share.
 * Internal to libtracetool.
 */
#ifndef TT_ANALYZE_KERNELS_STATE_H
#define TT_ANALYZE_KERNELS_STATE_H

#include "tracetool/analyze.h"
#include "analyze/input/each.h"
#include "store/ingest_rows.h"
#include "formats/json.h"

/* the summaries of one trace: kernels (or runtime calls), memory operations */
enum { TT__KSUM_KERNELS = 0, TT__KSUM_MEMORY };

/*
 * One group as a summary ends: the statistics of its values, which
 * are durations, or byte counts in a TT_KERN_BY_MEMSIZE summary. med: the
 * median (the mean of the two middle values for an even n); m2: the sum of
 * the squared deviations from the mean (the variance is m2 / (n - 1)).
 */
typedef struct tt__kgroup {
    char *name;
    int64_t n, total, min, max;
    int64_t bytes;      /* sum of args bytes (memory operations) */
    double med, m2;
    int64_t launches, delay_sum, delay_min, delay_max; /* BY_OP: launch delays */
} tt__kgroup;

/* s->rows from g[0..ng) (the names taken over, also on failure): the
 * averages, deviations and shares, sorted by total (then name), cut to the
 * row limit; s->total_ns (total_bytes), s->ngroups. s->memory and s->by
 * are set. 0 or TT_ENOMEM. */
int tt__kern_finish(tt_kern_summary *s, const tt_kern_options *o, tt__kgroup *g, size_t ng);

/* a group's median and m2 (tt__kgroup) from its distinct values with their
 * counts, by value (v[2i] a value, v[2i + 1] its count; n pairs), `count`
 * values in all summing to `total`: the arithmetic of every summary */
void tt__kern_vals_stats(const int64_t *v, size_t n, int64_t count, int64_t total,
                         tt__kgroup *out);

/* one group of a trace as it was read (med, m2 unset; name borrowed), with
 * its distinct values as tt__kern_vals_stats takes them; pass: the index
 * of its grouping in tt__kern_trace_groups' bys, m: TT__KSUM_* */
typedef int (*tt__kgroup_fn)(void *ctx, size_t pass, int m, const tt__kgroup *g,
                             const int64_t *v, size_t n);
/* tt__kern_trace's reading for each grouping bys[0..nby) (TT_KERN_BY_*;
 * at most 8; no filter, no --steps), handing each group with a value to fn
 * instead of summing it up (kernels_summary.c): a stored trace is read
 * once for all of them, a file once per grouping; fn's error stops it */
int tt__kern_trace_groups(const int *bys, size_t nby, const char *path, tt_db *db,
                          int64_t trace, tt__kgroup_fn fn, void *ctx);

/* kernels_summary.c: the two summaries of one trace (as tt__kern_trace's
 * out) from its "kernels" section, jp at the section's start (copied, not
 * moved); the caller releases both, also after an error */
int tt__kern_sum_summaries(const tt_jp *jp, const tt_kern_options *o, tt_kern_summary out[2]);

/* kernels.c: a summary's rows, path and sequences freed, *s zeroed */
void tt__kern_summary_release(tt_kern_summary *s);

/* Whether summary m (TT__KSUM_*) of a trace is made under o. */
int tt__kern_wants(const tt_kern_options *o, int m);

/*
 * The summaries of one trace (out[0]: kernels or runtime calls, out[1]:
 * memory operations, grouped by o->by), one consumer of the record stream
 * (store/ingest_rows.h): from the file path (db NULL) or trace `trace` of
 * db. res: the trace's format and rank (metadata freed). The caller
 * releases both summaries, also after an error.
 */
int tt__kern_trace(const tt_kern_options *o, const char *path, tt_db *db, int64_t trace,
                   tt_kern_summary out[2], tt__rows_result *res);

/* the selected traces of o->trace_id / o->rank, through v (analyze/input/each.h) */
int tt__kern_each(const tt_kern_options *o, const char *input, tt_db *db,
                  const struct tt__visit *v);

/* TT_ENOTFOUND for a summary that found nothing in any selected trace:
 * "no WHAT in this trace" (src: the file, or the database) */
int tt__kern_nothing(const char *src, int file, const tt_kern_options *o);

/* the most GPU rows' links and values waiting for the steps that the last
 * tt__kern_trace of this thread held in memory at once (the tests) */
size_t tt__kern_last_peak(void);

/* --steps given (o->version >= 2 and steps_set) */
int tt__kern_steps_on(const tt_kern_options *o);

/* a ProfilerStep#N slice: its start, slice id, end and N */
struct tt__kspan {
    int64_t ts, id, end, num;
};
/* "ProfilerStep#" and a digit, as the steps' GLOB 'ProfilerStep#[0-9]*' */
int tt__kern_is_step(const char *s);
/* the chosen steps' windows (o->step_from..step_to) of sp[0..n), by start,
 * as breakdown --steps takes them: the spans by start, one inside or
 * overlapping the one before left out, one start kept once; returns how
 * many are left at the front of sp */
size_t tt__kern_step_windows(struct tt__kspan *sp, size_t n, const tt_kern_options *o);
/* whether launch time lt falls in one of the windows: the last window
 * that starts at or before it ends after it (TT_KERN_NULL: no) */
int tt__kern_in_steps(const struct tt__kspan *sp, size_t n, int64_t lt);

/* kernels_seq.c: TT_KERN_BY_SEQUENCE, as tt__kern_trace (out[0]: the
 * sequences, out[1] empty); the release of such a summary's sequences */
int tt__kern_seq_trace(const tt_kern_options *o, const char *path, tt_db *db, int64_t trace,
                       tt_kern_summary out[2], tt__rows_result *res);
void tt__kern_seq_release(tt_kern_summary *s);

/* kernels_trace.c: the activities of the selected traces printed (o->format) */
int tt__kern_print_activities(const char *input, tt_db *db, const tt_kern_options *o, FILE *out);

#endif
