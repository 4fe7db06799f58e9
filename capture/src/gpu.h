/*
 * capture/src/gpu.h - GPU activities recorded through CUPTI: the records
 * CUPTI's activity buffers are converted into (cupti_conv.c), the store a
 * window's records wait in, and the writer of their Kineto events
 * (gpu_out.c). cupti.c loads libcupti with dlopen, hands CUPTI its buffers
 * and feeds the completed ones to the converter. Internal.
 *
 * Times are CLOCK_MONOTONIC ns: cupti.c registers a timestamp callback, so
 * CUPTI stamps its records on the same clock as the CPU scopes.
 */
#ifndef TT_CAPTURE_GPU_H
#define TT_CAPTURE_GPU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/i64map.h"

enum gpu_kind {
    GPU_KERNEL = 1, /* cat "kernel" */
    GPU_MEMCPY,     /* cat "gpu_memcpy" (peer-to-peer too) */
    GPU_MEMSET,     /* cat "gpu_memset" */
    GPU_RUNTIME,    /* cat "cuda_runtime" */
    GPU_DRIVER,     /* cat "cuda_driver" */
    GPU_MEMORY      /* cudaMalloc / cudaFree: a "[memory]" instant, Device Type 1 */
};

/* one GPU activity, converted */
struct gpu_ev {
    uint8_t kind;             /* enum gpu_kind */
    uint8_t copy_kind;        /* GPU_MEMCPY: CUpti_ActivityMemcpyKind */
    uint8_t src_kind, dst_kind; /* GPU_MEMCPY: CUpti_ActivityMemoryKind; GPU_MEMSET: dst_kind */
    uint32_t device, context, stream; /* kernels, copies, sets, memory */
    uint32_t src_device, dst_device;  /* GPU_MEMCPY peer-to-peer (else device) */
    uint32_t correlation;
    uint32_t cbid;            /* GPU_RUNTIME / GPU_DRIVER: the callback id */
    uint32_t pid, tid;        /* GPU_RUNTIME / GPU_DRIVER / GPU_MEMORY: the calling process and thread */
    int64_t start, end;       /* ns, CLOCK_MONOTONIC; GPU_MEMORY: start only */
    int64_t bytes;            /* copies, sets; GPU_MEMORY: + allocated, - freed */
    uint64_t addr;            /* GPU_MEMORY */
    const char *name;         /* kernel name, or the API name (without CUPTI's "_v7000"
                               * suffix), owned by the store */
    int32_t grid[3], block[3];
    uint32_t regs;            /* registers per thread */
    uint32_t static_smem, dynamic_smem;
    int32_t queued;           /* 1: the kernel's queued time was known */
    uint16_t graph_node;      /* launched by a CUDA graph */
    uint32_t graph_id;
    uint32_t src_context, dst_context; /* GPU_MEMCPY peer-to-peer (else context) */
    uint8_t peer;             /* GPU_MEMCPY: a MEMCPY2 record (Kineto's from/in/to args) */
};

/* a device as CUPTI's DEVICE record describes it: Kineto's deviceProperties */
struct gpu_device {
    uint32_t id;
    char name[128];
    uint64_t total_global_mem;
    uint32_t compute_major, compute_minor;
    uint32_t max_threads_per_block, max_threads_per_sm;
    uint32_t regs_per_block, regs_per_sm;
    uint32_t warp_size;
    uint32_t smem_per_block, smem_per_sm, smem_per_block_optin;
    uint32_t num_sms;
};

/*
 * A window's GPU records, filled from CUPTI's buffer-completed callback
 * (its own thread) while the window records, taken by the collector at the
 * window's end. Names are interned in the store (one copy per distinct
 * name). The correlation map (CUPTI's EXTERNAL_CORRELATION records) gives
 * each runtime call's External id: the record-function id of the CPU scope
 * open when it was made.
 */
