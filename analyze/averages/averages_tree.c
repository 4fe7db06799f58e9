/*
 * analyze/averages/averages_tree.c - the averages pass (docs/TORCH.md 3):
 * every event of a trace in torch's order, all threads merged by start time
 * (the records of averages_sort.c):
 *   - CPU events (cpu_op, user_annotation, legacy Operator / uncategorised,
 *     runtime calls) are nested per thread with torch's stack rule; a frame
 *     is finalised when it is popped, after its children;
 *   - the same-name single-child collapse (_remove_dup_nodes) happens at pop
 *     time: a frame keeps its first child back until it knows whether it is
 *     the only one;
 *   - [memory] records are summed into every CPU event whose [start, end]
 *     holds them (any thread) through running totals captured at start and,
 *     via a heap of open events ordered by end, at end; records inside no
 *     event become "[memory]" rows;
 *   - device time comes from the kernels/memcpys/memsets linked to the op;
 *     GPU activities are rows of their own.
 * Rows are aggregated by key in first-occurrence order. Every lookup (key,
 * thread, name class, stack, step window) is a hash or a binary search: the
 * pass is O(n log n) in the events whatever their shape.
 */
#include "analyze/averages/averages_state.h"
#include "common/buf.h"
#include "common/tmath.h"

#include <string.h>

/* ---- the aggregate: rows by key ---- */

static uint64_t key_hash(int64_t name, int64_t shapes, int64_t stack, int device)
{
    uint64_t h = (uint64_t)name * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)shapes * 0xC2B2AE3D27D4EB4FULL + (uint64_t)device;
    h ^= (uint64_t)stack * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    return h;
}

static int agg_grow(struct agg *a)
{
    size_t ns = a->nslots ? a->nslots * 2 : 1024, i;
    size_t *slots = calloc(ns, sizeof(*slots));
    if (!slots)
        return TT_ENOMEM;
    for (i = 0; i < a->n; i++) {
        struct row *r = &a->rows[i];
        size_t j = key_hash(r->name, r->shapes, r->stack, r->device) & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = i + 1;
    }
    free(a->slots);
    a->slots = slots;
    a->nslots = ns;
    return 0;
}

/* Row for a key, created (in first-occurrence order) when new. */
static struct row *agg_get(struct agg *a, int64_t name, int64_t shapes, int64_t stack,
                           int device)
{
    size_t j;
    struct row *r;
    if ((a->n + 1) * 2 > a->nslots && agg_grow(a) < 0)
        return NULL;
    j = key_hash(name, shapes, stack, device) & (a->nslots - 1);
    while (a->slots[j]) {
        r = &a->rows[a->slots[j] - 1];
        if (r->name == name && r->shapes == shapes && r->stack == stack && r->device == device)
            return r;
        j = (j + 1) & (a->nslots - 1);
    }
    if (TT_ALLOC_GROW(a->rows, a->n + 1, a->alloc) < 0)
        return NULL;
    r = &a->rows[a->n];
    memset(r, 0, sizeof(*r));
    r->name = name;
    r->shapes = shapes;
    r->stack = stack;
    r->device = device;
    r->order = a->n;
    a->slots[j] = ++a->n;
    return r;
}

static void agg_release(struct agg *a)
{
    free(a->rows);
    free(a->slots);
    memset(a, 0, sizeof(*a));
}

/* heap helpers (min-heap on end) */
static void heap_swap(struct state *s, size_t i, size_t j)
{
    struct ev *t = s->heap[i];
    s->heap[i] = s->heap[j];
    s->heap[j] = t;
    s->heap[i]->heap_pos = i;
    s->heap[j]->heap_pos = j;
}

static int heap_less(const struct ev *a, const struct ev *b)
{
    /* equal ends: the later push (a child) first, so children finish before parents */
    return a->end < b->end || (a->end == b->end && a->serial > b->serial);
}

static void heap_up(struct state *s, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(s->heap[i], s->heap[p]))
            break;
        heap_swap(s, i, p);
        i = p;
    }
}

