/*
 * analyze/critpath/critpath_graph.c - the graph of a window's events, as
 * HTA's CPGraph builds it (hta/analyzers/critical_path_analysis.py at
 * v0.6.1; docs/HTA_critpath.md says where and why this differs):
 *
 *  - nodes: a start and an end per CPU op (and data-loading event),
 *    runtime call and GPU activity, by time then event (_create_event_nodes);
 *  - the runtime calls that take the CUDA runtime lock, in node order
 *    (_construct_graph_from_cuda_runtime_events);
 *  - each thread's call stacks walked depth first: an edge from the last
 *    node to each start and end met (_construct_graph_from_call_stacks);
 *    the thread of the backward pass merged into the forward's when both
 *    are known;
 *  - the GPU activities and cuda_sync events by start (a sync event by its
 *    end): each activity's own edge, then a sync edge from the kernel a
 *    Stream Wait Event makes it wait for, then a launch delay edge from its
 *    runtime call when its stream held nothing else, else a kernel-kernel
 *    edge from the stream's last activity; Event Sync, Stream Sync and
 *    Context Sync add edges from kernels to the runtime call that waited
 *    (_construct_graph_from_kernels).
 *
 * Edges are kept in the order they are added (the longest path breaks ties
 * by it, as networkx does); adding an edge again replaces its kind and
 * weight in place.
 */
#include "common/compat.h"
#include "analyze/critpath/critpath_state.h"
#include "common/tmath.h"

#include <inttypes.h>

/* HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: a longer gap between two kernels
 * of a stream is no kernel-kernel delay */
#define KK_THRESHOLD_NS INT64_C(1500000)

/* ---- nodes ---- */

static int is_node_event(const struct cp_run *r, size_t i)
{
    const struct cp_ev *e = &r->ev[i];
    if (e->kind == CP_RUNTIME || e->kind == CP_GPU)
        return 1;
    return e->kind == CP_SLICE && ((r->in[i].cf & CPS_CPU_OP) || (r->in[i].nf & CPS_DATA_LOAD));
}

static int cmp_node(const void *a, const void *b)
{
    const struct cp_node *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->ev != y->ev)
        return x->ev < y->ev ? -1 : 1;
    return x->end - y->end;
}

static int make_nodes(struct cp_run *r)
{
    size_t i, n = 0;
    if (!(r->nodes = malloc((2 * r->nev + 1) * sizeof(*r->nodes))))
        return tt__oom();
    for (i = 0; i < r->nev; i++) {
        if (!is_node_event(r, i))
            continue;
        r->nodes[n].ts = r->ev[i].ts;
        r->nodes[n].ev = (int32_t)i;
        r->nodes[n++].end = 0;
        r->nodes[n].ts = tt_end_ns(r->ev[i].ts, r->ev[i].dur);
        r->nodes[n].ev = (int32_t)i;
        r->nodes[n++].end = 1;
    }
    TT_QSORT(r->nodes, n, sizeof(*r->nodes), cmp_node);
    r->nnodes = n;
    for (i = 0; i < n; i++) {
        struct cp_info *in = &r->in[r->nodes[i].ev];
        if (r->nodes[i].end)
            in->end = (int32_t)i;
        else
            in->start = (int32_t)i;
    }
    return 0;
}

/* ---- edges ---- */

/* the event an edge's time belongs to (HTA's _attribute_edge): only
 * operator and kernel-kernel edges have one */
static int32_t attribution(const struct cp_run *r, int32_t u, int32_t v, int kind,
                           int32_t parent)
{
    const struct cp_node *s = &r->nodes[u], *d = &r->nodes[v];
    if (kind != TT_CP_EDGE_OPERATOR && kind != TT_CP_EDGE_KERNEL_KERNEL)
        return CP_NONE;
    if (kind == TT_CP_EDGE_KERNEL_KERNEL || !s->end)
        return s->ev; /* the earlier kernel; an edge from a start: that event */
    if (d->end)
        return d->ev; /* end to end: unwinding, the time is the enclosing event's */
    return parent;    /* end to start: the gap between two children, their parent's */
}

