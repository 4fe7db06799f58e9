/*
 * analyze/averages/averages_sort.c - the order of the averages pass: records of every
 * table in torch's order (ts, end DESC, kind, id), sorted in memory in runs
 * of RUN_RECS (full runs spilled to a temporary file by a helper thread
 * while the next fills) and merged: bounded memory, and about twice as fast
 * as SQLite's own sorter on the same rows.
 */
#include "analyze/averages/averages_state.h"

#include <errno.h>
#include <string.h>

static int arec_cmp(const void *pa, const void *pb)
{
    const struct arec *x = pa, *y = pb;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    /* an op before its device work */
    return (x->flags & AREC_DEVICE_WORK) - (y->flags & AREC_DEVICE_WORK);
}

#define RUN_RECS (256 * 1024) /* records sorted in memory at a time (16 MiB) */

/* TT_AVG_RUN_RECS=N (N >= 2) shrinks the runs, for tests of the merge */
static size_t run_recs(void)
{
    const char *v = getenv("TT_AVG_RUN_RECS");
    long n = v ? atol(v) : 0;
    return n >= 2 && n < RUN_RECS ? (size_t)n : RUN_RECS;
}
#define MERGE_BUF 512         /* records read ahead per spilled run */

static int is_sorted(const struct arec *a, size_t n)
{
    size_t i;
    for (i = 1; i < n; i++) {
        if (arec_cmp(&a[i - 1], &a[i]) > 0)
            return 0;
    }
    return 1;
}

static int spill_run(struct runs *r, struct arec *a, size_t n)
{
    if (!is_sorted(a, n)) /* traces are mostly in time order already */
        TT_QSORT(a, n, sizeof(*a), arec_cmp);
    if (!r->spill && !(r->spill = tt__tmpfile()))
        return TT_EIO; /* said which directory, and why */
    if (TT_ALLOC_GROW(r->run_len, r->nruns + 1, r->arun) < 0)
        return tt__oom();
    if (fwrite(a, sizeof(*a), n, r->spill) != n)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    r->run_len[r->nruns++] = n;
    return 0;
}

static void *spill_main(void *arg)
{
    struct runs *r = arg;
    r->th_rc = spill_run(r, r->full, r->nfull);
    if (r->th_rc < 0)
        r->th_err = *tt_error_last();
    return NULL;
}

/* wait for the helper; its error becomes the caller's */
static int spill_wait(struct runs *r)
{
    if (!r->busy)
        return 0;
    pthread_join(r->th, NULL);
    r->busy = 0;
    if (r->th_rc < 0)
        return tt_error_set_at(r->th_err.code ? r->th_err.code : r->th_rc, r->th_err.source,
                               r->th_err.offset, "%s", r->th_err.message);
    return 0;
}

static int runs_full(struct runs *r)
{
    struct arec *t;
    int rc;
    if ((rc = spill_wait(r)) < 0)
        return rc;
    if (!r->full && !(r->full = malloc(sizeof(*r->full) * r->cap)))
        return tt__oom();
    t = r->full;
    r->full = r->buf;
    r->nfull = r->n;
    r->buf = t;
    r->n = 0;
    if (pthread_create(&r->th, NULL, spill_main, r) == 0) {
        r->busy = 1;
        return 0;
    }
    return spill_run(r, r->full, r->nfull); /* no thread: here */
}

int tt__avg_runs_add(struct runs *r, const struct arec *e)
{
    int rc;
    if (!r->buf) {
        r->cap = run_recs();
        if (!(r->buf = malloc(sizeof(*r->buf) * r->cap)))
            return tt__oom();
    }
    if (r->n == r->cap && (rc = runs_full(r)) < 0)
        return rc;
    r->buf[r->n++] = *e;
    return 0;
}

void tt__avg_runs_release(struct runs *r)
{
    spill_wait(r);
    free(r->buf);
    free(r->full);
    free(r->run_len);
    if (r->spill)
        fclose(r->spill);
    memset(r, 0, sizeof(*r));
}


