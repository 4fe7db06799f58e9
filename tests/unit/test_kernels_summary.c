/*
 * tests/unit/test_kernels_summary.c - the "kernels" section of a summary
 * (analyze/kernels/kernels_summary.c): written for each trace of a database
 * (tt__kern_sum_write), wrapped in a summary by hand and read back
 * (tt_kernels_summary_result), every number of every summary equals what
 * the database path gives (tt_kernels_db_result) for every grouping, --only
 * and row limit a summary answers; the options it cannot answer are
 * refused; a damaged section is an error naming the file and an offset.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "tracetool/analyze.h"
#include "tracetool/summary.h"
#include "analyze/kernels/kernels_state.h"
#include "formats/sumfile.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared_data.h"

TestSuite(kernels_summary, .timeout = 300);

/* real traces with kernels, memcpys and memsets (SOURCES.md) */
static const char *const traces[] = {
    "param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json.gz",
    "param/dlrm_8rank/kineto/worker3_step_12.1694128201557.pt.trace.json.gz",
    "hta/trace_compare/base/base.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
};
#define NTRACES (sizeof(traces) / sizeof(traces[0]))

struct fixture {
    char dbp[256];
    tt_db *db;
    struct tt_summary s;
};

/* the traces ingested into a database, and a summary of them made by hand
 * from each trace's kernels section (ids and ranks as stored) */
static void setup_from(struct fixture *f, int from_files)
{
    char path[1024];
    tt__db_trace *tr = NULL;
    size_t ntr = 0, i;
    memset(f, 0, sizeof(*f));
    snprintf(f->dbp, sizeof(f->dbp), "/tmp/tt_ksum_%d.db", (int)getpid());
    unlink(f->dbp);
    cr_assert_eq(tt_db_open(&f->db, f->dbp, TT_DB_CREATE), 0);
    for (i = 0; i < NTRACES; i++) {
        snprintf(path, sizeof(path), "%s/testdata/%s", TT_SHARED, traces[i]);
        if (access(path, R_OK) != 0)
            cr_skip_test("shared test data missing: %s", path);
        cr_assert_eq(tt_ingest_file(f->db, path, NULL, NULL), 0, "%s",
                     tt_error_last()->message);
    }
    cr_assert_eq(tt__db_traces(f->db, &tr, &ntr), 0);
    cr_assert_eq(ntr, NTRACES);
    f->s.path = strdup("hand-made.summary.json");
    f->s.n = ntr;
    f->s.traces = calloc(ntr, sizeof(*f->s.traces));
    for (i = 0; i < ntr; i++) {
        struct tt__sum_trace *t = &f->s.traces[i];
        struct tt__sum_src src = { from_files ? NULL : f->db, tr[i].id, tr[i].path };
        tt_buf b = TT_BUF_INIT;
        tt_jw w;
        tt_jw_init(&w, &b, 0);
        cr_assert_eq(tt__kern_sum_write(&src, &w), 0, "%s", tt_error_last()->message);
        cr_assert_eq(tt_jw_finish(&w), 0);
        t->id = tr[i].id;
        t->path = strdup(tr[i].path);
        t->have_rank = tr[i].have_rank;
        t->rank = tr[i].rank;
        t->sec[TT__SEC_KERNELS] = b.buf; /* taken over */
        t->seclen[TT__SEC_KERNELS] = b.len;
        t->secoff[TT__SEC_KERNELS] = 100 * (int64_t)i;
    }
    tt__db_traces_free(tr, ntr);
}

static void setup(struct fixture *f)
{
    setup_from(f, 0);
}

static void teardown(struct fixture *f)
{
    size_t i;
    for (i = 0; i < f->s.n; i++) {
        free(f->s.traces[i].path);
        free(f->s.traces[i].sec[TT__SEC_KERNELS]);
    }
    free(f->s.traces);
    free(f->s.path);
    tt_db_free(f->db);
    unlink(f->dbp);
}

/* doubles equal to the bit (NaN equal to NaN) */
static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof(a));
}

