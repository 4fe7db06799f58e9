/*
 * analyze/kernels/kernels_state.h - what kernels.c (the SQL summaries, printing),
 * kernels_stream.c (the summaries of a file without a database) and
 * kernels_trace.c (the activities, one row each) share.
 * Internal to libtracetool.
 */
#ifndef TT_ANALYZE_KERNELS_STATE_H
#define TT_ANALYZE_KERNELS_STATE_H

#include "tracetool/analyze.h"

/* the summaries of one trace: kernels (or runtime calls), memory operations */
enum { TT__KSUM_KERNELS = 0, TT__KSUM_MEMORY };

/*
 * One group as both paths compute it: the statistics of its values, which
 * are durations, or byte counts in a TT_KERN_BY_MEMSIZE summary. med: the
 * median (the mean of the two middle values for an even n); m2: the sum of
 * the squared deviations from the mean (the variance is m2 / (n - 1)).
 */
typedef struct tt__kgroup {
    char *name;
    int64_t n, total, min, max;
    int64_t bytes;      /* sum of args bytes (memory operations) */
    double med, m2;
} tt__kgroup;

/* s->rows from g[0..ng) (the names taken over, also on failure): the
 * averages, deviations and shares, sorted by total (then name), cut to the
 * row limit; s->total_ns (total_bytes), s->ngroups. s->memory and s->by
 * are set. 0 or TT_ENOMEM. */
int tt__kern_finish(tt_kern_summary *s, const tt_kern_options *o, tt__kgroup *g, size_t ng);

/* Whether summary m (TT__KSUM_*) of a trace is made under o. */
int tt__kern_wants(const tt_kern_options *o, int m);

/* The kernel (out[0]) and memory-operation (out[1]) summaries of a trace
 * file in one read, grouped by o->by (not TT_KERN_BY_OP, which needs the
 * links of a database; TT_KERN_BY_RUNTIME: runtime calls in out[0]). The
 * caller releases both, also after an error. */
int tt__kernels_stream(const char *path, const tt_kern_options *o, tt_kern_summary out[2]);

/* TT_ENOTFOUND for a summary that found nothing in any selected trace:
 * "no WHAT in this trace" (src: the file, or the database) */
int tt__kern_nothing(const char *src, int file, const tt_kern_options *o);

/* kernels_trace.c: a trace file in a temporary database with the tables
 * the activities need; the activities of a database printed (o->format) */
int tt__kern_open_activities(tt_db **db, const char *path);
/* with --steps (o->version >= 2 and steps_set): the chosen ProfilerStep#N
 * spans of trace into temp.tt_kwin (a, b), for TT__KERN_IN_STEPS; 0 when
 * there is no filter */
int tt__kern_step_windows(tt_db *db, const tt_kern_options *o, int64_t trace);
int tt__kern_steps_on(const tt_kern_options *o);
/* SQL: the launch time LT falls in a chosen step (windows disjoint) */
#define TT__KERN_IN_STEPS(LT)                                                              \
    " AND (SELECT w.b FROM temp.tt_kwin AS w WHERE w.a <= " LT " ORDER BY w.a DESC LIMIT 1)" \
    " > " LT
#define TT__KERN_LAUNCH_TS "coalesce((SELECT r.ts FROM runtime AS r WHERE r.id = g.runtime_id), g.ts)"
int tt__kern_print_activities_db(tt_db *db, const tt_kern_options *o, FILE *out);

#endif
