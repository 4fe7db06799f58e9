/*
 * compare/crosscheck/crosscheck_rows.c - the traces of `tracetool crosscheck`
 * read from the record stream (store/ingest_rows.h): a trace file through
 * tt__ingest_rows, a database's trace through tt__db_rows, the same
 * consumer for both. What is kept: an ET's op nodes, a Kineto trace's
 * cpu_op / user_annotation slices, their strings interned by content (the
 * ids of two files, or of a file and a database, never mix), and the
 * indexes the join looks them up by (struct tinfo).
 *
 * Slice ids are those a database made of the same inputs in the same order
 * would have (a file's ids follow the previous files' largest), so that the
 * report names the same slices whether it read the files or a database.
 */
#include "compare/crosscheck/crosscheck_state.h"
#include "common/log.h"
#include "store/ingest_rows.h"

static const char *const root_names[] = {
    "[pytorch|profiler|execution_trace|process]",
    "[pytorch|profiler|execution_trace|thread]",
    /* the same roots before PyTorch 2.1 renamed the observer */
    "[pytorch|profiler|execution_graph|process]",
    "[pytorch|profiler|execution_graph|thread]",
};

/* ---------------------------------------------------------------- strings */

static uint64_t str_hash(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static size_t str_slot(const struct xstrs *t, const char *s, size_t len)
{
    size_t i = (size_t)str_hash(s, len) & (t->hcap - 1);
    while (t->h[i]) {
        const char *o = t->s[t->h[i] - 1];
        if (!strncmp(o, s, len) && o[len] == 0)
            break;
        i = (i + 1) & (t->hcap - 1);
    }
    return i;
}

/* the id of s[0..len) (added when new); -1 on OOM */
int64_t xc_intern(struct xstrs *t, const char *s, size_t len)
{
    size_t i;
    char *c;
    if (t->hcap && t->h[i = str_slot(t, s, len)])
        return t->h[i];
    if (2 * (t->n + 1) >= t->hcap) {
        size_t cap = t->hcap ? 2 * t->hcap : 1024, k;
        uint32_t *h = calloc(cap, sizeof(*h));
        if (!h)
            return -1;
        free(t->h);
        t->h = h;
        t->hcap = cap;
        for (k = 0; k < t->n; k++)
            t->h[str_slot(t, t->s[k], strlen(t->s[k]))] = (uint32_t)k + 1;
    }
    if (TT_ALLOC_GROW(t->s, t->n + 1, t->alloc) < 0 || !(c = malloc(len + 1)))
        return -1;
    memcpy(c, s, len);
    c[len] = 0;
    t->s[t->n++] = c;
    t->h[str_slot(t, c, len)] = (uint32_t)t->n;
    return (int64_t)t->n;
}

void xc_strs_free(struct xstrs *t)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->h);
    memset(t, 0, sizeof(*t));
}

/* ---------------------------------------------------------------- the consumer */

struct ld {
    struct xc *x;
    struct tinfo *t;
    int64_t *loc; /* the source's string id -> ours (0: none) */
    size_t nloc;
    int64_t base, maxid, et_row;
    size_t aops, ak, ath;
    int *thh; /* (pid, tid) -> th index + 1 */
    size_t thhcap;
};

static int64_t loc_str(const struct ld *l, const tt__cell *c)
{
    if (c->type != TT_CELL_INT || c->i < 0 || (size_t)c->i >= l->nloc)
        return 0;
    return l->loc[c->i];
}

static void cell_id(tt_xc_id *v, const tt__cell *c, const char *text)
{
    v->i = 0;
    v->s[0] = 0;
    if (c->type == TT_CELL_INT) {
        v->type = TT_XC_ID_INT;
        v->i = c->i;
    } else if (c->type == TT_CELL_TEXT) {
        size_t n = c->len < sizeof(v->s) - 1 ? c->len : sizeof(v->s) - 1;
        v->type = TT_XC_ID_TEXT;
        memcpy(v->s, text + c->i, n);
        v->s[n] = 0;
    } else {
        v->type = TT_XC_ID_NULL;
    }
}

