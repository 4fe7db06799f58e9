/*
 * export/export_out.h - the JSON pieces of `tracetool export`. The file is
 * written by the JSON writer (report/json.h: compact, into the output's
 * buffer, report/out.h): the document and its header, the metadata and
 * the folded flow events, and the ",\n" before each event. An event record
 * (export_state.h: its text made when its row is read, completed with pid,
 * tid, ts and id when it is written) is put together by the helpers here,
 * without tt_buf's checks on the common path, and goes into the file as one
 * value (tt_jw_raw): the writer's calls member by member made the export
 * 14% longer in instructions. Nor has the writer a call for members that
 * are JSON already (the stored args after the columns' in one "args") or
 * for the shortest exact decimal of a fixed point (ts 1.5, not 1.500).
 * Internal.
 */
#ifndef TT_ANALYZE_EXPORT_OUT_H
#define TT_ANALYZE_EXPORT_OUT_H

#include "common/buf.h"
#include "report/json.h"
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
/* strlen of a literal is folded at compile time */
#define BPUTS(b, s) bput((b), (s), strlen(s))

/* the text of an integer, at most TT_XP_NUM bytes, into t: its length */
#define TT_XP_NUM 24
size_t tt__xp_i64_text(char *t, int64_t v);

/* into a buffer (a record being put together): an integer, and ns as exact
 * decimal us (1500 -> 1.5, 2000 -> 2, -1 -> -0.001) */
void xb_i64(tt_buf *b, int64_t v);
void xb_us(tt_buf *b, int64_t ns);
/* as values of a writer: "%lld", and ns as us as above (tt_jw_fixed keeps
 * the trailing zeros) */
void xj_i64(tt_jw *w, int64_t v);
void xj_us(tt_jw *w, int64_t ns);

#endif
