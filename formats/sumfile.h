/*
 * formats/sumfile.h - a summary file held in memory, and the hooks
 * through which each analysis writes and reads its own section (internal
 * to libtracetool; the format is docs/SUMMARY.md).
 *
 *   {"schema": "tracetool.summary/1", "tool_version": ...,
 *    "traces": [{"path": ..., "content_hash": ..., "rank": R or null,
 *                "info": {...}, "averages": {...}, "kernels": {...},
 *                "breakdown": {...}, "diff": {...}}, ...]}
 *
 * A section is whatever its analysis writes for one trace (one JSON value,
 * numbers exact: integers whole, doubles "%.17g"); the container keeps each
 * section's text as it was read and writes it back unchanged on a merge,
 * so only the analysis that owns a section parses it.
 */
#ifndef TT_FORMATS_SUMFILE_H
#define TT_FORMATS_SUMFILE_H

#include "formats/json.h"
#include "report/json.h"
#include "tracetool/store.h"
#include "tracetool/summary.h"

enum { TT__SEC_INFO = 0, TT__SEC_AVERAGES, TT__SEC_KERNELS, TT__SEC_BREAKDOWN, TT__SEC_DIFF,
       TT__SEC_COUNT };
/* the sections' keys: "info", "averages", "kernels", "breakdown", "diff" */
extern const char *const tt__sec_name[TT__SEC_COUNT];

struct tt__sum_trace {
    int64_t id;            /* 1..n: the summary's order (path, then content_hash) */
    char *path;            /* as the input named it (an ingest of it stores the same) */
    char *content_hash;    /* the store's content hash of the file */
    int have_rank;
    int64_t rank;
    char *sec[TT__SEC_COUNT]; /* each section's JSON text; NULL: the summary has none */
    size_t seclen[TT__SEC_COUNT];
    int64_t secoff[TT__SEC_COUNT]; /* its byte offset in the file (for messages) */
};

struct tt_summary {
    char *path;            /* the file read, for messages */
    struct tt__sum_trace *traces;
    size_t n;
};

/* a parser over trace t's section sec (messages name the summary file and
 * the byte offset in it); the section must be there (t->sec[sec] != NULL) */
void tt__sum_section_jp(const struct tt_summary *s, const struct tt__sum_trace *t, int sec,
                        tt_jp *jp);

/*
 * A section's values, read with a parser of tt__sum_section_jp: each one
 * not of the type asked for is TT_EINVALID naming the summary (jp's name),
 * the offset and "WHAT: an integer expected" (what: "averages section",
 * or with the trace named).
 */
int tt__sum_int(tt_jp *jp, const char *what, int64_t *v);  /* an integer that fits 64 bits */
int tt__sum_num(tt_jp *jp, const char *what, double *v);   /* "%.17g", or null: NaN */
/* a string (NUL-terminated, in a), or null: *s NULL */
int tt__sum_str(tt_jp *jp, const char *what, tt_arena *a, const char **s, size_t *len);

/* TT_EINVALID naming the summary: trace t has no section sec (a summary
 * written by a build that did not have it) */
int tt__sum_missing(const struct tt_summary *s, const struct tt__sum_trace *t, int sec);

/* TT_EUNSUPPORTED naming the summary: `what` (an option, "--steps") needs the
 * traces themselves */
int tt__sum_unsupported(const struct tt_summary *s, const char *what);

/*
 * One trace of summarize's input, handed to each section writer: a stored
 * trace (db, trace_id) or, db NULL, a trace file read on its own (path).
 * path is the trace's path in both cases.
 */
struct tt__sum_src {
    tt_db *db;
    int64_t trace_id;
    const char *path;
};

/* The section writers: exactly one JSON value into w, for the trace of src.
 * Each lives with its analysis. */
int tt__info_sum_write(const struct tt__sum_src *src, tt_jw *w);
int tt__avg_sum_write(const struct tt__sum_src *src, tt_jw *w);
int tt__kern_sum_write(const struct tt__sum_src *src, tt_jw *w);
int tt__bd_sum_write(const struct tt__sum_src *src, tt_jw *w);
int tt__diff_sum_write(const struct tt__sum_src *src, tt_jw *w);

#endif
