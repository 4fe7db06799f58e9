/*
 * tracetool/summary.h - per-rank summaries: `tracetool summarize` and
 * `tracetool merge` (docs/SUMMARY.md).
 *
 * A summary holds, for each trace it covers, what info, averages, kernels,
 * breakdown and diff need to print exactly what they print for that trace
 * in a database (one section per analysis). Analyses take every trace's
 * part separately and combine across traces only when they print, so two
 * summaries merge exactly by the union of their traces: merge is
 * associative and commutative (and merging a summary with itself changes
 * nothing), and its traces are numbered 1, 2, ... in the order an ingest of
 * their directory would number them (by path), whatever order the
 * summaries were merged in.
 *
 * The file is JSON (gzip when its name ends in .gz), schema
 * "tracetool.summary/1", compact: kilobytes per trace for the analyses'
 * tables, plus each kernel group's distinct durations with their counts.
 */
#ifndef TRACETOOL_SUMMARY_H
#define TRACETOOL_SUMMARY_H

#include <stdio.h>

#include "tracetool/averages.h"
#include "tracetool/breakdown.h"
#include "tracetool/info.h"
#include "tracetool/kernels.h"

TT_BEGIN_DECL

#define TT_SUMMARY_SCHEMA "tracetool.summary/1"

typedef struct tt_summary tt_summary;

/* 1 when path is a summary file (by content: plain or gzip JSON whose
 * first key is "schema" with TT_SUMMARY_SCHEMA's prefix); 0 otherwise (also
 * for a missing file, "-" and directories). */
TT_EXTERN(int) tt_is_summary_file(const char *path);

typedef struct tt_summarize_options {
    unsigned int version;
    int64_t trace_id; /* 0 = every Chrome/Kineto trace of the input */
    int64_t rank;     /* -1 = every rank */
} tt_summarize_options;
#define TT_SUMMARIZE_OPTIONS_INIT { .version = 1, .rank = -1 }

/* Summarise input (a trace file, a directory of rank files, a database or
 * a summary) into out_path, whole or not at all (gzip when it ends in .gz;
 * "-": standard output). Errors name the input. */
TT_EXTERN(int) tt_summarize(const char *input, const tt_summarize_options *o,
                            const char *out_path);

/* Merge n summaries into out_path, whole or not at all. Two summaries
 * holding the same trace (same path and content) keep it once; the same
 * path with different contents is TT_EINVALID naming both inputs. */
TT_EXTERN(int) tt_summary_merge(const char *const *inputs, size_t n, const char *out_path);

/* Load a summary (errors name the file, the byte offset and the problem;
 * a newer schema than this build reads is TT_EUNSUPPORTED). */
TT_EXTERN(int) tt_summary_load(const char *path, tt_summary **out);
/* NULL is a no-op. */
TT_EXTERN(void) tt_summary_free(tt_summary *s);
/* traces held */
TT_EXTERN(size_t) tt_summary_ntraces(const tt_summary *s);

/*
 * The analyses on a summary: the result the same options give on a
 * database of the same traces. Options a summary cannot answer (filters,
 * --steps, other groupings than those stored) give TT_EUNSUPPORTED with a
 * message that names the option and says to give the traces instead.
 */
TT_EXTERN(int) tt_info_summary_result(const tt_summary *s, const tt_info_options *o,
                                      tt_info_result *res);
/* `info` on a summary: what tt_info_db prints for the same traces */
TT_EXTERN(int) tt_info_summary_print(const tt_summary *s, const tt_info_options *o, FILE *out);
TT_EXTERN(int) tt_averages_summary_result(const tt_summary *s, const tt_avg_options *o,
                                          tt_avg_result **out);
TT_EXTERN(int) tt_kernels_summary_result(const tt_summary *s, const tt_kern_options *o,
                                         tt_kern_result *res);
TT_EXTERN(int) tt_breakdown_summary_result(const tt_summary *s, const tt_bd_options *o,
                                           tt_bd_result *res);

TT_END_DECL

#endif
