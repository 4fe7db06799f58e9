/*
 * analyze/averages/averages_stacks.c - Python stacks for `averages --group-by-stack`
 * and `--stacks` (docs/TORCH.md 3.6):
 *   - frames: the stack entries' texts, interned, each with the verdict of
 *     torch's _filter_stack_entry;
 *   - stack nodes: a stack is a node of a tree whose root is the empty stack
 *     and whose edges add one frame (outermost first), so a stack is one id
 *     and the stacks many ops share are stored once;
 *   - an op's stack: its "Call stack" arg when it has one (TorchScript, or
 *     newer torch with verbose=True), else the python_function events open on
 *     its thread when it starts: the Python ancestors that torch's
 *     KinetoEvent walks in its result tree. Under a backward function it is
 *     the stack of the first forward op with the same sequence number
 *     (_set_backward_stacktraces);
 *   - the group-by key: the first N frames, innermost first, '\n'-joined;
 *   - the collapsed stacks: self times summed per (stack, op name).
 */
#include "analyze/averages/averages_state.h"
#include "report/out.h"
#include "common/buf.h"
#include "common/tmath.h"

#include <string.h>

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xCBF29CE484222325ULL;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001B3ULL;
    }
    return h;
}

static uint64_t mix2(int64_t a, int64_t b)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)b * 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 29);
}

/* open addressing of index + 1, kept under half full (rebuilt when not) */
typedef uint64_t (*hash_at_fn)(const void *ctx, size_t i);

static int slots_fit(size_t **slots, size_t *nslots, size_t n, const void *ctx, hash_at_fn h)
{
    size_t ns, i, j;
    size_t *nsl;
    if ((n + 1) * 2 <= *nslots)
        return 0;
    ns = *nslots ? *nslots * 2 : 256;
    if (!(nsl = calloc(ns, sizeof(*nsl))))
        return TT_ENOMEM;
    for (i = 0; i < n; i++) {
        for (j = h(ctx, i) & (ns - 1); nsl[j]; j = (j + 1) & (ns - 1))
            ;
        nsl[j] = i + 1;
    }
    free(*slots);
    *slots = nsl;
    *nslots = ns;
    return 0;
}

/* ---- frames ---- */

/* torch's _filter_stack_entry */
static int keep_stack_entry(const char *e, size_t len)
{
    static const char *const drop[][2] = {
        { "autograd/__init__", "_make_grads" }, { "autograd/__init__", "backward" },
        { "torch/tensor", "backward" }, { "_internal/common_utils", "prof_callable" },
        { "_internal/common_utils", "prof_func_call" },
        { "_internal/common_utils", "prof_meth_call" },
    };
    size_t i;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) - 1 ? len : sizeof(buf) - 1), e);
    for (i = 0; i < TT_ARRAY_SIZE(drop); i++) {
        if (strstr(buf, drop[i][0]) && strstr(buf, drop[i][1]))
            return 0;
    }
    return 1;
}

static uint64_t frame_hash_at(const void *ctx, size_t i)
{
    const struct sframe *f = &((const struct stacks *)ctx)->fr[i];
    return hash_bytes(f->text, f->len);
}

/* index of the frame text p[0..len), added when new; -1 out of memory */
static int64_t frame_of(struct stacks *k, const char *p, size_t len)
{
    size_t j;
    struct sframe *f;
    if (slots_fit(&k->fslots, &k->nfslots, k->nf, k, frame_hash_at) < 0)
        return -1;
    for (j = hash_bytes(p, len) & (k->nfslots - 1); k->fslots[j];
         j = (j + 1) & (k->nfslots - 1)) {
        f = &k->fr[k->fslots[j] - 1];
        if (f->len == len && !memcmp(f->text, p, len))
            return (int64_t)k->fslots[j] - 1;
    }
    if (TT_ALLOC_GROW(k->fr, k->nf + 1, k->af) < 0)
        return -1;
    f = &k->fr[k->nf];
    if (!(f->text = strndup(p, len)))
        return -1;
    f->len = len;
    f->keep = keep_stack_entry(p, len);
    k->fslots[j] = ++k->nf;
    return (int64_t)k->nf - 1;
}

/* ---- stack nodes ---- */

static uint64_t node_hash_at(const void *ctx, size_t i)
{
    const struct snode *n = &((const struct stacks *)ctx)->nodes[i];
    return mix2(n->parent, n->frame);
}

