/*
 * compare/crosscheck/crosscheck_state.h - what the files of `tracetool crosscheck`
 * share: the per-pair working structures (ET ops, matches, the join result)
 * and the helpers of crosscheck_join.c, crosscheck_order.c,
 * crosscheck_report.c and crosscheck.c. Not installed.
 */
#ifndef TT_ANALYZE_CROSSCHECK_INTERNAL_H
#define TT_ANALYZE_CROSSCHECK_INTERNAL_H

#include "common/compat.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "tracetool/crosscheck.h"

#include <inttypes.h>

enum { K_NONE = 0, K_RF, K_EXT_OFFSET, K_EXT_ORDER };
enum { M_NONE = 0, M_OK = 1, M_NAME = 2 };

#define VOTE_CAP (1u << 20)  /* offset votes kept (8 MiB) */
#define N_ANCHORS 64         /* anchors voting for a constant offset */
#define N_OFFSETS 8          /* candidate offsets evaluated */
#define LOOK 16              /* alignment: look-ahead to resynchronise */
#define RUN 3                /* alignment: agreeing names needed to resynchronise */
#define PROBE 24             /* window search: ops each side of an anchor in a probe */
#define CAND_SEQ_LIMIT 256   /* window search: candidates with the anchor's sequence number */
#define CAND_LIMIT 4096      /* window search: candidates by name only */
#define CAND_BASE 32         /* window search: candidates of a thread of m ops at most */
#define CAND_PER_OP 8        /* ... CAND_BASE + CAND_PER_OP * m */
#define KEEP 4               /* window search: probes aligned in full at least */
#define FULL_MAX 64          /* window search: probes aligned in full at most */
#define MAX_SEGS 8           /* offset segments listed per thread */

struct etop {
    int64_t row, node_id, rf, name, tid, seq; /* row: the node's place in its trace */
    int has_rf, has_tid;
};

/* a Kineto cpu_op / user_annotation slice (ts, dur: 0 when NULL; seq, when
 * NULL: -1; name: a string of struct xstrs, 0 when NULL) */
struct kop {
    int64_t id, ext, rf, name, ts, dur, seq;
    int th; /* index into tinfo.th */
    unsigned char has_ext, has_rf;
};

/* a Kineto thread of a trace */
struct kthid {
    tt_xc_id pid, tid;
};

/*
 * One trace and, once loaded from its rows (crosscheck_rows.c), what the
 * join needs of it, indexed as the join looks it up: an ET's op nodes
 * (roots excluded) sorted by rf_id; a Kineto trace's ops and their indexes
 * (positions in k) by External id, by Record function id, by thread and
 * External id, by name and External id.
 */
struct tinfo {
    int64_t id;
    char *path;
    int is_et, is_kineto;
    int has_rank, has_pid;
    int64_t rank, pid;
    char hash[33];
    int loaded;
    /* ET */
    struct etop *ops;
    size_t nops, nrf;
    int64_t et_nodes, et_roots, dup_et;
    /* Kineto */
    struct kop *k;
    size_t nk, nkext, nkrf;
    struct kthid *th;
    size_t nth;
    int64_t k_rf_nonzero, k_ext;
    int64_t *rule;    /* coalesce(rf_id, -1) of every op, sorted */
    uint32_t *by_ext; /* ops with an External id, by (External id, id) */
    uint32_t *by_rf;  /* ops with a non-zero Record function id, by (it, id) */
    uint32_t *by_thr; /* ops with an External id, by (thread, External id, id) */
    uint32_t *by_name; /* ops with an External id, by (name, External id, id) */
};

/* the strings of every trace loaded, interned by content: id = index + 1 */
struct xstrs {
    char **s;
    size_t n, alloc;
    uint32_t *h; /* open addressing: id, 0 = empty */
    size_t hcap;
};

struct match {
    int state; /* M_* */
    int kt;    /* Kineto thread (index into result.kt), -1 */
    int64_t slice, kkey, kname, ts, dur;
};

struct kthr {
    tt_xc_id pid, tid;
    int64_t k_only;
};

struct koff {
    int64_t slice, key, name, ts;
    int kt;
};

struct dupo {
    int et_side;
    int64_t id, count, name1, name2;
};

struct seg {
    int64_t rf_from, off, n;
};

