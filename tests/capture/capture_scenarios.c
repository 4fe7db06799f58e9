/*
 * tests/capture/capture_scenarios.c - a program that links the capture library
 * the way a user's does, one scenario per mode; tests/cli/test_capture.py
 * runs it and checks what it wrote with Python's json module alone.
 *
 *   capture_scenarios MODE DIR
 *
 * It prints "result <n>" (the program's own work, which capture must never
 * change) and "stats scopes=.. mem=.. dropped=.. ignored=.. traces=..".
 */
#define _GNU_SOURCE
#include "tracetool/capture.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static _Thread_local volatile long sink; /* keeps work() from being optimised away */

static long work(int n)
{
    long s = 0;
    int i;
    for (i = 0; i < n; i++)
        s += (long)i * i % 7;
    sink += s;
    return s;
}

/* one training step: nested ops with shapes, an allocation and its free */
static long step_body(int i)
{
    static const tt_cap_srcloc linear = { "aten::linear", __FILE__, __LINE__, TT_CAP_CPU_OP };
    static const int64_t d0[] = { 3, 4 }, d1[] = { 3, 4 };
    const int64_t *dims[] = { d0, d1, NULL };
    const int ndim[] = { 2, 2, 0 };
    const char *types[] = { "float", "float", "Scalar" };
    tt_cap_scope s = tt_cap_scope_begin(&linear);
    long r;
    tt_cap_scope_shapes(&s, 3, dims, ndim, types);
    {
        TT_CAP_SCOPE("aten::addmm");
        tt_cap_mem_event((void *)(uintptr_t)(0x1000 + 64 * i), 48, 48, 2097152, TT_CAP_DEV_CPU, 0);
        r = work(2000);
        tt_cap_mem_event((void *)(uintptr_t)(0x1000 + 64 * i), -48, 0, 2097152, TT_CAP_DEV_CPU, 0);
    }
    tt_cap_scope_end(&s);
    return r;
}

static void *side_thread(void *arg)
{
    int i, n = *(int *)arg;
    pthread_setname_np(pthread_self(), "side");
    for (i = 0; i < n; i++) {
        TT_CAP_SCOPE("aten::side");
        work(500);
    }
    return NULL;
}

static void print_stats(long result)
{
    tt_cap_stats s;
    tt_cap_get_stats(&s);
    printf("result %ld\nstats scopes=%llu mem=%llu dropped=%llu ignored=%llu traces=%llu\n", result,
           (unsigned long long)s.scopes, (unsigned long long)s.mem_events,
           (unsigned long long)s.dropped, (unsigned long long)s.ignored_starts,
           (unsigned long long)s.traces);
}

/* torch's test_execution_trace schedule: 3, 1, 1, 2, 1 over 10 steps */
static int mode_schedule(const char *dir, int gz)
{
    tt_cap_config c;
    pthread_t th;
    int n = 200, i;
    long r = 0;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = "worker0";
    c.skip_first = 3, c.wait = 1, c.warmup = 1, c.active = 2, c.repeat = 1;
    c.use_gzip = gz;
    c.write_et = 1;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    pthread_create(&th, NULL, side_thread, &n);
    for (i = 0; i < 10; i++) {
        r += step_body(i);
        tt_cap_step();
    }
    pthread_join(th, NULL);
    tt_cap_stop();
    print_stats(r);
    return 0;
}

static const char *kill_name = "trace.json";

static void ready(const tt_cap_trace *t, void *user)
{
    char path[512], et[512];
    const char *dir = user;
    snprintf(path, sizeof(path), "%s/%s", dir, kill_name);
    snprintf(et, sizeof(et), "%s/trace.et.json", dir);
    tt_cap_write_trace(t, path, et);
}

/* names a program may give: quotes, backslashes, control characters, bytes that are not UTF-8 */
static int mode_names(const char *dir)
{
    static const tt_cap_srcloc locs[] = {
        { "quote\"back\\slash", __FILE__, 1, TT_CAP_CPU_OP },
        { "ctl\x01\x1f\n\t", __FILE__, 2, TT_CAP_CPU_OP },
        { "bad\xff\xc3(utf8\xe2\x82", __FILE__, 3, TT_CAP_USER_ANNOTATION },
        { "ok \xc3\xa9\xe2\x82\xac", __FILE__, 4, TT_CAP_CPU_OP },
    };
    tt_cap_config c;
    size_t i;
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = (void *)dir;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    for (i = 0; i < sizeof(locs) / sizeof(locs[0]); i++) {
        tt_cap_scope s = tt_cap_scope_begin(&locs[i]);
        work(100);
        tt_cap_scope_end(&s);
    }
    tt_cap_stop();
    print_stats(0);
    return 0;
}

