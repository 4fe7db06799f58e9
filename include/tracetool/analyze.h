/*
 * tracetool/analyze.h - the store and the analyses written on it, in one
 * include: each has its own header (store.h, info.h, averages.h, kernels.h,
 * memtimeline.h, breakdown.h, crosscheck.h, diff.h, export.h, collectives.h,
 * counters.h).
 */
#ifndef TRACETOOL_ANALYZE_H
#define TRACETOOL_ANALYZE_H

#include "tracetool/store.h"
#include "tracetool/info.h"
#include "tracetool/averages.h"
#include "tracetool/kernels.h"
#include "tracetool/memtimeline.h"
#include "tracetool/filter.h"
#include "tracetool/collectives.h"
#include "tracetool/critpath.h"
#include "tracetool/counters.h"

#endif
