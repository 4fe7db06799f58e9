/*
 * analyze/crosscheck.c - `tracetool crosscheck`: join the op nodes of a
 * PyTorch Execution Trace (ET) to the cpu_op / user_annotation slices of the
 * Kineto trace taken beside it, report what does not agree, and store the
 * join in table et_links (docs/CROSSCHECK.md).
 *
 * Per pair (ET trace, Kineto trace):
 *   - PyTorch's rule (test_execution_trace.py): sorted ET rf_id (roots
 *     excluded) == sorted Kineto "Record function id" (absent = -1);
 *   - the join: "Record function id" == rf_id when the Kineto trace has
 *     non-zero ones; else External id, first at the constant offset
 *     (External id = rf_id + offset) that agrees on the most names, and when
 *     that leaves ops unmatched, in per-thread order: PyTorch 2.0/2.1 give
 *     each thread its own External-id counter (blocks of 512/1024 ids), so the
 *     ops of one ET thread in rf_id order are aligned with a window of one
 *     Kineto thread's ops in External-id order. Windows are found from rare
 *     "anchor" ops (preferring equal autograd sequence numbers, then time
 *     overlap with the other threads' windows) and aligned greedily with a
 *     bounded look-ahead, so a removed, added or renamed op costs one entry.
 *   A pair counts as matched only when the names agree.
 *
 * Memory is bounded by the number of ET nodes: Kineto slices are streamed
 * with SQL (index slices(trace_id, external_id)), never loaded whole.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/db_internal.h"
#include "tracetool/crosscheck.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

enum { K_NONE = 0, K_RF, K_EXT_OFFSET, K_EXT_ORDER };
enum { M_NONE = 0, M_OK = 1, M_NAME = 2 };

#define VOTE_CAP (1u << 20)  /* offset votes kept (8 MiB) */
#define N_ANCHORS 64         /* anchors voting for a constant offset */
#define N_OFFSETS 8          /* candidate offsets evaluated */
#define LOOK 16              /* alignment: look-ahead to resynchronise */
#define RUN 3                /* alignment: agreeing names needed to resynchronise */
#define PROBE 24             /* window search: ops each side of an anchor in a probe */
#define CAND_SEQ_LIMIT 256   /* window search: candidates with the anchor's sequence number */
#define CAND_LIMIT 4096      /* window search: candidates by name only */
#define KEEP 4               /* window search: probes aligned in full at least */
#define FULL_MAX 64          /* window search: probes aligned in full at most */
#define MAX_SEGS 8           /* offset segments listed per thread */

static const char *const root_names[] = {
    "[pytorch|profiler|execution_trace|process]",
    "[pytorch|profiler|execution_trace|thread]",
    /* the same roots before PyTorch 2.1 renamed the observer */
    "[pytorch|profiler|execution_graph|process]",
    "[pytorch|profiler|execution_graph|thread]",
};

/* a pid or tid as stored: INTEGER, TEXT or NULL */
struct val {
    int type;
    int64_t i;
    char s[48];
};

struct tinfo {
    int64_t id;
    char *path;
    int is_et, is_kineto;
    int has_rank, has_pid;
    int64_t rank, pid;
};

struct etop {
    int64_t row, node_id, rf, name, tid, seq;
    int has_rf, has_tid;
};

struct match {
    int state; /* M_* */
    int kt;    /* Kineto thread (index into result.kt), -1 */
    int64_t slice, kkey, kname, ts, dur;
};

struct kthr {
    struct val pid, tid;
    int64_t k_only;
};

struct koff {
    int64_t slice, key, name, ts;
    int kt;
};

struct dupo {
    int et_side;
    int64_t id, count, name1, name2;
};

struct seg {
    int64_t rf_from, off, n;
};

struct trow {
    int has_et;
    int64_t et_tid;
    int kt;
    int64_t et_ops, matched, et_only, k_only, name_diff;
    int has_key, has_ts;
    int64_t key_lo, key_hi, ts_lo, ts_hi;
    struct seg segs[MAX_SEGS];
    size_t nsegs;
    int64_t segs_total;
};

struct result {
    int key;
    int64_t offset;
    struct match *m;
    struct kthr *kt;
    size_t nkt, akt;
    int *kth;      /* open-addressing hash of kt: index + 1, 0 = empty */
    size_t kthcap; /* a power of two, > 2 * nkt */
    int64_t matched, et_only, k_only, name_diff, dup_k, k_inwin;
    struct koff *konly;
    size_t nkonly;
    struct dupo *kdups;
    size_t nkdups;
    struct trow *rows;
    size_t nrows, arows;
    int has_ts, has_key;
    int64_t ts_lo, ts_hi, key_lo, key_hi;
    int has_const;
    int64_t const_off, const_matched;
};

struct pair {
    const struct tinfo *et, *k;
    char how[200];
    struct etop *ops;
    size_t n, nrf;
    int64_t et_nodes, et_roots, dup_et;
    int64_t k_total, k_rf_nonzero, k_ext;
    int64_t rule_et_only, rule_k_only, rule_et_n;
    int rule_equal;
    struct result *r;
    int consistent;
};

struct xc {
    tt_db *db;
    const tt_xc_options *o;
    FILE *out;
    size_t limit;
    int64_t cat_cpu, cat_ua;
    sqlite3_stmt *st_str, *st_before, *st_after, *st_cand;
    int npairs_out;
};

struct krow {
    int64_t id, key, name, ts, dur, seq;
};

/* one line of the closing table (text, several pairs) */
struct srow {
    int64_t et, k, rank, matched, n, et_only, k_only, name_diff, dups;
    int has_rank, consistent, key;
    char how[40], off[40];
};

/* ---------------------------------------------------------------- helpers */

static int oom(void)
{
    return tt_error_set(TT_ENOMEM, "out of memory");
}

static void val_get(struct val *v, sqlite3_stmt *st, int col)
{
    v->type = sqlite3_column_type(st, col);
    v->i = 0;
    v->s[0] = 0;
    if (v->type == SQLITE_INTEGER) {
        v->i = sqlite3_column_int64(st, col);
    } else if (v->type != SQLITE_NULL) {
        const unsigned char *t = sqlite3_column_text(st, col);
        v->type = SQLITE_TEXT;
        snprintf(v->s, sizeof(v->s), "%s", t ? (const char *)t : "");
    }
}

static int val_eq(const struct val *a, const struct val *b)
{
    if (a->type != b->type)
        return 0;
    if (a->type == SQLITE_INTEGER)
        return a->i == b->i;
    if (a->type == SQLITE_TEXT)
        return strcmp(a->s, b->s) == 0;
    return 1;
}

static void val_bind(sqlite3_stmt *st, int idx, const struct val *v)
{
    if (v->type == SQLITE_INTEGER)
        sqlite3_bind_int64(st, idx, v->i);
    else if (v->type == SQLITE_TEXT)
        sqlite3_bind_text(st, idx, v->s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, idx);
}

static const char *val_fmt(const struct val *v, char *buf, size_t n)
{
    if (v->type == SQLITE_INTEGER)
        snprintf(buf, n, "%" PRId64, v->i);
    else if (v->type == SQLITE_TEXT)
        snprintf(buf, n, "%s", v->s);
    else
        snprintf(buf, n, "-");
    return buf;
}

