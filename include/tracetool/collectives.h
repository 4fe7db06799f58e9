/*
 * tracetool/collectives.h - the collective calls (NCCL/RCCL) of one or more
 * ranks: each call's size, time and bandwidths (nccl-tests' algorithm and
 * bus bandwidth), the same call matched across ranks, and which rank
 * arrived last at it (the straggler) and by how much (`tracetool
 * collectives`; docs/HTA_collectives.md defines every number).
 */
#ifndef TRACETOOL_COLLECTIVES_H
#define TRACETOOL_COLLECTIVES_H

#include <stdio.h>

#include "tracetool/filter.h"
#include "tracetool/store.h"

TT_BEGIN_DECL

/* when a rank arrives at a collective: the start of its first kernel (a
 * call without one: its op's start), or the start of the CPU op that
 * launched it */
enum { TT_COLL_ARRIVE_GPU = 0, TT_COLL_ARRIVE_CPU };

typedef struct tt_coll_options {
    unsigned int version;
    int64_t trace_id;  /* 0 = every trace */
    int64_t rank;      /* -1 = every rank */
    int arrival;       /* TT_COLL_ARRIVE_* */
    int per_call;      /* print the calls (then the ranks' summary) */
    tt_output_format format; /* table, csv, json or markdown */
    tt_filter filter;  /* the time range: a call by its op's start (the runtime
                          call's start, a kernel without an op); version >= 2:
                          name: the calls whose collective or name contains a
                          match; under: those whose op, nccl:* annotation or
                          a kernel's runtime call lies in an op whose whole
                          name matches, on its thread (version 1 with
                          either: TT_EINVALID) */
} tt_coll_options;
#define TT_COLL_OPTIONS_INIT \
    { .version = 2, .rank = -1, .arrival = TT_COLL_ARRIVE_GPU, .format = TT_FORMAT_TABLE, \
      .filter = TT_FILTER_INIT }

/* a number the trace did not have */
#define TT_COLL_NULL INT64_MIN

/*
 * One collective call of one rank. The strings live until the callback
 * returns. Sizes are bytes (elements x the dtype's size); times ns on the
 * trace's clock; bandwidths GB/s (bytes per ns), NaN when unknown.
 */
typedef struct tt_coll_call {
    int64_t trace_id, rank;  /* rank: TT_COLL_NULL when the trace has none */
    const char *pg;          /* process group: "Process Group Name", else its
                                ranks, else "" (the trace does not say) */
    const char *collective;  /* allreduce, allgather, reducescatter, alltoall,
                                broadcast, reduce, send, recv, sendrecv, gather,
                                scatter, barrier, or the trace's name */
    const char *name;        /* as the trace names it ("Collective name", the
                                nccl:* op, the kernel) */
    const char *dtype;       /* NULL when unknown */
    int64_t seq;             /* which call of (pg, collective) it is: the
                                trace's sequence number, or its ordinal */
    int by_seq;              /* 1: seq is the trace's "Seq"; 0: the ordinal */
    int64_t in_nelems, out_nelems, in_bytes, out_bytes;
    int64_t size_bytes;      /* S of nccl-tests: what the bandwidths divide */
    int64_t group_size;      /* ranks in the process group */
    int64_t cpu_start_ns;    /* the launching op's start */
    int64_t start_ns;        /* the first kernel's start (NULL: no kernel) */
    int64_t dur_ns;          /* the kernels' durations summed (NULL: none) */
    int64_t kernels;
    double algbw, busbw;     /* size / dur; algbw x the collective's factor */
    int64_t arrival_ns;      /* start_ns or cpu_start_ns (options' arrival) */
    /* across ranks: the instance (this call on every rank read) */
    int64_t ranks;           /* ranks that have it */
    int64_t late_ns;         /* arrival - the instance's earliest arrival */
    int64_t straggler_rank;  /* the rank that arrived last (NULL: alone, or no rank) */
    int64_t straggler_trace; /* its trace (0: alone) */
    int64_t skew_ns;         /* latest - earliest arrival (NULL: alone) */
} tt_coll_call;

/* Non-zero from the callback stops the walk and is returned. */
typedef int (*tt_coll_call_fn)(void *ctx, const tt_coll_call *c);

/* One rank's summary (one per selected trace, by rank then trace id). */
typedef struct tt_coll_rank {
    int64_t trace_id, rank;  /* rank: TT_COLL_NULL when unknown */
    char *path;
    int64_t calls;           /* collective calls in the time range */
    int64_t matched;         /* of them, in an instance of two ranks or more */
    int64_t comm_ns;         /* their kernels' time (NULL: no kernel) */
    int64_t bytes;           /* their sizes (S) summed, where known (NULL: none) */
    double algbw, busbw;     /* sum S / sum dur (bus: S x factor) over the
                                calls with both; NaN when none */
    int64_t last;            /* instances it arrived last at */
    int64_t skew_total_ns, skew_max_ns; /* the skews of those instances */
    int64_t late_total_ns;   /* its own lateness summed over its instances */
} tt_coll_rank;

typedef struct tt_coll_result {
    tt_coll_rank *ranks;
    size_t nranks;
    int64_t calls;           /* over every rank, in the time range */
    int64_t instances;       /* distinct calls across ranks */
} tt_coll_result;

/* The ranks' summary. TT_ENOTFOUND when no selected trace has a collective. */
TT_EXTERN(int) tt_collectives_db_result(tt_db *db, const tt_coll_options *opts,
                                        tt_coll_result *res);
TT_EXTERN(int) tt_collectives_file_result(const char *path, const tt_coll_options *opts,
                                          tt_coll_result *res);
/* NULL-safe; leaves *res empty. */
TT_EXTERN(void) tt_coll_result_free(tt_coll_result *res);

/*
 * Each call of every selected rank, by its instance's earliest arrival (then
 * process group, collective, seq and rank); memory does not grow with the
 * trace (the calls wait in bounded buffers that spill to temporary files).
 * res (may be NULL) gets the ranks' summary too. TT_ENOTFOUND as above.
 */
TT_EXTERN(int) tt_collectives_db_calls(tt_db *db, const tt_coll_options *opts,
                                       tt_coll_call_fn fn, void *ctx, tt_coll_result *res);
TT_EXTERN(int) tt_collectives_file_calls(const char *path, const tt_coll_options *opts,
                                         tt_coll_call_fn fn, void *ctx, tt_coll_result *res);

/* Compute and print (opts->format; opts->per_call: the calls first). */
TT_EXTERN(int) tt_collectives_db(tt_db *db, const tt_coll_options *opts, FILE *out);
TT_EXTERN(int) tt_collectives_file(const char *path, const tt_coll_options *opts, FILE *out);

TT_END_DECL

#endif
