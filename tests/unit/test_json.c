/*
 * tests/unit/test_json.c - the tt_jp cursor, tt_jp_minify, tt_us_text_to_ns
 * and the streaming scanner tt_js_scan_value over split reads; parsers opened
 * on several threads at once, and the byte classes byte by byte.
 */
#include "common/compat.h"
#include "common/arena.h"
#include "common/buf.h"
#include "formats/json.h"
#include "formats/source.h"

#include <criterion/criterion.h>
#include <pthread.h>

#define BASE 1000 /* absolute offset given to the cursor's window */

static tt_jp jp;
static tt_arena arena;

static void jp_on(const char *s)
{
    tt_jp_init(&jp, "doc.json", s, BASE, s, strlen(s));
}

static void jp_on_len(const char *s, size_t len)
{
    tt_jp_init(&jp, "doc.json", s, BASE, s, len);
}

static void setup(void)
{
    memset(&arena, 0, sizeof(arena));
    tt_error_clear();
}

static void teardown(void)
{
    tt_arena_release(&arena);
}

TestSuite(jp, .init = setup, .fini = teardown);
TestSuite(jp_err, .init = setup, .fini = teardown);
TestSuite(minify, .init = setup, .fini = teardown);
TestSuite(us, .init = setup, .fini = teardown);
TestSuite(scan, .init = setup, .fini = teardown);

static int keyis(const char *k, size_t kl, const char *want)
{
    return kl == strlen(want) && memcmp(k, want, kl) == 0;
}

/* ---- cursor: complete values ---- */

Test(jp, object_members_in_order)
{
    const char *k;
    size_t kl;
    tt_jnum n;
    enum tt_jtype t;
    const char *s;
    size_t sl;
    jp_on(" { \"a\" : 1 , \"bb\":\"x\", \"c\":[true,false,null], \"d\":{} } ");
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_OBJECT);
    cr_assert_eq(tt_jp_object_begin(&jp), 0);

    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 1);
    cr_assert(keyis(k, kl, "a"));
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_NUMBER);
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert(n.is_int && n.fits);
    cr_assert_eq(n.i, 1);

    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 1);
    cr_assert(keyis(k, kl, "bb"));
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_STRING);
    cr_assert_eq(tt_jp_string(&jp, &arena, &s, &sl), 0);
    cr_assert_str_eq(s, "x");
    cr_assert_eq(sl, 1);

    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 1);
    cr_assert(keyis(k, kl, "c"));
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_ARRAY);
    cr_assert_eq(tt_jp_array_begin(&jp), 0);
    cr_assert_eq(tt_jp_array_next(&jp), 1);
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_TRUE);
    cr_assert_eq(tt_jp_literal(&jp, &t), 0);
    cr_assert_eq(t, TT_JT_TRUE);
    cr_assert_eq(tt_jp_array_next(&jp), 1);
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_FALSE);
    cr_assert_eq(tt_jp_literal(&jp, &t), 0);
    cr_assert_eq(t, TT_JT_FALSE);
    cr_assert_eq(tt_jp_array_next(&jp), 1);
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_NULL);
    cr_assert_eq(tt_jp_literal(&jp, &t), 0);
    cr_assert_eq(t, TT_JT_NULL);
    cr_assert_eq(tt_jp_array_next(&jp), 0);

    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 1);
    cr_assert(keyis(k, kl, "d"));
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 0);

    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 0);
    cr_assert_eq(jp.depth, 0);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    cr_assert_eq(jp.repairs, 0);
    cr_assert_eq(tt_jp_offset(&jp), BASE + (int64_t)strlen(jp.buf));
}

Test(jp, empty_containers)
{
    const char *k;
    size_t kl;
    jp_on("[]");
    cr_assert_eq(tt_jp_array_begin(&jp), 0);
    cr_assert_eq(tt_jp_array_next(&jp), 0);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    jp_on("{ }");
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 0);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    cr_assert_eq(jp.repairs, 0);
}

Test(jp, escaped_key_is_decoded)
{
    const char *k;
    size_t kl;
    jp_on("{\"a\\\"b\\u0041\":1}");
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 1);
    cr_assert(keyis(k, kl, "a\"bA"), "key %.*s", (int)kl, k);
    cr_assert_eq(tt_jp_skip(&jp), 0);
    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 0);
}

Test(jp, numbers)
{
    tt_jnum n;
    jp_on("0");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert(n.is_int && n.fits && n.i == 0 && !n.nonfinite);
    jp_on("-0");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert(n.is_int && n.fits && n.i == 0);
    jp_on("-42 ");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert(n.fits);
    cr_assert_eq(n.i, -42);
    cr_assert_eq(n.len, 3);
    jp_on("3.25");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert_eq(n.is_int, 0);
    cr_assert_eq(n.fits, 0);
    cr_assert_eq(n.len, 4);
    cr_assert_eq(memcmp(n.text, "3.25", 4), 0);
    jp_on("1E+5,");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert_eq(n.is_int, 0);
    cr_assert_eq(n.len, 4);
    jp_on("-2.5e-3]");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert_eq(n.len, 7);
    jp_on("9223372036854775807");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert(n.fits);
    cr_assert_eq(n.i, INT64_MAX);
    jp_on("-9223372036854775808");
    cr_assert_eq(tt_jp_number(&jp, &n), 0);
    cr_assert(n.fits);
    cr_assert_eq(n.i, INT64_MIN);
}

