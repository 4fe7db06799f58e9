/*
 * analyze/memtimeline/memtimeline_stream.c - what the memory timeline reads
 * of a trace, from its rows (store/ingest_rows.h): a file's through
 * tt__ingest_rows, a database's through tt__db_rows, one consumer for both.
 *
 * The strings are kept by id (the names of the peak table, the phase flags
 * of an op's name); the ops go to a temporary file of small records (id,
 * time, end, name, thread, phase flags); each thread's [memory] events with
 * a time are kept in a list, and the events with a time and a size of
 * every device go to a second temporary file in row order (runs in time
 * order per device). Kineto writes the [memory] events apart from the ops
 * (often after all of them), and a database hands table after table, so
 * the context walk of pass 1 runs once every row is in: one scan of the op
 * records in id order beside each thread's events in time order, for every
 * device at once. A thread whose ops are not in the order that walk needs
 * (time, then the longer op first) has its ops sorted and walked on their
 * own; a device whose events come in more than MEMRD_RUNS runs of time
 * order has them sorted when it is loaded.
 *
 * Events are numbered by their row (1, 2, ...: the memory table's order in
 * both sources); slices keep their own ids.
 */
#include "common/compat.h"
#include "common/hash.h"
#include "common/log.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "analyze/filter/filtering.h"
#include "formats/kineto.h"
#include "formats/json.h"
#include "store/db_internal.h" /* the fallback's temporary database */
#include "store/ingest_rows.h"
#include "formats/spool.h"

#include <errno.h>
#include <sys/stat.h>
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

/* a pid or tid as the rows give it: an integer, a text (its copy) or null */
struct tkey {
    int type;
    int64_t i;
    char *s;
};

struct sthread {
    struct tkey pid, tid;
    struct mev *mem; /* its [memory] events with a time, in id order */
    size_t nmem, amem, next;
    int mem_unsorted; /* the events are not in time order */
    int disordered;   /* its ops are not in the walk's order: sorted */
    int any;
    int64_t last_ts, last_dur;
    struct memwalk w;
};

struct mstream {
    FILE *ops;
    struct srec buf[1024];
    size_t nbuf;
    struct memrec mbuf[512]; /* records on their way to out->spill */
    size_t nmbuf;
    struct sthread *th;
    size_t nth, ath;
    struct i64map thmap; /* a hash of (pid, tid) -> index into th */
    int64_t nmemrows;    /* [memory] rows so far: the next event's id - 1 */
    int open_b;          /* a 'B' slice handed over without its end */
    struct memtl_streamed *out;
    tt__flt *fl;         /* the filters (NULL: none) */
};

static const tt__cell *row_cell(const tt__cell *cells, int ncols, int row, int col)
{
    return &cells[(size_t)row * (size_t)ncols + (size_t)col];
}

/* ---- strings ---- */

const char *tt__memtl_str(const struct memtl_streamed *o, int64_t id)
{
    size_t v;
    if (!id || !tt__i64map_get(&o->strs, id, &v))
        return NULL;
    return o->text.buf + (v >> 4);
}

/* the PH_* flags of string id (-1: no such string) */
static int str_flags(const struct memtl_streamed *o, int64_t id)
{
    size_t v;
    return tt__i64map_get(&o->strs, id, &v) ? (int)(v & 15) : -1;
}

static int on_string(struct mstream *st, const tt__cell *id, const tt__cell *s, const char *text)
{
    struct memtl_streamed *o = st->out;
    size_t at = o->text.len;
    unsigned f;
    int rc;
    if (id->type != TT_CELL_INT || s->type != TT_CELL_TEXT)
        return 0;
    if ((rc = tt__flt_string(st->fl, id->i, text + s->i, s->len)) < 0)
        return rc;
    if (tt_buf_add(&o->text, text + s->i, s->len) < 0 || tt_buf_addch(&o->text, '\0') < 0)
        return tt__oom();
    f = tt__memtl_flags_of(o->text.buf + at, 0);
    return tt__i64map_put(&o->strs, id->i, at << 4 | f) < 0 ? tt__oom() : 0;
}

/* ---- threads ---- */

/* a cell's integer, as SQLite reads one of a column of integers (a text:
 * its leading number) */
static int64_t cell_int(const tt__cell *c, const char *text)
{
    char tmp[32];
    size_t n;
    if (c->type == TT_CELL_INT)
        return c->i;
    if (c->type != TT_CELL_TEXT)
        return 0;
    n = c->len < sizeof(tmp) - 1 ? c->len : sizeof(tmp) - 1;
    memcpy(tmp, text + c->i, n);
    tmp[n] = '\0';
    return strtoll(tmp, NULL, 10);
}

