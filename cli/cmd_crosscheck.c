/*
 * cli/cmd_crosscheck.c - `tracetool crosscheck ET KINETO | DB`
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "opts.h"
#include "tracetool/crosscheck.h"

enum { O_FORMAT, O_KEY, O_LIMIT, O_STRICT, O_NOSTORE, O_TRACE, O_RANK };

static const struct cli_opt opts[] = {
    { "format", O_FORMAT, "table|csv|json|markdown", "output format (default table; text =\n"
      "table); csv: a row per ET", 0 },
    { "key", O_KEY, "auto|rf|external", "join key (default auto)", 0 },
    { "row-limit", O_LIMIT, "N", "offenders named per kind (default 5)", 0 },
    { "limit", O_LIMIT, "N", NULL, 0 }, /* before 0.2: --row-limit */
    { "strict", O_STRICT, NULL, "a pair is consistent only if PyTorch's rule holds", 0 },
    { "no-store", O_NOSTORE, NULL, "DB: report only, do not write table et_links", 0 },
    { "trace", O_TRACE, "ID", "only the pair with this ET or Kineto trace id", 0 },
    { "rank", O_RANK, "R", "only the pair(s) of this rank", 0 },
    { NULL, 0, NULL, NULL, 0 },
};

static const struct cli_cmd cmd = {
    "crosscheck", "ET KINETO | DB",
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
    "ids, a per-thread breakdown and the first offenders (docs/CROSSCHECK.md).",
    opts,
    "exit codes: 0 consistent; 1 differences found; 2 usage; 3 bad input;\n"
    "4 I/O or database error.",
    1, 2, "need ET and KINETO, or a database",
};

static void set(void *ctx, const struct cli_cmd *c, int key, const char *arg)
{
    tt_xc_options *o = ctx;
    switch (key) {
    case O_FORMAT:
        o->format = opt_format(c, cli_opt_of(c, O_FORMAT), arg);
        break;
    case O_KEY:
        if (!strcmp(arg, "auto")) o->key = TT_XC_KEY_AUTO;
        else if (!strcmp(arg, "rf") || !strcmp(arg, "rf_id")) o->key = TT_XC_KEY_RF;
        else if (!strcmp(arg, "external") || !strcmp(arg, "external_id"))
            o->key = TT_XC_KEY_EXTERNAL;
        else cli_usage_error(c, "unknown key '%s'", arg);
        break;
    case O_LIMIT:
        if (parse_i64(arg, &o->limit) < 0 || o->limit < 0)
            cli_usage_error(c, "bad limit '%s'", arg);
        break;
    case O_STRICT: o->strict = 1; break;
    case O_NOSTORE: o->store = 0; break;
    case O_TRACE: o->trace_id = opt_trace_id(c, arg); break;
    default: o->rank = opt_rank(c, arg); break;
    }
}

int cmd_crosscheck(int argc, char **argv)
{
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    tt_xc_summary sum;
    int rc, nin, first = cli_parse(&cmd, argc, argv, set, &o);
    if (!first)
        return 0;
    nin = argc - first;
    if ((rc = refuse_summaries((const char *const *)(argv + first), nin)))
        return rc;
    if (nin == 1 && strcmp(argv[first], "-") && tt_is_sqlite_file(argv[first])) {
        tt_db *db;
        if ((rc = tt_db_open(&db, argv[first], o.store ? 0 : TT_DB_READONLY)) < 0)
            return report_error(rc);
        rc = tt_crosscheck_db(db, &o, stdout, &sum);
        tt_db_free(db);
    } else {
        int i;
        for (i = first; i < argc; i++) {
            if (tt_is_sqlite_file(argv[i]))
                cli_usage_error(&cmd, "a database is checked on its own: "
                                "tracetool crosscheck DB");
        }
        rc = tt_crosscheck_files((const char *const *)(argv + first), (size_t)nin, &o, stdout,
                                 &sum);
    }
    if (rc < 0)
        return report_error(rc);
    return tt_xc_exit_code(&sum); /* EXIT_DIFFERENT or EXIT_OK */
}
