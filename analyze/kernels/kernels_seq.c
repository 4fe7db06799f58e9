/*
 * analyze/kernels/kernels_seq.c - `tracetool kernels --sequences N`: the most
 * frequent sequences of GPU activities (kernels, memcpys, memsets) of one
 * trace, candidates for fusion, as one consumer of the record stream
 * (store/ingest_rows.h), from a file or a database alike.
 *
 * Two definitions (tracetool/kernels.h, seq_op):
 * - on streams (no op named): every run of N consecutive activities of a
 *   (device, stream) in start order, counted by their names; GPU time is
 *   the sum of the N durations, CPU time the sum of the durations of the
 *   runtime calls that launched them, and the ops are those of the first
 *   occurrence.
 * - under an op (HTA's get_frequent_cuda_kernel_sequences): the roots are
 *   the CPU slices whose name contains seq_op and that no other such slice
 *   of their thread encloses; a root's sequence is its name and the names
 *   of the activities it launched (their runtime call lies in a CPU op that
 *   is the root or inside it: gpu_ops.op_id), in start order, counted when
 *   there are at least N; GPU time is the sum of their durations, CPU time
 *   the sum of the roots' durations.
 *
 * Nothing grows with the trace but the strings and the distinct sequences:
 * the rows are spilled (common/spill.h: bounded memory, the rest in a
 * temporary file) and joined by sorted merges when the trace is over
 * (activity -> runtime call by id; activity -> op by id -> root by thread
 * and interval), so the order in which the tables come does not matter.
 * Both keep the time range of options.filter: an activity by its runtime
 * call's start (its own without one), a root by its start. --name and
 * --under (options version >= 4) keep the activities whose name matches /
 * that were launched under the op (analyze/filter/filtering.h: a filtering
 * sink in front of this one): the others are not there at all, so a
 * sequence is a run of activities that pass; the roots are not filtered by
 * them.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/tmath.h"
#include "common/i64map.h"
#include "common/spill.h"
#include "common/log.h"
#include "analyze/filter/filtering.h"
#include "analyze/kernels/kernels_state.h"
#include "formats/spool.h"
#include "store/db_internal.h"

#include <inttypes.h>

#define NO_OP_NAME "[no CPU op]"

/* ---- the records spilled ---- */

/* a GPU activity as read: streams (sorted by rt) or under an op (by op) */
struct sq_act {
    int64_t dev, stream, ts, dur, name, opname, rt, op, seq;
};

/* a runtime call: its id and duration */
struct sq_rt {
    int64_t id, dur;
};

/* streams: an activity with its call's duration, by (dev, stream, ts) */
struct sq_w {
    int64_t dev, stream, ts, seq, dur, name, opname, rtdur;
};

/* a CPU slice: a root candidate (its name matches) or an op (by id) */
struct sq_sl {
    int64_t pid, tid, ts, end, dur, name, id;
};

/* under an op: an activity placed by its op's thread and interval */
struct sq_k {
    int64_t pid, tid, ots, oend, ts, seq, dur, name;
};

/* under an op: an activity of root `root`, by (root, ts) */
struct sq_rk {
    int64_t root, ts, seq, dur, name;
};

#define CMP(a, b) \
    if ((a) != (b)) \
    return (a) < (b) ? -1 : 1

static int cmp_act_rt(const void *a, const void *b)
{
    const struct sq_act *x = a, *y = b;
    CMP(x->rt, y->rt);
    CMP(x->seq, y->seq);
    return 0;
}

static int cmp_act_op(const void *a, const void *b)
{
    const struct sq_act *x = a, *y = b;
    CMP(x->op, y->op);
    CMP(x->seq, y->seq);
    return 0;
}

static int cmp_rt(const void *a, const void *b)
{
    const struct sq_rt *x = a, *y = b;
    CMP(x->id, y->id);
    return 0;
}

static int cmp_w(const void *a, const void *b)
{
    const struct sq_w *x = a, *y = b;
    CMP(x->dev, y->dev);
    CMP(x->stream, y->stream);
    CMP(x->ts, y->ts);
    CMP(x->seq, y->seq);
    return 0;
}

