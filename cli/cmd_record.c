/*
 * cli/cmd_record.c - `tracetool record [options] -- PROG [ARGS...]`: run an
 * unmodified program with the capture library injected (libtracetool_inject.so
 * as CUDA_INJECTION64_PATH and LD_PRELOAD, configured by TT_CAPTURE_*
 * variables), as `nsys profile` and `perf record` do; then list the traces it
 * wrote and summarise them on stderr.
 *
 * The program's stdin, stdout and stderr are its own (record writes only to
 * stderr, after it ended), and so is the exit status: its exit code, or its
 * death by a signal, re-raised here. While it runs, SIGINT and SIGQUIT are
 * ignored here (as system() does: Ctrl-C reaches the program through the
 * terminal), SIGTERM and SIGHUP are passed on to it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/table.h"

#define INJECT_LIB "libtracetool_inject.so"
#define MALLOC_LIB "libtracetool_capture_malloc.so"
#define SUMMARY_ROWS 10
#define SUMMARY_TRACES 4 /* traces summarised (a program that forks many writes many) */

enum { O_OUT, O_GZIP, O_ACT, O_DELAY, O_DUR, O_RANGE, O_MEM, O_WORKER, O_NOSUM, O_LIB };

static const struct cli_opt opts[] = {
    { "output", O_OUT, "DIR", "where the traces go (made if missing;\n"
      "default tracetool-record)", 'o' },
    { "gzip", O_GZIP, NULL, "write .pt.trace.json.gz", 0 },
    { "activities", O_ACT, "LIST", "GPU activities, comma-separated: kernel, memcpy,\n"
      "memset, runtime, driver, memory (cudaMalloc/Free),\nall (default); none: CPU only", 0 },
    { "delay", O_DELAY, "S", "start recording S seconds after the program starts", 0 },
    { "duration", O_DUR, "S", "stop recording S seconds after it began (the\n"
      "trace is written then)", 0 },
    { "capture-range", O_RANGE, "cuda-profiler-api|none", "cuda-profiler-api: record only "
      "between\ncudaProfilerStart and cudaProfilerStop (a trace\nper range); none: the whole "
      "run (default)", 0 },
    { "memory", O_MEM, NULL, "also record the heap (malloc, calloc, realloc,\nfree) as "
      "[memory] events", 0 },
    { "worker", O_WORKER, "NAME", "the traces' worker name (default <host>_<pid>)", 0 },
    { "no-summary", O_NOSUM, NULL, "list the traces written, but summarise none", 0 },
    { "lib", O_LIB, "PATH", "the injection library (default: $TT_INJECT, else\n"
      INJECT_LIB " next to tracetool)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "record", "[--] PROG [ARGS...]",
    "Run PROG with GPU (CUPTI) and CPU capture injected, as 'nsys profile' does:\n"
    "libtracetool_inject.so is set up as CUDA_INJECTION64_PATH and LD_PRELOAD, the\n"
    "Kineto trace is written to DIR when PROG exits, and a summary of it (the top\n"
    "rows of 'tracetool averages' and 'tracetool kernels') goes to stderr. PROG's\n"
    "stdin, stdout, stderr and exit status are its own. Without a GPU or driver,\n"
    "one line says GPU capture is off and the CPU capture goes on.",
    opts,
    "exit status: PROG's (killed by a signal: the same signal); 2 usage; 4 the\n"
    "injection library or DIR unusable; 126 PROG not executable; 127 PROG not found.",
    0, 0, "",
};

struct rec {
    const char *out, *activities, *delay, *duration, *range, *worker, *lib;
    int gzip, memory, summary;
};

static const char *const activity_words[] = { "kernel", "memcpy", "memset", "runtime",
                                              "driver", "memory", "all", "none" };
#define NACT (sizeof(activity_words) / sizeof(activity_words[0]))

/* --activities: every word known (else a usage error naming it) */
static void check_activities(const struct cli_cmd *c, const char *arg)
{
    char buf[256], *save = NULL, *w;
    size_t i;
    int n = 0;
    if (strlen(arg) >= sizeof(buf))
        cli_usage_error(c, "activity list too long");
    snprintf(buf, sizeof(buf), "%s", arg);
    for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save), n++) {
        const char *hit;
        for (i = 0; i < NACT && strcmp(w, activity_words[i]); i++)
            ;
        if (i < NACT)
            continue;
        if ((hit = cli_suggest(w, activity_words, NACT)) != NULL)
            cli_usage_error(c, "unknown activity '%s'; did you mean '%s'?", w, hit);
        cli_usage_error(c, "unknown activity '%s' (kernel, memcpy, memset, runtime, driver,"
                           " memory, all, none)", w);
    }
    if (!n)
        cli_usage_error(c, "empty activity list");
}

