/*
 * store/steps.c - the ProfilerStep#N span that holds a time
 * (steps.h).
 */
#include "store/steps.h"

long tt__step_at(const struct tt__step *st, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ts >= st[lo - 1].end)
        return -1;
    return (long)lo - 1;
}
