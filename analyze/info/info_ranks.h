/*
 * analyze/info/info_ranks.h - the rank overview's printer, for info.c. Internal.
 */
#ifndef TT_ANALYZE_INFO_RANKS_H
#define TT_ANALYZE_INFO_RANKS_H

#include <stdio.h>

#include "tracetool/analyze.h"

/* text and markdown: a titled table; JSON: the value of a "ranks" key */
int tt__info_ranks_print(const tt_info_ranks *r, int format, FILE *out);

#endif
