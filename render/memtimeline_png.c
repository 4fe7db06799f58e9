/*
 * render/memtimeline_png.c - the memory timeline as a 1600x960 PNG (cairo).
 *
 * Mirrors torch's export_memory_timeline_html figure (docs/TORCH.md 4.4): a
 * stacked fill_between of the category columns in torch's colours at alpha
 * 0.7 on white, "Time (ms)" / "Memory (GB)" axes (bytes / 1024^3), a legend
 * and a title with the peaks; adds the allocator's Total Allocated (solid)
 * and Total Reserved (dashed) curves and a marker at the allocated peak.
 * Negative sizes are drawn as 0; the input is never modified.
 */
#include "common/compat.h"
#include "report/out.h"
#include "render/render_internal.h"

#include <cairo.h>
#include <errno.h>
#include <unistd.h>
#include <math.h>

#define W 1600
#define H 960
#define PLOT_L 104.0
#define PLOT_T 104.0
#define PLOT_R (W - 292.0)
#define PLOT_B (H - 78.0)
#define FONT "sans-serif"
#define ALPHA 0.7

#if defined(__SANITIZE_ADDRESS__)
#define TT_RENDER_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_RENDER_LSAN 1
#endif
#endif
#ifdef TT_RENDER_LSAN
/*
 * Sanitizer builds only: fontconfig (under cairo's toy font API) keeps its
 * configuration and font patterns for the life of the process in ways
 * LeakSanitizer reports as leaks. Every program that renders links this
 * file, so the suppression lives here rather than in each test and tool.
 * Only stacks through libfontconfig are suppressed.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}
/* and no "Suppressions used" report on stderr, which CLI tests read */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}
#endif

typedef struct axis {
    double lo, hi, step; /* data units: ms or GB */
} axis;

typedef struct chart {
    cairo_t *cr;
    const tt_memtl *tl;
    axis x, y;
    int nseries;        /* 8 categories or 1 total */
    double *xs;         /* n pixel x of the category points */
    double *cum;        /* n * 9 stacked values in `unit`, clamped: cum[i*9+k] = the
                           memory live before the trace + the series < k */
    double div;         /* bytes per unit */
    const char *unit;   /* "B", "KiB", "MiB", "GiB", "TiB" */
} chart;

static int cairo_error(cairo_status_t st, const char *what)
{
    if (st == CAIRO_STATUS_NO_MEMORY)
        return tt_error_set(TT_ENOMEM, "%s: out of memory", what);
    return tt_error_set(TT_ERROR, "%s: cairo: %s", what, cairo_status_to_string(st));
}

/* ---- scales ---- */

/* Smallest 1, 2 or 5 x 10^k step giving at most `target` intervals over span. */
static double nice_step(double span, int target)
{
    double raw, mag, f;
    if (!(span > 0) || !isfinite(span))
        return 1.0;
    raw = span / target;
    mag = pow(10.0, floor(log10(raw)));
    f = raw / mag;
    if (f <= 1.0 + 1e-9)
        return mag;
    if (f <= 2.0 + 1e-9)
        return 2.0 * mag;
    if (f <= 5.0 + 1e-9)
        return 5.0 * mag;
    return 10.0 * mag;
}

static void format_tick(char *out, size_t size, double v, double step)
{
    int dec = 0;
    if (fabs(v) < step * 1e-6)
        v = 0.0; /* no "-0" nor 1e-17 */
    if (fabs(v) >= 1e9 || (step < 1e-6 && v != 0.0)) {
        snprintf(out, size, "%.4g", v);
        return;
    }
    if (step < 1.0)
        dec = (int)ceil(-log10(step) - 1e-9);
    snprintf(out, size, "%.*f", dec, v);
}

static double px_x(const chart *c, double ms)
{
    return PLOT_L + (ms - c->x.lo) / (c->x.hi - c->x.lo) * (PLOT_R - PLOT_L);
}

static double px_y(const chart *c, double gb)
{
    double f = (gb - c->y.lo) / (c->y.hi - c->y.lo);
    if (f > 2.0) /* keep cairo's fixed-point coordinates in range */
        f = 2.0;
    if (f < 0.0) /* below an axis that starts above 0: at its foot */
        f = 0.0;
    return PLOT_B - f * (PLOT_B - PLOT_T);
}

