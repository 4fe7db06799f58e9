/*
 * capture/src/capture_internal.h - what the parts of the capture library
 * share: the records in the per-thread chunks (buffer.c appends them on the
 * hot path, with the recording state), the thread registry, failures
 * (log.c), the profile (core.c), a
 * finished window (struct tt_cap_trace) and the writers (kineto_out.c,
 * et_out.c, gpu_out.c, metrics.c: their JSON through report/json.c; out.c:
 * the files). Internal.
 */
#ifndef TT_CAPTURE_INTERNAL_H
#define TT_CAPTURE_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, gettid, pthread names: first include of every file */
#endif

#include "tracetool/capture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* ---- records: appended to a thread's chunks, read by the writers ---- */

enum { REC_SCOPE = 1, REC_STEP = 2, REC_MEM = 3, REC_SHAPES = 4, REC_COUNTER = 5 };

struct rec_hdr {
    uint16_t type;
    uint16_t pad;
    uint32_t size; /* bytes of the record, header included, a multiple of 8 */
};

/* a scope (REC_SCOPE) or a ProfilerStep#step annotation (REC_STEP), written
 * at its end: children before their parents */
struct rec_scope {
    struct rec_hdr h;
    const tt_cap_srcloc *loc; /* REC_STEP: NULL */
    int64_t t0, t1;           /* CLOCK_MONOTONIC ns */
    uint64_t rf_id, parent_rf; /* parent_rf: the enclosing scope on the thread (0: none) */
    int64_t step;             /* REC_STEP: N */
};

/* the shapes of scope rf_id, written when given (before the scope's end):
 * n inputs, then per input int32 ndim, int32 dtype length, ndim int64 dims,
 * the dtype bytes (no NUL), padded to 8 */
struct rec_shapes {
    struct rec_hdr h;
    uint64_t rf_id;
    int32_t n;
    int32_t pad;
};

struct rec_mem {
    struct rec_hdr h;
    int64_t t;
    uint64_t addr;
    int64_t bytes, total_allocated, total_reserved;
    int32_t dev_type, dev_id;
};

/* a metric written into the trace (tt_cap_metric_trace): a counter event;
 * then the group and the name bytes (no NULs), padded to 8 */
struct rec_counter {
    struct rec_hdr h;
    int64_t t, value;
    uint32_t group_len, name_len;
};

#define CHUNK_BYTES (64 * 1024)

struct chunk {
    struct chunk *next;
    size_t used; /* bytes of data[] in use */
    _Alignas(8) unsigned char data[CHUNK_BYTES];
};

/* ---- threads ---- */

#define OPEN_MAX 128 /* open scopes a thread tracks for parents */

struct cap_thread {
    pid_t os_tid;
    uint32_t pt_id;       /* pthread_self()'s low 32 bits: CUPTI's threadId of its calls */
    uint32_t logical_tid; /* 1, 2, ... in order of first use (the ET's tid) */
    char name[16];        /* pthread name when it registered */
    atomic_int busy;      /* appending: the collector waits for 0 (a bounded wait) */
    atomic_uint nrec;     /* records in its chunks of window `gen` (written by the thread) */
    int in_lib;           /* re-entrancy guard */
    int dead;             /* the thread exited; freed once collected */
    struct chunk *head, *tail;
    uint64_t rf_next, rf_end; /* a block of record-function ids */
    uint64_t open[OPEN_MAX];
    int nopen;
    atomic_uint gen; /* the window its chunks belong to (written by the thread) */
    /* name filter verdicts by srcloc (direct-mapped) */
    const tt_cap_srcloc *fkey[64];
    signed char fval[64];
    unsigned fgen; /* the filter they were found with */
};

/* ---- a finished window ---- */

struct trace_thread {
    pid_t os_tid;
    uint32_t logical_tid;
    char name[16];
    struct chunk *head;
};

struct gpu_store;

struct tt_cap_trace {
    struct trace_thread *th;
    size_t nth;
    int64_t start_mono, end_mono;     /* the window */
    int64_t mono_to_unix;             /* add to a CLOCK_MONOTONIC ns for Unix ns */
    int record_shapes;
    uint64_t dropped, ignored_starts; /* written into the trace */
    int max_duration_hit;
    size_t nscopes;                   /* scope and step records */
    struct gpu_store *gpu;            /* the window's GPU records (NULL: no GPU capture) */
};

