/*
 * cli/cmd_diff.c - `tracetool diff [options] BASE NEW`: the CI gate.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/diff.h"

enum { O_BASE, O_NEW, O_STEPS, O_NEW_STEPS, O_SKIP, O_GATE, O_THR, O_OPTHR, O_MEMTHR, O_ALPHA,
       O_FDR, O_NOSTATS, O_ALLOW, O_FAILINC, O_CLOCK, O_FORMAT, O_MD, O_JSON, O_JUNIT, O_TOP,
       O_SAVE, O_MATCH, O_RENAME, O_RANK_AGG, O_RANK_MAP };

static const struct cli_opt opts[] = {
    { "base", O_BASE, "INPUT", "one more BASE input (a run or rank); repeatable", 'b' },
    { "new", O_NEW, "INPUT", "one more NEW input; repeatable", 'n' },
    { "steps", O_STEPS, "A-B", "only ProfilerStep#A..#B (of both sides, unless --new-steps)", 0 },
    { "new-steps", O_NEW_STEPS, "A-B", "NEW's steps (default: as --steps)", 0 },
    { "skip-first", O_SKIP, "N", "leave out the first N steps of each trace (warm-up)", 0 },
    { "gate", O_GATE, "LIST", "what can fail: step,memory (default), +ops, +kernels,\n"
      "or none", 0 },
    { "threshold", O_THR, "PCT", "step time change that counts (default 5)", 0 },
    { "op-threshold", O_OPTHR, "PCT", "per-op / per-kernel change that counts (default 10)", 0 },
    { "mem-threshold", O_MEMTHR, "PCT", "memory peak change that counts (default 5; and\n"
      ">= 16 MiB)", 0 },
    { "alpha", O_ALPHA, "P", "significance of the one-sided Mann-Whitney test (0.01)", 0 },
    { "fdr", O_FDR, "Q", "Benjamini-Hochberg level across gated rows (0.05)", 0 },
    { "no-stats", O_NOSTATS, NULL, "gate on thresholds alone (single-step traces)", 0 },
    { "allow-env-mismatch", O_ALLOW, NULL, "compare although the GPU model or world size\n"
      "differ (said at the top of the report)", 0 },
    { "fail-on-inconclusive", O_FAILINC, NULL, "exit 6 when a gated metric is inconclusive", 0 },
    { "step-clock", O_CLOCK, "device|cpu", "step time from the GPU (default when both\n"
      "sides have GPU work) or from ProfilerStep", 0 },
    { "format", O_FORMAT, "text|table|markdown|json|junit|github|csv",
      "report on stdout (default text; table is text; csv:\n"
      "a row per metric and key row, the JSON keys as header)", 0 },
    { "markdown", O_MD, "FILE", "also write the Markdown report to FILE", 0 },
    { "json", O_JSON, "FILE", "also write the JSON report to FILE", 0 },
    { "junit", O_JUNIT, "FILE", "also write the JUnit XML report to FILE", 0 },
    { "top", O_TOP, "N", "contributor rows in text/markdown (default 20)", 0 },
    { "save-summary", O_SAVE, "FILE", "write NEW's traces to FILE as a summary\n"
      "(tracetool.summary/1, as `tracetool summarize`), a small\n"
      "input for a later diff (the baseline CI keeps); with one\n"
      "side only, just write it", 0 },
    { "match", O_MATCH, "family|name|op|shape", "key kernels by family (default), raw name, or\n"
      "the CPU op that launched them (across GPUs or libraries);\n"
      "shape: CPU ops by name and input shapes", 0 },
    { "rename", O_RENAME, "FILE", "lines 'REGEX => REPLACEMENT' applied to every key\n"
      "(\\1..\\9: groups), so renamed ops and kernels match", 0 },
    { "rank-agg", O_RANK_AGG, "max|each", "per step the slowest rank (default), or a verdict\n"
      "per rank (Benjamini-Hochberg across ranks)", 0 },
    { "rank-map", O_RANK_MAP, "B:N,...", "with --rank-agg each: BASE rank B is compared with\n"
      "NEW rank N (default: the same number)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "diff", "BASE NEW",
    "Compare two runs step by step and fail on a real performance regression.\n"
    "BASE and NEW are trace files, directories of per-rank traces or databases\n"
    "made by 'tracetool ingest'; -b/-n add runs to a side. One sample is one\n"
    "ProfilerStep#N (the slowest rank's). The step time (on the GPU: end of the\n"
    "last GPU activity launched in the step minus the previous step's) regresses\n"
    "when it grows by at least --threshold and a one-sided Mann-Whitney test gives\n"
    "p <= --alpha; memory peaks by --mem-threshold. Ops and kernels (by family) are\n"
    "listed as contributors, added, removed and count changes.",
    opts,
    "exit codes: 0 no gated regression; 1 regression; 2 usage (also: an output is\n"
    "an input); 3 bad input; 4 I/O or database error; 6 not comparable (GPU model\n"
    "or world size differ, no steps, no rank pair with --rank-agg each), or\n"
    "inconclusive with --fail-on-inconclusive.",
    0, 2, "need BASE and NEW (or -b/-n)",
};

struct ctx {
    tt_diff_options o;
    const char **base, **new_;
    size_t nb, nn;
    int format;
    const char *md, *json, *junit, *save;
    int64_t *rank_map;
};

/* --rank-map 0:4,1:5 */
static void parse_rank_map(const struct cli_cmd *c, struct ctx *x, const char *arg)
{
    const char *p = arg;
    size_t n = 0;
    while (*p) {
        char *end;
        long long a = strtoll(p, &end, 10), b;
        int64_t *m;
        if (end == p || *end != ':' || a < 0)
            cli_usage_error(c, "bad --rank-map '%s' (want B:N,...)", arg);
        p = end + 1;
        b = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',') || b < 0)
            cli_usage_error(c, "bad --rank-map '%s' (want B:N,...)", arg);
        if (!(m = realloc(x->rank_map, (n + 1) * 2 * sizeof(*m)))) {
            fputs("tracetool diff: out of memory\n", stderr);
            exit(EXIT_IO);
        }
        m[2 * n] = a;
        m[2 * n + 1] = b;
        x->rank_map = m;
        n++;
        p = *end ? end + 1 : end;
    }
    x->o.rank_map = x->rank_map;
    x->o.nrank_map = n;
}

