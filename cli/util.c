/*
 * cli/util.c - diagnostics and exit codes shared by the commands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/analyze.h"
#include "tracetool/common.h"
#include "tracetool/summary.h"

/* the library's table (tracetool/common.h), the one place it is kept */
int exit_code_for(int code)
{
    return tt_exit_code(code);
}

int report_error(int code)
{
    char line[2048];
    const tt_error *e = tt_error_last();
    tt_error_format(e, line, sizeof(line));
    fprintf(stderr, "tracetool: %s\n", line);
    return exit_code_for(e->code ? e->code : code);
}

int parse_i64(const char *s, int64_t *out)
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

int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, "-") || !strcmp(b, "-") || stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* the trace of an input directory that a refused output is (kept here, a
 * root the leak checker sees, while the usage error exits) */
static char *clash;

void check_outputs_not_inputs(const struct cli_cmd *c, const char *out,
                              const char *const *in, int nin)
{
    check_output_named(c, "the output", out, in, nin);
}

void check_output_named(const struct cli_cmd *c, const char *what, const char *out,
                        const char *const *in, int nin)
{
    struct stat so;
    int i;
    size_t k;
    if (!out || !strcmp(out, "-") || stat(out, &so) != 0)
        return; /* standard output, or a new file: nothing to lose */
    for (i = 0; i < nin; i++) {
        struct stat st;
        tt_dir_walk w;
        if (!in[i] || !strcmp(in[i], "-") || stat(in[i], &st) != 0)
            continue;
        if (st.st_dev == so.st_dev && st.st_ino == so.st_ino)
            cli_usage_error(c, "%s '%s' is the input '%s': refusing to overwrite it", what,
                            out, in[i]);
        if (!S_ISDIR(st.st_mode))
            continue;
        (void)tt_walk_traces(in[i], &w); /* out of memory: what it found */
        for (k = 0; k < w.nfiles && !clash; k++)
            if (same_file(w.files[k], out) && !(clash = strdup(w.files[k])))
                clash = (char *)in[i]; /* out of memory: name the directory */
        tt_dir_walk_free(&w);
        if (clash)
            cli_usage_error(c, "%s '%s' is the input '%s': refusing to overwrite it", what,
                            out, clash);
    }
}

int finish_stdout(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracetool: error writing to standard output: %s\n",
                strerror(errno));
        return rc ? rc : EXIT_IO;
    }
    return rc;
}

int64_t opt_trace_id(const struct cli_cmd *c, const char *arg)
{
    int64_t v;
    if (parse_i64(arg, &v) < 0 || v <= 0)
        cli_usage_error(c, "bad trace id '%s'", arg);
    return v;
}

int64_t opt_rank(const struct cli_cmd *c, const char *arg)
{
    int64_t v;
    if (parse_i64(arg, &v) < 0 || v < 0)
        cli_usage_error(c, "bad rank '%s'", arg);
    return v;
}

tt_output_format opt_format(const struct cli_cmd *c, const struct cli_opt *o, const char *arg)
{
    static const tt_output_format fmt[] = { TT_FORMAT_TABLE, TT_FORMAT_CSV, TT_FORMAT_JSON,
                                            TT_FORMAT_MARKDOWN };
    int k;
    if (!strcmp(arg, "text"))
        arg = "table"; /* what info and crosscheck used to call it */
    cli_choose(c, o, arg, "format"); /* a usage error unless the command has it */
    k = cli_choice("table|csv|json|markdown", arg);
    return k < 0 ? TT_FORMAT_TABLE : fmt[k];
}

int64_t opt_row_limit(const struct cli_cmd *c, const char *arg)
{
    int64_t v;
    if (parse_i64(arg, &v) < 0 || v < -1)
        cli_usage_error(c, "bad row limit '%s'", arg);
    return v;
}

/* the command running (main.c sets it), for refuse_summaries' message */
const char *cli_command = "tracetool";

int refuse_summaries(const char *const *in, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (in[i] && tt_is_summary_file(in[i])) {
            fprintf(stderr, "tracetool: %s: a summary holds no events: `%s` needs the traces or"
                            " their database\n", in[i], cli_command);
            return EXIT_BADINPUT;
        }
    }
    return 0;
}

int run_on_input_sum(const char *in, int (*on_db)(struct tt_db *db, void *ctx),
                     int (*on_file)(const char *path, void *ctx),
                     int (*on_sum)(tt_summary *s, void *ctx), void *ctx)
{
    tt_summary *s;
    int rc;
    if (!on_sum || !tt_is_summary_file(in))
        return run_on_input(in, on_db, on_file, ctx);
    if ((rc = tt_summary_load(in, &s)) < 0)
        return report_error(rc);
    rc = on_sum(s, ctx);
    tt_summary_free(s);
    return rc < 0 ? report_error(rc) : 0;
}

int run_on_input(const char *in, int (*on_db)(struct tt_db *db, void *ctx),
                 int (*on_file)(const char *path, void *ctx), void *ctx)
{
    int rc;
    if ((rc = refuse_summaries(&in, 1)) != 0)
        return rc;
    /* a database; or a trace file, a directory of per-rank traces or
     * standard input, which the analysis reads itself (--trace and --rank
     * included), without making a database */
    if (strcmp(in, "-") && tt_is_sqlite_file(in)) {
        tt_db *db;
        if ((rc = tt_db_open_input(&db, in)) < 0)
            return report_error(rc);
        rc = on_db(db, ctx);
        tt_db_free(db);
    } else {
        rc = on_file(in, ctx);
    }
    return rc < 0 ? report_error(rc) : 0;
}

void opt_steps(const struct cli_cmd *c, const char *arg, int64_t *from, int64_t *to)
{
    const char *dash = strchr(arg + (arg[0] == '-'), '-');
    char a[32];
    if (!dash) {
        if (parse_i64(arg, from) < 0 || *from < 0)
            cli_usage_error(c, "bad step '%s' (want N or A-B)", arg);
        *to = *from;
        return;
    }
    if (dash - arg >= (long)sizeof(a))
        cli_usage_error(c, "bad step range '%s' (want N or A-B)", arg);
    memcpy(a, arg, (size_t)(dash - arg));
    a[dash - arg] = '\0';
    if (parse_i64(a, from) < 0 || parse_i64(dash + 1, to) < 0 || *from < 0 || *from > *to)
        cli_usage_error(c, "bad step range '%s' (want N or A-B, A <= B)", arg);
}

void opt_time_range(const struct cli_cmd *c, const char *arg, tt_filter *f)
{
    if (tt_filter_parse_time_range(arg, &f->from_ns, &f->to_ns) < 0)
        cli_usage_error(c, "%s", tt_error_last()->message);
}

int opt_filter(const struct cli_cmd *c, int key, int t, int n, int u, const char *arg,
               tt_filter *f)
{
    if (key == t)
        opt_time_range(c, arg, f);
    else if (key == n)
        opt_filter_regex(c, "name", arg, &f->name);
    else if (key == u)
        opt_filter_regex(c, "under", arg, &f->under);
    else
        return 0;
    return 1;
}

void opt_filter_regex(const struct cli_cmd *c, const char *opt, const char *arg,
                      const char **slot)
{
    tt_filter f = TT_FILTER_INIT;
    if (!strcmp(opt, "under"))
        f.under = arg;
    else
        f.name = arg;
    if (tt_filter_check(&f) < 0)
        cli_usage_error(c, "%s", tt_error_last()->message);
    *slot = arg;
}