/* ---- cupti.c: GPU capture (capture/src/gpu.h has the records) ---- */

extern int tt_cap__gpu_active; /* scopes push their id as CUPTI's external correlation */
/* enable CUPTI for TT_CAP_GPU_* activities: 0, or -1 (said in one log line);
 * os_tid: the thread registry's OS tid of a pthread_self()'s low 32 bits */
int tt_cap__gpu_start(unsigned activities, pid_t (*os_tid)(uint32_t pt_id));
void tt_cap__gpu_push(uint64_t id, int kind);
void tt_cap__gpu_pop(int kind);
/* at a window's end: CUPTI's buffers flushed; the store to write, or NULL */
struct gpu_store *tt_cap__gpu_flush(void);
/* the window is written: its GPU records go */
void tt_cap__gpu_window_done(void);
void tt_cap__gpu_stop(void);
/* fn(1) after cudaProfilerStart, fn(0) before cudaProfilerStop: 0, or -1 (logged) */
TT_CAP_API int tt_cap__gpu_profiler_api(void (*fn)(int start)); /* libtracetool_inject uses it */
/* libtracetool_inject uses it (core.c): the default handler writes no window
 * without an event, and calls skipped() instead; NULL (the default): every
 * window is written */
TT_CAP_API void tt_cap__skip_empty(void (*skipped)(void));

/* ---- buffer.c: the hot path's state ---- */

extern atomic_uint tt_cap__gen;      /* the window being recorded */
extern atomic_ullong tt_cap__dropped;
extern atomic_size_t tt_cap__bytes;  /* bytes of chunks held, all threads */
extern size_t tt_cap__max_bytes;
extern int64_t tt_cap__deadline;     /* CLOCK_MONOTONIC ns when the window stops recording (0: none) */
extern int tt_cap__record_shapes;

extern int tt_cap__use_tsc; /* tt_cap__now() reads the invariant TSC */
/* set at exit (the atexit hook): the collector's waits for other threads and
 * the library's mutexes are given up after a few ms (exit() from a signal
 * handler may have stopped their holder) */
extern atomic_int tt_cap__exiting;
/* TT_CAPTURE_FAULT=alloc (tests): every allocation of chunks and outputs fails */
extern int tt_cap__fault_alloc;

/* The raw clock of the hot path: the TSC where it is invariant (a few ns),
 * else CLOCK_MONOTONIC ns. A window's times are made CLOCK_MONOTONIC ns when
 * it ends (core.c), from pairs of both clocks read then and at the start. */
static inline int64_t tt_cap__mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t tt_cap__now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (tt_cap__use_tsc)
        return (int64_t)__rdtsc();
#endif
    return tt_cap__mono();
}

int tt_cap__filter_set(const char *re);
void tt_cap__fence_init(void);
int tt_cap__name_ok(struct cap_thread *t, const tt_cap_srcloc *loc);

/* ---- log.c ---- */

void tt_cap__log_to(tt_cap_log_fn fn, void *user);
void tt_cap__log(const char *msg);
void tt_cap__log_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a failure: said through the log, and recording stops */
void tt_cap__fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tt_cap__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- buffer.c ---- */

/* the OS tid of the registered thread whose pthread_self() has these low
 * 32 bits (CUPTI's threadId of a runtime call), or 0 */
pid_t tt_cap__os_tid(uint32_t pt_id);
/* the calling thread is in malloc, free or regexec for the library (a
 * signal handler that interrupted it must not allocate) */
int tt_cap__in_alloc(void);
/* the calling thread (registered on first use), or NULL */
struct cap_thread *tt_cap__thread(void);
/* room for a record of `size` bytes in t's chunks (NULL: dropped, counted) */
void *tt_cap__reserve(struct cap_thread *t, size_t size);
uint64_t tt_cap__rf_id(struct cap_thread *t);
uint64_t tt_cap__step_open(unsigned *gen);
void tt_cap__step_close(int64_t step, int64_t t0, uint64_t rf, unsigned gen);
/* end recording and take every thread's chunks into tr (core.c holds the
 * control lock): 0, TT_CAP_ENOMEM, or TT_CAP_EBUSY (at exit: a thread held
 * the registry) */
