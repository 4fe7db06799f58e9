/*
 * store/ingest_state.h - what the three parts of the ingest share:
 * ingest.c (the event sink and the transaction), ingest_write.c (rows
 * batched into SQLite on the calling thread), ingest_link.c (nesting,
 * runtime -> op links, in-stream and in the post passes) and ingest_pend.c
 * (GPU -> runtime links while streaming).
 * Internal.
 */
#ifndef TT_STORE_INGEST_STATE_H
#define TT_STORE_INGEST_STATE_H

#include <pthread.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/i64map.h"
#include "common/queue.h"
#include "common/strtab.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "formats/kineto.h"
#include "tracetool/formats.h"

/* ---- per-thread state ---- */

struct frame {
    int64_t id, ts, end;
    int64_t name; /* a cpu_op's name (string id; 0 elsewhere) */
};

/*
 * A thread's cpu_ops in start order (longest first on a tie), for the runtime
 * walk (link_runtime_event). The newest records stay in memory, sorted, in a
 * window of up to OPS_WIN records, so that an op written after ops it
 * starts before (a parent after its children: old profilers, and Kineto on
 * a tie) takes its place there; the older half of a full window goes to a
 * temporary file shared by all threads, a block at a time. Memory per
 * thread is at most OPS_WIN records (512 KB), and a window grows past
 * OPS_BLK only while all of them together stay under OPS_MEM.
 */
#define OPS_BLK 1024            /* records per block */
#define OPS_WIN (16 * OPS_BLK)  /* most records a window holds */
#define OPS_MEM (64u << 20)     /* bytes of windows over OPS_BLK, all threads */

struct opspool {
    struct frame *wbuf;   /* records nblk * OPS_BLK .. nrec - 1, sorted */
    size_t wcap;          /* records wbuf holds: grows (many threads with
                             few ops each cost little) */
    int64_t nrec;         /* records appended */
    int64_t moved;        /* records moved to make room for late ones */
    struct frame flushed_last; /* the last record written out */
    int64_t *boff, *bts;  /* per flushed block: file offset, first ts */
    size_t nblk, aoff, ats;
    struct frame *rbuf;   /* one flushed block read back */
    int64_t rblk;         /* which block rbuf holds, -1 when none */
    int64_t pos;          /* the walk's next record */
};

#define RUN_MAX 8 /* <= RB_KEEP */
struct thread {
    tt_id pid, tid; /* strings owned (strdup) */
    struct frame *stack;
    size_t n, alloc;
    int64_t last_ts, last_dur;
    int have_last;
    int disordered;
    /* the slices starting at last_ts (ids run_first + run_off[i]), in
     * nesting order, and the stack's height under them (ig_retie); run_n >
     * RUN_MAX: not to be re-nested. Small: a trace may have 10^5 threads */
    int64_t run_first;
    uint32_t run_base;
    uint8_t run_off[RUN_MAX], run_n;
    int64_t *bstack; /* ids of open 'B' slices */
    int64_t *bts;
    size_t nb, balloc, btsalloc;
    /* in-stream runtime -> cpu_op linking (see link_runtime_event) */
    struct opspool ops;    /* this thread's cpu_ops, in start order */
    int rt_started, rt_dirty, walking;
    int64_t last_rt_ts;
    int64_t max_op_dur;    /* longest cpu_op on this thread */
    int64_t max_rt_end;    /* latest end of a runtime call seen */
    int64_t walked;        /* ops pushed by the walk, re-reads included */
    struct frame *ostack;
    size_t on, oalloc;
};

/* a GPU activity held back until its runtime call arrives (kineto writes
 * the GPU record just before the runtime record it belongs to) */
#define PEND_MAX 4096
#define PEND_HASH 16384 /* power of two, > 2 * PEND_MAX */
struct pending {
    tt_event *ev; /* clone, NULL when the slot is free */
    int64_t cat, name;
    int flow;     /* FLOW_* folded into it (fold_flow) */
    size_t older, newer; /* ring index + 1 of the next of its correlation (0: none) */
};
struct rt_recent;
struct ig_fix;

/* ---- batched row writer ---- */

