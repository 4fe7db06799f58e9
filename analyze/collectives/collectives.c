/*
 * analyze/collectives/collectives.c - `tracetool collectives`: the public
 * calls (tracetool/collectives.h) and their printing through the table
 * writer (tracetool/table.h).
 *
 * Each selected trace (a file, each file of a directory, the traces of a
 * database: analyze/input/each.h) is read into the run's spill of calls
 * (coll_stream.c); the calls are then matched across ranks (coll_match.c),
 * which gives the ranks' summary and, for --per-call, every call in order,
 * printed CHUNK rows at a time so that memory does not follow the calls.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "analyze/collectives/coll_state.h"
#include "report/table_json.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <math.h>

#define CHUNK 1024 /* rows per write of the table writer */

/* ---- reading the traces ---- */

static int v_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                  void **r)
{
    struct coll_run *run = ctx;
    struct coll_trace *t;
    size_t *ti;
    int rc;
    if (TT_ALLOC_GROW(run->tr, run->ntr + 1, run->atr) < 0 || !(ti = malloc(sizeof(*ti))))
        return tt__oom();
    *ti = run->ntr;
    t = &run->tr[run->ntr++];
    memset(t, 0, sizeof(*t));
    t->id = id;
    t->rank = CNULL;
    t->world = CNULL;
    if ((rc = tt__coll_read(run, *ti, path, db, id, res)) < 0) {
        free(ti);
        return rc;
    }
    if (res->have_rank)
        t->rank = res->rank;
    *r = ti;
    return 0;
}

static int v_take(void *ctx, void *r, int64_t id, const char *path)
{
    struct coll_run *run = ctx;
    struct coll_trace *t = &run->tr[*(size_t *)r];
    free(r);
    t->selected = 1;
    t->id = id;
    return (t->path = strdup(path)) ? 0 : tt__oom();
}

static void v_drop(void *ctx, void *r)
{
    (void)ctx;
    free(r);
}

static void run_release(struct coll_run *run)
{
    size_t i;
    for (i = 0; i < run->ntr; i++)
        free(run->tr[i].path);
    free(run->tr);
    tt__spill_free(run->calls);
    tt__coll_strs_free(&run->strs);
    tt__flt_free(run->scope);
    tt__flt_free(run->names);
    memset(run, 0, sizeof(*run));
}

void tt_coll_result_free(tt_coll_result *res)
{
    size_t i;
    if (!res)
        return;
    for (i = 0; i < res->nranks; i++)
        free(res->ranks[i].path);
    free(res->ranks);
    memset(res, 0, sizeof(*res));
}

/* TT_ENOTFOUND: the input has no collective (one: it is one trace) */
static int nothing(const char *input, tt_db *db, int one)
{
    const char *src = db ? (db->source ? db->source : db->path) : input;
    return tt_error_set_at(TT_ENOTFOUND, src, -1,
                           "no collective (NCCL/RCCL kernel, record_param_comms or nccl:* op) "
                           "in %s", one ? "this trace" : "the selected traces");
}

/* --under (run->scope, applied as the traces are read) and --name
 * (run->names, as the calls are matched) compiled apart: each judges what
 * it is about alone. Options of version 1 knew neither: refused. */
static int run_filters(struct coll_run *run, const tt_coll_options *o)
{
    tt_filter under = TT_FILTER_INIT, name = TT_FILTER_INIT;
    int rc;
    if (o->version < 2 && (o->filter.name || o->filter.under))
        return tt_error_set(TT_EINVALID,
                            "collectives: --name and --under need options version 2");
    under.under = o->filter.under;
    name.name = o->filter.name;
    if ((rc = tt_filter_check(&o->filter)) < 0 || (rc = tt__flt_new(&run->scope, &under)) < 0)
        return rc;
    return tt__flt_new(&run->names, &name);
}

