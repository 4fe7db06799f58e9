/*
 * analyze/kernels_state.h - what kernels.c (the SQL summaries, printing) and
 * kernels_stream.c (the summaries of a file without a database) share.
 * Internal to libtracetool.
 */
#ifndef TT_ANALYZE_KERNELS_STATE_H
#define TT_ANALYZE_KERNELS_STATE_H

#include "tracetool/analyze.h"

/* s->rows (nrows, in any order) with count, total, min, max, bytes, median
 * and s->total_ns filled, sumsq[i] the sum of squared durations of row i:
 * the averages, deviations and shares, sorted by total (then name), cut to
 * the row limit. */
void tt__kern_finish(tt_kern_summary *s, const tt_kern_options *o, const double *sumsq);

/* The kernel (out[0]) and memory-operation (out[1]) summaries of a trace
 * file in one read, grouped by o->by (not TT_KERN_BY_OP, which needs the
 * links of a database). The caller releases both, also after an error. */
int tt__kernels_stream(const char *path, const tt_kern_options *o, tt_kern_summary out[2]);

#endif
