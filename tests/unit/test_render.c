/*
 * tests/unit/test_render.c - the memory-timeline renderers (render/): PNG
 * structure, decoded pixels (torch's colours blended at alpha 0.7 over
 * white inside the plot), edge cases, and the self-contained HTML page.
 */
#include "common/compat.h"

#include <cairo.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>

#include "tracetool/render.h"

#define NPTS 2000
#define MB ((int64_t)1024 * 1024)
#define NASTY_OP "<b>&\"x\"</b>"

/* the plot area of the 1600x960 figure, well inside its frame (the legend
 * with its colour swatches is to the right of x = 1300) */
#define PX0 110
#define PX1 1295
#define PY0 110
#define PY1 880

typedef struct synth {
    int64_t t[NPTS], sizes[NPTS * 9], at[NPTS], alloc[NPTS], res[NPTS];
    tt_memtl_alloc top[2];
    tt_memtl tl;
} synth;

/* 2000 points; category c ramps up to (c + 4) * 32 MiB, except the ones
 * whose bit is set in `zero_mask`; the allocated peak is at point 1500. */
static synth *make_synth(unsigned zero_mask)
{
    synth *s = calloc(1, sizeof(*s));
    size_t i;
    int c;
    cr_assert_not_null(s);
    for (i = 0; i < NPTS; i++) {
        int64_t total = 0;
        double ramp = 0.2 + 0.8 * (double)i / (NPTS - 1);
        s->t[i] = (int64_t)i * 50; /* 0 .. 99.95 ms */
        for (c = 0; c < TT_CAT_COUNT; c++) {
            int64_t v = (zero_mask >> c) & 1 ? 0 : (int64_t)(ramp * (double)((c + 4) * 32 * MB));
            s->sizes[i * 9 + 1 + c] = v;
            total += v;
        }
        s->at[i] = s->t[i];
        s->alloc[i] = total + (i == 1500 ? 512 * MB : 0);
        s->res[i] = 4096 * MB;
    }
    s->top[0] = (tt_memtl_alloc){ 0x7f0000001000LL, 512 * MB, 75000, NASTY_OP,
                                  TT_CAT_ACTIVATION, "rule <&>" };
    s->top[1] = (tt_memtl_alloc){ 0x7f0000200000LL, 64 * MB, 10, "", TT_CAT_UNKNOWN, "" };
    s->tl.title = "test <title> & \"quotes\"";
    s->tl.device = "cuda:0";
    s->tl.categories = 1;
    s->tl.n = NPTS;
    s->tl.t_us = s->t;
    s->tl.sizes = s->sizes;
    s->tl.n_alloc = NPTS;
    s->tl.alloc_t_us = s->at;
    s->tl.allocated = s->alloc;
    s->tl.reserved = s->res;
    s->tl.peak_allocated = s->alloc[1500];
    s->tl.peak_reserved = 4096 * MB;
    s->tl.peak_t_us = s->t[1500];
    s->tl.peak_op = NASTY_OP;
    s->tl.peak_step = "ProfilerStep#7";
    s->tl.n_top = 2;
    s->tl.top = s->top;
    return s;
}

/* ---- PNG helpers ---- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void check_png_header(const unsigned char *png, size_t len)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    cr_assert_gt(len, 33);
    cr_assert(memcmp(png, sig, 8) == 0, "PNG signature");
    cr_assert_eq(be32(png + 8), 13, "IHDR length");
    cr_assert(memcmp(png + 12, "IHDR", 4) == 0, "first chunk is IHDR");
    cr_assert_eq(be32(png + 16), 1600, "width %u", be32(png + 16));
    cr_assert_eq(be32(png + 20), 960, "height %u", be32(png + 20));
    cr_assert(memcmp(png + len - 8, "IEND", 4) == 0, "ends with IEND");
}

typedef struct reader {
    const unsigned char *p;
    size_t len, off;
} reader;

static cairo_status_t read_mem(void *closure, unsigned char *data, unsigned int n)
{
    reader *r = closure;
    if (r->len - r->off < n)
        return CAIRO_STATUS_READ_ERROR;
    memcpy(data, r->p + r->off, n);
    r->off += n;
    return CAIRO_STATUS_SUCCESS;
}

typedef struct image {
    int w, h;
    uint32_t *px; /* 0xRRGGBB */
} image;