/* bytes in the chart's unit (negative: 0) */
static double gb(const chart *c, int64_t bytes)
{
    return bytes > 0 ? (double)bytes / c->div : 0.0;
}

static void compute_ranges(chart *c)
{
    const tt_memtl *tl = c->tl;
    double tmin = 0.0, tmax = 0.0, ymax = 0.0, ymin = INFINITY;
    int any = 0;
    size_t i;
    for (i = 0; i < tl->n; i++) {
        double t = (double)tl->t_us[i] / 1000.0, top = c->cum[i * 9 + c->nseries];
        if (!any || t < tmin)
            tmin = t;
        if (!any || t > tmax)
            tmax = t;
        any = 1;
        if (top > ymax)
            ymax = top;
        if (top < ymin)
            ymin = top;
    }
    for (i = 0; i < tl->n_alloc; i++) {
        double t = (double)tl->alloc_t_us[i] / 1000.0;
        if (!any || t < tmin)
            tmin = t;
        if (!any || t > tmax)
            tmax = t;
        any = 1;
        if (gb(c, tl->allocated[i]) > ymax)
            ymax = gb(c, tl->allocated[i]);
        if (gb(c, tl->reserved[i]) > ymax)
            ymax = gb(c, tl->reserved[i]);
        if (gb(c, tl->allocated[i]) < ymin)
            ymin = gb(c, tl->allocated[i]);
    }
    if (any && gb(c, tl->peak_allocated) > ymax)
        ymax = gb(c, tl->peak_allocated);
    /* times are from the timeline start: the axis starts at 0 */
    c->x.lo = tmin < 0.0 ? tmin : 0.0;
    c->x.hi = tmax;
    if (!(c->x.hi > c->x.lo))
        c->x.hi = c->x.lo + 1.0;
    c->x.step = nice_step(c->x.hi - c->x.lo, 10);
    /* torch/matplotlib leave ~5% headroom above the data */
    c->y.lo = 0.0;
    c->y.hi = ymax > 0.0 ? ymax * 1.05 : 1.0;
    /* most of the memory live throughout (a 178 GiB job): the axis starts
     * near the least of it, and its title says so, or every change is flat */
    if (isfinite(ymin) && ymin > 0.5 * ymax) {
        double l0 = ymin - 0.1 * (c->y.hi - ymin), st = nice_step(c->y.hi - l0, 8);
        c->y.lo = fmax(0.0, floor(l0 / st) * st);
        c->y.hi = ymax + 0.05 * (ymax - c->y.lo);
    }
    c->y.step = nice_step(c->y.hi - c->y.lo, 8);
    if (c->div == 1.0 && c->y.step < 1.0)
        c->y.step = 1.0; /* whole bytes */
}

/* ---- text ---- */

static void font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static double text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

static int utf8_cont(const tt_buf *b, size_t i)
{
    return i < b->len && ((unsigned char)b->buf[i] & 0xc0) == 0x80;
}

/* Shorten the valid UTF-8 text in b to fit maxw pixels, ending in "\u2026". */
static void fit_text(cairo_t *cr, tt_buf *b, double maxw)
{
    tt_buf t = TT_BUF_INIT;
    size_t lo = 0, hi;
    if (b->oom || text_width(cr, b->buf) <= maxw)
        return;
    /* prefixes on character boundaries: lo fits (or is empty), hi does not */
    hi = b->len;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        while (mid > lo && utf8_cont(b, mid))
            mid--;
        if (mid == lo) {
            mid = lo + 1;
            while (mid < hi && utf8_cont(b, mid))
                mid++;
            if (mid >= hi)
                break;
        }
        tt_buf_reset(&t);
        tt_buf_add(&t, b->buf, mid);
        tt_buf_addstr(&t, "\xe2\x80\xa6");
        if (t.oom)
            break;
        if (text_width(cr, t.buf) <= maxw)
            lo = mid;
        else
            hi = mid;
    }
    tt_buf_release(&t);
    b->len = lo;
    b->buf[lo] = '\0';
    tt_buf_addstr(b, "\xe2\x80\xa6");
}

