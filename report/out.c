/*
 * report/out.c - the one writer of output files (report/out.h): a buffer
 * handed to a file descriptor, straight or through gzip (ISA-L's igzip, or
 * zlib), the file written beside its target and renamed when complete.
 */
#include "common/compat.h"
#include "report/out.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef TT_HAVE_ISAL
#include <isa-l/igzip_lib.h>
/* igzip level 1 compresses a 470 MB export on the writing thread in less
 * time than a hand-over to a second one saves on 2 cores (measured: equal
 * or faster in each of 4 paired runs), so there is no compressor thread */
#else
#include <zlib.h>
#endif

/* ---- errors: the library's (path, why), or the capture library's ---- */

#ifdef TT_CAPTURE_BUILD
/* the capture library's copy keeps the message for its caller
 * (tt_out_message), which sets the capture library's error */
static _Thread_local char out_msg[600];

const char *tt_out_message(void)
{
    return out_msg;
}

static int report(const char *path, const char *what, int e)
{
    snprintf(out_msg, sizeof(out_msg), "%s %s: %s", what, path, strerror(e));
    return -1;
}
static int busy(const tt_out *o)
{
    snprintf(out_msg, sizeof(out_msg), "cannot write %s: another writer has it open (%s is locked)",
             o->path, o->tmp);
    return -1;
}
static int out_oom(void)
{
    snprintf(out_msg, sizeof(out_msg), "out of memory");
    return -1;
}
/* the capture library has no signal handlers that remove partial outputs */
#define partial_add(p) ((void)(p), -1)
#define partial_remove(slot) ((void)(slot))
typedef int sig_hold;
#define signals_hold(h) ((void)(h))
#define signals_release(h) ((void)(h))
#else
static int report(const char *path, const char *what, int e)
{
    return tt_error_set_at(TT_EIO, path, -1, "%s: %s", what, strerror(e));
}
static int busy(const tt_out *o)
{
    return tt_error_set_at(TT_EIO, o->path, -1,
                           "cannot write: another writer has it open (%s is locked)", o->tmp);
}
#define out_oom tt__oom
#define partial_add tt__partial_add
#define partial_remove tt__partial_remove
/*
 * The signals whose handler removes partial outputs (common/fs.c) are held
 * from the temporary's creation until its name is registered for removal:
 * one that comes in between is delivered once it is, and the handler then
 * finds the name (it used to leave the temporary behind).
 */
typedef sigset_t sig_hold;
static void signals_hold(sig_hold *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &s, old);
}
static void signals_release(const sig_hold *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}
#endif

static const char *shown_path(const tt_out *o)
{
    return strcmp(o->path, "-") ? o->path : "standard output";
}

/* the first failure is the one kept: its error (set again now) */
static int fail(tt_out *o, const char *what, int e)
{
    if (!o->err) {
        o->err = e ? e : EIO;
        o->err_what = what;
    }
    return report(shown_path(o), o->err_what, o->err);
}

/* n bytes to the file descriptor: 0 or an errno */
static int write_all(tt_out *o, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(o->fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        s += w;
        n -= (size_t)w;
        o->bytes += (int64_t)w;
    }
    return 0;
}

/* ---- gzip: ISA-L's igzip (level 1) or zlib (level 1) ---- */

#define ZOUT (1u << 17)
#define ZCHUNK (1u << 30) /* input handed to the compressor at once */

struct tt_out_z {
#ifdef TT_HAVE_ISAL
    struct isal_zstream s;
    uint8_t *level_buf;
#else
    z_stream s;
#endif
    unsigned char out[ZOUT];
};

static int z_init(tt_out *o)
{
    struct tt_out_z *z = calloc(1, sizeof(*z));
    if (!z)
        return ENOMEM;
#ifdef TT_HAVE_ISAL
    isal_deflate_init(&z->s);
    if (!(z->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT))) {
        free(z);
        return ENOMEM;
    }
    z->s.level = 1;
    z->s.level_buf = z->level_buf;
    z->s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    z->s.gzip_flag = IGZIP_GZIP;
    z->s.flush = NO_FLUSH;
#else
    /* windowBits 15 + 16: a gzip header and trailer */
    if (deflateInit2(&z->s, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(z);
        return ENOMEM;
    }
#endif
    o->z = z;
    return 0;
}

static void z_free(tt_out *o)
{
    if (!o->z)
        return;
#ifdef TT_HAVE_ISAL
    free(o->z->level_buf);
#else
    deflateEnd(&o->z->s);
#endif
    free(o->z);
    o->z = NULL;
}

/* compress n bytes (end: and finish the stream) and write what comes out:
 * 0 or an errno */
