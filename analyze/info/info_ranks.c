/*
 * analyze/info/info_ranks.c - the rank overview `tracetool info` starts with on a
 * database of several traces: one row per trace, by rank, with the world
 * size, the GPU the rank ran on (its most used device among the GPU
 * activities, named by the trace's deviceProperties), the number of
 * ProfilerStep#N annotations, the span and the events.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/info/info_ranks.h"
#include "common/arena.h"
#include "formats/json.h"
#include "store/db_internal.h"
#include "tracetool/table.h"

#include <inttypes.h>

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? strdup((const char *)s) : NULL;
}

/* one int of a per-trace query (-1: no row or NULL) */
static int64_t q_int(sqlite3_stmt *st, int64_t trace_id, int col)
{
    int64_t v = -1;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, trace_id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, col) != SQLITE_NULL)
        v = sqlite3_column_int64(st, col);
    return v;
}

/* the device's name in the trace's deviceProperties (device < 0 or not
 * listed: the first entry's), or NULL */
static int gpu_name(sqlite3_stmt *st, int64_t trace_id, int64_t device, char **out)
{
    int rc;
    *out = NULL;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, trace_id);
    sqlite3_bind_int64(st, 2, device);
    if ((rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
        !(*out = col_dup(st, 0)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : TT_EDB;
}

static int cmp_rank(const void *a, const void *b)
{
    const tt_info_rank *x = a, *y = b;
    if (x->have_rank != y->have_rank)
        return x->have_rank ? -1 : 1; /* unknown ranks last */
    if (x->have_rank && x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->trace_id > y->trace_id) - (x->trace_id < y->trace_id);
}

static const char *const sql_traces =
    "SELECT id, path, rank, world_size, start_ns, end_ns, events FROM traces ORDER BY id";
/* the rank's device: the one most of its GPU activities ran on */
static const char *const sql_device =
    "SELECT device, COUNT(*) AS n FROM gpu_ops WHERE trace_id = ?1 AND device IS NOT NULL"
    " GROUP BY device ORDER BY n DESC, device LIMIT 1";
/* ProfilerStep#N annotations, as averages --steps finds them */
static const char *const sql_steps =
    "SELECT COUNT(DISTINCT s.name) FROM slices s WHERE s.trace_id = ?1 AND s.name IN"
    " (SELECT id FROM strings WHERE s LIKE 'ProfilerStep#%')";
static const char *const sql_gpu =
    "SELECT COALESCE((SELECT json_extract(d.value, '$.name') FROM traces t,"
    " json_each(t.metadata, '$.deviceProperties') d WHERE t.id = ?1 AND json_valid(t.metadata)"
    " AND json_extract(d.value, '$.id') = ?2 LIMIT 1),"
    " (SELECT json_extract(metadata, '$.deviceProperties[0].name') FROM traces"
    " WHERE id = ?1 AND json_valid(metadata)))";

static int fill_row(sqlite3_stmt *tr, sqlite3_stmt *dev, sqlite3_stmt *steps,
                    sqlite3_stmt *gpu, tt_info_rank *r)
{
    memset(r, 0, sizeof(*r));
    r->trace_id = sqlite3_column_int64(tr, 0);
    if (!(r->path = col_dup(tr, 1)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    if ((r->have_rank = sqlite3_column_type(tr, 2) != SQLITE_NULL))
        r->rank = sqlite3_column_int64(tr, 2);
    if ((r->have_world_size = sqlite3_column_type(tr, 3) != SQLITE_NULL))
        r->world_size = sqlite3_column_int64(tr, 3);
    if ((r->have_span = sqlite3_column_type(tr, 4) != SQLITE_NULL &&
                        sqlite3_column_type(tr, 5) != SQLITE_NULL)) {
        r->start_ns = sqlite3_column_int64(tr, 4);
        r->end_ns = sqlite3_column_int64(tr, 5);
    }
    r->events = sqlite3_column_int64(tr, 6);
    r->device = q_int(dev, r->trace_id, 0);
    r->steps = q_int(steps, r->trace_id, 0);
    if (r->steps < 0)
        r->steps = 0;
    return gpu_name(gpu, r->trace_id, r->device, &r->gpu);
}

int tt_info_ranks_db(tt_db *db, tt_info_ranks *out)
{
    sqlite3_stmt *st[4] = { NULL, NULL, NULL, NULL };
    const char *sql[4] = { sql_traces, sql_device, sql_steps, sql_gpu };
    size_t alloc = 0, i;
    int rc = 0, s;
    memset(out, 0, sizeof(*out));
    for (i = 0; i < 4 && rc == 0; i++)
        rc = tt_db_prepare(db, &st[i], sql[i]) < 0 ? TT_EDB : 0;
    while (rc == 0 && (s = sqlite3_step(st[0])) == SQLITE_ROW) {
        if (TT_ALLOC_GROW(out->rows, out->n + 1, alloc) < 0) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            break;
        }
        rc = fill_row(st[0], st[1], st[2], st[3], &out->rows[out->n]);
        out->n++; /* freed with the rest on failure */
        if (rc == TT_EDB)
            rc = tt_db_error(db, "cannot read the rank overview");
    }
    if (rc == 0 && s != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read traces");
    for (i = 0; i < 4; i++)
        sqlite3_finalize(st[i]);
    if (rc < 0) {
        tt_info_ranks_free(out);
        return rc;
    }
    if (out->n > 1)
        qsort(out->rows, out->n, sizeof(out->rows[0]), cmp_rank);
    return 0;
}

/* of one deviceProperties entry: its "id" (when an integer) and "name"
 * (when a string), the first key of each name */
static int devprop(tt_jp *jp, tt_arena *a, int64_t *id, int *have_id, char **name)
{
    const char *k, *s;
    size_t kl, len;
    tt_jnum num;
    int r;
    if (tt_jp_peek(jp) != TT_JT_OBJECT)
        return tt_jp_skip(jp);
    if (tt_jp_object_begin(jp) != 0)
        return -1;
    while ((r = tt_jp_object_next(jp, a, &k, &kl)) == 1) {
        if (kl == 4 && !memcmp(k, "name", 4) && !*name && tt_jp_peek(jp) == TT_JT_STRING) {
            if (tt_jp_string(jp, a, &s, &len) != 0)
                return -1;
            if (!(*name = strndup(s, len)))
                return TT_ENOMEM;
        } else if (kl == 2 && !memcmp(k, "id", 2) && !*have_id &&
                   tt_jp_peek(jp) == TT_JT_NUMBER) {
            if (tt_jp_number(jp, &num) != 0)
                return -1;
            if (num.fits) {
                *id = num.i;
                *have_id = 1;
            }
        } else if (tt_jp_skip(jp) < 0) {
            return -1;
        }
    }
    return r < 0 ? -1 : 0;
}

/* the name of device in deviceProperties (the entry whose id it is, else
 * the first entry's), as the SQL of a database finds it; NULL when none */
static int devprops_name(const char *json, int64_t device, char **out)
{
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    char *first = NULL;
    int n = 0, rc = 0;
    *out = NULL;
    if (!json)
        return 0;
    tt_jp_init(&jp, "", json, 0, json, strlen(json));
    if (tt_jp_peek(&jp) == TT_JT_ARRAY && tt_jp_array_begin(&jp) == 0) {
        while (rc == 0 && !*out && tt_jp_array_next(&jp) == 1) {
            int64_t id = 0;
            int have_id = 0;
            char *name = NULL;
            rc = devprop(&jp, &a, &id, &have_id, &name);
            if (rc == 0 && have_id && id == device && name) {
                *out = name;
                name = NULL;
            } else if (n == 0) {
                first = name;
                name = NULL;
            }
            free(name);
            n++;
        }
    }
    tt_arena_release(&a);
    if (rc == TT_ENOMEM) {
        free(first);
        free(*out);
        *out = NULL;
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    if (!*out)
        *out = first;
    else
        free(first);
    return 0;
}

int tt__info_rank_row(tt_info_rank *r, const tt_info_summary *s, int64_t device, int64_t steps,
                      const char *devprops)
{
    memset(r, 0, sizeof(*r));
    r->trace_id = s->trace_id;
    if (!(r->path = strdup(s->path ? s->path : "")))
        return tt_error_set(TT_ENOMEM, "out of memory");
    r->have_rank = s->have_rank;
    r->rank = s->rank;
    r->have_world_size = s->have_world_size;
    r->world_size = s->world_size;
    r->have_span = s->have_span;
    r->start_ns = s->start_ns;
    r->end_ns = s->end_ns;
    r->events = s->events;
    r->device = device;
    r->steps = steps;
    return devprops_name(devprops, device, &r->gpu);
}

void tt__info_ranks_sort(tt_info_ranks *r)
{
    if (r->n > 1)
        qsort(r->rows, r->n, sizeof(r->rows[0]), cmp_rank);
}

void tt_info_ranks_free(tt_info_ranks *r)
{
    size_t i;
    if (!r)
        return;
    for (i = 0; i < r->n; i++) {
        free(r->rows[i].path);
        free(r->rows[i].gpu);
    }
    free(r->rows);
    memset(r, 0, sizeof(*r));
}

/* ---- the table ---- */

enum { R_RANK, R_WORLD, R_GPU, R_DEVICE, R_STEPS, R_SPAN, R_EVENTS, R_TRACE, R_PATH, R_N };

static const tt_table_col rank_cols[R_N] = {
    { "rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "world size", "world_size", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "GPU", "gpu", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "device", "device", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "steps", "steps", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "span (ms)", "duration_ns", TT_COL_NS, 0, 0, 0, 0, 3, 1e6, 0 },
    { "events", "events", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "path", "path", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

static tt_table *rank_table(const tt_info_ranks *r)
{
    tt_table *t = tt_table_new(rank_cols, R_N);
    size_t i;
    for (i = 0; t && i < r->n; i++) {
        const tt_info_rank *x = &r->rows[i];
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, R_GPU, x->gpu) < 0 ||
            tt_table_set_text(t, R_PATH, x->path) < 0) {
            tt_table_free(t);
            return NULL;
        }
        if (x->have_rank)
            tt_table_set_int(t, R_RANK, x->rank);
        if (x->have_world_size)
            tt_table_set_int(t, R_WORLD, x->world_size);
        if (x->device >= 0)
            tt_table_set_int(t, R_DEVICE, x->device);
        tt_table_set_int(t, R_STEPS, x->steps);
        if (x->have_span)
            tt_table_set_int(t, R_SPAN, x->end_ns - x->start_ns);
        tt_table_set_int(t, R_EVENTS, x->events);
        tt_table_set_int(t, R_TRACE, x->trace_id);
    }
    return t;
}

/* "ranks:" and the table (text, markdown), or the value of a JSON "ranks"
 * key; CSV keeps its one row per trace */
int tt__info_ranks_print(const tt_info_ranks *r, int format, FILE *out)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = rank_table(r);
    int rc;
    if (!t)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (format == TT_FORMAT_JSON) {
        w.format = TT_FORMAT_JSON;
        w.flags = TT_TABLE_JSON_SKIP_NULL | TT_TABLE_JSON_TIGHT;
    } else if (format == TT_FORMAT_MARKDOWN) {
        w.format = TT_FORMAT_MARKDOWN;
        fputs("### ranks\n\n", out);
    } else {
        w.indent = "  ";
        w.flags = TT_TABLE_BYTE_WIDTH;
        fputs("ranks:\n", out);
    }
    rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    return rc < 0 ? tt_error_set(rc, "out of memory") : 0;
}
