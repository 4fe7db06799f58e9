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
#include "report/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE_PERIOD_NS 7889238000000000LL /* Kineto floors the base time to this */

/* what the writers of a window's events share */
struct kctx {
    tt_jw *w;
    const struct tt_cap_trace *tr;
    int64_t base;   /* baseTimeNanoseconds */
    int64_t ev_idx; /* the next "Ev Idx" */
    int64_t pid;
    size_t nev;     /* events written */
};

/* a CLOCK_MONOTONIC ns as the trace's µs */
static void ts_of(struct kctx *k, int64_t mono)
{
    tt_cap__json_us(k->w, mono + k->tr->mono_to_unix - k->base);
}

/* "Input Dims" and "Input type" of a shapes record */
static void write_shapes(tt_jw *w, const struct rec_shapes *s)
{
    const unsigned char *p, *dims;
    const char *dtype;
    int32_t nd, dl;
    int i, pass;
    for (pass = 0; pass < 2; pass++) {
        tt_jw_karr(w, pass ? "Input type" : "Input Dims");
        p = (const unsigned char *)(s + 1);
        for (i = 0; i < s->n; i++) {
            p = tt_cap__shape_next(p, &nd, &dims, &dtype, &dl);
            if (!pass)
                tt_cap__json_dims(w, dims, nd);
            else
                tt_cap__json_str(w, dtype, (size_t)dl);
        }
        tt_jw_end(w);
    }
}

/* a cpu_op or user_annotation complete event */
static void write_scope(struct kctx *k, const struct trace_thread *th, const struct rec_scope *s,
                        const struct rec_shapes *shp)
{
    tt_jw *w = k->w;
    int kind = s->loc ? s->loc->kind : TT_CAP_USER_ANNOTATION;
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "X");
    tt_jw_kstr(w, "cat", kind == TT_CAP_USER_ANNOTATION ? "user_annotation" : "cpu_op");
    tt_jw_key(w, "name");
    if (s->loc) {
        const char *nm = s->loc->name ? s->loc->name : TT_CAP_NULL_NAME;
        tt_cap__json_str(w, nm, strlen(nm));
    } else {
        char step[48];
        snprintf(step, sizeof(step), "ProfilerStep#%lld", (long long)s->step);
        tt_jw_str(w, step);
    }
    tt_jw_kint(w, "pid", k->pid);
    tt_jw_kint(w, "tid", th->os_tid);
    tt_jw_key(w, "ts");
    ts_of(k, s->t0);
    tt_jw_key(w, "dur");
    tt_cap__json_us(w, s->t1 - s->t0);
    tt_jw_kobj(w, "args");
    tt_jw_kuint(w, "External id", s->rf_id);
    tt_jw_kuint(w, "Record function id", s->rf_id);
    tt_jw_kint(w, "Ev Idx", k->ev_idx++);
    if (shp)
        write_shapes(w, shp);
    tt_jw_end(w);
    tt_jw_end(w);
    k->nev++;
}

/* a metric in the trace (tt_cap_metric_trace): a counter event */
static void write_counter(struct kctx *k, const struct trace_thread *th,
                          const struct rec_counter *c)
{
    tt_jw *w = k->w;
    const char *gn = (const char *)(c + 1);
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "C");
    tt_jw_key(w, "name");
    tt_cap__json_str(w, gn, c->group_len);
    tt_jw_kint(w, "pid", k->pid);
    tt_jw_kint(w, "tid", th->os_tid);
    tt_jw_key(w, "ts");
    ts_of(k, c->t);
    tt_jw_kobj(w, "args");
    tt_cap__json_key(w, gn + c->group_len, c->name_len);
    tt_jw_int(w, c->value);
    tt_jw_end(w);
    tt_jw_end(w);
    k->nev++;
}

/* an allocator event (tt_cap_mem_event): a "[memory]" instant */
static void write_mem(struct kctx *k, const struct trace_thread *th, const struct rec_mem *m)
{
    struct tt_cap_mem_ev e;
    e.pid = k->pid;
    e.tid = th->os_tid;
    e.rel_ns = m->t + k->tr->mono_to_unix - k->base;
    e.reserved = m->total_reserved;
    e.allocated = m->total_allocated;
    e.bytes = m->bytes;
    e.addr = m->addr;
    e.dev_id = m->dev_id;
    e.dev_type = m->dev_type;
    tt_cap__kineto_memory(k->w, &e, &k->ev_idx);
    k->nev++;
}