enum { LEFT, CENTER, RIGHT };

/* Draw s with its baseline at y; x is its left edge, centre or right edge. */
static void text_at(cairo_t *cr, const char *s, double x, double y, int align)
{
    double w = align == LEFT ? 0.0 : text_width(cr, s);
    cairo_move_to(cr, align == LEFT ? x : align == CENTER ? x - w / 2.0 : x - w, y);
    cairo_show_text(cr, s);
}

static void rgb(cairo_t *cr, unsigned hex)
{
    cairo_set_source_rgb(cr, ((hex >> 16) & 255) / 255.0, ((hex >> 8) & 255) / 255.0,
                         (hex & 255) / 255.0);
}

static void series_source(cairo_t *cr, const chart *c, int s)
{
    unsigned char v[3];
    tt__category_rgb(c->nseries == 1 ? TT_CAT_UNKNOWN : s, v);
    cairo_set_source_rgba(cr, v[0] / 255.0, v[1] / 255.0, v[2] / 255.0, ALPHA);
}

/* ---- parts of the figure ---- */

static int draw_title(chart *c)
{
    cairo_t *cr = c->cr;
    const tt_memtl *tl = c->tl;
    tt_buf b = TT_BUF_INIT;
    int rc;
    if (tl->title && *tl->title)
        tt__utf8_clean(&b, tt__base_name(tl->title), "?");
    else
        tt_buf_addstr(&b, "Memory timeline");
    if (tl->device && *tl->device) {
        tt_buf_addstr(&b, " \xe2\x80\x94 "); /* em dash */
        tt__utf8_clean(&b, tl->device, "?");
    }
    font(cr, 21, 1);
    fit_text(cr, &b, W - 80.0);
    rgb(cr, 0x1a1a1a);
    text_at(cr, b.buf, W / 2.0, 42, CENTER);
    tt_buf_reset(&b);
    tt__peak_line(&b, tl, "?");
    font(cr, 15, 0);
    fit_text(cr, &b, W - 80.0);
    rgb(cr, 0x404040);
    text_at(cr, b.buf, W / 2.0, 72, CENTER);
    rc = b.oom ? TT_ENOMEM : 0;
    tt_buf_release(&b);
    return rc ? tt_error_set(rc, "rendering the title: out of memory") : 0;
}

static void draw_axes(chart *c)
{
    cairo_t *cr = c->cr;
    char label[64];
    double v;
    long k, k0, k1;

    /* grid */
    cairo_set_line_width(cr, 1.0);
    rgb(cr, 0xe8e8e8);
    k0 = (long)ceil(c->x.lo / c->x.step - 1e-9);
    k1 = (long)floor(c->x.hi / c->x.step + 1e-9);
    for (k = k0; k <= k1 && k - k0 < 1000; k++) {
        double x = floor(px_x(c, (double)k * c->x.step)) + 0.5;
        cairo_move_to(cr, x, PLOT_T);
        cairo_line_to(cr, x, PLOT_B);
    }
    for (k = (long)ceil(c->y.lo / c->y.step + 1e-9);
         (double)k * c->y.step <= c->y.hi * (1 + 1e-9) && k < 1000000; k++) {
        double y = floor(px_y(c, (double)k * c->y.step)) + 0.5;
        if (!k)
            continue;
        cairo_move_to(cr, PLOT_L, y);
        cairo_line_to(cr, PLOT_R, y);
    }
    cairo_stroke(cr);

    /* ticks and labels */
    font(cr, 13, 0);
    rgb(cr, 0x333333);
    for (k = k0; k <= k1 && k - k0 < 1000; k++) {
        double x = floor(px_x(c, (double)k * c->x.step)) + 0.5;
        v = (double)k * c->x.step;
        cairo_move_to(cr, x, PLOT_B);
        cairo_line_to(cr, x, PLOT_B + 6);
        cairo_stroke(cr);
        format_tick(label, sizeof(label), v, c->x.step);
        text_at(cr, label, x, PLOT_B + 22, CENTER);
    }
    for (k = (long)ceil(c->y.lo / c->y.step - 1e-9);
         (double)k * c->y.step <= c->y.hi * (1 + 1e-9) && k < 1000000; k++) {
        double y = floor(px_y(c, (double)k * c->y.step)) + 0.5;
        v = (double)k * c->y.step;
        cairo_move_to(cr, PLOT_L - 6, y);
        cairo_line_to(cr, PLOT_L, y);
        cairo_stroke(cr);
        format_tick(label, sizeof(label), v, c->y.step);
        text_at(cr, label, PLOT_L - 10, y + 4.5, RIGHT);
    }

    /* axis titles */
    font(cr, 15, 0);
    rgb(cr, 0x1a1a1a);
    text_at(cr, "Time (ms)", (PLOT_L + PLOT_R) / 2.0, PLOT_B + 52, CENTER);
    cairo_save(cr);
    cairo_translate(cr, 30, (PLOT_T + PLOT_B) / 2.0);
    cairo_rotate(cr, -M_PI / 2.0);
    {
        char ylab[96], from[32];
        format_tick(from, sizeof(from), c->y.lo, c->y.step);
        if (c->y.lo > 0.0)
            snprintf(ylab, sizeof(ylab), "Memory (%s), axis starts at %s", c->unit, from);
        else
            snprintf(ylab, sizeof(ylab), "Memory (%s)", c->unit);
        text_at(cr, ylab, 0, 0, CENTER);
    }
    cairo_restore(cr);
}

