/*
 * analyze/averages/averages_stream.c - the input of the averages pass: the
 * record stream of one trace (store/ingest_rows.h), from a trace file
 * (tt__ingest_rows: decoding and in-stream links, no SQLite) or from a
 * database (tt__db_rows), becomes the pass's records (averages_sort.c); the
 * device time of each op comes as records that sort right after the op's
 * (fs_kernel), and the pass of averages_tree.c runs. With Python stacks
 * wanted, the rows carry their args (an op's "Call stack") and the
 * python_function events come too. When a file's rows need the SQL passes
 * that follow a load, it is read into a temporary database and its rows
 * taken from there (the log says so: topic "averages", TT_DEBUG_AVG=1).
 */
#include "analyze/averages/averages_state.h"
#include "analyze/filter/filtering.h"
#include "common/arena.h"
#include "common/log.h"
#include "common/tmath.h"
#include "formats/json.h"
#include "analyze/input/each.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "formats/spool.h"

#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int cell_null(const tt__cell *c)
{
    return c->type == TT_CELL_NULL;
}

/* SQLite's column_int64 of the cell (NULL -> 0) */
static int64_t cell_int(const tt__cell *c)
{
    return c->type == TT_CELL_INT ? c->i : 0;
}

static void tkey_of_cell(struct tkey *k, const tt__cell *c, const char *text)
{
    memset(k, 0, sizeof(*k));
    k->is_null = c->type == TT_CELL_NULL;
    k->is_str = c->type == TT_CELL_TEXT;
    if (k->is_str) {
        k->str = text + c->i;
        k->len = c->len;
    } else {
        k->i = c->i;
    }
}

static int text_is(const tt__cell *c, const char *text, const char *lit)
{
    size_t n = strlen(lit);
    return c->type == TT_CELL_TEXT && c->len == n && !memcmp(text + c->i, lit, n);
}

/* a string of the stream: ids ascend (a file's from 1 on, a database's with
 * gaps, which stay NULL) */
static int fs_string(struct fstream *fs, int64_t id, const char *str, size_t len)
{
    char *copy;
    if (id <= (int64_t)fs->strs.n)
        return tt_error_set(TT_ERROR, "string ids out of order (%lld)", (long long)id);
    while ((int64_t)fs->strs.n + 1 < id) {
        if (TT_ALLOC_GROW(fs->strs.s, fs->strs.n + 1, fs->strs.alloc) < 0)
            return tt__oom();
        fs->strs.s[fs->strs.n++] = NULL;
    }
    if (TT_ALLOC_GROW(fs->strs.s, fs->strs.n + 1, fs->strs.alloc) < 0 ||
        !(copy = strndup(str, len)))
        return tt__oom();
    fs->strs.s[fs->strs.n++] = copy;
    if (!strcmp(copy, "cpu_op"))
        fs->id_cpu_op = id;
    else if (!strcmp(copy, "user_annotation"))
        fs->id_ua = id;
    else if (!strcmp(copy, "Operator"))
        fs->id_operator = id;
    else if (!strcmp(copy, "[memory]"))
        fs->id_memory = id;
    else if (!strcmp(copy, "[]"))
        fs->id_empty = id;
    else if (!strcmp(copy, "python_function"))
        fs->id_pyfunc = id;
    return 0;
}

/*
 * An op's "Call stack" arg (a string; anything else is none, as SQLite's
 * json_extract gives no text for it) into e->stack, with its Sequence
 * number and "Fwd thread id" (what stacks need of an op).
 */
static int fs_call_stack(struct fstream *fs, const tt__cell *row, const char *text,
                         struct arec *e)
{
    const tt__cell *args = &row[TT_C_SL_ARGS];
    const char *key, *cs;
    size_t klen, cslen;
    tt_arena a = TT_ARENA_INIT;
    tt_jp jp;
    int rc = 0, r;