Test(jp, integers_beyond_int64)
{
    static const char *const big[] = {
        "9223372036854775808", "-9223372036854775809", "18446744073709551615",
        "18446744073709551616", "123456789012345678901234567890",
        "-99999999999999999999999999"
    };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(big); i++) {
        tt_jnum n;
        char doc[64];
        snprintf(doc, sizeof(doc), "%s}", big[i]);
        jp_on(doc);
        cr_assert_eq(tt_jp_number(&jp, &n), 0, "%s", big[i]);
        cr_assert_eq(n.is_int, 1, "%s", big[i]);
        cr_assert_eq(n.fits, 0, "%s", big[i]);
        cr_assert_eq(n.len, strlen(big[i]), "%s", big[i]);
        cr_assert_eq(memcmp(n.text, big[i], n.len), 0, "%s", big[i]);
        cr_assert_eq(*jp.p, '}');
    }
}

Test(jp, nonfinite_literals_are_repairs)
{
    static const char *const lits[] = { "NaN", "Infinity", "-Infinity", "nan", "inf",
                                        "-inf" };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(lits); i++) {
        tt_jnum n;
        char doc[32];
        snprintf(doc, sizeof(doc), "%s,", lits[i]);
        jp_on(doc);
        cr_assert_eq(tt_jp_peek(&jp), TT_JT_NUMBER, "%s", lits[i]);
        cr_assert_eq(tt_jp_number(&jp, &n), 0, "%s", lits[i]);
        cr_assert_eq(n.nonfinite, 1, "%s", lits[i]);
        cr_assert_eq(n.fits, 0);
        cr_assert_eq(n.len, strlen(lits[i]));
        cr_assert_eq(memcmp(n.text, lits[i], n.len), 0);
        cr_assert_eq(jp.repairs, 1, "%s", lits[i]);
        cr_assert_eq(*jp.p, ',');
    }
    /* not a literal when glued to more letters */
    jp_on("NaNx");
    {
        tt_jnum n;
        cr_assert_eq(tt_jp_number(&jp, &n), TT_EINVALID);
    }
}

/* ---- strings ---- */

static void str_ok(const char *json, const char *want, size_t wantlen, unsigned repairs)
{
    const char *s;
    size_t l;
    jp_on(json);
    cr_assert_eq(tt_jp_peek(&jp), TT_JT_STRING, "%s", json);
    cr_assert_eq(tt_jp_string(&jp, &arena, &s, &l), 0, "%s: %s", json,
                 tt_error_last()->message);
    cr_assert_eq(l, wantlen, "%s: length %zu, want %zu", json, l, wantlen);
    cr_assert_eq(memcmp(s, want, wantlen), 0, "%s", json);
    cr_assert_eq(s[l], '\0', "%s: not NUL-terminated", json);
    cr_assert_eq(jp.repairs, repairs, "%s: %u repairs, want %u", json, jp.repairs,
                 repairs);
    cr_assert_eq(tt_jp_finish(&jp), 0, "%s: cursor not after the string", json);
}
#define STR_OK(json, want, rep) str_ok(json, want, sizeof(want) - 1, rep)

Test(jp, string_plain_and_simple_escapes)
{
    STR_OK("\"\"", "", 0);
    STR_OK("\"hello\"", "hello", 0);
    STR_OK("\"a\\\"b\"", "a\"b", 0);
    STR_OK("\"a\\\\b\"", "a\\b", 0);
    STR_OK("\"\\\\\"", "\\", 0);
    STR_OK("\"\\/\\b\\f\\n\\r\\t\"", "/\b\f\n\r\t", 0);
    STR_OK("\"x\\\\\\\"y\"", "x\\\"y", 0);
}

