/*
 * cli/cmd_critpath.c - `tracetool critical-path INPUT|DB`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/critpath.h"

enum { O_STEP, O_TRACE, O_RANK, O_TIME, O_FORMAT, O_OVERLAY, O_DATA_LOAD, O_NAME, O_UNDER,
       O_INSTANCE };

static const struct cli_opt opts[] = {
    { "step", O_STEP, "N", "the window: the slice ProfilerStep#N (default:\nthe whole trace)", 0 },
    { "rank", O_RANK, "R", "the trace of rank R", 0 },
    { "trace", O_TRACE, "ID", "only that trace", 0 },
    CLI_FILTER_OPTS(O_TIME, O_NAME, O_UNDER,
                    "list only the segments at an event whose name\ncontains a match of the "
                    "POSIX extended regex\n(the path, its length and breakdown stay the\n"
                    "window's)",
                    "the window: the span of an op (CPU slice) whose\nwhole name matches the "
                    "regex, on every thread\n(HTA's annotation); --instance says which"),
    { "instance", O_INSTANCE, "K|A-B", "with --under: the K-th matching op by start (the\n"
      "first is 0, the default), or the span of the\nA-th to the B-th (HTA's instance_id)", 0 },
    { "overlay", O_OVERLAY, "OUT.json", "also write the window's events with the path\nmarked "
      "(args.critical, flows \"critical_path\") as\na Chrome trace for Perfetto (.gz: gzipped)",
      0 },
    { "data-load", O_DATA_LOAD, "REGEX", "CPU events whose name matches are data loading\n"
      "(may be given more than once)", 0 },
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table)", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "critical-path", "INPUT|DB",
    "The critical path of one rank's step, as Holistic Trace Analysis defines it:\n"
    "the chain of CPU ops, runtime calls, kernel launches, kernels and\n"
    "synchronisations that bounds the step, its length, and its time by what\n"
    "bounds it (cpu_bound, data_loading, gpu_compute_bound,\n"
    "gpu_communication_bound, gpu_kernel_kernel_overhead,\n"
    "gpu_kernel_launch_overhead), then each edge of the path. INPUT is a trace\n"
    "file, a directory of per-rank traces (choose one with --rank) or a database.",
    opts, "exit codes: 0 ok; 2 usage; 3 bad input (several traces, a cycle); 4 I/O or\n"
          "database error, or not found (no such step, rank or trace).",
    1, 1, "need exactly one input",
};

struct cp_cli {
    tt_cp_options o;
    const char **load;
    size_t nload;
    int instance_set;
};

/* a --data-load pattern that does not compile: a usage error */
static void check_regex(const struct cli_cmd *c, const char *arg)
{
    regex_t re;
    int err = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);
    if (err) {
        char msg[160];
        regerror(err, &re, msg, sizeof(msg));
        cli_usage_error(c, "bad --data-load pattern '%s': %s", arg, msg);
    }
    regfree(&re);
}

/* --instance K or A-B (0 <= A <= B) */
static void opt_instance(const struct cli_cmd *c, const char *arg, tt_cp_options *o)
{
    const char *dash = strchr(arg, '-');
    char a[32];
    int ok;
    if (!dash) {
        ok = parse_i64(arg, &o->instance_from) == 0;
        o->instance_to = o->instance_from;
    } else {
        ok = dash - arg > 0 && dash - arg < (long)sizeof(a);
        if (ok) {
            memcpy(a, arg, (size_t)(dash - arg));
            a[dash - arg] = '\0';
        }
        ok = ok && parse_i64(a, &o->instance_from) == 0 &&
             parse_i64(dash + 1, &o->instance_to) == 0;
    }
    if (!ok || o->instance_from < 0 || o->instance_from > o->instance_to)
        cli_usage_error(c, "bad --instance '%s' (want K or A-B, 0 <= A <= B)", arg);
}

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    struct cp_cli *x = ctx;
    tt_cp_options *o = &x->o;
    const char **more;
    switch (key) {
    case O_STEP:
        if (parse_i64(arg, &o->step) < 0 || o->step < 0)
            cli_usage_error(c, "bad step '%s' (want N >= 0)", arg);
        o->step_set = 1;
        break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    case O_RANK: o->rank = opt_rank(c, arg); break;
    case O_TIME:
    case O_NAME:
    case O_UNDER: opt_filter(c, key, O_TIME, O_NAME, O_UNDER, arg, &o->filter); break;
    case O_INSTANCE:
        opt_instance(c, arg, o);
        x->instance_set = 1;
        break;
    case O_OVERLAY: o->overlay = arg; break;
    case O_DATA_LOAD:
        if (!(more = realloc(x->load, (x->nload + 1) * sizeof(*more)))) {
            fputs("tracetool critical-path: out of memory\n", stderr);
            exit(EXIT_INTERNAL);
        }
        more[x->nload++] = arg;
        x->load = more;
        check_regex(c, arg);
        break;
    default: o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg); break;
    }
}

static int on_db(struct tt_db *db, void *o)
{
    return tt_critpath_db(db, o, stdout);
}

static int on_file(const char *path, void *o)
{
    return tt_critpath_file(path, o, stdout);
}

int cmd_critpath(int argc, char **argv)
{
    struct cp_cli x;
    int first, rc;
    memset(&x, 0, sizeof(x));
    x.o = (tt_cp_options)TT_CP_OPTIONS_INIT;
    if (!(first = cli_parse(&cmd, argc, argv, set, &x)))
        return 0;
    x.o.data_load = x.load;
    x.o.ndata_load = x.nload;
    if (x.instance_set && !x.o.filter.under)
        cli_usage_error(&cmd, "--instance needs --under OP");
    if (x.o.filter.under && x.o.step_set)
        cli_usage_error(&cmd, "--step and --under both choose the window (--under "
                              "'ProfilerStep#N' is --step N)");
    if (x.o.overlay)
        check_outputs_not_inputs(&cmd, x.o.overlay, (const char *const *)(argv + first), 1);
    rc = run_on_input(argv[first], on_db, on_file, &x.o);
    free(x.load);
    return rc;
}
