/*
 * summary/sections.h - the section writers `tracetool summarize` runs on each
 * trace (sections.c), for summarize.c. The summaries' drivers stand above the
 * analyses and diff, whose writers they call; the container they write
 * through is formats/sumfile.h. Internal.
 */
#ifndef TT_SUMMARY_SECTIONS_H
#define TT_SUMMARY_SECTIONS_H

#include "formats/sumfile_internal.h"

/* one section writer of the table (sections.c): sec is a TT__SEC_* */
struct tt__sum_section {
    int sec;
    int (*write)(const struct tt__sum_src *src, tt_jw *w);
};
extern const struct tt__sum_section tt__sum_sections[];
extern const size_t tt__sum_nsections;

#endif