/* edge u -> v (zero: of weight 0; parent: the enclosing event for an end
 * to start edge). Dependency and sync edges weigh nothing; a negative
 * weight (a child that ends after its parent, rounding) is 0. */
static int add_edge(struct cp_run *r, int32_t u, int32_t v, int kind, int zero, int32_t parent)
{
    int64_t key = (int64_t)((uint64_t)(uint32_t)u << 32 | (uint32_t)v), w = 0;
    int32_t attr = attribution(r, u, v, kind, parent);
    struct cp_edge *e;
    size_t at;
    if (u == v)
        return 0;
    if (kind != TT_CP_EDGE_DEPENDENCY && kind != TT_CP_EDGE_SYNC && !zero)
        w = tt_sat_sub(r->nodes[v].ts, r->nodes[u].ts);
    if (w < 0)
        w = 0;
    if (tt__i64map_get(&r->edge_at, key, &at)) {
        e = &r->edges[at]; /* networkx: the edge keeps its place, takes the new data */
    } else {
        if (TT_ALLOC_GROW(r->edges, r->nedges + 1, r->aedges) < 0 ||
            tt__i64map_put(&r->edge_at, key, r->nedges) < 0)
            return tt__oom();
        e = &r->edges[r->nedges++];
        e->u = u;
        e->v = v;
        e->attr = CP_NONE;
    }
    e->kind = kind;
    e->w = w;
    if (attr != CP_NONE)
        e->attr = attr;
    return 0;
}

static unsigned name_flags(const struct cp_run *r, int32_t ev)
{
    return r->in[ev].nf;
}

static int is_lock_node(const struct cp_run *r, int32_t node)
{
    int32_t ev = r->nodes[node].ev;
    return r->ev[ev].kind == CP_RUNTIME && (name_flags(r, ev) & CPS_LOCK);
}

/* the runtime calls that take the runtime lock, whatever their thread:
 * the order they end in is the order they held it */
static int lock_edges(struct cp_run *r)
{
    int32_t *st = malloc((r->nnodes + 1) * sizeof(*st)), last = CP_NONE, k;
    size_t n = 0;
    int rc = 0;
    if (!st)
        return tt__oom();
    for (k = 0; rc == 0 && (size_t)k < r->nnodes; k++) {
        if (!is_lock_node(r, k))
            continue;
        if (!r->nodes[k].end) {
            st[n++] = k;
        } else {
            while (rc == 0 && n) {
                int32_t p = st[--n];
                rc = add_edge(r, p, k, r->nodes[p].ev == r->nodes[k].ev ? TT_CP_EDGE_OPERATOR
                                                                        : TT_CP_EDGE_DEPENDENCY,
                              0, r->nodes[k].ev);
            }
            if (rc == 0 && last != CP_NONE && r->nodes[last].end)
                rc = add_edge(r, last, k, TT_CP_EDGE_DEPENDENCY, 0, CP_NONE);
        }
        last = k;
    }
    free(st);
    return rc;
}

/* ---- the call stacks ---- */

/* a CPU event's start or end, to be sorted into its thread's order */
struct sev {
    int64_t pid, tid, time, dur;
    int32_t ev;
    int32_t start; /* 1: start */
};

/* HTA's compare_events (hta/common/call_stack.py), after the thread */
static int cmp_sev(const void *a, const void *b)
{
    const struct sev *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ev == y->ev)
        return x->start == y->start ? 0 : x->start ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->start == y->start) {
        if (x->dur == y->dur) /* starts: by event; ends: the reverse */
            return (x->ev < y->ev ? -1 : 1) * (x->start ? 1 : -1);
        /* starts: the longer first; ends: the shorter first */
        return (x->dur < y->dur ? 1 : -1) * (x->start ? 1 : -1);
    }
    if (x->dur > 0 && y->dur > 0)
        return x->start ? 1 : -1; /* an end before a start */
    if (x->dur == 0 && y->dur == 0)
        return x->ev < y->ev ? -1 : 1;
    return x->start ? -1 : 1;
}

/* HTA's _get_tid_for_event: the one thread whose ops or annotations have
 * `flag` in their name (CP_NONE when none or several) */
