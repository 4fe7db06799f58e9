/*
 * tracetool/capture.h - record CPU scopes, steps and memory events inside a
 * running program and write them as a Kineto trace (what torch.profiler
 * writes: tracetool, HTA, Perfetto and chrome://tracing read it) and a
 * matching PyTorch Execution Trace.
 *
 * The library links only libc, pthreads and zlib. It never breaks the
 * program it profiles: no call aborts or exits, a failure is logged once
 * (tt_cap_config.log, stderr by default) and capture switches off, and the
 * program's own work always runs.
 *
 *     tt_cap_config c;
 *     tt_cap_config_default(&c);
 *     c.out_dir = "traces";            // <worker>.<time_ns>.pt.trace.json
 *     c.wait = 1, c.warmup = 1, c.active = 2;
 *     tt_cap_start(&c);
 *     for (int i = 0; i < 10; i++) {
 *         {
 *             TT_CAP_SCOPE("train_step");  // a cpu_op until the end of this block,
 *             work();                      // which closes before the step ends
 *         }
 *         tt_cap_step();                   // ProfilerStep#i ends, the schedule moves
 *     }
 *     tt_cap_stop();
 *
 * Hot path: a scope costs two clock reads and one append to a buffer of the
 * calling thread (no lock, no allocation but a new 64 KiB chunk now and
 * then); with no profile recording it costs one atomic load.
 *
 * Callbacks (on_trace_ready, log) run inside the control call that ended the
 * window or failed (tt_cap_start, tt_cap_step, tt_cap_stop, tt_cap_shutdown,
 * exit()), which holds the library's control lock; they may call it back, on
 * their own thread, and never deadlock:
 *   - tt_cap_get_stats, tt_cap_last_error, tt_cap_write_trace and
 *     tt_cap_trace_scopes work (scopes and memory events too; inside
 *     on_trace_ready they are not recorded);
 *   - tt_cap_stop returns TT_CAP_OK (TT_CAP_EOFF with no profile) and the
 *     profile stops when the callback returns, before the control call that
 *     ran it does (a window still recording is handed over then);
 *     tt_cap_shutdown is that stop, and nothing more;
 *   - tt_cap_step and tt_cap_start do nothing and return TT_CAP_ECALLBACK
 *     (tt_cap_profile_function runs its function unprofiled);
 *   - fork() works (the child records nothing).
 * A callback must not wait for another thread that makes a control call
 * (that thread waits for the lock the callback's thread holds). A signal
 * handler that interrupted a control call on its thread is answered the
 * same way.
 *
 * exit() from a signal handler, with threads (the handler's own too) inside
 * scopes: the program exits with its status. The window is written without
 * what a thread interrupted inside the library held (counted as dropped);
 * the wait for another thread is bounded (a few ms); when the handler
 * stopped its thread inside the library's own malloc, nothing is written
 * (as at a kill).
 */
#ifndef TRACETOOL_CAPTURE_H
#define TRACETOOL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TT_CAP_API __attribute__((visibility("default")))

typedef enum tt_cap_status {
    TT_CAP_OK = 0,
    TT_CAP_EBUSY = -1,   /* a profile is already running: this request is ignored (and counted) */
    TT_CAP_EINVAL = -2,  /* a bad configuration (negative schedule, bad regex, ...) */
    TT_CAP_ENOMEM = -3,
    TT_CAP_EIO = -4,     /* a file could not be written */
    TT_CAP_EOFF = -5,    /* no profile running, or capture switched off after a failure */
    TT_CAP_ECALLBACK = -6 /* called from inside on_trace_ready or log (see above): not done */
} tt_cap_status;

/* kinds of a scope: Kineto's categories */
enum { TT_CAP_CPU_OP = 0, TT_CAP_USER_ANNOTATION = 7 };

typedef struct tt_cap_trace tt_cap_trace; /* a finished window: valid inside on_trace_ready */
typedef void (*tt_cap_ready_fn)(const tt_cap_trace *t, void *user);
typedef void (*tt_cap_log_fn)(const char *line, void *user);

