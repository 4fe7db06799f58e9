/*
 * formats/spool.c - an input that can be read only once, copied to an
 * anonymous temporary file (see spool.h).
 */
#include "common/compat.h"
#include "formats/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tt__spool_needed(const char *input)
{
    struct stat sb;
    if (!strcmp(input, "-"))
        return 1;
    if (stat(input, &sb) != 0)
        return 0; /* the reader says it is missing, in its words */
    return !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}

/* every byte of fd in into fd out; 0, or the errno of what failed (*reading:
 * whether it was the read) */
static int copy_fd(int in, int out, int *reading)
{
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf)), off = 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *reading = 1;
            return n < 0 ? errno : 0;
        }
        while (off < n) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                *reading = 0;
                return w < 0 ? errno : ENOSPC;
            }
            off += w;
        }
    }
}

int tt__spool_input(tt__spool *sp, const char *input, const char **readable)
{
    char name[4096];
    int in, e, reading = 0;
    sp->fd = -1;
    sp->path[0] = '\0';
    *readable = input;
    if (!tt__spool_needed(input))
        return 0;
    in = strcmp(input, "-") ? open(input, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (in < 0)
        return tt_error_set_at(TT_EIO, input, -1, "cannot open: %s", strerror(errno));
    if ((sp->fd = tt__mkstemp(name, sizeof(name), "spool")) < 0) {
        if (in != STDIN_FILENO)
            close(in);
        tt_error_set_source(input);
        return TT_EIO;
    }
    unlink(name);
    e = copy_fd(in, sp->fd, &reading);
    if (in != STDIN_FILENO)
        close(in);
    if (e) {
        tt__spool_release(sp);
        return reading ? tt_error_set_at(TT_EIO, input, -1, "cannot read: %s", strerror(e))
                       : tt_error_set_at(TT_EIO, input, -1,
                                         "cannot copy to a temporary file in %s: %s (set"
                                         " TMPDIR to another directory)",
                                         tt__tmpdir(), strerror(e));
    }
    snprintf(sp->path, sizeof(sp->path), "/dev/fd/%d", sp->fd);
    *readable = sp->path;
    return 0;
}

int tt__spool_end(tt__spool *sp, const char *input, int rc)
{
    const char *src = tt_error_last()->source;
    if (rc < 0 && sp->fd >= 0 && (!src[0] || !strcmp(src, sp->path)))
        tt_error_set_source(input); /* the input, not its copy */
    tt__spool_release(sp);
    return rc;
}

void tt__spool_release(tt__spool *sp)
{
    if (sp->fd >= 0)
        close(sp->fd);
    sp->fd = -1;
}
