/*
 * capture/src/buffer.c - the hot path: each thread appends its records to
 * chunks of its own (no lock; a mutex only to register a thread and to take
 * a new chunk's bytes from the global budget), and the collector takes every
 * thread's chunks when a window ends.
 *
 * A thread sets `busy` before it looks at the recording flag and clears it
 * after appending; the collector clears the flag and then waits for each
 * thread's `busy` to be 0 (both sequentially consistent), so no append is
 * under way when the chunks change hands, and none starts until the next
 * window.
 *
 * The collector's waits are bounded: a thread that stays busy (stopped
 * inside an append by a signal whose handler ends the window, maybe with
 * exit(); the collector's own thread, so interrupted, is never waited for)
 * keeps its chunks, which it frees itself when it next appends, and what it
 * held in the window is counted as dropped. At exit the bound is a few ms,
 * for the library's mutexes too.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/i64map.h"

#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int tt_cap__recording; /* __atomic builtins: the public header reads it */
atomic_uint tt_cap__gen;
atomic_ullong tt_cap__dropped;
atomic_size_t tt_cap__bytes;
size_t tt_cap__max_bytes = (size_t)256 << 20;
int64_t tt_cap__deadline;
int tt_cap__record_shapes;
int tt_cap__use_tsc;
atomic_int tt_cap__exiting;

/* how long the collector waits for a busy thread: at exit, and otherwise */
#define EXIT_WAIT_NS 20000000LL
#define STUCK_WAIT_NS 2000000000LL

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* chunks given back */
static regex_t filter;
static atomic_int have_filter;
static pthread_rwlock_t filter_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct cap_thread **reg;
static size_t nreg, areg;
static uint32_t next_logical = 1;
static atomic_ullong rf_counter = 1;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
/* initial-exec: no __tls_get_addr call on the hot path of the shared library */
static _Thread_local struct cap_thread *self __attribute__((tls_model("initial-exec")));
/* the hot path is in malloc, free or regexec (which allocates) for the
 * library: a signal handler's exit() must not allocate (core.c's atexit hook) */
static _Thread_local volatile sig_atomic_t in_alloc __attribute__((tls_model("initial-exec")));

int tt_cap__in_alloc(void)
{
    return in_alloc != 0;
}

#define RF_BLOCK 256

/* Take a mutex m, or the write side of rw; at exit, give up (-1) after
 * EXIT_WAIT_NS: exit() from a signal handler may have stopped its holder,
 * maybe this very thread */
static int lock_or_give_up(pthread_mutex_t *m, pthread_rwlock_t *rw)
{
    int64_t t0 = 0, now;
    if (!atomic_load(&tt_cap__exiting)) {
        if (m)
            pthread_mutex_lock(m);
        else
            pthread_rwlock_wrlock(rw);
        return 0;
    }
    while ((m ? pthread_mutex_trylock(m) : pthread_rwlock_trywrlock(rw)) != 0) {
        now = tt_cap__mono();
        if (!t0)
            t0 = now;
        else if (now - t0 > EXIT_WAIT_NS)
            return -1;
        sched_yield();
    }
    return 0;
}

/* ---- the name filter: a verdict per source location, cached per thread ----
 * A stop frees the filter while other threads may be in scopes: regexec runs
 * under the read side of a lock (only on a cache miss), regfree under the
 * write side; a new filter (its generation) empties the threads' caches. */

static atomic_uint filter_gen;

/* Compile the filter (NULL: none); -1 with the error said when it is bad */
int tt_cap__filter_set(const char *re)
{
    int rc, ret = 0;
    if (lock_or_give_up(NULL, &filter_lock) < 0) {
        atomic_store(&have_filter, 0); /* at exit: the old one is left as it is */
        return re ? -1 : 0;
    }
    if (atomic_load(&have_filter))
        regfree(&filter);
    atomic_store(&have_filter, 0);
    atomic_fetch_add(&filter_gen, 1);
    if (re && (rc = regcomp(&filter, re, REG_EXTENDED | REG_NOSUB)) != 0) {
        char msg[128];
        regerror(rc, &filter, msg, sizeof(msg));
        tt_cap__set_error("bad name filter '%s': %s", re, msg);
        ret = -1;
    } else if (re) {
        atomic_store(&have_filter, 1);
    }
    pthread_rwlock_unlock(&filter_lock);
    return ret;
}

