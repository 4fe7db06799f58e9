/*
 * store/ingest_write.c - the ingest's rows into SQLite: rows are batched
 * per table and written RB_K at a time with one multi-row INSERT; with two
 * threads the worker fills jobs and queues them, and the calling thread
 * binds and steps them (store/ingest.c, read_threaded).
 */
#include "common/compat.h"
#include "store/ingest_state.h"

#include <errno.h>

static const char *const stmt_sql[S_COUNT] = {
    "UPDATE slices SET dur = ? WHERE id = ?",
};

/* the columns of each record type (store/records.h), and its table */
#define COLNAME_(P, NAME, SQL) SQL,
#define COLS_(ID, REC, TABLE) static const char *const cols_##REC[] = { TT_REC_##REC(COLNAME_) };
TT_RECORDS(COLS_)

static const struct {
    const char *table;
    const char *const *cols;
    int ncols;
} row_sql[R_COUNT] = {
#define ROW_(ID, REC, TABLE) [ID] = { TABLE, cols_##REC, TT_NC_##REC },
    TT_RECORDS(ROW_)
};
#undef ROW_
#undef COLS_
#undef COLNAME_

int ig_sqlerr(struct ingest *g, const char *what)
{
    return tt_db_error(g->db, what);
}

int ig_load_strings(struct ingest *g)
{
    sqlite3_stmt *st;
    int rc;
    if (tt_db_prepare(g->db, &st, "SELECT id, s FROM strings") < 0)
        return TT_EDB;
    if (tt_strtab_rehash(&g->strs) < 0) {
        sqlite3_finalize(st);
        return tt__oom();
    }
    g->strs.next_id = 1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        if (tt_strtab_add(&g->strs, s, len, tt_strhash(s, len), sqlite3_column_int64(st, 0)) < 0) {
            sqlite3_finalize(st);
            return tt__oom();
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : ig_sqlerr(g, "cannot read strings");
}

static int rb_prepare(tt_db *db, struct rowbuf *rb, int n)
{
    tt_buf sql = TT_BUF_INIT;
    int r, c, rc;
    /*
     * OR FAIL, not the default ABORT: an aborting multi-row INSERT must be
     * able to undo its own earlier rows, so SQLite copies every page it
     * touches into a statement journal first (measured: 1.9 bytes of
     * temporary file written per byte of trace). A failed INSERT fails the
     * whole ingest, which rolls the transaction back anyway.
     */
    tt_buf_addstr(&sql, "INSERT OR FAIL INTO ");
    tt_buf_addstr(&sql, rb->table);
    for (c = 0; c < rb->ncols; c++) {
        tt_buf_addstr(&sql, c ? ", " : "(");
        tt_buf_addstr(&sql, rb->cols[c]);
    }
    tt_buf_addstr(&sql, ") VALUES ");
    for (r = 0; r < n; r++) {
        tt_buf_addstr(&sql, r ? ",(" : "(");
        for (c = 0; c < rb->ncols; c++)
            tt_buf_addstr(&sql, c ? ",?" : "?");
        tt_buf_addch(&sql, ')');
    }
    if (sql.oom) {
        tt_buf_release(&sql);
        return tt__oom();
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
        return tt__oom();
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

/* a job of a table the tap sees: stored (unless dropped), then handed over */
static int tap_rows(struct ingest *g, const struct job *j)
{
    int64_t first = 0;
    int rc;
    if (!j->n)
        return 0;
    if (!(g->tap->drop >> j->table & 1u)) {
        if ((rc = write_rows(g->db, &g->rbuf[j->table], j)) < 0)
            return rc;
        first = sqlite3_last_insert_rowid(g->db->sql) - j->n + 1;
    } else if (j->text.oom) {
        return tt__oom();
    }
    rc = g->tap->rows(g->tap->ctx, j->table, j->n, g->rbuf[j->table].ncols, j->cells,
                      j->text.buf, first);
    return rc < 0 ? rc : rc ? TT_ECANCELED : 0;
}

int ig_run_job(struct ingest *g, const struct job *j)
{
    sqlite3_stmt *st;
    int rc;
    /* a file read with ids of its own: the database's, in place (the job
     * is the writer's until it goes back) */
    if (g->remap && (rc = ig_remap_job(g, (struct job *)j)) < 0)
        return rc;
    if (g->rowsink) {
        if (j->kind == JOB_END_B && g->fix_mode == FIX_COLLECT)
            return ig_fix_end_b(g, j->id, j->dur);
        if (j->kind != JOB_ROWS || !j->n)
            return 0;
        if (j->text.oom)
            return tt__oom();
        if (g->fix_mode == FIX_APPLY && (rc = ig_fix_rows(g, j)) < 0)
            return rc;
        rc = g->rowsink->rows(g->rowsink->ctx, j->table, j->n, g->rbuf[j->table].ncols,
                              j->cells, j->text.buf);
        return rc < 0 ? rc : rc ? TT_ECANCELED : 0;
    }
    if (g->tap && j->kind == JOB_ROWS && (g->tap->see >> j->table & 1u))
        return tap_rows(g, j);
    if (j->kind == JOB_ROWS)
        return write_rows(g->db, &g->rbuf[j->table], j);
    /* JOB_END_B: an 'E' closes a 'B' whose row is already written */
    if (g->tap && (g->tap->see & 1u << TT_ROWS_SLICE) &&
        (rc = g->tap->end_b(g->tap->ctx, j->id, j->dur)) != 0)
        return rc < 0 ? rc : TT_ECANCELED;
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
    j->cells = malloc(sizeof(tt__cell) * (RB_K + RB_KEEP) * RB_MAXC);
    if (!j->cells) {
        free(j);
        return NULL;
    }
    tt_buf_init(&j->text);
    return j;
}

void ig_job_free_list(struct job *j)
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
 * JOB_MAX are made; NULL when out of memory or the writer failed (its error) */
struct job *ig_job_get(struct ingest *g)
{
    struct jobq *q = &g->q;
    struct job *j = NULL;
    if (g->threaded) {
        void *v;
        int rc = tt__queue_tryget(&q->empty, &v);
        if (rc == 0 && q->njobs >= ig_maxjobs(q))
            rc = tt__queue_get(&q->empty, &v);
        if (rc < 0)
            return NULL;
        if (rc == 1)
            j = v;
        else
            q->njobs++;
    } else if (q->spare) {
        j = q->spare;
        q->spare = j->next;
    }
    if (!j && !(j = job_new())) {
        if (g->threaded)
            q->njobs--;
        tt__oom();
        return NULL;
    }
    j->next = NULL;
    j->kind = JOB_ROWS;
    j->n = 0;
    tt_buf_reset(&j->text);
    return j;
}

/* worker: queue j for the writer (threaded), or run it now */
int ig_job_put(struct ingest *g, struct job *j)
{
    struct jobq *q = &g->q;
    int rc;
    if (!g->threaded) {
        rc = ig_run_job(g, j);
        j->next = q->spare;
        q->spare = j;
        return rc;
    }
    if ((rc = tt__queue_put(&q->full, j)) < 0) { /* the writer failed: its error */
        j->next = NULL;
        ig_job_free_list(j);
    }
    return rc;
}

/*
 * Hand the rows of rb to the writer and start an empty job; with keep_last
 * the last row stays behind as the new job's first, so a flow that follows
 * its event can still be folded into it (fold_into_row) wherever the batch
 * boundaries fall. Anything that reads a table back (after the worker is
 * done) must ig_rb_flush() it first.
 */
/* hand the rows being filled to the writer, but the last keep_last, which
 * stay to be changed (a 'B' row's dur, the nesting of a run of slices) */
static int rb_flush_keep(struct ingest *g, struct rowbuf *rb, int keep_last)
{
    struct job *j = rb->cur, *fresh;
    int k, rc;
    if (j->n <= keep_last)
        return 0;
    /* ids of its own: the writer learns a string's before the rows using it */
    if (g->local_ids && rb != &g->rbuf[R_STR] && g->rbuf[R_STR].cur->n &&
        (rc = ig_rb_flush(g, &g->rbuf[R_STR])) < 0)
        return rc;
    if (j->n - keep_last > RB_K) { /* a statement writes RB_K rows at most */
        if ((rc = rb_flush_keep(g, rb, j->n - RB_K)) < 0)
            return rc;
        j = rb->cur;
    }
    if (j->text.oom)
        return tt__oom();
    if (!(fresh = ig_job_get(g)))
        return tt_error_last()->code ? tt_error_last()->code : TT_ENOMEM;
    for (k = 0; k < keep_last; k++) {
        const tt__cell *from = &j->cells[(j->n - keep_last + k) * rb->ncols];
        tt__cell *to = &fresh->cells[k * rb->ncols];
        int c;
        for (c = 0; c < rb->ncols; c++) {
            to[c] = from[c];
            if (from[c].type == CELL_TEXT) {
                to[c].i = (int64_t)fresh->text.len;
                tt_buf_add(&fresh->text, j->text.buf + from[c].i, from[c].len);
            }
        }
    }
    j->n -= keep_last;
    fresh->n = keep_last;
    j->kind = JOB_ROWS;
    j->table = (int)(rb - g->rbuf);
    rb->cur = fresh;
    return ig_job_put(g, j);
}

int ig_rb_flush(struct ingest *g, struct rowbuf *rb)
{
    return rb_flush_keep(g, rb, 0);
}

void ig_rb_release(struct rowbuf *rb)
{
    int i;
    for (i = 0; i <= RB_K; i++) {
        sqlite3_finalize(rb->st[i]);
        rb->st[i] = NULL;
    }
    ig_job_free_list(rb->cur);
    rb->cur = NULL;
    free(rb->bound);
    rb->bound = NULL;
    rb->nbound = 0;
}

int ig_rb_commit(struct ingest *g, struct rowbuf *rb, const char *what);

static int64_t intern(struct ingest *g, const char *s, size_t len)
{
    uint64_t h = tt_strhash(s, len);
    size_t slot = 0;
    int64_t id;
    int rc;
    struct rowbuf *st = &g->rbuf[R_STR];
    if (!g->strs.nslots && tt_strtab_rehash(&g->strs) < 0)
        return tt__oom();
    id = tt_strtab_find(&g->strs, s, len, h, &slot);
    if (id)
        return id;
    id = g->strs.next_id ? g->strs.next_id : 1;
    if (tt_strtab_add(&g->strs, s, len, h, id) < 0)
        return tt__oom();
    rb_int(st, TT_C_STR_ID, id);
    rb_text(st, TT_C_STR_S, s, len);
    if ((rc = ig_rb_commit(g, st, "cannot store a string")) < 0)
        return rc;
    /* a consumer sees each string before the rows that use it */
    if ((g->rowsink || (g->tap && (g->tap->see & 1u << TT_ROWS_STR))) &&
        (rc = ig_rb_flush(g, st)) < 0)
        return rc;
    return id;
}

int64_t ig_intern_z(struct ingest *g, const char *s)
{
    return intern(g, s, strlen(s));
}

/* ---- binding helpers ---- */

void ig_bind_id(sqlite3_stmt *st, int i, const tt_id *id)
{
    if (!id->present)
        sqlite3_bind_null(st, i);
    else if (id->is_str)
        sqlite3_bind_text(st, i, id->str, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, i, id->num);
}

void ig_bind_opt(sqlite3_stmt *st, int i, int have, int64_t v)
{
    if (have)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

void ig_bind_text(sqlite3_stmt *st, int i, const char *s, size_t len)
{
    if (s)
        sqlite3_bind_text(st, i, s, (int)len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

int ig_rb_commit(struct ingest *g, struct rowbuf *rb, const char *what)
{
    (void)what;
    int keep = rb == &g->rbuf[R_SLICE] ? RB_KEEP : 1;
    g->rows++;
    if (++rb->cur->n == RB_K + keep)
        return rb_flush_keep(g, rb, keep);
    return 0;
}

/* The columns every event table starts with: trace_id, ph, cat, name, pid,
 * tid, ts, written from column c on; returns the next column. */
int ig_rb_event_head(struct rowbuf *st, int c, const struct ingest *g, const char *ph,
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

int ig_flush_all(struct ingest *g)
{
    int i, rc;
    for (i = 0; i < R_COUNT; i++) {
        if ((rc = ig_rb_flush(g, &g->rbuf[i])) < 0)
            return rc;
    }
    return 0;
}

int ig_rbufs_init(struct ingest *g)
{
    int i;
    for (i = 0; i < R_COUNT; i++) {
        g->rbuf[i].table = row_sql[i].table;
        g->rbuf[i].cols = row_sql[i].cols;
        g->rbuf[i].ncols = row_sql[i].ncols;
        g->rbuf[i].bound = calloc(RB_K * (size_t)row_sql[i].ncols, sizeof(tt__cell));
        g->rbuf[i].cur = job_new();
        if (!g->rbuf[i].bound || !g->rbuf[i].cur)
            return tt__oom();
    }
    return 0;
}

/* the statements of enum stmt_id */
int ig_prepare_statements(struct ingest *g)
{
    int i;
    for (i = 0; i < S_COUNT; i++) {
        if (tt_db_prepare(g->db, &g->st[i], stmt_sql[i]) < 0)
            return TT_EDB;
    }
    return 0;
}

/* ---- the row of a GPU activity (also emitted by the pending ring) ---- */

/* tt__rowsink.gpu_launch for a GPU row linked to op_id (named op_name)
 * and the runtime call runtime_id (rt: what it is) */
static int gpu_launch(struct ingest *g, int64_t op_id, int64_t op_name, int64_t runtime_id,
                      const struct ig_rtlink *rt)
{
    tt__gpu_launch l;
    memset(&l, 0, sizeof(l));
    l.op_id = op_id;
    l.op_name = op_name;
    l.rt_id = runtime_id;
    l.rt_ts = runtime_id ? rt->ts : TT_ROWS_NO_TS;
    if (runtime_id) {
        l.rt_name = rt->name;
        if (rt->thr >= 0 && (size_t)rt->thr < g->nthreads) {
            l.rt_thread = tt__tkey_of_ids(&g->threads[rt->thr].pid, &g->threads[rt->thr].tid);
            l.has_thread = 1;
        } else if (rt->thr < 0 && rt->has_key) {
            l.rt_thread = rt->key;
            l.has_thread = 1;
        }
    }
    return g->rowsink->gpu_launch(g->rowsink->ctx, &l);
}

int ig_insert_gpu(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name,
                      int64_t runtime_id, int64_t op_id, int flow)
{
    struct rowbuf *st = &g->rbuf[R_GPU];
    int xc = tt_kineto_class(ev->cat);
    const char *ck = NULL;
    size_t ckl = 0;
    struct frame op = g->link_op; /* what op_id is, when not 0 */
    struct ig_rtlink rt = { g->link_rt_ts, g->link_rt_name, g->link_rt_thr, 0, { 0, 0, 0, 0 } };
    int64_t gid = ++g->gpu_rows;
    int rc;
    if (g->fix_mode && (rc = ig_fix_gpu(g, gid, ev, xc, &runtime_id, &op_id, &op, &rt)) < 0)
        return rc;
    if (g->rowsink && g->rowsink->kernel && op_id && op_id == op.id &&
        (xc == TT_XC_KERNEL || xc == TT_XC_MEMCPY || xc == TT_XC_MEMSET) && ev->has_dur) {
        rc = g->rowsink->kernel(g->rowsink->ctx, op_id, op.ts, op.end, ev->dur_ns);
        if (rc)
            return rc < 0 ? rc : TT_ECANCELED;
    }
    if (g->rowsink && g->rowsink->gpu_links) {
        rc = g->rowsink->gpu_links(g->rowsink->ctx, op_id, op_id && op_id == op.id ? op.name : 0,
                                   runtime_id, runtime_id ? rt.ts : TT_ROWS_NO_TS);
        if (rc)
            return rc < 0 ? rc : TT_ECANCELED;
    }
    if (g->rowsink && g->rowsink->gpu_launch &&
        (rc = gpu_launch(g, op_id, op_id && op_id == op.id ? op.name : 0, runtime_id, &rt)) != 0)
        return rc < 0 ? rc : TT_ECANCELED;
    rb_int(st, TT_C_GPU_TRACE_ID, g->trace_id);
    rb_textz(st, TT_C_GPU_KIND, tt_kineto_kind_name[xc]);
    rb_opt(st, TT_C_GPU_CAT, cat != 0, cat);
    rb_int(st, TT_C_GPU_NAME, name);
    rb_id(st, TT_C_GPU_PID, &ev->pid);
    rb_id(st, TT_C_GPU_TID, &ev->tid);
    /* device/stream from args, else pid/tid (GPU rows use device/stream) */
    if (HAVE(TT_A_DEVICE))
        rb_int(st, TT_C_GPU_DEVICE, ev->device);
    else if (ev->pid.present && !ev->pid.is_str)
        rb_int(st, TT_C_GPU_DEVICE, ev->pid.num);
    else
        rb_null(st, TT_C_GPU_DEVICE);
    if (HAVE(TT_A_STREAM))
        rb_int(st, TT_C_GPU_STREAM, ev->stream);
    else if (ev->tid.present && !ev->tid.is_str)
        rb_int(st, TT_C_GPU_STREAM, ev->tid.num);
    else
        rb_null(st, TT_C_GPU_STREAM);
    rb_opt(st, TT_C_GPU_CONTEXT, HAVE(TT_A_CONTEXT), ev->context);
    rb_opt(st, TT_C_GPU_TS, ev->has_ts, ev->ts_ns);
    rb_opt(st, TT_C_GPU_DUR, ev->has_dur, ev->dur_ns);
    rb_opt(st, TT_C_GPU_CORRELATION, HAVE(TT_A_CORRELATION), ev->correlation);
    rb_opt(st, TT_C_GPU_EXTERNAL_ID, HAVE(TT_A_EXTERNAL_ID), ev->external_id);
    rb_opt(st, TT_C_GPU_GRID_X, HAVE(TT_A_GRID), ev->grid[0]);
    rb_opt(st, TT_C_GPU_GRID_Y, HAVE(TT_A_GRID), ev->grid[1]);
    rb_opt(st, TT_C_GPU_GRID_Z, HAVE(TT_A_GRID), ev->grid[2]);
    rb_opt(st, TT_C_GPU_BLOCK_X, HAVE(TT_A_BLOCK), ev->block[0]);
    rb_opt(st, TT_C_GPU_BLOCK_Y, HAVE(TT_A_BLOCK), ev->block[1]);
    rb_opt(st, TT_C_GPU_BLOCK_Z, HAVE(TT_A_BLOCK), ev->block[2]);
    rb_opt(st, TT_C_GPU_REGISTERS, HAVE(TT_A_REGISTERS), ev->registers);
    rb_opt(st, TT_C_GPU_SHARED_MEM, HAVE(TT_A_SHARED_MEM), ev->shared_mem);
    rb_opt(st, TT_C_GPU_BYTES, HAVE(TT_A_BYTES), ev->bytes);
    if (xc == TT_XC_MEMCPY || xc == TT_XC_MEMSET)
        ckl = tt_kineto_copy_kind(ev->name, &ck);
    rb_text(st, TT_C_GPU_COPY_KIND, ckl ? ck : NULL, ckl);
    rb_text(st, TT_C_GPU_ARGS, ev->args, ev->args_len);
    rb_opt(st, TT_C_GPU_RUNTIME_ID, runtime_id != 0, runtime_id);
    rb_opt(st, TT_C_GPU_OP_ID, op_id != 0, op_id);
    rb_opt(st, TT_C_GPU_FLOW, flow != 0, flow);
    return ig_rb_commit(g, st, "cannot store a GPU activity");
}
