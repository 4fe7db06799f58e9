/*
 * capture/src/schedule.c - torch.profiler.schedule() and the profiler's
 * action map (schedule.h says where from); tested against a table made by
 * the real torch (tests/fixtures/capture/make_schedule_table.py).
 */
#include "capture/src/schedule.h"

int tt_cap__sched_check(const tt_cap_sched *s, int *warn)
{
    *warn = s->warmup == 0;
    return s->wait >= 0 && s->warmup >= 0 && s->active > 0 && s->repeat >= 0 &&
                   s->skip_first >= 0
               ? 0
               : -1;
}

enum tt_cap_action tt_cap__sched_action(const tt_cap_sched *s, int64_t step)
{
    int64_t n = (int64_t)s->wait + s->warmup + s->active, mod;
    if (step < s->skip_first)
        return TT_CAP_NONE;
    step -= s->skip_first;
    /* step / num_steps >= repeat, in true division: step >= repeat * num_steps */
    if (s->repeat > 0 && step >= (int64_t)s->repeat * n)
        return TT_CAP_NONE;
    mod = step % n;
    if (mod < s->wait)
        return TT_CAP_NONE;
    if (mod < (int64_t)s->wait + s->warmup)
        return TT_CAP_WARMUP;
    return mod < n - 1 ? TT_CAP_RECORD : TT_CAP_RECORD_AND_SAVE;
}

enum {
    PREP = TT_CAP_DO_PREPARE,
    START = TT_CAP_DO_START,
    STOP = TT_CAP_DO_STOP,
    SAVE = TT_CAP_DO_SAVE
};

unsigned tt_cap__sched_transition(enum tt_cap_action prev, enum tt_cap_action cur)
{
    static const unsigned map[4][4] = {
        /* from NONE */ { 0, PREP, PREP | START, PREP | START },
        /* from WARMUP (to NONE: start, stop; torch warns) */ { START | STOP, 0, START, START },
        /* from RECORD (to NONE or WARMUP: stopped, not saved; torch warns) */
        { STOP, STOP, 0, 0 },
        /* from RECORD_AND_SAVE */
        { STOP | SAVE, STOP | SAVE | PREP, STOP | SAVE | PREP | START, STOP | SAVE | PREP | START },
    };
    return (unsigned)prev < 4 && (unsigned)cur < 4 ? map[prev][cur] : 0;
}

unsigned tt_cap__sched_exit(enum tt_cap_action cur)
{
    static const unsigned map[4] = { 0, START | STOP, STOP | SAVE, STOP | SAVE };
    return (unsigned)cur < 4 ? map[cur] : 0;
}