static size_t th_slot(const struct ld *l, const tt_xc_id *pid, const tt_xc_id *tid)
{
    uint64_t h = xc_val_hash(tid, xc_val_hash(pid, 0xcbf29ce484222325ull));
    size_t i = (size_t)(h ^ (h >> 29)) & (l->thhcap - 1);
    while (l->thh[i]) {
        const struct kthid *k = &l->t->th[l->thh[i] - 1];
        if (xc_val_eq(&k->tid, tid) && xc_val_eq(&k->pid, pid))
            break;
        i = (i + 1) & (l->thhcap - 1);
    }
    return i;
}

/* the index of thread (pid, tid) in t->th, added when new; -1 on OOM */
static int th_index(struct ld *l, const tt_xc_id *pid, const tt_xc_id *tid)
{
    struct tinfo *t = l->t;
    size_t i;
    if (l->thhcap && l->thh[i = th_slot(l, pid, tid)])
        return l->thh[i] - 1;
    if (TT_ALLOC_GROW(t->th, t->nth + 1, l->ath) < 0)
        return -1;
    if (2 * (t->nth + 1) >= l->thhcap) {
        size_t cap = l->thhcap ? 2 * l->thhcap : 64, k;
        int *h = calloc(cap, sizeof(*h));
        if (!h)
            return -1;
        free(l->thh);
        l->thh = h;
        l->thhcap = cap;
        for (k = 0; k < t->nth; k++)
            l->thh[th_slot(l, &t->th[k].pid, &t->th[k].tid)] = (int)k + 1;
    }
    t->th[t->nth].pid = *pid;
    t->th[t->nth].tid = *tid;
    l->thh[th_slot(l, pid, tid)] = (int)t->nth + 1;
    return (int)t->nth++;
}

static int is_root(const char *s)
{
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(root_names); i++) {
        if (!strcmp(s, root_names[i]))
            return 1;
    }
    return 0;
}

static int on_str(struct ld *l, const tt__cell *c, const char *text)
{
    int64_t id = c[TT_C_STR_ID].i, g;
    const tt__cell *s = &c[TT_C_STR_S];
    if (id < 0)
        return 0;
    if ((size_t)id >= l->nloc) {
        size_t n = l->nloc ? l->nloc : 1024;
        int64_t *v;
        while (n <= (size_t)id)
            n *= 2;
        if (!(v = realloc(l->loc, n * sizeof(*v))))
            return xc_oom();
        memset(v + l->nloc, 0, (n - l->nloc) * sizeof(*v));
        l->loc = v;
        l->nloc = n;
    }
    if ((g = xc_intern(&l->x->str, s->type == TT_CELL_TEXT ? text + s->i : "",
                       s->type == TT_CELL_TEXT ? s->len : 0)) < 0)
        return xc_oom();
    l->loc[id] = g;
    return 0;
}

