/*
 * formats/kineto.h - the meaning of Kineto events (formats/kineto.c). Internal.
 */
#ifndef TT_FORMATS_KINETO_H
#define TT_FORMATS_KINETO_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

/* The class of a complete ("X") event, from its category. */
enum { TT_XC_SLICE, TT_XC_RUNTIME, TT_XC_KERNEL, TT_XC_MEMCPY, TT_XC_MEMSET,
       TT_XC_GPU_ANNOT, TT_XC_SYNC };
int tt_kineto_class(const char *cat);
/* gpu_ops.kind of each class: "slice", "runtime", "kernel", ... */
extern const char *const tt_kineto_kind_name[];
/* "Memcpy HtoD (Pageable -> Device)" -> "HtoD"; "Memset (Device)" -> "Device";
 * the length (0: none) and *start */
size_t tt_kineto_copy_kind(const char *name, const char **start);
/*
 * 1 when a GPU kernel name is a communication kernel (the one predicate;
 * README.md, "tracetool breakdown", comm_ns):
 *   - HTA's CommunicateKernelGroupingPattern less its ^hip (hip* names are
 *     runtime calls and copies): NCCL (ncclKernel_*, ncclDevKernel_*), RCCL
 *     (NCCL's names, or rccl*), HCCL;
 *   - a collective token in the function's name and namespaces (not its
 *     template arguments or parameters), as one to three consecutive words,
 *     words split at '_', '::', camel case and digits: all_reduce /
 *     AllReduce / allreduce, all_gather[v], reduce_scatter[v], all_to_all[v] /
 *     alltoall / all2all, send_recv, cross_device_reduce (vLLM / sglang
 *     custom all-reduce); or a word multimem, or one that starts with
 *     nvshmem, msccl, userbuffers or kuserbuffers; never "reduce", "gather",
 *     "scatter" or "broadcast" alone; Inductor's fused kernels
 *     (triton_*_fused_*: named after the ops they fused) never by token;
 *   - or, when extra is not NULL, a match of one of its patterns.
 */
typedef struct tt_comm_rules {
    regex_t *re;             /* POSIX extended, searched in the whole name */
    size_t n;
} tt_comm_rules;
int tt_kineto_is_comm(const char *name, const tt_comm_rules *extra);
/* compile patterns[0..n) (REG_EXTENDED); 0, or TT_EINVALID naming the bad
 * one (*r is then empty) or TT_ENOMEM */
int tt_comm_rules_compile(tt_comm_rules *r, const char *const *patterns, size_t n);
void tt_comm_rules_free(tt_comm_rules *r);
/* Rank from a file name ("rank-70", "rank_3", "worker5_..."); 1 if found. */
int tt_rank_from_name(const char *path, int64_t *rank);
/* The trace-level facts among a Kineto trace's top-level keys, decoded in
 * one place for every reader of them (ingest, info) */
typedef struct tt_kineto_meta {
    int64_t base_time_ns, pid, rank, world_size;
    int have_base, have_pid, have_rank, have_world;
    char *schema_version;    /* "schemaVersion" / "schema" (a non-string: its JSON) */
    char *display_time_unit; /* "displayTimeUnit" */
    char *trace_name;        /* "traceName" */
} tt_kineto_meta;

/* Decode one top-level key, json its raw value (as tt_trace_sink.on_meta
 * gives it); keys that carry none of the facts are ignored. 0 or TT_ENOMEM. */
int tt_kineto_meta_key(tt_kineto_meta *m, const char *key, const char *json, size_t len);
void tt_kineto_meta_release(tt_kineto_meta *m);


#endif
