/*
 * summary/diff_save.c - `diff --save-summary`: NEW's inputs as a
 * tracetool.summary/1 (tt_summarize of each, merged): with the summaries'
 * drivers, above the analyses and diff, as it runs every section's writer.
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"
#include "compare/diff/diff_sumsec.h"
#include "tracetool/diff.h"
#include "tracetool/summary.h"

#include <stdlib.h>
#include <unistd.h>

/* a diff-summary/1 among the inputs: it holds one side, not its traces */
static int old_summary(const char *path)
{
    return !tt__diff_is_sumfile(path) && tt__diff_is_summary(path);
}

int tt_diff_save_summary(const char *const *inputs, size_t n, const char *out_path)
{
    tt_summarize_options so = TT_SUMMARIZE_OPTIONS_INIT;
    char (*part)[4096];
    int *slot, rc = 0;
    size_t k, made = 0;
    for (k = 0; k < n; k++)
        if (old_summary(inputs[k]))
            return tt_error_set_at(TT_EUNSUPPORTED, inputs[k], -1,
                                   "a %s holds a whole side, not its traces: --save-summary"
                                   " writes a tracetool.summary/1 from traces, directories,"
                                   " databases or summaries", "tracetool.diff-summary/1");
    if (n == 1)
        return tt_summarize(inputs[0], &so, out_path);
    /* several inputs: each summarised into a temporary, then merged */
    part = calloc(n ? n : 1, sizeof(*part));
    slot = calloc(n ? n : 1, sizeof(*slot));
    if (!part || !slot) {
        free(part);
        free(slot);
        return tt__oom();
    }
    for (k = 0; k < n && rc == 0; k++) {
        int fd = tt__mkstemp(part[k], sizeof(part[k]), "diffsum");
        if (fd < 0) {
            rc = TT_EIO; /* set: which directory, why */
            break;
        }
        close(fd);
        slot[k] = tt__partial_add(part[k]);
        made++;
        rc = tt_summarize(inputs[k], &so, part[k]);
    }
    if (rc == 0) {
        const char **names = malloc(n * sizeof(*names));
        if (!names)
            rc = tt__oom();
        for (k = 0; rc == 0 && k < n; k++)
            names[k] = part[k];
        if (rc == 0)
            rc = tt_summary_merge(names, n, out_path);
        free(names);
    }
    for (k = 0; k < made; k++) {
        unlink(part[k]);
        tt__partial_remove(slot[k]);
    }
    free(part);
    free(slot);
    return rc;
}
