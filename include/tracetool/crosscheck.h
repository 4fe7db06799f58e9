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
 * Memory is bounded by the number of ET nodes; Kineto slices are read with SQL.
 */
#ifndef TRACETOOL_CROSSCHECK_H
#define TRACETOOL_CROSSCHECK_H

#include <stdio.h>

#include "tracetool/analyze.h"

TT_BEGIN_DECL

enum { TT_XC_KEY_AUTO = 0, TT_XC_KEY_RF, TT_XC_KEY_EXTERNAL };
enum { TT_XC_TEXT = 0, TT_XC_JSON };

typedef struct tt_xc_options {
    unsigned int version;
    int64_t trace_id; /* 0 = every pair; else the pair with this ET or Kineto trace id */
    int64_t rank;     /* -1 = every rank */
    int key;          /* TT_XC_KEY_*: auto, force rf_id, force External id */
    int format;       /* TT_XC_TEXT or TT_XC_JSON */
    int64_t limit;    /* offenders named per kind (default 5) */
    int store;        /* database input: write table et_links (needs a writable db) */
    int strict;       /* a pair is consistent only if PyTorch's rule holds too */
} tt_xc_options;
#define TT_XC_OPTIONS_VERSION 1
#define TT_XC_OPTIONS_INIT { TT_XC_OPTIONS_VERSION, 0, -1, TT_XC_KEY_AUTO, TT_XC_TEXT, 5, 1, 0 }

typedef struct tt_xc_summary {
    int64_t pairs;           /* pairs checked */
    int64_t consistent;      /* pairs found consistent */
    int64_t inconsistent;    /* pairs with differences */
    int64_t unpaired_et;     /* ET traces without a Kineto trace (a difference) */
    int64_t unpaired_kineto; /* Kineto traces without an ET (not a difference) */
    int64_t links;           /* rows written to et_links */
} tt_xc_summary;

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
 * input is ingested into a temporary database (removed afterwards) and told
 * apart by content, so the order of ETs and Kineto traces does not matter.
 * TT_EINVALID when the inputs hold no Execution Trace or no Kineto trace.
 */
TT_EXTERN(int) tt_crosscheck_files(const char *const *inputs, size_t n,
                                   const tt_xc_options *opts, FILE *out,
                                   tt_xc_summary *sum);

TT_END_DECL

#endif
