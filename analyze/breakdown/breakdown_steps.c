/*
 * analyze/breakdown/breakdown_steps.c - the step an activity belongs to and whether
 * --steps selects it, for the sweep (breakdown.c) and the launch passes
 * (breakdown_launch.c).
 */
#include "common/compat.h"
#include "analyze/breakdown/breakdown_state.h"

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
