/*
 * tests/tools/render_demo.c - writes a memory-timeline HTML page and PNG from
 * a synthetic training-loop series, for the browser test
 * (tests/cli/test_render_browser.py) and for looking at the output.
 *
 *   render_demo [--no-categories|--empty] OUT.html [OUT.png]
 */
#include "common/compat.h"

#include <math.h>

#include "tracetool/render.h"

#define NPTS 2000
#define STEPS 3

static int64_t t_us[NPTS], sizes[NPTS * 9];
static int64_t at[NPTS], alloc_b[NPTS], res_b[NPTS];

static const int64_t MB = 1024 * 1024;

/* A three-step training loop: forward builds activations, backward frees
 * them and makes gradients, the optimizer step adds its state once. */
static void synth(tt_memtl *tl, tt_memtl_alloc *top, size_t *n_top)
{
    size_t i;
    int64_t peak = -1, peak_t = 0, reserved = 0;
    for (i = 0; i < NPTS; i++) {
        double step_f = (double)i * STEPS / NPTS;
        int step = (int)step_f;
        double ph = step_f - step; /* 0..1 inside the step */
        int64_t *row = sizes + i * 9, total = 0;
        int c;
        double act = ph < 0.45 ? ph / 0.45 : ph < 0.85 ? (0.85 - ph) / 0.4 : 0.0;
        double grad = ph < 0.45 ? 0.0 : ph < 0.85 ? (ph - 0.45) / 0.4 : 1.0;
        t_us[i] = (int64_t)i * 37 + (int64_t)step * 900;
        row[0] = 0;
        row[1 + TT_CAT_PARAMETER] = 420 * MB;
        row[1 + TT_CAT_OPTIMIZER_STATE] = step > 0 || ph > 0.9 ? 840 * MB : 0;
        row[1 + TT_CAT_INPUT] = 96 * MB;
        row[1 + TT_CAT_TEMPORARY] = (int64_t)((60.0 + 50.0 * sin((double)i * 0.21)) * (double)MB);
        row[1 + TT_CAT_ACTIVATION] = (int64_t)(act * 1900.0 * (double)MB);
        row[1 + TT_CAT_GRADIENT] = (int64_t)(grad * 420.0 * (double)MB);
        row[1 + TT_CAT_AUTOGRAD_DETAIL] = ph > 0.45 && ph < 0.85 ? 130 * MB : 0;
        row[1 + TT_CAT_UNKNOWN] = 48 * MB + (int64_t)(i % 7) * MB;
        for (c = 1; c < 9; c++)
            total += row[c];
        at[i] = t_us[i];
        alloc_b[i] = total + 24 * MB;
        if (alloc_b[i] + 256 * MB > reserved)
            reserved = (alloc_b[i] + 256 * MB + 511 * MB) / (512 * MB) * (512 * MB);
        res_b[i] = reserved;
        if (alloc_b[i] > peak) {
            peak = alloc_b[i];
            peak_t = t_us[i];
        }
    }
    memset(tl, 0, sizeof(*tl));
    tl->title = "resnet50 <demo> & \"friends\".pt.trace.json";
    tl->device = "cuda:0";
    tl->categories = 1;
    tl->n = NPTS;
    tl->t_us = t_us;
    tl->sizes = sizes;
    tl->n_alloc = NPTS;
    tl->alloc_t_us = at;
    tl->allocated = alloc_b;
    tl->reserved = res_b;
    tl->peak_allocated = peak;
    tl->peak_reserved = reserved;
    tl->peak_t_us = peak_t;
    tl->peak_op = "aten::convolution_backward";
    tl->peak_step = "ProfilerStep#2";
    {
        static const struct {
            int64_t mb;
            const char *op;
            int cat;
            const char *rule;
        } rows[] = {
            { 840, "Optimizer.step#SGD.step", TT_CAT_OPTIMIZER_STATE, "allocated in Optimizer.step" },
            { 420, "aten::empty", TT_CAT_PARAMETER, "live before the first step" },
            { 400, "aten::cudnn_convolution", TT_CAT_ACTIVATION, "forward output kept for backward" },
            { 210, "autograd::engine::evaluate_function: ConvolutionBackward0",
              TT_CAT_GRADIENT, "backward scope, kept after the step" },
            { 96, "<b>&\"x\"</b> aten::to", TT_CAT_INPUT, "copied to the device in the step" },
            { 64, "aten::add_", TT_CAT_TEMPORARY, "freed inside the op" },
            { 48, "", TT_CAT_UNKNOWN, "no rule matched" },
        };
        size_t k;
        for (k = 0; k < TT_ARRAY_SIZE(rows); k++) {
            top[k].addr = (int64_t)0x7f3a00000000LL + (int64_t)k * 0x2000000LL;
            top[k].bytes = rows[k].mb * MB;
            top[k].t_us = (int64_t)k * 1234;
            top[k].op = rows[k].op;
            top[k].category = rows[k].cat;
            top[k].rule = rows[k].rule;
        }
        *n_top = TT_ARRAY_SIZE(rows);
    }
    tl->top = top;
    tl->n_top = *n_top;
}

static int fail(const char *what)
{
    char msg[1200];
    tt_error_format(tt_error_last(), msg, sizeof(msg));
    fprintf(stderr, "render_demo: %s: %s\n", what, msg);
    return 1;
}

int main(int argc, char **argv)
{
    tt_memtl tl;
    tt_memtl_alloc top[8];
    size_t n_top = 0;
    int argi = 1, no_cat = 0, empty = 0;
    if (argi < argc && !strcmp(argv[argi], "--no-categories")) {
        no_cat = 1;
        argi++;
    } else if (argi < argc && !strcmp(argv[argi], "--empty")) {
        empty = 1;
        argi++;
    }
    if (argi >= argc || argc - argi > 2) {
        fprintf(stderr, "usage: render_demo [--no-categories|--empty] OUT.html [OUT.png]\n");
        return 2;
    }
    synth(&tl, top, &n_top);
    if (no_cat)
        tl.categories = 0;
    if (empty) {
        tl.n = tl.n_alloc = tl.n_top = 0;
        tl.peak_allocated = tl.peak_reserved = 0;
        tl.peak_op = tl.peak_step = "";
    }
    if (tt_render_html(&tl, argv[argi]))
        return fail(argv[argi]);
    if (argi + 1 < argc && tt_render_png(&tl, argv[argi + 1]))
        return fail(argv[argi + 1]);
    return 0;
}
