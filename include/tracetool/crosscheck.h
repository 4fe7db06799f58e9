/*
 * tracetool/crosscheck.h - does a PyTorch Execution Trace agree with the
 * Kineto trace taken beside it? (docs/CROSSCHECK.md)
 *
 * Every Execution Trace (ET) of a database is paired with the Kineto trace of
 * the same pid (else the same rank), and its op nodes are joined to the
 * Kineto cpu_op / user_annotation slices:
 *   1. PyTorch's own rule (test_execution_trace.py) is evaluated: the sorted
 *      rf_id of the ET op nodes equals the sorted "Record function id" of the
 *      Kineto events (events lacking the key count as -1);
 *   2. the join key is "Record function id" when the Kineto trace has one
 *      (non-zero); otherwise "External id", either at a constant offset
 *      (External id = rf_id + offset) or, where the External ids are
 *      per-thread counters (PyTorch 2.0/2.1), in per-thread order: the ET
 *      thread's ops in rf_id order against a window of one Kineto thread's ops
 *      in External-id order;
 *   3. a pair counts as matched only when the names agree.
 * The traces are read from their rows (a file's, or a database's: the same
 * join); memory: the ET nodes and Kineto cpu ops of the traces checked.
 */
#ifndef TRACETOOL_CROSSCHECK_H
#define TRACETOOL_CROSSCHECK_H

#include <stdio.h>

#include "tracetool/analyze.h"

TT_BEGIN_DECL

enum { TT_XC_KEY_AUTO = 0, TT_XC_KEY_RF, TT_XC_KEY_EXTERNAL };
/* the earlier names of tt_output_format's first four */
#define TT_XC_TEXT TT_FORMAT_TABLE
#define TT_XC_JSON TT_FORMAT_JSON
#define TT_XC_CSV TT_FORMAT_CSV
#define TT_XC_MARKDOWN TT_FORMAT_MARKDOWN

typedef struct tt_xc_options {
    unsigned int version;
    int64_t trace_id; /* 0 = every pair; else the pair with this ET or Kineto trace id */
    int64_t rank;     /* -1 = every rank */
    int key;          /* TT_XC_KEY_*: auto, force rf_id, force External id */
    tt_output_format format;       /* TT_XC_TEXT, _JSON, _CSV (a row per ET) or _MARKDOWN */
    int64_t limit;    /* offenders named per kind (default 5) */
    int store;        /* database input: write table et_links (needs a writable db) */
    int strict;       /* a pair is consistent only if PyTorch's rule holds too */
} tt_xc_options;
#define TT_XC_OPTIONS_VERSION 1
#define TT_XC_OPTIONS_INIT \
    { .version = TT_XC_OPTIONS_VERSION, .rank = -1, .key = TT_XC_KEY_AUTO, \
     .format = TT_FORMAT_TABLE, .limit = 5, .store = 1 }

typedef struct tt_xc_summary {
    int64_t pairs;           /* pairs checked */
    int64_t consistent;      /* pairs found consistent */
    int64_t inconsistent;    /* pairs with differences */
    int64_t unpaired_et;     /* ET traces without a Kineto trace (a difference) */
    int64_t unpaired_kineto; /* Kineto traces without an ET (not a difference) */
    int64_t links;           /* rows written to et_links */
} tt_xc_summary;

/* the exit code of a check (the tracetool program's): 1 when a pair is
 * inconsistent, an ET has no Kineto trace or nothing was paired, else 0 */
TT_EXTERN(int) tt_xc_exit_code(const tt_xc_summary *s);

/* a Kineto pid or tid as stored: an integer, a text or none (the codes are
 * SQLite's column types) */
enum { TT_XC_ID_INT = 1, TT_XC_ID_TEXT = 3, TT_XC_ID_NULL = 5 };
typedef struct tt_xc_id {
    int type; /* TT_XC_ID_* */
    int64_t i;
    char s[48];
} tt_xc_id;

/* the join used for a pair */
enum { TT_XC_JOIN_NONE = 0, TT_XC_JOIN_RF, TT_XC_JOIN_EXT_OFFSET, TT_XC_JOIN_EXT_ORDER };

typedef struct tt_xc_trace {
    int64_t id;
    char *path;
    int has_pid, has_rank;
    int64_t pid, rank;
} tt_xc_trace;

/* a run of matched ops of one thread at one offset (key - rf_id) */
typedef struct tt_xc_segment {
    int64_t rf_from, offset, count;
} tt_xc_segment;
#define TT_XC_MAX_SEGMENTS 8

/* one row of the per-thread breakdown */
typedef struct tt_xc_thread {
    int has_et_tid;
    int64_t et_tid;
    int has_kineto; /* kineto_pid / kineto_tid are set */
    tt_xc_id kineto_pid, kineto_tid;
    int64_t et_ops, matched, et_only, kineto_only, name_mismatch;
    int has_key, has_ts;
    int64_t key_lo, key_hi, ts_lo, ts_hi;
    tt_xc_segment segments[TT_XC_MAX_SEGMENTS]; /* the first ones */
    size_t nsegments;
    int64_t segments_total;
} tt_xc_thread;

