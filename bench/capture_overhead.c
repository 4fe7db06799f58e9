/*
 * bench/capture_overhead.c - what a scope of libtracetool_capture costs, in
 * one run beside its yardsticks:
 *   empty loop; clock_gettime(CLOCK_MONOTONIC) alone; a scope (begin + end)
 *   with no profile running; a scope recorded; a mutex-per-event tracer
 *   (minitrace's design: a global mutex around each append to one array);
 *   NVTX3 push/pop with no tool attached (when the CUDA toolkit's headers are
 *   there: /usr/local/cuda/include/nvtx3); the allocations made by recorded
 *   scopes after warm-up (malloc counted); the write-out of a window as
 *   Kineto JSON (MB/s).
 *
 *   bench/capture_overhead.sh builds and runs it (RelWithDebInfo flags).
 * Prints one line per measurement: name, ns per scope (or MB/s).
 */
#define _GNU_SOURCE
#include "tracetool/capture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_NVTX3
#include <nvtx3/nvToolsExt.h>
#endif

/* ---- allocations counted (this program's malloc wraps glibc's) ---- */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static volatile long allocs;
void *count_malloc(size_t n) __asm__("malloc");
void *count_calloc(size_t a, size_t b) __asm__("calloc");
void *count_realloc(void *p, size_t n) __asm__("realloc");
void *count_malloc(size_t n)
{
    allocs++;
    return __libc_malloc(n);
}
void *count_calloc(size_t a, size_t b)
{
    allocs++;
    return __libc_calloc(a, b);
}
void *count_realloc(void *p, size_t n)
{
    allocs++;
    return __libc_realloc(p, n);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#define N 2000000
static volatile long sink;
static const tt_cap_srcloc bench_loc = { "aten::bench", __FILE__, __LINE__, TT_CAP_CPU_OP };

static double per_op(double t0, double t1, long n)
{
    return (t1 - t0) * 1e9 / (double)n;
}

/* minitrace's design: one global mutex and array, an append per event */
struct mt_event {
    const char *name;
    int64_t ts;
    char ph;
};
static pthread_mutex_t mt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mt_event *mt_buf;
static size_t mt_n;
static void mt_event(const char *name, char ph)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    pthread_mutex_lock(&mt_lock);
    if (mt_n < 2 * (size_t)N) {
        mt_buf[mt_n].name = name;
        mt_buf[mt_n].ts = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        mt_buf[mt_n].ph = ph;
        mt_n++;
    }
    pthread_mutex_unlock(&mt_lock);
}

static size_t window_bytes;
static double write_s;
static void ready(const tt_cap_trace *t, void *user)
{
    struct stat st;
    double t0 = now_s();
    tt_cap_write_trace(t, user, NULL);
    write_s = now_s() - t0;
    if (stat(user, &st) == 0)
        window_bytes = (size_t)st.st_size;
}

int main(void)
{
    tt_cap_config c;
    double t0, t1;
    long i, a0;
    char path[] = "/tmp/tt_capture_bench.json";
    struct timespec ts;
    /* empty loop */
    t0 = now_s();
    for (i = 0; i < N; i++)
        sink += i;
    t1 = now_s();
    printf("empty loop            %8.2f ns\n", per_op(t0, t1, N));
    t0 = now_s();
    for (i = 0; i < N; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += ts.tv_nsec;
    }
    t1 = now_s();
    printf("clock_gettime         %8.2f ns\n", per_op(t0, t1, N));
    /* a scope with no profile: one atomic load each end */
    t0 = now_s();
    for (i = 0; i < N; i++) {
        tt_cap_scope s = tt_cap_scope_begin(&bench_loc);
        sink += i;
        tt_cap_scope_end(&s);
    }
    t1 = now_s();
    printf("scope, not recording  %8.2f ns\n", per_op(t0, t1, N));
    /* recorded: warm up, then count allocations over N scopes */
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = path;
    c.max_bytes = (size_t)1 << 30;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    /* warm-up: a window as big as the measured one, written and given back */
    for (i = 0; i < N; i++) {
        tt_cap_scope s = tt_cap_scope_begin(&bench_loc);
        tt_cap_scope_end(&s);
    }
    tt_cap_stop();
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    a0 = allocs;
    t0 = now_s();
    for (i = 0; i < N; i++) {
        tt_cap_scope s = tt_cap_scope_begin(&bench_loc);
        sink += i;
        tt_cap_scope_end(&s);
    }
    t1 = now_s();
    printf("scope, recording      %8.2f ns\n", per_op(t0, t1, N));
    printf("allocations           %8ld (in %d recorded scopes, after a warm-up window)\n",
           allocs - a0, N);
    tt_cap_stop();
    printf("write-out             %8.1f MB/s (%zu bytes of Kineto JSON, %.3f s)\n",
           window_bytes / 1e6 / write_s, window_bytes, write_s);
    unlink(path);
    /* minitrace's design */
    mt_buf = malloc(2 * (size_t)N * sizeof(*mt_buf));
    t0 = now_s();
    for (i = 0; i < N; i++) {
        mt_event("aten::bench", 'B');
        sink += i;
        mt_event("aten::bench", 'E');
    }
    t1 = now_s();
    printf("mutex per event       %8.2f ns\n", per_op(t0, t1, N));
    free(mt_buf);
#ifdef HAVE_NVTX3
    t0 = now_s();
    for (i = 0; i < N; i++) {
        nvtxRangePushA("aten::bench");
        sink += i;
        nvtxRangePop();
    }
    t1 = now_s();
    printf("nvtx3 push/pop, no tool %6.2f ns\n", per_op(t0, t1, N));
#else
    printf("nvtx3 push/pop        (no /usr/local/cuda/include/nvtx3 here)\n");
#endif
    return 0;
}
