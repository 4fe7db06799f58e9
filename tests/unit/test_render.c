/*
 * tests/unit/test_render.c - the memory-timeline renderers on synthetic
 * series: PNG size and pixels (decoded back with cairo), torch's colours,
 * the empty case, and the HTML page's embedding and escaping.
 */
#include "common/compat.h"
#include "tracetool/render.h"

#include <cairo.h>
#include <criterion/criterion.h>
#include <unistd.h>

#define NPTS 2000
#define NCOL 9

static int64_t t_us[NPTS], sizes[NPTS * NCOL];
static int64_t at[NPTS], aa[NPTS], ar[NPTS];

/* categories ACTIVATION (4) and GRADIENT (5) ramp up, TEMPORARY (3) pulses */
static tt_memtl make_series(int categories, const tt_memtl_alloc *top, size_t ntop)
{
    tt_memtl tl;
    size_t i;
    memset(&tl, 0, sizeof(tl));
    for (i = 0; i < NPTS; i++) {
        int64_t *s = &sizes[i * NCOL];
        memset(s, 0, sizeof(int64_t) * NCOL);
        t_us[i] = (int64_t)i * 1000;
        s[1 + TT_CAT_ACTIVATION] = (int64_t)i * (1 << 20);
        s[1 + TT_CAT_GRADIENT] = (int64_t)(NPTS - i) * (1 << 19);
        s[1 + TT_CAT_TEMPORARY] = (i % 100) < 50 ? (int64_t)300 << 20 : 0;
        at[i] = t_us[i];
        aa[i] = s[5] + s[6] + s[4];
        ar[i] = (int64_t)4 << 30;
    }
    tl.title = "synthetic";
    tl.device = "cuda:0";
    tl.categories = categories;
    tl.n = NPTS;
    tl.t_us = t_us;
    tl.sizes = sizes;
    tl.n_alloc = NPTS;
    tl.alloc_t_us = at;
    tl.allocated = aa;
    tl.reserved = ar;
    tl.peak_allocated = aa[NPTS - 1];
    tl.peak_reserved = (int64_t)4 << 30;
    tl.peak_t_us = t_us[NPTS - 1];
    tl.peak_op = "aten::mm";
    tl.peak_step = "ProfilerStep#3";
    tl.n_top = ntop;
    tl.top = top;
    return tl;
}

struct reader {
    const unsigned char *p;
    size_t n, off;
};

static cairo_status_t read_mem(void *closure, unsigned char *data, unsigned int len)
{
    struct reader *r = closure;
    if (r->off + len > r->n)
        return CAIRO_STATUS_READ_ERROR;
    memcpy(data, r->p + r->off, len);
    r->off += len;
    return CAIRO_STATUS_SUCCESS;
}

static cairo_surface_t *decode(const unsigned char *png, size_t len)
{
    struct reader r = { png, len, 0 };
    return cairo_image_surface_create_from_png_stream(read_mem, &r);
}

/* is a pixel within tol of the colour blended at alpha 0.7 over white? */
static int has_color(cairo_surface_t *s, unsigned rgb, int tol)
{
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s), x, y;
    const unsigned char *d;
    int er = (int)(0.7 * ((rgb >> 16) & 255) + 0.3 * 255 + 0.5);
    int eg = (int)(0.7 * ((rgb >> 8) & 255) + 0.3 * 255 + 0.5);
    int eb = (int)(0.7 * (rgb & 255) + 0.3 * 255 + 0.5);
    cairo_surface_flush(s);
    d = cairo_image_surface_get_data(s);
    for (y = 0; y < h; y += 2) {
        for (x = 0; x < w; x += 2) {
            uint32_t px;
            memcpy(&px, d + y * stride + x * 4, 4);
            if (abs((int)((px >> 16) & 255) - er) <= tol && abs((int)((px >> 8) & 255) - eg) <= tol &&
                abs((int)(px & 255) - eb) <= tol)
                return 1;
        }
    }
    return 0;
}

