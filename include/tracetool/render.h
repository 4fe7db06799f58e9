/*
 * tracetool/render.h - drawing results: the memory timeline as a PNG (cairo)
 * and as one self-contained HTML page.
 *
 * The renderer takes plain result structs (no SQLite): analyze/ computes the
 * timeline and hands over an already downsampled series (at most a few
 * thousand points, peaks kept), so memory here never depends on trace size.
 */
#ifndef TRACETOOL_RENDER_H
#define TRACETOOL_RENDER_H

#include "tracetool/common.h"

TT_BEGIN_DECL

/* torch's categories, in torch's _CATEGORY_TO_INDEX order (series 1..8) */
enum {
    TT_CAT_PARAMETER = 0,
    TT_CAT_OPTIMIZER_STATE,
    TT_CAT_INPUT,
    TT_CAT_TEMPORARY,
    TT_CAT_ACTIVATION,
    TT_CAT_GRADIENT,
    TT_CAT_AUTOGRAD_DETAIL,
    TT_CAT_UNKNOWN,
    TT_CAT_COUNT
};

/* "PARAMETER", ..., "Unknown" and torch's matplotlib colour names
 * ("darkgreen", "goldenrod", "black", "mediumpurple", "red", "mediumblue",
 * "royalblue", "grey"). */
TT_EXTERN(const char *) tt_category_name(int cat);
TT_EXTERN(const char *) tt_category_color(int cat);

typedef struct tt_memtl_alloc {
    int64_t addr;
    int64_t bytes;
    int64_t t_us;        /* allocation time, µs from the timeline start */
    const char *op;      /* enclosing op at allocation, "" if none */
    int category;        /* TT_CAT_* */
    const char *rule;    /* which heuristic gave the category */
} tt_memtl_alloc;

typedef struct tt_memtl {
    const char *title;       /* e.g. the trace file name (shown from after its
                                last '/'); may be NULL */
    const char *device;      /* "cuda:0", "cpu", ... */
    int categories;          /* 0: one "Total" series (--no-categories) */
    /* the category series, downsampled: n points, times in µs from the
     * timeline start, sizes[i * 9 + c] bytes (c = 0 baseline, always 0;
     * 1..8 = TT_CAT_* + 1) */
    size_t n;
    const int64_t *t_us;
    const int64_t *sizes;
    /* the allocator's own view (may be empty): Total Allocated / Reserved */
    size_t n_alloc;
    const int64_t *alloc_t_us;
    const int64_t *allocated;
    const int64_t *reserved;
    int64_t peak_allocated, peak_reserved; /* bytes */
    int64_t peak_t_us;                     /* when the allocated peak happens */
    const char *peak_op;                   /* enclosing op at the peak, "" if none */
    const char *peak_step;                 /* "ProfilerStep#N" at the peak, "" if none */
    /* largest live allocations at the peak, largest first */
    size_t n_top;
    const tt_memtl_alloc *top;
    /* may be NULL: n values, the bytes live before the trace at each point
     * (not in `sizes`), drawn as the bottom band "live before the trace" */
    const int64_t *before;
} tt_memtl;

/* Draw a 1600x960 PNG: stacked category areas in torch's colours (or one
 * total area) as steps (a value holds until the next point), the memory live
 * before the trace as the bottom band, the allocated/reserved curves (steps
 * too), legend, "Time (ms)" and "Memory (MiB)" axes (one binary unit, B to
 * TiB, picked by the largest value and used for every number shown) with
 * readable ticks, and a title with the peaks. */
TT_EXTERN(int) tt_render_png(const tt_memtl *tl, const char *path);
/* The same PNG in memory (caller frees *png with free()). */
TT_EXTERN(int) tt_render_png_mem(const tt_memtl *tl, unsigned char **png, size_t *len);
/* One self-contained HTML file: the PNG embedded (base64), an interactive
 * SVG view (hover for values, zoom on time; no network), and a table of the
 * largest live allocations at the peak with the ops that made them. */
TT_EXTERN(int) tt_render_html(const tt_memtl *tl, const char *path);

/* ---- `tracetool breakdown --html`: where each rank's GPU time goes ---- */

/* One rank's device over its window, split into parts that add up to the
 * window: compute, communication not hidden by compute, copies and sets
 * under no kernel, and the three kinds of idle. */
typedef struct tt_render_bd_rank {
    const char *label;        /* "rank 3 cuda:0" */
    int64_t window_ns;
    int64_t compute_ns, exposed_comm_ns, memory_only_ns;
    int64_t host_wait_ns, kernel_wait_ns, other_idle_ns;
    int64_t comm_ns, overlap_ns; /* for the table: communication, of it hidden */
    double step_ns;           /* median step; NaN: none */
} tt_render_bd_rank;

typedef struct tt_render_bd {
    const char *title;        /* e.g. the input's name; may be NULL */
    const char *subtitle;     /* a line under it; may be NULL */
    size_t nranks;
    const tt_render_bd_rank *ranks;
    size_t slowest;           /* the rank marked slowest; (size_t)-1: none */
    /* launch delay (kernel start - runtime call start) histogram: bin i
     * counts delays in [bin_lo_ns[i], bin_lo_ns[i + 1]) (the last: and
     * above); nbins may be 0 */
    size_t nbins;
    const int64_t *bin_lo_ns;
    const int64_t *bin_count;
    /* the rows of `breakdown --by step|stream`, drawn and tabled as the
     * ranks (each unit's own window; step_ns unused): unit_name "step" or
     * "stream" names them; nunits 0: none (by rank) */
    const char *unit_name;
    size_t nunits;
    const tt_render_bd_rank *units;
} tt_render_bd;

/* Parts in the order drawn, and their colours ("#rrggbb"). */
enum { TT_BD_PART_COMPUTE = 0, TT_BD_PART_EXPOSED_COMM, TT_BD_PART_MEMORY, TT_BD_PART_HOST_WAIT,
       TT_BD_PART_KERNEL_WAIT, TT_BD_PART_OTHER_IDLE, TT_BD_PART_COUNT };
TT_EXTERN(const char *) tt_bd_part_name(int part);
TT_EXTERN(const char *) tt_bd_part_color(int part);

/* One self-contained HTML page (inline SVG and CSS, no script, nothing from
 * the network): a stacked bar per rank, as long as its window, the longest
 * full width (and per unit, when nunits); the launch-delay histogram; a
 * table of the numbers (and one of the units). Written
 * whole or not at all. */
TT_EXTERN(int) tt_render_breakdown_html(const tt_render_bd *bd, const char *path);

TT_END_DECL

#endif
