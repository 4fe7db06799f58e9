/*
 * tests/unit/test_render_breakdown.c - the breakdown page: what it draws is
 * read back from the rects' data attributes and widths (the longest window
 * is 900 px, a part's width is its share of it), labels are escaped, the
 * page loads nothing, and bad input writes no file.
 */
#define _GNU_SOURCE
#include "tracetool/render.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* the total width drawn for a rank, and the ns of one of its parts */
static double rank_width(const char *page, int rank, const char *part, long long *part_ns)
{
    const char *p = page;
    double total = 0;
    char want[32];
    snprintf(want, sizeof(want), "data-rank=\"%d\"", rank);
    *part_ns = -1;
    while ((p = strstr(p, "<rect x=\""))) {
        const char *end = strchr(p, '>');
        double x, w;
        char key[32];
        long long ns;
        cr_assert(end);
        if (memmem(p, (size_t)(end - p), want, strlen(want)) &&
            sscanf(p, "<rect x=\"%lf\" y=\"%*f\" width=\"%lf\"", &x, &w) == 2) {
            const char *d = strstr(p, "data-part=\"");
            cr_assert(d && d < end);
            cr_assert_eq(sscanf(d, "data-part=\"%31[a-z_]\" data-ns=\"%lld\"", key, &ns), 2);
            total += w;
            if (!strcmp(key, part))
                *part_ns = ns;
        }
        p = end;
    }
    return total;
}

Test(render_breakdown, page)
{
    static const tt_render_bd_rank ranks[2] = {
        /* 10 ms: 4 compute, 1 exposed comm, 1 memory only, 2 + 1 + 1 idle */
        { "rank 0 <b>&amp;", 10000000, 4000000, 1000000, 1000000, 2000000, 1000000, 1000000,
          3000000, 2000000, 9500000.0 },
        /* 5 ms, all compute: half the width of rank 0 */
        { "rank 1", 5000000, 5000000, 0, 0, 0, 0, 0, 0, 0, NAN },
    };
    static const int64_t lo[3] = { 1000, 2000, 4000 }, count[3] = { 5, 20, 1 };
    tt_render_bd bd = { "/some/dir/job.db", "2 ranks", 2, ranks, 0, 3, lo, count, NULL, 0, NULL };
    char path[] = "/tmp/tt_bd_html_XXXXXX";
    long long ns;
    char *page;
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(tt_render_breakdown_html(&bd, path), 0, "%s", tt_error_last()->message);
    page = slurp(path);
    cr_expect(fabs(rank_width(page, 0, "compute", &ns) - 900.0) < 0.05);
    cr_expect_eq(ns, 4000000);
    cr_expect(fabs(rank_width(page, 1, "compute", &ns) - 450.0) < 0.05);
    cr_expect_eq(ns, 5000000);
    rank_width(page, 0, "host_wait", &ns);
    cr_expect_eq(ns, 2000000);
    rank_width(page, 1, "exposed_comm", &ns);
    cr_expect_eq(ns, -1, "a part of 0 ns is not drawn");
    cr_expect(strstr(page, "rank 0 &lt;b&gt;&amp;amp; (slowest)"), "the label escaped");
    cr_expect(!strstr(page, "<b>"), "no markup from a label");
    cr_expect(strstr(page, "data-bin=\"1\" data-count=\"20\""), "the histogram's bins");
    cr_expect(strstr(page, "2 \xc2\xb5s to 4 \xc2\xb5s: 20 launches (76.9%)"), "a bin's title");
    cr_expect(!strstr(page, "http://") && !strstr(page, "https://") && !strstr(page, "<script"),
              "self-contained, no script");
    cr_expect(strstr(page, "<title>tracetool breakdown \xc2\xb7 job.db</title>"));
    free(page);
    unlink(path);
}

Test(render_breakdown, bad_input)
{
    tt_render_bd bd = { NULL, NULL, 2, NULL, (size_t)-1, 0, NULL, NULL, NULL, 0, NULL };
    char path[64]; /* this run's own: a second copy of the suite may run beside it */
    snprintf(path, sizeof(path), "/tmp/tt_bd_html_bad.%ld.html", (long)getpid());
    unlink(path);
    cr_expect_eq(tt_render_breakdown_html(&bd, path), TT_EINVALID);
    cr_expect_neq(access(path, F_OK), 0, "nothing written");
    bd.nranks = 0;
    cr_expect_eq(tt_render_breakdown_html(&bd, "/nonexistent-dir/x.html"), TT_EIO);
    cr_expect_eq(tt_render_breakdown_html(&bd, path), 0, "no rank: an empty page");
    unlink(path);
}
