/*
 * analyze/critpath/critpath_path.c - the longest path of the window's
 * graph, and the result made of it.
 *
 * The graph is a DAG: one pass in topological order gives each node the
 * longest path that ends there (a linear dynamic programme over the edges).
 * Ties are broken as networkx's dag_longest_path (HTA's) breaks them, so
 * that the same path comes out: the nodes in the order their first edge
 * was added, the topological order of Kahn's algorithm by generations
 * (a FIFO queue), each node's first best predecessor in the order its
 * edges were added, the path ending at the first node of greatest length.
 */
#include "common/compat.h"
#include "analyze/critpath/critpath_state.h"
#include "common/tmath.h"

#include <inttypes.h>

/* the edges of each node, in the order they were added: CSR by u (out) or v (in) */
static int by_node(const struct cp_run *r, int out, size_t **first, int32_t **list)
{
    size_t *f = calloc(r->nnodes + 2, sizeof(*f)), i;
    int32_t *l = malloc((r->nedges + 1) * sizeof(*l));
    if (!f || !l) {
        free(f);
        free(l);
        return tt__oom();
    }
    for (i = 0; i < r->nedges; i++)
        f[(size_t)(out ? r->edges[i].u : r->edges[i].v) + 2]++;
    for (i = 2; i < r->nnodes + 2; i++)
        f[i] += f[i - 1];
    for (i = 0; i < r->nedges; i++)
        l[f[(size_t)(out ? r->edges[i].u : r->edges[i].v) + 1]++] = (int32_t)i;
    *first = f; /* node k's edges: list[first[k] .. first[k + 1]) */
    *list = l;
    return 0;
}

/* the nodes with an edge, in the order their first edge was added (u, then v) */
static size_t graph_order(const struct cp_run *r, int32_t *order, unsigned char *seen)
{
    size_t n = 0, i;
    for (i = 0; i < r->nedges; i++) {
        int32_t end[2] = { r->edges[i].u, r->edges[i].v };
        int k;
        for (k = 0; k < 2; k++)
            if (!seen[end[k]]) {
                seen[end[k]] = 1;
                order[n++] = end[k];
            }
    }
    return n;
}

/* Kahn's algorithm by generations into topo; the count taken (fewer than
 * n: a cycle) */
static size_t topo_sort(const struct cp_run *r, const int32_t *order, size_t n,
                        const size_t *out_first, const int32_t *out, const size_t *in_first,
                        int32_t *topo)
{
    size_t *indeg = malloc((r->nnodes + 1) * sizeof(*indeg)), head = 0, tail = 0, i, k;
    if (!indeg)
        return (size_t)-1;
    for (i = 0; i < n; i++) {
        indeg[order[i]] = in_first[order[i] + 1] - in_first[order[i]];
        if (!indeg[order[i]])
            topo[tail++] = order[i];
    }
    while (head < tail) {
        int32_t u = topo[head++];
        for (k = out_first[u]; k < out_first[u + 1]; k++) {
            int32_t v = r->edges[out[k]].v;
            if (--indeg[v] == 0)
                topo[tail++] = v;
        }
    }
    free(indeg);
    return tail;
}

/* dist and the best edge into each node, in topological order; the node
 * where the longest path ends */
static int32_t longest_to(const struct cp_run *r, const int32_t *topo, size_t n,
                          const size_t *in_first, const int32_t *in, int64_t *dist,
                          int32_t *via)
{
    int32_t end = CP_NONE;
    size_t i, k;
    for (i = 0; i < n; i++) {
        int32_t v = topo[i];
        dist[v] = 0;
        via[v] = CP_NONE;
        for (k = in_first[v]; k < in_first[v + 1]; k++) {
            const struct cp_edge *e = &r->edges[in[k]];
            int64_t d = tt_sat_add(dist[e->u], e->w);
            if (via[v] == CP_NONE || d > dist[v]) {
                dist[v] = d;
                via[v] = in[k];
            }
        }
        if (end == CP_NONE || dist[v] > dist[end])
            end = v;
    }
    return end;
}

