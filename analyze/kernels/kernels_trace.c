/*
 * analyze/kernels/kernels_trace.c - `tracetool kernels --by activity`: one row per
 * kernel, memcpy and memset, the shape of Nsight Systems' cuda_gpu_trace
 * (start, duration, correlation, grid, block, registers, shared memory,
 * bytes, throughput, memory kinds, device, context, stream, name).
 *
 * The rows come out of one SQLite statement per trace, ordered by start
 * (then by their order in the file): SQLite sorts in temporary files
 * (temp_store=FILE), and the rows are handed to the callback, or printed
 * CHUNK at a time through the table writer, so memory does not grow with
 * the trace. A trace file is first read into a temporary database of the
 * tables this needs.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "store/ingest_rows.h"
#include "analyze/kernels/kernels_state.h"
#include "analyze/steps/steps.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <sys/stat.h>

#define CHUNK 1024 /* rows per write of the table writer */

enum { Q_KIND, Q_NAME, Q_TS, Q_DUR, Q_CORR, Q_GRID, Q_BLOCK = Q_GRID + 3, Q_REGS = Q_BLOCK + 3,
       Q_SMEM, Q_BYTES, Q_COPY, Q_DEVICE, Q_CONTEXT, Q_STREAM };

/* SQL: the launch time LT falls in a chosen step (windows disjoint) */
#define IN_STEPS(LT)                                                                         \
    " AND (SELECT w.b FROM temp.tt_kwin AS w WHERE w.a <= " LT " ORDER BY w.a DESC LIMIT 1)" \
    " > " LT
#define LAUNCH_TS "coalesce((SELECT r.ts FROM runtime AS r WHERE r.id = g.runtime_id), g.ts)"

#define ACTIVITY_SQL(STEPS)                                                                \
    "SELECT g.kind, coalesce(n.s, '?'), g.ts, g.dur, g.correlation, g.grid_x, g.grid_y,"   \
    " g.grid_z, g.block_x, g.block_y, g.block_z, g.registers, g.shared_mem, g.bytes,"      \
    " g.copy_kind, g.device, g.context, g.stream"                                          \
    " FROM gpu_ops AS g LEFT JOIN strings AS n ON n.id = g.name"                           \
    " WHERE g.trace_id = ?1 AND g.kind IN (?2, ?3, ?4)" STEPS " ORDER BY g.ts, g.id LIMIT ?5"
static const char activity_sql[] = ACTIVITY_SQL("");
/* --steps: launched in a chosen step (temp.tt_kwin) */
static const char activity_steps_sql[] = ACTIVITY_SQL(IN_STEPS(LAUNCH_TS));

static const char traces_sql[] =
    "SELECT id, path FROM traces WHERE format IN ('kineto-json', 'chrome-array')"
    " AND (?1 = 0 OR id = ?1) AND (?2 < 0 OR rank = ?2) ORDER BY rank, id";

/* with --steps: the chosen ProfilerStep#N spans of trace into temp.tt_kwin
 * (a, b), for IN_STEPS; 0 when there is no filter */
static int step_windows(tt_db *db, const tt_kern_options *o, int64_t trace)
{
    struct tt__step *st = NULL;
    sqlite3_stmt *ins;
    size_t n = 0, i;
    int rc;
    if (!tt__kern_steps_on(o))
        return 0;
    /* emptied, not dropped: a table cannot be dropped while the traces'
     * query is still reading */
    if (tt_db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS tt_kwin(a INTEGER PRIMARY KEY, b INTEGER);"
                       " DELETE FROM temp.tt_kwin") < 0 ||
        tt_db_prepare(db, &ins, "INSERT OR IGNORE INTO temp.tt_kwin(a, b) VALUES(?1, ?2)") < 0)
        return TT_EDB;
    if ((rc = tt__step_spans(db, trace, &st, &n)) < 0) {
        sqlite3_finalize(ins);
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        if (st[i].num < o->step_from || st[i].num > o->step_to)
            continue;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, st[i].ts);
        sqlite3_bind_int64(ins, 2, st[i].end);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = tt_db_error(db, "cannot note the chosen steps");
    }
    sqlite3_finalize(ins);
    free(st);
    return rc;
}

