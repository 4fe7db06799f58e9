/*
 * render/breakdown_html.c - `tracetool breakdown --html`: one self-contained
 * page with a stacked bar per rank (its GPU window split into compute,
 * exposed communication, copies and sets under no kernel, and the three
 * kinds of idle), with `--by step|stream` a bar per step or stream of each
 * rank too, the launch-delay histogram and tables of the numbers.
 *
 * The charts are inline SVG written here (no script): each part is a <rect>
 * with a <title> (the browser's tooltip) and data-* attributes giving its
 * rank, part and nanoseconds, so a test can read back what was drawn. The
 * longest window is the full width: a slow rank's bar is longer.
 */
#include "common/compat.h"
#include "report/out.h"
#include "render/render_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>

#define BAR_W 900.0  /* px of the longest window */
#define LABEL_W 190.0
#define ROW_H 26.0
#define HIST_W 900.0
#define HIST_H 220.0

static const char *const part_names[TT_BD_PART_COUNT] = {
    "compute", "exposed communication", "memcpy / memset only", "idle: host wait",
    "idle: kernel wait", "idle: other",
};
/* Tableau 10: blue, red, green, orange, yellow, grey */
static const char *const part_colors[TT_BD_PART_COUNT] = {
    "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#edc948", "#bab0ac",
};
static const char *const part_keys[TT_BD_PART_COUNT] = {
    "compute", "exposed_comm", "memory_only", "host_wait", "kernel_wait", "other_idle",
};

const char *tt_bd_part_name(int part)
{
    return part >= 0 && part < TT_BD_PART_COUNT ? part_names[part] : "";
}

const char *tt_bd_part_color(int part)
{
    return part >= 0 && part < TT_BD_PART_COUNT ? part_colors[part] : "#000000";
}

static const char *const css =
    ":root { color-scheme: light; }\n"
    "body { margin: 0; padding: 24px 32px 40px; background: #f4f5f7; color: #1a1a1a;\n"
    "  font: 14px/1.45 system-ui, -apple-system, \"Segoe UI\", Roboto, \"DejaVu Sans\", Arial, "
    "sans-serif; }\n"
    "h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; word-break: break-word; }\n"
    ".meta { margin: 0 0 18px; color: #555; word-break: break-word; }\n"
    ".card { background: #fff; border: 1px solid #dcdfe4; border-radius: 8px; "
    "padding: 16px 20px 18px; margin: 0 0 20px; overflow-x: auto; }\n"
    ".card h2 { margin: 0 0 10px; font-size: 16px; font-weight: 600; }\n"
    "svg text { font-size: 12px; fill: #333; font-variant-numeric: tabular-nums; }\n"
    "svg .slow { fill: #c00000; font-weight: 600; }\n"
    ".legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin-top: 8px; font-size: 13px; }\n"
    ".legend i { display: inline-block; width: 14px; height: 11px; margin-right: 6px; }\n"
    "table { border-collapse: collapse; font-size: 13px; }\n"
    "th, td { padding: 3px 8px; border-bottom: 1px solid #eee; }\n"
    /* headers wrap between words, numbers never: the table fits 1400 px */
    "th { vertical-align: bottom; font-weight: 600; }\n"
    "td { white-space: nowrap; }\n"
    "td { text-align: right; font-variant-numeric: tabular-nums; }\n"
    "td:first-child, th:first-child { text-align: left; }\n"
    "footer { color: #888; font-size: 12px; }\n";

/* the parts of a rank, clamped at 0, in drawing order */
static void parts_of(const tt_render_bd_rank *r, int64_t v[TT_BD_PART_COUNT])
{
    int i;
    v[TT_BD_PART_COMPUTE] = r->compute_ns;
    v[TT_BD_PART_EXPOSED_COMM] = r->exposed_comm_ns;
    v[TT_BD_PART_MEMORY] = r->memory_only_ns;
    v[TT_BD_PART_HOST_WAIT] = r->host_wait_ns;
    v[TT_BD_PART_KERNEL_WAIT] = r->kernel_wait_ns;
    v[TT_BD_PART_OTHER_IDLE] = r->other_idle_ns;
    for (i = 0; i < TT_BD_PART_COUNT; i++)
        if (v[i] < 0)
            v[i] = 0;
}

