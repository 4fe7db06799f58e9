/*
 * tests/unit/test_capture_schedule.c - torch.profiler.schedule() and the
 * action map (capture/src/schedule.c) against a table the real PyTorch made
 * (tests/fixtures/capture/make_schedule_table.py): the action at every step,
 * every transition and exit entry, and when on_trace_ready fires when a
 * profile is driven through the steps.
 */
#include "capture/src/schedule.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define TABLE TT_TESTDATA "/../tests/fixtures/capture/schedule_table.txt"

/* on_trace_ready's step numbers when a profile runs n steps (torch: the
 * step number at the call, after step() moved it) */
static int ready_steps(const tt_cap_sched *s, int n, int *out)
{
    enum tt_cap_action prev = tt_cap__sched_action(s, 0), cur;
    int k = 0, step;
    for (step = 1; step <= n; step++) {
        cur = tt_cap__sched_action(s, step);
        if (tt_cap__sched_transition(prev, cur) & TT_CAP_DO_SAVE)
            out[k++] = step;
        prev = cur;
    }
    if (tt_cap__sched_exit(prev) & TT_CAP_DO_SAVE)
        out[k++] = n;
    return k;
}

Test(capture_schedule, torch_table)
{
    FILE *f = fopen(TABLE, "r");
    char word[32];
    int schedules = 0, transitions = 0, exits = 0;
    cr_assert_not_null(f, "the table made by torch is missing: %s", TABLE);
    while (fscanf(f, "%31s", word) == 1) {
        if (word[0] == '#') {
            int c;
            while ((c = fgetc(f)) != '\n' && c != EOF)
                ;
        } else if (!strcmp(word, "schedule")) {
            tt_cap_sched s;
            int n, warn, w = -1, i, nready, got[64], want[64], k;
            cr_assert_eq(fscanf(f, "%d %d %d %d %d %d %d", &s.skip_first, &s.wait, &s.warmup,
                                &s.active, &s.repeat, &n, &warn), 7);
            cr_assert_eq(tt_cap__sched_check(&s, &w), 0);
            cr_assert_eq(w, warn, "warmup 0 warns");
            cr_assert_eq(fscanf(f, "%31s", word), 1);
            cr_assert_str_eq(word, "actions");
            for (i = 0; i < n; i++) {
                int a;
                cr_assert_eq(fscanf(f, "%d", &a), 1);
                cr_assert_eq((int)tt_cap__sched_action(&s, i), a, "config %d,%d,%d,%d,%d step %d",
                             s.skip_first, s.wait, s.warmup, s.active, s.repeat, i);
            }
            cr_assert_eq(fscanf(f, "%31s %d", word, &nready), 2);
            cr_assert_str_eq(word, "ready");
            for (i = 0; i < nready; i++)
                cr_assert_eq(fscanf(f, "%d", &want[i]), 1);
            k = ready_steps(&s, n, got);
            cr_assert_eq(k, nready, "trace_ready calls");
            for (i = 0; i < k; i++)
                cr_assert_eq(got[i], want[i], "trace_ready %d", i);
            schedules++;
        } else if (!strcmp(word, "transition")) {
            int p, c, b;
            cr_assert_eq(fscanf(f, "%d %d %d", &p, &c, &b), 3);
            cr_assert_eq(tt_cap__sched_transition((enum tt_cap_action)p, (enum tt_cap_action)c),
                         (unsigned)b, "(%d, %d)", p, c);
            transitions++;
        } else if (!strcmp(word, "exit")) {
            int p, b;
            cr_assert_eq(fscanf(f, "%d %d", &p, &b), 2);
            cr_assert_eq(tt_cap__sched_exit((enum tt_cap_action)p), (unsigned)b, "(%d, None)", p);
            exits++;
        } else {
            cr_assert_fail("unknown line %s", word);
        }
    }
    fclose(f);
    cr_assert_eq(schedules, 10);
    cr_assert_eq(transitions, 16);
    cr_assert_eq(exits, 3);
}

Test(capture_schedule, invalid_configurations)
{
    static const tt_cap_sched bad[] = {
        { 0, -1, 1, 1, 0 }, { 0, 1, -1, 1, 0 }, { 0, 1, 1, 0, 0 }, { 0, 1, 1, 1, -1 }, { -1, 1, 1, 1, 0 },
    };
    size_t i;
    int warn;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(tt_cap__sched_check(&bad[i], &warn), -1, "config %zu", i);
}
