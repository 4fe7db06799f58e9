/*
 * export/export_rows.c - `tracetool export` as a consumer of the
 * ingest's rows (store/ingest_rows.h), from a file or a database alike:
 * each event row becomes a record of the sort (export_state.h says how),
 * the metadata rows give the thread names, the ProfilerStep#N slices the
 * step windows. Nothing here depends on how the tables interleave.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "formats/json.h"
#include "formats/kineto.h"
#include "export/export_state.h"

#include <errno.h>
#include <inttypes.h>
#include <strings.h>

/* bytes of records sorted in memory before they are written as a run */
#define SORT_MEM ((size_t)8 << 20)
/* the largest string id kept in the direct table (ids are dense) */
#define STR_ID_MAX (((int64_t)1) << 31)

static int spool_err(void)
{
    return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
}

/* ---------------------------------------------------------------- cells */

static const tt__cell *cell(const tt__cell *row, int c)
{
    return &row[c];
}

static void idv_of(struct idv *v, const tt__cell *c, const char *text)
{
    v->type = c->type == TT_CELL_INT ? V_INT : c->type == TT_CELL_TEXT ? V_TEXT : V_NULL;
    v->i = c->type == TT_CELL_INT ? c->i : 0;
    v->s = c->type == TT_CELL_TEXT ? text + c->i : NULL;
    v->len = c->type == TT_CELL_TEXT ? c->len : 0;
}

/* a string by id, or NULL (an id the strings do not hold: a LEFT JOIN's NULL) */
static const char *str_at(const struct ex *x, const tt__cell *c)
{
    if (c->type != TT_CELL_INT || c->i < 0 || c->i >= x->str_n || !x->str_off[c->i])
        return NULL;
    return x->str_pool.buf + x->str_off[c->i] - 1;
}

static int str_add(struct ex *x, int64_t id, const char *s, size_t len)
{
    size_t off;
    if (id < 0 || id >= STR_ID_MAX)
        return tt_error_set(TT_EINVALID, "string id %" PRId64 " out of range", id);
    if (id >= x->str_n) {
        int64_t n = x->str_n ? x->str_n : 1024;
        size_t *no;
        uint8_t *ns;
        while (n <= id)
            n *= 2;
        if (!(no = realloc(x->str_off, (size_t)n * sizeof(*no))))
            return tt__oom();
        x->str_off = no;
        if (!(ns = realloc(x->str_step, (size_t)n)))
            return tt__oom();
        x->str_step = ns;
        memset(no + x->str_n, 0, (size_t)(n - x->str_n) * sizeof(*no));
        memset(ns + x->str_n, 0, (size_t)(n - x->str_n));
        x->str_n = n;
    }
    off = x->str_pool.len;
    tt_buf_add(&x->str_pool, s, len);
    tt_buf_addch(&x->str_pool, '\0');
    if (x->str_pool.oom)
        return tt__oom();
    x->str_off[id] = off + 1;
    /* LIKE 'ProfilerStep#%' and atoll, as `averages --steps` */
    if (x->o->steps_set && len >= 13 && !strncasecmp(s, "ProfilerStep#", 13)) {
        long long k = atoll(x->str_pool.buf + off + 13);
        x->str_step[id] = k >= x->o->step_from && k <= x->o->step_to;
    } else {
        x->str_step[id] = 0;
    }
    return 0;
}

/* ---------------------------------------------------------------- records */

static void r_u8(tt_buf *b, int v)
{
    tt_buf_addch(b, (char)v);
}

static void r_i64(tt_buf *b, int64_t v)
{
    tt_buf_add(b, &v, sizeof(v));
}

static void r_idv(tt_buf *b, const struct idv *v)
{
    r_u8(b, v->type);
    if (v->type == V_INT) {
        r_i64(b, v->i);
    } else if (v->type == V_TEXT) {
        uint32_t n = (uint32_t)v->len;
        tt_buf_add(b, &n, sizeof(n));
        tt_buf_add(b, v->s, v->len);
    }
}

/* a string part: its length, patched by str_end */
static size_t str_begin(tt_buf *b)
{
    uint32_t n = 0;
    tt_buf_add(b, &n, sizeof(n));
    return b->len;
}

static void str_end(tt_buf *b, size_t at)
{
    uint32_t n = (uint32_t)(b->len - at);
    if (!b->oom)
        memcpy(b->buf + at - sizeof(n), &n, sizeof(n));
}

