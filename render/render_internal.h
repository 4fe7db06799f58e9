/*
 * render/render_internal.h - helpers shared by the PNG and HTML renderers.
 * Internal; not installed.
 */
#ifndef TT_RENDER_INTERNAL_H
#define TT_RENDER_INTERNAL_H

#include "common/buf.h"
#include "tracetool/render.h"

/* One series of the chart: a torch category or the single "Total". */
#define TT_RENDER_GIB (1024.0 * 1024.0 * 1024.0)
#define TT_RENDER_MIB (1024.0 * 1024.0)

/* sRGB components 0..255 of a category's colour (out of range: Unknown). */
void tt__category_rgb(int cat, unsigned char rgb[3]);
/* "#rrggbb" of a category's colour (static). */
const char *tt__category_hex(int cat);

/* Check the pointers a tt_memtl promises; 0 or TT_EINVALID (error set). */
int tt__memtl_check(const tt_memtl *tl);

/* Append s (NULL = "") with invalid UTF-8 sequences replaced by `repl` and
 * control characters (< 0x20, 0x7f) by a space. Returns 0 or TT_ENOMEM. */
int tt__utf8_clean(tt_buf *out, const char *s, const char *repl);

/* The peak line of the title: "Max memory allocated: X.XX GiB   Max memory
 * reserved: Y.YY GiB" + " at T ms in OP (STEP)" when the peak is known.
 * Appended to out, UTF-8 cleaned with `repl`. 0 or TT_ENOMEM. */
int tt__peak_line(tt_buf *out, const tt_memtl *tl, const char *repl);

#endif