/*
 * Rows are buffered and written RB_K at a time with one multi-row INSERT
 * (1 GB trace: 6.5 s with one row per statement, 4.2 s with 16 rows, 4.0 s
 * with 128; then 3.75 s once unchanged bindings are left alone). Text is copied
 * into the buffer, so events can go away once their row is built. Anything
 * that reads a table back must ig_rb_flush() it first.
 */
#define RB_K 128
/* slice rows kept back from the writer, so that a run of slices starting
 * together can still be re-nested (ig_retie) */
#define RB_KEEP 8

enum { CELL_NULL = TT_CELL_NULL, CELL_INT = TT_CELL_INT, CELL_TEXT = TT_CELL_TEXT };

#define RB_MAXC TT_NC_GPU /* columns of the widest row */
#define RB_FITS_(ID, REC, TABLE) && (int)TT_NC_##REC <= (int)RB_MAXC
_Static_assert(1 TT_RECORDS(RB_FITS_), "RB_MAXC holds every record type");
#undef RB_FITS_

/*
 * A job for the writer: up to RB_K rows of one table, or one update. The
 * worker fills them and queues them; the calling thread binds and steps.
 */
enum { JOB_ROWS, JOB_END_B };

struct job {
    struct job *next;
    int kind;
    int table;          /* JOB_ROWS: enum row_id */
    int n;              /* rows filled */
    tt__cell *cells; /* (RB_K + RB_KEEP) * RB_MAXC: a full batch and the rows kept back */
    tt_buf text;        /* the text cells point into */
    int64_t dur, id;    /* JOB_END_B */
};

struct rowbuf {
    const char *table;       /* the record type's table and columns */
    const char *const *cols; /* (store/records.h) */
    int ncols;
    struct job *cur;   /* worker side: the rows being filled */
    /* writer side */
    sqlite3_stmt *st[RB_K + 1]; /* st[n] writes n rows, prepared on first use */
    /*
     * What st[RB_K] has bound now: bindings survive sqlite3_reset, so an
     * integer or NULL equal to the last one bound at the same place (trace
     * id, pid, category, the many NULL columns) is not bound again.
     */
    tt__cell *bound; /* RB_K * ncols */
    int nbound;
};

/*
 * The hand-off between the worker (reader + everything in this file up to
 * the rows) and the writer (SQLite, on the calling thread): two queues
 * (common/queue.h), filled jobs to the writer and written ones back. The
 * worker makes at most JOB_MAX jobs besides the row buffers' R_COUNT, so
 * memory stays bounded when SQLite is the slower side; JOBQ_CAP holds them
 * all, so no put blocks. A side sleeps until JOB_WAKE jobs are ready for it
 * (a wake per 128-row job costs more than the work). Never both: the worker
 * waits only once it made all JOB_MAX, holding R_COUNT + 1 at most (its row
 * buffers, a JOB_END_B update), so the queues and the writer hold the other
 * 63, more than the 2 x JOB_WAKE - 2 that two sleeping sides allow.
 */
#define JOB_MAX 64
#define JOB_WAKE 16
#define JOBQ_CAP (JOB_MAX + R_COUNT + 2)

struct jobq {
    tt__queue full;     /* filled jobs, in order, to the writer */
    tt__queue empty;    /* written jobs, back to the worker */
    int njobs;          /* worker: jobs it made (JOB_MAX at most) */
    struct job *spare;  /* one thread (no worker): jobs for reuse */
    int maxjobs;        /* 0: JOB_MAX; a file read ahead (ingest_jobs.c): more */
};

enum stmt_id { S_END_B, S_COUNT };


enum row_id { R_SLICE, R_RT, R_GPU, R_MEM, R_FLOW, R_INST, R_META, R_ET, R_MEMTL, R_STR,
              R_COUNT };
_Static_assert((int)R_SLICE == (int)TT_ROWS_SLICE && (int)R_RT == (int)TT_ROWS_RUNTIME &&
                   (int)R_GPU == (int)TT_ROWS_GPU && (int)R_MEM == (int)TT_ROWS_MEMORY &&
                   (int)R_STR == (int)TT_ROWS_STR,
               "ingest_rows.h tables follow enum row_id");

/*
 * The correlations of every runtime call so far, exactly: one bitmap per
 * chunk of 65536 ids (CUPTI numbers its calls densely, so a 20M-call trace
 * is a few hundred chunks, 8 KiB each), CALLSET_MAX chunks at most; past
 * that, an id of an untracked chunk answers "maybe" (ingest_pend.c).
 */
