/*
 * tests/unit/shared_data.h - a trace of the team's shared test data
 * (TT_SHARED/testdata), or the test reports itself skipped when it is
 * missing (never passes without it).
 */
#ifndef TT_TESTS_SHARED_DATA_H
#define TT_TESTS_SHARED_DATA_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

static inline const char *shared_path(const char *rel)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/testdata/%s", TT_SHARED, rel);
    if (access(p, R_OK) != 0)
        cr_skip_test("shared trace %s missing", p);
    return p;
}

#endif