static void draw_frame(cairo_t *cr)
{
    cairo_set_line_width(cr, 1.0);
    rgb(cr, 0x333333);
    cairo_rectangle(cr, PLOT_L + 0.5, PLOT_T + 0.5, PLOT_R - PLOT_L - 1.0, PLOT_B - PLOT_T - 1.0);
    cairo_stroke(cr);
}

/* stacked level k of point i; k = -1 is the axis (0) */
static double level(const chart *c, size_t i, int k)
{
    return k < 0 ? 0.0 : c->cum[i * 9 + (size_t)k];
}

/* the band between the stacked levels lo and hi as steps: a point's value
 * holds until the next point */
static void stair_band(chart *c, int lo, int hi)
{
    cairo_t *cr = c->cr;
    size_t n = c->tl->n, i;
    if (n == 1) { /* one point: a constant over the whole axis */
        double y0 = px_y(c, level(c, 0, lo)), y1 = px_y(c, level(c, 0, hi));
        cairo_rectangle(cr, PLOT_L, y1, PLOT_R - PLOT_L, y0 - y1);
        return;
    }
    cairo_move_to(cr, c->xs[0], px_y(c, level(c, 0, hi)));
    for (i = 1; i < n; i++) {
        cairo_line_to(cr, c->xs[i], px_y(c, level(c, i - 1, hi)));
        cairo_line_to(cr, c->xs[i], px_y(c, level(c, i, hi)));
    }
    for (i = n - 1; i > 0; i--) {
        cairo_line_to(cr, c->xs[i], px_y(c, level(c, i, lo)));
        cairo_line_to(cr, c->xs[i], px_y(c, level(c, i - 1, lo)));
    }
    cairo_line_to(cr, c->xs[0], px_y(c, level(c, 0, lo)));
    cairo_close_path(cr);
}

/* "live before the trace": under the categories, light grey */
#define BEFORE_RGB 0xd3d3d3

static int has_before(const chart *c)
{
    size_t i;
    for (i = 0; c->tl->before && i < c->tl->n; i++)
        if (c->cum[i * 9] > 0.0)
            return 1;
    return 0;
}

static void draw_before(chart *c)
{
    if (!has_before(c))
        return;
    stair_band(c, -1, 0);
    rgb(c->cr, BEFORE_RGB);
    cairo_fill(c->cr);
}

static void draw_areas(chart *c)
{
    cairo_t *cr = c->cr;
    size_t n = c->tl->n, i;
    int s;
    draw_before(c);
    for (s = 0; s < c->nseries; s++) {
        int nonzero = 0;
        for (i = 0; i < n && !nonzero; i++)
            nonzero = c->cum[i * 9 + s + 1] > c->cum[i * 9 + s];
        if (!nonzero)
            continue;
        stair_band(c, s, s + 1);
        series_source(cr, c, s);
        cairo_fill(cr);
    }
}

