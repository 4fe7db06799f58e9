/*
 * tests/unit/test_json_write.c - the streaming JSON writer (report/json.h):
 * separators and line breaks where the caller asks, escapes, non-finite
 * numbers as null, exact fixed-point numbers, misuse reported, a FILE
 * written in pieces as the text grows, and every output read back by the
 * project's own parser as the document that was written.
 */
#include "common/compat.h"
#include "common/arena.h"
#include "formats/json.h"
#include "report/json.h"
#include "report/out.h"
#include "tracetool/common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void expect(tt_jw *w, tt_buf *b, const char *want)
{
    cr_assert_eq(tt_jw_finish(w), 0);
    cr_assert_str_eq(b->buf, want);
}

Test(json_write, layout_as_asked)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    tt_jw_init(&w, &b, 0);
    tt_jw_obj(&w);
    tt_jw_kint(&w, "count", 3);
    tt_jw_karr(&w, "rows");
    tt_jw_nl(&w, 2);
    tt_jw_str(&w, "a");
    tt_jw_nl(&w, 2);
    tt_jw_obj(&w);
    tt_jw_kbool(&w, "t", 1);
    tt_jw_knull(&w, "n");
    tt_jw_end(&w);
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    tt_jw_nl(&w, 3);
    tt_jw_kobj(&w, "e");
    tt_jw_end(&w);
    tt_jw_karr(&w, "f");
    tt_jw_end(&w);
    tt_jw_end(&w);
    expect(&w, &b, "{\"count\": 3, \"rows\": [\n  \"a\",\n  {\"t\": true, \"n\": null}\n],\n   "
                   "\"e\": {}, \"f\": []}");
    tt_buf_release(&b);
}

Test(json_write, compact)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    tt_jw_init(&w, &b, TT_JW_COMPACT | TT_JW_LINE);
    tt_jw_arr(&w);
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "ph", "X");
    tt_jw_kint(&w, "pid", -7);
    tt_jw_kuint(&w, "u", UINT64_MAX);
    tt_jw_end(&w);
    tt_jw_nl(&w, 0);
    tt_jw_int(&w, INT64_MIN);
    tt_jw_end(&w);
    expect(&w, &b, "[{\"ph\":\"X\",\"pid\":-7,\"u\":18446744073709551615},\n-9223372036854775808]\n");
    tt_buf_release(&b);
}

Test(json_write, strings_escaped)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    tt_jw_init(&w, &b, 0);
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "q\"k", "a\"b\\c\n\t\x01");
    tt_jw_key(&w, "nul");
    tt_jw_strn(&w, "x\0y", 3);
    tt_jw_kstr(&w, "none", NULL);
    tt_jw_end(&w);
    expect(&w, &b, "{\"q\\\"k\": \"a\\\"b\\\\c\\n\\t\\u0001\", \"nul\": \"x\\u0000y\", \"none\": null}");
    tt_buf_release(&b);
}

Test(json_write, numbers)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    tt_jw_init(&w, &b, 0);
    tt_jw_arr(&w);
    tt_jw_num(&w, 1.0 / 3.0, 3);
    tt_jw_num(&w, NAN, 3);
    tt_jw_num(&w, INFINITY, 1);
    tt_jw_num(&w, -INFINITY, -1);
    tt_jw_num(&w, 0.1, -1);
    tt_jw_fixed(&w, 1500, 3);
    tt_jw_fixed(&w, -1, 3);
    tt_jw_fixed(&w, INT64_MIN, 3);
    tt_jw_fixed(&w, 42, 0);
    tt_jw_raw(&w, "{\"a\":1}", (size_t)-1);
    tt_jw_end(&w);
    expect(&w, &b, "[0.333, null, null, null, 0.10000000000000001, 1.500, -0.001, "
                   "-9223372036854775.808, 42, {\"a\":1}]");
    cr_assert_eq(strtod("0.10000000000000001", NULL), 0.1);
    tt_buf_release(&b);
}

Test(json_write, misuse_reported)
{
    static const int cases = 6;
    int i;
    for (i = 0; i < cases; i++) {
        tt_buf b = TT_BUF_INIT;
        tt_jw w;
        tt_jw_init(&w, &b, 0);
        switch (i) {
        case 0: tt_jw_obj(&w); tt_jw_int(&w, 1); tt_jw_end(&w); break;      /* no key */
        case 1: tt_jw_arr(&w); tt_jw_key(&w, "k"); tt_jw_end(&w); break;    /* key in [] */
        case 2: tt_jw_end(&w); break;                                          /* nothing open */
        case 3: tt_jw_obj(&w); break;                                          /* left open */
        case 4: tt_jw_obj(&w); tt_jw_key(&w, "k"); tt_jw_end(&w); break;      /* no value */
        default: {
            int d;
            for (d = 0; d <= TT_JW_MAX_DEPTH; d++)
                tt_jw_arr(&w);
        }
        }
        cr_assert_eq(tt_jw_finish(&w), TT_EINVALID, "case %d", i);
        tt_buf_release(&b);
    }
}

