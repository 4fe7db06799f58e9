/*
 * report/out.h - the one writer of output files (export, memtimeline, diff,
 * the rendered pages and pictures, the capture library's traces).
 *
 * A path or "-" (standard output, written straight through). A regular file
 * (or one that does not exist yet) is written to "<path>.tmp" beside it
 * (mode 0600 while written) and renamed over it, with the mode a new file
 * gets (0666 less the umask), only when everything was written: a failure or
 * a cancel removes the temporary and leaves the previous file as it was.
 * A device, a pipe or a symbolic link is written in place.
 *
 * gzip when asked or when the name ends in ".gz": ISA-L's igzip (level 1)
 * when the build found ISA-L, else zlib (level 1), on the writing thread
 * (no hand-off to a compressor thread: igzip is faster alone on 2 cores).
 *
 * The caller appends to o->b (any tt_buf function, or tt_out_write /
 * tt_out_printf) and calls tt_out_flush now and then: it hands the buffer
 * on once it holds TT_OUT_FLUSH_AT bytes. Errors (ENOSPC, EIO, ... at a
 * write, at close, fsync or rename) are set (the path and strerror) when
 * found, and the first one is returned again by tt_out_close. Internal; the library never prints.
 *
 * The capture library compiles this file too (TT_CAPTURE_BUILD): functions
 * then return -1 and keep the message for tt_out_message(), which the
 * capture library's writer hands to its own error (this layer knows
 * nothing of the capture library).
 */
#ifndef TT_REPORT_OUT_H
#define TT_REPORT_OUT_H

#include "common/buf.h"
#include "tracetool/common.h" /* TT_PRINTF */

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#ifdef TT_CAPTURE_BUILD
/* the capture library's copy has names of its own: a program (or a test)
 * may link both libraries statically */
#define tt_out_open tt_cap__file_open
#define tt_out_message tt_cap__file_message
#define tt_out_write tt_cap__file_write
#define tt_out_puts tt_cap__file_puts
#define tt_out_printf tt_cap__file_printf
#define tt_out_vprintf tt_cap__file_vprintf
#define tt_out__hand_on tt_cap__file_hand_on
#define tt_out_close tt_cap__file_close
#endif

#define TT_OUT_FLUSH_AT (1u << 18) /* bytes buffered before they are handed on */

enum {
    TT_OUT_GZ_BY_NAME = 0, /* gzip when the path ends in ".gz" */
    TT_OUT_GZIP = 1,       /* gzip whatever the name */
    TT_OUT_PLAIN = 2,      /* never gzip */
};

struct tt_out_z; /* the compressor (out.c) */

typedef struct tt_out {
    tt_buf b;       /* bytes not handed on yet: the caller appends here */
    /* the rest is out.c's */
    char *path;     /* as given (a copy) */
    char *tmp;      /* "<path>.tmp" while written; NULL: in place or stdout */
    int fd;         /* -1 when closed */
    int own_fd;     /* 0 for standard output */
    int tmp_slot;   /* tt__partial_add's slot of tmp, or -1 */
    int err;        /* errno of the first failure */
    const char *err_what; /* what failed: "cannot write", "cannot rename" */
    int64_t bytes;  /* bytes written to the file (compressed when gzip) */
    struct tt_out_z *z; /* gzip: the compressor; NULL: plain */
} tt_out;

/* open path ("-": standard output); how: TT_OUT_GZ_BY_NAME, TT_OUT_GZIP or
 * TT_OUT_PLAIN. 0 or an error (set; nothing created) */
int tt_out_open(tt_out *o, const char *path, int how);
#ifdef TT_CAPTURE_BUILD
/* the capture library's copy: the message of this thread's last failure */
const char *tt_out_message(void);
#endif
/* append n bytes (then tt_out_flush): 0, or the error once a write failed
 * (set: the path and why; tt_out_close reports it again) */
int tt_out_write(tt_out *o, const void *p, size_t n);
int tt_out_puts(tt_out *o, const char *s);
int tt_out_printf(tt_out *o, const char *fmt, ...) TT_PRINTF(2, 3);
int tt_out_vprintf(tt_out *o, const char *fmt, va_list ap) TT_PRINTF(2, 0);
/* hand the buffer on when it holds TT_OUT_FLUSH_AT bytes or more: 0, or the
 * error once a write failed (as tt_out_write) */
int tt_out__hand_on(tt_out *o);
static inline int tt_out_flush(tt_out *o)
{
    if (o->b.len < TT_OUT_FLUSH_AT && !o->b.oom && !o->err)
        return 0;
    return tt_out__hand_on(o);
}
/* rc == 0: write what is left and put the file in place; returns 0 or the
 * error (set: the path and why). rc != 0 (a failure or a cancel): remove
 * what was written and return rc. Frees everything either way. */
int tt_out_close(tt_out *o, int rc);
/* bytes written to the file: the compressed size when gzip (after close) */
static inline int64_t tt_out_bytes(const tt_out *o)
{
    return o->bytes;
}

/*
 * Write data to path whole or not at all (never gzip), through the same
 * steps: for the writers of small outputs in every layer above tt_report. A
 * regular file (or a new one) is written beside it and renamed over it, so
 * a failed write leaves the previous file as it was; a device, a pipe, a
 * symbolic link is written in place. 0 or TT_EIO (the error names path and
 * why).
 */
int tt__write_file_atomic(const char *path, const void *data, size_t len);

#endif
