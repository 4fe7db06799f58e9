/*
 * common/log.c - tt_set_log and tt__log: the callback and its context under
 * a read-write lock (messages from several threads at once; tt_set_log waits
 * for the messages being delivered), the lowest level delivered also in an
 * atomic so that a message nobody wants costs one load.
 */
#include "common/compat.h"
#include "common/log.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>

static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static tt_log_fn log_fn;  /* under log_lock */
static void *log_ctx;     /* under log_lock */
static int log_level;     /* under log_lock */
static int log_min = INT_MAX; /* __atomic: log_level, INT_MAX without log_fn */

void tt_set_log(tt_log_fn fn, void *ctx, int level)
{
    pthread_rwlock_wrlock(&log_lock);
    log_fn = fn;
    log_ctx = fn ? ctx : NULL;
    log_level = level;
    __atomic_store_n(&log_min, fn ? level : INT_MAX, __ATOMIC_RELAXED);
    pthread_rwlock_unlock(&log_lock);
}

int tt__log_enabled(int level)
{
    return level >= __atomic_load_n(&log_min, __ATOMIC_RELAXED);
}

void tt__log(int level, const char *topic, const char *fmt, ...)
{
    char msg[1024];
    int n;
    va_list ap;
    if (!tt__log_enabled(level))
        return;
    n = snprintf(msg, sizeof(msg), "%s: ", topic);
    if (n < 0 || (size_t)n >= sizeof(msg))
        n = 0;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    pthread_rwlock_rdlock(&log_lock);
    if (log_fn && level >= log_level) /* set again since the check above? */
        log_fn(log_ctx, level, topic, msg);
    pthread_rwlock_unlock(&log_lock);
}
