/*
 * export/export_state.h - what `tracetool export` keeps between the
 * rows it is handed (export_rows.c) and the Chrome trace it writes
 * (export_write.c); the inputs and the public entry points are export.c.
 * Internal.
 *
 * Each event row becomes a record as soon as it arrives: its JSON written
 * except for what depends on the traces not yet read (pid, tid, ts offset,
 * flow ids), with its sort key (ts, table, id). Records collect in one
 * bounded buffer; a full buffer is sorted and written to a spool file as a
 * run, and a trace's runs (plus the buffer it may still hold) are merged
 * when the file is written. So memory does not grow with the trace: what
 * stays per trace is its strings, thread names and step windows.
 */
#ifndef TT_ANALYZE_EXPORT_STATE_H
#define TT_ANALYZE_EXPORT_STATE_H

#include "common/buf.h"
#include "common/strtab.h"
#include "store/ingest_rows.h"
#include "tracetool/export.h"
#include "export/export_out.h"

#include <stdint.h>
#include <stdio.h>

/* tids, pids and sort indexes stay below 2^31 (Perfetto reads them as uint32) */
#define CLASS_SHIFT 24
/* flow and async ids are remapped within 2^53 (exact in a JavaScript number) */
#define ID_SPACE (((int64_t)1) << 53)

/* the record tables, in the order equal times are written */
enum { T_SLICE, T_RUNTIME, T_GPU, T_MEMORY, T_FLOW, T_INSTANT, T_COUNT };

/* a pid, tid or id cell: integer, text or null */
enum { V_NULL = 'n', V_INT = 'i', V_TEXT = 't' };
struct idv {
    int type;
    int64_t i;
    const char *s;
    size_t len;
};

/* a sorted run of records in the spool file */
struct xrun {
    int64_t off, len;
};

struct xtrace {
    int64_t id, rank, cpu_pid, base, start, out_pid;
    int have_rank, have_cpu_pid, have_start;
    int start_known;           /* start given by the source (a database) */
    /* the profiled process (the store's traces.pid): the pid of the last
     * metadata event labelled "CPU", else the top-level "pid", else that of
     * the first cpu_op */
    int64_t label_pid, meta_pid, op_pid, op_id;
    int have_label_pid, have_meta_pid, have_op_pid;
    tt_trace_format format;
    char *file;
    char *devprops, *distinfo; /* the source's deviceProperties, distributedInfo
                                * (minified JSON) or NULL */
    char hash[33];             /* a file's content hash (the same file read once) */
    int64_t *win;              /* step windows [a, b], sorted, merged: 2 * nwin */
    size_t nwin, awin, nsteps;
    struct xrun *runs;
    size_t nruns, aruns;
    int in_mem;                /* its last records are still in the sort buffer */
    /* the source's names: "N"/"L" pid (process_name, process_labels), "T"
     * pid tid (thread_name) -> 1 + index into names, the largest value */
    tt_strtab nmap;
    char **names;
    size_t nnames, anames;
    /* --steps: the runtime calls (by id - rt_lo) with a ts (bit 0) that is
     * in a window (bit 1), for the GPU activities they launched */
    uint8_t *rtbits;
    int64_t rt_lo, rt_n;
    int64_t seq[T_COUNT];      /* rows of each table so far (their order) */
};

/* a record's place in the sort buffer */
struct xkey {
    int64_t ts, seq;
    int table;
    uint32_t len;
    size_t off;
};

struct ex;
/* a counter event ("ph":"C", no thread) of the trace being read at ts:
 * {"name": name, "args": {key: the JSON number num}}; export_rows.c writes
 * it, and hands the writer to export_counters.c with the trace (which thus
 * uses nothing of export_rows.c) */
typedef int (*tt__xp_counter_fn)(struct ex *x, int64_t ts, const char *name, const char *key,
                                 const char *num);

