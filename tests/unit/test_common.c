/*
 * tests/unit/test_common.c - tt_buf, tt_arena, tt_hash and the error record.
 */
#include "common/compat.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/hash.h"
#include "common/tmath.h"

#include <criterion/criterion.h>

/* ---- tt_buf ---- */

Test(buf, init_is_empty_and_terminated)
{
    tt_buf b = TT_BUF_INIT;
    cr_assert_not_null(b.buf);
    cr_assert_eq(b.len, 0);
    cr_assert_str_eq(b.buf, "");
    tt_buf_init(&b);
    cr_assert_str_eq(b.buf, "");
    tt_buf_release(&b);
    cr_assert_str_eq(b.buf, "");
    cr_assert_eq(b.alloc, 0);
}

Test(buf, add_and_addstr_append)
{
    tt_buf b = TT_BUF_INIT;
    cr_assert_eq(tt_buf_add(&b, "abc", 3), 0);
    cr_assert_eq(tt_buf_addstr(&b, "def"), 0);
    cr_assert_eq(tt_buf_addch(&b, 'g'), 0);
    cr_assert_eq(tt_buf_add(&b, "xyz", 0), 0);
    cr_assert_eq(b.len, 7);
    cr_assert_str_eq(b.buf, "abcdefg");
    cr_assert_eq(b.buf[b.len], '\0');
    cr_assert_lt(b.len, b.alloc);
    cr_assert_eq(b.oom, 0);
    tt_buf_release(&b);
}

Test(buf, add_embedded_nul_keeps_length)
{
    tt_buf b = TT_BUF_INIT;
    cr_assert_eq(tt_buf_add(&b, "a\0b", 3), 0);
    cr_assert_eq(b.len, 3);
    cr_assert_eq(memcmp(b.buf, "a\0b", 4), 0);
    tt_buf_release(&b);
}

Test(buf, grows_over_many_adds)
{
    tt_buf b = TT_BUF_INIT;
    size_t i;
    for (i = 0; i < 100000; i++)
        cr_assert_eq(tt_buf_addch(&b, (char)('a' + i % 26)), 0);
    cr_assert_eq(b.len, 100000);
    cr_assert_eq(strlen(b.buf), 100000);
    for (i = 0; i < 100000; i++)
        cr_assert_eq(b.buf[i], (char)('a' + i % 26), "byte %zu", i);
    tt_buf_release(&b);
}

Test(buf, reset_keeps_memory)
{
    tt_buf b = TT_BUF_INIT;
    size_t alloc;
    tt_buf_addstr(&b, "hello world");
    alloc = b.alloc;
    tt_buf_reset(&b);
    cr_assert_eq(b.len, 0);
    cr_assert_str_eq(b.buf, "");
    cr_assert_eq(b.alloc, alloc);
    tt_buf_addstr(&b, "x");
    cr_assert_str_eq(b.buf, "x");
    tt_buf_release(&b);
    /* reset of a never-allocated buffer must not write to the shared empty */
    tt_buf_reset(&b);
    cr_assert_str_eq(b.buf, "");
}

Test(buf, addf_short_and_long)
{
    tt_buf b = TT_BUF_INIT;
    char big[1000];
    size_t i;
    cr_assert_eq(tt_buf_addf(&b, "%d-%s-%05.1f", 42, "x", 3.5), 0);
    cr_assert_str_eq(b.buf, "42-x-003.5");
    cr_assert_eq(b.len, strlen("42-x-003.5"));
    for (i = 0; i < sizeof(big) - 1; i++)
        big[i] = (char)('A' + i % 26);
    big[sizeof(big) - 1] = '\0';
    /* longer than the internal 256-byte scratch */
    cr_assert_eq(tt_buf_addf(&b, "[%s]%d", big, 7), 0);
    cr_assert_eq(b.len, strlen("42-x-003.5") + 1 + 999 + 1 + 1);
    cr_assert_eq(strncmp(b.buf + 10, "[ABC", 4), 0);
    cr_assert_str_eq(b.buf + b.len - 3, "K]7");
    cr_assert_eq(b.buf[10 + 1 + 998], big[998]);
    cr_assert_eq(strlen(b.buf), b.len);
    tt_buf_release(&b);
}