static void heap_down(struct state *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && heap_less(s->heap[l], s->heap[m]))
            m = l;
        if (r < s->nheap && heap_less(s->heap[r], s->heap[m]))
            m = r;
        if (m == i)
            break;
        heap_swap(s, i, m);
        i = m;
    }
}

static int heap_push(struct state *s, struct ev *e)
{
    if (TT_ALLOC_GROW(s->heap, s->nheap + 1, s->aheap) < 0)
        return TT_ENOMEM;
    s->heap[s->nheap] = e;
    e->heap_pos = s->nheap++;
    heap_up(s, e->heap_pos);
    return 0;
}

static void heap_remove_top(struct state *s)
{
    struct ev *top = s->heap[0];
    top->heap_pos = SIZE_MAX;
    s->nheap--;
    if (s->nheap) {
        s->heap[0] = s->heap[s->nheap];
        s->heap[0]->heap_pos = 0;
        heap_down(s, 0);
    }
}

/* Record the running memory totals at the end of every open event that ends
 * before time t (records at exactly its end are already counted). */
static int finish(struct state *s, struct ev *e, struct ev *p);

static int pass_ends(struct state *s, int64_t t)
{
    int rc;
    while (s->nheap && s->heap[0]->end < t) {
        struct ev *e = s->heap[0];
        e->mem_end[0] = s->mem_total[0];
        e->mem_end[1] = s->mem_total[1];
        e->have_end_mem = 1;
        heap_remove_top(s);
        if (e->closed && (rc = finish(s, e, e->parent)) < 0)
            return rc;
    }
    return 0;
}

static struct ev *ev_new(struct state *s)
{
    struct ev *e = s->free_list;
    if (e)
        s->free_list = *(struct ev **)e;
    else if (!(e = malloc(sizeof(*e))))
        return NULL;
    memset(e, 0, sizeof(*e));
    e->heap_pos = SIZE_MAX;
    return e;
}

static void ev_free(struct state *s, struct ev *e)
{
    *(struct ev **)e = s->free_list;
    s->free_list = e;
}

/* ---- adding finished events to the aggregate ---- */

static int add_row(struct state *s, int64_t name, int64_t shapes, int64_t stack, int device,
                   int has_parent, int is_ua, double cpu_total, double self_cpu,
                   double dev_total, double self_dev, const int64_t mem[2],
                   const int64_t self_mem[2])
{
    struct row *r = agg_get(&s->agg, name, s->o->group_by_shape ? shapes : 0, stack, device);
    if (!r)
        return tt__oom();
    if (r->count == 0)
        r->is_user_annotation = is_ua;
    if (!r->seen) {
        r->seen = 1;
        r->has_parent = has_parent;
    }
    r->count++;
    r->cpu_total += cpu_total;
    r->self_cpu += self_cpu;
    r->dev_total += dev_total;
    r->self_dev += self_dev;
    r->cpu_mem = tt_sat_add(r->cpu_mem, mem[0]);
    r->dev_mem = tt_sat_add(r->dev_mem, mem[1]);
    r->self_cpu_mem = tt_sat_add(r->self_cpu_mem, self_mem[0]);
    r->self_dev_mem = tt_sat_add(r->self_dev_mem, self_mem[1]);
    return 0;
}

static int emit_first(struct state *s, const struct ev_first *f)
{
    int64_t self_mem[2] = { tt_sat_sub(f->mem[0], f->child_mem[0]),
                            tt_sat_sub(f->mem[1], f->child_mem[1]) };
    double cpu = (double)(f->end - f->start) / 1e3;
    int rc;
    if (f->out == EV_OUT_NAME) /* not a row of --name's: the footer's total only */
        s->hidden_self_cpu += cpu - (double)f->child_cpu_ns / 1e3;
    if (f->out)
        return 0;
    if (f->full && (rc = tt__avg_stack_add(s, f->full, f->name,
                                           tt_sat_sub(f->end - f->start, f->child_cpu_ns),
                                           f->kernels_ns)) < 0)
        return rc;
    return add_row(s, f->name, f->shapes, f->stack, DEV_CPU, f->has_parent, f->is_user_annotation, cpu,
                   cpu - (double)f->child_cpu_ns / 1e3, (double)f->dev_total_ns / 1e3,
                   (double)f->kernels_ns / 1e3, f->mem, self_mem);
}

