/*
 * tests/unit/test_breakdown_summary.c - breakdown's section of a summary
 * (analyze/breakdown/breakdown_summary.c): each trace of param/dlrm_8rank
 * written on its own (from its file and from a database holding it), the
 * sections put in a summary in memory, and `breakdown` of that summary
 * printed (JSON and table, --by rank / step / stream) byte for byte as
 * `breakdown` of the database of the eight traces prints it; the options a
 * summary cannot answer refused.
 */
#include "common/compat.h"
#include "formats/sumfile.h"
#include "common/buf.h"
#include "tracetool/breakdown.h"
#include "tracetool/store.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(breakdown_summary, .timeout = 120);

#define DLRM TT_SHARED "/testdata/param/dlrm_8rank/kineto"

static tt_db *db;
static char dbpath[64];
static tt_dir_walk walk;

static void setup(void)
{
    int fd;
    size_t k;
    if (access(DLRM, R_OK) != 0)
        cr_skip_test("%s not present", DLRM);
    snprintf(dbpath, sizeof(dbpath), "/tmp/tt_bdsum_XXXXXX");
    cr_assert((fd = mkstemp(dbpath)) >= 0);
    close(fd);
    unlink(dbpath);
    cr_assert_eq(tt_db_open(&db, dbpath, TT_DB_CREATE), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_walk_traces(DLRM, &walk), 0);
    cr_assert_eq(walk.nfiles, 8);
    for (k = 0; k < walk.nfiles; k++) /* trace ids 1..8 in the walk's order */
        cr_assert_eq(tt_ingest_file(db, walk.files[k], NULL, NULL), 0, "%s: %s", walk.files[k],
                     tt_error_last()->message);
}

static void teardown(void)
{
    tt_db_free(db);
    db = NULL;
    tt_dir_walk_free(&walk);
    if (dbpath[0])
        unlink(dbpath);
    dbpath[0] = '\0';
}

/* the section of trace k (0-based): from its file, or (from_db) from the
 * database's trace k + 1 */
static char *section(size_t k, int from_db)
{
    struct tt__sum_src src = { from_db ? db : NULL, from_db ? (int64_t)k + 1 : 0,
                               walk.files[k] };
    tt_buf b;
    tt_jw w;
    char *s;
    tt_buf_init(&b);
    tt_jw_init(&w, &b, TT_JW_COMPACT);
    cr_assert_eq(tt__bd_sum_write(&src, &w), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_jw_finish(&w), 0);
    cr_assert_not_null(s = strndup(b.buf, b.len));
    tt_buf_release(&b);
    return s;
}

/* the rank of trace k as the database has it */
static int64_t rank_of(size_t k)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result res;
    int64_t rank;
    o.trace_id = (int64_t)k + 1;
    cr_assert_eq(tt_breakdown_db_result(db, &o, &res), 0, "%s", tt_error_last()->message);
    cr_assert_gt(res.nranks, 0);
    rank = res.ranks[0].rank;
    tt_bd_result_free(&res);
    return rank;
}

/* a summary of the eight traces, their array in reverse order (the result
 * goes by ids and ranks, not by the order held) */
static void make_summary(struct tt_summary *s, int from_db)
{
    size_t k, n = walk.nfiles;
    s->path = "mem.summary";
    s->n = n;
    cr_assert_not_null(s->traces = calloc(n, sizeof(*s->traces)));
    for (k = 0; k < n; k++) {
        struct tt__sum_trace *t = &s->traces[n - 1 - k];
        t->id = (int64_t)k + 1;
        t->path = walk.files[k];
        t->rank = rank_of(k);
        t->have_rank = t->rank >= 0;
        t->sec[TT__SEC_BREAKDOWN] = section(k, from_db);
        t->seclen[TT__SEC_BREAKDOWN] = strlen(t->sec[TT__SEC_BREAKDOWN]);
    }
}

static void free_summary(struct tt_summary *s)
{
    size_t k;
    for (k = 0; k < s->n; k++)
        free(s->traces[k].sec[TT__SEC_BREAKDOWN]);
    free(s->traces);
}

/* what breakdown prints of a result */
static char *printed(const tt_bd_result *res, const tt_bd_options *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    cr_assert_eq(tt_breakdown_print(res, o, f), 0);
    fclose(f);
    return text;
}

