/*
 * analyze/collectives/coll_stream.c - the collective calls of one trace, a
 * consumer of the record stream (store/ingest_rows.h): from a file or a
 * database's trace alike.
 *
 * Three kinds of rows make a call: the record_param_comms CPU op (its args
 * name the collective, its sizes, dtype and process group in PyTorch 2.1
 * and later), the backend's op nested in it (nccl:all_reduce, with "Input
 * Dims" and "Input type" in older PyTorch) and the NCCL/RCCL kernels it
 * launched (with the same args as the op in newer Kineto). Each is an item
 * keyed by the op it belongs to: the op's own slice id, the annotation's
 * parent, the kernel's launching op (tt__rowsink.gpu_links; the innermost
 * cpu_op around its runtime call, which is record_param_comms). A row may
 * come before or after the rows of its group, so the items wait in a spill
 * (bounded memory, common/spill.h), sorted by key at the end; each group
 * becomes one call (struct coll_call), added to the run's spill of calls.
 * An op alone is a call when its "Collective name" is a collective (not
 * "wait"); a kernel or annotation without such an op is a call of its own.
 */
#include "common/compat.h"
#include "common/i64map.h"
#include "common/log.h"
#include "common/tmath.h"
#include "analyze/collectives/coll_state.h"
#include "formats/kineto.h"
#include "formats/spool.h"

#include <inttypes.h>

enum { IT_OP = 0, IT_ANNOT, IT_KERNEL };

/* one op, annotation or kernel, waiting for its group */
struct item {
    int64_t key, order;
    int64_t ts, dur, rt_ts; /* rt_ts: a kernel's runtime call start (CNULL: none) */
    struct coll_fields f;
    int32_t type;
    int32_t kname;          /* annotation: its collective part; kernel: its
                               collective (AllReduce), else its function name */
    int32_t under, pad;     /* in --under's ops (the run's scope) */
};

/* the string classes (bits) of the names the consumer looks for */
enum { SC_OP = 1, SC_ANNOT = 2, SC_COMM = 4 };

/* the links of a GPU row not yet handed over (tt__rowsink.gpu_links) */
struct clink {
    int64_t op, rt, rt_ts;
};

struct cstream {
    struct coll_run *run;
    size_t ti;
    char **strs;           /* the trace's strings, in arrival order */
    size_t nstrs, astrs;
    struct i64map sid;     /* string id -> index in strs */
    struct i64map cls;     /* string id -> SC_* bits (only when some) */
    struct clink *ln;      /* links of GPU rows to come: ln[hln..nln) */
    size_t hln, nln, aln;
    tt__spill *items;
    int64_t order;         /* items so far */
};

static const char *str_id(const struct cstream *cs, int64_t id)
{
    size_t k;
    return tt__i64map_get(&cs->sid, id, &k) ? cs->strs[k] : NULL;
}

/* the text of a string cell (an id, or text in the batch); NULL when none */
static const char *cell_str(const struct cstream *cs, const tt__cell *c, const char *text,
                            tt_buf *tmp)
{
    if (c->type == TT_CELL_INT)
        return str_id(cs, c->i);
    if (c->type != TT_CELL_TEXT)
        return NULL;
    tt_buf_reset(tmp);
    tt_buf_add(tmp, text + c->i, c->len);
    return tmp->oom ? NULL : tmp->buf;
}

static int64_t cell_i(const tt__cell *c, int64_t none)
{
    return c->type == TT_CELL_INT ? c->i : none;
}

static int cs_string(struct cstream *cs, const tt__cell *row, const char *text)
{
    const char *coll;
    char *copy;
    size_t bits = 0;
    if (TT_ALLOC_GROW(cs->strs, cs->nstrs + 1, cs->astrs) < 0 ||
        !(copy = strndup(text + row[TT_C_STR_S].i, row[TT_C_STR_S].len)))
        return tt__oom();
    cs->strs[cs->nstrs++] = copy;
    if (tt__i64map_put(&cs->sid, row[TT_C_STR_ID].i, cs->nstrs - 1) < 0)
        return tt__oom();
    if (!strcmp(copy, "record_param_comms"))
        bits |= SC_OP;
    if (tt__coll_is_annot(copy, &coll))
        bits |= SC_ANNOT;
    if (tt_kineto_is_comm(copy, NULL))
        bits |= SC_COMM;
    if (bits && tt__i64map_put(&cs->cls, row[TT_C_STR_ID].i, bits) < 0)
        return tt__oom();
    return 0;
}

