/*
 * cli/opts.c - option tables: parsing, usage line and --help (cli/opts.h).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"

#define HELP_COL_MAX 28 /* option column of --help, at most */

static size_t nopts(const struct cli_cmd *c)
{
    size_t n = 0;
    while (c->opts && c->opts[n].name)
        n++;
    return n;
}

void cli_usage_line(const struct cli_cmd *c, FILE *out)
{
    size_t i, n = nopts(c);
    fprintf(out, "tracetool %s", c->name);
    for (i = 0; i < n; i++) {
        if (!c->opts[i].help)
            continue; /* a deprecated alias */
        if (c->opts[i].arg)
            fprintf(out, " [--%s %s]", c->opts[i].name, c->opts[i].arg);
        else
            fprintf(out, " [--%s]", c->opts[i].name);
    }
    if (c->operands && *c->operands)
        fprintf(out, " %s", c->operands);
    fputc('\n', out);
}

void cli_usage_error(const struct cli_cmd *c, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tracetool %s: ", c->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'tracetool %s --help')\n", c->name);
    exit(EXIT_USAGE);
}

/* Damerau-Levenshtein distance (optimal string alignment) of two short words,
 * or a large number when one is too long to matter */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t d[34][34];
    if (la > 32 || lb > 32)
        return (size_t)-1;
    for (i = 0; i <= la; i++)
        d[i][0] = i;
    for (j = 0; j <= lb; j++)
        d[0][j] = j;
    for (i = 1; i <= la; i++) {
        for (j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

const char *cli_suggest(const char *word, const char *const *cands, size_t n)
{
    size_t i, best = (size_t)-1, wl = strlen(word);
    const char *pick = NULL;
    size_t nprefix = 0;
    /* a prefix of exactly one name: that name */
    for (i = 0; i < n && wl >= 2; i++)
        if (!strncmp(cands[i], word, wl) && cands[i][wl])
            pick = cands[i], nprefix++;
    if (nprefix == 1)
        return pick;
    pick = NULL;
    for (i = 0; i < n; i++) {
        size_t dist = edit_distance(word, cands[i]);
        /* a typo: at most 2 edits, and fewer than half the word */
        if (dist < best && dist <= 2 && dist * 2 < (wl > 2 ? wl : 2)) {
            best = dist;
            pick = cands[i];
        } else if (pick == NULL && wl >= 3 && !strncmp(cands[i], word, wl)) {
            pick = cands[i]; /* a prefix of one option */
        }
    }
    return pick;
}

/* the usage error of an unknown option, with the nearest one */
static void unknown_option(const struct cli_cmd *c, const char *arg, size_t n)
{
    const char *names[64];
    char word[64];
    const char *p = arg, *hit;
    size_t i, k = 0;
    while (*p == '-')
        p++;
    snprintf(word, sizeof(word), "%.*s", (int)strcspn(p, "="), p);
    for (i = 0; i < n && k < 63; i++)
        names[k++] = c->opts[i].name;
    names[k++] = "help";
    for (i = 0; i < n; i++) {
        if (!strcmp(word, c->opts[i].name) && c->opts[i].arg)
            cli_usage_error(c, "option '--%s' needs an argument (%s)", word, c->opts[i].arg);
    }
    if (arg[0] == '-' && arg[1] == '-' && (hit = cli_suggest(word, names, k)) != NULL)
        cli_usage_error(c, "unknown option '%s'; did you mean '--%s'?", arg, hit);
    cli_usage_error(c, "unknown option '%s'", arg);
}

/* "  --name ARG" as --help shows it; its length */
static size_t opt_label(const struct cli_opt *o, char *buf, size_t cap)
{
    char s[8] = "";
    int k;
    if (o->short_name)
        snprintf(s, sizeof(s), "-%c, ", o->short_name);
    k = snprintf(buf, cap, "  %s--%s%s%s", s, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    return k < 0 ? 0 : (size_t)k;
}

/* help text, continuation lines indented to col */
static void put_help(const char *h, size_t col, FILE *out)
{
    const char *nl;
    while ((nl = strchr(h, '\n'))) {
        fprintf(out, "%.*s\n%*s", (int)(nl - h), h, (int)col, "");
        h = nl + 1;
    }
    fprintf(out, "%s\n", h);
}

void cli_help(const struct cli_cmd *c, FILE *out)
{
    size_t i, n = nopts(c), col = 12;
    char label[160];
    fputs("usage: ", out);
    cli_usage_line(c, out);
    fprintf(out, "\n%s\n\noptions:\n", c->about);
    for (i = 0; i < n; i++) {
        size_t w = opt_label(&c->opts[i], label, sizeof(label)) + 2;
        if (c->opts[i].help && w > col && w <= HELP_COL_MAX)
            col = w;
    }
    for (i = 0; i < n; i++) {
        size_t w = opt_label(&c->opts[i], label, sizeof(label));
        if (!c->opts[i].help)
            continue;
        fputs(label, out);
        if (w + 2 > col) /* too long: the text goes on the next line */
            fprintf(out, "\n%*s", (int)col, "");
        else
            fprintf(out, "%*s", (int)(col - w), "");
        put_help(c->opts[i].help, col, out);
    }
    fprintf(out, "  -h, --help%*sthis text\n", (int)(col - 12 > 0 ? col - 12 : 1), "");
    if (c->after && *c->after)
        fprintf(out, "\n%s\n", c->after);
}

const struct cli_opt *cli_opt_of(const struct cli_cmd *c, int key)
{
    size_t i;
    for (i = 0; c->opts[i].name; i++)
        if (c->opts[i].key == key)
            return &c->opts[i];
    return NULL;
}

int cli_choice(const char *choices, const char *word)
{
    size_t wl = strlen(word);
    int i = 0;
    const char *p = choices;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == wl && !strncmp(p, word, wl))
            return i;
        if (!bar)
            return -1;
        p = bar + 1;
        i++;
    }
}

int cli_choose(const struct cli_cmd *c, const struct cli_opt *opt, const char *word,
               const char *what)
{
    int k = cli_choice(opt->arg, word);
    if (k < 0) {
        const char *words[16], *hit;
        char buf[256];
        size_t n = 0;
        char *p = buf, *bar;
        snprintf(buf, sizeof(buf), "%s", opt->arg);
        while (n < 16) {
            words[n++] = p;
            if (!(bar = strchr(p, '|')))
                break;
            *bar = '\0';
            p = bar + 1;
        }
        if ((hit = cli_suggest(word, words, n)) != NULL)
            cli_usage_error(c, "unknown %s '%s'; did you mean '%s'?", what, word, hit);
        cli_usage_error(c, "unknown %s '%s' (one of %s)", what, word, opt->arg);
    }
    return k;
}

/* the index of option name[0..len) spelt whole, n when none ("help" is n) */
static size_t exact_opt(const struct cli_cmd *c, size_t n, const char *name, size_t len)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strlen(c->opts[i].name) == len && !strncmp(c->opts[i].name, name, len))
            return i;
    return n;
}

