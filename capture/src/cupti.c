/*
 * capture/src/cupti.c - GPU capture through CUPTI's activity API, with
 * libcupti loaded by dlopen at run time: a program (or a host) without CUDA
 * runs, and the library links no CUDA library.
 *
 * As Kineto does (libkineto's CuptiActivityApi.cpp): CUPTI asks for buffers
 * (4 MiB each, at most TT_CAPTURE_GPU_BUFFERS_MB in all: past that CUPTI
 * drops records and counts them) and hands them back full, on its own
 * thread, where their records are converted into the window's store
 * (cupti_conv.c); the record-function id of the open CPU op is pushed as
 * an external correlation, so each runtime call (and the GPU work it
 * launched) names the op that made it. CUPTI stamps its records with our
 * clock (cuptiActivityRegisterTimestampCallback: CLOCK_MONOTONIC ns), so
 * GPU and CPU times need no conversion.
 *
 * Anything that stops GPU capture (no libcupti, no driver or no GPU,
 * another CUPTI client such as Nsight, no permission) is one log line; the
 * CPU capture goes on.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "capture/src/gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tt_cap__gpu_active;

#ifndef TT_HAVE_CUPTI

int tt_cap__gpu_start(unsigned activities, pid_t (*os_tid)(uint32_t pt_id))
{
    (void)activities;
    (void)os_tid;
    tt_cap__log("GPU capture off: this build has no CUPTI (built without the CUDA toolkit)");
    return -1;
}
void tt_cap__gpu_push(uint64_t id, int kind)
{
    (void)id;
    (void)kind;
}
void tt_cap__gpu_pop(int kind)
{
    (void)kind;
}
struct gpu_store *tt_cap__gpu_flush(void)
{
    return NULL;
}
void tt_cap__gpu_window_done(void)
{
}
void tt_cap__gpu_stop(void)
{
}
int tt_cap__gpu_profiler_api(void (*fn)(int start))
{
    (void)fn;
    return -1;
}

#else

#include <cupti.h>

#define BUF_BYTES ((size_t)4 << 20)
#define DEFAULT_CAP_MB 128
#define STORE_MAX ((size_t)8 << 20) /* records held per window */

static struct {
    void *lib;
    CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*ndropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*error_string)(CUptiResult, const char **);
    CUptiResult (*cbname)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*tscb)(CUpti_TimestampCallbackFunc);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*enable_cb)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                             CUpti_CallbackId);
} api;

static struct gpu_store store;
static int store_ready, failed_once;
static CUpti_ActivityKind enabled[16];
static int nenabled;
static size_t buf_cap, buf_held; /* bytes of buffers CUPTI may hold, holds */
static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_SubscriberHandle subscriber;
static void (*range_fn)(int start);

static const char *cupti_error(CUptiResult r)
{
    const char *s = NULL;
    if (api.error_string && api.error_string(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "an unknown CUPTI error";
}

/* why CUPTI said no, for the log line */
static const char *hint(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        return " (profiling needs permission: see NVIDIA's ERR_NVGPUCTRPERM, or run as root)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return " (another CUPTI client, such as Nsight Systems, holds CUPTI)";
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_UNKNOWN:
        return " (no NVIDIA driver or no GPU?)";
    default:
        return "";
    }
}

static int load(void)
{
    static const char *const names[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so",
                                         "/usr/local/cuda/lib64/libcupti.so",
                                         "/usr/local/cuda/lib/libcupti.so",
                                         "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so" };
    const char *env = getenv("TT_CAPTURE_CUPTI");
    size_t i;
    if (api.lib)
        return 0;
    if (env && *env)
        api.lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    for (i = 0; !api.lib && !(env && *env) && i < sizeof(names) / sizeof(names[0]); i++)
        api.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!api.lib) {
        tt_cap__log("GPU capture off: libcupti not found (set TT_CAPTURE_CUPTI to its path)");
        return -1;
    }
#define SYM(f, n) *(void **)&api.f = dlsym(api.lib, n)
    SYM(reg, "cuptiActivityRegisterCallbacks");
    SYM(enable, "cuptiActivityEnable");
    SYM(disable, "cuptiActivityDisable");
    SYM(next, "cuptiActivityGetNextRecord");
    SYM(flush_all, "cuptiActivityFlushAll");
    SYM(ndropped, "cuptiActivityGetNumDroppedRecords");
    SYM(push, "cuptiActivityPushExternalCorrelationId");
    SYM(pop, "cuptiActivityPopExternalCorrelationId");
    SYM(error_string, "cuptiGetResultString");
    SYM(cbname, "cuptiGetCallbackName");
    SYM(tscb, "cuptiActivityRegisterTimestampCallback");
    SYM(subscribe, "cuptiSubscribe");
    SYM(unsubscribe, "cuptiUnsubscribe");
    SYM(enable_cb, "cuptiEnableCallback");
#undef SYM
    if (!api.reg || !api.enable || !api.disable || !api.next || !api.flush_all || !api.push ||
        !api.pop) {
        tt_cap__log("GPU capture off: this libcupti lacks the activity API");
        dlclose(api.lib);
        memset(&api, 0, sizeof(api));
        return -1;
    }
    return 0;
}

