/*
 * analyze/breakdown_page.c - `tracetool breakdown --html`: a breakdown
 * result handed to the renderer (render/breakdown_html.c) as the parts of
 * each rank's window and the launch-delay histogram.
 */
#include "common/compat.h"
#include "tracetool/breakdown.h"
#include "tracetool/render.h"

#include <inttypes.h>
#include <math.h>

/* "rank 3 cuda:1" (no rank: "trace 7") */
static void label_of(const tt_bd_row *r, char *buf, size_t cap)
{
    int n = r->rank >= 0 ? snprintf(buf, cap, "rank %" PRId64, r->rank)
                         : snprintf(buf, cap, "trace %" PRId64, r->trace_id);
    if (r->device >= 0 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " cuda:%" PRId64, r->device);
}

static int64_t at_least_0(int64_t v)
{
    return v > 0 ? v : 0;
}

int tt_breakdown_html(const tt_bd_result *res, const char *title, const char *path)
{
    tt_render_bd bd;
    tt_render_bd_rank *ranks = NULL;
    char (*labels)[48] = NULL, sub[160];
    int64_t lo[TT_BD_HIST];
    size_t i, first = TT_BD_HIST, last = 0;
    int rc;
    if (!res)
        return tt_error_set(TT_EINVALID, "no breakdown to draw");
    if (res->nranks && (!(ranks = calloc(res->nranks, sizeof(*ranks))) ||
                        !(labels = calloc(res->nranks, sizeof(*labels))))) {
        free(ranks);
        return tt_error_set(TT_ENOMEM, "out of memory");
    }
    for (i = 0; i < res->nranks; i++) {
        const tt_bd_row *r = &res->ranks[i];
        label_of(r, labels[i], sizeof(labels[i]));
        ranks[i].label = labels[i];
        ranks[i].window_ns = r->window_ns;
        ranks[i].compute_ns = r->compute_ns;
        ranks[i].exposed_comm_ns = r->exposed_comm_ns;
        /* busy = |compute U comm U memory|: what compute and exposed
         * communication leave of it is copies and sets under no kernel */
        ranks[i].memory_only_ns = at_least_0(r->busy_ns - r->compute_ns - r->exposed_comm_ns);
        ranks[i].host_wait_ns = r->host_wait_ns;
        ranks[i].kernel_wait_ns = r->kernel_wait_ns;
        ranks[i].other_idle_ns = r->other_idle_ns;
        ranks[i].comm_ns = r->comm_ns;
        ranks[i].overlap_ns = r->overlap_ns;
        ranks[i].step_ns = r->step_ns;
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
    bd.ranks = ranks;
    bd.slowest = res->slowest;
    if (first < TT_BD_HIST) {
        bd.nbins = last - first + 1;
        bd.bin_lo_ns = lo + first;
        bd.bin_count = res->delay_hist + first;
    }
    rc = tt_render_breakdown_html(&bd, path);
    free(ranks);
    free(labels);
    return rc;
}