/*
 * Finish frame e (its children are done) and hand it to its parent p (NULL
 * at top level). Frees e.
 */
static int finish(struct state *s, struct ev *e, struct ev *p)
{
    struct ev_first me;
    int rc;
    /* same-name single child: the child disappears, its children and
     * kernels become ours (torch's _remove_dup_nodes) */
    if (e->nchildren == 1 && e->have_first && e->first.name == e->name) {
        e->nchildren = e->first.nchildren;
        e->child_cpu_ns = e->first.child_cpu_ns;
        e->child_dev_ns = e->first.child_dev_ns;
        e->child_mem[0] = e->first.child_mem[0];
        e->child_mem[1] = e->first.child_mem[1];
        e->kernels_ns = e->first.kernels_ns;
        e->have_first = 0;
    } else if (e->have_first) {
        if ((rc = emit_first(s, &e->first)) < 0)
            return rc;
        e->have_first = 0;
    }
    me.name = e->name;
    me.shapes = e->shapes;
    me.stack = e->stack;
    me.full = e->full;
    me.start = e->start;
    me.end = e->end;
    me.kernels_ns = e->kernels_ns;
    me.child_cpu_ns = e->child_cpu_ns;
    me.child_dev_ns = e->child_dev_ns;
    me.child_mem[0] = e->child_mem[0];
    me.child_mem[1] = e->child_mem[1];
    me.mem[0] = tt_sat_sub(e->mem_end[0], e->mem_start[0]);
    me.mem[1] = tt_sat_sub(e->mem_end[1], e->mem_start[1]);
    me.dev_total_ns = e->kernels_ns + e->child_dev_ns;
    me.nchildren = e->nchildren;
    me.has_parent = p != NULL;
    me.is_user_annotation = e->is_user_annotation;
    me.out = e->out;
    ev_free(s, e);
    if (!p)
        return emit_first(s, &me);
    p->nchildren++;
    p->child_cpu_ns = tt_sat_add(p->child_cpu_ns, me.end - me.start);
    p->child_dev_ns = tt_sat_add(p->child_dev_ns, me.dev_total_ns);
    p->child_mem[0] = tt_sat_add(p->child_mem[0], me.mem[0]);
    p->child_mem[1] = tt_sat_add(p->child_mem[1], me.mem[1]);
    if (p->nchildren == 1) {
        p->first = me;
        p->have_first = 1;
        return 0;
    }
    if (p->have_first) {
        if ((rc = emit_first(s, &p->first)) < 0)
            return rc;
        p->have_first = 0;
    }
    return emit_first(s, &me);
}

/* ---- threads: (pid, tid) -> stack, hashed ---- */

static uint64_t hash_bytes(const char *p, size_t n, uint64_t h)
{
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001B3ULL;
    }
    return h;
}

static uint64_t tkey_hash(const struct tkey *k, uint64_t h)
{
    h = (h ^ (uint64_t)(k->is_null * 2 + k->is_str)) * 0x9E3779B97F4A7C15ULL;
    if (k->is_str)
        return hash_bytes(k->str, k->len, h);
    h ^= (uint64_t)k->i;
    h *= 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 31);
}

static int value_matches(int is_null, int is_str, int64_t i, const char *str,
                         const struct tkey *k)
{
    if (k->is_null)
        return is_null;
    if (!k->is_str)
        return !is_null && !is_str && k->i == i;
    return !is_null && is_str && strlen(str) == k->len && !memcmp(str, k->str, k->len);
}

