/*
 * compare/crosscheck/crosscheck_report.c - the result of `tracetool crosscheck` and its
 * report: a checked pair's working structures are turned into the public
 * tt_xc_pair (counts, per-thread rows, samples with their names), then the
 * text or json report is printed from the result alone, its lists through
 * the table writer (tracetool/table.h).
 */
#include "compare/crosscheck/crosscheck_state.h"
#include "report/json.h"
#include "report/table_json.h"
#include "tracetool/table.h"

/* ---------------------------------------------------------------- result */

const char *xc_key_name(int key)
{
    switch (key) {
    case K_RF: return "rf_id";
    case K_EXT_OFFSET: return "external_id";
    case K_EXT_ORDER: return "external_id_order";
    default: return "none";
    }
}

static const char *key_label(int key)
{
    return key == K_RF ? "Record function id" : "External id";
}

void xc_trace_export(const struct tinfo *t, tt_xc_trace *out)
{
    out->id = t->id;
    out->path = t->path;
    out->has_pid = t->has_pid;
    out->pid = t->pid;
    out->has_rank = t->has_rank;
    out->rank = t->rank;
}

void xc_pair_clear(tt_xc_pair *p)
{
    size_t i;
    free(p->et.path);
    free(p->kineto.path);
    free(p->threads);
    for (i = 0; i < p->net_only_ops; i++)
        free(p->et_only_ops[i].name);
    free(p->et_only_ops);
    for (i = 0; i < p->nkineto_only_ops; i++)
        free(p->kineto_only_ops[i].name);
    free(p->kineto_only_ops);
    for (i = 0; i < p->nmismatches; i++) {
        free(p->mismatches[i].et_name);
        free(p->mismatches[i].kineto_name);
    }
    free(p->mismatches);
    for (i = 0; i < p->nduplicates; i++) {
        free(p->duplicates[i].name1);
        free(p->duplicates[i].name2);
    }
    free(p->duplicates);
    memset(p, 0, sizeof(*p));
}

static void export_thread(const struct result *r, const struct trow *t, tt_xc_thread *o)
{
    size_t k;
    o->has_et_tid = t->has_et;
    o->et_tid = t->et_tid;
    o->has_kineto = t->kt >= 0;
    if (t->kt >= 0) {
        o->kineto_pid = r->kt[t->kt].pid;
        o->kineto_tid = r->kt[t->kt].tid;
    }
    o->et_ops = t->et_ops;
    o->matched = t->matched;
    o->et_only = t->et_only;
    o->kineto_only = t->k_only;
    o->name_mismatch = t->name_diff;
    o->has_key = t->has_key;
    o->key_lo = t->key_lo;
    o->key_hi = t->key_hi;
    o->has_ts = t->has_ts;
    o->ts_lo = t->ts_lo;
    o->ts_hi = t->ts_hi;
    for (k = 0; k < t->nsegs && k < TT_XC_MAX_SEGMENTS; k++) {
        o->segments[k].rf_from = t->segs[k].rf_from;
        o->segments[k].offset = t->segs[k].off;
        o->segments[k].count = t->segs[k].n;
    }
    o->nsegments = k;
    o->segments_total = t->segs_total;
}

/* the ET-side duplicate runs, then the Kineto ones, `limit` in all */
static int export_dups(struct xc *x, const struct pair *p, tt_xc_pair *o)
{
    const struct result *r = p->r;
    size_t i, k = 0;
    if (!(o->duplicates = calloc(x->limit ? x->limit : 1, sizeof(*o->duplicates))))
        return xc_oom();
    for (i = 1; i < p->nrf && k < x->limit; i++) {
        tt_xc_duplicate *d;
        size_t j;
        if (p->ops[i].rf != p->ops[i - 1].rf || (i >= 2 && p->ops[i - 2].rf == p->ops[i].rf))
            continue;
        for (j = i; j + 1 < p->nrf && p->ops[j + 1].rf == p->ops[i].rf; j++)
            ;
        d = &o->duplicates[o->nduplicates++];
        k++;
        d->et_side = 1;
        d->id = p->ops[i].rf;
        d->count = (int64_t)(j - i + 2);
        if (!(d->name1 = xc_str_dup(x, p->ops[i - 1].name)) ||
            !(d->name2 = xc_str_dup(x, p->ops[i].name)))
            return xc_oom();
    }
    for (i = 0; i < r->nkdups && k < x->limit; i++, k++) {
        tt_xc_duplicate *d = &o->duplicates[o->nduplicates++];
        d->et_side = 0;
        d->id = r->kdups[i].id;
        d->count = r->kdups[i].count;
        if (!(d->name1 = xc_str_dup(x, r->kdups[i].name1)) ||
            !(d->name2 = xc_str_dup(x, r->kdups[i].name2)))
            return xc_oom();
    }
    return 0;
}

/* the first `limit` ET-only ops, Kineto-only ops and name mismatches */
static int export_samples(struct xc *x, const struct pair *p, tt_xc_pair *o)
{
    const struct result *r = p->r;
    size_t n = x->limit ? x->limit : 1, i;
    o->et_only_ops = calloc(n, sizeof(*o->et_only_ops));
    o->kineto_only_ops = calloc(n, sizeof(*o->kineto_only_ops));
    o->mismatches = calloc(n, sizeof(*o->mismatches));
    if (!o->et_only_ops || !o->kineto_only_ops || !o->mismatches)
        return xc_oom();
    for (i = 0; i < p->n && (o->net_only_ops < x->limit || o->nmismatches < x->limit); i++) {
        const struct etop *op = &p->ops[i];
        const struct match *m = &r->m[i];
        if (m->state == M_NONE && o->net_only_ops < x->limit) {
            tt_xc_et_op *e = &o->et_only_ops[o->net_only_ops++];
            e->has_rf_id = op->has_rf;
            e->rf_id = op->rf;
            e->node_id = op->node_id;
            e->has_tid = op->has_tid;
            e->tid = op->tid;
            if (!(e->name = xc_str_dup(x, op->name)))
                return xc_oom();
        } else if (m->state == M_NAME && o->nmismatches < x->limit) {
            tt_xc_mismatch *e = &o->mismatches[o->nmismatches++];
            e->has_rf_id = op->has_rf;
            e->rf_id = op->rf;
            e->node_id = op->node_id;
            e->kineto_key = m->kkey;
            e->slice_id = m->slice;
            if (!(e->et_name = xc_str_dup(x, op->name)) ||
                !(e->kineto_name = xc_str_dup(x, m->kname)))
                return xc_oom();
        }
    }
    for (i = 0; i < r->nkonly; i++) {
        const struct koff *ko = &r->konly[i];
        tt_xc_kineto_op *e = &o->kineto_only_ops[o->nkineto_only_ops++];
        e->slice_id = ko->slice;
        e->key = ko->key;
        e->ts = ko->ts;
        e->has_tid = ko->kt >= 0;
        if (ko->kt >= 0)
            e->tid = r->kt[ko->kt].tid;
        if (!(e->name = xc_str_dup(x, ko->name)))
            return xc_oom();
    }
    return export_dups(x, p, o);
}

