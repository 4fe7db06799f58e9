/*
 * tracetool/formats.h - streaming readers for profiler traces.
 *
 * One entry point, tt_read_trace(), reads any supported input and pushes what
 * it finds into a tt_trace_sink:
 *   - Kineto / Chrome-trace JSON, object form {"traceEvents": [...], ...} with
 *     top-level keys in any order, or the bare array form [...] (PyTorch 1.8
 *     and the legacy exporter);
 *   - PyTorch Execution Traces {"schema": ..., "nodes": [...]} from schema
 *     1.0.1 (flat) to 1.1.1-chakra (attrs / inputs{values,shapes,types});
 *   - torch memory-timeline raw exports [[t, action, bytes, category], ...].
 * Gzip is recognised by its magic bytes; "-" reads standard input.
 *
 * Memory is bounded by the largest single event, not by the file. Everything
 * a callback receives is borrowed and valid only during that callback.
 */
#ifndef TRACETOOL_FORMATS_H
#define TRACETOOL_FORMATS_H

#include "tracetool/common.h"

TT_BEGIN_DECL

typedef enum tt_trace_format {
    TT_FMT_UNKNOWN = 0,
    TT_FMT_CHROME,       /* {"traceEvents": [...]} */
    TT_FMT_CHROME_ARRAY, /* [ {...}, ... ] */
    TT_FMT_ET,           /* PyTorch Execution Trace */
    TT_FMT_MEMTL_RAW     /* torch memory timeline raw export */
} tt_trace_format;

TT_EXTERN(const char *) tt_format_name(tt_trace_format f);

/*
 * Devices as c10 names them: a [memory] event's "Device Type" is c10's
 * DeviceType (0 cpu, 1 cuda, 6 hip, 12 xpu, 13 mps, 19 mtia, 20
 * privateuseone, ...) and "Device Id" its index (-1 for the CPU).
 * tt_device_type_name: the lowercase name, NULL for a value c10 does not have.
 * tt_device_parse: "cuda:1", "cuda" (= cuda:0), "hip:0", "cpu" (index -1),
 * "privateuseone:0", or a bare type number "6:0"; 0, or TT_EINVALID (with
 * the error set: what is wrong) for "cuda:abc", "cuda:-2", "gpu:0".
 * tt_device_format: "cuda:0", "cpu", "type42:3" for a value without a name.
 */
TT_EXTERN(const char *) tt_device_type_name(int type);
TT_EXTERN(int) tt_device_parse(const char *s, int *type, int64_t *index);
TT_EXTERN(void) tt_device_format(int type, int64_t index, char *buf, size_t cap);

/* A pid, tid or flow id: JSON numbers and numeric strings become num;
 * other strings ("Spans", "stream 7") are kept as str. */
typedef struct tt_id {
    int present;
    int is_str;
    int64_t num;
    const char *str;
} tt_id;

/* Which decoded args an event carries (tt_event.have). */
enum {
    TT_A_EXTERNAL_ID = 1u << 0,
    TT_A_CORRELATION = 1u << 1,
    TT_A_RF_ID = 1u << 2,
    TT_A_EV_IDX = 1u << 3,
    TT_A_SEQ_NR = 1u << 4,
    TT_A_FWD_TID = 1u << 5,
    TT_A_DEVICE = 1u << 6,
    TT_A_STREAM = 1u << 7,
    TT_A_CONTEXT = 1u << 8,
    TT_A_CBID = 1u << 9,
    TT_A_REGISTERS = 1u << 10,
    TT_A_SHARED_MEM = 1u << 11,
    TT_A_BYTES = 1u << 12,
    TT_A_GRID = 1u << 13,
    TT_A_BLOCK = 1u << 14,
    TT_A_ADDR = 1u << 15,
    TT_A_DEVICE_TYPE = 1u << 16,
    TT_A_DEVICE_ID = 1u << 17,
    TT_A_TOTAL_ALLOC = 1u << 18,
    TT_A_TOTAL_RESERVED = 1u << 19,
    TT_A_SORT_INDEX = 1u << 20
};

