/*
 * tests/unit/test_kernels_seq.c - `kernels --sequences N` (with and without
 * --under-op) and the launch delays of `kernels --by op`
 * (analyze/kernels/kernels_seq.c, kernels_stream.c) on a hand-made trace
 * whose answer is known by construction: from the file (its events in
 * order, and reversed: the tables may come in any order) and from a
 * database, with the spills kept in memory and forced to disk.
 */
#include "common/compat.h"
#include "tracetool/analyze.h"
#include "analyze/kernels/kernels_state.h"
#include "kseq_doc.h"

#include <string.h>

static void cleanup(void);
TestSuite(kernels_seq, .timeout = 300, .fini = cleanup);

#define OP(name, ts, dur)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts \
    ",\"dur\":" #dur "}"
#define RT(ts, dur, corr)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"        \
    "\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}}"
#define KN(name, stream, ts, dur, corr)                                                     \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #stream     \
    ",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr ",\"device\":0,"     \
    "\"stream\":" #stream "}}"

/*
 * Thread 1: "outer A" [10, 60] holds "A" [12, 30] (calls at 13 (dur 1) and
 * 15 (dur 2): k1 and k2 on stream 7 at 100 and 103) and "B" [32, 40] (call
 * at 33: k1 at 107); "outer A" [70, 120] holds "mm" [72, 80] (calls at 73,
 * 75: k1 at 130, k2 at 133) and a call of its own at 85 (k1 at 137); "A
 * lone" [200, 210] calls at 201: k3 on stream 8 at 250. k2 on stream 8 at
 * 260 has no call. k1 lasts 2 us, k2 3, k3 4, the last k2 1.
 */
static const char *const EVENTS[] = {
    OP("outer A", 10, 50), OP("A", 12, 18), RT(13, 1, 1), RT(15, 2, 2), OP("B", 32, 8),
    RT(33, 1, 3), OP("outer A", 70, 50), OP("mm", 72, 8), RT(73, 1, 4), RT(75, 1, 5),
    RT(85, 1, 6), OP("A lone", 200, 10), RT(201, 1, 7),
    KN("k1", 7, 100, 2, 1), KN("k2", 7, 103, 3, 2), KN("k1", 7, 107, 2, 3),
    KN("k1", 7, 130, 2, 4), KN("k2", 7, 133, 3, 5), KN("k1", 7, 137, 2, 6),
    KN("k3", 8, 250, 4, 7),
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":8,\"ts\":260,"
    "\"dur\":1,\"args\":{\"device\":0,\"stream\":8}}",
};
#define NEV (sizeof(EVENTS) / sizeof(EVENTS[0]))
#define US 1000

#define PREFIX "kseq"

static void cleanup(void)
{
    kseq_cleanup(PREFIX);
}

/* the trace, its events in order or reversed */
static const char *write_doc(int reversed)
{
    return kseq_write(PREFIX, EVENTS, NEV, reversed);
}

/* `kernels` under o, from the file or (db) a database of it; rc returned */
static int run(const char *path, int db, const tt_kern_options *o, tt_kern_result *r)
{
    tt_db *d;
    int rc;
    if (!db)
        return tt_kernels_file_result(path, o, r);
    rc = tt_kernels_db_result(d = kseq_db_open(PREFIX, path), o, r);
    kseq_db_close(PREFIX, d);
    return rc;
}

static void expect_seq(const tt_kern_summary *s, size_t i, const char *pattern, const char *ops,
                       int64_t count, int64_t gpu_us, int64_t cpu_us)
{
    cr_assert(i < s->nseqs, "sequence %zu of %zu", i, s->nseqs);
    cr_expect_str_eq(s->seqs[i].pattern, pattern);
    cr_expect_str_eq(s->seqs[i].ops, ops, "%s: ops %s", pattern, s->seqs[i].ops);
    cr_expect_eq(s->seqs[i].count, count, "%s: count %ld", pattern, (long)s->seqs[i].count);
    cr_expect_eq(s->seqs[i].gpu_ns, gpu_us * US, "%s: gpu %ld", pattern, (long)s->seqs[i].gpu_ns);
    cr_expect_eq(s->seqs[i].cpu_ns, cpu_us * US, "%s: cpu %ld", pattern, (long)s->seqs[i].cpu_ns);
}

#define EACH_INPUT(path, db, tiny) KSEQ_EACH_INPUT(path, db, tiny, write_doc)