static void same_output(struct tt_summary *s, int by, tt_output_format fmt)
{
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result a, b;
    char *ta, *tb;
    o.by = by;
    o.format = fmt;
    cr_assert_eq(tt_breakdown_db_result(db, &o, &a), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_breakdown_summary_result(s, &o, &b), 0, "%s", tt_error_last()->message);
    cr_expect_eq(a.nranks, 8);
    cr_expect_gt(a.nfamilies, 0);
    cr_expect_gt(a.nlaunches, 0);
    cr_expect_gt(a.nworst, 0);
    ta = printed(&a, &o);
    tb = printed(&b, &o);
    cr_expect_str_eq(tb, ta, "--by %d, format %d differs", by, (int)fmt);
    free(ta);
    free(tb);
    tt_bd_result_free(&a);
    tt_bd_result_free(&b);
}

Test(breakdown_summary, dlrm_from_files_equals_database, .init = setup, .fini = teardown)
{
    struct tt_summary s;
    int by;
    make_summary(&s, 0);
    for (by = TT_BD_BY_RANK; by <= TT_BD_BY_STREAM; by++) {
        same_output(&s, by, TT_FORMAT_JSON);
        same_output(&s, by, TT_FORMAT_TABLE);
    }
    free_summary(&s);
}

/* a stored trace writes the section its file writes */
Test(breakdown_summary, section_from_database_equals_from_file, .init = setup, .fini = teardown)
{
    size_t k;
    for (k = 0; k < walk.nfiles; k += 3) {
        char *a = section(k, 0), *b = section(k, 1);
        cr_expect_str_eq(b, a, "trace %zu", k + 1);
        free(a);
        free(b);
    }
}

/* --trace and --rank pick from the summary as from the database */
Test(breakdown_summary, selection, .init = setup, .fini = teardown)
{
    struct tt_summary s;
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result a, b;
    char *ta, *tb;
    make_summary(&s, 1);
    o.format = TT_FORMAT_JSON;
    o.rank = 3;
    cr_assert_eq(tt_breakdown_db_result(db, &o, &a), 0);
    cr_assert_eq(tt_breakdown_summary_result(&s, &o, &b), 0, "%s", tt_error_last()->message);
    cr_expect_eq(b.nranks, 1);
    ta = printed(&a, &o);
    tb = printed(&b, &o);
    cr_expect_str_eq(tb, ta);
    free(ta);
    free(tb);
    tt_bd_result_free(&a);
    tt_bd_result_free(&b);
    o.rank = 99;
    cr_expect_eq(tt_breakdown_summary_result(&s, &o, &b), TT_ENOTFOUND);
    free_summary(&s);
}

/* what needs the traces is refused, naming the option */
Test(breakdown_summary, refusals, .init = setup, .fini = teardown)
{
    struct tt_summary s;
    tt_bd_result res;
    const char *pat[] = { "Gemm" };
    int k;
    make_summary(&s, 0);
    for (k = 0; k < 5; k++) {
        tt_bd_options o = TT_BD_OPTIONS_INIT;
        const char *word[] = { "--steps", "--comm-pattern", "--kernel-wait", "--by annotation",
                               "--name" };
        switch (k) {
        case 0: o.steps_set = 1, o.step_from = 1, o.step_to = 2; break;
        case 1: o.comm_patterns = pat, o.ncomm_patterns = 1; break;
        case 2: o.kernel_wait_ns = 1000; break;
        case 3: o.by = TT_BD_BY_ANNOTATION; break;
        default: o.filter.name = "Gemm"; break;
        }
        cr_expect_eq(tt_breakdown_summary_result(&s, &o, &res), TT_EUNSUPPORTED, "case %d", k);
        cr_expect(strstr(tt_error_last()->message, word[k]) != NULL, "case %d: %s", k,
                  tt_error_last()->message);
        cr_expect_eq(res.nranks, 0);
    }
    free_summary(&s);
}

/* a damaged section: an error naming the summary, nothing returned */
Test(breakdown_summary, damaged_section, .init = setup, .fini = teardown)
{
    struct tt_summary s;
    tt_bd_options o = TT_BD_OPTIONS_INIT;
    tt_bd_result res;
    char *sec;
    make_summary(&s, 0);
    sec = s.traces[2].sec[TT__SEC_BREAKDOWN];
    cr_assert_not_null(strstr(sec, "\"hist\":["));
    memcpy(strstr(sec, "\"hist\":[") + 8, "\"x", 2);
    cr_expect_eq(tt_breakdown_summary_result(&s, &o, &res), TT_EINVALID);
    cr_expect_str_eq(tt_error_last()->source, "mem.summary");
    cr_expect_eq(res.nranks, 0);
    free(s.traces[2].sec[TT__SEC_BREAKDOWN]);
    s.traces[2].sec[TT__SEC_BREAKDOWN] = NULL;
    cr_expect_lt(tt_breakdown_summary_result(&s, &o, &res), 0);
    free_summary(&s);
}