static void val_json(tt_buf *b, const struct val *v)
{
    if (v->type == SQLITE_INTEGER)
        tt_buf_addf(b, "%" PRId64, v->i);
    else if (v->type == SQLITE_TEXT)
        tt_buf_add_json_string(b, v->s, strlen(v->s));
    else
        tt_buf_addstr(b, "null");
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* first index i with a[i] >= v */
static size_t lower_i64(const int64_t *a, size_t n, int64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t count_sorted(const int64_t *a, size_t n, int64_t v)
{
    size_t lo = lower_i64(a, n, v);
    if (lo == n || a[lo] != v)
        return 0;
    if (v == INT64_MAX)
        return n - lo;
    return lower_i64(a + lo, n - lo, v + 1);
}

/* The string of an interned id, malloc'd ("" when unknown); NULL on OOM. */
static char *str_dup(struct xc *x, int64_t id)
{
    const unsigned char *t = NULL;
    char *s;
    sqlite3_reset(x->st_str);
    sqlite3_bind_int64(x->st_str, 1, id);
    if (sqlite3_step(x->st_str) == SQLITE_ROW)
        t = sqlite3_column_text(x->st_str, 0);
    s = strdup(t ? (const char *)t : "");
    sqlite3_reset(x->st_str);
    return s;
}

static int64_t string_id(tt_db *db, const char *s)
{
    sqlite3_stmt *st;
    int64_t id = -1;
    if (sqlite3_prepare_v2(db->sql, "SELECT id FROM strings WHERE s = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, s, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

static void bind_cats(struct xc *x, sqlite3_stmt *st)
{
    sqlite3_bind_int64(st, 2, x->cat_cpu);
    sqlite3_bind_int64(st, 3, x->cat_ua);
}

/* ---------------------------------------------------------------- results */

static void result_free(struct result *r)
{
    if (!r)
        return;
    free(r->m);
    free(r->kt);
    free(r->kth);
    free(r->konly);
    free(r->kdups);
    free(r->rows);
    free(r);
}

static struct result *result_new(struct xc *x, const struct pair *p, int key)
{
    struct result *r = calloc(1, sizeof(*r));
    size_t i;
    if (!r)
        return NULL;
    r->key = key;
    r->m = calloc(p->n ? p->n : 1, sizeof(*r->m));
    r->konly = calloc(x->limit ? x->limit : 1, sizeof(*r->konly));
    r->kdups = calloc(x->limit ? x->limit : 1, sizeof(*r->kdups));
    if (!r->m || !r->konly || !r->kdups) {
        result_free(r);
        return NULL;
    }
    for (i = 0; i < p->n; i++)
        r->m[i].kt = -1;
    return r;
}

static uint64_t val_hash(const struct val *v, uint64_t h)
{
    const unsigned char *c = (const unsigned char *)v->s;
    h = (h ^ (uint64_t)v->type) * 0x100000001b3ull;
    if (v->type == SQLITE_INTEGER)
        return (h ^ (uint64_t)v->i) * 0x100000001b3ull;
    for (; *c; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return h;
}

static size_t kt_slot(const struct result *r, const struct val *pid, const struct val *tid)
{
    uint64_t h = val_hash(tid, val_hash(pid, 0xcbf29ce484222325ull));
    size_t i = (size_t)(h ^ (h >> 29)) & (r->kthcap - 1);
    while (r->kth[i]) {
        const struct kthr *k = &r->kt[r->kth[i] - 1];
        if (val_eq(&k->tid, tid) && val_eq(&k->pid, pid))
            break;
        i = (i + 1) & (r->kthcap - 1);
    }
    return i;
}

/* index of Kineto thread (pid, tid), added when new; -1 on OOM */
static int kt_index(struct result *r, const struct val *pid, const struct val *tid)
{
    size_t i;
    if (r->kthcap && r->kth[i = kt_slot(r, pid, tid)])
        return r->kth[i] - 1;
    if (TT_ALLOC_GROW(r->kt, r->nkt + 1, r->akt) < 0)
        return -1;
    if (2 * (r->nkt + 1) >= r->kthcap) { /* rehash */
        size_t cap = r->kthcap ? 2 * r->kthcap : 64, k;
        int *h = calloc(cap, sizeof(*h));
        if (!h)
            return -1;
        free(r->kth);
        r->kth = h;
        r->kthcap = cap;
        for (k = 0; k < r->nkt; k++)
            r->kth[kt_slot(r, &r->kt[k].pid, &r->kt[k].tid)] = (int)k + 1;
    }
    memset(&r->kt[r->nkt], 0, sizeof(r->kt[0]));
    r->kt[r->nkt].pid = *pid;
    r->kt[r->nkt].tid = *tid;
    r->kth[kt_slot(r, pid, tid)] = (int)r->nkt + 1;
    return (int)r->nkt++;
}

/* a Kineto op inside the window that no ET op took; keeps the `limit` smallest keys */
static void konly_add(struct xc *x, struct result *r, const struct koff *k)
{
    size_t i;
    r->k_only++;
    if (k->kt >= 0)
        r->kt[k->kt].k_only++;
    if (!x->limit)
        return;
    if (r->nkonly == x->limit && r->konly[r->nkonly - 1].key <= k->key)
        return;
    i = r->nkonly < x->limit ? r->nkonly++ : r->nkonly - 1;
    while (i > 0 && r->konly[i - 1].key > k->key) {
        r->konly[i] = r->konly[i - 1];
        i--;
    }
    r->konly[i] = *k;
}

static void kdup_add(struct xc *x, struct result *r, int64_t id, int64_t count, int64_t n1,
                     int64_t n2)
{
    r->dup_k += count - 1;
    if (r->nkdups < x->limit) {
        struct dupo *d = &r->kdups[r->nkdups++];
        d->et_side = 0;
        d->id = id;
        d->count = count;
        d->name1 = n1;
        d->name2 = n2;
    }
}

static void widen(int *has, int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
    if (!*has) {
        *has = 1;
        *lo = a;
        *hi = b;
        return;
    }
    if (a < *lo)
        *lo = a;
    if (b > *hi)
        *hi = b;
}

/* ---------------------------------------------------------------- loading */

static int cmp_ops(const void *a, const void *b)
{
    const struct etop *x = a, *y = b;
    if (x->has_rf != y->has_rf)
        return x->has_rf ? -1 : 1;
    if (x->rf != y->rf)
        return x->rf < y->rf ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
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

/* The op nodes of ET trace `id`, roots excluded, sorted by rf_id (nodes
 * without one last). */
static int load_et(struct xc *x, struct pair *p)
{
    sqlite3_stmt *st;
    size_t alloc = 0, i;
    int r;
    if (tt_db_prepare(x->db, &st,
                      "SELECT e.id, e.node_id, e.rf_id, e.name, e.tid, e.seq_id, n.s"
                      " FROM et_nodes AS e JOIN strings AS n ON n.id = e.name"
                      " WHERE e.trace_id = ?1") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, p->et->id);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct etop *o;
        const char *nm = (const char *)sqlite3_column_text(st, 6);
        p->et_nodes++;
        if (nm && is_root(nm)) {
            p->et_roots++;
            continue;
        }
        if (TT_ALLOC_GROW(p->ops, p->n + 1, alloc) < 0) {
            sqlite3_finalize(st);
            return oom();
        }
        o = &p->ops[p->n++];
        o->row = sqlite3_column_int64(st, 0);
        o->node_id = sqlite3_column_int64(st, 1);
        o->has_rf = sqlite3_column_type(st, 2) == SQLITE_INTEGER;
        o->rf = sqlite3_column_int64(st, 2);
        o->name = sqlite3_column_int64(st, 3);
        o->has_tid = sqlite3_column_type(st, 4) == SQLITE_INTEGER;
        o->tid = sqlite3_column_int64(st, 4);
        o->seq = sqlite3_column_type(st, 5) == SQLITE_INTEGER ? sqlite3_column_int64(st, 5) : -1;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return tt_db_error(x->db, "cannot read execution-trace nodes");
    if (p->n)
        qsort(p->ops, p->n, sizeof(*p->ops), cmp_ops);
    for (i = 0; i < p->n && p->ops[i].has_rf; i++)
        ;
    p->nrf = i;
    for (i = 1; i < p->nrf; i++) {
        if (p->ops[i].rf == p->ops[i - 1].rf)
            p->dup_et++;
    }
    return 0;
}

/* PyTorch's rule, and what the Kineto trace offers as keys. */
static int pytorch_rule(struct xc *x, struct pair *p)
{
    sqlite3_stmt *st;
    size_t e = 0;
    int r;
    if (tt_db_prepare(x->db, &st,
                      "SELECT coalesce(s.rf_id, -1), s.external_id IS NOT NULL FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) ORDER BY 1") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, p->k->id);
    bind_cats(x, st);
    p->rule_et_n = (int64_t)p->nrf;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t v = sqlite3_column_int64(st, 0);
        p->k_total++;
        if (v != 0 && v != -1)
            p->k_rf_nonzero++;
        if (sqlite3_column_int(st, 1))
            p->k_ext++;
        while (e < p->nrf && p->ops[e].rf < v) {
            p->rule_et_only++;
            e++;
        }
        if (e < p->nrf && p->ops[e].rf == v)
            e++;
        else
            p->rule_k_only++;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE)
        return tt_db_error(x->db, "cannot read Kineto cpu ops");
    p->rule_et_only += (int64_t)(p->nrf - e);
    /* ET op nodes without an rf_id attribute do not enter PyTorch's list */
    p->rule_equal = p->rule_et_only == 0 && p->rule_k_only == 0;
    return 0;
}

/* ---------------------------------------------------------------- join by key */

struct grow {
    int64_t id, key, name, ts, dur;
    int kt, used;
};

struct nmidx {
    int64_t name;
    size_t j;
};

static int cmp_nmidx(const void *pa, const void *pb)
{
    const struct nmidx *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* Each Kineto op of the group, in order, takes the first ET op of [a, b)
 * not taken yet with the same name: one queue per name, O(n log n). */
static int match_names(struct pair *p, struct result *r, struct grow *g, size_t ng, size_t a,
                       size_t b)
{
    struct nmidx *q = malloc((b - a) * sizeof(*q));
    size_t *next, i, j;
    if (!q)
        return -1;
    if (!(next = malloc((b - a) * sizeof(*next)))) {
        free(q);
        return -1;
    }
    for (j = a; j < b; j++) {
        q[j - a].name = p->ops[j].name;
        q[j - a].j = j;
    }
    qsort(q, b - a, sizeof(*q), cmp_nmidx);
    /* next[s]: the next unused entry of the run of names starting at s */
    for (j = 0; j < b - a; j++)
        next[j] = j;
    for (i = 0; i < ng; i++) {
        size_t lo = 0, hi = b - a, s;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (q[mid].name < g[i].name)
                lo = mid + 1;
            else
                hi = mid;
        }
        s = lo;
        if (s == b - a || q[s].name != g[i].name)
            continue;
        j = next[s];
        if (j == b - a || q[j].name != g[i].name)
            continue;
        next[s] = j + 1;
        r->m[q[j].j].state = M_OK;
        g[i].used = (int)(q[j].j - a) + 1;
    }
    free(q);
    free(next);
    return 0;
}

static int join_group(struct xc *x, struct pair *p, struct result *r, struct grow *g, size_t ng,
                      int64_t off, size_t *e, int defer)
{
    int64_t target = g[0].key - off;
    size_t a, b, i, j;
    while (*e < p->nrf && p->ops[*e].rf < target)
        (*e)++;
    a = *e;
    for (b = a; b < p->nrf && p->ops[b].rf == target; b++)
        ;
    if (!defer) {
        r->k_inwin += (int64_t)ng;
        if (ng > 1)
            kdup_add(x, r, g[0].key, (int64_t)ng, g[0].name, g[1].name);
    }
    if ((b - a) * ng <= 64) {
        for (i = 0; i < ng; i++) {
            for (j = a; j < b; j++) {
                struct match *m = &r->m[j];
                if (m->state == M_NONE && p->ops[j].name == g[i].name) {
                    m->state = M_OK;
                    break;
                }
            }
            if (j < b)
                g[i].used = (int)(j - a) + 1;
        }
    } else if (match_names(p, r, g, ng, a, b) < 0) {
        return oom();
    }
    /* the Kineto ops left take the first ET ops left, in order */
    for (i = 0, j = a; i < ng; i++) {
        if (g[i].used)
            continue;
        while (j < b && r->m[j].state != M_NONE)
            j++;
        if (j == b)
            break;
        r->m[j].state = M_NAME;
        g[i].used = (int)(j - a) + 1;
    }
    for (i = 0; i < ng; i++) {
        if (g[i].used) {
            struct match *m = &r->m[a + (size_t)g[i].used - 1];
            m->slice = g[i].id;
            m->kkey = g[i].key;
            m->kname = g[i].name;
            m->ts = g[i].ts;
            m->dur = g[i].dur;
            m->kt = g[i].kt;
        } else if (!defer) {
            struct koff k = { g[i].id, g[i].key, g[i].name, g[i].ts, g[i].kt };
            konly_add(x, r, &k);
        }
    }
    return 0;
}

/* External-id window: from the smallest to the largest External id paired
 * with an ET op; every Kineto op in it that no ET op took is Kineto-only. */
static int window_pass(struct xc *x, struct pair *p, struct result *r)
{
    sqlite3_stmt *st;
    int64_t *ids = NULL, prev = 0, lo = 0, hi = 0, name1 = 0, name2 = 0;
    size_t nids = 0, i, run = 0;
    int has = 0, s, rc = 0;
    for (i = 0; i < p->n; i++) {
        if (r->m[i].state != M_NONE)
            widen(&has, &lo, &hi, r->m[i].kkey, r->m[i].kkey);
    }
    if (!has)
        return 0;
    r->has_key = 1;
    r->key_lo = lo;
    r->key_hi = hi;
    if (!(ids = malloc(p->n * sizeof(*ids))))
        return oom();
    for (i = 0; i < p->n; i++) {
        if (r->m[i].state != M_NONE)
            ids[nids++] = r->m[i].slice;
    }
    qsort(ids, nids, sizeof(*ids), cmp_i64);
    if (tt_db_prepare(x->db, &st,
                      "SELECT s.id, s.external_id, s.name, s.pid, s.tid, s.ts FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3)"
                      " AND s.external_id BETWEEN ?4 AND ?5 ORDER BY s.external_id, s.id") < 0) {
        free(ids);
        return TT_EDB;
    }
    sqlite3_bind_int64(st, 1, p->k->id);
    bind_cats(x, st);
    sqlite3_bind_int64(st, 4, lo);
    sqlite3_bind_int64(st, 5, hi);
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), key = sqlite3_column_int64(st, 1);
        int64_t name = sqlite3_column_int64(st, 2);
        size_t j = lower_i64(ids, nids, id);
        r->k_inwin++;
        if (run && key == prev) {
            if (run++ == 1)
                name2 = name;
        } else {
            if (run > 1)
                kdup_add(x, r, prev, (int64_t)run, name1, name2);
            run = 1;
            name1 = name;
        }
        prev = key;
        if (j >= nids || ids[j] != id) {
            struct val pid, tid;
            struct koff k;
            val_get(&pid, st, 3);
            val_get(&tid, st, 4);
            k.slice = id;
            k.key = key;
            k.name = name;
            k.ts = sqlite3_column_int64(st, 5);
            if ((k.kt = kt_index(r, &pid, &tid)) < 0) {
                rc = oom();
                break;
            }
            konly_add(x, r, &k);
        }
    }
    if (run > 1)
        kdup_add(x, r, prev, (int64_t)run, name1, name2);
    if (rc == 0 && s != SQLITE_DONE)
        rc = tt_db_error(x->db, "cannot read Kineto cpu ops");
    sqlite3_finalize(st);
    free(ids);
    return rc;
}

/* Join on Kineto "Record function id" (key K_RF, window: every event with a
 * non-zero one) or on External id = rf_id + off (window: see window_pass). */
static int join_key(struct xc *x, struct pair *p, struct result *r, int key, int64_t off)
{
    sqlite3_stmt *st;
    struct grow *g = NULL;
    size_t ng = 0, ag = 0, e = 0;
    int rc = 0, s;
    r->key = key;
    r->offset = off;
    if (!p->nrf)
        return 0;
    if (tt_db_prepare(x->db, &st,
                      key == K_RF
                          ? "SELECT s.id, s.rf_id, s.name, s.pid, s.tid, s.ts, s.dur FROM slices AS s"
                            " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.rf_id IS NOT NULL"
                            " AND s.rf_id <> 0 ORDER BY s.rf_id, s.id"
                          : "SELECT s.id, s.external_id, s.name, s.pid, s.tid, s.ts, s.dur"
                            " FROM slices AS s WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3)"
                            " AND s.external_id BETWEEN ?4 AND ?5"
                            " ORDER BY s.external_id, s.id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, p->k->id);
    bind_cats(x, st);
    if (key != K_RF) {
        sqlite3_bind_int64(st, 4, p->ops[0].rf + off);
        sqlite3_bind_int64(st, 5, p->ops[p->nrf - 1].rf + off);
    }
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        struct val pid, tid;
        int64_t k = sqlite3_column_int64(st, 1);
        if (ng && g[0].key != k) {
            if ((rc = join_group(x, p, r, g, ng, off, &e, key != K_RF)) < 0)
                goto out;
            ng = 0;
        }
        if (TT_ALLOC_GROW(g, ng + 1, ag) < 0) {
            rc = oom();
            goto out;
        }
        val_get(&pid, st, 3);
        val_get(&tid, st, 4);
        g[ng].id = sqlite3_column_int64(st, 0);
        g[ng].key = k;
        g[ng].name = sqlite3_column_int64(st, 2);
        g[ng].ts = sqlite3_column_int64(st, 5);
        g[ng].dur = sqlite3_column_int64(st, 6);
        g[ng].used = 0;
        if ((g[ng].kt = kt_index(r, &pid, &tid)) < 0) {
            rc = oom();
            goto out;
        }
        if (key == K_RF)
            widen(&r->has_key, &r->key_lo, &r->key_hi, k, k);
        ng++;
    }
    if (s != SQLITE_DONE) {
        rc = tt_db_error(x->db, "cannot read Kineto cpu ops");
        goto out;
    }
    if (ng && (rc = join_group(x, p, r, g, ng, off, &e, key != K_RF)) < 0)
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    if (key != K_RF)
        rc = window_pass(x, p, r);
out:
    sqlite3_finalize(st);
    free(g);
    return rc;
}

/* ---------------------------------------------------------------- constant offset */

struct anch {
    int64_t name, rf;
};

static int cmp_anch(const void *a, const void *b)
{
    const struct anch *x = a, *y = b;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return x->rf < y->rf ? -1 : x->rf > y->rf;
}

static int cmp_rfname(const void *a, const void *b)
{
    const struct anch *x = a, *y = b;
    if (x->rf != y->rf)
        return x->rf < y->rf ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* is (rf, name) among the sorted pairs rn[0..n)? */
static int has_rfname(const struct anch *rn, size_t n, int64_t rf, int64_t name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rn[mid].rf < rf || (rn[mid].rf == rf && rn[mid].name < name))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && rn[lo].rf == rf && rn[lo].name == name;
}

/* name-agreeing pairs at External id = rf_id + off (rn: the ET ops' (rf_id,
 * name) sorted, from the smallest rf_id rf0 to the largest rf1) */
static int count_offset(struct xc *x, struct pair *p, const struct anch *rn, int64_t off,
                        int64_t *count)
{
    sqlite3_stmt *st;
    int s;
    *count = 0;
    if (!p->nrf)
        return 0;
    if (tt_db_prepare(x->db, &st,
                      "SELECT s.external_id, s.name FROM slices AS s WHERE s.trace_id = ?1"
                      " AND s.cat IN (?2, ?3) AND s.external_id BETWEEN ?4 AND ?5") < 0) {
        return TT_EDB;
    }
    sqlite3_bind_int64(st, 1, p->k->id);
    bind_cats(x, st);
    sqlite3_bind_int64(st, 4, rn[0].rf + off);
    sqlite3_bind_int64(st, 5, rn[p->nrf - 1].rf + off);
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0) - off, nm = sqlite3_column_int64(st, 1);
        if (has_rfname(rn, p->nrf, t, nm))
            (*count)++;
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read Kineto cpu ops");
}

/* The constant offset External id - rf_id agreeing on the most names: ET ops
 * with rare names vote (every Kineto op of the same name gives one offset),
 * the most voted offsets (and 0) are counted in full. */
static int best_offset(struct xc *x, struct pair *p, int64_t *best, int64_t *best_n)
{
    int64_t *names = NULL, *votes = NULL, cand[N_OFFSETS + 1], cnt[N_OFFSETS + 1];
    struct anch *an = NULL, *rn = NULL;
    size_t nan = 0, nv = 0, i, j, ncand = 0, maxc;
    sqlite3_stmt *st = NULL;
    int rc = 0, s;
    *best = 0;
    *best_n = 0;
    if (!p->nrf)
        return 0;
    names = malloc(p->nrf * sizeof(*names));
    an = malloc(p->nrf * sizeof(*an));
    votes = malloc(sizeof(*votes) * 1024);
    rn = malloc(p->nrf * sizeof(*rn));
    if (!names || !an || !votes || !rn) {
        rc = oom();
        goto out;
    }
    for (i = 0; i < p->nrf; i++)
        names[i] = p->ops[i].name;
    qsort(names, p->nrf, sizeof(*names), cmp_i64);
    for (maxc = 1; maxc <= 4 && nan < 4; maxc += 3) {
        nan = 0;
        for (i = 0; i < p->nrf; i++) {
            if (count_sorted(names, p->nrf, p->ops[i].name) <= maxc) {
                an[nan].name = p->ops[i].name;
                an[nan++].rf = p->ops[i].rf;
            }
        }
    }
    if (nan > N_ANCHORS) { /* spread over the rf_id range */
        for (i = 0; i < N_ANCHORS; i++)
            an[i] = an[i * nan / N_ANCHORS];
        nan = N_ANCHORS;
    }
    qsort(an, nan, sizeof(*an), cmp_anch);
    if (tt_db_prepare(x->db, &st,
                      "SELECT s.external_id, s.name FROM slices AS s WHERE s.trace_id = ?1"
                      " AND s.cat IN (?2, ?3) AND s.external_id IS NOT NULL") < 0) {
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(st, 1, p->k->id);
    bind_cats(x, st);
    {
        size_t av = 1024;
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t ext = sqlite3_column_int64(st, 0), nm = sqlite3_column_int64(st, 1);
            size_t lo = 0, hi = nan;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (an[mid].name < nm)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (; lo < nan && an[lo].name == nm && nv < VOTE_CAP; lo++) {
                if (TT_ALLOC_GROW(votes, nv + 1, av) < 0) {
                    rc = oom();
                    goto out;
                }
                votes[nv++] = ext - an[lo].rf;
            }
        }
        if (s != SQLITE_DONE) {
            rc = tt_db_error(x->db, "cannot read Kineto cpu ops");
            goto out;
        }
    }
    qsort(votes, nv, sizeof(*votes), cmp_i64);
    /* the N_OFFSETS most voted */
    for (i = 0; i < nv; i = j) {
        int64_t c;
        size_t k;
        for (j = i; j < nv && votes[j] == votes[i]; j++)
            ;
        c = (int64_t)(j - i);
        if (ncand < N_OFFSETS) {
            k = ncand++;
        } else if (c > cnt[ncand - 1]) {
            k = ncand - 1;
        } else {
            continue;
        }
        while (k > 0 && cnt[k - 1] < c) {
            cand[k] = cand[k - 1];
            cnt[k] = cnt[k - 1];
            k--;
        }
        cand[k] = votes[i];
        cnt[k] = c;
    }
    for (i = 0; i < ncand && cand[i] != 0; i++)
        ;
    if (i == ncand)
        cand[ncand++] = 0;
    for (i = 0; i < p->nrf; i++) {
        rn[i].rf = p->ops[i].rf;
        rn[i].name = p->ops[i].name;
    }
    qsort(rn, p->nrf, sizeof(*rn), cmp_rfname);
    for (i = 0; i < ncand; i++) {
        int64_t n;
        if ((rc = count_offset(x, p, rn, cand[i], &n)) < 0)
            goto out;
        if (n > *best_n || (n == *best_n && n > 0 &&
                            (cand[i] < 0 ? -cand[i] : cand[i]) < (*best < 0 ? -*best : *best))) {
            *best = cand[i];
            *best_n = n;
        }
    }
out:
    sqlite3_finalize(st);
    free(names);
    free(an);
    free(rn);
    free(votes);
    return rc;
}

/* ---------------------------------------------------------------- per-thread order */

struct win {
    struct krow *rows;
    size_t n, qa;
    struct val pid, tid;
    int32_t *pa;        /* ET index -> row index, -1 */
    unsigned char *pk;  /* M_OK / M_NAME per ET index */
    unsigned char *pb;  /* row taken */
    int64_t eq, seq_eq;
    int has, ov;
    size_t qlo, qhi;
    int64_t ts_lo, ts_hi, ext0;
};

static void win_free(struct win *w)
{
    free(w->rows);
    free(w->pa);
    free(w->pk);
    free(w->pb);
    memset(w, 0, sizeof(*w));
}

/* nb Kineto ops of thread (pid, tid) before External id ext and na from it
 * (the candidate slice cid included), in External-id order */
static int load_rows(struct xc *x, struct pair *p, const struct val *pid, const struct val *tid,
                     int64_t ext, int64_t cid, size_t nb, size_t na, struct win *w)
{
    sqlite3_stmt *q[2] = { x->st_before, x->st_after };
    size_t lim[2] = { nb, na + 8 }, alloc = 0, k, i;
    int s;
    w->n = 0;
    w->qa = (size_t)-1;
    w->pid = *pid;
    w->tid = *tid;
    for (k = 0; k < 2; k++) {
        size_t first = w->n;
        sqlite3_reset(q[k]);
        sqlite3_bind_int64(q[k], 1, p->k->id);
        bind_cats(x, q[k]);
        val_bind(q[k], 4, pid);
        val_bind(q[k], 5, tid);
        sqlite3_bind_int64(q[k], 6, ext);
        sqlite3_bind_int64(q[k], 7, (int64_t)lim[k]);
        while ((s = sqlite3_step(q[k])) == SQLITE_ROW) {
            struct krow *r;
            if (TT_ALLOC_GROW(w->rows, w->n + 1, alloc) < 0) {
                sqlite3_reset(q[k]);
                return oom();
            }
            r = &w->rows[w->n++];
            r->id = sqlite3_column_int64(q[k], 0);
            r->key = sqlite3_column_int64(q[k], 1);
            r->name = sqlite3_column_int64(q[k], 2);
            r->ts = sqlite3_column_int64(q[k], 3);
            r->dur = sqlite3_column_int64(q[k], 4);
            r->seq = sqlite3_column_type(q[k], 5) == SQLITE_INTEGER
                         ? sqlite3_column_int64(q[k], 5) : -1;
        }
        sqlite3_reset(q[k]);
        if (s != SQLITE_DONE)
            return tt_db_error(x->db, "cannot read Kineto cpu ops");
        if (k == 0) { /* read newest first: reverse */
            for (i = 0; i < (w->n - first) / 2; i++) {
                struct krow t = w->rows[first + i];
                w->rows[first + i] = w->rows[w->n - 1 - i];
                w->rows[w->n - 1 - i] = t;
            }
        } else {
            for (i = first; i < w->n; i++) {
                if (w->rows[i].id == cid) {
                    w->qa = i;
                    break;
                }
            }
        }
    }
    return 0;
}

static int run_ok(const int64_t *a, size_t m, const struct krow *b, size_t n, ptrdiff_t i,
                  ptrdiff_t q, int dir)
{
    int r;
    for (r = 0; r < RUN; r++) {
        ptrdiff_t ii = i + r * dir, qq = q + r * dir;
        if (ii < 0 || ii >= (ptrdiff_t)m || qq < 0 || qq >= (ptrdiff_t)n)
            return r > 0;
        if (a[ii] != b[qq].name)
            return 0;
    }
    return 1;
}

/* Greedy alignment from (i, q) in direction dir: equal names pair up; at a
 * difference, the nearest resynchronisation point (at most LOOK ops skipped
 * on either side, then RUN agreeing names) is taken; skipped ops pair up as
 * "names differ" as far as both sides skipped, the rest stay unpaired. */
static void align_dir(const int64_t *a, size_t m, struct win *w, ptrdiff_t i, ptrdiff_t q, int dir)
{
    const struct krow *b = w->rows;
    ptrdiff_t n = (ptrdiff_t)w->n;
    while (i >= 0 && i < (ptrdiff_t)m && q >= 0 && q < n) {
        int found = 0;
        ptrdiff_t di = 0, dq = 0, t, k;
        if (a[i] == b[q].name) {
            w->pa[i] = (int32_t)q;
            w->pk[i] = M_OK;
            w->pb[q] = 1;
            i += dir;
            q += dir;
            continue;
        }
        for (k = 1; k <= LOOK && !found; k++) {
            /* max(di, dq) == k, balanced shifts first */
            ptrdiff_t e;
            for (e = 0; e <= k && !found; e++) {
                ptrdiff_t opts[2][2] = { { k, k - e }, { k - e, k } };
                int o;
                for (o = 0; o < (e ? 2 : 1) && !found; o++) {
                    if (run_ok(a, m, b, (size_t)n, i + opts[o][0] * dir, q + opts[o][1] * dir,
                               dir)) {
                        di = opts[o][0];
                        dq = opts[o][1];
                        found = 1;
                    }
                }
            }
        }
        if (!found) {
            /* near the end of the ET thread nothing follows to confirm a
             * substitution: leave the rest unpaired (ET-only) */
            if ((dir > 0 ? (ptrdiff_t)m - i : i + 1) <= LOOK)
                break;
            di = dq = 1;
        }
        for (t = 0; t < (di < dq ? di : dq); t++) {
            ptrdiff_t ii = i + t * dir, qq = q + t * dir;
            if (ii < 0 || ii >= (ptrdiff_t)m || qq < 0 || qq >= n)
                break;
            w->pa[ii] = (int32_t)qq;
            w->pk[ii] = M_NAME;
            w->pb[qq] = 1;
        }
        i += di * dir;
        q += dq * dir;
    }
}

/* Align ET names a[0..m) (sequence numbers sq) with w->rows anchored at
 * a[ja] <-> rows[w->qa]; fills pa/pk/pb and the scores. */
static int align(const int64_t *a, const int64_t *sq, size_t m, size_t ja, struct win *w)
{
    size_t i;
    free(w->pa);
    free(w->pk);
    free(w->pb);
    w->pa = malloc((m ? m : 1) * sizeof(*w->pa));
    w->pk = calloc(m ? m : 1, 1);
    w->pb = calloc(w->n ? w->n : 1, 1);
    if (!w->pa || !w->pk || !w->pb)
        return oom();
    for (i = 0; i < m; i++)
        w->pa[i] = -1;
    w->eq = w->seq_eq = 0;
    w->has = 0;
    if (w->qa >= w->n)
        return 0;
    align_dir(a, m, w, (ptrdiff_t)ja, (ptrdiff_t)w->qa, 1);
    if (ja > 0 && w->qa > 0)
        align_dir(a, m, w, (ptrdiff_t)ja - 1, (ptrdiff_t)w->qa - 1, -1);
    for (i = 0; i < m; i++) {
        const struct krow *r;
        if (w->pa[i] < 0)
            continue;
        r = &w->rows[w->pa[i]];
        if (!w->has) {
            w->has = 1;
            w->qlo = w->qhi = (size_t)w->pa[i];
            w->ts_lo = r->ts;
            w->ts_hi = r->ts + r->dur;
        }
        if ((size_t)w->pa[i] < w->qlo)
            w->qlo = (size_t)w->pa[i];
        if ((size_t)w->pa[i] > w->qhi)
            w->qhi = (size_t)w->pa[i];
        if (r->ts < w->ts_lo)
            w->ts_lo = r->ts;
        if (r->ts + r->dur > w->ts_hi)
            w->ts_hi = r->ts + r->dur;
        if (w->pk[i] == M_OK) {
            w->eq++;
            if (sq[i] >= 0 && sq[i] == r->seq)
                w->seq_eq++;
        }
    }
    w->ext0 = w->has ? w->rows[w->qlo].key : 0;
    return 0;
}

/* a is the better window: more agreeing names + sequence numbers, then time
 * overlap with the windows already chosen, then the earliest */
static int win_better(const struct win *a, const struct win *b)
{
    int64_t sa = a->eq + a->seq_eq, sb = b->eq + b->seq_eq;
    if (!b->has)
        return a->has;
    if (!a->has)
        return 0;
    if (sa != sb)
        return sa > sb;
    if (a->ov != b->ov)
        return a->ov > b->ov;
    return a->ext0 < b->ext0;
}

struct cand {
    int64_t id, ext, ts;
    struct val pid, tid;
    size_t k;      /* anchor index in the ET thread */
    int64_t score; /* probe: agreeing names + sequence numbers */
    int has, ov;   /* probe aligned anything; starts inside the windows placed so far */
};

/* best probes first: score, then time overlap, then the earliest */
static int cmp_cand(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->has != b->has)
        return a->has ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->ov != b->ov)
        return a->ov > b->ov ? -1 : 1;
    return a->ext < b->ext ? -1 : a->ext > b->ext;
}

static int find_cands(struct xc *x, struct pair *p, int64_t name, int64_t seq, size_t k,
                      struct cand **c, size_t *nc, size_t *ac)
{
    int pass, s;
    for (pass = seq >= 0 ? 0 : 1; pass < 2; pass++) {
        size_t before = *nc;
        sqlite3_stmt *st = x->st_cand;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, p->k->id);
        bind_cats(x, st);
        sqlite3_bind_int64(st, 4, name);
        sqlite3_bind_int64(st, 5, pass == 0 ? seq : -1);
        sqlite3_bind_int64(st, 6, pass == 0 ? CAND_SEQ_LIMIT : CAND_LIMIT);
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            struct cand *cd;
            if (TT_ALLOC_GROW(*c, *nc + 1, *ac) < 0) {
                sqlite3_reset(st);
                return oom();
            }
            cd = &(*c)[(*nc)++];
            cd->id = sqlite3_column_int64(st, 0);
            cd->ext = sqlite3_column_int64(st, 1);
            val_get(&cd->pid, st, 2);
            val_get(&cd->tid, st, 3);
            cd->ts = sqlite3_column_int64(st, 4);
            cd->k = k;
        }
        sqlite3_reset(st);
        if (s != SQLITE_DONE)
            return tt_db_error(x->db, "cannot read Kineto cpu ops");
        if (*nc > before)
            break;
    }
    return 0;
}

