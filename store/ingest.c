/*
 * store/ingest.c - the ingest sink: trace events -> SQLite rows.
 *
 * One file is one transaction. Rows are written as the reader streams them;
 * memory holds only the string-intern table (distinct names), one stack of
 * open slices per thread, a bounded queue of row batches and the prepared
 * statements. Two threads share the work (read_threaded): a worker reads,
 * decodes, interns and links, and fills batches of rows; the calling thread
 * only binds and steps them into SQLite, in queue order. The links are made
 * while streaming where the file's order allows (store/ingest_link.c), and
 * after the last event for the rest, in O(n log n) passes over the tables:
 *   - slice depth/parent: computed while streaming from a per-thread stack
 *     (Kineto writes CPU ops sorted by start per thread); threads whose
 *     events arrive out of order are recomputed from an ordered scan;
 *   - runtime call -> CPU op: the innermost cpu_op on the same pid/tid that
 *     encloses the call (docs/TORCH.md 1.9 rule 3, valid for every era);
 *   - GPU activity -> runtime call via `correlation`, and so -> CPU op;
 *     gpu_user_annotation -> user_annotation via `External id`.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/log.h"
#include "store/ingest_state.h"
#include "formats/json.h"
#include "formats/reader_internal.h"

#include <ctype.h>
#include <sys/stat.h>
#include <pthread.h>
#include <errno.h>
#include <unistd.h>
#include <time.h>

/* ---- event sink ---- */

static void span(struct ingest *g, const tt_event *ev)
{
    int64_t end;
    if (!ev->has_ts || ev->ph == 'M')
        return;
    end = tt_end_ns(ev->ts_ns, ev->has_dur ? ev->dur_ns : 0);
    if (!g->have_span) {
        g->start_ns = ev->ts_ns;
        g->end_ns = end;
        g->have_span = 1;
        return;
    }
    if (ev->ts_ns < g->start_ns)
        g->start_ns = ev->ts_ns;
    if (end > g->end_ns)
        g->end_ns = end;
}
static int insert_slice(struct ingest *g, const tt_event *ev, int64_t cat,
                        int64_t name, const char *ph)
{
    struct rowbuf *st = &g->rbuf[R_SLICE];
    int64_t id = g->next_slice_id++, depth = 0, parent = 0;
    int nested = 0;
    struct thread *t = NULL;
    int is_op = ev->cat && (!strcmp(ev->cat, "cpu_op") || !strcmp(ev->cat, "Operator"));
    int rc;
    if (ev->has_ts) {
        t = ig_thread_of(g, &ev->pid, &ev->tid);
        if (!t)
            return tt__oom();
        if (is_op && !t->rt_dirty) {
            int64_t end = ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0);
            /*
             * The walk needs the ops in start order (longest first on a tie)
             * with their final extent, and none stored under a call already
             * linked. Otherwise the ordered pass at the end relinks the thread.
             */
            if (!ev->has_dur || (t->rt_started && ev->ts_ns <= t->max_rt_end)) {
                t->rt_dirty = g->any_rt_dirty = 1;
            } else if ((rc = ig_spool_add(g, t, id, ev->ts_ns, end, name)) != 0) {
                if (rc < 0)
                    return rc;
                t->rt_dirty = g->any_rt_dirty = 1;
            }
        }
        if (is_op && ev->has_dur && ev->dur_ns > t->max_op_dur)
            t->max_op_dur = ev->dur_ns;
        if (t->disordered || ph[0] == 'B' ||
            (rc = ig_retie(g, t, id, ev->ts_ns, ev->has_dur ? ev->dur_ns : 0, &depth,
                           &parent)) == 1) {
            if (ig_nest(t, id, ev->ts_ns, ev->has_dur ? ev->dur_ns : 0, &depth, &parent) < 0)
                return tt__oom();
        } else if (rc < 0) {
            return rc;
        }
        if (ph[0] == 'B')
            t->run_n = RUN_MAX + 1; /* its end comes later: no re-nesting */
        nested = 1;
    }
    if (!g->have_pid && !ev->pid.is_str && ev->pid.present && is_op) {
        g->pid = ev->pid.num;
        g->have_pid = 1;
    }
    if (g->fix_mode == FIX_COLLECT &&
        (rc = ig_fix_slice(g, t ? (int64_t)(t - g->threads) : -1, ev, id, name, is_op)) < 0)
        return rc;
    rb_int(st, TT_C_SL_ID, id);
    ig_rb_event_head(st, TT_C_SL_TRACE_ID, g, ph, cat, name, ev);
    rb_opt(st, TT_C_SL_DUR, ev->has_dur, ev->dur_ns);
    rb_opt(st, TT_C_SL_DEPTH, nested, depth);
    rb_opt(st, TT_C_SL_PARENT_ID, nested && parent, parent);
    rb_opt(st, TT_C_SL_EXTERNAL_ID, HAVE(TT_A_EXTERNAL_ID), ev->external_id);
    rb_opt(st, TT_C_SL_RF_ID, HAVE(TT_A_RF_ID), ev->rf_id);
    rb_opt(st, TT_C_SL_SEQ_NR, HAVE(TT_A_SEQ_NR), ev->seq_nr);
    rb_opt(st, TT_C_SL_FWD_TID, HAVE(TT_A_FWD_TID), ev->fwd_tid);
    rb_opt(st, TT_C_SL_EV_IDX, HAVE(TT_A_EV_IDX), ev->ev_idx);
    if (ev->input_dims) {
        int64_t d = ig_intern_z(g, ev->input_dims);
        if (d < 0)
            return (int)d;
        rb_int(st, TT_C_SL_INPUT_DIMS, d);
    } else {
        rb_null(st, TT_C_SL_INPUT_DIMS);
    }
    if (ev->input_types) {
        int64_t d = ig_intern_z(g, ev->input_types);
        if (d < 0)
            return (int)d;
        rb_int(st, TT_C_SL_INPUT_TYPES, d);
    } else {
        rb_null(st, TT_C_SL_INPUT_TYPES);
    }
    rb_text(st, TT_C_SL_ARGS, ev->args, ev->args_len);
    if ((rc = ig_rb_commit(g, st, "cannot store a slice")) < 0)
        return rc;
    if (ph[0] == 'B' && t) {
        if (TT_ALLOC_GROW(t->bstack, t->nb + 1, t->balloc) < 0 ||
            TT_ALLOC_GROW(t->bts, t->nb + 1, t->btsalloc) < 0)
            return tt__oom();
        t->bstack[t->nb] = id;
        t->bts[t->nb] = ev->ts_ns;
        t->nb++;
    }
    return 0;
}