Test(kernels_seq, windows_on_streams)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    const char *path;
    int db, tiny;
    o.by = TT_KERN_BY_SEQUENCE;
    o.seq_len = 2;
    EACH_INPUT(path, db, tiny) {
        tt_kern_result r;
        const tt_kern_summary *s;
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        cr_assert_eq(r.nsummaries, 1);
        s = &r.summaries[0];
        cr_assert_eq(s->nseqs, 4, "input %d: %zu sequences", db, s->nseqs);
        cr_expect_eq(s->ngroups, 4);
        expect_seq(s, 0, "k1|k2", "A|A", 2, 10, 5);
        expect_seq(s, 1, "k2|k1", "A|B", 2, 10, 5);
        expect_seq(s, 2, "k1|k1", "B|mm", 1, 4, 2);
        expect_seq(s, 3, "k3|k2", "A lone|[no CPU op]", 1, 5, 1);
        cr_expect_eq(s->seqs[0].length, 2);
        tt_kern_result_free(&r);
    }
    tt__spill_set_limit(0);
}

Test(kernels_seq, windows_of_three_and_the_row_limit)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    const char *path = write_doc(0);
    o.by = TT_KERN_BY_SEQUENCE;
    o.seq_len = 3;
    o.row_limit = 1;
    cr_assert_eq(run(path, 0, &o, &r), 0);
    /* stream 7: k1 k2 k1, k2 k1 k1, k1 k1 k2, k1 k2 k1: the first twice */
    cr_assert_eq(r.summaries[0].nseqs, 1);
    cr_expect_eq(r.summaries[0].ngroups, 3);
    expect_seq(&r.summaries[0], 0, "k1|k2|k1", "A|A|B", 2, 14, 7);
    tt_kern_result_free(&r);
    o.seq_len = 7; /* longer than any stream: nothing, said so */
    cr_expect_eq(run(path, 0, &o, &r), TT_ENOTFOUND);
    tt_kern_result_free(&r);
    o.seq_len = 0;
    cr_expect_eq(run(path, 0, &o, &r), TT_EINVALID);
    tt_kern_result_free(&r);
    o.seq_len = 2; /* version 3: the time range only */
    o.filter.name = "k1";
    o.version = 3;
    cr_expect_eq(run(path, 0, &o, &r), TT_EINVALID);
    tt_kern_result_free(&r);
    unlink(path);
}

Test(kernels_seq, under_an_op)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    const char *path;
    int db, tiny;
    o.by = TT_KERN_BY_SEQUENCE;
    o.seq_op = "A";
    EACH_INPUT(path, db, tiny) {
        tt_kern_result r;
        const tt_kern_summary *s;
        o.seq_len = 2; /* "A lone" launched one kernel: left out */
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        s = &r.summaries[0];
        cr_assert_eq(s->nseqs, 1, "input %d: %zu sequences", db, s->nseqs);
        expect_seq(s, 0, "outer A|k1|k2|k1", "outer A", 2, 14, 100);
        cr_expect_eq(s->seqs[0].length, 3);
        tt_kern_result_free(&r);
        o.seq_len = 1;
        cr_assert_eq(run(path, db == 2, &o, &r), 0);
        s = &r.summaries[0];
        cr_assert_eq(s->nseqs, 2);
        expect_seq(s, 0, "outer A|k1|k2|k1", "outer A", 2, 14, 100);
        expect_seq(s, 1, "A lone|k3", "A lone", 1, 4, 10);
        tt_kern_result_free(&r);
    }
    tt__spill_set_limit(0);
}

Test(kernels_seq, time_range)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    tt_kern_result r;
    const char *path = write_doc(0);
    o.by = TT_KERN_BY_SEQUENCE;
    o.seq_op = "A";
    o.seq_len = 1;
    o.filter.to_ns = 65 * US; /* the first "outer A" and what it launched */
    cr_assert_eq(run(path, 0, &o, &r), 0);
    cr_assert_eq(r.summaries[0].nseqs, 1);
    expect_seq(&r.summaries[0], 0, "outer A|k1|k2|k1", "outer A", 1, 7, 50);
    tt_kern_result_free(&r);
    o.seq_op = NULL; /* on streams: the activities launched from 14 us on */
    o.seq_len = 2;
    o.filter.from_ns = 14 * US;
    o.filter.to_ns = TT_FILTER_OPEN_TO;
    cr_assert_eq(run(path, 0, &o, &r), 0);
    /* stream 7: k2 k1 k1 k2 k1 (k1 at 100 left out); stream 8: k3 alone
     * (the k2 without a call by its own start, 260: in) */
    cr_assert_eq(r.summaries[0].nseqs, 4, "%zu", r.summaries[0].nseqs);
    expect_seq(&r.summaries[0], 0, "k2|k1", "A|B", 2, 10, 5);
    expect_seq(&r.summaries[0], 1, "k1|k1", "B|mm", 1, 4, 2);
    expect_seq(&r.summaries[0], 2, "k1|k2", "mm|mm", 1, 5, 2);
    expect_seq(&r.summaries[0], 3, "k3|k2", "A lone|[no CPU op]", 1, 5, 1);
    tt_kern_result_free(&r);
    unlink(path);
}