struct ig_callset {
    struct i64map idx;  /* chunk number -> index + 1 into chunk */
    uint64_t **chunk;
    size_t n, a;
    int64_t last_key;   /* the chunk of the last lookup (most are the same) */
    uint64_t *last;     /* NULL: none yet */
    int full;
};

struct ingest {
    tt_db *db;
    const tt_ingest_options *opts;
    tt_ingest_result *res;
    sqlite3_stmt *st[S_COUNT];
    struct rowbuf rbuf[R_COUNT];
    struct jobq q;
    int threaded;      /* rows go through q (else they are written at once) */
    const tt__rowsink *rowsink; /* rows to this instead of SQLite (tt__ingest_rows) */
    unsigned skip;              /* 1 << R_* the rowsink ignores */
    const tt__rowtap *tap;      /* rows also (or only) to this (ingest_rows.h) */
    struct frame link_op;       /* the op the last runtime call was linked to */
    int64_t link_rt_ts;         /* that call's start (TT_ROWS_NO_TS: none) */
    int64_t link_rt_name, link_rt_thr; /* its name (string id), thread (index; -1 none) */
    int64_t end_b_updates;      /* JOB_END_B jobs: slices closed after their row left */
    int64_t next_runtime_id;
    tt_strtab strs;
    int64_t trace_id;
    int64_t next_slice_id;
    tt_trace_format format;

    struct thread *threads;
    size_t nthreads, athreads;
    size_t last_thread;
    size_t *thash;     /* (pid, tid) -> index + 1, open addressing */
    size_t thash_cap;  /* a power of two, > 2 * nthreads */

    /* trace-level facts */
    tt_buf metadata; /* JSON object of top-level keys */
    tt_kineto_meta meta; /* baseTimeNanoseconds, schemaVersion, distributedInfo, ... */
    int64_t pid;         /* the profiled process: top-level "pid", else the CPU */
    int have_pid;        /* label, else the first op's */
    int64_t start_ns, end_ns;
    int have_span;
    int64_t rows;
    int64_t unmatched_end, no_phase, unclosed_b;
    int64_t first_unmatched_off, first_nophase_off;

    /* in-stream links */
    FILE *spool;                /* full opspool blocks of every thread */
    int64_t spool_end;
    size_t spool_mem;           /* bytes of windows over OPS_BLK records */
    struct pending *pend;       /* GPU events waiting for their runtime call */
    size_t npend, pend_head;    /* ring of PEND_MAX */
    int64_t *pend_slot;         /* hash: correlation -> ring index + 1 of the newest */
    struct rt_recent *rt_cache; /* recent runtime calls by correlation */
    struct ig_callset calls;    /* correlations of every runtime call (ingest_pend.c) */
    struct i64map unlinked;     /* correlations of GPU rows stored unlinked */
    int64_t unlinked_gpu;       /* GPU rows stored without their runtime link */
    int64_t gpu_late;           /* of which the merge join after the load may link */
    int any_rt_dirty;
    int stopped_for_db;         /* tt__ingest_rows stopped reading: needs_db */
    int64_t n_annot;            /* gpu_user_annotation rows */
    int64_t gpu_rows;           /* GPU rows built (the id of the last) */
    struct ig_fix *fix;         /* TT_ROWS_RELINK: the fix-ups (ingest_fix.c) */
    int fix_mode;               /* FIX_* */
    double timing_t0;           /* the last phase time logged (ingest.c) */
    /* a file read ahead of its turn (store/ingest_jobs.c): string ids from
     * its own table, slice and runtime ids from 1, trace id a placeholder;
     * the writer maps them to the database's as it writes (remap) */
    int local_ids;
    struct ig_remap *remap;     /* writer side: set once the file's turn came */
};

#define HAVE(bit) ((ev->have & (bit)) != 0)

/* tt__ingest_rows with TT_ROWS_RELINK: the first reading keeps what the SQL
 * passes read, the second applies what they would change (ingest_fix.c) */
enum { FIX_NONE, FIX_COLLECT, FIX_APPLY };

/* ---- row cells (inline: every event fills a score of them) ---- */