static size_t str_class(const struct cstream *cs, const tt__cell *c)
{
    size_t bits = 0;
    if (c->type == TT_CELL_INT)
        tt__i64map_get(&cs->cls, c->i, &bits);
    return bits;
}

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int item_add(struct cstream *cs, struct item *it)
{
    it->order = cs->order++;
    if (!it->key)
        it->key = -it->order - 1; /* no op: a group of its own */
    return tt__spill_put(&cs->items, sizeof(*it), cmp_item, it);
}

static int args_of(struct cstream *cs, const tt__cell *c, const char *text,
                   struct coll_fields *f)
{
    if (c->type != TT_CELL_TEXT)
        return 0;
    return tt__coll_args(&cs->run->strs, text + c->i, c->len, f);
}

/* a record_param_comms op, or a backend's op (nccl:all_reduce) */
static int cs_slice(struct cstream *cs, const tt__cell *row, const char *text)
{
    size_t bits = str_class(cs, &row[TT_C_SL_NAME]);
    struct item it;
    const char *coll;
    int rc;
    if (!(bits & (SC_OP | SC_ANNOT)) || row[TT_C_SL_TS].type != TT_CELL_INT)
        return 0;
    memset(&it, 0, sizeof(it));
    tt__coll_fields_init(&it.f);
    it.under = tt__flt_slice(cs->run->scope, row, text);
    it.ts = row[TT_C_SL_TS].i;
    it.dur = cell_i(&row[TT_C_SL_DUR], CNULL);
    it.rt_ts = CNULL;
    if (bits & SC_OP) {
        it.type = IT_OP;
        it.key = cell_i(&row[TT_C_SL_ID], 0);
        rc = args_of(cs, &row[TT_C_SL_ARGS], text, &it.f);
    } else {
        tt_buf a = TT_BUF_INIT, b = TT_BUF_INIT;
        const char *dims = cell_str(cs, &row[TT_C_SL_INPUT_DIMS], text, &a);
        const char *types = cell_str(cs, &row[TT_C_SL_INPUT_TYPES], text, &b);
        it.type = IT_ANNOT;
        it.key = cell_i(&row[TT_C_SL_PARENT_ID], 0);
        tt__coll_is_annot(str_id(cs, row[TT_C_SL_NAME].i), &coll);
        rc = tt__coll_dims(&cs->run->strs, dims, types, &it.f);
        tt_buf_release(&a);
        tt_buf_release(&b);
        if (rc == 0 && !(it.kname = tt__coll_str(&cs->run->strs, coll, strlen(coll))))
            rc = TT_ENOMEM;
    }
    return rc < 0 ? rc : item_add(cs, &it);
}

/* the links of the next GPU row (tt__rowsink.gpu_links) */
static int cs_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct cstream *cs = ctx;
    struct clink *l;
    (void)name;
    if (TT_ALLOC_GROW(cs->ln, cs->nln + 1, cs->aln) < 0)
        return tt__oom();
    l = &cs->ln[cs->nln++];
    l->op = op;
    l->rt = rt;
    l->rt_ts = rt_ts;
    return 0;
}

/* the launch of the next GPU row (tt__rowsink.gpu_launch), for --under */
static int cs_launch(void *ctx, const tt__gpu_launch *l)
{
    struct cstream *cs = ctx;
    return tt__flt_launch(cs->run->scope, l);
}

/* a kernel's short name: its collective (AllReduce), else its function */
static int32_t kernel_name(struct cstream *cs, const char *name)
{
    const char *p;
    size_t n = tt__coll_kernel_coll(name, &p);
    if (!n) {
        p = name;
        n = strcspn(name, "(");
    }
    return tt__coll_str(&cs->run->strs, p, n);
}