static void curve(chart *c, const int64_t *v)
{
    const tt_memtl *tl = c->tl;
    size_t i;
    if (tl->n_alloc == 1) {
        double y = px_y(c, gb(c, v[0]));
        cairo_move_to(c->cr, PLOT_L, y);
        cairo_line_to(c->cr, PLOT_R, y);
    } else {
        for (i = 0; i < tl->n_alloc; i++) { /* steps, as the areas */
            double x = px_x(c, (double)tl->alloc_t_us[i] / 1000.0);
            if (i)
                cairo_line_to(c->cr, x, px_y(c, gb(c, v[i - 1])));
            cairo_line_to(c->cr, x, px_y(c, gb(c, v[i])));
        }
    }
    cairo_stroke(c->cr);
}

static const double dash[] = { 9.0, 5.0 };

static void reserved_style(cairo_t *cr)
{
    cairo_set_line_width(cr, 1.8);
    cairo_set_dash(cr, dash, 2, 0.0);
    rgb(cr, 0x555555);
}

static void allocated_style(cairo_t *cr)
{
    cairo_set_line_width(cr, 1.8);
    cairo_set_dash(cr, NULL, 0, 0.0);
    rgb(cr, 0x111111);
}

static void draw_curves(chart *c)
{
    cairo_t *cr = c->cr;
    if (!c->tl->n_alloc)
        return;
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    reserved_style(cr);
    curve(c, c->tl->reserved);
    allocated_style(cr);
    curve(c, c->tl->allocated);
    cairo_set_dash(cr, NULL, 0, 0.0);
}

static int peak_visible(const chart *c)
{
    double t = (double)c->tl->peak_t_us / 1000.0;
    return c->tl->peak_allocated > 0 && (c->tl->n || c->tl->n_alloc) &&
           t >= c->x.lo && t <= c->x.hi;
}

static void draw_peak(chart *c)
{
    cairo_t *cr = c->cr;
    const tt_memtl *tl = c->tl;
    char label[96];
    double x, y, w, bx, by;
    if (!peak_visible(c))
        return;
    x = px_x(c, (double)tl->peak_t_us / 1000.0);
    y = px_y(c, gb(c, tl->peak_allocated));
    /* dotted drop line to the time axis */
    cairo_save(cr);
    {
        static const double dots[] = { 2.0, 3.0 };
        cairo_set_dash(cr, dots, 2, 0.0);
    }
    cairo_set_line_width(cr, 1.2);
    rgb(cr, 0x111111);
    cairo_move_to(cr, floor(x) + 0.5, y);
    cairo_line_to(cr, floor(x) + 0.5, PLOT_B);
    cairo_stroke(cr);
    cairo_restore(cr);
    /* marker */
    cairo_new_path(cr);
    cairo_arc(cr, x, y, 5.5, 0, 2 * M_PI);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_fill_preserve(cr);
    cairo_set_line_width(cr, 2.2);
    rgb(cr, 0xc00000);
    cairo_stroke(cr);
    /* label in a box, kept inside the plot */
    snprintf(label, sizeof(label), "peak %.2f %s at %.3f ms", (double)tl->peak_allocated / c->div,
             c->unit, (double)tl->peak_t_us / 1000.0);
    font(cr, 13, 1);
    w = text_width(cr, label) + 14.0;
    bx = x + 10.0;
    if (bx + w > PLOT_R - 4.0)
        bx = x - 10.0 - w;
    if (bx < PLOT_L + 4.0)
        bx = PLOT_L + 4.0;
    by = y - 30.0;
    if (by < PLOT_T + 4.0)
        by = y + 10.0;
    cairo_rectangle(cr, bx, by, w, 21.0);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.88);
    cairo_fill_preserve(cr);
    cairo_set_line_width(cr, 1.0);
    rgb(cr, 0xc00000);
    cairo_stroke(cr);
    rgb(cr, 0x1a1a1a);
    text_at(cr, label, bx + 7.0, by + 15.0, LEFT);
}

