/*
 * analyze/info/info_ranks.c - the rank overview `tracetool info` starts with on a
 * database of several traces: one row per trace, by rank, with the world
 * size, the GPU the rank ran on (its most used device among the GPU
 * activities, named by the trace's deviceProperties), the number of
 * ProfilerStep#N annotations, the span and the events. The rows come
 * from each trace's summary (info.c: a database's rows, or a file of a
 * directory), named here.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/info/info_ranks.h"
#include "common/arena.h"
#include "formats/json.h"
#include "report/table_json.h"
#include "tracetool/table.h"

#include <inttypes.h>

static int cmp_rank(const void *a, const void *b)
{
    const tt_info_rank *x = a, *y = b;
    if (x->have_rank != y->have_rank)
        return x->have_rank ? -1 : 1; /* unknown ranks last */
    if (x->have_rank && x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->trace_id > y->trace_id) - (x->trace_id < y->trace_id);
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
        return tt__oom();
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
        return tt__oom();
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
        TT_QSORT(r->rows, r->n, sizeof(r->rows[0]), cmp_rank);
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

/* "ranks:" and the table (text, markdown); CSV keeps its one row per trace */
int tt__info_ranks_print(const tt_info_ranks *r, int format, FILE *out)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = rank_table(r);
    int rc;
    if (!t)
        return tt__oom();
    if (format == TT_FORMAT_MARKDOWN) {
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

/* the rows as an array, each on a line of its own, the unknown cells left out */
int tt__info_ranks_json(const tt_info_ranks *r, tt_jw *w)
{
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    tt_table *t = rank_table(r);
    int rc;
    if (!t)
        return tt__oom();
    o.flags = TT_TABLE_JSON_SKIP_NULL;
    tt_jw_arr(w);
    rc = tt__table_json_rows(t, &o, w, 0);
    tt_jw_end(w);
    tt_table_free(t);
    return rc;
}