static const char *seconds(const struct cli_cmd *c, const char *opt, const char *arg)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(arg, &end);
    if (errno || end == arg || *end || !isfinite(v) || v < 0 || v > 1e7)
        cli_usage_error(c, "bad %s '%s' (seconds, >= 0)", opt, arg);
    return arg;
}

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct rec *r = ctx;
    switch (key) {
    case O_OUT:
        if (!*arg)
            cli_usage_error(c, "empty output directory");
        r->out = arg;
        break;
    case O_GZIP: r->gzip = 1; break;
    case O_ACT: check_activities(c, arg); r->activities = arg; break;
    case O_DELAY: r->delay = seconds(c, "delay", arg); break;
    case O_DUR: r->duration = seconds(c, "duration", arg); break;
    case O_RANGE:
        r->range = cli_choose(c, cli_opt_of(c, O_RANGE), arg, "capture range") == 0 ? arg : NULL;
        break;
    case O_MEM: r->memory = 1; break;
    case O_WORKER:
        if (!*arg || strchr(arg, '/'))
            cli_usage_error(c, "bad worker name '%s' (a file name part: no '/')", arg);
        r->worker = arg;
        break;
    case O_NOSUM: r->summary = 0; break;
    default: r->lib = arg; break;
    }
}

/* the option of a long name, spelt whole (cli_parse takes no prefixes) */
static const struct cli_opt *long_opt(const char *word, size_t len)
{
    size_t i;
    for (i = 0; opts[i].name; i++)
        if (strlen(opts[i].name) == len && !strncmp(opts[i].name, word, len))
            return &opts[i];
    return NULL;
}

/* The end of record's own options: the first operand (PROG) or "--". PROG's
 * own options are never record's (getopt would permute them). */
static int options_end(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *p;
        const struct cli_opt *o;
        if (!strcmp(a, "--") || a[0] != '-' || !a[1])
            return i;
        if (a[1] == '-') {
            o = long_opt(a + 2, strcspn(a + 2, "="));
            if (o && o->arg && !strchr(a, '='))
                i++;
            continue;
        }
        for (p = a + 1; *p; p++) { /* -o DIR, -oDIR, clusters */
            size_t k;
            for (k = 0; opts[k].name && opts[k].short_name != *p; k++)
                ;
            if (opts[k].name && opts[k].arg) {
                i += !p[1];
                break;
            }
        }
    }
    return argc;
}

/* ---- the libraries ---- */

static int usable(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (access(path, R_OK) != 0 || !realpath(path, real) || strlen(real) >= cap)
        return 0;
    snprintf(out, cap, "%s", real);
    return 1;
}

/* the install's library directory seen from its bin/ (CMake's GNUInstallDirs) */
#ifndef TT_LIBDIR_FROM_BINDIR
#define TT_LIBDIR_FROM_BINDIR "../lib/"
#endif

/* the injection library: --lib, $TT_INJECT, else next to the executable (the
 * build tree's capture/, an install's library directory, ../lib or ../lib64) */
