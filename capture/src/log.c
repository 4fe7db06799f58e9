/*
 * capture/src/log.c - failures: the last one of each thread
 * (tt_cap_last_error), and the log line each one gets (the configuration's
 * callback, else stderr). A
 * failure while a window records switches recording off: the program goes
 * on, the library records no more.
 */
#include "capture/src/capture_internal.h"

#include <stdarg.h>
#include <stdio.h>

static tt_cap_log_fn log_fn;
static void *log_user;
/* the calling thread's last failure (as errno): threads that fail at once
 * (8 concurrent tt_cap_start) each keep their own, without a race. The
 * default TLS model: 512 bytes of static TLS could exhaust what a library
 * loaded with dlopen (libtracetool_inject, by the CUDA driver) may have. */
static _Thread_local char last_error[512];

void tt_cap__set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
}

void tt_cap__log_to(tt_cap_log_fn fn, void *user)
{
    log_fn = fn;
    log_user = user;
}

void tt_cap__log(const char *msg)
{
    if (log_fn)
        log_fn(msg, log_user);
    else
        fprintf(stderr, "tracetool capture: %s\n", msg);
}

int tt_cap__fault_alloc; /* set by core.c; read by every allocation that can fail */

void tt_cap__log_fmt(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tt_cap__log(msg);
}

/* A failure: said once, and this profile records no more. */
void tt_cap__fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    __atomic_store_n(&tt_cap__recording, 0, __ATOMIC_SEQ_CST);
    tt_cap__log(last_error);
}

const char *tt_cap_last_error(void)
{
    return last_error;
}