static void add_input(const char ***v, size_t *n, const char *s)
{
    const char **p = realloc(*v, (*n + 1) * sizeof(*p));
    if (!p) {
        fputs("tracetool diff: out of memory\n", stderr);
        exit(EXIT_IO);
    }
    p[(*n)++] = s;
    *v = p;
}

static void set_range(const struct cli_cmd *c, const char *arg, int64_t *lo, int64_t *hi)
{
    const char *dash = strchr(arg, '-');
    char a[32];
    if (!dash) {
        if (parse_i64(arg, lo) < 0 || *lo < 0)
            cli_usage_error(c, "bad step range '%s' (want N or A-B)", arg);
        *hi = *lo;
        return;
    }
    if (dash - arg >= (long)sizeof(a) || dash == arg)
        cli_usage_error(c, "bad step range '%s' (want N or A-B)", arg);
    memcpy(a, arg, (size_t)(dash - arg));
    a[dash - arg] = '\0';
    if (parse_i64(a, lo) < 0 || parse_i64(dash + 1, hi) < 0 || *lo < 0 || *lo > *hi)
        cli_usage_error(c, "bad step range '%s' (want N or A-B, A <= B)", arg);
}

static double pos_num(const struct cli_cmd *c, const char *name, const char *arg, double max)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !(v >= 0) || v > max)
        cli_usage_error(c, "bad --%s '%s'", name, arg);
    return v;
}

/* --gate step,memory | +ops,kernels | none: every item named, none empty */
static unsigned parse_gate(const struct cli_cmd *c, const char *arg)
{
    static const char *const words[] = { "step", "memory", "ops", "kernels", "none" };
    unsigned g = 0;
    const char *p = arg;
    int add = arg[0] == '+';
    if (add)
        g = TT_GATE_STEP | TT_GATE_MEMORY, p++;
    if (!*p)
        cli_usage_error(c, "empty --gate (want step, memory, ops, kernels or none)");
    for (;;) {
        size_t len = strcspn(p, ",+");
        int k;
        for (k = 0; k < 5 && !(strlen(words[k]) == len && !strncmp(p, words[k], len)); k++)
            ;
        if (!len)
            cli_usage_error(c, "an empty item in --gate '%s' (want step, memory, ops, kernels"
                               " or none)", arg);
        if (k == 5)
            cli_usage_error(c, "unknown gate '%.*s' (want step, memory, ops, kernels or none)",
                            (int)(len > 64 ? 64 : len), p);
        if (k < 4)
            g |= 1u << k;
        if (!p[len])
            break;
        p += len + 1;
    }
    return g;
}

/* --rename names a file: it is read once for each side, so a pipe or a
 * directory would give the sides different rules (or none) */
