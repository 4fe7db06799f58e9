/*
 * cli/cmd_breakdown.c - `tracetool breakdown INPUT|DB`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/breakdown.h"
#include "tracetool/summary.h"

enum { O_STEPS, O_RANK, O_TRACE, O_BY, O_KWAIT, O_FORMAT, O_ROWS, O_HTML, O_COMM, O_TIME, O_NAME,
       O_UNDER, O_KERNELS };

static const struct cli_opt opts[] = {
    { "steps", O_STEPS, "A-B", "only GPU activities launched in ProfilerStep#A..#B\n"
      "(or N: one step)", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "only the kernels, memcpys and memsets whose name\ncontains a match of the "
                    "POSIX extended regex\ncount (the window, busy, idle: theirs); --by\n"
                    "annotation: the annotations whose name matches\n(--kernels: the activities)",
                    "only the GPU activities launched under an op whose\nwhole name matches the "
                    "regex count (their runtime\ncall on the op's thread, inside it); --by\n"
                    "annotation: the annotations whose CPU\nuser_annotation is under it "
                    "(--kernels: the\nactivities)"),
    { "rank", O_RANK, "R", "only that rank", 0 },
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    { "by", O_BY, "rank|step|stream|annotation", "the second table, and what kernel families and\n"
      "CPU ops are spread over: ranks (default), steps or\nstreams; annotation: instead, GPU "
      "time per\ngpu_user_annotation name and rank (their own\ndurations; HTA's user annotation "
      "breakdown)", 0 },
    { "kernels", O_KERNELS, NULL, "with --by annotation: the time of the kernels,\n"
      "memcpys and memsets under each annotation (the\ninnermost one), as HTA's kernels with "
      "user\nannotations", 0 },
    { "kernel-wait", O_KWAIT, "NS", "idle gaps under NS ns that are not host wait are\n"
      "kernel wait (default 30000: HTA's 30 us)", 0 },
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table); csv: the table\n"
      "of --by; json: every table", 0 },
    { "row-limit", O_ROWS, "N", "rows per table (default -1 = all)", 0 },
    { "top", O_ROWS, "N", "the same as --row-limit N", 0 },
    { "html", O_HTML, "OUT.html", "also write one self-contained page: each rank's window\n"
      "as a stacked bar (--by step|stream: each step's or stream's\n"
      "too), the launch-delay histogram, the numbers", 0 },
    { "comm-pattern", O_COMM, "REGEX", "kernels whose name matches REGEX (POSIX extended,\n"
      "anywhere in the name) are communication too; repeatable", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "breakdown", "INPUT|DB",
    "Where the GPU time goes, rank by rank (HTA's temporal and idle time breakdowns,\n"
    "communication/computation overlap, kernel launch statistics): per rank and\n"
    "device, from the first to the last GPU activity, busy (union of kernels, memcpy,\n"
    "memset), compute, communication (NCCL/RCCL/HCCL, NVSHMEM, multimem and custom\n"
    "all-reduce kernels, --comm-pattern), memory, exposed communication, overlap %,\n"
    "idle split into host wait, kernel wait and other; the skew across ranks; GPU\n"
    "time per kernel family and per CPU op that launched it; launch delay and\n"
    "runtime-call percentiles per family with the worst launches.\n"
    "INPUT is a trace file, a directory of per-rank traces or a database made by\n"
    "'tracetool ingest'.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input; 4 I/O or database error, or no GPU\n"
    "activity to break down.",
    1, 1, "need exactly one input",
};

struct args {
    tt_bd_options o;
    const char *html;
    const char **comm;       /* --comm-pattern, in order */
    size_t ncomm;
};