/* samples (the first `limit` of each kind) */
typedef struct tt_xc_et_op {
    int has_rf_id, has_tid;
    int64_t rf_id, node_id, tid;
    char *name;
} tt_xc_et_op;

typedef struct tt_xc_kineto_op {
    int64_t slice_id, key, ts;
    int has_tid;
    tt_xc_id tid;
    char *name;
} tt_xc_kineto_op;

typedef struct tt_xc_mismatch {
    int has_rf_id;
    int64_t rf_id, node_id, kineto_key, slice_id;
    char *et_name, *kineto_name;
} tt_xc_mismatch;

typedef struct tt_xc_duplicate {
    int et_side; /* 1: ET rf_id, 0: Kineto key */
    int64_t id, count;
    char *name1, *name2; /* the first two names */
} tt_xc_duplicate;

/* One checked ET: paired with a Kineto trace, or (paired == 0) not. */
typedef struct tt_xc_pair {
    int paired;
    tt_xc_trace et, kineto;
    char paired_by[200];
    int64_t et_nodes, et_roots, et_ops;
    int64_t kineto_ops, kineto_with_rf_id, kineto_with_external_id;
    /* PyTorch's rule: sorted ET rf_id == sorted Kineto "Record function id" */
    int rule_applies, rule_holds;
    int64_t rule_et_ids, rule_et_only, rule_kineto_only;
    int key; /* TT_XC_JOIN_* */
    int64_t offset; /* TT_XC_JOIN_EXT_OFFSET: External id - rf_id */
    int has_constant; /* TT_XC_JOIN_EXT_ORDER: the constant offset tried first */
    int64_t constant_offset, constant_matched;
    int has_key, has_ts; /* the window */
    int64_t key_lo, key_hi, ts_lo, ts_hi;
    int64_t matched, et_only, kineto_only, name_mismatch, duplicate_et, duplicate_kineto;
    int64_t kineto_outside; /* Kineto ops outside the window */
    int consistent;
    tt_xc_thread *threads;
    size_t nthreads;
    tt_xc_et_op *et_only_ops;
    size_t net_only_ops;
    tt_xc_kineto_op *kineto_only_ops; /* the smallest keys */
    size_t nkineto_only_ops;
    tt_xc_mismatch *mismatches;
    size_t nmismatches;
    tt_xc_duplicate *duplicates; /* ET ones first, `limit` in all */
    size_t nduplicates;
} tt_xc_pair;

typedef struct tt_xcheck_result {
    tt_xc_pair *pairs; /* every ET checked, in trace-id order */
    size_t npairs;
    tt_xc_trace *unpaired_kineto;
    size_t nunpaired_kineto;
    tt_xc_summary summary;
} tt_xcheck_result;

/*
 * The analysis of tt_crosscheck_db without the report: every ET of the
 * database joined to its Kineto trace (with opts->store, et_links written).
 * *res is NULL on error. A --trace/--rank that selects nothing is not an
 * error here (the result has no pairs).
 */
TT_EXTERN(int) tt_crosscheck_run(tt_db *db, const tt_xc_options *opts, tt_xcheck_result **res);
TT_EXTERN(void) tt_xcheck_result_free(tt_xcheck_result *res);

/* The report of a result (text or json per opts->format, as tt_crosscheck_db). */
TT_EXTERN(int) tt_xcheck_result_print(const tt_xcheck_result *res, const tt_xc_options *opts,
                                      FILE *out);

/*
 * Check every ET of an ingested database against its Kineto trace and print
 * the report to `out` (NULL: no report, e.g. to store the links only). With opts->store, the matched pairs replace the rows of
 * that pair in table et_links (created if missing). Returns 0 whatever the
 * verdict (read it from *sum: consistent when inconsistent == 0 and
 * unpaired_et == 0), or a negative tt_error_code: TT_ENOTFOUND when the
 * database holds no Execution Trace or no Kineto trace.
 */
TT_EXTERN(int) tt_crosscheck_db(tt_db *db, const tt_xc_options *opts, FILE *out,
                                tt_xc_summary *sum);

/*
 * The same on files: each input is a trace file or a directory (read
 * recursively for *.json, *.json.gz and *.gz, like `tracetool ingest`). Every
 * input is read as a stream (no database is made) and told apart by
 * content, so the order of ETs and Kineto traces does not matter.
 * TT_EINVALID when the inputs hold no Execution Trace or no Kineto trace.
 */
TT_EXTERN(int) tt_crosscheck_files(const char *const *inputs, size_t n,
                                   const tt_xc_options *opts, FILE *out,
                                   tt_xc_summary *sum);

TT_END_DECL

#endif