Test(buf, addf_exactly_256)
{
    tt_buf b = TT_BUF_INIT;
    char s[257];
    memset(s, 'q', 256);
    s[256] = '\0';
    cr_assert_eq(tt_buf_addf(&b, "%s", s), 0);
    cr_assert_eq(b.len, 256);
    cr_assert_str_eq(b.buf, s);
    s[255] = '\0';
    tt_buf_reset(&b);
    cr_assert_eq(tt_buf_addf(&b, "%s", s), 0);
    cr_assert_eq(b.len, 255);
    cr_assert_str_eq(b.buf, s);
    tt_buf_release(&b);
}

static void json_str(const char *in, size_t len, const char *want)
{
    tt_buf b = TT_BUF_INIT;
    cr_assert_eq(tt_buf_add_json_string(&b, in, len), 0);
    cr_assert_eq(b.len, strlen(want), "len %zu want %zu (%s vs %s)", b.len,
                 strlen(want), b.buf, want);
    cr_assert_str_eq(b.buf, want);
    tt_buf_release(&b);
}

Test(buf, json_string_plain)
{
    json_str("", 0, "\"\"");
    json_str("abc", 3, "\"abc\"");
    json_str("a/b", 3, "\"a/b\"");
}

Test(buf, json_string_escapes_quote_and_backslash)
{
    json_str("a\"b", 3, "\"a\\\"b\"");
    json_str("C:\\Users", 8, "\"C:\\\\Users\"");
    json_str("\"\\\"", 3, "\"\\\"\\\\\\\"\"");
}

Test(buf, json_string_escapes_control_chars)
{
    json_str("a\nb\tc\rd", 7, "\"a\\nb\\tc\\rd\"");
    json_str("\x01", 1, "\"\\u0001\"");
    json_str("\x1f", 1, "\"\\u001f\"");
    json_str("\b\f", 2, "\"\\u0008\\u000c\"");
    json_str("x\0y", 3, "\"x\\u0000y\"");
}

Test(buf, json_string_keeps_utf8_and_del)
{
    json_str("\xc3\xa9\x7f", 3, "\"\xc3\xa9\x7f\"");
}

Test(buf, json_string_appends)
{
    tt_buf b = TT_BUF_INIT;
    tt_buf_addstr(&b, "{");
    tt_buf_add_json_string(&b, "k", 1);
    tt_buf_addch(&b, ':');
    tt_buf_add_json_string(&b, "v\"", 2);
    tt_buf_addch(&b, '}');
    cr_assert_str_eq(b.buf, "{\"k\":\"v\\\"\"}");
    tt_buf_release(&b);
}

Test(buf, json_string_long)
{
    tt_buf b = TT_BUF_INIT;
    char in[5000];
    size_t i;
    for (i = 0; i < sizeof(in); i++)
        in[i] = (i % 100 == 0) ? '"' : 'x';
    cr_assert_eq(tt_buf_add_json_string(&b, in, sizeof(in)), 0);
    cr_assert_eq(b.len, 2 + sizeof(in) + 50);
    cr_assert_eq(b.buf[0], '"');
    cr_assert_eq(b.buf[1], '\\');
    cr_assert_eq(b.buf[2], '"');
    cr_assert_eq(b.buf[b.len - 1], '"');
    tt_buf_release(&b);
}

/* ---- tt_arena ---- */

