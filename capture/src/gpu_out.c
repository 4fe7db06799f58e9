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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_ROWS 16             /* Kineto's kMaxGpuID + 1: rows for GPUs 0-15 */
#define GPU_SORT_BASE 5000000   /* kExceedMaxPid: GPU rows below the CPU's */
#define DEVICE_TYPE_CUDA 1      /* c10::DeviceType::CUDA */

static void ts_us(char *buf, int64_t rel_ns)
{
    if (rel_ns < 0)
        rel_ns = 0; /* transToRelativeTime */
    sprintf(buf, "%lld.%03lld", (long long)(rel_ns / 1000), (long long)(rel_ns % 1000));
}

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
static void bandwidth(char *out, size_t size, int64_t bytes, int64_t dur)
{
    if (dur == 0)
        snprintf(out, size, "\"N/A\"");
    else
        fmt_double(out, size, (double)(uint64_t)bytes * 1.0 / (double)(uint64_t)dur);
}

/* std::to_string(float), or "inf" as a string (blocksPerSm with no device) */
static void float_arg(char *out, size_t size, float v)
{
    if (isinf(v))
        snprintf(out, size, "\"inf\"");
    else if (isnan(v))
        snprintf(out, size, "\"nan\""); /* Kineto writes a bare nan: not JSON */
    else
        snprintf(out, size, "%f", (double)v);
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
    struct out *o;
    struct gpu_store *s;
    int64_t off; /* add to a CLOCK_MONOTONIC ns for the trace's relative ns */
    int *first;
    struct callers calls;
};

static void open_event(struct wctx *w, const char *ph_cat, const char *name)
{
    tt_cap__out_printf(w->o, "%s\n  {%s, \"name\": ", *w->first ? "" : ",", ph_cat);
    *w->first = 0;
    tt_cap__out_json_string(w->o, name, strlen(name));
}

/* "External id": the linked CPU op's, only when there is one */
static void open_args(struct wctx *w, uint32_t correlation)
{
    uint64_t ext = tt_cap__gpu_external_id(w->s, correlation);
    tt_cap__out_printf(w->o, ", \"args\": {");
    if (ext)
        tt_cap__out_printf(w->o, "\"External id\": %llu, ", (unsigned long long)ext);
}

static void flow(struct wctx *w, int start, uint32_t id, long long pid, long long tid,
                 const char *ts)
{
    if (!id)
        return; /* flowId() > 0 only */
    tt_cap__out_printf(w->o, ",\n  {\"ph\": \"%s\", \"id\": %u, \"pid\": %lld, \"tid\": %lld, "
                             "\"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\"%s}",
                       start ? "s" : "f", (unsigned)id, pid, tid, ts, start ? "" : ", \"bp\": \"e\"");
}

static void write_kernel(struct wctx *w, const struct gpu_ev *e, const char *ts, const char *dur)
{
    const struct gpu_device *d = gpu_device_of(w->s, e->device);
    float sms = d ? (float)d->num_sms : 0.0f; /* smCount: 0 without properties */
    float bps = (float)((int64_t)e->grid[0] * e->grid[1] * e->grid[2]) / sms;
    float wps = bps * (float)(e->block[0] * e->block[1] * e->block[2]) / 32;
    char b[48], wp[48];
    float_arg(b, sizeof(b), bps);
    float_arg(wp, sizeof(wp), wps);
    open_event(w, "\"ph\": \"X\", \"cat\": \"kernel\"", e->name);
    tt_cap__out_printf(w->o, ", \"pid\": %u, \"tid\": %lld, \"ts\": %s, \"dur\": %s",
                       (unsigned)e->device, tid_of(e->stream), ts, dur);
    open_args(w, e->correlation);
    /* "queued": the raw timestamp; 0 (CUPTI_TIMESTAMP_UNKNOWN) unless latency
     * timestamps are enabled, which cupti.c does not do */
    tt_cap__out_printf(w->o, "\"queued\": 0, \"device\": %u, \"context\": %u, \"stream\": %u, "
                             "\"correlation\": %u, \"registers per thread\": %u, "
                             "\"shared memory\": %d, \"blocks per SM\": %s, \"warps per SM\": %s, ",
                       (unsigned)e->device, (unsigned)e->context, (unsigned)e->stream,
                       (unsigned)e->correlation, (unsigned)e->regs,
                       (int)(e->static_smem + e->dynamic_smem), b, wp);
    tt_cap__out_printf(w->o, "\"grid\": [%d, %d, %d], \"block\": [%d, %d, %d], "
                             "\"est. achieved occupancy %%\": %d}}",
                       e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1], e->block[2],
                       (int)(0.5 + tt_cap__gpu_occupancy(d, e) * 100.0));
}

