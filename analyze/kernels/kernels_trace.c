/*
 * analyze/kernels/kernels_trace.c - `tracetool kernels --by activity`: one row per
 * kernel, memcpy and memset, the shape of Nsight Systems' cuda_gpu_trace
 * (start, duration, correlation, grid, block, registers, shared memory,
 * bytes, throughput, memory kinds, device, context, stream, name).
 *
 * One consumer of the record stream (store/ingest_rows.h): the GPU rows of
 * each selected trace (kernels_input.c), from a file (tt__ingest_rows) or a
 * database (tt__db_rows) alike, kept until the trace's rows end, then
 * sorted by start (then by their order in the trace) and cut to the row
 * limit. With --steps an activity counts when its launch (its runtime
 * call's start, else its own) falls in a chosen ProfilerStep#N: the runtime
 * calls and steps may come after the activity (a database hands its tables
 * one after another), so the filter runs as they are printed. What the
 * launches of a loop share (kind, name, grid, block, registers, shared
 * memory, copy kind, device, context, stream) is kept once, as a shape;
 * the rest of each activity waits in memory, RUN of them at most: more go
 * to an anonymous spool file in sorted runs, merged as they are printed,
 * so memory does not grow with the activities.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "common/i64map.h"
#include "common/log.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "formats/spool.h"
#include "analyze/kernels/kernels_state.h"
#include "analyze/filter/filtering.h"
#include "report/table_json.h"
#include "tracetool/table.h"

#include <errno.h>
#include <inttypes.h>

#define CHUNK 1024 /* rows per write of the table writer */
#define RUN 32768  /* activities sorted in memory before they go to the spool */
#define RUN_BUF 512 /* activities of one run read back at a time */

static const char *const kinds[3] = { "kernel", "memcpy", "memset" };

/* what launches share; name: a string id until the trace ends, then
 * its text */
enum { SH_GX, SH_GY, SH_GZ, SH_BX, SH_BY, SH_BZ, SH_REGS, SH_SMEM, SH_DEVICE, SH_CTX,
       SH_STREAM, SH_N };
struct shape {
    int64_t v[SH_N];   /* TT_KERN_NULL: none */
    int64_t name_id;   /* TT_KERN_NULL: none */
    int kind;          /* index into kinds */
    int copy;          /* copy kind: index + 1 into copies, 0: none */
    uint64_t h;
    char *name;        /* at the end: the name, "?" when unknown */
};

/* one activity */
struct act {
    int64_t ts, dur, corr, bytes;
    int64_t rt;  /* its runtime call (--steps; TT_KERN_NULL: none) */
    int64_t seq; /* its place in the trace's GPU rows (gpu_ops id order) */
    size_t shape;
};

/* a sorted run in the spool */
struct run {
    long off;
    size_t n;
};

/* one trace's activities, sorted and cut once its rows end */
struct atrace {
    struct act *a;
    size_t n, aa;
    struct shape *sh;
    size_t nsh, ash;
    char **copies;
    size_t ncopies, acopies;
    int64_t found; /* activities of the kinds asked, before --steps and the limit */
    FILE *spool;   /* the runs, when more than RUN came */
    struct run *runs;
    size_t nruns, aruns;
    struct i64map rt_ts;  /* runtime call id -> its start (--steps) */
    struct tt__kspan *sp; /* ProfilerStep#N slices, then the chosen windows */
    size_t nsp, asp;
};

/* the state while one trace's rows come */
struct aread {
    const tt_kern_options *o;
    int steps;
    struct atrace *t;
    tt_buf strs;          /* the strings' text, NUL after each */
    struct i64map sid;    /* string id -> offset in strs */
    size_t *slot;         /* shape hash -> index + 1 */
    size_t nslot;
    int64_t seq;
    tt__flt *fl;          /* the filters (NULL: none) */
};

static void atrace_free(struct atrace *t)
{
    size_t i;
    if (!t)
        return;
    for (i = 0; i < t->nsh; i++)
        free(t->sh[i].name);
    for (i = 0; i < t->ncopies; i++)
        free(t->copies[i]);
    free(t->sh);
    free(t->copies);
    free(t->a);
    if (t->spool)
        fclose(t->spool);
    free(t->runs);
    tt__i64map_free(&t->rt_ts);
    free(t->sp);
    free(t);
}

static void aread_release(struct aread *r)
{
    tt_buf_release(&r->strs);
    tt__i64map_free(&r->sid);
    free(r->slot);
    r->slot = NULL;
    r->nslot = 0;
}

static int64_t cell_i(const tt__cell *c)
{
    return c->type == TT_CELL_INT ? c->i : TT_KERN_NULL;
}