static const struct arec *cur_rec(const struct merge *m, size_t i)
{
    return &m->c[i].buf[m->c[i].pos];
}

static int cursor_fill(struct merge *m, struct cursor *c)
{
    size_t want = c->left < MERGE_BUF ? c->left : MERGE_BUF;
    c->pos = c->n = 0;
    if (!want)
        return 0;
    if (fseeko(m->r->spill, (off_t)c->off, SEEK_SET) != 0 ||
        fread(c->buf, sizeof(*c->buf), want, m->r->spill) != want)
        return tt_error_set(TT_EIO, "cannot read a temporary file");
    c->n = want;
    c->left -= want;
    c->off += (int64_t)(want * sizeof(*c->buf));
    return 0;
}

static void merge_down(struct merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, rr = l + 1, k = i;
        if (l < m->nheap && arec_cmp(cur_rec(m, m->heap[l]), cur_rec(m, m->heap[k])) < 0)
            k = l;
        if (rr < m->nheap && arec_cmp(cur_rec(m, m->heap[rr]), cur_rec(m, m->heap[k])) < 0)
            k = rr;
        if (k == i)
            break;
        {
            size_t t = m->heap[i];
            m->heap[i] = m->heap[k];
            m->heap[k] = t;
        }
        i = k;
    }
}

int tt__avg_merge_start(struct merge *m, struct runs *r)
{
    size_t i, nspill;
    int64_t off = 0;
    int rc;
    memset(m, 0, sizeof(*m));
    m->r = r;
    if ((rc = spill_wait(r)) < 0) /* before counting: it may add a run */
        return rc;
    nspill = r->nruns;
    if (r->n && !is_sorted(r->buf, r->n))
        TT_QSORT(r->buf, r->n, sizeof(*r->buf), arec_cmp);
    m->c = calloc(nspill + 1, sizeof(*m->c));
    m->heap = calloc(nspill + 1, sizeof(*m->heap));
    if (!m->c || !m->heap)
        return tt__oom();
    if (r->spill)
        fflush(r->spill);
    for (i = 0; i < nspill; i++) {
        struct cursor *c = &m->c[i];
        c->buf = malloc(sizeof(*c->buf) * MERGE_BUF);
        if (!c->buf)
            return tt__oom();
        c->left = r->run_len[i];
        c->off = off;
        off += (int64_t)(r->run_len[i] * sizeof(*c->buf));
        if ((rc = cursor_fill(m, c)) < 0)
            return rc;
    }
    m->c[nspill].buf = r->buf; /* the last run, in memory */
    m->c[nspill].n = r->n;
    m->nc = nspill + 1;
    for (i = 0; i < m->nc; i++) {
        if (m->c[i].n)
            m->heap[m->nheap++] = i;
    }
    for (i = m->nheap / 2; i-- > 0;)
        merge_down(m, i);
    return 0;
}

/* the next record in order into *out: 1, or 0 at the end, or an error */
int tt__avg_merge_next(struct merge *m, struct arec *out)
{
    struct cursor *c;
    int rc;
    if (!m->nheap)
        return 0;
    c = &m->c[m->heap[0]];
    *out = c->buf[c->pos++];
    if (c->pos == c->n) {
        if (c->buf != m->r->buf && (rc = cursor_fill(m, c)) < 0)
            return rc;
        if (c->pos == c->n) {
            m->heap[0] = m->heap[--m->nheap];
        }
    }
    if (m->nheap)
        merge_down(m, 0);
    return 1;
}

void tt__avg_merge_release(struct merge *m)
{
    size_t i;
    for (i = 0; i < m->nc; i++) {
        if (m->c[i].buf != m->r->buf)
            free(m->c[i].buf);
    }
    free(m->c);
    free(m->heap);
    memset(m, 0, sizeof(*m));
}

