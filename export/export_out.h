/*
 * export/export_out.h - the output of `tracetool export`: a buffer handed
 * to a file (written to <path>.tmp and renamed when complete) or to gzip,
 * compressed on a second thread while the next buffer fills; JSON pieces
 * appended without tt_buf's checks on the common path. Internal.
 */
#ifndef TT_ANALYZE_EXPORT_OUT_H
#define TT_ANALYZE_EXPORT_OUT_H

#include "common/buf.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define FLUSH_AT (1u << 18) /* bytes buffered before they are handed on */

struct xout {
    const char *path;
    char *tmp;       /* "<path>.tmp" while written; NULL: written in place */
    int tmp_slot;    /* tt__partial_add's slot of tmp, or -1 */
    FILE *f;         /* plain output (owned unless stdout) */
    gzFile gz;       /* gzip output */
    tt_buf b;        /* bytes not yet handed to f / gz */
    int64_t bytes;   /* bytes written (compressed size once closed) */
    int err;         /* errno of the first failure */
    /* gzip: a second thread compresses one buffer while the next one fills
     * (1 GB trace: 7.0 -> 4.x s) */
    int threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tt_buf full;     /* the buffer the compressor has */
    int has_full, stop, zerr;
};

/* open path for writing (gz: gzip); 0 or an error (set) */
int xo_open(struct xout *o, const char *path, int gz);
/* hand the buffer over when it holds FLUSH_AT bytes or more: 0 or an error */
int xo_flush(struct xout *o);
/* finish (rc == 0: rename into place) or remove what was written; returns
 * rc, or the first write error */
int xo_close(struct xout *o, int rc);

static inline void bput(tt_buf *b, const char *s, size_t n)
{
    if (b->len + n < b->alloc) { /* the common case, without tt_buf_add's checks */
        memcpy(b->buf + b->len, s, n);
        b->len += n;
        b->buf[b->len] = '\0';
        return;
    }
    tt_buf_add(b, s, n);
}
static inline void put(struct xout *o, const char *s, size_t n)
{
    bput(&o->b, s, n);
}
/* strlen of a literal is folded at compile time */
#define PUTS(o, s) put((o), (s), strlen(s))
#define BPUTS(b, s) bput((b), (s), strlen(s))
/* numbers and strings as JSON, into a buffer (xb_) or the output (xo_) */
void xb_u64(tt_buf *b, uint64_t u);
void xb_i64(tt_buf *b, int64_t v);
/* ns as exact decimal us: 1500 -> 1.5, 2000 -> 2, -1 -> -0.001 */
void xb_us(tt_buf *b, int64_t ns);
#define xo_u64(o, u) xb_u64(&(o)->b, (u))
#define xo_i64(o, v) xb_i64(&(o)->b, (v))
#define xo_us(o, ns) xb_us(&(o)->b, (ns))
void xo_str(struct xout *o, const char *s);

#endif
