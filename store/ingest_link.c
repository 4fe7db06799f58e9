/*
 * store/ingest_link.c - the links of an ingest: slice nesting per thread,
 * runtime call -> innermost enclosing cpu_op (walked in step with a
 * per-thread spool of ops while streaming; GPU activity -> runtime call
 * while streaming is ingest_pend.c), and the post passes for what streaming
 * could not link (ordered per-thread scans and merge joins of sorted scans:
 * O(n log n) on any trace).
 */
#include "common/compat.h"
#include "store/ingest_state.h"
#include "formats/reader_internal.h"

#include <errno.h>
#include <unistd.h>

/* ---- thread stacks ---- */


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
        return (h * 31 + 2) ^ tt_strhash(id->str, strlen(id->str));
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
struct thread *ig_thread_of(struct ingest *g, const tt_id *pid, const tt_id *tid)
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

void ig_threads_release(struct ingest *g)
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

/* a slice's cells among the rows held back, or NULL */
static tt__cell *held_row(struct ingest *g, int64_t id)
{
    struct rowbuf *rb = &g->rbuf[R_SLICE];
    struct job *j = rb->cur;
    int64_t first = j->n ? j->cells[TT_C_SL_ID].i : 0;
    tt__cell *row;
    if (!j->n || id < first || id - first >= j->n)
        return NULL;
    row = &j->cells[(id - first) * rb->ncols];
    return row[TT_C_SL_ID].i == id ? row : NULL;
}

int ig_retie(struct ingest *g, struct thread *t, int64_t id, int64_t ts, int64_t dur,
             int64_t *depth, int64_t *parent)
{
    int64_t ids[RUN_MAX + 1], durs[RUN_MAX + 1];
    tt__cell *rows[RUN_MAX + 1];
    size_t n = t->run_n, i, k;
    if (!t->have_last || ts != t->last_ts || dur <= t->last_dur || n == 0 || n >= RUN_MAX ||
        t->run_base > t->n || id - t->run_first > UINT8_MAX)
        return 1;
    for (i = 0; i < n; i++) {
        const tt__cell *c;
        ids[i] = t->run_first + t->run_off[i];
        if (!(rows[i] = held_row(g, ids[i])))
            return 1;
        c = &rows[i][TT_C_SL_DUR];
        durs[i] = c->type == CELL_INT ? c->i : 0;
    }
    /* the new slice in its place: longest first, then in id order */
    for (k = n; k > 0 && durs[k - 1] < dur; k--) {
        ids[k] = ids[k - 1];
        durs[k] = durs[k - 1];
        rows[k] = rows[k - 1];
    }
    ids[k] = id;
    durs[k] = dur;
    rows[k] = NULL;
    n++;
    /* the run nested again from the stack under it, its rows patched */
    t->n = t->run_base;
    for (i = 0; i < n; i++) {
        int64_t d, p;
        if (ig_nest_push(t, ids[i], ts, ts + (durs[i] > 0 ? durs[i] : 0), &d, &p) < 0)
            return tt__oom();
        if (i == 0)
            t->run_base = (uint32_t)(t->n - 1);
        t->run_off[i] = (uint8_t)(ids[i] - t->run_first);
        if (!rows[i]) {
            *depth = d;
            *parent = p;
            continue;
        }
        rows[i][TT_C_SL_DEPTH].type = CELL_INT;
        rows[i][TT_C_SL_DEPTH].i = d;
        rows[i][TT_C_SL_PARENT_ID].type = p ? CELL_INT : CELL_NULL;
        rows[i][TT_C_SL_PARENT_ID].i = p;
    }
    t->run_n = (uint8_t)n;
    t->last_dur = durs[n - 1];
    return 0;
}
/* ---- the cpu_op spool (struct opspool) ---- */

static int spool_io_error(void)
{
    return tt_error_set(TT_EIO, "cannot use a temporary file: %s", strerror(errno));
}

#define SPOOL_MOVES 32

/* a sorts after f: later start, or the same start and an earlier end */
static int sorts_after(const struct frame *a, const struct frame *f)
{
    return a->ts > f->ts || (a->ts == f->ts && a->end < f->end);
}