struct racer {
    int n;
    long r;
};

static void *racer_main(void *arg)
{
    struct racer *rc = arg;
    int i;
    for (i = 0; i < rc->n; i++) {
        TT_CAP_SCOPE("aten::outer");
        {
            TT_CAP_SCOPE("aten::inner");
            rc->r += work(10);
        }
    }
    return NULL;
}

/* 8 threads of nested scopes while the main thread steps the schedule */
static int mode_threads(const char *dir)
{
    tt_cap_config c;
    pthread_t th[8];
    struct racer rc[8];
    long r = 0;
    int i;
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = (void *)dir;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    for (i = 0; i < 8; i++) {
        rc[i].n = 4000;
        rc[i].r = 0;
        pthread_create(&th[i], NULL, racer_main, &rc[i]);
    }
    for (i = 0; i < 50; i++)
        tt_cap_step();
    for (i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        r += rc[i].r;
    }
    tt_cap_stop();
    print_stats(r);
    return 0;
}

static unsigned long long race_windows, race_scopes;
static void race_ready(const tt_cap_trace *t, void *user)
{
    (void)user;
    race_windows++;
    race_scopes += tt_cap_trace_scopes(t);
}

/* windows open and close (wait 1, active 1, repeat 0; stop and start every
 * 50 steps) while 8 threads append 100,000 nested scope pairs each */
static int mode_race(void)
{
    tt_cap_config c;
    pthread_t th[8];
    struct racer rc[8];
    long r = 0;
    int i;
    tt_cap_config_default(&c);
    c.on_trace_ready = race_ready;
    c.wait = 1, c.warmup = 0, c.active = 1;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    for (i = 0; i < 8; i++) {
        rc[i].n = 100000;
        rc[i].r = 0;
        pthread_create(&th[i], NULL, racer_main, &rc[i]);
    }
    for (i = 0; i < 400; i++) {
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
        tt_cap_step();
        if (i % 50 == 49) { /* stop and start again while the threads run */
            tt_cap_stop();
            tt_cap_start(&c);
        }
    }
    for (i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        r += rc[i].r;
    }
    tt_cap_stop();
    printf("windows %llu\nwindow_scopes %llu\n", race_windows, race_scopes);
    print_stats(r);
    return 0;
}

/* fork in the middle of a window: the child neither deadlocks nor writes */
static int mode_fork(const char *dir)
{
    tt_cap_config c;
    pid_t pid;
    int st = 0;
    long r;
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = (void *)dir;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    r = step_body(0);
    pid = fork();
    if (pid == 0) {
        alarm(10);
        step_body(1);
        tt_cap_step();
        tt_cap_stop();
        tt_cap_shutdown();
        _exit(7);
    }
    waitpid(pid, &st, 0);
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    r += step_body(2);
    tt_cap_stop();
    print_stats(r);
    return 0;
}

static int count_log;
static void log_fn(const char *line, void *user)
{
    (void)user;
    count_log++;
    printf("log %s\n", line);
}

/* failures: an output directory that cannot be made, a bad filter, a
 * second start, a write that fails; the work runs and gives its result */
static int mode_fail(const char *dir)
{
    tt_cap_config c;
    long r = 0;
    int rc;
    tt_cap_config_default(&c);
    c.log = log_fn;
    c.out_dir = "/etc/passwd/traces"; /* under a file: no directory can be made */
    rc = tt_cap_start(&c);
    printf("start unwritable %d\n", rc);
    r += step_body(0);
    c.out_dir = dir;
    c.name_filter = "([unclosed";
    rc = tt_cap_start(&c);
    printf("start badregex %d\n", rc);
    c.name_filter = NULL;
    rc = tt_cap_start(&c);
    printf("start ok %d\n", rc);
    rc = tt_cap_start(&c);
    printf("start again %d\n", rc);
    r += step_body(1);
    tt_cap_stop();
    printf("stop again %d\n", tt_cap_stop());
    printf("logs %d\n", count_log);
    print_stats(r);
    return 0;
}