struct wspan {
    int has;
    int64_t lo, hi;
};

/* Window of one ET thread (ops idx[0..m), in rf_id order). */
static int order_thread(struct xc *x, struct pair *p, struct result *r, const size_t *idx,
                        size_t m, struct wspan *span)
{
    int64_t *a = NULL, *sq = NULL, *sorted = NULL;
    struct cand *c = NULL;
    size_t nc = 0, ac = 0, i, t, nfull;
    struct win probe, best;
    int rc = 0, have_best = 0;
    memset(&probe, 0, sizeof(probe));
    memset(&best, 0, sizeof(best));
    a = malloc(m * sizeof(*a));
    sq = malloc(m * sizeof(*sq));
    sorted = malloc(m * sizeof(*sorted));
    if (!a || !sq || !sorted) {
        rc = oom();
        goto out;
    }
    for (i = 0; i < m; i++) {
        a[i] = p->ops[idx[i]].name;
        sq[i] = p->ops[idx[i]].seq;
        sorted[i] = a[i];
    }
    qsort(sorted, m, sizeof(*sorted), cmp_i64);
    /* one anchor per third: the rarest name, with a sequence number if possible */
    for (t = 0; t < 3; t++) {
        size_t lo = t * m / 3, hi = (t + 1) * m / 3, k, bk = (size_t)-1, bc = 0;
        for (k = lo; k < hi; k++) {
            size_t cn = count_sorted(sorted, m, a[k]) * 2 + (sq[k] < 0);
            if (bk == (size_t)-1 || cn < bc) {
                bk = k;
                bc = cn;
            }
        }
        if (bk != (size_t)-1 && (rc = find_cands(x, p, a[bk], sq[bk], bk, &c, &nc, &ac)) < 0)
            goto out;
    }
    /* probe each candidate on a few ops around its anchor */
    for (i = 0; i < nc; i++) {
        size_t k = c[i].k, lo = k > PROBE ? k - PROBE : 0, hi = k + PROBE < m ? k + PROBE : m;
        if ((rc = load_rows(x, p, &c[i].pid, &c[i].tid, c[i].ext, c[i].id, k - lo + 4,
                            hi - k + 4, &probe)) < 0 ||
            (rc = align(a + lo, sq + lo, hi - lo, k - lo, &probe)) < 0)
            goto out;
        c[i].has = probe.has;
        c[i].score = probe.eq + probe.seq_eq;
        c[i].ov = span->has && c[i].ts >= span->lo && c[i].ts <= span->hi;
    }
    if (nc)
        qsort(c, nc, sizeof(*c), cmp_cand);
    /* align the best probes in full: at least KEEP, then until a window
     * takes every op of the thread, at most FULL_MAX */
    for (i = 0, nfull = 0; i < nc && nfull < FULL_MAX; i++) {
        const struct cand *cd = &c[i];
        struct win w;
        size_t slack = 8 + m / 16;
        if (!cd->has)
            break;
        if (nfull >= KEEP && have_best && best.eq == (int64_t)m)
            break;
        nfull++;
        memset(&w, 0, sizeof(w));
        if ((rc = load_rows(x, p, &cd->pid, &cd->tid, cd->ext, cd->id, cd->k + slack,
                            m - cd->k + slack, &w)) < 0 ||
            (rc = align(a, sq, m, cd->k, &w)) < 0) {
            win_free(&w);
            goto out;
        }
        w.ov = span->has && w.has && w.ts_lo <= span->hi && w.ts_hi >= span->lo;
        if (!have_best || win_better(&w, &best)) {
            win_free(&best);
            best = w;
            have_best = 1;
        } else {
            win_free(&w);
        }
    }
    {
        struct trow *tr;
        if (TT_ALLOC_GROW(r->rows, r->nrows + 1, r->arows) < 0) {
            rc = oom();
            goto out;
        }
        tr = &r->rows[r->nrows++];
        memset(tr, 0, sizeof(*tr));
        tr->has_et = p->ops[idx[0]].has_tid;
        tr->et_tid = p->ops[idx[0]].tid;
        tr->kt = -1;
        tr->et_ops = (int64_t)m;
        if (!have_best || !best.has || best.eq == 0 || best.eq * 4 < (int64_t)m)
            goto out; /* no window: every op of the thread is ET-only */
        if ((tr->kt = kt_index(r, &best.pid, &best.tid)) < 0) {
            rc = oom();
            goto out;
        }
        for (i = 0; i < m; i++) {
            struct match *mt = &r->m[idx[i]];
            const struct krow *kr;
            if (best.pa[i] < 0)
                continue;
            kr = &best.rows[best.pa[i]];
            mt->state = best.pk[i];
            mt->slice = kr->id;
            mt->kkey = kr->key;
            mt->kname = kr->name;
            mt->ts = kr->ts;
            mt->dur = kr->dur;
            mt->kt = tr->kt;
        }
        for (i = best.qlo; i <= best.qhi; i++) {
            const struct krow *kr = &best.rows[i];
            r->k_inwin++;
            if (i > best.qlo && kr->key == best.rows[i - 1].key &&
                (i == best.qlo + 1 || best.rows[i - 2].key != kr->key)) {
                size_t j = i;
                while (j + 1 <= best.qhi && best.rows[j + 1].key == kr->key)
                    j++;
                kdup_add(x, r, kr->key, (int64_t)(j - i + 2), best.rows[i - 1].name, kr->name);
            }
            if (!best.pb[i]) {
                struct koff k = { kr->id, kr->key, kr->name, kr->ts, tr->kt };
                konly_add(x, r, &k);
                tr->k_only++;
            }
        }
        widen(&span->has, &span->lo, &span->hi, best.ts_lo, best.ts_hi);
    }
out:
    win_free(&probe);
    win_free(&best);
    free(c);
    free(a);
    free(sq);
    free(sorted);
    return rc;
}

