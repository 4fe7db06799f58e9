/*
 * capture/src/core.c - the one profile of the process: configuration,
 * windows and the step schedule (schedule.c), failures (logged once, then
 * capture off: the program goes on), exit and fork.
 *
 * Control calls (start, step, stop, shutdown) take one mutex; the hot path
 * (buffer.c) never does. The callbacks (on_trace_ready, log) run with it
 * held: a control call made from one on the same thread (or from a signal
 * handler that interrupted a control call) does not wait for it, which
 * would never end; it is answered at once (see capture.h): stats are read,
 * tt_cap_stop is done when the callback returns, step and start are refused
 * with TT_CAP_ECALLBACK.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "capture/src/gpu.h"
#include "capture/src/schedule.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


static pthread_mutex_t ctl = PTHREAD_MUTEX_INITIALIZER;
/* this thread holds ctl (or is taking it): a call now comes from a callback
 * the library runs, or from a signal handler; initial-exec: read without a
 * call (and without an allocation) in a signal handler */
static _Thread_local volatile sig_atomic_t holding __attribute__((tls_model("initial-exec")));
static int stop_pending;    /* under ctl: tt_cap_stop from a callback, done when it returns */
static int starting;        /* under ctl: tt_cap_start configures (its log lines may stop it) */
static int active;          /* a profile runs */
static tt_cap_config cfg;   /* its configuration (strings copied below) */
static char *out_dir, *worker;
static int sched_on;
static tt_cap_sched sched;
static int64_t step;
static enum tt_cap_action act;
static int64_t step_t0;
static uint64_t step_rf;
static unsigned step_gen;
static int64_t win_start;
static uint64_t win_dropped0; /* tt_cap__dropped when the window began */
static tt_cap_stats stats;
static atomic_ullong ignored_starts;
static int hooks_done;

static int64_t mono_to_unix(void)
{
    struct timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((int64_t)r.tv_sec * 1000000000 + r.tv_nsec) -
           (((int64_t)a.tv_sec + b.tv_sec) * 500000000 + (a.tv_nsec + b.tv_nsec) / 2);
}

/* ---- the clock: raw ticks on the hot path, CLOCK_MONOTONIC ns in a window ---- */

static int clock_ready;
static int64_t raw0, mono0; /* a pair read at the first start */
static double tick_ns = 1.0;

static int tsc_invariant(void)
{
    char line[4096];
    int c = 0, n = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "flags", 5)) {
            c = strstr(line, " constant_tsc") != NULL;
            n = strstr(line, " nonstop_tsc") != NULL;
            break;
        }
    }
    fclose(f);
    return c && n;
}

/* a (raw ticks, CLOCK_MONOTONIC ns) pair read as close together as the
 * machine lets: the tightest of a few tries, mono the middle of the two reads
 * around raw. A pair read across a preemption (ms on a loaded machine) would
 * skew every time of a window by the preemption over the window's length. */
static void clock_pair(int64_t *raw, int64_t *mono)
{
    int64_t best = INT64_MAX, m0, m1, r;
    int i;
    for (i = 0; i < 16; i++) {
        m0 = tt_cap__mono();
        r = tt_cap__now();
        m1 = tt_cap__mono();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *raw = r;
            *mono = m0 + (m1 - m0) / 2;
        }
        if (best < 2000)
            break;
    }
}

static void clock_init(void)
{
    int64_t m;
    if (clock_ready)
        return;
    clock_ready = 1;
#if defined(__x86_64__) || defined(__i386__)
    tt_cap__use_tsc = tsc_invariant() && !getenv("TT_CAPTURE_NO_TSC");
#endif
    tt_cap__fence_init();
    clock_pair(&raw0, &mono0);
    if (tt_cap__use_tsc) { /* a first rate, for deadlines: 2 ms */
        do
            m = tt_cap__mono();
        while (m - mono0 < 2000000);
        tick_ns = (double)(m - mono0) / (double)(tt_cap__now() - raw0);
    }
}

