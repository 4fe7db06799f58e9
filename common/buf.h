/*
 * common/buf.h - growable byte buffer (after git's strbuf).
 *
 * Invariants: buf is never NULL after tt_buf_init; buf[len] == '\0';
 * len < alloc when alloc > 0. A failed allocation sets `oom`, and every later
 * add is a no-op until tt_buf_reset, so callers check once at the end.
 */
#ifndef TT_COMMON_BUF_H
#define TT_COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct tt_buf {
    char *buf;
    size_t len;
    size_t alloc;
    int oom;
} tt_buf;

extern char tt_buf__empty[1];
#define TT_BUF_INIT { tt_buf__empty, 0, 0, 0 }

void tt_buf_init(tt_buf *b);
void tt_buf_release(tt_buf *b);
/* Ensure room for `extra` more bytes (+NUL). 0 or TT_ENOMEM. */
int tt_buf_grow(tt_buf *b, size_t extra);
int tt_buf_add(tt_buf *b, const void *data, size_t len);
int tt_buf_addstr(tt_buf *b, const char *s);
int tt_buf_addf(tt_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int tt_buf_addch(tt_buf *b, char c)
{
    if (b->len + 1 < b->alloc) {
        b->buf[b->len++] = c;
        b->buf[b->len] = '\0';
        return 0;
    }
    return tt_buf_add(b, &c, 1);
}
/* Empty the buffer (keeps memory) and clear oom. */
void tt_buf_reset(tt_buf *b);
/* Append s as a JSON string literal (quotes included, escapes as needed). */
int tt_buf_add_json_string(tt_buf *b, const char *s, size_t len);

/* s for a terminal: s itself when it holds no control character, else its
 * copy in b (reset first) with C0, DEL and C1 characters written \n \r \t,
 * \xNN or \u0085: a trace's strings cannot move the cursor or forge lines.
 * Valid until b changes; "?" when out of memory. */
const char *tt_visible(tt_buf *b, const char *s);

#endif