struct ex {
    const tt_export_options *o;
    tt_export_result *res;
    const char *source;  /* what errors name: the input, or "the inputs" */
    struct xtrace **all; /* every trace read (kept ones), in the order read */
    size_t nall, aall;
    struct xtrace **tr;  /* the chosen ones, in output order */
    size_t ntr;
    int64_t next_id;     /* the id the next file read gets */
    int64_t skipped;     /* files in directories that were no trace */
    int64_t nchrome;     /* Chrome/Kineto traces among them */
    char (*hashes)[33];  /* the content of every file read (each is read once) */
    size_t nhash, ahash;
    struct xtrace *t;    /* the trace being read */
    /* its strings: id -> 1 + offset into str_pool of the text (NUL-ended) */
    size_t *str_off;
    uint8_t *str_step;   /* 1: a chosen ProfilerStep#N */
    int64_t str_n;
    tt_buf str_pool;
    /* the sort buffer: records, and their keys */
    tt_buf recs;
    struct xkey *keys;
    size_t nkeys, akeys;
    struct xtrace *mem_owner; /* the trace whose records the buffer holds */
    FILE *spool;         /* sorted runs */
    int64_t spool_end;
    FILE *rtspool;       /* --steps: (runtime id, ts) of the trace being read */
    int64_t rt_count;
    int err;             /* the first error of the sink (rows() returns it) */
    struct tt__ctr *ctr; /* --counters: the queues and bandwidths of the trace read */
    tt__xp_counter_fn counter; /* writes one of their events (tt__xp_ctr_begin) */
    /* writing */
    tt_out out;
    int64_t base;        /* the smallest base_time_ns of the chosen traces */
    int64_t next_tid;    /* tids are unique over the whole file */
    size_t cur;          /* the trace being written (index into tr) */
    tt_strtab threads;   /* pid/tid key -> output tid, per trace */
    int64_t other_seq;   /* sort order of tracks that are neither CPU nor GPU */
    tt_jw jw;            /* the file's writer (into out) */
    tt_buf key, name, scratch;
};

/* export_rows.c: the sink of one trace's rows (x->t) */
void tt__xp_sink(struct ex *x, tt__rowsink *sink);
/* a trace's reading begins / ends (windows, runtime bits) / is dropped */
int tt__xp_trace_begin(struct ex *x, struct xtrace *t);
int tt__xp_trace_end(struct ex *x, const char *metadata);
void tt__xp_trace_free(struct ex *x, struct xtrace *t);
void tt__xp_rows_release(struct ex *x);
/* the order of records: ts, then table, then id */
int tt__xp_key_cmp(const void *a, const void *b);
/* ts in one of t's step windows */
int tt__xp_in_windows(const struct xtrace *t, int64_t ts);
/* a key part of a pid/tid value (no two values share one) */
void tt__xp_key_add(tt_buf *k, const struct idv *v);
/* the record's encoding (export_rows.c writes, export_write.c reads) */
const uint8_t *tt__xp_get_idv(const uint8_t *p, struct idv *v);
const uint8_t *tt__xp_get_str(const uint8_t *p, const char **s, uint32_t *len);


/* export_counters.c (--counters): the counter tracks of the trace being
 * read: a consumer of its rows begun with the trace, given its rows (the
 * memory events' counters written as they come) and its GPU rows' links,
 * its queue and bandwidth changes written when the trace's rows end */
int tt__xp_ctr_begin(struct ex *x, tt__xp_counter_fn counter);
int tt__xp_ctr_rows(struct ex *x, int table, int nrows, int ncols, const tt__cell *cells,
                    const char *text);
int tt__xp_ctr_links(void *ctx, int64_t op, int64_t name, int64_t rt, int64_t rt_ts);
int tt__xp_ctr_end(struct ex *x);
void tt__xp_ctr_free(struct ex *x);

/* export_write.c: the whole Chrome trace of the chosen traces (x->tr) */
int tt__xp_write(struct ex *x, const char *out_path);

#endif