static const struct etop *g_ops; /* for cmp_thread_idx (qsort has no context) */

static int cmp_thread_idx(const void *pa, const void *pb)
{
    const struct etop *x = &g_ops[*(const size_t *)pa], *y = &g_ops[*(const size_t *)pb];
    size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
    if (x->has_tid != y->has_tid)
        return x->has_tid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return ia < ib ? -1 : ia > ib; /* ops are in rf_id order */
}

struct tgroup {
    size_t from, m;
};

static int cmp_tgroup(const void *a, const void *b)
{
    const struct tgroup *x = a, *y = b;
    if (x->m != y->m)
        return x->m > y->m ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

static int join_order(struct xc *x, struct pair *p, struct result *r)
{
    size_t *idx = NULL, i, ng = 0;
    struct tgroup *g = NULL;
    struct wspan span = { 0, 0, 0 };
    int rc = 0;
    r->key = K_EXT_ORDER;
    if (!p->nrf)
        return 0;
    idx = malloc(p->nrf * sizeof(*idx));
    g = malloc(p->nrf * sizeof(*g));
    if (!idx || !g) {
        rc = oom();
        goto out;
    }
    for (i = 0; i < p->nrf; i++)
        idx[i] = i;
    g_ops = p->ops;
    qsort(idx, p->nrf, sizeof(*idx), cmp_thread_idx);
    for (i = 0; i < p->nrf; i++) {
        const struct etop *o = &p->ops[idx[i]], *prev = i ? &p->ops[idx[i - 1]] : NULL;
        if (!prev || prev->has_tid != o->has_tid || prev->tid != o->tid) {
            g[ng].from = i;
            g[ng++].m = 0;
        }
        g[ng - 1].m++;
    }
    /* largest thread first: its window decides the time span the others prefer */
    qsort(g, ng, sizeof(*g), cmp_tgroup);
    for (i = 0; i < ng; i++) {
        if ((rc = order_thread(x, p, r, idx + g[i].from, g[i].m, &span)) < 0)
            goto out;
    }
out:
    free(idx);
    free(g);
    return rc;
}

/* ---------------------------------------------------------------- tallies */

static const struct trow *g_rows; /* for cmp_row_idx */

static int cmp_trow(int has_a, int64_t ta, size_t ia, int has_b, int64_t tb, size_t ib)
{
    if (has_a != has_b)
        return has_a < has_b ? -1 : 1;
    if (has_a && ta != tb)
        return ta < tb ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

static int cmp_row_idx(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return cmp_trow(g_rows[a].has_et, g_rows[a].et_tid, a, g_rows[b].has_et, g_rows[b].et_tid, b);
}

/* the first of rows[0..n) (rowidx: their indices sorted by ET thread) of
 * o's ET thread, or NULL */
static struct trow *find_row(struct result *r, const size_t *rowidx, size_t n,
                             const struct etop *o)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_trow(r->rows[rowidx[mid]].has_et, r->rows[rowidx[mid]].et_tid, rowidx[mid],
                     o->has_tid, o->tid, 0) < 0 &&
            !(r->rows[rowidx[mid]].has_et == o->has_tid &&
              (!o->has_tid || r->rows[rowidx[mid]].et_tid == o->tid)))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && r->rows[rowidx[lo]].has_et == o->has_tid &&
        (!o->has_tid || r->rows[rowidx[lo]].et_tid == o->tid))
        return &r->rows[rowidx[lo]];
    return NULL;
}

