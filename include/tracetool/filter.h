/*
 * tracetool/filter.h - what every analysis may be limited to: a time range
 * (--time-range A:B), event names (--name REGEX) and what an op encloses
 * (--under OP). An analysis's options carry one tt_filter; they compose
 * with --trace, --rank and --steps (an event must pass all of them).
 *
 * What each filter keeps, the same in every analysis:
 * - time range [from_ns, to_ns): a CPU op, runtime call, memory event or
 *   annotation by its start; a GPU activity by the start of the runtime
 *   call that launched it (its own start when it has none), as --steps.
 *   Times are the trace's clock as stored (a Kineto file's ts, in ns).
 * - name: the events the analysis counts (ops, kernels, copies,
 *   collectives, annotations: each analysis's doc says which) whose name
 *   contains a match of the POSIX extended regular expression.
 * - under: what an op whose whole name matches the POSIX extended regular
 *   expression encloses, the op itself included: CPU ops and runtime calls
 *   nested in it on its thread, and the GPU activities those calls
 *   launched.
 */
#ifndef TRACETOOL_FILTER_H
#define TRACETOOL_FILTER_H

#include <stdint.h>

#include "tracetool/common.h"

TT_BEGIN_DECL

typedef struct tt_filter {
    int64_t from_ns, to_ns; /* [from, to); TT_FILTER_OPEN_FROM / _TO: open */
    const char *name;       /* regex searched in names; NULL: any name */
    const char *under;      /* regex matched against whole op names; NULL: all */
} tt_filter;

#define TT_FILTER_OPEN_FROM INT64_MIN
#define TT_FILTER_OPEN_TO INT64_MAX
#define TT_FILTER_INIT { TT_FILTER_OPEN_FROM, TT_FILTER_OPEN_TO, NULL, NULL }

/*
 * "A:B" (--time-range) into [*from_ns, *to_ns): numbers in microseconds,
 * as a Kineto trace's ts, or with a unit (ns, us, ms, s); decimals allowed
 * ("1700000000123.5"); either side may be empty (open). 0, or TT_EINVALID
 * (the message says what is wrong) for anything else, or A >= B.
 */
TT_EXTERN(int) tt_filter_parse_time_range(const char *arg, int64_t *from_ns, int64_t *to_ns);

/* 0 when f's expressions compile (f may be NULL), else TT_EINVALID with
 * the regex library's message naming the option */
TT_EXTERN(int) tt_filter_check(const tt_filter *f);

/* whether f limits anything (NULL: no) */
TT_EXTERN(int) tt_filter_active(const tt_filter *f);

TT_END_DECL

#endif