/* the node of stack `parent` plus frame f, added when new; -1 out of memory */
static int64_t node_child(struct stacks *k, int64_t parent, int64_t f)
{
    size_t j;
    struct snode *n;
    if (slots_fit(&k->nslots, &k->nnslots, k->nn, k, node_hash_at) < 0)
        return -1;
    for (j = mix2(parent, f) & (k->nnslots - 1); k->nslots[j]; j = (j + 1) & (k->nnslots - 1)) {
        n = &k->nodes[k->nslots[j] - 1];
        if (n->parent == parent && n->frame == f)
            return (int64_t)k->nslots[j];
    }
    if (TT_ALLOC_GROW(k->nodes, k->nn + 1, k->an) < 0)
        return -1;
    n = &k->nodes[k->nn];
    n->parent = parent;
    n->frame = f;
    n->key = 0;
    k->nslots[j] = ++k->nn;
    return (int64_t)k->nn;
}

int64_t tt__avg_callstack_node(struct state *s, const char *cs)
{
    struct stacks *k = &s->stk;
    const char *end = cs + strlen(cs), *p;
    int64_t node = 0;
    if (!*cs)
        return 0;
    k->source |= TT_AVG_STACKS_CALL_STACK;
    /* innermost first: walk the entries from the last (the outermost) */
    while (end > cs) {
        int64_t f;
        for (p = end; p > cs && p[-1] != ';'; p--)
            ;
        if (end > p) {
            if ((f = frame_of(k, p, (size_t)(end - p))) < 0)
                return -1;
            if (k->fr[f].keep && (node = node_child(k, node, f)) < 0)
                return -1;
        }
        end = p > cs ? p - 1 : cs;
    }
    return node;
}

/* ---- per thread: the open python_function events ---- */

/*
 * Close the frames an event at [ts, end] is not inside: those ended before
 * it starts and, with by_end, those that end before it does. A CPU op runs
 * inside the Python call that made it, so by_end settles which of two calls
 * ending and starting in the same microsecond of an integer-us trace held
 * it. A user annotation (record_function, ProfilerStep#N) starts inside the
 * call that opened it and outlives it: torch's tree puts it under that call
 * (its parent is the innermost event open at its start), so only the first
 * rule applies.
 */
static void py_close(struct thread_stack *t, int64_t ts, int64_t end, int by_end)
{
    while (t->npy) {
        int64_t e = t->py[t->npy - 1].end;
        if (e < ts || (by_end && e < end))
            t->npy--;
        else
            break;
    }
}

int tt__avg_py_frame(struct state *s, struct thread_stack *t, int64_t ts, int64_t end,
                     int64_t name)
{
    struct stacks *k = &s->stk;
    int64_t f, node;
    size_t v;
    k->source |= TT_AVG_STACKS_PYTHON;
    py_close(t, ts, end, 1);
    /* torch nests nothing under an event without duration */
    if (end <= ts)
        return 0;
    if (tt__i64map_get(&k->fname, name, &v)) {
        f = (int64_t)v;
    } else {
        char *txt = tt__avg_lookup(s, name);
        if (!txt)
            return tt__oom();
        f = frame_of(k, txt, strlen(txt));
        free(txt);
        if (f < 0 || tt__i64map_put(&k->fname, name, (size_t)f) < 0)
            return tt__oom();
    }
    node = t->npy ? t->py[t->npy - 1].node : 0;
    if (k->fr[f].keep && (node = node_child(k, node, f)) < 0)
        return tt__oom();
    if (TT_ALLOC_GROW_FROM(t->py, t->npy + 1, t->apy, 8) < 0)
        return tt__oom();
    t->py[t->npy].end = end;
    t->py[t->npy].node = node;
    t->npy++;
    return 0;
}

/* ---- the group-by key ---- */

static uint64_t key_hash_at(const void *ctx, size_t i)
{
    const char *str = ((const struct state *)ctx)->stacks[i];
    return hash_bytes(str, strlen(str));
}

/* the id (s->stacks index + 1) of the first N frames of node, innermost first */
static int64_t key_of(struct state *s, int64_t node)
{
    struct stacks *k = &s->stk;
    tt_buf b = TT_BUF_INIT;
    int64_t n, taken = 0;
    size_t j;
    if (!node)
        return 0;
    if (k->nodes[node - 1].key)
        return k->nodes[node - 1].key;
    for (n = node; n && taken < s->o->group_by_stack; n = k->nodes[n - 1].parent, taken++) {
        const struct sframe *f = &k->fr[k->nodes[n - 1].frame];
        if (b.len)
            tt_buf_addch(&b, '\n');
        tt_buf_add(&b, f->text, f->len);
    }
    if (b.oom || slots_fit(&s->sslots, &s->nsslots, s->nstacks, s, key_hash_at) < 0) {
        tt_buf_release(&b);
        return -1;
    }
    for (j = hash_bytes(b.buf, b.len) & (s->nsslots - 1); s->sslots[j];
         j = (j + 1) & (s->nsslots - 1)) {
        if (!strcmp(s->stacks[s->sslots[j] - 1], b.buf)) {
            tt_buf_release(&b);
            return k->nodes[node - 1].key = (int64_t)s->sslots[j];
        }
    }
    if (TT_ALLOC_GROW(s->stacks, s->nstacks + 1, s->astacks) < 0) {
        tt_buf_release(&b);
        return -1;
    }
    s->stacks[s->nstacks++] = b.buf;
    s->sslots[j] = s->nstacks;
    return k->nodes[node - 1].key = (int64_t)s->nstacks;
}