/* Per-thread rows (key modes: ET tid -> the Kineto thread most of its ops
 * went to), per-row counts, offsets, ranges; totals of the result. */
static int tally(struct xc *x, struct pair *p, struct result *r)
{
    size_t *idx = NULL, *rowidx = NULL, i, j, nrows0 = r->nrows;
    int64_t *votes = NULL;
    int rc = 0;
    TT_UNUSED(x);
    votes = calloc(r->nkt + 1, sizeof(*votes));
    rowidx = malloc((nrows0 + 1) * sizeof(*rowidx));
    if (!votes || !rowidx || (p->n && !(idx = malloc(p->n * sizeof(*idx))))) {
        rc = oom();
        goto out;
    }
    for (i = 0; i < nrows0; i++)
        rowidx[i] = i;
    g_rows = r->rows;
    if (nrows0)
        qsort(rowidx, nrows0, sizeof(*rowidx), cmp_row_idx);
    for (i = 0; i < p->n; i++)
        idx[i] = i;
    g_ops = p->ops;
    if (p->n)
        qsort(idx, p->n, sizeof(*idx), cmp_thread_idx);
    for (i = 0; i < p->n; i = j) {
        const struct etop *o = &p->ops[idx[i]];
        struct trow *tr = NULL;
        size_t k;
        int64_t lastoff = 0;
        int have_last = 0;
        for (j = i; j < p->n && p->ops[idx[j]].has_tid == o->has_tid &&
                    (!o->has_tid || p->ops[idx[j]].tid == o->tid);
             j++)
            ;
        if (nrows0)
            tr = find_row(r, rowidx, nrows0, o);
        if (!tr) {
            if (TT_ALLOC_GROW(r->rows, r->nrows + 1, r->arows) < 0) {
                rc = oom();
                goto out;
            }
            tr = &r->rows[r->nrows++];
            memset(tr, 0, sizeof(*tr));
            tr->has_et = o->has_tid;
            tr->et_tid = o->tid;
            tr->kt = -1;
            /* the Kineto thread most ops went to (ties: the first) */
            for (k = i; k < j; k++) {
                int kt = r->m[idx[k]].kt;
                if (kt >= 0)
                    votes[kt]++;
            }
            for (k = i; k < j; k++) {
                int kt = r->m[idx[k]].kt;
                if (kt >= 0 && (tr->kt < 0 || votes[kt] > votes[tr->kt] ||
                                (votes[kt] == votes[tr->kt] && kt < tr->kt)))
                    tr->kt = kt;
            }
            for (k = i; k < j; k++) {
                if (r->m[idx[k]].kt >= 0)
                    votes[r->m[idx[k]].kt] = 0;
            }
        }
        tr->et_ops = (int64_t)(j - i);
        tr->matched = tr->et_only = tr->name_diff = 0;
        for (k = i; k < j; k++) {
            const struct match *m = &r->m[idx[k]];
            const struct etop *op = &p->ops[idx[k]];
            if (m->state == M_OK)
                tr->matched++;
            else if (m->state == M_NAME)
                tr->name_diff++;
            else
                tr->et_only++;
            if (m->state != M_NONE) {
                widen(&tr->has_key, &tr->key_lo, &tr->key_hi, m->kkey, m->kkey);
                widen(&tr->has_ts, &tr->ts_lo, &tr->ts_hi, m->ts, m->ts + m->dur);
                widen(&r->has_ts, &r->ts_lo, &r->ts_hi, m->ts, m->ts + m->dur);
                if (r->key == K_EXT_ORDER)
                    widen(&r->has_key, &r->key_lo, &r->key_hi, m->kkey, m->kkey);
            }
            if (m->state == M_OK && op->has_rf) {
                int64_t off = m->kkey - op->rf;
                if (!have_last || off != lastoff) {
                    tr->segs_total++;
                    if (tr->nsegs < MAX_SEGS) {
                        tr->segs[tr->nsegs].rf_from = op->rf;
                        tr->segs[tr->nsegs].off = off;
                        tr->segs[tr->nsegs++].n = 0;
                    }
                }
                if ((size_t)tr->segs_total == tr->nsegs)
                    tr->segs[tr->nsegs - 1].n++;
                lastoff = off;
                have_last = 1;
            }
        }
    }
    /* Kineto-only ops: key modes count them per Kineto thread */
    if (r->key != K_EXT_ORDER) {
        size_t nrows1 = r->nrows;
        for (i = 0; i < r->nkt; i++)
            votes[i] = -1;
        for (j = nrows1; j-- > 0;) { /* the first row of each Kineto thread */
            if (r->rows[j].kt >= 0)
                votes[r->rows[j].kt] = (int64_t)j;
        }
        for (i = 0; i < r->nkt; i++) {
            struct trow *tr = NULL;
            if (!r->kt[i].k_only)
                continue;
            if (votes[i] >= 0)
                tr = &r->rows[votes[i]];
            if (!tr) {
                if (TT_ALLOC_GROW(r->rows, r->nrows + 1, r->arows) < 0) {
                    rc = oom();
                    goto out;
                }
                tr = &r->rows[r->nrows++];
                memset(tr, 0, sizeof(*tr));
                tr->kt = (int)i;
            }
            tr->k_only += r->kt[i].k_only;
        }
    }
    r->matched = r->et_only = r->name_diff = 0;
    for (i = 0; i < p->n; i++) {
        if (r->m[i].state == M_OK)
            r->matched++;
        else if (r->m[i].state == M_NAME)
            r->name_diff++;
        else
            r->et_only++;
    }
out:
    free(idx);
    free(rowidx);
    free(votes);
    return rc;
}

/* ---------------------------------------------------------------- one pair */

static int check_pair(struct xc *x, struct pair *p)
{
    struct result *r1 = NULL, *r2 = NULL;
    int rc;
    int key = x->o->key;
    if ((rc = pytorch_rule(x, p)) < 0)
        return rc;
    if (key == TT_XC_KEY_AUTO)
        key = p->k_rf_nonzero > 0 ? TT_XC_KEY_RF : TT_XC_KEY_EXTERNAL;
    if (key == TT_XC_KEY_RF) {
        if (!(r1 = result_new(x, p, K_RF)))
            return oom();
        if ((rc = join_key(x, p, r1, K_RF, 0)) < 0 || (rc = tally(x, p, r1)) < 0)
            goto fail;
    } else {
        int64_t off = 0, n = 0;
        if ((rc = best_offset(x, p, &off, &n)) < 0)
            goto fail;
        if (!(r1 = result_new(x, p, K_EXT_OFFSET)))
            return oom();
        if ((rc = join_key(x, p, r1, K_EXT_OFFSET, off)) < 0 || (rc = tally(x, p, r1)) < 0)
            goto fail;
        if (r1->matched < (int64_t)p->nrf && p->k_ext > 0) {
            if (!(r2 = result_new(x, p, K_EXT_ORDER))) {
                rc = oom();
                goto fail;
            }
            if ((rc = join_order(x, p, r2)) < 0 || (rc = tally(x, p, r2)) < 0)
                goto fail;
            if (r2->matched > r1->matched) {
                r2->has_const = 1;
                r2->const_off = off;
                r2->const_matched = r1->matched;
                result_free(r1);
                r1 = r2;
            } else {
                result_free(r2);
            }
            r2 = NULL;
        }
    }
    if (r1->key == K_RF) {
        /* every Kineto op carrying an id is in the window */
    }
    p->r = r1;
    p->consistent = r1->matched == (int64_t)p->n && r1->k_only == 0 && r1->name_diff == 0 &&
                    p->dup_et == 0 && r1->dup_k == 0 && p->n > 0 &&
                    (!x->o->strict || p->rule_equal);
    return 0;
fail:
    result_free(r1);
    result_free(r2);
    return rc;
}

/* ---------------------------------------------------------------- report */

static const char *key_name(int key)
{
    switch (key) {
    case K_RF: return "rf_id";
    case K_EXT_OFFSET: return "external_id";
    case K_EXT_ORDER: return "external_id_order";
    default: return "none";
    }
}

static const char *key_label(int key)
{
    return key == K_RF ? "Record function id" : "External id";
}

