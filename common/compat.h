/*
 * common/compat.h - first include of every tracetool .c file: feature macros,
 * attributes, TT_BUG and the internal error setters. Internal; not installed.
 */
#ifndef TT_COMMON_COMPAT_H
#define TT_COMMON_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracetool/common.h"

#define TT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TT_UNUSED(x) ((void)(x))

#if defined(__GNUC__)
#define TT_LIKELY(x) __builtin_expect(!!(x), 1)
#define TT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TT_NORETURN __attribute__((noreturn))
#else
#define TT_LIKELY(x) (x)
#define TT_UNLIKELY(x) (x)
#define TT_NORETURN
#endif

/* A programmer error, never an input error: print where and abort. */
#define TT_BUG(...) tt__bug(__FILE__, __LINE__, __VA_ARGS__)
TT_NORETURN void tt__bug(const char *file, int line, const char *fmt, ...)
    TT_PRINTF(3, 4);

/* Set the thread's last error; returns code so callers can `return tt_error_set(...)`. */
int tt_error_set(int code, const char *fmt, ...) TT_PRINTF(2, 3);
/* Same, with the input's name and a byte offset (-1 if unknown). */
int tt_error_set_at(int code, const char *source, int64_t offset,
                    const char *fmt, ...) TT_PRINTF(4, 5);
/* Add or replace the source name of the current error (keeps the message). */
void tt_error_set_source(const char *source);
/* Clear the last error. */
void tt_error_clear(void);

/* Overflow-checked size arithmetic: 0 on success, TT_ENOMEM on overflow. */
static inline int tt_st_add(size_t *out, size_t a, size_t b)
{
    if (a > SIZE_MAX - b)
        return TT_ENOMEM;
    *out = a + b;
    return 0;
}
static inline int tt_st_mult(size_t *out, size_t a, size_t b)
{
    if (b && a > SIZE_MAX / b)
        return TT_ENOMEM;
    *out = a * b;
    return 0;
}

/*
 * Grow array `x` (element count `alloc`) to hold at least `nr` elements.
 * Evaluates to 0 or TT_ENOMEM.
 */
#define TT_ALLOC_GROW(x, nr, alloc)                                            \
    tt__grow((void **)&(x), (nr), &(alloc), sizeof(*(x)))
int tt__grow(void **ptr, size_t nr, size_t *alloc, size_t elem);
/* tt_error_set(TT_ENOMEM, "out of memory"): the one spelling of it */
int tt__oom(void);
/* the same, starting at `first` elements (state kept per thread of a trace,
 * of which there can be millions, starts small) */
#define TT_ALLOC_GROW_FROM(x, nr, alloc, first)                                \
    tt__grow_from((void **)&(x), (nr), &(alloc), sizeof(*(x)), (first))
int tt__grow_from(void **ptr, size_t nr, size_t *alloc, size_t elem, size_t first);

/*
 * Temporary files go to $TMPDIR (when it names a directory), else /tmp.
 * tt__mkstemp creates "<dir>/tracetool-<what>-XXXXXX" with mode 0600 and
 * returns its fd (the name in buf), or sets the error (which directory, why)
 * and returns -1. tt__tmpfile is an anonymous one: removed as soon as it is
 * created, so nothing stays behind whatever ends the process.
 */
const char *tt__tmpdir(void);
/*
 * The output files being written under a temporary name: a writer adds the
 * name (copied) as soon as the file exists and removes it (by the slot
 * returned; -1 is a no-op) once it was renamed or unlinked, so that the
 * handlers of tt_remove_partial_outputs_on_signals unlink it when a signal
 * ends the process. At most 16 at once; more are just not guarded.
 */
int tt__partial_add(const char *path);
void tt__partial_remove(int slot);
int tt__mkstemp(char *buf, size_t cap, const char *what);
FILE *tt__tmpfile(void);

/* qsort / qsort_r of n elements: n == 0 may come with a NULL base, which
 * qsort's contract (and UBSan) refuses */
#define TT_QSORT(base, n, size, cmp) ((n) ? qsort((base), (n), (size), (cmp)) : (void)0)
#define TT_QSORT_R(base, n, size, cmp, ctx) \
    ((n) ? qsort_r((base), (n), (size), (cmp), (ctx)) : (void)0)

#endif