/* limits: a memory cap, a maximum duration, a name filter */
static int mode_limits(const char *dir, const char *which)
{
    tt_cap_config c;
    long r = 0;
    int i;
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = (void *)dir;
    if (!strcmp(which, "cap"))
        c.max_bytes = 3 * 65536;
    else if (!strcmp(which, "maxdur"))
        c.max_duration_s = 0.05;
    else
        c.name_filter = "^aten::add";
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    for (i = 0; i < 3000; i++) {
        r += step_body(i);
        if (!strcmp(which, "maxdur") && i == 100) {
            struct timespec ts = { 0, 100000000 };
            nanosleep(&ts, NULL);
        }
    }
    tt_cap_stop();
    print_stats(r);
    return 0;
}

/* exit() with a window open: the trace is written at exit */
static int mode_exit(const char *dir)
{
    tt_cap_config c;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = "atexit";
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    printf("result %ld\n", step_body(0));
    fflush(stdout);
    exit(3);
}

/* a crash (abort) or SIGKILL with a window open, and during a write-out:
 * never a final file that is half-written (at most a .tmp) */
static int mode_crash(const char *dir, int how)
{
    tt_cap_config c;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = "crash";
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    step_body(0);
    fflush(stdout);
    if (how == 0)
        abort();
    if (how == 1)
        raise(SIGKILL);
    /* killed while the trace is written: the child writes through a FIFO
     * (its path.tmp) that the parent reads a little of, then kills it */
    {
        char tmp[512], buf[4096];
        pid_t pid;
        int fd, i;
        snprintf(tmp, sizeof(tmp), "%s/killed.json.tmp", dir);
        if (mkfifo(tmp, 0600) != 0)
            return 1;
        pid = fork();
        if (pid == 0) {
            tt_cap_config_default(&c);
            c.on_trace_ready = ready;
            c.user = (void *)dir;
            kill_name = "killed.json";
            tt_cap_start(&c);
            for (i = 0; i < 2000; i++)
                step_body(i);
            tt_cap_stop(); /* blocks on the FIFO; killed in there */
            _exit(0);
        }
        fd = open(tmp, O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
            return 1;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(fd);
        unlink(tmp);
        printf("killed while writing\n");
    }
    tt_cap_stop();
    printf("result 0\n");
    return 0;
}

static int ok_fn(void *arg)
{
    (void)arg;
    work(1000);
    return 0;
}

static int fail_fn(void *arg)
{
    (void)arg;
    return 42;
}

static tt_cap_config *nested_cfg;
static int nested_fn(void *arg)
{
    int *depth = arg;
    TT_CAP_SCOPE("nested_work");
    if (++*depth < 3) /* a profiled function calling itself: runs, unprofiled */
        return tt_cap_profile_function(nested_cfg, nested_fn, arg) + 1;
    return 100;
}

/* metrics: handlers per group, prof, and functions run under a profile */
static int mode_metrics(const char *dir)
{
    tt_cap_config c;
    char path[512];
    FILE *jl;
    int depth = 0, r;
    snprintf(path, sizeof(path), "%s/metrics.jsonl", dir);
    if (!(jl = fopen(path, "w")))
        return 1;
    tt_cap_metrics_configure("agent", tt_cap_metric_console, stdout);
    tt_cap_metrics_configure("jsonl", tt_cap_metric_jsonl, jl);
    tt_cap_metrics_configure("trace", tt_cap_metric_trace, NULL);
    tt_cap_put_metric("restarts", 5, "agent");
    tt_cap_put_metric("quoted\"name", -3, "jsonl");
    tt_cap_put_metric("nowhere", 1, NULL); /* torchelastic: the null handler */
    printf("prof ok %d\n", tt_cap_prof("train", "agent", ok_fn, NULL));
    printf("prof fail %d\n", tt_cap_prof("train", "agent", fail_fn, NULL));
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = (void *)dir;
    nested_cfg = &c;
    kill_name = "metrics_trace.json";
    tt_cap_start(&c);
    tt_cap_put_metric("loss_x1000", 1234, "trace");
    tt_cap_stop();
    kill_name = "function_trace.json";
    r = tt_cap_profile_function(&c, nested_fn, &depth);
    printf("profile_function %d depth %d\n", r, depth);
    c.out_dir = "/etc/passwd/x"; /* cannot start: the work still runs */
    c.on_trace_ready = NULL;
    c.log = log_fn;
    depth = 5;
    printf("profile_function unwritable %d\n", tt_cap_profile_function(&c, nested_fn, &depth));
    fclose(jl);
    print_stats(0);
    return 0;
}

static long long mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* two scopes around 20 ms sleeps, 30 ms apart: the clock's conversion. It
 * prints "sleep outer_us A B span_us S": each scope's length and the time
 * from the first scope's start to the second's end, as CLOCK_MONOTONIC saw
 * them from outside the scopes (the upper bounds, on a machine of any load) */
static int mode_sleep(const char *dir)
{
    tt_cap_config c;
    struct timespec d20 = { 0, 20000000 }, d10 = { 0, 10000000 };
    long long before[2], after[2];
    int i;
    tt_cap_config_default(&c);
    c.on_trace_ready = ready;
    c.user = (void *)dir;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    for (i = 0; i < 2; i++) {
        before[i] = mono_us();
        {
            TT_CAP_SCOPE("sleep20");
            nanosleep(&d20, NULL);
        }
        after[i] = mono_us();
        nanosleep(&d10, NULL);
    }
    tt_cap_stop();
    printf("sleep outer_us %lld %lld span_us %lld\n", after[0] - before[0], after[1] - before[1],
           after[1] - before[0]);
    print_stats(0);
    return 0;
}

/* a full disk (a file-size limit: every write past 4 KiB fails) and, with
 * TT_CAPTURE_FAULT=alloc, no memory: logged, nothing half-written, the
 * work's result returned */
static int mode_nospace(const char *dir)
{
    tt_cap_config c;
    struct rlimit lim = { 4096, 4096 };
    long r = 0;
    int i;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 1;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = "full";
    c.log = log_fn;
    tt_cap_start(&c);
    for (i = 0; i < 200; i++)
        r += step_body(i);
    tt_cap_stop();
    printf("logs %d\n", count_log);
    print_stats(r);
    return 0;
}

/* GPU capture asked for where there is no GPU (no driver, or no libcupti):
 * one log line, and the CPU capture goes on complete */
static int mode_gpu(const char *dir)
{
    tt_cap_config c;
    tt_cap_stats st;
    long r = 0;
    int i;
    tt_cap_config_default(&c);
    c.log = log_fn;
    c.out_dir = dir;
    c.worker_name = "gpu";
    c.gpu = TT_CAP_GPU_ALL;
    printf("start %d\n", tt_cap_start(&c));
    for (i = 0; i < 3; i++)
        r += step_body(i);
    tt_cap_get_stats(&st);
    printf("gpu %d\n", st.gpu);
    tt_cap_stop();
    printf("logs %d\n", count_log);
    print_stats(r);
    return 0;
}

/* ---- a scope whose source location has no name ---- */

static int mode_nullname(const char *dir)
{
    static const tt_cap_srcloc noname = { NULL, NULL, 0, TT_CAP_CPU_OP };
    static const tt_cap_srcloc named = { "aten::named", __FILE__, __LINE__, TT_CAP_CPU_OP };
    tt_cap_config c;
    tt_cap_scope a, b;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = "nullname";
    c.write_et = 1;
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    a = tt_cap_scope_begin(&named);
    b = tt_cap_scope_begin(&noname);
    work(100);
    tt_cap_scope_end(&b);
    tt_cap_scope_end(&a);
    printf("stop %d\n", tt_cap_stop());
    print_stats(0);
    return 0;
}

/* ---- 8 threads call tt_cap_start at once: one profile, 7 told EBUSY ---- */

static pthread_barrier_t start_barrier;

struct starter {
    int rc;
    char error[128];
};

static void *starter_main(void *arg)
{
    struct starter *st = arg;
    tt_cap_config c;
    tt_cap_config_default(&c);
    c.on_trace_ready = race_ready;
    pthread_barrier_wait(&start_barrier);
    st->rc = tt_cap_start(&c);
    snprintf(st->error, sizeof(st->error), "%s", tt_cap_last_error());
    {
        TT_CAP_SCOPE("aten::started");
        work(10);
    }
    return NULL;
}

static int mode_startrace(void)
{
    pthread_t th[8];
    struct starter st[8];
    int i, ok = 0, busy = 0, said = 0;
    pthread_barrier_init(&start_barrier, NULL, 8);
    for (i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, starter_main, &st[i]);
    for (i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        ok += st[i].rc == TT_CAP_OK;
        busy += st[i].rc == TT_CAP_EBUSY;
        said += st[i].rc == TT_CAP_EBUSY && strstr(st[i].error, "already running") != NULL;
    }
    pthread_barrier_destroy(&start_barrier);
    printf("starts ok=%d busy=%d said=%d\n", ok, busy, said);
    printf("stop %d\n", tt_cap_stop());
    printf("windows %llu\nwindow_scopes %llu\n", race_windows, race_scopes);
    print_stats(0);
    return 0;
}

/* ---- calls into the library from its own callbacks (on_trace_ready, log) ---- */

static int reenter_traces;

static void reenter_log(const char *line, void *user)
{
    tt_cap_stats st;
    const char *what = user;
    tt_cap_get_stats(&st); /* must not deadlock */
    printf("log %s: %s\n", what, line);
    printf("log %s: step %d start %d\n", what, tt_cap_step(), tt_cap_start(NULL));
    if (!strcmp(what, "stop"))
        printf("log %s: stop %d\n", what, tt_cap_stop());
    if (!strcmp(what, "shutdown")) {
        tt_cap_shutdown();
        printf("log %s: shutdown returned\n", what);
    }
}

static void reenter_ready(const tt_cap_trace *t, void *user)
{
    char path[512];
    tt_cap_stats st;
    pid_t pid;
    int status = -1;
    reenter_traces++;
    tt_cap_get_stats(&st);
    printf("ready %d: traces %llu scopes %zu\n", reenter_traces, (unsigned long long)st.traces,
           tt_cap_trace_scopes(t));
    printf("ready %d: step %d start %d\n", reenter_traces, tt_cap_step(), tt_cap_start(NULL));
    printf("ready %d: error %s\n", reenter_traces, tt_cap_last_error());
    snprintf(path, sizeof(path), "%s/reenter%d.json", (const char *)user, reenter_traces);
    printf("ready %d: write %d\n", reenter_traces, tt_cap_write_trace(t, path, NULL));
    fflush(stdout);
    if ((pid = fork()) == 0) /* a callback may fork (the library's fork hooks) */
        _exit(9);
    waitpid(pid, &status, 0);
    printf("ready %d: child %d\n", reenter_traces, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (reenter_traces == 2)
        printf("ready %d: stop %d\n", reenter_traces, tt_cap_stop());
}

/* the callbacks call the API: stats work, step and start say TT_CAP_ECALLBACK,
 * stop (and shutdown) take effect when the callback returns; never a deadlock */
static int mode_reenter(const char *dir)
{
    tt_cap_config c;
    long r = 0;
    int i, rc;
    tt_cap_config_default(&c);
    c.on_trace_ready = reenter_ready;
    c.user = (void *)dir;
    c.log = reenter_log;
    c.log_user = "calls";
    c.wait = 1, c.warmup = 0, c.active = 1; /* warmup 0: a log line at the start */
    printf("start %d\n", tt_cap_start(&c));
    for (i = 0; i < 10; i++) {
        r += step_body(i);
        rc = tt_cap_step();
        printf("step %d %d\n", i, rc);
    }
    printf("stop %d\n", tt_cap_stop());
    c.log_user = "stop"; /* the log callback stops the profile it is starting */
    printf("start2 %d\n", tt_cap_start(&c));
    printf("step2 %d\n", tt_cap_step());
    c.log_user = "shutdown";
    printf("start3 %d\n", tt_cap_start(&c));
    printf("step3 %d\n", tt_cap_step());
    c.log_user = "calls";
    printf("start4 %d\n", tt_cap_start(&c));
    printf("stop4 %d\n", tt_cap_stop());
    print_stats(r);
    return 0;
}

/* ---- exit() from a signal handler while threads are inside scopes ---- */

static atomic_long spins;
static int sig_status;

static void exit_handler(int sig)
{
    (void)sig;
    exit(sig_status);
}

static void *spinner(void *arg)
{
    (void)arg;
    for (;;) {
        TT_CAP_SCOPE("aten::spin");
        {
            TT_CAP_SCOPE("aten::inner");
            atomic_fetch_add(&spins, 1);
        }
    }
    return NULL;
}

static void wait_spins(long n)
{
    struct timespec ts = { 0, 100000 };
    long base = atomic_load(&spins);
    while (atomic_load(&spins) - base < n)
        nanosleep(&ts, NULL);
}

static void *sigexit_sender(void *arg)
{
    pthread_t to = *(pthread_t *)arg;
    wait_spins(20000);
    pthread_kill(to, SIGUSR1);
    return NULL;
}

/* WHO: "raise" (the main thread raises it while a thread spins in scopes),
 * "thread" (sent to the spinning thread), "main" (the main thread spins in
 * scopes and a thread sends it); the handler calls exit(5) */
static int mode_sigexit(const char *dir, const char *who)
{
    tt_cap_config c;
    pthread_t th;
    tt_cap_config_default(&c);
    c.out_dir = dir;
    c.worker_name = "sigexit";
    sig_status = 5;
    signal(SIGUSR1, exit_handler);
    if (tt_cap_start(&c) != TT_CAP_OK)
        return 1;
    if (!strcmp(who, "main")) {
        pthread_t self = pthread_self(), s;
        pthread_create(&th, NULL, spinner, NULL); /* a second thread in scopes too */
        pthread_create(&s, NULL, sigexit_sender, &self);
        pthread_detach(s);
        spinner(NULL);
    }
    pthread_create(&th, NULL, spinner, NULL);
    wait_spins(20000);
    if (!strcmp(who, "thread"))
        pthread_kill(th, SIGUSR1);
    else
        raise(SIGUSR1);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: capture_scenarios MODE DIR\n");
        return 2;
    }
    if (!strcmp(argv[1], "schedule"))
        return mode_schedule(argv[2], 0);
    if (!strcmp(argv[1], "schedule-gz"))
        return mode_schedule(argv[2], 1);
    if (!strcmp(argv[1], "names"))
        return mode_names(argv[2]);
    if (!strcmp(argv[1], "threads"))
        return mode_threads(argv[2]);
    if (!strcmp(argv[1], "fork"))
        return mode_fork(argv[2]);
    if (!strcmp(argv[1], "race"))
        return mode_race();
    if (!strcmp(argv[1], "fail"))
        return mode_fail(argv[2]);
    if (!strcmp(argv[1], "cap") || !strcmp(argv[1], "maxdur") || !strcmp(argv[1], "filter"))
        return mode_limits(argv[2], argv[1]);
    if (!strcmp(argv[1], "exit"))
        return mode_exit(argv[2]);
    if (!strcmp(argv[1], "nospace"))
        return mode_nospace(argv[2]);
    if (!strcmp(argv[1], "sleep"))
        return mode_sleep(argv[2]);
    if (!strcmp(argv[1], "gpu"))
        return mode_gpu(argv[2]);
    if (!strcmp(argv[1], "metrics"))
        return mode_metrics(argv[2]);
    if (!strcmp(argv[1], "abort"))
        return mode_crash(argv[2], 0);
    if (!strcmp(argv[1], "kill"))
        return mode_crash(argv[2], 1);
    if (!strcmp(argv[1], "kill-writing"))
        return mode_crash(argv[2], 2);
    if (!strcmp(argv[1], "nullname"))
        return mode_nullname(argv[2]);
    if (!strcmp(argv[1], "startrace"))
        return mode_startrace();
    if (!strcmp(argv[1], "reenter"))
        return mode_reenter(argv[2]);
    if (!strncmp(argv[1], "sigexit-", 8))
        return mode_sigexit(argv[2], argv[1] + 8);
    if (!strcmp(argv[1], "plain")) { /* no profile: the work alone */
        printf("result %ld\n", step_body(0));
        return 0;
    }
    fprintf(stderr, "capture_scenarios: unknown mode %s\n", argv[1]);
    return 2;
}