int tt_cap__name_ok(struct cap_thread *t, const tt_cap_srcloc *loc)
{
    unsigned gen;
    size_t k;
    if (!atomic_load_explicit(&have_filter, memory_order_relaxed))
        return 1;
    gen = atomic_load_explicit(&filter_gen, memory_order_relaxed);
    if (t->fgen != gen) { /* verdicts of an earlier filter */
        memset(t->fkey, 0, sizeof(t->fkey));
        t->fgen = gen;
    }
    k = ((uintptr_t)loc >> 4) & 63;
    if (t->fkey[k] != loc) {
        int ok = 1;
        t->in_lib = 1;
        in_alloc++;
        pthread_rwlock_rdlock(&filter_lock);
        if (atomic_load(&have_filter))
            ok = regexec(&filter, loc->name ? loc->name : TT_CAP_NULL_NAME, 0, NULL, 0) == 0;
        pthread_rwlock_unlock(&filter_lock);
        in_alloc--;
        t->in_lib = 0;
        t->fval[k] = (signed char)ok;
        t->fkey[k] = loc;
    }
    return t->fval[k];
}

void tt_cap__registry_lock(void)
{
    pthread_mutex_lock(&reg_lock);
}

void tt_cap__registry_unlock(void)
{
    pthread_mutex_unlock(&reg_lock);
}

/* in a forked child: the lock may have been held by a thread that is gone */
void tt_cap__registry_reinit(void)
{
    pthread_mutex_init(&reg_lock, NULL);
    pthread_mutex_init(&pool_lock, NULL);
    pthread_rwlock_init(&filter_lock, NULL);
}

static void chunks_put(struct chunk *c);

static void thread_exit(void *arg)
{
    struct cap_thread *t = arg;
    pthread_mutex_lock(&reg_lock);
    t->dead = 1; /* its records stay until the window is collected */
    if (atomic_load(&t->busy)) { /* it ended inside an append (pthread_exit in a handler) */
        chunks_put(t->head);
        t->head = t->tail = NULL;
        atomic_store(&t->busy, 0);
    }
    pthread_mutex_unlock(&reg_lock);
    self = NULL;
}

static void make_key(void)
{
    pthread_key_create(&key, thread_exit);
}

pid_t tt_cap__os_tid(uint32_t pt_id)
{
    pid_t tid = 0;
    size_t i;
    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < nreg && !tid; i++)
        if (reg[i]->pt_id == pt_id)
            tid = reg[i]->os_tid;
    pthread_mutex_unlock(&reg_lock);
    return tid;
}

static struct cap_thread *thread_register(void)
{
    struct cap_thread *t;
    pthread_once(&key_once, make_key);
    if (!(t = calloc(1, sizeof(*t))))
        return NULL;
    t->os_tid = (pid_t)syscall(SYS_gettid);
    t->pt_id = (uint32_t)(uintptr_t)pthread_self();
    pthread_getname_np(pthread_self(), t->name, sizeof(t->name));
    pthread_mutex_lock(&reg_lock);
    if (nreg == areg) {
        size_t n = areg ? areg * 2 : 16;
        struct cap_thread **r = realloc(reg, n * sizeof(*r));
        if (!r) {
            pthread_mutex_unlock(&reg_lock);
            free(t);
            return NULL;
        }
        reg = r;
        areg = n;
    }
    t->logical_tid = next_logical++;
    reg[nreg++] = t;
    pthread_mutex_unlock(&reg_lock);
    pthread_setspecific(key, t);
    self = t;
    return t;
}

struct cap_thread *tt_cap__thread(void)
{
    struct cap_thread *t = self;
    if (t)
        return t;
    in_alloc++;
    t = thread_register();
    in_alloc--;
    return t;
}