static int z_feed(tt_out *o, const unsigned char *p, size_t n, int end)
{
    struct tt_out_z *z = o->z;
    int e = 0, done = 0;
    do {
        size_t k = n < ZCHUNK ? n : ZCHUNK;
        int last = end && k == n;
#ifdef TT_HAVE_ISAL
        z->s.next_in = (uint8_t *)p;
        z->s.avail_in = (uint32_t)k;
        z->s.end_of_stream = (uint16_t)last;
        do {
            z->s.next_out = z->out;
            z->s.avail_out = ZOUT;
            if (isal_deflate(&z->s) != COMP_OK)
                return EIO;
            e = write_all(o, z->out, ZOUT - z->s.avail_out);
            done = last ? z->s.internal_state.state == ZSTATE_END
                        : z->s.avail_in == 0 && z->s.avail_out != 0;
        } while (!e && !done);
#else
        int zr;
        z->s.next_in = (Bytef *)p;
        z->s.avail_in = (uInt)k;
        do {
            z->s.next_out = z->out;
            z->s.avail_out = ZOUT;
            zr = deflate(&z->s, last ? Z_FINISH : Z_NO_FLUSH);
            if (zr == Z_STREAM_ERROR)
                return EIO;
            e = write_all(o, z->out, ZOUT - z->s.avail_out);
            done = last ? zr == Z_STREAM_END : z->s.avail_in == 0 && z->s.avail_out != 0;
        } while (!e && !done);
#endif
        p += k;
        n -= k;
    } while (!e && n);
    return e;
}

/* bytes to the file, compressed or not: 0 or an errno */
static int sink(tt_out *o, const void *p, size_t n)
{
    if (!n)
        return 0;
    return o->z ? z_feed(o, p, n, 0) : write_all(o, p, n);
}

/* ---- writing ---- */

/* everything buffered to the file: 0 or -1 */
static int hand_on(tt_out *o)
{
    int e;
    if (o->b.oom)
        return fail(o, "cannot write", ENOMEM);
    if (o->err)
        return fail(o, NULL, 0);
    if (!o->b.len)
        return 0;
    e = sink(o, o->b.buf, o->b.len);
    tt_buf_reset(&o->b);
    return e ? fail(o, "cannot write", e) : 0;
}

int tt_out__hand_on(tt_out *o)
{
    return hand_on(o);
}

int tt_out_write(tt_out *o, const void *p, size_t n)
{
    int e;
    if (n >= TT_OUT_FLUSH_AT) { /* not copied */
        if ((e = hand_on(o)) < 0)
            return e;
        return (e = sink(o, p, n)) ? fail(o, "cannot write", e) : 0;
    }
    tt_buf_add(&o->b, p, n);
    return tt_out_flush(o);
}

int tt_out_puts(tt_out *o, const char *s)
{
    return tt_out_write(o, s, strlen(s));
}