static int distinct_colors(cairo_surface_t *s)
{
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s), x, y, n = 0;
    uint32_t seen[64];
    const unsigned char *d = cairo_image_surface_get_data(s);
    for (y = 0; y < h && n < 64; y += 7) {
        for (x = 0; x < w && n < 64; x += 7) {
            uint32_t px;
            int k, found = 0;
            memcpy(&px, d + y * stride + x * 4, 4);
            for (k = 0; k < n; k++)
                found |= seen[k] == px;
            if (!found)
                seen[n++] = px;
        }
    }
    return n;
}

Test(render, png_is_1600x960_with_torch_colours)
{
    tt_memtl tl = make_series(1, NULL, 0);
    unsigned char *png = NULL;
    size_t len = 0;
    cairo_surface_t *s;
    cr_assert_eq(tt_render_png_mem(&tl, &png, &len), 0, "%s", tt_error_last()->message);
    cr_assert_gt(len, 1000);
    cr_assert_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
    s = decode(png, len);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    cr_assert_eq(cairo_image_surface_get_width(s), 1600);
    cr_assert_eq(cairo_image_surface_get_height(s), 960);
    cr_assert_gt(distinct_colors(s), 20, "blank image");
    cr_assert(has_color(s, 0xFF0000, 10), "ACTIVATION red missing");
    cr_assert(has_color(s, 0x0000CD, 10), "GRADIENT mediumblue missing");
    cr_assert(has_color(s, 0x9370DB, 10), "TEMPORARY mediumpurple missing");
    cairo_surface_destroy(s);
    free(png);
}

Test(render, no_categories_draws_grey_total)
{
    tt_memtl tl = make_series(0, NULL, 0);
    unsigned char *png = NULL;
    size_t len = 0;
    cairo_surface_t *s;
    cr_assert_eq(tt_render_png_mem(&tl, &png, &len), 0);
    s = decode(png, len);
    cr_assert(has_color(s, 0x808080, 10), "grey total missing");
    cr_assert_not(has_color(s, 0xFF0000, 6), "category colour drawn with categories off");
    cairo_surface_destroy(s);
    free(png);
}

Test(render, empty_series_is_a_valid_png)
{
    tt_memtl tl;
    unsigned char *png = NULL;
    size_t len = 0;
    cairo_surface_t *s;
    memset(&tl, 0, sizeof(tl));
    tl.device = "cpu";
    tl.categories = 1;
    cr_assert_eq(tt_render_png_mem(&tl, &png, &len), 0, "%s", tt_error_last()->message);
    s = decode(png, len);
    cr_assert_eq(cairo_image_surface_get_width(s), 1600);
    cr_assert_eq(cairo_image_surface_get_height(s), 960);
    cairo_surface_destroy(s);
    free(png);
}

Test(render, names_and_colours_are_torchs)
{
    cr_assert_str_eq(tt_category_name(TT_CAT_PARAMETER), "PARAMETER");
    cr_assert_str_eq(tt_category_name(TT_CAT_UNKNOWN), "Unknown");
    cr_assert_str_eq(tt_category_color(TT_CAT_ACTIVATION), "red");
    cr_assert_str_eq(tt_category_color(TT_CAT_OPTIMIZER_STATE), "goldenrod");
}

Test(render, html_embeds_png_and_escapes)
{
    tt_memtl_alloc top[1];
    tt_memtl tl;
    char path[] = "/tmp/tt-render-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    char *text;
    long n;
    cr_assert_geq(fd, 0);
    close(fd);
    memset(top, 0, sizeof(top));
    top[0].addr = 0x7f0000001000;
    top[0].bytes = 1 << 20;
    top[0].op = "<b>&\"x\"";
    top[0].category = TT_CAT_ACTIVATION;
    top[0].rule = "rule <i>";
    tl = make_series(1, top, 1);
    cr_assert_eq(tt_render_html(&tl, path), 0, "%s", tt_error_last()->message);
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    text = malloc((size_t)n + 1);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    cr_assert_not_null(strstr(text, "data:image/png;base64,iVBORw0KGgo"), "no embedded PNG");
    cr_assert_null(strstr(text, "http://"));
    cr_assert_null(strstr(text, "https://"));
    cr_assert_null(strstr(text, "<script src"));
    cr_assert_null(strstr(text, "<b>&\"x\""), "op name not escaped");
    cr_assert_null(strstr(text, "rule <i>"), "rule not escaped");
    free(text);
}
