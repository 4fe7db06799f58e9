/*
 * analyze/breakdown/breakdown_steps.c - the ProfilerStep#N spans of the trace
 * read, the step an activity belongs to and whether --steps selects it, for
 * the sweep (breakdown.c).
 */
#include "common/compat.h"
#include "analyze/breakdown/breakdown_state.h"

const char *tt__bd_str(const struct bd_read *rd, int64_t sid)
{
    if (sid < 0 || (uint64_t)sid >= rd->nsoff || !rd->soff[sid])
        return "";
    return rd->text + rd->soff[sid] - 1;
}

/* as tt__step_spans reads them from a database (store/steps.c) */
int tt__bd_steps(struct bd_read *rd, struct bd_trace *t)
{
    return tt__steps_from_slices(rd->steps, rd->nsteps, &t->st, &t->nst);
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