static int64_t thread_of(const struct cp_run *r, unsigned flag, int *found)
{
    int64_t tid = 0;
    size_t i;
    *found = 0;
    for (i = 0; i < r->nev; i++) {
        const struct cp_ev *e = &r->ev[i];
        if (e->kind != CP_SLICE || !(r->in[i].nf & flag) ||
            !(r->in[i].cf & (CPS_CPU_OP | CPS_ANNOT)))
            continue;
        if (*found && e->tid != tid) {
            *found = 0;
            return 0; /* two threads */
        }
        tid = e->tid;
        *found = 1;
    }
    return tid;
}

/* the backward pass's thread ("autograd") merged into the forward's */
static void merge_backward(struct cp_run *r)
{
    int ff, fb;
    int64_t fwd = thread_of(r, CPS_FORWARD, &ff), bwd = thread_of(r, CPS_AUTOGRAD, &fb);
    size_t i;
    if (!ff || !fb || fwd == bwd)
        return;
    for (i = 0; i < r->nev; i++)
        if (r->in[i].tid == bwd)
            r->in[i].tid = fwd;
}

/* each CPU event's parent and children (the stacks of sorted starts and
 * ends, as CallStackGraph); the roots of each thread, in order, into
 * roots (a thread's first root follows a CP_NONE) */
static int build_stacks(struct cp_run *r, int32_t *roots, size_t *nroots)
{
    struct sev *s = malloc((2 * r->nev + 1) * sizeof(*s));
    int32_t *stack, *last_child;
    size_t n = 0, i, depth = 0, nr = 0;
    if (!s)
        return tt__oom();
    for (i = 0; i < r->nev; i++) {
        const struct cp_ev *e = &r->ev[i];
        struct sev x = { e->pid, r->in[i].tid, e->ts, e->dur, (int32_t)i, 1 };
        if (e->kind != CP_SLICE && e->kind != CP_RUNTIME)
            continue;
        s[n++] = x;
        x.time = tt_end_ns(e->ts, e->dur);
        x.start = 0;
        s[n++] = x;
    }
    TT_QSORT(s, n, sizeof(*s), cmp_sev);
    stack = malloc((n / 2 + 1) * sizeof(*stack));
    last_child = malloc((r->nev + 1) * sizeof(*last_child));
    if (!stack || !last_child) {
        free(s);
        free(stack);
        free(last_child);
        return tt__oom();
    }
    for (i = 0; i < n; i++) {
        int32_t ev = s[i].ev;
        if (i == 0 || s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid) {
            depth = 0; /* a new thread */
            roots[nr++] = CP_NONE;
        }
        if (!s[i].start) {
            if (depth)
                depth--; /* HTA pops whatever is on top */
            continue;
        }
        last_child[ev] = CP_NONE;
        if (depth) {
            int32_t p = stack[depth - 1];
            r->in[ev].parent = p;
            if (last_child[p] == CP_NONE)
                r->in[p].child = ev;
            else
                r->in[last_child[p]].next = ev;
            last_child[p] = ev;
        } else {
            roots[nr++] = ev;
        }
        stack[depth++] = ev;
    }
    *nroots = nr;
    free(s);
    free(stack);
    free(last_child);
    return 0;
}

/* the walk of one thread's stacks */
struct walk {
    int32_t last;        /* the last node met */
    int32_t last_parent; /* its event's parent */
    int depth;           /* node events entered, not left */
};

static int shares_lock(const struct cp_run *r, int32_t a, int32_t b)
{
    return is_lock_node(r, a) && is_lock_node(r, b) && (!r->nodes[a].end || r->nodes[b].end);
}