static image decode(const unsigned char *png, size_t len)
{
    reader r = { png, len, 0 };
    cairo_surface_t *s = cairo_image_surface_create_from_png_stream(read_mem, &r);
    image im;
    int x, y, stride;
    const unsigned char *data;
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "cairo decodes the PNG");
    im.w = cairo_image_surface_get_width(s);
    im.h = cairo_image_surface_get_height(s);
    stride = cairo_image_surface_get_stride(s);
    data = cairo_image_surface_get_data(s);
    im.px = malloc((size_t)im.w * (size_t)im.h * sizeof(uint32_t));
    cr_assert_not_null(im.px);
    for (y = 0; y < im.h; y++)
        for (x = 0; x < im.w; x++) {
            uint32_t v;
            memcpy(&v, data + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
            im.px[(size_t)y * (size_t)im.w + (size_t)x] = v & 0xffffff; /* opaque */
        }
    cairo_surface_destroy(s);
    return im;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static size_t distinct_colours(const image *im)
{
    size_t n = (size_t)im->w * (size_t)im->h, i, d = 0;
    uint32_t *c = malloc(n * sizeof(*c));
    cr_assert_not_null(c);
    memcpy(c, im->px, n * sizeof(*c));
    qsort(c, n, sizeof(*c), cmp_u32);
    for (i = 0; i < n; i++)
        d += i == 0 || c[i] != c[i - 1];
    free(c);
    return d;
}

/* torch's colour at alpha 0.7 over white */
static uint32_t blended(int cat)
{
    static const uint32_t rgb[TT_CAT_COUNT] = { 0x006400, 0xDAA520, 0x000000, 0x9370DB,
                                                0xFF0000, 0x0000CD, 0x4169E1, 0x808080 };
    uint32_t out = 0;
    int k;
    for (k = 16; k >= 0; k -= 8) {
        double c = (double)((rgb[cat] >> k) & 255);
        out |= (uint32_t)(0.3 * 255.0 + 0.7 * c + 0.5) << k;
    }
    return out;
}

/* pixels of the plot area within `tol` of colour c in every channel */
static size_t count_near(const image *im, uint32_t c, int tol)
{
    size_t n = 0;
    int x, y, k;
    for (y = PY0; y < PY1; y++)
        for (x = PX0; x < PX1; x++) {
            uint32_t p = im->px[(size_t)y * (size_t)im->w + (size_t)x];
            int ok = 1;
            for (k = 0; k <= 16 && ok; k += 8)
                ok = abs((int)((p >> k) & 255) - (int)((c >> k) & 255)) <= tol;
            n += ok;
        }
    return n;
}

static image render(const tt_memtl *tl)
{
    unsigned char *png = NULL;
    size_t len = 0;
    image im;
    int rc = tt_render_png_mem(tl, &png, &len);
    cr_assert_eq(rc, 0, "tt_render_png_mem: %d %s", rc, tt_error_last()->message);
    cr_assert_not_null(png);
    check_png_header(png, len);
    im = decode(png, len);
    free(png);
    cr_assert_eq(im.w, 1600);
    cr_assert_eq(im.h, 960);
    return im;
}

/* ---- palette ---- */

Test(render, category_names_and_colours_are_torchs)
{
    static const char *names[] = { "PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY",
                                   "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", "Unknown" };
    static const char *colors[] = { "darkgreen", "goldenrod", "black", "mediumpurple",
                                    "red", "mediumblue", "royalblue", "grey" };
    int c;
    for (c = 0; c < TT_CAT_COUNT; c++) {
        cr_assert_str_eq(tt_category_name(c), names[c]);
        cr_assert_str_eq(tt_category_color(c), colors[c]);
    }
    cr_assert_str_eq(tt_category_name(-1), "Unknown");
    cr_assert_str_eq(tt_category_color(99), "grey");
}

/* ---- PNG ---- */

Test(render, png_has_every_category_colour_in_the_plot)
{
    synth *s = make_synth(0);
    image im = render(&s->tl);
    int c;
    cr_assert_gt(distinct_colours(&im), 50, "%zu distinct colours", distinct_colours(&im));
    for (c = 0; c < TT_CAT_COUNT; c++) {
        size_t n = count_near(&im, blended(c), 3);
        cr_assert_gt(n, 2000, "%s (#%06x at alpha 0.7) covers %zu plot pixels",
                     tt_category_name(c), blended(c), n);
    }
    free(im.px);
    free(s);
}

Test(render, png_has_no_band_for_an_empty_category)
{
    /* ACTIVATION and GRADIENT always 0: their colours must not be in the plot */
    synth *s = make_synth(1u << TT_CAT_ACTIVATION | 1u << TT_CAT_GRADIENT);
    image im = render(&s->tl);
    cr_assert_lt(count_near(&im, blended(TT_CAT_ACTIVATION), 3), 20);
    cr_assert_lt(count_near(&im, blended(TT_CAT_GRADIENT), 3), 20);
    cr_assert_gt(count_near(&im, blended(TT_CAT_PARAMETER), 3), 2000);
    cr_assert_gt(count_near(&im, blended(TT_CAT_UNKNOWN), 3), 2000);
    free(im.px);
    free(s);
}

Test(render, png_without_categories_is_one_grey_total)
{
    synth *s = make_synth(0);
    image im;
    s->tl.categories = 0;
    im = render(&s->tl);
    /* the total reaches ~1.9 GiB: much of the plot under it is grey */
    cr_assert_gt(count_near(&im, blended(TT_CAT_UNKNOWN), 3), 100000, "grey Total area");
    cr_assert_lt(count_near(&im, blended(TT_CAT_ACTIVATION), 3), 20);
    cr_assert_lt(count_near(&im, blended(TT_CAT_PARAMETER), 3), 20);
    free(im.px);
    free(s);
}

Test(render, png_of_nothing_is_a_valid_empty_figure)
{
    tt_memtl tl;
    image im;
    memset(&tl, 0, sizeof(tl));
    tl.categories = 1;
    im = render(&tl);
    cr_assert_gt(distinct_colours(&im), 2, "axes and text are drawn");
    cr_assert_lt(count_near(&im, blended(TT_CAT_PARAMETER), 3), 20);
    free(im.px);
}

Test(render, png_of_one_point_draws_its_bands)
{
    synth *s = make_synth(0);
    image im;
    s->tl.n = 1;
    s->tl.n_alloc = 1;
    s->tl.t_us = s->t + 10;
    s->tl.sizes = s->sizes + 10 * 9;
    s->tl.alloc_t_us = s->at + 10;
    s->tl.allocated = s->alloc + 10;
    s->tl.reserved = s->res + 10;
    im = render(&s->tl);
    cr_assert_gt(count_near(&im, blended(TT_CAT_UNKNOWN), 3), 2000);
    free(im.px);
    free(s);
}

Test(render, png_survives_zero_negative_and_huge_values)
{
    synth *s = make_synth(0);
    size_t i;
    image im;
    for (i = 0; i < NPTS * 9; i++)
        s->sizes[i] = 0;
    for (i = 0; i < NPTS; i++)
        s->alloc[i] = s->res[i] = 0;
    s->tl.peak_allocated = s->tl.peak_reserved = 0;
    im = render(&s->tl); /* all zero */
    free(im.px);

    for (i = 0; i < NPTS; i++) {
        s->sizes[i * 9 + 1 + TT_CAT_TEMPORARY] = -(int64_t)i * MB; /* drawn as 0 */
        s->sizes[i * 9 + 1 + TT_CAT_PARAMETER] = 100 * MB;
        s->alloc[i] = -5;
        s->t[i] = -1000 + (int64_t)i; /* negative times */
    }
    im = render(&s->tl);
    cr_assert_gt(count_near(&im, blended(TT_CAT_PARAMETER), 3), 2000);
    cr_assert_lt(count_near(&im, blended(TT_CAT_TEMPORARY), 3), 20);
    free(im.px);

    for (i = 0; i < NPTS * 9; i++)
        s->sizes[i] = INT64_MAX / 4; /* the stack sums past INT64_MAX */
    for (i = 0; i < NPTS; i++) {
        s->sizes[i * 9] = 0;
        s->alloc[i] = s->res[i] = INT64_MAX;
        s->t[i] = INT64_MAX / 2 + (int64_t)i;
    }
    s->tl.peak_allocated = s->tl.peak_reserved = INT64_MAX;
    s->tl.peak_t_us = INT64_MAX;
    im = render(&s->tl);
    free(im.px);
    free(s);
}

Test(render, png_accepts_invalid_utf8_and_long_text)
{
    synth *s = make_synth(0);
    char longop[3000];
    image im;
    memset(longop, 'x', sizeof(longop) - 1);
    longop[sizeof(longop) - 1] = '\0';
    longop[10] = '\xc3'; /* a cut UTF-8 sequence */
    s->tl.title = "bad \xff\xfe utf8 \xe2\x82 and \x01 control";
    s->tl.peak_op = longop;
    im = render(&s->tl);
    cr_assert_gt(distinct_colours(&im), 50);
    free(im.px);
    free(s);
}

Test(render, bad_arguments_are_errors)
{
    synth *s = make_synth(0);
    unsigned char *png = (unsigned char *)"x";
    size_t len = 7;
    cr_assert_eq(tt_render_png_mem(NULL, &png, &len), TT_EINVALID);
    cr_assert_null(png);
    cr_assert_eq(len, 0);
    s->tl.sizes = NULL;
    cr_assert_eq(tt_render_png_mem(&s->tl, &png, &len), TT_EINVALID);
    s->tl.sizes = s->sizes;
    s->tl.reserved = NULL;
    cr_assert_eq(tt_render_png_mem(&s->tl, &png, &len), TT_EINVALID);
    s->tl.reserved = s->res;
    s->tl.top = NULL;
    cr_assert_eq(tt_render_html(&s->tl, "/tmp/never-written.html"), TT_EINVALID);
    s->tl.top = s->top;
    cr_assert_eq(tt_render_png(&s->tl, "/nonexistent-dir/x.png"), TT_EIO);
    cr_assert_eq(tt_render_html(&s->tl, "/nonexistent-dir/x.html"), TT_EIO);
    cr_assert_eq(tt_render_png(&s->tl, NULL), TT_EINVALID);
    free(s);
}

Test(render, png_file_matches_the_memory_variant)
{
    synth *s = make_synth(0);
    char path[] = "/tmp/tt_render_XXXXXX";
    unsigned char *mem = NULL, *file;
    size_t len = 0;
    FILE *f;
    long flen;
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(tt_render_png(&s->tl, path), 0);
    cr_assert_eq(tt_render_png_mem(&s->tl, &mem, &len), 0);
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    flen = ftell(f);
    rewind(f);
    cr_assert_eq((size_t)flen, len);
    file = malloc(len);
    cr_assert_eq(fread(file, 1, len, f), len);
    fclose(f);
    cr_assert(memcmp(file, mem, len) == 0, "same bytes");
    unlink(path);
    free(file);
    free(mem);
    free(s);
}

/* ---- HTML ---- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    b = malloc((size_t)n + 1);
    cr_assert_not_null(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode base64 from s up to the first character outside the alphabet. */
static unsigned char *b64decode(const char *s, size_t *out_len)
{
    size_t n = 0, i, o = 0;
    unsigned char *out;
    uint32_t acc = 0;
    int bits = 0;
    while (b64val(s[n]) >= 0)
        n++;
    cr_assert_eq(n % 4 == 0 || s[n] == '=', 1, "base64 length %zu", n);
    out = malloc(n / 4 * 3 + 3);
    cr_assert_not_null(out);
    for (i = 0; i < n; i++) {
        acc = acc << 6 | (uint32_t)b64val(s[i]);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    *out_len = o;
    return out;
}

static char *render_html(const tt_memtl *tl, size_t *len)
{
    char path[] = "/tmp/tt_render_XXXXXX";
    char *html;
    int rc, fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    rc = tt_render_html(tl, path);
    cr_assert_eq(rc, 0, "tt_render_html: %d %s", rc, tt_error_last()->message);
    html = slurp(path, len);
    unlink(path);
    return html;
}

static void check_html_common(const char *html, size_t len)
{
    static const char prefix[] = "data:image/png;base64,";
    const char *p = strstr(html, prefix);
    unsigned char *png;
    size_t plen;
    cr_assert_eq(strlen(html), len, "no NUL bytes");
    cr_assert_not_null(strstr(html, "<meta charset=\"utf-8\">"));
    cr_assert_not_null(strstr(html, "<title>"));
    cr_assert_not_null(p, "embedded PNG");
    png = b64decode(p + strlen(prefix), &plen);
    check_png_header(png, plen);
    free(decode(png, plen).px);
    free(png);
    cr_assert_null(strstr(html, "http://"), "no network URL");
    cr_assert_null(strstr(html, "https://"), "no network URL");
    cr_assert_null(strstr(html, "<script src"), "no external script");
    cr_assert_null(strstr(html, "<link"), "no external stylesheet");
    cr_assert_null(strstr(html, "@import"), "no imported stylesheet");
    cr_assert_not_null(strstr(html, "<svg"), "inline SVG chart");
    cr_assert_not_null(strstr(html, "<script type=\"application/json\" id=\"tt-data\">"));
}

Test(render, html_is_self_contained_and_escaped)
{
    synth *s = make_synth(0);
    size_t len;
    char *html = render_html(&s->tl, &len);
    const char *json;
    check_html_common(html, len);
    cr_assert_null(strstr(html, NASTY_OP), "raw op name must not appear");
    cr_assert_null(strstr(html, "<b>"), "no injected markup");
    cr_assert_null(strstr(html, "<title> &"), "title escaped");
    cr_assert_not_null(strstr(html, "&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;"), "op escaped in HTML");
    cr_assert_not_null(strstr(html, "rule &lt;&amp;&gt;"), "rule escaped");
    cr_assert_not_null(strstr(html, "test &lt;title&gt; &amp; &quot;quotes&quot;"));
    json = strstr(html, "id=\"tt-data\">");
    cr_assert_not_null(strstr(json, "\\u003cb\\u003e\\u0026\\\"x\\\"\\u003c/b\\u003e"),
                       "op escaped in the JSON data");
    cr_assert_not_null(strstr(html, "0x7f0000001000"), "address in hex");
    /* sizes in the chart's one unit (the largest value picks it) */
    cr_assert((strstr(html, "Size (MiB)") && strstr(html, "512.00")) ||
                  (strstr(html, "Size (GiB)") && strstr(html, "0.50")),
              "size in the chart's unit");
    cr_assert_null(strstr(html, " MB"), "no decimal units");
    cr_assert_not_null(strstr(html, "75.000"), "time in ms");
    cr_assert_not_null(strstr(html, "ACTIVATION"));
    cr_assert_not_null(strstr(html, "Max memory allocated: "));
    cr_assert_not_null(strstr(html, "ProfilerStep#7"));
    free(html);
    free(s);
}

Test(render, html_of_nothing_is_valid)
{
    tt_memtl tl;
    size_t len;
    char *html;
    memset(&tl, 0, sizeof(tl));
    html = render_html(&tl, &len);
    check_html_common(html, len);
    cr_assert_not_null(strstr(html, "\"t\":[]"));
    cr_assert_not_null(strstr(html, "No live allocations"));
    free(html);
}

Test(render, html_escapes_script_breakers_and_invalid_utf8)
{
    synth *s = make_synth(0);
    size_t len;
    char *html;
    s->tl.title = "</script><script>alert(1)</script>\xff";
    s->tl.peak_op = "</script>\xe2\x80\xa8";
    s->tl.peak_step = "'\\";
    html = render_html(&s->tl, &len);
    check_html_common(html, len);
    cr_assert_null(strstr(html, "alert(1)</script>"));
    cr_assert_null(strstr(html, "\xff"), "invalid UTF-8 replaced");
    cr_assert_null(strstr(strstr(html, "id=\"tt-data\">"), "\xe2\x80\xa8"),
                   "U+2028 escaped in the JSON data");
    cr_assert_not_null(strstr(html, "\"step\":\"\\u0027\\\\\""));
    free(html);
    free(s);
}

/* ---- issue 11: one binary unit scaled to the data, steps, the band of the
 * memory live before the trace, the base name in the title ---- */

Test(render, html_unit_follows_the_data)
{
    synth *s = make_synth(0);
    size_t len, i;
    char *html;
    /* the synthetic timeline reaches ~5 GiB: GiB everywhere */
    html = render_html(&s->tl, &len);
    cr_assert_not_null(strstr(html, "\"unit\":\"GiB\""));
    cr_assert_not_null(strstr(html, "Max memory allocated: "));
    cr_assert_null(strstr(html, "Memory (GB)"), "no decimal GB label");
    free(html);
    /* a few bytes: B, and the ticks never in scientific notation */
    for (i = 0; i < NPTS; i++) {
        int c;
        for (c = 1; c < 9; c++)
            s->sizes[i * 9 + c] = c == 8 ? (int64_t)(i % 9) : 0;
        s->alloc[i] = s->res[i] = 8;
    }
    s->tl.peak_allocated = s->tl.peak_reserved = 8;
    html = render_html(&s->tl, &len);
    cr_assert_not_null(strstr(html, "\"unit\":\"B\",\"div\":1"), "bytes for a tiny timeline");
    cr_assert_not_null(strstr(html, "Max memory allocated: 8.00 B"));
    free(html);
    free(s);
}

Test(render, png_areas_are_steps)
{
    /* two points: 0 until t = 50 ms, then 1 GiB: with steps, the column just
     * before 50 ms is white (linear interpolation would have half filled it) */
    static int64_t t[2] = { 0, 50000 }, sz[18], at[1] = { 0 }, al[1] = { 0 };
    tt_memtl tl;
    image im;
    int x, y, grey = 0;
    memset(&tl, 0, sizeof(tl));
    sz[9 + 1 + TT_CAT_UNKNOWN] = 1024 * MB;
    sz[9 + 1 + TT_CAT_PARAMETER] = 0;
    tl.categories = 1;
    tl.n = 2;
    tl.t_us = t;
    tl.sizes = sz;
    tl.n_alloc = 0;
    (void)at;
    (void)al;
    im = render(&tl);
    /* x for 40 ms of 0..50: between PX0 and PX1, at 80% of the time axis */
    x = PX0 + (int)(0.78 * (PX1 - PX0));
    for (y = PY0; y < PY1; y++) {
        uint32_t p = im.px[(size_t)y * (size_t)im.w + (size_t)x] & 0xffffff;
        grey += p != 0xffffff && ((p >> 16) & 255) == ((p >> 8) & 255) &&
                ((p >> 8) & 255) == (p & 255) && (p & 255) < 0xe0;
    }
    cr_assert_lt(grey, 20, "a grey area before the step (%d px): interpolated", grey);
    free(im.px);
}

Test(render, png_draws_the_memory_live_before_the_trace)
{
    synth *s = make_synth(0);
    int64_t before[NPTS];
    size_t i;
    image im;
    for (i = 0; i < NPTS; i++)
        before[i] = 2048 * MB;
    im = render(&s->tl);
    cr_assert_lt(count_near(&im, 0xd3d3d3, 2), 500, "no band without `before`");
    free(im.px);
    s->tl.before = before;
    im = render(&s->tl);
    cr_assert_gt(count_near(&im, 0xd3d3d3, 2), 50000, "the band of the memory live before");
    free(im.px);
    free(s);
}

Test(render, title_shows_the_base_name)
{
    synth *s = make_synth(0);
    size_t len;
    char *html;
    s->tl.title = "/very/long/absolute/path/to/trace.json.gz";
    html = render_html(&s->tl, &len);
    cr_assert_not_null(strstr(html, "trace.json.gz"));
    cr_assert_null(strstr(html, "/very/long"), "the path is not in the page");
    free(html);
    free(s);
}
