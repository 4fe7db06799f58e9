/*
 * cli/opts.h - a command's options, declared once in a table that drives
 * the parsing (getopt_long), the usage line of every usage error and the
 * --help text, so the three cannot drift apart.
 */
#ifndef TT_CLI_OPTS_H
#define TT_CLI_OPTS_H

#include <stdio.h>

struct cli_opt {
    const char *name; /* long name, without "--"; NULL ends the table */
    int key;          /* handed to the command's set() */
    const char *arg;  /* the argument's name in usage and help ("N", "table|csv");
                         NULL: a flag */
    const char *help; /* --help text; "\n" continues it on the next line; NULL:
                         a deprecated alias, parsed but not shown */
    char short_name;  /* also -<short_name> (0: none) */
};

struct cli_cmd {
    const char *name;            /* "averages" */
    const char *operands;        /* "INPUT|DB" */
    const char *about;           /* --help: what the command does */
    const struct cli_opt *opts;
    const char *after;           /* --help: after the options (exit codes) */
    int min_operands, max_operands; /* max -1: any number */
    const char *operand_error;   /* the usage error for another number */
};

/*
 * Parse argv[1..] against c->opts: set(ctx, key, arg) for each option given
 * (arg NULL for a flag). Returns the index of the first operand, or 0 after
 * printing --help (the command then exits 0). An unknown option, a missing
 * argument or a wrong number of operands is a usage error (exit 2).
 */
int cli_parse(const struct cli_cmd *c, int argc, char **argv,
              void (*set)(void *ctx, const struct cli_cmd *c, int key, const char *arg),
              void *ctx);

/* "tracetool CMD: <message> (see 'tracetool CMD --help')", one line on
 * stderr; exits 2 */
void cli_usage_error(const struct cli_cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* the usage line: "tracetool CMD [--opt ARG] ... OPERANDS" (--help's first) */
void cli_usage_line(const struct cli_cmd *c, FILE *out);
/* the --help text */
void cli_help(const struct cli_cmd *c, FILE *out);

/* the candidate nearest to a mistyped word (a typo of at most two edits, or
 * a prefix of one), or NULL */
const char *cli_suggest(const char *word, const char *const *cands, size_t n);

/* c's option whose key is key (NULL when none): options are found by key,
 * never by their place in the table (an alias moves the places) */
const struct cli_opt *cli_opt_of(const struct cli_cmd *c, int key);

/* one of the words of "a|b|c" (an option's arg); its index or -1 */
int cli_choice(const char *choices, const char *word);
/* the index of word among opt's choices, or the usage error
 * "unknown WHAT 'word'" */
int cli_choose(const struct cli_cmd *c, const struct cli_opt *opt, const char *word,
               const char *what);

#endif
