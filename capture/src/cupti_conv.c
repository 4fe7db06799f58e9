/*
 * capture/src/cupti_conv.c - CUPTI activity records into the window's GPU
 * store (gpu.h), keeping what Kineto keeps of them (pytorch/kineto at
 * 36f6d719, libkineto/src/CuptiActivityProfiler.cpp handleCuptiActivity and
 * CuptiActivity.cpp): kernels, copies (peer-to-peer too) and sets; runtime
 * calls but the frequent ones Kineto blocklists (isBlockListedRuntimeCbid);
 * driver calls that launch kernels only (isKernelLaunchApi); the CPU op's
 * external id of each correlation (CUSTOM0; Kineto's user-annotation map,
 * CUSTOM1, is not kept); devices, as Kineto's deviceProperties. Plus
 * cudaMalloc / cudaFree (MEMORY2 records of device memory), which Kineto
 * does not record, as "[memory]" events.
 *
 * Names are Kineto's: kernels demangled (libstdc++'s __cxa_demangle, found
 * at run time: the library links no C++ runtime; without one, kernels keep
 * their mangled names) and sanitised as output_json.cpp does; API names
 * without CUPTI's "_v7000" suffix. Each distinct name is stored once.
 *
 * Records with a zero time or ending before they start are counted
 * (bad_timestamps) and not stored; gpu_out.c counts those outside the
 * window when it writes. Without the CUDA headers (TT_HAVE_CUPTI unset)
 * only the store itself is built, and every record is unknown.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "capture/src/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EV_FIRST 1024

#ifdef TT_HAVE_CUPTI
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static void find_demangler(void);
#endif

void tt_cap__gpu_store_init(struct gpu_store *s, size_t max)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    s->max = max;
#ifdef TT_HAVE_CUPTI
    /* here, on the thread starting GPU capture, not in CUPTI's callback */
    pthread_once(&demangler_once, find_demangler);
#endif
}

struct name_ent {
    uint64_t h;
    const char *key, *val; /* key: as CUPTI names it; val: as the trace does */
};

struct name_index {
    struct name_ent *t;
    size_t n, cap; /* cap: a power of 2 */
};

void tt_cap__gpu_store_free(struct gpu_store *s)
{
    struct name_index *ix = s->name_index;
    size_t i;
    for (i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->names);
    if (ix)
        free(ix->t);
    free(ix);
    free(s->ev);
    free(s->dev);
    tt__i64map_free(&s->ext);
    pthread_mutex_destroy(&s->lock);
    memset(s, 0, sizeof(*s));
}

/* the window's records, correlations and counts go; names and devices stay */
void tt_cap__gpu_store_clear(struct gpu_store *s)
{
    s->n = 0;
    tt__i64map_free(&s->ext);
    s->dropped_records = s->dropped_store = s->bad_timestamps = s->unknown_records = 0;
}

uint64_t tt_cap__gpu_external_id(const struct gpu_store *s, uint32_t correlation)
{
    size_t v;
    return correlation && tt__i64map_get(&s->ext, correlation, &v) ? (uint64_t)v : 0;
}

#ifndef TT_HAVE_CUPTI

int tt_cap__gpu_convert(struct gpu_store *s, const void *record, const struct gpu_names *nm)
{
    (void)record;
    (void)nm;
    s->unknown_records++;
    return 0;
}

float tt_cap__gpu_occupancy(const struct gpu_device *d, const struct gpu_ev *k)
{
    (void)d;
    (void)k;
    return -1.0f;
}

#else

#include <cuda_occupancy.h>
#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>

/* gpu_out.c decides Kineto's flows by these numbers (it has no CUDA headers) */
_Static_assert(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 == 211 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 == 31 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_v3020 == 52 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 == 269 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000 == 272 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 == 311 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 == 131 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 == 165 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020 == 147 &&
                   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 == 430,
               "CUPTI callback ids moved: update flow_start in gpu_out.c");
_Static_assert(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP == 10 && CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC == 6,
               "CUPTI copy/memory kinds moved: update gpu_out.c's names");

