/*
 * formats/spool.h - an input that can be read only once (standard input as
 * "-", a pipe, a character device) made readable again (internal to
 * libtracetool).
 *
 * An analysis that may need a second reading of a file (the SQL passes a
 * few traces need after the stream, a second side of a diff) reads such an
 * input from an anonymous temporary file holding its bytes as they came
 * (compressed or not): a spill file, removed as soon as it is created, so
 * nothing stays behind whatever ends the process. A regular file, a
 * directory or a path that does not exist is read where it is.
 */
#ifndef TT_FORMATS_SPOOL_H
#define TT_FORMATS_SPOOL_H

typedef struct tt__spool {
    int fd;        /* the copy; -1 when input is read where it is */
    char path[32]; /* "/dev/fd/N" */
} tt__spool;

/*
 * *readable: the path to read input from, any number of times (input
 * itself, or sp's copy). TT_EIO when the copy cannot be made (the message
 * names input and says why: a full disk says set TMPDIR). Release sp with
 * tt__spool_release whatever the result.
 */
int tt__spool_input(tt__spool *sp, const char *input, const char **readable);
void tt__spool_release(tt__spool *sp);
/*
 * After the reading of *readable: sp released and, when rc is an error
 * that names the copy (or nothing), the error names input instead. rc back.
 */
int tt__spool_end(tt__spool *sp, const char *input, int rc);

/* 1 when input must be copied to be read twice ("-", a pipe, a device) */
int tt__spool_needed(const char *input);

#endif
