/*
 * compare/diff/diff_keys.c - diff's --rename FILE: the rules (extended
 * regular expressions and their replacements) that map one side's op and
 * kernel names onto the other's before the keys are matched; the cost of
 * each rule is bounded before regcomp sees it. The kernel family itself is
 * formats/kernel_family.c.
 */
#include "common/compat.h"
#include "tracetool/diff.h"

#include "compare/diff/diff_state.h"
#include "common/buf.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* ---- --rename FILE ---- */

/*
 * The bounds of a rules file. glibc's regcomp copies an atom once per
 * repetition of {m,n} (nested bounds multiply: a{1,255}{1,255}{1,255} is 16
 * million copies, 14.5 GB) and its matcher slows with the copies, so a rule
 * is refused when its expansion passes RULE_COST positions, the file when
 * its rules together pass FILE_COST; a line is at most LINE_MAX_BYTES.
 */
#define LINE_MAX_BYTES 4096
#define RULE_COST 4096.0
#define FILE_COST 65536.0
#define MAX_NEST 64
/* a renamed key longer than this is refused (rules that copy groups twice
 * double a key per rule) */
#define MAX_RENAMED (1u << 20)

void tt__renames_free(struct tt__renames *r)
{
    size_t i;
    for (i = 0; i < r->n; i++) {
        regfree(&r->re[i]);
        free(r->rep[i]);
    }
    free(r->re);
    free(r->rep);
    free(r->line);
    memset(r, 0, sizeof(*r));
}

/* a bound {m}, {m,}, {m,n} or glibc's {,n} at p (after its '{'): how many
 * copies of its atom regcomp makes; *end after the '}'. 0 when it is no
 * bound. */
static double bound_copies(const char *p, const char **end)
{
    double m = 0, n = -1;
    int digits = 0;
    for (; isdigit((unsigned char)*p); p++, digits++)
        m = m * 10 + (*p - '0');
    if (!digits && *p != ',')
        return 0;
    if (*p == ',') {
        p++;
        if (isdigit((unsigned char)*p))
            for (n = 0; isdigit((unsigned char)*p); p++)
                n = n * 10 + (*p - '0');
        else
            n = m + 1; /* {m,}: m copies and a starred one */
    } else {
        n = m;
    }
    if (*p != '}')
        return 0;
    *end = p + 1;
    return n > 1 ? n : 1;
}

/* the end of the bracket expression that starts at p ('['), or NULL */
static const char *bracket_end(const char *p)
{
    p++;
    if (*p == '^')
        p++;
    if (*p == ']')
        p++;
    for (; *p && *p != ']'; p++) {
        if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
            const char *q = strchr(p + 2, p[1]);
            while (q && q[1] != ']')
                q = strchr(q + 1, p[1]);
            if (!q)
                return NULL;
            p = q + 1;
        }
    }
    return *p ? p : NULL;
}

/*
 * About how many positions regcomp builds for the extended regular
 * expression re: each atom 1, a group its contents, an alternation the sum
 * of its branches, '+' and {m,n} multiply their atom (by 2 and by n), so
 * that nested repetitions multiply. -1 when nested deeper than MAX_NEST.
 */
static double ere_cost(const char *re)
{
    double sum[MAX_NEST + 1], last[MAX_NEST + 1];
    int d = 0;
    const char *p = re, *e;
    sum[0] = last[0] = 0;
    while (*p) {
        double k;
        switch (*p) {
        case '(':
            if (d == MAX_NEST)
                return -1;
            d++;
            sum[d] = last[d] = 0;
            p++;
            continue;
        case ')':
            if (d > 0) {
                double g = sum[d] + last[d] + 1;
                d--;
                sum[d] += last[d];
                last[d] = g;
                p++;
                continue;
            }
            break;
        case '|':
            sum[d] += last[d];
            last[d] = 0;
            p++;
            continue;
        case '*':
        case '?':
            last[d] += 1;
            p++;
            continue;
        case '+':
            last[d] = 2 * last[d] + 1;
            p++;
            continue;
        case '{':
            if ((k = bound_copies(p + 1, &e)) > 0) {
                last[d] = k * last[d] + 1;
                p = e;
                continue;
            }
            break;
        case '[':
            if ((e = bracket_end(p)) != NULL) {
                sum[d] += last[d];
                last[d] = 1;
                p = e + 1;
                continue;
            }
            break;
        case '\\':
            if (p[1])
                p++;
            break;
        default:
            break;
        }
        sum[d] += last[d]; /* one more atom */
        last[d] = 1;
        p++;
    }
    while (d > 0) { /* unbalanced: regcomp will say so */
        sum[d - 1] += sum[d] + last[d];
        d--;
    }
    return sum[0] + last[0];
}