const uint8_t *tt__xp_get_idv(const uint8_t *p, struct idv *v)
{
    v->type = *p++;
    v->i = 0;
    v->s = NULL;
    v->len = 0;
    if (v->type == V_INT) {
        memcpy(&v->i, p, sizeof(v->i));
        p += sizeof(v->i);
    } else if (v->type == V_TEXT) {
        uint32_t n;
        memcpy(&n, p, sizeof(n));
        p += sizeof(n);
        v->s = (const char *)p;
        v->len = n;
        p += n;
    }
    return p;
}

const uint8_t *tt__xp_get_str(const uint8_t *p, const char **s, uint32_t *len)
{
    memcpy(len, p, sizeof(*len));
    *s = (const char *)p + sizeof(*len);
    return p + sizeof(*len) + *len;
}

void tt__xp_key_add(tt_buf *k, const struct idv *v)
{
    tt_buf_addch(k, (char)v->type);
    if (v->type == V_INT) {
        tt_buf_add(k, &v->i, sizeof(v->i));
    } else if (v->type == V_TEXT) {
        tt_buf_add(k, v->s, v->len);
        tt_buf_addch(k, '\0');
    }
}

/* ---------------------------------------------------------------- runs */

int tt__xp_key_cmp(const void *a, const void *b)
{
    const struct xkey *p = a, *q = b;
    if (p->ts != q->ts)
        return p->ts < q->ts ? -1 : 1;
    if (p->table != q->table)
        return p->table < q->table ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* the sort buffer, sorted, as a run of its trace (x->mem_owner) */
static int spill(struct ex *x)
{
    struct xtrace *t = x->mem_owner;
    struct xrun run;
    size_t i;
    if (!t || !x->nkeys)
        goto done;
    if (!x->spool && !(x->spool = tt__tmpfile()))
        return TT_EIO;
    TT_QSORT(x->keys, x->nkeys, sizeof(*x->keys), tt__xp_key_cmp);
    run.off = x->spool_end;
    for (i = 0; i < x->nkeys; i++) {
        const struct xkey *k = &x->keys[i];
        uint8_t h[21];
        memcpy(h, &k->len, 4);
        memcpy(h + 4, &k->ts, 8);
        memcpy(h + 12, &k->seq, 8);
        h[20] = (uint8_t)k->table;
        if (fwrite(h, 1, sizeof(h), x->spool) != sizeof(h) ||
            fwrite(x->recs.buf + k->off, 1, k->len, x->spool) != k->len)
            return spool_err();
        x->spool_end += (int64_t)sizeof(h) + k->len;
    }
    run.len = x->spool_end - run.off;
    if (TT_ALLOC_GROW(t->runs, t->nruns + 1, t->aruns) < 0)
        return tt__oom();
    t->runs[t->nruns++] = run;
done:
    x->nkeys = 0;
    tt_buf_reset(&x->recs);
    if (t)
        t->in_mem = 0;
    x->mem_owner = NULL;
    return 0;
}

/* the record just written from off on, with its key */
static int rec_done(struct ex *x, size_t off, int table, int64_t ts, int64_t seq)
{
    struct xkey *k;
    if (x->recs.oom || TT_ALLOC_GROW(x->keys, x->nkeys + 1, x->akeys) < 0)
        return tt__oom();
    k = &x->keys[x->nkeys++];
    k->ts = ts;
    k->seq = seq;
    k->table = table;
    k->len = (uint32_t)(x->recs.len - off);
    k->off = off;
    x->mem_owner = x->t;
    x->t->in_mem = 1;
    return x->recs.len >= SORT_MEM ? spill(x) : 0;
}

/* ---------------------------------------------------------------- rendering */

/* a cell as JSON: integer, string, or null */
static void put_cell(tt_buf *b, const tt__cell *c, const char *text)
{
    if (c->type == TT_CELL_INT)
        xb_i64(b, c->i);
    else if (c->type == TT_CELL_TEXT)
        tt_buf_add_json_string(b, text + c->i, c->len);
    else
        BPUTS(b, "null");
}

static const char *cell_ph(const tt__cell *c, const char *text, char *buf)
{
    size_t n = c->type == TT_CELL_TEXT ? c->len : 0;
    if (!n)
        return "i";
    if (n > 63)
        n = 63; /* the ingest writes one character */
    memcpy(buf, text + c->i, n);
    buf[n] = '\0';
    return buf;
}

/* args: the columns the store took out of them, then what it kept as JSON */
static void arg_key(tt_buf *b, int *n, const char *key)
{
    const char *open = (*n)++ ? "," : ",\"args\":{";
    BPUTS(b, open);
    tt_buf_add_json_string(b, key, strlen(key));
    BPUTS(b, ":");
}

static void arg_cell(tt_buf *b, int *n, const tt__cell *c, const char *text, const char *key)
{
    if (c->type == TT_CELL_NULL)
        return;
    arg_key(b, n, key);
    put_cell(b, c, text);
}

/* a string that holds JSON text (Input Dims): written as it is */
static void arg_raw(tt_buf *b, int *n, const char *s, const char *key)
{
    if (!s)
        return;
    arg_key(b, n, key);
    tt_buf_addstr(b, s);
}

static void arg_triple(tt_buf *b, int *n, const tt__cell *c, const char *text, const char *key)
{
    int k;
    if (c->type == TT_CELL_NULL)
        return;
    arg_key(b, n, key);
    for (k = 0; k < 3; k++) {
        BPUTS(b, k ? "," : "[");
        put_cell(b, c + k, text);
    }
    BPUTS(b, "]");
}

/* the stored args object, its members after those of the columns; then } */
static void args_end(tt_buf *b, int *n, const tt__cell *c, const char *text)
{
    const char *a = c->type == TT_CELL_TEXT ? text + c->i : NULL;
    size_t len = a ? c->len : 0;
    if (len > 2 && a[0] == '{' && a[len - 1] == '}') {
        const char *open = (*n)++ ? "," : ",\"args\":{";
        BPUTS(b, open);
        bput(b, a + 1, len - 2);
    }
    BPUTS(b, *n ? "}}" : "}");
}

static void put_dur(tt_buf *b, const tt__cell *c, int required)
{
    if (!required && c->type == TT_CELL_NULL)
        return;
    BPUTS(b, ",\"dur\":");
    xb_us(b, c->type == TT_CELL_INT ? c->i : 0); /* a complete event needs one: 0 */
}

/* ,"key":value when the cell has one */
static void put_opt(tt_buf *b, const tt__cell *c, const char *text, const char *key)
{
    if (c->type == TT_CELL_NULL)
        return;
    BPUTS(b, ",\"");
    BPUTS(b, key);
    BPUTS(b, "\":");
    put_cell(b, c, text);
}

/* the columns of a table that every event has */
struct head {
    int name, cat, pid, tid, ts;
};

static const struct head heads[T_COUNT] = {
    { TT_C_SL_NAME, TT_C_SL_CAT, TT_C_SL_PID, TT_C_SL_TID, TT_C_SL_TS },
    { TT_C_RT_NAME, TT_C_RT_CAT, TT_C_RT_PID, TT_C_RT_TID, TT_C_RT_TS },
    { TT_C_GPU_NAME, TT_C_GPU_CAT, TT_C_GPU_PID, TT_C_GPU_TID, TT_C_GPU_TS },
    { TT_C_MEM_NAME, TT_C_MEM_CAT, TT_C_MEM_PID, TT_C_MEM_TID, TT_C_MEM_TS },
    { TT_C_FL_NAME, TT_C_FL_CAT, TT_C_FL_PID, TT_C_FL_TID, TT_C_FL_TS },
    { TT_C_IN_NAME, TT_C_IN_CAT, TT_C_IN_PID, TT_C_IN_TID, TT_C_IN_TS },
};

static int gpu_kind(const tt__cell *c, const char *text)
{
    const char *k = c->type == TT_CELL_TEXT ? text + c->i : NULL;
    size_t n = k ? c->len : 0;
    if (!k)
        return TT_EXPORT_GPU_OTHER;
    if (n == 6 && !memcmp(k, "kernel", 6))
        return TT_EXPORT_KERNELS;
    if (n == 6 && !memcmp(k, "memcpy", 6))
        return TT_EXPORT_MEMCPY;
    return n == 6 && !memcmp(k, "memset", 6) ? TT_EXPORT_MEMSET : TT_EXPORT_GPU_OTHER;
}

/* the table's part after "ts" up to the flow/async id (tail1), *idc the id's
 * cell (-1: none), *kind the TT_EXPORT_* */
static void tail1(struct ex *x, int table, const tt__cell *r, const char *text, const char *ph,
                  int *idc, int *kind)
{
    tt_buf *b = &x->recs;
    int n = 0;
    *idc = -1;
    switch (table) {
    case T_SLICE:
        put_dur(b, cell(r, TT_C_SL_DUR), 1); /* a B/E pair is stored as one slice: X */
        arg_cell(b, &n, cell(r, TT_C_SL_EXTERNAL_ID), text, "External id");
        arg_cell(b, &n, cell(r, TT_C_SL_RF_ID), text, "Record function id");
        arg_cell(b, &n, cell(r, TT_C_SL_SEQ_NR), text, "Sequence number");
        arg_cell(b, &n, cell(r, TT_C_SL_FWD_TID), text, "Fwd thread id");
        arg_cell(b, &n, cell(r, TT_C_SL_EV_IDX), text, "Ev Idx");
        arg_raw(b, &n, str_at(x, cell(r, TT_C_SL_INPUT_DIMS)), "Input Dims");
        arg_raw(b, &n, str_at(x, cell(r, TT_C_SL_INPUT_TYPES)), "Input type");
        args_end(b, &n, cell(r, TT_C_SL_ARGS), text);
        *kind = TT_EXPORT_SLICES;
        break;
    case T_RUNTIME:
        put_dur(b, cell(r, TT_C_RT_DUR), 1);
        arg_cell(b, &n, cell(r, TT_C_RT_CBID), text, "cbid");
        arg_cell(b, &n, cell(r, TT_C_RT_CORRELATION), text, "correlation");
        arg_cell(b, &n, cell(r, TT_C_RT_EXTERNAL_ID), text, "External id");
        args_end(b, &n, cell(r, TT_C_RT_ARGS), text);
        *kind = TT_EXPORT_RUNTIME;
        break;
    case T_GPU:
        put_dur(b, cell(r, TT_C_GPU_DUR), 1);
        arg_cell(b, &n, cell(r, TT_C_GPU_DEVICE), text, "device");
        arg_cell(b, &n, cell(r, TT_C_GPU_STREAM), text, "stream");
        arg_cell(b, &n, cell(r, TT_C_GPU_CONTEXT), text, "context");
        arg_cell(b, &n, cell(r, TT_C_GPU_CORRELATION), text, "correlation");
        arg_cell(b, &n, cell(r, TT_C_GPU_EXTERNAL_ID), text, "External id");
        arg_cell(b, &n, cell(r, TT_C_GPU_REGISTERS), text, "registers per thread");
        arg_cell(b, &n, cell(r, TT_C_GPU_SHARED_MEM), text, "shared memory");
        arg_cell(b, &n, cell(r, TT_C_GPU_BYTES), text, "bytes");
        arg_triple(b, &n, cell(r, TT_C_GPU_GRID_X), text, "grid");
        arg_triple(b, &n, cell(r, TT_C_GPU_BLOCK_X), text, "block");
        args_end(b, &n, cell(r, TT_C_GPU_ARGS), text);
        *kind = gpu_kind(cell(r, TT_C_GPU_KIND), text);
        break;
    case T_MEMORY:
        if (ph[0] == 'i' || ph[0] == 'I')
            BPUTS(b, ",\"s\":\"t\"");
        arg_cell(b, &n, cell(r, TT_C_MEM_DEVICE_TYPE), text, "Device Type");
        arg_cell(b, &n, cell(r, TT_C_MEM_DEVICE_ID), text, "Device Id");
        arg_cell(b, &n, cell(r, TT_C_MEM_ADDR), text, "Addr");
        arg_cell(b, &n, cell(r, TT_C_MEM_BYTES), text, "Bytes");
        arg_cell(b, &n, cell(r, TT_C_MEM_TOTAL_ALLOCATED), text, "Total Allocated");
        arg_cell(b, &n, cell(r, TT_C_MEM_TOTAL_RESERVED), text, "Total Reserved");
        arg_cell(b, &n, cell(r, TT_C_MEM_EV_IDX), text, "Ev Idx");
        args_end(b, &n, cell(r, TT_C_MEM_ARGS), text);
        *kind = TT_EXPORT_MEMORY;
        break;
    case T_FLOW:
        if (cell(r, TT_C_FL_FLOW_ID)->type != TT_CELL_NULL)
            *idc = TT_C_FL_FLOW_ID;
        *kind = TT_EXPORT_FLOWS;
        break;
    default:
        put_dur(b, cell(r, TT_C_IN_DUR), 0);
        put_opt(b, cell(r, TT_C_IN_SCOPE), text, "s");
        if (cell(r, TT_C_IN_EVENT_ID)->type != TT_CELL_NULL)
            *idc = TT_C_IN_EVENT_ID;
        *kind = ph[0] == 'C' && !ph[1] ? TT_EXPORT_COUNTERS : TT_EXPORT_INSTANTS;
    }
}

/* what comes after the id (flows and instants) */
static void tail2(struct ex *x, int table, const tt__cell *r, const char *text)
{
    tt_buf *b = &x->recs;
    int n = 0;
    if (table == T_FLOW) {
        put_opt(b, cell(r, TT_C_FL_BP), text, "bp");
        args_end(b, &n, cell(r, TT_C_FL_ARGS), text);
    } else if (table == T_INSTANT) {
        args_end(b, &n, cell(r, TT_C_IN_ARGS), text);
    }
}

/*
 * One event row as a record: runtime id, kind, folded flow, pid, tid, the
 * head ({"ph":..,"cat":..,"name":..), tail1, the id, tail2, the correlation
 * of the folded flow.
 */
static int event_row(struct ex *x, int table, const tt__cell *r, const char *text)
{
    const struct head *h = &heads[table];
    const tt__cell *tsc = cell(r, h->ts);
    const char *name = str_at(x, cell(r, h->name)), *cat = str_at(x, cell(r, h->cat));
    static const char *const fixed_ph[T_COUNT] = { "X", "X", "X", NULL, NULL, NULL };
    static const int ph_col[T_COUNT] = { 0, 0, 0, TT_C_MEM_PH, TT_C_FL_PH, TT_C_IN_PH };
    char phb[64];
    const char *ph;
    tt_buf *b = &x->recs;
    struct idv v;
    int64_t seq = x->t->seq[table]++, rt = INT64_MIN;
    int idc, kind, flow = 0, corr = -1;
    size_t off, at;
    if (tsc->type != TT_CELL_INT || !name)
        return 0; /* no ts: not written; no name: not a row the store joins */
    ph = fixed_ph[table] ? fixed_ph[table] : cell_ph(cell(r, ph_col[table]), text, phb);
    if (table == T_SLICE) {
        seq = cell(r, TT_C_SL_ID)->i;
    } else if (table == T_RUNTIME) {
        seq = cell(r, TT_C_RT_ID)->i;
        corr = TT_C_RT_CORRELATION;
        flow = cell(r, TT_C_RT_FLOW)->type != TT_CELL_NULL ? 1 + (cell(r, TT_C_RT_FLOW)->i != 1) : 0;
    } else if (table == T_GPU) {
        corr = TT_C_GPU_CORRELATION;
        flow = cell(r, TT_C_GPU_FLOW)->type != TT_CELL_NULL ? 1 + (cell(r, TT_C_GPU_FLOW)->i != 1) : 0;
        if (cell(r, TT_C_GPU_RUNTIME_ID)->type == TT_CELL_INT)
            rt = cell(r, TT_C_GPU_RUNTIME_ID)->i;
    }
    off = b->len;
    r_i64(b, rt);
    r_u8(b, 0); /* kind, below */
    r_u8(b, flow);
    idv_of(&v, cell(r, h->pid), text);
    r_idv(b, &v);
    idv_of(&v, cell(r, h->tid), text);
    r_idv(b, &v);
    at = str_begin(b);
    BPUTS(b, "{\"ph\":");
    tt_buf_add_json_string(b, ph, strlen(ph));
    if (cat) {
        BPUTS(b, ",\"cat\":");
        tt_buf_add_json_string(b, cat, strlen(cat));
    }
    BPUTS(b, ",\"name\":");
    tt_buf_add_json_string(b, name, strlen(name));
    str_end(b, at);
    at = str_begin(b);
    tail1(x, table, r, text, ph, &idc, &kind);
    str_end(b, at);
    r_u8(b, idc >= 0);
    if (idc >= 0) {
        idv_of(&v, cell(r, idc), text);
        r_idv(b, &v);
    }
    at = str_begin(b);
    tail2(x, table, r, text);
    str_end(b, at);
    if (flow) {
        idv_of(&v, cell(r, corr), text);
        r_idv(b, &v);
    }
    if (!b->oom)
        b->buf[off + 8] = (char)kind;
    return rec_done(x, off, table, tsc->i, seq);
}

static int xp_counter(struct ex *x, int64_t ts, const char *name, const char *key,
                      const char *num)
{
    static const struct idv none = { V_NULL, 0, NULL, 0 };
    tt_buf *b = &x->recs;
    size_t off = b->len, at;
    r_i64(b, INT64_MIN);
    r_u8(b, TT_EXPORT_COUNTERS);
    r_u8(b, 0); /* no flow */
    r_idv(b, &none);
    r_idv(b, &none); /* no pid, no tid: the process's track (export_write.c) */
    at = str_begin(b);
    BPUTS(b, "{\"ph\":\"C\",\"cat\":\"tracetool\",\"name\":");
    tt_buf_add_json_string(b, name, strlen(name));
    str_end(b, at);
    at = str_begin(b);
    BPUTS(b, ",\"args\":{");
    tt_buf_add_json_string(b, key, strlen(key));
    BPUTS(b, ":");
    tt_buf_addstr(b, num);
    BPUTS(b, "}}");
    str_end(b, at);
    r_u8(b, 0); /* no id */
    at = str_begin(b);
    str_end(b, at);
    return rec_done(x, off, T_INSTANT, ts, x->t->seq[T_INSTANT]++);
}

/* ---------------------------------------------------------------- windows, names */

static int add_window(struct xtrace *t, int64_t a, int64_t b)
{
    if (TT_ALLOC_GROW(t->win, 2 * t->nwin + 2, t->awin) < 0)
        return tt__oom();
    t->win[2 * t->nwin] = a;
    t->win[2 * t->nwin + 1] = b;
    t->nwin++;
    return 0;
}

/* a step slice's window; a runtime call's (id, ts) for the GPU activities */
static int step_rows(struct ex *x, int table, const tt__cell *r)
{
    const tt__cell *ts;
    if (table == T_SLICE) {
        const tt__cell *n = cell(r, TT_C_SL_NAME), *d = cell(r, TT_C_SL_DUR);
        ts = cell(r, TT_C_SL_TS);
        if (n->type != TT_CELL_INT || n->i < 0 || n->i >= x->str_n || !x->str_step[n->i] ||
            ts->type != TT_CELL_INT)
            return 0;
        return add_window(x->t, ts->i, tt_sat_add(ts->i, d->type == TT_CELL_INT ? d->i : 0));
    }
    ts = cell(r, TT_C_RT_TS);
    if (ts->type == TT_CELL_INT && cell(r, TT_C_RT_ID)->type == TT_CELL_INT) {
        int64_t p[2] = { cell(r, TT_C_RT_ID)->i, ts->i };
        if (!x->rtspool && !(x->rtspool = tt__tmpfile()))
            return TT_EIO;
        if (fwrite(p, sizeof(p), 1, x->rtspool) != 1)
            return spool_err();
        x->rt_count++;
    }
    return 0;
}

/* a > b as SQLite's max() of texts compares them (bytes, then length) */
static int text_gt(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c > 0 : al > bl;
}

/* the largest value of one kind of name of one pid (and tid) */
static int name_set(struct ex *x, const char *kind, const struct idv *p, const struct idv *t,
                    const char *v, size_t vl)
{
    struct xtrace *tr = x->t;
    tt_buf *k = &x->scratch;
    size_t slot;
    uint64_t h;
    int64_t i;
    tt_buf_reset(k);
    tt_buf_addstr(k, kind);
    tt__xp_key_add(k, p);
    if (t)
        tt__xp_key_add(k, t);
    if (k->oom)
        return tt__oom();
    h = tt_strhash(k->buf, k->len);
    i = tr->nmap.nslots ? tt_strtab_find(&tr->nmap, k->buf, k->len, h, &slot) : 0;
    if (i > 0) {
        char *old = tr->names[i - 1], *d;
        if (!text_gt(v, vl, old, strlen(old)))
            return 0;
        if (!(d = strndup(v, vl)))
            return tt__oom();
        free(old);
        tr->names[i - 1] = d;
        return 0;
    }
    if (TT_ALLOC_GROW(tr->names, tr->nnames + 1, tr->anames) < 0 ||
        !(tr->names[tr->nnames] = strndup(v, vl)))
        return tt__oom();
    tr->nnames++;
    if (tt_strtab_add(&tr->nmap, k->buf, k->len, h, (int64_t)tr->nnames) < 0)
        return tt__oom();
    return 0;
}

/* the first cpu_op with a numeric pid (the store's traces.pid when no
 * metadata names the profiled process) */
static void op_pid(struct ex *x, const tt__cell *r)
{
    const char *cat = str_at(x, cell(r, TT_C_SL_CAT));
    const tt__cell *id = cell(r, TT_C_SL_ID);
    struct xtrace *t = x->t;
    if (cat && (!strcmp(cat, "cpu_op") || !strcmp(cat, "Operator")) &&
        cell(r, TT_C_SL_PID)->type == TT_CELL_INT && (!t->have_op_pid || id->i < t->op_id)) {
        t->op_pid = cell(r, TT_C_SL_PID)->i;
        t->op_id = id->i;
        t->have_op_pid = 1;
    }
}

/* process_name, process_labels and thread_name (the store's processes and
 * threads views); labels "CPU" name the profiled process (traces.pid) */
static int meta_row(struct ex *x, const tt__cell *r, const char *text)
{
    const char *name = str_at(x, cell(r, TT_C_MD_NAME));
    const tt__cell *val = cell(r, TT_C_MD_VALUE);
    const char *v = val->type == TT_CELL_TEXT ? text + val->i : NULL;
    size_t vl = v ? val->len : 0;
    struct idv p, t;
    int thread;
    if (!name)
        return 0;
    thread = !strcmp(name, "thread_name");
    idv_of(&p, cell(r, TT_C_MD_PID), text);
    idv_of(&t, cell(r, TT_C_MD_TID), text);
    if (v && vl == 3 && !memcmp(v, "CPU", 3) && p.type == V_INT && !thread &&
        strcmp(name, "process_name")) {
        x->t->label_pid = p.i;
        x->t->have_label_pid = 1;
    }
    if (!v)
        return 0;
    if (thread)
        return name_set(x, "T", &p, &t, v, vl);
    if (!strcmp(name, "process_name"))
        return name_set(x, "N", &p, NULL, v, vl);
    if (!strcmp(name, "process_labels"))
        return name_set(x, "L", &p, NULL, v, vl);
    return 0;
}

/* ---------------------------------------------------------------- the sink */

static int table_of(int rows_table)
{
    switch (rows_table) {
    case TT_ROWS_SLICE: return T_SLICE;
    case TT_ROWS_RUNTIME: return T_RUNTIME;
    case TT_ROWS_GPU: return T_GPU;
    case TT_ROWS_MEMORY: return T_MEMORY;
    case TT_ROWS_FLOW: return T_FLOW;
    case TT_ROWS_INSTANT: return T_INSTANT;
    default: return -1;
    }
}

static int on_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct ex *x = ctx;
    int i, t = table_of(table), rc = 0;
    if (x->ctr)
        rc = tt__xp_ctr_rows(x, table, nrows, ncols, cells, text);
    for (i = 0; rc == 0 && i < nrows; i++) {
        const tt__cell *r = cells + (size_t)i * (size_t)ncols;
        if (table == TT_ROWS_STR) {
            rc = str_add(x, r[TT_C_STR_ID].i, text + r[TT_C_STR_S].i, r[TT_C_STR_S].len);
        } else if (table == TT_ROWS_META) {
            rc = meta_row(x, r, text);
        } else if (t >= 0) {
            if (t == T_SLICE)
                op_pid(x, r);
            if (x->o->steps_set && (t == T_SLICE || t == T_RUNTIME))
                rc = step_rows(x, t, r);
            if (rc == 0 && !x->t->start_known) {
                const tt__cell *ts = cell(r, heads[t].ts);
                if (ts->type == TT_CELL_INT && (!x->t->have_start || ts->i < x->t->start)) {
                    x->t->start = ts->i;
                    x->t->have_start = 1;
                }
            }
            if (rc == 0)
                rc = event_row(x, t, r, text);
        }
    }
    if (rc < 0)
        x->err = rc;
    return rc;
}