static int walk_back(struct cp_run *r, int32_t end, const int32_t *via)
{
    size_t n = 0, i;
    int32_t v;
    for (v = end; via[v] != CP_NONE; v = r->edges[via[v]].u)
        n++;
    if (!(r->path = malloc((n + 1) * sizeof(*r->path))))
        return tt__oom();
    r->npath = n + 1;
    for (i = n + 1, v = end;; v = r->edges[via[v]].u) {
        r->path[--i] = v;
        if (via[v] == CP_NONE)
            break;
    }
    return 0;
}

int tt__cp_longest(struct cp_run *r)
{
    size_t *out_first = NULL, *in_first = NULL, n, sorted;
    int32_t *out = NULL, *in = NULL, *order = malloc((r->nnodes + 1) * sizeof(*order));
    int32_t *topo = malloc((r->nnodes + 1) * sizeof(*topo));
    int32_t *via = malloc((r->nnodes + 1) * sizeof(*via));
    int64_t *dist = malloc((r->nnodes + 1) * sizeof(*dist));
    unsigned char *seen = calloc(r->nnodes + 1, 1);
    int rc;
    if (!order || !topo || !via || !dist || !seen) {
        rc = tt__oom();
        goto out;
    }
    if ((rc = by_node(r, 1, &out_first, &out)) < 0 || (rc = by_node(r, 0, &in_first, &in)) < 0)
        goto out;
    n = r->graph_nodes = graph_order(r, order, seen);
    if (!n) {
        rc = tt_error_set(TT_ENOTFOUND, "critical-path: no dependency between the window's "
                                        "events (nothing to make a path of)");
        goto out;
    }
    if ((sorted = topo_sort(r, order, n, out_first, out, in_first, topo)) == (size_t)-1) {
        rc = tt__oom();
        goto out;
    }
    if (sorted < n) {
        rc = tt_error_set(TT_EINVALID, "critical-path: the graph of the window has a cycle "
                                       "(%zu of its %zu nodes are on or after one)",
                          n - sorted, n);
        goto out;
    }
    rc = walk_back(r, longest_to(r, topo, n, in_first, in, dist, via), via);
out:
    free(out_first);
    free(in_first);
    free(out);
    free(in);
    free(order);
    free(topo);
    free(via);
    free(dist);
    free(seen);
    return rc;
}

/* ---- the result ---- */

int tt__cp_bound(const struct cp_run *r, const struct cp_edge *e)
{
    const struct cp_ev *ev;
    switch (e->kind) {
    case TT_CP_EDGE_KERNEL_KERNEL: return TT_CP_KERNEL_KERNEL;
    case TT_CP_EDGE_LAUNCH_DELAY: return TT_CP_LAUNCH;
    case TT_CP_EDGE_OPERATOR: break;
    default: return TT_CP_NONE;
    }
    if (e->attr == CP_NONE)
        return TT_CP_CPU;
    ev = &r->ev[e->attr];
    if (ev->kind == CP_SLICE || ev->kind == CP_RUNTIME)
        return r->in[e->attr].nf & CPS_DATA_LOAD ? TT_CP_DATA_LOADING : TT_CP_CPU;
    return r->in[e->attr].nf & CPS_COMM ? TT_CP_GPU_COMM : TT_CP_GPU_COMPUTE;
}

const struct cp_edge *tt__cp_edge(const struct cp_run *r, int32_t u, int32_t v)
{
    int64_t key = (int64_t)((uint64_t)(uint32_t)u << 32 | (uint32_t)v);
    size_t at;
    return tt__i64map_get(&r->edge_at, key, &at) ? &r->edges[at] : NULL;
}

/* the result's names: each distinct one copied once */
struct names {
    tt_cp_result *res;
    struct i64map at; /* string id -> index in res->names */
    size_t alloc;
};

static const char *ev_name(const struct cp_run *r, struct names *nm, int32_t ev)
{
    int64_t id = r->ev[ev].name;
    size_t at;
    char *copy;
    if (tt__i64map_get(&nm->at, id, &at))
        return nm->res->names[at];
    if (TT_ALLOC_GROW(nm->res->names, nm->res->nnames + 1, nm->alloc) < 0 ||
        !(copy = strdup(tt__cp_str(r, id))))
        return NULL;
    nm->res->names[nm->res->nnames] = copy;
    if (tt__i64map_put(&nm->at, id, nm->res->nnames++) < 0)
        return NULL;
    return copy;
}

