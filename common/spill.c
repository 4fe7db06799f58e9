/*
 * common/spill.c - fixed-size records kept in a bounded buffer that spills
 * sorted runs to an unlinked temporary file, read back merged (spill.h).
 *
 * The buffer grows up to the limit; when full, it is sorted (unless the
 * records are read as added) and written at the end of the file as a run.
 * Reading: with nothing written, the buffer itself (sorted once); else the
 * last run is written too, runs are merged SPILL_FANIN at a time into
 * longer runs appended to the file until at most SPILL_FANIN are left, and
 * those are merged as they are read (a binary heap of one read-ahead buffer
 * per run; equal records: the earlier run first). Memory is thus the limit
 * plus SPILL_FANIN read-ahead buffers, whatever the number of records.
 */
#include "common/compat.h"
#include "common/spill.h"

#include <sys/types.h>

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define SPILL_FANIN 64
#define SPILL_DEFAULT_BYTES ((size_t)4 << 20)
#define SPILL_AHEAD 1024 /* the most records read ahead per run */

static _Atomic size_t limit_bytes;
static _Atomic uint64_t stat_spilled;
static _Atomic size_t stat_peak;

void tt__spill_set_limit(size_t bytes)
{
    limit_bytes = bytes;
}

void tt__spill_stats(uint64_t *spilled, size_t *max_peak)
{
    *spilled = stat_spilled;
    *max_peak = stat_peak;
}

void tt__spill_stats_reset(void)
{
    stat_spilled = 0;
    stat_peak = 0;
}

struct run {
    uint64_t off, n; /* in records */
};

/* a run being read: the records left, a read-ahead buffer */
struct reader {
    uint64_t off, left;
    char *b;
    size_t nb, at;
};

/* a merge of some runs: readers and a heap of their indexes */
struct merge {
    struct reader *r;
    size_t n, *heap, nh;
};

struct tt__spill {
    size_t rec, cap;   /* record size, the most records in the buffer */
    tt__spill_cmp cmp;
    char *buf;         /* the records not written */
    size_t n, abuf;
    int fd;            /* -1 until the first run */
    uint64_t end;      /* records in the file */
    struct run *runs;
    size_t nruns, aruns;
    uint64_t count;
    size_t held, peak, ahead;
    int reading;
    size_t mem_at;     /* reading the buffer: the next record */
    struct merge m;    /* reading the file */
    size_t seq_run;    /* as added (cmp NULL): the run being read */
};

/* a spill's figures into the totals, as it is freed */
static void stats_add(const tt__spill *s)
{
    size_t had = stat_peak;
    if (s->fd >= 0)
        stat_spilled++;
    while (s->peak > had && !atomic_compare_exchange_weak(&stat_peak, &had, s->peak))
        ;
}

static void hold(tt__spill *s, size_t more)
{
    s->held += more;
    if (s->held > s->peak)
        s->peak = s->held;
}

tt__spill *tt__spill_new(size_t rec, tt__spill_cmp cmp)
{
    tt__spill *s = calloc(1, sizeof(*s));
    size_t lim = limit_bytes ? limit_bytes : SPILL_DEFAULT_BYTES;
    if (!s || !rec) {
        free(s);
        tt__oom();
        return NULL;
    }
    s->rec = rec;
    s->cmp = cmp;
    s->fd = -1;
    s->cap = lim / rec >= 2 ? lim / rec : 2;
    s->ahead = s->cap / SPILL_FANIN;
    if (s->ahead > SPILL_AHEAD)
        s->ahead = SPILL_AHEAD;
    if (!s->ahead)
        s->ahead = 1;
    return s;
}

static int io_error(const char *what)
{
    return tt_error_set(TT_EIO, "cannot %s a temporary file: %s", what,
                        errno ? strerror(errno) : "short transfer");
}

static int write_at(tt__spill *s, const void *p, size_t nrec, uint64_t at)
{
    const char *c = p;
    size_t len = nrec * s->rec;
    off_t off = (off_t)(at * s->rec);
    while (len) {
        ssize_t w;
        errno = 0;
        w = pwrite(s->fd, c, len, off);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return io_error("write");
        }
        c += w;
        len -= (size_t)w;
        off += w;
    }
    return 0;
}

static int read_at(tt__spill *s, void *p, size_t nrec, uint64_t at)
{
    char *c = p;
    size_t len = nrec * s->rec;
    off_t off = (off_t)(at * s->rec);
    while (len) {
        ssize_t r;
        errno = 0;
        r = pread(s->fd, c, len, off);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return io_error("read");
        }
        c += r;
        len -= (size_t)r;
        off += r;
    }
    return 0;
}

