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

/* the index of the span holding ts, or -1 */
long tt__step_at(const struct tt__step *st, size_t n, int64_t ts);

#endif