Test(jp, string_unicode_escapes)
{
    STR_OK("\"\\u0041\"", "A", 0);
    STR_OK("\"\\u00e9\"", "\xc3\xa9", 0);
    STR_OK("\"\\u00E9\"", "\xc3\xa9", 0);
    STR_OK("\"\\u20ac\"", "\xe2\x82\xac", 0);
    STR_OK("\"\\u07ff|\\u0800\"", "\xdf\xbf|\xe0\xa0\x80", 0);
    /* surrogate pairs */
    STR_OK("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 0);
    STR_OK("\"a\\uD834\\uDD1Eb\"", "a\xf0\x9d\x84\x9e" "b", 0);
    STR_OK("\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf", 0);
    /* raw valid UTF-8 passes through */
    STR_OK("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 0);
}

Test(jp, string_repairs_invalid_utf8)
{
    STR_OK("\"a\xff" "b\"", "a\xef\xbf\xbd" "b", 1);
    STR_OK("\"\x80\"", "\xef\xbf\xbd", 1);
    /* overlong encoding of '/' : two bad bytes */
    STR_OK("\"\xc0\xaf\"", "\xef\xbf\xbd\xef\xbf\xbd", 2);
    /* truncated sequence before the quote */
    STR_OK("\"x\xe2\x82\"", "x\xef\xbf\xbd\xef\xbf\xbd", 2);
    /* UTF-8 encoded surrogate (ED A0 80) is invalid */
    STR_OK("\"\xed\xa0\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3);
    /* above U+10FFFF */
    STR_OK("\"\xf4\x90\x80\x80\"",
           "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 4);
}

Test(jp, string_repairs_raw_control_chars)
{
    STR_OK("\"a\tb\"", "a\tb", 1);
    STR_OK("\"line1\nline2\x01\"", "line1\nline2\x01", 2);
}

Test(jp, string_repairs_lone_surrogates)
{
    STR_OK("\"\\ud800x\"", "\xef\xbf\xbdx", 1);
    STR_OK("\"\\udc00\"", "\xef\xbf\xbd", 1);
    /* high surrogate followed by a non-surrogate escape: both kept apart */
    STR_OK("\"\\ud800\\u0041\"", "\xef\xbf\xbd" "A", 1);
    /* high surrogate at the end of the string */
    STR_OK("\"ab\\uD800\"", "ab\xef\xbf\xbd", 1);
    /* two high surrogates in a row */
    STR_OK("\"\\ud800\\ud800\\udc00\"", "\xef\xbf\xbd\xf0\x90\x80\x80", 1);
    /* \u0000 would cut C strings */
    STR_OK("\"a\\u0000b\"", "a\xef\xbf\xbd" "b", 1);
}

Test(jp, string_invalid_escapes_kept)
{
    STR_OK("\"C:\\Users\\me\"", "C:\\Users\\me", 2);
    STR_OK("\"\\q\"", "\\q", 1);
    STR_OK("\"\\u12\"", "\\u12", 1);
    STR_OK("\"\\uZZZZ\"", "\\uZZZZ", 1);
    STR_OK("\"\\x41\"", "\\x41", 1);
}

/* ---- minify ---- */

static void minify_ok(const char *json, const char *want, unsigned repairs)
{
    tt_buf b = TT_BUF_INIT;
    int rc;
    jp_on(json);
    rc = tt_jp_minify(&jp, &b);
    cr_assert_eq(rc, 0, "%s: %s", json, tt_error_last()->message);
    cr_assert_str_eq(b.buf, want, "%s", json);
    cr_assert_eq(b.len, strlen(want));
    cr_assert_eq(jp.repairs, repairs, "%s: %u repairs", json, jp.repairs);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    tt_buf_release(&b);
}

Test(minify, whitespace_removed_text_kept)
{
    minify_ok(" { \"a\" : [ 1 , 2.50 , -3e2 ] ,\n\t\"b\" : { } , \"c\" : null , \"d\" : [ ] } ",
              "{\"a\":[1,2.50,-3e2],\"b\":{},\"c\":null,\"d\":[]}", 0);
    minify_ok("[true,false,null,\"x y\"]", "[true,false,null,\"x y\"]", 0);
    minify_ok("\"s\"", "\"s\"", 0);
    minify_ok("12345678901234567890123", "12345678901234567890123", 0);
}

Test(minify, strings_reescaped)
{
    minify_ok("[\"x\\u0041\", \"a\\\"b\", \"c\\\\d\", \"\\/\"]",
              "[\"xA\",\"a\\\"b\",\"c\\\\d\",\"/\"]", 0);
    /* escaped key */
    minify_ok("{\"k\\n\" : 1}", "{\"k\\n\":1}", 0);
    minify_ok("[\"\\ud83d\\ude00\"]", "[\"\xf0\x9f\x98\x80\"]", 0);
}

Test(minify, repairs_give_valid_json)
{
    /* raw tab -> \t ; bad byte -> U+FFFD ; invalid escape -> \\ */
    minify_ok("[\"a\tb\", \"\xff\", \"C:\\Temp\"]",
              "[\"a\\tb\",\"\xef\xbf\xbd\",\"C:\\\\Temp\"]", 3);
    /* NaN / Infinity become strings */
    minify_ok("[NaN, -Infinity, 1]", "[\"NaN\",\"-Infinity\",1]", 2);
    /* trailing commas dropped */
    minify_ok("{\"a\":[1,2,],}", "{\"a\":[1,2]}", 2);
}

Test(minify, appends_to_buffer)
{
    tt_buf b = TT_BUF_INIT;
    tt_buf_addstr(&b, "X=");
    jp_on("[ 1 ]");
    cr_assert_eq(tt_jp_minify(&jp, &b), 0);
    cr_assert_str_eq(b.buf, "X=[1]");
    tt_buf_release(&b);
}

/* ---- errors and their absolute offsets ---- */

static void skip_err(const char *json, int64_t rel_off)
{
    int rc;
    tt_error_clear();
    jp_on(json);
    rc = tt_jp_skip(&jp);
    if (rc == 0)
        rc = tt_jp_finish(&jp);
    cr_assert_eq(rc, TT_EINVALID, "%s: rc %d", json, rc);
    cr_assert_eq(tt_error_last()->code, TT_EINVALID, "%s", json);
    cr_assert_eq(tt_error_last()->offset, BASE + rel_off,
                 "%s: offset %lld, want %lld (%s)", json,
                 (long long)tt_error_last()->offset, (long long)(BASE + rel_off),
                 tt_error_last()->message);
    cr_assert_str_eq(tt_error_last()->source, "doc.json");
}

Test(jp_err, missing_value)
{
    skip_err("{\"a\":}", 5);
    skip_err("{\"a\": ,\"b\":1}", 6);
    skip_err("[1,,2]", 3);
    skip_err("[,1]", 1);
}

Test(jp_err, trailing_comma_is_repair)
{
    tt_buf b = TT_BUF_INIT;
    jp_on("[1,]");
    cr_assert_eq(tt_jp_skip(&jp), 0);
    cr_assert_eq(jp.repairs, 1);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    jp_on("[1 , ]");
    cr_assert_eq(tt_jp_minify(&jp, &b), 0);
    cr_assert_str_eq(b.buf, "[1]");
    cr_assert_eq(jp.repairs, 1);
    tt_buf_release(&b);
}

Test(jp_err, missing_comma)
{
    skip_err("[1 2]", 3);
    skip_err("{\"a\":1 \"b\":2}", 7);
    skip_err("[\"a\" \"b\"]", 5);
}

Test(jp_err, leading_zero)
{
    tt_jnum n;
    jp_on("01");
    cr_assert_eq(tt_jp_number(&jp, &n), TT_EINVALID);
    cr_assert_eq(tt_error_last()->offset, BASE + 1);
    skip_err("[01]", 2);
    skip_err("[-00]", 3);
    /* a lone zero is fine */
    jp_on("[0,-0,0.5]");
    cr_assert_eq(tt_jp_skip(&jp), 0);
}

Test(jp_err, bad_numbers)
{
    skip_err("[1.]", 3);
    skip_err("[1e]", 3);
    skip_err("[1x]", 2);
    skip_err("[-]", 1);
    skip_err("[.5]", 1);
    skip_err("[+1]", 1);
}

Test(jp_err, other_syntax)
{
    skip_err("{\"a\" 1}", 5);
    skip_err("{1:2}", 1);
    skip_err("[tru]", 1);
    skip_err("[1,2", 4);   /* end of the value */
    skip_err("1 2", 2);    /* data after the value */
    skip_err("[\"abc]", 6); /* unterminated string */
    skip_err("", 0);
}

static char *nested(int depth, char open, char close)
{
    char *s = malloc((size_t)depth * 2 + 1);
    int i;
    for (i = 0; i < depth; i++) {
        s[i] = open;
        s[depth * 2 - 1 - i] = close;
    }
    s[depth * 2] = '\0';
    return s;
}

Test(jp_err, nesting_limit)
{
    char *ok = nested(512, '[', ']');
    char *bad = nested(513, '[', ']');
    jp_on(ok);
    cr_assert_eq(tt_jp_skip(&jp), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    skip_err(bad, 512);
    cr_assert(strstr(tt_error_last()->message, "nesting") != NULL);
    free(ok);
    free(bad);
    /* objects count too */
    {
        tt_buf b = TT_BUF_INIT;
        int i;
        for (i = 0; i < 600; i++)
            tt_buf_addstr(&b, "{\"k\":");
        tt_buf_addstr(&b, "1");
        for (i = 0; i < 600; i++)
            tt_buf_addch(&b, '}');
        skip_err(b.buf, 512 * 5);
        tt_buf_release(&b);
    }
}

Test(jp_err, offsets_follow_base)
{
    /* the cursor may start in the middle of its window */
    const char *win = "xxxxx[1 2]";
    int rc;
    tt_jp_init(&jp, "w", win, 500, win + 5, 5);
    rc = tt_jp_skip(&jp);
    cr_assert_eq(rc, TT_EINVALID);
    cr_assert_eq(tt_error_last()->offset, 500 + 8);
}

Test(jp_err, value_bounded_by_len)
{
    /* the cursor must not read past len even if the bytes continue */
    const char *s = "[1,2]";
    jp_on_len(s, 4);
    cr_assert_eq(tt_jp_skip(&jp), TT_EINVALID);
    cr_assert_eq(tt_error_last()->offset, BASE + 4);
}

/* ---- tt_us_text_to_ns ---- */

static void us_ok(const char *text, int64_t want)
{
    int64_t ns = -12345;
    int rc = tt_us_text_to_ns(text, strlen(text), &ns);
    cr_assert_eq(rc, 0, "'%s': rc %d", text, rc);
    cr_assert_eq(ns, want, "'%s' -> %lld, want %lld", text, (long long)ns,
                 (long long)want);
}

static void us_bad(const char *text)
{
    int64_t ns = 0;
    int rc = tt_us_text_to_ns(text, strlen(text), &ns);
    cr_expect_eq(rc, TT_EINVALID, "'%s' accepted as %lld", text, (long long)ns);
}

Test(us, exact_conversions)
{
    us_ok("2413669096100.149", 2413669096100149LL);
    us_ok("1.5", 1500);
    us_ok("7", 7000);
    us_ok("0", 0);
    us_ok("0.0005", 1);
    us_ok("0.0004", 0);
    us_ok("0.00049999", 0);
    us_ok("0.9995", 1000);
    us_ok("-3.25", -3250);
    us_ok("-0.0005", -1);
    us_ok("1e3", 1000000);
    us_ok("1.5E2", 150000);
    us_ok("+5", 5000);
    us_ok(" 7 ", 7000);
    us_ok("1696212123456789.123", 1696212123456789123LL);
    us_ok("0.001", 1);
    us_ok("123.456789", 123457);
}

Test(us, text_not_nul_terminated)
{
    int64_t ns = 0;
    cr_assert_eq(tt_us_text_to_ns("12.5xyz", 4, &ns), 0);
    cr_assert_eq(ns, 12500);
    cr_assert_eq(tt_us_text_to_ns("1e3,", 3, &ns), 0);
    cr_assert_eq(ns, 1000000);
}

Test(us, garbage_is_error)
{
    us_bad("");
    us_bad("abc");
    us_bad("-");
    us_bad(".");
    us_bad("1.2.3");
    us_bad("12a");
    us_bad("1 2");
    us_bad("0x10");
    us_bad("NaN");
    us_bad("99999999999999999999999");
}

Test(us, garbage_after_exponent_is_error)
{
    /* the exponent path hands the text to strtod without checking that
     * strtod consumed all of it */
    us_bad("1e3x");
    us_bad("1e");
    us_bad("2e5e5");
}

/* ---- tt_jp_time_ns: the fast path for ts/dur ---- */

/* a fast path (tt_jp_time_ns, tt_jp_int_fast): takes text as want, moving
 * the cursor by consumed bytes; or declines (1) without touching anything */
typedef int (*fast_fn)(tt_jp *jp, int64_t *v);

static void fast_ok(fast_fn fn, const char *text, int64_t want, size_t consumed)
{
    tt_jp c;
    int64_t v = -42;
    tt_jp_init(&c, "t", text, 0, text, strlen(text));
    cr_expect_eq(fn(&c, &v), 0, "'%s' not taken", text);
    cr_expect_eq(v, want, "'%s' -> %lld, want %lld", text, (long long)v, (long long)want);
    cr_expect_eq((size_t)(c.p - text), consumed, "'%s': stopped at %zu", text,
                 (size_t)(c.p - text));
}

static void fast_no(fast_fn fn, const char *text)
{
    tt_jp c;
    int64_t v = -42;
    tt_jp_init(&c, "t", text, 0, text, strlen(text));
    cr_expect_eq(fn(&c, &v), 1, "'%s' taken as %lld", text, (long long)v);
    cr_expect_eq(c.p, text, "'%s': cursor moved", text);
    cr_expect_eq(v, -42);
}

#define time_fast(...) fast_ok(tt_jp_time_ns, __VA_ARGS__)
#define time_slow(text) fast_no(tt_jp_time_ns, text)
#define int_fast(...) fast_ok(tt_jp_int_fast, __VA_ARGS__)
#define int_slow(text) fast_no(tt_jp_int_fast, text)

Test(us, time_fast_path)
{
    /* the same values as tt_us_text_to_ns gives (see exact_conversions) */
    time_fast("2413669096100.149", 2413669096100149LL, 17);
    time_fast("1669783687389324.0,", 1669783687389324000LL, 18);
    time_fast("1696212123456789.123}", 1696212123456789123LL, 20);
    time_fast("9223372036854774", 9223372036854774000LL, 16); /* largest accepted */
    time_fast("1.5", 1500, 3);
    time_fast("7", 7000, 1);
    time_fast("0", 0, 1);
    time_fast("0.0005", 1, 6);
    time_fast("0.0004", 0, 6);
    time_fast("0.00049999", 0, 10);
    time_fast("0.9995", 1000, 6);
    time_fast("-3.25", -3250, 5);
    time_fast("-0.0005 ", -1, 7);
    time_fast("123.456789]", 123457, 10);
    time_fast("  12 ,", 12000, 4); /* leading whitespace skipped */
    /* everything else is left to tt_jp_number + tt_us_text_to_ns */
    time_slow("1e3");
    time_slow("1.5E2");
    time_slow("9223372036854775"); /* ns would pass INT64_MAX */
    time_slow("12345678901234567");
    time_slow("01");
    time_slow("-");
    time_slow("1.");
    time_slow(".5");
    time_slow("12a");
    time_slow("NaN");
    time_slow("\"12\"");
}

Test(jp, int_fast_path)
{
    int_fast("0", 0, 1);
    int_fast("-0}", 0, 2);
    int_fast("73689,", 73689, 5);
    int_fast(" -17]", -17, 4);
    int_fast("999999999999999999", 999999999999999999LL, 18);
    int_fast("-999999999999999999 ", -999999999999999999LL, 19);
    /* left to tt_jp_number: 19+ digits, fractions, exponents, bad forms */
    int_slow("1000000000000000000");
    int_slow("18446744073709551616");
    int_slow("1.5");
    int_slow("1e3");
    int_slow("01");
    int_slow("-");
    int_slow("12a");
    int_slow("\"7\"");
    int_slow("NaN");
}

/* ---- tt_parse_i64 ---- */

Test(us, parse_i64)
{
    int64_t v = 0;
    cr_assert_eq(tt_parse_i64("25738", 5, &v), 0);
    cr_assert_eq(v, 25738);
    cr_assert_eq(tt_parse_i64("-9223372036854775808", 20, &v), 0);
    cr_assert_eq(v, INT64_MIN);
    cr_assert_eq(tt_parse_i64("9223372036854775808", 19, &v), TT_EINVALID);
    cr_assert_eq(tt_parse_i64("stream 7", 8, &v), TT_EINVALID);
    cr_assert_eq(tt_parse_i64("", 0, &v), TT_EINVALID);
    cr_assert_eq(tt_parse_i64("-", 1, &v), TT_EINVALID);
    cr_assert_eq(tt_parse_i64("12 ", 3, &v), TT_EINVALID);
}

/* ---- streaming scanner ---- */

/* Scan every top-level value of doc; record "offset:text\n" for each into out.
 * Returns the final rc (0 when the input ended cleanly between values). */
static int scan_doc(const char *doc, size_t len, size_t max_read, tt_buf *out)
{
    tt_source *src;
    tt_jstream js;
    int rc, c;
    cr_assert_eq(tt_source_open_mem(&src, "mem.json", doc, len), 0);
    tt_source_set_max_read(src, max_read);
    cr_assert_eq(tt_js_init(&js, src), 0);
    for (;;) {
        const char *start;
        size_t vlen;
        int64_t off;
        c = tt_js_peek(&js);
        if (c == -1) {
            rc = 0;
            break;
        }
        off = tt_js_offset(&js);
        rc = tt_js_scan_value(&js, &start, &vlen);
        if (rc < 0)
            break;
        cr_assert_eq(start, js.buf + js.pos, "value must start at the cursor");
        tt_buf_addf(out, "%lld:", (long long)off);
        tt_buf_add(out, start, vlen);
        tt_buf_addch(out, '\n');
        tt_js_advance(&js, vlen);
    }
    tt_js_release(&js);
    tt_source_free(src);
    return rc;
}

static const char scan_doc1[] =
    " {\"a\":\"x\\\"}y\",\"b\":[1,{\"c\":\"\\\\\"}],\"d\\\\\":\"\\\\\\\"\"}\n"
    "[\"\\\\\\\\\", \"]\", \"[{\", {\"k\":[[],{}]}]  "
    "\"str\\\"ing\\\\\" 12345 true null {} [] -1.5e3 "
    "{\"e\":\"\\u00e9\\\"\\\\\\/\",\"n\":{\"m\":{\"o\":[\"}\",\"]\",\"\\\"]\"]}}}\n";

static const char scan_expect1[] =
    "1:{\"a\":\"x\\\"}y\",\"b\":[1,{\"c\":\"\\\\\"}],\"d\\\\\":\"\\\\\\\"\"}\n"
    "47:[\"\\\\\\\\\", \"]\", \"[{\", {\"k\":[[],{}]}]\n"
    "83:\"str\\\"ing\\\\\"\n"
    "96:12345\n"
    "102:true\n"
    "107:null\n"
    "112:{}\n"
    "115:[]\n"
    "118:-1.5e3\n"
    "125:{\"e\":\"\\u00e9\\\"\\\\\\/\",\"n\":{\"m\":{\"o\":[\"}\",\"]\",\"\\\"]\"]}}}\n";

Test(scan, values_and_offsets)
{
    tt_buf out = TT_BUF_INIT;
    int rc = scan_doc(scan_doc1, sizeof(scan_doc1) - 1, 0, &out);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_str_eq(out.buf, scan_expect1);
    tt_buf_release(&out);
}

Test(scan, identical_for_every_read_size)
{
    size_t mr;
    for (mr = 1; mr <= 7; mr++) {
        tt_buf out = TT_BUF_INIT;
        int rc = scan_doc(scan_doc1, sizeof(scan_doc1) - 1, mr, &out);
        cr_assert_eq(rc, 0, "max_read %zu: %s", mr, tt_error_last()->message);
        cr_assert_str_eq(out.buf, scan_expect1, "max_read %zu", mr);
        tt_buf_release(&out);
    }
}

Test(scan, escapes_at_every_chunk_edge)
{
    /* strings made of runs of backslashes and escaped quotes: with every
     * read size and every leading pad, each split point is exercised */
    static const char body[] =
        "{\"k\":\"\\\\\\\\\\\"\\\\\\\"\\\"\\\\\",\"l\":[\"\\\"\",\"\\\\\"],\"m\":\"\\\\\"}";
    size_t pad, mr;
    for (pad = 0; pad < 8; pad++) {
        char doc[256];
        char want[256];
        memset(doc, ' ', pad);
        memcpy(doc + pad, body, sizeof(body) - 1);
        doc[pad + sizeof(body) - 1] = ' ';
        doc[pad + sizeof(body)] = '\0';
        snprintf(want, sizeof(want), "%zu:%s\n", pad, body);
        for (mr = 0; mr <= 7; mr++) {
            tt_buf out = TT_BUF_INIT;
            int rc = scan_doc(doc, strlen(doc), mr, &out);
            cr_assert_eq(rc, 0, "pad %zu max_read %zu", pad, mr);
            cr_assert_str_eq(out.buf, want, "pad %zu max_read %zu", pad, mr);
            tt_buf_release(&out);
        }
    }
}

Test(scan, scanned_value_parses)
{
    /* what the scanner returns is exactly one complete value for the cursor */
    tt_source *src;
    tt_jstream js;
    const char *start;
    size_t len;
    const char *k;
    size_t kl;
    const char *s;
    size_t sl;
    static const char doc[] = "  {\"a\\\"\":\"b\\\\\"}  ";
    cr_assert_eq(tt_source_open_mem(&src, "m", doc, sizeof(doc) - 1), 0);
    tt_source_set_max_read(src, 1);
    cr_assert_eq(tt_js_init(&js, src), 0);
    cr_assert_eq(tt_js_scan_value(&js, &start, &len), 0);
    cr_assert_eq(len, sizeof(doc) - 1 - 4);
    tt_jp_init(&jp, "m", js.buf, js.base, start, len);
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 1);
    cr_assert(keyis(k, kl, "a\""));
    cr_assert_eq(tt_jp_string(&jp, &arena, &s, &sl), 0);
    cr_assert_str_eq(s, "b\\");
    cr_assert_eq(tt_jp_object_next(&jp, &arena, &k, &kl), 0);
    cr_assert_eq(tt_jp_finish(&jp), 0);
    cr_assert_eq(tt_jp_offset(&jp), 2 + (int64_t)len);
    tt_js_advance(&js, len);
    cr_assert_eq(tt_js_peek(&js), -1);
    tt_js_release(&js);
    tt_source_free(src);
}

Test(scan, truncated_input)
{
    static const char *const docs[] = {
        "{\"a\":[1,2", "{\"a\":\"abc", "{\"a\":\"abc\\", "[[[]]", "\"abc",
        "\"abc\\\"", "{\"a\":\"}\"", "[\"]\""
    };
    size_t i, mr;
    for (i = 0; i < TT_ARRAY_SIZE(docs); i++) {
        for (mr = 0; mr <= 3; mr++) {
            tt_buf out = TT_BUF_INIT;
            int rc;
            tt_error_clear();
            rc = scan_doc(docs[i], strlen(docs[i]), mr, &out);
            cr_assert_eq(rc, TT_ETRUNCATED, "'%s' max_read %zu: rc %d", docs[i], mr, rc);
            cr_assert_eq(out.len, 0, "'%s': a value was returned", docs[i]);
            cr_assert_eq(tt_error_last()->code, TT_ETRUNCATED);
            cr_assert_eq(tt_error_last()->offset, (int64_t)strlen(docs[i]),
                         "'%s' max_read %zu: offset %lld", docs[i], mr,
                         (long long)tt_error_last()->offset);
            tt_buf_release(&out);
        }
    }
}

Test(scan, every_prefix_is_truncated)
{
    size_t len = sizeof(scan_doc1) - 1, cut, mr;
    /* the first value ends at byte 46 (exclusive): any cut before that is
     * truncated */
    for (cut = 2; cut < 46; cut++) {
        for (mr = 0; mr <= 3; mr++) {
            tt_buf out = TT_BUF_INIT;
            int rc = scan_doc(scan_doc1, cut, mr, &out);
            cr_assert_eq(rc, TT_ETRUNCATED, "cut %zu max_read %zu", cut, mr);
            cr_assert_eq(out.len, 0, "cut %zu", cut);
            tt_buf_release(&out);
        }
    }
    /* cut right after the second value: two values, clean end */
    {
        tt_buf out = TT_BUF_INIT;
        const char *second_end = strstr(scan_doc1, "}]}]") + 4;
        size_t at = (size_t)(second_end - scan_doc1);
        int rc = scan_doc(scan_doc1, at + 1, 1, &out);
        cr_assert_eq(rc, 0);
        cr_assert_eq(strncmp(out.buf, scan_expect1, out.len), 0);
        cr_assert_eq(out.buf[out.len - 2], ']');
        tt_buf_release(&out);
    }
    (void)len;
}

Test(scan, value_larger_than_initial_window)
{
    /* a 3 MiB string inside an object forces the window to grow */
    size_t n = 3u << 20, i, mr;
    size_t total = n + 64;
    char *doc = malloc(total);
    size_t len;
    cr_assert_not_null(doc);
    len = (size_t)sprintf(doc, "  [0] {\"big\":\"");
    for (i = 0; i < n; i++)
        doc[len + i] = (i % 1000 == 999) ? '\\' : (i % 1000 == 0 && i) ? '"' : 'a';
    /* '\\' followed by '"' is an escaped quote: every 1000 bytes */
    len += n;
    len += (size_t)sprintf(doc + len, "\"} [1]");
    for (mr = 0; mr <= 1; mr++) {
        tt_source *src;
        tt_jstream js;
        const char *start;
        size_t vlen;
        cr_assert_eq(tt_source_open_mem(&src, "big", doc, len), 0);
        tt_source_set_max_read(src, mr ? 65521 : 0);
        cr_assert_eq(tt_js_init(&js, src), 0);
        cr_assert_eq(tt_js_scan_value(&js, &start, &vlen), 0);
        cr_assert_eq(vlen, 3);
        tt_js_advance(&js, vlen);
        cr_assert_eq(tt_js_scan_value(&js, &start, &vlen), 0);
        cr_assert_eq(tt_js_offset(&js), 6);
        cr_assert_eq(vlen, n + 10, "max_read %zu: %zu", mr, vlen);
        cr_assert_eq(memcmp(start, "{\"big\":\"", 8), 0);
        cr_assert_eq(memcmp(start + vlen - 2, "\"}", 2), 0);
        tt_js_advance(&js, vlen);
        cr_assert_eq(tt_js_scan_value(&js, &start, &vlen), 0);
        cr_assert_eq(vlen, 3);
        cr_assert_eq(memcmp(start, "[1]", 3), 0);
        cr_assert_eq(tt_js_offset(&js), (int64_t)len - 3);
        tt_js_advance(&js, vlen);
        cr_assert_eq(tt_js_peek(&js), -1);
        tt_js_release(&js);
        tt_source_free(src);
    }
    free(doc);
}

Test(scan, empty_input_source)
{
    tt_source *src = NULL;
    int rc = tt_source_open_mem(&src, "e", "", 0);
    cr_assert_eq(rc, TT_EEMPTY);
    cr_assert_null(src);
}

Test(scan, whitespace_only_peeks_end)
{
    tt_source *src;
    tt_jstream js;
    const char *start;
    size_t len;
    cr_assert_eq(tt_source_open_mem(&src, "w", " \n\t ", 4), 0);
    tt_source_set_max_read(src, 1);
    cr_assert_eq(tt_js_init(&js, src), 0);
    cr_assert_eq(tt_js_peek(&js), -1);
    cr_assert_eq(tt_js_scan_value(&js, &start, &len), TT_ETRUNCATED);
    tt_js_release(&js);
    tt_source_free(src);
}

/* ---- threads (issue 24) ---- */

/* Several threads open parsers at the same moment from a cold start (each
 * Criterion test runs in a fresh process, so nothing was parsed before) and
 * parse the same document, read in small pieces to run the scanner's byte
 * loops. The byte-class tables are constant, so this is race-free; the
 * ThreadSanitizer build of tests/tsan/json_threads.c (scripts/test.sh)
 * checks the same under the race detector. */
#define JT_THREADS 8
#define JT_ROUNDS 40

static const char jt_doc[] =
    " [ {\"name\": \"aten::mm\", \"ph\" : \"X\", \"ts\": 1.5, \"dur\": 20,\n"
    "    \"args\": {\"External id\": 7, \"a\\\"b\": [true, false, null]}},\n"
    "   {\"name\": \"k\\u00e9rnel \\t\", \"ts\": -3e2, \"cat\": \"kernel\"} ] 42 ";
static const char jt_want[] =
    "[{\"name\":\"aten::mm\",\"ph\":\"X\",\"ts\":1.5,\"dur\":20,"
    "\"args\":{\"External id\":7,\"a\\\"b\":[true,false,null]}},"
    "{\"name\":\"k\xc3\xa9rnel \\t\",\"ts\":-3e2,\"cat\":\"kernel\"}]42";
static pthread_barrier_t jt_start;

/* 0, or the line of the first thing that differed (no cr_assert off the
 * main thread) */
static int jt_parse(size_t max_read)
{
    tt_source *src;
    tt_jstream js;
    tt_buf out = {0};
    int bad = 0, i;
    if (tt_source_open_mem(&src, "doc.json", jt_doc, sizeof(jt_doc) - 1))
        return __LINE__;
    tt_source_set_max_read(src, max_read);
    if (tt_js_init(&js, src))
        bad = __LINE__;
    for (i = 0; i < 2 && !bad; i++) {
        const char *v;
        size_t len;
        tt_jp cur;
        if (tt_js_scan_value(&js, &v, &len)) {
            bad = __LINE__;
            break;
        }
        tt_jp_init(&cur, "doc.json", js.buf, js.base, v, len);
        if (tt_jp_minify(&cur, &out) || tt_jp_finish(&cur))
            bad = __LINE__;
        tt_js_advance(&js, len);
    }
    if (!bad && tt_js_peek(&js) != -1)
        bad = __LINE__;
    if (!bad && (out.len != sizeof(jt_want) - 1 || memcmp(out.buf, jt_want, out.len)))
        bad = __LINE__;
    tt_buf_release(&out);
    tt_js_release(&js);
    tt_source_free(src);
    return bad;
}

static void *jt_worker(void *arg)
{
    int *bad = arg, r;
    pthread_barrier_wait(&jt_start);
    for (r = 0; r < JT_ROUNDS && !*bad; r++)
        *bad = jt_parse(r % 2 ? 7 : 0);
    return NULL;
}

Test(scan, parsers_on_threads_from_cold_start)
{
    pthread_t t[JT_THREADS];
    int bad[JT_THREADS] = {0}, i;
    cr_assert_eq(pthread_barrier_init(&jt_start, NULL, JT_THREADS), 0);
    for (i = 0; i < JT_THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, jt_worker, &bad[i]), 0);
    for (i = 0; i < JT_THREADS; i++)
        cr_assert_eq(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&jt_start);
    for (i = 0; i < JT_THREADS; i++)
        cr_expect_eq(bad[i], 0, "thread %d: differs at test_json.c:%d", i, bad[i]);
    /* and the main thread, afterwards, reads the same */
    cr_assert_eq(jt_parse(1), 0);
}

/* The byte classes, byte by byte: a scalar ends exactly at the JSON
 * delimiters, and a string byte is copied as it is exactly when it is
 * printable ASCII other than '"' and '\\'. */
Test(scan, byte_classes)
{
    int c;
    for (c = 0; c < 256; c++) {
        char doc[8];
        tt_source *src;
        tt_jstream js;
        const char *v;
        size_t len;
        int delim = strchr(" \t\r\n,]}:{[\"", c) != NULL && c != 0;
        doc[0] = '1';
        doc[1] = '2';
        doc[2] = (char)c;
        doc[3] = 'x';
        doc[4] = ' '; /* a scalar at the end of the input is a truncated one */
        cr_assert_eq(tt_source_open_mem(&src, "c", doc, 5), 0);
        cr_assert_eq(tt_js_init(&js, src), 0);
        cr_assert_eq(tt_js_scan_value(&js, &v, &len), 0, "byte 0x%02x: %s", c,
                     tt_error_last()->message);
        cr_expect_eq(len, delim ? 2u : 4u, "byte 0x%02x: scalar of %zu bytes", c, len);
        tt_js_release(&js);
        tt_source_free(src);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            tt_buf out = {0};
            char s[4] = {'"', (char)c, '"', 0};
            tt_jp_init(&jp, "c", s, 0, s, 3);
            cr_assert_eq(tt_jp_minify(&jp, &out), 0, "byte 0x%02x", c);
            cr_expect(out.len == 3 && memcmp(out.buf, s, 3) == 0, "byte 0x%02x", c);
            cr_expect_eq(jp.repairs, 0u, "byte 0x%02x", c);
            tt_buf_release(&out);
        }
    }
}
