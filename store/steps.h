/*
 * store/steps.h - a trace's ProfilerStep#N spans, as the analyses
 * that work per step (diff, breakdown) gather them from the record stream:
 * by start, disjoint (a step nested in another, two profilers, or
 * overlapping it is left out). Internal.
 */
#ifndef TT_STORE_STEPS_H
#define TT_STORE_STEPS_H

#include <stddef.h>
#include <stdint.h>

struct tt__step {
    int64_t num, ts, end; /* ProfilerStep#num, its CPU span [ts, end) */
};

/* a ProfilerStep#N slice met in the stream (GLOB 'ProfilerStep#[0-9]*',
 * with ts and dur): its slice id, N, ts, dur */
struct tt__step_slice {
    int64_t id, num, ts, dur;
};

/* the N of a slice name "ProfilerStep#N..." (N a digit first), or -1 when
 * the name is not one */
int tt__step_name_num(const char *name, int64_t *num);

/* one slice more into *v (*n of them, *a allocated); 0 or TT_ENOMEM */
int tt__step_slice_add(struct tt__step_slice **v, size_t *n, size_t *a, int64_t id, int64_t num,
                       int64_t ts, int64_t dur);

/*
 * The spans of the slices v[0..n) (sorted in place by start, then id), as
 * tt__step_spans reads them from a database: a step that begins inside the
 * one before is left out. *out (malloc'd, NULL when n is 0), *nout; 0 or
 * TT_ENOMEM.
 */
int tt__steps_from_slices(struct tt__step_slice *v, size_t n, struct tt__step **out,
                          size_t *nout);

/* the index of the span holding ts, or -1 */
long tt__step_at(const struct tt__step *st, size_t n, int64_t ts);

#endif
