/*
 * analyze/averages/averages_result.c - the pass's aggregates as a tt_avg_result: rows
 * with their strings looked up, in torch's sort order, per trace.
 */
#include "analyze/averages/averages_state.h"
#include "common/buf.h"
#include <string.h>

/* minified JSON shapes "[[64,64],[]]" -> Python repr "[[64, 64], []]" */
static char *python_shapes(const char *json)
{
    tt_buf b = TT_BUF_INIT;
    const char *p;
    for (p = json; *p; p++) {
        tt_buf_addch(&b, *p);
        if (*p == ',')
            tt_buf_addch(&b, ' ');
    }
    return b.oom ? NULL : b.buf[0] ? b.buf : strdup("");
}

static void row_release(tt_avg_row *r)
{
    free(r->name);
    free(r->input_shapes);
    free(r->stack);
}

void tt__avg_trace_release(tt_avg_trace *t)
{
    size_t i;
    for (i = 0; i < t->nrows; i++)
        row_release(&t->rows[i]);
    free(t->rows);
    for (i = 0; i < t->nstacks; i++) {
        free(t->stacks[i].frames);
        free(t->stacks[i].name);
    }
    free(t->stacks);
    free(t->path);
    memset(t, 0, sizeof(*t));
}

/* the strings of an aggregated row */
static int row_strings(struct state *s, const struct row *a, tt_avg_row *r)
{
    r->name = tt__avg_lookup(s, a->name);
    if (s->o->group_by_shape) {
        char *js = a->shapes ? tt__avg_lookup(s, a->shapes) : NULL;
        r->input_shapes = js ? python_shapes(js) : strdup("[]");
        free(js);
        if (!r->input_shapes)
            return TT_ENOMEM;
    }
    if (a->stack && !(r->stack = strdup(s->stacks[a->stack - 1])))
        return TT_ENOMEM;
    return r->name ? 0 : TT_ENOMEM;
}

struct sort_ent {
    double v;
    size_t i;
};

static int cmp_ent(const void *a, const void *b)
{
    const struct sort_ent *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* torch's sort: by the key, descending; ties in first-occurrence order */
int tt__avg_sort_rows(tt_avg_trace *t, const char *key)
{
    struct sort_ent *e;
    tt_avg_row *rows;
    size_t i;
    if (!key || t->nrows < 2)
        return 0;
    e = malloc(sizeof(*e) * t->nrows);
    rows = malloc(sizeof(*rows) * t->nrows);
    if (!e || !rows) {
        free(e);
        free(rows);
        return TT_ENOMEM;
    }
    for (i = 0; i < t->nrows; i++) {
        e[i].v = tt__avg_sort_value(&t->rows[i], key);
        e[i].i = i;
    }
    TT_QSORT(e, t->nrows, sizeof(*e), cmp_ent);
    for (i = 0; i < t->nrows; i++)
        rows[i] = t->rows[e[i].i];
    free(t->rows);
    t->rows = rows;
    free(e);
    return 0;
}

int tt__avg_trace_result(struct state *s, int64_t trace, const char *label, int have_rank,
                         int64_t rank, int profile_memory, tt_avg_trace *t)
{
    size_t i;
    int rc = 0;
    memset(t, 0, sizeof(*t));
    t->trace_id = trace;
    t->have_rank = have_rank;
    t->rank = rank;
    t->show_memory = profile_memory || s->any_memory;
    t->steps_lo = s->steps_lo;
    t->steps_hi = s->steps_hi;
    t->steps_n = s->steps_n;
    t->path = strdup(label);
    t->rows = calloc(s->agg.n ? s->agg.n : 1, sizeof(*t->rows));
    if (!t->path || !t->rows)
        rc = TT_ENOMEM;
    t->self_cpu_total_us = s->hidden_self_cpu; /* events --name leaves out of the rows */
    t->self_device_total_us = s->hidden_self_dev;
    for (i = 0; i < s->agg.n && rc == 0; i++) {
        const struct row *a = &s->agg.rows[i];
        tt_avg_row *r = &t->rows[t->nrows];
        if (a->count == 0)
            continue;
        t->self_cpu_total_us += a->self_cpu;
        if (a->device == DEV_CUDA && !a->is_user_annotation)
            t->self_device_total_us += a->self_dev;
        r->device = a->device;
        r->is_user_annotation = a->is_user_annotation;
        r->has_parent = a->has_parent;
        r->count = a->count;
        r->self_cpu_us = a->self_cpu;
        r->cpu_total_us = a->cpu_total;
        r->self_device_us = a->self_dev;
        r->device_total_us = a->dev_total;
        r->cpu_mem = a->cpu_mem;
        r->self_cpu_mem = a->self_cpu_mem;
        r->device_mem = a->dev_mem;
        r->self_device_mem = a->self_dev_mem;
        t->nrows++;
        rc = row_strings(s, a, r);
    }
    if (rc == 0)
        rc = tt__avg_sort_rows(t, s->o->sort_by);
    if (rc == 0)
        rc = tt__avg_stacks_result(s, t);
    tt__avg_state_release(s);
    if (rc < 0) {
        tt__avg_trace_release(t);
        return tt__oom();
    }
    return 0;
}

int tt__avg_result_add(tt_avg_result *res, tt_avg_trace *t)
{
    tt_avg_trace *n = realloc(res->traces, sizeof(*n) * (res->ntraces + 1));
    if (!n)
        return tt__oom();
    res->traces = n;
    res->traces[res->ntraces++] = *t;
    memset(t, 0, sizeof(*t));
    return 0;
}

void tt_avg_result_free(tt_avg_result *res)
{
    size_t k;
    if (!res)
        return;
    for (k = 0; k < res->ntraces; k++)
        tt__avg_trace_release(&res->traces[k]);
    free(res->traces);
    free(res);
}