static int open_activities(tt_db **db, const char *path)
{
    return tt__open_ingested_temp_only(db, path, TT_READ_NO_ARGS,
                                       1u << TT_ROWS_MEMORY | 1u << TT_ROWS_FLOW |
                                           1u << TT_ROWS_INSTANT | 1u << TT_ROWS_META |
                                           1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL);
}

/* the kinds of o->what, bound to ?2..?4 */
static void bind_kinds(sqlite3_stmt *st, const tt_kern_options *o, int first)
{
    static const char *const k[3][3] = { { "kernel", "memcpy", "memset" },
                                         { "kernel", "kernel", "kernel" },
                                         { "memcpy", "memset", "memset" } };
    int w = o->what == TT_KERN_KERNELS ? 1 : o->what == TT_KERN_MEMORY ? 2 : 0, i;
    for (i = 0; i < 3; i++)
        sqlite3_bind_text(st, first + i, k[w][i], -1, SQLITE_STATIC);
}

static int64_t col_i64(sqlite3_stmt *st, int c)
{
    return sqlite3_column_type(st, c) == SQLITE_INTEGER ? sqlite3_column_int64(st, c)
                                                         : TT_KERN_NULL;
}

/* "Memcpy HtoD (Pageable -> Device)": "Pageable" and "Device" */
static void mem_kinds(const char *name, char *src, char *dst, size_t cap)
{
    const char *o = strchr(name, '('), *a = o ? strstr(o, " -> ") : NULL;
    const char *c = a ? strchr(a, ')') : NULL;
    src[0] = dst[0] = '\0';
    if (!c || (size_t)(a - o - 1) >= cap || (size_t)(c - a - 4) >= cap)
        return;
    memcpy(src, o + 1, (size_t)(a - o - 1));
    src[a - o - 1] = '\0';
    memcpy(dst, a + 4, (size_t)(c - a - 4));
    dst[c - a - 4] = '\0';
}

/* the walk over the selected traces: begin/end around each trace's rows */
struct walk {
    void *ctx;
    void (*start)(void *ctx); /* after the checks, before the first trace */
    int (*begin)(void *ctx, int64_t trace, const char *path);
    int (*row)(void *ctx, const tt_kern_activity *a);
    int (*end)(void *ctx);
};

static int walk_trace(tt_db *db, const tt_kern_options *o, int64_t trace, const struct walk *w)
{
    sqlite3_stmt *st;
    tt_kern_activity a;
    char src[32], dst[32];
    int r = SQLITE_DONE, rc, i;
    if ((rc = step_windows(db, o, trace)) < 0)
        return rc;
    if (tt_db_prepare(db, &st, tt__kern_steps_on(o) ? activity_steps_sql : activity_sql) < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, trace);
    bind_kinds(st, o, 2);
    sqlite3_bind_int64(st, 5, o->row_limit);
    memset(&a, 0, sizeof(a));
    a.trace_id = trace;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        a.kind = (const char *)sqlite3_column_text(st, Q_KIND);
        a.name = (const char *)sqlite3_column_text(st, Q_NAME);
        a.start_ns = col_i64(st, Q_TS);
        a.dur_ns = col_i64(st, Q_DUR);
        a.correlation = col_i64(st, Q_CORR);
        for (i = 0; i < 3; i++) {
            a.grid[i] = col_i64(st, Q_GRID + i);
            a.block[i] = col_i64(st, Q_BLOCK + i);
        }
        a.registers = col_i64(st, Q_REGS);
        a.shared_mem = col_i64(st, Q_SMEM);
        a.bytes = col_i64(st, Q_BYTES);
        a.copy_kind = (const char *)sqlite3_column_text(st, Q_COPY);
        a.device = col_i64(st, Q_DEVICE);
        a.context = col_i64(st, Q_CONTEXT);
        a.stream = col_i64(st, Q_STREAM);
        mem_kinds(a.name ? a.name : "", src, dst, sizeof(src));
        a.src_kind = src[0] ? src : NULL;
        a.dst_kind = dst[0] ? dst : NULL;
        rc = w->row(w->ctx, &a);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read the GPU activities");
    sqlite3_finalize(st);
    return rc;
}