/* the window's raw times made CLOCK_MONOTONIC ns, anchored at its end */
static void to_mono(struct tt_cap_trace *tr, int64_t raw1, int64_t mono1)
{
    double scale = raw1 > raw0 ? (double)(mono1 - mono0) / (double)(raw1 - raw0) : 1.0;
    const struct rec_hdr *h;
    const struct chunk *c;
    size_t i, off;
#define CONV(x) (mono1 - (int64_t)((double)(raw1 - (x)) * scale))
    tr->start_mono = tt_cap__use_tsc ? CONV(win_start) : win_start;
    tr->end_mono = mono1;
    if (!tt_cap__use_tsc)
        return;
    tick_ns = scale;
    for (i = 0; i < tr->nth; i++)
        for (h = tt_cap__rec_first(&tr->th[i], &c, &off); h; h = tt_cap__rec_next(&c, &off)) {
            if (h->type == REC_SCOPE || h->type == REC_STEP) {
                struct rec_scope *r = (struct rec_scope *)(uintptr_t)h;
                r->t0 = CONV(r->t0);
                r->t1 = CONV(r->t1);
            } else if (h->type == REC_MEM) {
                struct rec_mem *r = (struct rec_mem *)(uintptr_t)h;
                r->t = CONV(r->t);
            } else if (h->type == REC_COUNTER) {
                struct rec_counter *r = (struct rec_counter *)(uintptr_t)h;
                r->t = CONV(r->t);
            }
        }
#undef CONV
}

/* ---- windows ---- */

static void window_begin(void)
{
    if (tt_cap__gpu_flush()) /* GPU records of the steps between windows go */
        tt_cap__gpu_window_done();
    win_start = tt_cap__now();
    win_dropped0 = atomic_load(&tt_cap__dropped);
    tt_cap__deadline = cfg.max_duration_s > 0
                           ? win_start + (int64_t)(cfg.max_duration_s * 1e9 / tick_ns)
                           : 0;
    atomic_fetch_add(&tt_cap__gen, 1);
    __atomic_store_n(&tt_cap__recording, 1, __ATOMIC_SEQ_CST);
}

static void handler(const tt_cap_trace *t)
{
    char path[PATH_MAX], et[PATH_MAX];
    struct timespec now;
    int n;
    clock_gettime(CLOCK_REALTIME, &now);
    n = snprintf(path, sizeof(path), "%s/%s.%lld.pt.trace.json%s", out_dir, worker,
                 (long long)now.tv_sec * 1000000000LL + now.tv_nsec, cfg.use_gzip ? ".gz" : "");
    snprintf(et, sizeof(et), "%s/%s.%lld.pt.et.json%s", out_dir, worker,
             (long long)now.tv_sec * 1000000000LL + now.tv_nsec, cfg.use_gzip ? ".gz" : "");
    if (n < 0 || (size_t)n >= sizeof(path)) {
        tt_cap__fail("output path too long in %s", out_dir);
        return;
    }
    tt_cap_write_trace(t, path, cfg.write_et ? et : NULL);
}

/* libtracetool_inject (tracetool record) in a process other than the program
 * it runs: a window that holds no event is not written by the default
 * handler, skipped() is called instead (NULL: every window is written) */
static void (*empty_skipped)(void);

void tt_cap__skip_empty(void (*skipped)(void))
{
    __atomic_store_n(&empty_skipped, skipped, __ATOMIC_SEQ_CST);
}

/* a finished window to on_trace_ready or the default handler */
static void hand_over(struct tt_cap_trace *tr, uint64_t nevents)
{
    void (*skipped)(void) = __atomic_load_n(&empty_skipped, __ATOMIC_SEQ_CST);
    tr->gpu = tt_cap__gpu_flush(); /* CUPTI hands back its buffers now */
    if (tr->gpu)
        nevents += tr->gpu->n + tr->gpu->dropped_records + tr->gpu->dropped_store;
    if (!cfg.on_trace_ready && skipped && nevents + tr->dropped == 0) {
        skipped();
        return;
    }
    stats.traces++;
    if (cfg.on_trace_ready)
        cfg.on_trace_ready(tr, cfg.user);
    else
        handler(tr);
}