int tt_out_vprintf(tt_out *o, const char *fmt, va_list ap)
{
    va_list again;
    int n;
    size_t room;
    if (tt_buf_grow(&o->b, 256) < 0)
        return tt_out_flush(o);
    room = o->b.alloc - o->b.len;
    va_copy(again, ap);
    n = vsnprintf(o->b.buf + o->b.len, room, fmt, ap);
    if (n >= 0 && (size_t)n >= room) { /* longer than the room there was */
        if (tt_buf_grow(&o->b, (size_t)n + 1) < 0)
            n = -2;
        else
            vsnprintf(o->b.buf + o->b.len, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    if (n == -2)
        return tt_out_flush(o); /* out of memory: the buffer says so */
    if (n < 0)
        return fail(o, "cannot write", EINVAL);
    o->b.len += (size_t)n;
    return tt_out_flush(o);
}

int tt_out_printf(tt_out *o, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = tt_out_vprintf(o, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- opening and closing ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* 1 when path is something other than a regular file or nothing (a device,
 * a pipe, a symbolic link, a directory, an error): written in place */
static int in_place(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno != ENOENT;
    return !S_ISREG(st.st_mode);
}

/* the mode a new file gets: 0666 less the umask (read from /proc, as
 * umask() cannot be read without setting it under another thread's feet) */
static mode_t new_file_mode(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    unsigned m = 0;
    int found = 0;
    mode_t um;
    while (f && !found && fgets(line, sizeof(line), f))
        found = sscanf(line, "Umask: %o", &m) == 1;
    if (f)
        fclose(f);
    if (found)
        return (mode_t)(0666 & ~m);
    um = umask(022);
    umask(um);
    return 0666 & ~um;
}

static int is_regular(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* the file descriptor: standard output, the path itself, or <path>.tmp */
static int open_fd(tt_out *o)
{
    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    sig_hold held;
    if (!strcmp(o->path, "-")) {
        fflush(stdout); /* what stdio holds goes first */
        o->fd = STDOUT_FILENO;
        return 0;
    }
    o->own_fd = 1;
    if (in_place(o->path)) {
        if ((o->fd = open(o->path, flags, 0666)) < 0)
            return report(o->path, "cannot write", errno);
        return 0;
    }
    if (!(o->tmp = malloc(strlen(o->path) + 5)))
        return out_oom();
    sprintf(o->tmp, "%s.tmp", o->path);
    /* a link there is refused (O_NOFOLLOW); anything else that is there
     * (a stale temporary, a FIFO a test reads from) is written and renamed.
     * The temporary is locked while written: a second writer of the same
     * output (another process, or this one) is refused rather than
     * truncating it under the first; emptied only once the lock is held */
    signals_hold(&held);
    if ((o->fd = open(o->tmp, (flags & ~O_TRUNC) | O_NOFOLLOW, 0600)) < 0) {
        int e = errno;
        signals_release(&held);
        return report(o->path, "cannot write", e);
    }
    if (flock(o->fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(o->fd);
        o->fd = -1;
        signals_release(&held);
        return busy(o); /* another writer's: left to it */
    }
    /* ours now: removed if a signal ends the process (a signal held since
     * the open is delivered after this, so it finds the name) */
    o->tmp_slot = partial_add(o->tmp);
    signals_release(&held);
    if (fchmod(o->fd, 0600) != 0 || (is_regular(o->fd) && ftruncate(o->fd, 0) != 0)) {
        int e = errno;
        close(o->fd);
        o->fd = -1;
        unlink(o->tmp);
        return report(o->path, "cannot write", e);
    }
    return 0;
}

static void release(tt_out *o)
{
    if (o->tmp)
        partial_remove(o->tmp_slot);
    z_free(o);
    free(o->tmp);
    free(o->path);
    tt_buf_release(&o->b);
    o->tmp = o->path = NULL;
}

int tt_out_open(tt_out *o, const char *path, int how)
{
    int gz = (how & 3) == TT_OUT_GZIP || ((how & 3) == TT_OUT_GZ_BY_NAME && ends_with(path, ".gz"));
    int rc, e;
    memset(o, 0, sizeof(*o));
    o->fd = -1;
    o->tmp_slot = -1;
    tt_buf_init(&o->b);
    if (!(o->path = strdup(path)) || tt_buf_grow(&o->b, TT_OUT_FLUSH_AT + TT_OUT_FLUSH_AT / 2) < 0)
        rc = out_oom();
    else
        rc = open_fd(o);
    if (rc == 0 && gz && (e = z_init(o)) != 0) {
        if (o->own_fd)
            close(o->fd);
        if (o->tmp)
            unlink(o->tmp);
        rc = report(shown_path(o), "cannot write", e);
    }
    if (rc != 0) {
        release(o);
        return rc;
    }
    return 0;
}

/* everything written: the end of the gzip stream and the file's mode (the
 * name comes with tt_out_close). No fsync: a failed or cancelled write never
 * shows at the name, which is what the rename guarantees; forcing a GB
 * output to the disk would cost seconds per command (0.3 s on 410 MB here)
 * and delay the exit of a program the capture library profiles */
static void commit(tt_out *o)
{
    int e;
    if (hand_on(o) < 0)
        return;
    if (o->z && !o->err && (e = z_feed(o, NULL, 0, 1)) != 0)
        fail(o, "cannot write", e);
    if (o->tmp && !o->err && fchmod(o->fd, new_file_mode()) != 0)
        fail(o, "cannot write", errno);
}

int tt_out_close(tt_out *o, int rc)
{
    if (rc == 0)
        commit(o);
    if (o->own_fd && o->fd >= 0 && close(o->fd) != 0 && rc == 0)
        fail(o, "cannot write", errno);
    o->fd = -1;
    if (rc == 0 && !o->err && o->tmp && rename(o->tmp, o->path) != 0)
        fail(o, "cannot rename", errno);
    if (rc == 0 && o->err)
        rc = fail(o, NULL, 0);
    if (o->tmp && rc != 0)
        unlink(o->tmp);
    release(o);
    return rc;
}

#ifndef TT_CAPTURE_BUILD
/* compat.h: data as the whole of path */
int tt__write_file_atomic(const char *path, const void *data, size_t len)
{
    tt_out o;
    int rc = tt_out_open(&o, path, TT_OUT_PLAIN);
    if (rc < 0)
        return rc;
    tt_out_write(&o, data, len);
    return tt_out_close(&o, 0);
}
#endif
