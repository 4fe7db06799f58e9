/*
 * call/call_opts.c - the CLI's option checks (cli/util.c) for tt_call: the
 * same words, returned as a usage error instead of an exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call/call_internal.h"

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

int tc_i64(tc *t, const char *arg, int64_t min, int64_t *v, const char *what, const char *tail)
{
    int64_t x;
    if (parse_i64(arg, &x) < 0 || x < min)
        return tc_usage(t, "bad %s '%s'%s", what, arg, tail);
    *v = x;
    return 0;
}

int tc_trace_id(tc *t, const char *arg, int64_t *v)
{
    return tc_i64(t, arg, 1, v, "trace id", "");
}

int tc_rank(tc *t, const char *arg, int64_t *v)
{
    return tc_i64(t, arg, 0, v, "rank", "");
}

int tc_row_limit(tc *t, const char *arg, int64_t *v)
{
    return tc_i64(t, arg, -1, v, "row limit", "");
}

int tc_steps(tc *t, const char *arg, int64_t *from, int64_t *to)
{
    const char *dash = strchr(arg + (arg[0] == '-'), '-');
    char a[32];
    if (!dash) {
        if (parse_i64(arg, from) < 0 || *from < 0)
            return tc_usage(t, "bad step '%s' (want N or A-B)", arg);
        *to = *from;
        return 0;
    }
    if (dash - arg >= (long)sizeof(a))
        return tc_usage(t, "bad step range '%s' (want N or A-B)", arg);
    memcpy(a, arg, (size_t)(dash - arg));
    a[dash - arg] = '\0';
    if (parse_i64(a, from) < 0 || parse_i64(dash + 1, to) < 0 || *from < 0 || *from > *to)
        return tc_usage(t, "bad step range '%s' (want N or A-B, A <= B)", arg);
    return 0;
}

int tc_filter(tc *t, int key, int t_, int n_, int u_, const char *arg, tt_filter *f, int *rc)
{
    tt_filter g = TT_FILTER_INIT;
    *rc = 0;
    if (key == t_) {
        if (tt_filter_parse_time_range(arg, &f->from_ns, &f->to_ns) < 0)
            *rc = tc_usage(t, "%s", tt_error_last()->message);
        return 1;
    }
    if (key != n_ && key != u_)
        return 0;
    if (key == u_)
        g.under = arg;
    else
        g.name = arg;
    if (tt_filter_check(&g) < 0)
        *rc = tc_usage(t, "%s", tt_error_last()->message);
    else if (key == u_)
        f->under = arg;
    else
        f->name = arg;
    return 1;
}

int tc_choose(tc *t, const char *choices, const char *arg, const char *what)
{
    size_t wl = strlen(arg);
    int i = 0;
    const char *p = choices;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == wl && !strncmp(p, arg, wl))
            return i;
        if (!bar)
            return tc_usage(t, "unknown %s '%s' (one of %s)", what, arg, choices);
        p = bar + 1;
        i++;
    }
}