static void same_row(const tt_kern_row *x, const tt_kern_row *y, const char *what)
{
    cr_assert_str_eq(x->name, y->name, "%s", what);
    cr_assert(x->instances == y->instances && x->total_ns == y->total_ns &&
                  x->min_ns == y->min_ns && x->max_ns == y->max_ns && x->bytes == y->bytes,
              "%s: %s: counts", what, x->name);
    cr_assert(same(x->avg_ns, y->avg_ns) && same(x->med_ns, y->med_ns) &&
                  same(x->stddev_ns, y->stddev_ns) && same(x->time_pct, y->time_pct) &&
                  same(x->gb_per_s, y->gb_per_s),
              "%s: %s: avg %.17g/%.17g med %.17g/%.17g sd %.17g/%.17g", what, x->name,
              x->avg_ns, y->avg_ns, x->med_ns, y->med_ns, x->stddev_ns, y->stddev_ns);
    cr_assert(x->min_bytes == y->min_bytes && x->max_bytes == y->max_bytes &&
                  same(x->avg_bytes, y->avg_bytes) && same(x->med_bytes, y->med_bytes) &&
                  same(x->stddev_bytes, y->stddev_bytes),
              "%s: %s: sizes", what, x->name);
    cr_assert(x->launches == y->launches && x->delay_min_ns == y->delay_min_ns &&
                  x->delay_max_ns == y->delay_max_ns && same(x->delay_avg_ns, y->delay_avg_ns),
              "%s: %s: launch delays", what, x->name);
}

static void same_result(const tt_kern_result *a, const tt_kern_result *b, const char *what)
{
    size_t i, k;
    cr_assert_eq(a->nsummaries, b->nsummaries, "%s: summaries", what);
    for (i = 0; i < a->nsummaries; i++) {
        const tt_kern_summary *x = &a->summaries[i], *y = &b->summaries[i];
        cr_assert(x->trace_id == y->trace_id && x->memory == y->memory && x->by == y->by,
                  "%s: summary %zu", what, i);
        cr_assert_str_eq(x->path, y->path, "%s", what);
        cr_assert(x->total_ns == y->total_ns && x->total_bytes == y->total_bytes &&
                      x->ngroups == y->ngroups && x->nrows == y->nrows,
                  "%s: summary %zu totals", what, i);
        for (k = 0; k < x->nrows; k++)
            same_row(&x->rows[k], &y->rows[k], what);
    }
}

static void every_grouping(int from_files)
{
    static const int bys[] = { TT_KERN_BY_NAME, TT_KERN_BY_LAUNCH, TT_KERN_BY_STREAM,
                               TT_KERN_BY_OP, TT_KERN_BY_RUNTIME, TT_KERN_BY_MEMSIZE };
    static const int whats[] = { TT_KERN_BOTH, TT_KERN_KERNELS, TT_KERN_MEMORY };
    static const int64_t limits[] = { -1, 2 };
    struct fixture f;
    size_t b, w, l, rows = 0;
    setup_from(&f, from_files);
    for (b = 0; b < 6; b++)
        for (w = 0; w < 3; w++)
            for (l = 0; l < 2; l++) {
                tt_kern_options o = TT_KERN_OPTIONS_INIT;
                tt_kern_result db, sum;
                char what[96];
                size_t i;
                if ((bys[b] == TT_KERN_BY_RUNTIME && whats[w] != TT_KERN_BOTH) ||
                    (bys[b] == TT_KERN_BY_MEMSIZE && whats[w] == TT_KERN_KERNELS))
                    continue; /* the CLI refuses these */
                o.by = bys[b];
                o.what = whats[w];
                o.row_limit = limits[l];
                snprintf(what, sizeof(what), "by %d what %d limit %d", bys[b], whats[w],
                         (int)limits[l]);
                cr_assert_eq(tt_kernels_db_result(f.db, &o, &db), 0, "%s: %s", what,
                             tt_error_last()->message);
                cr_assert_eq(tt_kernels_summary_result(&f.s, &o, &sum), 0, "%s: %s", what,
                             tt_error_last()->message);
                same_result(&sum, &db, what);
                for (i = 0; i < db.nsummaries; i++)
                    rows += db.summaries[i].nrows;
                tt_kern_result_free(&db);
                tt_kern_result_free(&sum);
            }
    cr_assert_gt(rows, 100, "the comparison is not vacuous (%zu rows)", rows);
    teardown(&f);
}