/* candidates: by thread, start, the longest first */
static int cmp_cand(const void *a, const void *b)
{
    const struct sq_sl *x = a, *y = b;
    CMP(x->pid, y->pid);
    CMP(x->tid, y->tid);
    CMP(x->ts, y->ts);
    CMP(y->end, x->end);
    CMP(x->id, y->id);
    return 0;
}

static int cmp_sl_id(const void *a, const void *b)
{
    const struct sq_sl *x = a, *y = b;
    CMP(x->id, y->id);
    return 0;
}

static int cmp_k(const void *a, const void *b)
{
    const struct sq_k *x = a, *y = b;
    CMP(x->pid, y->pid);
    CMP(x->tid, y->tid);
    CMP(x->ots, y->ots);
    CMP(x->seq, y->seq);
    return 0;
}

static int cmp_rk(const void *a, const void *b)
{
    const struct sq_rk *x = a, *y = b;
    CMP(x->root, y->root);
    CMP(x->ts, y->ts);
    CMP(x->seq, y->seq);
    return 0;
}

/* ---- the distinct sequences ---- */

struct sq_pat {
    uint64_t h;
    size_t key, n;       /* name ids: pool[key .. key + n) */
    size_t ops;          /* streams: the first occurrence's op names, pool[ops .. ops + n) */
    int64_t first_ts, first_seq; /* streams: where the first occurrence starts */
    int64_t count, gpu, cpu;
};

