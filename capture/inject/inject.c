/*
 * capture/inject/inject.c - libtracetool_inject.so: GPU (CUPTI) and CPU
 * capture of an unmodified program, the way Nsight Systems injects itself.
 *
 *   TT_CAPTURE_DIR=traces CUDA_INJECTION64_PATH=$PWD/libtracetool_inject.so prog
 *   TT_CAPTURE_DIR=traces LD_PRELOAD=libtracetool_inject.so prog
 *
 * Two ways in, one start: the CUDA driver calls InitializeInjection() from
 * cuInit when CUDA_INJECTION64_PATH names this library; under LD_PRELOAD the
 * constructor starts at load, so a program without CUDA is recorded too.
 * The start runs once per process; re-entrance (CUPTI initialising the
 * driver, which calls InitializeInjection, while the constructor starts
 * CUPTI) returns at once: pthread_once would deadlock there.
 *
 * Environment (read once, at the start):
 *   TT_CAPTURE_DIR        where traces go (required: without it, nothing)
 *   TT_CAPTURE_WORKER     the trace's worker name (default <hostname>_<pid>;
 *                         one file name: with a '/', or "." or "..", the
 *                         default, said in a log line)
 *   TT_CAPTURE_GZIP=1     write .pt.trace.json.gz
 *   TT_CAPTURE_ACTIVITIES kernel,memcpy,memset,runtime,driver,memory,all
 *                         (default all); none: CPU only
 *   TT_CAPTURE_DELAY=S    start recording S seconds after the start
 *   TT_CAPTURE_DURATION=S stop (and write) S seconds after recording began
 *   TT_CAPTURE_RANGE=cuda-profiler-api
 *                         record only between cudaProfilerStart and
 *                         cudaProfilerStop (a trace per range)
 *   TT_CAPTURE_QUIET=1    no log lines
 *   TT_CAPTURE_SAID=PATH  (tracetool record) a file the processes of one
 *                         record share: "said LINE" for each log line
 *                         written (a line another process said already is
 *                         not said again: one "GPU capture off" per record,
 *                         not per process), "empty PID NAME" for each process
 *                         whose window held no event and was not written
 *   TT_CAPTURE_RECORD_PID=PID (tracetool record, its own pid) the program
 *                         record runs (its child, also after an exec, as a
 *                         shim's) writes its trace whatever it holds; any
 *                         other process (a helper a shim or script runs)
 *                         writes one only when it recorded an event
 * The trace is written at exit() (the capture library's atexit hook), or
 * when a DURATION or a range ends. A program killed by a signal writes none.
 *
 * The program is never broken: nothing here aborts or exits, stdout is never
 * written, log lines go to stderr as "tracetool capture: ...", and the
 * helper thread of a DELAY/DURATION window blocks every signal.
 */
#include "capture/src/capture_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* internal to the capture library: a weak reference, so a library that
 * does not export it leaves it NULL (said in a log line) instead of the
 * program dying on an unresolved symbol */
#pragma weak tt_cap__gpu_profiler_api
#pragma weak tt_cap__skip_empty

TT_CAP_API int InitializeInjection(void);

static tt_cap_config cfg;
static char dir_buf[4096], worker_buf[256], said_buf[4096];
static int quiet;
static double delay_s, duration_s;
static atomic_int started;
static pthread_mutex_t win_lock = PTHREAD_MUTEX_INITIALIZER;
static int exiting; /* under win_lock: the helper thread starts nothing */
static pid_t owner; /* the process that started: a fork()ed child records nothing, and
                     * must not wait for win_lock, which the helper may have held */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define SAY_PREFIX "tracetool capture: "

/* TT_CAPTURE_SAID: 1 when the file (fd, locked) holds the line rec (n
 * bytes, its '\n' included) */
