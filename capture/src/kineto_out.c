/*
 * capture/src/kineto_out.c - a window as the Chrome-trace JSON that Kineto
 * 2.x writes (libkineto's output_json.cpp, ChromeTraceLogger): the header
 * keys in Kineto's order, times in µs with ns fractions relative to
 * baseTimeNanoseconds, cpu_op / user_annotation complete events with
 * External id, Record function id, Ev Idx and the input shapes, [memory]
 * instants, process and thread rows, and Kineto's trailer events. With GPU
 * capture, the window's GPU activities (gpu_out.c) follow the CPU threads'
 * events, "deviceProperties" lists the devices, and "tracetool_gpu" (after
 * traceEvents: it counts what writing them skipped) says what was lost.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "capture/src/gpu.h"
#include "common/i64map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE_PERIOD_NS 7889238000000000LL /* Kineto floors the base time to this */

static void ts_us(char *buf, int64_t rel_ns)
{
    if (rel_ns < 0)
        rel_ns = 0;
    sprintf(buf, "%lld.%03lld", (long long)(rel_ns / 1000), (long long)(rel_ns % 1000));
}

/* "Input Dims" and "Input type" of a shapes record */
static void write_shapes(struct out *o, const struct rec_shapes *s)
{
    const unsigned char *p, *dims;
    const char *dtype;
    int32_t nd, dl;
    int i, pass;
    for (pass = 0; pass < 2; pass++) {
        tt_cap__out_printf(o, pass ? ", \"Input type\": [" : ", \"Input Dims\": [");
        p = (const unsigned char *)(s + 1);
        for (i = 0; i < s->n; i++) {
            p = tt_cap__shape_next(p, &nd, &dims, &dtype, &dl);
            tt_cap__out_printf(o, i ? ", " : "");
            if (!pass)
                tt_cap__out_dims(o, dims, nd);
            else
                tt_cap__out_json_string(o, dtype, (size_t)dl);
        }
        tt_cap__out_printf(o, "]");
    }
}

