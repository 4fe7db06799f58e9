/*
 * tracetool/counters.h - HTA's trace counters (Holistic Trace Analysis,
 * hta/analyzers/trace_counters.py) on the record stream:
 *
 * - the launch queue of each GPU stream (`tracetool queue`): +1 at the
 *   start of each runtime call that launches a kernel, memcpy or memset
 *   (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
 *   cuLaunchKernelEx, cudaMemcpyAsync, cudaMemsetAsync, hipLaunchKernel,
 *   hipExtModuleLaunchKernel, hipMemcpyAsync, hipMemsetAsync,
 *   hipMemcpyWithStream, MTIA's "runFunction -
 *   job_prep_and_submit_for_execution"), -1 at the start of the GPU
 *   activity it launched (joined by correlation); a launch without its
 *   activity, or an activity without such a launch, does not count. At
 *   equal times launches come before activity starts. Per rank, device
 *   and stream: the statistics of the queue length after each change
 *   (count: two per launch; the mean is not weighted by time, as HTA's)
 *   and the time the queue held at least max_queue launches, every stream
 *   (HTA reports one stream per rank).
 * - the memory bandwidth of the copies in flight (`tracetool bandwidth`):
 *   each memcpy and memset (a GPU activity named Memcpy..., Memset... or
 *   dma...) adds its args["memory bandwidth (GB/s)"] at its start and
 *   takes it away at its end (a 0 duration counts as 1 us), summed per
 *   rank and kind (memcpy HtoD, DtoH, DtoD, PtoP, ... or unknown, memset)
 *   over every device and stream; at equal times ends come before
 *   starts. The statistics are those of the sums after each change that
 *   are > 0 (not weighted by time, as HTA's).
 *
 * Times are ns on the trace's clock. The filter (tracetool/filter.h):
 * its time range keeps a launch/activity pair by the launch's start, a
 * copy by the start of the runtime call that launched it (its own start
 * without one); name (options version >= 2) keeps the GPU activities
 * (queue: kernels, memcpys, memsets with their launches; bandwidth: the
 * copies) whose name contains a match; under (version >= 2) those whose
 * runtime call lies in an op whose whole name matches, on its thread (a
 * copy without a runtime call is under none). Version 1 options with name
 * or under set: TT_EINVALID. Memory does not grow with the trace: the rows
 * wait in bounded buffers that spill to temporary files (external sorts).
 */
#ifndef TRACETOOL_COUNTERS_H
#define TRACETOOL_COUNTERS_H

#include <stdio.h>

#include "tracetool/filter.h"
#include "tracetool/store.h"

TT_BEGIN_DECL

/* a number the trace did not have (a device) */
#define TT_COUNTERS_NULL INT64_MIN

/* ---------------------------------------------------------------- queue */

typedef struct tt_queue_options {
    unsigned int version;
    int64_t trace_id;          /* 0 = every trace */
    int64_t rank;              /* -1 = every rank */
    int64_t max_queue;         /* blocked_ns: time with at least this many queued */
    int series;                /* tt_queue_db / _file print the time series */
    tt_output_format format;   /* table, csv, json or markdown */
    tt_filter filter;          /* time range; name, under: version >= 2 */
} tt_queue_options;
#define TT_QUEUE_OPTIONS_INIT \
    { .version = 2, .rank = -1, .max_queue = 1024, .format = TT_FORMAT_TABLE, \
      .filter = TT_FILTER_INIT }

/* one stream of one trace */
typedef struct tt_queue_row {
    int64_t trace_id;
    int have_rank;
    int64_t rank;
    int64_t device;     /* TT_COUNTERS_NULL: none */
    int64_t stream;
    int64_t count;      /* change points: 2 per launch joined to its activity */
    double mean;        /* of the queue lengths after each change */
    int64_t min, max;
    int64_t blocked_ns; /* time with the queue length >= max_queue */
} tt_queue_row;

typedef struct tt_queue_result {
    tt_queue_row *rows; /* by trace (rank, then id), device, stream */
    size_t nrows;
} tt_queue_result;

