/*
 * analyze/filter/filter.c - the public side of the filters every analysis
 * takes (tracetool/filter.h): parsing --time-range, checking the
 * expressions of --name and --under.
 */
#include "common/compat.h"
#include "analyze/filter/filtering.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* one side of A:B (s[0..n)) in ns; 0 or TT_EINVALID */
static int parse_side(const char *arg, const char *s, size_t n, int64_t *out)
{
    char buf[64], *end;
    double v, scale = 1e3;
    size_t k = n;
    if (n >= sizeof(buf))
        return tt_error_set(TT_EINVALID, "--time-range '%s': a number is too long", arg);
    while (k > 0 && isalpha((unsigned char)s[k - 1]))
        k--;
    if (k < n && k > 0) {
        size_t u = n - k;
        if (u == 2 && !memcmp(s + k, "ns", 2))
            scale = 1;
        else if (u == 2 && !memcmp(s + k, "us", 2))
            scale = 1e3;
        else if (u == 2 && !memcmp(s + k, "ms", 2))
            scale = 1e6;
        else if (u == 1 && s[k] == 's')
            scale = 1e9;
        else
            return tt_error_set(TT_EINVALID,
                                "--time-range '%s': unknown unit '%.*s' (ns, us, ms or s)", arg,
                                (int)u, s + k);
    }
    memcpy(buf, s, k);
    buf[k] = '\0';
    if (!k || !(isdigit((unsigned char)buf[0]) || buf[0] == '-' || buf[0] == '+' ||
                buf[0] == '.'))
        return tt_error_set(TT_EINVALID, "--time-range '%s': '%.*s' is not a number", arg,
                            (int)n, s);
    errno = 0;
    v = strtod(buf, &end);
    if (*end || errno || !isfinite(v))
        return tt_error_set(TT_EINVALID, "--time-range '%s': '%.*s' is not a number", arg,
                            (int)n, s);
    v = v * scale;
    if (!(v > -9.2e18 && v < 9.2e18))
        return tt_error_set(TT_EINVALID, "--time-range '%s': '%.*s' is out of range", arg,
                            (int)n, s);
    *out = (int64_t)llround(v);
    return 0;
}

int tt_filter_parse_time_range(const char *arg, int64_t *from_ns, int64_t *to_ns)
{
    const char *colon = arg ? strchr(arg, ':') : NULL;
    int64_t a = TT_FILTER_OPEN_FROM, b = TT_FILTER_OPEN_TO;
    int rc;
    if (!colon || strchr(colon + 1, ':'))
        return tt_error_set(TT_EINVALID, "--time-range '%s': want A:B (either may be empty)",
                            arg ? arg : "");
    if (colon > arg && (rc = parse_side(arg, arg, (size_t)(colon - arg), &a)) < 0)
        return rc;
    if (colon[1] && (rc = parse_side(arg, colon + 1, strlen(colon + 1), &b)) < 0)
        return rc;
    if (a >= b)
        return tt_error_set(TT_EINVALID, "--time-range '%s': the start is not before the end",
                            arg);
    *from_ns = a;
    *to_ns = b;
    return 0;
}

static int check_re(const char *opt, const char *re, int anchored)
{
    regex_t r;
    char msg[256];
    int e;
    if (!re)
        return 0;
    if (anchored) {
        char *full = malloc(strlen(re) + 5);
        if (!full)
            return tt__oom();
        sprintf(full, "^(%s)$", re);
        e = regcomp(&r, full, REG_EXTENDED | REG_NOSUB);
        free(full);
    } else {
        e = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
    }
    if (e) {
        regerror(e, NULL, msg, sizeof(msg));
        return tt_error_set(TT_EINVALID, "%s '%s': %s", opt, re, msg);
    }
    regfree(&r);
    return 0;
}

int tt_filter_check(const tt_filter *f)
{
    int rc;
    if (!f)
        return 0;
    if ((rc = check_re("--name", f->name, 0)) < 0)
        return rc;
    return check_re("--under", f->under, 1);
}

int tt_filter_active(const tt_filter *f)
{
    return f && (f->from_ns != TT_FILTER_OPEN_FROM || f->to_ns != TT_FILTER_OPEN_TO ||
                 f->name || f->under);
}