static int end_slice(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name)
{
    struct thread *t = ev->has_ts ? ig_thread_of(g, &ev->pid, &ev->tid) : NULL;
    if (t && t->nb) {
        int64_t dur = ev->ts_ns - t->bts[t->nb - 1];
        int64_t id = t->bstack[--t->nb];
        struct rowbuf *rb = &g->rbuf[R_SLICE];
        struct job *j = rb->cur;
        /* the 'B' row still waiting here (slice ids are consecutive)? */
        int64_t first = j->n ? j->cells[TT_C_SL_ID].i : 0;
        if (j->n && id >= first && id - first < j->n &&
            j->cells[(id - first) * rb->ncols + TT_C_SL_ID].i == id) {
            tt__cell *c = &j->cells[(id - first) * rb->ncols + TT_C_SL_DUR];
            c->type = CELL_INT;
            c->i = dur;
        } else {
            struct job *u = ig_job_get(g);
            int rc;
            if (!u)
                return tt_error_last()->code ? tt_error_last()->code : TT_ENOMEM;
            if ((rc = ig_rb_flush(g, rb)) < 0) {
                ig_job_free_list(u);
                return rc;
            }
            u->kind = JOB_END_B;
            u->dur = dur;
            u->id = id;
            g->end_b_updates++;
            if ((rc = ig_job_put(g, u)) < 0)
                return rc;
        }
        /* fix the nesting entry pushed with dur 0 */
        t->run_n = RUN_MAX + 1;
        if (t->n && t->stack[t->n - 1].id == id)
            t->stack[t->n - 1].end = ev->ts_ns;
        else
            t->disordered = 1;
        return 0;
    }
    /* an 'E' without its 'B': keep it as an instant and count it */
    if (g->unmatched_end++ == 0)
        g->first_unmatched_off = ev->offset;
    {
        struct rowbuf *si = &g->rbuf[R_INST];
        ig_rb_event_head(si, TT_C_IN_TRACE_ID, g, "E", cat, name, ev);
        rb_null(si, TT_C_IN_DUR);
        rb_null(si, TT_C_IN_SCOPE);
        rb_null(si, TT_C_IN_EVENT_ID);
        rb_text(si, TT_C_IN_ARGS, ev->args, ev->args_len);
        return ig_rb_commit(g, si, "cannot store an instant");
    }
}

static int insert_runtime(struct ingest *g, const tt_event *ev, int64_t cat, int64_t name)
{
    struct rowbuf *st = &g->rbuf[R_RT];
    int64_t op_id = 0, rid, thr = -1;
    int rc;
    if (HAVE(TT_A_CORRELATION))
        ig_pend_prefetch(g, ev->correlation); /* one cache miss less, later */
    if (ev->has_ts) {
        struct thread *t = ig_thread_of(g, &ev->pid, &ev->tid);
        if (!t)
            return tt__oom();
        thr = (int64_t)(t - g->threads);
        op_id = ig_link_runtime_event(g, t, ev->ts_ns,
                                   ev->ts_ns + (ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0));
        if (op_id < 0)
            return TT_EDB;
    }
    rb_int(st, TT_C_RT_TRACE_ID, g->trace_id);
    rb_opt(st, TT_C_RT_CAT, cat != 0, cat);
    rb_int(st, TT_C_RT_NAME, name);
    rb_id(st, TT_C_RT_PID, &ev->pid);
    rb_id(st, TT_C_RT_TID, &ev->tid);
    rb_opt(st, TT_C_RT_TS, ev->has_ts, ev->ts_ns);
    rb_opt(st, TT_C_RT_DUR, ev->has_dur, ev->dur_ns);
    rb_opt(st, TT_C_RT_CORRELATION, HAVE(TT_A_CORRELATION), ev->correlation);
    rb_opt(st, TT_C_RT_EXTERNAL_ID, HAVE(TT_A_EXTERNAL_ID), ev->external_id);
    rb_opt(st, TT_C_RT_CBID, HAVE(TT_A_CBID), ev->cbid);
    rb_text(st, TT_C_RT_ARGS, ev->args, ev->args_len);
    rb_opt(st, TT_C_RT_OP_ID, op_id != 0, op_id);
    rid = g->next_runtime_id++;
    if (g->fix_mode == FIX_COLLECT && (rc = ig_fix_runtime(g, thr, ev, rid, op_id, name)) < 0)
        return rc;
    rb_int(st, TT_C_RT_ID, rid);
    rb_null(st, TT_C_RT_FLOW); /* flow: set by fold_flow when the ac2g flow follows */
    if ((rc = ig_rb_commit(g, st, "cannot store a runtime call")) < 0)
        return rc;
    if (op_id)
        g->res->linked_runtime++;
    if (!HAVE(TT_A_CORRELATION))
        return 0;
    g->link_rt_ts = ev->has_ts ? ev->ts_ns : TT_ROWS_NO_TS; /* for its activities */
    g->link_rt_name = name;
    g->link_rt_thr = thr;
    return ig_pend_runtime(g, ev->correlation, rid, op_id);
}

/* ---- ac2g flows folded into their rows (docs/SCHEMA.md, view flows) ---- */

static int cell_is_id(const struct rowbuf *rb, const tt__cell *c, const tt_id *id)
{
    if (!id->present)
        return c->type == CELL_NULL;
    if (id->is_str)
        return c->type == CELL_TEXT && strlen(id->str) == c->len &&
               !memcmp(rb->cur->text.buf + c->i, id->str, c->len);
    return c->type == CELL_INT && c->i == id->num;
}

static int cell_is_int(const tt__cell *c, int64_t v)
{
    return c->type == CELL_INT && c->i == v;
}

/* flow code of a row (column flow): what fold_flow folded into it */
enum { FLOW_NONE = 0, FLOW_S = 1, FLOW_F = 2 };

/* Mark the last row of rb with the flow when it is the flow's event: same
 * thread, time and correlation (cells: pid, tid, ts, correlation, flow). */
static int fold_into_row(struct rowbuf *rb, const int col[5], const tt_event *ev, int code)
{
    tt__cell *row;
    if (!rb->cur->n)
        return 0;
    row = &rb->cur->cells[(rb->cur->n - 1) * rb->ncols];
    if (!cell_is_id(rb, &row[col[0]], &ev->pid) ||
        !cell_is_id(rb, &row[col[1]], &ev->tid) || !cell_is_int(&row[col[2]], ev->ts_ns) ||
        !cell_is_int(&row[col[3]], ev->id.num) || row[col[4]].type != CELL_NULL)
        return 0;
    row[col[4]].type = CELL_INT;
    row[col[4]].i = code;
    return 1;
}

/*
 * Kineto writes an ac2g flow right after the runtime call or GPU activity it
 * belongs to, repeating that event's thread and time, with the correlation as
 * its id (one per launch and per kernel: a quarter of a trace's events). Such
 * a flow sets the row's flow column instead of taking a row of its own; the
 * view flows gives it back. Returns 1 when folded, 0 when the flow must be
 * stored as it is.
 */
