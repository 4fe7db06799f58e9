/*
 * common/queue.c - the bounded blocking FIFO of pointers (common/queue.h):
 * one mutex, a condition for each side, and a side is signalled only when a
 * thread waits there (and, with wake batching, once enough is ready).
 */
#include "common/compat.h"
#include "common/queue.h"

int tt__queue_init(tt__queue *q, unsigned cap)
{
    memset(q, 0, sizeof(*q));
    if (cap == 0)
        cap = 1;
    if (!(q->slot = malloc(sizeof(*q->slot) * cap)))
        return tt__oom();
    q->cap = cap;
    q->wake = 1;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->can_get, NULL);
    pthread_cond_init(&q->can_put, NULL);
    return 0;
}

void tt__queue_set_wake(tt__queue *q, unsigned n)
{
    q->wake = n < 1 ? 1 : n > q->cap ? q->cap : n;
}

void tt__queue_destroy(tt__queue *q)
{
    if (!q->slot)
        return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->can_get);
    pthread_cond_destroy(&q->can_put);
    free(q->slot);
    q->slot = NULL;
}

/*
 * The queue's error as the calling thread's last error. q->why is written
 * once, under the lock, before q->err is set; the caller saw q->err under
 * the lock, so reading it after the unlock races with nothing.
 */
static int raise_err(const tt__queue *q)
{
    return tt_error_set_at(q->err, q->why.source[0] ? q->why.source : NULL, q->why.offset,
                           "%s", q->why.message);
}

static void *take(tt__queue *q)
{
    void *item = q->slot[q->head];
    if (++q->head == q->cap)
        q->head = 0;
    q->n--;
    if (q->put_waits && q->cap - q->n >= q->wake)
        pthread_cond_signal(&q->can_put);
    return item;
}

int tt__queue_put(tt__queue *q, void *item)
{
    unsigned at;
    pthread_mutex_lock(&q->mu);
    while (q->n == q->cap && !q->err) {
        q->put_waits++;
        pthread_cond_wait(&q->can_put, &q->mu);
        q->put_waits--;
    }
    if (q->err) {
        pthread_mutex_unlock(&q->mu);
        return raise_err(q);
    }
    if (q->closed)
        TT_BUG("a put on a closed queue");
    at = q->head + q->n;
    q->slot[at >= q->cap ? at - q->cap : at] = item;
    q->n++;
    if (q->get_waits && q->n >= q->wake)
        pthread_cond_signal(&q->can_get);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int tt__queue_get(tt__queue *q, void **item)
{
    pthread_mutex_lock(&q->mu);
    while (q->n == 0 && !q->closed && !q->err) {
        q->get_waits++;
        pthread_cond_wait(&q->can_get, &q->mu);
        q->get_waits--;
    }
    if (q->err) {
        pthread_mutex_unlock(&q->mu);
        *item = NULL;
        return raise_err(q);
    }
    if (q->n == 0) { /* closed and drained */
        pthread_mutex_unlock(&q->mu);
        *item = NULL;
        return 0;
    }
    *item = take(q);
    pthread_mutex_unlock(&q->mu);
    return 1;
}

int tt__queue_tryget(tt__queue *q, void **item)
{
    int rc = 0;
    *item = NULL;
    pthread_mutex_lock(&q->mu);
    if (q->err) {
        pthread_mutex_unlock(&q->mu);
        return raise_err(q);
    }
    if (q->n) {
        *item = take(q);
        rc = 1;
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void tt__queue_close(tt__queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->can_get);
    pthread_mutex_unlock(&q->mu);
}

int tt__queue_fail(tt__queue *q, int err)
{
    int first;
    if (err >= 0)
        err = TT_ERROR;
    pthread_mutex_lock(&q->mu);
    if (!q->err) {
        const tt_error *e = tt_error_last();
        if (e->code == err) {
            q->why = *e;
        } else {
            q->why.code = err;
            snprintf(q->why.message, sizeof(q->why.message), "%s", tt_strerror(err));
            q->why.source[0] = '\0';
            q->why.offset = -1;
        }
        q->err = err;
        pthread_cond_broadcast(&q->can_get);
        pthread_cond_broadcast(&q->can_put);
    }
    first = q->err;
    pthread_mutex_unlock(&q->mu);
    return first;
}

int tt__queue_drain(tt__queue *q, void **item)
{
    int rc = 0;
    *item = NULL;
    if (!q->slot)
        return 0;
    pthread_mutex_lock(&q->mu);
    if (q->n) {
        *item = take(q);
        rc = 1;
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}