/* --name, --under: only the activities that pass are in the streams and
 * under the roots (the roots themselves are not filtered by them); each
 * case gives one sequence */
struct filtered_case {
    const char *seq_op, *name, *under;
    int64_t len;
    const char *pattern, *ops;
    int64_t count, gpu_us, cpu_us;
};

static const struct filtered_case FILTERED[] = {
    /* on streams: the k1 of stream 7 (100, 107, 130, 137), each 2 us, each
     * call 1 us: three runs of two */
    { NULL, "k1", NULL, 2, "k1|k1", "A|B", 3, 12, 6 },
    /* what "mm" launched: k1 at 130, k2 at 133 */
    { NULL, NULL, "mm", 2, "k1|k2", "mm|mm", 1, 5, 2 },
    /* under an op: the k2 of each "outer A" ("A lone" launched none) */
    { "A", "k2", NULL, 1, "outer A|k2", "outer A", 2, 6, 100 },
    { "A", NULL, "mm", 1, "outer A|k1|k2", "outer A", 1, 5, 50 },
};

Test(kernels_seq, name_and_under)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    const char *path;
    int db, tiny;
    size_t i;
    o.by = TT_KERN_BY_SEQUENCE;
    EACH_INPUT(path, db, tiny) {
        for (i = 0; i < sizeof(FILTERED) / sizeof(FILTERED[0]); i++) {
            const struct filtered_case *c = &FILTERED[i];
            tt_kern_result r;
            o.seq_op = c->seq_op;
            o.seq_len = c->len;
            o.filter.name = c->name;
            o.filter.under = c->under;
            cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
            cr_assert_eq(r.summaries[0].nseqs, 1, "input %d, case %zu: %zu sequences", db, i,
                         r.summaries[0].nseqs);
            expect_seq(&r.summaries[0], 0, c->pattern, c->ops, c->count, c->gpu_us, c->cpu_us);
            tt_kern_result_free(&r);
        }
    }
    tt__spill_set_limit(0);
}

/* ---- kernels --by op: the launch delays ---- */

static const tt_kern_row *row_named(const tt_kern_summary *s, const char *name)
{
    size_t i;
    for (i = 0; i < s->nrows; i++)
        if (!strcmp(s->rows[i].name, name))
            return &s->rows[i];
    cr_assert_fail("no row %s", name);
    return NULL;
}

static void expect_delay(const tt_kern_summary *s, const char *op, int64_t n, double avg_us,
                         int64_t min_us, int64_t max_us)
{
    const tt_kern_row *x = row_named(s, op);
    cr_expect_eq(x->launches, n, "%s: %ld launches", op, (long)x->launches);
    cr_expect_float_eq(x->delay_avg_ns, avg_us * US, 1e-6, "%s: avg %f", op, x->delay_avg_ns);
    cr_expect_eq(x->delay_min_ns, min_us * US, "%s: min %ld", op, (long)x->delay_min_ns);
    cr_expect_eq(x->delay_max_ns, max_us * US, "%s: max %ld", op, (long)x->delay_max_ns);
}

Test(kernels_seq, by_op_launch_delay)
{
    tt_kern_options o = TT_KERN_OPTIONS_INIT;
    const char *path;
    int db, tiny;
    o.by = TT_KERN_BY_OP;
    EACH_INPUT(path, db, tiny) {
        tt_kern_result r;
        const tt_kern_summary *s;
        cr_assert_eq(run(path, db == 2, &o, &r), 0, "%s", tt_error_last()->message);
        s = &r.summaries[0];
        cr_assert_eq(s->nrows, 6, "%zu rows", s->nrows);
        expect_delay(s, "A", 2, 87.5, 87, 88); /* 100 - 13, 103 - 15 */
        expect_delay(s, "B", 1, 74, 74, 74);
        expect_delay(s, "mm", 2, 57.5, 57, 58);
        expect_delay(s, "outer A", 1, 52, 52, 52);
        expect_delay(s, "A lone", 1, 49, 49, 49);
        cr_expect_eq(row_named(s, "[no CPU op]")->launches, 0);
        tt_kern_result_free(&r);
    }
    tt__spill_set_limit(0);
    o.steps_set = 1; /* --steps keeps the delays with the values that wait */
    o.step_from = 0;
    o.step_to = 9;
    {
        tt_kern_result r;
        cr_assert_eq(run(write_doc(0), 0, &o, &r), 0);
        cr_expect_eq(r.summaries[0].nrows, 0); /* no ProfilerStep: nothing in the steps */
        tt_kern_result_free(&r);
    }
}
