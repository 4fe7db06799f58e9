/*
 * capture/src/et_out.c - a window as a PyTorch Execution Trace, schema
 * 1.1.1-chakra.0.0.4 (torch/csrc/profiler/standalone/
 * execution_trace_observer.cpp): the same scope records as the Kineto file,
 * so PyTorch's rule holds (sorted ET rf_ids == sorted Kineto "Record
 * function id", test/profiler/test_execution_trace.py).
 *
 * Node ids come from one counter, as torch's: the root process node is 1,
 * then a node per thread in order of first use, then the ops in start
 * order (torch numbers an op at entry). Nodes are written as torch writes
 * them, at op exit: children before their parents, each thread's node
 * before its ops, the root last. ctrl_deps is the enclosing scope on the
 * thread, else the thread's node. Inputs carry the shapes and types the
 * program gave; their values are null (the library sees no tensors).
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/i64map.h"
#include "report/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the attributes every node has with the same value, and an inputs or
 * outputs object without entries: JSON as the writer would lay it out,
 * written whole (tt_jw_raw) on the hot path (a node a scope) */
static const char FW_PARENT[] = "{\"name\": \"fw_parent\", \"type\": \"uint64\", \"value\": 0}";
static const char SEQ_ID[] = "{\"name\": \"seq_id\", \"type\": \"int64\", \"value\": -1}";
static const char FW_TID[] = "{\"name\": \"fw_tid\", \"type\": \"uint64\", \"value\": 0}";
static const char STRINGS[] = "{\"name\": \"op_schema\", \"type\": \"string\", \"value\": \"\"}, "
                              "{\"name\": \"kernel_backend\", \"type\": \"string\", \"value\": \"\"}, "
                              "{\"name\": \"kernel_file\", \"type\": \"string\", \"value\": \"\"}";
static const char EMPTY_IO[] = "{\"values\": [], \"shapes\": [], \"types\": [], \"strides\": []}";

/* {"name": name, "type": "uint64", "value": v} */
static void attr_u64(tt_jw *w, const char *name, uint64_t v)
{
    tt_jw_obj(w);
    tt_jw_kstr(w, "name", name);
    tt_jw_kstr(w, "type", "uint64");
    tt_jw_kuint(w, "value", v);
    tt_jw_end(w);
}

static void attrs(tt_jw *w, uint64_t rf, int scope, uint32_t tid)
{
    tt_jw_karr(w, "attrs");
    attr_u64(w, "rf_id", rf);
    tt_jw_raw(w, FW_PARENT, sizeof(FW_PARENT) - 1);
    tt_jw_raw(w, SEQ_ID, sizeof(SEQ_ID) - 1);
    attr_u64(w, "scope", (uint64_t)scope);
    attr_u64(w, "tid", tid);
    tt_jw_raw(w, FW_TID, sizeof(FW_TID) - 1);
    tt_jw_raw(w, STRINGS, sizeof(STRINGS) - 1); /* three values in one */
    tt_jw_end(w);
}

/* an input's type: "Tensor(dtype)", or the type as given when it has no
 * dimensions */
static void input_type(tt_jw *w, int32_t nd, const char *dtype, int32_t dl)
{
    char t[96];
    int k = nd > 0 ? snprintf(t, sizeof(t), "Tensor(%.*s)", dl > 64 ? 64 : (int)dl, dtype)
                   : snprintf(t, sizeof(t), "%.*s", dl > 90 ? 90 : (int)dl, dtype);
    tt_cap__json_str(w, t, (size_t)k);
}

/* an inputs object: the program's shapes (s), or none */
static void inputs(tt_jw *w, const struct rec_shapes *s)
{
    static const char *const key[4] = { "values", "shapes", "types", "strides" };
    const unsigned char *p, *dims;
    const char *dtype;
    int32_t nd, dl;
    int i, part;
    if (!s) {
        tt_jw_raw(w, EMPTY_IO, sizeof(EMPTY_IO) - 1);
        return;
    }
    tt_jw_obj(w);
    for (part = 0; part < 4; part++) {
        tt_jw_karr(w, key[part]);
        p = (const unsigned char *)(s + 1);
        for (i = 0; i < s->n; i++) {
            p = tt_cap__shape_next(p, &nd, &dims, &dtype, &dl);
            switch (part) {
            case 0: tt_jw_null(w); break;
            case 1: tt_cap__json_dims(w, dims, nd); break;
            case 2: input_type(w, nd, dtype, dl); break;
            default:
                tt_jw_arr(w);
                tt_jw_end(w);
            }
        }
        tt_jw_end(w);
    }
    tt_jw_end(w);
}

struct ethread {
    const struct rec_scope **v; /* start order */
    size_t n;
    const struct rec_shapes **shp;
    struct i64map shapes;
};

static void node(tt_jw *w, int64_t id, const char *name, size_t nlen, int64_t parent,
                 const struct rec_shapes *sh, uint64_t rf, int scope, uint32_t tid)
{
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    tt_jw_kint(w, "id", id);
    tt_jw_key(w, "name");
    tt_cap__json_str(w, name, nlen);
    tt_jw_kint(w, "ctrl_deps", parent);
    tt_jw_key(w, "inputs");
    inputs(w, sh);
    tt_jw_key(w, "outputs");
    inputs(w, NULL);
    attrs(w, rf, scope, tid);
    tt_jw_end(w);
}