Test(arena, many_allocations_stay_valid)
{
    tt_arena a = TT_ARENA_INIT;
    enum { N = 20000 };
    char **ptrs = calloc(N, sizeof(*ptrs));
    size_t *sizes = calloc(N, sizeof(*sizes));
    size_t i, j;
    cr_assert_not_null(ptrs);
    for (i = 0; i < N; i++) {
        sizes[i] = 1 + (i * 37) % 300;
        if (i % 1000 == 999)
            sizes[i] = 40000; /* larger than a default block */
        ptrs[i] = tt_arena_alloc(&a, sizes[i]);
        cr_assert_not_null(ptrs[i]);
        memset(ptrs[i], (int)(i & 0xff), sizes[i]);
    }
    for (i = 0; i < N; i++) {
        for (j = 0; j < sizes[i]; j++) {
            if ((unsigned char)ptrs[i][j] != (i & 0xff))
                cr_assert_fail("allocation %zu byte %zu overwritten", i, j);
        }
    }
    /* no two allocations overlap */
    for (i = 1; i < 200; i++) {
        for (j = 0; j < i; j++) {
            char *a0 = ptrs[i], *a1 = ptrs[i] + sizes[i];
            char *b0 = ptrs[j], *b1 = ptrs[j] + sizes[j];
            cr_assert(a1 <= b0 || b1 <= a0, "allocations %zu and %zu overlap", i, j);
        }
    }
    tt_arena_release(&a);
    free(ptrs);
    free(sizes);
}

Test(arena, alignment_is_8)
{
    tt_arena a = TT_ARENA_INIT;
    size_t i;
    for (i = 0; i < 5000; i++) {
        void *p = tt_arena_alloc(&a, (i % 13) + 1);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 8, 0, "allocation %zu at %p", i, p);
        if ((i % 13) + 1 >= 8)
            *(uint64_t *)p = i; /* usable as an 8-byte object */
    }
    {
        uint64_t *big = tt_arena_alloc(&a, 1 << 20);
        cr_assert_not_null(big);
        cr_assert_eq((uintptr_t)big % 8, 0);
        big[0] = 1;
        big[(1 << 17) - 1] = 2;
    }
    tt_arena_release(&a);
}

Test(arena, strndup_copies_and_terminates)
{
    tt_arena a = TT_ARENA_INIT;
    char src[] = "hello world";
    char *s = tt_arena_strndup(&a, src, 5);
    char *e = tt_arena_strndup(&a, NULL, 0);
    cr_assert_str_eq(s, "hello");
    src[0] = 'J';
    cr_assert_str_eq(s, "hello");
    cr_assert_not_null(e);
    cr_assert_str_eq(e, "");
    tt_arena_release(&a);
}

Test(arena, reset_reuses_and_allocs_again)
{
    tt_arena a = TT_ARENA_INIT;
    int round;
    for (round = 0; round < 5; round++) {
        size_t i;
        char *first = NULL;
        for (i = 0; i < 3000; i++) {
            char *p = tt_arena_strndup(&a, "abcdefghijklmnop", 16);
            cr_assert_not_null(p);
            if (!first)
                first = p;
        }
        cr_assert_str_eq(first, "abcdefghijklmnop");
        tt_arena_reset(&a);
    }
    tt_arena_release(&a);
    cr_assert_null(a.head);
    tt_arena_release(&a); /* twice is fine */
}

Test(arena, zero_size_alloc)
{
    tt_arena a = TT_ARENA_INIT;
    void *p = tt_arena_alloc(&a, 0);
    void *q = tt_arena_alloc(&a, 8);
    cr_assert_not_null(q);
    (void)p;
    tt_arena_release(&a);
}

/* ---- tt_hash ---- */

static void hash_of(const void *data, size_t len, size_t chunk, char out[33])
{
    tt_hash h;
    const unsigned char *p = data;
    size_t off = 0;
    tt_hash_init(&h);
    if (chunk == 0) {
        tt_hash_update(&h, data, len);
    } else {
        while (off < len) {
            size_t n = len - off < chunk ? len - off : chunk;
            tt_hash_update(&h, p + off, n);
            off += n;
        }
    }
    tt_hash_final_hex(&h, out);
}

