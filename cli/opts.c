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
    fputs("\nusage: ", stderr);
    cli_usage_line(c, stderr);
    exit(EXIT_USAGE);
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
    fprintf(out, "usage: tracetool %s [options]%s%s\n\n%s\n\noptions:\n", c->name,
            c->operands && *c->operands ? " " : "", c->operands ? c->operands : "", c->about);
    for (i = 0; i < n; i++) {
        size_t w = opt_label(&c->opts[i], label, sizeof(label)) + 2;
        if (w > col && w <= HELP_COL_MAX)
            col = w;
    }
    for (i = 0; i < n; i++) {
        size_t w = opt_label(&c->opts[i], label, sizeof(label));
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
    if (k < 0)
        cli_usage_error(c, "unknown %s '%s'", what, word);
    return k;
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
            cli_usage_error(c, "unknown or incomplete option '%s'", argv[optind - 1]);
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
