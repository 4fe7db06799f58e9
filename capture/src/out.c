/*
 * capture/src/out.c - a file the writers fill: written to <path>.tmp
 * (gzip when the path ends in ".gz", zlib), renamed to <path> only when
 * complete, removed on any failure, so a reader never sees half a trace.
 * JSON strings: bytes that are not UTF-8 become U+FFFD, then the project's
 * RFC 8259 escaping (common/buf.c), so any name a program gives makes valid
 * JSON.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/buf.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct out {
    char *path, *tmp;
    FILE *f;
    gzFile gz;
    unsigned char buf[1 << 16];
    size_t n;
    int err; /* errno of the first failure */
    tt_buf text, json; /* a string made UTF-8, then escaped */
};

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

struct out *tt_cap__out_open(const char *path)
{
    struct out *o = tt_cap__fault_alloc ? NULL : calloc(1, sizeof(*o));
    int fd;
    if (o) {
        tt_buf_init(&o->text);
        tt_buf_init(&o->json);
    }
    if (!o || !(o->path = strdup(path)) || !(o->tmp = malloc(strlen(path) + 5))) {
        if (o)
            free(o->path);
        free(o);
        tt_cap__set_error("out of memory");
        return NULL;
    }
    sprintf(o->tmp, "%s.tmp", path);
    if (!(o->f = fopen(o->tmp, "wb"))) {
        tt_cap__set_error("cannot write %s: %s", o->tmp, strerror(errno));
        free(o->path);
        free(o->tmp);
        free(o);
        return NULL;
    }
    if (ends_with(path, ".gz")) {
        fd = dup(fileno(o->f));
        if (fd < 0 || !(o->gz = gzdopen(fd, "wb6"))) {
            tt_cap__set_error("cannot write %s: %s", o->tmp, strerror(errno ? errno : ENOMEM));
            fclose(o->f);
            remove(o->tmp);
            free(o->path);
            free(o->tmp);
            free(o);
            return NULL;
        }
    }
    return o;
}

static int flush_buf(struct out *o)
{
    if (!o->n || o->err)
        return o->err ? -1 : 0;
    if (o->gz) {
        if (gzwrite(o->gz, o->buf, (unsigned)o->n) != (int)o->n)
            o->err = errno ? errno : EIO;
    } else if (fwrite(o->buf, 1, o->n, o->f) != o->n) {
        o->err = errno ? errno : EIO;
    }
    o->n = 0;
    return o->err ? -1 : 0;
}

int tt_cap__out_write(struct out *o, const void *p, size_t n)
{
    const unsigned char *s = p;
    while (n) {
        size_t k = sizeof(o->buf) - o->n;
        if (k > n)
            k = n;
        memcpy(o->buf + o->n, s, k);
        o->n += k;
        s += k;
        n -= k;
        if (o->n == sizeof(o->buf) && flush_buf(o) < 0)
            return -1;
    }
    return o->err ? -1 : 0;
}

int tt_cap__out_printf(struct out *o, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        o->err = EINVAL;
        return -1;
    }
    return tt_cap__out_write(o, tmp, (size_t)n);
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
        o->err = ENOMEM;
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
    int rc = 0;
    if (!o)
        return -1;
    if (flush_buf(o) < 0)
        ok = 0;
    if (o->gz) {
        int zr = gzclose(o->gz);
        if (zr != Z_OK && !o->err)
            o->err = EIO;
    }
    if (fflush(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    if (o->err || !ok) {
        if (o->err)
            tt_cap__set_error("cannot write %s: %s", o->tmp, strerror(o->err));
        remove(o->tmp);
        rc = -1;
    } else if (rename(o->tmp, o->path) != 0) {
        tt_cap__set_error("cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
        remove(o->tmp);
        rc = -1;
    }
    tt_buf_release(&o->text);
    tt_buf_release(&o->json);
    free(o->path);
    free(o->tmp);
    free(o);
    return rc;
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
