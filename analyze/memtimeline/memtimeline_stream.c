/*
 * analyze/memtimeline/memtimeline_stream.c - `tracetool memtimeline FILE` without
 * storing the ops: the ingest's rows go through a tap (store/ingest_rows.h),
 * the [memory] events and strings into a temporary database, the ops only
 * into a temporary file of small records (id, time, end, name, thread,
 * phase flags). Kineto writes the [memory] events apart from the ops (often
 * after all of them), so the context walk of pass 1 runs once the file is
 * read: one scan of the op records in id order beside each thread's events
 * in id order, the same walk as the database's fast path
 * (memtimeline_passes.c), for every device at once.
 *
 * When the rows are not in the order that walk needs (a thread's ops or
 * events out of time order, an op closed after its row was handed over, a
 * thread that is not a pair of integers), the caller ingests the file into
 * a temporary database with its ops instead and the passes sort there.
 */
#include "common/compat.h"
#include "common/log.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "store/ingest_rows.h"

#include <errno.h>
#include <unistd.h>

/* an op on the temporary file */
struct srec {
    int64_t id, ts, end, name;
    uint32_t th;    /* index into st->th */
    uint32_t flags; /* PH_* of its name (and backward sequence) */
};

struct mev {
    int64_t id, ts;
    size_t dev; /* index into st->out->dev */
};

struct sthread {
    int64_t pid, tid;
    struct mev *mem; /* its [memory] events with a time, in id order */
    size_t nmem, amem, next;
    int any;
    int64_t last_ts, last_dur;
    struct memwalk w;
};

struct mstream {
    tt_db *db;
    FILE *ops;
    struct srec buf[1024];
    size_t nbuf;
    struct memrec mbuf[512]; /* records on their way to out->spill */
    size_t nmbuf;
    unsigned char *sflags; /* string id -> PH_* + 1 (0: not a string yet) */
    size_t nsflags;
    struct sthread *th;
    size_t nth, ath;
    struct i64map thmap; /* a hash of (pid, tid) -> index into th */
    int64_t last_slice, mem_lo, mem_hi;
    int have_mem;
    const char *bail; /* why the walk cannot run on these rows */
    struct memtl_streamed *out;
};

static const tt__cell *row_cell(const tt__cell *cells, int ncols, int row, int col)
{
    return &cells[(size_t)row * (size_t)ncols + (size_t)col];
}

static int64_t mix(int64_t pid, int64_t tid)
{
    uint64_t h = (uint64_t)pid * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)tid + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    return (int64_t)h;
}

/* the thread (pid, tid); NULL with st->bail set, or on TT_ENOMEM (*rc) */
static struct sthread *thread_of(struct mstream *st, int64_t pid, int64_t tid, int *rc)
{
    size_t i;
    struct sthread *t;
    *rc = 0;
    if (tt__i64map_get(&st->thmap, mix(pid, tid), &i)) {
        if (st->th[i].pid == pid && st->th[i].tid == tid)
            return &st->th[i];
        st->bail = "two threads with the same hash";
        return NULL;
    }
    if (TT_ALLOC_GROW(st->th, st->nth + 1, st->ath) < 0 ||
        tt__i64map_put(&st->thmap, mix(pid, tid), st->nth) < 0) {
        *rc = tt_error_set(TT_ENOMEM, "out of memory");
        return NULL;
    }
    t = &st->th[st->nth++];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->tid = tid;
    return t;
}

