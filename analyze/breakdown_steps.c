/*
 * analyze/breakdown_steps.c - a trace's ProfilerStep#N spans and the step an
 * activity belongs to, for the sweep (breakdown.c) and the launch passes
 * (breakdown_launch.c).
 */
#include "common/compat.h"
#include "analyze/breakdown_state.h"

long tt__bd_step_at(const struct bd_trace *t, int64_t ts)
{
    size_t lo = 0, hi = t->nst;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->st[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ts >= t->st[lo - 1].end)
        return -1;
    return (long)lo - 1;
}

int tt__bd_selected(const struct bd_run *r, const struct bd_trace *t, long step)
{
    if (!r->o->steps_set)
        return 1;
    return step >= 0 && t->st[step].num >= r->o->step_from && t->st[step].num <= r->o->step_to;
}

/* the ProfilerStep#N spans of a trace, as diff reads them: by start, a step
 * that starts inside the previous one (two profilers) left out */
int tt__bd_load_steps(struct bd_run *r, struct bd_trace *t)
{
    sqlite3_stmt *st;
    size_t alloc = 0;
    int rc;
    if (tt_db_prepare(r->db, &st, "SELECT s.ts, s.dur, n.s FROM slices AS s"
                                  " JOIN strings AS n ON n.id = s.name"
                                  " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL AND s.dur IS NOT NULL"
                                  "  AND s.name IN (SELECT id FROM strings"
                                  "   WHERE s GLOB 'ProfilerStep#[0-9]*')"
                                  " ORDER BY s.ts, s.id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, t->id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct bd_step *x;
        int64_t ts = sqlite3_column_int64(st, 0);
        if (t->nst && ts < t->st[t->nst - 1].end)
            continue;
        if (TT_ALLOC_GROW(t->st, t->nst + 1, alloc) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        x = &t->st[t->nst++];
        x->ts = ts;
        x->end = ts + sqlite3_column_int64(st, 1);
        x->num = strtoll((const char *)sqlite3_column_text(st, 2) + 13, NULL, 10);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : tt_db_error(r->db, "cannot read the steps");
}
