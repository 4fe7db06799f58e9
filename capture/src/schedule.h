/*
 * capture/src/schedule.h - torch.profiler.schedule() and the profiler's
 * action map, exactly as PyTorch has them (torch/profiler/profiler.py:
 * schedule.schedule_fn, and the action_map of profile.__init__; the same in
 * torch 1.13 and in the team's seed copy of a newer profiler.py).
 *
 * schedule(skip_first, wait, warmup, active, repeat): steps before
 * skip_first are NONE; then, with s = step - skip_first and a cycle of
 * n = wait + warmup + active steps, NONE once repeat > 0 and s / n >= repeat
 * (true division), else by s % n: NONE under wait, WARMUP under
 * wait + warmup, RECORD, and RECORD_AND_SAVE on the cycle's last step.
 * The action map says what the profiler does when the action changes
 * (prepare_trace, start_trace, stop_trace, _trace_ready), and at exit.
 * Internal.
 */
#ifndef TT_CAPTURE_SCHEDULE_H
#define TT_CAPTURE_SCHEDULE_H

#include <stdint.h>

enum tt_cap_action { TT_CAP_NONE = 0, TT_CAP_WARMUP = 1, TT_CAP_RECORD = 2, TT_CAP_RECORD_AND_SAVE = 3 };

typedef struct tt_cap_sched {
    int skip_first, wait, warmup, active, repeat;
} tt_cap_sched;

/* what the profiler does (bits): prepare_trace, start_trace, stop_trace,
 * _trace_ready (hand the window over) */
enum { TT_CAP_DO_PREPARE = 1, TT_CAP_DO_START = 2, TT_CAP_DO_STOP = 4, TT_CAP_DO_SAVE = 8 };

/* 0, or -1 where torch's assert fails; *warn = 1 where torch warns (warmup 0) */
int tt_cap__sched_check(const tt_cap_sched *s, int *warn);
/* schedule_fn(step), step >= 0 */
enum tt_cap_action tt_cap__sched_action(const tt_cap_sched *s, int64_t step);
/* action_map[(prev, cur)]: in torch's order, stop (and save) before start,
 * except WARMUP -> NONE, which starts then stops (nothing saved) */
unsigned tt_cap__sched_transition(enum tt_cap_action prev, enum tt_cap_action cur);
/* action_map[(cur, None)]: what stop() does */
unsigned tt_cap__sched_exit(enum tt_cap_action cur);

#endif