static void jstr(tt_buf *b, const char *s)
{
    tt_buf_add_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

static void jname(struct xc *x, tt_buf *b, int64_t id)
{
    char *s = str_dup(x, id);
    jstr(b, s ? s : "");
    free(s);
}

static void jopt(tt_buf *b, int has, int64_t v)
{
    if (has)
        tt_buf_addf(b, "%" PRId64, v);
    else
        tt_buf_addstr(b, "null");
}

static void print_json_pair(struct xc *x, const struct pair *p, tt_buf *b)
{
    const struct result *r = p->r;
    size_t i, k;
    int64_t outside = p->k_total - r->k_inwin;
    if (r->key == K_RF)
        outside = p->k_total - p->k_rf_nonzero;
    if (outside < 0)
        outside = 0;
    tt_buf_addf(b, "%s\n  {\"et\": {\"trace_id\": %" PRId64 ", \"path\": ", x->npairs_out ? "," : "",
                p->et->id);
    jstr(b, p->et->path);
    tt_buf_addstr(b, ", \"pid\": ");
    jopt(b, p->et->has_pid, p->et->pid);
    tt_buf_addstr(b, ", \"rank\": ");
    jopt(b, p->et->has_rank, p->et->rank);
    tt_buf_addf(b, ", \"nodes\": %" PRId64 ", \"roots\": %" PRId64 ", \"ops\": %zu},\n", p->et_nodes,
                p->et_roots, p->n);
    tt_buf_addf(b, "   \"kineto\": {\"trace_id\": %" PRId64 ", \"path\": ", p->k->id);
    jstr(b, p->k->path);
    tt_buf_addstr(b, ", \"pid\": ");
    jopt(b, p->k->has_pid, p->k->pid);
    tt_buf_addstr(b, ", \"rank\": ");
    jopt(b, p->k->has_rank, p->k->rank);
    tt_buf_addf(b, ", \"ops\": %" PRId64 ", \"with_record_function_id\": %" PRId64
                   ", \"with_external_id\": %" PRId64 "},\n",
                p->k_total, p->k_rf_nonzero, p->k_ext);
    tt_buf_addstr(b, "   \"paired_by\": ");
    jstr(b, p->how);
    tt_buf_addf(b, ",\n   \"pytorch_rule\": {\"applies\": %s, \"equal\": %s, \"et_ids\": %" PRId64
                   ", \"kineto_ids\": %" PRId64 ", \"et_only\": %" PRId64 ", \"kineto_only\": %" PRId64
                   "},\n",
                p->k_rf_nonzero ? "true" : "false", p->rule_equal ? "true" : "false", p->rule_et_n,
                p->k_total, p->rule_et_only, p->rule_k_only);
    tt_buf_addf(b, "   \"key\": \"%s\", \"offset\": ", key_name(r->key));
    jopt(b, r->key != K_EXT_ORDER, r->offset);
    tt_buf_addstr(b, ", \"constant_offset_tried\": ");
    if (r->has_const)
        tt_buf_addf(b, "{\"offset\": %" PRId64 ", \"matched\": %" PRId64 "}", r->const_off,
                    r->const_matched);
    else
        tt_buf_addstr(b, "null");
    tt_buf_addstr(b, ",\n   \"window\": {\"key_lo\": ");
    jopt(b, r->has_key, r->key_lo);
    tt_buf_addstr(b, ", \"key_hi\": ");
    jopt(b, r->has_key, r->key_hi);
    tt_buf_addstr(b, ", \"ts_lo_ns\": ");
    jopt(b, r->has_ts, r->ts_lo);
    tt_buf_addstr(b, ", \"ts_hi_ns\": ");
    jopt(b, r->has_ts, r->ts_hi);
    tt_buf_addf(b, "},\n   \"et_ops\": %zu, \"matched\": %" PRId64 ", \"et_only\": %" PRId64
                   ", \"kineto_only\": %" PRId64 ", \"name_mismatch\": %" PRId64
                   ", \"duplicate_et\": %" PRId64 ", \"duplicate_kineto\": %" PRId64
                   ", \"kineto_outside_window\": %" PRId64 ", \"consistent\": %s,\n",
                p->n, r->matched, r->et_only, r->k_only, r->name_diff, p->dup_et, r->dup_k, outside,
                p->consistent ? "true" : "false");
    tt_buf_addstr(b, "   \"threads\": [");
    for (i = 0; i < r->nrows; i++) {
        const struct trow *t = &r->rows[i];
        struct val none = { SQLITE_NULL, 0, "" };
        tt_buf_addf(b, "%s\n    {\"et_tid\": ", i ? "," : "");
        jopt(b, t->has_et, t->et_tid);
        tt_buf_addstr(b, ", \"kineto_pid\": ");
        val_json(b, t->kt >= 0 ? &r->kt[t->kt].pid : &none);
        tt_buf_addstr(b, ", \"kineto_tid\": ");
        val_json(b, t->kt >= 0 ? &r->kt[t->kt].tid : &none);
        tt_buf_addf(b, ", \"et_ops\": %" PRId64 ", \"matched\": %" PRId64 ", \"et_only\": %" PRId64
                       ", \"kineto_only\": %" PRId64 ", \"name_mismatch\": %" PRId64 ", \"key_lo\": ",
                    t->et_ops, t->matched, t->et_only, t->k_only, t->name_diff);
        jopt(b, t->has_key, t->key_lo);
        tt_buf_addstr(b, ", \"key_hi\": ");
        jopt(b, t->has_key, t->key_hi);
        tt_buf_addstr(b, ", \"ts_lo_ns\": ");
        jopt(b, t->has_ts, t->ts_lo);
        tt_buf_addstr(b, ", \"ts_hi_ns\": ");
        jopt(b, t->has_ts, t->ts_hi);
        tt_buf_addf(b, ", \"offset_segments\": %" PRId64 ", \"offsets\": [", t->segs_total);
        for (k = 0; k < t->nsegs; k++)
            tt_buf_addf(b, "%s{\"rf_from\": %" PRId64 ", \"offset\": %" PRId64 ", \"count\": %" PRId64
                           "}",
                        k ? ", " : "", t->segs[k].rf_from, t->segs[k].off, t->segs[k].n);
        tt_buf_addstr(b, "]}");
    }
    tt_buf_addstr(b, "],\n   \"offenders\": {\"et_only\": [");
    for (i = 0, k = 0; i < p->n && k < x->limit; i++) {
        const struct etop *o = &p->ops[i];
        if (r->m[i].state != M_NONE)
            continue;
        tt_buf_addf(b, "%s{\"rf_id\": ", k++ ? ", " : "");
        jopt(b, o->has_rf, o->rf);
        tt_buf_addf(b, ", \"node_id\": %" PRId64 ", \"name\": ", o->node_id);
        jname(x, b, o->name);
        tt_buf_addstr(b, ", \"tid\": ");
        jopt(b, o->has_tid, o->tid);
        tt_buf_addstr(b, "}");
    }
    tt_buf_addstr(b, "], \"kineto_only\": [");
    for (i = 0; i < r->nkonly; i++) {
        const struct koff *ko = &r->konly[i];
        tt_buf_addf(b, "%s{\"slice_id\": %" PRId64 ", \"key\": %" PRId64 ", \"name\": ",
                    i ? ", " : "", ko->slice, ko->key);
        jname(x, b, ko->name);
        tt_buf_addstr(b, ", \"tid\": ");
        if (ko->kt >= 0)
            val_json(b, &r->kt[ko->kt].tid);
        else
            tt_buf_addstr(b, "null");
        tt_buf_addf(b, ", \"ts_ns\": %" PRId64 "}", ko->ts);
    }
    tt_buf_addstr(b, "], \"name_mismatch\": [");
    for (i = 0, k = 0; i < p->n && k < x->limit; i++) {
        const struct etop *o = &p->ops[i];
        const struct match *m = &r->m[i];
        if (m->state != M_NAME)
            continue;
        tt_buf_addf(b, "%s{\"rf_id\": ", k++ ? ", " : "");
        jopt(b, o->has_rf, o->rf);
        tt_buf_addf(b, ", \"node_id\": %" PRId64 ", \"et_name\": ", o->node_id);
        jname(x, b, o->name);
        tt_buf_addf(b, ", \"kineto_key\": %" PRId64 ", \"slice_id\": %" PRId64 ", \"kineto_name\": ",
                    m->kkey, m->slice);
        jname(x, b, m->kname);
        tt_buf_addstr(b, "}");
    }
    tt_buf_addstr(b, "], \"duplicates\": [");
    k = 0;
    for (i = 1; i < p->nrf && k < x->limit; i++) {
        size_t j;
        if (p->ops[i].rf != p->ops[i - 1].rf || (i >= 2 && p->ops[i - 2].rf == p->ops[i].rf))
            continue;
        for (j = i; j + 1 < p->nrf && p->ops[j + 1].rf == p->ops[i].rf; j++)
            ;
        tt_buf_addf(b, "%s{\"side\": \"et\", \"id\": %" PRId64 ", \"count\": %zu, \"names\": [",
                    k++ ? ", " : "", p->ops[i].rf, j - i + 2);
        jname(x, b, p->ops[i - 1].name);
        tt_buf_addstr(b, ", ");
        jname(x, b, p->ops[i].name);
        tt_buf_addstr(b, "]}");
    }
    for (i = 0; i < r->nkdups && k < x->limit; i++) {
        const struct dupo *d = &r->kdups[i];
        tt_buf_addf(b, "%s{\"side\": \"kineto\", \"id\": %" PRId64 ", \"count\": %" PRId64
                       ", \"names\": [",
                    k++ ? ", " : "", d->id, d->count);
        jname(x, b, d->name1);
        tt_buf_addstr(b, ", ");
        jname(x, b, d->name2);
        tt_buf_addstr(b, "]}");
    }
    tt_buf_addstr(b, "]}}");
}

static void print_name(struct xc *x, FILE *out, int64_t id)
{
    char *s = str_dup(x, id);
    fprintf(out, "'%s'", s ? s : "?");
    free(s);
}

static void print_text_pair(struct xc *x, const struct pair *p)
{
    FILE *out = x->out;
    const struct result *r = p->r;
    size_t i, k;
    char b1[64], b2[64];
    int64_t outside = p->k_total - (r->key == K_RF ? p->k_rf_nonzero : r->k_inwin);
    if (outside < 0)
        outside = 0;
    fprintf(out, "%sET trace %" PRId64 ": %s (", x->npairs_out ? "\n" : "", p->et->id, p->et->path);
    if (p->et->has_rank)
        fprintf(out, "rank %" PRId64 ", ", p->et->rank);
    if (p->et->has_pid)
        fprintf(out, "pid %" PRId64 ", ", p->et->pid);
    fprintf(out, "%zu ops + %" PRId64 " root nodes)\n", p->n, p->et_roots);
    fprintf(out, "Kineto trace %" PRId64 ": %s (", p->k->id, p->k->path);
    if (p->k->has_rank)
        fprintf(out, "rank %" PRId64 ", ", p->k->rank);
    if (p->k->has_pid)
        fprintf(out, "pid %" PRId64 ", ", p->k->pid);
    fprintf(out, "%" PRId64 " cpu_op/user_annotation events)\n", p->k_total);
    fprintf(out, "  paired by %s\n", p->how);
    if (p->k_rf_nonzero)
        fprintf(out, "  PyTorch rule (sorted ET rf_id == sorted Kineto \"Record function id\"): %s"
                     " (%" PRId64 " ET ids, %" PRId64 " Kineto events; %" PRId64
                     " only in ET, %" PRId64 " only in Kineto)\n",
                p->rule_equal ? "holds" : "FAILS", p->rule_et_n, p->k_total, p->rule_et_only,
                p->rule_k_only);
    else
        fprintf(out, "  PyTorch rule (sorted ET rf_id == sorted Kineto \"Record function id\"):"
                     " not applicable, the Kineto trace has no non-zero \"Record function id\"\n");
    if (r->key == K_RF)
        fprintf(out, "  key: Record function id == rf_id\n");
    else if (r->key == K_EXT_OFFSET)
        fprintf(out, "  key: External id == rf_id %c %" PRId64 " (constant offset)\n",
                r->offset < 0 ? '-' : '+', r->offset < 0 ? -r->offset : r->offset);
    else
        fprintf(out, "  key: External id in per-thread order (the ET thread's ops in rf_id order"
                     " against a window of one Kineto thread's ops in External-id order;"
                     " best constant offset %" PRId64 " matched only %" PRId64 ")\n",
                r->const_off, r->const_matched);
    fprintf(out, "  window: ");
    if (r->key == K_EXT_ORDER) {
        int any = 0;
        for (i = 0; i < r->nrows; i++) {
            const struct trow *t = &r->rows[i];
            if (t->kt < 0 || !t->has_key)
                continue;
            fprintf(out, "%sExternal id %" PRId64 "..%" PRId64 " on tid %s", any++ ? ", " : "",
                    t->key_lo, t->key_hi, val_fmt(&r->kt[t->kt].tid, b1, sizeof(b1)));
        }
        if (!any)
            fprintf(out, "none");
    } else if (r->has_key) {
        fprintf(out, "%s %" PRId64 "..%" PRId64, key_label(r->key), r->key_lo, r->key_hi);
    } else {
        fprintf(out, "none");
    }
    if (r->has_ts)
        fprintf(out, "; time %" PRId64 "..%" PRId64 " ns (%.3f ms)", r->ts_lo, r->ts_hi,
                (double)(r->ts_hi - r->ts_lo) / 1e6);
    fprintf(out, "; %" PRId64 " Kineto op%s outside\n", outside, outside == 1 ? "" : "s");
    fprintf(out, "  result: %s: %" PRId64 " of %zu ET ops matched%s\n",
            p->consistent ? "consistent" : "DIFFERENCES", r->matched, p->n,
            r->name_diff ? "" : ", names agree");
    fprintf(out, "    ET-only %" PRId64 ", Kineto-only %" PRId64 ", names differ %" PRId64
                 ", duplicate ids %" PRId64 " in ET, %" PRId64 " in Kineto\n",
            r->et_only, r->k_only, r->name_diff, p->dup_et, r->dup_k);
    fprintf(out, "  threads:\n    %8s  %12s  %7s  %7s  %7s  %11s  %12s  %-21s  %s\n", "ET tid",
            "Kineto tid", "ET ops", "matched", "ET-only", "Kineto-only", "names differ",
            r->key == K_RF ? "rf_id range" : "External id range",
            r->key == K_RF ? "offset" : "offset (External id - rf_id) from rf_id");
    for (i = 0; i < r->nrows; i++) {
        const struct trow *t = &r->rows[i];
        char range[48];
        if (t->has_et)
            snprintf(b1, sizeof(b1), "%" PRId64, t->et_tid);
        else
            snprintf(b1, sizeof(b1), "-");
        if (t->kt >= 0)
            val_fmt(&r->kt[t->kt].tid, b2, sizeof(b2));
        else
            snprintf(b2, sizeof(b2), "-");
        if (t->has_key)
            snprintf(range, sizeof(range), "%" PRId64 "..%" PRId64, t->key_lo, t->key_hi);
        else
            snprintf(range, sizeof(range), "-");
        fprintf(out, "    %8s  %12s  %7" PRId64 "  %7" PRId64 "  %7" PRId64 "  %11" PRId64
                     "  %12" PRId64 "  %-21s  ",
                b1, b2, t->et_ops, t->matched, t->et_only, t->k_only, t->name_diff, range);
        for (k = 0; k < t->nsegs; k++)
            fprintf(out, "%s%" PRId64 " from %" PRId64 " (%" PRId64 ")", k ? ", " : "",
                    t->segs[k].off, t->segs[k].rf_from, t->segs[k].n);
        if ((int64_t)t->nsegs < t->segs_total)
            fprintf(out, ", ... (%" PRId64 " segments)", t->segs_total);
        if (!t->nsegs)
            fprintf(out, "-");
        fputc('\n', out);
    }
    if (r->et_only) {
        fprintf(out, "  ET-only (first %zu of %" PRId64 "):\n",
                x->limit < (size_t)r->et_only ? x->limit : (size_t)r->et_only, r->et_only);
        for (i = 0, k = 0; i < p->n && k < x->limit; i++) {
            const struct etop *o = &p->ops[i];
            if (r->m[i].state != M_NONE)
                continue;
            k++;
            fprintf(out, "    rf_id %s, node %" PRId64 ", tid %s: ",
                    o->has_rf ? (snprintf(b1, sizeof(b1), "%" PRId64, o->rf), b1) : "none",
                    o->node_id,
                    o->has_tid ? (snprintf(b2, sizeof(b2), "%" PRId64, o->tid), b2) : "-");
            print_name(x, out, o->name);
            fputc('\n', out);
        }
    }
    if (r->k_only) {
        fprintf(out, "  Kineto-only (first %zu of %" PRId64 "):\n", r->nkonly, r->k_only);
        for (i = 0; i < r->nkonly; i++) {
            const struct koff *ko = &r->konly[i];
            fprintf(out, "    %s %" PRId64 ", slice %" PRId64 ", tid %s, ts %" PRId64 ": ",
                    key_label(r->key), ko->key, ko->slice,
                    ko->kt >= 0 ? val_fmt(&r->kt[ko->kt].tid, b1, sizeof(b1)) : "-", ko->ts);
            print_name(x, out, ko->name);
            fputc('\n', out);
        }
    }
    if (r->name_diff) {
        fprintf(out, "  names differ (first %zu of %" PRId64 "):\n",
                x->limit < (size_t)r->name_diff ? x->limit : (size_t)r->name_diff, r->name_diff);
        for (i = 0, k = 0; i < p->n && k < x->limit; i++) {
            const struct etop *o = &p->ops[i];
            const struct match *m = &r->m[i];
            if (m->state != M_NAME)
                continue;
            k++;
            fprintf(out, "    rf_id %" PRId64 ", node %" PRId64 ": ET ", o->rf, o->node_id);
            print_name(x, out, o->name);
            fprintf(out, " vs Kineto ");
            print_name(x, out, m->kname);
            fprintf(out, " (%s %" PRId64 ", slice %" PRId64 ")\n", key_label(r->key), m->kkey,
                    m->slice);
        }
    }
    if (p->dup_et || r->dup_k) {
        fprintf(out, "  duplicate ids:\n");
        k = 0;
        for (i = 1; i < p->nrf && k < x->limit; i++) {
            size_t j;
            if (p->ops[i].rf != p->ops[i - 1].rf || (i >= 2 && p->ops[i - 2].rf == p->ops[i].rf))
                continue;
            for (j = i; j + 1 < p->nrf && p->ops[j + 1].rf == p->ops[i].rf; j++)
                ;
            k++;
            fprintf(out, "    ET rf_id %" PRId64 " on %zu nodes: ", p->ops[i].rf, j - i + 2);
            print_name(x, out, p->ops[i - 1].name);
            fprintf(out, ", ");
            print_name(x, out, p->ops[i].name);
            fputc('\n', out);
        }
        for (i = 0; i < r->nkdups && k < x->limit; i++, k++) {
            fprintf(out, "    Kineto %s %" PRId64 " on %" PRId64 " events: ", key_label(r->key),
                    r->kdups[i].id, r->kdups[i].count);
            print_name(x, out, r->kdups[i].name1);
            fprintf(out, ", ");
            print_name(x, out, r->kdups[i].name2);
            fputc('\n', out);
        }
    }
}

static void summary_row(const struct pair *p, struct srow *sr)
{
    const struct result *r = p->r;
    size_t i, len = 0;
    memset(sr, 0, sizeof(*sr));
    sr->et = p->et->id;
    sr->k = p->k->id;
    sr->has_rank = p->k->has_rank || p->et->has_rank;
    sr->rank = p->k->has_rank ? p->k->rank : p->et->rank;
    sr->matched = r->matched;
    sr->n = (int64_t)p->n;
    sr->et_only = r->et_only;
    sr->k_only = r->k_only;
    sr->name_diff = r->name_diff;
    sr->dups = p->dup_et + r->dup_k;
    sr->consistent = p->consistent;
    sr->key = r->key;
    memcpy(sr->how, p->how, sizeof(sr->how) - 1);
    sr->how[sizeof(sr->how) - 1] = 0;
    if (r->key != K_EXT_ORDER) {
        snprintf(sr->off, sizeof(sr->off), "%" PRId64, r->offset);
        return;
    }
    /* per thread: the offset of its first matched op */
    for (i = 0; i < r->nrows && len + 1 < sizeof(sr->off); i++) {
        int w;
        if (!r->rows[i].nsegs)
            continue;
        w = snprintf(sr->off + len, sizeof(sr->off) - len, "%s%" PRId64, len ? "," : "",
                     r->rows[i].segs[0].off);
        if (w < 0 || (size_t)w >= sizeof(sr->off) - len)
            break;
        len += (size_t)w;
    }
    if (!len)
        snprintf(sr->off, sizeof(sr->off), "-");
}

static void print_summary_rows(FILE *out, const struct srow *sr, size_t n)
{
    size_t i;
    fprintf(out, "\n%6s  %6s  %4s  %-18s  %-17s  %-14s  %11s  %7s  %11s  %12s  %10s  %s\n", "ET",
            "Kineto", "rank", "paired by", "key", "offset", "matched", "ET-only", "Kineto-only",
            "names differ", "duplicates", "verdict");
    for (i = 0; i < n; i++) {
        char rank[24], matched[48];
        if (sr[i].has_rank)
            snprintf(rank, sizeof(rank), "%" PRId64, sr[i].rank);
        else
            snprintf(rank, sizeof(rank), "-");
        snprintf(matched, sizeof(matched), "%" PRId64 "/%" PRId64, sr[i].matched, sr[i].n);
        fprintf(out, "%6" PRId64 "  %6" PRId64 "  %4s  %-18.18s  %-17s  %-14.14s  %11s  %7" PRId64
                     "  %11" PRId64 "  %12" PRId64 "  %10" PRId64 "  %s\n",
                sr[i].et, sr[i].k, rank, sr[i].how,
                sr[i].key == K_RF ? "Record function id"
                : sr[i].key == K_EXT_OFFSET ? "External id" : "External id order",
                sr[i].off, matched, sr[i].et_only, sr[i].k_only, sr[i].name_diff, sr[i].dups,
                sr[i].consistent ? "consistent" : "DIFFERENCES");
    }
}

/* ---------------------------------------------------------------- et_links */

static int store_links(struct xc *x, const struct pair *p, int64_t *nlinks)
{
    sqlite3_stmt *del = NULL, *ins = NULL;
    size_t i;
    int rc;
    if ((rc = tt_db_exec(x->db,
                         "CREATE TABLE IF NOT EXISTS et_links(kineto_trace_id INTEGER NOT NULL,"
                         " slice_id INTEGER NOT NULL, et_trace_id INTEGER NOT NULL,"
                         " et_node_row_id INTEGER NOT NULL, key TEXT NOT NULL, offset INTEGER);"
                         "CREATE INDEX IF NOT EXISTS et_links_slice ON et_links(kineto_trace_id,"
                         " slice_id);"
                         "CREATE INDEX IF NOT EXISTS et_links_node ON et_links(et_trace_id,"
                         " et_node_row_id);")) < 0)
        return rc;
    if ((rc = tt_db_exec(x->db, "BEGIN IMMEDIATE")) < 0)
        return rc;
    /* links of traces deleted since (ingest --replace) */
    if ((rc = tt_db_exec(x->db, "DELETE FROM et_links WHERE kineto_trace_id NOT IN"
                                " (SELECT id FROM traces) OR et_trace_id NOT IN"
                                " (SELECT id FROM traces)")) < 0)
        goto fail;
    if ((rc = tt_db_prepare(x->db, &del,
                            "DELETE FROM et_links WHERE kineto_trace_id = ?1 AND et_trace_id = ?2")) <
            0 ||
        (rc = tt_db_prepare(x->db, &ins,
                            "INSERT INTO et_links(kineto_trace_id, slice_id, et_trace_id,"
                            " et_node_row_id, key, offset) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")) < 0)
        goto fail;
    sqlite3_bind_int64(del, 1, p->k->id);
    sqlite3_bind_int64(del, 2, p->et->id);
    if (sqlite3_step(del) != SQLITE_DONE) {
        rc = tt_db_error(x->db, "cannot write table et_links (--no-store only reports)");
        goto fail;
    }
    sqlite3_bind_int64(ins, 1, p->k->id);
    sqlite3_bind_int64(ins, 3, p->et->id);
    sqlite3_bind_text(ins, 5, key_name(p->r->key), -1, SQLITE_STATIC);
    for (i = 0; i < p->n; i++) {
        const struct match *m = &p->r->m[i];
        if (m->state != M_OK)
            continue;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 2, m->slice);
        sqlite3_bind_int64(ins, 4, p->ops[i].row);
        sqlite3_bind_int64(ins, 6, m->kkey - p->ops[i].rf);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            rc = tt_db_error(x->db, "cannot write table et_links");
            goto fail;
        }
        (*nlinks)++;
    }
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    return tt_db_exec(x->db, "COMMIT");
fail:
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    sqlite3_exec(x->db->sql, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ---------------------------------------------------------------- pairing */

static void traces_free(struct tinfo *t, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(t[i].path);
    free(t);
}

static int load_traces(struct xc *x, struct tinfo **out, size_t *n)
{
    sqlite3_stmt *st;
    size_t alloc = 0;
    int s;
    *out = NULL;
    *n = 0;
    if (tt_db_prepare(x->db, &st, "SELECT id, path, format, rank, pid FROM traces ORDER BY id") < 0)
        return TT_EDB;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        struct tinfo *t;
        const char *fmt = (const char *)sqlite3_column_text(st, 2);
        const char *path = (const char *)sqlite3_column_text(st, 1);
        if (TT_ALLOC_GROW(*out, *n + 1, alloc) < 0) {
            sqlite3_finalize(st);
            return oom();
        }
        t = &(*out)[(*n)++];
        memset(t, 0, sizeof(*t));
        t->id = sqlite3_column_int64(st, 0);
        if (!(t->path = strdup(path ? path : ""))) {
            sqlite3_finalize(st);
            return oom();
        }
        t->is_et = fmt && !strcmp(fmt, "execution-trace");
        t->is_kineto = fmt && (!strcmp(fmt, "kineto-json") || !strcmp(fmt, "chrome-array"));
        t->has_rank = sqlite3_column_type(st, 3) == SQLITE_INTEGER;
        t->rank = sqlite3_column_int64(st, 3);
        t->has_pid = sqlite3_column_type(st, 4) == SQLITE_INTEGER;
        t->pid = sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read table traces");
}

static void pair_release(struct pair *p)
{
    result_free(p->r);
    p->r = NULL;
}

/* a is a better pairing than b */
static int pair_better(const struct pair *a, const struct pair *b)
{
    if (a->consistent != b->consistent)
        return a->consistent;
    if (a->r->matched != b->r->matched)
        return a->r->matched > b->r->matched;
    return a->r->k_only < b->r->k_only;
}

static int prepare_all(struct xc *x)
{
    if (tt_db_prepare(x->db, &x->st_str, "SELECT s FROM strings WHERE id = ?1") < 0 ||
        tt_db_prepare(x->db, &x->st_before,
                      "SELECT s.id, s.external_id, s.name, s.ts, s.dur, s.seq_nr FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.pid IS ?4"
                      " AND s.tid IS ?5 AND s.external_id < ?6"
                      " ORDER BY s.external_id DESC, s.id DESC LIMIT ?7") < 0 ||
        tt_db_prepare(x->db, &x->st_after,
                      "SELECT s.id, s.external_id, s.name, s.ts, s.dur, s.seq_nr FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.pid IS ?4"
                      " AND s.tid IS ?5 AND s.external_id >= ?6"
                      " ORDER BY s.external_id, s.id LIMIT ?7") < 0 ||
        tt_db_prepare(x->db, &x->st_cand,
                      "SELECT s.id, s.external_id, s.pid, s.tid, s.ts FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.name = ?4"
                      " AND s.external_id IS NOT NULL AND (?5 < 0 OR s.seq_nr = ?5)"
                      " ORDER BY s.external_id LIMIT ?6") < 0)
        return TT_EDB;
    return 0;
}

int tt_crosscheck_db(tt_db *db, const tt_xc_options *opts, FILE *out, tt_xc_summary *sum)
{
    struct xc x;
    tt_xc_options defo = TT_XC_OPTIONS_INIT;
    struct tinfo *t = NULL;
    size_t nt = 0, i, j, net = 0, nk = 0;
    unsigned char *kused = NULL, *etun = NULL;
    struct srow *srows = NULL;
    size_t nsrows = 0, asrows = 0;
    tt_buf jb = TT_BUF_INIT;
    tt_xc_summary local;
    FILE *discard = NULL; /* out == NULL: no report */
    int rc = 0;
    if (!out && !(out = discard = fopen("/dev/null", "w")))
        return tt_error_set(TT_EIO, "cannot open /dev/null: %s", strerror(errno));
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof(*sum));
    memset(&x, 0, sizeof(x));
    x.db = db;
    x.o = opts ? opts : &defo;
    x.out = out;
    x.limit = x.o->limit < 0 ? 0 : (size_t)x.o->limit;
    tt_error_clear();
    x.cat_cpu = string_id(db, "cpu_op");
    x.cat_ua = string_id(db, "user_annotation");
    /* the joins below look ops up by External id (a read-only database
     * without the index still works, by scanning) */
    if (!db->readonly) {
        sqlite3_stmt *q = NULL;
        int has_et = 0;
        if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM et_nodes LIMIT 1", -1, &q, NULL) ==
                SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
            has_et = 1;
        sqlite3_finalize(q);
        if (has_et && (rc = tt_db_ensure_index(db, TT_IDX_SLICES_EXT)) < 0)
            goto out;
    }
    if ((rc = prepare_all(&x)) < 0 || (rc = load_traces(&x, &t, &nt)) < 0)
        goto out;
    for (i = 0; i < nt; i++) {
        net += t[i].is_et;
        nk += t[i].is_kineto;
    }
    if (!net) {
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no Execution Trace in this database");
        goto out;
    }
    if (!nk) {
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no Kineto trace in this database");
        goto out;
    }
    if (!(kused = calloc(nt, 1)) || !(etun = calloc(nt, 1))) {
        rc = oom();
        goto out;
    }
    if (x.o->format == TT_XC_JSON)
        tt_buf_addstr(&jb, "{\"pairs\": [");
    for (i = 0; i < nt; i++) {
        struct pair best, cur;
        size_t *cand = NULL, nc = 0, c;
        const char *how = "pid";
        int have = 0;
        if (!t[i].is_et)
            continue;
        memset(&best, 0, sizeof(best));
        if (!(cand = malloc(nt * sizeof(*cand)))) {
            rc = oom();
            goto out;
        }
        /* same pid; several: same rank among them */
        for (j = 0; j < nt; j++) {
            if (t[j].is_kineto && t[i].has_pid && t[j].has_pid && t[j].pid == t[i].pid)
                cand[nc++] = j;
        }
        if (nc > 1 && t[i].has_rank) {
            size_t m = 0;
            for (c = 0; c < nc; c++) {
                if (t[cand[c]].has_rank && t[cand[c]].rank == t[i].rank)
                    cand[m++] = cand[c];
            }
            if (m)
                nc = m;
            if (m)
                how = "pid and rank";
        }
        if (!nc && t[i].has_rank) {
            how = "rank";
            for (j = 0; j < nt; j++) {
                if (t[j].is_kineto && t[j].has_rank && t[j].rank == t[i].rank)
                    cand[nc++] = j;
            }
        }
        if (!nc && net == 1 && nk == 1) {
            how = "being the only ET and the only Kineto trace (pid and rank differ)";
            for (j = 0; j < nt; j++) {
                if (t[j].is_kineto)
                    cand[nc++] = j;
            }
        }
        /* --trace / --rank */
        if (x.o->trace_id && t[i].id != x.o->trace_id) {
            size_t m = 0;
            for (c = 0; c < nc; c++) {
                if (t[cand[c]].id == x.o->trace_id)
                    cand[m++] = cand[c];
            }
            if (!m) {
                for (c = 0; c < nc; c++)
                    kused[cand[c]] = 1;
                free(cand);
                continue;
            }
            nc = m;
        }
        if (x.o->rank >= 0 && !(t[i].has_rank && t[i].rank == x.o->rank)) {
            size_t m = 0;
            for (c = 0; c < nc; c++) {
                if (t[cand[c]].has_rank && t[cand[c]].rank == x.o->rank)
                    cand[m++] = cand[c];
            }
            if (!m) {
                for (c = 0; c < nc; c++)
                    kused[cand[c]] = 1;
                free(cand);
                continue;
            }
            nc = m;
        }
        if (!nc) {
            sum->unpaired_et++;
            etun[i] = 1;
            if (x.o->format == TT_XC_JSON) {
                /* listed after the pairs */
            } else {
                fprintf(out, "%sET trace %" PRId64 ": %s: no Kineto trace with the same pid",
                        x.npairs_out ? "\n" : "", t[i].id, t[i].path);
                if (t[i].has_pid)
                    fprintf(out, " (%" PRId64 ")", t[i].pid);
                if (t[i].has_rank)
                    fprintf(out, " or rank (%" PRId64 ")", t[i].rank);
                fputs("\n", out);
                x.npairs_out++;
            }
            free(cand);
            continue;
        }
        for (c = 0; c < nc; c++) {
            memset(&cur, 0, sizeof(cur));
            cur.et = &t[i];
            cur.k = &t[cand[c]];
            kused[cand[c]] = 1;
            if (best.ops) { /* reuse the ET nodes */
                cur.ops = best.ops;
                cur.n = best.n;
                cur.nrf = best.nrf;
                cur.et_nodes = best.et_nodes;
                cur.et_roots = best.et_roots;
                cur.dup_et = best.dup_et;
            } else if ((rc = load_et(&x, &cur)) < 0) {
                free(cur.ops);
                free(cand);
                goto out;
            }
            if ((rc = check_pair(&x, &cur)) < 0) {
                if (cur.ops != best.ops)
                    free(cur.ops);
                pair_release(&best);
                free(best.ops);
                free(cand);
                goto out;
            }
            if (!have || pair_better(&cur, &best)) {
                struct etop *ops = cur.ops;
                pair_release(&best);
                best = cur;
                best.ops = ops;
                have = 1;
            } else {
                pair_release(&cur);
            }
        }
        if (nc > 1)
            snprintf(best.how, sizeof(best.how), "%s %" PRId64 " (best of %zu Kineto traces)", how,
                     !strcmp(how, "rank") ? t[i].rank : t[i].pid, nc);
        else if (!strcmp(how, "rank"))
            snprintf(best.how, sizeof(best.how), "rank %" PRId64, t[i].rank);
        else if (!strcmp(how, "pid and rank"))
            snprintf(best.how, sizeof(best.how), "pid %" PRId64 " and rank %" PRId64, t[i].pid,
                     t[i].rank);
        else if (!strcmp(how, "pid"))
            snprintf(best.how, sizeof(best.how), "pid %" PRId64, t[i].pid);
        else
            snprintf(best.how, sizeof(best.how), "%s", how);
        free(cand);
        sum->pairs++;
        if (best.consistent)
            sum->consistent++;
        else
            sum->inconsistent++;
        if (x.o->store && (rc = store_links(&x, &best, &sum->links)) < 0) {
            pair_release(&best);
            free(best.ops);
            goto out;
        }
        if (x.o->format == TT_XC_JSON) {
            print_json_pair(&x, &best, &jb);
        } else {
            print_text_pair(&x, &best);
            if (TT_ALLOC_GROW(srows, nsrows + 1, asrows) < 0) {
                pair_release(&best);
                free(best.ops);
                rc = oom();
                goto out;
            }
            summary_row(&best, &srows[nsrows++]);
        }
        x.npairs_out++;
        pair_release(&best);
        free(best.ops);
        if (jb.len > (1u << 16)) {
            fwrite(jb.buf, 1, jb.len, out);
            tt_buf_reset(&jb);
        }
    }
    for (i = 0; i < nt; i++) {
        if (t[i].is_kineto && !kused[i])
            sum->unpaired_kineto++;
    }
    if (x.o->format == TT_XC_JSON) {
        size_t k = 0;
        tt_buf_addstr(&jb, "\n ],\n \"unpaired_et\": [");
        for (i = 0; i < nt; i++) {
            if (!etun[i])
                continue;
            tt_buf_addf(&jb, "%s{\"trace_id\": %" PRId64 ", \"path\": ", k++ ? ", " : "", t[i].id);
            jstr(&jb, t[i].path);
            tt_buf_addstr(&jb, "}");
        }
        tt_buf_addstr(&jb, "],\n \"unpaired_kineto\": [");
        for (i = 0, k = 0; i < nt; i++) {
            if (!t[i].is_kineto || kused[i])
                continue;
            tt_buf_addf(&jb, "%s{\"trace_id\": %" PRId64 ", \"path\": ", k++ ? ", " : "", t[i].id);
            jstr(&jb, t[i].path);
            tt_buf_addstr(&jb, "}");
        }
        tt_buf_addf(&jb, "],\n \"summary\": {\"pairs\": %" PRId64 ", \"consistent\": %" PRId64
                         ", \"inconsistent\": %" PRId64 ", \"unpaired_et\": %" PRId64
                         ", \"unpaired_kineto\": %" PRId64 ", \"links_stored\": %" PRId64
                         "},\n \"consistent\": %s}\n",
                    sum->pairs, sum->consistent, sum->inconsistent, sum->unpaired_et,
                    sum->unpaired_kineto, sum->links,
                    sum->pairs && !sum->inconsistent && !sum->unpaired_et ? "true" : "false");
        if (jb.oom) {
            rc = oom();
            goto out;
        }
        fwrite(jb.buf, 1, jb.len, out);
    } else {
        if (nsrows > 1)
            print_summary_rows(out, srows, nsrows);
        fprintf(out, "\ncrosscheck: %" PRId64 " pair%s, %" PRId64 " consistent, %" PRId64
                     " with differences",
                sum->pairs, sum->pairs == 1 ? "" : "s", sum->consistent, sum->inconsistent);
        if (sum->unpaired_et)
            fprintf(out, ", %" PRId64 " ET trace%s without a Kineto trace", sum->unpaired_et,
                    sum->unpaired_et == 1 ? "" : "s");
        if (sum->unpaired_kineto)
            fprintf(out, ", %" PRId64 " Kineto trace%s without an ET", sum->unpaired_kineto,
                    sum->unpaired_kineto == 1 ? "" : "s");
        if (x.o->store)
            fprintf(out, "; %" PRId64 " links stored in et_links", sum->links);
        fputc('\n', out);
    }
    if (!sum->pairs && !sum->unpaired_et && (x.o->trace_id || x.o->rank >= 0))
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no ET/Kineto pair matches --trace/--rank");
out:
    sqlite3_finalize(x.st_str);
    sqlite3_finalize(x.st_before);
    sqlite3_finalize(x.st_after);
    sqlite3_finalize(x.st_cand);
    traces_free(t, nt);
    free(kused);
    free(etun);
    free(srows);
    tt_buf_release(&jb);
    if (discard)
        fclose(discard);
    return rc;
}