static uint64_t key_hash(const tt__cell *c, const char *text)
{
    uint64_t h = (uint64_t)c->type * 0x9E3779B97F4A7C15ULL;
    size_t k;
    if (c->type == TT_CELL_INT)
        return tt_mix64(h ^ (uint64_t)c->i);
    if (c->type == TT_CELL_TEXT)
        for (k = 0; k < c->len; k++)
            h = (h ^ (unsigned char)text[c->i + (int64_t)k]) * 0x100000001B3ULL;
    return tt_mix64(h);
}

static int key_eq(const struct tkey *k, const tt__cell *c, const char *text)
{
    if (k->type != c->type)
        return 0;
    if (c->type == TT_CELL_INT)
        return k->i == c->i;
    if (c->type == TT_CELL_TEXT)
        return strlen(k->s) == c->len && !memcmp(k->s, text + c->i, c->len);
    return 1;
}

static int key_set(struct tkey *k, const tt__cell *c, const char *text)
{
    k->type = c->type;
    k->i = c->type == TT_CELL_INT ? c->i : 0;
    if (c->type == TT_CELL_TEXT && !(k->s = strndup(text + c->i, c->len)))
        return tt__oom();
    return 0;
}

/* the thread (pid, tid); NULL on TT_ENOMEM */
static struct sthread *thread_of(struct mstream *st, const tt__cell *pid, const tt__cell *tid,
                                 const char *text)
{
    uint64_t h = tt_mix64(key_hash(pid, text) * 31 + key_hash(tid, text));
    size_t i;
    struct sthread *t;
    /* a hash taken by another thread: the next one */
    for (; tt__i64map_get(&st->thmap, (int64_t)h, &i); h++)
        if (key_eq(&st->th[i].pid, pid, text) && key_eq(&st->th[i].tid, tid, text))
            return &st->th[i];
    if (TT_ALLOC_GROW(st->th, st->nth + 1, st->ath) < 0 ||
        tt__i64map_put(&st->thmap, (int64_t)h, st->nth) < 0) {
        tt__oom();
        return NULL;
    }
    t = &st->th[st->nth++];
    memset(t, 0, sizeof(*t));
    if (key_set(&t->pid, pid, text) < 0 || key_set(&t->tid, tid, text) < 0)
        return NULL;
    return t;
}

/* ---- ops ---- */

static int flush_ops(struct mstream *st)
{
    if (st->nbuf && fwrite(st->buf, sizeof(st->buf[0]), st->nbuf, st->ops) != st->nbuf)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    st->nbuf = 0;
    return 0;
}

/* an op: onto the temporary file when the walk can use it */
static int on_slice(struct mstream *st, const tt__cell *c, int ncols, int r, const char *text)
{
    const tt__cell *id = row_cell(c, ncols, r, TT_C_SL_ID), *ts = row_cell(c, ncols, r, TT_C_SL_TS);
    const tt__cell *pid = row_cell(c, ncols, r, TT_C_SL_PID), *tid = row_cell(c, ncols, r, TT_C_SL_TID);
    const tt__cell *name = row_cell(c, ncols, r, TT_C_SL_NAME), *dur = row_cell(c, ncols, r, TT_C_SL_DUR);
    const tt__cell *seq = row_cell(c, ncols, r, TT_C_SL_SEQ_NR);
    const tt__cell *fwd = row_cell(c, ncols, r, TT_C_SL_FWD_TID);
    const tt__cell *ph = row_cell(c, ncols, r, TT_C_SL_PH);
    struct sthread *t;
    struct srec *s;
    int f;
    if (dur->type == TT_CELL_NULL && ph->type == TT_CELL_TEXT && ph->len == 1 && text[ph->i] == 'B')
        st->open_b = 1;
    /* no time, a name that is not a string, a thread that is not there
     * (the memory events never have a null tid): not an op of the walk */
    if (ts->type != TT_CELL_INT || name->type != TT_CELL_INT || tid->type == TT_CELL_NULL ||
        (f = str_flags(st->out, name->i)) < 0)
        return 0;
    if (!(t = thread_of(st, pid, tid, text)))
        return TT_ENOMEM;
    s = &st->buf[st->nbuf++];
    s->id = cell_int(id, text);
    s->ts = ts->i;
    s->end = ts->i + cell_int(dur, text);
    s->name = name->i;
    s->th = (uint32_t)(t - st->th);
    s->flags = (uint32_t)f;
    if (seq->type != TT_CELL_NULL && cell_int(fwd, text) > 0)
        s->flags |= PH_BACKWARD;
    if (st->fl) /* the filters: carried by the walk to what it encloses */
        s->flags |= (tt__flt_name(st->fl, name->i) ? PH_FLT_NAME : 0) |
                    (tt__flt_under_name(st->fl, name->i) ? PH_FLT_UNDER : 0);
    return st->nbuf == sizeof(st->buf) / sizeof(st->buf[0]) ? flush_ops(st) : 0;
}

