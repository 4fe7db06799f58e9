/*
 * tracetool/diff.h - `tracetool diff`: compare two sides (runs) of a
 * workload step by step and decide whether NEW regressed against BASE.
 *
 * A side is one or more inputs (trace files, directories of per-rank
 * traces, databases), summarised into per-step samples: one replicate is one
 * ProfilerStep#N (with several ranks, the slowest rank of that step). The
 * primary metric is the device step time (the moment by which 99% of the
 * GPU busy time launched in step N is done, minus that of step N-1) on GPU
 * traces, the ProfilerStep duration on CPU-only traces. Per key (CPU op by name, GPU kernel by a
 * normalised family) the per-step count, CPU time and device time.
 *
 * The decision per gated metric: effect = ratio of medians (and the
 * Hodges-Lehmann shift); test = one-sided Mann-Whitney U (exact without
 * ties for up to 50 samples, else the normal approximation with tie
 * correction). docs/DIFF.md says the rules.
 */
#ifndef TRACETOOL_DIFF_H
#define TRACETOOL_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracetool/common.h"

TT_BEGIN_DECL

/* ---- statistics (compare/diff/diff_stats.c) ---- */

/* one-sided exact or approximate Mann-Whitney U: the probability, under no
 * difference, of a U at least as large as the observed one for "y tends to
 * be larger than x". *exact: 1 when the exact distribution was used. */
TT_EXTERN(double) tt_mwu_p_greater(const double *x, size_t nx, const double *y, size_t ny,
                                   int *exact);
/* the smallest one-sided p an exact test of nx against ny can give:
 * 1 / C(nx + ny, nx) */
TT_EXTERN(double) tt_mwu_p_min(size_t nx, size_t ny);
/* median of y_j - x_i over all pairs (Hodges-Lehmann shift); NaN if empty */
TT_EXTERN(double) tt_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny);
/* median of v (NaN if n is 0); v is not changed */
TT_EXTERN(double) tt_median(const double *v, size_t n);
/* (q3 - q1) / median with the quartiles interpolated as numpy's default
 * (NaN if n is 0 or the median 0) */
TT_EXTERN(double) tt_iqr_ratio(const double *v, size_t n);
/* Benjamini-Hochberg adjusted p-values of p[0..n) into q[0..n) */
TT_EXTERN(int) tt_bh_adjust(const double *p, size_t n, double *q);
/* one-sided Welch t-test: the probability, under equal means, of a t at
 * least as large as the observed one for "y has the larger mean" (Student's
 * t with the Welch-Satterthwaite degrees of freedom). NaN when a side has
 * fewer than 2 values or both have no spread. The test of run-level
 * summaries (one value per run) across runs. */
TT_EXTERN(double) tt_welch_p_greater(const double *x, size_t nx, const double *y, size_t ny);
/* P(T > t) for Student's t with df degrees of freedom (df > 0) */
TT_EXTERN(double) tt_student_t_sf(double t, double df);

/* ---- the diff ---- */

/* TT_DIFF_CSV: one row for the result, one per metric and one per key row,
 * the header the JSON report's keys */
#define TT_DIFF_TEXT TT_FORMAT_TABLE
#define TT_DIFF_MARKDOWN TT_FORMAT_MARKDOWN
#define TT_DIFF_JSON TT_FORMAT_JSON
#define TT_DIFF_JUNIT TT_FORMAT_JUNIT
#define TT_DIFF_GITHUB TT_FORMAT_GITHUB
#define TT_DIFF_CSV TT_FORMAT_CSV

/* kernels keyed by their family (default), their raw name, or the CPU op
 * that launched them (across hardware or libraries, where names change);
 * TT_MATCH_SHAPE: kernels by family, CPU ops by name and input shapes */
enum { TT_MATCH_FAMILY = 0, TT_MATCH_NAME, TT_MATCH_OP, TT_MATCH_SHAPE };

/* what can fail the build */
enum { TT_GATE_STEP = 1u, TT_GATE_MEMORY = 2u, TT_GATE_OPS = 4u, TT_GATE_KERNELS = 8u };

typedef struct tt_diff_options {
    unsigned int version;
    unsigned gate;            /* TT_GATE_* (default step and memory) */
    double threshold;         /* step time change that counts, % (5) */
    double op_threshold;      /* per-op / per-kernel rows, % (10) */
    double mem_threshold;     /* memory peaks, % (5), and at least 16 MiB */
    double alpha;             /* significance (0.01) */
    double fdr;               /* Benjamini-Hochberg q across rows (0.05) */
    int no_stats;             /* gate on thresholds alone */
    int allow_env_mismatch;   /* a different GPU model or world size: still compare */
    int fail_on_inconclusive; /* inconclusive gated metric: exit 6 */
    int step_clock;           /* 0 device when the traces have GPU work, 1 cpu */
    int64_t steps_lo, steps_hi;         /* BASE ProfilerStep numbers (-1: all) */
    int64_t new_steps_lo, new_steps_hi; /* NEW (-1: as BASE) */
    int64_t skip_first;       /* steps left out at the start of each trace */
    int top;                  /* rows in the report (20) */
    int match;                /* kernels keyed by TT_MATCH_* */
    const char *rename;       /* a file of "REGEX => REPLACEMENT" lines for keys (NULL) */
    int rank_each;            /* a step time verdict per rank (BH across ranks), not the
                               * slowest rank per step */
    const int64_t *rank_map;  /* pairs BASE rank, NEW rank (NULL: the same numbers) */
    size_t nrank_map;
} tt_diff_options;
#define TT_DIFF_OPTIONS_VERSION 1
#define TT_DIFF_OPTIONS_INIT \
    { .version = TT_DIFF_OPTIONS_VERSION, .gate = TT_GATE_STEP | TT_GATE_MEMORY, \
     .threshold = 5.0, .op_threshold = 10.0, .mem_threshold = 5.0, .alpha = 0.01, \
     .fdr = 0.05, .steps_lo = -1, .steps_hi = -1, .new_steps_lo = -1, .new_steps_hi = -1, \
     .top = 20, .match = TT_MATCH_FAMILY }