static int on_slice(struct ld *l, const tt__cell *c, const char *text)
{
    int64_t cat = loc_str(l, &c[TT_C_SL_CAT]), id = c[TT_C_SL_ID].i;
    struct tinfo *t = l->t;
    struct kop *k;
    tt_xc_id pid, tid;
    if (id > l->maxid)
        l->maxid = id;
    if (!cat || (cat != l->x->cat_cpu && cat != l->x->cat_ua))
        return 0;
    if (TT_ALLOC_GROW(t->k, t->nk + 1, l->ak) < 0)
        return xc_oom();
    k = &t->k[t->nk++];
    k->id = id + l->base;
    k->has_ext = c[TT_C_SL_EXTERNAL_ID].type == TT_CELL_INT;
    k->ext = k->has_ext ? c[TT_C_SL_EXTERNAL_ID].i : 0;
    k->has_rf = c[TT_C_SL_RF_ID].type == TT_CELL_INT;
    k->rf = k->has_rf ? c[TT_C_SL_RF_ID].i : 0;
    k->name = loc_str(l, &c[TT_C_SL_NAME]);
    k->ts = c[TT_C_SL_TS].type == TT_CELL_INT ? c[TT_C_SL_TS].i : 0;
    k->dur = c[TT_C_SL_DUR].type == TT_CELL_INT ? c[TT_C_SL_DUR].i : 0;
    k->seq = c[TT_C_SL_SEQ_NR].type == TT_CELL_INT ? c[TT_C_SL_SEQ_NR].i : -1;
    cell_id(&pid, &c[TT_C_SL_PID], text);
    cell_id(&tid, &c[TT_C_SL_TID], text);
    if ((k->th = th_index(l, &pid, &tid)) < 0)
        return xc_oom();
    return 0;
}

/* an ET node: an op unless it is a root; a node without a name is not one
 * (it has no string to join) */
static int on_et(struct ld *l, const tt__cell *c)
{
    struct tinfo *t = l->t;
    int64_t row = l->et_row++, name = loc_str(l, &c[TT_C_ET_NAME]);
    struct etop *o;
    if (!name)
        return 0;
    t->et_nodes++;
    if (is_root(l->x->str.s[name - 1])) {
        t->et_roots++;
        return 0;
    }
    if (TT_ALLOC_GROW(t->ops, t->nops + 1, l->aops) < 0)
        return xc_oom();
    o = &t->ops[t->nops++];
    o->row = row;
    o->node_id = c[TT_C_ET_NODE_ID].type == TT_CELL_INT ? c[TT_C_ET_NODE_ID].i : 0;
    o->has_rf = c[TT_C_ET_RF_ID].type == TT_CELL_INT;
    o->rf = o->has_rf ? c[TT_C_ET_RF_ID].i : 0;
    o->name = name;
    o->has_tid = c[TT_C_ET_TID].type == TT_CELL_INT;
    o->tid = o->has_tid ? c[TT_C_ET_TID].i : 0;
    o->seq = c[TT_C_ET_SEQ_ID].type == TT_CELL_INT ? c[TT_C_ET_SEQ_ID].i : -1;
    return 0;
}

static int on_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct ld *l = ctx;
    int r, rc = 0;
    for (r = 0; r < nrows && rc == 0; r++) {
        const tt__cell *c = cells + (size_t)r * (size_t)ncols;
        if (table == TT_ROWS_STR)
            rc = on_str(l, c, text);
        else if (table == TT_ROWS_SLICE)
            rc = on_slice(l, c, text);
        else if (table == TT_ROWS_ET)
            rc = on_et(l, c);
    }
    return rc;
}

/* ---------------------------------------------------------------- indexes */

