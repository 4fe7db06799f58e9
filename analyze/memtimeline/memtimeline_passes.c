/*
 * analyze/memtimeline/memtimeline_passes.c - the memory timeline's classifying passes
 * over the device's [memory] events (docs/TORCH.md 4, docs/MEMTIMELINE.md):
 *  1. context: each event's innermost enclosing CPU op on its thread and the
 *     phase around it (forward, backward, AccumulateGrad, Optimizer.step,
 *     ProfilerStep#N), from a per-thread stack walk (the walk's steps here,
 *     the scan in memtimeline_stream.c);
 *  2. pairing in time order by address: each allocation's free time and the
 *     category the heuristics give it (per spilled record), the blocks freed
 *     before any allocation (PREEXISTING) and the allocator's peak event.
 * Memory is bounded by the allocations live at one time.
 */
#include "common/compat.h"
#include "analyze/memtimeline/memtimeline_state.h"
#include "tracetool/render.h"

#include <errno.h>

const char *const tt__memtl_cat_rule[TT_CAT_COUNT] = {
    "PARAMETER: never freed and allocated outside any profiler step",
    "OPTIMIZER_STATE: allocated in Optimizer.step and still live after it",
    "INPUT: allocated in a step before the first op of the model (data loading/copies)",
    "TEMPORARY: freed before the op that allocated it ended",
    "ACTIVATION: allocated in the forward pass and freed in the backward pass",
    "GRADIENT: allocated under AccumulateGrad (or a backward op) and live after it",
    "AUTOGRAD_DETAIL: allocated and freed inside the backward pass",
    "Unknown: no rule applied (or live before the trace started)",
};

/* ---- context pass ---- */

int tt__memtl_str_has(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

unsigned tt__memtl_flags_of(const char *name, int is_backward_seq)
{
    unsigned f = 0;
    if (!name)
        return 0;
    if (tt__memtl_str_has(name, "autograd::engine::evaluate_function") || tt__memtl_str_has(name, "Backward") ||
        is_backward_seq)
        f |= PH_BACKWARD;
    if (tt__memtl_str_has(name, "AccumulateGrad"))
        f |= PH_ACCUMGRAD;
    if (!strncmp(name, "Optimizer.step", 14) || !strncmp(name, "Optimizer.zero_grad", 19))
        f |= PH_OPTIMIZER;
    if (!strncmp(name, "ProfilerStep#", 13))
        f |= PH_STEP;
    return f;
}

int tt__memtl_walk_push(struct memwalk *w, int64_t id, int64_t end, unsigned f, int64_t name)
{
    size_t n;
    while (w->n && w->stack[w->n - 1].end < end)
        w->n--;
    if (TT_ALLOC_GROW(w->stack, w->n + 1, w->alloc) < 0)
        return tt__oom();
    n = w->n++;
    w->stack[n].id = id;
    w->stack[n].end = end;
    w->stack[n].flags = f | (n ? w->stack[n - 1].flags : 0);
    w->stack[n].name = name;
    w->stack[n].step_name = (f & PH_STEP) ? name : n ? w->stack[n - 1].step_name : 0;
    return 0;
}

/* the event's context: the innermost op around it */
void tt__memtl_store_context(struct ctxstore *cs, struct memtl_scan *sc, int64_t id, int64_t ts,
                          const struct memwalk *w)
{
    struct memctx *c;
    if (!sc->have_ts || ts < sc->ts_min)
        sc->ts_min = ts;
    if (!sc->have_ts || ts > sc->ts_max)
        sc->ts_max = ts;
    sc->have_ts = 1;
    if (id < cs->lo || (uint64_t)(id - cs->lo) >= cs->n || !w->n)
        return;
    c = &cs->v[id - cs->lo];
    c->op_id = w->stack[w->n - 1].id;
    c->op_end = w->stack[w->n - 1].end;
    c->flags = w->stack[w->n - 1].flags;
    c->op_name = w->stack[w->n - 1].name;
    c->step_name = w->stack[w->n - 1].step_name;
    c->has = 1;
    if (c->flags & PH_STEP)
        sc->has_steps = 1;
}

void tt__memtl_walk_pop(struct memwalk *w, int64_t ts)
{
    while (w->n && w->stack[w->n - 1].end < ts)
        w->n--;
}

/* ---- live allocations by address (open addressing) ---- */

size_t tt__memtl_hash(int64_t a, size_t cap)
{
    uint64_t x = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17) & (cap - 1);
}