/* ---- an event's stacks ---- */

/* key -> value unless the key is there (the first forward op wins) */
static int put_first(struct i64map *m, int64_t key, int64_t val)
{
    size_t v;
    return tt__i64map_get(m, key, &v) ? 0 : tt__i64map_put(m, key, (size_t)val);
}

/*
 * The Python ancestors of an event without a "Call stack": the
 * python_function events open on its thread, else (a thread outside Python:
 * the autograd engine's device threads) its parent op's, else for an op the
 * engine runs for a forward op ("Fwd thread id" > 0, torch's build_tree
 * falls back to the forward thread's open events) the calls open on the
 * thread of the forward op with its sequence number.
 */
static int64_t python_ancestors(struct state *s, struct thread_stack *t, const struct ev *e)
{
    size_t v;
    py_close(t, e->start, e->end, !e->is_user_annotation);
    if (t->npy)
        return t->py[t->npy - 1].node;
    if (!s->stk.has_py) /* "Call stack" args only: an event without one has none */
        return 0;
    if (e->parent)
        return e->parent->own;
    if (e->fwd_tid && e->seq >= 0 && tt__i64map_get(&s->stk.fwd_thread, e->seq, &v) &&
        v < s->nthreads) {
        struct thread_stack *f = &s->threads[v];
        py_close(f, e->start, e->start, 0);
        return f->npy ? f->py[f->npy - 1].node : 0;
    }
    return 0;
}

int tt__avg_stack_assign(struct state *s, struct thread_stack *t, struct ev *e)
{
    struct stacks *k = &s->stk;
    struct ev *p = e->parent;
    size_t v;
    if (!e->own)
        e->own = python_ancestors(s, t, e);
    e->under_bw = e->bw_node || (p && p->under_bw);
    if (e->bw_node) {
        /* the forward op's stack: of this thread (the CPU autograd engine
         * runs on the thread that called backward), else of any thread */
        e->full = 0;
        if (e->seq >= 0 &&
            (tt__i64map_get(&t->fwd, e->seq, &v) || tt__i64map_get(&k->fwd_any, e->seq, &v)))
            e->full = (int64_t)v;
    } else if (e->under_bw) {
        e->full = p->full;
    } else {
        /* a forward op: the first of its sequence number gives its stack to
         * the backward nodes (not the engine's ops, which carry the number
         * too: torch keys them by the engine's thread, or finds the forward
         * op first) */
        e->full = e->own;
        if (e->seq >= 0 && !e->fwd_tid && (put_first(&t->fwd, e->seq, e->own) < 0 ||
                            put_first(&k->fwd_any, e->seq, e->own) < 0 ||
                            put_first(&k->fwd_thread, e->seq, t - s->threads) < 0))
            return tt__oom();
    }
    e->stack = s->o->group_by_stack > 0 ? key_of(s, e->full) : 0;
    return e->stack < 0 ? tt__oom() : 0;
}

/* ---- the collapsed stacks ---- */

static uint64_t cs_hash_at(const void *ctx, size_t i)
{
    const struct cstack *c = &((const struct stacks *)ctx)->cs[i];
    return mix2(c->node, c->name);
}

int tt__avg_stack_add(struct state *s, int64_t full, int64_t name, int64_t self_cpu_ns,
                      int64_t self_dev_ns)
{
    struct stacks *k = &s->stk;
    struct cstack *c;
    size_t j;
    if (!full || s->o->version < 3 || !s->o->collect_stacks)
        return 0;
    if (slots_fit(&k->cslots, &k->ncslots, k->ncs, k, cs_hash_at) < 0)
        return tt__oom();
    for (j = mix2(full, name) & (k->ncslots - 1); k->cslots[j]; j = (j + 1) & (k->ncslots - 1)) {
        c = &k->cs[k->cslots[j] - 1];
        if (c->node == full && c->name == name)
            break;
    }
    if (!k->cslots[j]) {
        if (TT_ALLOC_GROW(k->cs, k->ncs + 1, k->acs) < 0)
            return tt__oom();
        c = &k->cs[k->ncs];
        memset(c, 0, sizeof(*c));
        c->node = full;
        c->name = name;
        k->cslots[j] = ++k->ncs;
    }
    c = &k->cs[k->cslots[j] - 1];
    c->count++;
    c->self_cpu_ns = tt_sat_add(c->self_cpu_ns, self_cpu_ns);
    c->self_dev_ns = tt_sat_add(c->self_dev_ns, self_dev_ns);
    return 0;
}

