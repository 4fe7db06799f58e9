/*
 * analyze/breakdown/breakdown_rows.c - the rows breakdown reads (a consumer of
 * tt__rowsink, store/ingest_rows.h) and its inputs: a trace file
 * (tt__ingest_rows: the ingest's decoding and links, no SQLite), a
 * directory (each trace file in turn) and a database (breakdown_db.c).
 *
 * Of each trace it keeps its strings and its ProfilerStep#N slices in
 * memory, and spills (common/spill.h: bounded memory, the rest in a
 * temporary file) the names of its cpu_op slices, its runtime calls and its
 * kernels, memcpys and memsets; the links (GPU activity -> runtime call,
 * -> CPU op -> name) are resolved by sorted merges when the trace is over
 * (breakdown.c), so the order in which the tables come does not matter. A file whose rows need the SQL passes of an ingest
 * (res.needs_db) is read again, twice (TT_ROWS_RELINK: no database), into
 * the same consumer. Which way a file went is logged (topic "breakdown",
 * TT_DEBUG_BD=1 in tracetool's environment; tests check it).
 */
#include "common/compat.h"
#include "common/log.h"
#include "analyze/breakdown/breakdown_state.h"
#include "analyze/filter/filtering.h"
#include "store/ingest_rows.h"
#include "formats/spool.h"
#include "tracetool/store.h"

#include <sys/stat.h>

/* ---- the consumer ---- */

static int64_t int_or(const tt__cell *c, int64_t dflt)
{
    return c->type == TT_CELL_INT ? c->i : dflt;
}

static int text_is(const tt__cell *c, const char *text, const char *s, size_t n)
{
    return c->type == TT_CELL_TEXT && c->len == n && !memcmp(text + c->i, s, n);
}

static int rd_string(struct bd_read *rd, const tt__cell *row, const char *text)
{
    int64_t id = int_or(&row[TT_C_STR_ID], -1);
    const tt__cell *c = &row[TT_C_STR_S];
    size_t len = c->type == TT_CELL_TEXT ? c->len : 0;
    if (id < 0)
        return 0;
    if ((uint64_t)id >= rd->nsoff) {
        size_t cap = rd->nsoff ? rd->nsoff : 256, *n;
        while (cap <= (uint64_t)id)
            cap *= 2;
        if (!(n = realloc(rd->soff, cap * sizeof(*n))))
            return tt__oom();
        memset(n + rd->nsoff, 0, (cap - rd->nsoff) * sizeof(*n));
        rd->soff = n;
        rd->nsoff = cap;
    }
    if (rd->ntext + len + 1 > rd->atext) {
        size_t cap = rd->atext ? rd->atext : 4096;
        char *n;
        while (cap < rd->ntext + len + 1)
            cap *= 2;
        if (!(n = realloc(rd->text, cap)))
            return tt__oom();
        rd->text = n;
        rd->atext = cap;
    }
    if (len)
        memcpy(rd->text + rd->ntext, text + c->i, len);
    rd->text[rd->ntext + len] = '\0';
    rd->soff[id] = rd->ntext + 1;
    rd->ntext += len + 1;
    if (text_is(c, text, "cpu_op", 6))
        rd->sid_cpu_op = id;
    else if (text_is(c, text, "Operator", 8))
        rd->sid_operator = id;
    return 0;
}

/* a slice: the name of a cpu_op (for the op that launched a kernel), a
 * ProfilerStep#N span (as tt__step_spans: GLOB 'ProfilerStep#[0-9]*', with
 * ts and dur) */
static int rd_slice(struct bd_read *rd, const tt__cell *row)
{
    int64_t cat = int_or(&row[TT_C_SL_CAT], 0), name = int_or(&row[TT_C_SL_NAME], 0);
    int64_t num;
    int rc = 0;
    if (cat > 0 && (cat == rd->sid_cpu_op || cat == rd->sid_operator)) {
        struct bd_ref o;
        memset(&o, 0, sizeof(o));
        o.id = int_or(&row[TT_C_SL_ID], 0);
        o.name = name;
        rc = tt__spill_put(&rd->ops, sizeof(o), tt__bd_cmp_ref, &o);
    }
    if (rc == 0 && tt__step_name_num(tt__bd_str(rd, name), &num) == 0 &&
        row[TT_C_SL_TS].type == TT_CELL_INT && row[TT_C_SL_DUR].type == TT_CELL_INT)
        rc = tt__step_slice_add(&rd->steps, &rd->nsteps, &rd->asteps, int_or(&row[TT_C_SL_ID], 0),
                                num, row[TT_C_SL_TS].i, row[TT_C_SL_DUR].i);
    return rc;
}

