/*
 * capture-demo - a small workload profiled with libtracetool_capture.
 *
 *   capture-demo --out DIR [--steps N] [--schedule SKIP,WAIT,WARMUP,ACTIVE,REPEAT]
 *                [--threads T] [--gzip] [--et] [--memory] [--worker NAME]
 *
 * Each of T threads runs N steps; a step is a user annotation "step" holding
 * nested cpu_ops (aten::linear > aten::addmm, aten::relu) with input shapes,
 * and with --memory an allocation and its free per op ([memory] events that
 * balance to zero). The main thread calls tt_cap_step() after each of its
 * steps, so the schedule (default: every step recorded, one trace at the end)
 * decides what is written to DIR (tensorboard naming). The workload's result
 * is printed, and the exit status is 0 even when capture fails.
 */
#define _GNU_SOURCE
#include "tracetool/capture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    const char *out, *worker;
    int steps, threads, gzip, et, memory;
    int sched[5];
    int have_sched;
};

static struct opts o = { NULL, NULL, 10, 1, 0, 0, 0, { 0, 0, 0, 0, 0 }, 0 };
static pthread_barrier_t step_barrier;

static long compute(int n)
{
    long s = 0;
    int i;
    for (i = 0; i < n; i++)
        s += (long)i * i % 11;
    return s;
}

static long op(const char *which, int64_t rows, uintptr_t addr)
{
    static const tt_cap_srcloc linear = { "aten::linear", __FILE__, __LINE__, TT_CAP_CPU_OP };
    static const tt_cap_srcloc relu = { "aten::relu", __FILE__, __LINE__, TT_CAP_CPU_OP };
    const int64_t in[2] = { rows, 64 }, w[2] = { 64, 64 };
    const int64_t *dims[3] = { in, w, NULL };
    const int ndim[3] = { 2, 2, 0 };
    const char *types[3] = { "float", "float", "Scalar" };
    int is_linear = !strcmp(which, "linear");
    tt_cap_scope s = tt_cap_scope_begin(is_linear ? &linear : &relu);
    long r;
    tt_cap_scope_shapes(&s, is_linear ? 3 : 1, dims, ndim, types);
    if (o.memory)
        tt_cap_mem_event((void *)addr, rows * 256, rows * 256, 1 << 20, TT_CAP_DEV_CPU, 0);
    if (is_linear) {
        TT_CAP_SCOPE("aten::addmm");
        r = compute(3000);
    } else {
        r = compute(1000);
    }
    if (o.memory)
        tt_cap_mem_event((void *)addr, -rows * 256, 0, 1 << 20, TT_CAP_DEV_CPU, 0);
    tt_cap_scope_end(&s);
    return r;
}

struct worker {
    int idx;
    long result;
};

static void *worker_main(void *arg)
{
    struct worker *wk = arg;
    long *result = &wk->result;
    uintptr_t base = 0x100000 * (uintptr_t)(1 + wk->idx); /* addresses of its own */
    int i;
    for (i = 0; i < o.steps; i++) {
        {
            TT_CAP_ANNOTATION("step");
            *result += op("linear", 32, base + 64 * (uintptr_t)i);
            *result += op("relu", 32, base + 64 * (uintptr_t)i + 32);
        }
        pthread_barrier_wait(&step_barrier);
        pthread_barrier_wait(&step_barrier); /* the main thread steps in between */
    }
    return NULL;
}

static int parse(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && v)
            o.out = argv[++i];
        else if (!strcmp(a, "--worker") && v)
            o.worker = argv[++i];
        else if (!strcmp(a, "--steps") && v)
            o.steps = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && v)
            o.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--schedule") && v) {
            o.have_sched = sscanf(argv[++i], "%d,%d,%d,%d,%d", &o.sched[0], &o.sched[1],
                                  &o.sched[2], &o.sched[3], &o.sched[4]) == 5;
            if (!o.have_sched)
                return -1;
        } else if (!strcmp(a, "--gzip"))
            o.gzip = 1;
        else if (!strcmp(a, "--et"))
            o.et = 1;
        else if (!strcmp(a, "--memory"))
            o.memory = 1;
        else
            return -1;
    }
    return o.out && o.steps > 0 && o.threads > 0 && o.threads <= 64 ? 0 : -1;
}

int main(int argc, char **argv)
{
    tt_cap_config c;
    pthread_t th[64];
    struct worker wk[64];
    long total = 0;
    int i, s, rc;
    if (parse(argc, argv) < 0) {
        fprintf(stderr, "usage: capture-demo --out DIR [--steps N] [--schedule "
                        "SKIP,WAIT,WARMUP,ACTIVE,REPEAT] [--threads T] [--gzip] [--et] "
                        "[--memory] [--worker NAME]\n");
        return 2;
    }
    tt_cap_config_default(&c);
    c.out_dir = o.out;
    c.worker_name = o.worker;
    c.use_gzip = o.gzip;
    c.write_et = o.et;
    if (o.have_sched) {
        c.skip_first = o.sched[0], c.wait = o.sched[1], c.warmup = o.sched[2];
        c.active = o.sched[3], c.repeat = o.sched[4];
    }
    rc = tt_cap_start(&c); /* a failure is logged; the work runs anyway */
    pthread_barrier_init(&step_barrier, NULL, (unsigned)o.threads + 1);
    for (i = 0; i < o.threads; i++) {
        wk[i].idx = i;
        wk[i].result = 0;
        pthread_create(&th[i], NULL, worker_main, &wk[i]);
    }
    for (s = 0; s < o.steps; s++) {
        pthread_barrier_wait(&step_barrier); /* every thread finished step s */
        tt_cap_step();
        pthread_barrier_wait(&step_barrier);
    }
    for (i = 0; i < o.threads; i++) {
        pthread_join(th[i], NULL);
        total += wk[i].result;
    }
    tt_cap_stop();
    pthread_barrier_destroy(&step_barrier);
    printf("capture-demo: %d threads x %d steps, result %ld, capture %s\n", o.threads, o.steps,
           total, rc == TT_CAP_OK ? "on" : tt_cap_last_error());
    return 0;
}