/* the frames of node, root first, '\n'-joined (malloc'd) */
static char *frames_text(const struct stacks *k, int64_t node)
{
    tt_buf b = TT_BUF_INIT;
    int64_t n, *path = NULL;
    size_t depth = 0, alloc = 0, i;
    for (n = node; n; n = k->nodes[n - 1].parent) {
        if (TT_ALLOC_GROW(path, depth + 1, alloc) < 0) {
            free(path);
            return NULL;
        }
        path[depth++] = k->nodes[n - 1].frame;
    }
    for (i = depth; i-- > 0;) {
        if (b.len)
            tt_buf_addch(&b, '\n');
        tt_buf_add(&b, k->fr[path[i]].text, k->fr[path[i]].len);
    }
    free(path);
    if (b.oom) {
        tt_buf_release(&b);
        return NULL;
    }
    return b.len ? b.buf : strdup("");
}

static int cmp_stack(const void *pa, const void *pb)
{
    const tt_avg_stack *a = pa, *b = pb;
    int c = strcmp(a->frames, b->frames);
    return c ? c : strcmp(a->name, b->name);
}

int tt__avg_stacks_result(struct state *s, tt_avg_trace *t)
{
    struct stacks *k = &s->stk;
    size_t i;
    t->stack_source = k->source;
    if (!k->ncs)
        return 0;
    if (!(t->stacks = calloc(k->ncs, sizeof(*t->stacks))))
        return TT_ENOMEM;
    for (i = 0; i < k->ncs; i++) {
        tt_avg_stack *o = &t->stacks[t->nstacks];
        o->frames = frames_text(k, k->cs[i].node);
        o->name = tt__avg_lookup(s, k->cs[i].name);
        t->nstacks++;
        if (!o->frames || !o->name)
            return TT_ENOMEM;
        o->count = k->cs[i].count;
        o->self_cpu_ns = k->cs[i].self_cpu_ns;
        o->self_device_ns = k->cs[i].self_dev_ns;
    }
    TT_QSORT(t->stacks, t->nstacks, sizeof(*t->stacks), cmp_stack);
    return 0;
}

void tt__avg_stacks_release(struct stacks *k)
{
    size_t i;
    for (i = 0; i < k->nf; i++)
        free(k->fr[i].text);
    free(k->fr);
    free(k->fslots);
    tt__i64map_free(&k->fname);
    free(k->nodes);
    free(k->nslots);
    tt__i64map_free(&k->fwd_any);
    tt__i64map_free(&k->fwd_thread);
    free(k->cs);
    free(k->cslots);
    memset(k, 0, sizeof(*k));
}

/* ---- the collapsed-stack file ---- */

/* torch's export_stacks: ' ', ';', tab and newline become '_' */
static void add_frame(tt_buf *b, const char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        tt_buf_addch(b, p[i] == ' ' || p[i] == ';' || p[i] == '\t' || p[i] == '\n' ? '_' : p[i]);
}

static void add_line(tt_buf *b, const char *prefix, const tt_avg_stack *st, int64_t us)
{
    const char *p = st->frames, *nl;
    if (prefix) {
        add_frame(b, prefix, strlen(prefix));
        tt_buf_addch(b, ';');
    }
    for (; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        add_frame(b, p, nl ? (size_t)(nl - p) : strlen(p));
        tt_buf_addch(b, ';');
        if (!nl)
            break;
    }
    add_frame(b, st->name, strlen(st->name));
    tt_buf_addf(b, " %lld\n", (long long)us);
}

int tt_averages_write_stacks(const tt_avg_result *res, int metric, const char *path)
{
    tt_buf b = TT_BUF_INIT;
    size_t i, k;
    int rc;
    if (!res || !path)
        return tt_error_set(TT_EINVALID, "no result or no path for the stacks");
    for (k = 0; k < res->ntraces; k++) {
        const tt_avg_trace *t = &res->traces[k];
        char prefix[48];
        if (t->have_rank)
            snprintf(prefix, sizeof(prefix), "rank %lld", (long long)t->rank);
        else
            snprintf(prefix, sizeof(prefix), "trace %lld", (long long)t->trace_id);
        for (i = 0; i < t->nstacks; i++) {
            const tt_avg_stack *st = &t->stacks[i];
            int64_t v = metric == TT_AVG_STACKS_SELF_DEVICE ? st->self_device_ns
                                                            : st->self_cpu_ns;
            int64_t us = v > 0 ? v / 1000 + (v % 1000 >= 500) : 0;
            if (us > 0)
                add_line(&b, res->ntraces > 1 ? prefix : NULL, st, us);
        }
    }
    if (b.oom) {
        tt_buf_release(&b);
        return tt__oom();
    }
    rc = tt__write_file_atomic(path, b.buf, b.len);
    tt_buf_release(&b);
    return rc;
}