typedef struct tt_cap_config {
    /*
     * torch.profiler.schedule(skip_first, wait, warmup, active, repeat) over
     * the steps counted by tt_cap_step(); active == 0: no schedule (one
     * window from tt_cap_start to tt_cap_stop, no ProfilerStep annotations).
     */
    int skip_first, wait, warmup, active, repeat;
    /* called with each finished window; NULL: the tensorboard-style handler
     * writes <out_dir>/<worker_name>.<time_ns>.pt.trace.json[.gz] */
    tt_cap_ready_fn on_trace_ready;
    void *user;
    const char *out_dir;     /* default "." (made if missing) */
    /* default "<hostname>_<pid>"; a file name in out_dir: a name with a '/',
     * or "." or "..", is not used (a log line says so; the default is) */
    const char *worker_name;
    int use_gzip;            /* the handler writes .gz */
    int write_et;            /* the handler also writes <...>.pt.et.json[.gz] */
    int record_shapes;       /* keep the shapes given to tt_cap_scope_shapes */
    const char *name_filter; /* POSIX extended regex: scopes whose name does not match are not recorded */
    double max_duration_s;   /* a window stops recording after this long (0: no limit) */
    size_t max_bytes;        /* memory for events, all threads (0: 256 MiB); past it events are dropped and counted */
    tt_cap_log_fn log;       /* failures, one line each (NULL: stderr) */
    void *log_user;
    /* GPU activities recorded through CUPTI (TT_CAP_GPU_* bits; 0: none).
     * libcupti is loaded at run time; without it, a driver or a GPU, one log
     * line says so and the CPU capture goes on. */
    unsigned gpu;
} tt_cap_config;

enum {
    TT_CAP_GPU_KERNEL = 1, TT_CAP_GPU_MEMCPY = 2, TT_CAP_GPU_MEMSET = 4,
    TT_CAP_GPU_RUNTIME = 8, TT_CAP_GPU_DRIVER = 16,
    TT_CAP_GPU_MEMORY = 32, /* cudaMalloc / cudaFree as [memory] events */
    TT_CAP_GPU_ALL = 63
};

typedef struct tt_cap_stats {
    uint64_t scopes, mem_events; /* recorded in the windows so far */
    uint64_t dropped;            /* events past max_bytes or max_duration_s, or held by a
                                  * thread stopped inside the library when its window ended */
    uint64_t ignored_starts;     /* tt_cap_start while a profile ran */
    uint64_t traces;             /* windows handed to on_trace_ready */
    int gpu;                     /* GPU capture is on */
} tt_cap_stats;

TT_CAP_API void tt_cap_config_default(tt_cap_config *c);
/* Start the one profile of the process (TT_CAP_EBUSY when one runs). */
TT_CAP_API tt_cap_status tt_cap_start(const tt_cap_config *c);
/* End the current step (and its ProfilerStep#N annotation), move the schedule. */
TT_CAP_API tt_cap_status tt_cap_step(void);
/* Stop the profile; a window still recording is finished and handed over. */
TT_CAP_API tt_cap_status tt_cap_stop(void);
/* Write a finished window as a Kineto trace (".gz": gzip) to path, through
 * path.tmp renamed when complete; et_path (may be NULL): its Execution Trace. */
TT_CAP_API tt_cap_status tt_cap_write_trace(const tt_cap_trace *t, const char *path, const char *et_path);
/* the scopes of a window with a Record function id (what both files hold) */
TT_CAP_API size_t tt_cap_trace_scopes(const tt_cap_trace *t);
TT_CAP_API void tt_cap_get_stats(tt_cap_stats *s);
/* the last failure of the calling thread (each thread has its own, as
 * errno), or "" */
TT_CAP_API const char *tt_cap_last_error(void);
/* tt_cap_stop, then free everything; also run at exit(). Idempotent. */
TT_CAP_API void tt_cap_shutdown(void);

/* ---- scopes (record functions) ---- */

typedef struct tt_cap_srcloc {
    const char *name, *file; /* static storage; a NULL name is written "(null)" */
    uint32_t line;
    uint8_t kind; /* TT_CAP_CPU_OP or TT_CAP_USER_ANNOTATION */
} tt_cap_srcloc;

typedef struct tt_cap_scope {
    const tt_cap_srcloc *loc;
    uint64_t rf_id; /* 0: not recording */
    int64_t t0;
    unsigned gen;   /* the window it began in */
    int gpu;        /* its id was pushed to CUPTI */
} tt_cap_scope;

/* non-zero while a window records (read by the inline functions below) */
TT_CAP_API extern int tt_cap__recording;
TT_CAP_API tt_cap_scope tt_cap__scope_begin(const tt_cap_srcloc *loc);
TT_CAP_API void tt_cap__scope_end(tt_cap_scope *s);