static int rd_runtime(struct bd_read *rd, const tt__cell *row)
{
    struct bd_rt c;
    if (row[TT_C_RT_ID].type != TT_CELL_INT)
        return 0;
    c.id = row[TT_C_RT_ID].i;
    c.has_ts = row[TT_C_RT_TS].type == TT_CELL_INT;
    c.has_dur = row[TT_C_RT_DUR].type == TT_CELL_INT;
    c.ts = int_or(&row[TT_C_RT_TS], 0);
    c.dur = int_or(&row[TT_C_RT_DUR], 0);
    c.name = int_or(&row[TT_C_RT_NAME], 0);
    return tt__spill_put(&rd->rt, sizeof(c), tt__bd_cmp_rt, &c);
}

/* a kernel, memcpy or memset with ts and dur */
static int rd_gpu(struct bd_read *rd, const tt__cell *row, const char *text)
{
    const tt__cell *k = &row[TT_C_GPU_KIND];
    struct bd_raw g;
    int kind = text_is(k, text, "kernel", 6)   ? BD_KIND_KERNEL
               : text_is(k, text, "memcpy", 6) ? BD_KIND_MEMCPY
               : text_is(k, text, "memset", 6) ? BD_KIND_MEMSET
                                               : 0;
    if (!kind || row[TT_C_GPU_TS].type != TT_CELL_INT || row[TT_C_GPU_DUR].type != TT_CELL_INT)
        return 0;
    g.device = int_or(&row[TT_C_GPU_DEVICE], -1);
    g.stream = int_or(&row[TT_C_GPU_STREAM], -1);
    g.ts = row[TT_C_GPU_TS].i;
    g.dur = row[TT_C_GPU_DUR].i;
    g.rt = int_or(&row[TT_C_GPU_RUNTIME_ID], 0);
    g.op = int_or(&row[TT_C_GPU_OP_ID], 0);
    g.name = int_or(&row[TT_C_GPU_NAME], 0);
    g.kind = kind;
    g.seq = rd->ngpu++;
    return tt__spill_put(&rd->gpu, sizeof(g), tt__bd_cmp_raw_rt, &g);
}

static int bd_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct bd_read *rd = &((struct bd_run *)ctx)->rd;
    int r, rc = 0;
    for (r = 0; rc == 0 && r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        switch (table) {
        case TT_ROWS_STR: rc = rd_string(rd, row, text); break;
        case TT_ROWS_SLICE: rc = rd_slice(rd, row); break;
        case TT_ROWS_RUNTIME: rc = rd_runtime(rd, row); break;
        case TT_ROWS_GPU: rc = rd_gpu(rd, row, text); break;
        default: break;
        }
    }
    return rc;
}

int tt__bd_trace_end(struct bd_run *r, int64_t id, int64_t rank, tt_trace_format fmt)
{
    struct bd_trace *t;
    int rc;
    if (!r->seen++)
        snprintf(r->first_fmt, sizeof(r->first_fmt), "%s", tt_format_name(fmt));
    if ((fmt != TT_FMT_CHROME && fmt != TT_FMT_CHROME_ARRAY) ||
        (r->o->trace_id && id != r->o->trace_id) || (r->o->rank >= 0 && rank != r->o->rank)) {
        tt__bd_read_reset(&r->rd);
        return 0;
    }
    if (TT_ALLOC_GROW(r->tr, r->ntr + 1, r->atr) < 0)
        return tt__oom();
    t = &r->tr[r->ntr++];
    memset(t, 0, sizeof(*t));
    t->id = id;
    t->rank = rank;
    if ((rc = tt__bd_steps(&r->rd, t)) == 0)
        rc = tt__bd_sweep(r, t);
    tt__bd_read_reset(&r->rd);
    return rc;
}

/* the cells bd_rows and the step windows read: a database leaves the others out */
static const uint64_t bd_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_CAT) | TT_COL(TT_C_SL_NAME) |
                      TT_COL(TT_C_SL_TS) | TT_COL(TT_C_SL_DUR),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_TS) |
                        TT_COL(TT_C_RT_DUR),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_DEVICE) | TT_COL(TT_C_GPU_DUR) | TT_COL(TT_C_GPU_KIND) |
                    TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_OP_ID) |
                    TT_COL(TT_C_GPU_RUNTIME_ID) | TT_COL(TT_C_GPU_STREAM) | TT_COL(TT_C_GPU_TS),
};

void tt__bd_sink(struct bd_run *r, tt__rowsink *sink)
{
    tt__rowsink in;
    memset(&in, 0, sizeof(in));
    in.ctx = r;
    in.rows = bd_rows;
    in.cols = bd_cols;
    /* the filters: the GPU activities that fail never come (fl keeps in) */
    (void)tt__flt_sink(r->fl, &in, 1u << TT_ROWS_GPU, sink);
}