/* the text of string id, NULL when unknown */
static const char *str_id(const struct aread *r, int64_t id)
{
    size_t off;
    return id != TT_KERN_NULL && tt__i64map_get(&r->sid, id, &off) ? r->strs.buf + off : NULL;
}

static int a_string(struct aread *r, const tt__cell *row, const char *text)
{
    size_t off = r->strs.len;
    tt_buf_add(&r->strs, text + row[TT_C_STR_S].i, row[TT_C_STR_S].len);
    tt_buf_addch(&r->strs, '\0');
    if (r->strs.oom || tt__i64map_put(&r->sid, row[TT_C_STR_ID].i, off) < 0)
        return tt__oom();
    return 0;
}

/* the index of kind k among o->what's kinds, -1 when not asked for */
static int kind_of(const tt_kern_options *o, const tt__cell *k, const char *text)
{
    int i;
    if (k->type != TT_CELL_TEXT || k->len != 6)
        return -1;
    for (i = 0; i < 3; i++)
        if (!memcmp(text + k->i, kinds[i], 6))
            break;
    if (i == 3 || (o->what == TT_KERN_KERNELS && i != 0) || (o->what == TT_KERN_MEMORY && i == 0))
        return -1;
    return i;
}

/* the copy kind's index + 1 (added when new), 0 for none */
static int copy_of(struct atrace *t, const tt__cell *c, const char *text, int *out)
{
    size_t i;
    *out = 0;
    if (c->type != TT_CELL_TEXT)
        return 0;
    for (i = 0; i < t->ncopies; i++)
        if (strlen(t->copies[i]) == c->len && !memcmp(t->copies[i], text + c->i, c->len))
            break;
    if (i == t->ncopies) {
        if (TT_ALLOC_GROW(t->copies, t->ncopies + 1, t->acopies) < 0 ||
            !(t->copies[i] = strndup(text + c->i, c->len)))
            return tt__oom();
        t->ncopies++;
    }
    *out = (int)i + 1;
    return 0;
}

static uint64_t shape_hash(const struct shape *s)
{
    uint64_t h = 1469598103934665603ull;
    int i;
    for (i = 0; i < SH_N; i++)
        h = (h ^ (uint64_t)s->v[i]) * 1099511628211ull;
    h = (h ^ (uint64_t)s->name_id) * 1099511628211ull;
    return (h ^ (uint64_t)(s->kind * 131 + s->copy)) * 1099511628211ull;
}

static int shape_same(const struct shape *a, const struct shape *b)
{
    return a->h == b->h && a->kind == b->kind && a->copy == b->copy &&
           a->name_id == b->name_id && !memcmp(a->v, b->v, sizeof(a->v));
}

/* the index of shape s in r->t (added when new); SIZE_MAX when out of memory */
static size_t shape_index(struct aread *r, struct shape *s)
{
    struct atrace *t = r->t;
    size_t k;
    s->h = shape_hash(s);
    if (2 * (t->nsh + 1) > r->nslot) {
        size_t ncap = r->nslot ? 2 * r->nslot : 64, i;
        size_t *ns = calloc(ncap, sizeof(*ns));
        if (!ns)
            return SIZE_MAX;
        for (i = 0; i < t->nsh; i++) {
            for (k = (size_t)t->sh[i].h & (ncap - 1); ns[k]; k = (k + 1) & (ncap - 1))
                ;
            ns[k] = i + 1;
        }
        free(r->slot);
        r->slot = ns;
        r->nslot = ncap;
    }
    for (k = (size_t)s->h & (r->nslot - 1); r->slot[k]; k = (k + 1) & (r->nslot - 1))
        if (shape_same(&t->sh[r->slot[k] - 1], s))
            return r->slot[k] - 1;
    if (TT_ALLOC_GROW(t->sh, t->nsh + 1, t->ash) < 0)
        return SIZE_MAX;
    t->sh[t->nsh] = *s;
    r->slot[k] = ++t->nsh;
    return t->nsh - 1;
}

