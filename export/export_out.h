/*
 * export/export_out.h - the JSON pieces of `tracetool export`, appended to
 * the output's buffer (report/out.h: the file, gzip on a second thread)
 * without tt_buf's checks on the common path. Internal.
 */
#ifndef TT_ANALYZE_EXPORT_OUT_H
#define TT_ANALYZE_EXPORT_OUT_H

#include "common/buf.h"
#include "report/out.h"

#include <stdint.h>
#include <string.h>

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
static inline void put(tt_out *o, const char *s, size_t n)
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
void xo_str(tt_out *o, const char *s);

#endif
