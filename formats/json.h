/*
 * formats/json.h - the streaming JSON layer of the trace readers.
 *
 * Two parts, used together:
 *
 *  - tt_jstream keeps a window of the decompressed input in memory and finds
 *    where the next complete JSON value ends (tt_js_scan_value), refilling and
 *    growing the window as needed. Memory is bounded by the largest single
 *    value scanned (one trace event), never by the file.
 *
 *  - tt_jp is a cursor over one complete value in that window: strict JSON
 *    grammar, with the repairs real Kineto output needs (invalid UTF-8 and raw
 *    control characters inside strings, NaN/Infinity literals, integers beyond
 *    int64), each counted in `repairs`.
 *
 * Errors carry the absolute byte offset in the decompressed stream.
 * Internal to libtracetool.
 */
#ifndef TT_FORMATS_JSON_H
#define TT_FORMATS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/buf.h"
#include "formats/source.h"

/* ---- streaming window ---- */

/*
 * The largest single value the window holds (one event, one ET node, one
 * top-level key's value): 256 MiB. Real events are under a megabyte; a file
 * with a larger one (a 20 GB string in a 94 MB gzip) fails with TT_EINVALID
 * at the value's first byte instead of taking the machine's memory.
 */
#define TT_JS_MAX_VALUE (256 << 20)

typedef struct tt_jstream {
    tt_source *src;
    const char *name; /* for messages */
    char *buf;
    size_t cap;
    size_t pos;      /* next unread byte */
    size_t end;      /* end of valid data */
    int64_t base;    /* absolute offset of buf[0] */
    int eof;         /* source exhausted */
    int src_err;     /* error returned by the source, 0 if none */
    /* incremental scan state for tt_js_scan_value */
    size_t scan_off; /* bytes from pos already scanned */
    int scan_depth;
    int scan_instr;
    int scan_esc;
    int scan_started;
} tt_jstream;

int tt_js_init(tt_jstream *js, tt_source *src);
void tt_js_release(tt_jstream *js);

/* Skip whitespace; return the next byte (0..255) without consuming it, or -1
 * at end of input, or a negative error code < -1 from the source. */
int tt_js_peek(tt_jstream *js);
static inline void tt_js_advance(tt_jstream *js, size_t n)
{
    js->pos += n;
}
/* Read until at least n bytes follow pos, or the input ends. 0 or <0. */
int tt_js_ensure(tt_jstream *js, size_t n);
/* Absolute offset of the next unread byte. */
static inline int64_t tt_js_offset(const tt_jstream *js)
{
    return js->base + (int64_t)js->pos;
}
/*
 * Make sure the complete JSON value starting at the next non-space byte is in
 * the window; on success *start and *len describe it (valid until the next
 * tt_js_* call) and the value is NOT consumed (call tt_js_advance(js, len)).
 * Returns 0, TT_ETRUNCATED (input ended inside the value), or another error.
 */
int tt_js_scan_value(tt_jstream *js, const char **start, size_t *len);

/* ---- cursor over a complete value ---- */

enum tt_jtype {
    TT_JT_NONE = 0,
    TT_JT_OBJECT,
    TT_JT_ARRAY,
    TT_JT_STRING,
    TT_JT_NUMBER,
    TT_JT_TRUE,
    TT_JT_FALSE,
    TT_JT_NULL
};

typedef struct tt_jnum {
    const char *text; /* raw text, not NUL-terminated */
    size_t len;
    int is_int;       /* integer syntax (no '.', no exponent) */
    int fits;         /* is_int and within int64 */
    int nonfinite;    /* NaN / Infinity literal (repaired) */
    int64_t i;        /* value when fits */
} tt_jnum;

typedef struct tt_jp {
    const char *p, *end;
    const char *buf;   /* start of the window, for offsets */
    int64_t base;      /* absolute offset of buf[0] */
    int depth;
    unsigned repairs;  /* strings/numbers repaired so far */
    const char *name;  /* source name for messages */
    unsigned char first[513]; /* per depth: no member read yet */
} tt_jp;

void tt_jp_init(tt_jp *jp, const char *name, const char *buf, int64_t base,
                const char *start, size_t len);
/* Type of the next value (after whitespace), TT_JT_NONE if none/invalid. */
enum tt_jtype tt_jp_peek(tt_jp *jp);
/* Object iteration: tt_jp_object_begin, then tt_jp_object_next until it
 * returns 0 (end) or <0 (error). A key is NOT NUL-terminated: use klen. It
 * points into the window, or into the arena when it had to be unescaped. */
int tt_jp_object_begin(tt_jp *jp);
int tt_jp_object_next(tt_jp *jp, tt_arena *a, const char **key, size_t *klen);
/* Array iteration: 1 = an element follows, 0 = end, <0 error. */
int tt_jp_array_begin(tt_jp *jp);
int tt_jp_array_next(tt_jp *jp);
/* Decode a string value (NUL-terminated copy in the arena, or a pointer into
 * the window when no unescaping or repair is needed and `a` is NULL-safe). */
int tt_jp_string(tt_jp *jp, tt_arena *a, const char **s, size_t *len);
int tt_jp_number(tt_jp *jp, tt_jnum *n);
int tt_jp_literal(tt_jp *jp, enum tt_jtype *t);
/*
 * Fast path for timestamps: a plain decimal number of microseconds with at
 * most 16 integer digits, as integer nanoseconds rounded like
 * tt_us_text_to_ns. Returns 0 and moves past it, or 1 (cursor unchanged) for
 * anything else, which the caller reads with tt_jp_number.
 */
int tt_jp_time_ns(tt_jp *jp, int64_t *ns);
/* Fast path for integers of at most 18 digits: 0 and the value, or 1 with
 * the cursor unchanged for anything else (use tt_jp_number). */
int tt_jp_int_fast(tt_jp *jp, int64_t *v);
int tt_jp_skip(tt_jp *jp);
/* Append the next value in minified form (valid, repaired JSON). */
int tt_jp_minify(tt_jp *jp, tt_buf *out);
/* After the top value: only whitespace may remain. */
int tt_jp_finish(tt_jp *jp);
/* Absolute offset of the cursor. */
static inline int64_t tt_jp_offset(const tt_jp *jp)
{
    return jp->base + (jp->p - jp->buf);
}

/* Convert a decimal number of microseconds (JSON number text, or a string
 * holding one) to integer nanoseconds, exactly when no exponent is used.
 * Returns 0 or TT_EINVALID (not a number / out of range). */
int tt_us_text_to_ns(const char *text, size_t len, int64_t *ns);
/* Parse a whole text as an int64 (optional sign, digits only). */
int tt_parse_i64(const char *text, size_t len, int64_t *out);

#endif