/* index + 1 slots: grow to keep the load under a half */
static int slots_grow(size_t **slots, size_t *nslots, size_t n, const void *base, size_t elem,
                      uint64_t (*hash_of)(const void *))
{
    size_t ns = *nslots ? *nslots * 2 : 256, i;
    size_t *nsl;
    if ((n + 1) * 2 <= *nslots)
        return 0;
    if (!(nsl = calloc(ns, sizeof(*nsl))))
        return TT_ENOMEM;
    for (i = 0; i < n; i++) {
        size_t j = hash_of((const char *)base + i * elem) & (ns - 1);
        while (nsl[j])
            j = (j + 1) & (ns - 1);
        nsl[j] = i + 1;
    }
    free(*slots);
    *slots = nsl;
    *nslots = ns;
    return 0;
}

static uint64_t thread_hash(const void *t)
{
    return ((const struct thread_stack *)t)->hash;
}

struct thread_stack *tt__avg_thread_for(struct state *s, const struct tkey *pid,
                                        const struct tkey *tid)
{
    uint64_t h = tkey_hash(tid, tkey_hash(pid, 0));
    size_t j;
    struct thread_stack *t;
    if (slots_grow(&s->tslots, &s->ntslots, s->nthreads, s->threads, sizeof(*s->threads),
                   thread_hash) < 0)
        return NULL;
    for (j = h & (s->ntslots - 1); s->tslots[j]; j = (j + 1) & (s->ntslots - 1)) {
        t = &s->threads[s->tslots[j] - 1];
        if (t->hash == h &&
            value_matches(t->pid_null, t->pid_is_str, t->pid_i, t->pid_s, pid) &&
            value_matches(t->tid_null, t->tid_is_str, t->tid_i, t->tid_s, tid))
            return t;
    }
    if (TT_ALLOC_GROW(s->threads, s->nthreads + 1, s->athreads) < 0)
        return NULL;
    t = &s->threads[s->nthreads];
    memset(t, 0, sizeof(*t));
    t->hash = h;
    t->pid_null = pid->is_null;
    t->tid_null = tid->is_null;
    t->pid_is_str = pid->is_str;
    t->tid_is_str = tid->is_str;
    t->pid_i = pid->i;
    t->tid_i = tid->i;
    if (t->pid_is_str && !(t->pid_s = strndup(pid->str, pid->len)))
        return NULL;
    if (t->tid_is_str && !(t->tid_s = strndup(tid->str, tid->len))) {
        free(t->pid_s);
        return NULL;
    }
    s->tslots[j] = ++s->nthreads;
    return t;
}

static int push_cpu(struct state *s, struct thread_stack *t, struct ev *e)
{
    int rc;
    /* torch: pop while the new event starts at/after the parent's end or
     * ends after it */
    while (t->n) {
        struct ev *p = t->frames[t->n - 1];
        if (e->start >= p->end || e->end > p->end) {
            t->n--;
            /* its [memory] records may still come (up to its end): finish
             * it once the stream passes its end */
            p->closed = 1;
            if (p->have_end_mem && (rc = finish(s, p, p->parent)) < 0)
                return rc;
        } else {
            break;
        }
    }
    e->has_parent = t->n > 0;
    e->parent = t->n ? t->frames[t->n - 1] : NULL;
    if (s->want_stacks && (rc = tt__avg_stack_assign(s, t, e)) < 0)
        return rc;
    /* rows keep torch's order and the first event's parent: first
     * occurrence in start order (of the events counted) */
    if (!e->out) {
        struct row *r = agg_get(&s->agg, e->name, s->o->group_by_shape ? e->shapes : 0, e->stack,
                                DEV_CPU);
        if (!r)
            return tt__oom();
        if (!r->seen) {
            r->seen = 1;
            r->has_parent = e->has_parent;
        }
    }
    if (TT_ALLOC_GROW(t->frames, t->n + 1, t->alloc) < 0)
        return tt__oom();
    t->frames[t->n++] = e;
    return heap_push(s, e) < 0 ? tt__oom() : 0;
}

