/*
 * capture/src/gpu_out.c - the window's GPU activities as the Chrome-trace
 * events Kineto writes for them. Formats follow pytorch/kineto at 36f6d719
 * (2025-11, what PyTorch 2.5 to 2.9 write):
 *   libkineto/src/output_json.cpp  ChromeTraceLogger::handleActivity (the
 *     "X" event: "External id" of the linked CPU op first, then the
 *     activity's metadata), handleGenericLink / handleLink ("ac2g" flows,
 *     id = correlation), handleResourceInfo (stream rows),
 *     handleDeviceInfo (process rows);
 *   libkineto/src/CuptiActivity.cpp  GpuActivity<...>::name/metadataJson
 *     (kernel, memcpy, peer-to-peer memcpy, memset), RuntimeActivity and
 *     DriverActivity (args, flowStart);
 *   libkineto/src/DeviceProperties.cpp  blocksPerSm, warpsPerSm,
 *     kernelOccupancy, createDevicePropertiesJson ("deviceProperties");
 *   libkineto/src/CuptiActivityProfiler.cpp  outOfRange (the window),
 *     recordStream ("stream N " rows), finalizeTrace (rows for GPUs 0-15).
 * cudaMalloc / cudaFree, which Kineto does not record, are "[memory]"
 * instants as PyTorch's allocator events are (kineto_out.c), Device Type 1.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "capture/src/gpu.h"
#include "report/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_ROWS 16             /* Kineto's kMaxGpuID + 1: rows for GPUs 0-15 */
#define GPU_SORT_BASE 5000000   /* kExceedMaxPid: GPU rows below the CPU's */
#define DEVICE_TYPE_CUDA 1      /* c10::DeviceType::CUDA */

/* output_json.cpp's sanitizeTid: negative ids written positive */
static long long tid_of(uint32_t id)
{
    int32_t t = (int32_t)id;
    return t == INT32_MIN ? 0 : t < 0 ? -(long long)t : t;
}

/* the shortest text that reads back as v, laid out as fmt's "{}" does
 * (Kineto formats the bandwidth with it): fixed notation for exponents
 * -4..15, no ".0" on whole numbers, else d.ddde+XX */
static void fmt_double(char *out, size_t size, double v)
{
    char e[40], digits[24];
    int p, exp, nd = 0, i, k = 0;
    const char *q;
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    if (!isfinite(v) || p > 17) {
        snprintf(out, size, "%.17g", v);
        return;
    }
    q = e;
    if (*q == '-')
        out[k++] = *q++;
    for (; *q && *q != 'e'; q++)
        if (*q != '.')
            digits[nd++] = *q;
    exp = atoi(q + 1);
    if (exp < -4 || exp >= 16) {
        snprintf(out, size, "%s", e);
        return;
    }
    if (exp < 0) {
        k += snprintf(out + k, size - (size_t)k, "0.");
        for (i = 0; i < -exp - 1; i++)
            out[k++] = '0';
        for (i = 0; i < nd; i++)
            out[k++] = digits[i];
    } else {
        for (i = 0; i <= exp; i++)
            out[k++] = i < nd ? digits[i] : '0';
        if (nd > exp + 1)
            out[k++] = '.';
        for (i = exp + 1; i < nd; i++)
            out[k++] = digits[i];
    }
    out[k] = 0;
}

/* CuptiActivity.cpp's bandwidth(): bytes per ns is GB/s; "N/A" for 0 ns */
static void bandwidth(tt_jw *w, int64_t bytes, int64_t dur)
{
    char t[48];
    if (dur == 0) {
        tt_jw_str(w, "N/A");
        return;
    }
    fmt_double(t, sizeof(t), (double)(uint64_t)bytes * 1.0 / (double)(uint64_t)dur);
    tt_jw_raw(w, t, (size_t)-1);
}

/* std::to_string(float), or "inf" as a string (blocksPerSm with no device) */
static void float_arg(tt_jw *w, float v)
{
    if (isinf(v))
        tt_jw_str(w, "inf");
    else if (isnan(v))
        tt_jw_str(w, "nan"); /* Kineto writes a bare nan: not JSON */
    else
        tt_jw_num(w, (double)v, 6); /* "%f" */
}