static int cmp_ops(const void *a, const void *b)
{
    const struct etop *x = a, *y = b;
    if (x->has_rf != y->has_rf)
        return x->has_rf ? -1 : 1;
    if (x->rf != y->rf)
        return x->rf < y->rf ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_kop_id(const void *a, const void *b)
{
    const struct kop *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp3(int64_t a1, int64_t b1, int64_t a2, int64_t b2, int64_t a3, int64_t b3)
{
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    if (a2 != b2)
        return a2 < b2 ? -1 : 1;
    return a3 < b3 ? -1 : a3 > b3;
}

/* qsort_r comparators of positions into the kop array */
static int cmp_by_ext(const void *a, const void *b, void *ctx)
{
    const struct kop *k = ctx, *x = &k[*(const uint32_t *)a], *y = &k[*(const uint32_t *)b];
    return cmp3(x->ext, y->ext, x->id, y->id, 0, 0);
}

static int cmp_by_rf(const void *a, const void *b, void *ctx)
{
    const struct kop *k = ctx, *x = &k[*(const uint32_t *)a], *y = &k[*(const uint32_t *)b];
    return cmp3(x->rf, y->rf, x->id, y->id, 0, 0);
}

static int cmp_by_thr(const void *a, const void *b, void *ctx)
{
    const struct kop *k = ctx, *x = &k[*(const uint32_t *)a], *y = &k[*(const uint32_t *)b];
    return cmp3(x->th, y->th, x->ext, y->ext, x->id, y->id);
}

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
    const struct kop *k = ctx, *x = &k[*(const uint32_t *)a], *y = &k[*(const uint32_t *)b];
    return cmp3(x->name, y->name, x->ext, y->ext, x->id, y->id);
}

void xc_ext_range(const struct tinfo *t, const uint32_t *by, size_t n, int64_t a, int64_t b,
                  size_t *lo, size_t *hi)
{
    size_t l = 0, h = n;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (t->k[by[mid]].ext < a)
            l = mid + 1;
        else
            h = mid;
    }
    *lo = l;
    h = n;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (t->k[by[mid]].ext <= b)
            l = mid + 1;
        else
            h = mid;
    }
    *hi = a <= b ? l : *lo;
}

static int build_indexes(struct tinfo *t)
{
    size_t i, ne = 0, nr = 0, n = t->nk ? t->nk : 1;
    if (t->nops)
        TT_QSORT(t->ops, t->nops, sizeof(*t->ops), cmp_ops);
    for (i = 0; i < t->nops && t->ops[i].has_rf; i++)
        ;
    t->nrf = i;
    for (i = 1; i < t->nrf; i++) {
        if (t->ops[i].rf == t->ops[i - 1].rf)
            t->dup_et++;
    }
    if (t->nk > UINT32_MAX)
        return tt_error_set(TT_ENOMEM, "too many Kineto ops in one trace");
    if (t->nk)
        TT_QSORT(t->k, t->nk, sizeof(*t->k), cmp_kop_id);
    t->rule = malloc(n * sizeof(*t->rule));
    t->by_ext = malloc(n * sizeof(*t->by_ext));
    t->by_rf = malloc(n * sizeof(*t->by_rf));
    t->by_thr = malloc(n * sizeof(*t->by_thr));
    t->by_name = malloc(n * sizeof(*t->by_name));
    if (!t->rule || !t->by_ext || !t->by_rf || !t->by_thr || !t->by_name)
        return xc_oom();
    for (i = 0; i < t->nk; i++) {
        const struct kop *k = &t->k[i];
        int64_t v = k->has_rf ? k->rf : -1;
        t->rule[i] = v;
        if (v != 0 && v != -1)
            t->k_rf_nonzero++;
        if (k->has_ext) {
            t->by_ext[ne] = t->by_thr[ne] = t->by_name[ne] = (uint32_t)i;
            ne++;
        }
        if (k->has_rf && k->rf != 0)
            t->by_rf[nr++] = (uint32_t)i;
    }
    t->nkext = ne;
    t->nkrf = nr;
    t->k_ext = (int64_t)ne;
    if (t->nk)
        TT_QSORT(t->rule, t->nk, sizeof(*t->rule), xc_cmp_i64);
    TT_QSORT_R(t->by_ext, ne, sizeof(*t->by_ext), cmp_by_ext, t->k);
    TT_QSORT_R(t->by_thr, ne, sizeof(*t->by_thr), cmp_by_thr, t->k);
    TT_QSORT_R(t->by_name, ne, sizeof(*t->by_name), cmp_by_name, t->k);
    TT_QSORT_R(t->by_rf, nr, sizeof(*t->by_rf), cmp_by_rf, t->k);
    return 0;
}

void xc_trace_release(struct tinfo *t)
{
    free(t->path);
    free(t->ops);
    free(t->k);
    free(t->th);
    free(t->rule);
    free(t->by_ext);
    free(t->by_rf);
    free(t->by_thr);
    free(t->by_name);
    memset(t, 0, sizeof(*t));
}