/* a slice's parent (memtimeline FILE --et) */
static int on_parent(struct memtl_streamed *o, const tt__cell *c, int ncols, int r,
                     const char *text)
{
    int64_t id = cell_int(row_cell(c, ncols, r, TT_C_SL_ID), text);
    const tt__cell *par = row_cell(c, ncols, r, TT_C_SL_PARENT_ID);
    size_t cap = o->nparent;
    if (id <= 0 || id > INT32_MAX)
        return 0; /* never from the stream's numbering */
    if ((size_t)id > cap) {
        int64_t *v;
        while (cap < (size_t)id)
            cap = cap ? 2 * cap : 4096;
        if (!(v = realloc(o->parent, cap * sizeof(*v))))
            return tt__oom();
        memset(v + o->nparent, 0, (cap - o->nparent) * sizeof(*v));
        o->parent = v;
        o->nparent = cap;
    }
    o->parent[id - 1] = par->type == TT_CELL_NULL ? 0 : cell_int(par, text);
    return 0;
}

/* ---- [memory] events ---- */

/* the index of device (type, id) in out->dev, added when new */
static int device_of(struct memtl_streamed *o, int dtype, int64_t did, size_t *k)
{
    for (*k = 0; *k < o->ndev; (*k)++)
        if (o->dev[*k].dtype == dtype && o->dev[*k].did == did)
            return 0;
    if (TT_ALLOC_GROW(o->dev, o->ndev + 1, o->adev) < 0)
        return tt__oom();
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

/* a cell into *v (*has |= bit when not null) */
static void opt_int(const tt__cell *c, const char *text, int64_t *v, unsigned *has, unsigned bit)
{
    *v = cell_int(c, text);
    if (c->type != TT_CELL_NULL)
        *has |= bit;
}

/* a [memory] event of device dev with a time: onto the spill when it has
 * a size, in its device's runs */
static int spill_memory(struct mstream *st, const tt__cell *c, int ncols, int r, const char *text,
                        int64_t id, size_t dev, int64_t ts)
{
    struct memtl_streamed *o = st->out;
    struct memtl_devscan *d = &o->dev[dev];
    struct memrec m;
    unsigned has = 0, size = 0;
    memset(&m, 0, sizeof(m));
    opt_int(row_cell(c, ncols, r, TT_C_MEM_BYTES), text, &m.bytes, &size, 1);
    if (!size)
        return 0; /* no size: not an event of the passes */
    opt_int(row_cell(c, ncols, r, TT_C_MEM_ADDR), text, &m.addr, &has, EV_ADDR);
    opt_int(row_cell(c, ncols, r, TT_C_MEM_TOTAL_ALLOCATED), text, &m.ta, &has, EV_TA);
    opt_int(row_cell(c, ncols, r, TT_C_MEM_TOTAL_RESERVED), text, &m.tr, &has, EV_TR);
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

/* a [memory] event: counted for its device, onto its thread's list and
 * the spill */
static int on_memory(struct mstream *st, const tt__cell *c, int ncols, int r, const char *text)
{
    const tt__cell *ts = row_cell(c, ncols, r, TT_C_MEM_TS), *pid = row_cell(c, ncols, r, TT_C_MEM_PID);
    const tt__cell *tid = row_cell(c, ncols, r, TT_C_MEM_TID);
    const tt__cell *dt = row_cell(c, ncols, r, TT_C_MEM_DEVICE_TYPE);
    const tt__cell *di = row_cell(c, ncols, r, TT_C_MEM_DEVICE_ID);
    int64_t id = ++st->nmemrows;
    struct sthread *t;
    struct mev *m;
    size_t dev = 0;
    int rc;
    if (dt->type == TT_CELL_NULL)
        return 0; /* no device: not an event of any timeline */
    if ((rc = device_of(st->out, (int)cell_int(dt, text),
                        di->type == TT_CELL_NULL ? -1 : cell_int(di, text), &dev)) < 0)
        return rc;
    st->out->dev[dev].nall++;
    if (ts->type == TT_CELL_NULL)
        return 0; /* no time: no context */
    if (!(t = thread_of(st, pid, tid, text)))
        return TT_ENOMEM;
    if (TT_ALLOC_GROW(t->mem, t->nmem + 1, t->amem) < 0)
        return tt__oom();
    m = &t->mem[t->nmem++];
    m->id = id;
    m->ts = cell_int(ts, text);
    m->dev = dev;
    if (t->nmem > 1 && m->ts < m[-1].ts)
        t->mem_unsorted = 1;
    return spill_memory(st, c, ncols, r, text, id, dev, m->ts);
}

/* a row of torch's raw export */
static int on_raw(struct mstream *st, const tt__cell *c, int ncols, int r, const char *text)
{
    struct memtl_streamed *o = st->out;
    const tt__cell *ts = row_cell(c, ncols, r, TT_C_MT_TS);
    const tt__cell *cat = row_cell(c, ncols, r, TT_C_MT_CATEGORY);
    struct memtl_rawrow *w;
    if (TT_ALLOC_GROW(o->raw, o->nraw + 1, o->araw) < 0)
        return tt__oom();
    w = &o->raw[o->nraw++];
    w->ts = cell_int(ts, text);
    w->action = cell_int(row_cell(c, ncols, r, TT_C_MT_ACTION), text);
    w->bytes = cell_int(row_cell(c, ncols, r, TT_C_MT_BYTES), text);
    w->cat = cat->type == TT_CELL_NULL ? 7 /* torch's Unknown */ : cell_int(cat, text);
    /* min(ts) of the positive times, max(ts) of all */
    if (ts->type != TT_CELL_NULL) {
        if (w->ts > 0 && (!o->raw_min || w->ts < o->raw_min))
            o->raw_min = w->ts;
        if (!o->have_raw_max || w->ts > o->raw_max)
            o->raw_max = w->ts;
        o->have_raw_max = 1;
    }
    return 0;
}

static int sink_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                     const char *text)
{
    struct mstream *st = ctx;
    int r, rc = 0;
    for (r = 0; r < nrows && rc == 0; r++) {
        if (table == TT_ROWS_STR)
            rc = on_string(st, row_cell(cells, ncols, r, TT_C_STR_ID),
                           row_cell(cells, ncols, r, TT_C_STR_S), text);
        else if (table == TT_ROWS_SLICE && (rc = on_slice(st, cells, ncols, r, text)) == 0 &&
                 st->out->want_parents)
            rc = on_parent(st->out, cells, ncols, r, text);
        else if (table == TT_ROWS_MEMORY)
            rc = on_memory(st, cells, ncols, r, text);
        else if (table == TT_ROWS_MEMTL)
            rc = on_raw(st, cells, ncols, r, text);
    }
    return rc;
}

/* ---- pass 1: the walk ---- */

/* the thread's events before time ts (all: every one left) */
static void drain(struct mstream *st, struct sthread *t, int64_t ts, int all)
{
    while (t->next < t->nmem && (all || t->mem[t->next].ts < ts)) {
        const struct mev *m = &t->mem[t->next++];
        tt__memtl_walk_pop(&t->w, m->ts);
        tt__memtl_store_context(&st->out->cs, &st->out->dev[m->dev].sc, m->id, m->ts, &t->w);
    }
}

static int walk_op(struct mstream *st, struct sthread *t, const struct srec *s)
{
    drain(st, t, s->ts, 0);
    tt__memtl_walk_pop(&t->w, s->ts);
    return tt__memtl_walk_push(&t->w, s->id, s->end, s->flags, s->name);
}

/* the op in the walk's order on its thread (time, then the longer op
 * first)? Else its thread is disordered. */
static int in_order(struct sthread *t, const struct srec *s)
{
    int64_t dur = s->end - s->ts;
    if (t->any && (s->ts < t->last_ts || (s->ts == t->last_ts && dur > t->last_dur)))
        return 0;
    t->any = 1;
    t->last_ts = s->ts;
    t->last_dur = dur;
    return 1;
}

static int by_time_id(const void *pa, const void *pb)
{
    const struct mev *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int by_thread_walk(const void *pa, const void *pb)
{
    const struct srec *a = pa, *b = pb;
    int64_t da = a->end - a->ts, db = b->end - b->ts;
    if (a->th != b->th)
        return a->th < b->th ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (da != db)
        return da > db ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* read the ops file from the start: each record to fn; 0 or an error */
static int scan_ops(struct mstream *st, int (*fn)(struct mstream *, const struct srec *, void *),
                    void *ctx)
{
    size_t i, n;
    int rc;
    if (fseek(st->ops, 0, SEEK_SET) != 0)
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    while ((n = fread(st->buf, sizeof(st->buf[0]), sizeof(st->buf) / sizeof(st->buf[0]),
                      st->ops)) > 0)
        for (i = 0; i < n; i++)
            if ((rc = fn(st, &st->buf[i], ctx)) != 0)
                return rc;
    if (ferror(st->ops))
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    return 0;
}

/* first scan: which threads are disordered, how many ops they have */
static int scan_order(struct mstream *st, const struct srec *s, void *ctx)
{
    struct sthread *t = &st->th[s->th];
    (void)ctx;
    if (!t->nmem)
        return 0;
    if (!t->disordered && !in_order(t, s))
        t->disordered = 1;
    return 0;
}

struct sorted_ops {
    struct srec *v;
    size_t n, cap;
};

/* second scan: the ordered threads walked, the others' ops kept */
static int scan_walk(struct mstream *st, const struct srec *s, void *ctx)
{
    struct sthread *t = &st->th[s->th];
    struct sorted_ops *so = ctx;
    if (!t->nmem)
        return 0;
    if (!t->disordered)
        return walk_op(st, t, s);
    if (TT_ALLOC_GROW(so->v, so->n + 1, so->cap) < 0)
        return tt__oom();
    so->v[so->n++] = *s;
    return 0;
}

/* pass 1 over the file of ops, once every row is in */
static int stream_finish(struct mstream *st)
{
    struct ctxstore *cs = &st->out->cs;
    struct sorted_ops so = { NULL, 0, 0 };
    size_t i, ndis = 0;
    int rc;
    if ((rc = flush_ops(st)) < 0 || (rc = flush_mem(st)) < 0)
        return rc;
    if (fflush(st->out->spill) != 0 || fflush(st->ops) != 0)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    if (st->nmemrows) {
        cs->lo = 1;
        cs->n = (size_t)st->nmemrows;
        if (!(cs->v = calloc(cs->n, sizeof(*cs->v))))
            return tt__oom();
    }
    for (i = 0; i < st->nth; i++)
        if (st->th[i].mem_unsorted) {
            tt__log(TT_LOG_DEBUG, "memtimeline", "a thread's [memory] events sorted by time");
            TT_QSORT(st->th[i].mem, st->th[i].nmem, sizeof(*st->th[i].mem), by_time_id);
        }
    if ((rc = scan_ops(st, scan_order, NULL)) != 0)
        return rc;
    for (i = 0; i < st->nth; i++)
        ndis += st->th[i].disordered != 0;
    if (ndis)
        tt__log(TT_LOG_DEBUG, "memtimeline", "the ops of %zu thread%s sorted (out of time order)",
                ndis, ndis == 1 ? "" : "s");
    if ((rc = scan_ops(st, scan_walk, &so)) != 0)
        goto out;
    if (so.n)
        TT_QSORT(so.v, so.n, sizeof(*so.v), by_thread_walk);
    for (i = 0; i < so.n; i++)
        if ((rc = walk_op(st, &st->th[so.v[i].th], &so.v[i])) != 0)
            goto out;
    for (i = 0; i < st->nth; i++)
        drain(st, &st->th[i], 0, 1);
out:
    free(so.v);
    return rc;
}

static void stream_release(struct mstream *st)
{
    size_t i;
    if (st->ops)
        fclose(st->ops);
    for (i = 0; i < st->nth; i++) {
        free(st->th[i].mem);
        free(st->th[i].w.stack);
        free(st->th[i].pid.s);
        free(st->th[i].tid.s);
    }
    free(st->th);
    tt__i64map_free(&st->thmap);
}

void tt__memtl_streamed_free(struct memtl_streamed *o)
{
    if (o->spill)
        fclose(o->spill);
    free(o->cs.v);
    free(o->dev);
    free(o->raw);
    free(o->parent);
    tt__i64map_free(&o->strs);
    tt_buf_release(&o->text);
    free(o->label);
    memset(o, 0, sizeof(*o));
}

/* baseTimeNanoseconds of the trace's top-level keys (0 when absent), as the
 * ingest stores it */
static int64_t base_time(const char *metadata)
{
    tt_kineto_meta m;
    tt_arena a = TT_ARENA_INIT;
    tt_jp jp;
    const char *key;
    size_t klen;
    int64_t base;
    if (!metadata)
        return 0;
    memset(&m, 0, sizeof(m));
    tt_jp_init(&jp, "", metadata, 0, metadata, strlen(metadata));
    if (tt_jp_object_begin(&jp) == 0) {
        while (tt_jp_object_next(&jp, &a, &key, &klen) == 1) {
            int64_t at = tt_jp_offset(&jp);
            if (tt_jp_skip(&jp) < 0)
                break;
            if (klen == 19 && !memcmp(key, "baseTimeNanoseconds", 19))
                tt_kineto_meta_key(&m, "baseTimeNanoseconds", metadata + at,
                                   (size_t)(tt_jp_offset(&jp) - at));
        }
    }
    base = m.have_base ? m.base_time_ns : 0;
    tt_kineto_meta_release(&m);
    tt_arena_release(&a);
    return base;
}

/* the consumer's state (out zeroed first) and its sink */
/* the cells sink_rows reads: a database leaves the others out */
static const uint64_t memtl_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_PH) | TT_COL(TT_C_SL_NAME) |
                      TT_COL(TT_C_SL_PID) | TT_COL(TT_C_SL_TID) | TT_COL(TT_C_SL_TS) |
                      TT_COL(TT_C_SL_DUR) | TT_COL(TT_C_SL_SEQ_NR) | TT_COL(TT_C_SL_FWD_TID) |
                      TT_COL(TT_C_SL_PARENT_ID),
    [TT_ROWS_MEMORY] = TT_COL(TT_C_MEM_ADDR) | TT_COL(TT_C_MEM_BYTES) |
                       TT_COL(TT_C_MEM_DEVICE_ID) | TT_COL(TT_C_MEM_DEVICE_TYPE) |
                       TT_COL(TT_C_MEM_PID) | TT_COL(TT_C_MEM_TID) |
                       TT_COL(TT_C_MEM_TOTAL_ALLOCATED) | TT_COL(TT_C_MEM_TOTAL_RESERVED) |
                       TT_COL(TT_C_MEM_TS),
    [TT_ROWS_MEMTL] = TT_COL(TT_C_MT_ACTION) | TT_COL(TT_C_MT_BYTES) |
                      TT_COL(TT_C_MT_CATEGORY) | TT_COL(TT_C_MT_TS),
};

static int stream_open(struct mstream *st, struct memtl_streamed *out, tt__rowsink *sink,
                       tt__flt *fl)
{
    memset(st, 0, sizeof(*st));
    memset(out, 0, sizeof(*out));
    tt_buf_init(&out->text);
    st->out = out;
    st->fl = fl;
    out->fl = fl;
    tt__flt_reset(fl); /* its strings start again */
    memset(sink, 0, sizeof(*sink));
    sink->ctx = st;
    sink->rows = sink_rows;
    sink->cols = memtl_cols;
    if (!(out->spill = tt__tmpfile()) || !(st->ops = tt__tmpfile()))
        return tt_error_last()->code ? tt_error_last()->code : TT_EIO;
    return 0;
}

/* what every source fills in after its rows */
static int stream_close(struct mstream *st, const tt__rows_result *res, int rc)
{
    struct memtl_streamed *o = st->out;
    if (rc == 0 && (rc = stream_finish(st)) == 0) {
        o->format = res->format;
        o->have_rank = res->have_rank;
        o->rank = res->rank;
        o->base_ns = base_time(res->metadata);
    }
    stream_release(st);
    if (rc != 0)
        tt__memtl_streamed_free(o);
    return rc;
}

/* the tables the timeline reads none of */
#define MEMTL_SKIP                                                                     \
    (1u << TT_ROWS_RUNTIME | 1u << TT_ROWS_GPU | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | \
     1u << TT_ROWS_META | 1u << TT_ROWS_ET)

int tt__memtl_read_db(tt_db *db, int64_t trace, tt__flt *fl, struct memtl_streamed *out)
{
    struct mstream st;
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    int rc;
    memset(&res, 0, sizeof(res));
    if ((rc = stream_open(&st, out, &sink, fl)) == 0)
        rc = tt__db_rows(db, trace, &sink, MEMTL_SKIP | TT_ROWS_NO_ARGS, &res);
    rc = stream_close(&st, &res, rc);
    free(res.metadata);
    return rc;
}

/* one file (path: where to read it); parents: keep each slice's parent too */
static int read_file(const char *path, tt__flt *fl, struct memtl_streamed *out, int parents)
{
    struct mstream st;
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    unsigned relink = 0;
    int rc;
again:
    memset(&res, 0, sizeof(res));
    if ((rc = stream_open(&st, out, &sink, fl)) == 0) {
        out->want_parents = parents;
        rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, MEMTL_SKIP | TT_ROWS_NO_STOP | relink,
                             &res);
    }
    /*
     * Of what needs the SQL passes, only a 'B' slice closed after its row
     * was handed over (its dur) matters to the walk (such a row has no dur,
     * as a 'B' never closed has), and to --et the parents of threads out of
     * order: then the file is read again, twice, as those passes leave it.
     */
    if (rc == 0 && !relink &&
        ((parents && (res.needs_db || res.disordered_threads)) || (res.needs_db && st.open_b))) {
        tt__log(TT_LOG_DEBUG, "memtimeline", "read twice: %s",
                res.needs_db && res.why_db ? res.why_db : "threads out of order");
        stream_close(&st, &res, TT_ECANCELED);
        free(res.metadata);
        tt_error_clear();
        relink = TT_ROWS_RELINK;
        goto again;
    }
    rc = stream_close(&st, &res, rc);
    free(res.metadata);
    if (rc == 0 && !relink)
        tt__log(TT_LOG_DEBUG, "memtimeline", "read from the file's rows");
    return rc;
}

