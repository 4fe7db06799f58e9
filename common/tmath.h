/*
 * common/tmath.h - time arithmetic that cannot overflow. Internal.
 *
 * The readers refuse a time outside the range below (tt_time_ok, counted as
 * an unstorable time), so the end of one event (ts + dur) and the distance
 * between any two times read from a trace fit in int64. What adds up many
 * times (totals, sums of durations, a base time plus a relative time) or
 * takes numbers from elsewhere (a database, a summary, a user's option) uses
 * the saturating helpers: a result past int64 sticks at INT64_MAX / INT64_MIN
 * instead of being undefined behaviour.
 */
#ifndef TT_COMMON_TMATH_H
#define TT_COMMON_TMATH_H

#include <stdint.h>

#include "tracetool/formats.h" /* TT_TIME_MIN_NS, TT_TIME_MAX_NS, TT_DUR_MAX_NS */

/* a timestamp (ns) the analyses can compute with */
static inline int tt_time_ok(int64_t ns)
{
    return ns > TT_TIME_MIN_NS && ns < TT_TIME_MAX_NS;
}

/* a duration (ns; negative ones are kept as written and read as 0) */
static inline int tt_dur_ok(int64_t ns)
{
    return ns > -TT_DUR_MAX_NS && ns < TT_DUR_MAX_NS;
}

static inline int64_t tt_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t tt_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* the end of an event: ts + dur, a negative dur read as 0 */
static inline int64_t tt_end_ns(int64_t ts, int64_t dur)
{
    return tt_sat_add(ts, dur > 0 ? dur : 0);
}

#endif