uint64_t tt_cap__rf_id(struct cap_thread *t)
{
    if (t->rf_next == t->rf_end) {
        t->rf_next = atomic_fetch_add(&rf_counter, RF_BLOCK);
        t->rf_end = t->rf_next + RF_BLOCK;
    }
    return t->rf_next++;
}

/*
 * Chunks come from a pool that windows give theirs back to (a mutex taken
 * once per 64 KiB, never per event), so a program recording window after
 * window allocates nothing once the first one is written. Chunks in use and
 * in the pool never hold more than max_bytes together (the pool only gets
 * what windows held).
 */
static struct chunk *pool;
static size_t npool;

static struct chunk *chunk_get(void)
{
    struct chunk *c;
    pthread_mutex_lock(&pool_lock);
    if ((c = pool)) {
        pool = c->next;
        npool--;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!c && tt_cap__fault_alloc)
        return NULL; /* a test's injected out-of-memory */
    return c ? c : malloc(sizeof(*c));
}

/* give a list of chunks back (the bytes they held are free again) */
static void chunks_put(struct chunk *c)
{
    while (c) {
        struct chunk *n = c->next;
        atomic_fetch_sub(&tt_cap__bytes, sizeof(*c));
        if (lock_or_give_up(&pool_lock, NULL) < 0)
            return; /* at exit, its holder stopped: the chunks are left to the exit */
        if (npool < tt_cap__max_bytes / sizeof(*c)) {
            c->next = pool;
            pool = c;
            npool++;
            c = NULL;
        }
        pthread_mutex_unlock(&pool_lock);
        free(c);
        c = n;
    }
}

void tt_cap__pool_free(void)
{
    if (lock_or_give_up(&pool_lock, NULL) < 0)
        return;
    while (pool) {
        struct chunk *n = pool->next;
        free(pool);
        pool = n;
    }
    npool = 0;
    pthread_mutex_unlock(&pool_lock);
}