static int read_spooled(const char *path, tt__flt *fl, struct memtl_streamed *out, int parents)
{
    tt__spool sp;
    const char *rd;
    /* standard input or a pipe: from a copy, which a second reading may need */
    int rc = tt__spool_input(&sp, path, &rd);
    if (rc == 0)
        rc = read_file(rd, fl, out, parents);
    return tt__spool_end(&sp, path, rc);
}

int tt__memtl_read_file(const char *path, tt__flt *fl, struct memtl_streamed *out)
{
    return read_spooled(path, fl, out, 0);
}

int tt__memtl_read_file_parents(const char *path, tt__flt *fl, struct memtl_streamed *out)
{
    return read_spooled(path, fl, out, 1);
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

/* the filters as the device's events load (tt__memtl_load_filtered) */
struct mflt {
    tt__flt *fl;
    int blocks;        /* --name or --under: blocks chosen by their allocation */
    struct i64map blk; /* address -> 1 + its live allocation's verdict (0: none) */
    struct addr_synth syn; /* the addresses of events without one, made here */
};

/* whether event ev (its context in cs) is kept: its block's allocation
 * is inside an op --name finds and one --under matches, and it is in
 * --time-range; a free takes its allocation's verdict, one without (a
 * block from before the trace) or an event without an address its own */
static int mflt_keep(struct mflt *mf, const struct ctxstore *cs, struct memev *ev)
{
    size_t v = 0;
    int sel, own;
    unsigned has, need = 0;
    if (!mf || !mf->fl)
        return 1;
    if (!(ev->has & EV_ADDR)) {
        /* made up now, over every event, as the later passes would: a free
         * then finds its allocation whatever the filters keep */
        if (tt__memtl_addr(&mf->syn, 0, 0, ev->bytes, &ev->addr) < 0)
            return tt__oom();
        ev->has |= EV_ADDR;
    }
    has = ev->has;
    if (mf->blocks) {
        need = (tt__flt_spec(mf->fl)->name ? PH_FLT_NAME : 0) |
               (tt__flt_spec(mf->fl)->under ? PH_FLT_UNDER : 0);
        own = (tt__memtl_ctx(cs, ev->id)->flags & need) == need;
        ev->has &= ~(unsigned)(EV_TA | EV_TR); /* the allocator's totals count every block */
        sel = own;
        if ((has & EV_ADDR) && ev->bytes > 0) {
            if (tt__i64map_put(&mf->blk, ev->addr, (size_t)(1 + own)) < 0)
                return tt__oom();
        } else if ((has & EV_ADDR) && ev->bytes < 0 && tt__i64map_get(&mf->blk, ev->addr, &v) &&
                   v) {
            sel = (int)v - 1;
            if (tt__i64map_put(&mf->blk, ev->addr, 0) < 0)
                return tt__oom();
        }
        if (!sel)
            return 0;
    }
    return tt__flt_time(mf->fl, ev->ts);
}

static int spill_rec(const struct memrec *m, const struct ctxstore *cs, const struct i64map *et,
                     struct evspill *sp, struct mflt *mf)
{
    struct memev ev;
    int keep;
    memset(&ev, 0, sizeof(ev));
    ev.id = m->id;
    ev.ts = m->ts;
    ev.addr = m->addr;
    ev.bytes = m->bytes;
    ev.ta = m->ta;
    ev.tr = m->tr;
    ev.has = m->has;
    if ((keep = mflt_keep(mf, cs, &ev)) <= 0)
        return keep;
    return tt__memtl_spill_event(&ev, cs, et, sp);
}

/* the runs of the device merged by (time, id) */
static int merge_runs(const struct memtl_streamed *pre, size_t dev, struct spcur *cur,
                      const struct ctxstore *cs, const struct i64map *et, struct evspill *sp,
                      struct mflt *mf)
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
        for (k = 0; k < d->nruns; k++)
            if (head[k] && (best < 0 || head[k]->ts < head[best]->ts ||
                            (head[k]->ts == head[best]->ts && head[k]->id < head[best]->id)))
                best = k;
        if (best < 0)
            return 0;
        if ((rc = spill_rec(head[best], cs, et, sp, mf)) < 0)
            return rc;
        if ((rc = spcur_next(fd, &cur[best], (uint32_t)dev, &head[best])) < 0)
            return rc;
        if (rc == 0)
            head[best] = NULL;
    }
}