static int fold_flow(struct ingest *g, const tt_event *ev)
{
    static const int rt_cols[5] = { TT_C_RT_PID, TT_C_RT_TID, TT_C_RT_TS,
                                    TT_C_RT_CORRELATION, TT_C_RT_FLOW };
    static const int gpu_cols[5] = { TT_C_GPU_PID, TT_C_GPU_TID, TT_C_GPU_TS,
                                     TT_C_GPU_CORRELATION, TT_C_GPU_FLOW };
    int64_t ring;
    int code;
    if (!ev->cat || strcmp(ev->cat, "ac2g") || !ev->name || strcmp(ev->name, "ac2g") ||
        ev->args || !ev->has_ts || !ev->id.present || ev->id.is_str)
        return 0;
    if (ev->ph == 's' && !ev->bp)
        code = FLOW_S;
    else if (ev->ph == 'f' && ev->bp && !strcmp(ev->bp, "e"))
        code = FLOW_F;
    else
        return 0;
    if (fold_into_row(&g->rbuf[R_RT], rt_cols, ev, code))
        return 1;
    if ((ring = ig_pend_find(g, ev->id.num)) >= 0) {
        struct pending *p = &g->pend[ring];
        if (p->flow || !p->ev->has_ts || p->ev->ts_ns != ev->ts_ns ||
            !id_eq(&p->ev->pid, &ev->pid) || !id_eq(&p->ev->tid, &ev->tid))
            return 0;
        p->flow = code;
        return 1;
    }
    return fold_into_row(&g->rbuf[R_GPU], gpu_cols, ev, code);
}

static int on_event(void *ctx, const tt_event *ev)
{
    struct ingest *g = ctx;
    int64_t cat = 0, name;
    char ph1[2] = { ev->ph, 0 };
    struct rowbuf *st;

    if (!ev->ph) {
        if (g->no_phase++ == 0)
            g->first_nophase_off = ev->offset;
        return 0;
    }
    if (g->skip) {
        int t = ev->ph == 's' || ev->ph == 'f' || ev->ph == 't' ? R_FLOW
                : ev->ph == 'M'                                 ? R_META
                                                                : -1;
        if (t >= 0 && (g->skip & (1u << t))) {
            if (g->rowsink)
                span(g, ev); /* the span a database would record (tt__rows_result) */
            return 0;
        }
    }
    if (ev->cat && (cat = ig_intern_z(g, ev->cat)) < 0)
        return (int)cat;
    if ((name = ig_intern_z(g, ev->name)) < 0)
        return (int)name;
    span(g, ev);

    switch (ev->ph) {
    case 'X': { /* complete event: ts + dur */
        int xc = tt_kineto_class(ev->cat);
        if (xc == TT_XC_SLICE)
            return insert_slice(g, ev, cat, name, "X");
        if (g->skip & (1u << (xc == TT_XC_RUNTIME ? R_RT : R_GPU)))
            return 0;
        if (xc == TT_XC_RUNTIME)
            return insert_runtime(g, ev, cat, name);
        if (xc != TT_XC_GPU_ANNOT && HAVE(TT_A_CORRELATION))
            return ig_pend_gpu(g, ev, cat, name);
        if (xc == TT_XC_GPU_ANNOT)
            g->n_annot++;
        return ig_insert_gpu(g, ev, cat, name, 0, 0, 0);
    }
    case 'B': /* begin of a duration slice; closed by the matching 'E' */
        return insert_slice(g, ev, cat, name, "B");
    case 'E':
        return end_slice(g, ev, cat, name);
    case 'i':
    case 'I': /* instant; "[memory]" and "[OutOfMemory]" are allocator events */
        if (!strcmp(ev->name, "[memory]") || !strcmp(ev->name, "[OutOfMemory]")) {
            st = &g->rbuf[R_MEM];
            ig_rb_event_head(st, TT_C_MEM_TRACE_ID, g, ph1, cat, name, ev);
            rb_opt(st, TT_C_MEM_DEVICE_TYPE, HAVE(TT_A_DEVICE_TYPE), ev->device_type);
            rb_opt(st, TT_C_MEM_DEVICE_ID, HAVE(TT_A_DEVICE_ID), ev->device_id);
            rb_opt(st, TT_C_MEM_ADDR, HAVE(TT_A_ADDR), ev->addr);
            rb_opt(st, TT_C_MEM_BYTES, HAVE(TT_A_BYTES), ev->bytes);
            rb_opt(st, TT_C_MEM_TOTAL_ALLOCATED, HAVE(TT_A_TOTAL_ALLOC), ev->total_allocated);
            rb_opt(st, TT_C_MEM_TOTAL_RESERVED, HAVE(TT_A_TOTAL_RESERVED), ev->total_reserved);
            rb_opt(st, TT_C_MEM_EV_IDX, HAVE(TT_A_EV_IDX), ev->ev_idx);
            rb_text(st, TT_C_MEM_ARGS, ev->args, ev->args_len);
            return ig_rb_commit(g, st, "cannot store a memory event");
        }
        break;
    case 's':
    case 'f':
    case 't': /* flow start / end / step */
        if (fold_flow(g, ev))
            return 0;
        st = &g->rbuf[R_FLOW];
        rb_int(st, TT_C_FL_TRACE_ID, g->trace_id);
        rb_text(st, TT_C_FL_PH, ph1, 1);
        rb_opt(st, TT_C_FL_CAT, cat != 0, cat);
        rb_int(st, TT_C_FL_NAME, name);
        rb_id(st, TT_C_FL_FLOW_ID, &ev->id);
        rb_id(st, TT_C_FL_PID, &ev->pid);
        rb_id(st, TT_C_FL_TID, &ev->tid);
        rb_opt(st, TT_C_FL_TS, ev->has_ts, ev->ts_ns);
        rb_text(st, TT_C_FL_BP, ev->bp, ev->bp ? strlen(ev->bp) : 0);
        rb_text(st, TT_C_FL_ARGS, ev->args, ev->args_len);
        return ig_rb_commit(g, st, "cannot store a flow event");
    case 'M': /* metadata: process/thread names, labels, sort indexes */
        st = &g->rbuf[R_META];
        ig_rb_event_head(st, TT_C_MD_TRACE_ID, g, ph1, cat, name, ev);
        if (ev->arg_name)
            rb_textz(st, TT_C_MD_VALUE, ev->arg_name);
        else if (ev->arg_labels)
            rb_textz(st, TT_C_MD_VALUE, ev->arg_labels);
        else
            rb_null(st, TT_C_MD_VALUE);
        rb_opt(st, TT_C_MD_SORT_INDEX, HAVE(TT_A_SORT_INDEX), ev->sort_index);
        rb_text(st, TT_C_MD_ARGS, ev->args, ev->args_len);
        if (ev->arg_labels && !strcmp(ev->arg_labels, "CPU") && !ev->pid.is_str &&
            ev->pid.present) {
            g->pid = ev->pid.num;
            g->have_pid = 1;
        }
        return ig_rb_commit(g, st, "cannot store a metadata event");
    default:
        break;
    }
    /* everything else (counters 'C', async 'b'/'e'/'n', other instants) */
    if (g->skip & (1u << R_INST))
        return 0;
    st = &g->rbuf[R_INST];
    ig_rb_event_head(st, TT_C_IN_TRACE_ID, g, ph1, cat, name, ev);
    rb_opt(st, TT_C_IN_DUR, ev->has_dur, ev->dur_ns);
    rb_text(st, TT_C_IN_SCOPE, ev->s, ev->s ? strlen(ev->s) : 0);
    rb_id(st, TT_C_IN_EVENT_ID, &ev->id);
    rb_text(st, TT_C_IN_ARGS, ev->args, ev->args_len);
    return ig_rb_commit(g, st, "cannot store an instant event");
}

