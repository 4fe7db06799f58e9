/*
 * summary/sections.c - the section writers `tracetool summarize`
 * runs on each trace, in the order they are written. One entry per line:
 * each analysis adds its own when its section exists.
 */
#include "summary/sections.h"

const struct tt__sum_section tt__sum_sections[] = {
    { TT__SEC_INFO, tt__info_sum_write },
    { TT__SEC_AVERAGES, tt__avg_sum_write },
    { TT__SEC_KERNELS, tt__kern_sum_write },
    { TT__SEC_BREAKDOWN, tt__bd_sum_write },
    { TT__SEC_DIFF, tt__diff_sum_write },
};

const size_t tt__sum_nsections = sizeof(tt__sum_sections) / sizeof(tt__sum_sections[0]);