/* The public result of a checked pair (paths copied; free with xc_pair_clear). */
int xc_export_pair(struct xc *x, const struct pair *p, tt_xc_pair *o)
{
    const struct result *r = p->r;
    size_t i;
    int64_t outside = p->k_total - (r->key == K_RF ? p->k_rf_nonzero : r->k_inwin);
    memset(o, 0, sizeof(*o));
    o->paired = 1;
    xc_trace_export(p->et, &o->et);
    xc_trace_export(p->k, &o->kineto);
    o->et.path = o->kineto.path = NULL;
    if (!(o->et.path = strdup(p->et->path)) || !(o->kineto.path = strdup(p->k->path)))
        return xc_oom();
    memcpy(o->paired_by, p->how, sizeof(o->paired_by));
    o->et_nodes = p->et_nodes;
    o->et_roots = p->et_roots;
    o->et_ops = (int64_t)p->n;
    o->kineto_ops = p->k_total;
    o->kineto_with_rf_id = p->k_rf_nonzero;
    o->kineto_with_external_id = p->k_ext;
    o->rule_applies = p->k_rf_nonzero > 0;
    o->rule_holds = p->rule_equal;
    o->rule_et_ids = p->rule_et_n;
    o->rule_et_only = p->rule_et_only;
    o->rule_kineto_only = p->rule_k_only;
    o->key = r->key;
    o->offset = r->offset;
    o->has_constant = r->has_const;
    o->constant_offset = r->const_off;
    o->constant_matched = r->const_matched;
    o->has_key = r->has_key;
    o->key_lo = r->key_lo;
    o->key_hi = r->key_hi;
    o->has_ts = r->has_ts;
    o->ts_lo = r->ts_lo;
    o->ts_hi = r->ts_hi;
    o->matched = r->matched;
    o->et_only = r->et_only;
    o->kineto_only = r->k_only;
    o->name_mismatch = r->name_diff;
    o->duplicate_et = p->dup_et;
    o->duplicate_kineto = r->dup_k;
    o->kineto_outside = outside < 0 ? 0 : outside;
    o->consistent = p->consistent;
    if (r->nrows && !(o->threads = calloc(r->nrows, sizeof(*o->threads))))
        return xc_oom();
    for (i = 0; i < r->nrows; i++)
        export_thread(r, &r->rows[i], &o->threads[o->nthreads++]);
    return export_samples(x, p, o);
}

/* ---------------------------------------------------------------- tables */

/* The report's lists are tables (tracetool/table.h): the per-thread rows
 * (text and JSON), the closing summary (text) and the JSON lists of
 * offenders and unpaired traces. */

/* an optional integer: null when absent, or (text) "-" */
static int set_opt(tt_table *t, size_t col, int has, int64_t v, int text)
{
    if (has)
        tt_table_set_int(t, col, v);
    else if (text)
        return tt_table_set_text(t, col, "-");
    return 0;
}

/* an id that may be an integer or a string (NULL, or a null id: absent) */
static int set_id(tt_table *t, size_t col, const tt_xc_id *v, int text)
{
    if (v && v->type == TT_XC_ID_INT)
        tt_table_set_int(t, col, v->i);
    else if (v && v->type == TT_XC_ID_TEXT)
        return tt_table_set_text(t, col, v->s);
    else if (text)
        return tt_table_set_text(t, col, "-");
    return 0;
}

static int set_str(tt_table *t, size_t col, const char *s)
{
    return tt_table_set_text(t, col, s ? s : "");
}

static int write_table(tt_table *t, const tt_table_write_options *w, FILE *out)
{
    int rc;
    if (!t)
        return xc_oom();
    rc = tt_table_write(t, w, out);
    tt_table_free(t);
    return rc < 0 ? tt_error_set(rc, "out of memory") : 0;
}

/* ---- per-thread rows ---- */

enum { T_ET_TID, T_KPID, T_KTID, T_ET_OPS, T_MATCHED, T_ET_ONLY, T_K_ONLY, T_NAMES, T_KEY_LO,
       T_KEY_HI, T_TS_LO, T_TS_HI, T_NSEGS, T_OFFSETS, T_RANGE, T_OFFTEXT, T_NCOLS };