typedef struct tt_diff_side tt_diff_side;

/* Summarise one side from its inputs (files, directories, databases).
 * Errors name the input. */
TT_EXTERN(int) tt_diff_side_load(const char *const *inputs, size_t n, const tt_diff_options *o,
                                 int is_new, tt_diff_side **out);
TT_EXTERN(void) tt_diff_side_free(tt_diff_side *s);
/* the side's per-step samples and keys as a small JSON file (whole or not
 * at all) that tt_diff_side_load reads back as an input: a baseline CI can
 * keep instead of the traces */
TT_EXTERN(int) tt_diff_side_save(const tt_diff_side *s, const char *path);
/* `diff --save-summary`: the traces of inputs (files, directories,
 * databases, tracetool.summary/1 files) as one tracetool.summary/1 file,
 * every section (docs/DIFF.md), whole or not at all; a diff input again,
 * with the side its traces give. A tracetool.diff-summary/1 among them is
 * TT_EUNSUPPORTED (it holds no traces). */
TT_EXTERN(int) tt_diff_save_summary(const char *const *inputs, size_t n, const char *out_path);

/* verdicts, best first */
enum { TT_V_UNCHANGED = 0, TT_V_IMPROVED, TT_V_INCONCLUSIVE, TT_V_REGRESSED, TT_V_NOT_GATED };

typedef struct tt_diff_metric {
    char id[64];          /* "device_step_time", "cpu_step_time", "peak_allocated", ...;
                           * with --rank-agg each "device_step_time rank 3" */
    const char *unit;     /* "ns", "bytes", "count" */
    int gated;
    size_t nb, nn;        /* samples */
    const double *b, *n;  /* the samples (owned by the result) */
    double base, new_;    /* medians (memory: max) */
    double ratio, hl, p;  /* p NaN when no test ran */
    int exact;
    int verdict;          /* TT_V_* */
    char note[160];       /* why inconclusive / not gated, "" */
} tt_diff_metric;

typedef struct tt_diff_row {
    char *kind;           /* "op", "kernel" */
    char *key;
    double base_count, new_count;   /* per step (median) */
    double base_ns, new_ns;         /* per-step time: CPU for ops, device for kernels (median) */
    double delta_ns;                /* the change per step at BASE's speed: (new_share -
                                     * base_share) x BASE's step (new - base for a key
                                     * one side lacks) */
    double share;                   /* new_share - base_share (NaN when a side lacks it) */
    double p, q;                    /* one-sided p toward the change, BH-adjusted */
    int status;                     /* 0 matched, 1 added, 2 removed, 3 count changed */
    int verdict;                    /* TT_V_* (NOT_GATED unless ops/kernels gated) */
    /* the key's share of its side's step (CPU step time for ops and runtime
     * calls, GPU busy time for GPU activities; median over runs, or over
     * steps with one run a side; NaN when the side lacks the key) */
    double base_share, new_share;
    /* the change of the key's time beyond its runs' own speed, in natural
     * logarithms: the smaller of the changes of its share of the step and of
     * its time over its run's typical key (median over a side's runs; the
     * larger for a key that got faster); NaN when not tested */
    double shift;
    int few_steps;                  /* too few steps a side for the steps' test
                                     * to reach p 0.05: a row is inconclusive at most */
} tt_diff_row;

typedef struct tt_diff_result {
    int verdict;           /* worst gated verdict */
    int exit_code;         /* 0, 1 or 6 */
    int not_comparable;    /* environment mismatch (or no steps) */
    char reason[384];      /* one line: why not comparable / the verdict */
    char env[2][640];      /* "GPU ..., world size N, steps A-B (n)" of each side */
    char mismatch[300];    /* "" or what differs */
    tt_diff_metric *metrics;
    size_t nmetrics;
    tt_diff_row *rows;     /* sorted by |delta_ns| (largest first), then key */
    size_t nrows;
    double step_delta_ns;  /* new - base median step time */
    /* share of each side's per-step time in keys found on both sides:
     * [0] CPU ops (CPU time), [1] kernels (device time); [.][0] BASE, [.][1] NEW
     * (NaN when the side has none) */
    double coverage[2][2];
    char *notes;           /* lines */
} tt_diff_result;

TT_EXTERN(int) tt_diff_compare(const tt_diff_side *base, const tt_diff_side *new_,
                               const tt_diff_options *o, tt_diff_result *res);
TT_EXTERN(void) tt_diff_result_free(tt_diff_result *r);
/* one report (TT_DIFF_*) of the result */
TT_EXTERN(int) tt_diff_write(const tt_diff_result *r, const tt_diff_options *o, tt_output_format format,
                             FILE *out);
/* the same into a file, whole or not at all (written beside it, renamed) */
TT_EXTERN(int) tt_diff_write_file(const tt_diff_result *r, const tt_diff_options *o, tt_output_format format,
                                  const char *path);

TT_END_DECL

#endif