static int on_et_node(void *ctx, const tt_et_node *n)
{
    struct ingest *g = ctx;
    struct rowbuf *st = &g->rbuf[R_ET];
    int64_t name = ig_intern_z(g, n->name), schema = 0;
    if (name < 0)
        return (int)name;
    if (n->op_schema && (schema = ig_intern_z(g, n->op_schema)) < 0)
        return (int)schema;
    rb_int(st, TT_C_ET_TRACE_ID, g->trace_id);
    rb_int(st, TT_C_ET_NODE_ID, n->id);
    rb_int(st, TT_C_ET_NAME, name);
    rb_opt(st, TT_C_ET_PARENT, n->has_parent, n->parent);
    rb_opt(st, TT_C_ET_RF_ID, n->have & TT_ET_RF_ID, n->rf_id);
    rb_opt(st, TT_C_ET_FW_PARENT, n->have & TT_ET_FW_PARENT, n->fw_parent);
    rb_opt(st, TT_C_ET_SEQ_ID, n->have & TT_ET_SEQ_ID, n->seq_id);
    rb_opt(st, TT_C_ET_SCOPE, n->have & TT_ET_SCOPE, n->scope);
    rb_opt(st, TT_C_ET_TID, n->have & TT_ET_TID, n->tid);
    rb_opt(st, TT_C_ET_FW_TID, n->have & TT_ET_FW_TID, n->fw_tid);
    rb_opt(st, TT_C_ET_OP_SCHEMA, n->op_schema != NULL, schema);
    rb_text(st, TT_C_ET_INPUTS, n->inputs, n->inputs ? strlen(n->inputs) : 0);
    rb_text(st, TT_C_ET_INPUT_SHAPES, n->input_shapes, n->input_shapes ? strlen(n->input_shapes) : 0);
    rb_text(st, TT_C_ET_INPUT_TYPES, n->input_types, n->input_types ? strlen(n->input_types) : 0);
    rb_text(st, TT_C_ET_INPUT_STRIDES, n->input_strides, n->input_strides ? strlen(n->input_strides) : 0);
    rb_text(st, TT_C_ET_OUTPUTS, n->outputs, n->outputs ? strlen(n->outputs) : 0);
    rb_text(st, TT_C_ET_OUTPUT_SHAPES, n->output_shapes, n->output_shapes ? strlen(n->output_shapes) : 0);
    rb_text(st, TT_C_ET_OUTPUT_TYPES, n->output_types, n->output_types ? strlen(n->output_types) : 0);
    rb_text(st, TT_C_ET_OUTPUT_STRIDES, n->output_strides, n->output_strides ? strlen(n->output_strides) : 0);
    rb_text(st, TT_C_ET_ATTRS, n->attrs, n->attrs ? strlen(n->attrs) : 0);
    rb_text(st, TT_C_ET_EXTRA, n->extra, n->extra ? strlen(n->extra) : 0);
    return ig_rb_commit(g, st, "cannot store an execution-trace node");
}

static int on_memrow(void *ctx, const tt_memrow *m)
{
    struct ingest *g = ctx;
    struct rowbuf *st = &g->rbuf[R_MEMTL];
    rb_int(st, TT_C_MT_TRACE_ID, g->trace_id);
    rb_int(st, TT_C_MT_TS, m->ts);
    rb_int(st, TT_C_MT_ACTION, m->action);
    rb_int(st, TT_C_MT_BYTES, m->bytes);
    rb_opt(st, TT_C_MT_CATEGORY, m->has_category, m->category);
    if (m->ts < 0) {
        /* torch's -1: live before the profile, not a time of the span */
    } else if (!g->have_span) {
        g->start_ns = g->end_ns = m->ts;
        g->have_span = 1;
    } else {
        if (m->ts < g->start_ns)
            g->start_ns = m->ts;
        if (m->ts > g->end_ns)
            g->end_ns = m->ts;
    }
    return ig_rb_commit(g, st, "cannot store a memory-timeline row");
}

static int on_format(void *ctx, tt_trace_format f)
{
    struct ingest *g = ctx;
    g->format = f;
    return 0;
}

/* top-level keys: keep all of them, and read the few we use */
static int on_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct ingest *g = ctx;
    if (g->metadata.len > 1)
        tt_buf_addch(&g->metadata, ',');
    tt_buf_add_json_string(&g->metadata, key, strlen(key));
    tt_buf_addch(&g->metadata, ':');
    tt_buf_add(&g->metadata, json, len);
    if (g->metadata.oom || tt_kineto_meta_key(&g->meta, key, json, len) < 0)
        return tt__oom();
    if (!strcmp(key, "pid") && g->meta.have_pid) {
        g->pid = g->meta.pid;
        g->have_pid = 1;
    }
    return 0;
}

static int add_issue(struct ingest *g, const char *kind, int64_t count,
                     int64_t off, const char *detail)
{
    sqlite3_stmt *st;
    int rc;
    if (!count)
        return 0;
    if (tt_db_prepare(g->db, &st,
                      "INSERT INTO import_issues(trace_id, kind, count, first_offset,"
                      " detail) VALUES(?,?,?,?,?)") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, g->trace_id);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, count);
    ig_bind_opt(st, 4, off >= 0, off);
    sqlite3_bind_text(st, 5, detail, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : ig_sqlerr(g, "cannot store import issues");
    sqlite3_finalize(st);
    return rc;
}

static int64_t scalar_i64(tt_db *db, const char *sql, int64_t arg, int *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, arg);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        v = sqlite3_column_int64(st, 0);
        *ok = 1;
    }
    sqlite3_finalize(st);
    return v;
}

static int delete_trace(tt_db *db, int64_t id)
{
    static const char *const tables[] = { "slices", "runtime", "gpu_ops", "memory",
                                          "flow_events", "instants", "metadata_events",
                                          "et_nodes", "memory_timeline",
                                          "import_issues", "traces" };
    size_t i;
    {
        /* crosscheck's links to this trace, when that table exists */
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db->sql, "DELETE FROM et_links WHERE kineto_trace_id = ?1"
                                        " OR et_trace_id = ?1", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, id);
            sqlite3_step(st);
            sqlite3_finalize(st);
        }
    }
    for (i = 0; i < TT_ARRAY_SIZE(tables); i++) {
        char sql[128];
        sqlite3_stmt *st;
        int rc;
        snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s = ?", tables[i],
                 i + 1 == TT_ARRAY_SIZE(tables) ? "id" : "trace_id");
        if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
            return tt_db_error(db, "cannot delete the old trace");
        sqlite3_bind_int64(st, 1, id);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return tt_db_error(db, "cannot delete the old trace");
    }
    return 0;
}

static double now_s(void);
/* the phase times, to the log (topic "timing"; tracetool prints them with
 * TT_TIMING=1): the time since the last one of this ingest */