/* Begin a scope: with nothing recording, one load and no call. */
static inline tt_cap_scope tt_cap_scope_begin(const tt_cap_srcloc *loc)
{
    if (__builtin_expect(!__atomic_load_n(&tt_cap__recording, __ATOMIC_RELAXED), 1)) {
        tt_cap_scope s = { loc, 0, 0, 0, 0 };
        return s;
    }
    return tt_cap__scope_begin(loc);
}

/* End it (a scope that recorded nothing costs a test). */
static inline void tt_cap_scope_end(tt_cap_scope *s)
{
    if (s->rf_id)
        tt_cap__scope_end(s);
}
/* Input shapes and types of an open scope: n inputs, input i has ndim[i]
 * dimensions dims[i][0..ndim[i]) and type dtypes[i] ("float", "Scalar"...;
 * NULL: none). Kept only with record_shapes. */
TT_CAP_API void tt_cap_scope_shapes(tt_cap_scope *s, int n, const int64_t *const *dims, const int *ndim,
                         const char *const *dtypes);

#define TT_CAP__CAT2(a, b) a##b
#define TT_CAP__CAT(a, b) TT_CAP__CAT2(a, b)
/* a scope from here to the end of the enclosing block (GCC/Clang cleanup) */
#define TT_CAP_SCOPE_KIND(name, kind)                                                          \
    static const tt_cap_srcloc TT_CAP__CAT(tt_cap_loc_, __LINE__) = { name, __FILE__,          \
                                                                       __LINE__, kind };       \
    __attribute__((cleanup(tt_cap_scope_end))) tt_cap_scope TT_CAP__CAT(tt_cap_sc_, __LINE__) = \
        tt_cap_scope_begin(&TT_CAP__CAT(tt_cap_loc_, __LINE__))
#define TT_CAP_SCOPE(name) TT_CAP_SCOPE_KIND(name, TT_CAP_CPU_OP)
#define TT_CAP_ANNOTATION(name) TT_CAP_SCOPE_KIND(name, TT_CAP_USER_ANNOTATION)

/* ---- memory ---- */

/* c10 device types */
enum { TT_CAP_DEV_CPU = 0, TT_CAP_DEV_CUDA = 1 };

/* An allocation (bytes > 0) or a free (bytes < 0) at ptr, with the
 * allocator's totals after it: a [memory] event on the calling thread.
 * For the CPU, dev_id is written as -1 (c10's index of the one CPU device). */
TT_CAP_API void tt_cap_mem_event(const void *ptr, int64_t bytes, int64_t total_allocated,
                      int64_t total_reserved, int dev_type, int dev_id);

/* ---- metrics (torchelastic's metrics API) and wrappers ---- */

/* a handler: gets every metric of its group */
typedef void (*tt_cap_metric_fn)(double unix_s, const char *group, const char *name, int64_t value,
                                 void *user);
/* handlers given here: null (the default), console ("[ts][group]: name=value"
 * on user, a FILE *, or stdout), JSON lines on user (a FILE *), and trace (a
 * counter event in the window being recorded, on the calling thread) */
TT_CAP_API void tt_cap_metric_null(double, const char *, const char *, int64_t, void *);
TT_CAP_API void tt_cap_metric_console(double, const char *, const char *, int64_t, void *);
TT_CAP_API void tt_cap_metric_jsonl(double, const char *, const char *, int64_t, void *);
TT_CAP_API void tt_cap_metric_trace(double, const char *, const char *, int64_t, void *);
/* the handler of a group (NULL: the default for groups without one); fn NULL: null */
TT_CAP_API tt_cap_status tt_cap_metrics_configure(const char *group, tt_cap_metric_fn fn, void *user);
/* a metric (group NULL: "torchelastic") */
TT_CAP_API void tt_cap_put_metric(const char *name, int64_t value, const char *group);
/* Run fn(arg) and return its result (0: success), with torchelastic's prof
 * metrics: <key>.success or <key>.failure = 1, and <key>.duration.ms */
TT_CAP_API int tt_cap_prof(const char *key, const char *group, int (*fn)(void *), void *arg);
/* Run fn(arg) under a profile of its own (configuration c) and return its
 * result whatever happens to capture: when a profile already runs (a nested
 * or concurrent call) or cannot start, fn runs unprofiled (counted in
 * tt_cap_stats.ignored_starts). */
TT_CAP_API int tt_cap_profile_function(const tt_cap_config *c, int (*fn)(void *), void *arg);

#ifdef __cplusplus
}
#endif

#endif
