/*
 * render/render_internal.h - helpers shared by the PNG and HTML renderers.
 * Internal; not installed.
 */
#ifndef TT_RENDER_INTERNAL_H
#define TT_RENDER_INTERNAL_H

#include "common/buf.h"
#include "tracetool/render.h"


/* sRGB components 0..255 of a category's colour (out of range: Unknown). */
void tt__category_rgb(int cat, unsigned char rgb[3]);
/* "#rrggbb" of a category's colour (static). */
const char *tt__category_hex(int cat);

/* Check the pointers a tt_memtl promises; 0 or TT_EINVALID (error set). */
int tt__memtl_check(const tt_memtl *tl);

/* Append s (NULL = "") with invalid UTF-8 sequences replaced by `repl` and
 * control characters (< 0x20, 0x7f) by a space. Returns 0 or TT_ENOMEM. */
int tt__utf8_clean(tt_buf *out, const char *s, const char *repl);

/* Append s UTF-8 cleaned (U+FFFD) and HTML-escaped (& < > " '); an
 * allocation failure sets b->oom. */
void tt__add_html(tt_buf *b, const char *s);

/* The unit of a chart whose largest value is max_bytes: one binary family
 * everywhere (B, KiB, MiB, GiB, TiB), the largest unit the data reaches.
 * Returns the divisor; *name its name ("MiB"). */
double tt__unit_for(double max_bytes, const char **name);
/* The largest value a timeline draws: the stacked total (with the memory live
 * before the trace), Total Allocated / Reserved and the allocated peak. */
double tt__memtl_max_bytes(const tt_memtl *tl);

/* What follows the last '/' of a title (a path says nothing in a title). */
const char *tt__base_name(const char *title);

/* The peak line of the title: "Max memory allocated: X.XX MiB   Max memory
 * reserved: Y.YY MiB" (the chart's unit) + " at T ms in OP (STEP)" when the
 * peak is known. Appended to out, UTF-8 cleaned with `repl`. 0 or
 * TT_ENOMEM. */
int tt__peak_line(tt_buf *out, const tt_memtl *tl, const char *repl);

#endif