static void timing(struct ingest *g, const char *what)
{
    double t;
    if (!tt__log_enabled(TT_LOG_INFO))
        return;
    t = now_s();
    tt__log(TT_LOG_INFO, "timing", "%-12s %.3f s", what, t - g->timing_t0);
    g->timing_t0 = t;
}

/* a phase after the read begins, for the caller's progress display */
static void phase(const struct ingest *g, const char *what)
{
    if (g->opts && g->opts->version >= 2 && g->opts->phase)
        g->opts->phase(g->opts->progress_payload, what);
}

static int finish_trace(struct ingest *g, const char *path, const tt_read_stats *rs)
{
    sqlite3_stmt *st;
    int rc, ok;
    size_t i;
    int64_t dup;
    char when[32];
    time_t now = time(NULL);
    struct tm tmv;
    const char *link_rule = NULL;

    /* same content already stored? */
    {
        sqlite3_stmt *q;
        if (tt_db_prepare(g->db, &q, "SELECT id FROM traces WHERE content_hash = ?1"
                                     " AND id <> ?2 ORDER BY id LIMIT 1") < 0)
            return TT_EDB;
        sqlite3_bind_text(q, 1, rs->hash, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, g->trace_id);
        dup = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
        sqlite3_finalize(q);
    }
    if (dup) {
        if (!(g->opts->flags & TT_INGEST_REPLACE))
            return tt_error_set_at(TT_EEXISTS, path, -1,
                                   "already ingested as trace %lld (same content "
                                   "hash %s); use --replace to replace it",
                                   (long long)dup, rs->hash);
        if ((rc = delete_trace(g->db, dup)) < 0)
            return rc;
        g->res->replaced_id = dup;
    }

    phase(g, "writing the last rows");
    if ((rc = ig_pend_flush(g, 0)) < 0 || (rc = ig_flush_all(g)) < 0)
        return rc;
    if (g->spool) {
        fclose(g->spool);
        g->spool = NULL;
    }
    timing(g, "read+insert");
    /* the ordered per-thread passes below read slices by thread and time */
    for (i = 0; i < g->nthreads; i++) {
        if (g->threads[i].disordered || g->threads[i].rt_dirty) {
            phase(g, "nesting ops that came out of order");
            if ((rc = tt_db_ensure_index(g->db, TT_IDX_SLICES_THREAD)) < 0)
                return rc;
            break;
        }
    }
    for (i = 0; i < g->nthreads; i++) {
        if (g->threads[i].disordered && (rc = ig_renest_thread(g, &g->threads[i])) < 0)
            return rc;
        g->unclosed_b += (int64_t)g->threads[i].nb;
    }
    if (g->format == TT_FMT_CHROME || g->format == TT_FMT_CHROME_ARRAY) {
        timing(g, "renest");
        if (g->any_rt_dirty)
            phase(g, "linking runtime calls to their ops");
        for (i = 0; i < g->nthreads; i++) {
            if (g->threads[i].rt_dirty && (rc = ig_link_runtime(g, &g->threads[i])) < 0)
                return rc;
        }
        if (g->any_rt_dirty && (rc = ig_link_runtime_gpu(g)) < 0)
            return rc;
        if (g->any_rt_dirty) {
            g->res->linked_runtime = scalar_i64(g->db, "SELECT count(*) FROM runtime"
                                                " WHERE trace_id = ?1 AND op_id IS NOT NULL",
                                                g->trace_id, &ok);
        }
        timing(g, "link runtime");
        phase(g, "linking GPU activities to their runtime calls");
        if ((rc = ig_link_gpu(g)) < 0)
            return rc;
        timing(g, "link gpu");
        link_rule = "runtime->cpu_op: innermost enclosing cpu_op on the same thread; "
                    "gpu->runtime: correlation; gpu_user_annotation->user_annotation: "
                    "External id";
    }
    if ((rc = add_issue(g, "repaired", rs->repaired, rs->first_repair_offset,
                        "strings or numbers repaired (invalid UTF-8, raw control "
                        "characters, bad escapes, NaN/Infinity, trailing commas)")) < 0 ||
        (rc = add_issue(g, "skipped_non_object", rs->skipped, rs->first_skip_offset,
                        "array elements that are not objects")) < 0 ||
        (rc = add_issue(g, "skipped_no_phase", g->no_phase, g->first_nophase_off,
                        "events without \"ph\"")) < 0 ||
        (rc = add_issue(g, "unmatched_end", g->unmatched_end, g->first_unmatched_off,
                        "'E' events without a matching 'B' (stored in instants)")) < 0 ||
        (rc = add_issue(g, "unclosed_begin", g->unclosed_b, -1,
                        "'B' events never closed (dur is NULL)")) < 0 ||
        (rc = add_issue(g, "unstorable_time", rs->bad_times, rs->first_bad_time_offset,
                        "\"ts\"/\"dur\" values that are not a time tracetool can compute"
                        " with (arrays, 1e400, a ts beyond 2^62 ns, a dur beyond 2^61 ns): NULL,"
                        " the value kept in args as \"@ts\"; memory-timeline rows with such a"
                        " time or size: skipped")) < 0 ||
        (rc = add_issue(g, "duplicate_key", rs->dup_keys, rs->first_dup_key_offset,
                        "top-level keys given twice (a second traceEvents array is read"
                        " too)")) < 0 ||
        (rc = add_issue(g, "truncated", rs->truncated ? 1 : 0, rs->bytes,
                        "input ends early; complete events before the cut kept")) < 0)
        return rc;

    if (!g->meta.have_rank) {
        int64_t r;
        if (tt_rank_from_name(path, &r)) {
            g->meta.rank = r;
            g->meta.have_rank = 1;
        }
    }
    gmtime_r(&now, &tmv);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tmv);
    if (tt_db_prepare(g->db, &st,
                      "UPDATE traces SET content_hash=?2, bytes=?3, file_bytes=?4,"
                      " gzip=?5, format=?6, schema_version=?7, rank=?8, world_size=?9,"
                      " pid=?10, base_time_ns=?11, display_time_unit=?12, trace_name=?13,"
                      " start_ns=?14, end_ns=?15, events=?16, truncated=?17,"
                      " link_rule=?18, metadata=?19, ingested_at=?20 WHERE id=?1") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, g->trace_id);
    sqlite3_bind_text(st, 2, rs->hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, rs->bytes);
    sqlite3_bind_int64(st, 4, rs->file_bytes);
    sqlite3_bind_int(st, 5, rs->gzip);
    sqlite3_bind_text(st, 6, tt_format_name(g->format), -1, SQLITE_STATIC);
    ig_bind_text(st, 7, g->meta.schema_version, g->meta.schema_version ? strlen(g->meta.schema_version) : 0);
    ig_bind_opt(st, 8, g->meta.have_rank, g->meta.rank);
    ig_bind_opt(st, 9, g->meta.have_world, g->meta.world_size);
    ig_bind_opt(st, 10, g->have_pid, g->pid);
    sqlite3_bind_int64(st, 11, g->meta.have_base ? g->meta.base_time_ns : 0);
    ig_bind_text(st, 12, g->meta.display_time_unit,
              g->meta.display_time_unit ? strlen(g->meta.display_time_unit) : 0);
    ig_bind_text(st, 13, g->meta.trace_name, g->meta.trace_name ? strlen(g->meta.trace_name) : 0);
    ig_bind_opt(st, 14, g->have_span, g->start_ns);
    ig_bind_opt(st, 15, g->have_span, g->end_ns);
    sqlite3_bind_int64(st, 16, rs->events);
    sqlite3_bind_int(st, 17, rs->truncated);
    ig_bind_text(st, 18, link_rule, link_rule ? strlen(link_rule) : 0);
    {
        tt_buf_addch(&g->metadata, '}');
        sqlite3_bind_text(st, 19, g->metadata.buf, (int)g->metadata.len, SQLITE_STATIC);
    }
    sqlite3_bind_text(st, 20, when, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : ig_sqlerr(g, "cannot record the trace");
    sqlite3_finalize(st);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- reading on a worker, writing here ---- */

struct ig_worker {
    struct ingest *g;
    const char *path;
    const tt_trace_sink *sink;
    const tt_read_options *ropts;
    tt_read_stats *stats;
    int rc;
    tt_error err;
    pthread_t th;
    int started; /* th runs (else the read happened in ig_reader_start) */
};

static void *worker_main(void *arg)
{
    struct ig_worker *w = arg;
    w->rc = tt_read_trace(w->path, w->sink, w->ropts, w->stats);
    if (w->rc < 0)
        w->err = *tt_error_last();
    tt__queue_close(&w->g->q.full); /* the writer writes what is queued first */
    return NULL;
}

/*
 * The reader, and everything that turns events into rows, runs on a worker
 * thread (ig_reader_start); the calling thread only binds and steps
 * (ig_reader_drain). Jobs are written in the order they were queued. When
 * the write fails the worker is stopped and the write's error is kept; when
 * the read fails, what was queued is still written (--salvage keeps it) and
 * the read's error is returned. No thread (it cannot be made, or
 * tt_ingest_options.jobs is 1): the read happens in ig_reader_start, each
 * job written as it is made.
 */
int ig_reader_start(struct ingest *g, struct ig_worker **out, const char *path,
                    const tt_trace_sink *sink, const tt_read_options *ropts,
                    tt_read_stats *stats)
{
    struct jobq *q = &g->q;
    struct ig_worker *w = calloc(1, sizeof(*w));
    unsigned cap = (unsigned)(ig_maxjobs(q) + R_COUNT + 2);
    *out = w;
    if (!w)
        return tt__oom();
    w->g = g;
    w->path = path;
    w->sink = sink;
    w->ropts = ropts;
    w->stats = stats;
    if (tt__queue_init(&q->full, cap) < 0 || tt__queue_init(&q->empty, cap) < 0)
        return w->rc = TT_ENOMEM;
    tt__queue_set_wake(&q->full, JOB_WAKE);
    tt__queue_set_wake(&q->empty, JOB_WAKE);
    g->threaded = 1;
    if (g->opts && g->opts->version >= 3 && g->opts->jobs == 1 && !g->local_ids) {
        g->threaded = 0;
    } else if (pthread_create(&w->th, NULL, worker_main, w) == 0) {
        w->started = 1;
        return 0;
    }
    /* no thread: read and write here (never for a file read ahead: its
     * jobs wait for its turn) */
    g->threaded = 0;
    if (g->local_ids)
        return w->rc = tt_error_set_at(TT_ENOMEM, path, -1, "cannot start a reader thread");
    w->rc = tt_read_trace(path, sink, ropts, stats);
    if (w->rc < 0)
        w->err = *tt_error_last();
    return 0;
}

/* every job left (all of them after a failure) for the writes done here */
static void reader_end(struct ingest *g, struct ig_worker *w)
{
    struct jobq *q = &g->q;
    void *v;
    while (tt__queue_drain(&q->full, &v) || tt__queue_drain(&q->empty, &v)) {
        struct job *j = v;
        j->next = q->spare;
        q->spare = j;
    }
    tt__queue_destroy(&q->full);
    tt__queue_destroy(&q->empty);
    free(w);
}

int ig_reader_drain(struct ingest *g, struct ig_worker *w)
{
    struct jobq *q = &g->q;
    int wrc = 0, rc;
    tt_error werr;
    void *v;

    memset(&werr, 0, sizeof(werr));
    while (w->started && tt__queue_get(&q->full, &v) == 1) { /* 0: the worker is done */
        struct job *j = v;
        if ((wrc = ig_run_job(g, j)) < 0) {
            /* stop the worker: its next job get or put fails */
            werr = *tt_error_last();
            tt__queue_fail(&q->full, wrc);
            tt__queue_fail(&q->empty, wrc);
            j->next = q->spare;
            q->spare = j;
            break;
        }
        tt__queue_put(&q->empty, j); /* the queue holds every job: no wait */
    }
    if (w->started)
        pthread_join(w->th, NULL);
    g->threaded = 0;
    if (wrc < 0) {
        tt_error_set_at(werr.code ? werr.code : wrc, werr.source, werr.offset, "%s",
                        werr.message);
        w->rc = wrc;
    } else if (w->rc < 0) {
        tt_error_set_at(w->err.code ? w->err.code : w->rc, w->err.source, w->err.offset, "%s",
                        w->err.message);
    }
    rc = w->rc;
    reader_end(g, w);
    return rc;
}

void ig_reader_abort(struct ingest *g, struct ig_worker *w)
{
    if (!w)
        return;
    if (w->started) {
        tt__queue_fail(&g->q.full, TT_ECANCELED);
        tt__queue_fail(&g->q.empty, TT_ECANCELED);
        pthread_join(w->th, NULL);
    }
    g->threaded = 0;
    reader_end(g, w);
}

static int read_threaded(struct ingest *g, const char *path, const tt_trace_sink *sink,
                         const tt_read_options *ropts, tt_read_stats *stats)
{
    struct ig_worker *w;
    int rc = ig_reader_start(g, &w, path, sink, ropts, stats);
    if (rc < 0) {
        ig_reader_abort(g, w);
        return rc;
    }
    return ig_reader_drain(g, w);
}

/* the rows of tt__ingest_rows could not be linked without the SQL passes */
static int needs_db(const struct ingest *g)
{
    return g->any_rt_dirty || g->gpu_late > 0 || g->end_b_updates > 0;
}

/*
 * tt__ingest_rows: once the rows need a database, the consumer will read
 * the file into one instead, so stop here rather than read the rest twice.
 */
static int on_event_rows(void *ctx, const tt_event *ev)
{
    struct ingest *g = ctx;
    int rc = on_event(ctx, ev);
    if (rc == 0 && !(g->skip & TT_ROWS_NO_STOP) && needs_db(g)) {
        g->stopped_for_db = 1;
        return TT_ECANCELED;
    }
    return rc;
}

void ig_set_sink(tt_trace_sink *sink, struct ingest *g)
{
    memset(sink, 0, sizeof(*sink));
    sink->ctx = g;
    sink->on_format = on_format;
    sink->on_meta = on_meta;
    sink->on_event = g->rowsink ? on_event_rows : on_event;
    sink->on_et_node = on_et_node;
    sink->on_memrow = on_memrow;
}

/* the prepared statements (and row buffers): before COMMIT or ROLLBACK */
void ig_release_statements(struct ingest *g)
{
    int i;
    for (i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(g->st[i]);
        g->st[i] = NULL;
    }
    for (i = 0; i < R_COUNT; i++)
        ig_rb_release(&g->rbuf[i]);
}

/* what both entry points free at the end */
void ig_release(struct ingest *g)
{
    ig_release_statements(g);
    ig_job_free_list(g->q.spare);
    g->q.spare = NULL;
    ig_pend_release(g);
    ig_threads_release(g);
    if (g->spool)
        fclose(g->spool);
    g->spool = NULL;
    tt_strtab_release(&g->strs);
    tt_buf_release(&g->metadata);
    tt_kineto_meta_release(&g->meta);
}

/* one reading of tt__ingest_rows; fix: TT_ROWS_RELINK's fix-ups, made
 * (FIX_COLLECT: nothing is handed over) or applied (FIX_APPLY) */
static int rows_read(const char *path, const tt__rowsink *rowsink, unsigned read_flags,
                     unsigned skip, tt__rows_result *res, struct ig_fix *fix, int fix_mode)
{
    struct ingest g;
    tt_ingest_result ires;
    tt_ingest_options defopts = TT_INGEST_OPTIONS_INIT;
    tt_read_options ropts = TT_READ_OPTIONS_INIT;
    tt_trace_sink sink;
    size_t i;
    int rc;

    memset(res, 0, sizeof(*res));
    memset(&g, 0, sizeof(g));
    memset(&ires, 0, sizeof(ires));
    g.opts = &defopts;
    g.res = &ires;
    g.rowsink = rowsink;
    g.skip = skip;
    g.trace_id = 1;
    g.next_slice_id = 1;
    g.next_runtime_id = 1;
    g.fix = fix;
    g.fix_mode = fix_mode;
    tt_error_clear();
    tt_buf_init(&g.metadata);
    tt_buf_addch(&g.metadata, '{');
    if ((rc = ig_rbufs_init(&g)) < 0 || (fix_mode == FIX_APPLY && (rc = ig_fix_start(fix)) < 0))
        goto out;
    ig_set_sink(&sink, &g);
    /*
     * Here the consumer is light: decoding goes to the reader's own thread
     * (TT_READ_THREADED) and the linking stays with the consumer, which
     * balances the two cores better than tt_ingest_file's split.
     */
    ropts.flags = read_flags | TT_READ_THREADED;
    rc = tt_read_trace(path, &sink, &ropts, &res->stats);
    if (rc < 0 && g.stopped_for_db) {
        rc = 0; /* the rest is not read: the caller goes through a database */
        tt_error_clear();
    } else if (rc < 0 ||
               /* the last rows, here (no worker any more) */
               (rc = ig_pend_flush(&g, 0)) < 0 || (rc = ig_flush_all(&g)) < 0) {
        goto out;
    }
    if (fix_mode == FIX_COLLECT && (rc = ig_fix_compute(&g)) < 0)
        goto out;
    res->format = g.format;
    res->needs_db = fix_mode ? 0 : needs_db(&g);
    res->why_db = g.any_rt_dirty ? "runtime calls to relink (ops out of order on a thread)"
                  : g.gpu_late ? "GPU activities whose runtime call was not near them"
                  : g.end_b_updates ? "'B' slices closed after their row was handed over"
                                    : NULL;
    res->have_rank = g.meta.have_rank;
    res->rank = g.meta.rank;
    res->have_world = g.meta.have_world;
    res->world_size = g.meta.world_size;
    res->have_pid = g.have_pid;
    res->pid = g.pid;
    res->have_span = g.have_span;
    res->start_ns = g.start_ns;
    res->end_ns = g.end_ns;
    for (i = 0; i < g.nthreads && !fix_mode; i++) /* else nested again */
        res->disordered_threads += g.threads[i].disordered != 0;
    if (!res->have_rank && tt_rank_from_name(path, &res->rank))
        res->have_rank = 1;
    tt_buf_addch(&g.metadata, '}');
    if (g.metadata.oom || !(res->metadata = strndup(g.metadata.buf, g.metadata.len)))
        rc = tt__oom();
out:
    ig_release(&g);
    return rc;
}

static int discard_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                        const char *text)
{
    (void)ctx, (void)table, (void)nrows, (void)ncols, (void)cells, (void)text;
    return 0;
}