/* an NCCL/RCCL (communication) kernel */
static int cs_gpu(struct cstream *cs, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    const struct clink *l = NULL;
    struct item it;
    int rc, under = 1;
    if (cs->run->scope && (under = tt__flt_gpu(cs->run->scope, row, text)) < 0)
        return under; /* every GPU row's verdict, in order: its launch taken */
    if (cs->hln < cs->nln) {
        l = &cs->ln[cs->hln++];
        if (l->rt != cell_i(&row[TT_C_GPU_RUNTIME_ID], 0) ||
            l->op != cell_i(&row[TT_C_GPU_OP_ID], 0))
            return tt_error_set(TT_ERROR, "collectives: a GPU activity came without its links");
    }
    if (k->type != TT_CELL_TEXT || k->len != 6 || memcmp(text + k->i, "kernel", 6) ||
        !(str_class(cs, &row[TT_C_GPU_NAME]) & SC_COMM) || row[TT_C_GPU_TS].type != TT_CELL_INT)
        return 0;
    memset(&it, 0, sizeof(it));
    tt__coll_fields_init(&it.f);
    it.type = IT_KERNEL;
    it.under = under;
    it.key = l ? l->op : cell_i(&row[TT_C_GPU_OP_ID], 0);
    it.ts = row[TT_C_GPU_TS].i;
    it.dur = cell_i(&row[TT_C_GPU_DUR], CNULL);
    it.rt_ts = l && l->rt && l->rt_ts != TT_ROWS_NO_TS ? l->rt_ts : CNULL;
    if ((rc = args_of(cs, &row[TT_C_GPU_ARGS], text, &it.f)) < 0)
        return rc;
    if (!(it.kname = kernel_name(cs, str_id(cs, row[TT_C_GPU_NAME].i))))
        return TT_ENOMEM;
    return item_add(cs, &it);
}

static int cs_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct cstream *cs = ctx;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = cs_string(cs, row, text);
        else if (table == TT_ROWS_SLICE)
            rc = cs_slice(cs, row, text);
        else if (table == TT_ROWS_GPU)
            rc = cs_gpu(cs, row, text);
    }
    if (table == TT_ROWS_GPU && cs->hln) { /* the links used; those of rows to come stay */
        memmove(cs->ln, cs->ln + cs->hln, (cs->nln - cs->hln) * sizeof(*cs->ln));
        cs->nln -= cs->hln;
        cs->hln = 0;
    }
    return rc;
}

/* ---- the groups: one call each ---- */

/* the items of one key */
struct group {
    int64_t key;
    int have_op, have_annot;
    struct item op, annot, k1; /* the first of each; k1: the first kernel */
    int64_t nk, kts, kdur;     /* kernels, their first start, durations summed */
    int32_t under;             /* an item of it in --under's ops */
};

static int64_t pick(int64_t a, int64_t b, int64_t c)
{
    return a != CNULL ? a : b != CNULL ? b : c;
}

static int32_t pick_id(int32_t a, int32_t b, int32_t c)
{
    return a ? a : b ? b : c;
}

/* the call's kind (CK_*) and its name: the first that names a collective
 * among the op's "Collective name", the kernel's, the annotation's and the
 * kernel's name; the name as the trace gives it */
static int call_kind(const struct coll_strs *st, const struct group *g, int32_t *name)
{
    int32_t cand[4];
    int i, k;
    cand[0] = g->have_op ? g->op.f.name : 0;
    cand[1] = g->nk ? g->k1.f.name : 0;
    cand[2] = g->have_annot ? g->annot.kname : 0;
    cand[3] = g->nk ? g->k1.kname : 0;
    *name = pick_id(pick_id(cand[0], cand[1], cand[2]), cand[3], 0);
    for (i = 0; i < 4; i++) {
        const char *s = tt__coll_str_of(st, cand[i]);
        if (s && (k = tt__coll_kind(s, strlen(s))) != CK_OTHER)
            return k;
    }
    return CK_OTHER;
}

/* a group into a call of trace ti; 0 when it is none (an op alone that is
 * no collective: "wait") */