static void draw_legend(chart *c)
{
    cairo_t *cr = c->cr;
    const double x0 = PLOT_R + 22.0, y0 = PLOT_T, wbox = W - 20.0 - x0, row = 26.0;
    int rows = c->nseries + has_before(c) + (c->tl->n_alloc ? 2 : 0) + (peak_visible(c) ? 1 : 0),
        s, r = 0;
    double hbox = 40.0 + rows * row;
    cairo_rectangle(cr, x0 + 0.5, y0 + 0.5, wbox, hbox);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_fill_preserve(cr);
    cairo_set_line_width(cr, 1.0);
    rgb(cr, 0xbbbbbb);
    cairo_stroke(cr);
    font(cr, 14, 1);
    rgb(cr, 0x1a1a1a);
    text_at(cr, c->nseries == 1 ? "Memory" : "Category", x0 + 14, y0 + 25, LEFT);
    font(cr, 13, 0);
    for (s = 0; s < c->nseries; s++, r++) {
        double y = y0 + 40.0 + r * row;
        cairo_rectangle(cr, x0 + 14, y, 30, 15);
        series_source(cr, c, s);
        cairo_fill(cr);
        rgb(cr, 0x1a1a1a);
        text_at(cr, c->nseries == 1 ? "Total" : tt_category_name(s), x0 + 54, y + 12, LEFT);
    }
    if (has_before(c)) {
        double y = y0 + 40.0 + r * row;
        cairo_rectangle(cr, x0 + 14, y, 30, 15);
        rgb(cr, BEFORE_RGB);
        cairo_fill(cr);
        rgb(cr, 0x1a1a1a);
        text_at(cr, "live before the trace", x0 + 54, y + 12, LEFT);
        r++;
    }
    if (c->tl->n_alloc) {
        double y = y0 + 40.0 + r * row + 7.5;
        allocated_style(cr);
        cairo_move_to(cr, x0 + 14, y);
        cairo_line_to(cr, x0 + 44, y);
        cairo_stroke(cr);
        rgb(cr, 0x1a1a1a);
        text_at(cr, "Total Allocated", x0 + 54, y + 4.5, LEFT);
        r++;
        y += row;
        reserved_style(cr);
        cairo_move_to(cr, x0 + 14, y);
        cairo_line_to(cr, x0 + 44, y);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0.0);
        rgb(cr, 0x1a1a1a);
        text_at(cr, "Total Reserved", x0 + 54, y + 4.5, LEFT);
        r++;
    }
    if (peak_visible(c)) {
        double y = y0 + 40.0 + r * row + 7.5;
        cairo_new_path(cr);
        cairo_arc(cr, x0 + 29, y, 5.0, 0, 2 * M_PI);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_fill_preserve(cr);
        cairo_set_line_width(cr, 2.0);
        rgb(cr, 0xc00000);
        cairo_stroke(cr);
        rgb(cr, 0x1a1a1a);
        text_at(cr, "Peak allocated", x0 + 54, y + 4.5, LEFT);
    }
}

static void draw_empty_note(cairo_t *cr)
{
    cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_ITALIC, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 22);
    rgb(cr, 0x808080);
    text_at(cr, "no memory events", (PLOT_L + PLOT_R) / 2.0, (PLOT_T + PLOT_B) / 2.0, CENTER);
}

/* Stack the (clamped) series: cum[i*9 + k] = sum of series 0..k-1 in GB. */
static void stack(chart *c)
{
    const tt_memtl *tl = c->tl;
    size_t i;
    int k;
    for (i = 0; i < tl->n; i++) {
        const int64_t *row = tl->sizes + i * 9;
        double *out = c->cum + i * 9, acc = tl->before ? gb(c, tl->before[i]) : 0.0;
        out[0] = acc; /* the memory live before the trace is the base */
        if (c->nseries == 1) {
            double tot = 0.0;
            for (k = 1; k < 9; k++) /* torch's column 0 is the baseline */
                tot += (double)row[k];
            out[1] = acc + (tot > 0.0 ? tot / c->div : 0.0);
        } else {
            for (k = 1; k < 9; k++) {
                acc += gb(c, row[k]);
                out[k] = acc;
            }
        }
    }
}

