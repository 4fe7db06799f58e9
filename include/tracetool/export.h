/*
 * tracetool/export.h - one Chrome trace (Trace Event Format, the JSON that
 * ui.perfetto.dev and chrome://tracing open) of the ranks and steps of a
 * database: `tracetool export`.
 *
 * Every chosen trace becomes one process (pid = its rank when the chosen
 * ranks are known and distinct, else a dense index; `process_name` "rank N"),
 * its CPU threads, GPU streams and other tracks become threads of that
 * process with tids unique over the whole file and names that keep what they
 * were ("thread 1234 (python3)", "GPU 0 stream 7"). Timestamps stay on each
 * trace's own clock: absolute ns (ts + base_time_ns) minus the smallest
 * base_time_ns of the chosen traces, written in us (0 when a trace has
 * absolute timestamps, so then every ts is absolute), so ranks are never
 * shifted against each other. Events: CPU slices, runtime calls, GPU
 * activities, [memory] events, flows (the folded ac2g flows given back),
 * instants and counters, with args as stored; the source metadata events are
 * replaced by the process and thread names above.
 *
 * A step is the span [ts, ts + dur] of the trace's CPU ProfilerStep#N slice;
 * an event belongs to the chosen steps when its start lies in one of them,
 * except a GPU activity launched by a runtime call (gpu_ops.runtime_id),
 * which goes with that call's start. Each trace's rows are sorted by ts in
 * bounded memory (sorted runs in an anonymous file in $TMPDIR, merged as the
 * file is written), so memory does not grow with the trace.
 */
#ifndef TRACETOOL_EXPORT_H
#define TRACETOOL_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tracetool/analyze.h"

TT_BEGIN_DECL

typedef struct tt_export_options {
    unsigned int version;
    int64_t trace_id;     /* 0 = every Chrome/Kineto trace */
    const int64_t *ranks; /* only these ranks (nranks of them); NULL = every rank */
    size_t nranks;
    int steps_set;        /* only ProfilerStep#N with step_from <= N <= step_to */
    int64_t step_from, step_to;
    int gzip;             /* -1: when the output's name ends in ".gz"; 0 no; 1 yes */
    /* version >= 2: counter tracks ("ph": "C", cat "tracetool") of each
     * trace added (tracetool/counters.h): "Queue length (GPU D stream S)"
     * {"length"} at each change of a stream's launch queue, "Memory
     * bandwidth (KIND)" {"GB/s"} at each change of a kind's bandwidth,
     * "Memory allocated (GPU D|CPU)" {"bytes"} at each [memory] event
     * (its Total Allocated) */
    int counters;
} tt_export_options;
#define TT_EXPORT_OPTIONS_VERSION 2
#define TT_EXPORT_OPTIONS_INIT \
    { .version = TT_EXPORT_OPTIONS_VERSION, .gzip = -1 }

/* what was written, per kind of event */
enum {
    TT_EXPORT_SLICES = 0, /* CPU ops, annotations, other CPU X events */
    TT_EXPORT_RUNTIME,    /* CUDA runtime / driver calls */
    TT_EXPORT_KERNELS,
    TT_EXPORT_MEMCPY,
    TT_EXPORT_MEMSET,
    TT_EXPORT_GPU_OTHER,  /* GPU annotations, syncs */
    TT_EXPORT_MEMORY,     /* [memory] instants */
    TT_EXPORT_FLOWS,      /* s / t / f, the folded ac2g flows included */
    TT_EXPORT_COUNTERS,   /* C */
    TT_EXPORT_INSTANTS,   /* every other phase */
    TT_EXPORT_METADATA,   /* the process and thread names written */
    TT_EXPORT_NKINDS
};

typedef struct tt_export_result {
    int64_t processes;    /* traces written as processes */
    int64_t threads;      /* threads named */
    int64_t events;       /* every event written, metadata included */
    int64_t counts[TT_EXPORT_NKINDS];
    int64_t no_step;      /* traces without any of the chosen steps */
    int64_t bytes;        /* size of the output (compressed when gzip) */
    int64_t skipped_files; /* tt_export_files: files in a directory that were no trace */
} tt_export_result;

/* Name of a TT_EXPORT_* kind ("slices", "runtime", ...). */
TT_EXTERN(const char *) tt_export_kind_name(int kind);

/*
 * Write the chosen traces of db to out_path ("-": standard output), written
 * to "<out_path>.tmp" and renamed when complete; on error the .tmp is removed
 * and nothing is left. res may be NULL. TT_ENOTFOUND when no trace matches
 * (or none has the chosen steps).
 */
TT_EXTERN(int) tt_export_db(tt_db *db, const tt_export_options *o, const char *out_path,
                            tt_export_result *res);
/* The same from trace files and directories of them (*.json, *.gz), each
 * read as it streams (standard input and pipes from a spill copy); a file
 * whose rows need the links only the store's passes make is read twice. */
TT_EXTERN(int) tt_export_files(const char *const *inputs, size_t n, const tt_export_options *o,
                               const char *out_path, tt_export_result *res);

TT_END_DECL

#endif