static void check_rename(const struct cli_cmd *c, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) != 0)
        return; /* missing: the I/O error names it */
    if (S_ISDIR(st.st_mode))
        cli_usage_error(c, "--rename '%s' is a directory (want a file of 'REGEX => REPLACEMENT'"
                           " lines)", arg);
    if (!S_ISREG(st.st_mode))
        cli_usage_error(c, "--rename '%s' is not a regular file (it is read once for each side)",
                        arg);
}

static void set(void *vctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct ctx *x = vctx;
    int64_t n;
    switch (key) {
    case O_BASE: add_input(&x->base, &x->nb, arg); break;
    case O_NEW: add_input(&x->new_, &x->nn, arg); break;
    case O_STEPS: set_range(c, arg, &x->o.steps_lo, &x->o.steps_hi); break;
    case O_NEW_STEPS: set_range(c, arg, &x->o.new_steps_lo, &x->o.new_steps_hi); break;
    case O_SKIP:
        if (parse_i64(arg, &n) < 0 || n < 0)
            cli_usage_error(c, "bad --skip-first '%s'", arg);
        x->o.skip_first = n;
        break;
    case O_GATE: x->o.gate = parse_gate(c, arg); break;
    case O_THR: x->o.threshold = pos_num(c, "threshold", arg, 1e6); break;
    case O_OPTHR: x->o.op_threshold = pos_num(c, "op-threshold", arg, 1e6); break;
    case O_MEMTHR: x->o.mem_threshold = pos_num(c, "mem-threshold", arg, 1e6); break;
    case O_ALPHA: x->o.alpha = pos_num(c, "alpha", arg, 1); break;
    case O_FDR: x->o.fdr = pos_num(c, "fdr", arg, 1); break;
    case O_NOSTATS: x->o.no_stats = 1; break;
    case O_ALLOW: x->o.allow_env_mismatch = 1; break;
    case O_FAILINC: x->o.fail_on_inconclusive = 1; break;
    case O_CLOCK: x->o.step_clock = cli_choose(c, cli_opt_of(c, O_CLOCK), arg, "step clock"); break;
    case O_FORMAT: {
        static const int f[] = { TT_FORMAT_TABLE, TT_FORMAT_TABLE, TT_FORMAT_MARKDOWN, TT_FORMAT_JSON,
                                 TT_FORMAT_JUNIT, TT_FORMAT_GITHUB, TT_FORMAT_CSV };
        x->format = f[cli_choose(c, cli_opt_of(c, O_FORMAT), arg, "format")];
        break;
    }
    case O_MD: x->md = arg; break;
    case O_JSON: x->json = arg; break;
    case O_JUNIT: x->junit = arg; break;
    case O_SAVE: x->save = arg; break;
    case O_MATCH: {
        static const int m[] = { TT_MATCH_FAMILY, TT_MATCH_NAME, TT_MATCH_OP, TT_MATCH_SHAPE };
        x->o.match = m[cli_choose(c, cli_opt_of(c, O_MATCH), arg, "match")];
        break;
    }
    case O_RENAME: check_rename(c, arg), x->o.rename = arg; break;
    case O_RANK_AGG: x->o.rank_each = cli_choose(c, cli_opt_of(c, O_RANK_AGG), arg, "rank aggregation"); break;
    case O_RANK_MAP: parse_rank_map(c, x, arg); break;
    default:
        if (parse_i64(arg, &n) < 0 || n < 0 || n > 100000)
            cli_usage_error(c, "bad --top '%s'", arg);
        x->o.top = (int)n;
        break;
    }
}

static int write_file(const tt_diff_result *r, const tt_diff_options *o, int fmt, const char *path)
{
    int rc = tt_diff_write_file(r, o, fmt, path);
    return rc < 0 ? report_error(rc) : 0;
}

/* Markdown onto $GITHUB_STEP_SUMMARY, cut below 1 MiB */
static void step_summary(const tt_diff_result *r, const tt_diff_options *o)
{
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    char *buf = NULL;
    size_t len = 0, cut = 1024 * 1024 - 256;
    FILE *m, *f;
    if (!path || !*path || !(m = open_memstream(&buf, &len)))
        return;
    tt_diff_write(r, o, TT_FORMAT_MARKDOWN, m);
    fclose(m);
    if ((f = fopen(path, "a"))) {
        if (len > cut) {
            size_t k = cut, lines = 0, i;
            while (k > 0 && buf[k - 1] != '\n')
                k--;
            for (i = k; i < len; i++)
                lines += buf[i] == '\n';
            fwrite(buf, 1, k, f);
            fprintf(f, "\n%zu lines omitted (the report is longer than 1 MiB)\n", lines);
        } else {
            fwrite(buf, 1, len, f);
        }
        fclose(f);
    }
    free(buf);
}