struct sq_map {
    struct sq_pat *p;
    size_t np, ap;
    size_t *slot;        /* hash -> index + 1 */
    size_t nslot;
    int64_t *pool;
    size_t npool, apool;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    while (n--)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static uint64_t hash_ids(const int64_t *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int pool_add(struct sq_map *m, const int64_t *v, size_t n, size_t *at)
{
    if (TT_ALLOC_GROW(m->pool, m->npool + n + 1, m->apool) < 0)
        return tt__oom();
    *at = m->npool;
    if (n)
        memcpy(m->pool + m->npool, v, n * sizeof(*v));
    m->npool += n;
    return 0;
}

static int map_rehash(struct sq_map *m)
{
    size_t cap = m->nslot ? 2 * m->nslot : 256, i, k;
    size_t *sl = calloc(cap, sizeof(*sl));
    if (!sl)
        return tt__oom();
    for (i = 0; i < m->np; i++) {
        k = (size_t)m->p[i].h & (cap - 1);
        while (sl[k])
            k = (k + 1) & (cap - 1);
        sl[k] = i + 1;
    }
    free(m->slot);
    m->slot = sl;
    m->nslot = cap;
    return 0;
}

/* the sequence key[0..n) (new: its ops, when given, kept with it) into *out
 * (*added 1 when new) */
static int map_find(struct sq_map *m, const int64_t *key, size_t n, const int64_t *ops,
                    struct sq_pat **out, int *added)
{
    uint64_t h = hash_ids(key, n);
    size_t k;
    struct sq_pat *p;
    int rc;
    *added = 0;
    if (2 * (m->np + 1) > m->nslot && (rc = map_rehash(m)) < 0)
        return rc;
    for (k = (size_t)h & (m->nslot - 1); m->slot[k]; k = (k + 1) & (m->nslot - 1)) {
        p = &m->p[m->slot[k] - 1];
        if (p->h == h && p->n == n && !memcmp(m->pool + p->key, key, n * sizeof(*key))) {
            *out = p;
            return 0;
        }
    }
    if (TT_ALLOC_GROW(m->p, m->np + 1, m->ap) < 0)
        return tt__oom();
    p = &m->p[m->np];
    memset(p, 0, sizeof(*p));
    p->h = h;
    p->n = n;
    if ((rc = pool_add(m, key, n, &p->key)) < 0 ||
        (rc = pool_add(m, ops, ops ? n : 0, &p->ops)) < 0)
        return rc;
    m->slot[k] = ++m->np;
    *out = p;
    *added = 1;
    return 0;
}

static void map_release(struct sq_map *m)
{
    free(m->p);
    free(m->slot);
    free(m->pool);
    memset(m, 0, sizeof(*m));
}

/* ---- the consumer ---- */

struct sq_link {
    int64_t op, opname, rt, rt_ts;
};

struct sq {
    const tt_kern_options *o;
    const char *under;        /* seq_op, or NULL */
    char *text;               /* the strings, each NUL-terminated */
    size_t ntext, atext;
    struct i64map soff;       /* string id -> offset into text */
    struct i64map match;      /* under: ids of the strings that contain it */
    struct sq_link *ln;       /* links of GPU rows to come: ln[hln..nln) */
    size_t hln, nln, aln;
    int64_t seq;              /* GPU rows read */
    tt__spill *gpu, *rt, *cand, *ops;
    struct sq_map pats;
};

static const char *sq_str(const struct sq *q, int64_t id)
{
    size_t off;
    return tt__i64map_get(&q->soff, id, &off) ? q->text + off : "?";
}

static int64_t int_or(const tt__cell *c, int64_t dflt)
{
    return c->type == TT_CELL_INT ? c->i : dflt;
}

/* a pid or tid cell as a number (a text one hashed) */
static int64_t id_of(const tt__cell *c, const char *text)
{
    if (c->type == TT_CELL_TEXT) /* below every number a trace writes */
        return (int64_t)(hash_bytes(text + c->i, c->len) >> 2) - INT64_MAX;
    return int_or(c, -1);
}

static int sq_string(struct sq *q, const tt__cell *row, const char *text)
{
    const tt__cell *c = &row[TT_C_STR_S];
    size_t len = c->type == TT_CELL_TEXT ? c->len : 0;
    int64_t id = int_or(&row[TT_C_STR_ID], -1);
    if (id < 0)
        return 0;
    if (TT_ALLOC_GROW(q->text, q->ntext + len + 1, q->atext) < 0)
        return tt__oom();
    memcpy(q->text + q->ntext, text + c->i, len);
    q->text[q->ntext + len] = '\0';
    if (tt__i64map_put(&q->soff, id, q->ntext) < 0 ||
        (q->under && strstr(q->text + q->ntext, q->under) &&
         tt__i64map_put(&q->match, id, 1) < 0))
        return tt__oom();
    q->ntext += len + 1;
    return 0;
}

/* under an op: every slice by id (the ops), the matching ones as candidates */
static int sq_slice(struct sq *q, const tt__cell *row, const char *text)
{
    struct sq_sl s;
    size_t one;
    int rc;
    if (row[TT_C_SL_ID].type != TT_CELL_INT || row[TT_C_SL_TS].type != TT_CELL_INT ||
        row[TT_C_SL_DUR].type != TT_CELL_INT)
        return 0;
    memset(&s, 0, sizeof(s));
    s.pid = id_of(&row[TT_C_SL_PID], text);
    s.tid = id_of(&row[TT_C_SL_TID], text);
    s.ts = row[TT_C_SL_TS].i;
    s.dur = row[TT_C_SL_DUR].i;
    s.end = tt_sat_add(s.ts, s.dur > 0 ? s.dur : 0);
    s.name = int_or(&row[TT_C_SL_NAME], 0);
    s.id = row[TT_C_SL_ID].i;
    if ((rc = tt__spill_put(&q->ops, sizeof(s), cmp_sl_id, &s)) < 0)
        return rc;
    if (!tt__i64map_get(&q->match, s.name, &one) || !tt__filter_in_time(&q->o->filter, s.ts))
        return 0;
    return tt__spill_put(&q->cand, sizeof(s), cmp_cand, &s);
}

static int sq_runtime(struct sq *q, const tt__cell *row)
{
    struct sq_rt r;
    if (row[TT_C_RT_ID].type != TT_CELL_INT)
        return 0;
    r.id = row[TT_C_RT_ID].i;
    r.dur = int_or(&row[TT_C_RT_DUR], 0);
    return tt__spill_put(&q->rt, sizeof(r), cmp_rt, &r);
}

static int is_activity(const tt__cell *k, const char *text)
{
    const char *s = text + k->i;
    return k->type == TT_CELL_TEXT && k->len == 6 &&
           (!memcmp(s, "kernel", 6) || !memcmp(s, "memcpy", 6) || !memcmp(s, "memset", 6));
}

static int sq_gpu(struct sq *q, const tt__cell *row, const char *text)
{
    struct sq_act a;
    const struct sq_link *l;
    int64_t launch;
    if (q->hln == q->nln || q->ln[q->hln].op != int_or(&row[TT_C_GPU_OP_ID], 0) ||
        q->ln[q->hln].rt != int_or(&row[TT_C_GPU_RUNTIME_ID], 0))
        return tt_error_set(TT_ERROR, "kernels: a GPU activity came without its links");
    l = &q->ln[q->hln++];
    if (!is_activity(&row[TT_C_GPU_KIND], text) || row[TT_C_GPU_TS].type != TT_CELL_INT ||
        row[TT_C_GPU_DUR].type != TT_CELL_INT)
        return 0;
    memset(&a, 0, sizeof(a));
    a.ts = row[TT_C_GPU_TS].i;
    launch = l->rt && l->rt_ts != TT_ROWS_NO_TS ? l->rt_ts : a.ts;
    if (!tt__filter_in_time(&q->o->filter, launch) || (q->under && !l->op))
        return 0;
    a.dev = int_or(&row[TT_C_GPU_DEVICE], -1);
    a.stream = int_or(&row[TT_C_GPU_STREAM], -1);
    a.dur = row[TT_C_GPU_DUR].i;
    a.name = int_or(&row[TT_C_GPU_NAME], 0);
    a.opname = l->opname;
    a.rt = l->rt;
    a.op = l->op;
    a.seq = q->seq++;
    return tt__spill_put(&q->gpu, sizeof(a), q->under ? cmp_act_op : cmp_act_rt, &a);
}

static int sq_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct sq *q = ctx;
    struct sq_link *l;
    if (TT_ALLOC_GROW(q->ln, q->nln + 1, q->aln) < 0)
        return tt__oom();
    l = &q->ln[q->nln++];
    l->op = op;
    l->opname = name;
    l->rt = rt;
    l->rt_ts = rt_ts;
    return 0;
}

static int sq_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct sq *q = ctx;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = sq_string(q, row, text);
        else if (table == TT_ROWS_SLICE && q->under)
            rc = sq_slice(q, row, text);
        else if (table == TT_ROWS_RUNTIME && !q->under)
            rc = sq_runtime(q, row);
        else if (table == TT_ROWS_GPU)
            rc = sq_gpu(q, row, text);
    }
    if (table == TT_ROWS_GPU && q->hln) { /* the links used; those of rows to come stay */
        memmove(q->ln, q->ln + q->hln, (q->nln - q->hln) * sizeof(*q->ln));
        q->nln -= q->hln;
        q->hln = 0;
    }
    return rc;
}