    e->seq = row[TT_C_SL_SEQ_NR].type == TT_CELL_INT ? row[TT_C_SL_SEQ_NR].i : -1;
    if (cell_int(&row[TT_C_SL_FWD_TID]) > 0)
        e->flags |= AREC_FWD_TID;
    if (args->type != TT_CELL_TEXT)
        return 0;
    tt_jp_init(&jp, "args", text + args->i, 0, text + args->i, args->len);
    if (tt_jp_object_begin(&jp) < 0)
        goto out; /* not an object: no stack */
    while ((r = tt_jp_object_next(&jp, &a, &key, &klen)) > 0) {
        if (klen == 10 && !memcmp(key, "Call stack", 10) && tt_jp_peek(&jp) == TT_JT_STRING) {
            char *z;
            if (tt_jp_string(&jp, &a, &cs, &cslen) < 0)
                break;
            if (!(z = strndup(cs, cslen))) {
                rc = tt__oom();
                break;
            }
            e->stack = tt__avg_callstack_node(fs->s, z);
            free(z);
            if (e->stack < 0)
                rc = tt__oom();
            break;
        }
        if (tt_jp_skip(&jp) < 0)
            break;
    }
out:
    tt_arena_release(&a);
    tt_error_clear(); /* bad args are no stack, not an error */
    return rc;
}

/* ProfilerStep#N windows with from <= N <= to (as step_windows: LIKE is
 * case-blind, a slice without ts gives 0) */
static int fs_step(struct fstream *fs, const tt__cell *row)
{
    const tt_avg_options *o = fs->s->o;
    const char *nm = tt__avg_mem_string(&fs->strs, cell_int(&row[TT_C_SL_NAME]));
    long long k;
    if (!o->steps_set || !nm || strncasecmp(nm, "ProfilerStep#", 13) != 0)
        return 0;
    k = atoll(nm + 13);
    tt__avg_steps_seen(&fs->win, k);
    if (k < o->step_from || k > o->step_to)
        return 0;
    return tt__avg_steps_add(&fs->win, cell_int(&row[TT_C_SL_TS]),
                             cell_null(&row[TT_C_SL_TS])
                                 ? 0
                                 : row[TT_C_SL_TS].i + cell_int(&row[TT_C_SL_DUR]));
}

/* the filters' verdict on a record (TT__FLT_* bits) as its AREC_* flag */
static int32_t arec_out(int fails)
{
    return fails & TT__FLT_SCOPE ? AREC_OUT : fails ? AREC_HIDE : 0;
}