static int find_inject(const char *given, char *out, size_t cap)
{
    static const char *const rel[] = { "capture/", TT_LIBDIR_FROM_BINDIR, "../lib/", "../lib64/",
                                       "", "../lib/tracetool/" };
    const char *env = getenv("TT_INJECT");
    char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
    ssize_t n;
    size_t i;
    if (given || (env && *env)) {
        const char *p = given ? given : env;
        if (usable(p, out, cap))
            return 0;
        fprintf(stderr, "tracetool record: %s: cannot read the injection library (%s%s)\n",
                p, given ? "--lib" : "TT_INJECT", access(p, F_OK) ? ": no such file" : "");
        return -1;
    }
    if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
        exe[n] = '\0';
        if ((slash = strrchr(exe, '/')) != NULL)
            slash[1] = '\0';
        for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
            snprintf(path, sizeof(path), "%s%s" INJECT_LIB, exe, rel[i]);
            if (usable(path, out, cap))
                return 0;
        }
    }
    fprintf(stderr, "tracetool record: cannot find " INJECT_LIB " (looked next to %s: capture/,"
                    " ../lib/, ../lib64/); give --lib PATH or set TT_INJECT\n",
            n > 0 ? exe : "tracetool");
    return -1;
}

/* LD_PRELOAD splits its list at spaces and colons */
static int preloadable(const char *path)
{
    if (!strpbrk(path, " :"))
        return 1;
    fprintf(stderr, "tracetool record: %s: a path with a space or a colon cannot be"
                    " preloaded\n", path);
    return 0;
}

/* ---- the output directory ---- */

