/*
 * common/buf.c - tt_buf, the growable NUL-terminated byte buffer.
 */
#include "common/compat.h"
#include "common/buf.h"

#include <stdarg.h>

char tt_buf__empty[1];

void tt_buf_init(tt_buf *b)
{
    b->buf = tt_buf__empty;
    b->len = 0;
    b->alloc = 0;
    b->oom = 0;
}

void tt_buf_release(tt_buf *b)
{
    if (b->alloc)
        free(b->buf);
    tt_buf_init(b);
}

void tt_buf_reset(tt_buf *b)
{
    b->len = 0;
    if (b->alloc)
        b->buf[0] = '\0';
    b->oom = 0;
}

int tt_buf_grow(tt_buf *b, size_t extra)
{
    size_t need, n;
    char *p;
    if (b->oom)
        return TT_ENOMEM;
    if (tt_st_add(&need, b->len, extra) || tt_st_add(&need, need, 1))
        goto oom;
    if (need <= b->alloc)
        return 0;
    n = b->alloc ? b->alloc : 64;
    while (n < need) {
        if (tt_st_mult(&n, n, 2))
            goto oom;
    }
    p = realloc(b->alloc ? b->buf : NULL, n);
    if (!p)
        goto oom;
    if (!b->alloc)
        p[0] = '\0';
    b->buf = p;
    b->alloc = n;
    return 0;
oom:
    b->oom = 1;
    return TT_ENOMEM;
}

int tt_buf_add(tt_buf *b, const void *data, size_t len)
{
    if (tt_buf_grow(b, len))
        return TT_ENOMEM;
    if (len)
        memcpy(b->buf + b->len, data, len);
    b->len += len;
    b->buf[b->len] = '\0';
    return 0;
}

int tt_buf_addstr(tt_buf *b, const char *s)
{
    return tt_buf_add(b, s, strlen(s));
}

int tt_buf_addf(tt_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[256];
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return TT_ERROR;
    if ((size_t)n < sizeof(small))
        return tt_buf_add(b, small, (size_t)n);
    if (tt_buf_grow(b, (size_t)n))
        return TT_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int tt_buf_add_json_string(tt_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, start = 0;
    tt_buf_addch(b, '"');
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        tt_buf_add(b, s + start, i - start);
        start = i + 1;
        switch (c) {
        case '"': tt_buf_add(b, "\\\"", 2); break;
        case '\\': tt_buf_add(b, "\\\\", 2); break;
        case '\n': tt_buf_add(b, "\\n", 2); break;
        case '\t': tt_buf_add(b, "\\t", 2); break;
        case '\r': tt_buf_add(b, "\\r", 2); break;
        default: {
            char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            tt_buf_add(b, e, 6);
        }
        }
    }
    tt_buf_add(b, s + start, len - start);
    tt_buf_addch(b, '"');
    return b->oom ? TT_ENOMEM : 0;
}

/* ---- control characters made visible (buf.h) ---- */

/* the length of a C0/DEL byte or a C1 character (UTF-8 C2 80..9F) at s, else 0 */
static size_t control_at(const char *s)
{
    unsigned char c = (unsigned char)s[0];
    if (c < 0x20 || c == 0x7f)
        return 1;
    if (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f)
        return 2;
    return 0;
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if (control_at(s))
            return 1;
    return 0;
}

/* s with its control characters visible: \n \r \t, \xNN, \u0085 */
static void safe_into(tt_buf *b, const char *s)
{
    for (; *s; s++) {
        size_t n = control_at(s);
        if (!n) {
            tt_buf_addch(b, *s);
        } else if (n == 2) {
            tt_buf_addf(b, "\\u%04x", (unsigned)(unsigned char)s[1]);
            s++;
        } else if (*s == '\n' || *s == '\r' || *s == '\t') {
            tt_buf_addch(b, '\\');
            tt_buf_addch(b, *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
        } else {
            tt_buf_addf(b, "\\x%02x", (unsigned)(unsigned char)*s);
        }
    }
}

/* buf.h */
const char *tt_visible(tt_buf *b, const char *s)
{
    if (!has_control(s))
        return s;
    tt_buf_reset(b);
    safe_into(b, s);
    return b->oom ? "?" : b->buf;
}