/* entering (end 0) or leaving event ev: an edge from the last node */
static int walk_step(struct cp_run *r, struct walk *w, int32_t ev, int end)
{
    int32_t node = end ? r->in[ev].end : r->in[ev].start;
    int rc = 0;
    if (node == CP_NONE)
        return 0; /* not a node event: skipped, as HTA's enter/exit */
    if (w->last != CP_NONE && !shares_lock(r, w->last, node)) {
        if (end)
            rc = add_edge(r, w->last, node, TT_CP_EDGE_OPERATOR,
                          (name_flags(r, ev) & CPS_BLOCKING) != 0, w->last_parent);
        else
            rc = add_edge(r, w->last, node,
                          w->depth ? TT_CP_EDGE_OPERATOR : TT_CP_EDGE_DEPENDENCY, 0,
                          w->last_parent);
    }
    w->last = node;
    w->last_parent = r->in[ev].parent;
    w->depth += end ? -1 : 1;
    return rc;
}

/* depth first from each root of a thread: enter, the children, leave */
static int walk_thread(struct cp_run *r, const int32_t *roots, size_t n, int32_t *stack)
{
    struct walk w = { CP_NONE, CP_NONE, 0 };
    size_t i;
    int rc = 0;
    for (i = 0; rc == 0 && i < n; i++) {
        size_t depth = 0;
        int32_t ev = roots[i];
        rc = walk_step(r, &w, ev, 0);
        stack[depth++] = ev;
        while (rc == 0 && depth) {
            int32_t top = stack[depth - 1], next;
            /* the next child to enter: the first, or the sibling of the one left */
            next = ev == top ? r->in[top].child : r->in[ev].next;
            if (next != CP_NONE) {
                rc = walk_step(r, &w, next, 0);
                stack[depth++] = ev = next;
            } else {
                rc = walk_step(r, &w, top, 1);
                ev = top;
                depth--;
            }
        }
    }
    return rc;
}

static int stack_edges(struct cp_run *r)
{
    int32_t *roots = malloc((2 * r->nev + 1) * sizeof(*roots));
    int32_t *stack = malloc((r->nev + 1) * sizeof(*stack));
    size_t nroots = 0, i, first;
    int rc = 0;
    if (!roots || !stack) {
        rc = tt__oom();
        goto out;
    }
    merge_backward(r);
    if ((rc = build_stacks(r, roots, &nroots)) < 0)
        goto out;
    for (i = 0; rc == 0 && i < nroots; i = first) {
        for (first = i + 1; first < nroots && roots[first] != CP_NONE; first++)
            ;
        rc = walk_thread(r, roots + i + 1, first - i - 1, stack);
    }
out:
    free(roots);
    free(stack);
    return rc;
}

/* ---- the GPU ---- */

/* a launch, by k: (device, stream, ts, id) or (pid, tid, stream, ts, id) */
struct launch {
    int64_t k[5];
    int32_t rt; /* the runtime call */
};

static int cmp_launch(const void *a, const void *b)
{
    const struct launch *x = a, *y = b;
    int i;
    for (i = 0; i < 5; i++)
        if (x->k[i] != y->k[i])
            return x->k[i] < y->k[i] ? -1 : 1;
    return 0;
}