struct gpu_store {
    pthread_mutex_t lock;
    struct gpu_ev *ev;
    size_t n, cap;
    size_t max;               /* most records held (over: dropped, counted) */
    struct gpu_device *dev;
    size_t ndev, adev;
    struct i64map ext;        /* correlation id -> external id */
    /* interned names */
    char **names;
    size_t nnames, anames;
    void *name_index;         /* internal to cupti_conv.c */
    /* counted, written into the trace's "tracetool_capture" header */
    uint64_t dropped_records;  /* CUPTI's own (cuptiActivityGetNumDroppedRecords) */
    uint64_t dropped_store;    /* over max */
    uint64_t bad_timestamps;   /* zero, end before start, or outside the window */
    uint64_t unknown_records;  /* kinds the converter does not write */
    /* optional, set after init (NULL: kept): CUPTI's thread id of a runtime or
     * driver call (the low 32 bits of pthread_self, as Kineto notes) to the OS
     * tid the CPU rows use; 0: unknown, kept. Called with s->lock held. */
    uint32_t (*map_tid)(uint32_t cupti_tid);
};

/* CUPTI functions the converter needs (NULL: a name is then "cbid N") */
struct gpu_names {
    /* cuptiGetCallbackName: domain 1 driver, 2 runtime */
    int (*callback_name)(int domain, uint32_t cbid, const char **name);
};

void tt_cap__gpu_store_init(struct gpu_store *s, size_t max);
void tt_cap__gpu_store_free(struct gpu_store *s);
/* empty the store's records (names and devices stay) */
void tt_cap__gpu_store_clear(struct gpu_store *s);

/*
 * One CUPTI activity record (a CUpti_Activity *, as cuptiActivityGetNextRecord
 * returns it) into the store. The caller holds s->lock. 0, or -1 when out
 * of memory (the record is counted as dropped).
 */
int tt_cap__gpu_convert(struct gpu_store *s, const void *record, const struct gpu_names *nm);

/* the external id of a correlation (0: none) */
uint64_t tt_cap__gpu_external_id(const struct gpu_store *s, uint32_t correlation);

/* Kineto's kernelOccupancy (DeviceProperties.cpp): the CUDA occupancy
 * calculator (cuda_occupancy.h) on the device's properties; -1 when the
 * device is unknown (d NULL), the calculator fails, or this build has no
 * CUDA headers: what Kineto computes without device properties */
float tt_cap__gpu_occupancy(const struct gpu_device *d, const struct gpu_ev *k);

struct out;
struct tt_jw;
/*
 * The window's GPU events as Kineto writes them, each a value where w is
 * (an open array: kineto_out.c's "traceEvents") on a new line indented by
 * 2: kernels, copies and sets on pid = device, tid = stream; runtime and
 * driver calls on the calling pid/tid; "ac2g" flows from each call to the
 * activities of its correlation; "[memory]" instants for
 * cudaMalloc/cudaFree; process rows for each device. Events whose times are
 * zero or outside [t_lo, t_hi] are counted in s->bad_timestamps and not
 * written. base: the trace's baseTimeNanoseconds (times are written
 * relative to it, in µs), mono_to_unix as in struct tt_cap_trace. The
 * number of events written, or -1 when out of memory (none written).
 */
int tt_cap__gpu_events(struct tt_jw *w, struct gpu_store *s, int64_t base, int64_t mono_to_unix,
                       int64_t t_lo, int64_t t_hi, int64_t *ev_idx);
/* the same into o after an array's "[" the caller wrote (the unit tests):
 * each event after ",\n  " (the first after "\n  " when *first, cleared
 * once one is written). 0, or -1 (out of memory, or a write error) */
int tt_cap__gpu_write_events(struct out *o, struct gpu_store *s, int64_t base, int64_t mono_to_unix,
                             int64_t t_lo, int64_t t_hi, int64_t *ev_idx, int *first);
/* "deviceProperties": the value ([...] by device id, each on its own line;
 * "[]" when no device), where w is */
void tt_cap__gpu_devices(struct tt_jw *w, const struct gpu_store *s);
/* that value alone into o: 0, or -1 (error set) */
int tt_cap__gpu_write_devices(struct out *o, const struct gpu_store *s);

#endif