/* the selected traces: *n of them; *found: whether one has an activity */
static int scan_traces(tt_db *db, const tt_kern_options *o, const struct walk *w, int *n,
                       int *found)
{
    sqlite3_stmt *tr, *ex = NULL;
    int rc = 0;
    *n = 0;
    if (tt_db_prepare(db, &tr, traces_sql) < 0)
        return TT_EDB;
    if (!w && tt_db_prepare(db, &ex, "SELECT 1 FROM gpu_ops WHERE trace_id = ?1"
                                     " AND kind IN (?2, ?3, ?4) LIMIT 1") < 0) {
        sqlite3_finalize(tr);
        return TT_EDB;
    }
    sqlite3_bind_int64(tr, 1, o->trace_id);
    sqlite3_bind_int64(tr, 2, o->rank);
    while (rc == 0 && sqlite3_step(tr) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(tr, 0);
        const char *p = (const char *)sqlite3_column_text(tr, 1);
        (*n)++;
        if (!w) { /* only look */
            sqlite3_reset(ex);
            sqlite3_bind_int64(ex, 1, id);
            bind_kinds(ex, o, 2);
            *found |= sqlite3_step(ex) == SQLITE_ROW;
            continue;
        }
        if (w->begin && (rc = w->begin(w->ctx, id, p ? p : "")) != 0)
            break;
        if ((rc = walk_trace(db, o, id, w)) == 0 && w->end)
            rc = w->end(w->ctx);
    }
    sqlite3_finalize(tr);
    sqlite3_finalize(ex);
    return rc;
}

/* the errors before any row: no trace, or no activity in them */
static int walk_all(tt_db *db, const tt_kern_options *o, const struct walk *w)
{
    int n = 0, found = 0, rc;
    if ((rc = scan_traces(db, o, NULL, &n, &found)) < 0)
        return rc;
    if (!n)
        return tt__db_none(db, o->trace_id || o->rank >= 0, "Chrome/Kineto trace");
    if (!found)
        return tt__kern_nothing(db->source ? db->source : db->path, db->source != NULL, o);
    if (w->start)
        w->start(w->ctx);
    return scan_traces(db, o, w, &n, &found);
}

int tt_kernels_db_activities(tt_db *db, const tt_kern_options *opts, tt_kern_activity_fn fn,
                             void *ctx)
{
    struct walk w;
    memset(&w, 0, sizeof(w));
    w.ctx = ctx;
    w.row = fn;
    return walk_all(db, opts, &w);
}

int tt_kernels_file_activities(const char *path, const tt_kern_options *opts,
                               tt_kern_activity_fn fn, void *ctx)
{
    tt_db *db;
    int rc;
    if ((rc = open_activities(&db, path)) < 0)
        return rc;
    rc = tt_kernels_db_activities(db, opts, fn, ctx);
    tt_db_free(db);
    return rc;
}

/* ---- printing, CHUNK rows at a time through the table writer ---- */

enum { A_TRACE, A_START, A_DUR, A_CORR, A_KIND, A_GX, A_GY, A_GZ, A_BX, A_BY, A_BZ, A_REGS,
       A_SMEM, A_BYTES, A_GBPS, A_COPY, A_SRC, A_DST, A_DEVICE, A_CTX, A_STREAM, A_NAME,
       A_COUNT };

/* fixed widths: the parts of one table line up in text */
static const tt_table_col act_cols[A_COUNT] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Start (ns)", "start_ns", TT_COL_NS, 0, 0, 19, 0, 0, 0, 0 },
    { "Duration (ns)", "dur_ns", TT_COL_NS, 0, 0, 13, 0, 0, 0, 0 },
    { "CorrId", "correlation", TT_COL_INT, 0, 0, 8, 0, 0, 0, 0 },
    { "Kind", "kind", TT_COL_TEXT, 0, 0, 6, 0, 0, 0, 0 },
    { "GrdX", "grid_x", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "GrdY", "grid_y", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "GrdZ", "grid_z", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "BlkX", "block_x", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "BlkY", "block_y", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "BlkZ", "block_z", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Reg/Trd", "registers", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "SMem (B)", "shared_mem", TT_COL_BYTES, 0, 0, 8, 0, 0, 0, 0 },
    { "Bytes (MB)", "bytes", TT_COL_BYTES, 0, 0, 10, 0, 3, 1e6, 0 },
    { "GB/s", "gb_per_s", TT_COL_FLOAT, 0, 0, 7, 3, 2, 0, 0 },
    { "CopyKd", "copy_kind", TT_COL_TEXT, 0, 0, 6, 0, 0, 0, 0 },
    { "SrcMemKd", "src_kind", TT_COL_TEXT, 0, 0, 8, 0, 0, 0, 0 },
    { "DstMemKd", "dst_kind", TT_COL_TEXT, 0, 0, 8, 0, 0, 0, 0 },
    { "Device", "device", TT_COL_INT, 0, 0, 6, 0, 0, 0, 0 },
    { "Ctx", "context", TT_COL_INT, 0, 0, 4, 0, 0, 0, 0 },
    { "Strm", "stream", TT_COL_INT, 0, 0, 5, 0, 0, 0, 0 },
    { "Name", "name", TT_COL_TEXT, 0, 0, 50, 0, 0, 0, TT_COL_QUOTE },
};