static int live_grow(struct livemap *m)
{
    struct livemap nm;
    size_t i;
    nm.cap = m->cap ? m->cap * 2 : 4096;
    nm.n = 0;
    nm.e = calloc(nm.cap, sizeof(*nm.e));
    if (!nm.e)
        return TT_ENOMEM;
    for (i = 0; i < m->cap; i++) {
        if (m->e[i].used) {
            size_t j = tt__memtl_hash(m->e[i].addr, nm.cap);
            while (nm.e[j].used)
                j = (j + 1) & (nm.cap - 1);
            nm.e[j] = m->e[i];
            nm.n++;
        }
    }
    free(m->e);
    *m = nm;
    return 0;
}

struct live *tt__live_find(struct livemap *m, int64_t addr)
{
    size_t j;
    if (!m->cap)
        return NULL;
    j = tt__memtl_hash(addr, m->cap);
    while (m->e[j].used) {
        if (m->e[j].addr == addr)
            return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

struct live *tt__live_put(struct livemap *m, int64_t addr)
{
    size_t j;
    if ((m->n + 1) * 2 > m->cap && live_grow(m) < 0)
        return NULL;
    j = tt__memtl_hash(addr, m->cap);
    while (m->e[j].used) {
        if (m->e[j].addr == addr)
            return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    memset(&m->e[j], 0, sizeof(m->e[j]));
    m->e[j].used = 1;
    m->e[j].addr = addr;
    m->n++;
    return &m->e[j];
}

void tt__live_del(struct livemap *m, struct live *e)
{
    size_t j = (size_t)(e - m->e), k;
    m->e[j].used = 0;
    m->n--;
    k = (j + 1) & (m->cap - 1);
    while (m->e[k].used) {
        struct live tmp = m->e[k];
        m->e[k].used = 0;
        m->n--;
        {
            size_t h = tt__memtl_hash(tmp.addr, m->cap);
            while (m->e[h].used)
                h = (h + 1) & (m->cap - 1);
            m->e[h] = tmp;
            m->n++;
        }
        k = (k + 1) & (m->cap - 1);
    }
}

/* the heuristics (docs/MEMTIMELINE.md), decided when the block is freed
 * (free_ts) or at the end of the trace (free_ts = -1) */
static int categorize(const struct live *a, int64_t free_ts, unsigned free_flags, int has_steps)
{
    /* torch's precedence: a gradient by identity beats a temporary */
    if (a->etcat == TT_CAT_GRADIENT)
        return a->etcat;
    if (free_ts >= 0 && a->op_id && free_ts <= a->op_end)
        return TT_CAT_TEMPORARY;
    if (a->etcat >= 0)
        return a->etcat;
    if (a->flags & PH_ACCUMGRAD)
        return TT_CAT_GRADIENT;
    if (a->flags & PH_OPTIMIZER)
        return free_ts < 0 || !(free_flags & PH_OPTIMIZER) ? TT_CAT_OPTIMIZER_STATE
                                                          : TT_CAT_TEMPORARY;
    if (a->flags & PH_BACKWARD)
        return free_ts >= 0 && (free_flags & PH_BACKWARD) ? TT_CAT_AUTOGRAD_DETAIL
                                                          : TT_CAT_GRADIENT;
    if ((a->flags & PH_STEP) && a->op_id && free_ts >= 0 && (free_flags & PH_BACKWARD))
        return TT_CAT_ACTIVATION;
    /* outside the steps of a trace that has them, and never freed: without
     * steps there is no "outside", and an op's output kept to the end (an
     * activation of a loop without ProfilerStep) is not a parameter */
    if (has_steps && !(a->flags & PH_STEP) && free_ts < 0)
        return TT_CAT_PARAMETER;
    return TT_CAT_UNKNOWN;
}

/* pass 2: category of every allocation -> sp->cat, sp->rule */
#define RULE_OF(a, cat) ((a)->etcat >= 0 && (a)->etcat == (cat) ? (a)->rule : 0)

static void store_cat(struct evspill *sp, const struct live *a, int cat)
{
    sp->cat[a->idx] = (unsigned char)cat;
    sp->rule[a->idx] = (unsigned char)RULE_OF(a, cat);
}

static int add_pre(struct memtl_scan *sc, int64_t addr, int64_t bytes)
{
    if (TT_ALLOC_GROW(sc->pre, sc->npre + 1, sc->apre) < 0)
        return tt__oom();
    sc->pre[sc->npre].addr = addr;
    sc->pre[sc->npre].bytes = bytes;
    sc->npre++;
    return 0;
}

/* Also notes in sc the blocks freed before any allocation of their address
 * (PREEXISTING, in time order) and the first event at the highest
 * total_allocated: the emission pass reads the same records in the same
 * order. */
int tt__memtl_category_pass(struct evspill *sp, int nocat, struct memtl_scan *sc)
{
    struct livemap m = { NULL, 0, 0 };
    struct addr_synth syn;
    struct memev ev;
    int64_t peak_alloc = 0, live_sum = 0, last_alloc = 0;
    int have_alloc = 0;
    size_t i, idx;
    int rc = 0, r;
    memset(&syn, 0, sizeof(syn));
    if ((rc = tt__evspill_rewind(sp)) < 0)
        return rc;
    for (idx = 0; (r = tt__evspill_next(sp, &ev)) == 1; idx++) {
        int64_t addr, bytes = ev.bytes;
        struct live *a;
        if ((rc = tt__memtl_addr(&syn, ev.has & EV_ADDR, ev.addr, bytes, &addr)) < 0)
            goto out;
        a = tt__live_find(&m, addr);
        if (bytes > 0)
            live_sum += bytes - (a ? a->bytes : 0);
        else if (bytes < 0 && a)
            live_sum -= a->bytes;
        if (ev.has & EV_TA) {
            /* the allocator's total less what the timeline holds */
            last_alloc = ev.ta - live_sum;
            have_alloc = 1;
            if (ev.ta > peak_alloc) {
                peak_alloc = ev.ta;
                sc->peak_mem_id = ev.id;
                sc->peak_op = ev.op_name;
                sc->peak_step = ev.step_name;
            }
        }
        if (bytes > 0) {
            /* reallocated without a free we saw: close the old one */
            if (a)
                store_cat(sp, a, nocat ? TT_CAT_UNKNOWN : categorize(a, -1, 0, sc->has_steps));
            if (!(a = tt__live_put(&m, addr))) {
                rc = tt__oom();
                goto out;
            }
            a->bytes = bytes;
            a->mem_id = ev.id;
            a->idx = idx;
            a->ts = ev.ts;
            a->op_id = ev.op_id;
            a->op_end = ev.op_end;
            a->flags = ev.flags;
            a->etcat = ev.etcat;
            a->rule = ev.rule;
        } else if (bytes < 0 && a) {
            store_cat(sp, a, nocat ? TT_CAT_UNKNOWN : categorize(a, ev.ts, ev.flags, sc->has_steps));
            tt__live_del(&m, a);
        } else if (bytes < 0 && (rc = add_pre(sc, addr, -bytes)) < 0) {
            goto out;
        }
    }
    if (r < 0) {
        rc = r;
        goto out;
    }
    /* at the last event the PREEXISTING blocks are all freed: what the
     * allocator holds beyond the live blocks was there before the trace */
    sc->have_before = have_alloc && last_alloc > 0;
    sc->before = sc->have_before ? last_alloc : 0;
    for (i = 0; i < m.cap; i++)
        if (m.e[i].used)
            store_cat(sp, &m.e[i], nocat ? TT_CAT_UNKNOWN : categorize(&m.e[i], -1, 0, sc->has_steps));
out:
    tt__memtl_addr_free(&syn);
    free(m.e);
    return rc;
}

/* ---- the records of the later passes (a temporary file) ---- */

int tt__memtl_spill_event(struct memev *ev, const struct ctxstore *cs, const struct i64map *et,
                          struct evspill *sp)
{
    const struct memctx *c = tt__memtl_ctx(cs, ev->id);
    size_t v;
    ev->op_id = c->op_id;
    ev->op_end = c->op_end;
    ev->op_name = c->op_name;
    ev->step_name = c->step_name;
    ev->flags = c->flags;
    ev->etcat = -1;
    if (et->n && tt__i64map_get(et, ev->id, &v)) {
        ev->etcat = (int)(v & 0xff);
        ev->rule = (int)(v >> 8);
    }
    if (fwrite(ev, sizeof(*ev), 1, sp->f) != 1)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    sp->n++;
    return 0;
}

int tt__memtl_spill_done(struct evspill *sp)
{
    if (!(sp->cat = malloc(sp->n + 1)) || !(sp->rule = calloc(sp->n + 1, 1)))
        return tt__oom();
    memset(sp->cat, TT_CAT_UNKNOWN, sp->n + 1);
    return 0;
}

int tt__evspill_rewind(struct evspill *sp)
{
    if (fflush(sp->f) != 0 || fseek(sp->f, 0, SEEK_SET) != 0)
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    return 0;
}

int tt__evspill_next(struct evspill *sp, struct memev *ev)
{
    if (fread(ev, sizeof(*ev), 1, sp->f) == 1)
        return 1;
    if (ferror(sp->f))
        return tt_error_set(TT_EIO, "cannot read a temporary file: %s", strerror(errno));
    return 0;
}

void tt__evspill_free(struct evspill *sp)
{
    if (sp->f)
        fclose(sp->f);
    free(sp->cat);
    free(sp->rule);
    memset(sp, 0, sizeof(*sp));
}

/* ---- made-up addresses for events without one (memtimeline_state.h) ---- */

int tt__memtl_addr(struct addr_synth *s, int has, int64_t own, int64_t bytes, int64_t *addr)
{
    size_t k;
    struct synth_stack *sk;
    if (has) {
        *addr = own;
        return 0;
    }
    if (s->next == 0)
        s->next = -1;
    if (!tt__i64map_get(&s->by_size, bytes < 0 ? -bytes : bytes, &k)) {
        if (bytes < 0) { /* nothing of that size live: a block from before */
            *addr = s->next--;
            return 0;
        }
        if (TT_ALLOC_GROW(s->stk, s->nstk + 1, s->astk) < 0 ||
            tt__i64map_put(&s->by_size, bytes, s->nstk) < 0)
            return tt__oom();
        k = s->nstk++;
        memset(&s->stk[k], 0, sizeof(s->stk[k]));
    }
    sk = &s->stk[k];
    if (bytes < 0) {
        *addr = sk->n ? sk->a[--sk->n] : s->next--;
        return 0;
    }
    if (TT_ALLOC_GROW(sk->a, sk->n + 1, sk->cap) < 0)
        return tt__oom();
    *addr = sk->a[sk->n++] = s->next--;
    return 0;
}

void tt__memtl_addr_free(struct addr_synth *s)
{
    size_t k;
    for (k = 0; k < s->nstk; k++)
        free(s->stk[k].a);
    free(s->stk);
    tt__i64map_free(&s->by_size);
    memset(s, 0, sizeof(*s));
}