static int cmp_act(const void *x, const void *y)
{
    const struct act *a = x, *b = y;
    if (a->ts != b->ts) /* TT_KERN_NULL first, as SQL's NULL */
        return a->ts < b->ts ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static int spool_err(void)
{
    return tt_error_set(TT_EIO, "cannot use a temporary file: %s", strerror(errno));
}

/* the activities in memory, sorted, as the spool's next run */
static int spill(struct atrace *t)
{
    struct run *x;
    if (!t->spool && !(t->spool = tt__tmpfile()))
        return TT_EIO;
    if (TT_ALLOC_GROW(t->runs, t->nruns + 1, t->aruns) < 0)
        return tt__oom();
    TT_QSORT(t->a, t->n, sizeof(*t->a), cmp_act);
    x = &t->runs[t->nruns];
    if (fseek(t->spool, 0, SEEK_END) != 0 || (x->off = ftell(t->spool)) < 0 ||
        fwrite(t->a, sizeof(*t->a), t->n, t->spool) != t->n)
        return spool_err();
    x->n = t->n;
    t->nruns++;
    t->n = 0;
    return 0;
}

static int a_gpu(struct aread *r, const tt__cell *row, const char *text)
{
    static const int cols[SH_N] = { TT_C_GPU_GRID_X, TT_C_GPU_GRID_Y, TT_C_GPU_GRID_Z,
                                    TT_C_GPU_BLOCK_X, TT_C_GPU_BLOCK_Y, TT_C_GPU_BLOCK_Z,
                                    TT_C_GPU_REGISTERS, TT_C_GPU_SHARED_MEM, TT_C_GPU_DEVICE,
                                    TT_C_GPU_CONTEXT, TT_C_GPU_STREAM };
    struct atrace *t = r->t;
    struct shape s;
    struct act *a;
    int i, rc;
    memset(&s, 0, sizeof(s));
    if ((s.kind = kind_of(r->o, &row[TT_C_GPU_KIND], text)) < 0)
        return 0;
    t->found++;
    for (i = 0; i < SH_N; i++)
        s.v[i] = cell_i(&row[cols[i]]);
    s.name_id = cell_i(&row[TT_C_GPU_NAME]);
    if ((rc = copy_of(t, &row[TT_C_GPU_COPY_KIND], text, &s.copy)) < 0)
        return rc;
    if (TT_ALLOC_GROW(t->a, t->n + 1, t->aa) < 0)
        return tt__oom();
    a = &t->a[t->n];
    if ((a->shape = shape_index(r, &s)) == SIZE_MAX)
        return tt__oom();
    a->ts = cell_i(&row[TT_C_GPU_TS]);
    a->dur = cell_i(&row[TT_C_GPU_DUR]);
    a->corr = cell_i(&row[TT_C_GPU_CORRELATION]);
    a->bytes = cell_i(&row[TT_C_GPU_BYTES]);
    a->rt = cell_i(&row[TT_C_GPU_RUNTIME_ID]);
    a->seq = r->seq++;
    t->n++;
    return t->n == RUN ? spill(t) : 0;
}

/* --steps: a runtime call's start; a ProfilerStep#N slice's span */
static int a_runtime(struct aread *r, const tt__cell *row)
{
    if (row[TT_C_RT_TS].type == TT_CELL_INT && row[TT_C_RT_ID].type == TT_CELL_INT &&
        tt__i64map_put(&r->t->rt_ts, row[TT_C_RT_ID].i, (size_t)row[TT_C_RT_TS].i) < 0)
        return tt__oom();
    return 0;
}

static int a_slice(struct aread *r, const tt__cell *row)
{
    const tt__cell *id = &row[TT_C_SL_ID], *nm = &row[TT_C_SL_NAME];
    struct atrace *t = r->t;
    const char *name;
    struct tt__kspan *x;
    if (id->type != TT_CELL_INT || nm->type != TT_CELL_INT ||
        row[TT_C_SL_TS].type != TT_CELL_INT || row[TT_C_SL_DUR].type != TT_CELL_INT ||
        !tt__kern_is_step(name = str_id(r, nm->i)))
        return 0;
    if (TT_ALLOC_GROW(t->sp, t->nsp + 1, t->asp) < 0)
        return tt__oom();
    x = &t->sp[t->nsp++];
    x->ts = row[TT_C_SL_TS].i;
    x->id = id->i;
    x->end = tt_sat_add(x->ts, row[TT_C_SL_DUR].i);
    x->num = strtoll(name + 13, NULL, 10);
    return 0;
}

static int a_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                  const char *text)
{
    struct aread *r = ctx;
    int i, rc = 0;
    for (i = 0; rc == 0 && i < nrows; i++) {
        const tt__cell *row = cells + (size_t)i * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = a_string(r, row, text);
        else if (table == TT_ROWS_GPU)
            rc = a_gpu(r, row, text);
        else if (table == TT_ROWS_RUNTIME && r->steps)
            rc = a_runtime(r, row);
        else if (table == TT_ROWS_SLICE && r->steps)
            rc = a_slice(r, row);
    }
    return rc;
}

/* the trace's rows have all come: the chosen steps' windows, the order
 * (the last run to the spool when there are runs), the shapes' names */