/* the calls of input (a file or a directory; db NULL) or of db, matched */
static int run_all(const char *input, tt_db *db, const tt_coll_options *o, tt_coll_call_fn fn,
                   void *ctx, tt_coll_result *res)
{
    struct coll_run run;
    struct tt__visit v;
    tt_coll_result own;
    int rc;
    if (!res)
        res = &own;
    memset(res, 0, sizeof(*res));
    memset(&run, 0, sizeof(run));
    run.o = o;
    v.ctx = &run;
    v.read = v_read;
    v.take = v_take;
    v.drop = v_drop;
    if ((rc = run_filters(&run, o)) == 0)
        rc = tt__each_trace(o->trace_id, o->rank, input, db, &v);
    if (rc == 0 && !run.found)
        rc = nothing(input, db, run.ntr == 1);
    if (rc == 0)
        rc = tt__coll_match(&run, res, fn, ctx);
    run_release(&run);
    if (rc < 0 || res == &own)
        tt_coll_result_free(res);
    return rc;
}

int tt_collectives_db_result(tt_db *db, const tt_coll_options *opts, tt_coll_result *res)
{
    return run_all(NULL, db, opts, NULL, NULL, res);
}

int tt_collectives_file_result(const char *path, const tt_coll_options *opts,
                               tt_coll_result *res)
{
    return run_all(path, NULL, opts, NULL, NULL, res);
}

int tt_collectives_db_calls(tt_db *db, const tt_coll_options *opts, tt_coll_call_fn fn,
                            void *ctx, tt_coll_result *res)
{
    return run_all(NULL, db, opts, fn, ctx, res);
}

int tt_collectives_file_calls(const char *path, const tt_coll_options *opts,
                              tt_coll_call_fn fn, void *ctx, tt_coll_result *res)
{
    return run_all(path, NULL, opts, fn, ctx, res);
}

/* ---- printing ---- */

static void set_i(tt_table *t, size_t col, int64_t v)
{
    if (v != CNULL)
        tt_table_set_int(t, col, v);
}

static void set_f(tt_table *t, size_t col, double v)
{
    if (!isnan(v))
        tt_table_set_float(t, col, v);
}

enum { R_RANK, R_TRACE, R_CALLS, R_MATCHED, R_COMM, R_BYTES, R_ALGBW, R_BUSBW, R_LAST,
       R_SKEW_TOTAL, R_SKEW_MAX, R_LATE, R_PATH, R_COUNT };

static const tt_table_col rank_cols[R_COUNT] = {
    { "Rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Calls", "calls", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Matched", "matched", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Comm Time (ns)", "comm_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Size (MB)", "bytes", TT_COL_BYTES, 0, 0, 0, 0, 3, 1e6, 0 },
    { "AlgBW (GB/s)", "algbw_gbps", TT_COL_FLOAT, 0, 0, 0, 6, 2, 0, 0 },
    { "BusBW (GB/s)", "busbw_gbps", TT_COL_FLOAT, 0, 0, 0, 6, 2, 0, 0 },
    { "Last", "last", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Skew Caused (ns)", "skew_total_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Max Skew (ns)", "skew_max_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Late Total (ns)", "late_total_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Path", "path", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
};

static tt_table *rank_table(const tt_coll_result *res)
{
    tt_table *t = tt_table_new(rank_cols, R_COUNT);
    size_t i;
    for (i = 0; t && i < res->nranks; i++) {
        const tt_coll_rank *r = &res->ranks[i];
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, R_PATH, r->path) < 0) {
            tt_table_free(t);
            return NULL;
        }
        set_i(t, R_RANK, r->rank);
        set_i(t, R_TRACE, r->trace_id);
        set_i(t, R_CALLS, r->calls);
        set_i(t, R_MATCHED, r->matched);
        set_i(t, R_COMM, r->comm_ns);
        set_i(t, R_BYTES, r->bytes);
        set_f(t, R_ALGBW, r->algbw);
        set_f(t, R_BUSBW, r->busbw);
        set_i(t, R_LAST, r->last);
        set_i(t, R_SKEW_TOTAL, r->skew_total_ns);
        set_i(t, R_SKEW_MAX, r->skew_max_ns);
        set_i(t, R_LATE, r->late_total_ns);
    }
    return t;
}