/* Write the oldest `nb` blocks of the window out */
static int spool_flush(struct ingest *g, struct opspool *sp, size_t nb)
{
    size_t i, n_in = (size_t)(sp->nrec - (int64_t)sp->nblk * OPS_BLK);
    size_t bytes = OPS_BLK * sizeof(*sp->wbuf);
    if (!g->spool && !(g->spool = tt__tmpfile()))
        return TT_EIO; /* said which directory, and why */
    if (TT_ALLOC_GROW(sp->boff, sp->nblk + nb, sp->aoff) < 0 ||
        TT_ALLOC_GROW(sp->bts, sp->nblk + nb, sp->ats) < 0)
        return tt__oom();
    if (pwrite(fileno(g->spool), sp->wbuf, nb * bytes, (off_t)g->spool_end) !=
        (ssize_t)(nb * bytes))
        return spool_io_error();
    for (i = 0; i < nb; i++) {
        sp->boff[sp->nblk] = g->spool_end;
        sp->bts[sp->nblk] = sp->wbuf[i * OPS_BLK].ts;
        sp->nblk++;
        g->spool_end += (int64_t)bytes;
    }
    sp->flushed_last = sp->wbuf[nb * OPS_BLK - 1];
    memmove(sp->wbuf, &sp->wbuf[nb * OPS_BLK], (n_in - nb * OPS_BLK) * sizeof(*sp->wbuf));
    return 0;
}

/* Room for one more record in the window: grow it, or write half of it out */
static int spool_room(struct ingest *g, struct opspool *sp)
{
    size_t n_in = (size_t)(sp->nrec - (int64_t)sp->nblk * OPS_BLK);
    size_t cap = sp->wcap ? sp->wcap * 4 : 1; /* 4^k: reaches OPS_BLK; one-op threads are common */
    struct frame *w;
    if (n_in < sp->wcap)
        return 0;
    if (cap > OPS_WIN)
        cap = OPS_WIN;
    if (cap > OPS_BLK && g->spool_mem + (cap - sp->wcap) * sizeof(*w) > OPS_MEM)
        cap = sp->wcap > OPS_BLK ? sp->wcap : OPS_BLK; /* no more memory for windows */
    if (cap == sp->wcap) {
        size_t nb = cap / OPS_BLK / 2;
        return spool_flush(g, sp, nb ? nb : 1);
    }
    if (!(w = realloc(sp->wbuf, cap * sizeof(*w))))
        return tt__oom();
    if (cap > OPS_BLK)
        g->spool_mem += (cap - (sp->wcap > OPS_BLK ? sp->wcap : OPS_BLK)) * sizeof(*w);
    sp->wbuf = w;
    sp->wcap = cap;
    return 0;
}

/*
 * Append op [ts, end] to t's spool, in its place in the window: 0, or 1 when
 * that place is in a block already written out (or placing late ops has
 * moved more than SPOOL_MOVES times the records so far: a parent written
 * after its subtree moves past it, so that is the mean depth), or an error. The walk has not
 * reached a late op's place: it starts after every call linked so far ends
 * (else the caller marked the thread dirty), so every record after it does
 * too, and the walk pushes only ops that start at or before a call.
 */
int ig_spool_add(struct ingest *g, struct thread *t, int64_t id, int64_t ts,
                 int64_t end, int64_t name)
{
    struct opspool *sp = &t->ops;
    struct frame f;
    size_t n_in, j;
    int rc;
    f.id = id;
    f.ts = ts;
    f.end = end;
    f.name = name;
    if ((rc = spool_room(g, sp)) < 0)
        return rc;
    n_in = (size_t)(sp->nrec - (int64_t)sp->nblk * OPS_BLK);
    j = n_in;
    while (j && sorts_after(&sp->wbuf[j - 1], &f))
        j--;
    if (j < n_in) {
        if (j == 0 && sp->nblk && sorts_after(&sp->flushed_last, &f))
            return 1;
        sp->moved += (int64_t)(n_in - j);
        if (sp->moved > SPOOL_MOVES * sp->nrec + OPS_WIN)
            return 1;
        memmove(&sp->wbuf[j + 1], &sp->wbuf[j], (n_in - j) * sizeof(*sp->wbuf));
    } else if (j == 0 && sp->nblk && sorts_after(&sp->flushed_last, &f)) {
        return 1;
    }
    sp->wbuf[j] = f;
    sp->nrec++;
    return 0;
}

