/*
 * compare/diff/diff_sumsec.h - diff's section of a per-rank summary
 * (tracetool.summary/1, docs/SUMMARY.md): one trace's part of a side, and a
 * summary read back as a side's traces (diff_sumsec.c).
 */
#ifndef TT_DIFF_SUMSEC_H
#define TT_DIFF_SUMSEC_H

#include "compare/diff/diff_state.h"
#include "formats/json.h"
#include "report/json.h"
#include "tracetool/store.h"

/* diff_save.c: one trace's side as a section: {"rank": R, ...the members
 * of a diff-summary/1 but "schema"...}, keys in the order they were made
 * (the order the traces' combination adds them in) */
void tt__diff_side_json(tt_jw *w, const struct tt_diff_side *s, int64_t rank);
/* diff_save.c: a section back (init(ctx, jp) sets jp at it; called twice);
 * ren (NULL or none: no renaming) renames its keys as the trace's reading
 * would have; *rank: its "rank" (-1 unknown) */
int tt__diff_section_read(void (*init)(void *ctx, tt_jp *jp), void *ctx, const char *path,
                          const struct tt__renames *ren, struct tt_diff_side **out, int64_t *rank);

/* diff_summary.c: one trace as a side with the default keys (family,
 * no renaming), every step: a stored trace (db, trace_id) or, db NULL, the
 * trace file path read on its own; *out NULL when it is not a
 * Chrome/Kineto trace. *rank: -1 unknown */
int tt__diff_trace_one(tt_db *db, int64_t trace_id, const char *path, struct tt_diff_side **out,
                       int64_t *rank);

/* 1 when path is a regular file holding a tracetool.summary/1 */
int tt__diff_is_sumfile(const char *path);

/* the traces of a tracetool.summary/1 file, in its order (by path), each
 * handed as one trace's side and rank to add(ctx, t, rank), which takes t
 * (also on failure); label: what the report calls the side (the one
 * trace's path, or the directory its traces share). Options the sections
 * cannot answer (--match other than family) are TT_EUNSUPPORTED naming the
 * option. */
int tt__diff_sum_input(const char *path, const tt_diff_options *o, const struct tt__renames *ren,
                       int (*add)(void *ctx, struct tt_diff_side *t, int64_t rank), void *ctx,
                       char *label, size_t cap);

#endif