/* a large document through a FILE: written in pieces, read back whole and
 * parsed, each value where it was put */
Test(json_write, file_streamed_and_parsed)
{
    char path[] = "/tmp/tt_jw_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w+");
    tt_jw w;
    long size, flushed_early;
    int i, n = 20000;
    char *text;
    cr_assert_not_null(f);
    tt_jw_init_file(&w, f, 0);
    tt_jw_obj(&w);
    tt_jw_karr(&w, "rows");
    for (i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "op\"%d\n", i);
        tt_jw_nl(&w, 2);
        tt_jw_obj(&w);
        tt_jw_kstr(&w, "name", name);
        tt_jw_kint(&w, "i", i);
        tt_jw_kfixed(&w, "us", (int64_t)i * 1001, 3);
        tt_jw_end(&w);
    }
    flushed_early = ftell(f);
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    tt_jw_end(&w);
    cr_assert_eq(tt_jw_finish(&w), 0);
    cr_assert_gt(flushed_early, 0, "the FILE is written as the text grows");
    cr_assert_eq(w.own.alloc, 0, "the buffer is freed");
    size = ftell(f);
    cr_assert_gt(size, (long)TT_JW_FLUSH_AT * 4);
    text = malloc((size_t)size + 1);
    rewind(f);
    cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    unlink(path);
    {
        tt_jp jp;
        tt_arena a = TT_ARENA_INIT;
        const char *k, *name = NULL;
        size_t kl, sl;
        int rows = 0, rc;
        tt_jp_init(&jp, "t", text, 0, text, (size_t)size);
        cr_assert_eq(tt_jp_object_begin(&jp), 0);
        cr_assert_eq(tt_jp_object_next(&jp, &a, &k, &kl), 1);
        cr_assert(kl == 4 && !memcmp(k, "rows", 4));
        cr_assert_eq(tt_jp_array_begin(&jp), 0);
        while ((rc = tt_jp_array_next(&jp)) == 1) {
            tt_jnum v[2];
            cr_assert_eq(tt_jp_object_begin(&jp), 0);
            cr_assert_eq(tt_jp_object_next(&jp, &a, &k, &kl), 1);
            cr_assert_eq(tt_jp_string(&jp, &a, &name, &sl), 0);
            cr_assert_eq(tt_jp_object_next(&jp, &a, &k, &kl), 1);
            cr_assert_eq(tt_jp_number(&jp, &v[0]), 0);
            cr_assert_eq(tt_jp_object_next(&jp, &a, &k, &kl), 1);
            cr_assert_eq(tt_jp_number(&jp, &v[1]), 0);
            cr_assert_eq(tt_jp_object_next(&jp, &a, &k, &kl), 0);
            cr_assert_eq(v[0].i, rows);
            if (rows == 12345) {
                cr_assert_str_eq(name, "op\"12345\n");
                cr_assert_eq(v[1].len, 9u);
                cr_assert(!memcmp(v[1].text, "12357.345", 9));
            }
            rows++;
        }
        cr_assert_eq(rc, 0);
        cr_assert_eq(rows, n);
        cr_assert_eq(tt_jp_object_next(&jp, &a, &k, &kl), 0);
        cr_assert_eq(tt_jp_finish(&jp), 0);
        tt_arena_release(&a);
    }
    free(text);
}

/* an output file (report/out.h): the writer hands the text on, the file
 * appears whole at close */
Test(json_write, output_file)
{
    char dir[] = "/tmp/tt_jw_out_XXXXXX", path[64], got[64] = { 0 };
    tt_out o;
    tt_jw w;
    FILE *f;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/x.json", dir);
    cr_assert_eq(tt_out_open(&o, path, TT_OUT_GZ_BY_NAME), 0);
    tt_jw_init_out(&w, &o, TT_JW_COMPACT);
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "a", "b");
    tt_jw_end(&w);
    cr_assert_eq(tt_jw_finish(&w), 0);
    cr_assert_eq(tt_out_close(&o, 0), 0);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(got, sizeof(got), f));
    fclose(f);
    cr_assert_str_eq(got, "{\"a\":\"b\"}");
    unlink(path);
    rmdir(dir);
}

/* TT_JW_SCRIPT: nothing in a string can end a <script> or a JS string */
Test(json_write, script_safe)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    tt_jw_init(&w, &b, TT_JW_COMPACT | TT_JW_SCRIPT);
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "</script>", "a&b'c\n\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xa7\"\\");
    tt_jw_end(&w);
    expect(&w, &b, "{\"\\u003c/script\\u003e\":\"a\\u0026b\\u0027c\\u000a\\u2028\\u2029"
                   "\xe2\x80\xa7\\\"\\\\\"}");
    tt_buf_release(&b);
}