_Static_assert(sizeof(size_t) >= sizeof(uint64_t), "external ids are kept as size_t");

/* allocations fail with TT_CAPTURE_FAULT=alloc, as the rest of the library's */
static void *grow(void *p, size_t n)
{
    return tt_cap__fault_alloc ? NULL : realloc(p, n);
}

#define MAX_SYMBOL 8192 /* Kineto's demangle() leaves longer names as they are */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn demangler;

/* libstdc++'s demangler, if the program has (or the system can load) it */
static void find_demangler(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        *(void **)&demangler = dlsym(h, "__cxa_demangle");
    if (!demangler)
        *(void **)&demangler = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    /* h stays open: the function is used for the life of the process */
}

/* ---- the correlation map ---- */

static int conv_external(struct gpu_store *s, const CUpti_ActivityExternalCorrelation *r)
{
    /* CUSTOM0: the CPU op's id, Kineto's cpuCorrelationMap_ (the External id) */
    if (r->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || !r->correlationId)
        return 0;
    if (s->max && s->ext.n >= s->max) {
        s->dropped_store++;
        return 0;
    }
    /* TT_CAPTURE_FAULT=alloc: as if the map could not grow */
    if (tt_cap__fault_alloc || tt__i64map_put(&s->ext, r->correlationId, (size_t)r->externalId) < 0) {
        s->dropped_store++;
        return -1;
    }
    return 0;
}

/* ---- names ---- */

static uint64_t name_hash(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    while (n--)
        h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
    return h ? h : 1;
}

static struct name_ent *name_slot(struct name_index *ix, uint64_t h, const char *key, size_t n)
{
    size_t i = (size_t)h & (ix->cap - 1);
    while (ix->t[i].h && !(ix->t[i].h == h && !strncmp(ix->t[i].key, key, n) && !ix->t[i].key[n]))
        i = (i + 1) & (ix->cap - 1);
    return &ix->t[i];
}

static const char *name_find(struct gpu_store *s, const char *key, size_t n, uint64_t h)
{
    struct name_index *ix = s->name_index;
    struct name_ent *e;
    if (!ix || !ix->cap)
        return NULL;
    e = name_slot(ix, h, key, n);
    return e->h ? e->val : NULL;
}

static int index_room(struct gpu_store *s)
{
    struct name_index *ix = s->name_index;
    struct name_ent *t;
    size_t cap, i;
    if (!ix) {
        if (tt_cap__fault_alloc || !(ix = calloc(1, sizeof(*ix))))
            return -1;
        s->name_index = ix;
    }
    if ((ix->n + 1) * 2 <= ix->cap)
        return 0;
    cap = ix->cap ? ix->cap * 2 : 256;
    if (tt_cap__fault_alloc || !(t = calloc(cap, sizeof(*t))))
        return -1;
    for (i = 0; i < ix->cap; i++) {
        struct name_ent *e = &ix->t[i];
        size_t j;
        if (!e->h)
            continue;
        for (j = (size_t)e->h & (cap - 1); t[j].h; j = (j + 1) & (cap - 1))
            ;
        t[j] = *e;
    }
    free(ix->t);
    ix->t = t;
    ix->cap = cap;
    return 0;
}

/* a copy of p[0..n) owned by the store */
static char *name_keep(struct gpu_store *s, const char *p, size_t n)
{
    char *c;
    if (s->nnames == s->anames) {
        size_t a = s->anames ? s->anames * 2 : 256;
        char **v = grow(s->names, a * sizeof(*v));
        if (!v)
            return NULL;
        s->names = v;
        s->anames = a;
    }
    if (tt_cap__fault_alloc || !(c = malloc(n + 1)))
        return NULL;
    memcpy(c, p, n);
    c[n] = 0;
    s->names[s->nnames++] = c;
    return c;
}