/* the first launch >= key */
static size_t lower_bound(const struct launch *l, size_t n, const struct launch *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_launch(&l[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* what the syncs look up: the launches by stream, by thread and stream;
 * the cudaEventRecord calls by correlation */
struct gpu_pass {
    struct launch *by_stream, *by_thread;
    size_t nl;
    struct i64map record;
};

static int gpu_pass_init(const struct cp_run *r, struct gpu_pass *g)
{
    size_t i, seen;
    memset(g, 0, sizeof(*g));
    g->by_stream = malloc((r->nev + 1) * sizeof(*g->by_stream));
    g->by_thread = malloc((r->nev + 1) * sizeof(*g->by_thread));
    if (!g->by_stream || !g->by_thread)
        return tt__oom();
    for (i = 0; i < r->nev; i++) {
        const struct cp_ev *e = &r->ev[i], *k;
        if (e->kind != CP_RUNTIME)
            continue;
        if ((name_flags(r, (int32_t)i) & CPS_RECORD) && e->corr >= 0 &&
            !tt__i64map_get(&g->record, e->corr, &seen) &&
            tt__i64map_put(&g->record, e->corr, i) < 0)
            return tt__oom();
        if (r->in[i].rt == CP_NONE)
            continue;
        k = &r->ev[r->in[i].rt];
        g->by_stream[g->nl] = (struct launch){ { k->device, k->stream, e->ts, e->id, 0 },
                                               (int32_t)i };
        g->by_thread[g->nl++] = (struct launch){ { e->pid, e->tid, k->stream, e->ts, e->id },
                                                 (int32_t)i };
    }
    TT_QSORT(g->by_stream, g->nl, sizeof(*g->by_stream), cmp_launch);
    TT_QSORT(g->by_thread, g->nl, sizeof(*g->by_thread), cmp_launch);
    return 0;
}

static void gpu_pass_free(struct gpu_pass *g)
{
    free(g->by_stream);
    free(g->by_thread);
    tt__i64map_free(&g->record);
}

/* the slot of a stream's last kernel */
static int stream_slot(struct cp_run *r, int64_t device, int64_t stream, size_t *at)
{
    int64_t key = (int64_t)((uint64_t)device << 32 ^ (uint32_t)stream);
    if (tt__i64map_get(&r->stream_at, key, at))
        return 0;
    if (TT_ALLOC_GROW(r->streams, r->nstreams + 1, r->astreams) < 0 ||
        tt__i64map_put(&r->stream_at, key, r->nstreams) < 0)
        return tt__oom();
    r->streams[r->nstreams].device = device;
    r->streams[r->nstreams].stream = stream;
    r->streams[r->nstreams].last = CP_NONE;
    *at = r->nstreams++;
    return 0;
}

/* the kernel whose launch a CUDA event recorded: the last launch on the
 * recorded stream before the cudaEventRecord (CP_NONE) */
static int32_t recorded_kernel(const struct cp_run *r, const struct gpu_pass *g,
                               const struct cp_ev *s)
{
    struct launch key;
    const struct cp_ev *rec;
    size_t at, lb;
    if (s->wait_corr < 0 || s->wait_stream < 0 || !tt__i64map_get(&g->record, s->wait_corr, &at))
        return CP_NONE;
    rec = &r->ev[at];
    key = (struct launch){ { s->device, s->wait_stream, rec->ts, rec->id, 0 }, CP_NONE };
    lb = lower_bound(g->by_stream, g->nl, &key);
    if (!lb || g->by_stream[lb - 1].k[0] != s->device ||
        g->by_stream[lb - 1].k[1] != s->wait_stream)
        return CP_NONE;
    return r->in[g->by_stream[lb - 1].rt].rt;
}

/* a Stream Wait Event: the next launch on its stream from the thread of
 * its cudaStreamWaitEvent waits for kernel src */
static void stream_wait(struct cp_run *r, const struct gpu_pass *g, const struct cp_ev *s,
                        int32_t call, int32_t src)
{
    const struct cp_ev *w = &r->ev[call];
    struct launch key = { { w->pid, w->tid, s->stream, w->ts, w->id }, CP_NONE };
    size_t lb = lower_bound(g->by_thread, g->nl, &key);
    const struct launch *l = &g->by_thread[lb];
    if (lb < g->nl && l->k[0] == w->pid && l->k[1] == w->tid && l->k[2] == s->stream)
        r->in[r->in[l->rt].rt].sync_src = src;
}

/* a cuda_sync event (HTA's handle_cuda_sync) */
static int sync_event(struct cp_run *r, const struct gpu_pass *g, int32_t i)
{
    const struct cp_ev *s = &r->ev[i];
    unsigned f = name_flags(r, i);
    int32_t call = r->in[i].rt, src;
    size_t k, at;
    int rc = 0;
    if (f & (CPS_STREAM_WAIT | CPS_EVENT_SYNC)) {
        if ((src = recorded_kernel(r, g, s)) == CP_NONE)
            return 0;
        if (f & CPS_STREAM_WAIT)
            stream_wait(r, g, s, call, src);
        else if (r->in[src].end != CP_NONE)
            rc = add_edge(r, r->in[src].end, r->in[call].end, TT_CP_EDGE_SYNC, 0, CP_NONE);
        return rc;
    }
    if (f & CPS_STREAM_SYNC) {
        if ((rc = stream_slot(r, s->device, s->stream, &at)) < 0 || r->streams[at].last == CP_NONE)
            return rc;
        return add_edge(r, r->streams[at].last, r->in[call].end, TT_CP_EDGE_SYNC, 0, CP_NONE);
    }
    if (!(f & CPS_CONTEXT_SYNC))
        return 0;
    for (k = 0; rc == 0 && k < r->nstreams; k++) /* every stream of its device */
        if (r->streams[k].device == s->device && r->streams[k].last != CP_NONE)
            rc = add_edge(r, r->streams[k].last, r->in[call].end, TT_CP_EDGE_SYNC, 0, CP_NONE);
    return rc;
}

/* a GPU activity: its own edge, a sync edge, a launch or kernel-kernel delay */
static int activity(struct cp_run *r, int32_t i)
{
    const struct cp_ev *e = &r->ev[i];
    struct cp_info *in = &r->in[i];
    int32_t sync_end = CP_NONE, last;
    int64_t rt_ts = e->rt_ts;
    size_t at;
    int rc;
    if ((rc = add_edge(r, in->start, in->end, TT_CP_EDGE_OPERATOR, 0, CP_NONE)) < 0 ||
        (rc = stream_slot(r, e->device, e->stream, &at)) < 0)
        return rc;
    if (in->sync_src != CP_NONE && (sync_end = r->in[in->sync_src].end) != CP_NONE &&
        (rc = add_edge(r, sync_end, in->start, TT_CP_EDGE_SYNC, 0, CP_NONE)) < 0)
        return rc;
    in->sync_src = CP_NONE;
    last = r->streams[at].last;
    if (in->q_launch == 1 && in->q_start == 0 &&
        (last == CP_NONE || r->nodes[last].ts < rt_ts) &&
        (sync_end == CP_NONE || r->nodes[sync_end].ts < rt_ts))
        rc = add_edge(r, r->in[in->rt].start, in->start, TT_CP_EDGE_LAUNCH_DELAY, 0, CP_NONE);
    else if (last != CP_NONE &&
             tt_sat_sub(r->nodes[in->start].ts, r->nodes[last].ts) < KK_THRESHOLD_NS &&
             (sync_end == CP_NONE || r->nodes[sync_end].ts < r->nodes[last].ts))
        rc = add_edge(r, last, in->start, TT_CP_EDGE_KERNEL_KERNEL, 0, CP_NONE);
    r->streams[at].last = in->end;
    return rc;
}

/* the GPU rows by start, a sync event by its end (it may span a kernel it
 * waits for) */
static int cmp_gpu(const void *a, const void *b, void *ctx)
{
    const struct cp_run *r = ctx;
    const struct cp_ev *x = &r->ev[*(const int32_t *)a], *y = &r->ev[*(const int32_t *)b];
    int64_t tx = x->kind == CP_SYNC ? tt_end_ns(x->ts, x->dur) : x->ts;
    int64_t ty = y->kind == CP_SYNC ? tt_end_ns(y->ts, y->dur) : y->ts;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

static int gpu_edges(struct cp_run *r)
{
    struct gpu_pass g;
    int32_t *ord = malloc((r->nev + 1) * sizeof(*ord));
    size_t n = 0, i;
    int rc = ord ? gpu_pass_init(r, &g) : tt__oom();
    for (i = 0; rc == 0 && i < r->nev; i++)
        if (r->ev[i].kind == CP_GPU || r->ev[i].kind == CP_SYNC)
            ord[n++] = (int32_t)i;
    if (rc == 0)
        TT_QSORT_R(ord, n, sizeof(*ord), cmp_gpu, r);
    for (i = 0; rc == 0 && i < n; i++)
        rc = r->ev[ord[i]].kind == CP_SYNC ? sync_event(r, &g, ord[i]) : activity(r, ord[i]);
    if (ord)
        gpu_pass_free(&g);
    free(ord);
    return rc;
}

int tt__cp_graph(struct cp_run *r)
{
    int rc;
    if ((rc = make_nodes(r)) < 0 || (rc = lock_edges(r)) < 0 || (rc = stack_edges(r)) < 0)
        return rc;
    return gpu_edges(r);
}
