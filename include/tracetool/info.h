/*
 * tracetool/info.h - `tracetool info`: a trace's or a database's summary.
 */
#ifndef TRACETOOL_INFO_H
#define TRACETOOL_INFO_H

#include <stdio.h>

#include "tracetool/store.h"

TT_BEGIN_DECL

typedef struct tt_info_options {
    unsigned int version;
    int64_t trace_id; /* 0 = all traces */
    int json;         /* 1: one JSON document instead of text */
    /* version >= 2: */
    tt_output_format format; /* TT_FORMAT_TABLE/CSV/JSON/MARKDOWN (json = 1 is JSON too):
                         CSV is one row per trace of the summary's numbers */
    int64_t row_limit; /* rows of the categories table; -1 = all */
} tt_info_options;
#define TT_INFO_OPTIONS_INIT \
    { .version = 2, .row_limit = -1 }

/* Events of one phase and category. */
typedef struct tt_info_category {
    char ph;
    char *cat;          /* NULL when the events have none */
    int64_t count;
} tt_info_category;

/* GPU activities on one device and stream. */
typedef struct tt_info_stream {
    int64_t device, stream, activities;
} tt_info_stream;

/* What `tracetool info` shows for one trace. */
typedef struct tt_info_summary {
    char *path;
    int64_t trace_id;       /* 0 when read straight from a file */
    char *format;           /* tt_format_name(); NULL if unknown */
    char *schema_version;   /* NULL when absent */
    int gzip, truncated;
    int64_t bytes;          /* file size */
    int have_rank, have_world_size, have_pid, have_span;
    int64_t rank, world_size, pid;
    int64_t base_time_ns, start_ns, end_ns; /* span: events' ts .. ts + dur, as written */
    int64_t events;
    tt_info_category *categories; /* most events first, then ph, then cat */
    size_t ncategories;
    tt_info_stream *streams;      /* by device, then stream */
    size_t nstreams;
    int64_t devices;              /* distinct devices among streams */
    int64_t cpu_threads;          /* distinct (pid, tid) of CPU slices */
    /* features: how many of each */
    int64_t shapes, memory_events, rf_ids, flows, gpu_kernels, python_functions, et_nodes,
        memtl_rows;
    int64_t repaired, skipped;    /* values repaired / elements skipped by the reader */
} tt_info_summary;

typedef struct tt_info_result {
    tt_info_summary *traces;
    size_t ntraces;
} tt_info_result;

/* The summaries of an ingested database (opts->trace_id or every trace, by id)
 * and of a trace file (one); free with tt_info_result_free. */
TT_EXTERN(int) tt_info_db_result(tt_db *db, const tt_info_options *opts, tt_info_result *res);
TT_EXTERN(int) tt_info_file_result(const char *path, const tt_info_options *opts,
                                   tt_info_result *res);
/* NULL-safe; leaves *res empty. */
TT_EXTERN(void) tt_info_result_free(tt_info_result *res);

/* One trace of a database in the rank overview that `info` starts with when
 * the database holds several traces. */
typedef struct tt_info_rank {
    int64_t trace_id;
    char *path;
    int have_rank, have_world_size, have_span;
    int64_t rank, world_size;
    int64_t device;   /* the device most of its GPU activities ran on; -1: none */
    char *gpu;        /* that device's name in deviceProperties (else the first
                         entry's); NULL when the trace has none */
    int64_t steps;    /* distinct ProfilerStep#N annotations */
    int64_t start_ns, end_ns, events;
} tt_info_rank;

typedef struct tt_info_ranks {
    tt_info_rank *rows; /* by rank (unknown ranks last), then trace id */
    size_t n;
} tt_info_ranks;

TT_EXTERN(int) tt_info_ranks_db(tt_db *db, tt_info_ranks *out);
/* NULL-safe; leaves *r empty. */
TT_EXTERN(void) tt_info_ranks_free(tt_info_ranks *r);

/* Print a per-trace summary of an ingested database to `out`; with several
 * traces (and no trace_id), the rank overview first (not in CSV). */
TT_EXTERN(int) tt_info_db(tt_db *db, const tt_info_options *opts, FILE *out);
/* Read a trace file (streaming, no database) and print the same summary. */
TT_EXTERN(int) tt_info_file(const char *path, const tt_info_options *opts,
                             FILE *out);

TT_END_DECL

#endif