static int flush_threads(struct state *s)
{
    size_t i;
    int rc;
    if ((rc = pass_ends(s, INT64_MAX)) < 0)
        return rc;
    for (i = 0; i < s->nthreads; i++) {
        struct thread_stack *t = &s->threads[i];
        while (t->n) {
            struct ev *e = t->frames[--t->n];
            if ((rc = finish(s, e, e->parent)) < 0)
                return rc;
        }
    }
    return 0;
}

void tt__avg_state_release(struct state *s)
{
    size_t i;
    struct ev *e;
    for (i = 0; i < s->nthreads; i++) {
        struct thread_stack *t = &s->threads[i];
        while (t->n)
            free(t->frames[--t->n]);
        free(t->frames);
        free(t->py);
        tt__i64map_free(&t->fwd);
        free(t->pid_s);
        free(t->tid_s);
    }
    free(s->threads);
    free(s->heap);
    for (i = 0; i < s->nstacks; i++)
        free(s->stacks[i]);
    free(s->stacks);
    free(s->sslots);
    free(s->tslots);
    free(s->names.keys);
    free(s->names.vals);
    tt__avg_stacks_release(&s->stk);
    while ((e = s->free_list) != NULL) {
        s->free_list = *(struct ev **)e;
        free(e);
    }
    agg_release(&s->agg);
}

/* ---- names ---- */

static int is_filtered(const char *n)
{
    static const char *const names[] = {
        "[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
        "profiler::_record_function_enter_new", "profiler::_record_function_exit",
        "aten::is_leaf", "aten::output_nr", "aten::_version",
    };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(names); i++) {
        if (!strcmp(n, names[i]))
            return 1;
    }
    return 0;
}

/* name classes: NAME_KEEP / NAME_FILTERED / NAME_STEP, plus flags */
enum {
    NAME_KEEP = 0, NAME_FILTERED = 1, NAME_STEP = 2, NAME_BASE = 3,
    NAME_EVALUATE = 4, /* "autograd::engine::evaluate_function: X": FUNCTION scope */
    NAME_AUTOGRAD = 8  /* "torch::autograd::X": a C++ autograd node (AccumulateGrad) */
};

static int classify_name(const char *str)
{
    if (!str)
        return NAME_KEEP;
    if (is_filtered(str))
        return NAME_FILTERED;
    if (!strncmp(str, "ProfilerStep#", 13))
        return NAME_STEP;
    if (!strncmp(str, "autograd::engine::evaluate_function: ", 37))
        return NAME_EVALUATE;
    return !strncmp(str, "torch::autograd::", 17) ? NAME_AUTOGRAD : NAME_KEEP;
}

/*
 * A backward function (RecordScope BACKWARD_FUNCTION, which the trace does
 * not store): an autograd node run by the engine. Those made in the forward
 * pass have a Sequence number and "Fwd thread id" > 0, as has the engine's
 * "autograd::engine::evaluate_function: X" around them (FUNCTION scope);
 * C++ nodes without one (torch::autograd::AccumulateGrad) have neither.
 */
static int is_backward_node(int cls, const struct arec *e)
{
    if (e->flags & AREC_FWD_TID)
        return !(cls & NAME_EVALUATE);
    return e->seq < 0 && (cls & NAME_AUTOGRAD);
}

static size_t id_slot(int64_t id, size_t nslots)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h ^ (h >> 29)) & (nslots - 1);
}

static int idmap_grow(struct idmap *m)
{
    size_t ns = m->nslots ? m->nslots * 2 : 1024, i;
    int64_t *keys = calloc(ns, sizeof(*keys));
    signed char *vals = calloc(ns, sizeof(*vals));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return TT_ENOMEM;
    }
    for (i = 0; i < m->nslots; i++) {
        size_t j;
        if (!m->keys[i])
            continue;
        for (j = id_slot(m->keys[i], ns); keys[j]; j = (j + 1) & (ns - 1))
            ;
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->nslots = ns;
    return 0;
}