static void window_end(int save)
{
    struct tt_cap_trace tr;
    struct cap_thread *me = tt_cap__thread();
    int rc;
    memset(&tr, 0, sizeof(tr));
    __atomic_store_n(&tt_cap__recording, 0, __ATOMIC_SEQ_CST);
    if (me)
        me->in_lib = 1; /* nothing the writers do is recorded */
    if ((rc = tt_cap__collect(&tr)) < 0) {
        tt_cap__fail(rc == TT_CAP_EBUSY ? "a thread held the library at exit: the window is dropped"
                                        : "out of memory collecting a window");
    } else if (save) {
        const struct rec_hdr *h;
        const struct chunk *c;
        size_t i, off;
        uint64_t nevents = 0;
        int64_t raw1, mono1;
        clock_pair(&raw1, &mono1);
        tr.max_duration_hit = tt_cap__deadline && raw1 > tt_cap__deadline;
        to_mono(&tr, raw1, mono1);
        tr.mono_to_unix = mono_to_unix();
        tr.record_shapes = cfg.record_shapes;
        tr.dropped = atomic_load(&tt_cap__dropped) - win_dropped0;
        tr.ignored_starts = atomic_load(&ignored_starts);
        for (i = 0; i < tr.nth; i++)
            for (h = tt_cap__rec_first(&tr.th[i], &c, &off); h; h = tt_cap__rec_next(&c, &off)) {
                if (h->type == REC_SCOPE || h->type == REC_STEP)
                    stats.scopes++, tr.nscopes++, nevents++;
                else if (h->type == REC_MEM)
                    stats.mem_events++, nevents++;
                else if (h->type == REC_COUNTER)
                    nevents++;
            }
        stats.dropped += tr.dropped;
        hand_over(&tr, nevents);
    }
    tt_cap__trace_free(&tr);
    tt_cap__gpu_window_done();
    if (me)
        me->in_lib = 0;
}

/* carry out the schedule's bits (TT_CAP_DO_*) */
static void apply(unsigned bits)
{
    int recording = __atomic_load_n(&tt_cap__recording, __ATOMIC_SEQ_CST);
    if (recording && (bits & TT_CAP_DO_STOP))
        window_end((bits & TT_CAP_DO_SAVE) != 0);
    if (bits & TT_CAP_DO_START) {
        window_begin();
        if (!recording && (bits & TT_CAP_DO_STOP))
            window_end((bits & TT_CAP_DO_SAVE) != 0); /* warmup then none: nothing kept */
    }
}

static void step_open(void)
{
    step_t0 = tt_cap__now();
    step_rf = tt_cap__step_open(&step_gen);
}

static void step_close(void)
{
    tt_cap__step_close(step, step_t0, step_rf, step_gen);
    step_rf = 0;
}

/* ---- the control lock ---- */

static void stop_locked(void);

static void ctl_lock(void)
{
    holding = 1; /* first: a signal handler running while this waits must not wait too */
    pthread_mutex_lock(&ctl);
}

/* a stop asked for by a callback is done now, before the lock goes */
static void ctl_unlock(void)
{
    while (stop_pending) {
        stop_pending = 0;
        if (active)
            stop_locked();
    }
    pthread_mutex_unlock(&ctl);
    holding = 0;
}

static tt_cap_status refused_in_callback(const char *call)
{
    tt_cap__set_error("%s called from inside a callback (on_trace_ready, log) or a signal "
                      "handler that interrupted a control call: not done", call);
    return TT_CAP_ECALLBACK;
}

/* ---- exit and fork ---- */

static void at_exit(void)
{
    /* exit() from a signal handler that stopped this thread inside malloc
     * (the library's own): whatever allocates would deadlock; the window is
     * lost, as at a kill */
    if (tt_cap__in_alloc())
        return;
    atomic_store(&tt_cap__exiting, 1); /* waits for other threads are bounded now */
    tt_cap_shutdown();
}

/* fork() from a callback: this thread holds ctl already */
static void fork_prepare(void)
{
    if (!holding)
        pthread_mutex_lock(&ctl);
    tt_cap__registry_lock();
}