static int a_finish(struct aread *r)
{
    struct atrace *t = r->t;
    size_t i;
    int rc;
    if (r->steps)
        t->nsp = tt__kern_step_windows(t->sp, t->nsp, r->o);
    if (t->nruns) {
        if (t->n && (rc = spill(t)) < 0)
            return rc;
        free(t->a);
        t->a = NULL;
        t->aa = 0;
    } else if (t->n > 1) {
        TT_QSORT(t->a, t->n, sizeof(*t->a), cmp_act);
    }
    for (i = 0; i < t->nsh; i++) {
        const char *s = str_id(r, t->sh[i].name_id);
        if (!(t->sh[i].name = strdup(s ? s : "?")))
            return tt__oom();
    }
    return 0;
}

/* ---- the activities in order: the array, or the runs merged ---- */

struct cursor {
    struct act *buf;
    size_t pos, len; /* buffered */
    long off;        /* the rest in the spool */
    size_t left;
};

struct iter {
    struct atrace *t;
    size_t i;          /* in memory: the next one */
    struct cursor *c;  /* one per run */
    size_t *heap, nheap; /* the runs with activities left, by their next one */
};

static int cur_less(const struct iter *it, size_t a, size_t b)
{
    const struct cursor *x = &it->c[a], *y = &it->c[b];
    return cmp_act(&x->buf[x->pos], &y->buf[y->pos]) < 0;
}

static void sift_down(struct iter *it, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i, tmp;
        if (l < it->nheap && cur_less(it, it->heap[l], it->heap[m]))
            m = l;
        if (l + 1 < it->nheap && cur_less(it, it->heap[l + 1], it->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        tmp = it->heap[i];
        it->heap[i] = it->heap[m];
        it->heap[m] = tmp;
        i = m;
    }
}

/* the next RUN_BUF activities of run k; 0 when it has none left */
static int refill(struct iter *it, size_t k)
{
    struct cursor *c = &it->c[k];
    size_t n = c->left < RUN_BUF ? c->left : RUN_BUF;
    c->pos = c->len = 0;
    if (!n)
        return 0;
    if (fseek(it->t->spool, c->off, SEEK_SET) != 0 ||
        fread(c->buf, sizeof(*c->buf), n, it->t->spool) != n)
        return spool_err();
    c->off += (long)(n * sizeof(*c->buf));
    c->left -= n;
    c->len = n;
    return 1;
}

static void it_free(struct iter *it)
{
    size_t k;
    for (k = 0; it->c && k < it->t->nruns; k++)
        free(it->c[k].buf);
    free(it->c);
    free(it->heap);
}

static int it_init(struct iter *it, struct atrace *t)
{
    size_t k, n = t->nruns;
    int rc;
    memset(it, 0, sizeof(*it));
    it->t = t;
    if (!n)
        return 0;
    if (!(it->c = calloc(n, sizeof(*it->c))) || !(it->heap = calloc(n, sizeof(*it->heap))))
        return tt__oom();
    for (k = 0; k < n; k++) {
        it->c[k].off = t->runs[k].off;
        it->c[k].left = t->runs[k].n;
        if (!(it->c[k].buf = malloc(RUN_BUF * sizeof(*it->c[k].buf))))
            return tt__oom();
        if ((rc = refill(it, k)) < 0)
            return rc;
        if (rc)
            it->heap[it->nheap++] = k;
    }
    for (k = it->nheap; k-- > 0;)
        sift_down(it, k);
    return 0;
}

/* the next activity into *out: 1, 0 at the end, or an error */
static int it_next(struct iter *it, struct act *out)
{
    struct cursor *c;
    int rc;
    if (!it->t->nruns) {
        if (it->i == it->t->n)
            return 0;
        *out = it->t->a[it->i++];
        return 1;
    }
    if (!it->nheap)
        return 0;
    c = &it->c[it->heap[0]];
    *out = c->buf[c->pos++];
    if (c->pos == c->len && (rc = refill(it, it->heap[0])) <= 0) {
        if (rc < 0)
            return rc;
        it->heap[0] = it->heap[--it->nheap];
    }
    if (it->nheap)
        sift_down(it, 0);
    return 1;
}

/* --steps: whether x was launched in a chosen step (its runtime call's
 * start, else its own) */
static int launched_in_steps(const struct atrace *t, const struct act *x)
{
    int64_t lt = x->ts;
    size_t k;
    if (x->rt != TT_KERN_NULL && tt__i64map_get(&t->rt_ts, x->rt, &k))
        lt = (int64_t)k;
    return tt__kern_in_steps(t->sp, t->nsp, lt);
}

/* the tables the activities do not read. A file's runtime calls and
 * slices are read without --steps too: the ingest hands a GPU row that
 * waits for its runtime call later, and the order of the rows breaks ties
 * of start; a database gives its GPU rows in stored order whatever it
 * skips (and its pages pass through SQLite's cache: less read, less
 * memory) */
#define ACT_SKIP                                                                           \
    (1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META | \
     1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)
#define ACT_SKIP_DB(steps) (ACT_SKIP | ((steps) ? 0 : 1u << TT_ROWS_SLICE | 1u << TT_ROWS_RUNTIME))

/* the rows of a file (db NULL) or of trace `id` of db into r; a file whose
 * rows lack the runtime links --steps needs is read again, twice
 * (TT_ROWS_RELINK), into the same consumer */
static int a_read(struct aread *r, const char *path, tt_db *db, int64_t id, tt__rows_result *res)
{
    tt__rowsink sink = { 0 }, in = { 0 };
    unsigned skip = ACT_SKIP;
    int rc, links = r->steps || tt__flt_wants_launch(r->fl);
    memset(&in, 0, sizeof(in));
    in.ctx = r;
    in.rows = a_rows;
    /* the filters: the GPU rows that fail never come */
    if ((rc = tt__flt_sink(r->fl, &in, 1u << TT_ROWS_GPU, &sink)) < 0)
        return rc;
    if (db)
        return (rc = tt__flt_load(r->fl, NULL, db, id)) < 0
                   ? rc : tt__db_rows(db, id, &sink, ACT_SKIP_DB(r->steps) | TT_ROWS_NO_ARGS, res);
    if ((r->steps || tt__flt_needs_load(r->fl)) && tt__spool_needed(path)) {
        /* standard input or a pipe: from a copy, which the way back reads again */
        tt__spool sp;
        const char *rd;
        if ((rc = tt__spool_input(&sp, path, &rd)) == 0)
            rc = a_read(r, rd, NULL, id, res);
        return tt__spool_end(&sp, path, rc);
    }
    if ((rc = tt__flt_load(r->fl, path, NULL, 0)) < 0)
        return rc;
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, skip | (links ? 0 : TT_ROWS_NO_STOP), res);
    if (rc != 0 || !links || !res->needs_db)
        return rc;
    tt__log(TT_LOG_DEBUG, "kernels", "kernels: %s: %s, read twice", path,
            res->why_db ? res->why_db : "links");
    free(res->metadata);
    res->metadata = NULL;
    aread_release(r);
    atrace_free(r->t);
    if (!(r->t = calloc(1, sizeof(*r->t))))
        return tt__oom();
    r->seq = 0;
    tt__flt_reset(r->fl);
    return tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, skip | TT_ROWS_RELINK, res);
}