static void add_comm_pattern(struct args *a, const struct cli_cmd *c, const char *arg)
{
    char err[160];
    const char **n;
    if (!*arg) /* would match every kernel: an unset shell variable, most likely */
        cli_usage_error(c, "--comm-pattern needs a regular expression");
    if (tt_bd_comm_pattern_check(arg, err, sizeof(err)) < 0)
        cli_usage_error(c, "bad --comm-pattern '%s': %s", arg, err);
    if (!(n = realloc(a->comm, (a->ncomm + 1) * sizeof(*n)))) {
        fputs("tracetool breakdown: out of memory\n", stderr);
        exit(EXIT_IO);
    }
    n[a->ncomm++] = arg;
    a->comm = n;
    a->o.comm_patterns = a->comm;
    a->o.ncomm_patterns = a->ncomm;
}

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct args *a = ctx;
    tt_bd_options *o = &a->o;
    static const int by[] = { TT_BD_BY_RANK, TT_BD_BY_STEP, TT_BD_BY_STREAM, TT_BD_BY_ANNOTATION };
    if (opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter))
        return;
    switch (key) {
    case O_STEPS: opt_steps(c, arg, &o->step_from, &o->step_to), o->steps_set = 1; break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_BY: o->by = by[cli_choose(c, cli_opt_of(c, O_BY), arg, "grouping")]; break;
    case O_KWAIT:
        if (parse_i64(arg, &o->kernel_wait_ns) < 0 || o->kernel_wait_ns < 0)
            cli_usage_error(c, "bad --kernel-wait '%s' (want ns, >= 0)", arg);
        break;
    case O_ROWS: o->row_limit = opt_row_limit(c, arg); break;
    case O_HTML: a->html = arg; break;
    case O_COMM: add_comm_pattern(a, c, arg); break;
    case O_KERNELS: o->annot_kernels = 1; break;
    default: o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg); break;
    }
}

/* what goes with --by annotation, and what needs it */
static void check_annotation(const struct args *a)
{
    const tt_bd_options *o = &a->o;
    if (o->by != TT_BD_BY_ANNOTATION && o->annot_kernels)
        cli_usage_error(&cmd, "--kernels needs --by annotation");
    if (o->by != TT_BD_BY_ANNOTATION)
        return;
    if (o->steps_set || a->html || a->ncomm)
        cli_usage_error(&cmd, "--by annotation does not go with --%s",
                        o->steps_set ? "steps (--time-range does the same)"
                        : a->html    ? "html"
                                     : "comm-pattern");
}

/* a summary (tracetool summarize): what it holds answers */
struct sum_ctx {
    struct args *a;
    const char *in;
};

static int on_sum(tt_summary *s, void *ctx)
{
    struct sum_ctx *x = ctx;
    tt_bd_result res;
    int rc = tt_breakdown_summary_result(s, &x->a->o, &res);
    if (rc == 0)
        rc = tt_breakdown_print(&res, &x->a->o, stdout);
    if (rc == 0 && x->a->html)
        rc = tt_breakdown_html(&res, x->in, x->a->html);
    tt_bd_result_free(&res);
    return rc;
}

int cmd_breakdown(int argc, char **argv)
{
    struct args a = { TT_BD_OPTIONS_INIT, NULL, NULL, 0 };
    tt_bd_result res;
    const char *in;
    int rc, first = cli_parse(&cmd, argc, argv, set, &a);
    if (!first)
        return 0;
    in = argv[first];
    if (a.html && !*a.html)
        cli_usage_error(&cmd, "--html needs a file name");
    check_annotation(&a);
    /* nor the input, nor a trace of an input directory */
    check_outputs_not_inputs(&cmd, a.html, (const char *const *)&in, 1);
    if (strcmp(in, "-") && tt_is_summary_file(in)) {
        struct sum_ctx x = { &a, in };
        rc = run_on_input_sum(in, NULL, NULL, on_sum, &x);
        free(a.comm);
        return rc ? rc : finish_stdout(0);
    }
    /* a database, else a file or a directory read without one (--rank and
     * --trace work on them too) */
    if (strcmp(in, "-") && tt_is_sqlite_file(in)) {
        tt_db *db;
        if ((rc = tt_db_open(&db, in, TT_DB_READONLY)) < 0)
            return report_error(rc);
        rc = tt_breakdown_db_result(db, &a.o, &res);
        tt_db_free(db);
    } else {
        rc = tt_breakdown_file_result(in, &a.o, &res);
    }
    if (rc == 0)
        rc = tt_breakdown_print(&res, &a.o, stdout);
    if (rc == 0 && a.html)
        rc = tt_breakdown_html(&res, in, a.html);
    tt_bd_result_free(&res);
    free(a.comm);
    if (rc < 0)
        return report_error(rc);
    return finish_stdout(0);
}
