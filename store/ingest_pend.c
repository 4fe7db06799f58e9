/*
 * store/ingest_pend.c - GPU activity -> runtime call by correlation, while
 * streaming.
 *
 * Kineto writes a GPU activity just before the runtime call that launched it
 * (several before one cudaGraphLaunch); ROCm traces write the call first.
 * So an activity is linked at once to a recent call of its correlation (a
 * direct-mapped cache of the last calls), or else held back in a ring, with
 * the others of its correlation, until the call arrives. What is stored
 * without a link is linked after the load by a merge join (ingest_link.c);
 * that can only find a call of the same correlation, so the ingest keeps
 * track of whether one exists: the exact set of every call's correlation
 * (a bitmap per 64k ids, struct ig_callset; it was a Bloom filter, whose
 * false positives sent a 470 MB trace through a temporary database) and
 * the set of correlations stored unlinked. A
 * consumer of the rows alone (tt__ingest_rows) then needs the database only
 * when such a late link exists (gpu_late), not whenever an activity has no
 * call at all (common: kernels of calls made before the trace began).
 * With unique correlations the links are those of the merge join.
 */
#include "common/compat.h"
#include "store/ingest_state.h"
#include "common/hash.h"
#include "formats/reader_internal.h"

#define RT_CACHE 4096           /* recent runtime calls, direct-mapped */
#define UNLINKED_MAX (1u << 20) /* correlations kept; beyond: gpu_late */

struct rt_recent {
    int64_t corr, rid, op_id, rt_ts; /* rt_ts: the call's start */
    int64_t rt_name, rt_thr;         /* its name, its thread (g->link_rt_*) */
    struct frame op;
    int used;
};

static size_t pend_hash(int64_t corr)
{
    uint64_t x = (uint64_t)corr * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 40) & (PEND_HASH - 1);
}

/* ---- what the merge join after the load could still link ---- */

#define CALLSET_SHIFT 16                         /* ids per chunk: 65536 */
#define CALLSET_WORDS (1u << (CALLSET_SHIFT - 6)) /* 8 KiB a chunk */
#define CALLSET_MAX 4096                         /* chunks: 32 MiB */

/* the bitmap of corr's chunk, made when make (NULL: untracked, or none) */
static uint64_t *callset_chunk(struct ig_callset *cs, int64_t corr, int make, int *rc)
{
    int64_t key = (int64_t)((uint64_t)corr >> CALLSET_SHIFT);
    size_t at;
    uint64_t *b;
    *rc = 0;
    if (cs->last && cs->last_key == key)
        return cs->last;
    if (tt__i64map_get(&cs->idx, key, &at)) {
        b = cs->chunk[at - 1];
    } else {
        if (!make || cs->full)
            return NULL;
        if (cs->n == CALLSET_MAX) {
            cs->full = 1;
            return NULL;
        }
        if (TT_ALLOC_GROW(cs->chunk, cs->n + 1, cs->a) < 0 ||
            !(b = calloc(CALLSET_WORDS, sizeof(uint64_t)))) {
            *rc = tt__oom();
            return NULL;
        }
        cs->chunk[cs->n++] = b;
        if (tt__i64map_put(&cs->idx, key, cs->n) < 0) {
            *rc = tt__oom();
            return NULL;
        }
    }
    cs->last_key = key;
    cs->last = b;
    return b;
}

/*
 * Whether a runtime call of correlation corr came before: 1 yes (or, for an
 * id past CALLSET_MAX chunks, maybe), 0 no. set: this call is one.
 */
static int calls_test_set(struct ingest *g, int64_t corr, int set, int *rc)
{
    struct ig_callset *cs = &g->calls;
    uint64_t *b = callset_chunk(cs, corr, set, rc);
    uint64_t bit = (uint64_t)corr & ((1u << CALLSET_SHIFT) - 1), m = 1ULL << (bit & 63);
    int was;
    if (!b)
        return cs->full; /* untracked: maybe when full, else none came */
    was = (b[bit >> 6] & m) != 0;
    if (set)
        b[bit >> 6] |= m;
    return was;
}

static void callset_release(struct ig_callset *cs)
{
    size_t i;
    for (i = 0; i < cs->n; i++)
        free(cs->chunk[i]);
    free(cs->chunk);
    tt__i64map_free(&cs->idx);
    memset(cs, 0, sizeof(*cs));
}