/* "Memcpy HtoD (Pageable -> Device)": "Pageable" and "Device" */
static void mem_kinds(const char *name, char *src, char *dst, size_t cap)
{
    const char *o = strchr(name, '('), *a = o ? strstr(o, " -> ") : NULL;
    const char *c = a ? strchr(a, ')') : NULL;
    src[0] = dst[0] = '\0';
    if (!c || (size_t)(a - o - 1) >= cap || (size_t)(c - a - 4) >= cap)
        return;
    memcpy(src, o + 1, (size_t)(a - o - 1));
    src[a - o - 1] = '\0';
    memcpy(dst, a + 4, (size_t)(c - a - 4));
    dst[c - a - 4] = '\0';
}

/* the walk over the selected traces: begin/end around each trace's rows */
struct walk {
    void *ctx;
    void (*start)(void *ctx); /* after the checks, before the first trace */
    int (*begin)(void *ctx, int64_t trace, const char *path);
    int (*row)(void *ctx, const tt_kern_activity *a);
    int (*end)(void *ctx);
};

/* the visitor of kernels_input.c over the traces */
struct avisit {
    const tt_kern_options *o;
    const struct walk *w;
    const char *src; /* for the error without an activity */
    int file;
    int64_t found;   /* activities in the traces read and kept so far */
    int started;
};

static int v_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                  void **out)
{
    struct avisit *v = ctx;
    struct aread r;
    int rc;
    memset(&r, 0, sizeof(r));
    r.o = v->o;
    r.steps = tt__kern_steps_on(v->o);
    *out = NULL;
    if (!(r.t = calloc(1, sizeof(*r.t))))
        return tt__oom();
    tt_buf_init(&r.strs);
    rc = tt__flt_new(&r.fl, v->o->version >= 3 ? &v->o->filter : NULL);
    if (rc == 0)
        rc = a_read(&r, path, db, id, res);
    tt__flt_free(r.fl);
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0)
        rc = a_finish(&r);
    aread_release(&r);
    if (rc != 0) {
        atrace_free(r.t);
        return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
    }
    v->found += r.t->found;
    *out = r.t;
    return 0;
}

static void v_drop(void *ctx, void *p)
{
    struct avisit *v = ctx;
    struct atrace *t = p;
    if (t)
        v->found -= t->found;
    atrace_free(t);
}

