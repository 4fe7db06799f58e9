/*
 * analyze/collectives/coll_state.h - what the parts of `tracetool
 * collectives` share (internal to libtracetool):
 *   coll_meta.c    what a call's args, names and dtypes mean (sizes, kinds,
 *                  nccl-tests' factors), and the run's strings
 *   coll_stream.c  one trace's rows -> its calls (a consumer of the record
 *                  stream, store/ingest_rows.h)
 *   coll_match.c   the calls of every rank matched into instances: the
 *                  straggler, the skew, the ranks' summary, the calls in order
 *   collectives.c  the public calls and the printing
 */
#ifndef TT_ANALYZE_COLLECTIVES_STATE_H
#define TT_ANALYZE_COLLECTIVES_STATE_H

#include "tracetool/analyze.h"
#include "tracetool/collectives.h"
#include "analyze/input/each.h"
#include "common/spill.h"
#include "common/strtab.h"
#include "analyze/filter/filtering.h"
#include "store/ingest_rows.h"

#define CNULL TT_COLL_NULL

/* ---- coll_meta.c ---- */

/* the run's strings (process groups, names, dtypes, kinds): id 1, 2, ...;
 * 0 is none */
struct coll_strs {
    tt_strtab tab;
    const char **s;   /* id -> text (into tab's pool: kept as offsets) */
    size_t n, alloc;
};
/* the id of s[0..len) (added when new); 0 and the error set when out of memory */
int32_t tt__coll_str(struct coll_strs *st, const char *s, size_t len);
const char *tt__coll_str_of(const struct coll_strs *st, int32_t id);
void tt__coll_strs_free(struct coll_strs *st);

/* what the args of a record_param_comms op or of a kernel (newer Kineto)
 * say of a collective; CNULL / 0 where they say nothing */
struct coll_fields {
    int64_t in_n, out_n, group, seq;
    int32_t name, dtype, pg;   /* coll_strs ids */
};
void tt__coll_fields_init(struct coll_fields *f);
/* parse an args object (JSON text) into f; bad JSON says nothing (0) */
int tt__coll_args(struct coll_strs *st, const char *json, size_t len, struct coll_fields *f);
/* an op's "Input Dims" / "Input type" (JSON text, NULL when absent): the
 * elements of its tensors summed, the first tensor's type */
int tt__coll_dims(struct coll_strs *st, const char *dims, const char *types,
                  struct coll_fields *f);

/* the kinds of collective (tracetool/collectives.h, `collective`) */
enum { CK_OTHER = 0, CK_ALLREDUCE, CK_ALLGATHER, CK_REDUCESCATTER, CK_ALLTOALL,
       CK_BROADCAST, CK_REDUCE, CK_SEND, CK_RECV, CK_SENDRECV, CK_GATHER, CK_SCATTER,
       CK_BARRIER, CK_COUNT };
/* the kind of a collective's name ("allreduce", "all_reduce", "AllReduce",
 * "_allgather_base", "reduce_scatter_tensor", ...); CK_OTHER when none */
int tt__coll_kind(const char *name, size_t len);
const char *tt__coll_kind_name(int kind);
/* the collective of an NCCL/RCCL kernel's name (ncclKernel_AllReduce_RING_LL_Sum_float
 * -> "AllReduce"): its start and length, 0 when it names none */
size_t tt__coll_kernel_coll(const char *kernel, const char **start);
/* a dtype's size in bytes ("Float", "float", "c10::Half", "long int", ...);
 * 0 when unknown */
int tt__coll_dtype_size(const char *dtype);
/* nccl-tests' bus-bandwidth factor of kind for n ranks; NaN when none */
double tt__coll_bus_factor(int kind, int64_t n);
/* S of nccl-tests (bytes the bandwidths divide): from the bytes in and
 * out, the group size n; CNULL when unknown */
int64_t tt__coll_size(int kind, int64_t in_b, int64_t out_b, int64_t n);
/* a CPU op that is a collective's annotation: nccl:*, gloo:*, ... (the
 * backend's profiling title); *coll the collective's part */
int tt__coll_is_annot(const char *name, const char **coll);

/* ---- coll_stream.c ---- */

/*
 * One call of one trace as it waits to be matched (a spill record): the
 * record_param_comms op, its nccl:* annotation and the kernels it launched
 * merged.
 */
struct coll_call {
    int64_t trace;        /* index in the run's traces */
    int64_t cpu_ts;       /* the op's start (the runtime call's, no op) */
    int64_t key;          /* the op's slice id; order of a lone kernel */
    int64_t gpu_ts, dur, kernels; /* first kernel start, durations summed */
    int64_t in_n, out_n, group, seq;
    int32_t name, dtype, pg;  /* coll_strs ids (pg "" when none) */
    int32_t kind, kname;      /* CK_*; the collective's name (coll_strs) */
    int32_t under;            /* in --under's ops (1 without --under): its op, its
                                 annotation or a kernel's launch */
    /* set by the matching */
    int64_t epoch;        /* by_seq: restarts of the trace's Seq; else 0 */
    int64_t mseq;         /* Seq, or the ordinal in (pg, kind) */
    int64_t arrival;
    int32_t by_seq, pos;  /* pos: the trace's place in rank order */
    int64_t first, last;  /* the instance's earliest and latest arrival */
    int64_t strag, ninst; /* the straggler's trace index (-1: none), ranks */
};

/* the run: its strings and every trace read */
struct coll_trace {
    int64_t id, rank;     /* rank CNULL when none */
    int64_t world;        /* distributedInfo.world_size, CNULL */
    char *path;
    int selected;
    int64_t ncalls;       /* calls read (before the time range) */
};

struct coll_run {
    const tt_coll_options *o;
    struct coll_strs strs;
    struct coll_trace *tr;
    size_t ntr, atr;
    tt__spill *calls;     /* every trace's calls, by trace then cpu_ts */
    int64_t found;        /* calls read over every trace */
    tt__flt *scope;       /* --under alone (NULL: none), as the traces are read */
    tt__flt *names;       /* --name alone (NULL: none): the calls' collective and
                             name (coll_strs ids), as they are matched */
};

/* read one trace (a file, db NULL; or trace `trace` of db) and add its calls
 * to run->calls as trace index ti; res: its format and rank (metadata freed) */
int tt__coll_read(struct coll_run *run, size_t ti, const char *path, tt_db *db,
                  int64_t trace, tt__rows_result *res);
/* order of run->calls */
int tt__coll_cmp_read(const void *a, const void *b);

/* ---- coll_match.c ---- */

/* the instances of every selected trace's calls: res the ranks' summary;
 * fn (may be NULL) each call in order */
int tt__coll_match(struct coll_run *run, tt_coll_result *res, tt_coll_call_fn fn, void *ctx);

#endif
