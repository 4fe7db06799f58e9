/*
 * analyze/memtimeline/memtimeline_et.c - the memory timeline's pass 1b: tensor
 * identities from a linked Execution Trace name what a block is for.
 *
 * From a database, the links are those `tracetool ingest DB ET` or
 * `crosscheck` stored (table et_links): this pass reads them, the ET's
 * nodes and the device's allocations there with SQL. From the files
 * (memtimeline FILE --et ET), the same model is filled from the rows: the
 * ET file's nodes and their tensor arguments (the JSON walked as SQLite's
 * json_tree walks it), crosscheck's links kept in memory
 * (compare/crosscheck/links.h), each slice's parent from the trace's rows.
 */
#include "common/compat.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "compare/crosscheck/links.h"
#include "formats/json.h"
#include "common/arena.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "tracetool/render.h"

/* ?1 trace, ?2 device type, ?3 device id: the device filter */
static void bind_device(sqlite3_stmt *st, int64_t trace, int dtype, int64_t did)
{
    sqlite3_bind_int64(st, 1, trace);
    sqlite3_bind_int(st, 2, dtype);
    sqlite3_bind_int64(st, 3, did);
}

/* one integer of a query bound as bind_device (*ok: not null) */
static int64_t q1(tt_db *db, const char *sql, int64_t a, int b, int64_t c, int *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    bind_device(st, a, b, c);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        v = sqlite3_column_int64(st, 0);
        *ok = 1;
    }
    sqlite3_finalize(st);
    return v;
}

/* ---- pass 1b: tensor identities from a linked Execution Trace ---- */

/*
 * When the trace's CPU ops are joined to an Execution Trace (table et_links,
 * written by `tracetool ingest` or `crosscheck`), the ET's data flow names
 * what a block is for, as torch's own categorizer does from tensor
 * identities (docs/TORCH.md 4.2). Each storage of the ET gets: the topmost node
 * whose outputs first show it (its creator), whether it is the gradient
 * input of torch::autograd::AccumulateGrad, and whether a backward node reads
 * it. An allocation inside an op is the creator's storage of that op (or of
 * one of its ancestors) with the same device and size (the allocator rounds
 * up to 512 bytes). Result: mem_id -> (category, rule), a map.
 */
const char *const tt__memtl_et_rule[ETR_COUNT] = {
    NULL,
    "GRADIENT (ET): the gradient input of torch::autograd::AccumulateGrad",
    "ACTIVATION (ET): made by a forward op, read by a backward op",
    "AUTOGRAD_DETAIL (ET): made by a backward op, not a gradient",
};

enum { EN_BW = 1, EN_OPT = 2, EN_AG = 4 };

struct etnode {
    int64_t node_id, parent;
    unsigned flags;      /* EN_* of the node and its ancestors */
    unsigned own;        /* EN_* of the node itself */
};

struct etstore {
    int64_t creator;     /* node_id of the topmost node first showing it */
    int64_t need;        /* bytes: (offset + numel) * itemsize */
    int64_t dev_id;
    int dev_type;        /* 0 cpu, 1 cuda, -1 other */
    unsigned char created, grad, bw_read, used;
};

static int et_dev(const char *s, int *type, int64_t *id)
{
    *id = -1;
    if (!s)
        return -1;
    if (!strcmp(s, "cpu")) {
        *type = 0;
        return 0;
    }
    if (!strncmp(s, "cuda", 4)) {
        *type = 1;
        *id = s[4] == ':' ? strtoll(s + 5, NULL, 10) : 0;
        return 0;
    }
    *type = -1;
    return 0;
}

static int by_creator(const void *a, const void *b)
{
    const struct etstore *x = a, *y = b;
    return x->creator < y->creator ? -1 : x->creator > y->creator;
}

