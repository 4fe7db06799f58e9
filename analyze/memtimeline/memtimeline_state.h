/*
 * analyze/memtimeline/memtimeline_state.h - what the memory timeline's files share:
 * the consumer of a trace's rows (memtimeline_stream.c), the classifying
 * passes (memtimeline_passes.c, memtimeline_et.c) and the job that turns
 * what they learn into a tt_memtl_result and writes it (memtimeline.c).
 */
#ifndef TT_MEMTIMELINE_INTERNAL_H
#define TT_MEMTIMELINE_INTERNAL_H

#include "common/buf.h"
#include "common/i64map.h"
#include "tracetool/analyze.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NCOL TT_MEMTL_NCOL /* torch's sizes rows: baseline + 8 categories */
#define MAX_BUCKETS 3000
#define TOP_N TT_MEMTL_TOP_N

/* phase flags of an event's context; PH_FLT_*: an op around it has a name
 * --name finds, --under matches (the filters, tt__memtl_load_filtered) */
enum { PH_BACKWARD = 1, PH_ACCUMGRAD = 2, PH_OPTIMIZER = 4, PH_STEP = 8, PH_FLT_NAME = 16,
       PH_FLT_UNDER = 32 };

/* the Execution Trace's verdicts (memtimeline_et.c) */
enum { ETR_NONE = 0, ETR_GRADIENT, ETR_ACTIVATION, ETR_AUTOGRAD, ETR_COUNT };

extern const char *const tt__memtl_cat_rule[]; /* TT_CAT_COUNT texts */
extern const char *const tt__memtl_et_rule[];  /* ETR_COUNT texts (the first NULL) */

/* ---- live allocations by address (open addressing) ---- */

struct live {
    int64_t addr, bytes, mem_id, ts, op_id, op_end;
    int64_t op_name; /* string id */
    size_t idx; /* its record in the spill */
    unsigned flags;
    int cat;
    int etcat, rule; /* the ET's verdict (-1 none) and its rule (ETR_*) */
    int used;
};

struct livemap {
    struct live *e;
    size_t cap, n;
};

size_t tt__memtl_hash(int64_t a, size_t cap);
struct live *tt__live_find(struct livemap *m, int64_t addr);
/* the entry of addr, added (zeroed) if absent; NULL when out of memory */
struct live *tt__live_put(struct livemap *m, int64_t addr);
void tt__live_del(struct livemap *m, struct live *e);

/* ---- the passes ---- */

/* an event's context (pass 1): all zero when no op is around it */
struct memctx {
    int64_t op_id, op_end;       /* the innermost op and its end */
    int64_t op_name, step_name;  /* its name and its ProfilerStep's (string ids) */
    unsigned flags;              /* PH_* of the ops around it */
    int has;                     /* an op is around it */
};

/* the contexts of the device's events by id (id - lo) */
struct ctxstore {
    struct memctx *v;
    int64_t lo;
    size_t n;
};

/* the context of event id (zeros when it has none) */
static inline const struct memctx *tt__memtl_ctx(const struct ctxstore *cs, int64_t id)
{
    static const struct memctx none;
    return id >= cs->lo && (uint64_t)(id - cs->lo) < cs->n ? &cs->v[id - cs->lo] : &none;
}

/* the ops open around a point of one thread, innermost last */
struct memframe {
    int64_t id, end, name; /* name: its string id */
    int64_t step_name;       /* the ProfilerStep around it (0 none) */
    unsigned flags;          /* PH_* of it and the ops around it */
};

struct memwalk {
    struct memframe *stack;
    size_t n, alloc;
};

/* the phase flags (PH_*) of an op's name */
unsigned tt__memtl_flags_of(const char *name, int is_backward_seq);
/* an op starting now that ends at end: what ended before it is popped */
int tt__memtl_walk_push(struct memwalk *w, int64_t id, int64_t end, unsigned f, int64_t name);
/* pop the ops that ended before ts */
void tt__memtl_walk_pop(struct memwalk *w, int64_t ts);

/* one of the device's events with a time and a size, with what the passes
 * learnt of it: the records the category and emission passes read, in time
 * order, from a temporary file (struct evspill) */
enum { EV_ADDR = 1, EV_TA = 2, EV_TR = 4 };