/* Long options are taken spelt whole only: getopt_long takes a unique
 * prefix, so `averages --top 5` was --top-level-only (and a prefix that is
 * unique today is ambiguous once an option is added). Walks the options as
 * getopt will, up to "--" or, for a command whose operands end its options,
 * the first operand. */
static void whole_long_options(const struct cli_cmd *c, size_t n, int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t len, k;
        if (!strcmp(a, "--"))
            return;
        if (a[0] != '-' || !a[1])
            continue;
        if (a[1] != '-') { /* -x, -xARG, -x ARG */
            for (k = 0; k < n; k++)
                if (c->opts[k].short_name == a[1])
                    break;
            if (k < n && c->opts[k].arg && !a[2])
                i++;
            continue;
        }
        len = strcspn(a + 2, "=");
        if (len == 4 && !strncmp(a + 2, "help", 4))
            continue;
        k = exact_opt(c, n, a + 2, len);
        if (k == n)
            unknown_option(c, a, n);
        if (c->opts[k].arg && !a[2 + len])
            i++;
    }
}

int cli_parse(const struct cli_cmd *c, int argc, char **argv,
              void (*set)(void *ctx, const struct cli_cmd *c, int key, const char *arg),
              void *ctx)
{
    size_t i, n = nopts(c);
    struct option *lo = calloc(n + 2, sizeof(*lo));
    char shorts[80] = "h";
    size_t ns = 1;
    int opt, nop;
    if (!lo) {
        fputs("tracetool: out of memory\n", stderr);
        exit(EXIT_IO);
    }
    for (i = 0; i < n; i++) {
        lo[i].name = c->opts[i].name;
        lo[i].has_arg = c->opts[i].arg ? required_argument : no_argument;
        lo[i].val = c->opts[i].short_name ? c->opts[i].short_name : 256 + (int)i;
        if (c->opts[i].short_name && ns + 3 < sizeof(shorts)) {
            shorts[ns++] = c->opts[i].short_name;
            if (c->opts[i].arg)
                shorts[ns++] = ':';
        }
    }
    lo[n].name = "help";
    lo[n].val = 'h';
    shorts[ns] = '\0';
    whole_long_options(c, n, argc, argv);
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (opt == 'h') {
            free(lo);
            cli_help(c, stdout);
            return 0;
        }
        if (opt == '?' || opt == ':') {
            free(lo);
            unknown_option(c, argv[optind - 1], n);
        }
        for (i = 0; i < n; i++) {
            if (opt == (c->opts[i].short_name ? c->opts[i].short_name : 256 + (int)i))
                break;
        }
        set(ctx, c, c->opts[i].key, c->opts[i].arg ? optarg : NULL);
    }
    free(lo);
    nop = argc - optind;
    if (nop < c->min_operands || (c->max_operands >= 0 && nop > c->max_operands))
        cli_usage_error(c, "%s", c->operand_error);
    return optind;
}