static int write_thread(struct out *o, const struct tt_cap_trace *tr, const struct trace_thread *th,
                        int64_t base, int64_t *ev_idx, int *first)
{
    const struct rec_scope **v = NULL;
    const struct rec_shapes **shp = NULL;
    struct i64map shapes = { 0 };
    const struct rec_hdr *h;
    const struct chunk *c;
    size_t n = 0, i, off, si;
    long pid = (long)getpid();
    char ts[32], dur[32];
    if (tt_cap__scopes(th, &v, &n, tr->record_shapes ? &shapes : NULL, &shp) < 0) {
        tt_cap__set_error("out of memory writing a trace");
        free((void *)v);
        free((void *)shp);
        tt__i64map_free(&shapes);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const struct rec_scope *s = v[i];
        int kind = s->loc ? s->loc->kind : TT_CAP_USER_ANNOTATION;
        ts_us(ts, s->t0 + tr->mono_to_unix - base);
        ts_us(dur, s->t1 - s->t0);
        tt_cap__out_printf(o, "%s\n  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", *first ? "" : ",",
                           kind == TT_CAP_USER_ANNOTATION ? "user_annotation" : "cpu_op");
        *first = 0;
        if (s->loc) {
            const char *nm = s->loc->name ? s->loc->name : TT_CAP_NULL_NAME;
            tt_cap__out_json_string(o, nm, strlen(nm));
        } else {
            tt_cap__out_printf(o, "\"ProfilerStep#%lld\"", (long long)s->step);
        }
        tt_cap__out_printf(o, ", \"pid\": %ld, \"tid\": %ld, \"ts\": %s, \"dur\": %s, \"args\": {"
                              "\"External id\": %llu, \"Record function id\": %llu, \"Ev Idx\": %lld",
                           pid, (long)th->os_tid, ts, dur, (unsigned long long)s->rf_id,
                           (unsigned long long)s->rf_id, (long long)(*ev_idx)++);
        if (shapes.n && tt__i64map_get(&shapes, (int64_t)s->rf_id, &si))
            write_shapes(o, shp[si]);
        tt_cap__out_printf(o, "}}");
    }
    for (h = tt_cap__rec_first(th, &c, &off); h; h = tt_cap__rec_next(&c, &off)) {
        const struct rec_mem *m = (const struct rec_mem *)h;
        if (h->type == REC_COUNTER) {
            const struct rec_counter *k = (const struct rec_counter *)h;
            const char *gn = (const char *)(k + 1);
            ts_us(ts, k->t + tr->mono_to_unix - base);
            tt_cap__out_printf(o, "%s\n  {\"ph\": \"C\", \"name\": ", *first ? "" : ",");
            *first = 0;
            tt_cap__out_json_string(o, gn, k->group_len);
            tt_cap__out_printf(o, ", \"pid\": %ld, \"tid\": %ld, \"ts\": %s, \"args\": {", pid,
                               (long)th->os_tid, ts);
            tt_cap__out_json_string(o, gn + k->group_len, k->name_len);
            tt_cap__out_printf(o, ": %lld}}", (long long)k->value);
            continue;
        }
        if (h->type != REC_MEM)
            continue;
        ts_us(ts, m->t + tr->mono_to_unix - base);
        tt_cap__out_printf(o, "%s\n  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
                              "\"name\": \"[memory]\", \"pid\": %ld, \"tid\": %ld, \"ts\": %s, ",
                           *first ? "" : ",", pid, (long)th->os_tid, ts);
        *first = 0;
        tt_cap__out_printf(o, "\"args\": {\"Total Reserved\": %lld, \"Total Allocated\": %lld, "
                              "\"Bytes\": %lld, \"Addr\": %llu, \"Device Id\": %d, "
                              "\"Device Type\": %d, \"Ev Idx\": %lld}}",
                           (long long)m->total_reserved, (long long)m->total_allocated,
                           (long long)m->bytes, (unsigned long long)m->addr, m->dev_id,
                           m->dev_type, (long long)(*ev_idx)++);
    }
    free((void *)v);
    free((void *)shp);
    tt__i64map_free(&shapes);
    return 0;
}

static void write_rows(struct out *o, const struct tt_cap_trace *tr, int64_t base, size_t nops)
{
    char ts[32], dur[32], comm[64], tname[64];
    long pid = (long)getpid();
    size_t i;
    ts_us(ts, tr->start_mono + tr->mono_to_unix - base);
    tt_cap__process_name(comm, sizeof(comm));
    tt_cap__out_printf(o, ",\n  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %s, \"pid\": %ld, "
                          "\"tid\": 0, \"args\": {\"name\": ", ts, pid);
    tt_cap__out_json_string(o, comm, strlen(comm));
    tt_cap__out_printf(o, "}},\n  {\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": %s, "
                          "\"pid\": %ld, \"tid\": 0, \"args\": {\"labels\": \"CPU\"}}", ts, pid);
    for (i = 0; i < tr->nth; i++) {
        const struct trace_thread *th = &tr->th[i];
        snprintf(tname, sizeof(tname), "thread %ld (%s)", (long)th->os_tid, th->name);
        tt_cap__out_printf(o, ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %s, "
                              "\"pid\": %ld, \"tid\": %ld, \"args\": {\"name\": ", ts, pid,
                           (long)th->os_tid);
        tt_cap__out_json_string(o, tname, strlen(tname));
        tt_cap__out_printf(o, "}}");
    }
    ts_us(dur, tr->end_mono - tr->start_mono);
    tt_cap__out_printf(o, ",\n  {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": %s, \"dur\": %s, "
                          "\"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", "
                          "\"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": %zu}}",
                       ts, dur, nops);
    tt_cap__out_printf(o, ",\n  {\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": %s, "
                          "\"pid\": \"Spans\", \"tid\": 0, \"args\": {\"sort_index\": 536870912}}", ts);
    tt_cap__out_printf(o, ",\n  {\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", "
                          "\"s\": \"g\", \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", "
                          "\"ts\": %s}", ts);
    ts_us(ts, tr->end_mono + tr->mono_to_unix - base);
    tt_cap__out_printf(o, ",\n  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", "
                          "\"pid\": \"\", \"tid\": \"\", \"ts\": %s}", ts);
}