static void add_ms(tt_buf *b, double ns)
{
    tt_buf_addf(b, "%.3f ms", ns / 1e6);
}

/* a delay as the histogram labels it: 1 µs, 250 µs, 1.5 ms, 2 s */
static void add_dur(tt_buf *b, int64_t ns)
{
    if (ns < 1000)
        tt_buf_addf(b, "%" PRId64 " ns", ns);
    else if (ns < 1000000)
        tt_buf_addf(b, "%g \xc2\xb5s", (double)ns / 1e3);
    else if (ns < 1000000000)
        tt_buf_addf(b, "%g ms", (double)ns / 1e6);
    else
        tt_buf_addf(b, "%g s", (double)ns / 1e9);
}

/* a stacked bar per row (the ranks, or the units: data-unit), the longest
 * window full width; slowest: the row marked, (size_t)-1 none */
static void add_bars(tt_buf *b, const char *id, const char *aria, const tt_render_bd_rank *rows,
                     size_t n, size_t slowest, int units)
{
    int64_t longest = 1;
    double h = (double)n * ROW_H + 30.0;
    size_t i;
    int p;
    for (i = 0; i < n; i++)
        if (rows[i].window_ns > longest)
            longest = rows[i].window_ns;
    tt_buf_addf(b, "<svg id=\"%s\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
                   "aria-label=\"%s\">\n", id, LABEL_W + BAR_W + 120.0, h, aria);
    for (i = 0; i < n; i++) {
        const tt_render_bd_rank *r = &rows[i];
        int64_t v[TT_BD_PART_COUNT];
        double x = LABEL_W, y = (double)i * ROW_H + 4.0;
        tt_buf_addf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\"%s>", LABEL_W - 8.0,
                    y + 14.0, i == slowest ? " class=\"slow\"" : "");
        tt__add_html(b, r->label ? r->label : "");
        tt_buf_addstr(b, i == slowest ? " (slowest)</text>\n" : "</text>\n");
        parts_of(r, v);
        for (p = 0; p < TT_BD_PART_COUNT; p++) {
            double w = BAR_W * (double)v[p] / (double)longest;
            if (v[p] == 0)
                continue;
            tt_buf_addf(b, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"18\" fill=\"%s\" "
                           "data-%s=\"%zu\" data-part=\"%s\" data-ns=\"%" PRId64 "\"><title>",
                        x, y, w, part_colors[p], units ? "unit" : "rank", i, part_keys[p], v[p]);
            tt__add_html(b, r->label ? r->label : "");
            tt_buf_addf(b, ": %s ", part_names[p]);
            add_ms(b, (double)v[p]);
            tt_buf_addf(b, " (%.1f%%)</title></rect>\n",
                        r->window_ns > 0 ? 100.0 * (double)v[p] / (double)r->window_ns : 0.0);
            x += w;
        }
        tt_buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\">", x + 6.0, y + 14.0);
        add_ms(b, (double)r->window_ns);
        tt_buf_addstr(b, "</text>\n");
    }
    tt_buf_addstr(b, "</svg>\n");
}

static void add_legend(tt_buf *b)
{
    int p;
    tt_buf_addstr(b, "<div class=\"legend\">");
    for (p = 0; p < TT_BD_PART_COUNT; p++)
        tt_buf_addf(b, "<span><i style=\"background:%s\"></i>%s</span>", part_colors[p],
                    part_names[p]);
    tt_buf_addstr(b, "</div>\n");
}