/*
 * The times tracetool computes with. A "ts" outside (TT_TIME_MIN_NS,
 * TT_TIME_MAX_NS), a "dur" whose magnitude reaches TT_DUR_MAX_NS (73 years),
 * and a memory-timeline row whose time is out of range are refused where
 * they are read and counted in tt_read_stats.bad_times (the event keeps the
 * value in args as "@ts" / "@dur"): the end of an event and the distance
 * between any two times then always fit in int64.
 */
#define TT_TIME_MAX_NS ((int64_t)1 << 62)     /* about the year 2116 */
#define TT_TIME_MIN_NS (-((int64_t)1 << 61))
#define TT_DUR_MAX_NS ((int64_t)1 << 61)
/* a memory event's size beyond this (8 PiB) is not a size: not decoded */
#define TT_BYTES_MAX ((int64_t)1 << 53)

/* One Chrome-trace event with timestamps in integer nanoseconds. */
typedef struct tt_event {
    int64_t index;   /* position in the event array */
    int64_t offset;  /* byte offset of the event (decompressed) */
    char ph;         /* phase ('X', 'i', 's', 'f', 'M', ...); 0 if missing */
    const char *name; /* "" if missing */
    const char *cat;  /* NULL if missing */
    tt_id pid, tid, id;
    int has_ts, has_dur;
    int64_t ts_ns, dur_ns; /* as written (relative when the trace has a base time) */
    const char *bp;   /* flow binding point, NULL if absent */
    const char *s;    /* instant scope, NULL if absent */
    uint32_t have;    /* TT_A_* bits */
    int64_t external_id, correlation, rf_id, ev_idx, seq_nr, fwd_tid;
    int64_t device, stream, context, cbid, registers, shared_mem, bytes;
    int64_t addr, device_type, device_id, total_allocated, total_reserved;
    int64_t sort_index;
    int64_t grid[3], block[3];
    const char *input_dims;  /* minified JSON of "Input Dims"/"Input dims", or NULL */
    const char *input_types; /* minified JSON of "Input type", or NULL */
    const char *arg_name;    /* metadata events: args.name / args.labels */
    const char *arg_labels;
    const char *args;        /* minified JSON object of the remaining args, or NULL */
    size_t args_len;
} tt_event;

/* One Execution Trace node, normalised to the chakra layout. */
typedef struct tt_et_node {
    int64_t index, offset;
    int64_t id;
    const char *name;
    int has_parent;
    int64_t parent; /* ctrl_deps (chakra) or parent (1.0.1) */
    uint32_t have;  /* bit i set when field i of rf_id..fw_tid is present */
    int64_t rf_id, fw_parent, seq_id, scope, tid, fw_tid;
    const char *op_schema; /* NULL if absent */
    /* minified JSON, NULL if absent */
    const char *inputs, *input_shapes, *input_types, *input_strides;
    const char *outputs, *output_shapes, *output_types, *output_strides;
    const char *attrs; /* attrs not decoded above, as a JSON object, or NULL */
    const char *extra; /* other node keys, as a JSON object, or NULL */
} tt_et_node;

enum { TT_ET_RF_ID = 1, TT_ET_FW_PARENT = 2, TT_ET_SEQ_ID = 4, TT_ET_SCOPE = 8,
       TT_ET_TID = 16, TT_ET_FW_TID = 32 };

/* One row of a torch memory-timeline raw export. */
typedef struct tt_memrow {
    int64_t index;
    int64_t ts;       /* as exported (ns) */
    int64_t action;   /* 0 PREEXISTING, 1 CREATE, 2 INCREMENT_VERSION, 3 DESTROY */
    int64_t bytes;
    int has_category;
    int64_t category; /* category index, absent for null */
} tt_memrow;

/* Callbacks; any may be NULL. Returning non-zero stops the read with that code. */
typedef struct tt_trace_sink {
    void *ctx;
    int (*on_format)(void *ctx, tt_trace_format fmt);
    /* a top-level key other than the event/node array, value as minified JSON */
    int (*on_meta)(void *ctx, const char *key, const char *json, size_t len);
    int (*on_event)(void *ctx, const tt_event *ev);
    int (*on_et_node)(void *ctx, const tt_et_node *node);
    int (*on_memrow)(void *ctx, const tt_memrow *row);
} tt_trace_sink;

