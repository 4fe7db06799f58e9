/*
 * export/export_out.c - the output of `tracetool export` (export_out.h).
 */
#include "common/compat.h"
#include "export/export_out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

static void *gz_worker(void *arg)
{
    struct xout *o = arg;
    pthread_mutex_lock(&o->mu);
    while (1) {
        int e = 0;
        while (!o->has_full && !o->stop)
            pthread_cond_wait(&o->cv, &o->mu);
        if (!o->has_full)
            break;
        pthread_mutex_unlock(&o->mu);
        if (gzwrite(o->gz, o->full.buf, (unsigned)o->full.len) != (int)o->full.len)
            e = errno ? errno : EIO;
        pthread_mutex_lock(&o->mu);
        if (e && !o->zerr)
            o->zerr = e;
        o->has_full = 0;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

static void gz_start(struct xout *o)
{
    if (tt_buf_grow(&o->full, 2 * FLUSH_AT) < 0)
        return; /* compressed on this thread then */
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    if (pthread_create(&o->th, NULL, gz_worker, o) == 0) {
        o->threaded = 1;
        return;
    }
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
}

/* wait for the compressor to finish what it has, and end it */
static void gz_join(struct xout *o)
{
    if (!o->threaded)
        return;
    pthread_mutex_lock(&o->mu);
    o->stop = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    pthread_join(o->th, NULL);
    if (o->zerr && !o->err)
        o->err = o->zerr;
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    o->threaded = 0;
}

/* the filled buffer to the compressor, its last one back to fill */
static int gz_hand_over(struct xout *o)
{
    tt_buf t;
    int e;
    pthread_mutex_lock(&o->mu);
    while (o->has_full)
        pthread_cond_wait(&o->cv, &o->mu);
    e = o->zerr;
    if (!e) {
        t = o->full;
        o->full = o->b;
        o->b = t;
        o->has_full = 1;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
    return e;
}

static int out_fail(struct xout *o, int e)
{
    if (!o->err)
        o->err = e ? e : EIO;
    return -1;
}

int xo_flush(struct xout *o)
{
    if (o->b.oom)
        return out_fail(o, ENOMEM);
    if (!o->b.len || o->err)
        return o->err ? -1 : 0;
    o->bytes += (int64_t)o->b.len;
    if (o->threaded) {
        int e = gz_hand_over(o); /* o->b is now the buffer the compressor is done with */
        if (e)
            return out_fail(o, e);
    } else if (o->gz) {
        if (gzwrite(o->gz, o->b.buf, (unsigned)o->b.len) != (int)o->b.len)
            return out_fail(o, errno);
    } else if (fwrite(o->b.buf, 1, o->b.len, o->f) != o->b.len) {
        return out_fail(o, errno);
    }
    tt_buf_reset(&o->b);
    return 0;
}

/* the file the output goes to: <path>.tmp (a regular file, or none yet), or
 * the path itself when it is a device, a pipe or a link */
static int open_fd(struct xout *o)
{
    int fd, flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    if (tt__path_kind(o->path) == TT_PATH_OTHER) {
        if ((fd = open(o->path, flags, 0666)) < 0)
            return tt_error_set_at(TT_EIO, o->path, -1, "cannot write: %s", strerror(errno));
        return fd;
    }
    if (!(o->tmp = malloc(strlen(o->path) + 5)))
        return tt__oom();
    sprintf(o->tmp, "%s.tmp", o->path);
    if (tt__path_kind(o->tmp) == TT_PATH_OTHER)
        fd = tt_error_set_at(TT_EIO, o->tmp, -1, "exists and is not a regular file");
    else if ((o->tmp_slot = tt__partial_add(o->tmp)), /* before it exists: see fs.c */
             (fd = open(o->tmp, flags | O_NOFOLLOW, 0666)) < 0) {
        fd = tt_error_set_at(TT_EIO, o->path, -1, "cannot write: %s", strerror(errno));
        tt__partial_remove(o->tmp_slot);
        o->tmp_slot = -1;
    }
    if (fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
    }
    return fd;
}

static int open_stream(struct xout *o, const char *path, int gz)
{
    int fd;
    if (!strcmp(path, "-")) {
        if (!gz) {
            o->f = stdout;
            return 0;
        }
        fd = dup(STDOUT_FILENO);
    } else {
        fd = open_fd(o);
    }
    if (fd < 0)
        return fd < -1 ? fd : tt_error_set_at(TT_EIO, path, -1, "cannot write: %s", strerror(errno));
    /* level 1: a timeline is mostly repeated keys, and an export of a
     * 1 GB trace should not wait on the compressor */
    if (gz ? !(o->gz = gzdopen(fd, "wb1")) : !(o->f = fdopen(fd, "wb"))) {
        close(fd);
        if (o->tmp)
            unlink(o->tmp);
        tt__partial_remove(o->tmp_slot);
        o->tmp_slot = -1;
        return tt_error_set_at(TT_EIO, path, -1, "cannot write: %s", strerror(errno));
    }
    if (o->gz) {
        gzbuffer(o->gz, 1 << 17);
        gz_start(o);
    }
    return 0;
}

int xo_open(struct xout *o, const char *path, int gz)
{
    int rc;
    memset(o, 0, sizeof(*o));
    o->tmp_slot = -1;
    tt_buf_init(&o->b);
    tt_buf_init(&o->full);
    o->path = path;
    rc = tt_buf_grow(&o->b, 2 * FLUSH_AT) < 0 ? tt__oom()
                                              : open_stream(o, path, gz);
    if (rc < 0) {
        free(o->tmp);
        tt_buf_release(&o->b);
        tt_buf_release(&o->full);
    }
    return rc;
}

/* finish the output: on success (rc 0) rename the .tmp into place, else
 * remove it; returns rc or the write error */
int xo_close(struct xout *o, int rc)
{
    struct stat st;
    if (rc == 0)
        xo_flush(o);
    gz_join(o);
    if (o->gz) {
        int z = gzclose(o->gz);
        if (z != Z_OK)
            out_fail(o, z == Z_ERRNO ? errno : EIO);
    } else if (o->f && o->f != stdout) {
        if (fclose(o->f) != 0)
            out_fail(o, errno);
    } else if (o->f && fflush(o->f) != 0) {
        out_fail(o, errno);
    }
    if (rc == 0 && o->err)
        rc = tt_error_set_at(TT_EIO, o->path, -1, "write failed: %s", strerror(o->err));
    if (o->tmp) {
        if (rc == 0 && stat(o->tmp, &st) == 0)
            o->bytes = (int64_t)st.st_size;
        if (rc == 0 && rename(o->tmp, o->path) != 0)
            rc = tt_error_set_at(TT_EIO, o->path, -1, "cannot write: %s", strerror(errno));
        if (rc != 0)
            unlink(o->tmp);
        tt__partial_remove(o->tmp_slot);
        free(o->tmp);
    }
    tt_buf_release(&o->b);
    tt_buf_release(&o->full);
    return rc;
}

void xb_u64(tt_buf *b, uint64_t u)
{
    char t[24];
    size_t k = sizeof(t);
    do {
        t[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    bput(b, t + k, sizeof(t) - k);
}

void xb_i64(tt_buf *b, int64_t v)
{
    if (v < 0) {
        BPUTS(b, "-");
        xb_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        xb_u64(b, (uint64_t)v);
    }
}

/* ns as exact decimal us: 1500 -> 1.5, 2000 -> 2, -1 -> -0.001 */
void xb_us(tt_buf *b, int64_t ns)
{
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(u % 1000);
    if (ns < 0)
        BPUTS(b, "-");
    xb_u64(b, u / 1000);
    if (frac) {
        char t[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                      (char)('0' + frac % 10) };
        size_t n = 4;
        while (t[n - 1] == '0')
            n--;
        bput(b, t, n);
    }
}

void xo_str(struct xout *o, const char *s)
{
    tt_buf_add_json_string(&o->b, s, strlen(s));
}
