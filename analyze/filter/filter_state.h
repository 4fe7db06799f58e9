/*
 * analyze/filter/filter_state.h - what filter_match.c (the verdicts),
 * filter_load.c (--under's first reading) and filter_sink.c (the wrapped
 * sink) share. Internal to analyze/filter/.
 */
#ifndef TT_ANALYZE_FILTER_STATE_H
#define TT_ANALYZE_FILTER_STATE_H

#include "analyze/filter/filtering.h"

#include <regex.h>

/* a string's verdict (tt__flt.verdict[id]) */
enum { V_SEEN = 1, V_MATCH = 2, V_UNDER = 4 };

/* an op --under chose, as read */
struct flt_raw {
    tt__tkey key;
    int64_t ts, end;
};

struct flt_iv {
    int64_t ts, end;
};

/* a thread's outermost matching ops: iv[off .. off + n), by start */
struct flt_thread {
    tt__tkey key;
    size_t off, n;
};

struct flt_ops {
    struct flt_raw *raw;    /* as read, until sealed */
    size_t nraw, araw;
    struct flt_thread *th;  /* by key */
    size_t nth;
    struct flt_iv *iv;
    size_t niv;
    size_t last;            /* the thread asked last */
    int sealed;
};

/* a GPU row's links waiting for its batch (the wrapped sink's gpu_links) */
struct flt_link {
    int64_t op, name, rt, rt_ts;
};

struct tt__flt {
    tt_filter f;
    regex_t name_re, under_re;
    int have_name, have_under;
    unsigned char *verdict; /* string id -> V_* (--name, --under) */
    size_t nverdict;
    struct flt_ops ops;     /* --under's intervals */
    tt__gpu_launch *lq;     /* launches of GPU rows to come: lq[lq_head .. lq_n) */
    size_t lq_head, lq_n, lq_a;
    int64_t gpu_start;      /* tt__flt_gpu_start */
    /* the wrapped sink (filter_sink.c) */
    tt__rowsink inner;
    unsigned tables;
    uint64_t cols[TT_ROWS_COUNT]; /* the cells asked of a database */
    tt__cell *cells;        /* a batch's rows that pass */
    size_t acells;
    struct flt_link *links; /* inner's gpu_links waiting: links[links_head .. nlinks) */
    size_t links_head, nlinks, alinks;
};

/* the verdict byte of string id in *v (grown, zeroed); NULL: out of memory
 * (or id < 0) */
unsigned char *tt__flt_verdict_slot(unsigned char **v, size_t *n, int64_t id);
/* 1 when s[0..len) matches re, 0 not, TT_ENOMEM */
int tt__flt_match(const regex_t *re, const char *s, size_t len);
/* the next launch tt__flt_launch took, NULL when none waits */
const tt__gpu_launch *tt__flt_launch_next(tt__flt *fl);
void tt__flt_ops_clear(struct flt_ops *o);
/* tt__flt_gpu_fails with the row's launch l (NULL: none taken) */
int tt__flt_gpu_fails_with(tt__flt *fl, const tt__cell *row, const tt__gpu_launch *l);

#endif