/* one activity as the walk's row */
static void to_activity(const struct atrace *t, const struct act *x, tt_kern_activity *a,
                        char *src, char *dst, size_t cap)
{
    const struct shape *s = &t->sh[x->shape];
    int k;
    a->kind = kinds[s->kind];
    a->name = s->name;
    a->start_ns = x->ts;
    a->dur_ns = x->dur;
    a->correlation = x->corr;
    for (k = 0; k < 3; k++) {
        a->grid[k] = s->v[SH_GX + k];
        a->block[k] = s->v[SH_BX + k];
    }
    a->registers = s->v[SH_REGS];
    a->shared_mem = s->v[SH_SMEM];
    a->bytes = x->bytes;
    a->copy_kind = s->copy ? t->copies[s->copy - 1] : NULL;
    a->device = s->v[SH_DEVICE];
    a->context = s->v[SH_CTX];
    a->stream = s->v[SH_STREAM];
    mem_kinds(a->name, src, dst, cap);
    a->src_kind = src[0] ? src : NULL;
    a->dst_kind = dst[0] ? dst : NULL;
}

/* one trace's activities to the walk, in order: those of the chosen steps,
 * up to the row limit */
static int v_take(void *ctx, void *p, int64_t id, const char *path)
{
    struct avisit *v = ctx;
    const struct walk *w = v->w;
    struct atrace *t = p;
    tt_kern_activity a;
    struct iter it;
    struct act x;
    char src[32], dst[32];
    int64_t n = 0;
    int rc = 0, steps = tt__kern_steps_on(v->o);
    if (!v->started) { /* every trace read: whether one has an activity */
        if (!v->found)
            rc = tt__kern_nothing(v->src, v->file, v->o);
        else if (w->start)
            w->start(w->ctx);
        v->started = 1;
    }
    memset(&it, 0, sizeof(it));
    if (rc == 0 && w->begin)
        rc = w->begin(w->ctx, id, path);
    if (rc == 0)
        rc = it_init(&it, t);
    memset(&a, 0, sizeof(a));
    a.trace_id = id;
    while (rc == 0 && (v->o->row_limit < 0 || n < v->o->row_limit) &&
           (rc = it_next(&it, &x)) == 1) {
        rc = 0;
        if (steps && !launched_in_steps(t, &x))
            continue;
        to_activity(t, &x, &a, src, dst, sizeof(src));
        n++;
        rc = w->row(w->ctx, &a);
    }
    it_free(&it);
    if (rc == 0 && w->end)
        rc = w->end(w->ctx);
    atrace_free(t);
    return rc;
}

/* the selected traces of input (a file or directory; db NULL) or of db
 * through w; the errors before any row: no trace, or no activity in them */
static int walk_all(const char *input, tt_db *db, const tt_kern_options *o, const struct walk *w)
{
    struct avisit v;
    struct tt__visit kv;
    memset(&v, 0, sizeof(v));
    v.o = o;
    v.w = w;
    v.src = db ? (db->source ? db->source : db->path) : input;
    v.file = db ? db->source != NULL : 1;
    memset(&kv, 0, sizeof(kv));
    kv.ctx = &v;
    kv.read = v_read;
    kv.take = v_take;
    kv.drop = v_drop;
    return tt__kern_each(o, input, db, &kv);
}

int tt_kernels_db_activities(tt_db *db, const tt_kern_options *opts, tt_kern_activity_fn fn,
                             void *ctx)
{
    struct walk w;
    memset(&w, 0, sizeof(w));
    w.ctx = ctx;
    w.row = fn;
    return walk_all(NULL, db, opts, &w);
}

int tt_kernels_file_activities(const char *path, const tt_kern_options *opts,
                               tt_kern_activity_fn fn, void *ctx)
{
    struct walk w;
    memset(&w, 0, sizeof(w));
    w.ctx = ctx;
    w.row = fn;
    return walk_all(path, NULL, opts, &w);
}

/* ---- printing, CHUNK rows at a time through the table writer ---- */

enum { A_TRACE, A_START, A_DUR, A_CORR, A_KIND, A_GX, A_GY, A_GZ, A_BX, A_BY, A_BZ, A_REGS,
       A_SMEM, A_BYTES, A_GBPS, A_COPY, A_SRC, A_DST, A_DEVICE, A_CTX, A_STREAM, A_NAME,
       A_COUNT };

