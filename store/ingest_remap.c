/*
 * store/ingest_remap.c - the ids of a file read ahead of its turn mapped to
 * the database's as the writer writes each batch (ig_remap_job; see
 * store/ingest_jobs.c): strings through the writer's table of the database's
 * strings, slice and runtime ids plus their bases, the trace id.
 */
#include "common/compat.h"
#include "store/ingest_state.h"

/* where an id sits in a row: which kind of id */
enum { K_TRACE, K_STR, K_SLICE, K_RT };
struct idcol {
    int col, kind;
};

#define END_ { -1, 0 }
static const struct idcol cols_slice[] = {
    { TT_C_SL_ID, K_SLICE },         { TT_C_SL_TRACE_ID, K_TRACE },
    { TT_C_SL_CAT, K_STR },          { TT_C_SL_NAME, K_STR },
    { TT_C_SL_PARENT_ID, K_SLICE },  { TT_C_SL_INPUT_DIMS, K_STR },
    { TT_C_SL_INPUT_TYPES, K_STR },  END_
};
static const struct idcol cols_rt[] = {
    { TT_C_RT_TRACE_ID, K_TRACE }, { TT_C_RT_CAT, K_STR }, { TT_C_RT_NAME, K_STR },
    { TT_C_RT_OP_ID, K_SLICE },    { TT_C_RT_ID, K_RT },   END_
};
static const struct idcol cols_gpu[] = {
    { TT_C_GPU_TRACE_ID, K_TRACE },  { TT_C_GPU_CAT, K_STR },      { TT_C_GPU_NAME, K_STR },
    { TT_C_GPU_RUNTIME_ID, K_RT },   { TT_C_GPU_OP_ID, K_SLICE },  END_
};
static const struct idcol cols_mem[] = {
    { TT_C_MEM_TRACE_ID, K_TRACE }, { TT_C_MEM_CAT, K_STR }, { TT_C_MEM_NAME, K_STR }, END_
};
static const struct idcol cols_flow[] = {
    { TT_C_FL_TRACE_ID, K_TRACE }, { TT_C_FL_CAT, K_STR }, { TT_C_FL_NAME, K_STR }, END_
};
static const struct idcol cols_inst[] = {
    { TT_C_IN_TRACE_ID, K_TRACE }, { TT_C_IN_CAT, K_STR }, { TT_C_IN_NAME, K_STR }, END_
};
static const struct idcol cols_meta[] = {
    { TT_C_MD_TRACE_ID, K_TRACE }, { TT_C_MD_CAT, K_STR }, { TT_C_MD_NAME, K_STR }, END_
};
static const struct idcol cols_et[] = {
    { TT_C_ET_TRACE_ID, K_TRACE }, { TT_C_ET_NAME, K_STR }, { TT_C_ET_OP_SCHEMA, K_STR }, END_
};
static const struct idcol cols_memtl[] = { { TT_C_MT_TRACE_ID, K_TRACE }, END_ };
#undef END_

static const struct idcol *const idcols[R_COUNT] = {
    [R_SLICE] = cols_slice, [R_RT] = cols_rt,     [R_GPU] = cols_gpu,
    [R_MEM] = cols_mem,     [R_FLOW] = cols_flow, [R_INST] = cols_inst,
    [R_META] = cols_meta,   [R_ET] = cols_et,     [R_MEMTL] = cols_memtl,
};

static int bad_id(const struct ingest *g, const char *what, int64_t id)
{
    (void)g;
    return tt_error_set_at(TT_ERROR, "", -1, "internal error: %s id %lld read ahead has no"
                           " database id", what, (long long)id);
}

/* a batch of strings: each to the database's id; only the new ones stay */
static int remap_strings(struct ingest *g, struct job *j)
{
    struct ig_remap *m = g->remap;
    int r, keep = 0, nc = g->rbuf[R_STR].ncols;
    for (r = 0; r < j->n; r++) {
        tt__cell *c = &j->cells[r * nc];
        const char *s = j->text.buf + c[TT_C_STR_S].i;
        size_t len = c[TT_C_STR_S].len, slot = 0;
        uint64_t h = tt_strhash(s, len);
        int64_t local = c[TT_C_STR_ID].i, id;
        if (local < 1)
            return bad_id(g, "string", local);
        if ((size_t)local >= m->nsmap) {
            size_t n = (size_t)local + 1;
            if (TT_ALLOC_GROW(m->smap, n, m->asmap) < 0)
                return tt__oom();
            memset(m->smap + m->nsmap, 0, (n - m->nsmap) * sizeof(*m->smap));
            m->nsmap = n;
        }
        if (!m->strs->nslots && tt_strtab_rehash(m->strs) < 0)
            return tt__oom();
        id = tt_strtab_find(m->strs, s, len, h, &slot);
        if (!id) {
            id = m->strs->next_id ? m->strs->next_id : 1;
            if (tt_strtab_add(m->strs, s, len, h, id) < 0)
                return tt__oom();
            c[TT_C_STR_ID].i = id;
            if (keep != r)
                memmove(&j->cells[keep * nc], c, sizeof(*c) * (size_t)nc);
            keep++;
        }
        m->smap[local] = id;
    }
    j->n = keep;
    return 0;
}

int ig_remap_job(struct ingest *g, struct job *j)
{
    struct ig_remap *m = g->remap;
    const struct idcol *ic;
    int r, nc;
    if (j->kind == JOB_END_B) {
        j->id += m->slice_base;
        return 0;
    }
    if (j->table == R_STR)
        return remap_strings(g, j);
    ic = idcols[j->table];
    nc = g->rbuf[j->table].ncols;
    for (r = 0; r < j->n; r++) {
        tt__cell *row = &j->cells[r * nc];
        const struct idcol *k;
        for (k = ic; k->col >= 0; k++) {
            tt__cell *c = &row[k->col];
            if (c->type != CELL_INT)
                continue;
            switch (k->kind) {
            case K_TRACE:
                c->i = m->trace_id;
                break;
            case K_SLICE:
                c->i += m->slice_base;
                break;
            case K_RT:
                c->i += m->rt_base;
                break;
            default:
                if (c->i < 1 || (size_t)c->i >= m->nsmap || !m->smap[c->i])
                    return bad_id(g, "string", c->i);
                c->i = m->smap[c->i];
                break;
            }
        }
    }
    return 0;
}