static void sq_release(struct sq *q)
{
    free(q->text);
    tt__i64map_free(&q->soff);
    tt__i64map_free(&q->match);
    free(q->ln);
    tt__spill_free(q->gpu);
    tt__spill_free(q->rt);
    tt__spill_free(q->cand);
    tt__spill_free(q->ops);
    map_release(&q->pats);
    memset(q, 0, sizeof(*q));
}

static void sq_init(struct sq *q, const tt_kern_options *o)
{
    memset(q, 0, sizeof(*q));
    q->o = o;
    q->under = o->seq_op && *o->seq_op ? o->seq_op : NULL;
}

/* ---- on streams: sliding windows ---- */

/* activities by runtime id joined with the calls by id: each gets its call's
 * duration, into a spill by (device, stream, start) */
static int join_calls(struct sq *q, tt__spill **out)
{
    struct sq_act a;
    struct sq_rt c = { 0, 0 };
    struct sq_w w;
    int rc, more;
    if (!(*out = tt__spill_new(sizeof(w), cmp_w)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(q->gpu)) < 0 || (rc = tt__spill_rewind(q->rt)) < 0 ||
        (more = tt__spill_next(q->rt, &c)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(q->gpu, &a)) == 1) {
        while (more == 1 && c.id < a.rt)
            if ((more = tt__spill_next(q->rt, &c)) < 0)
                return more;
        w.dev = a.dev;
        w.stream = a.stream;
        w.ts = a.ts;
        w.seq = a.seq;
        w.dur = a.dur;
        w.name = a.name;
        w.opname = a.opname;
        w.rtdur = a.rt && more == 1 && c.id == a.rt ? c.dur : 0;
        if ((rc = tt__spill_add(*out, &w)) < 0)
            return rc;
    }
    return rc;
}

