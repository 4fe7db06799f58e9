/*
 * formats/sumfile_merge.c - tt_summary_merge: the union of the summaries'
 * traces, each (path, content hash) once, in (path, hash) order whatever
 * the order of the inputs: associative, commutative and idempotent.
 */
#include "common/compat.h"
#include "formats/sumfile_internal.h"

int tt_summary_merge(const char *const *inputs, size_t n, const char *out_path)
{
    struct tt_summary all;
    const char **origin = NULL;
    size_t alloc = 0, oalloc = 0, i, k;
    int rc = 0;
    tt_error_clear();
    memset(&all, 0, sizeof(all));
    if (!n || !out_path)
        return tt_error_set(TT_EINVALID, "merge: no summaries or no output");
    all.path = (char *)inputs[0];
    for (i = 0; rc == 0 && i < n; i++) {
        tt_summary *s;
        if ((rc = tt_summary_load(inputs[i], &s)) < 0)
            break;
        if (TT_ALLOC_GROW(all.traces, all.n + s->n, alloc) < 0 ||
            TT_ALLOC_GROW(origin, all.n + s->n, oalloc) < 0) {
            tt_summary_free(s);
            rc = tt__oom();
            break;
        }
        for (k = 0; k < s->n; k++) {
            origin[all.n] = inputs[i];
            all.traces[all.n++] = s->traces[k];
        }
        s->n = 0; /* the traces are all's now */
        tt_summary_free(s);
    }
    if (rc == 0)
        rc = tt__sum_normalize(&all, origin);
    if (rc == 0)
        rc = tt__sum_write(&all, out_path);
    for (i = 0; i < all.n; i++)
        tt__sum_trace_release(&all.traces[i]);
    free(all.traces);
    free(origin);
    return rc;
}