/* A GPU activity of correlation corr stored without its runtime call */
static int corr_unlinked(struct ingest *g, int64_t corr)
{
    int rc;
    if (calls_test_set(g, corr, 0, &rc) || g->unlinked.n >= UNLINKED_MAX) {
        g->gpu_late++; /* a call of this correlation may have come before */
        return 0;
    }
    return tt__i64map_put(&g->unlinked, corr, 1) < 0
               ? tt__oom() : 0;
}

/* ---- the ring of activities waiting for their call ---- */

static int pend_init(struct ingest *g)
{
    if (!g->pend) {
        g->pend = calloc(PEND_MAX, sizeof(*g->pend));
        g->pend_slot = calloc(PEND_HASH, sizeof(*g->pend_slot));
        g->rt_cache = calloc(RT_CACHE, sizeof(*g->rt_cache));
        if (!g->pend || !g->pend_slot || !g->rt_cache)
            return tt__oom();
    }
    return 0;
}

/* take ring entry r out of its correlation's chain and of the hash */
static void pend_unlink(struct ingest *g, size_t r)
{
    struct pending *p = &g->pend[r];
    if (p->older)
        g->pend[p->older - 1].newer = p->newer;
    if (p->newer) {
        g->pend[p->newer - 1].older = p->older;
    } else {
        /* the newest of its chain: the hash points at it */
        size_t j = pend_hash(p->ev->correlation), k;
        while (g->pend_slot[j] != (int64_t)r + 1)
            j = (j + 1) & (PEND_HASH - 1);
        if (p->older) {
            g->pend_slot[j] = (int64_t)p->older;
        } else {
            /* linear probing with backward-shift deletion */
            g->pend_slot[j] = 0;
            k = (j + 1) & (PEND_HASH - 1);
            while (g->pend_slot[k]) {
                size_t q = (size_t)g->pend_slot[k] - 1;
                size_t h = pend_hash(g->pend[q].ev->correlation);
                /* move k back to j if h is not cyclically in (j, k] */
                if ((j < k) ? (h <= j || h > k) : (h <= j && h > k)) {
                    g->pend_slot[j] = g->pend_slot[k];
                    g->pend_slot[k] = 0;
                    j = k;
                }
                k = (k + 1) & (PEND_HASH - 1);
            }
        }
    }
    p->older = p->newer = 0;
}

static int pend_emit(struct ingest *g, size_t ring, int64_t runtime_id, int64_t op_id)
{
    struct pending *p = &g->pend[ring];
    int rc;
    pend_unlink(g, ring);
    if (!runtime_id) {
        /* stored without its call: for the merge join after the load */
        if ((rc = corr_unlinked(g, p->ev->correlation)) < 0)
            return rc;
        g->unlinked_gpu++;
    }
    rc = ig_insert_gpu(g, p->ev, p->cat, p->name, runtime_id, op_id, p->flow);
    free(p->ev);
    p->ev = NULL;
    g->npend--;
    return rc;
}

/* store the oldest pending activities until at most `keep` remain */
int ig_pend_flush(struct ingest *g, size_t keep)
{
    while (g->npend > keep) {
        size_t ring = g->pend_head;
        int rc;
        g->pend_head = (g->pend_head + 1) % PEND_MAX;
        if (!g->pend[ring].ev)
            continue;
        if ((rc = pend_emit(g, ring, 0, 0)) < 0)
            return rc;
    }
    if (g->npend == 0)
        g->pend_head = 0;
    return 0;
}

/* The newest pending activity of correlation corr (its ring index), or -1 */
int64_t ig_pend_find(struct ingest *g, int64_t corr)
{
    size_t j;
    if (!g->npend)
        return -1;
    j = pend_hash(corr);
    while (g->pend_slot[j]) {
        size_t r = (size_t)g->pend_slot[j] - 1;
        if (g->pend[r].ev->correlation == corr)
            return (int64_t)r;
        j = (j + 1) & (PEND_HASH - 1);
    }
    return -1;
}

