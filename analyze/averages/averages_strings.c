/*
 * analyze/averages/averages_strings.c - a string of the averages pass by its id: the
 * pass's own strings (a file read without a database) or the database's.
 * Below the tree, the stacks and the result, which all name things by id.
 */
#include "analyze/averages/averages_state.h"
#include <string.h>

/* a string by id: the pass's own strings, or the database's */
char *tt__avg_lookup(struct state *s, int64_t id)
{
    char *r = NULL;
    if (id == -2)
        return strdup("ProfilerStep*");
    if (s->ms) {
        const char *m = tt__avg_mem_string(s->ms, id);
        return strdup(m ? m : "?");
    }
    if (!s->str_st && sqlite3_prepare_v2(s->db->sql, "SELECT s FROM strings WHERE id = ?1", -1,
                                         &s->str_st, NULL) != SQLITE_OK)
        return strdup("?");
    sqlite3_bind_int64(s->str_st, 1, id);
    if (sqlite3_step(s->str_st) == SQLITE_ROW && sqlite3_column_text(s->str_st, 0))
        r = strdup((const char *)sqlite3_column_text(s->str_st, 0));
    sqlite3_reset(s->str_st);
    return r ? r : strdup("?");
}