static int mkdir_p(const char *dir)
{
    char buf[PATH_MAX], *p;
    struct stat st;
    if (strlen(dir) >= sizeof(buf))
        return errno = ENAMETOOLONG, -1;
    snprintf(buf, sizeof(buf), "%s", dir);
    for (p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    if (stat(buf, &st) != 0)
        return -1;
    return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
}

struct names {
    char **v;
    size_t n, cap;
};

static int is_trace_name(const char *s)
{
    size_t n = strlen(s);
    return (n > 14 && !strcmp(s + n - 14, ".pt.trace.json")) ||
           (n > 17 && !strcmp(s + n - 17, ".pt.trace.json.gz"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the trace files in dir, sorted (a failure leaves fewer: listing is advice) */
static void list_traces(const char *dir, struct names *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!is_trace_name(e->d_name))
            continue;
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 16;
            char **v = realloc(out->v, cap * sizeof(*v));
            if (!v)
                break;
            out->v = v;
            out->cap = cap;
        }
        if ((out->v[out->n] = strdup(e->d_name)) != NULL)
            out->n++;
    }
    closedir(d);
    if (out->n)
        qsort(out->v, out->n, sizeof(*out->v), cmp_str);
}

static void names_free(struct names *s)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* ---- the program's environment ---- */

/* set, or unset when val is NULL */
static int opt_env(const char *name, const char *val)
{
    return val ? setenv(name, val, 1) : unsetenv(name);
}

static int set_env(const struct rec *r, const char *dir, const char *inject, const char *malloc_lib)
{
    const char *old = getenv("LD_PRELOAD");
    char *pre, me[32];
    size_t n = strlen(inject) + (malloc_lib ? strlen(malloc_lib) : 0) + (old ? strlen(old) : 0) + 3;
    int rc;
    if (!(pre = malloc(n)))
        return -1;
    /* ours first; what the caller preloads stays, after */
    snprintf(pre, n, "%s%s%s%s%s", inject, malloc_lib ? " " : "", malloc_lib ? malloc_lib : "",
             old && *old ? " " : "", old && *old ? old : "");
    rc = setenv("LD_PRELOAD", pre, 1) | setenv("CUDA_INJECTION64_PATH", inject, 1) |
         setenv("TT_CAPTURE_DIR", dir, 1) | setenv("TT_CAPTURE_INJECT", "1", 1);
    free(pre);
    /* the program is our child (also after it execs, as a shim does): it
     * writes its trace; another process writes one only with events in it */
    snprintf(me, sizeof(me), "%ld", (long)getpid());
    rc |= setenv("TT_CAPTURE_RECORD_PID", me, 1);
    /* record's options decide the window, not what the caller's shell left */
    rc |= opt_env("TT_CAPTURE_GZIP", r->gzip ? "1" : NULL);
    rc |= opt_env("TT_CAPTURE_ACTIVITIES", r->activities);
    rc |= opt_env("TT_CAPTURE_DELAY", r->delay);
    rc |= opt_env("TT_CAPTURE_DURATION", r->duration);
    rc |= opt_env("TT_CAPTURE_RANGE", r->range);
    rc |= opt_env("TT_CAPTURE_WORKER", r->worker);
    return rc ? -1 : 0;
}

/* ---- running it ---- */

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* the shell's words for an exec failure, and its exit code */
static int exec_failed(const char *prog, int err)
{
    if (err == ENOENT && !strchr(prog, '/')) {
        fprintf(stderr, "tracetool record: %s: command not found\n", prog);
        return 127;
    }
    fprintf(stderr, "tracetool record: %s: %s\n", prog, strerror(err));
    return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

/* Run argv; its wait status in *status. 0, or an exit code of record's own
 * when it could not run (126, 127, EXIT_IO). */
static int run(char **argv, int *status)
{
    struct sigaction ign, old_int, old_quit, fwd, old_term, old_hup;
    int pfd[2], err = 0;
    ssize_t n;
    pid_t pid;
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        fprintf(stderr, "tracetool record: pipe: %s\n", strerror(errno));
        return EXIT_IO;
    }
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    fflush(NULL);
    if ((pid = fork()) == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        close(pfd[0]);
        execvp(argv[0], argv);
        err = errno;
        n = write(pfd[1], &err, sizeof(err));
        (void)n;
        _exit(127);
    }
    close(pfd[1]);
    if (pid < 0) {
        fprintf(stderr, "tracetool record: cannot start %s: %s\n", argv[0], strerror(errno));
        close(pfd[0]);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        return EXIT_IO;
    }
    child_pid = pid;
    memset(&fwd, 0, sizeof(fwd));
    fwd.sa_handler = pass_on;
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    /* the pipe closes on a successful exec; an errno comes through it if not */
    while ((n = read(pfd[0], &err, sizeof(err))) < 0 && errno == EINTR)
        ;
    close(pfd[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return n == (ssize_t)sizeof(err) ? exec_failed(argv[0], err) : 0;
}

/* exit as the program did: its code, or its signal raised here (no core file
 * of tracetool's own); 128 + signal if that signal cannot end us */
static int same_status(int status)
{
    int sig;
    struct rlimit no_core = { 0, 0 };
    sigset_t set;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (!WIFSIGNALED(status))
        return EXIT_INTERNAL;
    sig = WTERMSIG(status);
    fflush(NULL);
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}

/* ---- the summary ---- */

/* a name cut to max bytes (at a UTF-8 character boundary) with "..." */
static const char *short_name(const char *s, char *buf, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return s;
    n = max - 3;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    snprintf(buf, max + 1, "%.*s...", (int)n, s);
    return buf;
}

static int by_self(const void *a, const void *b)
{
    const tt_avg_row *x = *(const tt_avg_row *const *)a, *y = *(const tt_avg_row *const *)b;
    double dx = x->self_device_us + x->self_cpu_us, dy = y->self_device_us + y->self_cpu_us;
    return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

static void write_table(tt_table *t, const size_t *cols, size_t ncols)
{
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    wo.indent = "  ";
    wo.cols = cols;
    wo.ncols = ncols;
    tt_table_write(t, &wo, stderr);
    fputc('\n', stderr);
}

/* the ops with the most self time (CPU + device), top SUMMARY_ROWS */
static void summary_ops(const char *path, const tt_avg_trace *tr)
{
    static const tt_table_col cols[] = {
        { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
        { "Calls", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
        { "Self CPU us", "self_cpu_us", TT_COL_FLOAT, 0, 0, 0, 3, 1, 0, 0 },
        { "CPU total us", "cpu_total_us", TT_COL_FLOAT, 0, 0, 0, 3, 1, 0, 0 },
        { "Self CUDA us", "self_cuda_us", TT_COL_FLOAT, 0, 0, 0, 3, 1, 0, 0 },
        { "Self CPU Mem", "self_cpu_mem", TT_COL_BYTES, 0, 0, 0, 0, 0, 0, 0 },
    };
    size_t pick[6], np = 0, i, n = tr->nrows < SUMMARY_ROWS ? tr->nrows : SUMMARY_ROWS;
    const tt_avg_row **rows = malloc((tr->nrows ? tr->nrows : 1) * sizeof(*rows));
    tt_table *t = tt_table_new(cols, 6);
    int gpu = 0;
    char buf[64];
    if (!rows || !t)
        goto out;
    for (i = 0; i < tr->nrows; i++) {
        rows[i] = &tr->rows[i];
        gpu |= tr->rows[i].self_device_us > 0;
    }
    qsort(rows, tr->nrows, sizeof(*rows), by_self);
    for (i = 0; i < n; i++) {
        if (tt_table_add_row(t) < 0 ||
            tt_table_set_text(t, 0, short_name(rows[i]->name, buf, 60)))
            goto out;
        tt_table_set_int(t, 1, rows[i]->count);
        tt_table_set_float(t, 2, rows[i]->self_cpu_us);
        tt_table_set_float(t, 3, rows[i]->cpu_total_us);
        tt_table_set_float(t, 4, rows[i]->self_device_us);
        tt_table_set_int(t, 5, rows[i]->self_cpu_mem);
    }
    pick[np++] = 0, pick[np++] = 1, pick[np++] = 2, pick[np++] = 3;
    if (gpu)
        pick[np++] = 4;
    if (tr->show_memory)
        pick[np++] = 5;
    fprintf(stderr, "tracetool record: top %zu of %zu ops by self time in %s:\n", n, tr->nrows,
            path);
    write_table(t, pick, np);
out:
    tt_table_free(t);
    free(rows);
}

static void summary_kernels(const char *path, const tt_kern_summary *s)
{
    static const tt_table_col cols[] = {
        { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
        { "Count", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
        { "Total us", "total_us", TT_COL_FLOAT, 0, 0, 0, 3, 1, 0, 0 },
        { "Avg us", "avg_us", TT_COL_FLOAT, 0, 0, 0, 3, 1, 0, 0 },
        { "Time %", "time_pct", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    };
    tt_table *t = tt_table_new(cols, 5);
    char buf[64];
    size_t i;
    if (!t)
        return;
    for (i = 0; i < s->nrows; i++) {
        if (tt_table_add_row(t) < 0 ||
            tt_table_set_text(t, 0, short_name(s->rows[i].name, buf, 60)))
            break;
        tt_table_set_int(t, 1, s->rows[i].instances);
        tt_table_set_float(t, 2, (double)s->rows[i].total_ns / 1e3);
        tt_table_set_float(t, 3, s->rows[i].avg_ns / 1e3);
        tt_table_set_float(t, 4, s->rows[i].time_pct);
    }
    fprintf(stderr, "tracetool record: top %zu of %lld %s in %s:\n", s->nrows,
            (long long)s->ngroups, s->memory ? "memcpy/memset kinds" : "kernels", path);
    write_table(t, NULL, 0);
    tt_table_free(t);
}

static void summarise(const char *path)
{
    tt_avg_options ao = TT_AVG_OPTIONS_INIT;
    tt_kern_options ko = TT_KERN_OPTIONS_INIT;
    tt_avg_result *avg = NULL;
    tt_kern_result kern;
    size_t i, shown = 0;
    memset(&kern, 0, sizeof(kern));
    ko.row_limit = SUMMARY_ROWS;
    if (tt_averages_compute_file(path, &ao, &avg) < 0 ||
        tt_kernels_file_result(path, &ko, &kern) < 0) {
        char line[1024];
        tt_error_format(tt_error_last(), line, sizeof(line));
        fprintf(stderr, "tracetool record: cannot summarise %s: %s\n", path, line);
        goto out;
    }
    for (i = 0; i < avg->ntraces; i++) {
        if (avg->traces[i].nrows) {
            summary_ops(path, &avg->traces[i]);
            shown++;
        }
    }
    for (i = 0; i < kern.nsummaries; i++) {
        if (kern.summaries[i].nrows) {
            summary_kernels(path, &kern.summaries[i]);
            shown++;
        }
    }
    if (!shown)
        fprintf(stderr, "tracetool record: %s: no events (no GPU work was recorded; CPU ops come"
                        " from the capture API, the heap from --memory)\n", path);
out:
    tt_avg_result_free(avg);
    tt_kern_result_free(&kern);
}

/* ---- what the capture library said ----
 * TT_CAPTURE_SAID names an empty file the injection libraries of every
 * process append to: "said LINE" when one writes a log line (a line said
 * once is not said again by another process: record points at "the lines
 * above" only when there are some), "empty PID NAME" when a process other
 * than the program recorded no event and wrote no trace. */

struct said {
    int lines;          /* 1: lines were written, 0: none, -1: unknown */
    size_t nempty;      /* processes that recorded nothing, no trace */
    char names[160];    /* their names, each once, comma-separated */
};

/* the file made and named in the environment: 0, or -1 (then unknown) */
static int said_open(char *path, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    int fd, n;
    unsetenv("TT_CAPTURE_SAID"); /* never a caller's stale one */
    n = snprintf(path, cap, "%s/tracetool-record.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= cap || (fd = mkstemp(path)) < 0) {
        path[0] = 0;
        return -1;
    }
    close(fd);
    if (setenv("TT_CAPTURE_SAID", path, 1) != 0) {
        unlink(path);
        path[0] = 0;
        return -1;
    }
    return 0;
}

/* a process name into s->names, once (cut with "..." when full) */
static void said_name(struct said *s, const char *name)
{
    size_t n = strlen(s->names), k = strlen(name);
    const char *p;
    if (n >= 3 && !strcmp(s->names + n - 3, "..."))
        return;
    for (p = s->names; (p = strstr(p, name)) != NULL; p += k)
        if ((p == s->names || p[-1] == ' ') && (p[k] == ',' || !p[k]))
            return;
    /* room kept for ", ..." */
    if (n + 2 + k + sizeof(", ...") > sizeof(s->names))
        snprintf(s->names + n, sizeof(s->names) - n, "%s...", n ? ", " : "");
    else
        snprintf(s->names + n, sizeof(s->names) - n, "%s%s", n ? ", " : "", name);
}

/* what the file says; the file goes */
static void said_close(const char *path, struct said *s)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    FILE *f;
    memset(s, 0, sizeof(*s));
    s->lines = -1;
    if (!path[0])
        return;
    if ((f = fopen(path, "r")) != NULL) {
        s->lines = 0;
        while ((n = getline(&line, &cap, f)) > 0) {
            char *name;
            if (line[n - 1] == '\n')
                line[n - 1] = 0;
            if (!strncmp(line, "said ", 5)) {
                s->lines = 1;
            } else if (!strncmp(line, "empty ", 6)) {
                s->nempty++;
                name = strchr(line + 6, ' ');
                said_name(s, name && name[1] ? name + 1 : "?");
            }
        }
        free(line);
        fclose(f);
    }
    unlink(path);
}

/* why no trace was written: what is known of it */
static const char *no_trace_why(const struct rec *r, int status, int said, double ran_s,
                                char *buf, size_t cap)
{
    if (WIFSIGNALED(status))
        return "the program was killed by a signal before exit()";
    if (r->range)
        return "no cudaProfilerStart/cudaProfilerStop range was recorded";
    if (said > 0)
        return "see the 'tracetool capture' lines above";
    if (r->delay && ran_s < strtod(r->delay, NULL)) {
        snprintf(buf, cap, "the program ended %.2f s after it started, before the --delay of %s s",
                 ran_s, r->delay);
        return buf;
    }
    if (said < 0)
        return "see any 'tracetool capture' lines above";
    return "the capture library said nothing: the program ended without exit() (_exit, exec),"
           " or ran a profile of its own";
}

static void report(const struct rec *r, const char *dir, const struct names *before, int status,
                   const struct said *said, double ran_s)
{
    char why[160];
    struct names after = { NULL, 0, 0 };
    char path[PATH_MAX + 256];
    const char **fresh;
    struct stat st;
    size_t i, nnew = 0;
    list_traces(dir, &after);
    fresh = malloc((after.n ? after.n : 1) * sizeof(*fresh));
    for (i = 0; fresh && i < after.n; i++) {
        if (!before->n || !bsearch(&after.v[i], before->v, before->n, sizeof(char *), cmp_str))
            fresh[nnew++] = after.v[i];
    }
    if (!nnew)
        fprintf(stderr, "tracetool record: no trace written to %s (%s)\n", r->out,
                no_trace_why(r, status, said->lines, ran_s, why, sizeof(why)));
    else
        fprintf(stderr, "tracetool record: %zu trace%s written to %s:\n", nnew,
                nnew > 1 ? "s" : "", r->out);
    for (i = 0; i < nnew; i++) {
        snprintf(path, sizeof(path), "%s/%s", r->out, fresh[i]);
        if (stat(path, &st) == 0)
            fprintf(stderr, "  %s (%.1f KiB)\n", path, (double)st.st_size / 1024);
    }
    if (said->nempty)
        fprintf(stderr, "tracetool record: %zu other process%s (%s) recorded no event: no trace"
                        " written for %s\n", said->nempty, said->nempty > 1 ? "es" : "",
                said->names, said->nempty > 1 ? "them" : "it");
    for (i = 0; r->summary && i < nnew && i < SUMMARY_TRACES; i++) {
        snprintf(path, sizeof(path), "%s/%s", r->out, fresh[i]);
        summarise(path);
    }
    if (r->summary && nnew > SUMMARY_TRACES)
        fprintf(stderr, "tracetool record: %zu more traces not summarised\n",
                nnew - SUMMARY_TRACES);
    free(fresh);
    names_free(&after);
}

int cmd_record(int argc, char **argv)
{
    struct rec r = { "tracetool-record", NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 1 };
    char inject[PATH_MAX], mlib[PATH_MAX + 64], dir[PATH_MAX], said_path[PATH_MAX], *slash;
    struct names before = { NULL, 0, 0 };
    int end = options_end(argc, argv), prog, rc, status = 0;
    struct said said;
    double t0;
    if (!cli_parse(&cmd, end, argv, set, &r))
        return 0;
    prog = end + (end < argc && !strcmp(argv[end], "--"));
    if (prog >= argc)
        cli_usage_error(&cmd, "need a program to run (tracetool record [options] -- PROG"
                              " [ARGS...])");
    if (find_inject(r.lib, inject, sizeof(inject)) < 0 || !preloadable(inject))
        return EXIT_IO;
    if (r.memory) {
        snprintf(mlib, sizeof(mlib), "%s", inject);
        slash = strrchr(mlib, '/');
        snprintf(slash + 1, sizeof(mlib) - (size_t)(slash + 1 - mlib), MALLOC_LIB);
        if (access(mlib, R_OK) != 0) {
            fprintf(stderr, "tracetool record: --memory: cannot read %s (built and installed"
                            " beside %s)\n", mlib, INJECT_LIB);
            return EXIT_IO;
        }
        if (!preloadable(mlib))
            return EXIT_IO;
    }
    if (mkdir_p(r.out) != 0 || !realpath(r.out, dir)) {
        fprintf(stderr, "tracetool record: %s: cannot make the directory: %s\n", r.out,
                strerror(errno));
        return EXIT_IO;
    }
    list_traces(dir, &before);
    if (set_env(&r, dir, inject, r.memory ? mlib : NULL) < 0) {
        fprintf(stderr, "tracetool record: cannot set the environment: %s\n", strerror(errno));
        names_free(&before);
        return EXIT_IO;
    }
    said_open(said_path, sizeof(said_path));
    t0 = cli_now();
    rc = run(argv + prog, &status);
    t0 = cli_now() - t0;
    said_close(said_path, &said);
    if (rc != 0) {
        names_free(&before);
        return rc;
    }
    report(&r, dir, &before, status, &said, t0);
    names_free(&before);
    return same_status(status);
}