static void write_copy(struct wctx *w, const struct gpu_ev *e, const char *ts, const char *dur)
{
    char name[96], bw[48];
    if (e->kind == GPU_MEMSET)
        snprintf(name, sizeof(name), "Memset (%s)", memory_kind(e->dst_kind));
    else
        snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(e->copy_kind),
                 memory_kind(e->src_kind), memory_kind(e->dst_kind));
    bandwidth(bw, sizeof(bw), e->bytes, e->end - e->start);
    open_event(w, e->kind == GPU_MEMSET ? "\"ph\": \"X\", \"cat\": \"gpu_memset\""
                                        : "\"ph\": \"X\", \"cat\": \"gpu_memcpy\"", name);
    tt_cap__out_printf(w->o, ", \"pid\": %u, \"tid\": %lld, \"ts\": %s, \"dur\": %s",
                       (unsigned)e->device, tid_of(e->stream), ts, dur);
    open_args(w, e->correlation);
    if (e->peer)
        tt_cap__out_printf(w->o, "\"fromDevice\": %u, \"inDevice\": %u, \"toDevice\": %u, "
                                 "\"fromContext\": %u, \"inContext\": %u, \"toContext\": %u, ",
                           (unsigned)e->src_device, (unsigned)e->device, (unsigned)e->dst_device,
                           (unsigned)e->src_context, (unsigned)e->context,
                           (unsigned)e->dst_context);
    else
        tt_cap__out_printf(w->o, "\"device\": %u, \"context\": %u, ", (unsigned)e->device,
                           (unsigned)e->context);
    tt_cap__out_printf(w->o, "\"stream\": %u, \"correlation\": %u, \"bytes\": %llu, "
                             "\"memory bandwidth (GB/s)\": %s}}",
                       (unsigned)e->stream, (unsigned)e->correlation,
                       (unsigned long long)e->bytes, bw);
}