/*
 * TT_ROWS_RELINK: the file read twice, with the same flags and tables (so
 * its rows get the same ids): the first reading hands nothing over and
 * keeps what the SQL passes after a load read, the second hands the rows
 * over as those passes leave them (store/ingest_fix.c). No database.
 */
static int rows_relinked(const char *path, const tt__rowsink *rowsink, unsigned read_flags,
                         unsigned skip, tt__rows_result *res)
{
    tt__rowsink none = { NULL, discard_rows, NULL, NULL, NULL, NULL };
    struct ingest g;
    int rc;
    skip = (skip & ~TT_ROWS_RELINK) | TT_ROWS_NO_STOP;
    memset(&g, 0, sizeof(g));
    if ((rc = ig_fix_new(&g)) < 0)
        return rc;
    rc = rows_read(path, &none, read_flags, skip, res, g.fix, FIX_COLLECT);
    free(res->metadata);
    res->metadata = NULL;
    if (rc == 0)
        rc = rows_read(path, rowsink, read_flags, skip, res, g.fix, FIX_APPLY);
    ig_fix_free(g.fix);
    return rc;
}

int tt__ingest_rows(const char *path, const tt__rowsink *rowsink, unsigned read_flags,
                    unsigned skip, tt__rows_result *res)
{
    if (skip & TT_ROWS_RELINK)
        return rows_relinked(path, rowsink, read_flags, skip, res);
    return rows_read(path, rowsink, read_flags, skip, res, NULL, FIX_NONE);
}

