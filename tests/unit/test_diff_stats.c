/*
 * tests/unit/test_diff_stats.c - Student's t and Welch's test (issue 22),
 * the run-level test of `tracetool diff`, against values computed
 * independently: for df = 1 (Cauchy) 1/2 - atan(t)/pi; else Simpson integration of Student's t density in Python's
 * standard library (200,000 intervals), and Welch's statistic from
 * Python's statistics module.
 */
#include "common/compat.h"
#include "tracetool/diff.h"

#include <criterion/criterion.h>
#include <math.h>

static const struct {
    double t, df, sf;
} tsf[] = {
    { 0.5, 1, 0.352416382350 },    { 2.0, 3, 0.0696629842794 },
    { 1.7, 4.5, 0.078176956068 },  { 3.5, 10, 0.00286325271494 },
    { -1.2, 7.3, 0.866184666724 }, { 6.0, 2.2, 0.0105890421712 },
    { 0.0, 5, 0.5 },
};

Test(diff_stats, student_t_survival_matches_integration)
{
    size_t i;
    for (i = 0; i < sizeof(tsf) / sizeof(tsf[0]); i++) {
        double got = tt_student_t_sf(tsf[i].t, tsf[i].df);
        cr_assert(fabs(got - tsf[i].sf) < 1e-8 * (1 + tsf[i].sf), "t %g df %g: %.12g vs %.12g",
                  tsf[i].t, tsf[i].df, got, tsf[i].sf);
    }
    cr_assert(isnan(tt_student_t_sf(1, 0)));
    cr_assert_eq(tt_student_t_sf(INFINITY, 3), 0.0);
}

Test(diff_stats, welch_one_sided)
{
    const double x[] = { 1.0, 1.2, 0.9, 1.1 }, y[] = { 1.3, 1.5, 1.25, 1.6, 1.4 };
    double p = tt_welch_p_greater(x, 4, y, 5), q = tt_welch_p_greater(y, 5, x, 4);
    /* t = 3.9595, df = 6.8409 (Welch-Satterthwaite) */
    cr_assert(fabs(p - 0.00286216090261) < 1e-9, "%.12g", p);
    cr_assert(fabs(p + q - 1.0) < 1e-12, "the two directions add to 1");
    cr_assert(isnan(tt_welch_p_greater(x, 1, y, 5)), "one run a side: no test");
}
