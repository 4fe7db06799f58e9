/*
 * capture/src/out.c - a file the writers fill, through the output module
 * (report/out.c, compiled into this library): written to <path>.tmp (gzip
 * when the path ends in ".gz"), renamed to <path> only when complete,
 * removed on any failure, so a reader never sees half a trace. The JSON in
 * it is written by the project's JSON writer (report/json.c, compiled into
 * this library too), into the file's buffer.
 * JSON strings: bytes that are not UTF-8 become U+FFFD, then the writer's
 * RFC 8259 escaping (common/buf.c), so any name a program gives makes valid
 * JSON.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/buf.h"
#include "common/utf8.h"
#include "report/json.h"
#include "report/out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct out {
    tt_out o; /* the file (report/out.h) */
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

void tt_cap__out_jw(struct out *o, tt_jw *w, unsigned flags)
{
    tt_jw_init_out(w, &o->o, flags);
}

int tt_cap__out_jw_end(tt_jw *w)
{
    int rc = tt_jw_finish(w);
    if (rc == 0)
        return 0;
    if (rc == TT_ENOMEM)
        tt_cap__set_error("out of memory");
    else if (rc == TT_EINVALID)
        tt_cap__set_error("JSON written out of order (a bug in the capture library)");
    else
        failed(); /* the output module's: a write failed */
    return -1;
}

/* s made valid UTF-8 (each byte that is not UTF-8 becomes U+FFFD): s itself
 * when it is, else t's copy (*n updated) */
static const char *valid_utf8(const char *str, size_t *n, tt_buf *t)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, start = 0;
    int bad = 0;
    while (i < *n) {
        size_t l = (size_t)tt_utf8_len(s + i, s + *n);
        if (l) {
            i += l;
            continue;
        }
        tt_buf_add(t, s + start, i - start);
        tt_buf_add(t, "\xef\xbf\xbd", 3);
        start = ++i;
        bad = 1;
    }
    if (!bad)
        return str;
    tt_buf_add(t, s + start, *n - start);
    *n = t->len;
    return t->buf;
}

static void text(tt_jw *w, int key, const char *s, size_t n)
{
    tt_buf t = TT_BUF_INIT;
    s = valid_utf8(s, &n, &t);
    if (t.oom) {
        w->b->oom = 1; /* the writer's buffer says so: tt_jw_finish returns TT_ENOMEM */
        s = "";
        n = 0;
    }
    if (key)
        tt_jw_keyn(w, s, n);
    else
        tt_jw_strn(w, s, n);
    tt_buf_release(&t);
}

void tt_cap__json_str(tt_jw *w, const char *s, size_t n)
{
    text(w, 0, s, n);
}

void tt_cap__json_key(tt_jw *w, const char *s, size_t n)
{
    text(w, 1, s, n);
}

int tt_cap__out_json_string(struct out *o, const char *s, size_t n)
{
    tt_jw w;
    tt_cap__out_jw(o, &w, 0);
    tt_cap__json_str(&w, s, n);
    return tt_cap__out_jw_end(&w);
}

void tt_cap__json_dims(tt_jw *w, const unsigned char *dims, int32_t nd)
{
    int32_t d;
    tt_jw_arr(w);
    for (d = 0; d < nd; d++) {
        int64_t v;
        memcpy(&v, dims + 8 * d, 8);
        tt_jw_int(w, v);
    }
    tt_jw_end(w);
}

void tt_cap__json_us(tt_jw *w, int64_t rel_ns)
{
    tt_jw_fixed(w, rel_ns < 0 ? 0 : rel_ns, 3); /* Kineto's transToRelativeTime: never negative */
}

int tt_cap__out_close(struct out *o, int ok)
{
    int rc;
    if (!o)
        return -1;
    rc = tt_out_close(&o->o, ok ? 0 : -1);
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

/* ---- the Kineto events both writers of a trace write (kineto_out.c, gpu_out.c) ---- */

/* a [memory] instant */
void tt_cap__kineto_memory(tt_jw *w, const struct tt_cap_mem_ev *m, int64_t *ev_idx)
{
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "i");
    tt_jw_kstr(w, "cat", "cpu_instant_event");
    tt_jw_kstr(w, "s", "t");
    tt_jw_kstr(w, "name", "[memory]");
    tt_jw_kint(w, "pid", m->pid);
    tt_jw_kint(w, "tid", m->tid);
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, m->rel_ns);
    tt_jw_kobj(w, "args");
    tt_jw_kint(w, "Total Reserved", m->reserved);
    tt_jw_kint(w, "Total Allocated", m->allocated);
    tt_jw_kint(w, "Bytes", m->bytes);
    tt_jw_kuint(w, "Addr", m->addr);
    tt_jw_kint(w, "Device Id", m->dev_id);
    tt_jw_kint(w, "Device Type", m->dev_type);
    tt_jw_kint(w, "Ev Idx", (*ev_idx)++);
    tt_jw_end(w);
    tt_jw_end(w);
}

/* a metadata row, up to its args' key: the caller writes the value and
 * closes the two objects */
void tt_cap__kineto_meta(tt_jw *w, const char *name, int64_t rel_ns, int64_t pid, int64_t tid,
                         const char *arg)
{
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "name", name);
    tt_jw_kstr(w, "ph", "M");
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, rel_ns);
    tt_jw_kint(w, "pid", pid);
    tt_jw_kint(w, "tid", tid);
    tt_jw_kobj(w, "args");
    tt_jw_key(w, arg);
}