static const char *arrival_words(const tt_coll_options *o)
{
    return o->arrival == TT_COLL_ARRIVE_CPU ? "the launching op's start"
                                            : "the first kernel's start";
}

/* the ranks' summary as text, CSV or Markdown (JSON: print_json) */
static int print_ranks(const tt_coll_result *res, const tt_coll_options *o, FILE *out,
                       int first)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = rank_table(res);
    int rc;
    if (!t)
        return tt__oom();
    if (o->format == TT_FORMAT_MARKDOWN)
        fprintf(out, "%s### Collectives per rank\n\n", first ? "" : "\n");
    else if (o->format != TT_FORMAT_CSV)
        fprintf(out, "%sCollectives per rank: %" PRId64 " calls, %" PRId64
                     " across ranks (arrival: %s)\n\n",
                first ? "" : "\n", res->calls, res->instances, arrival_words(o));
    w.format = o->format;
    if (o->format == TT_FORMAT_TABLE)
        w.indent = " ";
    rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    return rc;
}

/* ---- the calls, a chunk at a time ---- */

enum { C_RANK, C_TRACE, C_PG, C_COLL, C_SEQ, C_BY, C_DTYPE, C_IN_N, C_OUT_N, C_IN_B, C_OUT_B,
       C_SIZE, C_GROUP, C_CPU, C_START, C_DUR, C_KERNELS, C_ALGBW, C_BUSBW, C_ARRIVAL,
       C_RANKS, C_LATE, C_STRAG, C_STRAG_TRACE, C_SKEW, C_NAME, C_COUNT };

