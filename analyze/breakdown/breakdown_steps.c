/*
 * analyze/breakdown/breakdown_steps.c - the ProfilerStep#N spans of the trace
 * read, the step an activity belongs to and whether --steps selects it, for
 * the sweep (breakdown.c).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "analyze/breakdown/breakdown_state.h"

const char *tt__bd_str(const struct bd_read *rd, int64_t sid)
{
    if (sid < 0 || (uint64_t)sid >= rd->nsoff || !rd->soff[sid])
        return "";
    return rd->text + rd->soff[sid] - 1;
}

static int cmp_step(const void *a, const void *b)
{
    const struct bd_ref *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* as tt__step_spans reads them from a database: by start (then id), a step
 * that begins inside the one before left out */
int tt__bd_steps(struct bd_read *rd, struct bd_trace *t)
{
    size_t k, n = 0;
    t->st = NULL;
    t->nst = 0;
    if (!rd->nsteps)
        return 0;
    TT_QSORT(rd->steps, rd->nsteps, sizeof(*rd->steps), cmp_step);
    if (!(t->st = malloc(rd->nsteps * sizeof(*t->st))))
        return tt__oom();
    for (k = 0; k < rd->nsteps; k++) {
        const struct bd_ref *s = &rd->steps[k];
        if (n && s->ts < t->st[n - 1].end)
            continue;
        t->st[n].ts = s->ts;
        t->st[n].end = tt_sat_add(s->ts, s->dur);
        t->st[n].num = s->name;
        n++;
    }
    t->nst = n;
    return 0;
}

long tt__bd_step_at(const struct bd_trace *t, int64_t ts)
{
    return tt__step_at(t->st, t->nst, ts);
}

int tt__bd_selected(const struct bd_run *r, const struct bd_trace *t, long step)
{
    if (!r->o->steps_set)
        return 1;
    return step >= 0 && t->st[step].num >= r->o->step_from && t->st[step].num <= r->o->step_to;
}