struct aprint {
    const tt_kern_options *o;
    FILE *out;
    tt_table *t;
    int traces;  /* traces begun */
    int parts;   /* parts of this trace's table written */
    int csv_any; /* CSV: the header is out */
    int64_t rows; /* of this trace */
};

static void set_i64(tt_table *t, size_t col, int64_t v)
{
    if (v != TT_KERN_NULL)
        tt_table_set_int(t, col, v);
}

static int add_activity(tt_table *t, const tt_kern_activity *a)
{
    int i;
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, A_KIND, a->kind) < 0 ||
        tt_table_set_text(t, A_NAME, a->name) < 0 ||
        tt_table_set_text(t, A_COPY, a->copy_kind) < 0 ||
        tt_table_set_text(t, A_SRC, a->src_kind) < 0 ||
        tt_table_set_text(t, A_DST, a->dst_kind) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    set_i64(t, A_TRACE, a->trace_id);
    set_i64(t, A_START, a->start_ns);
    set_i64(t, A_DUR, a->dur_ns);
    set_i64(t, A_CORR, a->correlation);
    for (i = 0; i < 3; i++) {
        set_i64(t, A_GX + (size_t)i, a->grid[i]);
        set_i64(t, A_BX + (size_t)i, a->block[i]);
    }
    set_i64(t, A_REGS, a->registers);
    set_i64(t, A_SMEM, a->shared_mem);
    set_i64(t, A_BYTES, a->bytes);
    if (a->bytes != TT_KERN_NULL && a->dur_ns != TT_KERN_NULL && a->dur_ns > 0)
        tt_table_set_float(t, A_GBPS, (double)a->bytes / (double)a->dur_ns); /* bytes/ns */
    set_i64(t, A_DEVICE, a->device);
    set_i64(t, A_CTX, a->context);
    set_i64(t, A_STREAM, a->stream);
    return 0;
}

/* the rows so far as one part of the trace's table; final: its last */
static int flush_part(struct aprint *p, int final)
{
    static const size_t text_cols[] = { A_START, A_DUR, A_CORR, A_GX, A_GY, A_GZ, A_BX, A_BY,
                                        A_BZ, A_REGS, A_SMEM, A_BYTES, A_GBPS, A_SRC, A_DST,
                                        A_DEVICE, A_CTX, A_STREAM, A_NAME };
    static const size_t csv_cols[] = { A_TRACE, A_START, A_DUR, A_CORR, A_KIND, A_GX, A_GY,
                                       A_GZ, A_BX, A_BY, A_BZ, A_REGS, A_SMEM, A_BYTES, A_GBPS,
                                       A_COPY, A_SRC, A_DST, A_DEVICE, A_CTX, A_STREAM, A_NAME };
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    int rc;
    if (!final && tt_table_nrows(p->t) == 0)
        return 0;
    switch (p->o->format) {
    case TT_FORMAT_JSON:
        w.format = TT_FORMAT_JSON;
        w.cols = csv_cols + 1; /* the trace is the enclosing object's */
        w.ncols = TT_ARRAY_SIZE(csv_cols) - 1;
        w.indent = "  ";
        w.flags = (p->parts ? TT_TABLE_JSON_NO_OPEN : 0) | (final ? 0 : TT_TABLE_JSON_NO_CLOSE);
        break;
    case TT_FORMAT_CSV:
        w.format = TT_FORMAT_CSV;
        w.cols = csv_cols;
        w.ncols = TT_ARRAY_SIZE(csv_cols);
        w.no_header = p->csv_any;
        p->csv_any = 1;
        break;
    default:
        if (final && p->rows == 0 && p->o->format == TT_FORMAT_MARKDOWN) {
            fputs("(none)\n", p->out);
            tt_table_free(p->t);
            p->t = NULL;
            return 0;
        }
        w.format = p->o->format == TT_FORMAT_MARKDOWN ? TT_FORMAT_MARKDOWN : TT_FORMAT_TABLE;
        w.cols = text_cols;
        w.ncols = TT_ARRAY_SIZE(text_cols);
        w.no_header = p->parts > 0;
        w.indent = " ";
    }
    rc = tt_table_write(p->t, &w, p->out);
    p->parts++;
    tt_table_free(p->t);
    p->t = NULL;
    if (rc == 0 && !final && !(p->t = tt_table_new(act_cols, A_COUNT)))
        rc = tt_error_set(TT_ENOMEM, "out of memory");
    if (final && p->rows == 0 && p->o->format == TT_FORMAT_TABLE)
        fputs(" (none)\n", p->out);
    return rc;
}

