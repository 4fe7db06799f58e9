/*
 * analyze/critpath/critpath_overlay.c - the window's events written as a
 * Chrome trace with the critical path marked, for Perfetto (HTA's
 * overlay_critical_path_analysis): every event of the window (CPU slices
 * and runtime calls with a duration, the GPU activities and cuda_sync
 * events they launched), "args": {"critical": 1} on those with a node on
 * the path, and a "critical_path" flow (s, then f) for each edge of the
 * path that goes from one event to another, with its weight and kind.
 * Written through report/out.h: a temporary beside the file, renamed over
 * it once complete; gzip when the name ends in .gz.
 */
#include "common/compat.h"
#include "analyze/critpath/critpath_state.h"
#include "report/json.h"
#include "report/out.h"

#include <inttypes.h>

static void ev_common(tt_jw *w, const struct cp_run *r, const struct cp_ev *e)
{
    tt_jw_kstr(w, "cat", tt__cp_str(r, e->cat));
    tt_jw_kstr(w, "name", tt__cp_str(r, e->name));
    tt_jw_kint(w, "pid", e->pid);
    tt_jw_kint(w, "tid", e->tid);
}

static void write_event(tt_jw *w, const struct cp_run *r, size_t i, int critical)
{
    const struct cp_ev *e = &r->ev[i];
    tt_jw_nl(w, 0);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "X");
    ev_common(w, r, e);
    tt_jw_kfixed(w, "ts", e->ts, 3);
    tt_jw_kfixed(w, "dur", e->dur, 3);
    tt_jw_kobj(w, "args");
    if (e->corr >= 0)
        tt_jw_kint(w, "correlation", e->corr);
    if (e->kind == CP_GPU || e->kind == CP_SYNC) {
        tt_jw_kint(w, "device", e->device);
        tt_jw_kint(w, "stream", e->stream);
    }
    if (critical)
        tt_jw_kint(w, "critical", 1);
    tt_jw_end(w);
    tt_jw_end(w);
}

/* one end of a flow: at its event's start, or just inside its end (a flow
 * binds to the slice that encloses its time) */
static void write_flow(tt_jw *w, const struct cp_run *r, int32_t node, int64_t id,
                       const struct cp_edge *e, int first)
{
    const struct cp_node *n = &r->nodes[node];
    const struct cp_ev *ev = &r->ev[n->ev];
    tt_jw_nl(w, 0);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", first ? "s" : "f");
    tt_jw_kint(w, "id", id);
    tt_jw_kstr(w, "cat", "critical_path");
    tt_jw_kstr(w, "name", "critical_path");
    tt_jw_kint(w, "pid", ev->pid);
    tt_jw_kint(w, "tid", ev->tid);
    tt_jw_kfixed(w, "ts", n->end ? n->ts - (ev->dur > 0) : n->ts, 3);
    if (!first)
        tt_jw_kstr(w, "bp", "e");
    tt_jw_kobj(w, "args");
    tt_jw_kint(w, "weight_ns", e->w);
    tt_jw_kstr(w, "type", tt_cp_edge_name(e->kind));
    tt_jw_end(w);
    tt_jw_end(w);
}

static int write_doc(tt_jw *w, const struct cp_run *r, const unsigned char *crit)
{
    size_t i;
    int64_t id = 0;
    tt_jw_obj(w);
    tt_jw_karr(w, "traceEvents");
    for (i = 0; i < r->nev; i++)
        write_event(w, r, i, crit[i]);
    for (i = 0; i + 1 < r->npath; i++) {
        int32_t u = r->path[i], v = r->path[i + 1];
        const struct cp_edge *e = tt__cp_edge(r, u, v);
        if (r->nodes[u].ev == r->nodes[v].ev || !e)
            continue;
        write_flow(w, r, u, ++id, e, 1);
        write_flow(w, r, v, id, e, 0);
    }
    tt_jw_nl(w, 0);
    tt_jw_end(w);
    tt_jw_kstr(w, "displayTimeUnit", "ms");
    tt_jw_end(w);
    return tt_jw_finish(w);
}

int tt__cp_overlay(const struct cp_run *r, const char *path)
{
    unsigned char *crit = calloc(r->nev + 1, 1);
    tt_out o;
    tt_jw w;
    size_t i;
    int rc;
    if (!crit)
        return tt__oom();
    for (i = 0; i < r->npath; i++)
        crit[r->nodes[r->path[i]].ev] = 1;
    if ((rc = tt_out_open(&o, path, TT_OUT_GZ_BY_NAME)) < 0) {
        free(crit);
        return rc;
    }
    tt_jw_init_out(&w, &o, TT_JW_COMPACT | TT_JW_LINE);
    rc = write_doc(&w, r, crit);
    free(crit);
    return tt_out_close(&o, rc);
}