/* fixed widths in text: the chunks line up */
static const tt_table_col call_cols[C_COUNT] = {
    { "Rank", "rank", TT_COL_INT, 0, 0, 4, 0, 0, 0, 0 },
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "PG", "pg", TT_COL_TEXT, 0, 0, 4, 0, 0, 0, TT_COL_QUOTE },
    { "Collective", "collective", TT_COL_TEXT, 0, 0, 13, 0, 0, 0, TT_COL_QUOTE },
    { "Seq", "seq", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "By", "seq_from", TT_COL_TEXT, 0, 0, 5, 0, 0, 0, 0 },
    { "Dtype", "dtype", TT_COL_TEXT, 0, 0, 8, 0, 0, 0, TT_COL_QUOTE },
    { "In Elems", "in_nelems", TT_COL_INT, 0, 0, 10, 0, 0, 0, 0 },
    { "Out Elems", "out_nelems", TT_COL_INT, 0, 0, 10, 0, 0, 0, 0 },
    { "In (B)", "in_bytes", TT_COL_BYTES, 0, 0, 10, 0, 0, 0, 0 },
    { "Out (B)", "out_bytes", TT_COL_BYTES, 0, 0, 10, 0, 0, 0, 0 },
    { "Size (MB)", "size_bytes", TT_COL_BYTES, 0, 0, 10, 0, 3, 1e6, 0 },
    { "Group", "group_size", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "CPU Start (ns)", "cpu_start_ns", TT_COL_NS, 0, 0, 19, 0, 0, 0, 0 },
    { "Start (ns)", "start_ns", TT_COL_NS, 0, 0, 19, 0, 0, 0, 0 },
    { "Dur (ns)", "dur_ns", TT_COL_NS, 0, 0, 10, 0, 0, 0, 0 },
    { "Kernels", "kernels", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "AlgBW (GB/s)", "algbw_gbps", TT_COL_FLOAT, 0, 0, 12, 6, 2, 0, 0 },
    { "BusBW (GB/s)", "busbw_gbps", TT_COL_FLOAT, 0, 0, 12, 6, 2, 0, 0 },
    { "Arrival (ns)", "arrival_ns", TT_COL_NS, 0, 0, 19, 0, 0, 0, 0 },
    { "Ranks", "ranks", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Late (ns)", "late_ns", TT_COL_NS, 0, 0, 10, 0, 0, 0, 0 },
    { "Last", "straggler_rank", TT_COL_INT, 0, 0, 4, 0, 0, 0, 0 },
    { "Last Trace", "straggler_trace", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Skew (ns)", "skew_ns", TT_COL_NS, 0, 0, 10, 0, 0, 0, 0 },
    { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
};

static const size_t text_calls[] = { C_ARRIVAL, C_RANK, C_PG, C_COLL, C_SEQ, C_DTYPE, C_SIZE,
                                     C_DUR, C_ALGBW, C_BUSBW, C_RANKS, C_LATE, C_STRAG,
                                     C_SKEW, C_NAME };

struct cprint {
    const tt_coll_options *o;
    FILE *out;
    tt_jw *jw;
    tt_table *t;
    int parts;
    int64_t rows;
};

static int add_call(tt_table *t, const tt_coll_call *c)
{
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, C_PG, c->pg) < 0 ||
        tt_table_set_text(t, C_COLL, c->collective) < 0 ||
        tt_table_set_text(t, C_BY, c->by_seq ? "seq" : "order") < 0 ||
        tt_table_set_text(t, C_DTYPE, c->dtype) < 0 || tt_table_set_text(t, C_NAME, c->name) < 0)
        return tt__oom();
    set_i(t, C_RANK, c->rank);
    set_i(t, C_TRACE, c->trace_id);
    set_i(t, C_SEQ, c->seq);
    set_i(t, C_IN_N, c->in_nelems);
    set_i(t, C_OUT_N, c->out_nelems);
    set_i(t, C_IN_B, c->in_bytes);
    set_i(t, C_OUT_B, c->out_bytes);
    set_i(t, C_SIZE, c->size_bytes);
    set_i(t, C_GROUP, c->group_size);
    set_i(t, C_CPU, c->cpu_start_ns);
    set_i(t, C_START, c->start_ns);
    set_i(t, C_DUR, c->dur_ns);
    set_i(t, C_KERNELS, c->kernels);
    set_f(t, C_ALGBW, c->algbw);
    set_f(t, C_BUSBW, c->busbw);
    set_i(t, C_ARRIVAL, c->arrival_ns);
    set_i(t, C_RANKS, c->ranks);
    set_i(t, C_LATE, c->late_ns);
    set_i(t, C_STRAG, c->straggler_rank);
    if (c->straggler_trace)
        tt_table_set_int(t, C_STRAG_TRACE, c->straggler_trace);
    set_i(t, C_SKEW, c->skew_ns);
    return 0;
}

/* the rows so far as one part of the calls' table */
static int flush_calls(struct cprint *p, int final)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    int rc;
    if (!p->t || (!final && tt_table_nrows(p->t) == 0))
        return 0;
    if (p->parts == 0 && p->o->format == TT_FORMAT_MARKDOWN)
        fputs("### Collective calls\n\n", p->out);
    else if (p->parts == 0 && p->o->format == TT_FORMAT_TABLE)
        fputs("Collective calls, by the earliest arrival at each\n\n", p->out);
    w.format = p->o->format;
    w.no_header = p->parts > 0;
    if (p->o->format == TT_FORMAT_TABLE || p->o->format == TT_FORMAT_MARKDOWN) {
        w.cols = text_calls;
        w.ncols = TT_ARRAY_SIZE(text_calls);
        w.indent = p->o->format == TT_FORMAT_TABLE ? " " : NULL;
    }
    if (p->o->format == TT_FORMAT_JSON)
        rc = tt__table_json_rows(p->t, &w, p->jw, 2);
    else if (final && p->rows == 0 && p->o->format != TT_FORMAT_CSV)
        rc = fputs(p->o->format == TT_FORMAT_TABLE ? " (none)\n" : "(none)\n", p->out) < 0;
    else
        rc = tt_table_write(p->t, &w, p->out);
    p->parts++;
    tt_table_free(p->t);
    p->t = NULL;
    if (rc == 0 && !final && !(p->t = tt_table_new(call_cols, C_COUNT)))
        rc = tt__oom();
    return rc;
}