static int write_thread(struct kctx *k, const struct trace_thread *th)
{
    const struct tt_cap_trace *tr = k->tr;
    const struct rec_scope **v = NULL;
    const struct rec_shapes **shp = NULL;
    struct i64map shapes = { 0 };
    const struct rec_hdr *h;
    const struct chunk *c;
    size_t n = 0, i, off, si;
    if (tt_cap__scopes(th, &v, &n, tr->record_shapes ? &shapes : NULL, &shp) < 0) {
        tt_cap__set_error("out of memory writing a trace");
        free((void *)v);
        free((void *)shp);
        tt__i64map_free(&shapes);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const struct rec_shapes *sh = NULL;
        if (shapes.n && tt__i64map_get(&shapes, (int64_t)v[i]->rf_id, &si))
            sh = shp[si];
        write_scope(k, th, v[i], sh);
    }
    for (h = tt_cap__rec_first(th, &c, &off); h; h = tt_cap__rec_next(&c, &off)) {
        if (h->type == REC_COUNTER)
            write_counter(k, th, (const struct rec_counter *)h);
        else if (h->type == REC_MEM)
            write_mem(k, th, (const struct rec_mem *)h);
    }
    free((void *)v);
    free((void *)shp);
    tt__i64map_free(&shapes);
    return 0;
}

/* a global instant on a named row */
static void write_instant(tt_jw *w, const char *name, const char *pid, const char *tid,
                          int64_t rel_ns)
{
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "name", name);
    tt_jw_kstr(w, "ph", "i");
    tt_jw_kstr(w, "s", "g");
    tt_jw_kstr(w, "pid", pid);
    tt_jw_kstr(w, "tid", tid);
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, rel_ns);
    tt_jw_end(w);
}

/* Kineto's trailer: the process and thread rows, the profiler's span and
 * its instants */
static void write_rows(struct kctx *k)
{
    const struct tt_cap_trace *tr = k->tr;
    tt_jw *w = k->w;
    int64_t start = tr->start_mono + tr->mono_to_unix - k->base;
    char comm[64], tname[64];
    size_t i;
    tt_cap__process_name(comm, sizeof(comm));
    tt_cap__kineto_meta(w, "process_name", start, k->pid, 0, "name");
    tt_cap__json_str(w, comm, strlen(comm));
    tt_jw_end(w);
    tt_jw_end(w);
    tt_cap__kineto_meta(w, "process_labels", start, k->pid, 0, "labels");
    tt_jw_str(w, "CPU");
    tt_jw_end(w);
    tt_jw_end(w);
    for (i = 0; i < tr->nth; i++) {
        const struct trace_thread *th = &tr->th[i];
        snprintf(tname, sizeof(tname), "thread %ld (%s)", (long)th->os_tid, th->name);
        tt_cap__kineto_meta(w, "thread_name", start, k->pid, th->os_tid, "name");
        tt_cap__json_str(w, tname, strlen(tname));
        tt_jw_end(w);
        tt_jw_end(w);
    }
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "X");
    tt_jw_kstr(w, "cat", "Trace");
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, start);
    tt_jw_key(w, "dur");
    tt_cap__json_us(w, tr->end_mono - tr->start_mono);
    tt_jw_kstr(w, "pid", "Spans");
    tt_jw_kstr(w, "tid", "PyTorch Profiler");
    tt_jw_kstr(w, "name", "PyTorch Profiler (0)");
    tt_jw_kobj(w, "args");
    tt_jw_kuint(w, "Op count", tr->nscopes);
    tt_jw_end(w);
    tt_jw_end(w);
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kstr(w, "name", "process_sort_index");
    tt_jw_kstr(w, "ph", "M");
    tt_jw_key(w, "ts");
    tt_cap__json_us(w, start);
    tt_jw_kstr(w, "pid", "Spans");
    tt_jw_kint(w, "tid", 0);
    tt_jw_kobj(w, "args");
    tt_jw_kint(w, "sort_index", 536870912);
    tt_jw_end(w);
    tt_jw_end(w);
    write_instant(w, "Iteration Start: PyTorch Profiler", "Traces", "Trace PyTorch Profiler",
                  start);
    write_instant(w, "Record Window End", "", "", tr->end_mono + tr->mono_to_unix - k->base);
}

/* the GPU store is filled by CUPTI's thread: held while it is written */
static int write_gpu_events(struct kctx *k)
{
    const struct tt_cap_trace *tr = k->tr;
    struct gpu_store *g = tr->gpu;
    int n;
    pthread_mutex_lock(&g->lock);
    n = tt_cap__gpu_events(k->w, g, k->base, tr->mono_to_unix, tr->start_mono, tr->end_mono,
                           &k->ev_idx);
    pthread_mutex_unlock(&g->lock);
    if (n > 0)
        k->nev += (size_t)n;
    return n < 0 ? -1 : 0;
}