/* what the ET pass holds: the ET's nodes and the storages their ops create */
struct etx {
    tt_db *db;
    int64_t trace, et;
    int dtype;
    int64_t did;
    struct etnode *nodes;
    size_t nn, an;
    struct etstore *sto; /* by creator, once loaded */
    size_t ns, as;
    size_t *skip;        /* sto[skip[i]]: the first storage at or after i not used yet */
    struct i64map nmap, rowmap; /* node_id -> nodes[], et_nodes.id -> nodes[] */
    int64_t *memids;     /* the trace's memory ids in order: event k's is memids[k - 1] */
    size_t nmemids, amemids;
};

/* the trace's memory ids in order (the rows' event numbers stand for them) */
static int et_load_memids(struct etx *x)
{
    sqlite3_stmt *st = NULL;
    int r;
    if (tt_db_prepare(x->db, &st, "SELECT id FROM memory WHERE trace_id = ?1 ORDER BY id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, x->trace);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (TT_ALLOC_GROW(x->memids, x->nmemids + 1, x->amemids) < 0) {
            sqlite3_finalize(st);
            return tt__oom();
        }
        x->memids[x->nmemids++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read memory events");
}

/* the event number of memory id (0: none) */
static int64_t et_event_of(const struct etx *x, int64_t id)
{
    size_t lo = 0, hi = x->nmemids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->memids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->nmemids && x->memids[lo] == id ? (int64_t)lo + 1 : 0;
}

/* EN_* of a node by its name */
static unsigned et_name_flags(const char *name)
{
    unsigned f = 0;
    if (tt__memtl_str_has(name, "autograd::engine::evaluate_function") ||
        tt__memtl_str_has(name, "Backward"))
        f |= EN_BW;
    if (name && (!strncmp(name, "Optimizer.step", 14) || !strncmp(name, "Optimizer.zero_grad", 19)))
        f |= EN_OPT;
    if (tt__memtl_str_has(name, "AccumulateGrad"))
        f |= EN_AG | EN_BW;
    return f;
}

/* x->nodes[x->nn] (node_id, parent, own set) counted in: its flags with its
 * parent's (an earlier node), indexed by node_id */
static int et_node_added(struct etx *x)
{
    struct etnode *e = &x->nodes[x->nn];
    size_t p;
    e->flags = e->own;
    if (e->parent != e->node_id && tt__i64map_get(&x->nmap, e->parent, &p))
        e->flags |= x->nodes[p].flags;
    if (tt__i64map_put(&x->nmap, e->node_id, x->nn) < 0)
        return TT_ENOMEM;
    x->nn++;
    return 0;
}

/* the ET's nodes in id order (a parent's id is below its children's) */
static int et_load_nodes(struct etx *x)
{
    sqlite3_stmt *st = NULL;
    int r;
    if (tt_db_prepare(x->db, &st, "SELECT n.id, n.node_id, n.parent, s.s FROM et_nodes AS n"
                                  " JOIN strings AS s ON s.id = n.name WHERE n.trace_id = ?1"
                                  " ORDER BY n.node_id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, x->et);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 3);
        struct etnode *e;
        if (TT_ALLOC_GROW(x->nodes, x->nn + 1, x->an) < 0)
            goto nomem;
        e = &x->nodes[x->nn];
        e->node_id = sqlite3_column_int64(st, 1);
        e->parent = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        e->own = et_name_flags(name);
        if (et_node_added(x) < 0 ||
            tt__i64map_put(&x->rowmap, sqlite3_column_int64(st, 0), x->nn - 1) < 0)
            goto nomem;
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read the Execution Trace");
nomem:
    sqlite3_finalize(st);
    return tt__oom();
}

/* one tensor argument of a node, as the ET gives it */
struct ettensor {
    int64_t node, sid, need, dev_id;
    int out, top, dev_type;
    size_t seq; /* its place in the ET file (the order among equals) */
};

/* one tensor argument of a node: note the storage it shows */
static int et_tensor(struct etx *x, struct i64map *smap, const struct ettensor *t)
{
    size_t ni, si, pi;
    const struct etnode *e;
    struct etstore *s;
    if (!tt__i64map_get(&x->nmap, t->node, &ni))
        return 0;
    e = &x->nodes[ni];
    if (!tt__i64map_get(smap, t->sid, &si)) {
        if (TT_ALLOC_GROW(x->sto, x->ns + 1, x->as) < 0)
            return TT_ENOMEM;
        si = x->ns++;
        s = &x->sto[si];
        memset(s, 0, sizeof(*s));
        s->creator = t->node;
        s->created = (unsigned char)t->out;
        s->need = t->need;
        s->dev_type = t->dev_type;
        s->dev_id = t->dev_id;
        if (tt__i64map_put(smap, t->sid, si) < 0)
            return TT_ENOMEM;
    }
    s = &x->sto[si];
    if (!t->out && (e->own & EN_AG))
        s->grad = 1;
    /* torch: the first input of AccumulateGrad's child (detach / add_) */
    if (!t->out && t->top && e->parent >= 0 && tt__i64map_get(&x->nmap, e->parent, &pi) &&
        (x->nodes[pi].own & EN_AG))
        s->grad = 1;
    if (!t->out && (e->flags & EN_BW) && t->node != s->creator)
        s->bw_read = 1;
    return 0;
}

/* the storages created (sized), sorted by creator, and the skip list */
static int et_storages_done(struct etx *x)
{
    size_t i, k = 0;
    for (i = 0; i < x->ns; i++)
        if (x->sto[i].created && x->sto[i].need > 0)
            x->sto[k++] = x->sto[i];
    x->ns = k;
    TT_QSORT(x->sto, x->ns, sizeof(*x->sto), by_creator);
    if (!(x->skip = malloc((x->ns + 1) * sizeof(*x->skip))))
        return tt__oom();
    for (i = 0; i <= x->ns; i++)
        x->skip[i] = i;
    return 0;
}

/* every tensor argument, in node order: [id, storage, offset, numel,
 * itemsize, device]; then the created storages sorted by creator */
static int et_load_storages(struct etx *x)
{
    sqlite3_stmt *st = NULL;
    struct i64map smap = { 0 };
    int r, rc = 0;
    if (tt_db_prepare(x->db, &st,
#define ET_TENSOR(col) \
    " FROM et_nodes AS n, json_tree(n." col ") AS t WHERE n.trace_id = ?1" \
    "  AND json_valid(n." col ") AND t.type = 'array' AND t.parent IS NOT NULL" \
    "  AND json_array_length(t.value) = 6 AND json_type(t.value, '$[0]') = 'integer'" \
    "  AND json_type(t.value, '$[1]') = 'integer' AND json_type(t.value, '$[5]') = 'text'"
                      "SELECT n.node_id AS node, 0 AS io, t.path = '$' AND t.key = 0 AS top,"
                      " t.value ->> 1, (t.value ->> 2 + t.value ->> 3) * (t.value ->> 4),"
                      " t.value ->> 5" ET_TENSOR("inputs")
                      " UNION ALL SELECT n.node_id, 1, 0,"
                      " t.value ->> 1, (t.value ->> 2 + t.value ->> 3) * (t.value ->> 4),"
                      " t.value ->> 5" ET_TENSOR("outputs")
                      " ORDER BY node, io") < 0)
#undef ET_TENSOR
        return TT_EDB;
    sqlite3_bind_int64(st, 1, x->et);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct ettensor t;
        t.dev_type = 0;
        t.node = sqlite3_column_int64(st, 0);
        t.out = sqlite3_column_int(st, 1);
        t.top = sqlite3_column_int(st, 2);
        t.sid = sqlite3_column_int64(st, 3);
        t.need = sqlite3_column_int64(st, 4);
        et_dev((const char *)sqlite3_column_text(st, 5), &t.dev_type, &t.dev_id);
        if (et_tensor(x, &smap, &t) < 0) {
            rc = tt__oom();
            break;
        }
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(x->db, "cannot read the Execution Trace");
    sqlite3_finalize(st);
    tt__i64map_free(&smap);
    return rc < 0 ? rc : et_storages_done(x);
}

/* the first storage at or after i not used yet (path halving over skip[]) */
static size_t et_unused(struct etx *x, size_t i)
{
    while (x->skip[i] != i) {
        x->skip[i] = x->skip[x->skip[i]];
        i = x->skip[i];
    }
    return i;
}

/* the ET node of the innermost linked op around op, or -1 */
static int64_t et_node_of(struct etx *x, sqlite3_stmt *lnk, sqlite3_stmt *par, int64_t op)
{
    size_t ni = 0;
    int depth;
    for (depth = 0; op > 0 && depth < 64; depth++) {
        sqlite3_reset(lnk);
        sqlite3_bind_int64(lnk, 1, x->trace);
        sqlite3_bind_int64(lnk, 2, op);
        sqlite3_bind_int64(lnk, 3, x->et);
        if (sqlite3_step(lnk) == SQLITE_ROW &&
            tt__i64map_get(&x->rowmap, sqlite3_column_int64(lnk, 0), &ni))
            return x->nodes[ni].node_id;
        sqlite3_reset(par);
        sqlite3_bind_int64(par, 1, op);
        op = sqlite3_step(par) == SQLITE_ROW ? sqlite3_column_int64(par, 0) : 0;
    }
    return -1;
}

/* a storage created by node (or an ancestor) with this device and size */
static struct etstore *et_storage(struct etx *x, int64_t node, int64_t bytes)
{
    size_t ni;
    int depth;
    for (depth = 0; node >= 0 && depth < 64; depth++) {
        size_t lo = 0, hi = x->ns;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (x->sto[mid].creator < node)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (lo = et_unused(x, lo); lo < x->ns && x->sto[lo].creator == node;
             lo = et_unused(x, lo + 1)) {
            struct etstore *s = &x->sto[lo];
            if (s->dev_type == x->dtype && (x->dtype == 0 || s->dev_id == x->did) &&
                bytes >= s->need && bytes - s->need < 512) {
                s->used = 1;
                x->skip[lo] = lo + 1;
                return s;
            }
        }
        if (!tt__i64map_get(&x->nmap, node, &ni) || x->nodes[ni].parent == node)
            break;
        node = x->nodes[ni].parent;
        if (!tt__i64map_get(&x->nmap, node, &ni))
            break;
    }
    return NULL;
}

/* what the ET says of a block of this storage: ETR_* */
static int et_rule_of(const struct etx *x, const struct etstore *hit)
{
    size_t ci = 0;
    unsigned cf = tt__i64map_get(&x->nmap, hit->creator, &ci) ? x->nodes[ci].flags : 0;
    if (hit->grad)
        return ETR_GRADIENT;
    if (cf & EN_BW)
        return ETR_AUTOGRAD;
    if (!(cf & EN_OPT) && hit->bw_read)
        return ETR_ACTIVATION;
    return ETR_NONE;
}

/* a rule's entry in the map of verdicts */
static size_t et_verdict(int rule)
{
    return ETV(rule == ETR_GRADIENT     ? TT_CAT_GRADIENT
               : rule == ETR_AUTOGRAD ? TT_CAT_AUTOGRAD_DETAIL
                                      : TT_CAT_ACTIVATION,
               rule);
}

/* each allocation of the device inside a linked op -> et */
static int et_match(struct etx *x, const struct ctxstore *cs, struct i64map *et)
{
    sqlite3_stmt *st = NULL, *lnk = NULL, *par = NULL;
    int rc = 0, r;
    if (tt_db_prepare(x->db, &st, "SELECT m.id, m.bytes FROM memory AS m"
                                  " WHERE m.trace_id = ?1 AND m.device_type = ?2"
                                  "  AND coalesce(m.device_id, -1) = ?3 AND m.bytes > 0"
                                  " ORDER BY m.ts, m.id") < 0 ||
        tt_db_prepare(x->db, &lnk, "SELECT et_node_row_id FROM et_links WHERE kineto_trace_id = ?1"
                                   " AND slice_id = ?2 AND et_trace_id = ?3") < 0 ||
        tt_db_prepare(x->db, &par, "SELECT parent_id FROM slices WHERE id = ?1") < 0) {
        rc = TT_EDB;
        goto out;
    }
    bind_device(st, x->trace, x->dtype, x->did);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ev = et_event_of(x, sqlite3_column_int64(st, 0));
        const struct memctx *c = tt__memtl_ctx(cs, ev);
        int64_t node;
        struct etstore *hit;
        int rule;
        if (!c->has)
            continue;
        node = et_node_of(x, lnk, par, c->op_id);
        hit = et_storage(x, node, sqlite3_column_int64(st, 1));
        rule = hit ? et_rule_of(x, hit) : ETR_NONE;
        if (rule == ETR_NONE)
            continue;
        if (tt__i64map_put(et, ev, et_verdict(rule)) < 0) {
            rc = tt__oom();
            goto out;
        }
    }
    if (r != SQLITE_DONE)
        rc = tt_db_error(x->db, "cannot read the Execution Trace");
out:
    sqlite3_finalize(st);
    sqlite3_finalize(lnk);
    sqlite3_finalize(par);
    return rc;
}

int tt__memtl_et_pass(tt_db *db, int64_t trace, int dtype, int64_t did, int nocat,
                      const struct ctxstore *cs, struct i64map *et)
{
    struct etx x;
    int rc = 0, ok = 0;
    if (nocat || !db)
        return 0;
    if (q1(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                         " AND name = 'et_links'", 0, 0, 0, &ok) <= 0)
        return 0;
    memset(&x, 0, sizeof(x));
    x.db = db;
    x.trace = trace;
    x.dtype = dtype;
    x.did = did;
    x.et = q1(db, "SELECT min(et_trace_id) FROM et_links WHERE kineto_trace_id = ?1",
                        trace, 0, 0, &ok);
    if (!ok || x.et <= 0)
        return 0;
    if ((rc = et_load_memids(&x)) == 0 && (rc = et_load_nodes(&x)) == 0 &&
        (rc = et_load_storages(&x)) == 0)
        rc = et_match(&x, cs, et);
    tt__i64map_free(&x.nmap);
    tt__i64map_free(&x.rowmap);
    free(x.nodes);
    free(x.sto);
    free(x.skip);
    free(x.memids);
    return rc;
}

/* ---- the same pass from the files (memtimeline FILE --et ET) ---- */

/* a scalar of a tensor argument as SQL's ->> gives it */
enum { JV_NULL, JV_INT, JV_REAL, JV_TEXT };

struct jv {
    int kind;
    int64_t i;
    double d;
    char text[48]; /* JV_TEXT: the start of the string */
};

/* what the ET file's rows give: the nodes (x->nodes, in file order until
 * etf_nodes_done) and the tensor arguments of each */
struct etread {
    struct etx *x;
    struct i64map strf; /* string id -> EN_* of that name (names with any) */
    struct ettensor *t;
    size_t nt, at;
    tt_arena a;
};

/* the value at jp as a scalar of a tensor argument (a container: JV_NULL,
 * not read) */
static int etf_scalar(tt_jp *jp, enum tt_jtype ty, struct jv *v, tt_arena *a)
{
    tt_jnum n;
    const char *s;
    size_t len;
    char num[64];
    memset(v, 0, sizeof(*v));
    if (ty == TT_JT_NUMBER) {
        if (tt_jp_number(jp, &n) < 0)
            return -1;
        snprintf(num, sizeof(num), "%.*s", (int)(n.len < 63 ? n.len : 63), n.text);
        v->kind = n.is_int && n.fits ? JV_INT : JV_REAL;
        v->i = n.i;
        v->d = strtod(num, NULL);
        return 0;
    }
    if (ty == TT_JT_STRING) {
        if (tt_jp_string(jp, a, &s, &len) < 0)
            return -1;
        v->kind = JV_TEXT;
        snprintf(v->text, sizeof(v->text), "%.*s", (int)(len < 47 ? len : 47), s);
        v->d = strtod(v->text, NULL); /* SQL's arithmetic on a text */
        return 0;
    }
    if (ty == TT_JT_TRUE || ty == TT_JT_FALSE) {
        v->kind = JV_INT; /* ->> gives 1 or 0 (json_type: true / false) */
        v->i = ty == TT_JT_TRUE;
        v->d = (double)v->i;
    }
    return tt_jp_skip(jp);
}

/* (offset + numel) * itemsize as SQL computes it, read as an integer */
static int64_t etf_need(const struct jv *o, const struct jv *n, const struct jv *s)
{
    int64_t sum, prod;
    double d;
    if (o->kind == JV_NULL || n->kind == JV_NULL || s->kind == JV_NULL)
        return 0;
    if (o->kind == JV_INT && n->kind == JV_INT && s->kind == JV_INT &&
        !__builtin_add_overflow(o->i, n->i, &sum) && !__builtin_mul_overflow(sum, s->i, &prod))
        return prod;
    d = ((o->kind == JV_INT ? (double)o->i : o->d) + (n->kind == JV_INT ? (double)n->i : n->d)) *
        (s->kind == JV_INT ? (double)s->i : s->d);
    if (!(d == d))
        return 0;
    return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
}

static int etf_value(struct etread *r, tt_jp *jp, int depth, int64_t node, int io, int top);

/* an array: its tensor arguments (json_tree's walk: every array below the
 * top of six values [int, int, ., ., ., text]); top: it is the first
 * element of a top-level array */
static int etf_array(struct etread *r, tt_jp *jp, int depth, int64_t node, int io, int top)
{
    struct jv v[6];
    size_t idx = 0;
    int k;
    if (tt_jp_array_begin(jp) < 0)
        return -1;
    while ((k = tt_jp_array_next(jp)) == 1) {
        enum tt_jtype ty = tt_jp_peek(jp);
        if (ty == TT_JT_ARRAY || ty == TT_JT_OBJECT) {
            if (idx < 6)
                memset(&v[idx], 0, sizeof(v[idx]));
            if (etf_value(r, jp, depth + 1, node, io, depth == 0 && idx == 0) < 0)
                return -1;
        } else if (idx < 6 ? etf_scalar(jp, ty, &v[idx], &r->a) < 0 : tt_jp_skip(jp) < 0) {
            return -1;
        }
        idx++;
    }
    if (k < 0)
        return -1;
    if (depth > 0 && idx == 6 && v[0].kind == JV_INT && v[1].kind == JV_INT &&
        v[5].kind == JV_TEXT) {
        struct ettensor *t;
        if (TT_ALLOC_GROW(r->t, r->nt + 1, r->at) < 0)
            return TT_ENOMEM;
        t = &r->t[r->nt];
        t->seq = r->nt++;
        t->node = node;
        t->out = io;
        t->top = io == 0 && top;
        t->sid = v[1].i;
        t->need = etf_need(&v[2], &v[3], &v[4]);
        t->dev_type = 0;
        et_dev(v[5].text, &t->dev_type, &t->dev_id);
    }
    return 0;
}

static int etf_value(struct etread *r, tt_jp *jp, int depth, int64_t node, int io, int top)
{
    const char *key;
    size_t klen;
    int k;
    enum tt_jtype ty = tt_jp_peek(jp);
    if (ty == TT_JT_ARRAY)
        return etf_array(r, jp, depth, node, io, top);
    if (ty != TT_JT_OBJECT)
        return tt_jp_skip(jp);
    if (tt_jp_object_begin(jp) < 0)
        return -1;
    while ((k = tt_jp_object_next(jp, &r->a, &key, &klen)) == 1)
        if (etf_value(r, jp, depth + 1, node, io, 0) < 0)
            return -1;
    return k;
}

/* one inputs / outputs cell: its tensor arguments, none when it is not
 * valid JSON (as json_valid leaves it out) */
static int etf_cell(struct etread *r, const tt__cell *c, const char *text, int64_t node, int io)
{
    size_t mark = r->nt;
    tt_jp jp;
    int rc;
    if (c->type != TT_CELL_TEXT)
        return 0;
    tt_jp_init(&jp, "", text + c->i, 0, text + c->i, c->len);
    rc = etf_value(r, &jp, 0, node, io, 0);
    if (rc == 0)
        rc = tt_jp_finish(&jp);
    tt_arena_reset(&r->a);
    if (rc == TT_ENOMEM)
        return rc;
    if (rc < 0) {
        r->nt = mark;
        tt_error_clear();
    }
    return 0;
}

static int etf_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                    const char *text)
{
    struct etread *r = ctx;
    struct etx *x = r->x;
    int i;
    for (i = 0; i < nrows; i++) {
        const tt__cell *c = &cells[(size_t)i * (size_t)ncols];
        struct etnode *e;
        size_t f = 0;
        if (table == TT_ROWS_STR) {
            char name[256];
            unsigned fl;
            snprintf(name, sizeof(name), "%.*s", (int)(c[TT_C_STR_S].len < 255 ? c[TT_C_STR_S].len : 255),
                     text + c[TT_C_STR_S].i);
            if ((fl = et_name_flags(name)) && tt__i64map_put(&r->strf, c[TT_C_STR_ID].i, fl) < 0)
                return tt__oom();
            continue;
        }
        if (table != TT_ROWS_ET || c[TT_C_ET_NODE_ID].type != TT_CELL_INT)
            continue;
        if (TT_ALLOC_GROW(x->nodes, x->nn + 1, x->an) < 0)
            return tt__oom();
        e = &x->nodes[x->nn++];
        e->node_id = c[TT_C_ET_NODE_ID].i;
        e->parent = c[TT_C_ET_PARENT].type == TT_CELL_INT ? c[TT_C_ET_PARENT].i : -1;
        if (c[TT_C_ET_NAME].type == TT_CELL_INT)
            tt__i64map_get(&r->strf, c[TT_C_ET_NAME].i, &f);
        e->own = (unsigned)f;
        if (etf_cell(r, &c[TT_C_ET_INPUTS], text, e->node_id, 0) < 0 ||
            etf_cell(r, &c[TT_C_ET_OUTPUTS], text, e->node_id, 1) < 0)
            return tt__oom();
    }
    return 0;
}

static int by_node_id(const void *a, const void *b)
{
    const struct etnode *x = a, *y = b;
    return x->node_id < y->node_id ? -1 : x->node_id > y->node_id;
}

/* tensors by (node, inputs before outputs), the file's order kept */
static int by_node_io(const void *a, const void *b)
{
    const struct ettensor *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->out != y->out)
        return x->out - y->out;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* the ET file's nodes and created storages into x */
static int etf_read(struct etx *x, const char *et_path)
{
    static const uint64_t cols[TT_ROWS_COUNT] = {
        [TT_ROWS_ET] = TT_COL(TT_C_ET_NODE_ID) | TT_COL(TT_C_ET_NAME) | TT_COL(TT_C_ET_PARENT) |
                       TT_COL(TT_C_ET_INPUTS) | TT_COL(TT_C_ET_OUTPUTS),
    };
    struct etread r;
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    struct i64map smap = { 0 };
    size_t n, i;
    unsigned skip = TT_ROWS_NO_STOP;
    int rc, tb;
    for (tb = 0; tb < TT_ROWS_COUNT; tb++)
        if (tb != TT_ROWS_ET && tb != TT_ROWS_STR)
            skip |= 1u << tb;
    memset(&r, 0, sizeof(r));
    memset(&res, 0, sizeof(res));
    r.x = x;
    sink.ctx = &r;
    sink.rows = etf_rows;
    sink.cols = cols;
    rc = tt__ingest_rows(et_path, &sink, 0, skip, &res);
    free(res.metadata);
    tt__i64map_free(&r.strf);
    tt_arena_release(&r.a);
    /* the nodes in id order, each with its parent's flags, as the SQL reads them */
    n = x->nn;
    x->nn = 0;
    if (rc == 0)
        TT_QSORT(x->nodes, n, sizeof(*x->nodes), by_node_id);
    for (i = 0; rc == 0 && i < n; i++) {
        struct etnode e = x->nodes[i];
        x->nodes[x->nn] = e;
        if (et_node_added(x) < 0)
            rc = tt__oom();
    }
    if (rc == 0)
        TT_QSORT(r.t, r.nt, sizeof(*r.t), by_node_io);
    for (i = 0; rc == 0 && i < r.nt; i++)
        if (et_tensor(x, &smap, &r.t[i]) < 0)
            rc = tt__oom();
    tt__i64map_free(&smap);
    free(r.t);
    return rc < 0 ? rc : et_storages_done(x);
}

/* the ET node of the innermost linked op around op, or -1 */
static int64_t etf_node_of(const struct etx *x, const struct tt__xc_links *l,
                           const struct memtl_streamed *pre, int64_t op)
{
    int depth;
    for (depth = 0; op > 0 && depth < 64; depth++) {
        int64_t node;
        size_t ni;
        if (tt__xc_links_find(l, op, &node) && tt__i64map_get(&x->nmap, node, &ni))
            return x->nodes[ni].node_id;
        op = (uint64_t)op <= pre->nparent ? pre->parent[op - 1] : 0;
    }
    return -1;
}

int tt__memtl_et_pass_file(const char *et_path, const struct tt__xc_links *links,
                           const struct memtl_streamed *pre, size_t pdev, int dtype, int64_t did,
                           int nocat, struct i64map *et)
{
    struct etx x;
    struct i64map none = { 0 };
    struct evspill sp;
    struct memev ev;
    int rc, r = 0;
    if (nocat || !links->n)
        return 0;
    memset(&x, 0, sizeof(x));
    memset(&sp, 0, sizeof(sp));
    x.dtype = dtype;
    x.did = did;
    /* the device's allocations in time order, as the SQL reads them */
    if ((rc = etf_read(&x, et_path)) == 0 &&
        (rc = tt__memtl_load_streamed(pre, pdev, &pre->cs, &none, &sp)) == 0 &&
        (rc = tt__evspill_rewind(&sp)) == 0) {
        while (rc == 0 && (r = tt__evspill_next(&sp, &ev)) == 1) {
            const struct memctx *c = tt__memtl_ctx(&pre->cs, ev.id);
            struct etstore *hit;
            int rule;
            if (ev.bytes <= 0 || !c->has)
                continue;
            hit = et_storage(&x, etf_node_of(&x, links, pre, c->op_id), ev.bytes);
            rule = hit ? et_rule_of(&x, hit) : ETR_NONE;
            if (rule != ETR_NONE && tt__i64map_put(et, ev.id, et_verdict(rule)) < 0)
                rc = tt__oom();
        }
        if (rc == 0 && r < 0)
            rc = r;
    }
    tt__evspill_free(&sp);
    tt__i64map_free(&x.nmap);
    tt__i64map_free(&x.rowmap);
    free(x.nodes);
    free(x.sto);
    free(x.skip);
    return rc;
}