/* one batch of the ingest's rows -> records of the pass (what scan_sql selects) */
static int fs_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct fstream *fs = ctx;
    int r, rc;
    for (r = 0; r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        struct arec e;
        const tt__cell *pid = NULL, *tid = NULL;
        memset(&e, 0, sizeof(e));
        e.seq = -1;
        switch (table) {
        case TT_ROWS_STR:
            if ((rc = fs_string(fs, row[TT_C_STR_ID].i, text + row[TT_C_STR_S].i,
                                row[TT_C_STR_S].len)) < 0 ||
                (rc = tt__flt_string(fs->fl, row[TT_C_STR_ID].i, text + row[TT_C_STR_S].i,
                                     row[TT_C_STR_S].len)) < 0)
                return rc;
            continue;
        case TT_ROWS_SLICE: {
            int64_t cat = cell_int(&row[TT_C_SL_CAT]);
            if ((rc = fs_step(fs, row)) < 0)
                return rc;
            if (cell_null(&row[TT_C_SL_TS]))
                continue;
            e.id = row[TT_C_SL_ID].i;
            e.name = cell_int(&row[TT_C_SL_NAME]);
            e.ts = row[TT_C_SL_TS].i;
            e.end = tt_sat_add(e.ts, cell_int(&row[TT_C_SL_DUR]));
            pid = &row[TT_C_SL_PID];
            tid = &row[TT_C_SL_TID];
            if (fs->s->want_stacks && cat && cat == fs->id_pyfunc) {
                e.kind = KIND_PY; /* a Python call, for the ops' stacks */
                fs->s->stk.has_py = 1;
                break;
            }
            if (!(cell_null(&row[TT_C_SL_CAT]) ||
                  (cat && (cat == fs->id_ua || cat == fs->id_cpu_op || cat == fs->id_operator))))
                continue;
            if (cell_int(&row[TT_C_SL_DUR]) < 0)
                fs->neg_dur = 1;
            e.kind = 0;
            /* no Input Dims: "[]", whose id may only come later in the file */
            e.a = cell_null(&row[TT_C_SL_DIMS]) ? -1 : row[TT_C_SL_DIMS].i;
            e.flags = cat && cat == fs->id_ua ? AREC_USER_ANNOTATION : 0;
            if (fs->kmap) { /* the second reading: device time known by op */
                size_t v;
                if (tt__i64map_get(fs->kmap, e.id, &v))
                    e.b = (int64_t)v;
            }
            if (fs->s->want_stacks && (rc = fs_call_stack(fs, row, text, &e)) < 0)
                return rc;
            e.flags |= arec_out(tt__flt_slice_fails(fs->fl, row, text));
            break;
        }
        case TT_ROWS_RUNTIME:
            if (cell_null(&row[TT_C_RT_TS]))
                continue;
            e.kind = 1;
            e.id = cell_int(&row[TT_C_RT_ID]);
            e.name = cell_int(&row[TT_C_RT_NAME]);
            e.ts = row[TT_C_RT_TS].i;
            e.end = tt_sat_add(e.ts, cell_int(&row[TT_C_RT_DUR]));
            pid = &row[TT_C_RT_PID];
            tid = &row[TT_C_RT_TID];
            e.flags = arec_out(tt__flt_runtime_fails(fs->fl, row, text));
            break;
        case TT_ROWS_MEMORY:
            fs->mem_rowid++;
            if (cell_null(&row[TT_C_MEM_TS]) || cell_null(&row[TT_C_MEM_BYTES]))
                continue;
            e.kind = 2;
            e.id = fs->mem_rowid;
            e.name = cell_int(&row[TT_C_MEM_NAME]);
            e.ts = e.end = row[TT_C_MEM_TS].i;
            e.a = cell_int(&row[TT_C_MEM_DEVTYPE]);
            e.b = row[TT_C_MEM_BYTES].i;
            e.flags = arec_out(tt__flt_memory_fails(fs->fl, row, text));
            break;
        case TT_ROWS_GPU: {
            const tt__cell *kind = &row[TT_C_GPU_KIND];
            int annot = text_is(kind, text, "annotation");
            int work = !annot && (text_is(kind, text, "kernel") || text_is(kind, text, "memcpy") ||
                                  text_is(kind, text, "memset"));
            int fails = tt__flt_gpu_fails(fs->fl, row, text); /* every GPU row: its launch */
            fs->gpu_rowid++;
            if (fails < 0)
                return fails;
            if (!(work || annot) || cell_null(&row[TT_C_GPU_TS]))
                continue;
            e.flags = arec_out(fails);
            e.kind = 3;
            e.id = fs->gpu_rowid;
            e.name = cell_int(&row[TT_C_GPU_NAME]);
            e.ts = row[TT_C_GPU_TS].i;
            e.end = tt_sat_add(e.ts, cell_int(&row[TT_C_GPU_DUR]));
            e.a = annot;
            break;
        }
        default:
            return 0; /* flows, instants, metadata, ...: not in the pass */
        }
        if (pid) {
            struct tkey pk, tk;
            struct thread_stack *t;
            tkey_of_cell(&pk, pid, text);
            tkey_of_cell(&tk, tid, text);
            if (!(t = tt__avg_thread_for(fs->s, &pk, &tk)))
                return tt__oom();
            e.thread = (int32_t)(t - fs->s->threads);
        }
        if ((rc = tt__avg_runs_add(&fs->runs, &e)) < 0)
            return rc;
    }
    return 0;
}

/*
 * Device work of an op: a record that sorts right after the op's own (same
 * ts, end, kind and id) and adds to the frame the op has just pushed, so no
 * map of ops is held. The ingest gives the op's end as ts + max(dur, 0)
 * while the op's record has ts + dur: an op with a negative dur sends the
 * file through a database (neg_dur).
 */
