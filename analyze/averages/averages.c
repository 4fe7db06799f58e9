/*
 * analyze/averages/averages.c - `tracetool averages`: torch's key_averages() and
 * table() recomputed from a trace (docs/TORCH.md 3).
 *
 * Computing and printing are apart: tt_averages_compute_db/_file give a
 * tt_avg_result (rows per trace, in the table's order, with the footer
 * totals), tt_averages_print prints it (averages_print.c), and
 * tt_averages_db/_file do both.
 *
 * Both read the record stream of each trace (averages_stream.c: a file's
 * rows, or a stored trace's) into the fixed-size records of averages_sort.c,
 * which the pass of averages_tree.c reads in torch's order. A file goes
 * through a temporary database only when its rows need the SQL passes that
 * follow a load (or it is standard input, read once).
 */
#include "analyze/averages/averages_state.h"

#include <string.h>

/* Every selected trace of the database into res. */
static int compute_db(tt_db *db, const tt_avg_options *o, tt_avg_result *res)
{
    if (!tt_avg_sort_key_valid(o->sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", o->sort_by);
    return tt__avg_each(NULL, db, o, res);
}

int tt_averages_compute_db(tt_db *db, const tt_avg_options *opts, tt_avg_result **out)
{
    tt_avg_result *res = calloc(1, sizeof(*res));
    int rc;
    *out = NULL;
    if (!res)
        return tt__oom();
    if ((rc = compute_db(db, opts, res)) < 0) {
        tt_avg_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int tt_averages_compute_file(const char *path, const tt_avg_options *opts, tt_avg_result **out)
{
    tt_avg_result *res;
    int rc;
    *out = NULL;
    if (!tt_avg_sort_key_valid(opts->sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", opts->sort_by);
    if (!(res = calloc(1, sizeof(*res))))
        return tt__oom();
    if ((rc = tt__avg_each(path, NULL, opts, res)) < 0) {
        tt_avg_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int tt_averages_db(tt_db *db, const tt_avg_options *opts, FILE *out)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_db(db, opts, &res);
    if (rc < 0)
        return rc;
    rc = tt_averages_print(res, opts, out);
    tt_avg_result_free(res);
    return rc;
}

int tt_averages_file(const char *path, const tt_avg_options *opts, FILE *out)
{
    tt_avg_result *res;
    int rc = tt_averages_compute_file(path, opts, &res);
    if (rc < 0)
        return rc;
    rc = tt_averages_print(res, opts, out);
    tt_avg_result_free(res);
    return rc;
}