/* sections written from the stored traces */
Test(kernels_summary, every_grouping_equals_the_database)
{
    every_grouping(0);
}

/* sections written from the trace files, read on their own (no database) */
Test(kernels_summary, sections_from_the_files_equal_the_database)
{
    every_grouping(1);
}

Test(kernels_summary, trace_and_rank_select_as_in_the_database)
{
    struct fixture f;
    int64_t id;
    setup(&f);
    for (id = 1; id <= (int64_t)NTRACES; id++) {
        tt_kern_options o = TT_KERN_OPTIONS_INIT;
        tt_kern_result db, sum;
        o.trace_id = id;
        cr_assert_eq(tt_kernels_db_result(f.db, &o, &db), 0);
        cr_assert_eq(tt_kernels_summary_result(&f.s, &o, &sum), 0);
        same_result(&sum, &db, "--trace");
        tt_kern_result_free(&db);
        tt_kern_result_free(&sum);
    }
    {
        tt_kern_options o = TT_KERN_OPTIONS_INIT;
        tt_kern_result db, sum;
        o.rank = 3;
        cr_assert_eq(tt_kernels_db_result(f.db, &o, &db), 0);
        cr_assert_eq(tt_kernels_summary_result(&f.s, &o, &sum), 0);
        same_result(&sum, &db, "--rank 3");
        cr_assert_eq(sum.nsummaries, 2);
        tt_kern_result_free(&db);
        tt_kern_result_free(&sum);
        o.rank = 999;
        cr_assert_eq(tt_kernels_summary_result(&f.s, &o, &sum), TT_ENOTFOUND);
        cr_assert(strstr(tt_error_last()->message, "--trace/--rank"), "%s",
                  tt_error_last()->message);
    }
    teardown(&f);
}

Test(kernels_summary, what_a_summary_cannot_answer_is_refused)
{
    struct fixture f;
    static const char *const names[] = { "--by activity", "--sequences", "--steps",
                                         "--time-range", "--name", "--under" };
    int i;
    setup(&f);
    for (i = 0; i < 6; i++) {
        tt_kern_options o = TT_KERN_OPTIONS_INIT;
        tt_kern_result sum;
        switch (i) {
        case 0: o.by = TT_KERN_BY_ACTIVITY; break;
        case 1: o.by = TT_KERN_BY_SEQUENCE, o.seq_len = 2; break;
        case 2: o.steps_set = 1, o.step_from = o.step_to = 1; break;
        case 3: o.filter.from_ns = 0; break;
        case 4: o.filter.name = "gemm"; break;
        default: o.filter.under = "aten::mm"; break;
        }
        cr_assert_eq(tt_kernels_summary_result(&f.s, &o, &sum), TT_EUNSUPPORTED, "%s",
                     names[i]);
        cr_assert(strstr(tt_error_last()->message, names[i]) &&
                      !strcmp(tt_error_last()->source, "hand-made.summary.json"),
                  "%s: %s", names[i], tt_error_last()->message);
        cr_assert_eq(sum.nsummaries, 0);
    }
    teardown(&f);
}

/* one hand-made section read back, or its error */
static int read_section(const char *text, tt_kern_options *o, tt_kern_result *res)
{
    struct tt__sum_trace t;
    struct tt_summary s;
    memset(&t, 0, sizeof(t));
    t.id = 1;
    t.path = (char *)"t.json";
    t.sec[TT__SEC_KERNELS] = (char *)text;
    t.seclen[TT__SEC_KERNELS] = strlen(text);
    t.secoff[TT__SEC_KERNELS] = 1000;
    s.path = (char *)"x.summary.json";
    s.traces = &t;
    s.n = 1;
    return tt_kernels_summary_result(&s, o, res);
}