static int group_call(struct cstream *cs, const struct group *g, struct coll_call *c)
{
    struct coll_strs *st = &cs->run->strs;
    const struct coll_fields *o = g->have_op ? &g->op.f : NULL, *k = g->nk ? &g->k1.f : NULL,
                             *a = g->have_annot ? &g->annot.f : NULL;
    static const struct coll_fields none = { CNULL, CNULL, CNULL, CNULL, 0, 0, 0 };
    int kind;
    memset(c, 0, sizeof(*c));
    kind = call_kind(st, g, &c->name);
    if (!g->nk && !g->have_annot && kind == CK_OTHER)
        return 0;
    o = o ? o : &none;
    k = k ? k : &none;
    a = a ? a : &none;
    c->trace = (int64_t)cs->ti;
    c->key = g->key;
    c->cpu_ts = g->have_op ? g->op.ts : g->have_annot ? g->annot.ts
                                                      : pick(g->k1.rt_ts, g->kts, CNULL);
    c->gpu_ts = g->nk ? g->kts : CNULL;
    c->dur = g->nk ? g->kdur : CNULL;
    c->kernels = g->nk;
    c->in_n = pick(o->in_n, k->in_n, a->in_n);
    c->out_n = pick(o->out_n, k->out_n, a->out_n);
    c->group = pick(o->group, k->group, a->group);
    if (c->group == CNULL)
        c->group = cs->run->tr[cs->ti].world;
    c->seq = pick(o->seq, k->seq, a->seq);
    c->dtype = pick_id(o->dtype, k->dtype, a->dtype);
    c->pg = pick_id(o->pg, k->pg, a->pg);
    c->kind = kind;
    c->under = g->under;
    if (kind != CK_OTHER)
        c->kname = tt__coll_str(st, tt__coll_kind_name(kind), strlen(tt__coll_kind_name(kind)));
    else
        c->kname = c->name;
    if (!c->kname || (!c->pg && !(c->pg = tt__coll_str(st, "", 0))))
        return TT_ENOMEM;
    return 1;
}

static int group_end(struct cstream *cs, struct group *g)
{
    struct coll_call c;
    int rc;
    if (!g->have_op && !g->have_annot && !g->nk)
        return 0;
    if ((rc = group_call(cs, g, &c)) <= 0)
        return rc;
    cs->run->tr[cs->ti].ncalls++;
    cs->run->found++;
    return tt__spill_put(&cs->run->calls, sizeof(c), tt__coll_cmp_read, &c);
}

static void group_add(struct group *g, const struct item *it)
{
    g->under |= it->under;
    if (it->type == IT_OP && !g->have_op) {
        g->op = *it;
        g->have_op = 1;
    } else if (it->type == IT_ANNOT && !g->have_annot) {
        g->annot = *it;
        g->have_annot = 1;
    } else if (it->type == IT_KERNEL) {
        if (!g->nk++) {
            g->k1 = *it;
            g->kts = it->ts;
            g->kdur = 0;
        }
        if (it->ts < g->kts)
            g->kts = it->ts;
        if (it->dur != CNULL && it->dur > 0)
            g->kdur = tt_sat_add(g->kdur, it->dur);
    }
}

/* every item, by key: the calls */
static int cs_groups(struct cstream *cs)
{
    struct item it;
    struct group g;
    int r = 0, rc;
    if (!cs->items)
        return 0;
    rc = tt__spill_rewind(cs->items);
    memset(&g, 0, sizeof(g));
    while (rc == 0 && (r = tt__spill_next(cs->items, &it)) > 0) {
        if (it.key != g.key && (rc = group_end(cs, &g)) == 0) {
            memset(&g, 0, sizeof(g));
            g.key = it.key;
        }
        group_add(&g, &it);
    }
    if (rc == 0 && r < 0)
        rc = r;
    return rc == 0 ? group_end(cs, &g) : rc;
}

/* ---- reading ---- */

static void cs_release(struct cstream *cs)
{
    size_t i;
    for (i = 0; i < cs->nstrs; i++)
        free(cs->strs[i]);
    free(cs->strs);
    tt__i64map_free(&cs->sid);
    tt__i64map_free(&cs->cls);
    free(cs->ln);
    tt__spill_free(cs->items);
    memset(cs, 0, sizeof(*cs));
}

