/*
 * call/call_internal.h - tt_call's pieces (tracetool/call.h): the options
 * object read as the CLI's argv would be, each command's table and runner.
 */
#ifndef TT_CALL_INTERNAL_H
#define TT_CALL_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "common/arena.h"
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "tracetool/common.h"
#include "tracetool/filter.h"
#include "tracetool/summary.h"

/* one option of a command, as its cli_opt table has it */
typedef struct tc_opt {
    const char *name; /* the CLI's long name ("row-limit") */
    int key;
    int has_arg;      /* 0: a flag (true/false) */
} tc_opt;

/* the options given: name/argument pairs in the object's order (a list is
 * one pair per element; a flag's argument is NULL) */
enum { TC_TEXT, TC_TRUE, TC_FALSE };
typedef struct tc_arg {
    const char *key;  /* as given ("row_limit") */
    const char *name; /* the CLI's spelling ("row-limit") */
    const char *arg;  /* TC_TEXT: a string, or a number's text */
    int kind;         /* TC_* */
} tc_arg;

typedef struct tc {
    const char *cmd;          /* "averages" */
    const char *const *in;    /* the inputs */
    size_t nin;
    tc_arg *args;
    size_t nargs;
    FILE *out;                /* the result (open_memstream) */
    int exit_code;            /* the CLI's, for a result */
    int usage;                /* the error is a usage error (exit 2) */
    tt_arena arena;           /* the options' text */
} tc;

/* a usage error: the CLI's message, exit code 2; returns TT_EINVALID */
int tc_usage(tc *t, const char *fmt, ...) TT_PRINTF(2, 3);

/*
 * Walk the options against a command's table: set(t, ctx, key, arg) for
 * each (arg NULL for a flag given true; a flag given false is left out).
 * Refused: names in `writes` (options that write files), "format", and an
 * unknown name. 0 or the first error.
 */
int tc_parse(tc *t, const tc_opt *opts, const char *const *writes,
             int (*set)(tc *t, void *ctx, int key, const char *arg), void *ctx);

/* the CLI's option helpers (cli/util.c), returning a usage error */
/* a whole number >= min, else "bad WHAT 'arg'TAIL" */
int tc_i64(tc *t, const char *arg, int64_t min, int64_t *v, const char *what, const char *tail);
int tc_trace_id(tc *t, const char *arg, int64_t *v);
int tc_rank(tc *t, const char *arg, int64_t *v);
int tc_row_limit(tc *t, const char *arg, int64_t *v);
int tc_steps(tc *t, const char *arg, int64_t *from, int64_t *to);
/* --time-range, --name, --under into f; 1 if key is one of t_, n_, u_ */
int tc_filter(tc *t, int key, int t_, int n_, int u_, const char *arg, tt_filter *f, int *rc);
/* arg among the words of "a|b|c": its index, or the usage error
 * "unknown WHAT 'arg' (one of a|b|c)" (returned negative) */
int tc_choose(tc *t, const char *choices, const char *arg, const char *what);

/* INPUT as the CLI's run_on_input_sum reads it: a database through on_db,
 * a summary through on_sum (NULL: refused, as run_on_input does), else
 * on_file; "-" is refused */
int tc_run_input(tc *t, const char *in, int (*on_db)(tc *t, tt_db *db, void *ctx),
                 int (*on_file)(tc *t, const char *path, void *ctx),
                 int (*on_sum)(tc *t, tt_summary *s, void *ctx), void *ctx);
/* exactly n inputs (the CLI's operand count), else a usage error */
int tc_inputs(tc *t, size_t lo, size_t hi, const char *msg);
/* "a summary holds no events" for an input that is one */
int tc_refuse_summaries(tc *t, const char *const *in, size_t n);

/* the commands (call_cmds.c, call_cmp.c) */
int tc_info(tc *t);
int tc_averages(tc *t);
int tc_kernels(tc *t);
int tc_breakdown(tc *t);
int tc_queue(tc *t);
int tc_bandwidth(tc *t);
int tc_collectives(tc *t);
int tc_critpath(tc *t);
int tc_memtimeline(tc *t);
int tc_crosscheck(tc *t);
int tc_diff(tc *t);

#endif
