/*
 * analyze/ingest.c - the ingest sink: trace events -> SQLite rows.
 *
 * One file is one transaction. Rows are written as the reader streams them;
 * memory holds only the string-intern table (distinct names), one stack of
 * open slices per thread, a bounded queue of row batches and the prepared
 * statements. Two threads share the work (read_threaded): a worker reads,
 * decodes, interns and links, and fills batches of rows; the calling thread
 * only binds and steps them into SQLite, in queue order. After the last event
 * the links are resolved in SQL over the indexed tables:
 *   - slice depth/parent: computed while streaming from a per-thread stack
 *     (Kineto writes CPU ops sorted by start per thread); threads whose
 *     events arrive out of order are recomputed from an ordered scan;
 *   - runtime call -> CPU op: the innermost cpu_op on the same pid/tid that
 *     encloses the call (FORMATS.md 1.9 rule 3, valid for every era);
 *   - GPU activity -> runtime call via `correlation`, and so -> CPU op;
 *     gpu_user_annotation -> user_annotation via `External id`.
 */
#include "common/compat.h"
#include "common/arena.h"
#include "common/buf.h"
#include "analyze/db_internal.h"
#include "analyze/ingest_rows.h"
#include "formats/json.h"
#include "formats/reader_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <unistd.h>
#include <time.h>

/* ---- string interning ---- */

struct strent {
    uint64_t hash;
    int64_t id;
    size_t off, len;
};

struct strtab {
    uint32_t *slots; /* entry index + 1, 0 = empty */
    size_t nslots;
    struct strent *ent;
    size_t n, alloc;
    tt_buf pool;
    int64_t next_id;
};

/*
 * String hash for the intern table: eight bytes per step (kernel names run to
 * hundreds of bytes, and every event's name and category pass through here).
 * Not FNV any more; the name stays for the call sites.
 */
static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL), w;
    while (n >= 8) {
        memcpy(&w, s, 8);
        h = (h ^ (w * 0xFF51AFD7ED558CCDULL)) * 0xC4CEB9FE1A85EC53ULL;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    if (n) {
        w = 0;
        memcpy(&w, s, n);
        h = (h ^ (w * 0xFF51AFD7ED558CCDULL)) * 0xC4CEB9FE1A85EC53ULL;
    }
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return h ? h : 1;
}

static int strtab_rehash(struct strtab *t)
{
    size_t ns = t->nslots ? t->nslots * 2 : 4096, i;
    uint32_t *slots = calloc(ns, sizeof(*slots));
    if (!slots)
        return TT_ENOMEM;
    for (i = 0; i < t->n; i++) {
        size_t j = t->ent[i].hash & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return 0;
}

/* Find s; returns the id or 0 when absent (then *slot is where it goes). */
static int64_t strtab_find(struct strtab *t, const char *s, size_t len,
                           uint64_t h, size_t *slot)
{
    size_t j = h & (t->nslots - 1);
    while (t->slots[j]) {
        struct strent *e = &t->ent[t->slots[j] - 1];
        if (e->hash == h && e->len == len &&
            memcmp(t->pool.buf + e->off, s, len) == 0)
            return e->id;
        j = (j + 1) & (t->nslots - 1);
    }
    *slot = j;
    return 0;
}

static int strtab_add(struct strtab *t, const char *s, size_t len, uint64_t h,
                      int64_t id)
{
    size_t slot = 0;
    if ((t->n + 1) * 2 > t->nslots && strtab_rehash(t) < 0)
        return TT_ENOMEM;
    if (strtab_find(t, s, len, h, &slot))
        return 0;
    if (TT_ALLOC_GROW(t->ent, t->n + 1, t->alloc) < 0)
        return TT_ENOMEM;
    t->ent[t->n].hash = h;
    t->ent[t->n].id = id;
    t->ent[t->n].off = t->pool.len;
    t->ent[t->n].len = len;
    if (tt_buf_add(&t->pool, s, len) < 0)
        return TT_ENOMEM;
    t->n++;
    t->slots[slot] = (uint32_t)t->n;
    if (id >= t->next_id)
        t->next_id = id + 1;
    return 0;
}

static void strtab_release(struct strtab *t)
{
    free(t->slots);
    free(t->ent);
    tt_buf_release(&t->pool);
    memset(t, 0, sizeof(*t));
}

/* ---- per-thread state ---- */

struct frame {
    int64_t id, ts, end;
};

/*
 * A thread's cpu_ops in arrival order, for the runtime walk
 * (link_runtime_event). Full blocks go to a temporary file shared by all
 * threads; the block being filled stays in memory. Memory per thread is at
 * most two blocks (48 KB), whatever the trace size.
 */
#define OPS_BLK 1024 /* records per block */

struct opspool {
    struct frame *wbuf;   /* records nflushed * OPS_BLK .. nrec - 1 */
    size_t wcap;          /* records wbuf holds: grows to OPS_BLK (many
                             threads with few ops each cost little) */
    int64_t nrec;         /* records appended */
    int64_t *boff, *bts;  /* per flushed block: file offset, first ts */
    size_t nblk, aoff, ats;
    struct frame *rbuf;   /* one flushed block read back */
    int64_t rblk;         /* which block rbuf holds, -1 when none */
    int64_t pos;          /* the walk's next record */
};

struct thread {
    tt_id pid, tid; /* strings owned (strdup) */
    struct frame *stack;
    size_t n, alloc;
    int64_t last_ts, last_dur;
    int have_last;
    int disordered;
    int64_t *bstack; /* ids of open 'B' slices */
    int64_t *bts;
    size_t nb, balloc, btsalloc;
    /* in-stream runtime -> cpu_op linking (see link_runtime_event) */
    struct opspool ops;    /* this thread's cpu_ops, in start order */
    int rt_started, rt_dirty, walking;
    int64_t last_rt_ts;
    int64_t max_op_dur;    /* longest cpu_op on this thread */
    int64_t max_rt_end;    /* latest end of a runtime call seen */
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
};

/* ---- batched row writer ---- */

/*
 * Rows are buffered and written RB_K at a time with one multi-row INSERT
 * (1 GB trace: 6.5 s with one row per statement, 4.2 s with 16 rows, 4.0 s
 * with 128; then 3.75 s once unchanged bindings are left alone). Text is copied
 * into the buffer, so events can go away once their row is built. Anything
 * that reads a table back must rb_flush() it first.
 */
#define RB_K 128

enum { CELL_NULL = TT_CELL_NULL, CELL_INT = TT_CELL_INT, CELL_TEXT = TT_CELL_TEXT };

#define RB_MAXC 27 /* columns of the widest row (gpu_ops) */

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
    tt__cell *cells; /* (RB_K + 1) * RB_MAXC: a full batch and the row kept back */
    tt_buf text;        /* the text cells point into */
    int64_t dur, id;    /* JOB_END_B */
};