/* the last n activities of a stream (ring[(at - n + i) % n], i < n) counted */
static int window_add(struct sq *q, const struct sq_w *ring, size_t at, size_t n, int64_t *key,
                      int64_t *ops)
{
    const struct sq_w *first = &ring[at % n];
    struct sq_pat *p;
    int64_t gpu = 0, cpu = 0;
    size_t i;
    int rc, added;
    for (i = 0; i < n; i++) {
        const struct sq_w *w = &ring[(at + i) % n];
        key[i] = w->name;
        ops[i] = w->opname;
        gpu = tt_sat_add(gpu, w->dur);
        cpu = tt_sat_add(cpu, w->rtdur);
    }
    if ((rc = map_find(&q->pats, key, n, ops, &p, &added)) < 0)
        return rc;
    if (added || first->ts < p->first_ts ||
        (first->ts == p->first_ts && first->seq < p->first_seq)) {
        /* the earliest occurrence names the ops (streams come one by one) */
        memcpy(q->pats.pool + p->ops, ops, n * sizeof(*ops));
        p->first_ts = first->ts;
        p->first_seq = first->seq;
    }
    p->count++;
    p->gpu = tt_sat_add(p->gpu, gpu);
    p->cpu = tt_sat_add(p->cpu, cpu);
    return 0;
}

static int sq_windows(struct sq *q)
{
    size_t n = (size_t)q->o->seq_len, have = 0, at = 0;
    struct sq_w *ring = calloc(n, sizeof(*ring)), w;
    int64_t *key = calloc(2 * n, sizeof(*key));
    tt__spill *ws = NULL;
    int rc = ring && key ? join_calls(q, &ws) : tt__oom();
    /* what is read no more goes before the next spill fills */
    tt__spill_free(q->gpu);
    tt__spill_free(q->rt);
    q->gpu = q->rt = NULL;
    if (rc == 0)
        rc = tt__spill_rewind(ws);
    while (rc == 0 && (rc = tt__spill_next(ws, &w)) == 1) {
        const struct sq_w *last = &ring[(at + n - 1) % n];
        if (have && (last->dev != w.dev || last->stream != w.stream))
            have = 0; /* another stream */
        ring[at] = w;
        at = (at + 1) % n;
        rc = ++have >= n ? window_add(q, ring, at, n, key, key + n) : 0;
    }
    tt__spill_free(ws);
    free(ring);
    free(key);
    return rc;
}

/* ---- under an op ---- */

/* the outermost candidates of each thread, in order, into *roots (each
 * one's index: its place there) */
static int find_roots(struct sq *q, tt__spill **roots)
{
    struct sq_sl c, top;
    int rc, have = 0;
    if (!(*roots = tt__spill_new(sizeof(c), NULL)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(q->cand)) < 0)
        return rc;
    while ((rc = tt__spill_next(q->cand, &c)) == 1) {
        /* top: the kept root of this thread that ends last (it encloses c
         * when any kept one does) */
        if (have && top.pid == c.pid && top.tid == c.tid && c.end <= top.end)
            continue;
        if ((rc = tt__spill_add(*roots, &c)) < 0)
            return rc;
        if (!have || top.pid != c.pid || top.tid != c.tid || c.end > top.end)
            top = c;
        have = 1;
    }
    return rc;
}

/* activities by op id joined with the slices by id: each placed by its
 * op's thread and interval, into a spill by (thread, op start) */
static int join_ops(struct sq *q, tt__spill **out)
{
    struct sq_act a;
    struct sq_sl s;
    struct sq_k k;
    int rc, more;
    memset(&s, 0, sizeof(s));
    if (!(*out = tt__spill_new(sizeof(k), cmp_k)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(q->gpu)) < 0 || (rc = tt__spill_rewind(q->ops)) < 0 ||
        (more = tt__spill_next(q->ops, &s)) < 0)
        return rc < 0 ? rc : more;
    while ((rc = tt__spill_next(q->gpu, &a)) == 1) {
        while (more == 1 && s.id < a.op)
            if ((more = tt__spill_next(q->ops, &s)) < 0)
                return more;
        if (more != 1 || s.id != a.op)
            continue; /* an op not read (outside a slice with ts and dur) */
        k.pid = s.pid;
        k.tid = s.tid;
        k.ots = s.ts;
        k.oend = s.end;
        k.ts = a.ts;
        k.seq = a.seq;
        k.dur = a.dur;
        k.name = a.name;
        if ((rc = tt__spill_add(*out, &k)) < 0)
            return rc;
    }
    return rc;
}

