/*
 * analyze/summary/sum_internal.h - the container's own functions shared by
 * the files of analyze/summary/ (load and write in sumfile.c, summarize in
 * summarize.c, merge in merge.c, the section table in sections.c). Internal.
 */
#ifndef TT_ANALYZE_SUMMARY_SUM_INTERNAL_H
#define TT_ANALYZE_SUMMARY_SUM_INTERNAL_H

#include "analyze/summary/sumfile.h"

/* the most decompressed bytes a summary may have (1 GiB: a summary is
 * kilobytes per trace, plus each kernel group's distinct durations) */
#define TT__SUM_MAX_BYTES ((size_t)1 << 30)

/* the schema's prefix and the newest major version this build reads */
#define TT__SUM_SCHEMA_PREFIX "tracetool.summary/"
#define TT__SUM_MAJOR 1

/* one section writer of the table (sections.c): sec is a TT__SEC_* */
struct tt__sum_section {
    int sec;
    int (*write)(const struct tt__sum_src *src, tt_jw *w);
};
extern const struct tt__sum_section tt__sum_sections[];
extern const size_t tt__sum_nsections;

/* free one trace's strings (the struct itself is the caller's) */
void tt__sum_trace_release(struct tt__sum_trace *t);

/*
 * Sort s's traces by (path, content_hash), fold each repeated (path, hash)
 * into one (section by section: a section one copy lacks is taken from the
 * other; two different texts keep the smaller, so the result does not
 * depend on the order) and number them 1..n. The same path with two hashes
 * is TT_EINVALID naming origin[i] of both (origin NULL: s->path). origin,
 * when given, is permuted along with the traces.
 */
int tt__sum_normalize(struct tt_summary *s, const char **origin);

/* write s to out_path ("-": standard output; gzip when it ends in .gz),
 * whole or not at all */
int tt__sum_write(const struct tt_summary *s, const char *out_path);

#endif