void *tt_cap__reserve(struct cap_thread *t, size_t size)
{
    struct chunk *c = t->tail;
    void *p;
    unsigned gen = atomic_load(&tt_cap__gen);
    if (atomic_load_explicit(&t->gen, memory_order_relaxed) != gen) {
        /* chunks of an earlier window were collected */
        if (t->head) { /* or not: the collector gave up waiting for this thread */
            in_alloc++;
            chunks_put(t->head);
            in_alloc--;
        }
        t->head = t->tail = NULL;
        atomic_store_explicit(&t->gen, gen, memory_order_relaxed);
        atomic_store_explicit(&t->nrec, 0, memory_order_relaxed);
        c = NULL;
    }
    if (!c || c->used + size > CHUNK_BYTES) {
        in_alloc++;
        if (atomic_fetch_add(&tt_cap__bytes, sizeof(*c)) + sizeof(*c) > tt_cap__max_bytes ||
            !(c = chunk_get())) {
            in_alloc--;
            atomic_fetch_sub(&tt_cap__bytes, sizeof(*c));
            atomic_fetch_add(&tt_cap__dropped, 1);
            return NULL;
        }
        in_alloc--;
        c->next = NULL;
        c->used = 0;
        if (t->tail)
            t->tail->next = c;
        else
            t->head = c;
        t->tail = c;
    }
    p = c->data + c->used;
    c->used += size;
    /* the owner alone writes it: no read-modify-write instruction */
    atomic_store_explicit(&t->nrec, atomic_load_explicit(&t->nrec, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return p;
}

/* ---- the collector ---- */

/*
 * With membarrier(2) (Linux >= 4.14) the collector makes every thread run a
 * full barrier between its clearing the recording flag and its reading the
 * busy flags, so the hot path needs only a compiler barrier between setting
 * busy and reading the flag (the asymmetric barrier of liburcu and folly),
 * not a fence of its own. Without it (or under ThreadSanitizer, which does
 * not know membarrier), sequentially consistent operations on both sides.
 */
static int asym;

void tt_cap__fence_init(void)
{
#if defined(SYS_membarrier) && !defined(__SANITIZE_THREAD__)
    asym = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

/* after the recording flag was cleared (sequentially consistent), before
 * the busy flags are read (sequentially consistent too) */
static void collector_fence(void)
{
#if defined(SYS_membarrier)
    if (asym)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}


/* wait for t to leave the hot path: 1, or 0 when the collector gives up
 * (t is the collector's own thread, interrupted inside an append; or t
 * stayed busy past the bound) */
static int wait_idle(struct cap_thread *t, struct cap_thread *me)
{
    int64_t t0 = 0;
    unsigned spins = 0;
    while (atomic_load(&t->busy)) {
        if (t == me)
            return 0;
        if ((++spins & 63) == 0) {
            int64_t now = tt_cap__mono();
            if (!t0)
                t0 = now;
            else if (now - t0 > (atomic_load(&tt_cap__exiting) ? EXIT_WAIT_NS : STUCK_WAIT_NS))
                return 0;
        }
        sched_yield();
    }
    return 1;
}

int tt_cap__collect(struct tt_cap_trace *tr)
{
    size_t i, k = 0, taken;
    unsigned gen = atomic_load(&tt_cap__gen);
    struct cap_thread *me = self;
    collector_fence(); /* the recording flag is clear: no append starts after this */
    if (lock_or_give_up(&reg_lock, NULL) < 0)
        return TT_CAP_EBUSY;
    tr->th = calloc(nreg ? nreg : 1, sizeof(*tr->th));
    for (i = 0; i < nreg; i++) {
        struct cap_thread *t = reg[i];
        if (!wait_idle(t, me)) {
            /* its chunks stay its own (it frees them when it next appends) */
            if (atomic_load_explicit(&t->gen, memory_order_relaxed) == gen)
                atomic_fetch_add(&tt_cap__dropped,
                                 atomic_load_explicit(&t->nrec, memory_order_relaxed));
            continue;
        }
        if (tr->th && atomic_load_explicit(&t->gen, memory_order_relaxed) == gen && t->head) {
            struct trace_thread *o = &tr->th[k++];
            o->os_tid = t->os_tid;
            o->logical_tid = t->logical_tid;
            memcpy(o->name, t->name, sizeof(o->name));
            o->head = t->head;
        } else if (t->head) {
            /* no room to describe it: its events are dropped; or chunks of an
             * earlier window, whose collector gave up on it */
            if (atomic_load_explicit(&t->gen, memory_order_relaxed) == gen)
                atomic_fetch_add(&tt_cap__dropped,
                                 atomic_load_explicit(&t->nrec, memory_order_relaxed));
            chunks_put(t->head);
        }
        t->head = t->tail = NULL;
    }
    taken = k;
    /* threads that exited are gone now that their records are taken */
    for (i = k = 0; i < nreg; i++) {
        if (reg[i]->dead && !reg[i]->head)
            free(reg[i]);
        else
            reg[k++] = reg[i];
    }
    nreg = k;
    pthread_mutex_unlock(&reg_lock);
    if (!tr->th)
        return TT_CAP_ENOMEM;
    tr->nth = taken;
    return 0;
}

void tt_cap__trace_free(struct tt_cap_trace *tr)
{
    size_t i;
    for (i = 0; i < tr->nth; i++)
        chunks_put(tr->th[i].head);
    free(tr->th);
    memset(tr, 0, sizeof(*tr));
}

/* In a forked child: every other thread is gone, and no record of the
 * parent's may be written; the calling thread stays registered, empty. */
void tt_cap__threads_reset(int free_them)
{
    size_t i;
    struct cap_thread *me = self;
    if (!free_them)
        return;
    for (i = 0; i < nreg; i++) {
        struct chunk *c = reg[i]->head;
        while (c) {
            struct chunk *n = c->next;
            free(c);
            c = n;
        }
        if (reg[i] != me)
            free(reg[i]);
    }
    nreg = 0;
    atomic_store(&tt_cap__bytes, 0);
    if (me) {
        me->head = me->tail = NULL;
        me->nopen = 0;
        me->os_tid = getpid(); /* the child's one thread */
        atomic_store(&me->busy, 0);
        reg[nreg++] = me;
    }
}

/* ---- reading a window's records ---- */

const struct rec_hdr *tt_cap__rec_first(const struct trace_thread *th, const struct chunk **c,
                                        size_t *off)
{
    *c = th->head;
    *off = 0;
    while (*c && (*c)->used == 0)
        *c = (*c)->next;
    return *c ? (const struct rec_hdr *)(*c)->data : NULL;
}

const struct rec_hdr *tt_cap__rec_next(const struct chunk **c, size_t *off)
{
    const struct rec_hdr *h = (const struct rec_hdr *)((*c)->data + *off);
    *off += h->size;
    while (*c && *off >= (*c)->used) {
        *c = (*c)->next;
        *off = 0;
    }
    return *c ? (const struct rec_hdr *)((*c)->data + *off) : NULL;
}

static int scope_cmp(const void *pa, const void *pb)
{
    const struct rec_scope *a = *(const struct rec_scope *const *)pa;
    const struct rec_scope *b = *(const struct rec_scope *const *)pb;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    if (a->t1 != b->t1)
        return a->t1 > b->t1 ? -1 : 1;
    return a->rf_id < b->rf_id ? -1 : a->rf_id > b->rf_id;
}

/* the scope and step records of a window thread, in start order (longest
 * first on a tie); shapes (may be NULL) maps rf_id -> index into *shp */
int tt_cap__scopes(const struct trace_thread *th, const struct rec_scope ***out, size_t *n,
                   struct i64map *shapes, const struct rec_shapes ***shp)
{
    const struct rec_hdr *h;
    const struct chunk *c;
    size_t off, k = 0, ks = 0, cap = 0, caps = 0;
    *out = NULL;
    *n = 0;
    for (h = tt_cap__rec_first(th, &c, &off); h; h = tt_cap__rec_next(&c, &off)) {
        if (h->type == REC_SCOPE || h->type == REC_STEP) {
            if (k == cap) {
                const struct rec_scope **v;
                cap = cap ? cap * 2 : 256;
                if (!(v = realloc((void *)*out, cap * sizeof(*v))))
                    return -1;
                *out = v;
            }
            (*out)[k++] = (const struct rec_scope *)h;
        } else if (h->type == REC_SHAPES && shapes) {
            if (ks == caps) {
                const struct rec_shapes **v;
                caps = caps ? caps * 2 : 64;
                if (!(v = realloc((void *)*shp, caps * sizeof(*v))))
                    return -1;
                *shp = v;
            }
            (*shp)[ks] = (const struct rec_shapes *)h;
            if (tt__i64map_put(shapes, (int64_t)((const struct rec_shapes *)h)->rf_id, ks) < 0)
                return -1;
            ks++;
        }
    }
    if (k)
        qsort((void *)*out, k, sizeof(**out), scope_cmp);
    *n = k;
    return 0;
}

/* The input at p of a shapes record: ndim, its dims (8 bytes each, maybe
 * unaligned), the dtype; returns where the next input starts */
const unsigned char *tt_cap__shape_next(const unsigned char *p, int32_t *nd,
                                        const unsigned char **dims, const char **dtype,
                                        int32_t *dl)
{
    memcpy(nd, p, 4);
    memcpy(dl, p + 4, 4);
    *dims = p + 8;
    *dtype = (const char *)p + 8 + 8 * (size_t)*nd;
    return p + 8 + 8 * (size_t)*nd + (size_t)(*dl + 7) / 8 * 8;
}

/* ---- scopes and memory events (the public hot path) ---- */

/* the calling thread, marked busy, when a window records; else NULL */
static struct cap_thread *enter(void)
{
    struct cap_thread *t = self;
    int on;
    if (!__atomic_load_n(&tt_cap__recording, __ATOMIC_RELAXED))
        return NULL;
    if (!t && !(t = tt_cap__thread()))
        return NULL;
    if (t->in_lib)
        return NULL;
    if (asym) {
        atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* the collector's membarrier does the rest */
        on = __atomic_load_n(&tt_cap__recording, __ATOMIC_RELAXED);
    } else {
        atomic_store(&t->busy, 1);
        on = __atomic_load_n(&tt_cap__recording, __ATOMIC_SEQ_CST);
    }
    if (!on) {
        atomic_store_explicit(&t->busy, 0, memory_order_release);
        return NULL;
    }
    return t;
}

static void leave(struct cap_thread *t)
{
    atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* A scope's beginning touches only its thread's own state (no chunk): no
 * busy flag; the window it began in is checked at its end. */
tt_cap_scope tt_cap__scope_begin(const tt_cap_srcloc *loc)
{
    tt_cap_scope s = { loc, 0, 0, 0, 0 };
    struct cap_thread *t = self;
    if (!__atomic_load_n(&tt_cap__recording, __ATOMIC_RELAXED))
        return s;
    if ((!t && !(t = tt_cap__thread())) || t->in_lib || !loc || !tt_cap__name_ok(t, loc))
        return s;
    s.rf_id = tt_cap__rf_id(t);
    s.gen = atomic_load_explicit(&tt_cap__gen, memory_order_acquire);
    s.t0 = tt_cap__now();
    if (t->nopen < OPEN_MAX)
        t->open[t->nopen] = s.rf_id;
    t->nopen++;
    if (__atomic_load_n(&tt_cap__gpu_active, __ATOMIC_RELAXED)) {
        tt_cap__gpu_push(s.rf_id, loc->kind);
        s.gpu = 1;
    }
    return s;
}

void tt_cap__scope_end(tt_cap_scope *s)
{
    struct cap_thread *t;
    struct rec_scope *r;
    int64_t t1;
    if (!s->rf_id)
        return;
    t1 = tt_cap__now();
    if (s->gpu) {
        tt_cap__gpu_pop(s->loc->kind);
        s->gpu = 0;
    }
    t = self;
    if (t && t->nopen > 0)
        t->nopen--; /* the scope is closed whether or not it is kept */
    if (!(t = enter()))
        return;
    if (s->gen != atomic_load(&tt_cap__gen) || (tt_cap__deadline && t1 > tt_cap__deadline)) {
        if (tt_cap__deadline && t1 > tt_cap__deadline)
            atomic_fetch_add(&tt_cap__dropped, 1);
        leave(t);
        return;
    }
    if ((r = tt_cap__reserve(t, sizeof(*r)))) {
        r->h.type = REC_SCOPE;
        r->h.size = sizeof(*r);
        r->loc = s->loc;
        r->t0 = s->t0;
        r->t1 = t1;
        r->rf_id = s->rf_id;
        r->parent_rf = t->nopen > 0 && t->nopen <= OPEN_MAX ? t->open[t->nopen - 1] : 0;
        r->step = 0;
    }
    leave(t);
    s->rf_id = 0;
}

static size_t shapes_size(int n, const int *ndim, const char *const *dtypes)
{
    size_t sz = sizeof(struct rec_shapes);
    int i;
    for (i = 0; i < n; i++)
        sz += 8 + 8 * (size_t)(ndim[i] > 0 ? ndim[i] : 0) +
              ((dtypes && dtypes[i] ? strlen(dtypes[i]) : 0) + 7) / 8 * 8;
    return sz;
}

void tt_cap_scope_shapes(tt_cap_scope *s, int n, const int64_t *const *dims, const int *ndim,
                         const char *const *dtypes)
{
    struct cap_thread *t;
    struct rec_shapes *r;
    size_t sz;
    int i;
    if (!s->rf_id || !tt_cap__record_shapes || n < 0 || n > 4096 || (n && !ndim))
        return;
    for (i = 0; i < n; i++)
        if (ndim[i] < 0 || ndim[i] > 64 || (ndim[i] && (!dims || !dims[i])))
            return;
    if (!(t = enter()))
        return;
    sz = shapes_size(n, ndim, dtypes);
    if (sz <= CHUNK_BYTES && s->gen == atomic_load(&tt_cap__gen) &&
        (r = tt_cap__reserve(t, sz))) {
        unsigned char *p = (unsigned char *)(r + 1);
        r->h.type = REC_SHAPES;
        r->h.size = (uint32_t)sz;
        r->rf_id = s->rf_id;
        r->n = n;
        r->pad = 0;
        for (i = 0; i < n; i++) {
            int32_t nd = ndim[i], dl = (int32_t)(dtypes && dtypes[i] ? strlen(dtypes[i]) : 0);
            memcpy(p, &nd, 4);
            memcpy(p + 4, &dl, 4);
            p += 8;
            if (nd) {
                memcpy(p, dims[i], 8 * (size_t)nd);
                p += 8 * (size_t)nd;
            }
            if (dl) {
                memcpy(p, dtypes[i], (size_t)dl);
                memset(p + dl, 0, (size_t)((dl + 7) / 8 * 8 - dl));
            }
            p += (dl + 7) / 8 * 8;
        }
    }
    leave(t);
}

void tt_cap_mem_event(const void *ptr, int64_t bytes, int64_t total_allocated,
                      int64_t total_reserved, int dev_type, int dev_id)
{
    struct cap_thread *t = enter();
    struct rec_mem *r;
    int64_t now;
    if (!t)
        return;
    now = tt_cap__now();
    if (tt_cap__deadline && now > tt_cap__deadline) {
        atomic_fetch_add(&tt_cap__dropped, 1);
    } else if ((r = tt_cap__reserve(t, sizeof(*r)))) {
        r->h.type = REC_MEM;
        r->h.size = sizeof(*r);
        r->t = now;
        r->addr = (uint64_t)(uintptr_t)ptr;
        r->bytes = bytes;
        r->total_allocated = total_allocated;
        r->total_reserved = total_reserved;
        r->dev_type = dev_type;
        r->dev_id = dev_type == TT_CAP_DEV_CPU ? -1 : dev_id; /* c10: the CPU's index is -1 */
    }
    leave(t);
}

/* ProfilerStep#N: opened on the calling thread (its ops nest in it) */
uint64_t tt_cap__step_open(unsigned *gen)
{
    struct cap_thread *t = enter();
    uint64_t rf;
    if (!t)
        return 0;
    rf = tt_cap__rf_id(t);
    *gen = atomic_load(&tt_cap__gen);
    if (t->nopen < OPEN_MAX)
        t->open[t->nopen] = rf;
    t->nopen++;
    leave(t);
    return rf;
}

/* and closed: recorded when its window still records */
void tt_cap__step_close(int64_t step, int64_t t0, uint64_t rf, unsigned gen)
{
    struct cap_thread *t = self;
    struct rec_scope *r;
    if (!rf)
        return;
    if (t && t->nopen > 0 && t->nopen <= OPEN_MAX && t->open[t->nopen - 1] == rf)
        t->nopen--;
    if (!(t = enter()))
        return;
    if (gen == atomic_load(&tt_cap__gen) && (r = tt_cap__reserve(t, sizeof(*r)))) {
        r->h.type = REC_STEP;
        r->h.size = sizeof(*r);
        r->loc = NULL;
        r->t0 = t0;
        r->t1 = tt_cap__now();
        r->rf_id = rf;
        r->parent_rf = t->nopen > 0 && t->nopen <= OPEN_MAX ? t->open[t->nopen - 1] : 0;
        r->step = step;
    }
    leave(t);
}

/* a metric as a counter event of the window being recorded (metrics.c) */
void tt_cap_metric_trace(double ts, const char *group, const char *name, int64_t value, void *user)
{
    struct cap_thread *t;
    struct rec_counter *r;
    size_t gl = strlen(group), nl = strlen(name), sz;
    (void)ts, (void)user;
    if (gl > 1024 || nl > 1024 || !(t = enter()))
        return;
    sz = sizeof(*r) + (gl + nl + 7) / 8 * 8;
    if ((r = tt_cap__reserve(t, sz))) {
        r->h.type = REC_COUNTER;
        r->h.size = (uint32_t)sz;
        r->t = tt_cap__now();
        r->value = value;
        r->group_len = (uint32_t)gl;
        r->name_len = (uint32_t)nl;
        memcpy(r + 1, group, gl);
        memcpy((char *)(r + 1) + gl, name, nl);
    }
    leave(t);
}
