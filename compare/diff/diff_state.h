/*
 * compare/diff/diff_state.h - what the files of `tracetool diff` share: a side's
 * per-step samples (diff_summary.c builds them, diff.c compares two,
 * diff_report.c writes the result).
 */
#ifndef TT_DIFF_STATE_H
#define TT_DIFF_STATE_H

#include "tracetool/diff.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

/* a key's per-sample values */
struct dkey {
    char *kind; /* "op", "kernel", "memcpy", "memset" */
    char *key;
    double *count, *ns, *dev; /* per sample (0 when absent): calls, CPU time of an
                               * op / device time of a GPU activity, device time
                               * of the kernels an op launched */
};

/* what varies per step: one sample */
enum { M_CPU_STEP, M_DEV_STEP, M_BUSY, M_PEAK_ALLOC, M_PEAK_RES, M_NKERNEL, M_NMEMCPY, M_NMEMSET,
       M_COUNT };

struct tt_diff_side {
    char label[256];       /* the inputs, for the report */
    char gpu[128];         /* deviceProperties[0].name ("" none) */
    int64_t world;         /* world size (-1 unknown) */
    int has_gpu;           /* GPU activities in every trace */
    int has_mem;           /* Total Allocated on [memory] events */
    size_t ntraces, nruns;
    size_t n, alloc;       /* samples */
    int64_t *step;         /* ProfilerStep number of each sample */
    int64_t *rank;         /* its rank (-1 unknown) */
    int32_t *run;          /* its run (0..nruns-1): the unit of replication */
    int32_t cur_run;       /* the run tt__diff_add_sample gives a new sample */
    double *m[M_COUNT];    /* per sample (NaN: not known) */
    struct dkey *keys;
    size_t nkeys, akeys;
    size_t *kmap;          /* hash of kind + key -> index + 1 */
    size_t kcap;
};

/* the index of key (kind, key) in s, added with zeros when new; -1 TT_ENOMEM */
long tt__diff_key(struct tt_diff_side *s, const char *kind, const char *key);
/* the index of key (kind, key) in s, or -1 */
long tt__diff_find(const struct tt_diff_side *s, const char *kind, const char *key);
/* one more sample (NaN metrics, zero keys); its index, or -1 TT_ENOMEM */
long tt__diff_add_sample(struct tt_diff_side *s, int64_t step);

/* diff_keys.c: --rename rules, applied in order to every key (each rule
 * replaces its first match; \0..\9 in the replacement are the groups) */
struct tt__renames {
    regex_t *re;
    char **rep;
    int *line; /* each rule's line in the file */
    size_t n;
    const char *path; /* the file, for messages */
};
/* the rules of a file: bounded (line length, regcomp's expansion of
 * repetitions); TT_EINVALID naming the file and line */
int tt__renames_load(const char *path, struct tt__renames *r);
/* in after the rules, whole, into *out (malloc'd); TT_ENOMEM, or
 * TT_EINVALID when the rules make it longer than 1 MiB */
int tt__renames_apply(const struct tt__renames *r, const char *in, char **out);
void tt__renames_free(struct tt__renames *r);

/* diff_trace.c: one trace's rows (tt__rowsink: a file's or a stored
 * trace's) gathered, then summed up as a side of one sample per step */
struct tt__diff_rows;
struct tt__rowsink;
/* o and ren (may be NULL) are borrowed; NULL when out of memory */
struct tt__diff_rows *tt__diff_rows_new(const tt_diff_options *o, const struct tt__renames *ren);
/* the sink that hands the rows to r */
void tt__diff_rows_sink(struct tt__diff_rows *r, struct tt__rowsink *sink);
void tt__diff_rows_free(struct tt__diff_rows *r);
/* what a trace's summary takes besides its rows */
struct tt__diff_env {
    const char *path;
    int have_rank;
    int64_t rank;
    int64_t world; /* -1 unknown */
    int have_span; /* the span of its events: the one sample of a trace without steps */
    int64_t start_ns, end_ns;
    const char *metadata; /* its top-level keys as a JSON object (deviceProperties) */
};
/* the summary of the rows gathered (*out: free with tt_diff_side_free) */
int tt__diff_rows_summary(struct tt__diff_rows *r, const struct tt__diff_env *env,
                          struct tt_diff_side **out);

/* diff_summary.c: 1 (and why, a headline "NOT COMPARABLE: no ProfilerStep#N
 * in NEW (...)") when one side has ProfilerStep#N samples and the other only
 * whole traces (no ProfilerStep#N at all); 0 when both have steps, or
 * neither (a whole-trace comparison), or a side has no sample */
int tt__diff_steps_differ(const struct tt_diff_side *b, const struct tt_diff_side *n, char *why,
                          size_t cap);

/* diff_shift.c: a side's samples grouped by run, for the change of a key
 * beyond its runs' speed */
struct tt__runs;
int tt__runs_build(const struct tt_diff_side *s, struct tt__runs **out); /* -1 ENOMEM */
void tt__runs_free(struct tt__runs *r);
/* *shift: the change (log) of key kb of b -> kn of n beyond each run's speed,
 * the smaller of the changes of its share of the step (metric den_*) and of
 * its time over the run's typical key of the kind (up: growth; else the
 * larger); NaN when not known. what: 1 CPU time, 2 device time. -1 ENOMEM */
int tt__diff_shift(const struct tt_diff_side *b, struct tt__runs *rb, long kb, int den_b,
                   const struct tt_diff_side *n, struct tt__runs *rn, long kn, int den_n,
                   const char *kind, int what, int up, double *shift);

/* diff_report.c: a ratio as a change ("+5.0%"), "n/a" when it is not a
 * number (a median of 0, a side without samples) */
void tt__diff_pct(char *out, size_t cap, double ratio);

/* diff_save.c: 1 if path is a regular file holding a tracetool document (a
 * JSON object whose "schema" starts "tracetool."; the summary reader says
 * when it is not a summary it reads); a non-regular file is never opened */
int tt__diff_is_summary(const char *path);
/* read one (TT_EINVALID naming the file and offset when it is not one) */
int tt__diff_summary_read(const char *path, struct tt_diff_side **out);

#endif