/* one thread's nodes: its own, then its scopes in end (append) order */
static void write_nodes(tt_jw *w, const struct trace_thread *th, const struct ethread *e,
                        int64_t tnode, const struct i64map *ids)
{
    const struct rec_hdr *h;
    const struct chunk *c;
    size_t off, v;
    static const char tname[] = "[pytorch|profiler|execution_trace|thread]";
    node(w, tnode, tname, sizeof(tname) - 1, 1, NULL, 0, TT_CAP_USER_ANNOTATION, th->logical_tid);
    for (h = tt_cap__rec_first(th, &c, &off); h; h = tt_cap__rec_next(&c, &off)) {
        const struct rec_scope *s = (const struct rec_scope *)h;
        char name[48];
        const char *nm = name;
        size_t nl, si;
        int64_t parent = tnode;
        if (h->type != REC_SCOPE && h->type != REC_STEP)
            continue;
        if (s->loc) {
            nm = s->loc->name ? s->loc->name : TT_CAP_NULL_NAME;
            nl = strlen(nm);
        } else {
            nl = (size_t)snprintf(name, sizeof(name), "ProfilerStep#%lld", (long long)s->step);
        }
        if (s->parent_rf && tt__i64map_get(ids, (int64_t)s->parent_rf, &v))
            parent = (int64_t)v;
        tt__i64map_get(ids, (int64_t)s->rf_id, &v);
        node(w, (int64_t)v, nm, nl, parent,
             e->shapes.n && tt__i64map_get(&e->shapes, (int64_t)s->rf_id, &si) ? e->shp[si] : NULL,
             s->rf_id, s->loc ? s->loc->kind : TT_CAP_USER_ANNOTATION, th->logical_tid);
    }
}

static int64_t steady_ms(int64_t mono_ns)
{
    return mono_ns / 1000000;
}

int tt_cap__write_et(const struct tt_cap_trace *tr, const char *path)
{
    struct out *o;
    struct ethread *e = calloc(tr->nth ? tr->nth : 1, sizeof(*e));
    struct i64map ids = { 0 };
    size_t i, *pos = calloc(tr->nth ? tr->nth : 1, sizeof(size_t));
    int64_t next = 2 + (int64_t)tr->nth;
    int ok = e && pos, wrote = 0;
    char when[32];
    time_t now = time(NULL);
    struct tm tmv;
    for (i = 0; ok && i < tr->nth; i++)
        ok = tt_cap__scopes(&tr->th[i], &e[i].v, &e[i].n, tr->record_shapes ? &e[i].shapes : NULL,
                            &e[i].shp) == 0;
    /* ids in start order across threads: a merge of the threads' sorted lists */
    while (ok) {
        size_t best = tr->nth;
        for (i = 0; i < tr->nth; i++)
            if (pos[i] < e[i].n &&
                (best == tr->nth || e[i].v[pos[i]]->t0 < e[best].v[pos[best]]->t0))
                best = i;
        if (best == tr->nth)
            break;
        ok = tt__i64map_put(&ids, (int64_t)e[best].v[pos[best]++]->rf_id, (size_t)next++) == 0;
    }
    o = ok ? tt_cap__out_open(path) : NULL;
    if (o) {
        static const char root[] = "[pytorch|profiler|execution_trace|process]";
        tt_jw w;
        localtime_r(&now, &tmv);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tmv);
        tt_cap__out_jw(o, &w, TT_JW_LINE);
        tt_jw_obj(&w);
        tt_jw_kstr(&w, "schema", "1.1.1-chakra.0.0.4");
        tt_jw_kint(&w, "pid", (int64_t)getpid());
        tt_jw_kstr(&w, "time", when);
        tt_jw_kint(&w, "start_ts", steady_ms(tr->start_mono));
        tt_jw_karr(&w, "nodes");
        for (i = 0; i < tr->nth; i++)
            write_nodes(&w, &tr->th[i], &e[i], 2 + (int64_t)i, &ids);
        node(&w, 1, root, sizeof(root) - 1, 1, NULL, 0, TT_CAP_USER_ANNOTATION, 0);
        tt_jw_nl(&w, 0);
        tt_jw_end(&w);
        tt_jw_kint(&w, "finish_ts", steady_ms(tr->end_mono));
        tt_jw_end(&w);
        wrote = tt_cap__out_jw_end(&w) == 0;
    }
    for (i = 0; e && i < tr->nth; i++) {
        free((void *)e[i].v);
        free((void *)e[i].shp);
        tt__i64map_free(&e[i].shapes);
    }
    free(e);
    free(pos);
    tt__i64map_free(&ids);
    if (!ok) {
        tt_cap__set_error("out of memory writing an Execution Trace");
        return TT_CAP_ENOMEM;
    }
    if (!o)
        return TT_CAP_EIO;
    return tt_cap__out_close(o, wrote) < 0 ? TT_CAP_EIO : 0;
}
