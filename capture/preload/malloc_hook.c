/*
 * capture/preload/malloc_hook.c - libtracetool_capture_malloc.so: the C
 * library's allocator interposed (LD_PRELOAD) so an unmodified program's
 * heap shows as [memory] events (device cpu) while a profile records:
 * malloc, calloc, realloc, reallocarray, free, and the aligned ones
 * (posix_memalign, aligned_alloc, memalign, valloc, pvalloc).
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
 * totals are the running sum of those. Only blocks whose allocation was
 * recorded are in the totals: a table of them (address -> bytes, in memory
 * of its own from mmap, never malloc) is looked up on each free, and a free
 * of a block it does not hold (allocated before the profile, while the
 * library worked, or by a path no interposer sees) is no event, so the
 * totals never go below 0. Calls made while the library itself works (a
 * thread-local guard) go straight to glibc: the library never records
 * itself, and nothing recurses.
 */
#include "capture/src/capture_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* the functions, under names of their own in C; their symbols are the C
 * library's names (the interposition) */
TT_CAP_API void *tt_cap__malloc(size_t n) __asm__("malloc");
TT_CAP_API void *tt_cap__calloc(size_t a, size_t b) __asm__("calloc");
TT_CAP_API void tt_cap__free(void *p) __asm__("free");
TT_CAP_API void *tt_cap__realloc(void *old, size_t n) __asm__("realloc");
TT_CAP_API void *tt_cap__reallocarray(void *old, size_t a, size_t b) __asm__("reallocarray");
TT_CAP_API int tt_cap__posix_memalign(void **out, size_t al, size_t n) __asm__("posix_memalign");
TT_CAP_API void *tt_cap__aligned_alloc(size_t al, size_t n) __asm__("aligned_alloc");
TT_CAP_API void *tt_cap__memalign(size_t al, size_t n) __asm__("memalign");
TT_CAP_API void *tt_cap__valloc(size_t n) __asm__("valloc");
TT_CAP_API void *tt_cap__pvalloc(size_t n) __asm__("pvalloc");

static _Thread_local int in_hook __attribute__((tls_model("initial-exec")));
static atomic_llong live_bytes;

#define RECORDING() (__atomic_load_n(&tt_cap__recording, __ATOMIC_RELAXED) && !in_hook)

/* ---- the blocks whose allocation was recorded: address -> bytes ----
 * Open addressing (linear probing, deletion by backward shift) in shards,
 * each under a mutex, its slots from mmap: nothing here calls malloc. */

#define SHARDS 64

struct slot {
    uintptr_t addr; /* 0: empty */
    int64_t bytes;
};

static struct shard {
    pthread_mutex_t lock;
    struct slot *s;
    size_t cap, n; /* cap: a power of two (0: none yet) */
} shards[SHARDS] = { [0 ... SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER } };

static atomic_long tracked; /* blocks in the table, all shards */