static void write_api(struct wctx *w, const struct gpu_ev *e, const char *ts, const char *dur)
{
    open_event(w, e->kind == GPU_RUNTIME ? "\"ph\": \"X\", \"cat\": \"cuda_runtime\""
                                         : "\"ph\": \"X\", \"cat\": \"cuda_driver\"", e->name);
    tt_cap__out_printf(w->o, ", \"pid\": %u, \"tid\": %lld, \"ts\": %s, \"dur\": %s",
                       (unsigned)e->pid, tid_of(e->tid), ts, dur);
    open_args(w, e->correlation);
    tt_cap__out_printf(w->o, "\"cbid\": %u, \"correlation\": %u}}", (unsigned)e->cbid,
                       (unsigned)e->correlation);
    flow(w, flow_start(e), e->correlation, (long long)e->pid, tid_of(e->tid), ts);
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
static void write_memory(struct wctx *w, const struct gpu_ev *e, const char *ts,
                         struct totals *t, int64_t *ev_idx)
{
    int64_t *tot = mem_total_of(t, e->device);
    *tot += e->bytes;
    tt_cap__out_printf(w->o, "%s\n  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
                             "\"name\": \"[memory]\", \"pid\": %u, \"tid\": %lld, \"ts\": %s, ",
                       *w->first ? "" : ",", (unsigned)e->pid,
                       tid_of(caller_tid(&w->calls, e->correlation)), ts);
    *w->first = 0;
    tt_cap__out_printf(w->o, "\"args\": {\"Total Reserved\": %lld, \"Total Allocated\": %lld, "
                             "\"Bytes\": %lld, \"Addr\": %llu, \"Device Id\": %u, "
                             "\"Device Type\": %d, \"Ev Idx\": %lld}}",
                       (long long)*tot, (long long)*tot, (long long)e->bytes,
                       (unsigned long long)e->addr, (unsigned)e->device, DEVICE_TYPE_CUDA,
                       (long long)(*ev_idx)++);
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
static void write_rows(struct wctx *w, uint64_t *streams, size_t ns, const char *ts)
{
    char comm[64];
    size_t i;
    int g;
    qsort(streams, ns, sizeof(*streams), by_u64);
    for (i = 0; i < ns; i++) {
        uint32_t dev = (uint32_t)(streams[i] >> 32), st = (uint32_t)streams[i];
        if (i && streams[i] == streams[i - 1])
            continue;
        tt_cap__out_printf(w->o, "%s\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %s, "
                                 "\"pid\": %u, \"tid\": %lld, \"args\": {\"name\": \"stream %u \"}},"
                                 "\n  {\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": %s, "
                                 "\"pid\": %u, \"tid\": %lld, \"args\": {\"sort_index\": %u}}",
                           *w->first ? "" : ",", ts, (unsigned)dev, tid_of(st), (unsigned)st, ts,
                           (unsigned)dev, tid_of(st), (unsigned)st);
        *w->first = 0;
    }
    tt_cap__process_name(comm, sizeof(comm));
    for (g = 0; g < GPU_ROWS; g++) {
        tt_cap__out_printf(w->o, "%s\n  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %s, "
                                 "\"pid\": %d, \"tid\": 0, \"args\": {\"name\": ",
                           *w->first ? "" : ",", ts, g);
        *w->first = 0;
        tt_cap__out_json_string(w->o, comm, strlen(comm));
        tt_cap__out_printf(w->o, "}},\n  {\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": %s, "
                                 "\"pid\": %d, \"tid\": 0, \"args\": {\"labels\": \"GPU %d\"}},"
                                 "\n  {\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": %s, "
                                 "\"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
                           ts, g, g, ts, g, g + GPU_SORT_BASE);
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

int tt_cap__gpu_write_events(struct out *o, struct gpu_store *s, int64_t base, int64_t mono_to_unix,
                             int64_t t_lo, int64_t t_hi, int64_t *ev_idx, int *first)
{
    struct wctx w = { o, s, mono_to_unix - base, first, { NULL, NULL, 0 } };
    struct totals tot;
    struct order *v;
    uint64_t *streams = NULL;
    size_t n = 0, ns = 0, i;
    char ts[32], dur[32];
    tot.n = 0;
    if (!(v = select_events(s, t_lo, t_hi, &n)) || callers_build(&w.calls, s) < 0 ||
        !(streams = tt_cap__fault_alloc ? NULL : malloc((n ? n : 1) * sizeof(*streams)))) {
        free(w.calls.key);
        free(w.calls.tid);
        free(v);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const struct gpu_ev *e = &s->ev[v[i].i];
        ts_us(ts, e->start + w.off);
        ts_us(dur, e->end - e->start);
        switch (e->kind) {
        case GPU_KERNEL:
        case GPU_MEMCPY:
        case GPU_MEMSET:
            if (e->kind == GPU_KERNEL)
                write_kernel(&w, e, ts, dur);
            else
                write_copy(&w, e, ts, dur);
            flow(&w, 0, e->correlation, (long long)e->device, tid_of(e->stream), ts);
            streams[ns++] = (uint64_t)e->device << 32 | e->stream; /* recordStream */
            break;
        case GPU_RUNTIME:
        case GPU_DRIVER:
            write_api(&w, e, ts, dur);
            break;
        case GPU_MEMORY:
            write_memory(&w, e, ts, &tot, ev_idx);
            break;
        default:
            break;
        }
    }
    ts_us(ts, t_lo + w.off); /* the rows carry the window's start */
    write_rows(&w, streams, ns, ts);
    free(w.calls.key);
    free(w.calls.tid);
    free(streams);
    free(v);
    return tt_cap__out_write(o, "", 0);
}

/* createDevicePropertiesJson, by device id */
int tt_cap__gpu_write_devices(struct out *o, const struct gpu_store *s)
{
    uint32_t last = 0;
    size_t i, k;
    tt_cap__out_printf(o, "[");
    for (k = 0; k < s->ndev; k++) {
        const struct gpu_device *d = NULL;
        for (i = 0; i < s->ndev; i++)
            if ((!k || s->dev[i].id > last) && (!d || s->dev[i].id < d->id))
                d = &s->dev[i];
        last = d->id;
        tt_cap__out_printf(o, "%s\n    {\"id\": %u, \"name\": ", k ? "," : "", (unsigned)d->id);
        tt_cap__out_json_string(o, d->name, strlen(d->name));
        tt_cap__out_printf(o, ", \"totalGlobalMem\": %llu, \"computeMajor\": %u, "
                              "\"computeMinor\": %u, \"maxThreadsPerBlock\": %u, "
                              "\"maxThreadsPerMultiprocessor\": %u, \"regsPerBlock\": %u, "
                              "\"warpSize\": %u, \"sharedMemPerBlock\": %u, \"numSms\": %u",
                           (unsigned long long)d->total_global_mem, (unsigned)d->compute_major,
                           (unsigned)d->compute_minor, (unsigned)d->max_threads_per_block,
                           (unsigned)d->max_threads_per_sm, (unsigned)d->regs_per_block,
                           (unsigned)d->warp_size, (unsigned)d->smem_per_block,
                           (unsigned)d->num_sms);
        tt_cap__out_printf(o, ", \"regsPerMultiprocessor\": %u, \"sharedMemPerBlockOptin\": %u, "
                              "\"sharedMemPerMultiprocessor\": %u}",
                           (unsigned)d->regs_per_sm, (unsigned)d->smem_per_block_optin,
                           (unsigned)d->smem_per_sm);
    }
    tt_cap__out_printf(o, "%s", s->ndev ? "\n  ]" : "]");
    return tt_cap__out_write(o, "", 0);
}