static int callback_name(int domain, uint32_t cbid, const char **name)
{
    return api.cbname && api.cbname((CUpti_CallbackDomain)domain, cbid, name) == CUPTI_SUCCESS &&
                   *name
               ? 0
               : -1;
}

/* CUPTI's thread id of a call (pthread_self's low bits) to the OS tid of
 * the CPU rows, as Kineto maps it; a cache of the threads found */
static pid_t (*registry_tid)(uint32_t pt_id);

static uint32_t map_tid(uint32_t pt)
{
    static struct { uint32_t pt, tid; } cache[64];
    unsigned k = (pt >> 12 ^ pt) & 63;
    pid_t tid = 0;
    if (cache[k].pt == pt && cache[k].tid)
        return cache[k].tid;
    if (registry_tid && (tid = registry_tid(pt)) > 0) {
        cache[k].pt = pt;
        cache[k].tid = (uint32_t)tid;
    }
    return tid > 0 ? (uint32_t)tid : 0;
}

static uint64_t CUPTIAPI clock_ns(void)
{
    return (uint64_t)tt_cap__mono();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    pthread_mutex_lock(&buf_lock);
    if (buf_held + BUF_BYTES <= buf_cap && !tt_cap__fault_alloc &&
        (*buffer = aligned_alloc(8, BUF_BYTES))) {
        buf_held += BUF_BYTES;
        *size = BUF_BYTES;
    }
    pthread_mutex_unlock(&buf_lock);
    /* no buffer: CUPTI drops the records, and counts them */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    CUpti_Activity *rec = NULL;
    struct gpu_names nm = { callback_name };
    size_t dropped = 0;
    (void)size;
    pthread_mutex_lock(&store.lock);
    while (valid && api.next(buffer, valid, &rec) == CUPTI_SUCCESS)
        tt_cap__gpu_convert(&store, rec, &nm);
    if (api.ndropped && api.ndropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
        store.dropped_records += dropped;
    pthread_mutex_unlock(&store.lock);
    free(buffer);
    pthread_mutex_lock(&buf_lock);
    buf_held -= buf_held >= BUF_BYTES ? BUF_BYTES : buf_held;
    pthread_mutex_unlock(&buf_lock);
}

static void disable_all(void)
{
    int i;
    for (i = 0; i < nenabled; i++)
        api.disable(enabled[i]);
    nenabled = 0;
}

/* the CUPTI kinds of TT_CAP_GPU_* bits */
static int kinds_of(unsigned a, CUpti_ActivityKind *k)
{
    int n = 0;
    if (a & TT_CAP_GPU_KERNEL)
        k[n++] = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    if (a & TT_CAP_GPU_MEMCPY) {
        k[n++] = CUPTI_ACTIVITY_KIND_MEMCPY;
        k[n++] = CUPTI_ACTIVITY_KIND_MEMCPY2;
    }
    if (a & TT_CAP_GPU_MEMSET)
        k[n++] = CUPTI_ACTIVITY_KIND_MEMSET;
    if (a & TT_CAP_GPU_RUNTIME)
        k[n++] = CUPTI_ACTIVITY_KIND_RUNTIME;
    if (a & TT_CAP_GPU_DRIVER)
        k[n++] = CUPTI_ACTIVITY_KIND_DRIVER;
    if (a & TT_CAP_GPU_MEMORY)
        k[n++] = CUPTI_ACTIVITY_KIND_MEMORY2;
    if (n) {
        k[n++] = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        k[n++] = CUPTI_ACTIVITY_KIND_DEVICE;
    }
    return n;
}

int tt_cap__gpu_start(unsigned activities, pid_t (*os_tid)(uint32_t pt_id))
{
    CUpti_ActivityKind k[16];
    const char *env = getenv("TT_CAPTURE_GPU_BUFFERS_MB");
    CUptiResult r;
    int i, n = kinds_of(activities, k);
    if (!n || tt_cap__gpu_active)
        return tt_cap__gpu_active ? 0 : -1;
    if (load() < 0)
        return -1;
    if (!store_ready) {
        tt_cap__gpu_store_init(&store, STORE_MAX);
        store.map_tid = map_tid;
        store_ready = 1;
    }
    registry_tid = os_tid;
    buf_cap = (size_t)(env && atoi(env) > 0 ? atoi(env) : DEFAULT_CAP_MB) << 20;
    if (api.tscb)
        api.tscb(clock_ns); /* else CUPTI's own clock: see tt_cap__gpu_flush */
    if ((r = api.reg(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
        tt_cap__log_fmt("GPU capture off: cuptiActivityRegisterCallbacks: %s%s", cupti_error(r),
                        hint(r));
        return -1;
    }
    for (i = 0; i < n; i++) {
        if ((r = api.enable(k[i])) != CUPTI_SUCCESS) {
            if (k[i] == CUPTI_ACTIVITY_KIND_DEVICE || k[i] == CUPTI_ACTIVITY_KIND_MEMORY2)
                continue; /* what older drivers lack is left out, not fatal */
            if (!failed_once)
                tt_cap__log_fmt("GPU capture off: cuptiActivityEnable: %s%s", cupti_error(r),
                                hint(r));
            failed_once = 1;
            disable_all();
            return -1;
        }
        enabled[nenabled++] = k[i];
    }
    __atomic_store_n(&tt_cap__gpu_active, 1, __ATOMIC_RELEASE);
    return 0;
}

void tt_cap__gpu_push(uint64_t id, int kind)
{
    api.push(kind == TT_CAP_USER_ANNOTATION ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1
                                            : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
             id);
}

void tt_cap__gpu_pop(int kind)
{
    uint64_t last;
    api.pop(kind == TT_CAP_USER_ANNOTATION ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1
                                           : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
            &last);
}

struct gpu_store *tt_cap__gpu_flush(void)
{
    if (!__atomic_load_n(&tt_cap__gpu_active, __ATOMIC_ACQUIRE))
        return NULL;
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* completed buffers come back now */
    return &store;
}

void tt_cap__gpu_window_done(void)
{
    if (!store_ready)
        return;
    pthread_mutex_lock(&store.lock);
    tt_cap__gpu_store_clear(&store);
    pthread_mutex_unlock(&store.lock);
}

void tt_cap__gpu_stop(void)
{
    if (!__atomic_load_n(&tt_cap__gpu_active, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&tt_cap__gpu_active, 0, __ATOMIC_RELEASE);
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disable_all();
    tt_cap__gpu_window_done();
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    const CUpti_CallbackData *cb = data;
    (void)user;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || !range_fn)
        return;
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 &&
        cb->callbackSite == CUPTI_API_EXIT)
        range_fn(1);
    else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 &&
             cb->callbackSite == CUPTI_API_ENTER)
        range_fn(0);
}

int tt_cap__gpu_profiler_api(void (*fn)(int start))
{
    CUptiResult r;
    if (load() < 0 || !api.subscribe || !api.enable_cb)
        return -1;
    range_fn = fn;
    if ((r = api.subscribe(&subscriber, on_callback, NULL)) != CUPTI_SUCCESS) {
        tt_cap__log_fmt("GPU capture off: cuptiSubscribe: %s%s", cupti_error(r), hint(r));
        return -1;
    }
    if ((r = api.enable_cb(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                           CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)) != CUPTI_SUCCESS ||
        (r = api.enable_cb(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                           CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)) != CUPTI_SUCCESS) {
        tt_cap__log_fmt("GPU capture off: cuptiEnableCallback: %s%s", cupti_error(r), hint(r));
        api.unsubscribe(subscriber);
        return -1;
    }
    return 0;
}

#endif