static uint64_t mix(uintptr_t a)
{
    uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static struct shard *shard_of(uintptr_t a)
{
    return &shards[(mix(a) >> 58) % SHARDS];
}

static struct slot *slots_new(size_t cap)
{
    void *m = mmap(NULL, cap * sizeof(struct slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m; /* zeroed: all empty */
}

/* the slot of a, or the empty one where it would go */
static struct slot *probe(struct shard *sh, uintptr_t a)
{
    size_t i = (size_t)mix(a) & (sh->cap - 1);
    while (sh->s[i].addr && sh->s[i].addr != a)
        i = (i + 1) & (sh->cap - 1);
    return &sh->s[i];
}

static int grow(struct shard *sh)
{
    size_t cap = sh->cap ? sh->cap * 2 : 1024, i, old = sh->cap;
    struct slot *s = slots_new(cap), *o = sh->s;
    if (!s)
        return -1;
    sh->s = s;
    sh->cap = cap;
    for (i = 0; i < old; i++)
        if (o[i].addr)
            *probe(sh, o[i].addr) = o[i];
    if (o)
        munmap(o, old * sizeof(struct slot));
    return 0;
}

/* a recorded allocation: 1 when held (*stale: the bytes of an entry at the
 * same address whose free was never seen, else 0), 0 when the table is full */
static int track_put(uintptr_t a, int64_t bytes, int64_t *stale)
{
    struct shard *sh = shard_of(a);
    struct slot *sl;
    int ok = 1;
    *stale = 0;
    pthread_mutex_lock(&sh->lock);
    if ((sh->n + 1) * 2 > sh->cap && grow(sh) < 0) {
        ok = 0;
    } else {
        sl = probe(sh, a);
        if (sl->addr) {
            *stale = sl->bytes;
        } else {
            sl->addr = a;
            sh->n++;
            atomic_fetch_add(&tracked, 1);
        }
        sl->bytes = bytes;
    }
    pthread_mutex_unlock(&sh->lock);
    return ok;
}

/* a block freed: its recorded bytes (taken out of the table), or 0 */
static int64_t track_take(uintptr_t a)
{
    struct shard *sh = shard_of(a);
    struct slot *sl;
    int64_t bytes = 0;
    size_t i, j, k;
    if (!a || atomic_load_explicit(&tracked, memory_order_relaxed) == 0)
        return 0;
    pthread_mutex_lock(&sh->lock);
    if (sh->cap && (sl = probe(sh, a))->addr) {
        bytes = sl->bytes;
        /* backward shift: the entries after it that probed past it move up */
        i = (size_t)(sl - sh->s);
        for (j = (i + 1) & (sh->cap - 1); sh->s[j].addr; j = (j + 1) & (sh->cap - 1)) {
            k = (size_t)mix(sh->s[j].addr) & (sh->cap - 1);
            if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
                sh->s[i] = sh->s[j];
                i = j;
            }
        }
        sh->s[i].addr = 0;
        sh->s[i].bytes = 0;
        sh->n--;
        atomic_fetch_sub(&tracked, 1);
    }
    pthread_mutex_unlock(&sh->lock);
    return bytes;
}

/* A fork()ed child records nothing of its parent's: it forgets the table
 * (another thread may have held, or been changing, a shard at the fork), so
 * the parent's blocks are no events there, as if allocated before a profile. */
static void fork_child(void)
{
    int i;
    for (i = 0; i < SHARDS; i++) {
        pthread_mutex_init(&shards[i].lock, NULL);
        if (shards[i].s)
            munmap(shards[i].s, shards[i].cap * sizeof(struct slot));
        shards[i].s = NULL;
        shards[i].cap = shards[i].n = 0;
    }
    atomic_store(&tracked, 0);
    atomic_store(&live_bytes, 0);
}

/* ---- the events ---- */

static void event(void *p, int64_t bytes)
{
    int64_t total = atomic_fetch_add(&live_bytes, bytes) + bytes;
    tt_cap_mem_event(p, bytes, total, total, TT_CAP_DEV_CPU, -1);
}

/* a block allocated: recorded (and held in the table) while a profile records */
static void *allocated(void *p)
{
    int64_t bytes, stale;
    if (!p || !RECORDING())
        return p;
    in_hook = 1;
    bytes = (int64_t)malloc_usable_size(p);
    if (track_put((uintptr_t)p, bytes, &stale)) {
        if (stale) /* its free went by unseen (a path no interposer sees) */
            event(p, -stale);
        event(p, bytes);
    }
    in_hook = 0;
    return p;
}

/* a block about to be freed (or moved by realloc): its event when it was
 * recorded; the bytes it held in the totals either way */
static void released(void *p, int64_t bytes, int rec)
{
    if (!bytes)
        return;
    if (rec) {
        in_hook = 1;
        event(p, -bytes);
        in_hook = 0;
    } else {
        atomic_fetch_sub(&live_bytes, bytes);
    }
}

void *tt_cap__malloc(size_t n)
{
    return allocated(__libc_malloc(n));
}

void *tt_cap__calloc(size_t a, size_t b)
{
    return allocated(__libc_calloc(a, b));
}

void tt_cap__free(void *p)
{
    int rec = RECORDING();
    /* out of the table before the block can be handed out again */
    released(p, track_take((uintptr_t)p), rec);
    __libc_free(p);
}

void *tt_cap__realloc(void *old, size_t n)
{
    int rec = RECORDING();
    int64_t was = track_take((uintptr_t)old), stale;
    void *p = __libc_realloc(old, n);
    if (!p && n && old) { /* failed: the old block stays as it was */
        if (was)
            track_put((uintptr_t)old, was, &stale);
        return p;
    }
    released(old, was, rec);
    return allocated(p);
}

void *tt_cap__reallocarray(void *old, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return tt_cap__realloc(old, n);
}

void *tt_cap__memalign(size_t al, size_t n)
{
    return allocated(__libc_memalign(al, n));
}

void *tt_cap__aligned_alloc(size_t al, size_t n)
{
    return allocated(__libc_memalign(al, n));
}

int tt_cap__posix_memalign(void **out, size_t al, size_t n)
{
    int saved = errno;
    void *p;
    if (al % sizeof(void *) != 0 || (al & (al - 1)) != 0 || al == 0)
        return EINVAL;
    p = __libc_memalign(al, n);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = allocated(p);
    return 0;
}

void *tt_cap__valloc(size_t n)
{
    return allocated(__libc_valloc(n));
}

void *tt_cap__pvalloc(size_t n)
{
    return allocated(__libc_pvalloc(n));
}

/* a profile of its own when TT_CAPTURE_DIR says where */
__attribute__((constructor)) static void preload_start(void)
{
    const char *dir = getenv("TT_CAPTURE_DIR");
    tt_cap_config c;
    pthread_atfork(NULL, NULL, fork_child);
    if (!dir || !*dir)
        return;
    /* the injection library starts the profile (maybe later, at cuInit) */
    if ((getenv("TT_CAPTURE_INJECT") && *getenv("TT_CAPTURE_INJECT")) ||
        dlsym(RTLD_DEFAULT, "InitializeInjection"))
        return;
    in_hook = 1;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = getenv("TT_CAPTURE_WORKER"); /* a bad name: logged, the default used */
    c.use_gzip = getenv("TT_CAPTURE_GZIP") && !strcmp(getenv("TT_CAPTURE_GZIP"), "1");
    tt_cap_start(&c); /* a failure is logged; the program runs on */
    in_hook = 0;
}