static const tt_table_col thread_cols[T_NCOLS] = {
    { "ET tid", "et_tid", TT_COL_INT, TT_ALIGN_RIGHT, 0, 8, 0, 0, 0, 0 },
    { "Kineto pid", "kineto_pid", TT_COL_INT, TT_ALIGN_RIGHT, 0, 12, 0, 0, 0, 0 },
    { "Kineto tid", "kineto_tid", TT_COL_INT, TT_ALIGN_RIGHT, 0, 12, 0, 0, 0, 0 },
    { "ET ops", "et_ops", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "matched", "matched", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "ET-only", "et_only", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "Kineto-only", "kineto_only", TT_COL_INT, 0, 0, 11, 0, 0, 0, 0 },
    { "names differ", "name_mismatch", TT_COL_INT, 0, 0, 12, 0, 0, 0, 0 },
    { "key lo", "key_lo", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "key hi", "key_hi", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "ts lo (ns)", "ts_lo_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "ts hi (ns)", "ts_hi_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "offset segments", "offset_segments", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "offsets", "offsets", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "range", "range", TT_COL_TEXT, TT_ALIGN_LEFT, 0, 21, 0, 0, 0, 0 },
    { "offset", "offset", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

static const size_t thread_text[] = { T_ET_TID, T_KTID, T_ET_OPS, T_MATCHED, T_ET_ONLY,
                                      T_K_ONLY, T_NAMES, T_RANGE, T_OFFTEXT };
static const size_t thread_json[] = { T_ET_TID, T_KPID, T_KTID, T_ET_OPS, T_MATCHED,
                                      T_ET_ONLY, T_K_ONLY, T_NAMES, T_KEY_LO, T_KEY_HI,
                                      T_TS_LO, T_TS_HI, T_NSEGS, T_OFFSETS };

enum { S_FROM, S_OFFSET, S_COUNT, S_NCOLS };
static const tt_table_col seg_cols[S_NCOLS] = {
    { "rf_id from", "rf_from", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "offset", "offset", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "count", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

/* a table's rows as an array where w is (report/table_json.h): each row on
 * a line of its own indented by `indent`, "]" right after the last; -1: on
 * the current line. t freed; 0 or TT_ENOMEM */
static int json_rows(tt_jw *w, tt_table *t, const tt_table_write_options *o, int indent)
{
    int rc = t ? 0 : xc_oom();
    tt_jw_arr(w);
    if (t && tt__table_json_rows(t, o, w, indent) < 0)
        rc = xc_oom();
    tt_jw_end(w);
    tt_table_free(t);
    return rc;
}

/* a thread's offset segments: text "OFF from RF (N), ..." or a JSON array */
static int thread_offsets(tt_table *t, const tt_xc_thread *th, int text)
{
    tt_buf b = TT_BUF_INIT;
    size_t k;
    int rc = 0;
    if (text) {
        for (k = 0; k < th->nsegments; k++)
            tt_buf_addf(&b, "%s%" PRId64 " from %" PRId64 " (%" PRId64 ")", k ? ", " : "",
                        th->segments[k].offset, th->segments[k].rf_from, th->segments[k].count);
        if ((int64_t)th->nsegments < th->segments_total)
            tt_buf_addf(&b, ", ... (%" PRId64 " segments)", th->segments_total);
        if (!th->nsegments)
            tt_buf_addch(&b, '-');
    } else {
        tt_table *st = tt_table_new(seg_cols, S_NCOLS);
        tt_jw w;
        for (k = 0; st && k < th->nsegments && rc == 0; k++) {
            rc = tt_table_add_row(st);
            tt_table_set_int(st, S_FROM, th->segments[k].rf_from);
            tt_table_set_int(st, S_OFFSET, th->segments[k].offset);
            tt_table_set_int(st, S_COUNT, th->segments[k].count);
        }
        tt_jw_init(&w, &b, 0);
        if (rc < 0) {
            tt_table_free(st);
            st = NULL;
        }
        rc = json_rows(&w, st, NULL, -1);
        if (tt_jw_finish(&w) < 0)
            rc = TT_ENOMEM;
    }
    if (b.oom)
        rc = TT_ENOMEM;
    if (rc == 0)
        rc = text ? tt_table_set_text(t, T_OFFTEXT, b.buf) : tt_table_set_json(t, T_OFFSETS, b.buf);
    tt_buf_release(&b);
    return rc;
}

static int thread_row(tt_table *t, const tt_xc_thread *th, int text)
{
    char range[48];
    if (tt_table_add_row(t) < 0)
        return TT_ENOMEM;
    if (th->has_key)
        snprintf(range, sizeof(range), "%" PRId64 "..%" PRId64, th->key_lo, th->key_hi);
    else
        snprintf(range, sizeof(range), "-");
    tt_table_set_int(t, T_ET_OPS, th->et_ops);
    tt_table_set_int(t, T_MATCHED, th->matched);
    tt_table_set_int(t, T_ET_ONLY, th->et_only);
    tt_table_set_int(t, T_K_ONLY, th->kineto_only);
    tt_table_set_int(t, T_NAMES, th->name_mismatch);
    tt_table_set_int(t, T_NSEGS, th->segments_total);
    set_opt(t, T_KEY_LO, th->has_key, th->key_lo, 0);
    set_opt(t, T_KEY_HI, th->has_key, th->key_hi, 0);
    set_opt(t, T_TS_LO, th->has_ts, th->ts_lo, 0);
    set_opt(t, T_TS_HI, th->has_ts, th->ts_hi, 0);
    if (set_opt(t, T_ET_TID, th->has_et_tid, th->et_tid, text) < 0 ||
        set_id(t, T_KPID, th->has_kineto ? &th->kineto_pid : NULL, text) < 0 ||
        set_id(t, T_KTID, th->has_kineto ? &th->kineto_tid : NULL, text) < 0 ||
        tt_table_set_text(t, T_RANGE, range) < 0)
        return TT_ENOMEM;
    return thread_offsets(t, th, text);
}

/* the per-thread rows (text: "-" for what is absent; JSON: null), with the
 * columns in cols (the caller's, kept as long as the table) */
static tt_table *threads_table(const tt_xc_pair *p, int text, tt_table_col cols[T_NCOLS])
{
    tt_table *t;
    size_t i;
    memcpy(cols, thread_cols, sizeof(thread_cols));
    cols[T_RANGE].title = p->key == K_RF ? "rf_id range" : "External id range";
    cols[T_OFFTEXT].title = p->key == K_RF ? "offset" : "offset (External id - rf_id) from rf_id";
    t = tt_table_new(cols, T_NCOLS);
    for (i = 0; t && i < p->nthreads; i++)
        if (thread_row(t, &p->threads[i], text) < 0) {
            tt_table_free(t);
            return NULL;
        }
    return t;
}

/* the table under "  threads:" */
static int write_threads(const tt_xc_pair *p, FILE *out)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table_col cols[T_NCOLS];
    w.cols = thread_text;
    w.ncols = TT_ARRAY_SIZE(thread_text);
    w.indent = "    ";
    w.flags = TT_TABLE_NO_RULE | TT_TABLE_BYTE_WIDTH;
    return write_table(threads_table(p, 1, cols), &w, out);
}

/* the "threads" array: a thread a line (indent 4), "]" after the last */
static int json_threads(tt_jw *w, const tt_xc_pair *p)
{
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table_col cols[T_NCOLS];
    o.cols = thread_json;
    o.ncols = TT_ARRAY_SIZE(thread_json);
    tt_jw_key(w, "threads");
    return json_rows(w, threads_table(p, 0, cols), &o, 4);
}

/* ---- JSON lists ---- */

enum { E_RF, E_NODE, E_NAME, E_TID, E_NCOLS };
static const tt_table_col et_only_cols[E_NCOLS] = {
    { "rf_id", "rf_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "node", "node_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "tid", "tid", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

enum { KO_SLICE, KO_KEY, KO_NAME, KO_TID, KO_TS, KO_NCOLS };
static const tt_table_col kineto_only_cols[KO_NCOLS] = {
    { "slice", "slice_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "key", "key", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "tid", "tid", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "ts (ns)", "ts_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
};

enum { M_RF, M_NODE, M_ET_NAME, M_KEY, M_SLICE, M_K_NAME, M_NCOLS };
static const tt_table_col mismatch_cols[M_NCOLS] = {
    { "rf_id", "rf_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "node", "node_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "ET name", "et_name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto key", "kineto_key", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "slice", "slice_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto name", "kineto_name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

enum { D_SIDE, D_ID, D_COUNT, D_NAMES, D_NCOLS };
static const tt_table_col dup_cols[D_NCOLS] = {
    { "side", "side", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "id", "id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "count", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "names", "names", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

enum { U_ID, U_PATH, U_NCOLS };
static const tt_table_col trace_cols[U_NCOLS] = {
    { "trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "path", "path", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

static tt_table *et_only_table(const tt_xc_pair *p)
{
    tt_table *t = tt_table_new(et_only_cols, E_NCOLS);
    size_t i;
    for (i = 0; t && i < p->net_only_ops; i++) {
        const tt_xc_et_op *o = &p->et_only_ops[i];
        if (tt_table_add_row(t) < 0 || set_str(t, E_NAME, o->name) < 0) {
            tt_table_free(t);
            return NULL;
        }
        set_opt(t, E_RF, o->has_rf_id, o->rf_id, 0);
        tt_table_set_int(t, E_NODE, o->node_id);
        set_opt(t, E_TID, o->has_tid, o->tid, 0);
    }
    return t;
}

static tt_table *kineto_only_table(const tt_xc_pair *p)
{
    tt_table *t = tt_table_new(kineto_only_cols, KO_NCOLS);
    size_t i;
    for (i = 0; t && i < p->nkineto_only_ops; i++) {
        const tt_xc_kineto_op *ko = &p->kineto_only_ops[i];
        if (tt_table_add_row(t) < 0 || set_str(t, KO_NAME, ko->name) < 0 ||
            set_id(t, KO_TID, ko->has_tid ? &ko->tid : NULL, 0) < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, KO_SLICE, ko->slice_id);
        tt_table_set_int(t, KO_KEY, ko->key);
        tt_table_set_int(t, KO_TS, ko->ts);
    }
    return t;
}

static tt_table *mismatch_table(const tt_xc_pair *p)
{
    tt_table *t = tt_table_new(mismatch_cols, M_NCOLS);
    size_t i;
    for (i = 0; t && i < p->nmismatches; i++) {
        const tt_xc_mismatch *m = &p->mismatches[i];
        if (tt_table_add_row(t) < 0 || set_str(t, M_ET_NAME, m->et_name) < 0 ||
            set_str(t, M_K_NAME, m->kineto_name) < 0) {
            tt_table_free(t);
            return NULL;
        }
        set_opt(t, M_RF, m->has_rf_id, m->rf_id, 0);
        tt_table_set_int(t, M_NODE, m->node_id);
        tt_table_set_int(t, M_KEY, m->kineto_key);
        tt_table_set_int(t, M_SLICE, m->slice_id);
    }
    return t;
}

static tt_table *dup_table(const tt_xc_pair *p)
{
    tt_table *t = tt_table_new(dup_cols, D_NCOLS);
    tt_buf names = TT_BUF_INIT;
    size_t i;
    for (i = 0; t && i < p->nduplicates; i++) {
        const tt_xc_duplicate *d = &p->duplicates[i];
        const char *n1 = d->name1 ? d->name1 : "", *n2 = d->name2 ? d->name2 : "";
        tt_jw w;
        tt_buf_reset(&names);
        tt_jw_init(&w, &names, 0);
        tt_jw_arr(&w);
        tt_jw_str(&w, n1);
        tt_jw_str(&w, n2);
        tt_jw_end(&w);
        if (tt_jw_finish(&w) < 0 || tt_table_add_row(t) < 0 ||
            tt_table_set_text(t, D_SIDE, d->et_side ? "et" : "kineto") < 0 ||
            tt_table_set_json(t, D_NAMES, names.buf) < 0) {
            tt_table_free(t);
            t = NULL;
            break;
        }
        tt_table_set_int(t, D_ID, d->id);
        tt_table_set_int(t, D_COUNT, d->count);
    }
    tt_buf_release(&names);
    return t;
}

/* the unpaired ET traces (paired == 0) or Kineto traces */
static tt_table *unpaired_table(const tt_xcheck_result *res, int kineto)
{
    tt_table *t = tt_table_new(trace_cols, U_NCOLS);
    size_t i, n = kineto ? res->nunpaired_kineto : res->npairs;
    for (i = 0; t && i < n; i++) {
        const tt_xc_trace *tr = kineto ? &res->unpaired_kineto[i] : &res->pairs[i].et;
        if (!kineto && res->pairs[i].paired)
            continue;
        if (tt_table_add_row(t) < 0 || set_str(t, U_PATH, tr->path) < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, U_ID, tr->id);
    }
    return t;
}

/* ---------------------------------------------------------------- json */

/* The JSON report is one document written by the JSON writer (report/json.h),
 * its lists the tables above (report/table_json.h):
 *
 *   {"pairs": [
 *     {"et": {...},
 *      "kineto": {...},
 *      ...
 *      "threads": [
 *       {...}],
 *      "offenders": {"et_only": [...], ...}}
 *    ],
 *    "unpaired_et": [...],
 *    ...
 *    "consistent": true}
 */

static void jopt(tt_jw *w, const char *k, int has, int64_t v)
{
    tt_jw_key(w, k);
    if (has)
        tt_jw_int(w, v);
    else
        tt_jw_null(w);
}

/* a trace's object, opened: the caller adds its own keys and closes it */
static void jtrace(tt_jw *w, const char *k, const tt_xc_trace *t)
{
    tt_jw_kobj(w, k);
    tt_jw_kint(w, "trace_id", t->id);
    tt_jw_kstr(w, "path", t->path ? t->path : "");
    jopt(w, "pid", t->has_pid, t->pid);
    jopt(w, "rank", t->has_rank, t->rank);
}

/* "key": [rows] on the current line */
static int json_list(tt_jw *w, const char *k, tt_table *t)
{
    tt_jw_key(w, k);
    return json_rows(w, t, NULL, -1);
}

static int json_offenders(tt_jw *w, const tt_xc_pair *p)
{
    int rc;
    tt_jw_nl(w, 3);
    tt_jw_kobj(w, "offenders");
    if ((rc = json_list(w, "et_only", et_only_table(p))) == 0 &&
        (rc = json_list(w, "kineto_only", kineto_only_table(p))) == 0 &&
        (rc = json_list(w, "name_mismatch", mismatch_table(p))) == 0)
        rc = json_list(w, "duplicates", dup_table(p));
    tt_jw_end(w);
    return rc;
}

/* the traces, PyTorch's rule, the key and the window */
static void json_pair_head(tt_jw *w, const tt_xc_pair *p)
{
    jtrace(w, "et", &p->et);
    tt_jw_kint(w, "nodes", p->et_nodes);
    tt_jw_kint(w, "roots", p->et_roots);
    tt_jw_kint(w, "ops", p->et_ops);
    tt_jw_end(w);
    tt_jw_nl(w, 3);
    jtrace(w, "kineto", &p->kineto);
    tt_jw_kint(w, "ops", p->kineto_ops);
    tt_jw_kint(w, "with_record_function_id", p->kineto_with_rf_id);
    tt_jw_kint(w, "with_external_id", p->kineto_with_external_id);
    tt_jw_end(w);
    tt_jw_nl(w, 3);
    tt_jw_kstr(w, "paired_by", p->paired_by);
    tt_jw_nl(w, 3);
    tt_jw_kobj(w, "pytorch_rule");
    tt_jw_kbool(w, "applies", p->rule_applies);
    tt_jw_kbool(w, "equal", p->rule_holds);
    tt_jw_kint(w, "et_ids", p->rule_et_ids);
    tt_jw_kint(w, "kineto_ids", p->kineto_ops);
    tt_jw_kint(w, "et_only", p->rule_et_only);
    tt_jw_kint(w, "kineto_only", p->rule_kineto_only);
    tt_jw_end(w);
    tt_jw_nl(w, 3);
    tt_jw_kstr(w, "key", xc_key_name(p->key));
    jopt(w, "offset", p->key != K_EXT_ORDER, p->offset);
    tt_jw_key(w, "constant_offset_tried");
    if (p->has_constant) {
        tt_jw_obj(w);
        tt_jw_kint(w, "offset", p->constant_offset);
        tt_jw_kint(w, "matched", p->constant_matched);
        tt_jw_end(w);
    } else {
        tt_jw_null(w);
    }
    tt_jw_nl(w, 3);
    tt_jw_kobj(w, "window");
    jopt(w, "key_lo", p->has_key, p->key_lo);
    jopt(w, "key_hi", p->has_key, p->key_hi);
    jopt(w, "ts_lo_ns", p->has_ts, p->ts_lo);
    jopt(w, "ts_hi_ns", p->has_ts, p->ts_hi);
    tt_jw_end(w);
}

static int print_json_pair(tt_jw *w, const tt_xc_pair *p)
{
    int rc;
    tt_jw_nl(w, 2);
    tt_jw_obj(w);
    json_pair_head(w, p);
    tt_jw_nl(w, 3);
    tt_jw_kint(w, "et_ops", p->et_ops);
    tt_jw_kint(w, "matched", p->matched);
    tt_jw_kint(w, "et_only", p->et_only);
    tt_jw_kint(w, "kineto_only", p->kineto_only);
    tt_jw_kint(w, "name_mismatch", p->name_mismatch);
    tt_jw_kint(w, "duplicate_et", p->duplicate_et);
    tt_jw_kint(w, "duplicate_kineto", p->duplicate_kineto);
    tt_jw_kint(w, "kineto_outside_window", p->kineto_outside);
    tt_jw_kbool(w, "consistent", p->consistent);
    tt_jw_nl(w, 3);
    if ((rc = json_threads(w, p)) == 0)
        rc = json_offenders(w, p);
    tt_jw_end(w);
    return rc;
}

static int print_json(const tt_xcheck_result *res, const tt_xc_options *o, FILE *out)
{
    const tt_xc_summary *sum = &res->summary;
    tt_jw w;
    size_t i;
    int rc = 0;
    TT_UNUSED(o);
    tt_jw_init_file(&w, out, TT_JW_LINE);
    tt_jw_obj(&w);
    tt_jw_karr(&w, "pairs");
    for (i = 0; i < res->npairs && rc == 0; i++)
        if (res->pairs[i].paired)
            rc = print_json_pair(&w, &res->pairs[i]);
    tt_jw_nl(&w, 1);
    tt_jw_end(&w);
    tt_jw_nl(&w, 1);
    if (rc == 0)
        rc = json_list(&w, "unpaired_et", unpaired_table(res, 0));
    tt_jw_nl(&w, 1);
    if (rc == 0)
        rc = json_list(&w, "unpaired_kineto", unpaired_table(res, 1));
    tt_jw_nl(&w, 1);
    tt_jw_kobj(&w, "summary");
    tt_jw_kint(&w, "pairs", sum->pairs);
    tt_jw_kint(&w, "consistent", sum->consistent);
    tt_jw_kint(&w, "inconsistent", sum->inconsistent);
    tt_jw_kint(&w, "unpaired_et", sum->unpaired_et);
    tt_jw_kint(&w, "unpaired_kineto", sum->unpaired_kineto);
    tt_jw_kint(&w, "links_stored", sum->links);
    tt_jw_end(&w);
    tt_jw_nl(&w, 1);
    tt_jw_kbool(&w, "consistent", sum->pairs && !sum->inconsistent && !sum->unpaired_et);
    tt_jw_end(&w);
    if (tt_jw_finish(&w) == TT_ENOMEM && rc == 0)
        rc = TT_ENOMEM; /* set; write errors are the caller's to check (ferror) */
    return rc;
}

/* ---------------------------------------------------------------- text */

static void text_header(FILE *out, const tt_xc_pair *p, int first)
{
    tt_buf v = TT_BUF_INIT;
    fprintf(out, "%sET trace %" PRId64 ": %s (", first ? "" : "\n", p->et.id,
            tt_visible(&v, p->et.path));
    if (p->et.has_rank)
        fprintf(out, "rank %" PRId64 ", ", p->et.rank);
    if (p->et.has_pid)
        fprintf(out, "pid %" PRId64 ", ", p->et.pid);
    fprintf(out, "%" PRId64 " ops + %" PRId64 " root nodes)\n", p->et_ops, p->et_roots);
    fprintf(out, "Kineto trace %" PRId64 ": %s (", p->kineto.id, tt_visible(&v, p->kineto.path));
    tt_buf_release(&v);
    if (p->kineto.has_rank)
        fprintf(out, "rank %" PRId64 ", ", p->kineto.rank);
    if (p->kineto.has_pid)
        fprintf(out, "pid %" PRId64 ", ", p->kineto.pid);
    fprintf(out, "%" PRId64 " cpu_op/user_annotation events)\n", p->kineto_ops);
    fprintf(out, "  paired by %s\n", p->paired_by);
    if (p->rule_applies)
        fprintf(out, "  PyTorch rule (sorted ET rf_id == sorted Kineto \"Record function id\"): %s"
                     " (%" PRId64 " ET ids, %" PRId64 " Kineto events; %" PRId64
                     " only in ET, %" PRId64 " only in Kineto)\n",
                p->rule_holds ? "holds" : "FAILS", p->rule_et_ids, p->kineto_ops,
                p->rule_et_only, p->rule_kineto_only);
    else
        fprintf(out, "  PyTorch rule (sorted ET rf_id == sorted Kineto \"Record function id\"):"
                     " not applicable, the Kineto trace has no non-zero \"Record function id\"\n");
    if (p->key == K_RF)
        fprintf(out, "  key: Record function id == rf_id\n");
    else if (p->key == K_EXT_OFFSET)
        fprintf(out, "  key: External id == rf_id %c %" PRId64 " (constant offset)\n",
                p->offset < 0 ? '-' : '+', p->offset < 0 ? -p->offset : p->offset);
    else
        fprintf(out, "  key: External id in per-thread order (the ET thread's ops in rf_id order"
                     " against a window of one Kineto thread's ops in External-id order;"
                     " best constant offset %" PRId64 " matched only %" PRId64 ")\n",
                p->constant_offset, p->constant_matched);
}

static void text_window(FILE *out, const tt_xc_pair *p)
{
    char b1[64];
    size_t i;
    fprintf(out, "  window: ");
    if (p->key == K_EXT_ORDER) {
        int any = 0;
        for (i = 0; i < p->nthreads; i++) {
            const tt_xc_thread *t = &p->threads[i];
            if (!t->has_kineto || !t->has_key)
                continue;
            fprintf(out, "%sExternal id %" PRId64 "..%" PRId64 " on tid %s", any++ ? ", " : "",
                    t->key_lo, t->key_hi, xc_val_fmt(&t->kineto_tid, b1, sizeof(b1)));
        }
        if (!any)
            fprintf(out, "none");
    } else if (p->has_key) {
        fprintf(out, "%s %" PRId64 "..%" PRId64, key_label(p->key), p->key_lo, p->key_hi);
    } else {
        fprintf(out, "none");
    }
    if (p->has_ts)
        fprintf(out, "; time %" PRId64 "..%" PRId64 " ns (%.3f ms)", p->ts_lo, p->ts_hi,
                (double)(p->ts_hi - p->ts_lo) / 1e6);
    fprintf(out, "; %" PRId64 " Kineto op%s outside\n", p->kineto_outside,
            p->kineto_outside == 1 ? "" : "s");
    fprintf(out, "  result: %s: %" PRId64 " of %" PRId64 " ET ops matched%s\n",
            p->consistent ? "consistent" : "DIFFERENCES", p->matched, p->et_ops,
            p->name_mismatch ? "" : ", names agree");
    fprintf(out, "    ET-only %" PRId64 ", Kineto-only %" PRId64 ", names differ %" PRId64
                 ", duplicate ids %" PRId64 " in ET, %" PRId64 " in Kineto\n",
            p->et_only, p->kineto_only, p->name_mismatch, p->duplicate_et, p->duplicate_kineto);
}

static void text_offenders(FILE *out, const tt_xc_pair *p)
{
    tt_buf v1 = TT_BUF_INIT, v2 = TT_BUF_INIT;
    char b1[64], b2[64];
    size_t i;
    if (p->et_only) {
        fprintf(out, "  ET-only (first %zu of %" PRId64 "):\n", p->net_only_ops, p->et_only);
        for (i = 0; i < p->net_only_ops; i++) {
            const tt_xc_et_op *o = &p->et_only_ops[i];
            fprintf(out, "    rf_id %s, node %" PRId64 ", tid %s: '%s'\n",
                    o->has_rf_id ? (snprintf(b1, sizeof(b1), "%" PRId64, o->rf_id), b1) : "none",
                    o->node_id,
                    o->has_tid ? (snprintf(b2, sizeof(b2), "%" PRId64, o->tid), b2) : "-",
                    tt_visible(&v1, o->name));
        }
    }
    if (p->kineto_only) {
        fprintf(out, "  Kineto-only (first %zu of %" PRId64 "):\n", p->nkineto_only_ops,
                p->kineto_only);
        for (i = 0; i < p->nkineto_only_ops; i++) {
            const tt_xc_kineto_op *ko = &p->kineto_only_ops[i];
            fprintf(out, "    %s %" PRId64 ", slice %" PRId64 ", tid %s, ts %" PRId64 ": '%s'\n",
                    key_label(p->key), ko->key, ko->slice_id,
                    ko->has_tid ? xc_val_fmt(&ko->tid, b1, sizeof(b1)) : "-", ko->ts,
                    tt_visible(&v1, ko->name));
        }
    }
    if (p->name_mismatch) {
        fprintf(out, "  names differ (first %zu of %" PRId64 "):\n", p->nmismatches,
                p->name_mismatch);
        for (i = 0; i < p->nmismatches; i++) {
            const tt_xc_mismatch *m = &p->mismatches[i];
            fprintf(out, "    rf_id %" PRId64 ", node %" PRId64 ": ET '%s' vs Kineto '%s'"
                         " (%s %" PRId64 ", slice %" PRId64 ")\n",
                    m->rf_id, m->node_id, tt_visible(&v1, m->et_name),
                    tt_visible(&v2, m->kineto_name), key_label(p->key),
                    m->kineto_key, m->slice_id);
        }
    }
    if (p->duplicate_et || p->duplicate_kineto) {
        fprintf(out, "  duplicate ids:\n");
        for (i = 0; i < p->nduplicates; i++) {
            const tt_xc_duplicate *d = &p->duplicates[i];
            if (d->et_side)
                fprintf(out, "    ET rf_id %" PRId64 " on %" PRId64 " nodes: '%s', '%s'\n", d->id,
                        d->count, tt_visible(&v1, d->name1), tt_visible(&v2, d->name2));
            else
                fprintf(out, "    Kineto %s %" PRId64 " on %" PRId64 " events: '%s', '%s'\n",
                        key_label(p->key), d->id, d->count, tt_visible(&v1, d->name1),
                        tt_visible(&v2, d->name2));
        }
    }
    tt_buf_release(&v1);
    tt_buf_release(&v2);
}

static void text_unpaired(FILE *out, const tt_xc_pair *p, int first)
{
    tt_buf v = TT_BUF_INIT;
    fprintf(out, "%sET trace %" PRId64 ": %s: no Kineto trace with the same pid",
            first ? "" : "\n", p->et.id, tt_visible(&v, p->et.path));
    tt_buf_release(&v);
    if (p->et.has_pid)
        fprintf(out, " (%" PRId64 ")", p->et.pid);
    if (p->et.has_rank)
        fprintf(out, " or rank (%" PRId64 ")", p->et.rank);
    fputs("\n", out);
}

/* the per-thread offsets column of the closing table */
static void summary_offset(const tt_xc_pair *p, char *off, size_t n)
{
    size_t i, len = 0;
    off[0] = 0;
    if (p->key != K_EXT_ORDER) {
        snprintf(off, n, "%" PRId64, p->offset);
        return;
    }
    /* per thread: the offset of its first matched op */
    for (i = 0; i < p->nthreads && len + 1 < n; i++) {
        int w;
        if (!p->threads[i].nsegments)
            continue;
        w = snprintf(off + len, n - len, "%s%" PRId64, len ? "," : "",
                     p->threads[i].segments[0].offset);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    if (!len)
        snprintf(off, n, "-");
}

enum { P_ET, P_KINETO, P_RANK, P_HOW, P_KEY, P_OFFSET, P_MATCHED, P_ET_ONLY, P_K_ONLY,
       P_NAMES, P_DUPS, P_VERDICT, P_NCOLS };
static const tt_table_col pair_cols[P_NCOLS] = {
    { "ET", "et_trace_id", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Kineto", "kineto_trace_id", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "rank", "rank", TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 4, 0, 0, 0, 0 },
    { "paired by", "paired_by", TT_COL_TEXT, 0, 0, 18, 0, 0, 0, 0 },
    { "key", "key", TT_COL_TEXT, 0, 0, 17, 0, 0, 0, 0 },
    { "offset", "offset", TT_COL_TEXT, 0, 0, 14, 0, 0, 0, 0 },
    { "matched", "matched", TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 11, 0, 0, 0, 0 },
    { "ET-only", "et_only", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "Kineto-only", "kineto_only", TT_COL_INT, 0, 0, 11, 0, 0, 0, 0 },
    { "names differ", "name_mismatch", TT_COL_INT, 0, 0, 12, 0, 0, 0, 0 },
    { "duplicates", "duplicates", TT_COL_INT, 0, 0, 10, 0, 0, 0, 0 },
    { "verdict", "verdict", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

static int summary_row(tt_table *t, const tt_xc_pair *p)
{
    char rank[24], matched[48], how[40], off[40];
    if (p->kineto.has_rank || p->et.has_rank)
        snprintf(rank, sizeof(rank), "%" PRId64, p->kineto.has_rank ? p->kineto.rank : p->et.rank);
    else
        snprintf(rank, sizeof(rank), "-");
    snprintf(matched, sizeof(matched), "%" PRId64 "/%" PRId64, p->matched, p->et_ops);
    snprintf(how, sizeof(how), "%.18s", p->paired_by); /* cut to the column, as before */
    summary_offset(p, off, sizeof(off));
    off[14] = '\0';
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, P_RANK, rank) < 0 ||
        tt_table_set_text(t, P_HOW, how) < 0 ||
        tt_table_set_text(t, P_KEY, p->key == K_RF ? "Record function id"
                                    : p->key == K_EXT_OFFSET ? "External id"
                                                             : "External id order") < 0 ||
        tt_table_set_text(t, P_OFFSET, off) < 0 || tt_table_set_text(t, P_MATCHED, matched) < 0 ||
        tt_table_set_text(t, P_VERDICT, p->consistent ? "consistent" : "DIFFERENCES") < 0)
        return TT_ENOMEM;
    tt_table_set_int(t, P_ET, p->et.id);
    tt_table_set_int(t, P_KINETO, p->kineto.id);
    tt_table_set_int(t, P_ET_ONLY, p->et_only);
    tt_table_set_int(t, P_K_ONLY, p->kineto_only);
    tt_table_set_int(t, P_NAMES, p->name_mismatch);
    tt_table_set_int(t, P_DUPS, p->duplicate_et + p->duplicate_kineto);
    return 0;
}

/* the closing table, one row per pair */
static int print_summary_rows(FILE *out, const tt_xcheck_result *res)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = tt_table_new(pair_cols, P_NCOLS);
    size_t i;
    for (i = 0; t && i < res->npairs; i++)
        if (res->pairs[i].paired && summary_row(t, &res->pairs[i]) < 0) {
            tt_table_free(t);
            t = NULL;
        }
    fputc('\n', out);
    w.flags = TT_TABLE_NO_RULE | TT_TABLE_BYTE_WIDTH;
    return write_table(t, &w, out);
}

static int print_text(const tt_xcheck_result *res, const tt_xc_options *o, FILE *out)
{
    const tt_xc_summary *sum = &res->summary;
    size_t i, npaired = 0;
    int rc;
    for (i = 0; i < res->npairs; i++) {
        const tt_xc_pair *p = &res->pairs[i];
        if (!p->paired) {
            text_unpaired(out, p, i == 0);
            continue;
        }
        npaired++;
        text_header(out, p, i == 0);
        text_window(out, p);
        fputs("  threads:\n", out);
        if ((rc = write_threads(p, out)) < 0)
            return rc;
        text_offenders(out, p);
    }
    if (npaired > 1 && (rc = print_summary_rows(out, res)) < 0)
        return rc;
    fprintf(out, "\ncrosscheck: %" PRId64 " pair%s, %" PRId64 " consistent, %" PRId64
                 " with differences",
            sum->pairs, sum->pairs == 1 ? "" : "s", sum->consistent, sum->inconsistent);
    if (sum->unpaired_et)
        fprintf(out, ", %" PRId64 " ET trace%s without a Kineto trace", sum->unpaired_et,
                sum->unpaired_et == 1 ? "" : "s");
    if (sum->unpaired_kineto)
        fprintf(out, ", %" PRId64 " Kineto trace%s without an ET", sum->unpaired_kineto,
                sum->unpaired_kineto == 1 ? "" : "s");
    if (o->store)
        fprintf(out, "; %" PRId64 " links stored in et_links", sum->links);
    fputc('\n', out);
    return 0;
}

/* ---------------------------------------------------------------- csv, markdown */

enum { XP_ET, XP_ET_PATH, XP_ET_RANK, XP_K, XP_K_PATH, XP_K_RANK, XP_BY, XP_KEY, XP_ET_OPS, XP_K_OPS,
       XP_MATCHED, XP_ET_ONLY, XP_K_ONLY, XP_NAMES, XP_DUP_ET, XP_DUP_K, XP_OUTSIDE, XP_RULE,
       XP_RULE_HOLDS, XP_CONSISTENT, XP_N };

/* one row per ET; the keys are the JSON report's words */
static const tt_table_col xpair_cols[XP_N] = {
    { "ET trace", "et_trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "ET path", "et_path", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "ET rank", "et_rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto trace", "kineto_trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto path", "kineto_path", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto rank", "kineto_rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "paired by", "paired_by", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "key", "key", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "ET ops", "et_ops", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto ops", "kineto_ops", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "matched", "matched", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "ET-only", "et_only", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto-only", "kineto_only", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "names differ", "name_mismatch", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "duplicate ET ids", "duplicate_et", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "duplicate Kineto ids", "duplicate_kineto", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Kineto ops outside", "kineto_outside", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "PyTorch rule applies", "pytorch_rule_applies", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "PyTorch rule holds", "pytorch_rule_holds", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "consistent", "consistent", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

static int pair_row(tt_table *t, const tt_xc_pair *p)
{
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, XP_ET_PATH, p->et.path) < 0)
        return TT_ENOMEM;
    tt_table_set_int(t, XP_ET, p->et.id);
    if (p->et.has_rank)
        tt_table_set_int(t, XP_ET_RANK, p->et.rank);
    tt_table_set_int(t, XP_ET_OPS, p->et_ops);
    tt_table_set_int(t, XP_CONSISTENT, p->paired && p->consistent);
    if (!p->paired)
        return 0;
    if (tt_table_set_text(t, XP_K_PATH, p->kineto.path) < 0 ||
        tt_table_set_text(t, XP_BY, p->paired_by) < 0 ||
        tt_table_set_text(t, XP_KEY, key_label(p->key)) < 0)
        return TT_ENOMEM;
    tt_table_set_int(t, XP_K, p->kineto.id);
    if (p->kineto.has_rank)
        tt_table_set_int(t, XP_K_RANK, p->kineto.rank);
    tt_table_set_int(t, XP_K_OPS, p->kineto_ops);
    tt_table_set_int(t, XP_MATCHED, p->matched);
    tt_table_set_int(t, XP_ET_ONLY, p->et_only);
    tt_table_set_int(t, XP_K_ONLY, p->kineto_only);
    tt_table_set_int(t, XP_NAMES, p->name_mismatch);
    tt_table_set_int(t, XP_DUP_ET, p->duplicate_et);
    tt_table_set_int(t, XP_DUP_K, p->duplicate_kineto);
    tt_table_set_int(t, XP_OUTSIDE, p->kineto_outside);
    tt_table_set_int(t, XP_RULE, p->rule_applies);
    tt_table_set_int(t, XP_RULE_HOLDS, p->rule_holds);
    return 0;
}

/* CSV: every column; Markdown: the verdict's columns (one table) */
static int print_pairs(const tt_xcheck_result *res, int markdown, FILE *out)
{
    static const size_t md[] = { XP_ET, XP_ET_PATH, XP_K, XP_K_PATH, XP_KEY, XP_ET_OPS, XP_MATCHED,
                                 XP_ET_ONLY, XP_K_ONLY, XP_NAMES, XP_DUP_ET, XP_DUP_K,
                                 XP_CONSISTENT };
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = tt_table_new(xpair_cols, XP_N);
    size_t i;
    int rc = t ? 0 : TT_ENOMEM;
    for (i = 0; rc == 0 && i < res->npairs; i++)
        rc = pair_row(t, &res->pairs[i]);
    w.format = markdown ? TT_FORMAT_MARKDOWN : TT_FORMAT_CSV;
    if (markdown) {
        w.cols = md;
        w.ncols = sizeof(md) / sizeof(md[0]);
        fprintf(out, "### crosscheck: %" PRId64 " pair%s, %" PRId64 " consistent\n\n",
                res->summary.pairs, res->summary.pairs == 1 ? "" : "s",
                res->summary.consistent);
    }
    if (rc == 0)
        rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    return rc < 0 ? tt_error_set(rc, "out of memory") : 0;
}

int tt_xcheck_result_print(const tt_xcheck_result *res, const tt_xc_options *opts, FILE *out)
{
    tt_xc_options defo = TT_XC_OPTIONS_INIT;
    if (!opts)
        opts = &defo;
    if (!res || !out)
        return tt_error_set(TT_EINVALID, "crosscheck: no result or no output");
    if (opts->format == TT_FORMAT_JSON)
        return print_json(res, opts, out);
    if (opts->format == TT_FORMAT_CSV || opts->format == TT_FORMAT_MARKDOWN)
        return print_pairs(res, opts->format == TT_FORMAT_MARKDOWN, out);
    return print_text(res, opts, out);
}

int tt_xc_exit_code(const tt_xc_summary *s)
{
    return s->inconsistent || s->unpaired_et || !s->pairs ? 1 : 0;
}