static int pr_begin(void *ctx, int64_t trace, const char *path)
{
    struct aprint *p = ctx;
    int format = p->o->format;
    if (format == TT_FORMAT_JSON) {
        tt_buf lb = TT_BUF_INIT;
        tt_buf_add_json_string(&lb, path, strlen(path));
        fprintf(p->out, "%s{\"trace_id\": %" PRId64 ", \"path\": %s, \"what\": \"activities\","
                        " \"rows\": ", p->traces ? ",\n" : "", trace, lb.buf);
        tt_buf_release(&lb);
    } else if (format == TT_FORMAT_MARKDOWN) {
        fprintf(p->out, "%s### GPU activity trace, trace %" PRId64 ": ", p->traces ? "\n" : "",
                trace);
        tt_table_markdown_text(p->out, path);
        fputs("\n\n", p->out);
    } else if (format != TT_FORMAT_CSV) {
        tt_buf v = TT_BUF_INIT;
        fprintf(p->out, "%sGPU activity trace, trace %" PRId64 ": %s\n\n", p->traces ? "\n" : "",
                trace, tt_visible(&v, path));
        tt_buf_release(&v);
    }
    p->traces++;
    p->parts = 0;
    p->rows = 0;
    if (!(p->t = tt_table_new(act_cols, A_COUNT)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    return 0;
}

static int pr_row(void *ctx, const tt_kern_activity *a)
{
    struct aprint *p = ctx;
    int rc;
    if ((rc = add_activity(p->t, a)) < 0)
        return rc;
    p->rows++;
    return tt_table_nrows(p->t) >= CHUNK ? flush_part(p, 0) : 0;
}

static int pr_end(void *ctx)
{
    struct aprint *p = ctx;
    int rc = flush_part(p, 1);
    if (p->o->format == TT_FORMAT_JSON)
        fputc('}', p->out);
    return rc;
}

static void pr_start(void *ctx)
{
    struct aprint *p = ctx;
    if (p->o->format == TT_FORMAT_JSON)
        fputs("{\"traces\": [", p->out);
}

static int print_activities_db(tt_db *db, const tt_kern_options *o, FILE *out)
{
    struct aprint p;
    struct walk w;
    int rc;
    memset(&p, 0, sizeof(p));
    p.o = o;
    p.out = out;
    memset(&w, 0, sizeof(w));
    w.ctx = &p;
    w.start = pr_start;
    w.begin = pr_begin;
    w.row = pr_row;
    w.end = pr_end;
    rc = walk_all(db, o, &w);
    tt_table_free(p.t);
    if (o->format == TT_FORMAT_JSON && rc == 0)
        fputs("\n]}\n", out);
    return rc;
}

/* a file, or a directory of them, through a temporary database */
int tt__kern_print_activities(const char *input, tt_db *db, const tt_kern_options *o, FILE *out)
{
    struct stat sb;
    int rc;
    if (db)
        return print_activities_db(db, o, out);
    if (strcmp(input, "-") && stat(input, &sb) == 0 && S_ISDIR(sb.st_mode))
        rc = tt_db_open_input(&db, input);
    else
        rc = open_activities(&db, input);
    if (rc < 0)
        return rc;
    rc = print_activities_db(db, o, out);
    tt_db_free(db);
    return rc;
}
