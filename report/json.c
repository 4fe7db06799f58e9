/*
 * report/json.c - the one streaming JSON writer (report/json.h).
 */
#include "common/compat.h"
#include "report/json.h"
#include "report/out.h"
#include "tracetool/common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

static void init(tt_jw *w, tt_buf *b, unsigned flags)
{
    memset(w, 0, sizeof(*w));
    tt_buf_init(&w->own);
    w->b = b;
    w->flags = flags;
    w->brk = -1;
}

void tt_jw_init(tt_jw *w, tt_buf *b, unsigned flags)
{
    init(w, b, flags);
}

void tt_jw_init_file(tt_jw *w, FILE *f, unsigned flags)
{
    init(w, NULL, flags);
    w->b = &w->own;
    w->f = f;
}

void tt_jw_init_out(tt_jw *w, struct tt_out *o, unsigned flags)
{
    init(w, &o->b, flags);
    w->o = o;
}

static void misuse(tt_jw *w)
{
    if (!w->err)
        w->err = TT_EINVALID;
}

int tt_jw__flush(tt_jw *w, int force)
{
    if (w->b->oom && !w->err)
        w->err = TT_ENOMEM;
    if (w->f) {
        if (!force && w->b->len < TT_JW_FLUSH_AT)
            return w->err;
        if (w->b->len && fwrite(w->b->buf, 1, w->b->len, w->f) != w->b->len && !w->err)
            w->err = TT_EIO;
        tt_buf_reset(w->b);
    } else if (w->o) {
        int rc = tt_out_flush(w->o);
        if (rc && !w->err)
            w->err = rc;
    }
    return w->err;
}

int tt_jw_finish(tt_jw *w)
{
    if (w->depth || w->key)
        misuse(w);
    tt_jw__flush(w, 1);
    if (w->f && fflush(w->f) && !w->err)
        w->err = TT_EIO;
    if (w->f && ferror(w->f) && !w->err)
        w->err = TT_EIO;
#ifndef TT_CAPTURE_BUILD
    if (w->err == TT_EIO && w->f)
        tt_error_set(TT_EIO, "cannot write the output: %s", strerror(errno ? errno : EIO));
    else if (w->err == TT_ENOMEM)
        tt__oom();
#endif
    tt_buf_release(&w->own);
    return w->err;
}

void tt_jw_nl(tt_jw *w, int indent)
{
    w->brk = indent < 0 ? 0 : indent;
}

static void add_break(tt_jw *w)
{
    static const char sp[] = "                                                                ";
    int n = w->brk;
    tt_buf_addch(w->b, '\n');
    while (n > 0) {
        int k = n < (int)sizeof(sp) - 1 ? n : (int)sizeof(sp) - 1;
        tt_buf_add(w->b, sp, (size_t)k);
        n -= k;
    }
    w->brk = -1;
}

/* before a value: the separator (and line break) its place needs; a value
 * in an object must follow a key */
static void pre(tt_jw *w)
{
    int d = w->depth;
    if (w->key) { /* after "key": the value, on the same line */
        w->key = 0;
        w->brk = -1;
        return;
    }
    if (d > 0 && w->kind[d - 1] == '{') {
        misuse(w);
        return;
    }
    if (d > 0 && w->count[d - 1])
        tt_buf_addch(w->b, ',');
    if (w->brk >= 0)
        add_break(w);
    else if (d > 0 && w->count[d - 1] && !(w->flags & TT_JW_COMPACT))
        tt_buf_addch(w->b, ' ');
    if (d > 0)
        w->count[d - 1] = 1;
}

static void open_bracket(tt_jw *w, char c)
{
    pre(w);
    if (w->depth >= TT_JW_MAX_DEPTH) {
        misuse(w);
        return;
    }
    tt_buf_addch(w->b, c);
    w->kind[w->depth] = (unsigned char)c;
    w->count[w->depth] = 0;
    w->depth++;
}

void tt_jw_obj(tt_jw *w)
{
    open_bracket(w, '{');
}

void tt_jw_arr(tt_jw *w)
{
    open_bracket(w, '[');
}

void tt_jw_end(tt_jw *w)
{
    if (w->depth == 0 || w->key) {
        misuse(w);
        return;
    }
    if (w->brk >= 0)
        add_break(w);
    w->depth--;
    tt_buf_addch(w->b, w->kind[w->depth] == '{' ? '}' : ']');
    if (w->depth == 0 && (w->flags & TT_JW_LINE))
        tt_buf_addch(w->b, '\n');
    if (w->f || w->o)
        tt_jw__flush(w, 0);
}

/* a string for an HTML <script>: JSON's escapes, and \u for the characters
 * that could end the script or a JS string */