/* fixed widths: the parts of one table line up in text */
static const tt_table_col act_cols[A_COUNT] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Start (ns)", "start_ns", TT_COL_NS, 0, 0, 19, 0, 0, 0, 0 },
    { "Duration (ns)", "dur_ns", TT_COL_NS, 0, 0, 13, 0, 0, 0, 0 },
    { "CorrId", "correlation", TT_COL_INT, 0, 0, 8, 0, 0, 0, 0 },
    { "Kind", "kind", TT_COL_TEXT, 0, 0, 6, 0, 0, 0, 0 },
    { "GrdX", "grid_x", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "GrdY", "grid_y", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "GrdZ", "grid_z", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "BlkX", "block_x", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "BlkY", "block_y", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "BlkZ", "block_z", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Reg/Trd", "registers", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "SMem (B)", "shared_mem", TT_COL_BYTES, 0, 0, 8, 0, 0, 0, 0 },
    { "Bytes (MB)", "bytes", TT_COL_BYTES, 0, 0, 10, 0, 3, 1e6, 0 },
    { "GB/s", "gb_per_s", TT_COL_FLOAT, 0, 0, 7, 3, 2, 0, 0 },
    { "CopyKd", "copy_kind", TT_COL_TEXT, 0, 0, 6, 0, 0, 0, 0 },
    { "SrcMemKd", "src_kind", TT_COL_TEXT, 0, 0, 8, 0, 0, 0, 0 },
    { "DstMemKd", "dst_kind", TT_COL_TEXT, 0, 0, 8, 0, 0, 0, 0 },
    { "Device", "device", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Ctx", "context", TT_COL_INT, 0, 0, 4, 0, 0, 0, 0 },
    { "Strm", "stream", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Name", "name", TT_COL_TEXT, 0, 0, 50, 0, 0, 0, TT_COL_QUOTE },
};

struct aprint {
    const tt_kern_options *o;
    FILE *out;
    tt_jw jw;    /* JSON: the document */
    tt_table *t;
    int traces;  /* traces begun */
    int parts;   /* parts of this trace's table written */
    int csv_any; /* CSV: the header is out */
    int64_t rows; /* of this trace */
};

static void set_i64(tt_table *t, size_t col, int64_t v)
{
    if (v != TT_KERN_NULL)
        tt_table_set_int(t, col, v);
}

static int add_activity(tt_table *t, const tt_kern_activity *a)
{
    int i;
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, A_KIND, a->kind) < 0 ||
        tt_table_set_text(t, A_NAME, a->name) < 0 ||
        tt_table_set_text(t, A_COPY, a->copy_kind) < 0 ||
        tt_table_set_text(t, A_SRC, a->src_kind) < 0 ||
        tt_table_set_text(t, A_DST, a->dst_kind) < 0)
        return tt__oom();
    set_i64(t, A_TRACE, a->trace_id);
    set_i64(t, A_START, a->start_ns);
    set_i64(t, A_DUR, a->dur_ns);
    set_i64(t, A_CORR, a->correlation);
    for (i = 0; i < 3; i++) {
        set_i64(t, A_GX + (size_t)i, a->grid[i]);
        set_i64(t, A_BX + (size_t)i, a->block[i]);
    }
    set_i64(t, A_REGS, a->registers);
    set_i64(t, A_SMEM, a->shared_mem);
    set_i64(t, A_BYTES, a->bytes);
    if (a->bytes != TT_KERN_NULL && a->dur_ns != TT_KERN_NULL && a->dur_ns > 0)
        tt_table_set_float(t, A_GBPS, (double)a->bytes / (double)a->dur_ns); /* bytes/ns */
    set_i64(t, A_DEVICE, a->device);
    set_i64(t, A_CTX, a->context);
    set_i64(t, A_STREAM, a->stream);
    return 0;
}