int tt_cap__collect(struct tt_cap_trace *tr);
void tt_cap__trace_free(struct tt_cap_trace *tr);
/* drop every thread (at shutdown and in a forked child) */
void tt_cap__threads_reset(int free_them);
void tt_cap__pool_free(void);
void tt_cap__registry_lock(void);
void tt_cap__registry_unlock(void);
void tt_cap__registry_reinit(void);

/* ---- writers ---- */

/* what a scope whose tt_cap_srcloc has a NULL name is called */
#define TT_CAP_NULL_NAME "(null)"

struct out; /* out.c: a file written to path.tmp, plain or gzip */
struct tt_jw; /* report/json.h: the JSON writer (compiled into this library) */
struct out *tt_cap__out_open(const char *path);
/* bytes as they are (a document's last newline), and printf (the unit tests) */
int tt_cap__out_write(struct out *o, const void *p, size_t n);
int tt_cap__out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a JSON writer into o (handed on as it fills) */
void tt_cap__out_jw(struct out *o, struct tt_jw *w, unsigned flags); /* TT_JW_* */
/* tt_jw_finish: 0, or -1 with the capture library's error set (a write
 * failed, out of memory, or the writer was misused: a bug) */
int tt_cap__out_jw_end(struct tt_jw *w);
/* a JSON string, or a key, made valid UTF-8 first (each byte that is not
 * becomes U+FFFD), as the writer's next value or key */
void tt_cap__json_str(struct tt_jw *w, const char *s, size_t n);
void tt_cap__json_key(struct tt_jw *w, const char *s, size_t n);
/* that string alone into o: 0, or -1 (error set) */
int tt_cap__out_json_string(struct out *o, const char *s, size_t n);
/* "[d0, d1, ...]" from nd 8-byte integers at dims */
void tt_cap__json_dims(struct tt_jw *w, const unsigned char *dims, int32_t nd);
/* ns as Kineto's µs with 3 decimals (negative: 0.000) */
void tt_cap__json_us(struct tt_jw *w, int64_t rel_ns);
/* the process's name (/proc/self/comm; else "process PID") */
void tt_cap__process_name(char *buf, size_t n);
/* finish: rename to path (0), or remove the .tmp (error) */
int tt_cap__out_close(struct out *o, int ok);

/* kineto_out.c: the events gpu_out.c writes too, each a value where w is
 * (an open array), on a new line indented by 2 */
struct tt_cap_mem_ev {
    int64_t pid, tid, rel_ns;  /* rel_ns: from the trace's baseTimeNanoseconds */
    int64_t reserved, allocated, bytes;
    uint64_t addr;
    int64_t dev_id;
    int dev_type;
};
/* a "[memory]" instant; its "Ev Idx" is (*ev_idx)++ */
void tt_cap__kineto_memory(struct tt_jw *w, const struct tt_cap_mem_ev *m, int64_t *ev_idx);
/* a metadata row ("ph": "M") up to its args' key, whose value the caller
 * writes, then two tt_jw_end */
void tt_cap__kineto_meta(struct tt_jw *w, const char *name, int64_t rel_ns, int64_t pid,
                         int64_t tid, const char *arg);

int tt_cap__write_kineto(const struct tt_cap_trace *tr, const char *path);
int tt_cap__write_et(const struct tt_cap_trace *tr, const char *path);

/* iterate the records of a window thread */
const struct rec_hdr *tt_cap__rec_first(const struct trace_thread *th, const struct chunk **c,
                                        size_t *off);
const struct rec_hdr *tt_cap__rec_next(const struct chunk **c, size_t *off);
struct i64map;
int tt_cap__scopes(const struct trace_thread *th, const struct rec_scope ***out, size_t *n,
                   struct i64map *shapes, const struct rec_shapes ***shp);
const unsigned char *tt_cap__shape_next(const unsigned char *p, int32_t *nd,
                                        const unsigned char **dims, const char **dtype,
                                        int32_t *dl);

#endif
