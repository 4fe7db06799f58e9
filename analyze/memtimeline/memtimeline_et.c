/*
 * analyze/memtimeline/memtimeline_et.c - the memory timeline's pass 1b: tensor
 * identities from a linked Execution Trace name what a block is for.
 *
 * The links are those `tracetool ingest DB ET` or `crosscheck` stored in a
 * database (table et_links): this pass reads them, the ET's nodes and the
 * device's allocations there with SQL (a file with --et is read into a
 * temporary database with its ET for it).
 */
#include "common/compat.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "store/db_internal.h"
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
        size_t p;
        if (TT_ALLOC_GROW(x->nodes, x->nn + 1, x->an) < 0)
            goto nomem;
        e = &x->nodes[x->nn];
        e->node_id = sqlite3_column_int64(st, 1);
        e->parent = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        e->own = 0;
        if (tt__memtl_str_has(name, "autograd::engine::evaluate_function") ||
            tt__memtl_str_has(name, "Backward"))
            e->own |= EN_BW;
        if (name && (!strncmp(name, "Optimizer.step", 14) ||
                     !strncmp(name, "Optimizer.zero_grad", 19)))
            e->own |= EN_OPT;
        if (tt__memtl_str_has(name, "AccumulateGrad"))
            e->own |= EN_AG | EN_BW;
        e->flags = e->own;
        if (e->parent != e->node_id && tt__i64map_get(&x->nmap, e->parent, &p))
            e->flags |= x->nodes[p].flags;
        if (tt__i64map_put(&x->nmap, e->node_id, x->nn) < 0 ||
            tt__i64map_put(&x->rowmap, sqlite3_column_int64(st, 0), x->nn) < 0)
            goto nomem;
        x->nn++;
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read the Execution Trace");
nomem:
    sqlite3_finalize(st);
    return tt__oom();
}

/* one tensor argument of a node: note the storage it shows */
static int et_tensor(struct etx *x, struct i64map *smap, sqlite3_stmt *st)
{
    int64_t node = sqlite3_column_int64(st, 0), sid = sqlite3_column_int64(st, 3);
    int out = sqlite3_column_int(st, 1), top = sqlite3_column_int(st, 2);
    size_t ni, si, pi;
    const struct etnode *e;
    struct etstore *s;
    if (!tt__i64map_get(&x->nmap, node, &ni))
        return 0;
    e = &x->nodes[ni];
    if (!tt__i64map_get(smap, sid, &si)) {
        if (TT_ALLOC_GROW(x->sto, x->ns + 1, x->as) < 0)
            return TT_ENOMEM;
        si = x->ns++;
        s = &x->sto[si];
        memset(s, 0, sizeof(*s));
        s->creator = node;
        s->created = (unsigned char)out;
        s->need = sqlite3_column_int64(st, 4);
        et_dev((const char *)sqlite3_column_text(st, 5), &s->dev_type, &s->dev_id);
        if (tt__i64map_put(smap, sid, si) < 0)
            return TT_ENOMEM;
    }
    s = &x->sto[si];
    if (!out && (e->own & EN_AG))
        s->grad = 1;
    /* torch: the first input of AccumulateGrad's child (detach / add_) */
    if (!out && top && e->parent >= 0 && tt__i64map_get(&x->nmap, e->parent, &pi) &&
        (x->nodes[pi].own & EN_AG))
        s->grad = 1;
    if (!out && (e->flags & EN_BW) && node != s->creator)
        s->bw_read = 1;
    return 0;
}

/* every tensor argument, in node order: [id, storage, offset, numel,
 * itemsize, device]; then the created storages sorted by creator */
static int et_load_storages(struct etx *x)
{
    sqlite3_stmt *st = NULL;
    struct i64map smap = { 0 };
    size_t i, k = 0;
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
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        if (et_tensor(x, &smap, st) < 0) {
            rc = tt__oom();
            break;
        }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(x->db, "cannot read the Execution Trace");
    sqlite3_finalize(st);
    tt__i64map_free(&smap);
    if (rc < 0)
        return rc;
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
        if (tt__i64map_put(et, ev,
                           ETV(rule == ETR_GRADIENT     ? TT_CAT_GRADIENT
                               : rule == ETR_AUTOGRAD ? TT_CAT_AUTOGRAD_DETAIL
                                                      : TT_CAT_ACTIVATION,
                               rule)) < 0) {
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