static int fs_kernel(void *ctx, int64_t op_id, int64_t op_ts, int64_t op_end, int64_t dur)
{
    struct fstream *fs = ctx;
    struct arec e;
    memset(&e, 0, sizeof(e));
    e.kind = 0;
    e.id = op_id;
    e.ts = op_ts;
    e.end = op_end;
    e.b = dur;
    e.flags = AREC_DEVICE_WORK;
    return tt__avg_runs_add(&fs->runs, &e);
}

/* the launch of a GPU row to come, for the filters */
static int fs_launch(void *ctx, const tt__gpu_launch *l)
{
    return tt__flt_launch(((struct fstream *)ctx)->fl, l);
}

static int has_profile_memory(const char *metadata)
{
    /* as metadata LIKE '%"profile_memory":1%' (ASCII case-blind) */
    const char *p;
    for (p = metadata; p && *p; p++) {
        if (!strncasecmp(p, "\"profile_memory\":1", 18))
            return 1;
    }
    return 0;
}

/* say which way a file was read, to the log (topic "averages"; tracetool
 * prints it with TT_DEBUG_AVG=1, and tests check it) */
static int fallback_note(const char *why)
{
    tt__log(TT_LOG_DEBUG, "averages", "read twice: %s", why);
    return 1;
}

static int is_chrome(tt_trace_format f)
{
    return f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY;
}

/* where one trace's rows come from: a file, or trace_id of db; relink:
 * TT_ROWS_RELINK (the file's rows as a database gives them) */
struct avg_src {
    const char *path;
    tt_db *db;
    int64_t trace_id;
    unsigned relink;
    struct tt__flt *fl; /* the filters (NULL: none), loaded for this trace */
};

static int read_src(const struct avg_src *src, const tt__rowsink *sink, unsigned flags,
                    unsigned skip, tt__rows_result *res)
{
    if (src->db)
        return tt__db_rows(src->db, src->trace_id, sink,
                           skip | (flags & TT_READ_NO_ARGS ? TT_ROWS_NO_ARGS : 0), res);
    return tt__ingest_rows(src->path, sink, flags, skip | src->relink, res);
}

/* the tables the pass reads: slices, runtime calls, GPU activities, memory */
#define AVG_SKIP                                                                            \
    (1u << TT_ROWS_FLOW | 1u << TT_ROWS_META | 1u << TT_ROWS_INSTANT | 1u << TT_ROWS_ET | \
     1u << TT_ROWS_MEMTL)

static int km_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    (void)ctx, (void)table, (void)nrows, (void)ncols, (void)cells, (void)text;
    return 0;
}

/* the device time of each op, summed (SQLite's sum of gpu_ops.dur by op_id) */
static int km_kernel(void *ctx, int64_t op_id, int64_t op_ts, int64_t op_end, int64_t dur)
{
    struct i64map *m = ctx;
    size_t v = 0;
    (void)op_ts, (void)op_end;
    tt__i64map_get(m, op_id, &v);
    return tt__i64map_put(m, op_id, (size_t)tt_sat_add((int64_t)v, dur));
}

static void fstream_release(struct fstream *fs)
{
    size_t i;
    tt__avg_runs_release(&fs->runs);
    free(fs->win.win);
    for (i = 0; i < fs->strs.n; i++)
        free(fs->strs.s[i]);
    free(fs->strs.s);
    memset(fs, 0, sizeof(*fs));
}

/* the cells fs_rows reads: a database leaves the others out */
static const uint64_t avg_cols[TT_ROWS_COUNT] = {
    [TT_ROWS_SLICE] = TT_COL(TT_C_SL_ID) | TT_COL(TT_C_SL_CAT) | TT_COL(TT_C_SL_NAME) |
                      TT_COL(TT_C_SL_PID) | TT_COL(TT_C_SL_TID) | TT_COL(TT_C_SL_TS) |
                      TT_COL(TT_C_SL_DUR) | TT_COL(TT_C_SL_SEQ_NR) | TT_COL(TT_C_SL_FWD_TID) |
                      TT_COL(TT_C_SL_DIMS) | TT_COL(TT_C_SL_ARGS),
    [TT_ROWS_RUNTIME] = TT_COL(TT_C_RT_ID) | TT_COL(TT_C_RT_NAME) | TT_COL(TT_C_RT_PID) |
                        TT_COL(TT_C_RT_TID) | TT_COL(TT_C_RT_TS) | TT_COL(TT_C_RT_DUR),
    [TT_ROWS_GPU] = TT_COL(TT_C_GPU_KIND) | TT_COL(TT_C_GPU_NAME) | TT_COL(TT_C_GPU_TS) |
                    TT_COL(TT_C_GPU_DUR),
    [TT_ROWS_MEMORY] = TT_COL(TT_C_MEM_BYTES) | TT_COL(TT_C_MEM_DEVTYPE) |
                       TT_COL(TT_C_MEM_NAME) | TT_COL(TT_C_MEM_TS) | TT_COL(TT_C_MEM_PID) |
                       TT_COL(TT_C_MEM_TID),
};