/* ---- the inputs ---- */

int tt__bd_run_init(struct bd_run *r, const tt_bd_options *o, tt_bd_result *res)
{
    memset(res, 0, sizeof(*res));
    memset(r, 0, sizeof(*r));
    r->o = o;
    r->res = res;
    r->no_op = -1;
    res->by = o->by;
    res->kernel_wait_ns = o->kernel_wait_ns;
    res->steps_set = o->steps_set;
    res->step_from = o->step_from;
    res->step_to = o->step_to;
    res->slowest = res->most_compute = (size_t)-1;
    if (o->version >= 3 && tt__flt_new(&r->fl, &o->filter) < 0)
        return TT_EINVALID;
    return o->version >= 2 ? tt_comm_rules_compile(&r->comm, o->comm_patterns, o->ncomm_patterns)
                           : 0;
}

/* one trace file that can be read twice, trace `id` of the input (label:
 * what the user named) */
static int read_rows(struct bd_run *r, const char *path, const char *label, int64_t id)
{
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    int rc;
    tt__bd_sink(r, &sink);
    memset(&res, 0, sizeof(res));
    if ((rc = tt__flt_load(r->fl, path, NULL, 0)) < 0)
        return rc;
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, TT__BD_SKIP, &res);
    free(res.metadata);
    if (rc == 0 && res.needs_db) {
        /* what only the SQL passes after a load link: the file read twice */
        tt__log(TT_LOG_DEBUG, "breakdown", "%s: read twice: %s", label,
                res.why_db ? res.why_db : "links");
        tt__bd_read_reset(&r->rd);
        tt__flt_reset(r->fl);
        rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS, TT__BD_SKIP | TT_ROWS_RELINK, &res);
        free(res.metadata);
    } else if (rc == 0) {
        tt__log(TT_LOG_DEBUG, "breakdown", "%s: read without a database", label);
    }
    if (rc < 0) {
        tt__bd_read_reset(&r->rd);
        return rc;
    }
    return tt__bd_trace_end(r, id, res.have_rank ? res.rank : -1, res.format);
}

/* one trace file (or "-": standard input and pipes from a spill copy,
 * which the way back through a database reads again) */
static int read_file(struct bd_run *r, const char *path, int64_t id)
{
    tt__spool sp;
    const char *rd;
    int rc = tt__spool_input(&sp, path, &rd);
    if (rc == 0)
        rc = read_rows(r, rd, path, id);
    return tt__spool_end(&sp, path, rc);
}

int tt__bd_read_file(struct bd_run *r, const char *path, int64_t id)
{
    return read_file(r, path, id);
}

/* a file, or every trace file under a directory (trace ids 1, 2, ... in
 * the walk's order, as a database of them would number them) */
static int read_input(struct bd_run *r, const char *path)
{
    struct stat sb;
    tt_dir_walk w;
    size_t k;
    int rc;
    if (!strcmp(path, "-") || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return read_file(r, path, 1);
    if ((rc = tt_walk_traces(path, &w)) == 0 && !w.nfiles)
        rc = tt_error_set_at(TT_ENOTFOUND, path, -1, "no trace files in this directory");
    for (k = 0; rc == 0 && k < w.nfiles; k++)
        rc = read_file(r, w.files[k], (int64_t)k + 1);
    tt_dir_walk_free(&w);
    return rc;
}

/* no trace to analyse, as tt__db_none words it for a file */
static int no_trace(const struct bd_run *r, const char *path)
{
    if (r->o->trace_id || r->o->rank >= 0)
        return tt_error_set_at(TT_ENOTFOUND, path, -1,
                               "no Chrome/Kineto trace matches --trace/--rank");
    return tt_error_set_at(TT_EUNSUPPORTED, path, -1, "no Chrome/Kineto trace in this file%s%s%s",
                           r->first_fmt[0] ? " (read as " : "", r->first_fmt,
                           r->first_fmt[0] ? ")" : "");
}

int tt_breakdown_file_result(const char *path, const tt_bd_options *o, tt_bd_result *res)
{
    struct bd_run r;
    int rc;
    if (TT__BD_ANNOT(o))
        return tt__bd_annot_result(path, NULL, o, res);
    rc = tt__bd_run_init(&r, o, res);
    if (rc < 0) {
        tt_error_set_source(path);
    } else if ((rc = read_input(&r, path)) == 0) {
        rc = r.ntr ? tt__bd_finish(&r, path, 0) : no_trace(&r, path);
        if (rc < 0) /* name the input */
            tt_error_set_source(path);
    }
    tt__bd_run_release(&r);
    if (rc < 0)
        tt_bd_result_free(res);
    return rc;
}