static inline tt__cell *rb_cell(struct rowbuf *rb, int col)
{
    return &rb->cur->cells[rb->cur->n * rb->ncols + col];
}

static inline void rb_null(struct rowbuf *rb, int col)
{
    rb_cell(rb, col)->type = CELL_NULL;
}

static inline void rb_int(struct rowbuf *rb, int col, int64_t v)
{
    tt__cell *c = rb_cell(rb, col);
    c->type = CELL_INT;
    c->i = v;
}

static inline void rb_opt(struct rowbuf *rb, int col, int have, int64_t v)
{
    if (have)
        rb_int(rb, col, v);
    else
        rb_null(rb, col);
}

static inline void rb_text(struct rowbuf *rb, int col, const char *s, size_t len)
{
    tt__cell *c = rb_cell(rb, col);
    if (!s) {
        c->type = CELL_NULL;
        return;
    }
    c->type = CELL_TEXT;
    c->i = (int64_t)rb->cur->text.len;
    c->len = len;
    tt_buf_add(&rb->cur->text, s, len);
}

static inline void rb_textz(struct rowbuf *rb, int col, const char *s)
{
    rb_text(rb, col, s, s ? strlen(s) : 0);
}

static inline void rb_id(struct rowbuf *rb, int col, const tt_id *id)
{
    if (!id->present)
        rb_null(rb, col);
    else if (id->is_str)
        rb_textz(rb, col, id->str);
    else
        rb_int(rb, col, id->num);
}

static inline int id_eq(const tt_id *a, const tt_id *b)
{
    if (a->present != b->present || a->is_str != b->is_str)
        return 0;
    if (!a->present)
        return 1;
    return a->is_str ? strcmp(a->str, b->str) == 0 : a->num == b->num;
}

/* ---- across the three files ---- */

/* the jobs a worker may make (the queues hold them all) */
static inline int ig_maxjobs(const struct jobq *q)
{
    return q->maxjobs ? q->maxjobs : JOB_MAX;
}

/* a file read with ids of its own, mapped as it is written (ingest_remap.c) */
struct ig_remap {
    int64_t trace_id, slice_base, rt_base;
    int64_t *smap; /* local string id -> the database's (0: unknown) */
    size_t nsmap, asmap;
    tt_strtab *strs; /* the writer's: every string of the database */
};
/* the ids of a job read ahead, to the database's */
int ig_remap_job(struct ingest *g, struct job *j);

/* store/ingest.c, for ingest_jobs.c: the parts of ingest_into */
struct ig_worker;
void ig_set_sink(tt_trace_sink *sink, struct ingest *g);
/* start the reader of path on its own thread (g->threaded); 0 or an error */
int ig_reader_start(struct ingest *g, struct ig_worker **out, const char *path,
                    const tt_trace_sink *sink, const tt_read_options *ropts,
                    tt_read_stats *stats);
/* writer: every job of the reader written, the reader joined; the first
 * error (the write's, else the read's) */
int ig_reader_drain(struct ingest *g, struct ig_worker *w);
/* the reader stopped (a failure before its turn): joined, its jobs freed */
void ig_reader_abort(struct ingest *g, struct ig_worker *w);
/* writer: after the rows, the SQL passes and the traces row */
int ig_finish(struct ingest *g, const char *path, const tt_read_stats *rs);
/* writer: the transaction's start: the traces row (g->trace_id), indexes,
 * statements; next ids from the database */
int ig_begin(struct ingest *g, const char *path);
void ig_release_statements(struct ingest *g);
void ig_release(struct ingest *g);
void ig_phase(const struct ingest *g, const char *what);
void ig_rollback(struct ingest *g, const char *path, int rc);
int64_t ig_next_id(tt_db *db, const char *table);
void ig_timing(struct ingest *g, const char *what);
double ig_now_s(void);