void tt__xp_sink(struct ex *x, tt__rowsink *sink)
{
    memset(sink, 0, sizeof(*sink));
    sink->ctx = x;
    sink->rows = on_rows;
    if (x->ctr)
        sink->gpu_links = tt__xp_ctr_links;
}

/* ---------------------------------------------------------------- traces */

int tt__xp_trace_begin(struct ex *x, struct xtrace *t)
{
    int rc = 0;
    if (x->mem_owner && x->mem_owner != t)
        rc = spill(x);
    x->t = t;
    if (x->str_n)
        memset(x->str_off, 0, (size_t)x->str_n * sizeof(*x->str_off));
    tt_buf_reset(&x->str_pool);
    x->err = 0;
    x->rt_count = 0;
    if (x->rtspool && fseek(x->rtspool, 0, SEEK_SET) != 0)
        rc = spool_err();
    tt_buf_init(&t->nmap.pool);
    return rc == 0 ? tt__xp_ctr_begin(x, xp_counter) : rc;
}

static int win_cmp(const void *a, const void *b)
{
    const int64_t *p = a, *q = b;
    return p[0] < q[0] ? -1 : p[0] > q[0];
}

static void win_normalize(struct xtrace *t)
{
    size_t i, k = 0;
    if (t->nwin > 1)
        TT_QSORT(t->win, t->nwin, 2 * sizeof(*t->win), win_cmp);
    for (i = 0; i < t->nwin; i++) {
        int64_t a = t->win[2 * i], b = t->win[2 * i + 1];
        if (b < a)
            continue;
        if (k && a <= t->win[2 * k - 1]) {
            if (b > t->win[2 * k - 1])
                t->win[2 * k - 1] = b;
            continue;
        }
        t->win[2 * k] = a;
        t->win[2 * k + 1] = b;
        k++;
    }
    t->nwin = k;
}

