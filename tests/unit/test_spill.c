/*
 * tests/unit/test_spill.c - common/spill.c: records round-trip in order
 * (sorted, or as added) through memory and through a temporary file with a
 * tiny memory limit (so it really spills and merges several levels), read
 * twice; the records held in memory stay bounded for N and 4N records;
 * an unwritable TMPDIR is a clear error, not a crash.
 */
#include "common/compat.h"
#include "common/spill.h"

#include <criterion/criterion.h>
#include <stdlib.h>

TestSuite(spill, .timeout = 60);

struct rec {
    int64_t key, seq;
};

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* keys in a scrambled order, with repeats */
static int64_t key_of(int64_t i)
{
    return (i * 7919) % 1009;
}

/* n records through a spill of `limit` bytes: read back twice in order */
static tt__spill *round_trip(size_t n, size_t limit, int sorted)
{
    tt__spill *s;
    struct rec r, prev = { 0, 0 };
    size_t i, pass;
    tt__spill_set_limit(limit);
    s = tt__spill_new(sizeof(struct rec), sorted ? cmp_rec : NULL);
    tt__spill_set_limit(0);
    cr_assert(s);
    for (i = 0; i < n; i++) {
        r.key = key_of((int64_t)i);
        r.seq = (int64_t)i;
        cr_assert_eq(tt__spill_add(s, &r), 0);
    }
    cr_assert_eq(tt__spill_count(s), n);
    for (pass = 0; pass < 2; pass++) {
        size_t got = 0;
        int rc;
        cr_assert_eq(tt__spill_rewind(s), 0);
        while ((rc = tt__spill_next(s, &r)) == 1) {
            if (sorted && got)
                cr_assert(cmp_rec(&prev, &r) < 0, "out of order at %zu", got);
            else if (!sorted)
                cr_assert_eq(r.seq, (int64_t)got);
            prev = r;
            got++;
        }
        cr_assert_eq(rc, 0);
        cr_assert_eq(got, n, "pass %zu: %zu of %zu records", pass, got, n);
    }
    return s;
}

Test(spill, sorted_in_memory)
{
    tt__spill *s = round_trip(10000, 0, 1);
    cr_assert_not(tt__spill_spilled(s));
    tt__spill_free(s);
}

Test(spill, sorted_spilled_multi_level)
{
    /* 64 records a run: 100k records are 1563 runs, merged 64 at a time */
    tt__spill *s = round_trip(100000, 64 * sizeof(struct rec), 1);
    cr_assert(tt__spill_spilled(s));
    tt__spill_free(s);
}

Test(spill, as_added_spilled)
{
    tt__spill *s = round_trip(50000, 100 * sizeof(struct rec), 0);
    cr_assert(tt__spill_spilled(s));
    tt__spill_free(s);
}

Test(spill, empty)
{
    tt__spill *s = round_trip(0, 0, 1);
    tt__spill_free(s);
}

Test(spill, peak_bounded)
{
    size_t lim = 256 * sizeof(struct rec), p1, p4;
    tt__spill *s = round_trip(20000, lim, 1);
    p1 = tt__spill_peak(s);
    tt__spill_free(s);
    s = round_trip(80000, lim, 1);
    p4 = tt__spill_peak(s);
    tt__spill_free(s);
    /* the buffer (256) and at most 64 read-ahead buffers (4 each) */
    cr_assert_leq(p1, 256 + 65 * 4, "peak %zu", p1);
    cr_assert_leq(p4, 256 + 65 * 4, "peak %zu", p4);
}

Test(spill, unwritable_tmpdir)
{
    tt__spill *s;
    struct rec r = { 1, 1 };
    int i, rc = 0;
    setenv("TMPDIR", "/proc" /* a directory where no file can be made */, 1);
    tt__spill_set_limit(4 * sizeof(struct rec));
    s = tt__spill_new(sizeof(struct rec), cmp_rec);
    tt__spill_set_limit(0);
    cr_assert(s);
    for (i = 0; i < 10 && rc == 0; i++)
        rc = tt__spill_add(s, &r);
    cr_assert_eq(rc, TT_EIO);
    tt__spill_free(s);
    unsetenv("TMPDIR");
}
