/*
 * capture/preload/malloc_hook.c - libtracetool_capture_malloc.so: malloc, free,
 * calloc and realloc interposed (LD_PRELOAD) so an unmodified program's heap
 * shows as [memory] events (device cpu) while a profile records.
 *
 *   TT_CAPTURE_DIR=traces LD_PRELOAD=libtracetool_capture_malloc.so prog
 *
 * With TT_CAPTURE_DIR set, the library starts a profile when it is loaded
 * (worker TT_CAPTURE_WORKER, default <hostname>_<pid>; TT_CAPTURE_GZIP=1 for
 * .gz) that is written at exit(); without it, it only adds the heap's events
 * to the profile the program runs itself. With the injection library
 * (libtracetool_inject.so, `tracetool record --memory`) that profile is the
 * injection's: TT_CAPTURE_INJECT set, or InitializeInjection in the process,
 * and this one starts none (one profile per process).
 *
 * Bytes are the allocator's usable size of each block (malloc_usable_size),
 * on the allocation and on its free, so the events of a block balance; the
 * totals are the running sum of those. Calls made while the library itself
 * works (a thread-local guard) go straight to glibc: the library never
 * records itself, and nothing recurses.
 */
#include "capture/src/capture_internal.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

/* the four functions, under names of their own in C; their symbols are the
 * C library's names (the interposition) */
TT_CAP_API void *tt_cap__malloc(size_t n) __asm__("malloc");
TT_CAP_API void *tt_cap__calloc(size_t a, size_t b) __asm__("calloc");
TT_CAP_API void tt_cap__free(void *p) __asm__("free");
TT_CAP_API void *tt_cap__realloc(void *old, size_t n) __asm__("realloc");

static _Thread_local int in_hook __attribute__((tls_model("initial-exec")));
static atomic_llong live_bytes;

static void event(void *p, int64_t bytes)
{
    int64_t total = atomic_fetch_add(&live_bytes, bytes) + bytes;
    tt_cap_mem_event(p, bytes, total, total, TT_CAP_DEV_CPU, -1);
}

#define RECORDING() (__atomic_load_n(&tt_cap__recording, __ATOMIC_RELAXED) && !in_hook)

void *tt_cap__malloc(size_t n)
{
    void *p = __libc_malloc(n);
    if (p && RECORDING()) {
        in_hook = 1;
        event(p, (int64_t)malloc_usable_size(p));
        in_hook = 0;
    }
    return p;
}

void *tt_cap__calloc(size_t a, size_t b)
{
    void *p = __libc_calloc(a, b);
    if (p && RECORDING()) {
        in_hook = 1;
        event(p, (int64_t)malloc_usable_size(p));
        in_hook = 0;
    }
    return p;
}

void tt_cap__free(void *p)
{
    if (p && RECORDING()) {
        in_hook = 1;
        event(p, -(int64_t)malloc_usable_size(p));
        in_hook = 0;
    }
    __libc_free(p);
}

void *tt_cap__realloc(void *old, size_t n)
{
    int64_t was = old && RECORDING() ? (int64_t)malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (RECORDING() && (p || n == 0)) {
        in_hook = 1;
        if (old && was)
            event(old, -was);
        if (p)
            event(p, (int64_t)malloc_usable_size(p));
        in_hook = 0;
    }
    return p;
}

/* a profile of its own when TT_CAPTURE_DIR says where */
__attribute__((constructor)) static void preload_start(void)
{
    const char *dir = getenv("TT_CAPTURE_DIR");
    tt_cap_config c;
    if (!dir || !*dir)
        return;
    /* the injection library starts the profile (maybe later, at cuInit) */
    if ((getenv("TT_CAPTURE_INJECT") && *getenv("TT_CAPTURE_INJECT")) ||
        dlsym(RTLD_DEFAULT, "InitializeInjection"))
        return;
    in_hook = 1;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = getenv("TT_CAPTURE_WORKER");
    c.use_gzip = getenv("TT_CAPTURE_GZIP") && !strcmp(getenv("TT_CAPTURE_GZIP"), "1");
    tt_cap_start(&c); /* a failure is logged; the program runs on */
    in_hook = 0;
}