struct memev {
    int64_t id, ts, addr, bytes, ta, tr; /* ta, tr: Total Allocated / Reserved */
    int64_t op_id, op_end;               /* the context */
    int64_t op_name, step_name;          /* string ids */
    unsigned flags;                      /* its PH_* */
    unsigned has;                        /* EV_* */
    int etcat, rule;                     /* the ET's verdict: category (-1 none), ETR_* */
};

struct evspill {
    FILE *f;
    size_t n;                 /* records */
    unsigned char *cat, *rule; /* per record: pass 2's category and rule */
};

/* the next record (1), the end (0) or an error; rewind first */
int tt__evspill_rewind(struct evspill *sp);
int tt__evspill_next(struct evspill *sp, struct memev *ev);
void tt__evspill_free(struct evspill *sp);

/* a block freed before any allocation of its address: PREEXISTING */
struct memtl_pre {
    int64_t addr, bytes;
};

/* the most runs in time order that loading a device merges (else it sorts) */
#define MEMRD_RUNS 64

/* what the passes learn on the way, for the emission pass */
struct memtl_scan {
    int have_ts;             /* the device has [memory] events with a time */
    int64_t ts_min, ts_max;  /* their range (trace ns) */
    int64_t peak_mem_id;     /* the first event at the highest total_allocated, 0 none */
    int64_t peak_op, peak_step; /* the names (string ids) of its context's op and
                                 * ProfilerStep (0 none) */
    int has_steps;           /* the trace has ProfilerStep#N ops (PARAMETER needs them) */
    /* the allocator's Total Allocated minus the blocks the timeline knows, at
     * the first event that has it: memory live before the trace and never
     * freed in it (torch's PREEXISTING tensors a trace cannot name) */
    int have_before;
    int64_t before;
    struct memtl_pre *pre;   /* PREEXISTING blocks in time order */
    size_t npre, apre;
};

/*
 * Events without an "Addr" (PyTorch 1.8/1.9 traces carry only "Bytes"): an
 * allocation gets a made-up address (negative, so never a real one) and a
 * free of N bytes takes the most recent live allocation of N bytes (LIFO:
 * temporaries are freed first); a free with none is a block live before the
 * trace (PREEXISTING), as in torch. The passes read the same events in the
 * same order, so each gets the same addresses. docs/MEMTIMELINE.md.
 */
struct addr_synth {
    struct i64map by_size;  /* bytes -> index into stk */
    struct synth_stack {
        int64_t *a;
        size_t n, cap;
    } *stk;
    size_t nstk, astk;
    int64_t next;           /* the next made-up address (counts down from -1) */
};
/* the event's address: its own (has), or a made-up one (above); 0 or
 * TT_ENOMEM */
int tt__memtl_addr(struct addr_synth *s, int has, int64_t own, int64_t bytes, int64_t *addr);
void tt__memtl_addr_free(struct addr_synth *s);
int tt__memtl_str_has(const char *s, const char *needle);

/* event id at ts: its context (the top of w) into cs; its time into sc's range */
void tt__memtl_store_context(struct ctxstore *cs, struct memtl_scan *sc, int64_t id, int64_t ts,
                             const struct memwalk *w);
/* 1b: the verdicts of an Execution Trace linked in db (table et_links) to
 * the trace: event id (the row's number, from 1) -> ETV(cat, rule) in et;
 * nothing when db is NULL or has no links */
#define ETV(cat, rule) ((size_t)(cat) | (size_t)(rule) << 8)
struct tt_db;
int tt__memtl_et_pass(struct tt_db *db, int64_t trace, int dtype, int64_t did, int nocat,
                      const struct ctxstore *cs, struct i64map *et);
/* the same verdicts with no database: the ET read from its file, the links
 * of compare/crosscheck/links.h, the slices' parents and the device's
 * events from the trace's rows read into pre (tt__memtl_read_file_parents) */
struct memtl_streamed;
struct tt__xc_links;
int tt__memtl_et_pass_file(const char *et_path, const struct tt__xc_links *links,
                           const struct memtl_streamed *pre, size_t pdev, int dtype, int64_t did,
                           int nocat, struct i64map *et);