static void add_histogram(tt_buf *b, const tt_render_bd *bd)
{
    int64_t most = 1, total = 0;
    double bw;
    size_t i;
    if (!bd->nbins) {
        tt_buf_addstr(b, "<p>No kernel launch with its runtime call in these traces.</p>\n");
        return;
    }
    for (i = 0; i < bd->nbins; i++) {
        if (bd->bin_count[i] > most)
            most = bd->bin_count[i];
        total += bd->bin_count[i] > 0 ? bd->bin_count[i] : 0;
    }
    bw = HIST_W / (double)bd->nbins;
    tt_buf_addf(b, "<svg id=\"tt-hist\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
                   "aria-label=\"launch delay histogram\">\n", HIST_W + 60.0, HIST_H + 50.0);
    tt_buf_addf(b, "<text x=\"0\" y=\"12\">%" PRId64 "</text>\n", most);
    for (i = 0; i < bd->nbins; i++) {
        int64_t c = bd->bin_count[i] > 0 ? bd->bin_count[i] : 0;
        double hh = HIST_H * (double)c / (double)most, x = 50.0 + (double)i * bw;
        tt_buf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#4e79a7\" "
                       "data-bin=\"%zu\" data-count=\"%" PRId64 "\"><title>", x + 1.0,
                    20.0 + HIST_H - hh, bw - 2.0 > 1.0 ? bw - 2.0 : 1.0, hh, i, c);
        add_dur(b, bd->bin_lo_ns[i]);
        if (i + 1 < bd->nbins) {
            tt_buf_addstr(b, " to ");
            add_dur(b, bd->bin_lo_ns[i + 1]);
        } else {
            tt_buf_addstr(b, " and more");
        }
        tt_buf_addf(b, ": %" PRId64 " launches (%.1f%%)</title></rect>\n", c,
                    total ? 100.0 * (double)c / (double)total : 0.0);
        if (i % 2 == 0) {
            tt_buf_addf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">", x,
                        HIST_H + 38.0);
            add_dur(b, bd->bin_lo_ns[i]);
            tt_buf_addstr(b, "</text>\n");
        }
    }
    tt_buf_addf(b, "<line x1=\"50\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>\n",
                20.0 + HIST_H, 50.0 + HIST_W, 20.0 + HIST_H);
    tt_buf_addstr(b, "</svg>\n<p class=\"meta\">Launch delay: kernel start - start of the "
                     "runtime call that launched it.</p>\n");
}

/* the numbers of the rows; unit: their name ("step"), NULL for the ranks
 * (which have a median step column) */
static void add_table(tt_buf *b, const char *id, const tt_render_bd_rank *rows, size_t n,
                      const char *unit)
{
    static const char *const head[] = { "rank", "step (ms)", "window (ms)", "compute",
                                        "communication", "hidden by compute",
                                        "exposed communication", "memcpy / memset only",
                                        "idle: host wait", "idle: kernel wait", "idle: other" };
    size_t i, k;
    tt_buf_addf(b, "<table id=\"%s\">\n<tr>", id);
    for (k = 0; k < TT_ARRAY_SIZE(head); k++) {
        if (k == 0 && unit)
            tt_buf_addf(b, "<th>rank, %s</th>", unit);
        else if (k != 1 || !unit)
            tt_buf_addf(b, "<th>%s</th>", head[k]);
    }
    tt_buf_addstr(b, "</tr>\n");
    for (i = 0; i < n; i++) {
        const tt_render_bd_rank *r = &rows[i];
        int64_t v[TT_BD_PART_COUNT];
        parts_of(r, v);
        tt_buf_addstr(b, "<tr><td>");
        tt__add_html(b, r->label ? r->label : "");
        if (unit)
            tt_buf_addstr(b, "</td>");
        else if (isnan(r->step_ns))
            tt_buf_addstr(b, "</td><td>\xe2\x80\x94</td>");
        else
            tt_buf_addf(b, "</td><td>%.3f</td>", r->step_ns / 1e6);
        tt_buf_addf(b, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>",
                    (double)r->window_ns / 1e6, (double)v[TT_BD_PART_COMPUTE] / 1e6,
                    (double)r->comm_ns / 1e6, (double)r->overlap_ns / 1e6);
        for (k = TT_BD_PART_EXPOSED_COMM; k < TT_BD_PART_COUNT; k++)
            tt_buf_addf(b, "<td>%.3f</td>", (double)v[k] / 1e6);
        tt_buf_addstr(b, "</tr>\n");
    }
    tt_buf_addstr(b, "</table>\n<p class=\"meta\">Times in ms; the parts of a window add up "
                     "to it.</p>\n");
}

