/*
 * formats/sumfile_internal.h - the container's own functions shared by
 * the container's files (load and write in sumfile.c, merge in
 * sumfile_merge.c) and the summaries' drivers (summary/). Internal.
 */
#ifndef TT_FORMATS_SUMFILE_INTERNAL_H
#define TT_FORMATS_SUMFILE_INTERNAL_H

#include "formats/sumfile.h"

/* the most decompressed bytes a summary may have (1 GiB: a summary is
 * kilobytes per trace, plus each kernel group's distinct durations) */
#define TT__SUM_MAX_BYTES ((size_t)1 << 30)

/* the schema's prefix and the newest major version this build reads */
#define TT__SUM_SCHEMA_PREFIX "tracetool.summary/"
#define TT__SUM_MAJOR 1

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
