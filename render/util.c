/*
 * render/util.c - checks and text helpers shared by the renderers.
 */
#include "common/compat.h"
#include "render/render_internal.h"


int tt__memtl_check(const tt_memtl *tl)
{
    size_t cells;
    if (!tl)
        return tt_error_set(TT_EINVALID, "no memory timeline given");
    if (tl->n && (!tl->t_us || !tl->sizes))
        return tt_error_set(TT_EINVALID, "memory timeline has %zu points but no data", tl->n);
    if (tt_st_mult(&cells, tl->n, 9))
        return tt_error_set(TT_EINVALID, "memory timeline too long (%zu points)", tl->n);
    if (tl->n_alloc && (!tl->alloc_t_us || !tl->allocated || !tl->reserved))
        return tt_error_set(TT_EINVALID,
                            "allocator curve has %zu points but no data", tl->n_alloc);
    if (tl->n_top && !tl->top)
        return tt_error_set(TT_EINVALID,
                            "%zu top allocations announced but none given", tl->n_top);
    return 0;
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80)
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

int tt__utf8_clean(tt_buf *out, const char *s, const char *repl)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t k = utf8_seq(p); /* NUL stops every multi-byte check early */
        if (k == 0) {
            tt_buf_addstr(out, repl);
            p++;
        } else if (k == 1 && (*p < 0x20 || *p == 0x7f)) {
            tt_buf_addch(out, ' ');
            p++;
        } else {
            tt_buf_add(out, p, k);
            p += k;
        }
    }
    return out->oom ? TT_ENOMEM : 0;
}

double tt__unit_for(double max_bytes, const char **name)
{
    static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double div = 1.0;
    int k = 0;
    while (k < 4 && max_bytes >= div * 1024.0) {
        div *= 1024.0;
        k++;
    }
    *name = names[k];
    return div;
}

double tt__memtl_max_bytes(const tt_memtl *tl)
{
    double m = (double)tl->peak_allocated;
    size_t i;
    int c;
    for (i = 0; i < tl->n; i++) {
        double tot = 0.0;
        for (c = 1; c < 9; c++)
            tot += tl->sizes[i * 9 + c] > 0 ? (double)tl->sizes[i * 9 + c] : 0.0;
        if (tl->before && tl->before[i] > 0)
            tot += (double)tl->before[i];
        if (tot > m)
            m = tot;
    }
    for (i = 0; i < tl->n_alloc; i++) {
        if ((double)tl->allocated[i] > m)
            m = (double)tl->allocated[i];
        if ((double)tl->reserved[i] > m)
            m = (double)tl->reserved[i];
    }
    return m;
}

int tt__peak_line(tt_buf *out, const tt_memtl *tl, const char *repl)
{
    const char *unit;
    double div = tt__unit_for(tt__memtl_max_bytes(tl), &unit);
    /* the time and op describe the allocated peak, so they follow it */
    tt_buf_addf(out, "Max memory allocated: %.2f %s", (double)tl->peak_allocated / div, unit);
    if (tl->peak_allocated > 0) {
        tt_buf_addf(out, " at %.3f ms", (double)tl->peak_t_us / 1000.0);
        if (tl->peak_op && *tl->peak_op) {
            tt_buf_addstr(out, " in ");
            tt__utf8_clean(out, tl->peak_op, repl);
        }
        if (tl->peak_step && *tl->peak_step) {
            tt_buf_addstr(out, " (");
            tt__utf8_clean(out, tl->peak_step, repl);
            tt_buf_addch(out, ')');
        }
    }
    if (tl->peak_reserved > 0 || tl->n_alloc) /* a trace without totals has none */
        tt_buf_addf(out, "   Max memory reserved: %.2f %s", (double)tl->peak_reserved / div,
                    unit);
    return out->oom ? TT_ENOMEM : 0;
}

const char *tt__base_name(const char *title)
{
    const char *slash = strrchr(title, '/');
    return slash && slash[1] ? slash + 1 : title;
}

void tt__add_html(tt_buf *b, const char *s)
{
    tt_buf clean = TT_BUF_INIT;
    const char *p;
    if (tt__utf8_clean(&clean, s, "\xef\xbf\xbd")) { /* U+FFFD */
        b->oom = 1;
        return;
    }
    for (p = clean.buf; *p; p++) {
        switch (*p) {
        case '&': tt_buf_addstr(b, "&amp;"); break;
        case '<': tt_buf_addstr(b, "&lt;"); break;
        case '>': tt_buf_addstr(b, "&gt;"); break;
        case '"': tt_buf_addstr(b, "&quot;"); break;
        case '\'': tt_buf_addstr(b, "&#39;"); break;
        default: tt_buf_addch(b, *p);
        }
    }
    tt_buf_release(&clean);
}