/*
 * One reading of the source into the pass's records (fs, s set up here).
 * kmap: the device time of each op, known beforehand (a second reading,
 * when an op's negative dur keeps its device-work records from sorting
 * beside it); NULL: device work comes as records (fs_kernel).
 */
static int read_pass(const struct avg_src *src, const tt_avg_options *o, struct state *s,
                     struct fstream *fs, struct i64map *kmap, tt__rows_result *res)
{
    tt__rowsink sink = { 0 };
    memset(s, 0, sizeof(*s));
    memset(fs, 0, sizeof(*fs));
    s->o = o;
    s->ms = &fs->strs;
    s->want_stacks = o->group_by_stack > 0 || (o->version >= 3 && o->collect_stacks);
    fs->s = s;
    fs->kmap = kmap;
    fs->fl = src->fl;
    tt__flt_reset(src->fl); /* the strings and launches start again */
    sink.ctx = fs;
    sink.rows = fs_rows;
    sink.kernel = kmap ? NULL : fs_kernel;
    sink.gpu_launch = tt__flt_wants_launch(src->fl) ? fs_launch : NULL;
    sink.cols = avg_cols;
    /* stacks read an op's "Call stack" arg; nothing else needs the args */
    return read_src(src, &sink, s->want_stacks ? 0 : TT_READ_NO_ARGS, AVG_SKIP, res);
}

/* the pass over what read_pass gathered; releases fs */
static int run_pass(struct state *s, struct fstream *fs)
{
    int rc;
    tt__avg_steps_normalize(&fs->win);
    rc = tt__avg_pass_merge(s, &fs->runs, &fs->win, fs->id_memory, fs);
    tt__avg_runs_release(&fs->runs);
    return rc;
}

/*
 * One trace of a source, up to the pass's end: s holds the result to make,
 * with its strings in fs (release fs after the result is made). 1 (nothing
 * computed) when a file needs what only a database gives: the SQL passes
 * after a load, or it is not a Chrome/Kineto trace (the database says so in
 * its own words).
 */
static int avg_trace(const struct avg_src *src, const tt_avg_options *o, struct state *s,
                     struct fstream *fsp, tt__rows_result *res)
{
    struct fstream fs;
    struct i64map kmap;
    int rc = read_pass(src, o, s, &fs, NULL, res);
    if (rc == 0 && !src->db && !is_chrome(res->format))
        rc = 1; /* left out: the walk names the format when nothing is left */
    else if (rc == 0 && !src->db && res->needs_db)
        rc = fallback_note(res->why_db);
    if (rc == 0 && fs.neg_dur) {
        /* an op with a negative dur: its device time summed first, then read again */
        tt__log(TT_LOG_DEBUG, "averages", "ops with a negative dur: read three times");
        fstream_release(&fs);
        tt__avg_state_release(s);
        free(res->metadata);
        memset(&kmap, 0, sizeof(kmap));
        {
            tt__rowsink km = { &kmap, km_rows, km_kernel, NULL, NULL, NULL };
            rc = read_src(src, &km, TT_READ_NO_ARGS, AVG_SKIP, res);
        }
        free(res->metadata);
        res->metadata = NULL;
        if (rc == 0)
            rc = read_pass(src, o, s, &fs, &kmap, res);
        tt__i64map_free(&kmap);
    }
    if (rc == 0)
        rc = run_pass(s, &fs);
    if (rc != 0) {
        fstream_release(&fs);
        tt__avg_state_release(s);
        return rc;
    }
    *fsp = fs;
    s->ms = &fsp->strs;
    fsp->s = s;
    return 0;
}