static void write_gpu_counts(tt_jw *w, struct gpu_store *g)
{
    pthread_mutex_lock(&g->lock);
    tt_jw_nl(w, 2);
    tt_jw_kobj(w, "tracetool_gpu");
    tt_jw_kuint(w, "dropped_records", g->dropped_records);
    tt_jw_kuint(w, "dropped_over_limit", g->dropped_store);
    tt_jw_kuint(w, "bad_timestamps", g->bad_timestamps);
    tt_jw_kuint(w, "unknown_records", g->unknown_records);
    tt_jw_end(w);
    pthread_mutex_unlock(&g->lock);
}

/* the keys before "traceEvents", one a line */
static void write_header(tt_jw *w, const struct tt_cap_trace *tr, int64_t base)
{
    tt_jw_obj(w);
    tt_jw_nl(w, 2);
    tt_jw_kint(w, "schemaVersion", 1);
    tt_jw_nl(w, 2);
    tt_jw_key(w, "deviceProperties");
    if (tr->gpu) {
        pthread_mutex_lock(&tr->gpu->lock);
        tt_cap__gpu_devices(w, tr->gpu);
        pthread_mutex_unlock(&tr->gpu->lock);
    } else {
        tt_jw_arr(w);
        tt_jw_end(w);
    }
    if (tr->record_shapes) {
        tt_jw_nl(w, 2);
        tt_jw_kint(w, "record_shapes", 1);
    }
    tt_jw_nl(w, 2);
    tt_jw_kobj(w, "tracetool_capture");
    tt_jw_kuint(w, "dropped_events", tr->dropped);
    tt_jw_kuint(w, "ignored_starts", tr->ignored_starts);
    tt_jw_kint(w, "max_duration_reached", tr->max_duration_hit);
    tt_jw_end(w);
    tt_jw_nl(w, 2);
    tt_jw_kstr(w, "displayTimeUnit", "ms");
    tt_jw_nl(w, 2);
    tt_jw_kint(w, "baseTimeNanoseconds", base);
}

int tt_cap__write_kineto(const struct tt_cap_trace *tr, const char *path)
{
    struct out *o = tt_cap__out_open(path);
    int64_t start_unix = tr->start_mono + tr->mono_to_unix;
    const char *slash = strrchr(path, '/');
    struct kctx k;
    tt_jw w;
    size_t i;
    int ok = 1;
    if (!o)
        return TT_CAP_EIO;
    memset(&k, 0, sizeof(k));
    k.w = &w;
    k.tr = tr;
    k.base = start_unix / BASE_PERIOD_NS * BASE_PERIOD_NS;
    k.pid = (int64_t)getpid();
    tt_cap__out_jw(o, &w, TT_JW_LINE);
    write_header(&w, tr, k.base);
    tt_jw_nl(&w, 2);
    tt_jw_karr(&w, "traceEvents");
    for (i = 0; i < tr->nth && ok; i++)
        ok = write_thread(&k, &tr->th[i]) == 0;
    if (ok && tr->gpu)
        ok = write_gpu_events(&k) == 0;
    if (!k.nev) { /* Kineto's process row without a time */
        tt_jw_nl(&w, 2);
        tt_jw_obj(&w);
        tt_jw_kstr(&w, "name", "process_labels");
        tt_jw_kstr(&w, "ph", "M");
        tt_jw_kint(&w, "pid", k.pid);
        tt_jw_kint(&w, "tid", 0);
        tt_jw_kobj(&w, "args");
        tt_jw_kstr(&w, "labels", "CPU");
        tt_jw_end(&w);
        tt_jw_end(&w);
    }
    write_rows(&k);
    tt_jw_nl(&w, 2);
    tt_jw_end(&w);
    if (tr->gpu)
        write_gpu_counts(&w, tr->gpu);
    slash = slash ? slash + 1 : path;
    tt_jw_nl(&w, 2);
    tt_jw_key(&w, "traceName");
    tt_cap__json_str(&w, slash, strlen(slash));
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    if (ok)
        ok = tt_cap__out_jw_end(&w) == 0;
    else
        tt_jw_finish(&w); /* the error said is the first */
    return tt_cap__out_close(o, ok) < 0 ? TT_CAP_EIO : 0;
}