static int add_run(tt__spill *s, uint64_t off, uint64_t n)
{
    if (TT_ALLOC_GROW(s->runs, s->nruns + 1, s->aruns) < 0)
        return tt__oom();
    s->runs[s->nruns].off = off;
    s->runs[s->nruns++].n = n;
    return 0;
}

/* whether the buffer is in order already (rows mostly come by id) */
static int buffer_sorted(const tt__spill *s)
{
    size_t k;
    for (k = 1; k < s->n; k++)
        if (s->cmp(s->buf + (k - 1) * s->rec, s->buf + k * s->rec) > 0)
            return 0;
    return 1;
}

/* the buffer (sorted) as a run at the end of the file */
static int flush_buffer(tt__spill *s)
{
    char path[4096];
    int rc;
    if (!s->n)
        return 0;
    if (s->fd < 0) {
        if ((s->fd = tt__mkstemp(path, sizeof(path), "spill")) < 0)
            return TT_EIO;
        unlink(path);
    }
    if (s->cmp && !buffer_sorted(s))
        qsort(s->buf, s->n, s->rec, s->cmp);
    if ((rc = write_at(s, s->buf, s->n, s->end)) < 0 || (rc = add_run(s, s->end, s->n)) < 0)
        return rc;
    s->end += s->n;
    s->held -= s->n;
    s->n = 0;
    return 0;
}

int tt__spill_add(tt__spill *s, const void *rec)
{
    int rc;
    if (s->reading)
        return tt_error_set(TT_EINVALID, "records added to a spill being read");
    if (s->n == s->cap && (rc = flush_buffer(s)) < 0)
        return rc;
    if (s->n == s->abuf) {
        size_t cap = s->abuf ? 2 * s->abuf : 64;
        char *b;
        if (cap > s->cap)
            cap = s->cap;
        if (!(b = realloc(s->buf, cap * s->rec)))
            return tt__oom();
        s->buf = b;
        s->abuf = cap;
    }
    memcpy(s->buf + s->n * s->rec, rec, s->rec);
    s->n++;
    s->count++;
    hold(s, 1);
    return 0;
}

int tt__spill_put(tt__spill **s, size_t rec_size, tt__spill_cmp cmp, const void *rec)
{
    if (!*s && !(*s = tt__spill_new(rec_size, cmp)))
        return TT_ENOMEM;
    return tt__spill_add(*s, rec);
}

/* ---- merging ---- */

static void merge_free(tt__spill *s, struct merge *m)
{
    size_t k;
    for (k = 0; k < m->n; k++) {
        free(m->r[k].b);
        s->held -= s->ahead;
    }
    free(m->r);
    free(m->heap);
    memset(m, 0, sizeof(*m));
}

/* a reader's next buffer when it is used up: 1, 0 when the run is over */
static int refill(tt__spill *s, struct reader *r)
{
    size_t n;
    int rc;
    if (r->at < r->nb)
        return 1;
    if (!r->left)
        return 0;
    n = r->left < s->ahead ? (size_t)r->left : s->ahead;
    if ((rc = read_at(s, r->b, n, r->off)) < 0)
        return rc;
    r->off += n;
    r->left -= n;
    r->nb = n;
    r->at = 0;
    return 1;
}

static const void *head(const tt__spill *s, const struct merge *m, size_t i)
{
    const struct reader *r = &m->r[m->heap[i]];
    return r->b + r->at * s->rec;
}

static int less(const tt__spill *s, const struct merge *m, size_t i, size_t j)
{
    int c = s->cmp(head(s, m, i), head(s, m, j));
    return c < 0 || (c == 0 && m->heap[i] < m->heap[j]);
}

