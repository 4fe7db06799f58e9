/*
 * analyze/breakdown/breakdown_page.c - `tracetool breakdown --html`: a breakdown
 * result handed to the renderer (render/breakdown_html.c) as the parts of
 * each rank's window (and, by step or stream, of each of those rows) and
 * the launch-delay histogram.
 */
#include "common/compat.h"
#include "tracetool/breakdown.h"
#include "tracetool/render.h"

#include <inttypes.h>
#include <math.h>

/* "rank 3 cuda:1" (no rank: "trace 7"), then " step 12" or " stream 7"
 * for a unit row */
static void label_of(const tt_bd_row *r, char *buf, size_t cap)
{
    int n = r->rank >= 0 ? snprintf(buf, cap, "rank %" PRId64, r->rank)
                         : snprintf(buf, cap, "trace %" PRId64, r->trace_id);
    if (r->device >= 0 && n > 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, " cuda:%" PRId64, r->device);
    if (r->step >= 0 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " step %" PRId64, r->step);
    else if (r->stream >= 0 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " stream %" PRId64, r->stream);
}

static int64_t at_least_0(int64_t v)
{
    return v > 0 ? v : 0;
}

#define LABEL_CAP 80

/* the parts of n rows; labels: n * LABEL_CAP chars */
static void fill_rows(const tt_bd_row *rows, size_t n, tt_render_bd_rank *out, char *labels)
{
    size_t i;
    for (i = 0; i < n; i++) {
        const tt_bd_row *r = &rows[i];
        label_of(r, labels + i * LABEL_CAP, LABEL_CAP);
        out[i].label = labels + i * LABEL_CAP;
        out[i].window_ns = r->window_ns;
        out[i].compute_ns = r->compute_ns;
        out[i].exposed_comm_ns = r->exposed_comm_ns;
        /* busy = |compute U comm U memory|: what compute and exposed
         * communication leave of it is copies and sets under no kernel */
        out[i].memory_only_ns = at_least_0(r->busy_ns - r->compute_ns - r->exposed_comm_ns);
        out[i].host_wait_ns = r->host_wait_ns;
        out[i].kernel_wait_ns = r->kernel_wait_ns;
        out[i].other_idle_ns = r->other_idle_ns;
        out[i].comm_ns = r->comm_ns;
        out[i].overlap_ns = r->overlap_ns;
        out[i].step_ns = r->step_ns;
    }
}

int tt_breakdown_html(const tt_bd_result *res, const char *title, const char *path)
{
    tt_render_bd bd;
    tt_render_bd_rank *rows = NULL;
    char *labels = NULL, sub[160];
    int64_t lo[TT_BD_HIST];
    size_t i, first = TT_BD_HIST, last = 0, nunits, n;
    int rc;
    if (!res || res->by == TT_BD_BY_ANNOTATION) /* a table, no bars */
        return tt_error_set(TT_EINVALID, "no breakdown to draw");
    /* with --by step or stream: the rows of each rank's steps or streams */
    nunits = res->by == TT_BD_BY_RANK ? 0 : res->nrows;
    n = res->nranks + nunits;
    if (n && (!(rows = calloc(n, sizeof(*rows))) || !(labels = calloc(n, LABEL_CAP)))) {
        free(rows);
        return tt__oom();
    }
    if (n) {
        fill_rows(res->ranks, res->nranks, rows, labels);
        fill_rows(res->rows, nunits, rows + res->nranks, labels + res->nranks * LABEL_CAP);
    }
    /* the histogram from its first to its last non-empty bin */
    for (i = 0; i < TT_BD_HIST; i++) {
        lo[i] = tt_bd_hist_lo_ns(i);
        if (res->delay_hist[i]) {
            first = first < i ? first : i;
            last = i;
        }
    }
    snprintf(sub, sizeof(sub), "%zu rank%s \xc2\xb7 kernel wait under %" PRId64 " ns%s",
             res->nranks, res->nranks == 1 ? "" : "s", res->kernel_wait_ns,
             res->steps_set ? " \xc2\xb7 selected steps" : "");
    memset(&bd, 0, sizeof(bd));
    bd.title = title;
    bd.subtitle = sub;
    bd.nranks = res->nranks;
    bd.ranks = rows;
    bd.slowest = res->slowest;
    if (first < TT_BD_HIST) {
        bd.nbins = last - first + 1;
        bd.bin_lo_ns = lo + first;
        bd.bin_count = res->delay_hist + first;
    }
    bd.unit_name = res->by == TT_BD_BY_STEP ? "step" : "stream";
    bd.nunits = nunits;
    bd.units = nunits ? rows + res->nranks : NULL;
    rc = tt_render_breakdown_html(&bd, path);
    free(rows);
    free(labels);
    return rc;
}
