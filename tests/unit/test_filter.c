/*
 * tests/unit/test_filter.c - the filters' public side (tracetool/filter.h):
 * --time-range parsed into ns with its units and open sides, bad ranges and
 * bad expressions refused with a message.
 */
#include "tracetool/filter.h"
#include "analyze/filter/filter.h"

#include <criterion/criterion.h>
#include <string.h>

static void range_is(const char *arg, int64_t a, int64_t b)
{
    int64_t x = 1, y = 2;
    cr_assert_eq(tt_filter_parse_time_range(arg, &x, &y), 0, "%s: %s", arg,
                 tt_error_last()->message);
    cr_assert_eq(x, a, "%s: from %lld, want %lld", arg, (long long)x, (long long)a);
    cr_assert_eq(y, b, "%s: to %lld, want %lld", arg, (long long)y, (long long)b);
}

static void range_bad(const char *arg, const char *words)
{
    int64_t x = 1, y = 2;
    cr_assert_eq(tt_filter_parse_time_range(arg, &x, &y), TT_EINVALID, "%s accepted", arg);
    cr_assert(strstr(tt_error_last()->message, words), "%s: '%s' lacks '%s'", arg,
              tt_error_last()->message, words);
    cr_assert(x == 1 && y == 2, "%s: outputs changed on failure", arg);
}

Test(filter, time_range_units)
{
    range_is("10:20", 10000, 20000);
    range_is("1700000000123.5:1700000000124", INT64_C(1700000000123500),
             INT64_C(1700000000124000));
    range_is("5ns:7ns", 5, 7);
    range_is("1ms:2s", 1000000, 2000000000);
    range_is("0.001:0.002us", 1, 2);
    range_is(":20", TT_FILTER_OPEN_FROM, 20000);
    range_is("-5:", -5000, TT_FILTER_OPEN_TO);
    range_is(":", TT_FILTER_OPEN_FROM, TT_FILTER_OPEN_TO);
}

Test(filter, time_range_refused)
{
    range_bad("10", "want A:B");
    range_bad("1:2:3", "want A:B");
    range_bad("20:10", "not before");
    range_bad("10:10", "not before");
    range_bad("x:10", "not a number");
    range_bad("10:5h", "unknown unit");
    range_bad("1e30:", "out of range");
    range_bad("nan:", "not a number");
    range_bad("inf:", "not a number");
}

Test(filter, regex_checked)
{
    tt_filter f = TT_FILTER_INIT;
    cr_assert_eq(tt_filter_check(NULL), 0);
    cr_assert_not(tt_filter_active(&f));
    cr_assert_not(tt_filter_active(NULL));
    f.name = "^aten::(add|mul)";
    f.under = "ProfilerStep#[0-9]+";
    cr_assert_eq(tt_filter_check(&f), 0);
    cr_assert(tt_filter_active(&f));
    f.name = "(unclosed";
    cr_assert_eq(tt_filter_check(&f), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "--name '(unclosed'"));
    f.name = NULL;
    f.under = "a[";
    cr_assert_eq(tt_filter_check(&f), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "--under 'a['"));
    f = (tt_filter)TT_FILTER_INIT;
    f.to_ns = 5;
    cr_assert(tt_filter_active(&f));
    cr_assert(tt__filter_in_time(&f, 4));
    cr_assert_not(tt__filter_in_time(&f, 5));
    cr_assert(tt__filter_in_time(NULL, 5));
}
