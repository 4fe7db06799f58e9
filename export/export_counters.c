/*
 * export/export_counters.c - `tracetool export --counters`: HTA's trace
 * counters as Chrome counter tracks ("ph": "C") of each trace's process,
 * which Perfetto draws under it (export_state.h, tracetool/export.h):
 *
 * - "Queue length (GPU D stream S)" {"length": N}: each change of a
 *   stream's launch queue (analyze/counters, as `tracetool queue --series`);
 * - "Memory bandwidth (KIND)" {"GB/s": V}: each change of the bandwidth of
 *   a kind's copies in flight (as `tracetool bandwidth --series`);
 * - "Memory allocated (GPU D)" / "(CPU)" {"bytes": N}: the Total Allocated
 *   of each [memory] event of that device, as it comes.
 *
 * The counters' consumer reads the rows beside the export's own; its
 * changes wait in its spills until the trace's rows end and then become
 * records of the export's sort like every other event, so memory stays
 * bounded and the steps (--steps) cut them by their time as the rest.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/counters/counters_state.h"
#include "export/export_state.h"

#include <inttypes.h>

static int on(const struct ex *x)
{
    return x->o->version >= 2 && x->o->counters;
}

void tt__xp_ctr_free(struct ex *x)
{
    tt__ctr_free(x->ctr);
    x->ctr = NULL;
}

int tt__xp_ctr_begin(struct ex *x, tt__xp_counter_fn counter)
{
    tt__xp_ctr_free(x);
    x->counter = counter;
    return on(x) ? tt__ctr_new(&x->ctr, TT__CTR_QUEUE | TT__CTR_BW, NULL) : 0;
}

int tt__xp_ctr_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts)
{
    struct ex *x = ctx;
    return tt__ctr_links(x->ctr, op, name, rt, rt_ts);
}

/* a [memory] event's Total Allocated on the track of its device */
static int memory_row(struct ex *x, const tt__cell *r)
{
    const tt__cell *ts = &r[TT_C_MEM_TS], *tot = &r[TT_C_MEM_TOTAL_ALLOCATED];
    const tt__cell *type = &r[TT_C_MEM_DEVICE_TYPE], *id = &r[TT_C_MEM_DEVICE_ID];
    char name[96], num[32];
    if (ts->type != TT_CELL_INT || tot->type != TT_CELL_INT)
        return 0;
    if (type->type == TT_CELL_INT && type->i == 0)
        snprintf(name, sizeof(name), "Memory allocated (CPU)");
    else if (type->type == TT_CELL_INT && type->i == 1 && id->type == TT_CELL_INT)
        snprintf(name, sizeof(name), "Memory allocated (GPU %" PRId64 ")", id->i);
    else if (type->type == TT_CELL_INT && id->type == TT_CELL_INT)
        snprintf(name, sizeof(name), "Memory allocated (device type %" PRId64 " id %" PRId64 ")",
                 type->i, id->i);
    else
        snprintf(name, sizeof(name), "Memory allocated");
    snprintf(num, sizeof(num), "%" PRId64, tot->i);
    return x->counter(x, ts->i, name, "bytes", num);
}

int tt__xp_ctr_rows(struct ex *x, int table, int nrows, int ncols, const tt__cell *cells,
                    const char *text)
{
    int i, rc = tt__ctr_rows(x->ctr, table, nrows, ncols, cells, text);
    for (i = 0; rc == 0 && table == TT_ROWS_MEMORY && i < nrows; i++)
        rc = memory_row(x, cells + (size_t)i * (size_t)ncols);
    return rc;
}

/* the queue and bandwidth changes of the trace, as counter events */
int tt__xp_ctr_end(struct ex *x)
{
    struct tt__qpt q;
    struct tt__bpt b;
    char name[96], num[40];
    int rc;
    if (!x->ctr)
        return 0;
    if ((rc = tt__ctr_finish(x->ctr)) < 0)
        goto out;
    while ((rc = tt__ctr_queue_next(x->ctr, &q)) > 0) {
        if (q.device == TT_COUNTERS_NULL)
            snprintf(name, sizeof(name), "Queue length (stream %" PRId64 ")", q.stream);
        else
            snprintf(name, sizeof(name), "Queue length (GPU %" PRId64 " stream %" PRId64 ")",
                     q.device, q.stream);
        snprintf(num, sizeof(num), "%" PRId64, q.len);
        if ((rc = x->counter(x, q.ts, name, "length", num)) < 0)
            goto out;
    }
    while (rc == 0 && (rc = tt__ctr_bw_next(x->ctr, &b)) > 0) {
        snprintf(name, sizeof(name), "Memory bandwidth (%s)", tt__ctr_kind_name[b.kind]);
        snprintf(num, sizeof(num), "%.17g", b.gbps);
        if ((rc = x->counter(x, b.ts, name, "GB/s", num)) < 0)
            goto out;
    }
out:
    tt__xp_ctr_free(x);
    return rc;
}