/* the finished pass of a trace as a result of its own (takes s over) */
static int avg_finish(struct state *s, int64_t id, const char *label, const tt__rows_result *res,
                      tt_avg_trace **out)
{
    tt_avg_trace *tr = calloc(1, sizeof(*tr));
    int rc;
    *out = NULL;
    if (!tr)
        return tt__oom();
    rc = tt__avg_trace_result(s, id, label, res->have_rank, res->rank,
                              has_profile_memory(res->metadata), tr);
    if (rc < 0) {
        free(tr);
        return rc;
    }
    *out = tr;
    return 0;
}

/* one trace of src into *out (NULL when it is not a Chrome/Kineto trace) */
static int avg_src_trace(const struct avg_src *src, const tt_avg_options *o, int64_t id,
                         const char *label, tt__rows_result *res, tt_avg_trace **out)
{
    struct state s;
    struct fstream fs;
    int rc = avg_trace(src, o, &s, &fs, res);
    *out = NULL;
    if (rc == 0) {
        rc = avg_finish(&s, id, label, res, out);
        fstream_release(&fs);
    }
    return rc;
}


/* the visitor of analyze/input/each.h */
struct avg_visit {
    const tt_avg_options *o;
    tt_avg_result *out;
    struct tt__flt *fl; /* options.filter */
};

static int visit_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                      void **r)
{
    const struct avg_visit *v = ctx;
    struct avg_src src = { path, db, db ? id : 0, 0, v->fl };
    tt_avg_trace *tr = NULL;
    tt__spool sp = { -1, "" };
    int rc;
    memset(res, 0, sizeof(res[0]));
    *r = NULL;
    /* standard input or a pipe: from a copy, which a second reading may need */
    if (!db && (rc = tt__spool_input(&sp, path, &src.path)) < 0)
        return rc;
    if ((rc = tt__flt_load(v->fl, src.path, db, id)) < 0) /* --under's ops */
        return tt__spool_end(&sp, path, rc);
    if ((rc = avg_src_trace(&src, v->o, id, path, res, &tr)) == 1) {
        free(res->metadata);
        res->metadata = NULL;
        /* not a Chrome/Kineto trace: left out, as the walk says; else read
         * again, twice, for the links only the SQL passes make */
        src.relink = TT_ROWS_RELINK;
        rc = is_chrome(res->format) ? avg_src_trace(&src, v->o, id, path, res, &tr) : 0;
    } else if (rc == 0 && !db) {
        tt__log(TT_LOG_DEBUG, "averages", "read without a database");
    }
    tt__spool_end(&sp, path, rc);
    free(res->metadata);
    res->metadata = NULL;
    *r = tr;
    return rc;
}

static void visit_drop(void *ctx, void *r)
{
    (void)ctx;
    if (r)
        tt__avg_trace_release(r);
    free(r);
}

static int visit_take(void *ctx, void *r, int64_t id, const char *path)
{
    struct avg_visit *v = ctx;
    int rc = tt__avg_result_add(v->out, r);
    (void)id, (void)path;
    visit_drop(NULL, r);
    v->out->header_per_trace = v->out->ntraces > 1 || v->o->header_per_trace;
    return rc;
}

/*
 * Every Chrome/Kineto trace of the input (a file, a directory of them, or
 * the database db) that o selects, by (rank, id), into out.
 */
int tt__avg_each(const char *input, tt_db *db, const tt_avg_options *o, tt_avg_result *out)
{
    struct avg_visit av = { o, out, NULL };
    struct tt__visit v = { &av, visit_read, visit_take, visit_drop };
    int rc;
    out->header_per_trace = o->header_per_trace;
    if ((rc = tt__flt_new(&av.fl, o->version >= 4 ? &o->filter : NULL)) < 0)
        return rc;
    rc = tt__each_trace(o->trace_id, o->rank, input, db, &v);
    tt__flt_free(av.fl);
    return rc;
}
