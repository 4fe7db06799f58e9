/*
 * analyze/collectives/coll_match.c - the calls of every rank matched into
 * instances (coll_state.h).
 *
 * An instance is one collective call of the job: the calls of the same
 * collective in the same process group with the same match number on every
 * rank. The match number is the trace's sequence number ("Seq", PyTorch
 * 2.2 and later; a new epoch each time it does not grow) when the call has
 * one, else its ordinal among the calls of that collective and process group
 * on its rank, in the order of the ops' starts. Ordinals are counted before
 * the time range is applied, so that a range cutting the ranks at slightly
 * different calls does not shift the matching.
 *
 * Three passes over spills (common/spill.h; memory bounded whatever the
 * number of calls): the calls by trace and start (numbered, filtered), by
 * instance (the earliest and latest arrival, the straggler, the ranks'
 * sums), and, when the calls are wanted, by the instance's earliest arrival.
 * An instance holds at most one call per trace, so the one in memory is
 * bounded by the number of ranks.
 */
#include "common/compat.h"
#include "common/i64map.h"
#include "common/tmath.h"
#include "analyze/collectives/coll_state.h"
#include "analyze/filter/filtering.h"

#include <math.h>

/* a (process group, collective) of one trace: its counters */
struct counter {
    int64_t ordinal, last_seq, epoch;
};

/* the sums behind a rank's bandwidths */
struct bwsum {
    int64_t bytes, ns, bus_ns;
    double bus_bytes;
};

struct match {
    struct coll_run *run;
    tt_coll_result *res;
    int32_t *pos;         /* trace index -> place in rank order (-1: not selected) */
    size_t *at;           /* place -> trace index */
    size_t nsel;
    struct bwsum *bw;     /* per place */
    struct coll_call *inst; /* the calls of one instance */
    size_t ninst, ainst;
    tt__spill *by_inst, *by_time;
    int want_calls;
};

/* the instance of a call: its collective, process group and match number */
static int same_inst(const struct coll_call *x, const struct coll_call *y)
{
    return x->pg == y->pg && x->kname == y->kname && x->by_seq == y->by_seq &&
           x->epoch == y->epoch && x->mseq == y->mseq;
}