/* 2: each allocation's category and rule (sp->cat, sp->rule); the
 * PREEXISTING blocks, the peak event and its context */
int tt__memtl_category_pass(struct evspill *sp, int nocat, struct memtl_scan *sc);

/*
 * What memtimeline_stream.c reads of a trace's rows (a file's or a
 * database's): pass 1 done for every device, the counts that choose the
 * device, each device's events in a spill, the strings by id.
 */
struct memtl_devscan {
    int dtype;
    int64_t did;
    struct memtl_scan sc; /* pass 1's part: the time range, has_steps */
    int64_t nall;         /* its [memory] events */
    int64_t nrec;         /* those with a time and a size: its records in the spill */
    int64_t last_ts;
    int nruns;            /* its records in id order: runs in time order, run k */
    size_t run_at[MEMRD_RUNS]; /* from spill record run_at[k] (over MEMRD_RUNS: nruns -1) */
};

/* an event with a time and a size as the rows gave it */
struct memrec {
    int64_t id, ts, addr, bytes, ta, tr;
    uint32_t dev; /* index into dev */
    uint32_t has; /* EV_* */
};

/* a row of torch's raw export (a memory-timeline-raw input) */
struct memtl_rawrow {
    int64_t ts, action, bytes, cat;
};

struct memtl_streamed {
    struct ctxstore cs; /* every device's events */
    struct memtl_devscan *dev;
    size_t ndev, adev;
    FILE *spill;  /* struct memrec of every device, in id order */
    size_t nrec;
    struct memtl_rawrow *raw; /* a raw export's rows in order */
    size_t nraw, araw;
    int64_t raw_min, raw_max; /* the smallest time above 0 (0: none), the largest */
    int have_raw_max;
    struct i64map strs; /* string id -> offset into text << 4 | PH_* of it */
    tt_buf text;
    /* memtimeline FILE --et: every slice's parent_id, parent[id - 1] (0:
     * none), for the walk from an op up to the innermost one the ET links */
    int want_parents;
    int64_t *parent;
    size_t nparent;
    /* the trace */
    tt_trace_format format;
    int have_rank;
    int64_t rank, base_ns;
    char *label;
    struct tt__flt *fl; /* the filters it was read with (NULL: none) */
};

/* a trace file's rows (read twice, TT_ROWS_RELINK, for what one reading
 * cannot give) or one trace of a database into *out (free with
 * tt__memtl_streamed_free, not needed after a failure); fl: the filters
 * (NULL: none), told the strings: the ops --name and --under choose carry
 * PH_FLT_* to the contexts of what they enclose (tt__memtl_load_filtered) */
struct tt__flt;
int tt__memtl_read_file(const char *path, struct tt__flt *fl, struct memtl_streamed *out);
int tt__memtl_read_db(struct tt_db *db, int64_t trace, struct tt__flt *fl,
                      struct memtl_streamed *out);
/* as tt__memtl_read_file, each slice's parent kept too (out->parent) */
int tt__memtl_read_file_parents(const char *path, struct tt__flt *fl,
                                struct memtl_streamed *out);
void tt__memtl_streamed_free(struct memtl_streamed *o);
/* string id's text, NULL if none */
const char *tt__memtl_str(const struct memtl_streamed *o, int64_t id);

/* the device's events in time order from the spill, with their context and
 * verdict, into sp */
int tt__memtl_load_streamed(const struct memtl_streamed *pre, size_t dev, const struct ctxstore *cs,
                            const struct i64map *et, struct evspill *sp);
/* the same with the filters fl (NULL: none) of the read: the blocks whose
 * allocation is inside an op --name finds and one --under matches (its
 * context's PH_FLT_*), their events in --time-range; with --name or
 * --under the allocator's totals are left out (they count every block) */
int tt__memtl_load_filtered(const struct memtl_streamed *pre, size_t dev,
                            const struct ctxstore *cs, const struct i64map *et,
                            struct evspill *sp, struct tt__flt *fl);
/* ev's context and verdict, then ev onto the spill sp */
int tt__memtl_spill_event(struct memev *ev, const struct ctxstore *cs, const struct i64map *et,
                          struct evspill *sp);
/* after the last tt__memtl_spill_event: the per-record arrays */
int tt__memtl_spill_done(struct evspill *sp);

#endif