/* no report, summary or $GITHUB_STEP_SUMMARY may replace an input (nor a
 * trace in an input directory, nor the --rename file): checked before
 * anything is read */
static void check_outputs(const struct ctx *x)
{
    static const char **in; /* static: still reachable when a usage error exits */
    const char *out[5];
    size_t k;
    if (!(in = malloc((x->nb + x->nn + 1) * sizeof(*in)))) {
        fputs("tracetool diff: out of memory\n", stderr);
        exit(EXIT_IO);
    }
    for (k = 0; k < x->nb; k++)
        in[k] = x->base[k];
    for (k = 0; k < x->nn; k++)
        in[x->nb + k] = x->new_[k];
    in[x->nb + x->nn] = x->o.rename;
    out[0] = x->md;
    out[1] = x->json;
    out[2] = x->junit;
    out[3] = x->save;
    out[4] = getenv("GITHUB_STEP_SUMMARY");
    for (k = 0; k < 5; k++)
        if (out[k] && *out[k])
            check_output_named(&cmd, k == 4 ? "$GITHUB_STEP_SUMMARY" : "the output", out[k],
                               in, (int)(x->nb + x->nn + 1));
    free(in);
    in = NULL;
}

/* --save-summary with one side: write it, compare nothing */
static int save_only(struct ctx *x)
{
    tt_diff_side *s = NULL;
    int rc = x->nb ? tt_diff_side_load(x->base, x->nb, &x->o, 0, &s)
                   : tt_diff_side_load(x->new_, x->nn, &x->o, 1, &s);
    if (rc == 0) /* a tracetool.summary/1 of that side's inputs */
        rc = x->nb ? tt_diff_save_summary(x->base, x->nb, x->save)
                   : tt_diff_save_summary(x->new_, x->nn, x->save);
    tt_diff_side_free(s);
    free(x->base);
    free(x->new_);
    free(x->rank_map);
    return rc < 0 ? report_error(rc) : 0;
}

int cmd_diff(int argc, char **argv)
{
    struct ctx x;
    tt_diff_side *b = NULL, *n = NULL;
    tt_diff_result r;
    int first, rc, k;
    memset(&x, 0, sizeof(x));
    x.o = (tt_diff_options)TT_DIFF_OPTIONS_INIT;
    if (!(first = cli_parse(&cmd, argc, argv, set, &x)))
        return 0;
    for (k = first; k < argc; k++) {
        /* BASE NEW; one operand is BASE unless -b gave one */
        int to_base = k == first && (argc - first == 2 || !x.nb);
        add_input(to_base ? &x.base : &x.new_, to_base ? &x.nb : &x.nn, argv[k]);
    }
    check_outputs(&x);
    if (x.save && x.nb + x.nn > 0 && (!x.nb || !x.nn)) /* one side: summarise it */
        return save_only(&x);
    if (!x.nb || !x.nn)
        cli_usage_error(&cmd, "need BASE and NEW (or -b/-n)");
    if ((rc = tt_diff_side_load(x.base, x.nb, &x.o, 0, &b)) < 0 ||
        (rc = tt_diff_side_load(x.new_, x.nn, &x.o, 1, &n)) < 0) {
        tt_diff_side_free(b);
        free(x.base);
        free(x.new_);
        free(x.rank_map);
        return report_error(rc);
    }
    if (x.save && (rc = tt_diff_save_summary(x.new_, x.nn, x.save)) < 0) {
        tt_diff_side_free(b);
        tt_diff_side_free(n);
        free(x.base);
        free(x.new_);
        free(x.rank_map);
        return report_error(rc);
    }
    rc = tt_diff_compare(b, n, &x.o, &r);
    tt_diff_side_free(b);
    tt_diff_side_free(n);
    free(x.base);
    free(x.new_);
    free(x.rank_map);
    if (rc < 0)
        return report_error(rc);
    rc = tt_diff_write(&r, &x.o, x.format, stdout);
    rc = rc < 0 ? report_error(rc) : 0;
    if (rc == 0 && x.md)
        rc = write_file(&r, &x.o, TT_FORMAT_MARKDOWN, x.md);
    if (rc == 0 && x.json)
        rc = write_file(&r, &x.o, TT_FORMAT_JSON, x.json);
    if (rc == 0 && x.junit)
        rc = write_file(&r, &x.o, TT_FORMAT_JUNIT, x.junit);
    if (rc == 0)
        step_summary(&r, &x.o);
    k = r.exit_code;
    tt_diff_result_free(&r);
    rc = finish_stdout(rc);
    return rc ? rc : k;
}