int ig_sqlerr(struct ingest *g, const char *what);
int ig_load_strings(struct ingest *g);
int ig_run_job(struct ingest *g, const struct job *j);
void ig_job_free_list(struct job *j);
struct job *ig_job_get(struct ingest *g);
int ig_job_put(struct ingest *g, struct job *j);
int ig_rb_flush(struct ingest *g, struct rowbuf *rb);
void ig_rb_release(struct rowbuf *rb);
int64_t ig_intern_z(struct ingest *g, const char *s);
void ig_bind_id(sqlite3_stmt *st, int i, const tt_id *id);
void ig_bind_opt(sqlite3_stmt *st, int i, int have, int64_t v);
void ig_bind_text(sqlite3_stmt *st, int i, const char *s, size_t len);
int ig_rb_commit(struct ingest *g, struct rowbuf *rb, const char *what);
int ig_rb_event_head(struct rowbuf *st, int c, const struct ingest *g, const char *ph, int64_t cat, int64_t name, const tt_event *ev);
int ig_flush_all(struct ingest *g);
struct thread *ig_thread_of(struct ingest *g, const tt_id *pid, const tt_id *tid);
void ig_threads_release(struct ingest *g);
int ig_nest(struct thread *t, int64_t id, int64_t ts, int64_t dur, int64_t *depth, int64_t *parent);
/* push [ts, end] of slice id on t's stack, without the order checks of
 * ig_nest: its depth and parent (ingest_nest.c) */
int ig_nest_push(struct thread *t, int64_t id, int64_t ts, int64_t end, int64_t *depth,
                 int64_t *parent);
/* a slice starting with the slices before it on t but longer than the last
 * (written shortest first on a tie): the run re-nested in place, its rows
 * still held back patched. 1 when that cannot be done (ig_nest instead) */
int ig_retie(struct ingest *g, struct thread *t, int64_t id, int64_t ts, int64_t dur,
             int64_t *depth, int64_t *parent);
int ig_spool_add(struct ingest *g, struct thread *t, int64_t id, int64_t ts, int64_t end,
                 int64_t name);
/* start loading the recent-call slot of a call's
 * correlation, so ig_pend_runtime finds them in cache */
void ig_pend_prefetch(const struct ingest *g, int64_t corr);
int ig_pend_runtime(struct ingest *g, int64_t corr, int64_t rid, int64_t op_id);
int ig_pend_flush(struct ingest *g, size_t keep);
int ig_pend_gpu(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name);
int64_t ig_pend_find(struct ingest *g, int64_t corr);
void ig_pend_release(struct ingest *g);
int64_t ig_link_runtime_event(struct ingest *g, struct thread *t, int64_t rts, int64_t rend);
int ig_renest_thread(struct ingest *g, const struct thread *t);
int ig_link_runtime(struct ingest *g, const struct thread *th);
int ig_link_runtime_gpu(struct ingest *g);
int ig_link_gpu(struct ingest *g);
int ig_insert_gpu(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name, int64_t runtime_id, int64_t op_id, int flow);
int ig_rbufs_init(struct ingest *g);
int ig_fix_new(struct ingest *g);
void ig_fix_free(struct ig_fix *f);
/* FIX_COLLECT: a slice, a runtime call (linked in the stream to op_id), a
 * 'B' closed after its row left; thr: the thread's index, -1 none */
int ig_fix_slice(struct ingest *g, int64_t thr, const tt_event *ev, int64_t id, int64_t name,
                 int is_op);
int ig_fix_runtime(struct ingest *g, int64_t thr, const tt_event *ev, int64_t rid,
                   int64_t op_id, int64_t name);
int ig_fix_end_b(struct ingest *g, int64_t id, int64_t dur);
/* what a GPU row's runtime call is (its start and name; its thread, for
 * tt__rowsink.gpu_launch: an index into g->threads of this reading, or,
 * with thr -1, the key the fix-ups computed in the first reading) */
struct ig_rtlink {
    int64_t ts, name, thr;
    int64_t has_key;
    tt__tkey key;
};
/* a GPU row: kept (FIX_COLLECT), or its links replaced (FIX_APPLY) */
int ig_fix_gpu(struct ingest *g, int64_t gid, const tt_event *ev, int xc, int64_t *runtime_id,
               int64_t *op_id, struct frame *op, struct ig_rtlink *rt);
/* after the first reading: the fix-ups, from what it kept */
int ig_fix_compute(struct ingest *g);
/* before the second: back to their start */
int ig_fix_start(struct ig_fix *f);
/* FIX_APPLY: a batch's slices and runtime calls fixed before it is handed over */
int ig_fix_rows(struct ingest *g, const struct job *j);
int ig_prepare_statements(struct ingest *g);

#endif