static void add_script_string(tt_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    tt_buf_addch(b, '"');
    for (; p < end; p++) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            tt_buf_addch(b, '\\');
            tt_buf_addch(b, (char)c);
        } else if (c == '<' || c == '>' || c == '&' || c == '\'' || c < 0x20) {
            char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            tt_buf_add(b, e, 6);
        } else if (c == 0xe2 && end - p >= 3 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            tt_buf_add(b, p[2] == 0xa8 ? "\\u2028" : "\\u2029", 6); /* JS line breaks */
            p += 2;
        } else {
            tt_buf_addch(b, (char)c);
        }
    }
    tt_buf_addch(b, '"');
}

/* n bytes of s that need no escape in JSON (no control character, quote
 * or backslash) */
static int plain(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == '"' || p[i] == '\\')
            return 0;
    return 1;
}

/* s quoted, then tail (tl bytes: ": " after a key), in one copy when s
 * needs no escape: the common case, on the export's and capture's paths */
static void add_string(tt_jw *w, const char *s, size_t n, const char *tail, size_t tl)
{
    tt_buf *b = w->b;
    if (!(w->flags & TT_JW_SCRIPT) && plain(s, n)) {
        if (tt_buf_grow(b, n + 2 + tl) < 0)
            return;
        b->buf[b->len] = '"';
        memcpy(b->buf + b->len + 1, s, n);
        b->buf[b->len + 1 + n] = '"';
        memcpy(b->buf + b->len + 2 + n, tail, tl);
        b->len += n + 2 + tl;
        b->buf[b->len] = '\0';
        return;
    }
    if (w->flags & TT_JW_SCRIPT)
        add_script_string(b, s, n);
    else
        tt_buf_add_json_string(b, s, n);
    tt_buf_add(b, tail, tl);
}

void tt_jw_keyn(tt_jw *w, const char *k, size_t n)
{
    int d = w->depth;
    if (d == 0 || w->kind[d - 1] != '{' || w->key) {
        misuse(w);
        return;
    }
    if (w->count[d - 1])
        tt_buf_addch(w->b, ',');
    if (w->brk >= 0)
        add_break(w);
    else if (w->count[d - 1] && !(w->flags & TT_JW_COMPACT))
        tt_buf_addch(w->b, ' ');
    w->count[d - 1] = 1;
    add_string(w, k, n, ": ", w->flags & TT_JW_COMPACT ? 1 : 2);
    w->key = 1;
}

void tt_jw_key(tt_jw *w, const char *k)
{
    tt_jw_keyn(w, k, strlen(k));
}

void tt_jw_strn(tt_jw *w, const char *s, size_t n)
{
    pre(w);
    add_string(w, s, n, "", 0);
}

void tt_jw_str(tt_jw *w, const char *s)
{
    if (!s)
        tt_jw_null(w);
    else
        tt_jw_strn(w, s, strlen(s));
}

/* the decimal digits of u, ending at end: returns where they begin */
static char *digits(char *end, uint64_t u)
{
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return end;
}

void tt_jw_int(tt_jw *w, int64_t v)
{
    char t[24], *p = digits(t + sizeof(t), v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--p = '-';
    pre(w);
    tt_buf_add(w->b, p, (size_t)(t + sizeof(t) - p));
}

void tt_jw_uint(tt_jw *w, uint64_t v)
{
    char t[24], *p = digits(t + sizeof(t), v);
    pre(w);
    tt_buf_add(w->b, p, (size_t)(t + sizeof(t) - p));
}

void tt_jw_num(tt_jw *w, double v, int prec)
{
    if (!isfinite(v)) {
        tt_jw_null(w);
        return;
    }
    pre(w);
    if (prec < 0)
        tt_buf_addf(w->b, "%.17g", v);
    else
        tt_buf_addf(w->b, "%.*f", prec, v);
}

void tt_jw_fixed(tt_jw *w, int64_t v, int digits_after)
{
    char t[48], *end = t + sizeof(t), *p;
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int i;
    if (digits_after < 0 || digits_after > 18) {
        misuse(w);
        return;
    }
    p = end;
    for (i = 0; i < digits_after; i++) {
        *--p = (char)('0' + a % 10);
        a /= 10;
    }
    if (digits_after)
        *--p = '.';
    p = digits(p, a);
    if (v < 0)
        *--p = '-';
    pre(w);
    tt_buf_add(w->b, p, (size_t)(end - p));
}

void tt_jw_bool(tt_jw *w, int v)
{
    pre(w);
    if (v)
        tt_buf_add(w->b, "true", 4);
    else
        tt_buf_add(w->b, "false", 5);
}

void tt_jw_null(tt_jw *w)
{
    pre(w);
    tt_buf_add(w->b, "null", 4);
}

void tt_jw_raw(tt_jw *w, const char *json, size_t n)
{
    pre(w);
    tt_buf_add(w->b, json, n == (size_t)-1 ? strlen(json) : n);
}
