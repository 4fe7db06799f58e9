/*
 * analyze/filter/filter.h - the filters of tracetool/filter.h as the
 * analyses apply them (internal to libtracetool).
 */
#ifndef TT_ANALYZE_FILTER_FILTER_H
#define TT_ANALYZE_FILTER_FILTER_H

#include "tracetool/filter.h"

/* whether a start ts (ns; a GPU activity: its launch's, see filter.h) is in
 * f's time range (f NULL: yes) */
static inline int tt__filter_in_time(const tt_filter *f, int64_t ts)
{
    return !f || (ts >= f->from_ns && ts < f->to_ns);
}

#endif
