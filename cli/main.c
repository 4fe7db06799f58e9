/*
 * cli/main.c - the tracetool command: dispatch to cmd_<name>().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/common.h"

struct tt_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static int cmd_version(int argc, char **argv);

static const struct tt_cmd cmds[] = {
    { "ingest", cmd_ingest, "read traces / execution traces into a SQLite database" },
    { "info", cmd_info, "summarise a trace file or an ingested database" },
    { "averages", cmd_averages, "torch's key_averages() table from a trace file or database" },
    { "kernels", cmd_kernels, "GPU kernel and memcpy/memset summary (Nsight-style)" },
    { "breakdown", cmd_breakdown, "GPU time per rank: busy, compute, communication, idle; launch delays" },
    { "queue", cmd_queue, "launch queue length per GPU stream over time (HTA's queue length)" },
    { "bandwidth", cmd_bandwidth, "memory bandwidth of the copies in flight per kind (HTA's)" },
    { "memtimeline", cmd_memtimeline, "memory timeline to .json/.json.gz/.raw.json.gz/.png/.html" },
    { "crosscheck", cmd_crosscheck, "check an Execution Trace against its Kineto trace (stores et_links)" },
    { "collectives", cmd_collectives, "NCCL/RCCL collectives: sizes, bandwidths, the straggler rank" },
    { "diff", cmd_diff, "compare two runs step by step: the CI gate for regressions" },
    { "critical-path", cmd_critpath, "the critical path of a rank's step and what bounds it (HTA)" },
    { "export", cmd_export, "one Chrome/Perfetto trace of ranks and steps, from a database or traces" },
    { "record", cmd_record, "run a program with GPU/CPU capture injected; write its trace" },
    { "summarize", cmd_summarize, "a per-rank summary file that info, averages, kernels, breakdown read" },
    { "merge", cmd_merge, "merge summaries exactly (the union of their traces)" },
    { "version", cmd_version, "print tracetool's version" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static int cmd_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fputs("tracetool version: takes no arguments (see 'tracetool --help')\n", stderr);
        return EXIT_USAGE;
    }
    printf("tracetool %s\n", TT_VERSION);
    return 0;
}

/* The library's log messages (tt_set_log) that the environment asks for, to
 * stderr: TT_TIMING (phase times), TT_DEBUG_AVG (which way averages read a
 * file), TT_DEBUG_MEMTL (where memtimeline's events came from), TT_DEBUG_DIFF
 * (which way diff read each trace file), TT_DEBUG_BD (which way breakdown read
 * each trace file), TT_DEBUG_XC (which way crosscheck read each file),
 * TT_DEBUG_KERNELS (which way kernels read each file); set to anything, even
 * empty. */
struct log_topics {
    int timing, avg, memtl, diff, bd, exp, xc, kern;
};

static void log_to_stderr(void *ctx, int level, const char *topic, const char *msg)
{
    const struct log_topics *t = ctx;
    (void)level;
    if ((t->timing && !strcmp(topic, "timing")) || (t->avg && !strcmp(topic, "averages")) ||
        (t->memtl && !strcmp(topic, "memtimeline")) || (t->diff && !strcmp(topic, "diff")) ||
        (t->bd && !strcmp(topic, "breakdown")) || (t->exp && !strcmp(topic, "export")) ||
        (t->xc && !strcmp(topic, "crosscheck")) || (t->kern && !strcmp(topic, "kernels")))
        fprintf(stderr, "%s\n", msg);
}

static void log_from_env(void)
{
    static struct log_topics t;
    t.timing = getenv("TT_TIMING") != NULL;
    t.avg = getenv("TT_DEBUG_AVG") != NULL;
    t.memtl = getenv("TT_DEBUG_MEMTL") != NULL;
    t.diff = getenv("TT_DEBUG_DIFF") != NULL;
    t.bd = getenv("TT_DEBUG_BD") != NULL;
    t.exp = getenv("TT_DEBUG_EXPORT") != NULL; /* which way export read each file */
    t.xc = getenv("TT_DEBUG_XC") != NULL;
    t.kern = getenv("TT_DEBUG_KERNELS") != NULL;
    if (t.avg || t.memtl || t.diff || t.bd || t.exp || t.xc || t.kern)
        tt_set_log(log_to_stderr, &t, TT_LOG_DEBUG);
    else if (t.timing)
        tt_set_log(log_to_stderr, &t, TT_LOG_INFO);
}

/* "'x' is not a tracetool command", with the nearest command; exit 2 */
static int unknown_command(const char *word)
{
    const char *names[NCMDS + 1], *hit;
    size_t i;
    for (i = 0; i < NCMDS; i++)
        names[i] = cmds[i].name;
    names[NCMDS] = "help";
    hit = cli_suggest(word, names, NCMDS + 1);
    if (hit)
        fprintf(stderr, "tracetool: '%s' is not a tracetool command; did you mean '%s'?"
                        " (see 'tracetool --help')\n", word, hit);
    else
        fprintf(stderr, "tracetool: '%s' is not a tracetool command (see 'tracetool --help')\n",
                word);
    return EXIT_USAGE;
}

static void usage(FILE *out)
{
    size_t i;
    fputs("usage: tracetool <command> [options] [args]\n\ncommands:\n", out);
    for (i = 0; i < NCMDS; i++)
        fprintf(out, "  %-13s %s\n", cmds[i].name, cmds[i].help);
    fputs("\n'tracetool <command> --help' describes a command.\n"
          "exit codes: 0 ok, 1 differences found, 2 usage, 3 bad input,\n"
          "            4 I/O or database error, 5 already ingested,\n"
          "            6 not comparable (diff)\n",
          out);
}

int main(int argc, char **argv)
{
    size_t i;
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc > 2 && strcmp(argv[1], "help") == 0) {
            for (i = 0; i < NCMDS; i++) {
                if (!strcmp(argv[2], cmds[i].name)) {
                    char *sub[] = { argv[2], (char *)"--help", NULL };
                    return cmds[i].fn(2, sub);
                }
            }
            return unknown_command(argv[2]);
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tracetool %s\n", TT_VERSION);
        return 0;
    }
    /* Ctrl-C, a kill or a hang-up while an output is written: its
     * temporary file goes (a signal ignored at start, nohup, stays so) */
    tt_remove_partial_outputs_on_signals();
    log_from_env();
    /* ingest shows its own, per file and phase; record runs a program */
    if (strcmp(argv[1], "ingest") && strcmp(argv[1], "record"))
        progress_install();
    for (i = 0; i < NCMDS; i++) {
        if (!strcmp(argv[1], cmds[i].name)) {
            cli_command = cmds[i].name;
            return finish_stdout(cmds[i].fn(argc - 1, argv + 1));
        }
    }
    if (argv[1][0] == '-') {
        fprintf(stderr, "tracetool: unknown option '%s' (see 'tracetool --help')\n", argv[1]);
        return EXIT_USAGE;
    }
    return unknown_command(argv[1]);
}
