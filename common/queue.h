/*
 * common/queue.h - a bounded blocking FIFO of pointers between threads, which
 * also carries the end of the stream (close) and the first error (fail).
 * Internal to libtracetool.
 *
 * The one hand-off of the library's producer/consumer threads: the gzip
 * inflater (formats/source.c), the reader thread (formats/pipe.c) and the
 * ingest worker (store/ingest.c). A hand-off that rotates a fixed set of
 * buffers uses two queues: "full" (producer to consumer) and "empty" (the
 * buffers going back); a consumer that stops early fails both, which wakes a
 * producer blocked on either and makes its next put or get return the error.
 *
 * Any number of threads may put and get; the hand-offs above have one of
 * each. The queue holds pointers only: what they point to stays its owner's
 * (after the threads are joined, tt__queue_drain hands back what is left).
 */
#ifndef TT_COMMON_QUEUE_H
#define TT_COMMON_QUEUE_H

#include "tracetool/common.h"

#include <pthread.h>

typedef struct tt__queue {
    pthread_mutex_t mu;
    pthread_cond_t can_get, can_put;
    void **slot;       /* cap slots; the items are [head, head + n) modulo cap */
    unsigned cap, head, n;
    unsigned wake;     /* items (free slots) that wake a blocked get (put) */
    int get_waits, put_waits; /* threads blocked in get / put */
    int closed;        /* the producer is done */
    int err;           /* the first error (< 0), 0 if none */
    tt_error why;      /* its message, for the threads that see it later */
} tt__queue;

/* An empty queue of cap (>= 1) slots: 0, or TT_ENOMEM. */
int tt__queue_init(tt__queue *q, unsigned cap);
/*
 * Wake batching, for small items handed over at a high rate (set before the
 * threads start): a get blocked on an empty queue is woken once n items are
 * in (or on close / fail), a put blocked on a full queue once n slots are
 * free, so each side runs through a batch instead of waking for every item.
 * 1 (the default) wakes at once. Both ends of a two-queue loop may then
 * sleep at once only if fewer than 2n - 1 items are in the two queues: the
 * loop must carry more items than that beyond those its two ends hold.
 */
void tt__queue_set_wake(tt__queue *q, unsigned n);
/* Free the slots (not the items). A queue zeroed, or whose init failed, too. */
void tt__queue_destroy(tt__queue *q);

/*
 * Append item, blocking while the queue is full. 0, or the queue's error
 * once it failed (also set as the calling thread's last error); the item is
 * then not queued and stays the caller's. A put after close is a bug.
 */
int tt__queue_put(tt__queue *q, void *item);
/*
 * Take the oldest item, blocking while the queue is empty and open: 1 with
 * *item set, 0 once it is closed and drained, or the queue's error once it
 * failed (also the calling thread's last error; items still queued are not
 * handed out any more).
 */
int tt__queue_get(tt__queue *q, void **item);
/* tt__queue_get without blocking: 0 also when it is empty but open. */
int tt__queue_tryget(tt__queue *q, void **item);

/* The producer is done: gets return what is queued, then 0. */
void tt__queue_close(tt__queue *q);
/*
 * Stop the hand-off with err (< 0; cancellation is TT_ECANCELED): the first
 * error wins, every thread blocked in put or get wakes, and every later put
 * and get returns it. Its message is the calling thread's last error when
 * that has the same code, else tt_strerror(err); the calling thread's own
 * last error is left alone. Returns the queue's error (the first one).
 */
int tt__queue_fail(tt__queue *q, int err);

/* After the threads are joined: the items left, one a call, whatever the
 * queue's state (to free them). 1 with *item set, 0 when none is left. */
int tt__queue_drain(tt__queue *q, void **item);

#endif