struct rowbuf {
    const char *head;  /* "INSERT INTO t(a, b) VALUES " */
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
 * The queue between the worker (reader + everything in this file up to the
 * rows) and the writer (SQLite, on the calling thread). At most JOB_MAX jobs
 * exist, so memory stays bounded when SQLite is the slower side.
 */
#define JOB_MAX 64
#define JOB_WAKE 16 /* jobs queued (freed) that wake a sleeping writer (worker) */

struct jobq {
    pthread_mutex_t mu;
    pthread_cond_t cv_writer, cv_worker;
    struct job *head, *tail; /* queued, in order */
    struct job *free;        /* done, for reuse */
    int njobs;
    int nqueued;
    int nfree;               /* jobs freed while the worker waits */
    int writer_waits, worker_waits; /* wake a side only when it sleeps */
    int done;                /* the worker has queued its last job */
    int failed;              /* the writer failed: the worker stops */
};

enum stmt_id { S_END_B, S_COUNT };

static const char *const stmt_sql[S_COUNT] = {
    "UPDATE slices SET dur = ? WHERE id = ?",
};

/*
 * OR FAIL, not the default ABORT: an aborting multi-row INSERT must be able
 * to undo its own earlier rows, so SQLite copies every page it touches into
 * a statement journal first (measured: 1.9 bytes of temporary file written
 * per byte of trace). A failed INSERT fails the whole ingest, which rolls
 * the transaction back anyway.
 */
enum row_id { R_SLICE, R_RT, R_GPU, R_MEM, R_FLOW, R_INST, R_META, R_ET, R_MEMTL, R_STR,
              R_COUNT };
_Static_assert((int)R_SLICE == (int)TT_ROWS_SLICE && (int)R_RT == (int)TT_ROWS_RUNTIME &&
                   (int)R_GPU == (int)TT_ROWS_GPU && (int)R_MEM == (int)TT_ROWS_MEMORY &&
                   (int)R_STR == (int)TT_ROWS_STR,
               "ingest_rows.h tables follow enum row_id");

static const struct {
    const char *head;
    int ncols;
} row_sql[R_COUNT] = {
    { "INSERT OR FAIL INTO slices(id, trace_id, ph, cat, name, pid, tid, ts, dur, depth,"
      " parent_id, external_id, rf_id, seq_nr, fwd_tid, ev_idx, input_dims,"
      " input_types, args) VALUES ", 19 },
    { "INSERT OR FAIL INTO runtime(trace_id, cat, name, pid, tid, ts, dur, correlation,"
      " external_id, cbid, args, op_id, id, flow) VALUES ", 14 },
    { "INSERT OR FAIL INTO gpu_ops(trace_id, kind, cat, name, pid, tid, device, stream,"
      " context, ts, dur, correlation, external_id, grid_x, grid_y, grid_z,"
      " block_x, block_y, block_z, registers, shared_mem, bytes, copy_kind,"
      " args, runtime_id, op_id, flow) VALUES ", 27 },
    { "INSERT OR FAIL INTO memory(trace_id, ph, cat, name, pid, tid, ts, device_type,"
      " device_id, addr, bytes, total_allocated, total_reserved, ev_idx, args)"
      " VALUES ", 15 },
    { "INSERT OR FAIL INTO flow_events(trace_id, ph, cat, name, flow_id, pid, tid, ts, bp,"
      " args) VALUES ", 10 },
    { "INSERT OR FAIL INTO instants(trace_id, ph, cat, name, pid, tid, ts, dur, scope,"
      " event_id, args) VALUES ", 11 },
    { "INSERT OR FAIL INTO metadata_events(trace_id, ph, cat, name, pid, tid, ts, value,"
      " sort_index, args) VALUES ", 10 },
    { "INSERT OR FAIL INTO et_nodes(trace_id, node_id, name, parent, rf_id, fw_parent,"
      " seq_id, scope, tid, fw_tid, op_schema, inputs, input_shapes,"
      " input_types, input_strides, outputs, output_shapes, output_types,"
      " output_strides, attrs, extra) VALUES ", 21 },
    { "INSERT OR FAIL INTO memory_timeline(trace_id, ts, action, bytes, category) VALUES ", 5 },
    { "INSERT OR FAIL INTO strings(id, s) VALUES ", 2 },
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
    struct frame link_op;       /* the op the last runtime call was linked to */
    int64_t end_b_updates;      /* JOB_END_B jobs: slices closed after their row left */
    int64_t next_runtime_id;
    struct strtab strs;
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
    int64_t base_time_ns;
    int have_base;
    char *display_time_unit, *schema_version, *trace_name;
    int64_t rank, world_size, pid;
    int have_rank, have_world, have_pid;
    int64_t start_ns, end_ns;
    int have_span;
    int64_t rows;
    int64_t unmatched_end, no_phase, unclosed_b;
    int64_t first_unmatched_off, first_nophase_off;

    /* in-stream links */
    FILE *spool;                /* full opspool blocks of every thread */
    int64_t spool_end;
    struct pending *pend;       /* GPU events waiting for their runtime call */
    size_t npend, pend_head;    /* ring of PEND_MAX */
    int64_t *pend_slot;         /* hash: correlation -> ring index + 1 */
    int64_t unlinked_gpu;       /* GPU rows stored without their runtime link */
    int any_rt_dirty;
    int64_t n_annot;            /* gpu_user_annotation rows */
};

static int sqlerr(struct ingest *g, const char *what)
{
    return tt_db_error(g->db, what);
}

static int load_strings(struct ingest *g)
{
    sqlite3_stmt *st;
    int rc;
    if (tt_db_prepare(g->db, &st, "SELECT id, s FROM strings") < 0)
        return TT_EDB;
    if (strtab_rehash(&g->strs) < 0) {
        sqlite3_finalize(st);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    g->strs.next_id = 1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        if (strtab_add(&g->strs, s, len, fnv1a(s, len), sqlite3_column_int64(st, 0)) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sqlerr(g, "cannot read strings");
}

static tt__cell *rb_cell(struct rowbuf *rb, int col)
{
    return &rb->cur->cells[rb->cur->n * rb->ncols + col - 1];
}

static void rb_null(struct rowbuf *rb, int col)
{
    rb_cell(rb, col)->type = CELL_NULL;
}

static void rb_int(struct rowbuf *rb, int col, int64_t v)
{
    tt__cell *c = rb_cell(rb, col);
    c->type = CELL_INT;
    c->i = v;
}

static void rb_opt(struct rowbuf *rb, int col, int have, int64_t v)
{
    if (have)
        rb_int(rb, col, v);
    else
        rb_null(rb, col);
}

static void rb_text(struct rowbuf *rb, int col, const char *s, size_t len)
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

static void rb_textz(struct rowbuf *rb, int col, const char *s)
{
    rb_text(rb, col, s, s ? strlen(s) : 0);
}

static void rb_id(struct rowbuf *rb, int col, const tt_id *id)
{
    if (!id->present)
        rb_null(rb, col);
    else if (id->is_str)
        rb_textz(rb, col, id->str);
    else
        rb_int(rb, col, id->num);
}

static int rb_prepare(tt_db *db, struct rowbuf *rb, int n)
{
    tt_buf sql = TT_BUF_INIT;
    int r, c, rc;
    tt_buf_addstr(&sql, rb->head);
    for (r = 0; r < n; r++) {
        tt_buf_addstr(&sql, r ? ",(" : "(");
        for (c = 0; c < rb->ncols; c++)
            tt_buf_addstr(&sql, c ? ",?" : "?");
        tt_buf_addch(&sql, ')');
    }
    if (sql.oom) {
        tt_buf_release(&sql);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    rc = tt_db_prepare(db, &rb->st[n], sql.buf);
    tt_buf_release(&sql);
    return rc;
}

/* ---- the writer's side: one job into SQLite ---- */

static int write_rows(tt_db *db, struct rowbuf *rb, const struct job *j)
{
    sqlite3_stmt *st;
    int k, rc, total;
    if (j->n == 0)
        return 0;
    if (j->text.oom)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (!rb->st[j->n] && (rc = rb_prepare(db, rb, j->n)) < 0)
        return rc;
    st = rb->st[j->n];
    total = j->n * rb->ncols;
    if (j->n == RB_K) {
        /* text is always bound: it points into a buffer that is reused */
        int known = rb->nbound;
        for (k = 0; k < total; k++) {
            const tt__cell *c = &j->cells[k];
            tt__cell *b = &rb->bound[k];
            if (c->type == CELL_INT) {
                if (!known || b->type != CELL_INT || b->i != c->i)
                    sqlite3_bind_int64(st, k + 1, c->i);
            } else if (c->type == CELL_TEXT) {
                sqlite3_bind_text(st, k + 1, j->text.buf + c->i, (int)c->len, SQLITE_STATIC);
            } else if (!known || b->type != CELL_NULL) {
                sqlite3_bind_null(st, k + 1);
            }
            *b = *c;
        }
        rb->nbound = 1;
    } else {
        for (k = 0; k < total; k++) {
            const tt__cell *c = &j->cells[k];
            if (c->type == CELL_INT)
                sqlite3_bind_int64(st, k + 1, c->i);
            else if (c->type == CELL_TEXT)
                sqlite3_bind_text(st, k + 1, j->text.buf + c->i, (int)c->len, SQLITE_STATIC);
            else
                sqlite3_bind_null(st, k + 1);
        }
    }
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return tt_db_error(db, "cannot store rows");
    return 0;
}

static int run_job(struct ingest *g, const struct job *j)
{
    sqlite3_stmt *st;
    int rc;
    if (g->rowsink) {
        if (j->kind != JOB_ROWS || !j->n)
            return 0;
        if (j->text.oom)
            return tt_error_set(TT_ENOMEM, "out of memory");
        rc = g->rowsink->rows(g->rowsink->ctx, j->table, j->n, g->rbuf[j->table].ncols,
                              j->cells, j->text.buf);
        return rc < 0 ? rc : rc ? TT_ECANCELED : 0;
    }
    if (j->kind == JOB_ROWS)
        return write_rows(g->db, &g->rbuf[j->table], j);
    /* JOB_END_B: an 'E' closes a 'B' whose row is already written */
    st = g->st[S_END_B];
    sqlite3_bind_int64(st, 1, j->dur);
    sqlite3_bind_int64(st, 2, j->id);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : tt_db_error(g->db, "cannot close a slice");
}

static struct job *job_new(void)
{
    struct job *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->cells = malloc(sizeof(tt__cell) * (RB_K + 1) * RB_MAXC);
    if (!j->cells) {
        free(j);
        return NULL;
    }
    tt_buf_init(&j->text);
    return j;
}

static void job_free_list(struct job *j)
{
    while (j) {
        struct job *next = j->next;
        tt_buf_release(&j->text);
        free(j->cells);
        free(j);
        j = next;
    }
}

/* worker: an empty job, waiting for the writer to hand one back when all
 * JOB_MAX are in use; NULL when out of memory or the writer failed */
static struct job *job_get(struct ingest *g)
{
    struct jobq *q = &g->q;
    struct job *j = NULL;
    if (g->threaded) {
        pthread_mutex_lock(&q->mu);
        while (!q->free && q->njobs >= JOB_MAX && !q->failed) {
            q->worker_waits = 1;
            q->nfree = 0;
            pthread_cond_wait(&q->cv_worker, &q->mu);
            q->worker_waits = 0;
        }
        if (q->failed) {
            pthread_mutex_unlock(&q->mu);
            tt_error_set(TT_ECANCELED, "stopped: the database write failed");
            return NULL;
        }
        if (q->free) {
            j = q->free;
            q->free = j->next;
        } else {
            q->njobs++;
        }
        pthread_mutex_unlock(&q->mu);
    } else if (q->free) {
        j = q->free;
        q->free = j->next;
    }
    if (!j && !(j = job_new())) {
        if (g->threaded) {
            pthread_mutex_lock(&q->mu);
            q->njobs--;
            pthread_mutex_unlock(&q->mu);
        }
        tt_error_set(TT_ENOMEM, "out of memory");
        return NULL;
    }
    j->next = NULL;
    j->kind = JOB_ROWS;
    j->n = 0;
    tt_buf_reset(&j->text);
    return j;
}

/* worker: queue j for the writer (threaded), or run it now */
static int job_put(struct ingest *g, struct job *j)
{
    struct jobq *q = &g->q;
    int failed;
    if (!g->threaded) {
        int rc = run_job(g, j);
        j->next = q->free;
        q->free = j;
        return rc;
    }
    pthread_mutex_lock(&q->mu);
    failed = q->failed;
    if (failed) {
        j->next = q->free;
        q->free = j;
    } else {
        if (q->tail)
            q->tail->next = j;
        else
            q->head = j;
        q->tail = j;
        if (++q->nqueued >= JOB_WAKE && q->writer_waits)
            pthread_cond_signal(&q->cv_writer);
    }
    pthread_mutex_unlock(&q->mu);
    return failed ? tt_error_set(TT_ECANCELED, "stopped: the database write failed") : 0;
}

/*
 * Hand the rows of rb to the writer and start an empty job; with keep_last
 * the last row stays behind as the new job's first, so a flow that follows
 * its event can still be folded into it (fold_into_row) wherever the batch
 * boundaries fall. Anything that reads a table back (after the worker is
 * done) must rb_flush() it first.
 */
static int rb_flush_keep(struct ingest *g, struct rowbuf *rb, int keep_last)
{
    struct job *j = rb->cur, *fresh;
    if (j->n <= keep_last)
        return 0;
    if (j->text.oom)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (!(fresh = job_get(g)))
        return tt_error_last()->code ? tt_error_last()->code : TT_ENOMEM;
    if (keep_last) {
        tt__cell *from = &j->cells[(j->n - 1) * rb->ncols];
        int c;
        j->n--;
        for (c = 0; c < rb->ncols; c++) {
            fresh->cells[c] = from[c];
            if (from[c].type == CELL_TEXT) {
                fresh->cells[c].i = (int64_t)fresh->text.len;
                tt_buf_add(&fresh->text, j->text.buf + from[c].i, from[c].len);
            }
        }
        fresh->n = 1;
    }
    j->kind = JOB_ROWS;
    j->table = (int)(rb - g->rbuf);
    rb->cur = fresh;
    return job_put(g, j);
}

static int rb_flush(struct ingest *g, struct rowbuf *rb)
{
    return rb_flush_keep(g, rb, 0);
}

static void rb_release(struct rowbuf *rb)
{
    int i;
    for (i = 0; i <= RB_K; i++) {
        sqlite3_finalize(rb->st[i]);
        rb->st[i] = NULL;
    }
    job_free_list(rb->cur);
    rb->cur = NULL;
    free(rb->bound);
    rb->bound = NULL;
    rb->nbound = 0;
}

static int rb_commit(struct ingest *g, struct rowbuf *rb, const char *what);

static int64_t intern(struct ingest *g, const char *s, size_t len)
{
    uint64_t h = fnv1a(s, len);
    size_t slot = 0;
    int64_t id;
    int rc;
    struct rowbuf *st = &g->rbuf[R_STR];
    if (!g->strs.nslots && strtab_rehash(&g->strs) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    id = strtab_find(&g->strs, s, len, h, &slot);
    if (id)
        return id;
    id = g->strs.next_id ? g->strs.next_id : 1;
    if (strtab_add(&g->strs, s, len, h, id) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    rb_int(st, 1, id);
    rb_text(st, 2, s, len);
    if ((rc = rb_commit(g, st, "cannot store a string")) < 0)
        return rc;
    /* a consumer sees each string before the rows that use it */
    if (g->rowsink && (rc = rb_flush(g, st)) < 0)
        return rc;
    return id;
}

static int64_t intern_z(struct ingest *g, const char *s)
{
    return intern(g, s, strlen(s));
}

/* ---- binding helpers ---- */

static void bind_id(sqlite3_stmt *st, int i, const tt_id *id)
{
    if (!id->present)
        sqlite3_bind_null(st, i);
    else if (id->is_str)
        sqlite3_bind_text(st, i, id->str, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, i, id->num);
}

static void bind_opt(sqlite3_stmt *st, int i, int have, int64_t v)
{
    if (have)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s, size_t len)
{
    if (s)
        sqlite3_bind_text(st, i, s, (int)len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

#define HAVE(bit) ((ev->have & (bit)) != 0)

static int rb_commit(struct ingest *g, struct rowbuf *rb, const char *what)
{
    (void)what;
    g->rows++;
    if (++rb->cur->n == RB_K + 1)
        return rb_flush_keep(g, rb, 1);
    return 0;
}

/* The columns every event table starts with: trace_id, ph, cat, name, pid,
 * tid, ts, written from column c on; returns the next column. */
static int rb_event_head(struct rowbuf *st, int c, const struct ingest *g, const char *ph,
                         int64_t cat, int64_t name, const tt_event *ev)
{
    rb_int(st, c, g->trace_id);
    rb_text(st, c + 1, ph, 1);
    rb_opt(st, c + 2, cat != 0, cat);
    rb_int(st, c + 3, name);
    rb_id(st, c + 4, &ev->pid);
    rb_id(st, c + 5, &ev->tid);
    rb_opt(st, c + 6, ev->has_ts, ev->ts_ns);
    return c + 7;
}

static int flush_all(struct ingest *g)
{
    int i, rc;
    for (i = 0; i < R_COUNT; i++) {
        if ((rc = rb_flush(g, &g->rbuf[i])) < 0)
            return rc;
    }
    return 0;
}

/* ---- thread stacks ---- */

static int id_eq(const tt_id *a, const tt_id *b)
{
    if (a->present != b->present || a->is_str != b->is_str)
        return 0;
    if (!a->present)
        return 1;
    return a->is_str ? strcmp(a->str, b->str) == 0 : a->num == b->num;
}

static int id_copy(tt_id *dst, const tt_id *src)
{
    *dst = *src;
    if (src->present && src->is_str) {
        dst->str = strdup(src->str);
        if (!dst->str)
            return TT_ENOMEM;
    }
    return 0;
}

static uint64_t id_hash(const tt_id *id, uint64_t h)
{
    if (!id->present)
        return h * 31 + 1;
    if (id->is_str)
        return (h * 31 + 2) ^ fnv1a(id->str, strlen(id->str));
    return (h ^ (uint64_t)id->num) * 0x9E3779B97F4A7C15ULL + 3;
}

static size_t thread_slot(const struct ingest *g, const tt_id *pid, const tt_id *tid)
{
    uint64_t h = id_hash(tid, id_hash(pid, 0));
    size_t j = (size_t)(h ^ (h >> 29)) & (g->thash_cap - 1);
    while (g->thash[j]) {
        const struct thread *t = &g->threads[g->thash[j] - 1];
        if (id_eq(&t->pid, pid) && id_eq(&t->tid, tid))
            break;
        j = (j + 1) & (g->thash_cap - 1);
    }
    return j;
}

static int thash_grow(struct ingest *g)
{
    size_t cap = g->thash_cap ? g->thash_cap * 2 : 64, i;
    size_t *old = g->thash;
    if (!(g->thash = calloc(cap, sizeof(*g->thash)))) {
        g->thash = old;
        return TT_ENOMEM;
    }
    g->thash_cap = cap;
    for (i = 0; i < g->nthreads; i++)
        g->thash[thread_slot(g, &g->threads[i].pid, &g->threads[i].tid)] = i + 1;
    free(old);
    return 0;
}

/* The state of thread (pid, tid), made on first use; NULL when out of memory */
static struct thread *thread_of(struct ingest *g, const tt_id *pid, const tt_id *tid)
{
    size_t j;
    struct thread *t;
    if (g->nthreads && id_eq(&g->threads[g->last_thread].pid, pid) &&
        id_eq(&g->threads[g->last_thread].tid, tid))
        return &g->threads[g->last_thread];
    if (2 * (g->nthreads + 1) >= g->thash_cap && thash_grow(g) < 0)
        return NULL;
    j = thread_slot(g, pid, tid);
    if (g->thash[j]) {
        g->last_thread = g->thash[j] - 1;
        return &g->threads[g->last_thread];
    }
    if (TT_ALLOC_GROW(g->threads, g->nthreads + 1, g->athreads) < 0)
        return NULL;
    t = &g->threads[g->nthreads];
    memset(t, 0, sizeof(*t));
    if (id_copy(&t->pid, pid) < 0 || id_copy(&t->tid, tid) < 0)
        return NULL;
    g->thash[j] = g->nthreads + 1;
    g->last_thread = g->nthreads++;
    return t;
}

static void threads_release(struct ingest *g)
{
    size_t i;
    for (i = 0; i < g->nthreads; i++) {
        struct thread *t = &g->threads[i];
        if (t->pid.is_str)
            free((char *)t->pid.str);
        if (t->tid.is_str)
            free((char *)t->tid.str);
        free(t->stack);
        free(t->bstack);
        free(t->bts);
        free(t->ostack);
        free(t->ops.wbuf);
        free(t->ops.rbuf);
        free(t->ops.boff);
        free(t->ops.bts);
    }
    free(g->threads);
    free(g->thash);
    g->threads = NULL;
    g->thash = NULL;
    g->nthreads = g->athreads = g->thash_cap = 0;
}

/* Place a slice [ts, end] in its thread's nesting; sets depth and parent. */
static int nest(struct thread *t, int64_t id, int64_t ts, int64_t dur,
                int64_t *depth, int64_t *parent)
{
    int64_t end = ts + (dur > 0 ? dur : 0);
    if (t->have_last && (ts < t->last_ts || (ts == t->last_ts && dur > t->last_dur)))
        t->disordered = 1; /* fixed by an ordered pass at the end */
    t->have_last = 1;
    t->last_ts = ts;
    t->last_dur = dur;
    while (t->n && t->stack[t->n - 1].end < end)
        t->n--;
    *depth = (int64_t)t->n;
    *parent = t->n ? t->stack[t->n - 1].id : 0;
    if (TT_ALLOC_GROW(t->stack, t->n + 1, t->alloc) < 0)
        return TT_ENOMEM;
    t->stack[t->n].id = id;
    t->stack[t->n].ts = ts;
    t->stack[t->n].end = end;
    t->n++;
    return 0;
}

/* ---- classification ---- */

enum xclass { XC_SLICE = TT_XC_SLICE, XC_RUNTIME = TT_XC_RUNTIME,
              XC_KERNEL = TT_XC_KERNEL, XC_MEMCPY = TT_XC_MEMCPY,
              XC_MEMSET = TT_XC_MEMSET, XC_GPU_ANNOT = TT_XC_GPU_ANNOT,
              XC_SYNC = TT_XC_SYNC };

static enum xclass classify(const char *cat)
{
    if (!cat)
        return XC_SLICE;
    switch (cat[0]) {
    case 'k':
    case 'K':
        if (!strcmp(cat, "kernel") || !strcmp(cat, "Kernel"))
            return XC_KERNEL;
        break;
    case 'g':
        if (!strcmp(cat, "gpu_memcpy"))
            return XC_MEMCPY;
        if (!strcmp(cat, "gpu_memset"))
            return XC_MEMSET;
        if (!strcmp(cat, "gpu_user_annotation"))
            return XC_GPU_ANNOT;
        break;
    case 'M':
        if (!strcmp(cat, "Memcpy"))
            return XC_MEMCPY;
        if (!strcmp(cat, "Memset"))
            return XC_MEMSET;
        break;
    case 'c':
        if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver"))
            return XC_RUNTIME;
        if (!strcmp(cat, "cuda_sync"))
            return XC_SYNC;
        break;
    case 'R':
        if (!strcmp(cat, "Runtime"))
            return XC_RUNTIME;
        break;
    case 'x':
    case 'm':
    case 'p':
    case 'h':
        if (!strcmp(cat, "xpu_runtime") || !strcmp(cat, "xpu_driver") ||
            !strcmp(cat, "mtia_runtime") || !strcmp(cat, "privateuse1_runtime") ||
            !strcmp(cat, "privateuse1_driver") || !strcmp(cat, "hip_runtime"))
            return XC_RUNTIME;
        break;
    default:
        break;
    }
    return XC_SLICE;
}

int tt_classify_cat(const char *cat)
{
    return (int)classify(cat);
}

int tt_parse_i64_public(const char *text, size_t len, int64_t *out)
{
    return tt_parse_i64(text, len, out);
}

static const char *const xclass_kind[] = { "slice", "runtime", "kernel", "memcpy",
                                           "memset", "annotation", "sync" };

/* "Memcpy HtoD (Pageable -> Device)" -> "HtoD"; "Memset (Device)" -> "Device" */
static size_t copy_kind(const char *name, const char **start)
{
    const char *p = strchr(name, ' '), *e;
    if (!p || (strncmp(name, "Memcpy", 6) && strncmp(name, "Memset", 6)))
        return 0;
    p++;
    if (*p == '(')
        p++;
    e = p;
    while (*e && *e != ' ' && *e != ')')
        e++;
    *start = p;
    return (size_t)(e - p);
}

/* ---- event sink ---- */

static void span(struct ingest *g, const tt_event *ev)
{
    int64_t end;
    if (!ev->has_ts || ev->ph == 'M')
        return;
    end = ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (!g->have_span) {
        g->start_ns = ev->ts_ns;
        g->end_ns = end;
        g->have_span = 1;
        return;
    }
    if (ev->ts_ns < g->start_ns)
        g->start_ns = ev->ts_ns;
    if (end > g->end_ns)
        g->end_ns = end;
}

/* ---- the cpu_op spool (struct opspool) ---- */

static int spool_io_error(void)
{
    return tt_error_set(TT_EIO, "cannot use a temporary file: %s", strerror(errno));
}

/* Append op [ts, end] to t's spool; 1 if it breaks start order, else 0 */
static int spool_add(struct ingest *g, struct thread *t, int64_t id, int64_t ts,
                     int64_t end)
{
    struct opspool *sp = &t->ops;
    size_t k = (size_t)(sp->nrec % OPS_BLK);
    int unordered = 0;
    if (k >= sp->wcap) {
        size_t cap = sp->wcap ? sp->wcap * 4 : 16;
        struct frame *w;
        if (cap > OPS_BLK)
            cap = OPS_BLK;
        if (!(w = realloc(sp->wbuf, cap * sizeof(*w))))
            return tt_error_set(TT_ENOMEM, "out of memory");
        sp->wbuf = w;
        sp->wcap = cap;
    }
    if (sp->nrec) {
        const struct frame *last;
        if (k) {
            last = &sp->wbuf[k - 1];
        } else {
            /* the previous block was just written out; it is still in wbuf */
            last = &sp->wbuf[OPS_BLK - 1];
        }
        unordered = ts < last->ts || (ts == last->ts && end > last->end);
    }
    sp->wbuf[k].id = id;
    sp->wbuf[k].ts = ts;
    sp->wbuf[k].end = end;
    sp->nrec++;
    if (k == OPS_BLK - 1) {
        size_t bytes = OPS_BLK * sizeof(*sp->wbuf);
        if (!g->spool && !(g->spool = tmpfile()))
            return spool_io_error();
        if (TT_ALLOC_GROW(sp->boff, sp->nblk + 1, sp->aoff) < 0 ||
            TT_ALLOC_GROW(sp->bts, sp->nblk + 1, sp->ats) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
        if (pwrite(fileno(g->spool), sp->wbuf, bytes, (off_t)g->spool_end) !=
            (ssize_t)bytes)
            return spool_io_error();
        sp->boff[sp->nblk] = g->spool_end;
        sp->bts[sp->nblk] = sp->wbuf[0].ts;
        sp->nblk++;
        g->spool_end += (int64_t)bytes;
    }
    return unordered;
}

/* Record k of t's spool */
static int spool_get(struct ingest *g, struct opspool *sp, int64_t k,
                     struct frame *out)
{
    int64_t blk = k / OPS_BLK;
    if ((size_t)blk >= sp->nblk) {
        *out = sp->wbuf[k % OPS_BLK];
        return 0;
    }
    if (blk != sp->rblk || !sp->rbuf) {
        size_t bytes = OPS_BLK * sizeof(*sp->rbuf);
        if (!sp->rbuf && !(sp->rbuf = malloc(bytes)))
            return tt_error_set(TT_ENOMEM, "out of memory");
        if (pread(fileno(g->spool), sp->rbuf, bytes, (off_t)sp->boff[blk]) !=
            (ssize_t)bytes)
            return spool_io_error();
        sp->rblk = blk;
    }
    *out = sp->rbuf[k % OPS_BLK];
    return 0;
}

/* The first record of t's spool that starts at or after from (records are
 * in start order), or a negative error */
static int64_t spool_seek(struct ingest *g, struct opspool *sp, int64_t from)
{
    size_t lo = 0, hi = sp->nblk;
    int64_t k;
    struct frame f;
    /* the last flushed block whose first record starts before from */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->bts[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    k = lo ? (int64_t)(lo - 1) * OPS_BLK : 0;
    for (; k < sp->nrec; k++) {
        if (spool_get(g, sp, k, &f) < 0)
            return -1;
        if (f.ts >= from)
            break;
    }
    return k;
}

static int insert_slice(struct ingest *g, const tt_event *ev, int64_t cat,
                        int64_t name, const char *ph)
{
    struct rowbuf *st = &g->rbuf[R_SLICE];
    int64_t id = g->next_slice_id++, depth = 0, parent = 0;
    int nested = 0;
    struct thread *t = NULL;
    int is_op = ev->cat && (!strcmp(ev->cat, "cpu_op") || !strcmp(ev->cat, "Operator"));
    int rc;
    if (ev->has_ts) {
        t = thread_of(g, &ev->pid, &ev->tid);
        if (!t)
            return tt_error_set(TT_ENOMEM, "out of memory");
        if (is_op && !t->rt_dirty) {
            int64_t end = ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
            /*
             * The walk needs the ops in start order (longest first on a tie)
             * with their final extent, and none stored under a call already
             * linked. Otherwise the ordered pass at the end relinks the thread.
             */
            if (!ev->has_dur || (t->rt_started && ev->ts_ns <= t->max_rt_end)) {
                t->rt_dirty = g->any_rt_dirty = 1;
            } else if ((rc = spool_add(g, t, id, ev->ts_ns, end)) != 0) {
                if (rc < 0)
                    return rc;
                t->rt_dirty = g->any_rt_dirty = 1;
            }
        }
        if (is_op && ev->has_dur && ev->dur_ns > t->max_op_dur)
            t->max_op_dur = ev->dur_ns;
        if (nest(t, id, ev->ts_ns, ev->has_dur ? ev->dur_ns : 0, &depth, &parent) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
        nested = 1;
    }
    if (!g->have_pid && !ev->pid.is_str && ev->pid.present && is_op) {
        g->pid = ev->pid.num;
        g->have_pid = 1;
    }
    rb_int(st, 1, id);
    rb_event_head(st, 2, g, ph, cat, name, ev);
    rb_opt(st, 9, ev->has_dur, ev->dur_ns);
    rb_opt(st, 10, nested, depth);
    rb_opt(st, 11, nested && parent, parent);
    rb_opt(st, 12, HAVE(TT_A_EXTERNAL_ID), ev->external_id);
    rb_opt(st, 13, HAVE(TT_A_RF_ID), ev->rf_id);
    rb_opt(st, 14, HAVE(TT_A_SEQ_NR), ev->seq_nr);
    rb_opt(st, 15, HAVE(TT_A_FWD_TID), ev->fwd_tid);
    rb_opt(st, 16, HAVE(TT_A_EV_IDX), ev->ev_idx);
    if (ev->input_dims) {
        int64_t d = intern_z(g, ev->input_dims);
        if (d < 0)
            return (int)d;
        rb_int(st, 17, d);
    } else {
        rb_null(st, 17);
    }
    if (ev->input_types) {
        int64_t d = intern_z(g, ev->input_types);
        if (d < 0)
            return (int)d;
        rb_int(st, 18, d);
    } else {
        rb_null(st, 18);
    }
    rb_text(st, 19, ev->args, ev->args_len);
    if ((rc = rb_commit(g, st, "cannot store a slice")) < 0)
        return rc;
    if (ph[0] == 'B' && t) {
        if (TT_ALLOC_GROW(t->bstack, t->nb + 1, t->balloc) < 0 ||
            TT_ALLOC_GROW(t->bts, t->nb + 1, t->btsalloc) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
        t->bstack[t->nb] = id;
        t->bts[t->nb] = ev->ts_ns;
        t->nb++;
    }
    return 0;
}

static int end_slice(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name)
{
    struct thread *t = ev->has_ts ? thread_of(g, &ev->pid, &ev->tid) : NULL;
    if (t && t->nb) {
        int64_t dur = ev->ts_ns - t->bts[t->nb - 1];
        int64_t id = t->bstack[--t->nb];
        struct rowbuf *rb = &g->rbuf[R_SLICE];
        struct job *j = rb->cur;
        /* the 'B' row still waiting here (slice ids are consecutive)? */
        int64_t first = j->n ? j->cells[0].i : 0;
        if (j->n && id >= first && id - first < j->n &&
            j->cells[(id - first) * rb->ncols].i == id) {
            tt__cell *c = &j->cells[(id - first) * rb->ncols + 8]; /* dur */
            c->type = CELL_INT;
            c->i = dur;
        } else {
            struct job *u = job_get(g);
            int rc;
            if (!u)
                return tt_error_last()->code ? tt_error_last()->code : TT_ENOMEM;
            if ((rc = rb_flush(g, rb)) < 0) {
                job_free_list(u);
                return rc;
            }
            u->kind = JOB_END_B;
            u->dur = dur;
            u->id = id;
            g->end_b_updates++;
            if ((rc = job_put(g, u)) < 0)
                return rc;
        }
        /* fix the nesting entry pushed with dur 0 */
        if (t->n && t->stack[t->n - 1].id == id)
            t->stack[t->n - 1].end = ev->ts_ns;
        else
            t->disordered = 1;
        return 0;
    }
    /* an 'E' without its 'B': keep it as an instant and count it */
    if (g->unmatched_end++ == 0)
        g->first_unmatched_off = ev->offset;
    {
        struct rowbuf *si = &g->rbuf[R_INST];
        rb_event_head(si, 1, g, "E", cat, name, ev);
        rb_null(si, 8);
        rb_null(si, 9);
        rb_null(si, 10);
        rb_text(si, 11, ev->args, ev->args_len);
        return rb_commit(g, si, "cannot store an instant");
    }
}

static int insert_gpu(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name,
                      int64_t runtime_id, int64_t op_id, int flow)
{
    struct rowbuf *st = &g->rbuf[R_GPU];
    enum xclass xc = classify(ev->cat);
    const char *ck = NULL;
    size_t ckl = 0;
    if (g->rowsink && g->rowsink->kernel && op_id && op_id == g->link_op.id &&
        (xc == XC_KERNEL || xc == XC_MEMCPY || xc == XC_MEMSET) && ev->has_dur) {
        int rc = g->rowsink->kernel(g->rowsink->ctx, op_id, g->link_op.ts, g->link_op.end,
                                    ev->dur_ns);
        if (rc)
            return rc < 0 ? rc : TT_ECANCELED;
    }
    rb_int(st, 1, g->trace_id);
    rb_textz(st, 2, xclass_kind[xc]);
    rb_opt(st, 3, cat != 0, cat);
    rb_int(st, 4, name);
    rb_id(st, 5, &ev->pid);
    rb_id(st, 6, &ev->tid);
    /* device/stream from args, else pid/tid (GPU rows use device/stream) */
    if (HAVE(TT_A_DEVICE))
        rb_int(st, 7, ev->device);
    else if (ev->pid.present && !ev->pid.is_str)
        rb_int(st, 7, ev->pid.num);
    else
        rb_null(st, 7);
    if (HAVE(TT_A_STREAM))
        rb_int(st, 8, ev->stream);
    else if (ev->tid.present && !ev->tid.is_str)
        rb_int(st, 8, ev->tid.num);
    else
        rb_null(st, 8);
    rb_opt(st, 9, HAVE(TT_A_CONTEXT), ev->context);
    rb_opt(st, 10, ev->has_ts, ev->ts_ns);
    rb_opt(st, 11, ev->has_dur, ev->dur_ns);
    rb_opt(st, 12, HAVE(TT_A_CORRELATION), ev->correlation);
    rb_opt(st, 13, HAVE(TT_A_EXTERNAL_ID), ev->external_id);
    rb_opt(st, 14, HAVE(TT_A_GRID), ev->grid[0]);
    rb_opt(st, 15, HAVE(TT_A_GRID), ev->grid[1]);
    rb_opt(st, 16, HAVE(TT_A_GRID), ev->grid[2]);
    rb_opt(st, 17, HAVE(TT_A_BLOCK), ev->block[0]);
    rb_opt(st, 18, HAVE(TT_A_BLOCK), ev->block[1]);
    rb_opt(st, 19, HAVE(TT_A_BLOCK), ev->block[2]);
    rb_opt(st, 20, HAVE(TT_A_REGISTERS), ev->registers);
    rb_opt(st, 21, HAVE(TT_A_SHARED_MEM), ev->shared_mem);
    rb_opt(st, 22, HAVE(TT_A_BYTES), ev->bytes);
    if (xc == XC_MEMCPY || xc == XC_MEMSET)
        ckl = copy_kind(ev->name, &ck);
    rb_text(st, 23, ckl ? ck : NULL, ckl);
    rb_text(st, 24, ev->args, ev->args_len);
    rb_opt(st, 25, runtime_id != 0, runtime_id);
    rb_opt(st, 26, op_id != 0, op_id);
    rb_opt(st, 27, flow != 0, flow);
    if (!runtime_id && xc != XC_GPU_ANNOT && HAVE(TT_A_CORRELATION))
        g->unlinked_gpu++;
    return rb_commit(g, st, "cannot store a GPU activity");
}

/* ---- pending GPU activities, keyed by correlation ---- */

static size_t pend_hash(int64_t corr)
{
    uint64_t x = (uint64_t)corr * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 40) & (PEND_HASH - 1);
}

static void pend_unhash(struct ingest *g, size_t ring)
{
    /* linear probing with backward-shift deletion */
    size_t j = pend_hash(g->pend[ring].ev->correlation), k;
    while (g->pend_slot[j] != (int64_t)ring + 1)
        j = (j + 1) & (PEND_HASH - 1);
    g->pend_slot[j] = 0;
    k = (j + 1) & (PEND_HASH - 1);
    while (g->pend_slot[k]) {
        size_t r = (size_t)g->pend_slot[k] - 1;
        size_t h = pend_hash(g->pend[r].ev->correlation);
        /* move k back to j if h is not cyclically in (j, k] */
        if ((j < k) ? (h <= j || h > k) : (h <= j && h > k)) {
            g->pend_slot[j] = g->pend_slot[k];
            g->pend_slot[k] = 0;
            j = k;
        }
        k = (k + 1) & (PEND_HASH - 1);
    }
}

static int pend_emit(struct ingest *g, size_t ring, int64_t runtime_id, int64_t op_id)
{
    struct pending *p = &g->pend[ring];
    int rc;
    pend_unhash(g, ring);
    rc = insert_gpu(g, p->ev, p->cat, p->name, runtime_id, op_id, p->flow);
    free(p->ev);
    p->ev = NULL;
    g->npend--;
    return rc;
}

/* store the oldest pending activities until at most `keep` remain */
static int pend_flush(struct ingest *g, size_t keep)
{
    while (g->npend > keep) {
        size_t ring = g->pend_head;
        int rc;
        g->pend_head = (g->pend_head + 1) % PEND_MAX;
        if (!g->pend[ring].ev)
            continue;
        if ((rc = pend_emit(g, ring, 0, 0)) < 0)
            return rc;
    }
    if (g->npend == 0)
        g->pend_head = 0;
    return 0;
}

static int pend_gpu(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name)
{
    size_t ring, j;
    int rc;
    if (!g->pend) {
        g->pend = calloc(PEND_MAX, sizeof(*g->pend));
        g->pend_slot = calloc(PEND_HASH, sizeof(*g->pend_slot));
        if (!g->pend || !g->pend_slot)
            return tt_error_set(TT_ENOMEM, "out of memory");
    }
    if (g->npend == PEND_MAX && (rc = pend_flush(g, PEND_MAX - 1)) < 0)
        return rc;
    /* one pending activity per correlation: an older one is stored as is */
    j = pend_hash(ev->correlation);
    while (g->pend_slot[j]) {
        size_t r = (size_t)g->pend_slot[j] - 1;
        if (g->pend[r].ev->correlation == ev->correlation) {
            if ((rc = pend_emit(g, r, 0, 0)) < 0)
                return rc;
            j = pend_hash(ev->correlation);
            continue;
        }
        j = (j + 1) & (PEND_HASH - 1);
    }
    ring = (g->pend_head + g->npend) % PEND_MAX;
    while (g->pend[ring].ev) /* a hole left by pend_emit: skip over it */
        ring = (ring + 1) % PEND_MAX;
    g->pend[ring].ev = tt__event_clone(ev);
    if (!g->pend[ring].ev)
        return tt_error_set(TT_ENOMEM, "out of memory");
    g->pend[ring].cat = cat;
    g->pend[ring].name = name;
    g->pend[ring].flow = 0;
    g->pend_slot[j] = (int64_t)ring + 1;
    g->npend++;
    return 0;
}

static int64_t pend_find(struct ingest *g, int64_t corr)
{
    size_t j;
    if (!g->npend)
        return -1;
    j = pend_hash(corr);
    while (g->pend_slot[j]) {
        size_t r = (size_t)g->pend_slot[j] - 1;
        if (g->pend[r].ev->correlation == corr)
            return (int64_t)r;
        j = (j + 1) & (PEND_HASH - 1);
    }
    return -1;
}

static void pend_release(struct ingest *g)
{
    size_t i;
    if (g->pend) {
        for (i = 0; i < PEND_MAX; i++)
            free(g->pend[i].ev);
    }
    free(g->pend);
    free(g->pend_slot);
    g->pend = NULL;
    g->pend_slot = NULL;
    g->npend = 0;
}

/* ---- runtime calls, linked to their CPU op while streaming ---- */

/*
 * Kineto writes a thread's CPU ops (sorted by start) before its runtime
 * calls (also sorted). So when a thread's first runtime call arrives, its
 * ops are all stored: walk them with an index cursor in step with the calls
 * and keep the stack of open ops. If the order assumption breaks for a
 * thread (a call earlier than the previous one, or an op stored after the
 * walk began), the thread is marked dirty and relinked by the ordered pass
 * at the end.
 */
static int64_t link_runtime_event(struct ingest *g, struct thread *t, int64_t rts,
                                  int64_t rend)
{
    size_t i;
    struct frame op;
    if (t->rt_dirty)
        return 0;
    t->rt_started = 1; /* later ops that may enclose this call mark the thread dirty */
    if (rend > t->max_rt_end)
        t->max_rt_end = rend;
    if (!t->walking || rts < t->last_rt_ts) {
        /*
         * First call, or the calls went back in time (CUPTI buffers are
         * written in chunks). No op starting before rts - max_op_dur can
         * contain the call, so (re)start the walk there.
         */
        int64_t from = rts >= INT64_MIN + t->max_op_dur ? rts - t->max_op_dur : INT64_MIN;
        int64_t k;
        if ((k = spool_seek(g, &t->ops, from)) < 0)
            return -1;
        t->ops.pos = k;
        t->on = 0;
        t->walking = 1;
    }
    t->last_rt_ts = rts;
    while (t->ops.pos < t->ops.nrec) {
        if (spool_get(g, &t->ops, t->ops.pos, &op) < 0)
            return -1;
        if (op.ts > rts)
            break;
        while (t->on && t->ostack[t->on - 1].end < op.end)
            t->on--;
        if (TT_ALLOC_GROW(t->ostack, t->on + 1, t->oalloc) < 0)
            return tt_error_set(TT_ENOMEM, "out of memory");
        t->ostack[t->on++] = op;
        t->ops.pos++;
    }
    for (i = t->on; i > 0; i--) {
        if (t->ostack[i - 1].end >= rend) {
            g->link_op = t->ostack[i - 1];
            return t->ostack[i - 1].id;
        }
    }
    return 0;
}

static int insert_runtime(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name)
{
    struct rowbuf *st = &g->rbuf[R_RT];
    int64_t op_id = 0, rid, ring;
    int rc;
    if (ev->has_ts) {
        struct thread *t = thread_of(g, &ev->pid, &ev->tid);
        if (!t)
            return tt_error_set(TT_ENOMEM, "out of memory");
        op_id = link_runtime_event(g, t, ev->ts_ns,
                                   ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0));
        if (op_id < 0)
            return TT_EDB;
    }
    rb_int(st, 1, g->trace_id);
    rb_opt(st, 2, cat != 0, cat);
    rb_int(st, 3, name);
    rb_id(st, 4, &ev->pid);
    rb_id(st, 5, &ev->tid);
    rb_opt(st, 6, ev->has_ts, ev->ts_ns);
    rb_opt(st, 7, ev->has_dur, ev->dur_ns);
    rb_opt(st, 8, HAVE(TT_A_CORRELATION), ev->correlation);
    rb_opt(st, 9, HAVE(TT_A_EXTERNAL_ID), ev->external_id);
    rb_opt(st, 10, HAVE(TT_A_CBID), ev->cbid);
    rb_text(st, 11, ev->args, ev->args_len);
    rb_opt(st, 12, op_id != 0, op_id);
    rid = g->next_runtime_id++;
    rb_int(st, 13, rid);
    rb_null(st, 14); /* flow: set by fold_flow when the ac2g flow follows */
    if ((rc = rb_commit(g, st, "cannot store a runtime call")) < 0)
        return rc;
    if (op_id)
        g->res->linked_runtime++;
    if (!HAVE(TT_A_CORRELATION) || (ring = pend_find(g, ev->correlation)) < 0)
        return 0;
    g->res->linked_gpu++;
    return pend_emit(g, (size_t)ring, rid, op_id);
}

/* ---- ac2g flows folded into their rows (docs/SCHEMA.md, view flows) ---- */

static int cell_is_id(const struct rowbuf *rb, const tt__cell *c, const tt_id *id)
{
    if (!id->present)
        return c->type == CELL_NULL;
    if (id->is_str)
        return c->type == CELL_TEXT && strlen(id->str) == c->len &&
               !memcmp(rb->cur->text.buf + c->i, id->str, c->len);
    return c->type == CELL_INT && c->i == id->num;
}

static int cell_is_int(const tt__cell *c, int64_t v)
{
    return c->type == CELL_INT && c->i == v;
}

/* flow code of a row (column flow): what fold_flow folded into it */
enum { FLOW_NONE = 0, FLOW_S = 1, FLOW_F = 2 };

/* Mark the last row of rb with the flow when it is the flow's event: same
 * thread, time and correlation (cells: pid, tid, ts, correlation, flow). */
static int fold_into_row(struct rowbuf *rb, const int col[5], const tt_event *ev, int code)
{
    tt__cell *row;
    if (!rb->cur->n)
        return 0;
    row = &rb->cur->cells[(rb->cur->n - 1) * rb->ncols];
    if (!cell_is_id(rb, &row[col[0] - 1], &ev->pid) ||
        !cell_is_id(rb, &row[col[1] - 1], &ev->tid) || !cell_is_int(&row[col[2] - 1], ev->ts_ns) ||
        !cell_is_int(&row[col[3] - 1], ev->id.num) || row[col[4] - 1].type != CELL_NULL)
        return 0;
    row[col[4] - 1].type = CELL_INT;
    row[col[4] - 1].i = code;
    return 1;
}

/*
 * Kineto writes an ac2g flow right after the runtime call or GPU activity it
 * belongs to, repeating that event's thread and time, with the correlation as
 * its id (one per launch and per kernel: a quarter of a trace's events). Such
 * a flow sets the row's flow column instead of taking a row of its own; the
 * view flows gives it back. Returns 1 when folded, 0 when the flow must be
 * stored as it is.
 */
static int fold_flow(struct ingest *g, const tt_event *ev)
{
    static const int rt_cols[5] = { 4, 5, 6, 8, 14 };
    static const int gpu_cols[5] = { 5, 6, 10, 12, 27 };
    int64_t ring;
    int code;
    if (!ev->cat || strcmp(ev->cat, "ac2g") || !ev->name || strcmp(ev->name, "ac2g") ||
        ev->args || !ev->has_ts || !ev->id.present || ev->id.is_str)
        return 0;
    if (ev->ph == 's' && !ev->bp)
        code = FLOW_S;
    else if (ev->ph == 'f' && ev->bp && !strcmp(ev->bp, "e"))
        code = FLOW_F;
    else
        return 0;
    if (fold_into_row(&g->rbuf[R_RT], rt_cols, ev, code))
        return 1;
    if ((ring = pend_find(g, ev->id.num)) >= 0) {
        struct pending *p = &g->pend[ring];
        if (p->flow || !p->ev->has_ts || p->ev->ts_ns != ev->ts_ns ||
            !id_eq(&p->ev->pid, &ev->pid) || !id_eq(&p->ev->tid, &ev->tid))
            return 0;
        p->flow = code;
        return 1;
    }
    return fold_into_row(&g->rbuf[R_GPU], gpu_cols, ev, code);
}

static int on_event(void *ctx, const tt_event *ev)
{
    struct ingest *g = ctx;
    int64_t cat = 0, name;
    char ph1[2] = { ev->ph, 0 };
    struct rowbuf *st;

    if (!ev->ph) {
        if (g->no_phase++ == 0)
            g->first_nophase_off = ev->offset;
        return 0;
    }
    if (g->skip) {
        int t = ev->ph == 's' || ev->ph == 'f' || ev->ph == 't' ? R_FLOW
                : ev->ph == 'M'                                 ? R_META
                                                                : -1;
        if (t >= 0 && (g->skip & (1u << t)))
            return 0;
    }
    if (ev->cat && (cat = intern_z(g, ev->cat)) < 0)
        return (int)cat;
    if ((name = intern_z(g, ev->name)) < 0)
        return (int)name;
    span(g, ev);

    switch (ev->ph) {
    case 'X': { /* complete event: ts + dur */
        enum xclass xc = classify(ev->cat);
        if (xc == XC_SLICE)
            return insert_slice(g, ev, cat, name, "X");
        if (xc == XC_RUNTIME)
            return insert_runtime(g, ev, cat, name);
        if (xc != XC_GPU_ANNOT && HAVE(TT_A_CORRELATION))
            return pend_gpu(g, ev, cat, name);
        if (xc == XC_GPU_ANNOT)
            g->n_annot++;
        return insert_gpu(g, ev, cat, name, 0, 0, 0);
    }
    case 'B': /* begin of a duration slice; closed by the matching 'E' */
        return insert_slice(g, ev, cat, name, "B");
    case 'E':
        return end_slice(g, ev, cat, name);
    case 'i':
    case 'I': /* instant; "[memory]" and "[OutOfMemory]" are allocator events */
        if (!strcmp(ev->name, "[memory]") || !strcmp(ev->name, "[OutOfMemory]")) {
            st = &g->rbuf[R_MEM];
            rb_event_head(st, 1, g, ph1, cat, name, ev);
            rb_opt(st, 8, HAVE(TT_A_DEVICE_TYPE), ev->device_type);
            rb_opt(st, 9, HAVE(TT_A_DEVICE_ID), ev->device_id);
            rb_opt(st, 10, HAVE(TT_A_ADDR), ev->addr);
            rb_opt(st, 11, HAVE(TT_A_BYTES), ev->bytes);
            rb_opt(st, 12, HAVE(TT_A_TOTAL_ALLOC), ev->total_allocated);
            rb_opt(st, 13, HAVE(TT_A_TOTAL_RESERVED), ev->total_reserved);
            rb_opt(st, 14, HAVE(TT_A_EV_IDX), ev->ev_idx);
            rb_text(st, 15, ev->args, ev->args_len);
            return rb_commit(g, st, "cannot store a memory event");
        }
        break;
    case 's':
    case 'f':
    case 't': /* flow start / end / step */
        if (fold_flow(g, ev))
            return 0;
        st = &g->rbuf[R_FLOW];
        rb_int(st, 1, g->trace_id);
        rb_text(st, 2, ph1, 1);
        rb_opt(st, 3, cat != 0, cat);
        rb_int(st, 4, name);
        rb_id(st, 5, &ev->id);
        rb_id(st, 6, &ev->pid);
        rb_id(st, 7, &ev->tid);
        rb_opt(st, 8, ev->has_ts, ev->ts_ns);
        rb_text(st, 9, ev->bp, ev->bp ? strlen(ev->bp) : 0);
        rb_text(st, 10, ev->args, ev->args_len);
        return rb_commit(g, st, "cannot store a flow event");
    case 'M': /* metadata: process/thread names, labels, sort indexes */
        st = &g->rbuf[R_META];
        rb_event_head(st, 1, g, ph1, cat, name, ev);
        if (ev->arg_name)
            rb_textz(st, 8, ev->arg_name);
        else if (ev->arg_labels)
            rb_textz(st, 8, ev->arg_labels);
        else
            rb_null(st, 8);
        rb_opt(st, 9, HAVE(TT_A_SORT_INDEX), ev->sort_index);
        rb_text(st, 10, ev->args, ev->args_len);
        if (ev->arg_labels && !strcmp(ev->arg_labels, "CPU") && !ev->pid.is_str &&
            ev->pid.present) {
            g->pid = ev->pid.num;
            g->have_pid = 1;
        }
        return rb_commit(g, st, "cannot store a metadata event");
    default:
        break;
    }
    /* everything else (counters 'C', async 'b'/'e'/'n', other instants) */
    st = &g->rbuf[R_INST];
    rb_event_head(st, 1, g, ph1, cat, name, ev);
    rb_opt(st, 8, ev->has_dur, ev->dur_ns);
    rb_text(st, 9, ev->s, ev->s ? strlen(ev->s) : 0);
    rb_id(st, 10, &ev->id);
    rb_text(st, 11, ev->args, ev->args_len);
    return rb_commit(g, st, "cannot store an instant event");
}

static int on_et_node(void *ctx, const tt_et_node *n)
{
    struct ingest *g = ctx;
    struct rowbuf *st = &g->rbuf[R_ET];
    int64_t name = intern_z(g, n->name), schema = 0;
    if (name < 0)
        return (int)name;
    if (n->op_schema && (schema = intern_z(g, n->op_schema)) < 0)
        return (int)schema;
    rb_int(st, 1, g->trace_id);
    rb_int(st, 2, n->id);
    rb_int(st, 3, name);
    rb_opt(st, 4, n->has_parent, n->parent);
    rb_opt(st, 5, n->have & TT_ET_RF_ID, n->rf_id);
    rb_opt(st, 6, n->have & TT_ET_FW_PARENT, n->fw_parent);
    rb_opt(st, 7, n->have & TT_ET_SEQ_ID, n->seq_id);
    rb_opt(st, 8, n->have & TT_ET_SCOPE, n->scope);
    rb_opt(st, 9, n->have & TT_ET_TID, n->tid);
    rb_opt(st, 10, n->have & TT_ET_FW_TID, n->fw_tid);
    rb_opt(st, 11, n->op_schema != NULL, schema);
    rb_text(st, 12, n->inputs, n->inputs ? strlen(n->inputs) : 0);
    rb_text(st, 13, n->input_shapes, n->input_shapes ? strlen(n->input_shapes) : 0);
    rb_text(st, 14, n->input_types, n->input_types ? strlen(n->input_types) : 0);
    rb_text(st, 15, n->input_strides, n->input_strides ? strlen(n->input_strides) : 0);
    rb_text(st, 16, n->outputs, n->outputs ? strlen(n->outputs) : 0);
    rb_text(st, 17, n->output_shapes, n->output_shapes ? strlen(n->output_shapes) : 0);
    rb_text(st, 18, n->output_types, n->output_types ? strlen(n->output_types) : 0);
    rb_text(st, 19, n->output_strides, n->output_strides ? strlen(n->output_strides) : 0);
    rb_text(st, 20, n->attrs, n->attrs ? strlen(n->attrs) : 0);
    rb_text(st, 21, n->extra, n->extra ? strlen(n->extra) : 0);
    return rb_commit(g, st, "cannot store an execution-trace node");
}

static int on_memrow(void *ctx, const tt_memrow *m)
{
    struct ingest *g = ctx;
    struct rowbuf *st = &g->rbuf[R_MEMTL];
    rb_int(st, 1, g->trace_id);
    rb_int(st, 2, m->ts);
    rb_int(st, 3, m->action);
    rb_int(st, 4, m->bytes);
    rb_opt(st, 5, m->has_category, m->category);
    if (!g->have_span) {
        g->start_ns = g->end_ns = m->ts;
        g->have_span = 1;
    } else {
        if (m->ts < g->start_ns)
            g->start_ns = m->ts;
        if (m->ts > g->end_ns)
            g->end_ns = m->ts;
    }
    return rb_commit(g, st, "cannot store a memory-timeline row");
}

static int on_format(void *ctx, tt_trace_format f)
{
    struct ingest *g = ctx;
    g->format = f;
    return 0;
}

/* top-level keys: keep all of them, and read the few we use */
static int on_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct ingest *g = ctx;
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    enum tt_jtype t;

    if (g->metadata.len > 1)
        tt_buf_addch(&g->metadata, ',');
    tt_buf_add_json_string(&g->metadata, key, strlen(key));
    tt_buf_addch(&g->metadata, ':');
    tt_buf_add(&g->metadata, json, len);
    if (g->metadata.oom)
        return tt_error_set(TT_ENOMEM, "out of memory");

    tt_jp_init(&jp, "", json, 0, json, len);
    t = tt_jp_peek(&jp);
    if (!strcmp(key, "baseTimeNanoseconds") && t == TT_JT_NUMBER) {
        tt_jnum n;
        if (tt_jp_number(&jp, &n) == 0 && n.fits) {
            g->base_time_ns = n.i;
            g->have_base = 1;
        }
    } else if ((!strcmp(key, "schemaVersion") || !strcmp(key, "schema"))) {
        const char *s;
        size_t l;
        free(g->schema_version);
        if (t == TT_JT_STRING && tt_jp_string(&jp, &a, &s, &l) == 0)
            g->schema_version = strdup(s);
        else
            g->schema_version = strndup(json, len);
    } else if (!strcmp(key, "displayTimeUnit") || !strcmp(key, "traceName")) {
        const char *s;
        size_t l;
        char **dst = key[0] == 'd' ? &g->display_time_unit : &g->trace_name;
        if (t == TT_JT_STRING && tt_jp_string(&jp, &a, &s, &l) == 0) {
            free(*dst);
            *dst = strdup(s);
        }
    } else if (!strcmp(key, "pid") && t == TT_JT_NUMBER) {
        tt_jnum n;
        if (tt_jp_number(&jp, &n) == 0 && n.fits) {
            g->pid = n.i;
            g->have_pid = 1;
        }
    } else if (!strcmp(key, "distributedInfo") && t == TT_JT_OBJECT) {
        const char *k;
        size_t kl;
        if (tt_jp_object_begin(&jp) == 0) {
            while (tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
                int isrank = kl == 4 && !memcmp(k, "rank", 4);
                int isws = kl == 10 && !memcmp(k, "world_size", 10);
                if ((isrank || isws) && tt_jp_peek(&jp) == TT_JT_NUMBER) {
                    tt_jnum n;
                    if (tt_jp_number(&jp, &n) == 0 && n.fits) {
                        if (isrank) {
                            g->rank = n.i;
                            g->have_rank = 1;
                        } else {
                            g->world_size = n.i;
                            g->have_world = 1;
                        }
                    }
                    continue;
                }
                if (tt_jp_skip(&jp) < 0)
                    break;
            }
        }
    }
    tt_arena_release(&a);
    return 0;
}

/* rank from a file name: "rank-70", "rank_3", "rank3", "worker5_..." */
int tt_rank_from_name(const char *path, int64_t *rank)
{
    const char *base = strrchr(path, '/');
    const char *pats[] = { "rank", "worker" };
    size_t i;
    base = base ? base + 1 : path;
    for (i = 0; i < TT_ARRAY_SIZE(pats); i++) {
        const char *p = base;
        while ((p = strstr(p, pats[i])) != NULL) {
            const char *q = p + strlen(pats[i]);
            if (*q == '-' || *q == '_')
                q++;
            if (isdigit((unsigned char)*q)) {
                int64_t v = 0;
                while (isdigit((unsigned char)*q) && v < 1000000000)
                    v = v * 10 + (*q++ - '0');
                *rank = v;
                return 1;
            }
            p++;
        }
    }
    return 0;
}

/* ---- post passes ---- */

static int value_eq(sqlite3_value *a, sqlite3_value *b)
{
    int ta, tb;
    if (!a || !b)
        return 0;
    ta = sqlite3_value_type(a);
    tb = sqlite3_value_type(b);
    if (ta != tb)
        return 0;
    if (ta == SQLITE_NULL)
        return 1;
    if (ta == SQLITE_INTEGER)
        return sqlite3_value_int64(a) == sqlite3_value_int64(b);
    return sqlite3_value_bytes(a) == sqlite3_value_bytes(b) &&
           memcmp(sqlite3_value_text(a), sqlite3_value_text(b),
                  (size_t)sqlite3_value_bytes(a)) == 0;
}

/* Recompute depth/parent of one thread from an ordered scan. */
static int renest_thread(struct ingest *g, const struct thread *t)
{
    sqlite3_stmt *sel = NULL, *upd = NULL;
    struct thread tmp;
    int rc = 0, s;
    memset(&tmp, 0, sizeof(tmp));
    if (tt_db_prepare(g->db, &sel,
                      "SELECT id, ts, coalesce(dur, 0) FROM slices WHERE trace_id = ?1"
                      " AND pid IS ?2 AND tid IS ?3 AND ts IS NOT NULL"
                      " ORDER BY ts, dur DESC, id") < 0 ||
        tt_db_prepare(g->db, &upd,
                      "UPDATE slices SET depth = ?1, parent_id = ?2 WHERE id = ?3") < 0) {
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(sel, 1, g->trace_id);
    bind_id(sel, 2, &t->pid);
    bind_id(sel, 3, &t->tid);
    while ((s = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(sel, 0), depth, parent;
        if (nest(&tmp, id, sqlite3_column_int64(sel, 1), sqlite3_column_int64(sel, 2),
                 &depth, &parent) < 0) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            goto out;
        }
        sqlite3_bind_int64(upd, 1, depth);
        bind_opt(upd, 2, parent != 0, parent);
        sqlite3_bind_int64(upd, 3, id);
        if (sqlite3_step(upd) != SQLITE_DONE) {
            rc = sqlerr(g, "cannot update slice nesting");
            goto out;
        }
        sqlite3_reset(upd);
    }
    if (s != SQLITE_DONE)
        rc = sqlerr(g, "cannot read slices");
out:
    free(tmp.stack);
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    return rc;
}

/* runtime call -> innermost enclosing cpu_op on the same thread, for one
 * thread whose in-stream link could not be trusted */
static int link_runtime(struct ingest *g, const struct thread *th)
{
    sqlite3_stmt *rt = NULL, *ops = NULL, *upd = NULL;
    sqlite3_value *cur_pid = NULL, *cur_tid = NULL;
    struct frame *stack = NULL;
    size_t n = 0, alloc = 0;
    int rc = 0, s, ops_row = 0;
    int64_t op_id = 0, op_ts = 0, op_end = 0;
    int64_t cpu_op = 0, op_legacy = 0;
    size_t slot = 0;
    uint64_t h;

    h = fnv1a("cpu_op", 6);
    cpu_op = strtab_find(&g->strs, "cpu_op", 6, h, &slot);
    h = fnv1a("Operator", 8);
    op_legacy = strtab_find(&g->strs, "Operator", 8, h, &slot);
    if (!cpu_op && !op_legacy)
        return 0;

    if (tt_db_prepare(g->db, &rt,
                      "SELECT id, pid, tid, ts, coalesce(dur, 0) FROM runtime"
                      " WHERE trace_id = ?1 AND pid IS ?2 AND tid IS ?3 AND ts IS NOT NULL"
                      " ORDER BY ts") < 0 ||
        tt_db_prepare(g->db, &ops,
                      "SELECT id, ts, coalesce(dur, 0) FROM slices WHERE trace_id = ?1"
                      " AND pid IS ?2 AND tid IS ?3 AND ts IS NOT NULL AND cat IN (?4, ?5)"
                      " ORDER BY ts, dur DESC") < 0 ||
        tt_db_prepare(g->db, &upd, "UPDATE runtime SET op_id = ?1 WHERE id = ?2") < 0) {
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(rt, 1, g->trace_id);
    bind_id(rt, 2, &th->pid);
    bind_id(rt, 3, &th->tid);
    while ((s = sqlite3_step(rt)) == SQLITE_ROW) {
        int64_t rid = sqlite3_column_int64(rt, 0);
        int64_t rts = sqlite3_column_int64(rt, 3);
        int64_t rend = rts + sqlite3_column_int64(rt, 4);
        size_t i;
        if (!value_eq(cur_pid, sqlite3_column_value(rt, 1)) ||
            !value_eq(cur_tid, sqlite3_column_value(rt, 2))) {
            sqlite3_value_free(cur_pid);
            sqlite3_value_free(cur_tid);
            cur_pid = sqlite3_value_dup(sqlite3_column_value(rt, 1));
            cur_tid = sqlite3_value_dup(sqlite3_column_value(rt, 2));
            if (!cur_pid || !cur_tid) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                goto out;
            }
            sqlite3_reset(ops);
            sqlite3_bind_int64(ops, 1, g->trace_id);
            sqlite3_bind_value(ops, 2, cur_pid);
            sqlite3_bind_value(ops, 3, cur_tid);
            sqlite3_bind_int64(ops, 4, cpu_op);
            sqlite3_bind_int64(ops, 5, op_legacy);
            n = 0;
            ops_row = sqlite3_step(ops) == SQLITE_ROW;
            if (ops_row) {
                op_id = sqlite3_column_int64(ops, 0);
                op_ts = sqlite3_column_int64(ops, 1);
                op_end = op_ts + sqlite3_column_int64(ops, 2);
            }
        }
        /* push every op starting at or before the call */
        while (ops_row && op_ts <= rts) {
            while (n && stack[n - 1].end < op_end)
                n--;
            if (TT_ALLOC_GROW(stack, n + 1, alloc) < 0) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                goto out;
            }
            stack[n].id = op_id;
            stack[n].ts = op_ts;
            stack[n].end = op_end;
            n++;
            ops_row = sqlite3_step(ops) == SQLITE_ROW;
            if (ops_row) {
                op_id = sqlite3_column_int64(ops, 0);
                op_ts = sqlite3_column_int64(ops, 1);
                op_end = op_ts + sqlite3_column_int64(ops, 2);
            }
        }
        for (i = n; i > 0; i--) {
            if (stack[i - 1].end >= rend)
                break;
        }
        bind_opt(upd, 1, i > 0, i > 0 ? stack[i - 1].id : 0);
        sqlite3_bind_int64(upd, 2, rid);
        if (sqlite3_step(upd) != SQLITE_DONE) {
            rc = sqlerr(g, "cannot link a runtime call");
            goto out;
        }
        sqlite3_reset(upd);
    }
    if (s != SQLITE_DONE) {
        rc = sqlerr(g, "cannot read runtime calls");
        goto out;
    }
    /* GPU activities linked in-stream to this thread's calls follow them */
    sqlite3_finalize(upd);
    upd = NULL;
    if (tt_db_prepare(g->db, &upd,
                      "UPDATE gpu_ops SET op_id = r.op_id FROM runtime AS r"
                      " WHERE gpu_ops.trace_id = ?1 AND r.trace_id = ?1"
                      " AND r.id = gpu_ops.runtime_id AND r.pid IS ?2 AND r.tid IS ?3") < 0) {
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(upd, 1, g->trace_id);
    bind_id(upd, 2, &th->pid);
    bind_id(upd, 3, &th->tid);
    if (sqlite3_step(upd) != SQLITE_DONE)
        rc = sqlerr(g, "cannot link GPU activities");
out:
    sqlite3_value_free(cur_pid);
    sqlite3_value_free(cur_tid);
    free(stack);
    sqlite3_finalize(rt);
    sqlite3_finalize(ops);
    sqlite3_finalize(upd);
    return rc;
}

/*
 * Merge join of two statements ordered by (key, ts, id): each row of `act`
 * (id, key, ts) gets the row of `src` (id, key, ts, op_id) with the same key
 * that started last at or before it, else the first of its key, and `upd`
 * (?1 = src id, ?2 = src op_id, ?3 = act id) is run for it. Both sides are
 * sorted by SQLite (external sorter: bounded memory), so the join is
 * O(n log n) however many rows share a key (CUDA-graph launches give one
 * correlation hundreds of kernels; hostile files give one to all of them).
 * Returns the number of rows updated, or a negative error.
 */
struct mj_row {
    int64_t id, key, ts, op;
    int have_op;
};

static int mj_step(sqlite3_stmt *st, struct mj_row *r, int is_src, int *more)
{
    int s = sqlite3_step(st);
    if (s != SQLITE_ROW) {
        *more = 0;
        return s == SQLITE_DONE ? 0 : -1;
    }
    r->id = sqlite3_column_int64(st, 0);
    r->key = sqlite3_column_int64(st, 1);
    r->ts = sqlite3_column_type(st, 2) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(st, 2);
    r->have_op = is_src && sqlite3_column_type(st, 3) != SQLITE_NULL;
    r->op = r->have_op ? sqlite3_column_int64(st, 3) : 0;
    *more = 1;
    return 0;
}

static int64_t merge_link(struct ingest *g, sqlite3_stmt *act, sqlite3_stmt *src,
                          sqlite3_stmt *upd, const char *what)
{
    struct mj_row a, r, first, best;
    int amore = 1, rmore = 1, have_first = 0;
    int64_t n = 0;
    memset(&r, 0, sizeof(r));
    memset(&first, 0, sizeof(first));
    if (mj_step(src, &r, 1, &rmore) < 0)
        return sqlerr(g, what);
    for (;;) {
        if (mj_step(act, &a, 0, &amore) < 0)
            return sqlerr(g, what);
        if (!amore)
            break;
        if (have_first && first.key != a.key)
            have_first = 0;
        if (!have_first) {
            /* the first source row of this key, if any */
            while (rmore && r.key < a.key) {
                if (mj_step(src, &r, 1, &rmore) < 0)
                    return sqlerr(g, what);
            }
            if (!rmore || r.key != a.key)
                continue;
            first = best = r;
            have_first = 1;
            if (mj_step(src, &r, 1, &rmore) < 0)
                return sqlerr(g, what);
        }
        /* the last source row of the key starting at or before a */
        while (rmore && r.key == a.key && r.ts <= a.ts) {
            best = r;
            if (mj_step(src, &r, 1, &rmore) < 0)
                return sqlerr(g, what);
        }
        {
            const struct mj_row *m = best.ts <= a.ts ? &best : &first;
            sqlite3_bind_int64(upd, 1, m->id);
            bind_opt(upd, 2, m->have_op, m->op);
            sqlite3_bind_int64(upd, 3, a.id);
            if (sqlite3_step(upd) != SQLITE_DONE)
                return sqlerr(g, what);
            sqlite3_reset(upd);
            n++;
        }
    }
    return n;
}

/* prepare three statements, bind ?1 = trace and ?2 = k2 (where they use it)
 * on the first two, run merge_link */
static int64_t run_merge_link(struct ingest *g, const char *act_sql, const char *src_sql,
                              const char *upd_sql, int64_t k2, const char *what)
{
    sqlite3_stmt *act = NULL, *src = NULL, *upd = NULL;
    int64_t n;
    if (tt_db_prepare(g->db, &act, act_sql) < 0 || tt_db_prepare(g->db, &src, src_sql) < 0 ||
        tt_db_prepare(g->db, &upd, upd_sql) < 0) {
        n = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(act, 1, g->trace_id);
    sqlite3_bind_int64(src, 1, g->trace_id);
    if (sqlite3_bind_parameter_count(act) >= 2)
        sqlite3_bind_int64(act, 2, k2);
    if (sqlite3_bind_parameter_count(src) >= 2)
        sqlite3_bind_int64(src, 2, k2);
    n = merge_link(g, act, src, upd, what);
out:
    sqlite3_finalize(act);
    sqlite3_finalize(src);
    sqlite3_finalize(upd);
    return n;
}

/*
 * GPU activities whose runtime call was not near them in the file get the
 * runtime call of their correlation id (the latest one launched at or before
 * the activity when several share it), and user_annotation ranges on the GPU
 * get the CPU user_annotation of their External id (the same rule).
 */
static int link_gpu(struct ingest *g)
{
    int64_t n;
    size_t slot = 0;
    int64_t ua = strtab_find(&g->strs, "user_annotation", 15,
                             fnv1a("user_annotation", 15), &slot);
    if (g->unlinked_gpu) {
        if (tt_db_ensure_index(g->db, TT_IDX_RUNTIME_CORR) < 0)
            return TT_EDB;
        n = run_merge_link(g,
                           "SELECT id, correlation, ts FROM gpu_ops WHERE trace_id = ?1"
                           " AND runtime_id IS NULL AND correlation IS NOT NULL"
                           " AND kind <> 'annotation' ORDER BY correlation, ts, id",
                           "SELECT id, correlation, ts, op_id FROM runtime WHERE trace_id = ?1"
                           " AND correlation IS NOT NULL ORDER BY correlation, ts, id",
                           "UPDATE gpu_ops SET runtime_id = ?1, op_id = ?2 WHERE id = ?3",
                           0, "cannot link GPU activities");
        if (n < 0)
            return (int)n;
        g->res->linked_gpu += n;
    }
    if (!ua || !g->n_annot)
        return 0;
    if (tt_db_ensure_index(g->db, TT_IDX_SLICES_EXT) < 0)
        return TT_EDB;
    n = run_merge_link(g,
                       "SELECT id, external_id, ts FROM gpu_ops WHERE trace_id = ?1"
                       " AND kind = 'annotation' AND external_id IS NOT NULL"
                       " ORDER BY external_id, ts, id",
                       "SELECT id, external_id, ts, id FROM slices WHERE trace_id = ?1"
                       " AND cat = ?2 AND external_id IS NOT NULL ORDER BY external_id, ts, id",
                       "UPDATE gpu_ops SET op_id = ?2 WHERE id = ?3",
                       ua, "cannot link GPU annotations");
    return n < 0 ? (int)n : 0;
}

static int add_issue(struct ingest *g, const char *kind, int64_t count,
                     int64_t off, const char *detail)
{
    sqlite3_stmt *st;
    int rc;
    if (!count)
        return 0;
    if (tt_db_prepare(g->db, &st,
                      "INSERT INTO import_issues(trace_id, kind, count, first_offset,"
                      " detail) VALUES(?,?,?,?,?)") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, g->trace_id);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, count);
    bind_opt(st, 4, off >= 0, off);
    sqlite3_bind_text(st, 5, detail, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : sqlerr(g, "cannot store import issues");
    sqlite3_finalize(st);
    return rc;
}

static int64_t scalar_i64(tt_db *db, const char *sql, int64_t arg, int *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, arg);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        v = sqlite3_column_int64(st, 0);
        *ok = 1;
    }
    sqlite3_finalize(st);
    return v;
}

static int delete_trace(tt_db *db, int64_t id)
{
    static const char *const tables[] = { "slices", "runtime", "gpu_ops", "memory",
                                          "flow_events", "instants", "metadata_events",
                                          "et_nodes", "memory_timeline",
                                          "import_issues", "traces" };
    size_t i;
    {
        /* crosscheck's links to this trace, when that table exists */
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db->sql, "DELETE FROM et_links WHERE kineto_trace_id = ?1"
                                        " OR et_trace_id = ?1", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, id);
            sqlite3_step(st);
            sqlite3_finalize(st);
        }
    }
    for (i = 0; i < TT_ARRAY_SIZE(tables); i++) {
        char sql[128];
        sqlite3_stmt *st;
        int rc;
        snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s = ?", tables[i],
                 i + 1 == TT_ARRAY_SIZE(tables) ? "id" : "trace_id");
        if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
            return tt_db_error(db, "cannot delete the old trace");
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return tt_db_error(db, "cannot delete the old trace");
    }
    return 0;
}

static double now_s(void);
static double timing_t0;
/* TT_TIMING=1 in the environment prints ingest phase times to stderr */
#define TIMING(what)                                                           \
    do {                                                                       \
        if (getenv("TT_TIMING")) {                                             \
            double t_ = now_s();                                               \
            fprintf(stderr, "timing: %-12s %.3f s\n", what, t_ - timing_t0);   \
            timing_t0 = t_;                                                    \
        }                                                                      \
    } while (0)

static int finish_trace(struct ingest *g, const char *path, const tt_read_stats *rs)
{
    sqlite3_stmt *st;
    int rc, ok;
    size_t i;
    int64_t dup;
    char when[32];
    time_t now = time(NULL);
    struct tm tmv;
    const char *link_rule = NULL;

    /* same content already stored? */
    {
        sqlite3_stmt *q;
        if (tt_db_prepare(g->db, &q, "SELECT id FROM traces WHERE content_hash = ?1"
                                     " AND id <> ?2 ORDER BY id LIMIT 1") < 0)
            return TT_EDB;
        sqlite3_bind_text(q, 1, rs->hash, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, g->trace_id);
        dup = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
        sqlite3_finalize(q);
    }
    if (dup) {
        if (!(g->opts->flags & TT_INGEST_REPLACE))
            return tt_error_set_at(TT_EEXISTS, path, -1,
                                   "already ingested as trace %lld (same content "
                                   "hash %s); use --replace to replace it",
                                   (long long)dup, rs->hash);
        if ((rc = delete_trace(g->db, dup)) < 0)
            return rc;
        g->res->replaced_id = dup;
    }

    if ((rc = pend_flush(g, 0)) < 0 || (rc = flush_all(g)) < 0)
        return rc;
    if (g->spool) {
        fclose(g->spool);
        g->spool = NULL;
    }
    TIMING("read+insert");
    /* the ordered per-thread passes below read slices by thread and time */
    for (i = 0; i < g->nthreads; i++) {
        if (g->threads[i].disordered || g->threads[i].rt_dirty) {
            if ((rc = tt_db_ensure_index(g->db, TT_IDX_SLICES_THREAD)) < 0)
                return rc;
            break;
        }
    }
    for (i = 0; i < g->nthreads; i++) {
        if (g->threads[i].disordered && (rc = renest_thread(g, &g->threads[i])) < 0)
            return rc;
        g->unclosed_b += (int64_t)g->threads[i].nb;
    }
    if (g->format == TT_FMT_CHROME || g->format == TT_FMT_CHROME_ARRAY) {
        TIMING("renest");
        for (i = 0; i < g->nthreads; i++) {
            if (g->threads[i].rt_dirty && (rc = link_runtime(g, &g->threads[i])) < 0)
                return rc;
        }
        if (g->any_rt_dirty) {
            g->res->linked_runtime = scalar_i64(g->db, "SELECT count(*) FROM runtime"
                                                " WHERE trace_id = ?1 AND op_id IS NOT NULL",
                                                g->trace_id, &ok);
        }
        TIMING("link runtime");
        if ((rc = link_gpu(g)) < 0)
            return rc;
        TIMING("link gpu");
        link_rule = "runtime->cpu_op: innermost enclosing cpu_op on the same thread; "
                    "gpu->runtime: correlation; gpu_user_annotation->user_annotation: "
                    "External id";
    }
    if ((rc = add_issue(g, "repaired", rs->repaired, rs->first_repair_offset,
                        "strings or numbers repaired (invalid UTF-8, raw control "
                        "characters, bad escapes, NaN/Infinity, trailing commas)")) < 0 ||
        (rc = add_issue(g, "skipped_non_object", rs->skipped, rs->first_skip_offset,
                        "array elements that are not objects")) < 0 ||
        (rc = add_issue(g, "skipped_no_phase", g->no_phase, g->first_nophase_off,
                        "events without \"ph\"")) < 0 ||
        (rc = add_issue(g, "unmatched_end", g->unmatched_end, g->first_unmatched_off,
                        "'E' events without a matching 'B' (stored in instants)")) < 0 ||
        (rc = add_issue(g, "unclosed_begin", g->unclosed_b, -1,
                        "'B' events never closed (dur is NULL)")) < 0 ||
        (rc = add_issue(g, "truncated", rs->truncated ? 1 : 0, rs->bytes,
                        "input ends early; complete events before the cut kept")) < 0)
        return rc;

    if (!g->have_rank) {
        int64_t r;
        if (tt_rank_from_name(path, &r)) {
            g->rank = r;
            g->have_rank = 1;
        }
    }
    gmtime_r(&now, &tmv);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tmv);
    if (tt_db_prepare(g->db, &st,
                      "UPDATE traces SET content_hash=?2, bytes=?3, file_bytes=?4,"
                      " gzip=?5, format=?6, schema_version=?7, rank=?8, world_size=?9,"
                      " pid=?10, base_time_ns=?11, display_time_unit=?12, trace_name=?13,"
                      " start_ns=?14, end_ns=?15, events=?16, truncated=?17,"
                      " link_rule=?18, metadata=?19, ingested_at=?20 WHERE id=?1") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, g->trace_id);
    sqlite3_bind_text(st, 2, rs->hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, rs->bytes);
    sqlite3_bind_int64(st, 4, rs->file_bytes);
    sqlite3_bind_int(st, 5, rs->gzip);
    sqlite3_bind_text(st, 6, tt_format_name(g->format), -1, SQLITE_STATIC);
    bind_text(st, 7, g->schema_version, g->schema_version ? strlen(g->schema_version) : 0);
    bind_opt(st, 8, g->have_rank, g->rank);
    bind_opt(st, 9, g->have_world, g->world_size);
    bind_opt(st, 10, g->have_pid, g->pid);
    sqlite3_bind_int64(st, 11, g->have_base ? g->base_time_ns : 0);
    bind_text(st, 12, g->display_time_unit,
              g->display_time_unit ? strlen(g->display_time_unit) : 0);
    bind_text(st, 13, g->trace_name, g->trace_name ? strlen(g->trace_name) : 0);
    bind_opt(st, 14, g->have_span, g->start_ns);
    bind_opt(st, 15, g->have_span, g->end_ns);
    sqlite3_bind_int64(st, 16, rs->events);
    sqlite3_bind_int(st, 17, rs->truncated);
    bind_text(st, 18, link_rule, link_rule ? strlen(link_rule) : 0);
    {
        tt_buf_addch(&g->metadata, '}');
        sqlite3_bind_text(st, 19, g->metadata.buf, (int)g->metadata.len, SQLITE_STATIC);
    }
    sqlite3_bind_text(st, 20, when, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : sqlerr(g, "cannot record the trace");
    sqlite3_finalize(st);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- reading on a worker, writing here ---- */

struct worker {
    struct ingest *g;
    const char *path;
    const tt_trace_sink *sink;
    const tt_read_options *ropts;
    tt_read_stats *stats;
    int rc;
    tt_error err;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct jobq *q = &w->g->q;
    w->rc = tt_read_trace(w->path, w->sink, w->ropts, w->stats);
    if (w->rc < 0)
        w->err = *tt_error_last();
    pthread_mutex_lock(&q->mu);
    q->done = 1;
    pthread_cond_signal(&q->cv_writer);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/*
 * The reader, and everything that turns events into rows, runs on a worker
 * thread; this thread only binds and steps (SQLite is the larger half of an
 * ingest). Jobs are written in the order they were queued. When the write
 * fails the worker is stopped and the write's error is kept; when the read
 * fails, what was queued is still written (--salvage keeps it) and the read's
 * error is returned.
 */
static int read_threaded(struct ingest *g, const char *path, const tt_trace_sink *sink,
                         const tt_read_options *ropts, tt_read_stats *stats)
{
    struct jobq *q = &g->q;
    struct worker w;
    pthread_t th;
    int wrc = 0;
    tt_error werr;

    memset(&w, 0, sizeof(w));
    memset(&werr, 0, sizeof(werr));
    w.g = g;
    w.path = path;
    w.sink = sink;
    w.ropts = ropts;
    w.stats = stats;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv_writer, NULL);
    pthread_cond_init(&q->cv_worker, NULL);
    q->done = q->failed = q->nqueued = q->nfree = q->writer_waits = q->worker_waits = 0;
    q->head = q->tail = NULL;
    g->threaded = 1;
    if (pthread_create(&th, NULL, worker_main, &w) != 0) {
        /* no thread: read and write here */
        g->threaded = 0;
        w.rc = tt_read_trace(path, sink, ropts, stats);
        goto out;
    }
    for (;;) {
        struct job *j;
        pthread_mutex_lock(&q->mu);
        while (!q->head && !q->done) {
            q->writer_waits = 1;
            pthread_cond_wait(&q->cv_writer, &q->mu);
            q->writer_waits = 0;
        }
        j = q->head;
        if (j) {
            if (!(q->head = j->next))
                q->tail = NULL;
            q->nqueued--;
        }
        pthread_mutex_unlock(&q->mu);
        if (!j)
            break;
        if (!wrc && (wrc = run_job(g, j)) < 0)
            werr = *tt_error_last();
        pthread_mutex_lock(&q->mu);
        j->next = q->free;
        q->free = j;
        if (wrc < 0)
            q->failed = 1;
        if (q->worker_waits && (++q->nfree >= JOB_WAKE || q->failed)) {
            q->nfree = 0;
            pthread_cond_signal(&q->cv_worker);
        }
        pthread_mutex_unlock(&q->mu);
    }
    pthread_join(th, NULL);
    g->threaded = 0;
    if (wrc < 0) {
        tt_error_set_at(werr.code ? werr.code : wrc, werr.source, werr.offset, "%s",
                        werr.message);
        w.rc = wrc;
    } else if (w.rc < 0) {
        tt_error_set_at(w.err.code ? w.err.code : w.rc, w.err.source, w.err.offset, "%s",
                        w.err.message);
    }
out:
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv_writer);
    pthread_cond_destroy(&q->cv_worker);
    return w.rc;
}

static int rbufs_init(struct ingest *g)
{
    int i;
    for (i = 0; i < R_COUNT; i++) {
        g->rbuf[i].head = row_sql[i].head;
        g->rbuf[i].ncols = row_sql[i].ncols;
        g->rbuf[i].bound = calloc(RB_K * (size_t)row_sql[i].ncols, sizeof(tt__cell));
        g->rbuf[i].cur = job_new();
        if (!g->rbuf[i].bound || !g->rbuf[i].cur)
            return tt_error_set(TT_ENOMEM, "out of memory");
    }
    return 0;
}

static void set_sink(tt_trace_sink *sink, struct ingest *g)
{
    memset(sink, 0, sizeof(*sink));
    sink->ctx = g;
    sink->on_format = on_format;
    sink->on_meta = on_meta;
    sink->on_event = on_event;
    sink->on_et_node = on_et_node;
    sink->on_memrow = on_memrow;
}

/* the prepared statements (and row buffers): before COMMIT or ROLLBACK */
static void release_statements(struct ingest *g)
{
    int i;
    for (i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(g->st[i]);
        g->st[i] = NULL;
    }
    for (i = 0; i < R_COUNT; i++)
        rb_release(&g->rbuf[i]);
}

/* what both entry points free at the end */
static void ingest_release(struct ingest *g)
{
    release_statements(g);
    job_free_list(g->q.free);
    g->q.free = NULL;
    pend_release(g);
    threads_release(g);
    if (g->spool)
        fclose(g->spool);
    g->spool = NULL;
    strtab_release(&g->strs);
    tt_buf_release(&g->metadata);
    free(g->display_time_unit);
    free(g->schema_version);
    free(g->trace_name);
    g->display_time_unit = g->schema_version = g->trace_name = NULL;
}

int tt__ingest_rows(const char *path, const tt__rowsink *rowsink, unsigned read_flags,
                    unsigned skip, tt__rows_result *res)
{
    struct ingest g;
    tt_ingest_result ires;
    tt_ingest_options defopts = TT_INGEST_OPTIONS_INIT;
    tt_read_options ropts = TT_READ_OPTIONS_INIT;
    tt_trace_sink sink;
    int rc;

    memset(res, 0, sizeof(*res));
    memset(&g, 0, sizeof(g));
    memset(&ires, 0, sizeof(ires));
    g.opts = &defopts;
    g.res = &ires;
    g.rowsink = rowsink;
    g.skip = skip;
    g.trace_id = 1;
    g.next_slice_id = 1;
    g.next_runtime_id = 1;
    tt_error_clear();
    tt_buf_init(&g.metadata);
    tt_buf_addch(&g.metadata, '{');
    if ((rc = rbufs_init(&g)) < 0)
        goto out;
    set_sink(&sink, &g);
    /*
     * Here the consumer is light: decoding goes to the reader's own thread
     * (TT_READ_THREADED) and the linking stays with the consumer, which
     * balances the two cores better than tt_ingest_file's split.
     */
    ropts.flags = read_flags | TT_READ_THREADED;
    if ((rc = tt_read_trace(path, &sink, &ropts, &res->stats)) < 0)
        goto out;
    /* the last rows, here (no worker any more) */
    if ((rc = pend_flush(&g, 0)) < 0 || (rc = flush_all(&g)) < 0)
        goto out;
    res->format = g.format;
    res->needs_db = g.any_rt_dirty || g.unlinked_gpu > 0 || g.end_b_updates > 0;
    res->why_db = g.any_rt_dirty ? "runtime calls to relink (ops out of order on a thread)"
                  : g.unlinked_gpu ? "GPU activities whose runtime call was not near them"
                  : g.end_b_updates ? "'B' slices closed after their row was handed over"
                                    : NULL;
    res->have_rank = g.have_rank;
    res->rank = g.rank;
    if (!res->have_rank && tt_rank_from_name(path, &res->rank))
        res->have_rank = 1;
    tt_buf_addch(&g.metadata, '}');
    if (g.metadata.oom || !(res->metadata = strndup(g.metadata.buf, g.metadata.len)))
        rc = tt_error_set(TT_ENOMEM, "out of memory");
out:
    ingest_release(&g);
    return rc;
}

int tt_ingest_file(tt_db *db, const char *path, const tt_ingest_options *opts,
                   tt_ingest_result *res)
{
    struct ingest g;
    tt_ingest_result local;
    tt_ingest_options defopts = TT_INGEST_OPTIONS_INIT;
    tt_read_options ropts = TT_READ_OPTIONS_INIT;
    tt_trace_sink sink;
    sqlite3_stmt *st;
    int rc, i, ok;
    double t0 = now_s();
    const char *base;
    timing_t0 = t0;

    if (!res)
        res = &local;
    if (!opts)
        opts = &defopts;
    memset(res, 0, sizeof(*res));
    memset(&g, 0, sizeof(g));
    g.db = db;
    g.opts = opts;
    g.res = res;
    tt_error_clear();
    if (db->readonly)
        return tt_error_set_at(TT_EIO, db->path, -1, "database opened read-only");
    tt_buf_init(&g.metadata);
    tt_buf_addch(&g.metadata, '{');

    if ((rc = tt_db_exec(db, "BEGIN IMMEDIATE")) < 0)
        goto out;
    for (i = 0; i < S_COUNT; i++) {
        if ((rc = tt_db_prepare(db, &g.st[i], stmt_sql[i])) < 0)
            goto fail;
    }
    if ((rc = load_strings(&g)) < 0)
        goto fail;
    g.next_slice_id = scalar_i64(db, "SELECT max(id) + 1 FROM slices WHERE ?1", 1, &ok);
    if (!ok)
        g.next_slice_id = 1;
    g.next_runtime_id = scalar_i64(db, "SELECT max(id) + 1 FROM runtime WHERE ?1", 1, &ok);
    if (!ok)
        g.next_runtime_id = 1;
    if ((rc = rbufs_init(&g)) < 0)
        goto fail;

    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((rc = tt_db_prepare(db, &st,
                            "INSERT INTO traces(path, file_name, content_hash, format,"
                            " ingested_at, tool_version) VALUES(?,?,'','unknown','',?)")) < 0)
        goto fail;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, base, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, TT_VERSION, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        rc = sqlerr(&g, "cannot record the trace");
        goto fail;
    }
    g.trace_id = sqlite3_last_insert_rowid(db->sql);
    /*
     * Indexes first: their keys arrive mostly in order (per thread, or
     * growing ids), so keeping them up to date costs less than sorting
     * afterwards, and leaves no sort to wait for at the end.
     */
    if ((rc = tt_db_create_indexes(db)) < 0)
        goto fail;
    res->trace_id = g.trace_id;

    set_sink(&sink, &g);
    ropts.progress = opts->progress;
    ropts.progress_payload = opts->progress_payload;
    rc = read_threaded(&g, path, &sink, &ropts, &res->stats);
    if (rc == TT_ETRUNCATED && (opts->flags & TT_INGEST_SALVAGE)) {
        rc = 0;
    }
    if (rc < 0)
        goto fail;
    if ((rc = finish_trace(&g, path, &res->stats)) < 0)
        goto fail;
    release_statements(&g);
    if ((rc = tt_db_exec(db, "COMMIT")) < 0)
        goto fail;
    TIMING("commit");
    res->rows = g.rows;
    res->unmatched_end = g.unmatched_end;
    res->no_phase = g.no_phase;
    res->seconds = now_s() - t0;
    rc = 0;
    goto out;
fail:
    {
        /* keep the first error: the rollback must not overwrite it */
        tt_error saved = *tt_error_last();
        release_statements(&g);
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
        if (!saved.source[0])
            snprintf(saved.source, sizeof(saved.source), "%s", path);
        tt_error_set_at(saved.code ? saved.code : rc, saved.source, saved.offset, "%s",
                        saved.message);
        res->trace_id = 0;
    }
out:
    ingest_release(&g);
    return rc;
}
