/*
 * analyze/steps/steps.c - ProfilerStep#N spans of a stored trace (steps.h).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "analyze/steps/steps.h"
#include "store/db_internal.h"

int tt__step_spans(tt_db *db, int64_t trace, struct tt__step **out, size_t *n)
{
    struct tt__step *st = NULL;
    sqlite3_stmt *q;
    size_t alloc = 0, k = 0;
    int rc;
    *out = NULL;
    *n = 0;
    if (tt_db_prepare(db, &q, "SELECT s.ts, s.dur, n.s FROM slices AS s"
                              " JOIN strings AS n ON n.id = s.name"
                              " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL AND s.dur IS NOT NULL"
                              "  AND s.name IN (SELECT id FROM strings"
                              "   WHERE s GLOB 'ProfilerStep#[0-9]*')"
                              " ORDER BY s.ts, s.id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(q, 1, trace);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(q, 0);
        if (k && ts < st[k - 1].end)
            continue;
        if (TT_ALLOC_GROW(st, k + 1, alloc) < 0) {
            sqlite3_finalize(q);
            free(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        st[k].ts = ts;
        st[k].end = tt_sat_add(ts, sqlite3_column_int64(q, 1));
        st[k].num = strtoll((const char *)sqlite3_column_text(q, 2) + 13, NULL, 10);
        k++;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        free(st);
        return tt_db_error(db, "cannot read the steps");
    }
    *out = st;
    *n = k;
    return 0;
}

long tt__step_at(const struct tt__step *st, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ts >= st[lo - 1].end)
        return -1;
    return (long)lo - 1;
}