/* A GPU activity with a correlation: linked now, or held back */
int ig_pend_gpu(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name)
{
    size_t ring, j;
    int rc;
    if ((rc = pend_init(g)) < 0)
        return rc;
    {
        /* its call came first (ROCm) */
        const struct rt_recent *c =
            &g->rt_cache[tt_mix64((uint64_t)ev->correlation) & (RT_CACHE - 1)];
        if (c->used && c->corr == ev->correlation) {
            g->link_op = c->op;
            g->link_rt_ts = c->rt_ts;
            g->link_rt_name = c->rt_name;
            g->link_rt_thr = c->rt_thr;
            g->res->linked_gpu++;
            return ig_insert_gpu(g, ev, cat, name, c->rid, c->op_id, 0);
        }
    }
    if (g->npend == PEND_MAX && (rc = ig_pend_flush(g, PEND_MAX - 1)) < 0)
        return rc;
    j = pend_hash(ev->correlation);
    while (g->pend_slot[j] &&
           g->pend[(size_t)g->pend_slot[j] - 1].ev->correlation != ev->correlation)
        j = (j + 1) & (PEND_HASH - 1);
    ring = (g->pend_head + g->npend) % PEND_MAX;
    while (g->pend[ring].ev) /* a hole left by pend_emit: skip over it */
        ring = (ring + 1) % PEND_MAX;
    g->pend[ring].ev = tt__event_clone(ev);
    if (!g->pend[ring].ev)
        return tt__oom();
    g->pend[ring].cat = cat;
    g->pend[ring].name = name;
    g->pend[ring].flow = 0;
    g->pend[ring].newer = 0;
    /* the newest of its correlation's chain (cudaGraphLaunch: many) */
    g->pend[ring].older = (size_t)g->pend_slot[j];
    if (g->pend_slot[j])
        g->pend[(size_t)g->pend_slot[j] - 1].newer = ring + 1;
    g->pend_slot[j] = (int64_t)ring + 1;
    g->npend++;
    return 0;
}

/*
 * The runtime call rid of correlation corr, linked to op_id (g->link_op when
 * not 0), has been stored: the activities waiting for it are stored linked,
 * oldest first, and it is remembered for activities that come after it.
 */
void ig_pend_prefetch(const struct ingest *g, int64_t corr)
{
    uint64_t h = tt_mix64((uint64_t)corr);
    if (g->rt_cache)
        __builtin_prefetch(&g->rt_cache[h & (RT_CACHE - 1)], 1);
}

int ig_pend_runtime(struct ingest *g, int64_t corr, int64_t rid, int64_t op_id)
{
    int64_t r;
    int rc;
    struct rt_recent *c;
    size_t dummy;
    int seen;
    if ((rc = pend_init(g)) < 0)
        return rc;
    seen = calls_test_set(g, corr, 1, &rc);
    if (rc < 0)
        return rc;
    if (g->unlinked.n && tt__i64map_get(&g->unlinked, corr, &dummy))
        g->gpu_late++; /* an activity of this call was stored unlinked */
    c = &g->rt_cache[tt_mix64((uint64_t)corr) & (RT_CACHE - 1)];
    c->corr = corr;
    c->rid = rid;
    c->op_id = op_id;
    c->op = g->link_op;
    c->rt_ts = g->link_rt_ts;
    c->rt_name = g->link_rt_name;
    c->rt_thr = g->link_rt_thr;
    /*
     * A correlation that (maybe) had a call before: which call an activity
     * after both belongs to is the merge join's to say (the latest one
     * started at or before it), so none is remembered.
     */
    c->used = !seen;
    if ((r = ig_pend_find(g, corr)) < 0)
        return 0;
    while (g->pend[r].older)
        r = (int64_t)g->pend[r].older - 1;
    while (r >= 0) {
        int64_t next = (int64_t)g->pend[r].newer - 1;
        g->res->linked_gpu++;
        if ((rc = pend_emit(g, (size_t)r, rid, op_id)) < 0)
            return rc;
        r = next;
    }
    return 0;
}

void ig_pend_release(struct ingest *g)
{
    size_t i;
    if (g->pend) {
        for (i = 0; i < PEND_MAX; i++)
            free(g->pend[i].ev);
    }
    free(g->pend);
    free(g->pend_slot);
    free(g->rt_cache);
    callset_release(&g->calls);
    tt__i64map_free(&g->unlinked);
    g->pend = NULL;
    g->pend_slot = NULL;
    g->rt_cache = NULL;
    g->npend = 0;
}