static void sift_down(const tt__spill *s, struct merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, best = i, t;
        if (l < m->nh && less(s, m, l, best))
            best = l;
        if (l + 1 < m->nh && less(s, m, l + 1, best))
            best = l + 1;
        if (best == i)
            return;
        t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

/* a merge of runs[0..n) (n >= 1) */
static int merge_init(tt__spill *s, struct merge *m, const struct run *runs, size_t n)
{
    size_t k;
    int rc;
    memset(m, 0, sizeof(*m));
    if (!(m->r = calloc(n, sizeof(*m->r))) || !(m->heap = malloc(n * sizeof(*m->heap)))) {
        free(m->r);
        return tt__oom();
    }
    for (k = 0; k < n; k++) {
        if (!(m->r[k].b = malloc(s->ahead * s->rec))) {
            merge_free(s, m);
            return tt__oom();
        }
        m->n++;
        hold(s, s->ahead);
        m->r[k].off = runs[k].off;
        m->r[k].left = runs[k].n;
        if ((rc = refill(s, &m->r[k])) < 0) {
            merge_free(s, m);
            return rc;
        }
        if (rc)
            m->heap[m->nh++] = k;
    }
    if (s->cmp)
        for (k = m->nh / 2; k-- > 0;)
            sift_down(s, m, k);
    return 0;
}

/* the least head of the merge into rec: 1, 0 when over, or an error */
static int merge_next(tt__spill *s, struct merge *m, void *rec)
{
    struct reader *r;
    int rc;
    if (!m->nh)
        return 0;
    r = &m->r[m->heap[0]];
    memcpy(rec, r->b + r->at * s->rec, s->rec);
    r->at++;
    if ((rc = refill(s, r)) < 0)
        return rc;
    if (!rc)
        m->heap[0] = m->heap[--m->nh];
    sift_down(s, m, 0);
    return 1;
}

/* runs[0..SPILL_FANIN) merged into one run at the end of the file */
static int merge_front(tt__spill *s)
{
    struct merge m;
    size_t n = 0;
    uint64_t off = s->end, total = 0;
    int rc;
    if ((rc = merge_init(s, &m, s->runs, SPILL_FANIN)) < 0)
        return rc;
    if (!s->buf && !(s->buf = malloc(s->ahead * s->rec)))
        rc = tt__oom();
    else
        hold(s, s->ahead);
    while (rc >= 0 && (rc = merge_next(s, &m, s->buf + n * s->rec)) == 1)
        if (++n == s->ahead) {
            rc = write_at(s, s->buf, n, off + total);
            total += n;
            n = 0;
        }
    if (rc == 0 && n)
        rc = write_at(s, s->buf, n, off + total);
    total += n;
    merge_free(s, &m);
    if (s->buf)
        s->held -= s->ahead;
    free(s->buf);
    s->buf = NULL;
    if (rc < 0)
        return rc;
    s->end += total;
    memmove(s->runs, s->runs + SPILL_FANIN, (s->nruns - SPILL_FANIN) * sizeof(*s->runs));
    s->nruns -= SPILL_FANIN;
    return add_run(s, off, total);
}

/* ---- reading ---- */

/* the adding is over: the buffer sorted in memory, or every run written
 * and at most SPILL_FANIN of them left */
static int finish_adding(tt__spill *s)
{
    int rc;
    s->reading = 1;
    if (s->fd < 0) {
        if (s->cmp && !buffer_sorted(s))
            qsort(s->buf, s->n, s->rec, s->cmp);
        return 0;
    }
    if ((rc = flush_buffer(s)) < 0)
        return rc;
    free(s->buf);
    s->buf = NULL;
    s->abuf = 0;
    while (s->cmp && s->nruns > SPILL_FANIN)
        if ((rc = merge_front(s)) < 0)
            return rc;
    return 0;
}

int tt__spill_rewind(tt__spill *s)
{
    int rc;
    if (!s)
        return 0;
    if (!s->reading && (rc = finish_adding(s)) < 0)
        return rc;
    s->mem_at = 0;
    s->seq_run = 0;
    merge_free(s, &s->m);
    if (s->fd < 0 || !s->nruns)
        return 0;
    /* as added: one run at a time; sorted: all of them merged */
    return merge_init(s, &s->m, s->runs, s->cmp ? s->nruns : 1);
}

int tt__spill_next(tt__spill *s, void *rec)
{
    int rc;
    if (!s)
        return 0;
    if (!s->reading)
        return tt_error_set(TT_EINVALID, "a spill read before its rewind");
    if (s->fd < 0) {
        if (s->mem_at >= s->n)
            return 0;
        memcpy(rec, s->buf + s->mem_at++ * s->rec, s->rec);
        return 1;
    }
    while ((rc = merge_next(s, &s->m, rec)) == 0 && !s->cmp && s->seq_run + 1 < s->nruns) {
        merge_free(s, &s->m);
        s->seq_run++;
        if ((rc = merge_init(s, &s->m, s->runs + s->seq_run, 1)) < 0)
            return rc;
    }
    return rc;
}

uint64_t tt__spill_count(const tt__spill *s)
{
    return s->count;
}

size_t tt__spill_peak(const tt__spill *s)
{
    return s->peak;
}

int tt__spill_spilled(const tt__spill *s)
{
    return s->fd >= 0;
}

void tt__spill_free(tt__spill *s)
{
    if (!s)
        return;
    stats_add(s);
    merge_free(s, &s->m);
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->runs);
    free(s);
}
