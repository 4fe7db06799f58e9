/*
 * common/spill.h - a bounded buffer of fixed-size records that spills to an
 * unlinked temporary file: for an analysis that must keep rows until
 * something later in the trace is known (internal to libtracetool).
 *
 * Records are added, then read back once or several times: in the order of
 * cmp (a sorted-runs external merge: runs of at most the memory limit are
 * sorted with qsort and written out, then merged at most SPILL_FANIN at a
 * time; records that compare equal come back in no set order, so a caller
 * that needs one puts a sequence number in its comparison), or in the order
 * added when cmp is NULL. Until the limit is reached nothing touches the
 * disk. The temporary file (tt__mkstemp: 0600 in $TMPDIR or /tmp) is
 * unlinked as soon as it is made. Errors: TT_ENOMEM, TT_EIO (which
 * file and why, e.g. the disk full), never a crash; libc only.
 */
#ifndef TT_COMMON_SPILL_H
#define TT_COMMON_SPILL_H

#include <stddef.h>
#include <stdint.h>

typedef struct tt__spill tt__spill;
typedef int (*tt__spill_cmp)(const void *a, const void *b);

/* records of rec bytes, read back in cmp's order (NULL: as added); NULL
 * when out of memory (the error set) */
tt__spill *tt__spill_new(size_t rec, tt__spill_cmp cmp);
/* one record more (only before the first tt__spill_rewind); 0 or an error */
int tt__spill_add(tt__spill *s, const void *rec);
/* the same into *s, made (tt__spill_new(rec_size, cmp)) on first use */
int tt__spill_put(tt__spill **s, size_t rec_size, tt__spill_cmp cmp, const void *rec);
/* (again) to the first record: the adding is over; 0 or an error. A NULL
 * spill (none made: no record) reads as empty, here and in next. */
int tt__spill_rewind(tt__spill *s);
/* the next record into rec: 1, 0 at the end, or an error */
int tt__spill_next(tt__spill *s, void *rec);
/* records added */
uint64_t tt__spill_count(const tt__spill *s);
/* the most records held in memory at once, whether it wrote to disk */
size_t tt__spill_peak(const tt__spill *s);
int tt__spill_spilled(const tt__spill *s);
void tt__spill_free(tt__spill *s);

/* across every spill freed since the last reset (for tests): how many
 * wrote to disk, and the most records one of them held in memory at once */
void tt__spill_stats(uint64_t *spilled, size_t *max_peak);
void tt__spill_stats_reset(void);

/* the memory each spill may hold, in bytes (0: the default, 4 MiB); read
 * when a spill is made. For tests: a tiny limit makes every spill write. */
void tt__spill_set_limit(size_t bytes);

#endif