/* roots overlapping the sweep's point, with their indexes */
struct sq_active {
    struct sq_sl *r;
    int64_t *idx;
    size_t n, a, ai;
};

static int same_thread(const struct sq_sl *r, const struct sq_k *k)
{
    return r->pid == k->pid && r->tid == k->tid;
}

/* whether root r comes before activity k's thread, or starts by its op */
static int root_before(const struct sq_sl *r, const struct sq_k *k)
{
    if (r->pid != k->pid)
        return r->pid < k->pid;
    if (r->tid != k->tid)
        return r->tid < k->tid;
    return r->ts <= k->ots;
}

/* the root of activity k: the active ones updated (roots read from rs up
 * to k's op, those ended before it dropped); *root -1 when none encloses
 * its op */
static int root_of(tt__spill *rs, struct sq_active *ac, struct sq_sl *next, int *more,
                   int64_t *nread, const struct sq_k *k, int64_t *root)
{
    size_t i, w = 0;
    while (*more == 1 && root_before(next, k)) {
        if (same_thread(next, k)) {
            if (TT_ALLOC_GROW(ac->r, ac->n + 1, ac->a) < 0 ||
                TT_ALLOC_GROW(ac->idx, ac->n + 1, ac->ai) < 0)
                return tt__oom();
            ac->r[ac->n] = *next;
            ac->idx[ac->n++] = *nread;
        }
        (*nread)++;
        if ((*more = tt__spill_next(rs, next)) < 0)
            return *more;
    }
    *root = -1;
    for (i = 0; i < ac->n; i++) {
        if (!same_thread(&ac->r[i], k) || ac->r[i].end < k->ots)
            continue;
        if (*root < 0 && ac->r[i].ts <= k->ots && k->oend <= ac->r[i].end)
            *root = ac->idx[i];
        ac->r[w] = ac->r[i];
        ac->idx[w++] = ac->idx[i];
    }
    ac->n = w;
    return 0;
}

/* each activity placed under its root: a spill by (root, start) */
static int place(tt__spill *ks, tt__spill *rs, tt__spill **out)
{
    struct sq_active ac;
    struct sq_sl next;
    struct sq_k k;
    struct sq_rk x;
    int64_t nread = 0, root = -1;
    int rc, more = 0;
    memset(&ac, 0, sizeof(ac));
    if (!(*out = tt__spill_new(sizeof(x), cmp_rk)))
        return TT_ENOMEM;
    if ((rc = tt__spill_rewind(ks)) < 0 || (rc = tt__spill_rewind(rs)) < 0 ||
        (rc = more = tt__spill_next(rs, &next)) < 0)
        return rc;
    while ((rc = tt__spill_next(ks, &k)) == 1) {
        if ((rc = root_of(rs, &ac, &next, &more, &nread, &k, &root)) < 0)
            break;
        if (root < 0)
            continue;
        x.root = root;
        x.ts = k.ts;
        x.seq = k.seq;
        x.dur = k.dur;
        x.name = k.name;
        if ((rc = tt__spill_add(*out, &x)) < 0)
            break;
    }
    free(ac.r);
    free(ac.idx);
    return rc;
}

/* one root's sequence (key[0]: its name, key[1..n]: its activities) */
static int root_done(struct sq *q, const int64_t *key, size_t n, int64_t gpu, int64_t cpu)
{
    struct sq_pat *p;
    int rc, added;
    if ((int64_t)n < q->o->seq_len)
        return 0;
    if ((rc = map_find(&q->pats, key, n + 1, NULL, &p, &added)) < 0)
        return rc;
    p->count++;
    p->gpu = tt_sat_add(p->gpu, gpu);
    p->cpu = tt_sat_add(p->cpu, cpu);
    return 0;
}