static int on_string(struct mstream *st, const tt__cell *id, const tt__cell *s, const char *text)
{
    char *z;
    size_t k;
    if (id->type != TT_CELL_INT || id->i <= 0 || s->type != TT_CELL_TEXT)
        return 0;
    k = (size_t)id->i;
    if (k >= st->nsflags) {
        size_t n = st->nsflags ? st->nsflags : 1024;
        unsigned char *p;
        while (n <= k)
            n *= 2;
        if (!(p = realloc(st->sflags, n)))
            return tt_error_set(TT_ENOMEM, "out of memory");
        memset(p + st->nsflags, 0, n - st->nsflags);
        st->sflags = p;
        st->nsflags = n;
    }
    if (!(z = strndup(text + s->i, s->len)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    st->sflags[k] = (unsigned char)(tt__memtl_flags_of(z, 0) + 1);
    free(z);
    return 0;
}

static int flush_ops(struct mstream *st)
{
    if (st->nbuf && fwrite(st->buf, sizeof(st->buf[0]), st->nbuf, st->ops) != st->nbuf)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    st->nbuf = 0;
    return 0;
}

/* an op: onto the temporary file when the walk can use it */
static int on_slice(struct mstream *st, const tt__cell *c, int ncols, int r)
{
    const tt__cell *id = row_cell(c, ncols, r, TT_C_SL_ID), *ts = row_cell(c, ncols, r, TT_C_SL_TS);
    const tt__cell *pid = row_cell(c, ncols, r, TT_C_SL_PID), *tid = row_cell(c, ncols, r, TT_C_SL_TID);
    const tt__cell *name = row_cell(c, ncols, r, TT_C_SL_NAME), *dur = row_cell(c, ncols, r, TT_C_SL_DUR);
    const tt__cell *seq = row_cell(c, ncols, r, TT_C_SL_SEQ_NR);
    const tt__cell *fwd = row_cell(c, ncols, r, TT_C_SL_FWD_TID);
    struct sthread *t;
    struct srec *s;
    int rc;
    if (id->type != TT_CELL_INT || id->i <= st->last_slice) {
        st->bail = "ops not in id order";
        return 1;
    }
    st->last_slice = id->i;
    /* as the database's walk: no time, a thread that is not a pair of
     * integers, a name that is not a string: not an op of the walk */
    if (ts->type != TT_CELL_INT || pid->type != TT_CELL_INT || tid->type != TT_CELL_INT ||
        name->type != TT_CELL_INT || name->i <= 0 || (size_t)name->i >= st->nsflags ||
        !st->sflags[name->i])
        return 0;
    if (!(t = thread_of(st, pid->i, tid->i, &rc)))
        return rc ? rc : 1;
    s = &st->buf[st->nbuf++];
    s->id = id->i;
    s->ts = ts->i;
    s->end = ts->i + (dur->type == TT_CELL_INT ? dur->i : 0);
    s->name = name->i;
    s->th = (uint32_t)(t - st->th);
    s->flags = (uint32_t)(st->sflags[name->i] - 1);
    if (seq->type != TT_CELL_NULL && fwd->type == TT_CELL_INT && fwd->i > 0)
        s->flags |= PH_BACKWARD;
    return st->nbuf == sizeof(st->buf) / sizeof(st->buf[0]) ? flush_ops(st) : 0;
}

/* the index of device (type, id) in out->dev, added when new */
static int device_of(struct memtl_streamed *o, int dtype, int64_t did, size_t *k)
{
    for (*k = 0; *k < o->ndev; (*k)++)
        if (o->dev[*k].dtype == dtype && o->dev[*k].did == did)
            return 0;
    if (TT_ALLOC_GROW(o->dev, o->ndev + 1, o->adev) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    memset(&o->dev[o->ndev], 0, sizeof(o->dev[0]));
    o->dev[o->ndev].dtype = dtype;
    o->dev[o->ndev].did = did;
    o->ndev++;
    return 0;
}

static int flush_mem(struct mstream *st)
{
    if (st->nmbuf && fwrite(st->mbuf, sizeof(st->mbuf[0]), st->nmbuf, st->out->spill) != st->nmbuf)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    st->nmbuf = 0;
    return 0;
}

/* an integer or null cell (*has |= bit when not null) into *v; 0 when
 * neither (the database's affinity may make a number of it) */
static int int_or_null(const tt__cell *c, int64_t *v, unsigned *has, unsigned bit)
{
    *v = 0;
    if (c->type == TT_CELL_NULL)
        return 1;
    if (c->type != TT_CELL_INT)
        return 0;
    *v = c->i;
    *has |= bit;
    return 1;
}

/* a [memory] event of device dev with a time: onto the spill, in its
 * device's runs */
static int spill_memory(struct mstream *st, const tt__cell *c, int ncols, int r, int64_t id,
                        size_t dev, int64_t ts)
{
    struct memtl_streamed *o = st->out;
    struct memtl_devscan *d = &o->dev[dev];
    struct memrec m;
    unsigned has = 0, size = 0;
    memset(&m, 0, sizeof(m));
    if (!int_or_null(row_cell(c, ncols, r, TT_C_MEM_ADDR), &m.addr, &has, EV_ADDR) ||
        !int_or_null(row_cell(c, ncols, r, TT_C_MEM_BYTES), &m.bytes, &size, 1) ||
        !int_or_null(row_cell(c, ncols, r, TT_C_MEM_TOTAL_ALLOCATED), &m.ta, &has, EV_TA) ||
        !int_or_null(row_cell(c, ncols, r, TT_C_MEM_TOTAL_RESERVED), &m.tr, &has, EV_TR)) {
        o->exact = 0;
        return 0;
    }
    if (!size)
        return 0; /* no size: not an event of the passes */
    if (!d->nrec || ts < d->last_ts) {
        if (d->nruns >= 0 && d->nruns < MEMRD_RUNS)
            d->run_at[d->nruns++] = o->nrec;
        else
            d->nruns = -1;
    }
    d->last_ts = ts;
    d->nrec++;
    m.id = id;
    m.ts = ts;
    m.dev = (uint32_t)dev;
    m.has = has;
    st->mbuf[st->nmbuf++] = m;
    o->nrec++;
    return st->nmbuf == sizeof(st->mbuf) / sizeof(st->mbuf[0]) ? flush_mem(st) : 0;
}

/* a [memory] event (row id): counted for its device, onto its thread's
 * list and the spill */
static int on_memory(struct mstream *st, const tt__cell *c, int ncols, int r, int64_t id)
{
    const tt__cell *ts = row_cell(c, ncols, r, TT_C_MEM_TS), *pid = row_cell(c, ncols, r, TT_C_MEM_PID);
    const tt__cell *tid = row_cell(c, ncols, r, TT_C_MEM_TID);
    const tt__cell *dt = row_cell(c, ncols, r, TT_C_MEM_DEVICE_TYPE);
    const tt__cell *di = row_cell(c, ncols, r, TT_C_MEM_DEVICE_ID);
    struct sthread *t;
    struct mev *m;
    size_t dev = 0;
    int rc, have_dev = 0;
    if (!st->have_mem || id < st->mem_lo)
        st->mem_lo = id;
    if (!st->have_mem || id > st->mem_hi)
        st->mem_hi = id;
    st->have_mem = 1;
    if (dt->type == TT_CELL_INT && (di->type == TT_CELL_INT || di->type == TT_CELL_NULL)) {
        if ((rc = device_of(st->out, (int)dt->i, di->type == TT_CELL_INT ? di->i : -1, &dev)) < 0)
            return rc;
        st->out->dev[dev].nall++;
        have_dev = 1;
    } else if (dt->type != TT_CELL_NULL || di->type == TT_CELL_TEXT) {
        st->out->exact = 0;
    }
    if (ts->type == TT_CELL_NULL)
        return 0; /* no time: no context */
    if (ts->type != TT_CELL_INT || pid->type != TT_CELL_INT || tid->type != TT_CELL_INT ||
        !have_dev) {
        st->bail = "a [memory] event's thread or device is not an integer";
        return 1;
    }
    if (!(t = thread_of(st, pid->i, tid->i, &rc)))
        return rc ? rc : 1;
    if (t->nmem && ts->i < t->mem[t->nmem - 1].ts) {
        st->bail = "a thread's [memory] events out of time order";
        return 1;
    }
    if (TT_ALLOC_GROW(t->mem, t->nmem + 1, t->amem) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    m = &t->mem[t->nmem++];
    m->id = id;
    m->ts = ts->i;
    m->dev = dev;
    return spill_memory(st, c, ncols, r, id, dev, ts->i);
}

static int stream_start(void *ctx, tt_db *db)
{
    struct mstream *st = ctx;
    st->db = db;
    if (!(st->out->spill = tt__tmpfile()))
        return tt_error_last()->code ? tt_error_last()->code : TT_EIO;
    if (!(st->ops = tt__tmpfile()))
        return tt_error_last()->code ? tt_error_last()->code : TT_EIO;
    return 0;
}

static int stream_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                    const char *text, int64_t first_rowid)
{
    struct mstream *st = ctx;
    int r, rc = 0;
    for (r = 0; r < nrows && rc == 0; r++) {
        if (table == TT_ROWS_STR)
            rc = on_string(st, row_cell(cells, ncols, r, TT_C_STR_ID), row_cell(cells, ncols, r, TT_C_STR_S),
                           text);
        else if (table == TT_ROWS_SLICE)
            rc = on_slice(st, cells, ncols, r);
        else if (table == TT_ROWS_MEMORY)
            rc = on_memory(st, cells, ncols, r, first_rowid + r);
    }
    return rc;
}

static int stream_end_b(void *ctx, int64_t slice_id, int64_t dur)
{
    struct mstream *st = ctx;
    (void)slice_id;
    (void)dur;
    st->bail = "'B' ops closed after their row was handed over";
    return 1;
}

/* the thread's events before time ts (all: every one left) */
static void drain(struct mstream *st, struct sthread *t, int64_t ts, int all)
{
    while (t->next < t->nmem && (all || t->mem[t->next].ts < ts)) {
        const struct mev *m = &t->mem[t->next++];
        tt__memtl_walk_pop(&t->w, m->ts);
        tt__memtl_store_context(&st->out->cs, &st->out->dev[m->dev].sc, m->id, m->ts, &t->w);
    }
}

/* one op of the scan: 0, 1 out of order, or TT_ENOMEM */
static int walk_op(struct mstream *st, const struct srec *s)
{
    struct sthread *t = &st->th[s->th];
    int64_t dur = s->end - s->ts;
    if (!t->nmem)
        return 0;
    if (t->any && (s->ts < t->last_ts || (s->ts == t->last_ts && dur > t->last_dur))) {
        st->bail = "a thread's ops out of time order";
        return 1;
    }
    t->any = 1;
    t->last_ts = s->ts;
    t->last_dur = dur;
    drain(st, t, s->ts, 0);
    tt__memtl_walk_pop(&t->w, s->ts);
    return tt__memtl_walk_push(&t->w, s->id, s->end, s->flags, s->name);
}

/* pass 1 over the file of ops, once every row is in */
static int stream_finish(void *ctx)
{
    struct mstream *st = ctx;
    struct ctxstore *cs = &st->out->cs;
    size_t i, n;
    int rc;
    if ((rc = flush_ops(st)) < 0 || (rc = flush_mem(st)) < 0)
        return rc;
    if (fflush(st->out->spill) != 0)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    if (st->have_mem) {
        cs->lo = st->mem_lo;
        cs->n = (size_t)(st->mem_hi - st->mem_lo) + 1;
        if (!(cs->v = calloc(cs->n, sizeof(*cs->v))))
            return tt_error_set(TT_ENOMEM, "out of memory");
    }
    if (fflush(st->ops) != 0 || fseek(st->ops, 0, SEEK_SET) != 0)
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    while ((n = fread(st->buf, sizeof(st->buf[0]), sizeof(st->buf) / sizeof(st->buf[0]),
                      st->ops)) > 0) {
        for (i = 0; i < n; i++)
            if ((rc = walk_op(st, &st->buf[i])) != 0)
                return rc;
    }
    if (ferror(st->ops))
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    for (i = 0; i < st->nth; i++)
        drain(st, &st->th[i], 0, 1);
    return 0;
}

static void stream_release(struct mstream *st)
{
    size_t i;
    if (st->ops)
        fclose(st->ops);
    for (i = 0; i < st->nth; i++) {
        free(st->th[i].mem);
        free(st->th[i].w.stack);
    }
    free(st->th);
    free(st->sflags);
    tt__i64map_free(&st->thmap);
}

void tt__memtl_streamed_free(struct memtl_streamed *o)
{
    if (o->spill)
        fclose(o->spill);
    free(o->cs.v);
    free(o->dev);
    memset(o, 0, sizeof(*o));
}

int tt__memtl_open_streamed(tt_db **db, const char *path, struct memtl_streamed *out)
{
    struct mstream *st = calloc(1, sizeof(*st));
    tt__rowtap tap;
    int rc;
    memset(out, 0, sizeof(*out));
    out->exact = 1;
    *db = NULL;
    if (!st)
        return tt_error_set(TT_ENOMEM, "out of memory");
    st->out = out;
    memset(&tap, 0, sizeof(tap));
    tap.ctx = st;
    tap.see = 1u << TT_ROWS_SLICE | 1u << TT_ROWS_MEMORY | 1u << TT_ROWS_STR;
    tap.drop = 1u << TT_ROWS_SLICE;
    tap.start = stream_start;
    tap.rows = stream_rows;
    tap.end_b = stream_end_b;
    tap.finish = stream_finish;
    rc = tt__open_ingested_temp_tap(db, path, TT_READ_NO_ARGS,
                                    1u << TT_ROWS_RUNTIME | 1u << TT_ROWS_GPU | 1u << TT_ROWS_FLOW |
                                        1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META,
                                    &tap);
    if (rc < 0 && st->bail) {
        tt__log(TT_LOG_DEBUG, "memtimeline", "the ops go to a database: %s", st->bail);
        tt_error_clear();
        rc = 1;
    }
    stream_release(st);
    free(st);
    if (rc != 0)
        tt__memtl_streamed_free(out);
    return rc;
}

/* ---- the later passes' records from the spill ---- */

#define CUR_RECS 256

/* the records of one run, one device's only, read ahead */
struct spcur {
    size_t at, end; /* the next spill record to read, the run's end */
    struct memrec buf[CUR_RECS];
    size_t n, pos;
};

/* cursor c onto its device's next record: 1, 0 at its run's end, or an error */
static int spcur_next(int fd, struct spcur *c, uint32_t dev, const struct memrec **out)
{
    for (;;) {
        while (c->pos < c->n) {
            const struct memrec *m = &c->buf[c->pos++];
            if (m->dev == dev) {
                *out = m;
                return 1;
            }
        }
        if (c->at >= c->end)
            return 0;
        {
            size_t want = c->end - c->at < CUR_RECS ? c->end - c->at : CUR_RECS;
            ssize_t got = pread(fd, c->buf, want * sizeof(struct memrec),
                                (off_t)(c->at * sizeof(struct memrec)));
            if (got <= 0 || (size_t)got % sizeof(struct memrec))
                return tt_error_set(TT_EIO, "cannot read a temporary file: %s",
                                    got < 0 ? strerror(errno) : "short read");
            c->n = (size_t)got / sizeof(struct memrec);
            c->pos = 0;
            c->at += c->n;
        }
    }
}

/* the runs of the device merged by (time, id), as tt__memrd_step does */
static int merge_runs(const struct memtl_streamed *pre, size_t dev, struct spcur *cur,
                      const struct ctxstore *cs, const struct i64map *et, struct evspill *sp)
{
    const struct memtl_devscan *d = &pre->dev[dev];
    const struct memrec *head[MEMRD_RUNS];
    int fd = fileno(pre->spill), k, rc;
    for (k = 0; k < d->nruns; k++) {
        cur[k].n = cur[k].pos = 0;
        cur[k].at = d->run_at[k];
        cur[k].end = k + 1 < d->nruns ? d->run_at[k + 1] : pre->nrec;
        if ((rc = spcur_next(fd, &cur[k], (uint32_t)dev, &head[k])) < 0)
            return rc;
        if (rc == 0)
            head[k] = NULL;
    }
    for (;;) {
        int best = -1;
        struct memev ev;
        for (k = 0; k < d->nruns; k++)
            if (head[k] && (best < 0 || head[k]->ts < head[best]->ts ||
                            (head[k]->ts == head[best]->ts && head[k]->id < head[best]->id)))
                best = k;
        if (best < 0)
            return 0;
        memset(&ev, 0, sizeof(ev));
        ev.id = head[best]->id;
        ev.ts = head[best]->ts;
        ev.addr = head[best]->addr;
        ev.bytes = head[best]->bytes;
        ev.ta = head[best]->ta;
        ev.tr = head[best]->tr;
        ev.has = head[best]->has;
        if ((rc = tt__memtl_spill_event(&ev, cs, et, sp)) < 0)
            return rc;
        if ((rc = spcur_next(fd, &cur[best], (uint32_t)dev, &head[best])) < 0)
            return rc;
        if (rc == 0)
            head[best] = NULL;
    }
}

int tt__memtl_load_streamed(const struct memtl_streamed *pre, size_t dev, const struct ctxstore *cs,
                            const struct i64map *et, struct evspill *sp)
{
    struct spcur *cur;
    int rc;
    memset(sp, 0, sizeof(*sp));
    if (!pre->exact || !pre->spill || pre->dev[dev].nruns < 0)
        return 1;
    if (!(sp->f = tt__tmpfile()))
        return tt_error_last()->code ? tt_error_last()->code : TT_EIO;
    if (!(cur = malloc(sizeof(*cur) * (size_t)(pre->dev[dev].nruns + 1))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    rc = merge_runs(pre, dev, cur, cs, et, sp);
    free(cur);
    return rc < 0 ? rc : tt__memtl_spill_done(sp);
}