#define EMPTY_REST "\"launch\":[],\"stream\":[],\"op\":[],\"runtime\":[],\"memsize\":[]"

Test(kernels_summary, hand_made_section)
{
    /* durations 1, 3, 3, 9 (given out of order): median 3, mean 4, sample
     * sd sqrt((9 + 1 + 1 + 25) / 3) = sqrt(12) */
    const char *ok = "{\"name\":[{\"name\":\"k\",\"count\":4,\"total\":16,\"min\":1,\"max\":9,"
                     "\"values\":[9,1,1,1,3,2]}],\"memory\":[]," EMPTY_REST "}";
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    cr_assert_eq(read_section(ok, &o, &r), 0, "%s", tt_error_last()->message);
    cr_assert_eq(r.nsummaries, 2);
    cr_assert_eq(r.summaries[0].nrows, 1);
    cr_assert_eq(r.summaries[0].rows[0].med_ns, 3.0);
    cr_assert_eq(r.summaries[0].rows[0].avg_ns, 4.0);
    cr_assert_float_eq(r.summaries[0].rows[0].stddev_ns, sqrt(12.0), 1e-12);
    cr_assert_eq(r.summaries[0].rows[0].time_pct, 100.0);
    cr_assert_eq(r.summaries[1].nrows, 0);
    tt_kern_result_free(&r);
}

Test(kernels_summary, damaged_sections_are_errors)
{
    static const char *const bad[] = {
        /* the counts do not sum to count */
        "{\"name\":[{\"name\":\"k\",\"count\":5,\"total\":16,\"min\":1,\"max\":9,"
        "\"values\":[9,1,1,1,3,2]}],\"memory\":[]," EMPTY_REST "}",
        /* an odd count of numbers */
        "{\"name\":[{\"name\":\"k\",\"count\":1,\"total\":1,\"min\":1,\"max\":1,"
        "\"values\":[1]}],\"memory\":[]," EMPTY_REST "}",
        /* no values */
        "{\"name\":[{\"name\":\"k\",\"count\":1,\"total\":1,\"min\":1,\"max\":1}],"
        "\"memory\":[]," EMPTY_REST "}",
        /* a value that is not an integer */
        "{\"name\":[{\"name\":\"k\",\"count\":1,\"total\":1,\"min\":1,\"max\":1,"
        "\"values\":[1.5,1]}],\"memory\":[]," EMPTY_REST "}",
        /* the grouping missing */
        "{\"memory\":[]," EMPTY_REST "}",
        /* not an object */
        "[1,2]",
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tt_kern_options o = TT_KERN_OPTIONS_INIT;
        tt_kern_result r;
        int rc = read_section(bad[i], &o, &r);
        cr_assert_eq(rc, TT_EINVALID, "case %zu: %d", i, rc);
        cr_assert(!strcmp(tt_error_last()->source, "x.summary.json") &&
                      tt_error_last()->offset >= 1000,
                  "case %zu: %s: %s at %lld", i, tt_error_last()->source,
                  tt_error_last()->message, (long long)tt_error_last()->offset);
        cr_assert_eq(r.nsummaries, 0);
    }
    {
        struct tt__sum_trace t;
        struct tt_summary s;
        tt_kern_options o = TT_KERN_OPTIONS_INIT;
        tt_kern_result r;
        memset(&t, 0, sizeof(t));
        t.id = 1;
        t.path = (char *)"t.json";
        s.path = (char *)"old.summary.json";
        s.traces = &t;
        s.n = 1;
        cr_assert_eq(tt_kernels_summary_result(&s, &o, &r), TT_EINVALID);
        cr_assert(strstr(tt_error_last()->message, "kernels"), "%s",
                  tt_error_last()->message);
    }
}