int64_t ig_next_id(tt_db *db, const char *table)
{
    char sql[64];
    int ok;
    int64_t v;
    snprintf(sql, sizeof(sql), "SELECT max(id) + 1 FROM %s WHERE ?1", table);
    v = scalar_i64(db, sql, 1, &ok);
    return ok ? v : 1;
}

/*
 * The transaction's start, on the writing thread: the statements, the
 * traces row (g->trace_id), the indexes; with the database's ids (strings,
 * next slice and runtime ids) unless the file is read with ids of its own.
 */
int ig_begin(struct ingest *g, const char *path)
{
    tt_db *db = g->db;
    sqlite3_stmt *st;
    const char *base;
    int rc;

    if ((rc = tt_db_exec(db, "BEGIN IMMEDIATE")) < 0)
        return rc;
    if ((rc = ig_prepare_statements(g)) < 0)
        return rc;
    if (!g->local_ids) {
        if ((rc = ig_load_strings(g)) < 0)
            return rc;
        g->next_slice_id = ig_next_id(db, "slices");
        g->next_runtime_id = ig_next_id(db, "runtime");
        if ((rc = ig_rbufs_init(g)) < 0)
            return rc;
    }
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if ((rc = tt_db_prepare(db, &st,
                            "INSERT INTO traces(path, file_name, content_hash, format,"
                            " ingested_at, tool_version) VALUES(?,?,'','unknown','',?)")) < 0)
        return rc;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, base, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, TT_VERSION, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return ig_sqlerr(g, "cannot record the trace");
    /* read with ids of its own, g->trace_id is its reader's until it is
     * joined (ingest_jobs.c sets it then) */
    g->res->trace_id = sqlite3_last_insert_rowid(db->sql);
    if (!g->local_ids)
        g->trace_id = g->res->trace_id;
    /*
     * Indexes first: their keys arrive mostly in order (per thread, or
     * growing ids), so keeping them up to date costs less than sorting
     * afterwards, and leaves no sort to wait for at the end.
     */
    if ((rc = tt_db_create_indexes(db)) < 0)
        return rc;
    return 0;
}