/* the activities by root, with the roots read alongside (both in root order) */
static int group_roots(struct sq *q, tt__spill *placed, tt__spill *rs)
{
    struct sq_rk x;
    struct sq_sl r;
    int64_t cur = -1, nread = 0, gpu = 0;
    int64_t *key = NULL;
    size_t n = 0, a = 0;
    int rc;
    memset(&r, 0, sizeof(r));
    if ((rc = tt__spill_rewind(placed)) < 0 || (rc = tt__spill_rewind(rs)) < 0)
        return rc;
    while ((rc = tt__spill_next(placed, &x)) == 1) {
        if (x.root != cur) {
            if (cur >= 0 && (rc = root_done(q, key, n, gpu, r.dur)) < 0)
                break;
            while (nread <= x.root && (rc = tt__spill_next(rs, &r)) == 1)
                nread++;
            if (rc < 0 || (rc = TT_ALLOC_GROW(key, 1, a)) < 0) {
                rc = rc == TT_ENOMEM ? tt__oom() : rc;
                break;
            }
            key[0] = r.name;
            cur = x.root;
            n = 0;
            gpu = 0;
        }
        if (TT_ALLOC_GROW(key, n + 2, a) < 0) {
            rc = tt__oom();
            break;
        }
        key[++n] = x.name;
        gpu = tt_sat_add(gpu, x.dur);
    }
    if (rc == 0 && cur >= 0)
        rc = root_done(q, key, n, gpu, r.dur);
    free(key);
    return rc;
}

static int sq_under(struct sq *q)
{
    tt__spill *roots = NULL, *ks = NULL, *placed = NULL;
    int rc = find_roots(q, &roots);
    if (rc == 0)
        rc = join_ops(q, &ks);
    tt__spill_free(q->gpu);
    tt__spill_free(q->ops);
    tt__spill_free(q->cand);
    q->gpu = q->ops = q->cand = NULL;
    if (rc == 0)
        rc = place(ks, roots, &placed);
    tt__spill_free(ks);
    if (rc == 0)
        rc = group_roots(q, placed, roots);
    tt__spill_free(placed);
    tt__spill_free(roots);
    return rc;
}

/* ---- the summary ---- */

static int cmp_seq(const void *a, const void *b)
{
    const tt_kern_seq *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->pattern, y->pattern);
}

/* names of ids v[0..n) joined by '|' (0: no op); NULL when out of memory */
static char *join_names(const struct sq *q, const int64_t *v, size_t n, tt_buf *b)
{
    size_t i;
    tt_buf_reset(b);
    for (i = 0; i < n; i++) {
        if (i)
            tt_buf_addch(b, '|');
        tt_buf_addstr(b, v[i] ? sq_str(q, v[i]) : NO_OP_NAME);
    }
    return b->oom ? NULL : strndup(b->buf, b->len);
}

void tt__kern_seq_release(tt_kern_summary *s)
{
    size_t i;
    for (i = 0; i < s->nseqs; i++) {
        free(s->seqs[i].pattern);
        free(s->seqs[i].ops);
    }
    free(s->seqs);
    s->seqs = NULL;
    s->nseqs = 0;
}

static int to_summary(struct sq *q, tt_kern_summary *s)
{
    const struct sq_map *m = &q->pats;
    tt_buf b = TT_BUF_INIT;
    size_t i;
    int rc = 0;
    s->by = TT_KERN_BY_SEQUENCE;
    if (!(s->seqs = calloc(m->np ? m->np : 1, sizeof(*s->seqs))))
        return tt__oom();
    for (i = 0; rc == 0 && i < m->np; i++) {
        const struct sq_pat *p = &m->p[i];
        tt_kern_seq *x = &s->seqs[s->nseqs++];
        x->length = (int64_t)p->n - (q->under ? 1 : 0);
        x->count = p->count;
        x->gpu_ns = p->gpu;
        x->cpu_ns = p->cpu;
        if (!(x->pattern = join_names(q, m->pool + p->key, p->n, &b)) ||
            !(x->ops = q->under ? strdup(sq_str(q, m->pool[p->key]))
                                : join_names(q, m->pool + p->ops, p->n, &b)))
            rc = tt__oom();
    }
    tt_buf_release(&b);
    if (rc < 0)
        return rc;
    s->ngroups = (int64_t)s->nseqs;
    TT_QSORT(s->seqs, s->nseqs, sizeof(*s->seqs), cmp_seq);
    while (q->o->row_limit >= 0 && (int64_t)s->nseqs > q->o->row_limit) {
        s->nseqs--;
        free(s->seqs[s->nseqs].pattern);
        free(s->seqs[s->nseqs].ops);
    }
    return 0;
}

