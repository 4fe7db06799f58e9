/*
 * tests/fuzz/fuzz_json.c - fuzz the JSON layer (formats/json.h).
 *
 * Input: byte 0 picks the source read size for the streaming half (0 = no
 * limit, else 1..255 bytes per read); bytes 1.. are the JSON text.
 *
 *  1. the cursor over the whole text: tt_jp_skip, then tt_jp_minify on a
 *     fresh cursor; both must agree on success and on where the value ends.
 *     A minified value must parse again and minify to itself.
 *  2. the streaming window: tt_js_scan_value over a memory source that
 *     returns at most N bytes per read, each scanned value then walked with
 *     tt_jp_skip. The values found (offset, length, text) and the final
 *     status must be the same as with one unlimited read.
 *
 * Built as a libFuzzer target (fuzz_json, -DTT_BUILD_FUZZ=ON with clang) and
 * as a plain corpus replayer (replay_json, any compiler; see replay_main.c).
 */
#include "common/compat.h"

#include "common/arena.h"
#include "common/buf.h"
#include "formats/json.h"
#include "formats/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz_json: check failed: %s: ", #cond);         \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* Cursor over an exact-size heap copy, so that any read past the end is an
 * AddressSanitizer report. */
static void check_cursor(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    tt_jp jp;
    tt_buf out = TT_BUF_INIT;
    int rc_skip, rc_min;
    const char *end_skip, *end_min;
    if (!copy)
        return;
    if (len)
        memcpy(copy, text, len);

    tt_jp_init(&jp, "fuzz", copy, 0, copy, len);
    rc_skip = tt_jp_skip(&jp);
    end_skip = jp.p;
    if (rc_skip == 0)
        (void)tt_jp_finish(&jp);

    tt_jp_init(&jp, "fuzz", copy, 0, copy, len);
    rc_min = tt_jp_minify(&jp, &out);
    end_min = jp.p;
    if (rc_min == 0)
        (void)tt_jp_finish(&jp);

    FUZZ_CHECK((rc_skip == 0) == (rc_min == 0), "skip rc %d, minify rc %d", rc_skip, rc_min);
    if (rc_skip == 0 && rc_min == 0) {
        tt_buf again = TT_BUF_INIT;
        int rc2;
        FUZZ_CHECK(end_skip == end_min, "skip ends at %td, minify at %td",
                   end_skip - copy, end_min - copy);
        FUZZ_CHECK(out.len == strlen(out.buf), "minified output holds a NUL byte");
        /* the minified form is valid JSON and minifies to itself */
        tt_jp_init(&jp, "fuzz-min", out.buf, 0, out.buf, out.len);
        rc2 = tt_jp_minify(&jp, &again);
        FUZZ_CHECK(rc2 == 0, "minified output does not parse (rc %d): %.200s", rc2, out.buf);
        FUZZ_CHECK(tt_jp_finish(&jp) == 0, "minified output has trailing data: %.200s", out.buf);
        FUZZ_CHECK(again.len == out.len && memcmp(again.buf, out.buf, out.len) == 0,
                   "minify is not idempotent: %.200s -> %.200s", out.buf, again.buf);
        tt_buf_release(&again);
    }
    tt_buf_release(&out);
    free(copy);
}

/* Scan every top-level value with reads of at most max_read bytes; record
 * "offset len text" of each value into rec. Returns the final status. */
static int scan_all(const char *text, size_t len, size_t max_read, tt_buf *rec)
{
    tt_source *src;
    tt_jstream js;
    int rc, n = 0;
    rc = tt_source_open_mem(&src, "fuzz", text, len);
    if (rc < 0)
        return rc;
    tt_source_set_max_read(src, max_read);
    if ((rc = tt_js_init(&js, src)) < 0) {
        tt_source_free(src);
        return rc;
    }
    for (;;) {
        const char *start;
        size_t vlen;
        int64_t off;
        tt_jp jp;
        int c = tt_js_peek(&js);
        if (c == -1) {
            rc = 0;
            break;
        }
        if (c < 0) {
            rc = c;
            break;
        }
        off = tt_js_offset(&js);
        rc = tt_js_scan_value(&js, &start, &vlen);
        if (rc < 0)
            break;
        FUZZ_CHECK(start == js.buf + js.pos, "value does not start at the cursor");
        FUZZ_CHECK(vlen > 0 && vlen <= js.end - js.pos, "bad value length %zu", vlen);
        tt_buf_addf(rec, "%lld %zu ", (long long)off, vlen);
        tt_buf_add(rec, start, vlen);
        tt_buf_addch(rec, '\n');
        /* the cursor over the scanned value, as the trace reader uses it */
        tt_jp_init(&jp, "fuzz", js.buf, js.base, start, vlen);
        if (tt_jp_skip(&jp) == 0)
            (void)tt_jp_finish(&jp);
        tt_js_advance(&js, vlen);
        if (++n > 100000)
            break;
    }
    tt_js_release(&js);
    tt_source_free(src);
    return rc;
}

static void check_stream(const char *text, size_t len, size_t max_read)
{
    tt_buf a = TT_BUF_INIT, b = TT_BUF_INIT;
    int rc_a = scan_all(text, len, max_read, &a);
    if (max_read != 0) {
        int rc_b = scan_all(text, len, 0, &b);
        FUZZ_CHECK(rc_a == rc_b, "status %d with %zu-byte reads, %d with one read", rc_a,
                   max_read, rc_b);
        FUZZ_CHECK(a.oom || b.oom || (a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0),
                   "values differ with %zu-byte reads", max_read);
    }
    tt_buf_release(&a);
    tt_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text;
    size_t len, max_read;
    if (size < 1)
        return 0;
    max_read = data[0];
    text = (const char *)data + 1;
    len = size - 1;
    check_cursor(text, len);
    check_stream(text, len, max_read);
    tt_error_clear();
    return 0;
}