static int draw(chart *c)
{
    cairo_t *cr = c->cr;
    const tt_memtl *tl = c->tl;
    size_t i;
    int rc;

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    c->div = tt__unit_for(tt__memtl_max_bytes(tl), &c->unit);
    stack(c);
    compute_ranges(c);
    for (i = 0; i < tl->n; i++)
        c->xs[i] = px_x(c, (double)tl->t_us[i] / 1000.0);

    rc = draw_title(c);
    if (rc)
        return rc;
    draw_axes(c);
    cairo_save(cr);
    cairo_rectangle(cr, PLOT_L, PLOT_T, PLOT_R - PLOT_L, PLOT_B - PLOT_T);
    cairo_clip(cr);
    draw_areas(c);
    draw_curves(c);
    cairo_restore(cr);
    draw_frame(cr);
    if (!tl->n && !tl->n_alloc)
        draw_empty_note(cr);
    draw_peak(c);
    draw_legend(c);
    return 0;
}

typedef struct sink {
    tt_buf b;
} sink;

static cairo_status_t write_sink(void *closure, const unsigned char *data, unsigned int len)
{
    sink *s = closure;
    return tt_buf_add(&s->b, data, len) ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

int tt_render_png_mem(const tt_memtl *tl, unsigned char **png, size_t *len)
{
    cairo_surface_t *surface = NULL;
    cairo_t *cr = NULL;
    cairo_status_t st;
    chart c;
    sink out = { TT_BUF_INIT };
    size_t cells = 0;
    int rc;

    if (!png || !len)
        return tt_error_set(TT_EINVALID, "no output buffer given");
    *png = NULL;
    *len = 0;
    rc = tt__memtl_check(tl);
    if (rc)
        return rc;
    memset(&c, 0, sizeof(c));
    c.tl = tl;
    c.nseries = tl->categories ? TT_CAT_COUNT : 1;
    tt_st_mult(&cells, tl->n, 9); /* checked by tt__memtl_check */
    if (tl->n) {
        c.xs = malloc(tl->n * sizeof(*c.xs));
        c.cum = cells <= SIZE_MAX / sizeof(*c.cum) ? malloc(cells * sizeof(*c.cum)) : NULL;
        if (!c.xs || !c.cum) {
            rc = tt_error_set(TT_ENOMEM, "rendering %zu points: out of memory", tl->n);
            goto done;
        }
    }
    surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
    st = cairo_surface_status(surface);
    if (st != CAIRO_STATUS_SUCCESS) {
        rc = cairo_error(st, "creating the image");
        goto done;
    }
    cr = cairo_create(surface);
    c.cr = cr;
    st = cairo_status(cr);
    if (st != CAIRO_STATUS_SUCCESS) {
        rc = cairo_error(st, "creating the drawing context");
        goto done;
    }
    rc = draw(&c);
    if (rc)
        goto done;
    st = cairo_status(cr);
    if (st != CAIRO_STATUS_SUCCESS) {
        rc = cairo_error(st, "drawing the memory timeline");
        goto done;
    }
    cairo_surface_flush(surface);
    st = cairo_surface_write_to_png_stream(surface, write_sink, &out);
    if (st != CAIRO_STATUS_SUCCESS || out.b.oom || !out.b.alloc) {
        rc = out.b.oom ? tt_error_set(TT_ENOMEM, "encoding the PNG: out of memory")
                       : cairo_error(st, "encoding the PNG");
        goto done;
    }
    *png = (unsigned char *)out.b.buf;
    *len = out.b.len;
    tt_buf_init(&out.b); /* ownership passed to the caller */
done:
    if (cr)
        cairo_destroy(cr);
    if (surface)
        cairo_surface_destroy(surface);
    tt_buf_release(&out.b);
    free(c.xs);
    free(c.cum);
    return rc;
}

int tt_render_png(const tt_memtl *tl, const char *path)
{
    unsigned char *png = NULL;
    size_t len = 0;
    int rc;
    if (!path || !*path)
        return tt_error_set(TT_EINVALID, "no output file given");
    rc = tt_render_png_mem(tl, &png, &len);
    if (rc)
        return rc;
    /* whole or not at all: a failure leaves the previous picture as it was */
    rc = tt__write_file_atomic(path, png, len);
    free(png);
    return rc;
}
