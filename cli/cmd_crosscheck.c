/*
 * cli/cmd_crosscheck.c - `tracetool crosscheck ET KINETO | DB`
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "tracetool/crosscheck.h"

static const char usage_line[] =
    "tracetool crosscheck [--format text|json] [--key auto|rf|external] [--limit N]"
    " [--strict] [--no-store] [--trace ID] [--rank R] ET KINETO | DB";

static const char help_text[] =
    "usage: tracetool crosscheck [options] ET KINETO\n"
    "       tracetool crosscheck [options] DB\n"
    "\n"
    "Check that a PyTorch Execution Trace (ET) and the Kineto trace taken beside it\n"
    "agree: every ET op node must have a Kineto cpu_op/user_annotation event with\n"
    "the same id and the same name. ET and KINETO are files or directories (one\n"
    "trace per rank); ETs are paired with the Kineto trace of the same pid, else of\n"
    "the same rank. DB is a database made by 'tracetool ingest': every ET in it is\n"
    "checked, and the matched pairs are stored in table et_links.\n"
    "\n"
    "PyTorch's own rule is reported first (sorted ET rf_id == sorted Kineto\n"
    "\"Record function id\"). The join key is \"Record function id\" when the Kineto\n"
    "trace has one; else \"External id\", at a constant offset from rf_id or, for\n"
    "PyTorch 2.0/2.1 traces whose External ids are per-thread counters, in\n"
    "per-thread order, with the ET as a window of a longer Kineto trace if need be.\n"
    "The report gives matched, ET-only, Kineto-only, names that differ, duplicate\n"
    "ids, a per-thread breakdown and the first offenders (docs/CROSSCHECK.md).\n"
    "\n"
    "options:\n"
    "  --format text|json        output format (default text)\n"
    "  --key auto|rf|external    join key (default auto)\n"
    "  --limit N                 offenders named per kind (default 5)\n"
    "  --strict                  a pair is consistent only if PyTorch's rule holds\n"
    "  --no-store                DB: report only, do not write table et_links\n"
    "  --trace ID                only the pair with this ET or Kineto trace id\n"
    "  --rank R                  only the pair(s) of this rank\n"
    "  -h, --help                this text\n"
    "\n"
    "exit codes: 0 consistent; 1 differences found; 2 usage; 3 bad input;\n"
    "4 I/O or database error.\n";

int cmd_crosscheck(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "key", required_argument, NULL, 'k' },
        { "limit", required_argument, NULL, 'l' },
        { "strict", no_argument, NULL, 's' },
        { "no-store", no_argument, NULL, 'n' },
        { "trace", required_argument, NULL, 't' },
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    tt_xc_summary sum;
    int opt, rc, nin;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            if (!strcmp(optarg, "text")) o.format = TT_XC_TEXT;
            else if (!strcmp(optarg, "json")) o.format = TT_XC_JSON;
            else die_usage("crosscheck", usage_line, "unknown format '%s'", optarg);
            break;
        case 'k':
            if (!strcmp(optarg, "auto")) o.key = TT_XC_KEY_AUTO;
            else if (!strcmp(optarg, "rf") || !strcmp(optarg, "rf_id")) o.key = TT_XC_KEY_RF;
            else if (!strcmp(optarg, "external") || !strcmp(optarg, "external_id"))
                o.key = TT_XC_KEY_EXTERNAL;
            else die_usage("crosscheck", usage_line, "unknown key '%s'", optarg);
            break;
        case 'l':
            if (parse_i64(optarg, &o.limit) < 0 || o.limit < 0)
                die_usage("crosscheck", usage_line, "bad limit '%s'", optarg);
            break;
        case 's':
            o.strict = 1;
            break;
        case 'n':
            o.store = 0;
            break;
        case 't': o.trace_id = opt_trace_id("crosscheck", usage_line, optarg); break;
        case 'r': o.rank = opt_rank("crosscheck", usage_line, optarg); break;
        case 'h':
            fputs(help_text, stdout);
            return 0;
        default:
            die_usage("crosscheck", usage_line, "unknown or incomplete option '%s'",
                      argv[optind - 1]);
        }
    }
    nin = argc - optind;
    if (nin < 1)
        die_usage("crosscheck", usage_line, "need ET and KINETO, or a database");
    if (nin == 1 && strcmp(argv[optind], "-") && tt_is_sqlite_file(argv[optind])) {
        tt_db *db;
        if ((rc = tt_db_open(&db, argv[optind], o.store ? 0 : TT_DB_READONLY)) < 0)
            return report_error(rc);
        rc = tt_crosscheck_db(db, &o, stdout, &sum);
        tt_db_free(db);
    } else {
        int i;
        if (nin > 2)
            die_usage("crosscheck", usage_line, "need ET and KINETO (files or directories)");
        for (i = optind; i < argc; i++) {
            if (tt_is_sqlite_file(argv[i]))
                die_usage("crosscheck", usage_line, "a database is checked on its own: "
                          "tracetool crosscheck DB");
        }
        rc = tt_crosscheck_files((const char *const *)(argv + optind), (size_t)nin, &o, stdout,
                                 &sum);
    }
    if (rc < 0)
        return report_error(rc);
    return sum.inconsistent || sum.unpaired_et || !sum.pairs ? EXIT_DIFFERENT : EXIT_OK;
}