/* the rows so far as one part of the trace's table; final: its last */
static int flush_part(struct aprint *p, int final)
{
    static const size_t text_cols[] = { A_START, A_DUR, A_CORR, A_GX, A_GY, A_GZ, A_BX, A_BY,
                                        A_BZ, A_REGS, A_SMEM, A_BYTES, A_GBPS, A_SRC, A_DST,
                                        A_DEVICE, A_CTX, A_STREAM, A_NAME };
    static const size_t csv_cols[] = { A_TRACE, A_START, A_DUR, A_CORR, A_KIND, A_GX, A_GY,
                                       A_GZ, A_BX, A_BY, A_BZ, A_REGS, A_SMEM, A_BYTES, A_GBPS,
                                       A_COPY, A_SRC, A_DST, A_DEVICE, A_CTX, A_STREAM, A_NAME };
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    int rc;
    if (!final && tt_table_nrows(p->t) == 0)
        return 0;
    switch (p->o->format) {
    case TT_FORMAT_JSON:
        w.cols = csv_cols + 1; /* the trace is the enclosing object's */
        w.ncols = TT_ARRAY_SIZE(csv_cols) - 1;
        break;
    case TT_FORMAT_CSV:
        w.format = TT_FORMAT_CSV;
        w.cols = csv_cols;
        w.ncols = TT_ARRAY_SIZE(csv_cols);
        w.no_header = p->csv_any;
        p->csv_any = 1;
        break;
    default:
        if (final && p->rows == 0 && p->o->format == TT_FORMAT_MARKDOWN) {
            fputs("(none)\n", p->out);
            tt_table_free(p->t);
            p->t = NULL;
            return 0;
        }
        w.format = p->o->format == TT_FORMAT_MARKDOWN ? TT_FORMAT_MARKDOWN : TT_FORMAT_TABLE;
        w.cols = text_cols;
        w.ncols = TT_ARRAY_SIZE(text_cols);
        w.no_header = p->parts > 0;
        w.indent = " ";
    }
    if (p->o->format == TT_FORMAT_JSON) {
        rc = tt__table_json_rows(p->t, &w, &p->jw, 2);
        if (final) {
            tt_jw_nl(&p->jw, 0);
            tt_jw_end(&p->jw); /* the rows */
        }
    } else {
        rc = tt_table_write(p->t, &w, p->out);
    }
    p->parts++;
    tt_table_free(p->t);
    p->t = NULL;
    if (rc == 0 && !final && !(p->t = tt_table_new(act_cols, A_COUNT)))
        rc = tt__oom();
    if (final && p->rows == 0 && p->o->format == TT_FORMAT_TABLE)
        fputs(" (none)\n", p->out);
    return rc;
}

static int pr_begin(void *ctx, int64_t trace, const char *path)
{
    struct aprint *p = ctx;
    int format = p->o->format;
    if (format == TT_FORMAT_JSON) {
        if (p->traces)
            tt_jw_nl(&p->jw, 0);
        tt_jw_obj(&p->jw);
        tt_jw_kint(&p->jw, "trace_id", trace);
        tt_jw_kstr(&p->jw, "path", path);
        tt_jw_kstr(&p->jw, "what", "activities");
        tt_jw_karr(&p->jw, "rows");
    } else if (format == TT_FORMAT_MARKDOWN) {
        fprintf(p->out, "%s### GPU activity trace, trace %" PRId64 ": ", p->traces ? "\n" : "",
                trace);
        tt_table_markdown_text(p->out, path);
        fputs("\n\n", p->out);
    } else if (format != TT_FORMAT_CSV) {
        tt_buf v = TT_BUF_INIT;
        fprintf(p->out, "%sGPU activity trace, trace %" PRId64 ": %s\n\n", p->traces ? "\n" : "",
                trace, tt_visible(&v, path));
        tt_buf_release(&v);
    }
    p->traces++;
    p->parts = 0;
    p->rows = 0;
    if (!(p->t = tt_table_new(act_cols, A_COUNT)))
        return tt__oom();
    return 0;
}

static int pr_row(void *ctx, const tt_kern_activity *a)
{
    struct aprint *p = ctx;
    int rc;
    if ((rc = add_activity(p->t, a)) < 0)
        return rc;
    p->rows++;
    return tt_table_nrows(p->t) >= CHUNK ? flush_part(p, 0) : 0;
}

static int pr_end(void *ctx)
{
    struct aprint *p = ctx;
    int rc = flush_part(p, 1);
    if (p->o->format == TT_FORMAT_JSON)
        tt_jw_end(&p->jw); /* the trace */
    return rc;
}

static void pr_start(void *ctx)
{
    struct aprint *p = ctx;
    if (p->o->format == TT_FORMAT_JSON) {
        tt_jw_obj(&p->jw);
        tt_jw_karr(&p->jw, "traces");
    }
}

/* the activities of input (a file or a directory of them; db NULL) or of
 * db, printed */
int tt__kern_print_activities(const char *input, tt_db *db, const tt_kern_options *o, FILE *out)
{
    struct aprint p;
    struct walk w;
    int rc;
    memset(&p, 0, sizeof(p));
    p.o = o;
    p.out = out;
    tt_jw_init_file(&p.jw, out, TT_JW_LINE);
    memset(&w, 0, sizeof(w));
    w.ctx = &p;
    w.start = pr_start;
    w.begin = pr_begin;
    w.row = pr_row;
    w.end = pr_end;
    rc = walk_all(input, db, o, &w);
    tt_table_free(p.t);
    if (o->format == TT_FORMAT_JSON && rc == 0) {
        tt_jw_nl(&p.jw, 0);
        tt_jw_end(&p.jw);
        tt_jw_end(&p.jw);
        rc = tt_jw_finish(&p.jw);
        return rc == TT_ENOMEM ? tt__oom() : 0; /* write errors: the caller's (ferror) */
    }
    tt_jw_finish(&p.jw); /* what was written so far, and free */
    return rc;
}