static void fork_parent(void)
{
    tt_cap__registry_unlock();
    if (!holding)
        pthread_mutex_unlock(&ctl);
}

/* the child records nothing and writes none of the parent's events */
static void fork_child(void)
{
    pthread_mutex_init(&ctl, NULL);
    if (holding) /* forked from a callback: the control call it is in unlocks it */
        pthread_mutex_lock(&ctl);
    stop_pending = 0;
    tt_cap__registry_reinit();
    __atomic_store_n(&tt_cap__recording, 0, __ATOMIC_SEQ_CST);
    tt_cap__threads_reset(1);
    __atomic_store_n(&tt_cap__gpu_active, 0, __ATOMIC_SEQ_CST); /* CUPTI is the parent's */
    active = 0;
    tt_cap__filter_set(NULL);
}

/* ---- the public calls ---- */

void tt_cap_config_default(tt_cap_config *c)
{
    memset(c, 0, sizeof(*c));
    c->out_dir = ".";
    c->record_shapes = 1;
}

static int mkdir_p(const char *dir)
{
    char buf[PATH_MAX];
    size_t i, n = strlen(dir);
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char ch = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = ch;
        }
    }
    return 0;
}

/* a worker name is one file name in out_dir: never a path out of it */
static int file_name_ok(const char *s)
{
    return !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int configure(const tt_cap_config *c)
{
    char host[256];
    int warn = 0;
    cfg = *c;
    tt_cap__log_to(c->log, c->log_user);
    sched_on = c->active > 0 || c->wait || c->warmup || c->skip_first || c->repeat;
    sched.skip_first = c->skip_first;
    sched.wait = c->wait;
    sched.warmup = c->warmup;
    sched.active = c->active;
    sched.repeat = c->repeat;
    if (sched_on && tt_cap__sched_check(&sched, &warn) < 0) {
        tt_cap__set_error("invalid schedule (skip_first %d, wait %d, warmup %d, active %d, "
                          "repeat %d)", c->skip_first, c->wait, c->warmup, c->active, c->repeat);
        return TT_CAP_EINVAL;
    }
    if (warn)
        tt_cap__log("profiler won't be using warmup, this can skew profiler results");
    if (c->name_filter && tt_cap__filter_set(c->name_filter) < 0)
        return TT_CAP_EINVAL;
    if (gethostname(host, sizeof(host)) != 0)
        strcpy(host, "localhost");
    host[sizeof(host) - 1] = 0;
    free(out_dir);
    free(worker);
    out_dir = strdup(c->out_dir && *c->out_dir ? c->out_dir : ".");
    if (c->worker_name && *c->worker_name && !file_name_ok(c->worker_name))
        tt_cap__log_fmt("worker name '%.200s' is not a file name (it has a '/', or is '.' or "
                        "'..'): using %.200s_%ld", c->worker_name, host, (long)getpid());
    if (c->worker_name && *c->worker_name && file_name_ok(c->worker_name)) {
        worker = strdup(c->worker_name);
    } else if ((worker = malloc(strlen(host) + 32))) {
        sprintf(worker, "%s_%ld", host, (long)getpid());
    }
    if (!out_dir || !worker) {
        tt_cap__set_error("out of memory");
        return TT_CAP_ENOMEM;
    }
    cfg.out_dir = out_dir;
    cfg.worker_name = worker;
    cfg.name_filter = NULL;
    cfg.log = NULL; /* log.c holds it */
    tt_cap__max_bytes = c->max_bytes ? c->max_bytes : (size_t)256 << 20;
    tt_cap__record_shapes = c->record_shapes;
    if (!c->on_trace_ready && mkdir_p(out_dir) != 0) {
        tt_cap__set_error("cannot make the directory %s: %s", out_dir, strerror(errno));
        return TT_CAP_EIO;
    }
    return 0;
}

tt_cap_status tt_cap_start(const tt_cap_config *c)
{
    tt_cap_config def;
    int rc;
    if (!c) {
        tt_cap_config_default(&def);
        c = &def;
    }
    if (holding)
        return refused_in_callback("tt_cap_start");
    ctl_lock();
    if (active) {
        atomic_fetch_add(&ignored_starts, 1);
        stats.ignored_starts++;
        ctl_unlock();
        tt_cap__set_error("a profile is already running: this one is ignored");
        return TT_CAP_EBUSY;
    }
    clock_init();
    tt_cap__fault_alloc = getenv("TT_CAPTURE_FAULT") && !strcmp(getenv("TT_CAPTURE_FAULT"), "alloc");
    if (!hooks_done) {
        atexit(at_exit);
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        hooks_done = 1;
    }
    starting = 1;
    rc = configure(c);
    starting = 0;
    if (rc < 0) {
        tt_cap__filter_set(NULL);
        tt_cap__log(tt_cap_last_error());
        ctl_unlock();
        return (tt_cap_status)rc;
    }
    active = 1;
    step = 0;
    /* GPU capture on before the first window: a failure is one log line and
     * the CPU capture goes on */
    stats.gpu = cfg.gpu && tt_cap__gpu_start(cfg.gpu, tt_cap__os_tid) == 0;
    if (sched_on) {
        act = tt_cap__sched_action(&sched, 0);
        apply(tt_cap__sched_transition(TT_CAP_NONE, act));
        step_open();
    } else {
        window_begin();
    }
    ctl_unlock();
    return TT_CAP_OK;
}

tt_cap_status tt_cap_step(void)
{
    enum tt_cap_action next;
    if (holding)
        return refused_in_callback("tt_cap_step");
    ctl_lock();
    if (!active) {
        ctl_unlock();
        return TT_CAP_EOFF;
    }
    if (sched_on) {
        step_close();
        step++;
        next = tt_cap__sched_action(&sched, step);
        apply(tt_cap__sched_transition(act, next));
        act = next;
        step_open();
    } else {
        step++;
    }
    ctl_unlock();
    return TT_CAP_OK;
}

/* the profile ends (ctl held, a profile active) */
static void stop_locked(void)
{
    if (sched_on) {
        step_close();
        apply(tt_cap__sched_exit(act));
    } else {
        apply(TT_CAP_DO_STOP | TT_CAP_DO_SAVE);
    }
    __atomic_store_n(&tt_cap__recording, 0, __ATOMIC_SEQ_CST);
    tt_cap__gpu_stop(); /* CUPTI off between profiles: no cost to the program */
    active = 0;
    tt_cap__filter_set(NULL);
}

tt_cap_status tt_cap_stop(void)
{
    if (holding) { /* from a callback: when it returns, before the lock goes */
        if (!active && !starting)
            return TT_CAP_EOFF;
        stop_pending = 1;
        return TT_CAP_OK;
    }
    ctl_lock();
    if (!active) {
        ctl_unlock();
        return TT_CAP_EOFF;
    }
    stop_locked();
    ctl_unlock();
    return TT_CAP_OK;
}

tt_cap_status tt_cap_write_trace(const tt_cap_trace *t, const char *path, const char *et_path)
{
    if (!t || !path) {
        tt_cap__set_error("no trace or no path");
        return TT_CAP_EINVAL;
    }
    if (tt_cap__write_kineto(t, path) < 0 || (et_path && tt_cap__write_et(t, et_path) < 0)) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", tt_cap_last_error());
        tt_cap__fail("%s", msg);
        return TT_CAP_EIO;
    }
    return TT_CAP_OK;
}

void tt_cap_get_stats(tt_cap_stats *s)
{
    int locked = !holding; /* from a callback: this thread holds the lock */
    if (locked)
        ctl_lock();
    *s = stats;
    s->ignored_starts = atomic_load(&ignored_starts);
    if (locked)
        ctl_unlock();
}

size_t tt_cap_trace_scopes(const tt_cap_trace *t)
{
    return t ? t->nscopes : 0;
}

void tt_cap_shutdown(void)
{
    tt_cap_stop();
    if (holding) /* from a callback: the stop is all (done when it returns) */
        return;
    ctl_lock();
    tt_cap__threads_reset(0);
    tt_cap__pool_free();
    free(out_dir);
    free(worker);
    out_dir = worker = NULL;
    ctl_unlock();
}
