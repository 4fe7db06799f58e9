/*
 * common/error.c - the thread-local last error and TT_BUG.
 */
#include "common/compat.h"

#include <stdarg.h>
#include <inttypes.h>

static _Thread_local tt_error last_error = { 0, "", "", -1 };

const tt_error *tt_error_last(void)
{
    return &last_error;
}

void tt_error_clear(void)
{
    last_error.code = 0;
    last_error.message[0] = '\0';
    last_error.source[0] = '\0';
    last_error.offset = -1;
}

static void vset(int code, const char *source, int64_t offset, const char *fmt,
                 va_list ap)
{
    last_error.code = code;
    vsnprintf(last_error.message, sizeof(last_error.message), fmt, ap);
    snprintf(last_error.source, sizeof(last_error.source), "%s",
             source ? source : "");
    last_error.offset = offset;
}

int tt_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(code, NULL, -1, fmt, ap);
    va_end(ap);
    return code;
}

int tt_error_set_at(int code, const char *source, int64_t offset,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(code, source, offset, fmt, ap);
    va_end(ap);
    return code;
}

void tt_error_set_source(const char *source)
{
    snprintf(last_error.source, sizeof(last_error.source), "%s",
             source ? source : "");
}

int tt_exit_code(int code)
{
    switch (code) {
    case TT_OK: return 0;
    case TT_EINVALID:
    case TT_ETRUNCATED:
    case TT_EEMPTY:
    case TT_EUNSUPPORTED: return 3;
    case TT_EEXISTS: return 5;
    case TT_ENOTFOUND:
    case TT_EIO:
    case TT_EDB:
    case TT_ENOMEM: return 4;
    default: return 70;
    }
}

const char *tt_strerror(int code)
{
    switch (code) {
    case TT_OK: return "success";
    case TT_ERROR: return "error";
    case TT_ENOMEM: return "out of memory";
    case TT_EIO: return "input/output error";
    case TT_EINVALID: return "invalid input";
    case TT_ENOTFOUND: return "not found";
    case TT_EUNSUPPORTED: return "unsupported input";
    case TT_ITEROVER: return "end of iteration";
    case TT_ETRUNCATED: return "truncated input";
    case TT_EEXISTS: return "already exists";
    case TT_EDB: return "database error";
    case TT_EEMPTY: return "empty input";
    case TT_ECANCELED: return "canceled";
    default: return "unknown error";
    }
}

/* one line whatever the message holds: control characters are escaped */
static void one_line(const char *in, char *out, size_t size)
{
    size_t o = 0;
    for (; *in && o + 5 < size; in++) {
        unsigned char c = (unsigned char)*in;
        if (c >= 0x20 && c != 0x7f) {
            out[o++] = (char)c;
        } else if (c == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        }
    }
    out[o] = '\0';
}

void tt_error_format(const tt_error *e, char *buf, size_t size)
{
    char msg[1100], src[1100];
    one_line(e->message[0] ? e->message : tt_strerror(e->code), msg, sizeof(msg));
    one_line(e->source, src, sizeof(src));
    if (src[0] && e->offset >= 0)
        snprintf(buf, size, "%s: byte %" PRId64 ": %s", src, e->offset, msg);
    else if (src[0])
        snprintf(buf, size, "%s: %s", src, msg);
    else
        snprintf(buf, size, "%s", msg);
}

void tt__bug(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "BUG: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

int tt__oom(void)
{
    return tt_error_set(TT_ENOMEM, "out of memory");
}

int tt__grow(void **ptr, size_t nr, size_t *alloc, size_t elem)
{
    return tt__grow_from(ptr, nr, alloc, elem, 16);
}

int tt__grow_from(void **ptr, size_t nr, size_t *alloc, size_t elem, size_t first)
{
    size_t n, bytes;
    void *p;
    if (nr <= *alloc)
        return 0;
    n = *alloc ? *alloc : first ? first : 1;
    while (n < nr) {
        if (tt_st_mult(&n, n, 2))
            return TT_ENOMEM;
    }
    if (tt_st_mult(&bytes, n, elem))
        return TT_ENOMEM;
    p = realloc(*ptr, bytes);
    if (!p)
        return TT_ENOMEM;
    *ptr = p;
    *alloc = n;
    return 0;
}