/* ts in a window (the windows are sorted and disjoint) */
int tt__xp_in_windows(const struct xtrace *t, int64_t ts)
{
    size_t lo = 0, hi = t->nwin;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->win[2 * mid] <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ts <= t->win[2 * (lo - 1) + 1];
}

/* the runtime calls of the trace (rtspool) as 2 bits per id: has a ts, in
 * a window */
static int runtime_bits(struct ex *x, struct xtrace *t)
{
    int64_t p[2], lo = INT64_MAX, hi = INT64_MIN, i;
    if (!x->rt_count || !t->nwin)
        return 0;
    for (i = 0; i < 2; i++) {
        int64_t k;
        if (fflush(x->rtspool) != 0 || fseek(x->rtspool, 0, SEEK_SET) != 0)
            return spool_err();
        for (k = 0; k < x->rt_count; k++) {
            if (fread(p, sizeof(p), 1, x->rtspool) != 1)
                return tt_error_set(TT_EIO, "cannot read a temporary file");
            if (i == 0) {
                lo = p[0] < lo ? p[0] : lo;
                hi = p[0] > hi ? p[0] : hi;
            } else {
                t->rtbits[(p[0] - lo) / 4] |=
                    (uint8_t)((1 | (tt__xp_in_windows(t, p[1]) ? 2 : 0)) << (2 * ((p[0] - lo) % 4)));
            }
        }
        if (i == 0) {
            if (hi - lo >= ((int64_t)1 << 36) || !(t->rtbits = calloc((size_t)((hi - lo) / 4 + 1), 1)))
                return tt__oom();
            t->rt_lo = lo;
            t->rt_n = hi - lo + 1;
        }
    }
    return fseek(x->rtspool, 0, SEEK_SET) != 0 ? spool_err() : 0;
}