static int pr_call(void *ctx, const tt_coll_call *c)
{
    struct cprint *p = ctx;
    int rc;
    if (!p->t && !(p->t = tt_table_new(call_cols, C_COUNT)))
        return tt__oom();
    if ((rc = add_call(p->t, c)) < 0)
        return rc;
    p->rows++;
    return tt_table_nrows(p->t) >= CHUNK ? flush_calls(p, 0) : 0;
}

/* JSON: {"calls": N, "instances": M, "arrival": ..., ["collectives": [...],] "ranks": [...]} */
static int print_json(const char *input, tt_db *db, const tt_coll_options *o, FILE *out)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_coll_result res;
    struct cprint p;
    tt_jw jw;
    tt_table *t;
    int rc;
    memset(&p, 0, sizeof(p));
    p.o = o;
    p.out = out;
    p.jw = &jw;
    tt_jw_init_file(&jw, out, TT_JW_LINE);
    tt_jw_obj(&jw);
    if (o->per_call) {
        tt_jw_karr(&jw, "collectives");
        rc = run_all(input, db, o, pr_call, &p, &res);
        if (rc == 0)
            rc = flush_calls(&p, 1);
        tt_jw_nl(&jw, 0);
        tt_jw_end(&jw);
    } else {
        rc = run_all(input, db, o, NULL, NULL, &res);
    }
    tt_table_free(p.t);
    if (rc < 0) {
        tt_buf_reset(jw.b); /* what is not written yet is dropped: the error says why */
        tt_jw_finish(&jw);
        return rc;
    }
    tt_jw_kint(&jw, "calls", res.calls);
    tt_jw_kint(&jw, "instances", res.instances);
    tt_jw_kstr(&jw, "arrival", o->arrival == TT_COLL_ARRIVE_CPU ? "cpu" : "gpu");
    if (!(t = rank_table(&res)))
        rc = tt__oom();
    else
        rc = tt__table_json_array(t, &w, &jw, "ranks", 2);
    tt_table_free(t);
    tt_coll_result_free(&res);
    tt_jw_end(&jw);
    if (tt_jw_finish(&jw) == TT_ENOMEM && rc == 0)
        rc = tt__oom();
    return rc;
}

static int print_all(const char *input, tt_db *db, const tt_coll_options *o, FILE *out)
{
    tt_coll_result res;
    struct cprint p;
    int rc;
    if (o->format == TT_FORMAT_JSON)
        return print_json(input, db, o, out);
    if (!o->per_call) {
        if ((rc = run_all(input, db, o, NULL, NULL, &res)) < 0)
            return rc;
        rc = print_ranks(&res, o, out, 1);
        tt_coll_result_free(&res);
        return rc;
    }
    memset(&p, 0, sizeof(p));
    p.o = o;
    p.out = out;
    rc = run_all(input, db, o, pr_call, &p, &res);
    if (rc == 0 && !p.t && !(p.t = tt_table_new(call_cols, C_COUNT)))
        rc = tt__oom();
    if (rc == 0)
        rc = flush_calls(&p, 1);
    tt_table_free(p.t);
    if (rc == 0 && o->format != TT_FORMAT_CSV) /* CSV: one table */
        rc = print_ranks(&res, o, out, 0);
    tt_coll_result_free(&res);
    return rc;
}

int tt_collectives_db(tt_db *db, const tt_coll_options *opts, FILE *out)
{
    return print_all(NULL, db, opts, out);
}

int tt_collectives_file(const char *path, const tt_coll_options *opts, FILE *out)
{
    return print_all(path, NULL, opts, out);
}