static int cmp3(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_inst(const void *a, const void *b)
{
    const struct coll_call *x = a, *y = b;
    int c;
    if ((c = cmp3(x->pg, y->pg)) || (c = cmp3(x->kname, y->kname)) ||
        (c = cmp3(x->by_seq, y->by_seq)) || (c = cmp3(x->epoch, y->epoch)) ||
        (c = cmp3(x->mseq, y->mseq)))
        return c;
    return cmp3(x->pos, y->pos);
}

static int cmp_time(const void *a, const void *b)
{
    const struct coll_call *x = a, *y = b;
    int c;
    if ((c = cmp3(x->first, y->first)))
        return c;
    return cmp_inst(a, b);
}

/* ---- sizes and bandwidths of one call ---- */

struct csize {
    int64_t in_b, out_b, s;
    double algbw, busbw, factor;
};

static int64_t bytes_of(int64_t n, int size)
{
    if (n == CNULL || size <= 0 || n > INT64_MAX / size)
        return CNULL;
    return n * size;
}

static void call_size(const struct coll_run *run, const struct coll_call *c, struct csize *z)
{
    int size = tt__coll_dtype_size(tt__coll_str_of(&run->strs, c->dtype));
    z->in_b = bytes_of(c->in_n, size);
    z->out_b = bytes_of(c->out_n, size);
    z->s = tt__coll_size(c->kind, z->in_b, z->out_b, c->group);
    z->factor = tt__coll_bus_factor(c->kind, c->group);
    z->algbw = z->busbw = NAN;
    if (z->s != CNULL && c->dur != CNULL && c->dur > 0) {
        z->algbw = (double)z->s / (double)c->dur; /* bytes/ns = GB/s */
        z->busbw = z->algbw * z->factor;
    }
}

/* ---- the ranks in order ---- */

static int cmp_rank(const void *a, const void *b, void *ctx)
{
    const struct coll_trace *tr = ctx;
    const struct coll_trace *x = &tr[*(const size_t *)a], *y = &tr[*(const size_t *)b];
    int xr = x->rank != CNULL, yr = y->rank != CNULL;
    if (xr != yr)
        return xr ? 1 : -1; /* traces without a rank first, as tt__each_trace */
    if (xr && x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return cmp3(x->id, y->id);
}

static int places(struct match *m)
{
    struct coll_run *run = m->run;
    tt_coll_result *res = m->res;
    size_t i;
    if (!(m->pos = malloc((run->ntr ? run->ntr : 1) * sizeof(*m->pos))) ||
        !(m->at = malloc((run->ntr ? run->ntr : 1) * sizeof(*m->at))))
        return tt__oom();
    for (i = 0; i < run->ntr; i++)
        if (run->tr[i].selected)
            m->at[m->nsel++] = i;
    TT_QSORT_R(m->at, m->nsel, sizeof(*m->at), cmp_rank, run->tr);
    for (i = 0; i < run->ntr; i++)
        m->pos[i] = -1;
    if (!(res->ranks = calloc(m->nsel ? m->nsel : 1, sizeof(*res->ranks))) ||
        !(m->bw = calloc(m->nsel ? m->nsel : 1, sizeof(*m->bw))))
        return tt__oom();
    for (i = 0; i < m->nsel; i++) {
        const struct coll_trace *t = &run->tr[m->at[i]];
        tt_coll_rank *r = &res->ranks[i];
        m->pos[m->at[i]] = (int32_t)i;
        r->trace_id = t->id;
        r->rank = t->rank;
        r->comm_ns = r->bytes = CNULL; /* until a call has a kernel, a size */
        if (!(r->path = strdup(t->path ? t->path : "")))
            return tt__oom();
        res->nranks = i + 1;
    }
    return 0;
}

/* ---- pass 1: each trace's calls numbered, filtered, by instance ---- */

/* the counters of (pg, collective) in trace-local map cn (cs: their store) */
static struct counter *counter_of(struct i64map *cn, struct counter **cs, size_t *n,
                                  size_t *alloc, const struct coll_call *c)
{
    int64_t key = ((int64_t)c->pg << 32) | (uint32_t)c->kname;
    size_t k;
    if (tt__i64map_get(cn, key, &k))
        return &(*cs)[k];
    if (TT_ALLOC_GROW(*cs, *n + 1, *alloc) < 0 || tt__i64map_put(cn, key, *n) < 0)
        return NULL;
    (*cs)[*n].ordinal = 0;
    (*cs)[*n].last_seq = CNULL;
    (*cs)[*n].epoch = 0;
    return &(*cs)[(*n)++];
}

/* a call's place in its (pg, collective): its Seq (epoch), or its ordinal */
static void number(struct counter *k, struct coll_call *c)
{
    k->ordinal++;
    c->by_seq = c->seq != CNULL;
    c->epoch = 0;
    c->mseq = k->ordinal;
    if (c->by_seq) {
        if (k->last_seq != CNULL && c->seq <= k->last_seq)
            k->epoch++; /* the numbers started again */
        k->last_seq = c->seq;
        c->epoch = k->epoch;
        c->mseq = c->seq;
    }
}

/* a call of the range into its rank's sums */
static void rank_sums(struct match *m, const struct coll_call *c)
{
    tt_coll_rank *r = &m->res->ranks[c->pos];
    struct bwsum *b = &m->bw[c->pos];
    struct csize z;
    call_size(m->run, c, &z);
    r->calls++;
    m->res->calls++;
    if (c->dur != CNULL)
        r->comm_ns = tt_sat_add(r->comm_ns == CNULL ? 0 : r->comm_ns, c->dur);
    if (z.s != CNULL)
        r->bytes = tt_sat_add(r->bytes == CNULL ? 0 : r->bytes, z.s);
    if (!isnan(z.algbw)) {
        b->bytes = tt_sat_add(b->bytes, z.s);
        b->ns = tt_sat_add(b->ns, c->dur);
    }
    if (!isnan(z.busbw)) {
        b->bus_bytes += (double)z.s * z.factor;
        b->bus_ns = tt_sat_add(b->bus_ns, c->dur);
    }
}

/* --name's verdict of each of the run's strings (the calls' collective and
 * name are among them) */
static int name_verdicts(struct coll_run *run)
{
    size_t i;
    int rc = 0;
    for (i = 1; run->names && rc == 0 && i <= run->strs.n; i++) {
        const char *s = tt__coll_str_of(&run->strs, (int32_t)i);
        rc = tt__flt_string(run->names, (int64_t)i, s, strlen(s));
    }
    return rc;
}

static int pass_number(struct match *m)
{
    const tt_coll_options *o = m->run->o;
    struct i64map cn;
    struct counter *cs = NULL;
    size_t n = 0, alloc = 0;
    int64_t cur = -1;
    struct coll_call c;
    int r = 0, rc = tt__spill_rewind(m->run->calls);
    memset(&cn, 0, sizeof(cn));
    while (rc == 0 && (r = tt__spill_next(m->run->calls, &c)) > 0) {
        struct counter *k;
        if (m->pos[c.trace] < 0)
            continue;
        if (c.trace != cur) { /* counters of one trace at a time */
            tt__i64map_free(&cn);
            n = 0;
            cur = c.trace;
        }
        if (!(k = counter_of(&cn, &cs, &n, &alloc, &c))) {
            rc = tt__oom();
            break;
        }
        number(k, &c);
        if (!tt__filter_in_time(&o->filter, c.cpu_ts) || !c.under ||
            !(tt__flt_name(m->run->names, c.kname) || tt__flt_name(m->run->names, c.name)))
            continue;
        c.pos = m->pos[c.trace];
        c.arrival = o->arrival == TT_COLL_ARRIVE_GPU && c.gpu_ts != CNULL ? c.gpu_ts : c.cpu_ts;
        rank_sums(m, &c);
        rc = tt__spill_put(&m->by_inst, sizeof(c), cmp_inst, &c);
    }
    tt__i64map_free(&cn);
    free(cs);
    return rc == 0 && r < 0 ? r : rc;
}

/* ---- pass 2: the instances ---- */

/* the instance in m->inst: its arrivals, straggler, the ranks' sums; its
 * calls on to the output order */
static int inst_end(struct match *m)
{
    struct coll_call *in = m->inst;
    size_t i, last = 0;
    int64_t first;
    int rc = 0;
    if (!m->ninst)
        return 0;
    first = in[0].arrival;
    for (i = 1; i < m->ninst; i++) {
        if (in[i].arrival < first)
            first = in[i].arrival;
        if (in[i].arrival > in[last].arrival)
            last = i; /* a tie: the first in rank order */
    }
    m->res->instances++;
    for (i = 0; i < m->ninst; i++) {
        in[i].first = first;
        in[i].last = in[last].arrival;
        in[i].ninst = (int64_t)m->ninst;
        in[i].strag = m->ninst > 1 ? (int64_t)m->at[in[last].pos] : -1;
        if (m->ninst > 1) {
            tt_coll_rank *r = &m->res->ranks[in[i].pos];
            r->matched++;
            r->late_total_ns = tt_sat_add(r->late_total_ns, tt_sat_sub(in[i].arrival, first));
        }
        if (rc == 0 && m->want_calls)
            rc = tt__spill_put(&m->by_time, sizeof(in[i]), cmp_time, &in[i]);
    }
    if (m->ninst > 1) {
        tt_coll_rank *r = &m->res->ranks[in[last].pos];
        int64_t skew = tt_sat_sub(in[last].arrival, first);
        r->last++;
        r->skew_total_ns = tt_sat_add(r->skew_total_ns, skew);
        if (skew > r->skew_max_ns)
            r->skew_max_ns = skew;
    }
    m->ninst = 0;
    return rc;
}

static int pass_instances(struct match *m)
{
    struct coll_call c;
    int r = 0, rc = tt__spill_rewind(m->by_inst);
    while (rc == 0 && (r = tt__spill_next(m->by_inst, &c)) > 0) {
        if (m->ninst && !same_inst(&m->inst[0], &c) && (rc = inst_end(m)) < 0)
            break;
        if (TT_ALLOC_GROW(m->inst, m->ninst + 1, m->ainst) < 0)
            return tt__oom();
        m->inst[m->ninst++] = c;
    }
    if (rc == 0 && r < 0)
        rc = r;
    return rc == 0 ? inst_end(m) : rc;
}

/* ---- pass 3: the calls in order ---- */

static void to_call(const struct coll_run *run, const struct coll_call *c, tt_coll_call *o)
{
    const struct coll_trace *t = &run->tr[c->trace];
    struct csize z;
    call_size(run, c, &z);
    memset(o, 0, sizeof(*o));
    o->trace_id = t->id;
    o->rank = t->rank;
    o->pg = tt__coll_str_of(&run->strs, c->pg);
    o->collective = tt__coll_str_of(&run->strs, c->kname);
    o->name = tt__coll_str_of(&run->strs, c->name);
    o->dtype = tt__coll_str_of(&run->strs, c->dtype);
    o->seq = c->mseq;
    o->by_seq = c->by_seq;
    o->in_nelems = c->in_n;
    o->out_nelems = c->out_n;
    o->in_bytes = z.in_b;
    o->out_bytes = z.out_b;
    o->size_bytes = z.s;
    o->group_size = c->group;
    o->cpu_start_ns = c->cpu_ts;
    o->start_ns = c->gpu_ts;
    o->dur_ns = c->dur;
    o->kernels = c->kernels;
    o->algbw = z.algbw;
    o->busbw = z.busbw;
    o->arrival_ns = c->arrival;
    o->ranks = c->ninst;
    o->late_ns = c->ninst > 1 ? tt_sat_sub(c->arrival, c->first) : CNULL;
    o->skew_ns = c->ninst > 1 ? tt_sat_sub(c->last, c->first) : CNULL;
    o->straggler_rank = c->strag >= 0 ? run->tr[c->strag].rank : CNULL;
    o->straggler_trace = c->strag >= 0 ? run->tr[c->strag].id : 0;
}

static int pass_calls(struct match *m, tt_coll_call_fn fn, void *ctx)
{
    struct coll_call c;
    tt_coll_call out;
    int r = 0, rc = tt__spill_rewind(m->by_time);
    while (rc == 0 && (r = tt__spill_next(m->by_time, &c)) > 0) {
        to_call(m->run, &c, &out);
        if ((rc = fn(ctx, &out)) != 0)
            return rc > 0 ? tt_error_set(TT_ECANCELED, "cancelled") : rc;
    }
    return rc == 0 && r < 0 ? r : rc;
}

/* the ranks' bandwidths from their sums */
static void rank_bw(struct match *m)
{
    size_t i;
    for (i = 0; i < m->res->nranks; i++) {
        const struct bwsum *b = &m->bw[i];
        tt_coll_rank *r = &m->res->ranks[i];
        r->algbw = b->ns > 0 ? (double)b->bytes / (double)b->ns : NAN;
        r->busbw = b->bus_ns > 0 ? b->bus_bytes / (double)b->bus_ns : NAN;
    }
}

int tt__coll_match(struct coll_run *run, tt_coll_result *res, tt_coll_call_fn fn, void *ctx)
{
    struct match m;
    int rc;
    memset(&m, 0, sizeof(m));
    m.run = run;
    m.res = res;
    m.want_calls = fn != NULL;
    if ((rc = places(&m)) == 0 && (rc = name_verdicts(run)) == 0 &&
        (rc = pass_number(&m)) == 0 &&
        (rc = pass_instances(&m)) == 0) {
        rank_bw(&m);
        if (fn)
            rc = pass_calls(&m, fn, ctx);
    }
    free(m.pos);
    free(m.at);
    free(m.bw);
    free(m.inst);
    tt__spill_free(m.by_inst);
    tt__spill_free(m.by_time);
    return rc;
}