/* deviceProperties and distributedInfo (minified, first of each) and the
 * base time, from the top-level keys the ingest kept */
static int trace_meta(struct xtrace *t, const char *meta)
{
    tt_kineto_meta m;
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    tt_buf b = TT_BUF_INIT, key = TT_BUF_INIT;
    const char *k;
    size_t kl;
    int rc = 0;
    memset(&m, 0, sizeof(m));
    if (!meta)
        return 0;
    tt_jp_init(&jp, "", meta, 0, meta, strlen(meta));
    if (tt_jp_peek(&jp) != TT_JT_OBJECT || tt_jp_object_begin(&jp) != 0)
        return 0;
    while (rc == 0 && tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
        char **dst = kl == 16 && !memcmp(k, "deviceProperties", 16)  ? &t->devprops
                     : kl == 15 && !memcmp(k, "distributedInfo", 15) ? &t->distinfo
                                                                      : NULL;
        tt_buf_reset(&b);
        tt_buf_reset(&key);
        tt_buf_add(&key, k, kl);
        tt_buf_addch(&key, '\0');
        if (tt_jp_minify(&jp, &b) < 0)
            break;
        if (b.oom || key.oom || tt_kineto_meta_key(&m, key.buf, b.buf, b.len) < 0)
            rc = tt__oom();
        else if (dst && !*dst && !(*dst = strndup(b.buf, b.len)))
            rc = tt__oom();
    }
    t->base = m.have_base ? m.base_time_ns : 0;
    t->have_meta_pid = m.have_pid;
    t->meta_pid = m.pid;
    tt_kineto_meta_release(&m);
    tt_buf_release(&b);
    tt_buf_release(&key);
    tt_arena_release(&a);
    return rc;
}

