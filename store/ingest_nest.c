/*
 * store/ingest_nest.c - a slice's place in its thread's nesting (depth and
 * parent), as the in-stream linker reads (ingest.c), as the ordered pass
 * of a database re-nests a thread read out of order (ingest_link.c), and as
 * the second reading of a file does it (ingest_fix.c).
 */
#include "common/compat.h"
#include "store/ingest_state.h"

/* push [ts, end] of slice id on t's stack: its depth and parent */
int ig_nest_push(struct thread *t, int64_t id, int64_t ts, int64_t end, int64_t *depth,
                 int64_t *parent)
{
    while (t->n && t->stack[t->n - 1].end < end)
        t->n--;
    *depth = (int64_t)t->n;
    *parent = t->n ? t->stack[t->n - 1].id : 0;
    if (TT_ALLOC_GROW_FROM(t->stack, t->n + 1, t->alloc, 2) < 0)
        return TT_ENOMEM;
    t->stack[t->n].id = id;
    t->stack[t->n].ts = ts;
    t->stack[t->n].end = end;
    t->stack[t->n].name = 0;
    t->n++;
    return 0;
}

/* Place a slice [ts, end] in its thread's nesting; sets depth and parent. */
int ig_nest(struct thread *t, int64_t id, int64_t ts, int64_t dur,
                int64_t *depth, int64_t *parent)
{
    int64_t end = ts + (dur > 0 ? dur : 0);
    int same = t->have_last && ts == t->last_ts;
    if (t->have_last && (ts < t->last_ts || (same && dur > t->last_dur)))
        t->disordered = 1; /* fixed by an ordered pass at the end */
    t->have_last = 1;
    t->last_ts = ts;
    t->last_dur = dur;
    if (ig_nest_push(t, id, ts, end, depth, parent) < 0)
        return TT_ENOMEM;
    /* the run of slices starting at ts: the stack under the first */
    if (!same) {
        t->run_n = 0;
        t->run_first = id;
        t->run_base = (uint32_t)(t->n - 1);
        if (t->n - 1 > UINT32_MAX)
            t->run_n = RUN_MAX + 1;
    }
    if (t->run_n < RUN_MAX && id - t->run_first <= UINT8_MAX)
        t->run_off[t->run_n++] = (uint8_t)(id - t->run_first);
    else
        t->run_n = RUN_MAX + 1;
    return 0;
}