/* one change of a stream's queue length */
typedef struct tt_queue_point {
    int64_t trace_id;
    int have_rank;
    int64_t rank, device, stream; /* device: TT_COUNTERS_NULL when none */
    int64_t ts_ns, queue_length;
} tt_queue_point;
/* non-zero stops the walk and is returned */
typedef int (*tt_queue_point_fn)(void *ctx, const tt_queue_point *p);

TT_EXTERN(int) tt_queue_db_result(tt_db *db, const tt_queue_options *o, tt_queue_result *res);
TT_EXTERN(int) tt_queue_file_result(const char *path, const tt_queue_options *o,
                                    tt_queue_result *res);
/* NULL-safe; leaves *res empty */
TT_EXTERN(void) tt_queue_result_free(tt_queue_result *res);
/* every change, by trace, device, stream and time */
TT_EXTERN(int) tt_queue_db_series(tt_db *db, const tt_queue_options *o, tt_queue_point_fn fn,
                                  void *ctx);
TT_EXTERN(int) tt_queue_file_series(const char *path, const tt_queue_options *o,
                                    tt_queue_point_fn fn, void *ctx);
/* the summary (o->series: the series) printed in o->format */
TT_EXTERN(int) tt_queue_db(tt_db *db, const tt_queue_options *o, FILE *out);
TT_EXTERN(int) tt_queue_file(const char *path, const tt_queue_options *o, FILE *out);

/* ---------------------------------------------------------------- bandwidth */

typedef struct tt_bandwidth_options {
    unsigned int version;
    int64_t trace_id;          /* 0 = every trace */
    int64_t rank;              /* -1 = every rank */
    int series;                /* tt_bandwidth_db / _file print the time series */
    tt_output_format format;
    tt_filter filter;          /* time range; name, under: version >= 2 */
} tt_bandwidth_options;
#define TT_BANDWIDTH_OPTIONS_INIT \
    { .version = 2, .rank = -1, .format = TT_FORMAT_TABLE, .filter = TT_FILTER_INIT }

/* one kind of copy of one trace */
typedef struct tt_bandwidth_row {
    int64_t trace_id;
    int have_rank;
    int64_t rank;
    const char *kind;   /* "memcpy HtoD", ..., "memcpy unknown", "memset" (static) */
    int64_t count;      /* change points with a sum > 0 */
    double mean_gbps, min_gbps, max_gbps;
} tt_bandwidth_row;

typedef struct tt_bandwidth_result {
    tt_bandwidth_row *rows; /* by trace (rank, then id), kind */
    size_t nrows;
} tt_bandwidth_result;

/* one change of a kind's bandwidth (every change, sums of 0 included) */
typedef struct tt_bandwidth_point {
    int64_t trace_id;
    int have_rank;
    int64_t rank;
    const char *kind;
    int64_t ts_ns;
    double gbps;
} tt_bandwidth_point;
typedef int (*tt_bandwidth_point_fn)(void *ctx, const tt_bandwidth_point *p);

TT_EXTERN(int) tt_bandwidth_db_result(tt_db *db, const tt_bandwidth_options *o,
                                      tt_bandwidth_result *res);
TT_EXTERN(int) tt_bandwidth_file_result(const char *path, const tt_bandwidth_options *o,
                                        tt_bandwidth_result *res);
TT_EXTERN(void) tt_bandwidth_result_free(tt_bandwidth_result *res);
TT_EXTERN(int) tt_bandwidth_db_series(tt_db *db, const tt_bandwidth_options *o,
                                      tt_bandwidth_point_fn fn, void *ctx);
TT_EXTERN(int) tt_bandwidth_file_series(const char *path, const tt_bandwidth_options *o,
                                        tt_bandwidth_point_fn fn, void *ctx);
TT_EXTERN(int) tt_bandwidth_db(tt_db *db, const tt_bandwidth_options *o, FILE *out);
TT_EXTERN(int) tt_bandwidth_file(const char *path, const tt_bandwidth_options *o, FILE *out);

TT_END_DECL

#endif