/* ---------------------------------------------------------------- files */

static int wanted(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return 0;
    return (n > 5 && !strcmp(name + n - 5, ".json")) || (n > 3 && !strcmp(name + n - 3, ".gz"));
}

static int ingest_one(tt_db *db, const char *path, int *nfiles)
{
    int rc = tt_ingest_file(db, path, NULL, NULL);
    (*nfiles)++;
    if (rc == TT_EEXISTS) { /* the same content given twice */
        tt_error_clear();
        return 0;
    }
    return rc;
}

static int walk(tt_db *db, const char *dir, int *nfiles)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort), i, rc = 0;
    if (n < 0)
        return tt_error_set_at(TT_EIO, dir, -1, "cannot read directory");
    for (i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        char *path = NULL;
        struct stat st;
        size_t dl = strlen(dir);
        while (dl > 1 && dir[dl - 1] == '/')
            dl--;
        if (rc == 0 && nm[0] != '.' && asprintf(&path, "%.*s/%s", (int)dl, dir, nm) >= 0) {
            if (stat(path, &st) == 0) {
                if (S_ISDIR(st.st_mode))
                    rc = walk(db, path, nfiles);
                else if (S_ISREG(st.st_mode) && wanted(nm))
                    rc = ingest_one(db, path, nfiles);
            }
            free(path);
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int tt_crosscheck_files(const char *const *inputs, size_t n, const tt_xc_options *opts, FILE *out,
                        tt_xc_summary *sum)
{
    char tmpl[] = "/tmp/tracetool-crosscheck-XXXXXX";
    int fd, rc = 0, nfiles;
    size_t i;
    tt_db *db = NULL;
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    if (opts)
        o = *opts;
    o.store = 0;
    for (i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &st) != 0)
            return tt_error_set_at(TT_EIO, inputs[i], -1, "no such file or directory");
    }
    if ((fd = mkstemp(tmpl)) < 0)
        return tt_error_set(TT_EIO, "cannot create a temporary database in /tmp");
    close(fd);
    unlink(tmpl);
    if ((rc = tt_db_open(&db, tmpl, TT_DB_CREATE)) < 0)
        goto out;
    tt_db_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF");
    for (i = 0; i < n; i++) {
        struct stat st;
        nfiles = 0;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if ((rc = walk(db, inputs[i], &nfiles)) < 0)
                goto out;
            if (!nfiles) {
                rc = tt_error_set_at(TT_ENOTFOUND, inputs[i], -1,
                                     "no trace files (*.json, *.json.gz, *.gz) in this directory");
                goto out;
            }
        } else if ((rc = ingest_one(db, inputs[i], &nfiles)) < 0) {
            goto out;
        }
    }
    {
        sqlite3_stmt *st;
        int64_t net = 0, nk = 0;
        if (tt_db_prepare(db, &st,
                          "SELECT sum(format = 'execution-trace'),"
                          " sum(format IN ('kineto-json', 'chrome-array')) FROM traces") < 0) {
            rc = TT_EDB;
            goto out;
        }
        if (sqlite3_step(st) == SQLITE_ROW) {
            net = sqlite3_column_int64(st, 0);
            nk = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
        if (!net || !nk) {
            rc = tt_error_set_at(TT_EINVALID, n ? inputs[0] : "", -1,
                                 "no %s among the inputs (crosscheck needs a PyTorch Execution"
                                 " Trace and a Kineto trace)",
                                 !net ? "Execution Trace" : "Kineto trace");
            goto out;
        }
    }
    rc = tt_crosscheck_db(db, &o, out, sum);
out:
    tt_db_free(db);
    unlink(tmpl);
    return rc;
}