/* the rows loaded into t dropped (a file read again through a database) */
static void trace_reset(struct tinfo *t, struct ld *l)
{
    free(t->ops);
    free(t->k);
    free(t->th);
    t->ops = NULL;
    t->k = NULL;
    t->th = NULL;
    t->nops = t->nk = t->nth = 0;
    t->et_nodes = t->et_roots = 0;
    free(l->loc);
    free(l->thh);
    l->loc = NULL;
    l->thh = NULL;
    l->nloc = l->thhcap = 0;
    l->aops = l->ak = l->ath = 0;
    l->et_row = l->maxid = 0;
}

/* ---------------------------------------------------------------- sources */

static const unsigned SKIP = ((1u << TT_ROWS_COUNT) - 1) &
                             ~((1u << TT_ROWS_SLICE) | (1u << TT_ROWS_ET) | (1u << TT_ROWS_STR));

static void set_format(struct tinfo *t, tt_trace_format f)
{
    t->is_et = f == TT_FMT_ET;
    t->is_kineto = f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY;
}

int xc_load_db(struct xc *x, struct tinfo *t)
{
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    struct ld l;
    int rc;
    if (t->loaded)
        return 0;
    memset(&l, 0, sizeof(l));
    memset(&sink, 0, sizeof(sink));
    l.x = x;
    l.t = t;
    sink.ctx = &l;
    sink.rows = on_rows;
    rc = tt__db_rows(x->db, t->id, &sink, SKIP | TT_ROWS_NO_ARGS, &res);
    free(l.loc);
    free(l.thh);
    if (rc < 0)
        return rc;
    free(res.metadata);
    t->loaded = 1;
    return build_indexes(t);
}

/*
 * A trace file: read from its rows, or, when they would lack what only the
 * SQL passes of an ingest give (needs_db: a 'B' slice closed after its row
 * was handed over has no dur yet), read again, twice (TT_ROWS_RELINK).
 */
int xc_load_file(struct xc *x, const char *path, struct tinfo *t, int64_t *slice_base)
{
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    struct ld l;
    size_t i;
    int rc;
    memset(&l, 0, sizeof(l));
    memset(&sink, 0, sizeof(sink));
    l.x = x;
    l.t = t;
    l.base = *slice_base;
    sink.ctx = &l;
    sink.rows = on_rows;
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, SKIP | TT_ROWS_NO_STOP, &res);
    if (rc == 0) {
        free(res.metadata);
        memcpy(t->hash, res.stats.hash, sizeof(t->hash));
        t->hash[sizeof(t->hash) - 1] = 0;
        set_format(t, res.format);
        t->has_rank = res.have_rank;
        t->rank = res.rank;
        t->has_pid = res.have_pid;
        t->pid = res.pid;
        for (i = 0; i < x->nt; i++) {
            if (!strcmp(x->t[i].hash, t->hash))
                break;
        }
        if (i < x->nt) { /* the same content given twice: checked once */
            tt__log(TT_LOG_DEBUG, "crosscheck", "%s: the same content as %s, left out", path,
                    x->t[i].path);
            rc = 1;
            goto out;
        }
    }
    if (rc == 0 && res.needs_db) {
        tt__log(TT_LOG_DEBUG, "crosscheck", "%s: read twice (%s)", path,
                res.why_db ? res.why_db : "");
        trace_reset(t, &l);
        rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, SKIP | TT_ROWS_RELINK, &res);
        if (rc == 0)
            free(res.metadata);
    } else if (rc == 0) {
        tt__log(TT_LOG_DEBUG, "crosscheck", "%s: read from its rows", path);
    }
    if (rc == 0) {
        *slice_base += l.maxid;
        t->loaded = 1;
        rc = build_indexes(t);
    }
out:
    free(l.loc);
    free(l.thh);
    return rc;
}