struct trow {
    int has_et;
    int64_t et_tid;
    int kt;
    int64_t et_ops, matched, et_only, k_only, name_diff;
    int has_key, has_ts;
    int64_t key_lo, key_hi, ts_lo, ts_hi;
    struct seg segs[MAX_SEGS];
    size_t nsegs;
    int64_t segs_total;
};

struct result {
    int key;
    int64_t offset;
    struct match *m;
    struct kthr *kt;
    size_t nkt, akt;
    int *kth;      /* open-addressing hash of kt: index + 1, 0 = empty */
    size_t kthcap; /* a power of two, > 2 * nkt */
    int64_t matched, et_only, k_only, name_diff, dup_k, k_inwin;
    struct koff *konly;
    size_t nkonly;
    struct dupo *kdups;
    size_t nkdups;
    struct trow *rows;
    size_t nrows, arows;
    int has_ts, has_key;
    int64_t ts_lo, ts_hi, key_lo, key_hi;
    int has_const;
    int64_t const_off, const_matched;
};

struct pair {
    const struct tinfo *et, *k;
    char how[200];
    struct etop *ops;
    size_t n, nrf;
    int64_t et_nodes, et_roots, dup_et;
    int64_t k_total, k_rf_nonzero, k_ext;
    int64_t rule_et_only, rule_k_only, rule_et_n;
    int rule_equal;
    struct result *r;
    int consistent;
};

struct xc {
    tt_db *db;      /* a database input (traces loaded from it when needed, links stored) */
    struct tt__xc_links *collect; /* files: the links kept here (compare/crosscheck/links.h) */
    const tt_xc_options *o;
    size_t limit;
    struct xstrs str;
    int64_t cat_cpu, cat_ua;
    struct tinfo *t;
    size_t nt;
};

struct krow {
    int64_t id, key, name, ts, dur, seq;
};



/* crosscheck_rows.c */
int64_t xc_intern(struct xstrs *t, const char *s, size_t len);
void xc_strs_free(struct xstrs *t);
void xc_trace_release(struct tinfo *t);
/* a trace file loaded into t (not in x->t yet): 1 when the content is that
 * of a trace in x->t (t then to release); a database's trace t->id */
int xc_load_file(struct xc *x, const char *path, struct tinfo *t, int64_t *slice_base);
int xc_load_db(struct xc *x, struct tinfo *t);
/* [*lo, *hi): the positions of index `by` (n entries) whose External id is
 * in [a, b] */
void xc_ext_range(const struct tinfo *t, const uint32_t *by, size_t n, int64_t a, int64_t b,
                  size_t *lo, size_t *hi);

/* crosscheck_join.c */
int xc_oom(void);
int xc_val_eq(const tt_xc_id *a, const tt_xc_id *b);
uint64_t xc_val_hash(const tt_xc_id *v, uint64_t h);
const char *xc_val_fmt(const tt_xc_id *v, char *buf, size_t n);
int xc_cmp_i64(const void *a, const void *b);
size_t xc_lower_i64(const int64_t *a, size_t n, int64_t v);
size_t xc_count_sorted(const int64_t *a, size_t n, int64_t v);
char *xc_str_dup(struct xc *x, int64_t id);
void xc_result_free(struct result *r);
int xc_kt_index(struct result *r, const tt_xc_id *pid, const tt_xc_id *tid);
void xc_konly_add(struct xc *x, struct result *r, const struct koff *k);
void xc_kdup_add(struct xc *x, struct result *r, int64_t id, int64_t count, int64_t n1,
                 int64_t n2);
void xc_widen(int *has, int64_t *lo, int64_t *hi, int64_t a, int64_t b);
int xc_load_et(struct xc *x, struct pair *p);
int xc_check_pair(struct xc *x, struct pair *p);

/* crosscheck_order.c */
/* qsort_r comparator: size_t indices into the struct etop array `ops`, by
 * thread (ops without a thread last), then index */
int xc_cmp_thread_idx(const void *pa, const void *pb, void *ops);
int xc_join_order(struct xc *x, struct pair *p, struct result *r);

/* crosscheck_report.c */
const char *xc_key_name(int key);
int xc_export_pair(struct xc *x, const struct pair *p, tt_xc_pair *out);
void xc_trace_export(const struct tinfo *t, tt_xc_trace *out);
void xc_pair_clear(tt_xc_pair *p);

#endif