static const char *copy_kind(unsigned k)
{
    static const char *const n[] = { "<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                     "AtoD",      "DtoA", "DtoD", "HtoH", "PtoP" };
    return k < sizeof(n) / sizeof(n[0]) && k ? n[k] : "<unknown>";
}

static const char *memory_kind(unsigned k)
{
    static const char *const n[] = { "Unknown", "Pageable", "Pinned",        "Device",
                                     "Array",   "Managed",  "Device Static", "Managed Static" };
    return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unrecognized";
}

/* RuntimeActivity::flowStart (callback ids of cupti_runtime_cbid.h, checked
 * in cupti_conv.c): launches, copies and sets, graph launches and syncs start
 * a flow; any other call ends one. Driver calls kept are launches. */
static int flow_start(const struct gpu_ev *e)
{
    uint32_t c = e->cbid;
    if (e->kind == GPU_DRIVER)
        return 1;
    return c == 211 || (c >= 31 && c <= 52) || c == 269 || c == 272 || c == 311 || c == 131 ||
           c == 165 || c == 147 || c == 430;
}

static const struct gpu_device *gpu_device_of(const struct gpu_store *s, uint32_t id)
{
    size_t i;
    for (i = 0; i < s->ndev; i++)
        if (s->dev[i].id == id)
            return &s->dev[i];
    return NULL;
}

/* correlation -> the thread of its runtime or driver call (for [memory]) */
struct callers {
    uint32_t *key, *tid;
    size_t cap; /* a power of 2; 0: no map */
};

struct wctx {
    tt_jw *w;
    struct gpu_store *s;
    int64_t off; /* add to a CLOCK_MONOTONIC ns for the trace's relative ns */
    int n;       /* events written */
    struct callers calls;
};

/* an "X" event up to its args: ph, cat, name, pid, tid, ts, dur, then "args"
 * with "External id" of the linked CPU op first, only when there is one */
static void open_event(struct wctx *c, const char *cat, const char *name, const struct gpu_ev *e,
                       int64_t pid, int64_t tid)
{
    tt_jw *w = c->w;
    uint64_t ext = tt_cap__gpu_external_id(c->s, e->correlation);
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "X");
    tt_jw_kstr(w, "cat", cat);
    tt_jw_key(w, "name");
    tt_cap__json_str(w, name, strlen(name));
    tt_jw_kint(w, "pid", pid);
    tt_jw_kint(w, "tid", tid);
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, e->start + c->off);
    tt_jw_key(w, "dur");
    tt_cap__json_us(w, e->end - e->start);
    tt_jw_kobj(w, "args");
    if (ext)
        tt_jw_kuint(w, "External id", ext);
    c->n++;
}

static void close_event(struct wctx *c)
{
    tt_jw_end(c->w);
    tt_jw_end(c->w);
}

/* an "ac2g" flow's start (a call) or end (an activity) at ts */
static void flow(struct wctx *c, int start, uint32_t id, int64_t pid, int64_t tid, int64_t ts)
{
    tt_jw *w = c->w;
    if (!id)
        return; /* flowId() > 0 only */
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", start ? "s" : "f");
    tt_jw_kuint(w, "id", id);
    tt_jw_kint(w, "pid", pid);
    tt_jw_kint(w, "tid", tid);
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, ts + c->off);
    tt_jw_kstr(w, "cat", "ac2g");
    tt_jw_kstr(w, "name", "ac2g");
    if (!start)
        tt_jw_kstr(w, "bp", "e");
    tt_jw_end(w);
    c->n++;
}

static void write_kernel(struct wctx *c, const struct gpu_ev *e)
{
    tt_jw *w = c->w;
    const struct gpu_device *d = gpu_device_of(c->s, e->device);
    float sms = d ? (float)d->num_sms : 0.0f; /* smCount: 0 without properties */
    float bps = (float)((int64_t)e->grid[0] * e->grid[1] * e->grid[2]) / sms;
    float wps = bps * (float)(e->block[0] * e->block[1] * e->block[2]) / 32;
    int i;
    open_event(c, "kernel", e->name, e, e->device, tid_of(e->stream));
    /* "queued": the raw timestamp; 0 (CUPTI_TIMESTAMP_UNKNOWN) unless latency
     * timestamps are enabled, which cupti.c does not do */
    tt_jw_kint(w, "queued", 0);
    tt_jw_kuint(w, "device", e->device);
    tt_jw_kuint(w, "context", e->context);
    tt_jw_kuint(w, "stream", e->stream);
    tt_jw_kuint(w, "correlation", e->correlation);
    tt_jw_kuint(w, "registers per thread", e->regs);
    tt_jw_kint(w, "shared memory", (int)(e->static_smem + e->dynamic_smem));
    tt_jw_key(w, "blocks per SM");
    float_arg(w, bps);
    tt_jw_key(w, "warps per SM");
    float_arg(w, wps);
    tt_jw_karr(w, "grid");
    for (i = 0; i < 3; i++)
        tt_jw_int(w, e->grid[i]);
    tt_jw_end(w);
    tt_jw_karr(w, "block");
    for (i = 0; i < 3; i++)
        tt_jw_int(w, e->block[i]);
    tt_jw_end(w);
    tt_jw_kint(w, "est. achieved occupancy %", (int)(0.5 + tt_cap__gpu_occupancy(d, e) * 100.0));
    close_event(c);
}

