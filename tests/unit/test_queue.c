/*
 * tests/unit/test_queue.c - tt__queue (common/queue.h): order, blocking on
 * both sides, close and drain, the first error winning, cancellation waking
 * a blocked put or get, wake batching, and the two-queue buffer rotation the
 * reader and the ingest use. scripts/test.sh runs it under ThreadSanitizer.
 */
#include "common/compat.h"
#include "common/queue.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <unistd.h>

#define ITEM(i) ((void *)(uintptr_t)(i))
#define NUM(p) ((uintptr_t)(p))

/* a thread doing one put or get; `finished` says it returned */
struct op {
    tt__queue *q;
    void *item;
    int rc;
    int finished;
    tt_error err; /* its last error when it returned */
};

static void *put_main(void *arg)
{
    struct op *o = arg;
    o->rc = tt__queue_put(o->q, o->item);
    o->err = *tt_error_last();
    __atomic_store_n(&o->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *get_main(void *arg)
{
    struct op *o = arg;
    o->rc = tt__queue_get(o->q, &o->item);
    o->err = *tt_error_last();
    __atomic_store_n(&o->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int finished(struct op *o)
{
    return __atomic_load_n(&o->finished, __ATOMIC_ACQUIRE);
}

/* wait (up to 10 s) until a thread sleeps in the queue's put or get */
static void wait_blocked(tt__queue *q, int in_put)
{
    int i;
    for (i = 0; i < 10000; i++) {
        int n;
        pthread_mutex_lock(&q->mu);
        n = in_put ? q->put_waits : q->get_waits;
        pthread_mutex_unlock(&q->mu);
        if (n)
            return;
        usleep(1000);
    }
    cr_assert_fail("no thread blocked in %s", in_put ? "put" : "get");
}

Test(queue, fifo_then_close_and_drain)
{
    tt__queue q;
    void *v;
    int i;
    cr_assert_eq(tt__queue_init(&q, 4), 0);
    for (i = 1; i <= 3; i++)
        cr_assert_eq(tt__queue_put(&q, ITEM(i)), 0);
    tt__queue_close(&q);
    for (i = 1; i <= 3; i++) {
        cr_assert_eq(tt__queue_get(&q, &v), 1);
        cr_assert_eq(NUM(v), (uintptr_t)i);
    }
    cr_assert_eq(tt__queue_get(&q, &v), 0);
    cr_assert_null(v);
    cr_assert_eq(tt__queue_get(&q, &v), 0, "stays closed and drained");
    cr_assert_eq(tt__queue_tryget(&q, &v), 0);
    tt__queue_destroy(&q);
}

Test(queue, wraps_around_its_slots)
{
    tt__queue q;
    void *v;
    int i;
    cr_assert_eq(tt__queue_init(&q, 3), 0);
    for (i = 1; i <= 20; i++) {
        cr_assert_eq(tt__queue_put(&q, ITEM(i)), 0);
        if (i >= 2) {
            cr_assert_eq(tt__queue_tryget(&q, &v), 1);
            cr_assert_eq(NUM(v), (uintptr_t)(i - 1));
        }
    }
    cr_assert_eq(tt__queue_tryget(&q, &v), 1);
    cr_assert_eq(NUM(v), 20);
    cr_assert_eq(tt__queue_tryget(&q, &v), 0, "empty and open");
    tt__queue_destroy(&q);
}

Test(queue, put_blocks_while_full)
{
    tt__queue q;
    struct op o = { .q = &q, .item = ITEM(2) };
    pthread_t th;
    void *v;
    cr_assert_eq(tt__queue_init(&q, 1), 0);
    cr_assert_eq(tt__queue_put(&q, ITEM(1)), 0);
    cr_assert_eq(pthread_create(&th, NULL, put_main, &o), 0);
    wait_blocked(&q, 1);
    cr_assert_not(finished(&o), "a put into a full queue waits");
    cr_assert_eq(tt__queue_get(&q, &v), 1);
    cr_assert_eq(NUM(v), 1);
    pthread_join(th, NULL);
    cr_assert_eq(o.rc, 0);
    cr_assert_eq(tt__queue_get(&q, &v), 1);
    cr_assert_eq(NUM(v), 2);
    tt__queue_destroy(&q);
}

Test(queue, get_blocks_while_empty)
{
    tt__queue q;
    struct op o = { .q = &q };
    pthread_t th;
    cr_assert_eq(tt__queue_init(&q, 2), 0);
    cr_assert_eq(pthread_create(&th, NULL, get_main, &o), 0);
    wait_blocked(&q, 0);
    cr_assert_not(finished(&o), "a get from an empty queue waits");
    cr_assert_eq(tt__queue_put(&q, ITEM(7)), 0);
    pthread_join(th, NULL);
    cr_assert_eq(o.rc, 1);
    cr_assert_eq(NUM(o.item), 7);
    tt__queue_destroy(&q);
}

Test(queue, close_wakes_a_blocked_get)
{
    tt__queue q;
    struct op o = { .q = &q, .item = ITEM(99) };
    pthread_t th;
    cr_assert_eq(tt__queue_init(&q, 2), 0);
    cr_assert_eq(pthread_create(&th, NULL, get_main, &o), 0);
    wait_blocked(&q, 0);
    tt__queue_close(&q);
    pthread_join(th, NULL);
    cr_assert_eq(o.rc, 0);
    cr_assert_null(o.item);
    tt__queue_destroy(&q);
}

Test(queue, first_error_wins)
{
    tt__queue q;
    void *v;
    cr_assert_eq(tt__queue_init(&q, 4), 0);
    cr_assert_eq(tt__queue_put(&q, ITEM(1)), 0);
    tt_error_set_at(TT_EIO, "trace.json", 12, "disk gone");
    cr_assert_eq(tt__queue_fail(&q, TT_EIO), TT_EIO);
    tt_error_set(TT_EDB, "database locked");
    cr_assert_eq(tt__queue_fail(&q, TT_EDB), TT_EIO, "the first error is kept");
    cr_assert_eq(tt_error_last()->code, TT_EDB, "fail leaves the caller's error alone");
    cr_assert_str_eq(tt_error_last()->message, "database locked");

    tt_error_clear();
    cr_assert_eq(tt__queue_get(&q, &v), TT_EIO, "an item queued is not handed out");
    cr_assert_null(v);
    cr_assert_eq(tt_error_last()->code, TT_EIO);
    cr_assert_str_eq(tt_error_last()->message, "disk gone");
    cr_assert_str_eq(tt_error_last()->source, "trace.json");
    cr_assert_eq(tt_error_last()->offset, 12);
    tt_error_clear();
    cr_assert_eq(tt__queue_put(&q, ITEM(2)), TT_EIO);
    cr_assert_str_eq(tt_error_last()->message, "disk gone");
    cr_assert_eq(tt__queue_tryget(&q, &v), TT_EIO);
    tt__queue_close(&q); /* a failed queue stays failed */
    cr_assert_eq(tt__queue_get(&q, &v), TT_EIO);

    /* what is left, for the owner to free */
    cr_assert_eq(tt__queue_drain(&q, &v), 1);
    cr_assert_eq(NUM(v), 1);
    cr_assert_eq(tt__queue_drain(&q, &v), 0);
    tt__queue_destroy(&q);
}

Test(queue, fail_without_a_matching_error_says_the_code)
{
    tt__queue q;
    void *v;
    cr_assert_eq(tt__queue_init(&q, 1), 0);
    tt_error_clear();
    cr_assert_eq(tt__queue_fail(&q, TT_ECANCELED), TT_ECANCELED);
    cr_assert_eq(tt__queue_get(&q, &v), TT_ECANCELED);
    cr_assert_str_eq(tt_error_last()->message, tt_strerror(TT_ECANCELED));
    tt__queue_destroy(&q);
}

Test(queue, cancel_wakes_a_blocked_put)
{
    tt__queue q;
    struct op o = { .q = &q, .item = ITEM(2) };
    pthread_t th;
    cr_assert_eq(tt__queue_init(&q, 1), 0);
    cr_assert_eq(tt__queue_put(&q, ITEM(1)), 0);
    cr_assert_eq(pthread_create(&th, NULL, put_main, &o), 0);
    wait_blocked(&q, 1);
    tt_error_set(TT_ECANCELED, "stopped by the consumer");
    tt__queue_fail(&q, TT_ECANCELED);
    pthread_join(th, NULL);
    cr_assert_eq(o.rc, TT_ECANCELED);
    cr_assert_str_eq(o.err.message, "stopped by the consumer",
                     "the blocked thread sees the failing thread's message");
    tt__queue_destroy(&q);
}

Test(queue, cancel_wakes_a_blocked_get)
{
    tt__queue q;
    struct op o = { .q = &q };
    pthread_t th;
    cr_assert_eq(tt__queue_init(&q, 1), 0);
    cr_assert_eq(pthread_create(&th, NULL, get_main, &o), 0);
    wait_blocked(&q, 0);
    tt__queue_fail(&q, TT_ECANCELED);
    pthread_join(th, NULL);
    cr_assert_eq(o.rc, TT_ECANCELED);
    cr_assert_eq(o.err.code, TT_ECANCELED);
    tt__queue_destroy(&q);
}

Test(queue, init_and_destroy_edges)
{
    tt__queue q, zeroed;
    cr_assert_eq(tt__queue_init(&q, 0), 0);
    cr_assert_eq(q.cap, 1, "at least one slot");
    tt__queue_set_wake(&q, 5);
    cr_assert_eq(q.wake, 1, "no more than the slots");
    tt__queue_destroy(&q);
    tt__queue_destroy(&q); /* twice: nothing */
    memset(&zeroed, 0, sizeof(zeroed));
    tt__queue_destroy(&zeroed);
}

/* ---- threads streaming through the queue ---- */

#define NITEMS 20000

struct stream {
    tt__queue *full, *empty;
    int rc;
};

static void *producer_main(void *arg)
{
    struct stream *s = arg;
    uintptr_t i;
    for (i = 1; i <= NITEMS; i++) {
        if ((s->rc = tt__queue_put(s->full, ITEM(i))) < 0)
            break;
    }
    tt__queue_close(s->full);
    return NULL;
}

Test(queue, one_producer_one_consumer_keep_order)
{
    tt__queue q;
    struct stream s = { .full = &q };
    pthread_t th;
    uintptr_t want = 1;
    void *v;
    cr_assert_eq(tt__queue_init(&q, 3), 0);
    cr_assert_eq(pthread_create(&th, NULL, producer_main, &s), 0);
    while (tt__queue_get(&q, &v) == 1)
        cr_assert_eq(NUM(v), want++);
    pthread_join(th, NULL);
    cr_assert_eq(want, NITEMS + 1);
    cr_assert_eq(s.rc, 0);
    tt__queue_destroy(&q);
}

/* the reader's and the ingest's pattern: buffers go round a full and an
 * empty queue; each carries a sequence number the consumer checks */
struct buf {
    uintptr_t seq;
    char data[64];
};

static void *rotate_main(void *arg)
{
    struct stream *s = arg;
    uintptr_t seq;
    void *v;
    for (seq = 1; seq <= NITEMS; seq++) {
        struct buf *b;
        if ((s->rc = tt__queue_get(s->empty, &v)) != 1)
            break;
        b = v;
        b->seq = seq;
        memset(b->data, (int)(seq & 0x7f), sizeof(b->data));
        if ((s->rc = tt__queue_put(s->full, b)) < 0)
            break;
    }
    tt__queue_close(s->full);
    return NULL;
}

static void rotate(unsigned nbuf, unsigned wake, uintptr_t stop_at)
{
    tt__queue full, empty;
    struct buf *bufs = calloc(nbuf, sizeof(*bufs));
    struct stream s = { .full = &full, .empty = &empty };
    pthread_t th;
    uintptr_t want = 1;
    unsigned i;
    void *v;
    cr_assert_eq(tt__queue_init(&full, nbuf), 0);
    cr_assert_eq(tt__queue_init(&empty, nbuf), 0);
    tt__queue_set_wake(&full, wake);
    tt__queue_set_wake(&empty, wake);
    for (i = 0; i < nbuf; i++)
        cr_assert_eq(tt__queue_put(&empty, &bufs[i]), 0);
    cr_assert_eq(pthread_create(&th, NULL, rotate_main, &s), 0);
    while (tt__queue_get(&full, &v) == 1) {
        struct buf *b = v;
        cr_assert_eq(b->seq, want);
        cr_assert_eq(b->data[63], (char)(want & 0x7f));
        if (want++ == stop_at) { /* the consumer stops early */
            tt__queue_fail(&empty, TT_ECANCELED);
            tt__queue_fail(&full, TT_ECANCELED);
            break;
        }
        cr_assert_eq(tt__queue_put(&empty, b), 0);
    }
    pthread_join(th, NULL);
    if (stop_at) {
        cr_assert_eq(want, stop_at + 1);
        cr_assert_eq(s.rc, TT_ECANCELED, "the producer saw the cancel");
    } else {
        cr_assert_eq(want, NITEMS + 1);
        cr_assert_eq(s.rc, 0);
    }
    tt__queue_destroy(&full);
    tt__queue_destroy(&empty);
    free(bufs);
}

Test(queue, two_queue_rotation)
{
    rotate(4, 1, 0);
}

Test(queue, two_queue_rotation_with_wake_batching)
{
    /* 16 buffers, wake at 4: more than 2 x 4 - 1 in the loop */
    rotate(16, 4, 0);
}

Test(queue, two_queue_rotation_cancelled_midway)
{
    rotate(4, 1, 777);
    rotate(16, 4, 5000);
}