static int said_before(int fd, const char *rec, size_t n)
{
    char buf[4096];
    size_t have = 0;
    ssize_t r;
    if (lseek(fd, 0, SEEK_SET) < 0)
        return 0;
    while ((r = read(fd, buf + have, sizeof(buf) - have)) > 0) {
        char *p = buf, *nl;
        have += (size_t)r;
        while ((nl = memchr(p, '\n', (size_t)(buf + have - p))) != NULL) {
            if ((size_t)(nl + 1 - p) == n && !memcmp(p, rec, n))
                return 1;
            p = nl + 1;
        }
        have -= (size_t)(p - buf);
        memmove(buf, p, have);
        if (have == sizeof(buf)) /* a line longer than any written: skipped */
            have = 0;
    }
    return 0;
}

/* a line of text: "said TEXT\n" in rec */
static size_t said_rec(char *rec, size_t cap, const char *text, size_t n)
{
    size_t k = (size_t)snprintf(rec, cap, "said ");
    if (n > cap - k - 1)
        n = cap - k - 1;
    memcpy(rec + k, text, n);
    return k + n;
}

/* one write(2) per line: no stdio state touched, lines do not interleave.
 * Under tracetool record (TT_CAPTURE_SAID) a line that another process of
 * the same record said already is not said again, and each line said is
 * noted there (record points at "the lines above" only when there are). */
static void say(const char *fmt, ...)
{
    char line[600], rec[640];
    va_list ap;
    int n = snprintf(line, sizeof(line), SAY_PREFIX), fd = -1;
    size_t k = 0;
    ssize_t w;
    if (quiet)
        return;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (said_buf[0] && (fd = open(said_buf, O_RDWR | O_APPEND | O_CLOEXEC)) >= 0) {
        k = said_rec(rec, sizeof(rec), line + strlen(SAY_PREFIX), (size_t)n - strlen(SAY_PREFIX));
        while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
            ;
        if (said_before(fd, rec, k)) {
            close(fd); /* the lock goes with it */
            return;
        }
    }
    w = write(2, line, (size_t)n);
    if (fd >= 0) {
        w = write(fd, rec, k);
        close(fd);
    }
    (void)w;
}

/* TT_CAPTURE_SAID: this process's window held no event and was not written
 * (record counts these processes, by name) */
