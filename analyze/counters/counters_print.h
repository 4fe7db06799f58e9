/*
 * analyze/counters/counters_print.h - the tables of `tracetool queue` and
 * `tracetool bandwidth` (counters_print.c): a summary, or a series written
 * a chunk of rows at a time as its points come (memory does not grow with
 * the series), through the table writer in table, csv, json or markdown.
 * Internal to libtracetool.
 */
#ifndef TT_ANALYZE_COUNTERS_PRINT_H
#define TT_ANALYZE_COUNTERS_PRINT_H

#include "analyze/counters/counters_state.h"
#include "report/json.h"
#include "tracetool/table.h"

/* what is printed */
enum { TT__CP_QUEUE, TT__CP_QUEUE_SERIES, TT__CP_BW, TT__CP_BW_SERIES };

struct tt__cprint {
    int what;             /* TT__CP_* */
    tt_output_format format;
    FILE *out;
    tt_jw jw;             /* JSON: the document */
    tt_table *t;          /* the rows not yet written */
    int parts;            /* chunks written */
    int64_t rows;         /* rows so far */
};

/* the heading (or the JSON document's start); 0 or TT_ENOMEM */
int tt__cprint_begin(struct tt__cprint *p, int what, tt_output_format format, FILE *out);
/* a summary's rows (tt_queue_row, tt_bandwidth_row) */
int tt__cprint_queue_rows(struct tt__cprint *p, const void *rows, size_t n);
int tt__cprint_bw_rows(struct tt__cprint *p, const void *rows, size_t n);
/* one point of a series (tt_queue_point_fn, tt_bandwidth_point_fn; ctx p) */
int tt__cprint_queue_point(void *ctx, const tt_queue_point *q);
int tt__cprint_bw_point(void *ctx, const tt_bandwidth_point *q);
/* the last rows and the end of the document when rc is 0; p released
 * whatever rc; rc back (or the printer's error) */
int tt__cprint_end(struct tt__cprint *p, int rc);

#endif
