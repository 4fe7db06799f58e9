/*
 * analyze/averages/averages_stream.c - averages straight from a trace file, without a
 * database: the ingest's rows (tt__ingest_rows: same decoding and in-stream
 * links, no SQLite) become the same records the tables would give, the
 * device time of each op comes as records that sort right after the op's
 * (fs_kernel), and the same pass runs. When the rows need the SQL passes
 * that follow a load, the file goes through a temporary database instead
 * (tt__avg_stream says which in the log: topic "averages", TT_DEBUG_AVG=1).
 */
#include "analyze/averages/averages_state.h"
#include "common/log.h"
#include "store/ingest_rows.h"

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

static int fs_string(struct fstream *fs, int64_t id, const char *str, size_t len)
{
    char *copy;
    if (id != (int64_t)fs->strs.n + 1)
        return tt_error_set(TT_ERROR, "string ids out of order (%lld)", (long long)id);
    if (TT_ALLOC_GROW(fs->strs.s, fs->strs.n + 1, fs->strs.alloc) < 0 ||
        !(copy = strndup(str, len)))
        return tt_error_set(TT_ENOMEM, "out of memory");
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
    return 0;
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
        switch (table) {
        case TT_ROWS_STR:
            if ((rc = fs_string(fs, row[TT_C_STR_ID].i, text + row[TT_C_STR_S].i,
                                row[TT_C_STR_S].len)) < 0)
                return rc;
            continue;
        case TT_ROWS_SLICE: {
            int64_t cat = cell_int(&row[TT_C_SL_CAT]);
            if ((rc = fs_step(fs, row)) < 0)
                return rc;
            if (cell_null(&row[TT_C_SL_TS]) ||
                !(cell_null(&row[TT_C_SL_CAT]) || (cat && (cat == fs->id_ua ||
                                                           cat == fs->id_cpu_op ||
                                                           cat == fs->id_operator))))
                continue;
            if (cell_int(&row[TT_C_SL_DUR]) < 0)
                fs->neg_dur = 1;
            e.kind = 0;
            e.id = row[TT_C_SL_ID].i;
            e.name = cell_int(&row[TT_C_SL_NAME]);
            e.ts = row[TT_C_SL_TS].i;
            e.end = e.ts + cell_int(&row[TT_C_SL_DUR]);
            /* no Input Dims: "[]", whose id may only come later in the file */
            e.a = cell_null(&row[TT_C_SL_DIMS]) ? -1 : row[TT_C_SL_DIMS].i;
            e.flags = cat && cat == fs->id_ua ? AREC_USER_ANNOTATION : 0;
            pid = &row[TT_C_SL_PID];
            tid = &row[TT_C_SL_TID];
            break;
        }
        case TT_ROWS_RUNTIME:
            if (cell_null(&row[TT_C_RT_TS]))
                continue;
            e.kind = 1;
            e.id = cell_int(&row[TT_C_RT_ID]);
            e.name = cell_int(&row[TT_C_RT_NAME]);
            e.ts = row[TT_C_RT_TS].i;
            e.end = e.ts + cell_int(&row[TT_C_RT_DUR]);
            pid = &row[TT_C_RT_PID];
            tid = &row[TT_C_RT_TID];
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
            break;
        case TT_ROWS_GPU: {
            const tt__cell *kind = &row[TT_C_GPU_KIND];
            int annot = text_is(kind, text, "annotation");
            int work = !annot && (text_is(kind, text, "kernel") || text_is(kind, text, "memcpy") ||
                                  text_is(kind, text, "memset"));
            fs->gpu_rowid++;
            if (!(work || annot) || cell_null(&row[TT_C_GPU_TS]))
                continue;
            e.kind = 3;
            e.id = fs->gpu_rowid;
            e.name = cell_int(&row[TT_C_GPU_NAME]);
            e.ts = row[TT_C_GPU_TS].i;
            e.end = e.ts + cell_int(&row[TT_C_GPU_DUR]);
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
                return tt_error_set(TT_ENOMEM, "out of memory");
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
    tt__log(TT_LOG_DEBUG, "averages", "through a temporary database: %s", why);
    return 1;
}

/*
 * The file's one trace into res. Returns 1 (nothing computed) when the file
 * needs what only a database gives: the SQL passes after a load,
 * --group-by-stack and --stacks (JSON in args), a non-Kineto file, ops with a negative
 * dur, or input that cannot be read twice (standard input, pipes).
 */
int tt__avg_stream(const char *path, const tt_avg_options *o, tt_avg_result *out)
{
    struct state s;
    struct fstream fs;
    tt__rowsink sink;
    tt__rows_result res;
    tt_avg_trace tr;
    size_t i;
    int rc;

    struct stat sb;
    if (o->group_by_stack > 0)
        return fallback_note("--group-by-stack reads the args");
    if (o->version >= 3 && o->collect_stacks)
        return fallback_note("--stacks reads the args and the python_function events");
    /* the way back reads the file again: standard input and pipes cannot */
    if (!strcmp(path, "-") || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return fallback_note("not a regular file (read once)");
    memset(&s, 0, sizeof(s));
    memset(&fs, 0, sizeof(fs));
    s.o = o;
    s.ms = &fs.strs;
    fs.s = &s;
    sink.ctx = &fs;
    sink.rows = fs_rows;
    sink.kernel = fs_kernel;
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS,
                         1u << TT_ROWS_FLOW | 1u << TT_ROWS_META | 1u << TT_ROWS_INSTANT |
                             1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL,
                         &res);
    if (rc == 0 && fs.neg_dur)
        rc = fallback_note("ops with a negative dur");
    else if (rc == 0 && res.needs_db)
        rc = fallback_note(res.why_db);
    else if (rc == 0 && res.format != TT_FMT_CHROME && res.format != TT_FMT_CHROME_ARRAY)
        rc = fallback_note("not a Chrome/Kineto trace");
    else if (rc == 0)
        tt__log(TT_LOG_DEBUG, "averages", "read without a database");
    if (rc == 0) {
        tt__avg_steps_normalize(&fs.win);
        rc = tt__avg_pass_merge(&s, &fs.runs, &fs.win, fs.id_memory, &fs);
    }
    tt__avg_runs_release(&fs.runs);
    free(fs.win.win);
    if (rc == 0) {
        rc = tt__avg_trace_result(&s, 1, path, res.have_rank, res.rank,
                                  has_profile_memory(res.metadata), &tr);
        if (rc == 0 && (rc = tt__avg_result_add(out, &tr)) < 0)
            tt__avg_trace_release(&tr);
        out->header_per_trace = o->header_per_trace;
    } else {
        tt__avg_state_release(&s);
    }
    for (i = 0; i < fs.strs.n; i++)
        free(fs.strs.s[i]);
    free(fs.strs.s);
    free(res.metadata);
    return rc;
}
