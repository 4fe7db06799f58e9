/*
 * store/steps.c - the ProfilerStep#N spans of a trace from its slices, and
 * the span that holds a time (steps.h).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "store/steps.h"

#include <stdlib.h>
#include <string.h>

int tt__step_name_num(const char *name, int64_t *num)
{
    if (strncmp(name, "ProfilerStep#", 13) || name[13] < '0' || name[13] > '9')
        return -1;
    *num = strtoll(name + 13, NULL, 10);
    return 0;
}

int tt__step_slice_add(struct tt__step_slice **v, size_t *n, size_t *a, int64_t id, int64_t num,
                       int64_t ts, int64_t dur)
{
    if (TT_ALLOC_GROW(*v, *n + 1, *a) < 0)
        return tt__oom();
    (*v)[*n].id = id;
    (*v)[*n].num = num;
    (*v)[*n].ts = ts;
    (*v)[*n].dur = dur;
    (*n)++;
    return 0;
}

static int cmp_step(const void *a, const void *b)
{
    const struct tt__step_slice *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int tt__steps_from_slices(struct tt__step_slice *v, size_t n, struct tt__step **out,
                          size_t *nout)
{
    size_t k, m = 0;
    *out = NULL;
    *nout = 0;
    if (!n)
        return 0;
    TT_QSORT(v, n, sizeof(*v), cmp_step);
    if (!(*out = malloc(n * sizeof(**out))))
        return tt__oom();
    for (k = 0; k < n; k++) {
        if (m && v[k].ts < (*out)[m - 1].end)
            continue;
        (*out)[m].ts = v[k].ts;
        (*out)[m].end = tt_sat_add(v[k].ts, v[k].dur);
        (*out)[m].num = v[k].num;
        m++;
    }
    *nout = m;
    return 0;
}

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