static int rec_by_time_id(const void *pa, const void *pb)
{
    const struct memrec *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* too many runs to merge: the device's records read whole and sorted */
static int sort_all(const struct memtl_streamed *pre, size_t dev, struct spcur *cur,
                    const struct ctxstore *cs, const struct i64map *et, struct evspill *sp,
                    struct mflt *mf)
{
    const struct memtl_devscan *d = &pre->dev[dev];
    const struct memrec *m = NULL;
    struct memrec *v = malloc(((size_t)d->nrec + 1) * sizeof(*v));
    size_t n = 0, i;
    int rc;
    if (!v)
        return tt__oom();
    tt__log(TT_LOG_DEBUG, "memtimeline", "the device's [memory] events sorted by time");
    cur->n = cur->pos = cur->at = 0;
    cur->end = pre->nrec;
    while ((rc = spcur_next(fileno(pre->spill), cur, (uint32_t)dev, &m)) == 1 &&
           n < (size_t)d->nrec)
        v[n++] = *m;
    if (rc >= 0) {
        TT_QSORT(v, n, sizeof(*v), rec_by_time_id);
        for (i = 0, rc = 0; i < n && rc == 0; i++)
            rc = spill_rec(&v[i], cs, et, sp, mf);
    }
    free(v);
    return rc;
}

int tt__memtl_load_filtered(const struct memtl_streamed *pre, size_t dev,
                            const struct ctxstore *cs, const struct i64map *et,
                            struct evspill *sp, tt__flt *fl)
{
    int nruns = pre->dev[dev].nruns;
    struct spcur *cur;
    struct mflt mf;
    int rc;
    memset(sp, 0, sizeof(*sp));
    memset(&mf, 0, sizeof(mf));
    mf.fl = fl;
    mf.blocks = tt__flt_spec(fl) && (tt__flt_spec(fl)->name || tt__flt_spec(fl)->under);
    if (!(sp->f = tt__tmpfile()))
        return tt_error_last()->code ? tt_error_last()->code : TT_EIO;
    if (!(cur = malloc(sizeof(*cur) * (size_t)(nruns > 0 ? nruns : 1))))
        return tt__oom();
    rc = nruns < 0 ? sort_all(pre, dev, cur, cs, et, sp, &mf)
                   : merge_runs(pre, dev, cur, cs, et, sp, &mf);
    free(cur);
    tt__i64map_free(&mf.blk);
    tt__memtl_addr_free(&mf.syn);
    return rc < 0 ? rc : tt__memtl_spill_done(sp);
}

int tt__memtl_load_streamed(const struct memtl_streamed *pre, size_t dev, const struct ctxstore *cs,
                            const struct i64map *et, struct evspill *sp)
{
    return tt__memtl_load_filtered(pre, dev, cs, et, sp, NULL);
}