/* the units' name as it goes into the page: a plain word, else "unit" */
static const char *unit_word(const char *s)
{
    size_t i;
    for (i = 0; s && s[i]; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != ' ' && s[i] != '-')
            break;
    return s && *s && !s[i] && i <= 40 ? s : "unit";
}

static int check(const tt_render_bd *bd)
{
    if (!bd || (bd->nranks && !bd->ranks) || (bd->nunits && !bd->units) ||
        (bd->nbins && (!bd->bin_lo_ns || !bd->bin_count)))
        return tt_error_set(TT_EINVALID, "breakdown page: missing data");
    return 0;
}

int tt_render_breakdown_html(const tt_render_bd *bd, const char *path)
{
    tt_buf b = TT_BUF_INIT;
    const char *unit;
    char unit_aria[64];
    int rc;
    if (!path || !*path)
        return tt_error_set(TT_EINVALID, "no output file given");
    if ((rc = check(bd)) < 0)
        return rc;
    unit = unit_word(bd->unit_name);
    snprintf(unit_aria, sizeof(unit_aria), "GPU time per %s", unit);
    tt_buf_addstr(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                      "<title>tracetool breakdown");
    if (bd->title && *bd->title) {
        tt_buf_addstr(&b, " \xc2\xb7 ");
        tt__add_html(&b, tt__base_name(bd->title));
    }
    tt_buf_addf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>"
                    "Where the GPU time goes</h1>\n<p class=\"meta\">", css);
    tt__add_html(&b, bd->title ? tt__base_name(bd->title) : "");
    if (bd->subtitle && *bd->subtitle) {
        tt_buf_addstr(&b, " \xc2\xb7 ");
        tt__add_html(&b, bd->subtitle);
    }
    tt_buf_addstr(&b, "</p></header>\n<section class=\"card\"><h2>Each rank's window, "
                      "first to last GPU activity</h2>\n");
    add_bars(&b, "tt-bars", "GPU time per rank", bd->ranks, bd->nranks, bd->slowest, 0);
    add_legend(&b);
    if (bd->nunits) {
        tt_buf_addf(&b, "</section>\n<section class=\"card\" id=\"tt-units\"><h2>Each %s of "
                        "each rank, first to last GPU activity</h2>\n", unit);
        add_bars(&b, "tt-unit-bars", unit_aria, bd->units, bd->nunits, (size_t)-1, 1);
        add_legend(&b);
    }
    tt_buf_addstr(&b, "</section>\n<section class=\"card\"><h2>Kernel launch delay</h2>\n");
    add_histogram(&b, bd);
    tt_buf_addstr(&b, "</section>\n<section class=\"card\"><h2>Numbers</h2>\n");
    add_table(&b, "tt-table", bd->ranks, bd->nranks, NULL);
    if (bd->nunits) {
        tt_buf_addf(&b, "</section>\n<section class=\"card\"><h2>Numbers per %s</h2>\n", unit);
        add_table(&b, "tt-unit-table", bd->units, bd->nunits, unit);
    }
    tt_buf_addstr(&b, "</section>\n<footer>tracetool " TT_VERSION "</footer>\n</body>\n</html>\n");
    if (b.oom) {
        tt_buf_release(&b);
        return tt_error_set(TT_ENOMEM, "building the breakdown page: out of memory");
    }
    rc = tt__write_file_atomic(path, b.buf, b.len);
    tt_buf_release(&b);
    return rc;
}