Test(hash, chunking_does_not_matter)
{
    unsigned char data[1000];
    char ref[33], got[33];
    size_t i, lens[] = { 0, 1, 5, 31, 32, 33, 63, 64, 65, 100, 999, 1000 };
    for (i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(i * 131 + 7);
    for (i = 0; i < TT_ARRAY_SIZE(lens); i++) {
        size_t c;
        hash_of(data, lens[i], 0, ref);
        cr_assert_eq(strlen(ref), 32);
        for (c = 1; c <= 70; c++) {
            hash_of(data, lens[i], c, got);
            cr_assert_str_eq(got, ref, "len %zu chunk %zu", lens[i], c);
        }
    }
}

Test(hash, irregular_chunks)
{
    unsigned char data[777];
    char ref[33], got[33];
    tt_hash h;
    size_t i, off = 0, step = 1;
    for (i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(i ^ 0x5a);
    hash_of(data, sizeof(data), 0, ref);
    tt_hash_init(&h);
    while (off < sizeof(data)) {
        size_t n = sizeof(data) - off < step ? sizeof(data) - off : step;
        tt_hash_update(&h, data + off, n);
        tt_hash_update(&h, data, 0); /* empty updates are neutral */
        off += n;
        step = step * 3 % 41 + 1;
    }
    tt_hash_final_hex(&h, got);
    cr_assert_str_eq(got, ref);
}

Test(hash, different_data_differs)
{
    char a[33], b[33], c[33], d[33], e[33];
    hash_of("abc", 3, 0, a);
    hash_of("abd", 3, 0, b);
    hash_of("abc\0", 4, 0, c);
    hash_of("", 0, 0, d);
    hash_of("\0", 1, 0, e);
    cr_assert_str_neq(a, b);
    cr_assert_str_neq(a, c);
    cr_assert_str_neq(d, e);
    cr_assert_str_neq(a, d);
    {
        /* one flipped bit in a long buffer */
        unsigned char buf[4096];
        char x[33], y[33];
        memset(buf, 0x11, sizeof(buf));
        hash_of(buf, sizeof(buf), 0, x);
        buf[2049] ^= 0x04;
        hash_of(buf, sizeof(buf), 0, y);
        cr_assert_str_neq(x, y);
        /* same bytes, different length */
        hash_of(buf, sizeof(buf) - 32, 0, y);
        cr_assert_str_neq(x, y);
    }
}

Test(hash, known_values_are_stable)
{
    /* reference values computed by an independent re-implementation of the
     * documented algorithm (four multiply-rotate lanes + avalanche) */
    char out[33];
    unsigned char seq[100];
    size_t i;
    hash_of("", 0, 0, out);
    cr_assert_str_eq(out, "9090306c6e91ed5987d6ae9273de9c2e");
    hash_of("abc", 3, 0, out);
    cr_assert_str_eq(out, "97449b957e938efedb8e056350a7e705");
    for (i = 0; i < sizeof(seq); i++)
        seq[i] = (unsigned char)i;
    hash_of(seq, sizeof(seq), 0, out);
    cr_assert_str_eq(out, "b838008d515c45e49e946b4305e24eb1");
    hash_of(seq, sizeof(seq), 7, out);
    cr_assert_str_eq(out, "b838008d515c45e49e946b4305e24eb1");
    for (i = 0; i < 32; i++)
        cr_assert(out[i] >= '0' && (out[i] <= '9' || (out[i] >= 'a' && out[i] <= 'f')));
}

/* ---- errors ---- */

Test(error, set_at_and_format)
{
    char buf[600];
    const tt_error *e;
    int rc = tt_error_set_at(TT_EINVALID, "trace.json", 1234, "expected '%c'", '{');
    cr_assert_eq(rc, TT_EINVALID);
    e = tt_error_last();
    cr_assert_eq(e->code, TT_EINVALID);
    cr_assert_str_eq(e->source, "trace.json");
    cr_assert_eq(e->offset, 1234);
    cr_assert_str_eq(e->message, "expected '{'");
    tt_error_format(e, buf, sizeof(buf));
    cr_assert_str_eq(buf, "trace.json: byte 1234: expected '{'");
}

Test(error, format_parts_omitted)
{
    char buf[600];
    tt_error_set_at(TT_EIO, "f.gz", -1, "cannot open: %s", "No such file");
    tt_error_format(tt_error_last(), buf, sizeof(buf));
    cr_assert_str_eq(buf, "f.gz: cannot open: No such file");

    tt_error_set(TT_ENOMEM, "out of memory");
    cr_assert_eq(tt_error_last()->offset, -1);
    cr_assert_str_eq(tt_error_last()->source, "");
    tt_error_format(tt_error_last(), buf, sizeof(buf));
    cr_assert_str_eq(buf, "out of memory");

    tt_error_set_at(TT_ETRUNCATED, "x", 0, "%s", "");
    tt_error_format(tt_error_last(), buf, sizeof(buf));
    cr_assert_str_eq(buf, "x: byte 0: truncated input");

    tt_error_set_at(TT_EINVALID, NULL, 5, "bad");
    tt_error_format(tt_error_last(), buf, sizeof(buf));
    cr_assert_str_eq(buf, "bad");
}

Test(error, set_source_and_clear)
{
    char buf[600];
    tt_error_set_at(TT_EINVALID, NULL, 9, "oops");
    tt_error_set_source("a.json");
    tt_error_format(tt_error_last(), buf, sizeof(buf));
    cr_assert_str_eq(buf, "a.json: byte 9: oops");
    tt_error_clear();
    cr_assert_eq(tt_error_last()->code, 0);
    cr_assert_eq(tt_error_last()->offset, -1);
    cr_assert_str_eq(tt_error_last()->message, "");
}

Test(error, format_truncates_to_size)
{
    char buf[8];
    tt_error_set_at(TT_EINVALID, "file.json", 77, "long message here");
    tt_error_format(tt_error_last(), buf, sizeof(buf));
    cr_assert_eq(strlen(buf), 7);
    cr_assert_str_eq(buf, "file.js");
}

Test(error, strerror_codes)
{
    cr_assert_str_eq(tt_strerror(TT_OK), "success");
    cr_assert_str_eq(tt_strerror(TT_ENOMEM), "out of memory");
    cr_assert_str_eq(tt_strerror(TT_ETRUNCATED), "truncated input");
    cr_assert_str_eq(tt_strerror(TT_EEMPTY), "empty input");
    cr_assert_str_eq(tt_strerror(-999), "unknown error");
}

/* issue 28: the time helpers stick at the int64 limits, never wrap */
Test(tmath, saturating_add_and_sub)
{
    cr_assert_eq(tt_sat_add(1, 2), 3);
    cr_assert_eq(tt_sat_add(INT64_MAX, 1), INT64_MAX);
    cr_assert_eq(tt_sat_add(INT64_MAX - 5, 10), INT64_MAX);
    cr_assert_eq(tt_sat_add(INT64_MIN, -1), INT64_MIN);
    cr_assert_eq(tt_sat_add(INT64_MIN, INT64_MAX), -1);
    cr_assert_eq(tt_sat_sub(5, 7), -2);
    cr_assert_eq(tt_sat_sub(INT64_MAX, -1), INT64_MAX);
    cr_assert_eq(tt_sat_sub(INT64_MIN, 1), INT64_MIN);
    cr_assert_eq(tt_sat_sub(0, INT64_MIN), INT64_MAX);
    cr_assert_eq(tt_end_ns(10, -5), 10, "a negative dur reads as 0");
    cr_assert_eq(tt_end_ns(INT64_MAX - 1, 9), INT64_MAX);
}

Test(tmath, the_range_any_two_times_can_be_subtracted_in)
{
    int64_t lo = TT_TIME_MIN_NS + 1, hi = TT_TIME_MAX_NS - 1, d = TT_DUR_MAX_NS - 1, r;
    cr_assert(tt_time_ok(lo) && tt_time_ok(hi) && tt_dur_ok(d) && tt_dur_ok(-d));
    cr_assert_not(tt_time_ok(TT_TIME_MIN_NS) || tt_time_ok(TT_TIME_MAX_NS));
    cr_assert_not(tt_dur_ok(TT_DUR_MAX_NS) || tt_dur_ok(-TT_DUR_MAX_NS));
    /* the latest end minus the earliest start, and the reverse, fit */
    cr_assert_not(__builtin_add_overflow(hi, d, &r));
    cr_assert_not(__builtin_sub_overflow(r, lo, &r));
    cr_assert_not(__builtin_sub_overflow(lo, hi + d, &r));
}