static int segment(const struct cp_run *r, struct names *nm, const struct cp_edge *e,
                   tt_cp_segment *s)
{
    const struct cp_node *u = &r->nodes[e->u], *v = &r->nodes[e->v];
    s->from_ns = u->ts;
    s->to_ns = v->ts;
    s->from_end = u->end;
    s->to_end = v->end;
    s->kind = e->kind;
    s->bound = tt__cp_bound(r, e);
    s->ns = e->w;
    s->stream = -1;
    if (!(s->from_event = ev_name(r, nm, u->ev)) || !(s->to_event = ev_name(r, nm, v->ev)))
        return tt__oom();
    if (e->attr != CP_NONE) {
        const struct cp_ev *a = &r->ev[e->attr];
        if (!(s->name = ev_name(r, nm, e->attr)))
            return tt__oom();
        s->gpu = a->kind == CP_GPU;
        s->pid = a->pid;
        s->tid = a->tid;
        s->stream = s->gpu ? a->stream : -1;
    }
    return 0;
}

/* --name: whether edge e is at an event whose name matches (either node's
 * event, or the one its time belongs to) */
static int shown(const struct cp_run *r, const struct cp_edge *e)
{
    if (!r->o->filter.name || !r->fl)
        return 1;
    return ((r->in[r->nodes[e->u].ev].nf | r->in[r->nodes[e->v].ev].nf |
             (e->attr != CP_NONE ? r->in[e->attr].nf : 0u)) & CPS_NAME) != 0;
}

int tt__cp_result(const struct cp_run *r, tt_cp_result *res)
{
    struct names nm = { res, { 0 }, 0 };
    size_t k;
    int rc = 0;
    if (r->o->filter.under && r->fl) {
        res->instance_from = r->o->instance_from;
        res->instance_to = r->o->instance_to;
        res->instances = r->ninst;
        if (!(res->window_op = strdup(tt__cp_str(r, r->win_name))))
            return tt__oom();
    }
    res->start_ns = r->npath ? r->nodes[r->path[0]].ts : 0;
    res->have_rank = r->rres.have_rank;
    res->rank = r->rres.rank;
    res->step = r->o->step_set ? r->o->step : -1;
    res->from_ns = r->from_ns;
    res->to_ns = r->to_ns;
    res->graph_nodes = r->graph_nodes;
    res->graph_edges = r->nedges;
    res->events = r->nev;
    if (r->npath > 1 &&
        !(res->segments = calloc(r->npath - 1, sizeof(*res->segments))))
        return tt__oom();
    for (k = 0; rc == 0 && k + 1 < r->npath; k++) {
        const struct cp_edge *e = tt__cp_edge(r, r->path[k], r->path[k + 1]);
        int64_t *b;
        if (!e) {
            rc = tt_error_set(TT_ERROR, "critical-path: a path edge went missing");
            break;
        }
        res->path_segments++;
        res->length_ns = tt_sat_add(res->length_ns, e->w);
        b = &res->bound_ns[tt__cp_bound(r, e)];
        *b = tt_sat_add(*b, e->w);
        if (!shown(r, e))
            continue;
        rc = segment(r, &nm, e, &res->segments[res->nsegments++]);
        res->shown_ns = tt_sat_add(res->shown_ns, e->w);
    }
    tt__i64map_free(&nm.at);
    return rc;
}

/* the names of tracetool/critpath.h (the path is made here; critpath.c
 * prints them, critpath_overlay.c writes them) */
const char *tt_cp_bound_name(int bound)
{
    static const char *const names[TT_CP_NBOUND] = {
        "", "cpu_bound", "data_loading", "gpu_compute_bound", "gpu_communication_bound",
        "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead"
    };
    return bound >= 0 && bound < TT_CP_NBOUND ? names[bound] : "?";
}

const char *tt_cp_edge_name(int kind)
{
    static const char *const names[] = { "operator", "dependency", "launch_delay",
                                         "kernel_kernel_delay", "sync" };
    return kind >= 0 && kind <= TT_CP_EDGE_SYNC ? names[kind] : "?";
}
