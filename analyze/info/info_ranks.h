/*
 * analyze/info/info_ranks.h - the rank overview's printer, for info.c. Internal.
 */
#ifndef TT_ANALYZE_INFO_RANKS_H
#define TT_ANALYZE_INFO_RANKS_H

#include <stdio.h>

#include "report/json.h"
#include "tracetool/analyze.h"

/* text and markdown: a titled table */
int tt__info_ranks_print(const tt_info_ranks *r, int format, FILE *out);
/* JSON: the value of a "ranks" key, into the document w writes (its rows
 * each on a line of its own). 0 or an error (set) */
int tt__info_ranks_json(const tt_info_ranks *r, tt_jw *w);

/* one trace's row of the overview, from its summary and what the file
 * stream found besides: the device most of its GPU activities ran on (-1:
 * none), its distinct ProfilerStep#N names, its deviceProperties (JSON, or
 * NULL) to name that device. 0 or TT_ENOMEM. */
int tt__info_rank_row(tt_info_rank *r, const tt_info_summary *s, int64_t device, int64_t steps,
                      const char *devprops);
/* the rows by rank (unknown ranks last), then trace id */
void tt__info_ranks_sort(tt_info_ranks *r);

/* for summaries: trace id of db, as `info` computes it, into s and its row
 * of the rank overview into row (each to free); and the printer of `info`
 * on traces and overview rows made elsewhere (as tt_info_db prints them) */
int tt__info_db_trace(tt_db *db, int64_t id, tt_info_summary *s, tt_info_rank *row);
int tt__info_print(const tt_info_result *res, const tt_info_ranks *r, const tt_info_options *opts,
                   FILE *out);

#endif