/* the tables the calls come from: slices, GPU activities (and the strings);
 * a file's runtime calls are read for the links of its GPU rows */
#define COLL_SKIP                                                                           \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

/* the cells cs_rows reads: a database leaves the others out */
static const uint64_t cs_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_NAME) | TT_COL(TT_C_SL_TS) |
                      TT_COL(TT_C_SL_DUR) | TT_COL(TT_C_SL_PARENT_ID) | TT_COL(TT_C_SL_ARGS) |
                      TT_COL(TT_C_SL_INPUT_DIMS) | TT_COL(TT_C_SL_INPUT_TYPES),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_TS) |
                    TT_COL(TT_C_GPU_DUR) | TT_COL(TT_C_GPU_ARGS) | TT_COL(TT_C_GPU_OP_ID) |
                    TT_COL(TT_C_GPU_RUNTIME_ID),
};

static void cs_init(struct cstream *cs, struct coll_run *run, size_t ti)
{
    memset(cs, 0, sizeof(*cs));
    cs->run = run;
    cs->ti = ti;
}

/* a file's rows into cs: read again, twice (TT_ROWS_RELINK), when its
 * links or nesting need what the SQL passes of an ingest do */
static int cs_read_file(struct cstream *cs, const tt__rowsink *sink, const char *path,
                        tt__rows_result *res)
{
    struct coll_run *run = cs->run;
    size_t ti = cs->ti;
    int rc;
    if (tt__spool_needed(path)) { /* standard input or a pipe: from a copy */
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = cs_read_file(cs, sink, rd, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__flt_load(run->scope, path, NULL, 0)) < 0) /* --under's ops */
        return rc;
    rc = tt__ingest_rows(path, sink, 0, COLL_SKIP, res);
    if (rc != 0 || (!res->needs_db && !res->disordered_threads))
        return rc;
    tt__log(TT_LOG_DEBUG, "collectives", "collectives: %s: %s, read twice", path,
            res->why_db ? res->why_db : "slices out of order");
    free(res->metadata);
    res->metadata = NULL;
    cs_release(cs);
    cs_init(cs, run, ti);
    tt__flt_reset(run->scope);
    return tt__ingest_rows(path, sink, 0, COLL_SKIP | TT_ROWS_RELINK, res);
}

int tt__coll_read(struct coll_run *run, size_t ti, const char *path, tt_db *db, int64_t trace,
                  tt__rows_result *res)
{
    struct cstream cs;
    tt__rowsink sink;
    uint64_t cols[TT_ROWS_COUNT];
    int rc;
    memset(res, 0, sizeof(*res));
    cs_init(&cs, run, ti);
    memcpy(cols, cs_cols, sizeof(cols));
    memset(&sink, 0, sizeof(sink));
    sink.ctx = &cs;
    sink.rows = cs_rows;
    sink.cols = cols;
    sink.gpu_links = cs_links;
    if (run->scope) { /* --under: an op by its thread, a kernel by its launch's */
        cols[TT_ROWS_SLICE] |= TT_COL(TT_C_SL_PID) | TT_COL(TT_C_SL_TID);
        sink.gpu_launch = tt__flt_wants_launch(run->scope) ? cs_launch : NULL;
    }
    if (db)
        rc = (rc = tt__flt_load(run->scope, NULL, db, trace)) < 0
                 ? rc
                 : tt__db_rows(db, trace, &sink, COLL_SKIP | 1u << TT_ROWS_RUNTIME, res);
    else
        rc = cs_read_file(&cs, &sink, path, res);
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0) {
        run->tr[ti].world = res->have_world ? res->world_size : CNULL;
        rc = cs_groups(&cs);
    }
    cs_release(&cs);
    return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
}

int tt__coll_cmp_read(const void *a, const void *b)
{
    const struct coll_call *x = a, *y = b;
    if (x->trace != y->trace)
        return x->trace < y->trace ? -1 : 1;
    if (x->cpu_ts != y->cpu_ts)
        return x->cpu_ts < y->cpu_ts ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}
