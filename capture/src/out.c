/*
 * capture/src/out.c - a file the writers fill, through the output module
 * (report/out.c, compiled into this library): written to <path>.tmp (gzip
 * when the path ends in ".gz"), renamed to <path> only when complete,
 * removed on any failure, so a reader never sees half a trace.
 * JSON strings: bytes that are not UTF-8 become U+FFFD, then the project's
 * RFC 8259 escaping (common/buf.c), so any name a program gives makes valid
 * JSON.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/buf.h"
#include "common/utf8.h"
#include "report/out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct out {
    tt_out o;          /* the file (report/out.h) */
    tt_buf text, json; /* a string made UTF-8, then escaped */
};

/* a failure of the output module: its message as the capture library's error */
static int failed(void)
{
    tt_cap__set_error("%s", tt_out_message());
    return -1;
}

struct out *tt_cap__out_open(const char *path)
{
    struct out *o = tt_cap__fault_alloc ? NULL : calloc(1, sizeof(*o));
    if (!o) {
        tt_cap__set_error("out of memory");
        return NULL;
    }
    if (tt_out_open(&o->o, path, TT_OUT_GZ_BY_NAME) < 0) {
        failed();
        free(o);
        return NULL;
    }
    tt_buf_init(&o->text);
    tt_buf_init(&o->json);
    return o;
}

int tt_cap__out_write(struct out *o, const void *p, size_t n)
{
    return tt_out_write(&o->o, p, n) < 0 ? failed() : 0;
}

int tt_cap__out_printf(struct out *o, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = tt_out_vprintf(&o->o, fmt, ap);
    va_end(ap);
    return rc < 0 ? failed() : 0;
}

/* A JSON string: bytes that are not UTF-8 become U+FFFD, then the
 * project's own escaping (common/buf.c, RFC 8259) */
int tt_cap__out_json_string(struct out *o, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, start = 0;
    tt_buf_reset(&o->text);
    tt_buf_reset(&o->json);
    while (i < n) {
        size_t l = (size_t)tt_utf8_len(s + i, s + n);
        if (l) {
            i += l;
            continue;
        }
        tt_buf_add(&o->text, s + start, i - start);
        tt_buf_add(&o->text, "\xef\xbf\xbd", 3);
        start = ++i;
    }
    tt_buf_add(&o->text, s + start, n - start);
    if (o->text.oom || tt_buf_add_json_string(&o->json, o->text.buf, o->text.len) < 0) {
        tt_cap__set_error("out of memory");
        return -1;
    }
    return tt_cap__out_write(o, o->json.buf, o->json.len);
}

/* "[d0, d1, ...]" from nd 8-byte integers at dims */
int tt_cap__out_dims(struct out *o, const unsigned char *dims, int32_t nd)
{
    int32_t d;
    tt_cap__out_write(o, "[", 1);
    for (d = 0; d < nd; d++) {
        int64_t v;
        memcpy(&v, dims + 8 * d, 8);
        tt_cap__out_printf(o, "%s%lld", d ? ", " : "", (long long)v);
    }
    return tt_cap__out_write(o, "]", 1);
}

int tt_cap__out_close(struct out *o, int ok)
{
    int rc;
    if (!o)
        return -1;
    rc = tt_out_close(&o->o, ok ? 0 : -1);
    tt_buf_release(&o->text);
    tt_buf_release(&o->json);
    free(o);
    return rc < 0 && ok ? failed() : rc < 0 ? -1 : 0;
}

/* the process name Kineto gives its rows: /proc/self/comm */
void tt_cap__process_name(char *buf, size_t n)
{
    FILE *f = fopen("/proc/self/comm", "r");
    size_t k = 0;
    if (f) {
        k = fread(buf, 1, n - 1, f);
        fclose(f);
    }
    while (k && (buf[k - 1] == '\n' || buf[k - 1] == 0))
        k--;
    buf[k] = 0;
    if (!k)
        snprintf(buf, n, "process %ld", (long)getpid());
}