/* ---- reading a trace ---- */

#define SEQ_SKIP                                                                           \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

static const uint64_t sq_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_NAME) | TT_COL(TT_C_SL_PID) |
                      TT_COL(TT_C_SL_TID) | TT_COL(TT_C_SL_TS) | TT_COL(TT_C_SL_DUR),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_DUR),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_DEVICE) |
                    TT_COL(TT_C_GPU_STREAM) | TT_COL(TT_C_GPU_TS) | TT_COL(TT_C_GPU_DUR) |
                    TT_COL(TT_C_GPU_OP_ID) | TT_COL(TT_C_GPU_RUNTIME_ID),
};

/* the rows of a file (db NULL) or of trace `trace` of db into q; a file
 * whose links need the passes after a load is read again, twice
 * (TT_ROWS_RELINK) */
static int sq_read(struct sq *q, tt__flt *fl, const tt__rowsink *sink, const char *path,
                   tt_db *db, int64_t trace, tt__rows_result *res)
{
    unsigned skip = SEQ_SKIP; /* slices and runtime calls make the links */
    const tt_kern_options *o = q->o;
    int rc;
    if (db)
        return (rc = tt__flt_load(fl, NULL, db, trace)) < 0
                   ? rc
                   : tt__db_rows(db, trace, sink, skip | TT_ROWS_NO_ARGS, res);
    if (tt__spool_needed(path)) {
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = sq_read(q, fl, sink, rd, NULL, trace, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__flt_load(fl, path, NULL, 0)) < 0) /* --under's ops: a reading of their own */
        return rc;
    rc = tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip, res);
    if (rc != 0 || !res->needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "kernels", "kernels --sequences: %s: %s, read twice", path,
            res->why_db ? res->why_db : "links");
    free(res->metadata);
    res->metadata = NULL;
    sq_release(q);
    sq_init(q, o);
    tt__flt_reset(fl);
    return tt__ingest_rows(path, sink, TT_READ_NO_ARGS, skip | TT_ROWS_RELINK, res);
}

int tt__kern_seq_trace(const tt_kern_options *o, const char *path, tt_db *db, int64_t trace,
                       tt_kern_summary out[2], tt__rows_result *res)
{
    struct sq q;
    tt__rowsink sink, fsink;
    tt__flt *fl = NULL;
    int rc;
    memset(out, 0, 2 * sizeof(*out));
    memset(res, 0, sizeof(*res));
    if (o->version < 4 && (o->filter.name || o->filter.under))
        return tt_error_set(TT_EINVALID, "kernels --sequences takes --name and --under from "
                            "options version 4 on");
    if (o->seq_len < 1)
        return tt_error_set(TT_EINVALID, "kernels: sequences of %" PRId64 " activities (want 1 "
                            "or more)", o->seq_len);
    if (!(o->seq_op && *o->seq_op) && o->seq_len > TT_KERN_SEQ_MAX)
        return tt_error_set(TT_EINVALID, "kernels: sequences of %" PRId64 " activities on "
                            "streams (at most %d)", o->seq_len, TT_KERN_SEQ_MAX);
    sq_init(&q, o);
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &q;
    sink.rows = sq_rows;
    sink.cols = sq_cols;
    sink.gpu_links = sq_links;
    /* --name, --under: the GPU rows that fail never come (without them: no
     * filtering sink, the time range is checked here) */
    if ((rc = tt__flt_new(&fl, o->filter.name || o->filter.under ? &o->filter : NULL)) == 0 &&
        (rc = tt__flt_sink(fl, &sink, 1u << TT_ROWS_GPU, &fsink)) == 0)
        rc = sq_read(&q, fl, &fsink, path, db, trace, res);
    tt__flt_free(fl);
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0)
        rc = q.under ? sq_under(&q) : sq_windows(&q);
    out[0].trace_id = out[1].trace_id = trace;
    out[1].memory = 1;
    out[1].by = TT_KERN_BY_SEQUENCE;
    if (rc == 0)
        rc = to_summary(&q, &out[0]);
    sq_release(&q);
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}