static void write_copy(struct wctx *c, const struct gpu_ev *e)
{
    tt_jw *w = c->w;
    char name[96];
    if (e->kind == GPU_MEMSET)
        snprintf(name, sizeof(name), "Memset (%s)", memory_kind(e->dst_kind));
    else
        snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(e->copy_kind),
                 memory_kind(e->src_kind), memory_kind(e->dst_kind));
    open_event(c, e->kind == GPU_MEMSET ? "gpu_memset" : "gpu_memcpy", name, e, e->device,
               tid_of(e->stream));
    if (e->peer) {
        tt_jw_kuint(w, "fromDevice", e->src_device);
        tt_jw_kuint(w, "inDevice", e->device);
        tt_jw_kuint(w, "toDevice", e->dst_device);
        tt_jw_kuint(w, "fromContext", e->src_context);
        tt_jw_kuint(w, "inContext", e->context);
        tt_jw_kuint(w, "toContext", e->dst_context);
    } else {
        tt_jw_kuint(w, "device", e->device);
        tt_jw_kuint(w, "context", e->context);
    }
    tt_jw_kuint(w, "stream", e->stream);
    tt_jw_kuint(w, "correlation", e->correlation);
    tt_jw_kuint(w, "bytes", (uint64_t)e->bytes);
    tt_jw_key(w, "memory bandwidth (GB/s)");
    bandwidth(w, e->bytes, e->end - e->start);
    close_event(c);
}

static void write_api(struct wctx *c, const struct gpu_ev *e)
{
    open_event(c, e->kind == GPU_RUNTIME ? "cuda_runtime" : "cuda_driver", e->name, e, e->pid,
               tid_of(e->tid));
    tt_jw_kuint(c->w, "cbid", e->cbid);
    tt_jw_kuint(c->w, "correlation", e->correlation);
    close_event(c);
    flow(c, flow_start(e), e->correlation, e->pid, tid_of(e->tid), e->start);
}

/* per-device running totals of the window's cudaMalloc / cudaFree */
struct totals {
    uint32_t dev[64];
    int64_t bytes[64];
    int n;
};

static int64_t *mem_total_of(struct totals *t, uint32_t dev)
{
    int i;
    for (i = 0; i < t->n; i++)
        if (t->dev[i] == dev)
            return &t->bytes[i];
    if (t->n == 64)
        return &t->bytes[63]; /* 64 devices share the last: never in practice */
    t->dev[t->n] = dev;
    t->bytes[t->n] = 0;
    return &t->bytes[t->n++];
}

static size_t caller_slot(const struct callers *c, uint32_t corr)
{
    size_t i = (size_t)(corr * 2654435761u) & (c->cap - 1);
    while (c->key[i] && c->key[i] != corr)
        i = (i + 1) & (c->cap - 1);
    return i;
}

/* built when the window has memory events: a cudaMalloc record has no
 * thread, its runtime call (the same correlation, in the store) has */
static int callers_build(struct callers *c, const struct gpu_store *s)
{
    size_t i, napi = 0, nmem = 0, cap = 16;
    for (i = 0; i < s->n; i++) {
        napi += s->ev[i].kind == GPU_RUNTIME || s->ev[i].kind == GPU_DRIVER;
        nmem += s->ev[i].kind == GPU_MEMORY;
    }
    if (!nmem)
        return 0;
    while (cap < napi * 2)
        cap *= 2;
    c->key = tt_cap__fault_alloc ? NULL : calloc(cap, sizeof(*c->key));
    c->tid = tt_cap__fault_alloc ? NULL : calloc(cap, sizeof(*c->tid));
    if (!c->key || !c->tid)
        return -1;
    c->cap = cap;
    for (i = 0; i < s->n; i++) {
        const struct gpu_ev *e = &s->ev[i];
        size_t j;
        if ((e->kind != GPU_RUNTIME && e->kind != GPU_DRIVER) || !e->correlation)
            continue;
        j = caller_slot(c, e->correlation);
        c->key[j] = e->correlation;
        c->tid[j] = e->tid;
    }
    return 0;
}