int tt__xp_trace_end(struct ex *x, const char *metadata)
{
    struct xtrace *t = x->t;
    int rc = tt__xp_ctr_end(x);
    if (rc == 0)
        rc = trace_meta(t, metadata);
    t->have_cpu_pid = t->have_label_pid || t->have_meta_pid || t->have_op_pid;
    t->cpu_pid = t->have_label_pid ? t->label_pid : t->have_meta_pid ? t->meta_pid : t->op_pid;
    if (!t->start_known && !t->have_start)
        t->start = 0;
    if (rc == 0 && x->o->steps_set) {
        t->nsteps = t->nwin;
        win_normalize(t);
        rc = runtime_bits(x, t);
    }
    return rc;
}

void tt__xp_trace_free(struct ex *x, struct xtrace *t)
{
    size_t i;
    if (!t)
        return;
    if (x->mem_owner == t) {
        x->nkeys = 0;
        tt_buf_reset(&x->recs);
        x->mem_owner = NULL;
    }
    if (x->t == t) {
        x->t = NULL;
        tt__xp_ctr_free(x);
    }
    for (i = 0; i < t->nnames; i++)
        free(t->names[i]);
    free(t->names);
    tt_strtab_release(&t->nmap);
    free(t->file);
    free(t->devprops);
    free(t->distinfo);
    free(t->win);
    free(t->runs);
    free(t->rtbits);
    free(t);
}

void tt__xp_rows_release(struct ex *x)
{
    tt__xp_ctr_free(x);
    free(x->str_off);
    free(x->str_step);
    tt_buf_release(&x->str_pool);
    tt_buf_release(&x->recs);
    free(x->keys);
    if (x->spool)
        fclose(x->spool);
    if (x->rtspool)
        fclose(x->rtspool);
}