/* key (as CUPTI gives it) -> val (as the trace writes it), both kept */
static const char *name_add(struct gpu_store *s, const char *key, size_t kn, uint64_t h,
                            const char *val, size_t vn)
{
    struct name_ent *e;
    const char *k, *v;
    if (index_room(s) < 0 || !(k = name_keep(s, key, kn)))
        return NULL;
    v = (vn == kn && !memcmp(key, val, kn)) ? k : name_keep(s, val, vn);
    if (!v)
        return NULL;
    e = name_slot(s->name_index, h, key, kn);
    e->h = h;
    e->key = k;
    e->val = v;
    ((struct name_index *)s->name_index)->n++;
    return v;
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's version suffix
 * ("_v" and 4 or more digits; a driver API's own "_v2" stays, as in
 * Kineto's runtimeCbidNames "cudaGetDeviceProperties_v2") */
static size_t api_len(const char *n)
{
    size_t len = strlen(n), d = 0;
    while (d < len && n[len - 1 - d] >= '0' && n[len - 1 - d] <= '9')
        d++;
    if (d >= 4 && len >= d + 2 && n[len - d - 2] == '_' && n[len - d - 1] == 'v')
        return len - d - 2;
    return len;
}

static const char *api_name(struct gpu_store *s, const struct gpu_names *nm, int domain,
                            uint32_t cbid)
{
    const char *raw = NULL, *v;
    char buf[48];
    size_t n;
    uint64_t h;
    if (!nm || !nm->callback_name || nm->callback_name(domain, cbid, &raw) != 0 || !raw) {
        snprintf(buf, sizeof(buf), "cbid %u", (unsigned)cbid);
        raw = buf;
    }
    n = strlen(raw);
    h = name_hash(raw, n);
    if ((v = name_find(s, raw, n, h)))
        return v;
    return name_add(s, raw, n, h, raw, api_len(raw));
}

/* Kineto's op name: "kernel" -> "Kernel" (its legacy-tools rename), then
 * output_json.cpp's sanitizeStrForJSON ('\\' -> '/', no '\n') and
 * sanitizeForNonReadableChars (any byte not printable: "unknown") */
static size_t sanitize(char *p, size_t n)
{
    size_t i, k = 0;
    if (n == 6 && !memcmp(p, "kernel", 6))
        p[0] = 'K';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\n')
            continue;
        p[k++] = c == '\\' ? '/' : (char)c;
    }
    for (i = 0; i < k; i++) {
        if ((unsigned char)p[i] < 0x20 || (unsigned char)p[i] > 0x7e) {
            memcpy(p, "unknown", 7);
            return 7;
        }
    }
    return k;
}

static const char *kernel_name(struct gpu_store *s, const char *raw)
{
    const char *v = NULL, *src;
    char *dm = NULL, *tmp;
    size_t n, m;
    uint64_t h;
    int st = -1;
    if (!raw)
        raw = ""; /* Kineto's demangle(nullptr) */
    n = strlen(raw);
    h = name_hash(raw, n);
    if ((v = name_find(s, raw, n, h)))
        return v;
    if (demangler && n <= MAX_SYMBOL && !tt_cap__fault_alloc)
        dm = demangler(raw, NULL, NULL, &st);
    src = st == 0 && dm ? dm : raw;
    m = strlen(src);
    if ((tmp = tt_cap__fault_alloc ? NULL : malloc(m + 8))) { /* room for "unknown" */
        memcpy(tmp, src, m);
        m = sanitize(tmp, m);
        v = name_add(s, raw, n, h, tmp, m);
    }
    free(tmp);
    free(dm);
    return v;
}

/* ---- records ---- */

/* 1: room for a record (zeroed at *e); 0: over max; -1: out of memory
 * (both counted) */
static int store_ev_new(struct gpu_store *s, struct gpu_ev **e)
{
    if (s->max && s->n >= s->max) {
        s->dropped_store++;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : EV_FIRST;
        struct gpu_ev *v = grow(s->ev, cap * sizeof(*v));
        if (!v) {
            s->dropped_store++;
            return -1;
        }
        s->ev = v;
        s->cap = cap;
    }
    *e = &s->ev[s->n++];
    memset(*e, 0, sizeof(**e));
    return 1;
}

/* the name could not be kept: the record goes */
static int ev_undo(struct gpu_store *s)
{
    s->n--;
    s->dropped_store++;
    return -1;
}

static int bad_times(struct gpu_store *s, uint64_t start, uint64_t end)
{
    if (start && end && end >= start)
        return 0;
    s->bad_timestamps++;
    return 1;
}

static int conv_kernel(struct gpu_store *s, const CUpti_ActivityKernel10 *k)
{
    struct gpu_ev *e;
    int r;
    if (bad_times(s, k->start, k->end))
        return 0;
    if ((r = store_ev_new(s, &e)) <= 0)
        return r;
    if (!(e->name = kernel_name(s, k->name)))
        return ev_undo(s);
    e->kind = GPU_KERNEL;
    e->device = e->src_device = e->dst_device = k->deviceId;
    e->context = e->src_context = e->dst_context = k->contextId;
    e->stream = k->streamId;
    e->correlation = k->correlationId;
    e->start = (int64_t)k->start;
    e->end = (int64_t)k->end;
    e->grid[0] = k->gridX;
    e->grid[1] = k->gridY;
    e->grid[2] = k->gridZ;
    e->block[0] = k->blockX;
    e->block[1] = k->blockY;
    e->block[2] = k->blockZ;
    e->regs = k->registersPerThread;
    e->static_smem = (uint32_t)k->staticSharedMemory;
    e->dynamic_smem = (uint32_t)k->dynamicSharedMemory;
    e->queued = k->queued != CUPTI_TIMESTAMP_UNKNOWN;
    e->graph_node = k->graphNodeId != 0;
    e->graph_id = k->graphId;
    return 0;
}

static int conv_memcpy(struct gpu_store *s, const CUpti_ActivityMemcpy6 *c)
{
    struct gpu_ev *e;
    int r;
    if (bad_times(s, c->start, c->end))
        return 0;
    if ((r = store_ev_new(s, &e)) <= 0)
        return r;
    e->kind = GPU_MEMCPY;
    e->copy_kind = c->copyKind;
    e->src_kind = c->srcKind;
    e->dst_kind = c->dstKind;
    e->device = e->src_device = e->dst_device = c->deviceId;
    e->context = e->src_context = e->dst_context = c->contextId;
    e->stream = c->streamId;
    e->correlation = c->correlationId;
    e->start = (int64_t)c->start;
    e->end = (int64_t)c->end;
    e->bytes = (int64_t)c->bytes;
    e->graph_node = c->graphNodeId != 0;
    e->graph_id = c->graphId;
    return 0;
}

static int conv_peer(struct gpu_store *s, const CUpti_ActivityMemcpyPtoP4 *c)
{
    struct gpu_ev *e;
    int r;
    if (bad_times(s, c->start, c->end))
        return 0;
    if ((r = store_ev_new(s, &e)) <= 0)
        return r;
    e->kind = GPU_MEMCPY;
    e->peer = 1;
    e->copy_kind = c->copyKind;
    e->src_kind = c->srcKind;
    e->dst_kind = c->dstKind;
    e->device = c->deviceId;
    e->src_device = c->srcDeviceId;
    e->dst_device = c->dstDeviceId;
    e->context = c->contextId;
    e->src_context = c->srcContextId;
    e->dst_context = c->dstContextId;
    e->stream = c->streamId;
    e->correlation = c->correlationId;
    e->start = (int64_t)c->start;
    e->end = (int64_t)c->end;
    e->bytes = (int64_t)c->bytes;
    e->graph_node = c->graphNodeId != 0;
    e->graph_id = c->graphId;
    return 0;
}

static int conv_memset(struct gpu_store *s, const CUpti_ActivityMemset4 *m)
{
    struct gpu_ev *e;
    int r;
    if (bad_times(s, m->start, m->end))
        return 0;
    if ((r = store_ev_new(s, &e)) <= 0)
        return r;
    e->kind = GPU_MEMSET;
    e->dst_kind = (uint8_t)m->memoryKind;
    e->device = e->src_device = e->dst_device = m->deviceId;
    e->context = e->src_context = e->dst_context = m->contextId;
    e->stream = m->streamId;
    e->correlation = m->correlationId;
    e->start = (int64_t)m->start;
    e->end = (int64_t)m->end;
    e->bytes = (int64_t)m->bytes;
    e->graph_node = m->graphNodeId != 0;
    e->graph_id = m->graphId;
    return 0;
}

/* Kineto's isBlockListedRuntimeCbid: frequent, dull calls it leaves out */
static int blocklisted(uint32_t cbid)
{
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020;
}

static int conv_api(struct gpu_store *s, const CUpti_ActivityAPI *a, const struct gpu_names *nm,
                    int kind)
{
    struct gpu_ev *e;
    int r;
    if (kind == GPU_RUNTIME ? blocklisted(a->cbid)
                            : a->cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
                                  a->cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx)
        return 0; /* Kineto writes driver calls that launch kernels only */
    if (bad_times(s, a->start, a->end))
        return 0;
    if ((r = store_ev_new(s, &e)) <= 0)
        return r;
    e->name = api_name(s, nm, kind == GPU_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                  : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
    if (!e->name)
        return ev_undo(s);
    e->kind = (uint8_t)kind;
    e->cbid = a->cbid;
    e->correlation = a->correlationId;
    e->pid = a->processId;
    e->tid = a->threadId;
    if (s->map_tid) {
        uint32_t t = s->map_tid(a->threadId);
        if (t)
            e->tid = t;
    }
    e->start = (int64_t)a->start;
    e->end = (int64_t)a->end;
    return 0;
}

/* cudaMalloc / cudaFree of device memory; the calling thread is its
 * runtime call's (the same correlation), found when written */
static int conv_memory(struct gpu_store *s, const CUpti_ActivityMemory4 *m)
{
    struct gpu_ev *e;
    int r, alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    if (m->memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)) {
        s->unknown_records++; /* host (pinned), managed or static memory: not written */
        return 0;
    }
    if (bad_times(s, m->timestamp, m->timestamp))
        return 0;
    if ((r = store_ev_new(s, &e)) <= 0)
        return r;
    e->kind = GPU_MEMORY;
    e->device = e->src_device = e->dst_device = m->deviceId;
    e->context = e->src_context = e->dst_context = m->contextId;
    e->stream = m->streamId;
    e->correlation = m->correlationId;
    e->pid = m->processId;
    e->start = e->end = (int64_t)m->timestamp;
    e->bytes = alloc ? (int64_t)m->bytes : -(int64_t)m->bytes;
    e->addr = m->address;
    return 0;
}

/* reserved by the driver per block: 1 KiB from sm_80 (cudaDevAttrReservedSharedMemoryPerBlock) */
static uint32_t reserved_smem(const struct gpu_device *d)
{
    return d->compute_major >= 8 ? 1024 : 0;
}

/* one per device id; CUPTI's DEVICE record has what cudaDeviceProp gives
 * Kineto but the opt-in shared memory per block, derived: the SM's less
 * the driver's reserve from Volta on (A100: 167936 - 1024 = 166912), the
 * per-block limit before */
static int conv_device(struct gpu_store *s, const CUpti_ActivityDevice5 *r)
{
    struct gpu_device *d = NULL;
    size_t i;
    for (i = 0; i < s->ndev && !d; i++)
        if (s->dev[i].id == r->id)
            d = &s->dev[i];
    if (!d) {
        if (s->ndev == s->adev) {
            size_t a = s->adev ? s->adev * 2 : 8;
            struct gpu_device *v = grow(s->dev, a * sizeof(*v));
            if (!v) {
                s->dropped_store++;
                return -1;
            }
            s->dev = v;
            s->adev = a;
        }
        d = &s->dev[s->ndev++];
    }
    memset(d, 0, sizeof(*d));
    d->id = r->id;
    snprintf(d->name, sizeof(d->name), "%s", r->name ? r->name : "");
    d->total_global_mem = r->globalMemorySize;
    d->compute_major = r->computeCapabilityMajor;
    d->compute_minor = r->computeCapabilityMinor;
    d->max_threads_per_block = r->maxThreadsPerBlock;
    d->max_threads_per_sm = r->maxWarpsPerMultiprocessor * r->numThreadsPerWarp;
    d->regs_per_block = r->maxRegistersPerBlock;
    d->regs_per_sm = r->maxRegistersPerMultiprocessor;
    d->warp_size = r->numThreadsPerWarp;
    d->smem_per_block = r->maxSharedMemoryPerBlock;
    d->smem_per_sm = r->maxSharedMemoryPerMultiprocessor;
    d->smem_per_block_optin =
        d->compute_major >= 7 ? d->smem_per_sm - reserved_smem(d) : d->smem_per_block;
    d->num_sms = r->numMultiprocessors;
    return 0;
}

int tt_cap__gpu_convert(struct gpu_store *s, const void *record, const struct gpu_names *nm)
{
    const CUpti_Activity *a = record;
    pthread_once(&demangler_once, find_demangler);
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return conv_kernel(s, record);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return conv_memcpy(s, record);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return conv_peer(s, record);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return conv_memset(s, record);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return conv_api(s, record, nm, GPU_RUNTIME);
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return conv_api(s, record, nm, GPU_DRIVER);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return conv_external(s, record);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return conv_memory(s, record);
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return conv_device(s, record);
    default:
        s->unknown_records++;
        return 0;
    }
}