/* the GPU store is filled by CUPTI's thread: held while it is written */
static int write_gpu_events(struct out *o, const struct tt_cap_trace *tr, int64_t base,
                            int64_t *ev_idx, int *first)
{
    struct gpu_store *g = tr->gpu;
    int rc;
    pthread_mutex_lock(&g->lock);
    rc = tt_cap__gpu_write_events(o, g, base, tr->mono_to_unix, tr->start_mono, tr->end_mono,
                                  ev_idx, first);
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static void write_gpu_counts(struct out *o, struct gpu_store *g)
{
    pthread_mutex_lock(&g->lock);
    tt_cap__out_printf(o, ",\n  \"tracetool_gpu\": {\"dropped_records\": %llu, "
                          "\"dropped_over_limit\": %llu, \"bad_timestamps\": %llu, "
                          "\"unknown_records\": %llu}",
                       (unsigned long long)g->dropped_records, (unsigned long long)g->dropped_store,
                       (unsigned long long)g->bad_timestamps, (unsigned long long)g->unknown_records);
    pthread_mutex_unlock(&g->lock);
}

int tt_cap__write_kineto(const struct tt_cap_trace *tr, const char *path)
{
    struct out *o = tt_cap__out_open(path);
    int64_t start_unix = tr->start_mono + tr->mono_to_unix;
    int64_t base = start_unix / BASE_PERIOD_NS * BASE_PERIOD_NS, ev_idx = 0;
    const char *slash = strrchr(path, '/');
    size_t i;
    int first = 1, ok = 1;
    if (!o)
        return TT_CAP_EIO;
    tt_cap__out_printf(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ");
    if (tr->gpu) {
        pthread_mutex_lock(&tr->gpu->lock);
        ok = tt_cap__gpu_write_devices(o, tr->gpu) == 0;
        pthread_mutex_unlock(&tr->gpu->lock);
    } else {
        tt_cap__out_printf(o, "[]");
    }
    tt_cap__out_printf(o, ",\n");
    if (tr->record_shapes)
        tt_cap__out_printf(o, "  \"record_shapes\": 1,\n");
    tt_cap__out_printf(o, "  \"tracetool_capture\": {\"dropped_events\": %llu, "
                          "\"ignored_starts\": %llu, \"max_duration_reached\": %d},\n",
                       (unsigned long long)tr->dropped, (unsigned long long)tr->ignored_starts,
                       tr->max_duration_hit);
    tt_cap__out_printf(o, "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %lld,\n"
                          "  \"traceEvents\": [", (long long)base);
    for (i = 0; i < tr->nth && ok; i++)
        ok = write_thread(o, tr, &tr->th[i], base, &ev_idx, &first) == 0;
    if (ok && tr->gpu)
        ok = write_gpu_events(o, tr, base, &ev_idx, &first) == 0;
    if (first)
        tt_cap__out_printf(o, "\n  {\"name\": \"process_labels\", \"ph\": \"M\", \"pid\": %ld, "
                              "\"tid\": 0, \"args\": {\"labels\": \"CPU\"}}", (long)getpid());
    write_rows(o, tr, base, tr->nscopes);
    tt_cap__out_printf(o, "\n  ]");
    if (tr->gpu)
        write_gpu_counts(o, tr->gpu);
    tt_cap__out_printf(o, ",\n  \"traceName\": ");
    slash = slash ? slash + 1 : path;
    tt_cap__out_json_string(o, slash, strlen(slash));
    tt_cap__out_printf(o, "\n}\n");
    return tt_cap__out_close(o, ok) < 0 ? TT_CAP_EIO : 0;
}
