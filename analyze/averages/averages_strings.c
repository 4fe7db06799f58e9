/*
 * analyze/averages/averages_strings.c - a string of the averages pass by its
 * id (the record stream's strings). Below the tree, the stacks and the
 * result, which all name things by id.
 */
#include "analyze/averages/averages_state.h"
#include <string.h>

/* a string by id ("ProfilerStep*" for -2, "?" for an id the stream lacks) */
char *tt__avg_lookup(struct state *s, int64_t id)
{
    const char *m;
    if (id == -2)
        return strdup("ProfilerStep*");
    m = tt__avg_mem_string(s->ms, id);
    return strdup(m ? m : "?");
}