/* after the rows: the SQL passes, the traces row; then the statements go */
int ig_finish(struct ingest *g, const char *path, const tt_read_stats *rs)
{
    return finish_trace(g, path, rs);
}

void ig_phase(const struct ingest *g, const char *what)
{
    phase(g, what);
}

void ig_timing(struct ingest *g, const char *what)
{
    timing(g, what);
}

double ig_now_s(void)
{
    return now_s();
}

/* tt_ingest_file with reader flags and tables left out (1 << R_*) */
static int ingest_into(tt_db *db, const char *path, const tt_ingest_options *opts,
                       tt_ingest_result *res, unsigned read_flags, unsigned skip,
                       const tt__rowtap *tap)
{
    struct ingest g;
    tt_ingest_result local;
    tt_ingest_options defopts = TT_INGEST_OPTIONS_INIT;
    tt_read_options ropts = TT_READ_OPTIONS_INIT;
    tt_trace_sink sink;
    int rc;
    double t0 = now_s();

    if (!res)
        res = &local;
    if (!opts)
        opts = &defopts;
    memset(res, 0, sizeof(*res));
    memset(&g, 0, sizeof(g));
    g.timing_t0 = t0;
    g.db = db;
    g.opts = opts;
    g.res = res;
    g.skip = skip;
    g.tap = tap;
    tt_error_clear();
    if (db->readonly)
        return tt_error_set_at(TT_EIO, db->path, -1, "database opened read-only");
    tt_buf_init(&g.metadata);
    tt_buf_addch(&g.metadata, '{');

    if ((rc = ig_begin(&g, path)) < 0)
        goto fail;
    if (tap && (rc = tap->start(tap->ctx, db)) != 0) {
        rc = rc < 0 ? rc : TT_ECANCELED;
        goto fail;
    }
    ig_set_sink(&sink, &g);
    ropts.flags |= read_flags;
    ropts.progress = opts->progress;
    ropts.progress_payload = opts->progress_payload;
    rc = read_threaded(&g, path, &sink, &ropts, &res->stats);
    if (rc == TT_ETRUNCATED && (opts->flags & TT_INGEST_SALVAGE)) {
        rc = 0;
    }
    if (rc < 0)
        goto fail;
    if ((rc = finish_trace(&g, path, &res->stats)) < 0)
        goto fail;
    if (tap && (rc = tap->finish(tap->ctx)) != 0) {
        rc = rc < 0 ? rc : TT_ECANCELED;
        goto fail;
    }
    ig_release_statements(&g);
    phase(&g, "committing");
    if ((rc = tt_db_exec(db, "COMMIT")) < 0)
        goto fail;
    timing(&g, "commit");
    phase(&g, "");
    res->rows = g.rows;
    res->unmatched_end = g.unmatched_end;
    res->no_phase = g.no_phase;
    res->seconds = now_s() - t0;
    rc = 0;
    goto out;
fail:
    ig_rollback(&g, path, rc);
out:
    ig_release(&g);
    return rc;
}

/* a failure: the transaction undone, the first error kept */
void ig_rollback(struct ingest *g, const char *path, int rc)
{
    tt_error saved = *tt_error_last();
    ig_release_statements(g);
    sqlite3_exec(g->db->sql, "ROLLBACK", NULL, NULL, NULL);
    if (!saved.source[0])
        snprintf(saved.source, sizeof(saved.source), "%s", path);
    tt_error_set_at(saved.code ? saved.code : rc, saved.source, saved.offset, "%s",
                    saved.message);
    g->res->trace_id = 0;
}

int tt_ingest_file(tt_db *db, const char *path, const tt_ingest_options *opts,
                   tt_ingest_result *res)
{
    return ingest_into(db, path, opts, res, 0, 0, NULL);
}

int tt_db_open_input(tt_db **out, const char *path)
{
    struct stat sb;
    tt_dir_walk w;
    size_t k;
    int rc;
    *out = NULL;
    if (strcmp(path, "-") && tt_is_sqlite_file(path))
        return tt_db_open(out, path, TT_DB_READONLY);
    if (!strcmp(path, "-") || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        if ((rc = tt__open_ingested_temp(out, path)) < 0)
            tt_error_set_source(path); /* the input, not the temporary database */
        return rc;
    }
    if ((rc = tt__open_temp_db(out, "input")) < 0)
        return rc;
    if (!((*out)->source = strdup(path))) { /* errors name the directory */
        tt_db_free(*out);
        *out = NULL;
        return tt__oom();
    }
    if ((rc = tt_walk_traces(path, &w)) == 0 && !w.nfiles)
        rc = tt_error_set_at(TT_ENOTFOUND, path, -1, "no trace files in this directory");
    for (k = 0; rc == 0 && k < w.nfiles; k++)
        rc = tt_ingest_file(*out, w.files[k], NULL, NULL);
    tt_dir_walk_free(&w);
    if (rc < 0) {
        tt_db_free(*out);
        *out = NULL;
    }
    return rc;
}

/* db_internal.h: a file ingested into a temporary database */
int tt__open_ingested_temp(tt_db **out, const char *trace)
{
    return tt__open_ingested_temp_only(out, trace, 0, 0);
}

int tt__open_ingested_temp_only(tt_db **out, const char *trace, unsigned read_flags,
                                unsigned skip)
{
    return tt__open_ingested_temp_tap(out, trace, read_flags, skip, NULL);
}

int tt__open_ingested_temp_tap(tt_db **out, const char *trace, unsigned read_flags,
                               unsigned skip, const tt__rowtap *tap)
{
    tt_db *db = NULL;
    int rc;
    *out = NULL;
    if ((rc = tt__open_temp_db(&db, "db")) < 0)
        return rc;
    if (!(db->source = strdup(trace))) {
        tt_db_free(db);
        return tt__oom();
    }
    if ((rc = ingest_into(db, trace, NULL, NULL, read_flags, skip, tap)) < 0) {
        tt_db_free(db);
        return rc;
    }
    /* the analysis pass sorts in SQLite: keep its cache small, sort on both cores */
    tt_db_exec(db, "PRAGMA cache_size=-16384; PRAGMA threads=2");
    *out = db;
    return 0;
}