/* the class of a string id (classify_name), cached by id */
static int name_class(struct state *s, int64_t id)
{
    struct idmap *m = &s->names;
    size_t j;
    int c;
    if (id == 0 || ((m->n + 1) * 2 > m->nslots && idmap_grow(m) < 0))
        return classify_name(tt__avg_mem_string(s->ms, id)); /* 0 is no key of the map */
    for (j = id_slot(id, m->nslots); m->keys[j]; j = (j + 1) & (m->nslots - 1)) {
        if (m->keys[j] == id)
            return m->vals[j];
    }
    c = classify_name(tt__avg_mem_string(s->ms, id));
    m->keys[j] = id;
    m->vals[j] = (signed char)c;
    m->n++;
    return c;
}

/* ---- ProfilerStep windows ---- */

/* a ProfilerStep#N of the trace, kept whether --steps chose it or not */
void tt__avg_steps_seen(struct steps *w, int64_t num)
{
    if (!w->seen_n || num < w->seen_lo)
        w->seen_lo = num;
    if (!w->seen_n || num > w->seen_hi)
        w->seen_hi = num;
    w->seen_n++;
}

int tt__avg_steps_add(struct steps *w, int64_t start, int64_t end)
{
    if (TT_ALLOC_GROW(w->win, 2 * (w->n + 1), w->alloc) < 0)
        return tt__oom();
    w->win[2 * w->n] = start;
    w->win[2 * w->n + 1] = end;
    w->n++;
    return 0;
}

