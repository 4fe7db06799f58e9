/*
 * tests/unit/test_call.c - tt_call (tracetool/call.h): results, refusals,
 * exit codes and calls from several threads at once.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared_data.h"
#include "tracetool/analyze.h"
#include "tracetool/call.h"
#include "tracetool/crosscheck.h"

#define TRACE "kineto/tb_plugin_2021-06/worker0.1623143089861.pt.trace.json.gz"

/* what averages' own functions print as JSON for the file */
static char *averages_direct(const char *path, size_t *len)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    o.format = TT_FORMAT_JSON;
    o.group_by_shape = 1;
    o.row_limit = 7;
    cr_assert_not_null(f);
    cr_assert_eq(tt_averages_compute_file(path, &o, &res), 0);
    cr_assert_eq(tt_averages_print(res, &o, f), 0);
    tt_avg_result_free(res);
    fclose(f);
    return buf;
}

Test(call, averages_equals_the_analysis)
{
    const char *path = shared_path(TRACE);
    const char *in[1] = { path };
    size_t n = 0, m = 0;
    char *out = NULL, *want = averages_direct(path, &m);
    int code = -1;
    cr_assert_eq(tt_call("averages", in, 1, "{\"group_by_shape\": true, \"row_limit\": 7,"
                         " \"top_level_only\": false}", &out, &n, &code), 0);
    cr_assert_eq(code, 0);
    cr_assert_eq(n, m);
    cr_assert_eq(memcmp(out, want, n), 0);
    cr_assert_eq(out[n], '\0');
    tt_call_free(out);
    free(want);
}

static void refused(const char *cmd, const char *opts, int want_code, const char *words)
{
    const char *in[1] = { shared_path(TRACE) };
    char *out = (char *)1;
    size_t n = 7;
    int code = -1;
    cr_assert_lt(tt_call(cmd, in, 1, opts, &out, &n, &code), 0, "%s %s", cmd, opts);
    cr_assert_null(out);
    cr_assert_eq(n, 0);
    cr_assert_eq(code, want_code, "%s %s: exit code %d", cmd, opts, code);
    cr_assert_not_null(strstr(tt_error_last()->message, words), "%s %s: '%s'", cmd, opts,
                       tt_error_last()->message);
}

Test(call, usage_errors_exit_2)
{
    refused("nosuch", NULL, 2, "unknown command 'nosuch'");
    refused("averages", "{\"nope\": 1}", 2, "unknown option 'nope'");
    refused("averages", "{\"format\": \"json\"}", 2, "always JSON");
    refused("averages", "{\"stacks\": \"x.txt\"}", 2, "writes a file");
    refused("breakdown", "{\"html\": \"x.html\"}", 2, "writes a file");
    refused("averages", "{\"row_limit\": \"x\"}", 2, "bad row limit 'x'");
    refused("averages", "{\"row_limit\": true}", 2, "wants a string or a number");
    refused("averages", "{\"top_level_only\": 3}", 2, "is a flag");
    refused("averages", "[1]", 2, "not a JSON object");
    refused("averages", "{\"a\": 1", 2, "not valid JSON");
    refused("kernels", "{\"by\": \"bogus\"}", 2, "unknown grouping 'bogus'");
    refused("kernels", "{\"sequences\": 2, \"by\": \"name\"}", 2, "does not go with --by");
}

Test(call, missing_file_and_bad_input)
{
    const char *in[1] = { "/nonexistent/trace.json" };
    char *out = NULL;
    size_t n;
    int code = -1;
    cr_assert_lt(tt_call("averages", in, 1, NULL, &out, &n, &code), 0);
    cr_assert_eq(code, 4);
    in[0] = "-";
    cr_assert_lt(tt_call("kernels", in, 1, "{}", &out, &n, &code), 0);
    cr_assert_eq(code, 2);
    cr_assert_lt(tt_call("kernels", in, 0, "{}", &out, &n, &code), 0);
    cr_assert_eq(code, 2);
}

Test(call, exit_code_tables)
{
    tt_xc_summary s;
    memset(&s, 0, sizeof(s));
    cr_assert_eq(tt_exit_code(0), 0);
    cr_assert_eq(tt_exit_code(TT_EINVALID), 3);
    cr_assert_eq(tt_exit_code(TT_ETRUNCATED), 3);
    cr_assert_eq(tt_exit_code(TT_EIO), 4);
    cr_assert_eq(tt_exit_code(TT_EEXISTS), 5);
    cr_assert_eq(tt_exit_code(TT_ERROR), 70);
    cr_assert_eq(tt_xc_exit_code(&s), 1); /* nothing paired */
    s.pairs = s.consistent = 2;
    cr_assert_eq(tt_xc_exit_code(&s), 0);
    s.unpaired_et = 1;
    cr_assert_eq(tt_xc_exit_code(&s), 1);
}

struct job {
    const char *path, *cmd, *opts;
    char *out;
    size_t len;
    int rc, code;
};

static void *run_job(void *p)
{
    struct job *j = p;
    j->rc = tt_call(j->cmd, &j->path, 1, j->opts, &j->out, &j->len, &j->code);
    return NULL;
}

/* calls from several threads at once give what one call gives */
Test(call, threads)
{
    static const char *const cmds[][2] = {
        { "averages", "{\"sort_by\": \"cpu_time_total\"}" }, { "kernels", "{\"by\": \"stream\"}" },
        { "memtimeline", NULL }, { "queue", NULL },
    };
    struct job one[4], many[8];
    pthread_t th[8];
    int i;
    for (i = 0; i < 4; i++) {
        one[i] = (struct job){ shared_path(TRACE), cmds[i][0], cmds[i][1], NULL, 0, 0, 0 };
        run_job(&one[i]);
        cr_assert_eq(one[i].rc, 0, "%s: %s", one[i].cmd, tt_error_last()->message);
    }
    for (i = 0; i < 8; i++) {
        many[i] = one[i % 4];
        many[i].out = NULL;
        cr_assert_eq(pthread_create(&th[i], NULL, run_job, &many[i]), 0);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(many[i].rc, 0, "%s", many[i].cmd);
        cr_assert_eq(many[i].len, one[i % 4].len, "%s", many[i].cmd);
        cr_assert_eq(memcmp(many[i].out, one[i % 4].out, many[i].len), 0, "%s", many[i].cmd);
        tt_call_free(many[i].out);
    }
    for (i = 0; i < 4; i++)
        tt_call_free(one[i].out);
}