/* one "REGEX => REPLACEMENT" line; *cost adds the rule's */
static int rename_line(struct tt__renames *r, const char *path, int lineno, char *line,
                       double *cost)
{
    char *arrow = strstr(line, " => "), *rep;
    size_t len;
    double c;
    int e;
    regex_t *re;
    char **rp;
    int *ln;
    if (!arrow)
        return tt_error_set_at(TT_EINVALID, path, -1, "line %d: want 'REGEX => REPLACEMENT'",
                               lineno);
    *arrow = '\0';
    rep = arrow + 4;
    len = strlen(rep);
    while (len && rep[len - 1] == '\r')
        rep[--len] = '\0';
    if ((c = ere_cost(line)) < 0)
        return tt_error_set_at(TT_EINVALID, path, -1, "line %d: groups nested deeper than %d",
                               lineno, MAX_NEST);
    if (c > RULE_COST)
        return tt_error_set_at(TT_EINVALID, path, -1,
                               "line %d: the regular expression is too costly (its repetitions"
                               " expand to %.3g positions, at most %.0f; nested {m,n} multiply)",
                               lineno, c, RULE_COST);
    if ((*cost += c + 1) > FILE_COST)
        return tt_error_set_at(TT_EINVALID, path, -1,
                               "line %d: the rules together are too costly (over %.0f positions)",
                               lineno, FILE_COST);
    if (!(re = realloc(r->re, (r->n + 1) * sizeof(*re))))
        return tt__oom();
    r->re = re;
    if (!(rp = realloc(r->rep, (r->n + 1) * sizeof(*rp))))
        return tt__oom();
    r->rep = rp;
    if (!(ln = realloc(r->line, (r->n + 1) * sizeof(*ln))))
        return tt__oom();
    r->line = ln;
    if ((e = regcomp(&r->re[r->n], line, REG_EXTENDED)) != 0) {
        char msg[128];
        regerror(e, &r->re[r->n], msg, sizeof(msg));
        return tt_error_set_at(TT_EINVALID, path, -1, "line %d: bad regular expression: %s",
                               lineno, msg);
    }
    if (!(r->rep[r->n] = strdup(rep))) {
        regfree(&r->re[r->n]);
        return tt__oom();
    }
    r->line[r->n] = lineno;
    r->n++;
    return 0;
}

/* the next line of f into buf (without its '\n'): its length, -1 at the
 * end, -2 when longer than cap - 1 bytes (the rest of it is skipped), -3
 * when it holds a NUL byte */
static long next_line(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    int c, nul = 0;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (n + 1 < cap)
            buf[n] = (char)c;
        nul |= c == 0;
        n++;
    }
    if (c == EOF && !n)
        return -1;
    buf[n + 1 < cap ? n : cap - 1] = '\0';
    return n + 1 > cap ? -2 : nul ? -3 : (long)n;
}

int tt__renames_load(const char *path, struct tt__renames *r)
{
    FILE *f;
    char line[LINE_MAX_BYTES + 1];
    int lineno = 0, rc = 0;
    long len;
    double cost = 0;
    struct stat sb;
    memset(r, 0, sizeof(*r));
    if (!(f = fopen(path, "r")))
        return tt_error_set_at(errno == ENOENT ? TT_ENOTFOUND : TT_EIO, path, -1, "%s",
                               strerror(errno));
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return tt_error_set_at(TT_EIO, path, -1, "is a directory, not a file of 'REGEX =>"
                                                 " REPLACEMENT' lines");
    }
    r->path = path;
    while (rc == 0 && (len = next_line(f, line, sizeof(line))) != -1) {
        size_t k = 0;
        lineno++;
        if (len == -2)
            rc = tt_error_set_at(TT_EINVALID, path, -1, "line %d: too long (a rule is at most"
                                                        " %d bytes)", lineno, LINE_MAX_BYTES);
        else if (len == -3)
            rc = tt_error_set_at(TT_EINVALID, path, -1, "line %d: a NUL byte", lineno);
        if (rc < 0)
            break;
        while (line[k] == ' ' || line[k] == '\t')
            k++;
        if (!line[k] || line[k] == '#')
            continue;
        rc = rename_line(r, path, lineno, line + k, &cost);
    }
    if (rc == 0 && ferror(f))
        rc = tt_error_set_at(TT_EIO, path, -1, "cannot read: %s", strerror(errno));
    fclose(f);
    if (rc < 0)
        tt__renames_free(r);
    return rc;
}

/* rule k once on in, into b: the first match replaced, \0..\9 its groups */
static void apply_one(const struct tt__renames *r, size_t k, const char *in, tt_buf *b)
{
    regmatch_t m[10];
    const char *p;
    if (regexec(&r->re[k], in, 10, m, 0) != 0) {
        tt_buf_add(b, in, strlen(in));
        return;
    }
    tt_buf_add(b, in, (size_t)m[0].rm_so);
    for (p = r->rep[k]; *p; p++) {
        if (*p == '\\' && p[1] >= '0' && p[1] <= '9') {
            int g = p[1] - '0';
            if (m[g].rm_so >= 0)
                tt_buf_add(b, in + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
            p++;
        } else {
            tt_buf_addch(b, *p);
        }
    }
    tt_buf_add(b, in + m[0].rm_eo, strlen(in + m[0].rm_eo));
}

int tt__renames_apply(const struct tt__renames *r, const char *in, char **out)
{
    char *cur;
    size_t k;
    *out = NULL;
    if (!(cur = strdup(in)))
        return tt__oom();
    for (k = 0; k < r->n; k++) {
        tt_buf b;
        tt_buf_init(&b);
        apply_one(r, k, cur, &b);
        free(cur);
        if (b.oom) {
            tt_buf_release(&b);
            return tt__oom();
        }
        if (b.len > MAX_RENAMED && b.len > strlen(in)) {
            tt_buf_release(&b);
            return tt_error_set_at(TT_EINVALID, r->path, -1,
                                   "line %d: makes a key longer than %u bytes", r->line[k],
                                   MAX_RENAMED);
        }
        if (!(cur = b.alloc ? b.buf : strdup("")))
            return tt__oom();
    }
    *out = cur;
    return 0;
}