/* as Kineto's kernelOccupancy(kernel) and kernelOccupancy(deviceId, ...):
 * the calculator's state and attributes as its C++ default constructors
 * leave them, which Kineto relies on */
float tt_cap__gpu_occupancy(const struct gpu_device *d, const struct gpu_ev *k)
{
    cudaOccDeviceProp prop;
    cudaOccFuncAttributes attr;
    cudaOccDeviceState state;
    cudaOccResult res;
    float blocks_per_sm = -1.0f;
    int block = k->block[0] * k->block[1] * k->block[2];
    if (!d)
        return -1.0f;
    if (d->num_sms)
        blocks_per_sm = (float)((int64_t)k->grid[0] * k->grid[1] * k->grid[2]) / (float)d->num_sms;
    memset(&prop, 0, sizeof(prop));
    prop.computeMajor = (int)d->compute_major;
    prop.computeMinor = (int)d->compute_minor;
    prop.maxThreadsPerBlock = (int)d->max_threads_per_block;
    prop.maxThreadsPerMultiprocessor = (int)d->max_threads_per_sm;
    prop.regsPerBlock = (int)d->regs_per_block;
    prop.regsPerMultiprocessor = (int)d->regs_per_sm;
    prop.warpSize = (int)d->warp_size;
    prop.sharedMemPerBlock = d->smem_per_block;
    prop.sharedMemPerMultiprocessor = d->smem_per_sm;
    prop.numSms = (int)d->num_sms;
    prop.sharedMemPerBlockOptin = d->smem_per_block_optin;
    prop.reservedSharedMemPerBlock = reserved_smem(d);
    memset(&attr, 0, sizeof(attr));
    attr.maxThreadsPerBlock = INT_MAX;
    attr.numRegs = (int)k->regs;
    attr.sharedSizeBytes = k->static_smem;
    attr.partitionedGCConfig = PARTITIONED_GC_OFF;
    attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
    attr.maxDynamicSharedSizeBytes = 0;
    state.cacheConfig = CACHE_PREFER_NONE;
    state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    memset(&res, 0, sizeof(res));
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state, block,
                                                k->dynamic_smem) != CUDA_OCC_SUCCESS)
        return -1.0f;
    if (res.activeBlocksPerMultiprocessor < blocks_per_sm)
        blocks_per_sm = (float)res.activeBlocksPerMultiprocessor;
    return blocks_per_sm * (float)block / (float)d->max_threads_per_sm;
}

#endif