/* Record k of t's spool */
static int spool_get(struct ingest *g, struct opspool *sp, int64_t k,
                     struct frame *out)
{
    int64_t blk = k / OPS_BLK;
    if ((size_t)blk >= sp->nblk) {
        *out = sp->wbuf[k - (int64_t)sp->nblk * OPS_BLK];
        return 0;
    }
    if (blk != sp->rblk || !sp->rbuf) {
        size_t bytes = OPS_BLK * sizeof(*sp->rbuf);
        if (!sp->rbuf && !(sp->rbuf = malloc(bytes)))
            return tt__oom();
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
    if (lo == sp->nblk && (sp->nblk == 0 || sp->flushed_last.ts < from)) {
        /* in the window (sorted): bisect it */
        size_t a = 0, b = (size_t)(sp->nrec - (int64_t)sp->nblk * OPS_BLK);
        while (a < b) {
            size_t mid = a + (b - a) / 2;
            if (sp->wbuf[mid].ts < from)
                a = mid + 1;
            else
                b = mid;
        }
        return (int64_t)sp->nblk * OPS_BLK + (int64_t)a;
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
/* ---- runtime calls, linked to their CPU op while streaming ---- */

/* ops re-read by a thread's walk before the thread goes to the ordered pass
 * (beyond twice its ops) */
#define WALK_SLACK 65536

/*
 * The stack of open ops holds them outermost first, and an op is pushed only
 * after every op ending before it was popped, so ends never increase towards
 * the top. The innermost op enclosing a call that ends at rend is then the
 * last one with end >= rend: found by bisection. Returns its index + 1, or 0.
 */
static size_t innermost_enclosing(const struct frame *stack, size_t n, int64_t rend)
{
    size_t lo = 0, hi = n; /* stack[0, lo) end >= rend; stack[hi, n) end < rend */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (stack[mid].end >= rend)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Kineto writes a thread's CPU ops (sorted by start) before its runtime
 * calls (also sorted). So when a thread's first runtime call arrives, its
 * ops are all stored: walk them with an index cursor in step with the calls
 * and keep the stack of open ops. If the order assumption breaks for a
 * thread (a call earlier than the previous one, or an op stored after the
 * walk began), the thread is marked dirty and relinked by the ordered pass
 * at the end.
 */
int64_t ig_link_runtime_event(struct ingest *g, struct thread *t, int64_t rts,
                                  int64_t rend)
{
    size_t i;
    struct frame op;
    if (t->rt_dirty)
        return 0;
    t->rt_started = 1; /* later ops that may enclose this call mark the thread dirty */
    if (rend > t->max_rt_end)
        t->max_rt_end = rend;
    if (t->walking && rts < t->last_rt_ts && t->walked > 2 * t->ops.nrec + WALK_SLACK) {
        /*
         * The calls went back in time so often that the walk re-read the
         * ops more than twice: the ordered pass at the end links this thread
         * instead (O(n log n) whatever the order of the calls).
         */
        t->rt_dirty = g->any_rt_dirty = 1;
        return 0;
    }
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
            return tt__oom();
        t->ostack[t->on++] = op;
        t->ops.pos++;
        t->walked++;
    }
    if ((i = innermost_enclosing(t->ostack, t->on, rend)) > 0) {
        g->link_op = t->ostack[i - 1];
        return t->ostack[i - 1].id;
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
int ig_renest_thread(struct ingest *g, const struct thread *t)
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
    ig_bind_id(sel, 2, &t->pid);
    ig_bind_id(sel, 3, &t->tid);
    while ((s = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(sel, 0), depth, parent;
        if (ig_nest(&tmp, id, sqlite3_column_int64(sel, 1), sqlite3_column_int64(sel, 2),
                 &depth, &parent) < 0) {
            rc = tt__oom();
            goto out;
        }
        sqlite3_bind_int64(upd, 1, depth);
        ig_bind_opt(upd, 2, parent != 0, parent);
        sqlite3_bind_int64(upd, 3, id);
        if (sqlite3_step(upd) != SQLITE_DONE) {
            rc = ig_sqlerr(g, "cannot update slice nesting");
            goto out;
        }
        sqlite3_reset(upd);
    }
    if (s != SQLITE_DONE)
        rc = ig_sqlerr(g, "cannot read slices");
out:
    free(tmp.stack);
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    return rc;
}

/* runtime call -> innermost enclosing cpu_op on the same thread, for one
 * thread whose in-stream link could not be trusted */
int ig_link_runtime(struct ingest *g, const struct thread *th)
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

    h = tt_strhash("cpu_op", 6);
    cpu_op = tt_strtab_find(&g->strs, "cpu_op", 6, h, &slot);
    h = tt_strhash("Operator", 8);
    op_legacy = tt_strtab_find(&g->strs, "Operator", 8, h, &slot);
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
    ig_bind_id(rt, 2, &th->pid);
    ig_bind_id(rt, 3, &th->tid);
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
                rc = tt__oom();
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
                rc = tt__oom();
                goto out;
            }
            stack[n].id = op_id;
            stack[n].ts = op_ts;
            stack[n].end = op_end;
            stack[n].name = 0;
            n++;
            ops_row = sqlite3_step(ops) == SQLITE_ROW;
            if (ops_row) {
                op_id = sqlite3_column_int64(ops, 0);
                op_ts = sqlite3_column_int64(ops, 1);
                op_end = op_ts + sqlite3_column_int64(ops, 2);
            }
        }
        i = innermost_enclosing(stack, n, rend);
        ig_bind_opt(upd, 1, i > 0, i > 0 ? stack[i - 1].id : 0);
        sqlite3_bind_int64(upd, 2, rid);
        if (sqlite3_step(upd) != SQLITE_DONE) {
            rc = ig_sqlerr(g, "cannot link a runtime call");
            goto out;
        }
        sqlite3_reset(upd);
    }
    if (s != SQLITE_DONE) {
        rc = ig_sqlerr(g, "cannot read runtime calls");
        goto out;
    }
out:
    sqlite3_value_free(cur_pid);
    sqlite3_value_free(cur_tid);
    free(stack);
    sqlite3_finalize(rt);
    sqlite3_finalize(ops);
    sqlite3_finalize(upd);
    return rc;
}

/* After the ordered pass relinked some threads' runtime calls: GPU activities
 * linked in-stream to a call take its op again (one pass over the trace's
 * GPU rows, each call found by its rowid) */
int ig_link_runtime_gpu(struct ingest *g)
{
    sqlite3_stmt *upd = NULL;
    int rc = 0;
    if (tt_db_prepare(g->db, &upd,
                      "UPDATE gpu_ops SET op_id = r.op_id FROM runtime AS r"
                      " WHERE gpu_ops.trace_id = ?1 AND r.id = gpu_ops.runtime_id"
                      " AND gpu_ops.op_id IS NOT r.op_id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(upd, 1, g->trace_id);
    if (sqlite3_step(upd) != SQLITE_DONE)
        rc = ig_sqlerr(g, "cannot link GPU activities");
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
        return ig_sqlerr(g, what);
    for (;;) {
        if (mj_step(act, &a, 0, &amore) < 0)
            return ig_sqlerr(g, what);
        if (!amore)
            break;
        if (have_first && first.key != a.key)
            have_first = 0;
        if (!have_first) {
            /* the first source row of this key, if any */
            while (rmore && r.key < a.key) {
                if (mj_step(src, &r, 1, &rmore) < 0)
                    return ig_sqlerr(g, what);
            }
            if (!rmore || r.key != a.key)
                continue;
            first = best = r;
            have_first = 1;
            if (mj_step(src, &r, 1, &rmore) < 0)
                return ig_sqlerr(g, what);
        }
        /* the last source row of the key starting at or before a */
        while (rmore && r.key == a.key && r.ts <= a.ts) {
            best = r;
            if (mj_step(src, &r, 1, &rmore) < 0)
                return ig_sqlerr(g, what);
        }
        {
            const struct mj_row *m = best.ts <= a.ts ? &best : &first;
            sqlite3_bind_int64(upd, 1, m->id);
            ig_bind_opt(upd, 2, m->have_op, m->op);
            sqlite3_bind_int64(upd, 3, a.id);
            if (sqlite3_step(upd) != SQLITE_DONE)
                return ig_sqlerr(g, what);
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
int ig_link_gpu(struct ingest *g)
{
    int64_t n;
    size_t slot = 0;
    int64_t ua = tt_strtab_find(&g->strs, "user_annotation", 15,
                             tt_strhash("user_annotation", 15), &slot);
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