static void note_empty(void)
{
    char name[64] = "?", rec[128];
    ssize_t r, w;
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC), n;
    if (fd >= 0) {
        r = read(fd, name, sizeof(name) - 1);
        close(fd);
        name[r > 0 ? r : 0] = 0;
        name[strcspn(name, "\n")] = 0;
    }
    if (!said_buf[0] || (fd = open(said_buf, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
        return;
    n = snprintf(rec, sizeof(rec), "empty %ld %s\n", (long)getpid(), name[0] ? name : "?");
    w = write(fd, rec, (size_t)(n < (int)sizeof(rec) ? n : (int)sizeof(rec) - 1));
    (void)w;
    close(fd);
}

/* the capture library's log lines: said the same way */
static void inject_log(const char *line, void *user)
{
    (void)user;
    say("%s", line);
}

static void quiet_log(const char *line, void *user)
{
    (void)line;
    (void)user;
}

static const struct {
    const char *name;
    unsigned bits;
} activity_words[] = {
    { "kernel", TT_CAP_GPU_KERNEL }, { "memcpy", TT_CAP_GPU_MEMCPY },
    { "memset", TT_CAP_GPU_MEMSET }, { "runtime", TT_CAP_GPU_RUNTIME },
    { "driver", TT_CAP_GPU_DRIVER }, { "memory", TT_CAP_GPU_MEMORY },
    { "all", TT_CAP_GPU_ALL },       { "none", 0 },
};
#define KNOWN_ACTIVITIES "kernel,memcpy,memset,runtime,driver,memory,all,none"

/* TT_CAPTURE_ACTIVITIES: unknown words are said and skipped; a list with no
 * known word is the default (all) */
static unsigned parse_activities(const char *s)
{
    char buf[256], *save = NULL, *w;
    unsigned bits = 0;
    int known = 0;
    size_t i;
    if (!s || !*s)
        return TT_CAP_GPU_ALL;
    snprintf(buf, sizeof(buf), "%s", s);
    for (w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        for (i = 0; i < sizeof(activity_words) / sizeof(activity_words[0]); i++) {
            if (!strcmp(w, activity_words[i].name))
                break;
        }
        if (i == sizeof(activity_words) / sizeof(activity_words[0])) {
            say("TT_CAPTURE_ACTIVITIES: unknown activity '%s' ignored (known: " KNOWN_ACTIVITIES
                ")", w);
            continue;
        }
        bits |= activity_words[i].bits;
        known = 1;
    }
    if (!known) {
        say("TT_CAPTURE_ACTIVITIES='%s' names no activity: recording all", s);
        return TT_CAP_GPU_ALL;
    }
    return bits;
}

/* seconds from the environment: >= 0 and finite, else said and 0 */
static double env_seconds(const char *name)
{
    const char *s = getenv(name);
    char *end;
    double v;
    if (!s || !*s)
        return 0;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e7) {
        say("%s='%s' is not a number of seconds: ignored", name, s);
        return 0;
    }
    return v;
}

static int env_is_1(const char *name)
{
    const char *s = getenv(name);
    return s && !strcmp(s, "1");
}

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void begin(void)
{
    /* a failure is logged by the library; EBUSY: the program runs its own
     * profile (or another copy of this library started), which wins */
    tt_cap_start(&cfg);
}

/* at exit: registered before the library's own hook (at the first start),
 * so it runs after it; from now on the helper thread starts nothing, and a
 * window still open is written */
static void at_exit(void)
{
    if (getpid() != owner)
        return;
    pthread_mutex_lock(&win_lock);
    exiting = 1;
    pthread_mutex_unlock(&win_lock);
    tt_cap_shutdown();
}

/* TT_CAPTURE_DELAY / TT_CAPTURE_DURATION: the window, by wall time */
static void *window_thread(void *arg)
{
    (void)arg;
    if (delay_s > 0)
        sleep_s(delay_s);
    /* no delay: the starting thread begins the window under the lock, so
     * the duration is counted from when recording began */
    pthread_mutex_lock(&win_lock);
    if (!exiting && delay_s > 0)
        begin();
    pthread_mutex_unlock(&win_lock);
    if (duration_s <= 0)
        return NULL;
    sleep_s(duration_s);
    pthread_mutex_lock(&win_lock);
    if (!exiting)
        tt_cap_stop(); /* writes the trace now */
    pthread_mutex_unlock(&win_lock);
    return NULL;
}

static void start_window_thread(void)
{
    pthread_t th;
    pthread_attr_t attr;
    sigset_t all, old;
    int rc;
    sigfillset(&all);
    /* the thread inherits the mask: the program's signals go to its threads */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    rc = pthread_create(&th, &attr, window_thread, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        say("cannot start the window's thread (%s): recording to the end", strerror(rc));
        delay_s = 0;
    }
}

/* cudaProfilerStart (1) / cudaProfilerStop (0), from CUPTI's callback */
static void profiler_range(int start)
{
    if (getpid() != owner)
        return;
    pthread_mutex_lock(&win_lock);
    if (!exiting) {
        if (start)
            begin();
        else
            tt_cap_stop(); /* this range's trace is written now */
    }
    pthread_mutex_unlock(&win_lock);
}

/* 1: the program tracetool record runs (its child: an exec, as a shim's, keeps
 * the pid and the parent), or not run by record at all */
static int program_of_record(void)
{
    const char *s = getenv("TT_CAPTURE_RECORD_PID");
    char *end;
    long pid;
    if (!s || !*s)
        return 1;
    pid = strtol(s, &end, 10);
    return *end || pid <= 0 || (pid_t)pid == getppid();
}

/* the configuration from TT_CAPTURE_*: 0, or -1 when there is nothing to do */
static int configure_from_env(void)
{
    const char *dir = getenv("TT_CAPTURE_DIR"), *worker = getenv("TT_CAPTURE_WORKER");
    const char *said = getenv("TT_CAPTURE_SAID");
    if (!dir || !*dir)
        return -1;
    if (said && *said)
        snprintf(said_buf, sizeof(said_buf), "%s", said);
    quiet = env_is_1("TT_CAPTURE_QUIET");
    tt_cap_config_default(&cfg);
    /* copies: the program may change its environment later */
    snprintf(dir_buf, sizeof(dir_buf), "%s", dir);
    cfg.out_dir = dir_buf;
    if (worker && *worker) {
        snprintf(worker_buf, sizeof(worker_buf), "%s", worker);
        cfg.worker_name = worker_buf;
    }
    cfg.use_gzip = env_is_1("TT_CAPTURE_GZIP");
    cfg.gpu = parse_activities(getenv("TT_CAPTURE_ACTIVITIES"));
    cfg.log = quiet ? quiet_log : inject_log;
    delay_s = env_seconds("TT_CAPTURE_DELAY");
    duration_s = env_seconds("TT_CAPTURE_DURATION");
    /* under record, a process that is not the program it runs (a helper of
     * a shim or a script) writes no trace when it recorded nothing */
    if (!program_of_record() && tt_cap__skip_empty)
        tt_cap__skip_empty(note_empty);
    return 0;
}

/* TT_CAPTURE_RANGE=cuda-profiler-api: 0 when set up, 1 when not asked for */
static int start_range(void)
{
    const char *range = getenv("TT_CAPTURE_RANGE");
    if (!range || !*range || !strcmp(range, "none"))
        return 1;
    if (strcmp(range, "cuda-profiler-api") != 0) {
        say("TT_CAPTURE_RANGE='%s' is not cuda-profiler-api: recording the whole run", range);
        return 1;
    }
    if (delay_s > 0 || duration_s > 0)
        say("TT_CAPTURE_DELAY / TT_CAPTURE_DURATION ignored with TT_CAPTURE_RANGE");
    if (!tt_cap__gpu_profiler_api) {
        say("TT_CAPTURE_RANGE=cuda-profiler-api: not supported by this capture library;"
            " nothing is recorded");
        return 0;
    }
    if (tt_cap__gpu_profiler_api(profiler_range) < 0)
        say("TT_CAPTURE_RANGE=cuda-profiler-api: CUDA profiler ranges cannot be followed"
            " here (see the line above); nothing is recorded");
    return 0;
}

static void start_once(void)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&started, &expect, 1))
        return; /* started, starting (re-entered from CUPTI), or a forked child */
    if (configure_from_env() < 0)
        return;
    owner = getpid();
    atexit(at_exit);
    if (start_range() == 0)
        return;
    /* the thread first (its allocations are not the program's), and the
     * lock held so that it cannot stop before the window begins */
    pthread_mutex_lock(&win_lock);
    if (delay_s > 0 || duration_s > 0)
        start_window_thread();
    if (delay_s <= 0)
        begin(); /* now: the program's first steps are in the window */
    pthread_mutex_unlock(&win_lock);
}

/* the driver's entry point (CUDA_INJECTION64_PATH), called from cuInit */
int InitializeInjection(void)
{
    start_once();
    return 1; /* success: whatever happened to capture, CUDA goes on */
}

/* 1 when this library is in LD_PRELOAD (by path or by name) */
static int preloaded(void)
{
    const char *pre = getenv("LD_PRELOAD"), *base, *p;
    Dl_info info;
    size_t n;
    if (!pre || !*pre)
        return 0;
    if (!dladdr(&started, &info) || !info.dli_fname || !*info.dli_fname)
        return 1; /* cannot tell: as if preloaded */
    base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    n = strlen(base);
    for (p = pre; (p = strstr(p, base)) != NULL; p += n) {
        if ((p == pre || strchr("/ :", p[-1])) && (p[n] == '\0' || strchr(" :", p[n])))
            return 1;
    }
    return 0;
}

/* Under LD_PRELOAD: start now. Loaded by the driver (CUDA_INJECTION64_PATH)
 * or by dlopen: wait for InitializeInjection, outside the loader. */
__attribute__((constructor)) static void inject_load(void)
{
    if (preloaded())
        start_once();
}