/* the thread of the runtime call of a correlation (0: none in the store) */
static uint32_t caller_tid(const struct callers *c, uint32_t correlation)
{
    size_t j;
    if (!c->cap || !correlation)
        return 0;
    j = caller_slot(c, correlation);
    return c->key[j] == correlation ? c->tid[j] : 0;
}

/* kineto_out.c's "[memory]" event; totals count from the window's start */
static void write_memory(struct wctx *c, const struct gpu_ev *e, struct totals *t,
                         int64_t *ev_idx)
{
    int64_t *tot = mem_total_of(t, e->device);
    struct tt_cap_mem_ev m;
    *tot += e->bytes;
    m.pid = e->pid;
    m.tid = tid_of(caller_tid(&c->calls, e->correlation));
    m.rel_ns = e->start + c->off;
    m.reserved = m.allocated = *tot;
    m.bytes = e->bytes;
    m.addr = e->addr;
    m.dev_id = e->device;
    m.dev_type = DEVICE_TYPE_CUDA;
    tt_cap__kineto_memory(c->w, &m, ev_idx);
    c->n++;
}

struct order {
    int64_t start;
    size_t i;
};

static int by_start(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i; /* stable */
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* finalizeTrace's rows: each stream's (resourceInfo_, by device then
 * stream), then GPUs 0-15 named after the process (handleDeviceInfo) */
static void write_rows(struct wctx *c, uint64_t *streams, size_t ns, int64_t ts)
{
    tt_jw *w = c->w;
    char comm[64], label[32];
    size_t i;
    int g;
    qsort(streams, ns, sizeof(*streams), by_u64);
    for (i = 0; i < ns; i++) {
        uint32_t dev = (uint32_t)(streams[i] >> 32), st = (uint32_t)streams[i];
        char name[32];
        if (i && streams[i] == streams[i - 1])
            continue;
        snprintf(name, sizeof(name), "stream %u ", (unsigned)st);
        tt_cap__kineto_meta(w, "thread_name", ts, dev, tid_of(st), "name");
        tt_jw_str(w, name);
        tt_jw_end(w);
        tt_jw_end(w);
        tt_cap__kineto_meta(w, "thread_sort_index", ts, dev, tid_of(st), "sort_index");
        tt_jw_uint(w, st);
        tt_jw_end(w);
        tt_jw_end(w);
        c->n += 2;
    }
    tt_cap__process_name(comm, sizeof(comm));
    for (g = 0; g < GPU_ROWS; g++) {
        tt_cap__kineto_meta(w, "process_name", ts, g, 0, "name");
        tt_cap__json_str(w, comm, strlen(comm));
        tt_jw_end(w);
        tt_jw_end(w);
        snprintf(label, sizeof(label), "GPU %d", g);
        tt_cap__kineto_meta(w, "process_labels", ts, g, 0, "labels");
        tt_jw_str(w, label);
        tt_jw_end(w);
        tt_jw_end(w);
        tt_cap__kineto_meta(w, "process_sort_index", ts, g, 0, "sort_index");
        tt_jw_int(w, g + GPU_SORT_BASE);
        tt_jw_end(w);
        tt_jw_end(w);
        c->n += 3;
    }
}

/* the records to write, by start time; the others counted */
static struct order *select_events(struct gpu_store *s, int64_t t_lo, int64_t t_hi, size_t *n)
{
    struct order *v = tt_cap__fault_alloc ? NULL : malloc((s->n ? s->n : 1) * sizeof(*v));
    size_t i, k = 0;
    if (!v)
        return NULL;
    for (i = 0; i < s->n; i++) {
        const struct gpu_ev *e = &s->ev[i];
        /* outOfRange: starts before the window or ends after it */
        if (!e->start || e->end < e->start || e->start < t_lo || e->end > t_hi) {
            s->bad_timestamps++;
            continue;
        }
        v[k].start = e->start;
        v[k++].i = i;
    }
    qsort(v, k, sizeof(*v), by_start);
    *n = k;
    return v;
}

int tt_cap__gpu_events(tt_jw *w, struct gpu_store *s, int64_t base, int64_t mono_to_unix,
                       int64_t t_lo, int64_t t_hi, int64_t *ev_idx)
{
    struct wctx c = { w, s, mono_to_unix - base, 0, { NULL, NULL, 0 } };
    struct totals tot;
    struct order *v;
    uint64_t *streams = NULL;
    size_t n = 0, ns = 0, i;
    tot.n = 0;
    if (!(v = select_events(s, t_lo, t_hi, &n)) || callers_build(&c.calls, s) < 0 ||
        !(streams = tt_cap__fault_alloc ? NULL : malloc((n ? n : 1) * sizeof(*streams)))) {
        free(c.calls.key);
        free(c.calls.tid);
        free(v);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const struct gpu_ev *e = &s->ev[v[i].i];
        switch (e->kind) {
        case GPU_KERNEL:
        case GPU_MEMCPY:
        case GPU_MEMSET:
            if (e->kind == GPU_KERNEL)
                write_kernel(&c, e);
            else
                write_copy(&c, e);
            flow(&c, 0, e->correlation, e->device, tid_of(e->stream), e->start);
            streams[ns++] = (uint64_t)e->device << 32 | e->stream; /* recordStream */
            break;
        case GPU_RUNTIME:
        case GPU_DRIVER:
            write_api(&c, e);
            break;
        case GPU_MEMORY:
            write_memory(&c, e, &tot, ev_idx);
            break;
        default:
            break;
        }
    }
    write_rows(&c, streams, ns, t_lo + c.off); /* the rows carry the window's start */
    free(c.calls.key);
    free(c.calls.tid);
    free(streams);
    free(v);
    return c.n;
}

/* the events in a buffer, then handed to o without the array's brackets */
int tt_cap__gpu_write_events(struct out *o, struct gpu_store *s, int64_t base, int64_t mono_to_unix,
                             int64_t t_lo, int64_t t_hi, int64_t *ev_idx, int *first)
{
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    int n;
    tt_jw_init(&w, &b, 0);
    tt_jw_arr(&w);
    n = tt_cap__gpu_events(&w, s, base, mono_to_unix, t_lo, t_hi, ev_idx);
    tt_jw_end(&w);
    if (tt_cap__out_jw_end(&w) < 0)
        n = -1;
    if (n > 0) { /* "[\n  {...},\n  {...}]" */
        if (!*first)
            tt_cap__out_write(o, ",", 1);
        *first = 0;
        n = tt_cap__out_write(o, b.buf + 1, b.len - 2);
    }
    tt_buf_release(&b);
    return n < 0 ? -1 : 0;
}

void tt_cap__gpu_devices(tt_jw *w, const struct gpu_store *s)
{
    uint32_t last = 0;
    size_t i, k;
    tt_jw_arr(w);
    for (k = 0; k < s->ndev; k++) {
        const struct gpu_device *d = NULL;
        for (i = 0; i < s->ndev; i++)
            if ((!k || s->dev[i].id > last) && (!d || s->dev[i].id < d->id))
                d = &s->dev[i];
        last = d->id;
        tt_jw_nl(w, 4);
        tt_jw_obj(w);
        tt_jw_kuint(w, "id", d->id);
        tt_jw_key(w, "name");
        tt_cap__json_str(w, d->name, strlen(d->name));
        tt_jw_kuint(w, "totalGlobalMem", d->total_global_mem);
        tt_jw_kuint(w, "computeMajor", d->compute_major);
        tt_jw_kuint(w, "computeMinor", d->compute_minor);
        tt_jw_kuint(w, "maxThreadsPerBlock", d->max_threads_per_block);
        tt_jw_kuint(w, "maxThreadsPerMultiprocessor", d->max_threads_per_sm);
        tt_jw_kuint(w, "regsPerBlock", d->regs_per_block);
        tt_jw_kuint(w, "warpSize", d->warp_size);
        tt_jw_kuint(w, "sharedMemPerBlock", d->smem_per_block);
        tt_jw_kuint(w, "numSms", d->num_sms);
        tt_jw_kuint(w, "regsPerMultiprocessor", d->regs_per_sm);
        tt_jw_kuint(w, "sharedMemPerBlockOptin", d->smem_per_block_optin);
        tt_jw_kuint(w, "sharedMemPerMultiprocessor", d->smem_per_sm);
        tt_jw_end(w);
    }
    if (s->ndev)
        tt_jw_nl(w, 2);
    tt_jw_end(w);
}

int tt_cap__gpu_write_devices(struct out *o, const struct gpu_store *s)
{
    tt_jw w;
    tt_cap__out_jw(o, &w, 0);
    tt_cap__gpu_devices(&w, s);
    return tt_cap__out_jw_end(&w);
}
