/*
 * cli/cmd.h - the tracetool subcommands.
 *
 * Adding a command:
 *   1. write cli/cmd_<name>.c with `int cmd_<name>(int argc, char **argv)`
 *      returning an exit code from the table below; its options are one
 *      table (cli/opts.h) that drives parsing, --help and the usage line;
 *   2. declare it here and add it to cmds[] in cli/main.c with its help line;
 *   3. document it in README.md (usage, options, exit codes);
 *   4. add a golden test under tests/cli/.
 */
#ifndef TT_CLI_CMD_H
#define TT_CLI_CMD_H

#include <stdint.h>
#include <stdio.h>

#include "tracetool/common.h"

/* Exit codes (README.md, "Exit codes"). Never renumber. */
enum {
    EXIT_OK = 0,
    EXIT_DIFFERENT = 1, /* a check found differences (crosscheck, diff) */
    EXIT_USAGE = 2,     /* unknown command or option, bad argument */
    EXIT_BADINPUT = 3,  /* input not readable as a trace: empty, not JSON, truncated, ... */
    EXIT_IO = 4,        /* missing file, I/O or database error */
    EXIT_EXISTS = 5,    /* trace already ingested (without --replace) */
    EXIT_NOT_COMPARABLE = 6, /* diff: not comparable, or inconclusive (--fail-on-inconclusive) */
    EXIT_INTERNAL = 70
};

int cmd_ingest(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_averages(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_breakdown(int argc, char **argv);
int cmd_memtimeline(int argc, char **argv);
int cmd_crosscheck(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_collectives(int argc, char **argv);
int cmd_critpath(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_bandwidth(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* progress.c: the progress line on a terminal (standard error) */
struct cli_progress {
    const char *name; /* the file */
    double t0, last;  /* its start, the last line's time */
    int shown;        /* a line is on the screen */
};
/* seconds on the monotonic clock (progress lines, record's run time) */
double cli_now(void);
/* at_once: the first progress_show draws (else after 0.2 s) */
void progress_start(struct cli_progress *p, const char *name, int at_once);
void progress_show(struct cli_progress *p, int64_t pos, int64_t size, int64_t bytes,
                   int64_t events);
void progress_clear(struct cli_progress *p);
/* every file a command reads shows its progress when stderr is a terminal */
void progress_install(void);

/* util.c */
struct cli_cmd;
/* Print the library's last error as "tracetool: FILE: byte N: message";
 * returns the exit code that matches it. */
int report_error(int code);
int exit_code_for(int code);
/* Checked integer parse: 0 ok, -1 bad. */
int parse_i64(const char *s, int64_t *out);
/* 1 if both paths exist and are the same file (symlinks followed) */
int same_file(const char *a, const char *b);
/*
 * An output must never replace an input: a usage error (exit 2, one line
 * naming both) when `out` is the same file as one of in[0..nin) (st_dev and
 * st_ino: a symbolic or hard link to it too), or a trace inside an input
 * directory (as tt_walk_traces finds them). "-", NULL and a file that does
 * not exist yet pass; so do the "-" inputs.
 */
void check_outputs_not_inputs(const struct cli_cmd *c, const char *out,
                              const char *const *in, int nin);
/* the same, the output named `what` ("$GITHUB_STEP_SUMMARY") in the message */
void check_output_named(const struct cli_cmd *c, const char *what, const char *out,
                        const char *const *in, int nin);
/* flush stdout and fail (EXIT_IO) if writing failed */
int finish_stdout(int rc);

/* --trace ID (> 0), --rank R (>= 0), --row-limit N (>= -1): parsed or a
 * usage error */
int64_t opt_trace_id(const struct cli_cmd *c, const char *arg);
int64_t opt_rank(const struct cli_cmd *c, const char *arg);
int64_t opt_row_limit(const struct cli_cmd *c, const char *arg);
/* --steps N (one step) or A-B (0 <= A <= B): parsed or a usage error */
void opt_steps(const struct cli_cmd *c, const char *arg, int64_t *from, int64_t *to);

/* --time-range A:B into f (tracetool/filter.h), or a usage error */
struct tt_filter;
void opt_time_range(const struct cli_cmd *c, const char *arg, struct tt_filter *f);
/* --name / --under REGEX: set, or a usage error when it does not compile */
void opt_filter_regex(const struct cli_cmd *c, const char *opt, const char *arg,
                      const char **slot);
/*
 * The three filters' entries of a command's options table, keys T
 * (--time-range), N (--name) and U (--under); NAME_HELP and UNDER_HELP
 * say what they keep in that command (docs/FILTERS.md).
 */
#define CLI_FILTER_OPTS(T, N, U, NAME_HELP, UNDER_HELP)                                     \
    { "time-range", T, "A:B",                                                              \
      "only what starts in [A, B): us as a trace's ts,\nor with a unit (ns, us, ms, s); "   \
      "either side\nmay be empty; a GPU activity by its runtime\ncall's start", 0 },        \
        { "name", N, "REGEX", NAME_HELP, 0 }, { "under", U, "OP", UNDER_HELP, 0 }
/* key one of T, N, U: its argument into f (or a usage error), 1; else 0 */
int opt_filter(const struct cli_cmd *c, int key, int t, int n, int u, const char *arg,
               struct tt_filter *f);

/* --format: one of the command's formats (opt->arg, words of
 * "table|csv|json|markdown"; "text" is "table"): a TT_AVG_* format */
struct cli_opt;
tt_output_format opt_format(const struct cli_cmd *c, const struct cli_opt *o, const char *arg);

/*
 * Run a command on INPUT: a database (opened read-only) through on_db; a
 * trace file, a directory of per-rank traces or "-" through on_file, which
 * reads them itself (--trace and --rank included). Returns the exit code.
 */
struct tt_db;
int run_on_input(const char *in, int (*on_db)(struct tt_db *db, void *ctx),
                 int (*on_file)(const char *path, void *ctx), void *ctx);

/*
 * The same, where the command also takes a summary (tracetool summarize):
 * a summary through on_sum (loaded here), the rest as run_on_input. Every
 * other command goes through run_on_input, which refuses a summary.
 */
typedef struct tt_summary tt_summary;
int run_on_input_sum(const char *in, int (*on_db)(struct tt_db *db, void *ctx),
                     int (*on_file)(const char *path, void *ctx),
                     int (*on_sum)(tt_summary *s, void *ctx), void *ctx);
/* the command's name (set by main.c), and the refusal of a summary where a
 * command needs events: "tracetool: FILE: a summary holds no events: `CMD`
 * needs the traces or their database" for the first of in[0..n) that is one,
 * EXIT_BADINPUT; 0 when none is */
extern const char *cli_command;
int refuse_summaries(const char *const *in, int n);

#endif