/* What a read saw; filled even when the read fails. */
typedef struct tt_read_stats {
    tt_trace_format format;
    int64_t events;          /* events / nodes / rows delivered */
    int64_t bytes;           /* decompressed bytes consumed */
    int64_t file_bytes;      /* bytes read from the file (compressed for gzip) */
    int64_t repaired;        /* strings/numbers repaired (bad UTF-8, control chars, ...) */
    int64_t skipped;         /* array elements that were not objects */
    int64_t first_repair_offset; /* -1 if none */
    int64_t first_skip_offset;   /* -1 if none */
    int gzip;
    int truncated;           /* input ended early; events before the cut were delivered */
    char hash[33];           /* content hash of the decompressed bytes read */
    int64_t bad_times;       /* "ts"/"dur" values that are not a time in int64 ns
                                (arrays, 1e400, beyond TT_TIME_MAX_NS ...): kept in
                                args as "@ts"; memory-timeline rows with such a
                                time are skipped */
    int64_t first_bad_time_offset; /* -1 if none */
    int64_t dup_keys;        /* top-level keys given twice (a second traceEvents
                                array is read too, not dropped) */
    int64_t first_dup_key_offset;  /* -1 if none */
} tt_read_stats;

/* file_pos/file_size: bytes of the file (compressed for gzip; size -1 when
 * unknown, e.g. a pipe); bytes: decompressed bytes decoded so far. */
typedef void (*tt_progress_fn)(void *payload, int64_t file_pos, int64_t file_size,
                               int64_t bytes, int64_t events);

enum {
    /* decode on a second thread; callbacks still run on the caller's thread */
    TT_READ_THREADED = 1,
    /* Chrome events: skip (still check) the args and keys that are not
     * decoded into tt_event fields; tt_event.args stays NULL */
    TT_READ_NO_ARGS = 2
};

typedef struct tt_read_options {
    unsigned int version;
    unsigned int flags;         /* TT_READ_* */
    tt_progress_fn progress;    /* called about every 64k events, may be NULL */
    void *progress_payload;
} tt_read_options;
#define TT_READ_OPTIONS_VERSION 1
#define TT_READ_OPTIONS_INIT \
    { .version = TT_READ_OPTIONS_VERSION }

/*
 * The progress of every trace file the library reads without a progress
 * callback of its own (the analyses reading files: averages, kernels,
 * breakdown, diff, export, ...; tt_ingest_file takes its own in
 * tt_ingest_options): called with the file's path as its read starts
 * (events 0), about every 64k events, and once more with done = 1 when the
 * read ends (however it ends).
 * The caller prints it; the library never does. Install it before any read
 * starts (it is read, not locked, as each file opens); NULL removes it.
 */
typedef void (*tt_file_progress_fn)(void *payload, const char *path, int64_t file_pos,
                                    int64_t file_size, int64_t bytes, int64_t events,
                                    int done);
TT_EXTERN(void) tt_set_file_progress(tt_file_progress_fn fn, void *payload);

/*
 * Read `path` ("-" for standard input) into `sink`. Returns 0 or a negative
 * tt_error_code with tt_error_last() naming the file, the byte offset and the
 * problem. TT_ETRUNCATED means every complete event before the cut was
 * delivered (stats->truncated is set).
 */
TT_EXTERN(int) tt_read_trace(const char *path, const tt_trace_sink *sink,
                             const tt_read_options *opts, tt_read_stats *stats);
/* Same over a memory buffer (used by tests and fuzzers). */
TT_EXTERN(int) tt_read_trace_mem(const char *name, const void *data, size_t len,
                                 const tt_trace_sink *sink,
                                 const tt_read_options *opts, tt_read_stats *stats);

/* ---- what a kernel's name means ---- */

/* The family of a GPU kernel name, into out (cap bytes): return type and
 * parameter list dropped, template arguments and anonymous namespaces
 * stripped, architecture prefixes (ampere_, volta_, sm80_, ...) folded to
 * ARCH_, tile / layout tokens (128x64, _nn, _align8, sliced1x4) to TILE,
 * Triton's numeric suffix dropped; NCCL kernels become
 * nccl:<collective>:<dtype> from either naming scheme
 * (formats/kernel_family.c). diff keys kernels by it; breakdown groups by it. */
TT_EXTERN(void) tt_kernel_family(const char *name, char *out, size_t cap);

TT_END_DECL

#endif