static int win_cmp(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* sorted by start, empty ones dropped, overlapping ones joined */
void tt__avg_steps_normalize(struct steps *w)
{
    size_t i, k = 0;
    if (w->n > 1)
        TT_QSORT(w->win, w->n, 2 * sizeof(*w->win), win_cmp);
    for (i = 0; i < w->n; i++) {
        int64_t a = w->win[2 * i], b = w->win[2 * i + 1];
        if (b < a)
            continue;
        if (k && a <= w->win[2 * k - 1]) {
            if (b > w->win[2 * k - 1])
                w->win[2 * k - 1] = b;
            continue;
        }
        w->win[2 * k] = a;
        w->win[2 * k + 1] = b;
        k++;
    }
    w->n = k;
}

/* ts inside a window (binary search of the normalised windows) */
static int in_steps(const tt_avg_options *o, const struct steps *w, int64_t ts)
{
    size_t lo = 0, hi = w->n;
    if (!o->steps_set)
        return 1;
    while (lo < hi) { /* first window starting after ts */
        size_t mid = lo + (hi - lo) / 2;
        if (w->win[2 * mid] <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ts <= w->win[2 * (lo - 1) + 1];
}

static int mem_class(int64_t device_type)
{
    switch (device_type) {
    case 0: case 2: case 5: return 0;  /* CPU, MKLDNN, IDEEP */
    case 1: case 6: case 12: case 20: return 1; /* CUDA, HIP, XPU, PrivateUse1 */
    default: return -1;
    }
}

/* complete an op record with what the end of the file told */
void tt__avg_fstream_fix(const struct fstream *fs, struct arec *e)
{
    if (e->kind == 0 && e->a < 0)
        e->a = fs->id_empty;
}

/*
 * The pass proper: events in order from the runs; fs (reading a file without
 * a database) completes op records with what was only known at the end.
 */
int tt__avg_pass_merge(struct state *s, struct runs *runs, const struct steps *win,
                       int64_t mem_name, const struct fstream *fs)
{
    struct merge m;
    struct arec e;
    struct ev *last = NULL; /* the op pushed by the previous record */
    int64_t last_id = 0;
    int rc, r;

    s->steps_lo = win->seen_lo;
    s->steps_hi = win->seen_hi;
    s->steps_n = win->seen_n;
    if ((rc = tt__avg_merge_start(&m, runs)) < 0) {
        tt__avg_merge_release(&m);
        return rc;
    }
    while ((r = tt__avg_merge_next(&m, &e)) != 0) {
        int64_t name, ts, dur;
        int cls;
        if (r < 0) {
            rc = r;
            break;
        }
        if (e.flags & AREC_DEVICE_WORK) {
            /* right after its op: add to the frame just pushed, if it was */
            if (last && last_id == e.id)
                last->kernels_ns += e.b;
            continue;
        }
        if (e.kind == KIND_PY) { /* a Python call: the stacks of what it encloses */
            if (s->want_stacks &&
                (rc = tt__avg_py_frame(s, &s->threads[e.thread], e.ts, e.end, e.name)) < 0)
                break;
            continue;
        }
        last = NULL;
        if (fs)
            tt__avg_fstream_fix(fs, &e);
        name = e.name;
        ts = e.ts;
        dur = e.end - e.ts;
        if (!s->have_mem_ts || ts != s->mem_ts) {
            s->mem_lt[0] = s->mem_total[0];
            s->mem_lt[1] = s->mem_total[1];
            s->mem_ts = ts;
            s->have_mem_ts = 1;
        }
        if ((rc = pass_ends(s, ts)) < 0)
            break;
        if (e.kind == 2) { /* [memory] record */
            int c = mem_class(e.a);
            int64_t bytes = e.b;
            s->any_memory = 1;
            if (c < 0 || !in_steps(s->o, win, ts))
                continue;
            s->mem_total[c] = tt_sat_add(s->mem_total[c], bytes);
            if (s->nheap == 0) {
                /* inside no CPU event: a standalone "[memory]" row */
                int64_t mm[2] = { 0, 0 };
                mm[c] = bytes;
                if (!mem_name || (e.flags & (AREC_OUT | AREC_HIDE)))
                    continue;
                if ((rc = add_row(s, mem_name, 0, 0, DEV_CPU, 0, 0, 0, 0, 0, 0, mm, mm)) < 0)
                    break;
            }
            continue;
        }
        cls = name_class(s, name);
        if ((cls & NAME_BASE) == NAME_FILTERED || !in_steps(s->o, win, ts))
            continue;
        if ((cls & NAME_BASE) == NAME_STEP) {
            if (!s->step_name)
                s->step_name = -2; /* placeholder id for "ProfilerStep*" */
            name = s->step_name;
        }
        if (e.kind == 3) { /* GPU activity: a device row of its own */
            int64_t zero[2] = { 0, 0 };
            double d = (double)dur / 1e3;
            if ((e.flags & AREC_HIDE) && !e.a)
                s->hidden_self_dev += d;
            if (e.flags & (AREC_OUT | AREC_HIDE))
                continue;
            if ((rc = add_row(s, name, 0, 0, DEV_CUDA, 0, (int)e.a, 0, 0, d, d, zero, zero)) < 0)
                break;
            continue;
        }
        {
            struct ev *v = ev_new(s);
            if (!v) {
                rc = tt__oom();
                break;
            }
            v->name = name;
            v->shapes = e.kind == 0 ? e.a : 0;
            v->own = e.kind == 0 ? e.stack : 0; /* its "Call stack", if any */
            v->fwd_tid = (e.flags & AREC_FWD_TID) != 0;
            v->seq = e.kind == 0 ? e.seq : -1;
            v->bw_node = e.kind == 0 && is_backward_node(cls, &e);
            v->start = ts;
            v->end = ts + (dur > 0 ? dur : 0);
            v->kernels_ns = e.b;
            v->is_user_annotation = (e.flags & AREC_USER_ANNOTATION) != 0;
            v->out = e.flags & AREC_OUT ? EV_OUT_SCOPE : e.flags & AREC_HIDE ? EV_OUT_NAME : EV_OUT_NO;
            v->mem_start[0] = s->mem_lt[0];
            v->mem_start[1] = s->mem_lt[1];
            v->serial = s->serial++;
            if ((rc = push_cpu(s, &s->threads[e.thread], v)) < 0)
                break;
            if (e.kind == 0) {
                last = v;
                last_id = e.id;
            }
        }
    }
    tt__avg_merge_release(&m);
    if (rc == 0)
        rc = flush_threads(s);
    return rc;
}

