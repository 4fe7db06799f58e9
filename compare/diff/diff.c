/*
 * compare/diff/diff.c - the decision of `tracetool diff`: two sides' per-step
 * samples (diff_summary.c) into gated metrics with verdicts, the per-key
 * rows (added, removed, count changes, the contributors to the step time
 * change) and an exit code. docs/DIFF.md says the rules.
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static const char *const metric_unit[M_COUNT] = { "ns", "ns", "ns", "bytes", "bytes",
                                                  "count", "count", "count" };
static const char *const metric_id[M_COUNT] = {
    "cpu_step_time", "device_step_time", "gpu_busy", "peak_allocated", "peak_reserved",
    "kernels_per_step", "memcpy_per_step", "memset_per_step",
};

/* the finite values of v[0..n) into a new array */
static double *finite_of(const double *v, size_t n, size_t *k)
{
    double *o = malloc((n ? n : 1) * sizeof(*o));
    size_t i;
    *k = 0;
    if (!o)
        return NULL;
    for (i = 0; i < n; i++)
        if (!isnan(v[i]))
            o[(*k)++] = v[i];
    return o;
}

static double vmax(const double *v, size_t n)
{
    double m = NAN;
    size_t i;
    for (i = 0; i < n; i++)
        if (isnan(m) || v[i] > m)
            m = v[i];
    return m;
}

/* the smallest k with 1 / C(2k, k) <= alpha */
static size_t steps_needed(double alpha)
{
    size_t k;
    for (k = 1; k < 64; k++)
        if (tt_mwu_p_min(k, k) <= alpha)
            return k;
    return 64;
}

/* a change this large is never passed silently: at least inconclusive */
#define LARGE_PCT 20.0
/*
 * A matched row regresses when its time grew beyond its runs' speed
 * (diff_shift.c) by at least SHIFT_MIN (log; 0.40 is x1.49) and its share of
 * the step by at least POINTS_MIN, both by the runs a side (the fewer
 * side's): a median over more runs moves less between runs of the same code.
 * Measured with bench/diff_calibrate.py on real runs, quiet and under a CPU
 * hog (bench/README.md): at these values A/A pairs were called regressed in
 * at most 3%. A grown key at half of both is inconclusive: never a silent
 * pass.
 */
/* the steps' one-sided Mann-Whitney p of a row's shares must be at most
 * this: single steps of a run swing (a preempted op held 39% of one step
 * and 7% of the next), so the medians' change must show in the steps too */
#define STEPS_P 0.05

static const double SHIFT_MIN[5] = { 0.40, 0.35, 0.30, 0.25, 0.20 };

static double shift_min(size_t runs)
{
    return SHIFT_MIN[(runs < 1 ? 1 : runs > 5 ? 5 : runs) - 1];
}

static double points_min(size_t runs)
{
    return runs <= 1 ? 0.04 : runs <= 3 ? 0.03 : 0.02;
}

/* the runs a side's samples come from */
static size_t nruns_of(const tt_diff_side *s)
{
    int32_t nr = 0;
    size_t i;
    for (i = 0; i < s->n; i++)
        if (s->run[i] + 1 > nr)
            nr = s->run[i] + 1;
    return (size_t)nr;
}

/* the median of each run's finite values of v[0..s->n): one value per run
 * that has any (NULL when out of memory) */
static double *run_medians(const tt_diff_side *s, const double *v, size_t *k)
{
    int32_t nr = (int32_t)nruns_of(s), r;
    size_t i, c;
    double *out, *tmp;
    *k = 0;
    out = malloc(((size_t)nr + 1) * sizeof(*out));
    tmp = malloc((s->n + 1) * sizeof(*tmp));
    if (!out || !tmp) {
        free(out);
        free(tmp);
        return NULL;
    }
    for (r = 0; r < nr; r++) {
        for (i = 0, c = 0; i < s->n; i++)
            if (s->run[i] == r && !isnan(v[i]))
                tmp[c++] = v[i];
        if (c)
            out[(*k)++] = tt_median(tmp, c);
    }
    free(tmp);
    return out;
}

/* logarithms in place (the run offset is a factor; its log is additive) */
static void logs(double *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        v[i] = v[i] > 0 ? log(v[i]) : NAN;
}

/*
 * Several runs a side: the runs are the samples. Each run's median step time,
 * Welch's t on their logarithms (a run's speed offset is a factor). 1 when
 * decided here, 0 when a side has fewer than 2 runs, -1 out of memory.
 */
static int decide_runs(tt_diff_metric *m, const tt_diff_side *b, const tt_diff_side *n, int which,
                       double thr_pct, const tt_diff_options *o)
{
    size_t kb, kn;
    double *mb = run_medians(b, b->m[which], &kb), *mn = run_medians(n, n->m[which], &kn);
    double change, base, new_;
    int rc = 0;
    if (!mb || !mn) {
        rc = -1;
        goto out;
    }
    if (kb < 2 || kn < 2)
        goto out;
    rc = 1;
    base = tt_median(mb, kb);
    new_ = tt_median(mn, kn);
    change = base > 0 ? new_ / base - 1.0 : 0;
    m->base = base;
    m->new_ = new_;
    m->ratio = base > 0 ? new_ / base : NAN;
    logs(mb, kb);
    logs(mn, kn);
    m->p = change >= 0 ? tt_welch_p_greater(mb, kb, mn, kn) : tt_welch_p_greater(mn, kn, mb, kb);
    m->exact = 0;
    if (fabs(change) * 100 < thr_pct || o->no_stats) {
        m->verdict = fabs(change) * 100 < thr_pct ? TT_V_UNCHANGED
                     : change > 0                 ? TT_V_REGRESSED
                                                  : TT_V_IMPROVED;
    } else if (!isnan(m->p) && m->p <= o->alpha) {
        m->verdict = change > 0 ? TT_V_REGRESSED : TT_V_IMPROVED;
    } else if (change * 100 >= LARGE_PCT) {
        m->verdict = TT_V_INCONCLUSIVE;
    } else {
        m->verdict = TT_V_UNCHANGED;
    }
    snprintf(m->note, sizeof(m->note),
             "%zu/%zu runs: run medians compared (Welch t on logs, p = %.3g)%s", kb, kn, m->p,
             m->verdict == TT_V_INCONCLUSIVE ? ": large, not significant" :
             m->verdict == TT_V_UNCHANGED && fabs(change) * 100 >= thr_pct
                 ? ": within run-to-run noise" : "");
out:
    free(mb);
    free(mn);
    return rc;
}

/* One run a side and the CPU clock: a run's speed offset (runs of the same
 * code differ by tens of % on a loaded machine) cannot be told from a
 * change, so the step time is not gated; a large slowdown (LARGE_PCT) is
 * inconclusive, never a silent pass (calls per step and shares gate) */
static void decide_one_run(tt_diff_metric *m, double change, const tt_diff_options *o)
{
    TT_UNUSED(o);
    if (change * 100 >= LARGE_PCT) {
        m->verdict = TT_V_INCONCLUSIVE;
        snprintf(m->note, sizeof(m->note), "one run a side: %+.1f%% may be the runs' own speed;"
                 " add runs (-b/-n) to gate the step time", change * 100);
    } else {
        m->verdict = TT_V_UNCHANGED;
        snprintf(m->note, sizeof(m->note),
                 "one run a side: run-to-run noise unknown, the CPU step time is not gated");
    }
}

/* a statistical metric (step times): effect, test, verdict; b and n (NULL
 * for a per-rank metric) give the runs */
static void decide_stat(tt_diff_metric *m, double thr_pct, const tt_diff_options *o,
                        const tt_diff_side *b, const tt_diff_side *n, int which)
{
    double change, pmin, noise;
    m->base = tt_median(m->b, m->nb);
    m->new_ = tt_median(m->n, m->nn);
    m->ratio = m->base != 0 ? m->new_ / m->base : NAN;
    m->hl = tt_hodges_lehmann(m->b, m->nb, m->n, m->nn);
    change = m->base != 0 ? m->new_ / m->base - 1.0 : 0;
    m->p = change >= 0 ? tt_mwu_p_greater(m->b, m->nb, m->n, m->nn, &m->exact)
                       : tt_mwu_p_greater(m->n, m->nn, m->b, m->nb, &m->exact);
    noise = tt_iqr_ratio(m->b, m->nb);
    if (!m->gated) {
        m->verdict = TT_V_NOT_GATED;
        return;
    }
    if (b && n && !o->no_stats) {
        int rc = decide_runs(m, b, n, which, thr_pct, o);
        if (rc != 0)
            return; /* decided (out of memory: left not gated) */
        if (which == M_CPU_STEP) {
            decide_one_run(m, change, o);
            return;
        }
    }
    if (!isnan(noise) && noise > 0.25) {
        m->verdict = TT_V_NOT_GATED;
        snprintf(m->note, sizeof(m->note), "noisy baseline (IQR/median %.1f%% > 25%%): not gated",
                 noise * 100);
        return;
    }
    if (!isnan(noise) && noise > 0.10)
        snprintf(m->note, sizeof(m->note), "noisy baseline (IQR/median %.1f%%)", noise * 100);
    if (fabs(change) * 100 < thr_pct) {
        m->verdict = TT_V_UNCHANGED;
        return;
    }
    if (o->no_stats) {
        m->verdict = change > 0 ? TT_V_REGRESSED : TT_V_IMPROVED;
        return;
    }
    pmin = tt_mwu_p_min(m->nb, m->nn);
    if (change < 0 && (pmin > o->alpha || m->p > o->alpha)) {
        m->verdict = TT_V_UNCHANGED; /* an improvement never fails a build */
        snprintf(m->note, sizeof(m->note), "faster by %.1f%%, not significant", -change * 100);
        return;
    }
    if (pmin > o->alpha) {
        m->verdict = TT_V_INCONCLUSIVE;
        snprintf(m->note, sizeof(m->note),
                 "too few steps for p <= %g: %zu/%zu, at least %zu a side needed", o->alpha,
                 m->nb, m->nn, steps_needed(o->alpha));
        return;
    }
    if (m->p <= o->alpha)
        m->verdict = change > 0 ? TT_V_REGRESSED : TT_V_IMPROVED;
    else {
        m->verdict = TT_V_INCONCLUSIVE;
        snprintf(m->note, sizeof(m->note), "change of %+.1f%% not significant (p = %.3g > %g)",
                 change * 100, m->p, o->alpha);
    }
}

/* a peak (memory): deterministic, a threshold and 16 MiB */
static void decide_peak(tt_diff_metric *m, const tt_diff_options *o)
{
    double change;
    m->base = vmax(m->b, m->nb);
    m->new_ = vmax(m->n, m->nn);
    m->ratio = m->base != 0 ? m->new_ / m->base : NAN;
    m->hl = m->new_ - m->base;
    m->p = NAN;
    if (!m->gated) {
        m->verdict = TT_V_NOT_GATED;
        return;
    }
    change = m->base != 0 ? m->new_ / m->base - 1.0 : 0;
    if (fabs(change) * 100 < o->mem_threshold || fabs(m->new_ - m->base) < 16 * MIB)
        m->verdict = TT_V_UNCHANGED;
    else
        m->verdict = change > 0 ? TT_V_REGRESSED : TT_V_IMPROVED;
}

static int add_metric(tt_diff_result *r, const tt_diff_side *b, const tt_diff_side *n, int which,
                      int gated, const tt_diff_options *o)
{
    tt_diff_metric *m;
    double *vb, *vn;
    size_t kb, kn;
    vb = finite_of(b->m[which], b->n, &kb);
    vn = finite_of(n->m[which], n->n, &kn);
    if (!vb || !vn) {
        free(vb);
        free(vn);
        return tt__oom();
    }
    if (!kb || !kn) { /* not in these traces */
        free(vb);
        free(vn);
        return 0;
    }
    m = &r->metrics[r->nmetrics++];
    memset(m, 0, sizeof(*m));
    snprintf(m->id, sizeof(m->id), "%s", metric_id[which]);
    m->unit = metric_unit[which];
    m->gated = gated;
    m->b = vb;
    m->n = vn;
    m->nb = kb;
    m->nn = kn;
    if (which == M_PEAK_ALLOC || which == M_PEAK_RES)
        decide_peak(m, o);
    else if (which >= M_NKERNEL) {
        m->base = tt_median(vb, kb);
        m->new_ = tt_median(vn, kn);
        m->ratio = m->base != 0 ? m->new_ / m->base : NAN;
        m->hl = m->new_ - m->base;
        m->p = NAN;
        m->verdict = TT_V_NOT_GATED;
    } else
        decide_stat(m, o->threshold, o, which == M_BUSY ? NULL : b, which == M_BUSY ? NULL : n,
                    which);
    return 0;
}

/* ---- --rank-agg each ---- */

static int64_t mapped(const tt_diff_options *o, int64_t rank)
{
    size_t k;
    for (k = 0; k < o->nrank_map; k++)
        if (o->rank_map[2 * k] == rank)
            return o->rank_map[2 * k + 1];
    return rank;
}

/* the finite samples of metric `which` of rank `rank` */
static double *of_rank(const tt_diff_side *s, int which, int64_t rank, size_t *k)
{
    double *v = malloc((s->n ? s->n : 1) * sizeof(*v));
    size_t i;
    *k = 0;
    if (!v)
        return NULL;
    for (i = 0; i < s->n; i++)
        if (s->rank[i] == rank && !isnan(s->m[which][i]))
            v[(*k)++] = s->m[which][i];
    return v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* a step time metric per BASE rank against its NEW rank; the verdicts
 * need the Benjamini-Hochberg adjusted p across ranks */
static int per_rank(tt_diff_result *r, const tt_diff_side *b, const tt_diff_side *n, int which,
                    const tt_diff_options *o)
{
    size_t i, nr_ = 0, first = r->nmetrics, cnt;
    double *p, *q;
    int64_t *ranks = malloc((b->n ? b->n : 1) * sizeof(*ranks));
    if (!ranks)
        return tt__oom();
    /* the distinct BASE ranks, in order */
    memcpy(ranks, b->rank, b->n * sizeof(*ranks));
    if (b->n)
        TT_QSORT(ranks, b->n, sizeof(*ranks), cmp_i64);
    for (i = 0; i < b->n; i++)
        if (!nr_ || ranks[nr_ - 1] != ranks[i])
            ranks[nr_++] = ranks[i];
    for (i = 0; i < nr_; i++) {
        tt_diff_metric *m;
        int64_t rk = ranks[i], nr = mapped(o, rk);
        m = &r->metrics[r->nmetrics];
        memset(m, 0, sizeof(*m));
        if (nr == rk)
            snprintf(m->id, sizeof(m->id), "%s rank %lld", metric_id[which], (long long)rk);
        else
            snprintf(m->id, sizeof(m->id), "%s rank %lld vs %lld", metric_id[which], (long long)rk,
                     (long long)nr);
        m->unit = metric_unit[which];
        m->gated = (o->gate & TT_GATE_STEP) != 0;
        m->b = of_rank(b, which, rk, &m->nb);
        m->n = of_rank(n, which, nr, &m->nn);
        if (!m->b || !m->n) {
            free((double *)m->b);
            free((double *)m->n);
            free(ranks);
            return tt__oom();
        }
        r->nmetrics++;
        if (!m->nb || !m->nn) {
            m->verdict = TT_V_NOT_GATED;
            m->base = m->new_ = m->ratio = m->hl = m->p = NAN;
            snprintf(m->note, sizeof(m->note), "no samples of this rank on %s",
                     m->nb ? "NEW" : "BASE");
            continue;
        }
        decide_stat(m, o->threshold, o, NULL, NULL, which);
    }
    free(ranks);
    cnt = r->nmetrics - first;
    p = malloc((cnt ? cnt : 1) * sizeof(*p));
    q = malloc((cnt ? cnt : 1) * sizeof(*q));
    if (!p || !q) {
        free(p);
        free(q);
        return tt__oom();
    }
    for (i = 0; i < cnt; i++)
        p[i] = r->metrics[first + i].p;
    tt_bh_adjust(p, cnt, q);
    for (i = 0; i < cnt; i++) {
        tt_diff_metric *m = &r->metrics[first + i];
        if ((m->verdict == TT_V_REGRESSED || m->verdict == TT_V_IMPROVED) && !o->no_stats &&
            q[i] > o->alpha) {
            m->verdict = TT_V_INCONCLUSIVE;
            snprintf(m->note, sizeof(m->note), "not significant across %zu ranks (BH q = %.3g)",
                     cnt, q[i]);
        }
    }
    free(p);
    free(q);
    return 0;
}

/* whether a per-rank metric has samples on both sides */
static int ranks_paired(const tt_diff_result *r)
{
    size_t i;
    for (i = 0; i < r->nmetrics; i++)
        if (strstr(r->metrics[i].id, " rank ") && r->metrics[i].nb && r->metrics[i].nn)
            return 1;
    return 0;
}

/* "0, 1, 2" (the distinct ranks of s, the first few) into out */
static void rank_list(char *out, size_t cap, const tt_diff_side *s)
{
    int64_t *v = malloc((s->n ? s->n : 1) * sizeof(*v));
    size_t i, k = 0, l = 0, shown = 0;
    snprintf(out, cap, "none");
    if (!v)
        return;
    memcpy(v, s->rank, s->n * sizeof(*v));
    if (s->n)
        TT_QSORT(v, s->n, sizeof(*v), cmp_i64);
    for (i = 0; i < s->n; i++)
        if (!k || v[k - 1] != v[i])
            v[k++] = v[i];
    for (i = 0; i < k && l < cap; i++) {
        if (shown == 8) {
            snprintf(out + l, cap - l, ", ...");
            break;
        }
        if (v[i] < 0)
            l += (size_t)snprintf(out + l, cap - l, "%sunknown", i ? ", " : "");
        else
            l += (size_t)snprintf(out + l, cap - l, "%s%" PRId64, i ? ", " : "", v[i]);
        shown++;
    }
    free(v);
}

/* --rank-agg each, and no BASE rank has samples of its NEW rank: nothing
 * was compared, which is not "no change" */
static void no_rank_pairs(tt_diff_result *r, const tt_diff_side *b, const tt_diff_side *n)
{
    char lb[96], ln[96];
    rank_list(lb, sizeof(lb), b);
    rank_list(ln, sizeof(ln), n);
    r->not_comparable = 1;
    snprintf(r->reason, sizeof(r->reason),
             "NOT COMPARABLE: no BASE rank has a NEW rank to compare with (--rank-agg each:"
             " BASE ranks %s, NEW ranks %s; --rank-map B:N pairs them)", lb, ln);
}

/* ---- rows ---- */

static double key_median(const tt_diff_side *s, long k, int what)
{
    double *v, m;
    size_t i;
    if (k < 0 || !s->n)
        return 0;
    if (!(v = malloc(s->n * sizeof(*v))))
        return NAN;
    for (i = 0; i < s->n; i++)
        v[i] = what == 0 ? s->keys[k].count[i] : what == 1 ? s->keys[k].ns[i] : s->keys[k].dev[i];
    m = tt_median(v, s->n);
    free(v);
    return m;
}

/* the step itself (torch's ProfilerStep* key) is the whole change, no
 * contributor to it: listed after the others */
static int is_step_key(const tt_diff_row *w)
{
    return !strcmp(w->key, "ProfilerStep*");
}

/* the rows that decided come first: regressed, inconclusive, improved */
static int verdict_rank(int v)
{
    return v == TT_V_REGRESSED ? 0 : v == TT_V_INCONCLUSIVE ? 1 : v == TT_V_IMPROVED ? 2 : 3;
}

static int cmp_row(const void *a, const void *b)
{
    const tt_diff_row *x = a, *y = b;
    double dx = fabs(x->delta_ns), dy = fabs(y->delta_ns);
    int c;
    if (is_step_key(x) != is_step_key(y))
        return is_step_key(x) ? 1 : -1;
    if (verdict_rank(x->verdict) != verdict_rank(y->verdict))
        return verdict_rank(x->verdict) < verdict_rank(y->verdict) ? -1 : 1;
    if (dx != dy)
        return dx > dy ? -1 : 1;
    if ((c = strcmp(x->kind, y->kind)) != 0)
        return c;
    return strcmp(x->key, y->key);
}

/* the step metric a key's share is taken of: CPU step time for ops and
 * runtime calls, GPU busy time for GPU activities (CPU step time when the
 * side has none) */
static int den_of(const tt_diff_side *s, int what)
{
    size_t i;
    if (what == 1)
        return M_CPU_STEP;
    for (i = 0; i < s->n; i++)
        if (s->m[M_BUSY][i] > 0)
            return M_BUSY;
    return M_CPU_STEP;
}

/* key k's share of step metric den per sample (a run's median when by_run):
 * the finite values, *cnt of them (NULL out of memory) */
static double *key_shares(const tt_diff_side *s, long k, int what, int den, int by_run,
                          size_t *cnt)
{
    double *v = malloc((s->n + 1) * sizeof(*v)), *r;
    size_t i, c = 0;
    *cnt = 0;
    if (!v)
        return NULL;
    for (i = 0; i < s->n; i++) {
        double st = s->m[den][i];
        double x = k < 0 ? 0 : what == 1 ? s->keys[k].ns[i] : s->keys[k].dev[i];
        v[i] = st > 0 ? x / st : NAN;
    }
    if (by_run) {
        r = run_medians(s, v, cnt);
        free(v);
        return r;
    }
    for (i = 0; i < s->n; i++)
        if (!isnan(v[i]))
            v[c++] = v[i];
    *cnt = c;
    return v;
}

static double finite_median(const double *v, size_t n)
{
    size_t k;
    double *f = finite_of(v, n, &k), m;
    m = f ? tt_median(f, k) : NAN;
    free(f);
    return m;
}

/* shares on both sides, the change at BASE's speed and its test: the
 * run-wide speed of a run cancels in a share */
struct sides {
    const tt_diff_side *b, *n;
    struct tt__runs *rb, *rn;
};

static int share_test(tt_diff_row *w, const struct sides *sd, long kb, long kn, int what)
{
    /* per step, pooled over the runs: a run's speed cancels in a share,
     * and steps give the within-run test its power */
    const tt_diff_side *b = sd->b, *n = sd->n;
    int den = den_of(b, what), den_n = den_of(n, what);
    size_t cb, cn;
    double *sb = key_shares(b, kb, what, den, 0, &cb);
    double *sn = key_shares(n, kn, what, den_n, 0, &cn);
    double base_den = finite_median(b->m[den], b->n);
    if (!sb || !sn) {
        free(sb);
        free(sn);
        return -1;
    }
    w->base_share = kb >= 0 && cb ? tt_median(sb, cb) : NAN;
    w->new_share = kn >= 0 && cn ? tt_median(sn, cn) : NAN;
    if (kb >= 0 && kn >= 0 && !isnan(w->base_share) && !isnan(w->new_share) && base_den > 0) {
        w->share = w->new_share - w->base_share;
        w->delta_ns = w->share * base_den;
        if (fmax(w->base_share, w->new_share) < 0.01)
            ; /* under a point of the step: never gated, not tested */
        else {
            w->p = w->share >= 0 ? tt_mwu_p_greater(sb, cb, sn, cn, NULL)
                                 : tt_mwu_p_greater(sn, cn, sb, cb, NULL);
            w->few_steps = tt_mwu_p_min(cb, cn) > STEPS_P;
            if (tt__diff_shift(b, sd->rb, kb, den, n, sd->rn, kn, den_n, w->kind, what,
                               w->share >= 0, &w->shift) < 0) {
                free(sb);
                free(sn);
                return -1;
            }
        }
    }
    free(sb);
    free(sn);
    return 0;
}

static int row_of(tt_diff_row *w, const struct sides *sd, const char *kind, const char *key)
{
    const tt_diff_side *b = sd->b, *n = sd->n;
    long kb = tt__diff_find(b, kind, key), kn = tt__diff_find(n, kind, key);
    int what = !strcmp(kind, "op") || !strcmp(kind, "runtime") ? 1 : 2;
    memset(w, 0, sizeof(*w));
    if (!(w->kind = strdup(kind)) || !(w->key = strdup(key)))
        return -1;
    w->base_count = key_median(b, kb, 0);
    w->new_count = key_median(n, kn, 0);
    w->base_ns = key_median(b, kb, what);
    w->new_ns = key_median(n, kn, what);
    w->delta_ns = w->new_ns - w->base_ns;
    w->status = w->base_count == 0 && w->new_count > 0   ? 1
                : w->new_count == 0 && w->base_count > 0 ? 2
                : w->base_count != w->new_count          ? 3
                                                         : 0;
    w->p = w->share = w->shift = NAN;
    w->verdict = TT_V_NOT_GATED;
    if (!b->n || !n->n)
        return 0;
    return share_test(w, sd, kb, kn, what);
}

/*
 * The verdict of a row. Gated with the step time (calls per step and the
 * change beyond the runs' speed) for ops and kernels, and for every kind with
 * --gate +ops,kernels:
 * - calls per step: more calls (a key added, or its median count grown) whose
 *   added time is at least 1% of NEW's step regress, fewer improve (exact);
 * - a matched key: its share of the step moved by at least --op-threshold
 *   (relative) and a point, its own time the same way, and the steps'
 *   shares agree (p <= STEPS_P); then regressed (improved) when the shift
 *   beyond the runs' speed and the share's change reach shift_min() and
 *   points_min() for the runs a side, inconclusive when a grown one reaches
 *   half of both, or all of both with too few steps to test.
 *   --no-stats: the first condition alone decides.
 */
static void row_verdict(tt_diff_row *w, const tt_diff_options *o, size_t runs)
{
    double rel, t = shift_min(runs), pts = points_min(runs);
    int up;
    if (w->status == 1 || w->status == 3) {
        double added = w->new_count > w->base_count && w->new_count > 0
                           ? w->new_share * (w->new_count - w->base_count) / w->new_count
                           : 0;
        w->verdict = w->new_count < w->base_count ? TT_V_IMPROVED
                     : !isnan(added) && added >= 0.01 ? TT_V_REGRESSED
                                                      : TT_V_UNCHANGED;
        return;
    }
    if (w->status == 2) {
        w->verdict = TT_V_IMPROVED;
        return;
    }
    w->verdict = TT_V_UNCHANGED;
    if (isnan(w->share) || !(w->base_share > 0))
        return;
    up = w->share > 0;
    rel = fabs(w->share) / w->base_share * 100;
    /* the key's own time must move the same way: a key whose share grew
     * because everything else got faster did not regress */
    if (rel < o->op_threshold || fabs(w->share) < 0.01 ||
        !(up ? w->new_ns > w->base_ns : w->new_ns < w->base_ns))
        return;
    if (o->no_stats) {
        w->verdict = up ? TT_V_REGRESSED : TT_V_IMPROVED;
        return;
    }
    /* the steps must agree on the direction (the one-sided Mann-Whitney p of
     * the steps' shares); too few steps to reach STEPS_P: inconclusive */
    if (isnan(w->shift) || (!w->few_steps && !(w->p <= STEPS_P)))
        return;
    if (up ? w->shift >= t && w->share >= pts : w->shift <= -t && w->share <= -pts)
        w->verdict = w->few_steps ? (up ? TT_V_INCONCLUSIVE : TT_V_UNCHANGED)
                     : up         ? TT_V_REGRESSED
                                  : TT_V_IMPROVED;
    else if (up && w->shift >= t / 2 && w->share >= pts / 2)
        w->verdict = TT_V_INCONCLUSIVE;
}

/* how much of each side's time the keys found on both sides hold */
static void coverage(tt_diff_result *r)
{
    double tot[2][2] = { { 0, 0 }, { 0, 0 } }, mat[2][2] = { { 0, 0 }, { 0, 0 } };
    size_t i;
    int k, side;
    for (i = 0; i < r->nrows; i++) {
        const tt_diff_row *w = &r->rows[i];
        k = !strcmp(w->kind, "op") ? 0 : !strcmp(w->kind, "kernel") ? 1 : -1;
        if (k < 0)
            continue;
        for (side = 0; side < 2; side++) {
            double v = side ? w->new_ns : w->base_ns;
            tot[k][side] += v;
            if (w->status == 0 || w->status == 3)
                mat[k][side] += v;
        }
    }
    for (k = 0; k < 2; k++)
        for (side = 0; side < 2; side++)
            r->coverage[k][side] = tot[k][side] > 0 ? mat[k][side] / tot[k][side] : NAN;
}

static int build_rows(tt_diff_result *r, const tt_diff_side *b, const tt_diff_side *n,
                      const tt_diff_options *o, double base_step)
{
    size_t i, cap = b->nkeys + n->nkeys, k;
    int faster, rc = 0;
    size_t runs = nruns_of(b) < nruns_of(n) ? nruns_of(b) : nruns_of(n);
    struct sides sd = { b, n, NULL, NULL };
    double *p, *q;
    if (!(r->rows = calloc(cap ? cap : 1, sizeof(*r->rows))) ||
        tt__runs_build(b, &sd.rb) < 0 || tt__runs_build(n, &sd.rn) < 0)
        rc = -1;
    for (i = 0; i < b->nkeys && !rc; i++)
        rc = row_of(&r->rows[r->nrows++], &sd, b->keys[i].kind, b->keys[i].key);
    for (i = 0; i < n->nkeys && !rc; i++)
        if (tt__diff_find(b, n->keys[i].kind, n->keys[i].key) < 0)
            rc = row_of(&r->rows[r->nrows++], &sd, n->keys[i].kind, n->keys[i].key);
    tt__runs_free(sd.rb);
    tt__runs_free(sd.rn);
    if (rc < 0)
        return tt__oom();
    p = malloc((r->nrows ? r->nrows : 1) * sizeof(*p));
    q = malloc((r->nrows ? r->nrows : 1) * sizeof(*q));
    if (!p || !q) {
        free(p);
        free(q);
        return tt__oom();
    }
    for (i = 0; i < r->nrows; i++)
        p[i] = r->rows[i].p;
    tt_bh_adjust(p, r->nrows, q);
    for (i = 0; i < r->nrows; i++) {
        tt_diff_row *w = &r->rows[i];
        unsigned need = !strcmp(w->kind, "op") || !strcmp(w->kind, "runtime") ? TT_GATE_OPS
                                                                              : TT_GATE_KERNELS;
        int with_step = (o->gate & TT_GATE_STEP) &&
                        (!strcmp(w->kind, "op") || !strcmp(w->kind, "kernel"));
        w->q = isnan(w->p) ? NAN : q[i];
        if (!(o->gate & need) && !with_step)
            continue;
        if (!strncmp(w->key, "nccl:", 5) || is_step_key(w))
            continue; /* NCCL waits for peers; the step is the step metric */
        row_verdict(w, o, runs);
    }
    TT_UNUSED(base_step);
    free(p);
    free(q);
    coverage(r);
    TT_QSORT(r->rows, r->nrows, sizeof(*r->rows), cmp_row);
    /* a row that grew fails the build unless the step time itself got
     * significantly faster (an improvement never fails a build; the row
     * still says regressed) */
    faster = r->nmetrics && r->metrics[0].gated && r->metrics[0].verdict == TT_V_IMPROVED;
    for (k = 0; k < r->nrows && !faster; k++)
        if ((r->rows[k].verdict == TT_V_REGRESSED || r->rows[k].verdict == TT_V_INCONCLUSIVE) &&
            r->verdict < r->rows[k].verdict)
            r->verdict = r->rows[k].verdict;
    return 0;
}

/* ---- the environment ---- */

static void env_line(char *out, size_t cap, const tt_diff_side *s)
{
    int64_t lo = 0, hi = 0;
    size_t i;
    char world[32];
    for (i = 0; i < s->n; i++) {
        if (!i || s->step[i] < lo)
            lo = s->step[i];
        if (!i || s->step[i] > hi)
            hi = s->step[i];
    }
    if (s->world < 0)
        snprintf(world, sizeof(world), "unknown");
    else
        snprintf(world, sizeof(world), "%" PRId64, s->world);
    snprintf(out, cap,
             "%s: GPU %s, world size %s, %zu trace%s, %zu run%s, steps %" PRId64 "-%" PRId64
             " (%zu samples)",
             s->label, s->gpu[0] ? s->gpu : "none", world, s->ntraces, s->ntraces == 1 ? "" : "s",
             s->nruns, s->nruns == 1 ? "" : "s", lo, hi, s->n);
}

static void mismatch(tt_diff_result *r, const tt_diff_side *b, const tt_diff_side *n)
{
    size_t l = 0;
    if (b->gpu[0] && n->gpu[0] && strcmp(b->gpu, n->gpu))
        l += (size_t)snprintf(r->mismatch + l, sizeof(r->mismatch) - l, "GPU %s vs %s", b->gpu,
                              n->gpu);
    if (b->world >= 0 && n->world >= 0 && b->world != n->world && l < sizeof(r->mismatch))
        snprintf(r->mismatch + l, sizeof(r->mismatch) - l,
                 "%sworld size %" PRId64 " vs %" PRId64, l ? ", " : "", b->world, n->world);
}

static const char *pretty_id(const char *id)
{
    return !strcmp(id, "device_step_time") ? "device step time"
           : !strcmp(id, "cpu_step_time")  ? "CPU step time"
           : !strcmp(id, "peak_allocated") ? "peak memory allocated"
           : !strcmp(id, "peak_reserved")  ? "peak memory reserved"
                                           : id;
}

static void fmt_value(char *out, size_t cap, double v, const char *unit)
{
    if (isnan(v) || isinf(v))
        snprintf(out, cap, "n/a");
    else if (!strcmp(unit, "ns"))
        snprintf(out, cap, "%.1f ms", v / 1e6);
    else if (!strcmp(unit, "bytes"))
        snprintf(out, cap, "%.1f MiB", v / MIB);
    else
        snprintf(out, cap, "%.0f", v);
}

/* the one-line verdict */
static void verdict_line(tt_diff_result *r)
{
    const tt_diff_metric *worst = NULL;
    size_t i;
    char a[32], b[32], pct[32];
    for (i = 0; i < r->nmetrics; i++) {
        const tt_diff_metric *m = &r->metrics[i];
        if (m->gated && m->verdict != TT_V_NOT_GATED && (!worst || m->verdict > worst->verdict))
            worst = m;
    }
    if (r->not_comparable)
        return;
    if (!worst) {
        snprintf(r->reason, sizeof(r->reason), "%s", r->verdict == TT_V_REGRESSED
                                                         ? "REGRESSION: a gated row regressed"
                                                         : "NO CHANGE: nothing gated");
        return;
    }
    fmt_value(a, sizeof(a), worst->base, worst->unit);
    fmt_value(b, sizeof(b), worst->new_, worst->unit);
    tt__diff_pct(pct, sizeof(pct), worst->ratio);
    snprintf(r->reason, sizeof(r->reason), "%s: %s %s (%s -> %s)%s%.3g, n = %zu/%zu",
             r->verdict == TT_V_REGRESSED      ? "REGRESSION"
             : worst->verdict == TT_V_INCONCLUSIVE || r->verdict == TT_V_INCONCLUSIVE
                 ? "INCONCLUSIVE"
             : worst->verdict == TT_V_IMPROVED     ? "IMPROVEMENT"
                                                   : "NO CHANGE",
             pretty_id(worst->id), pct, a, b,
             isnan(worst->p) ? "" : ", p = ", isnan(worst->p) ? 0.0 : worst->p, worst->nb,
             worst->nn);
    if (isnan(worst->p)) { /* no "0" for a missing p */
        char *z = strstr(r->reason, ")0, n");
        if (z)
            memmove(z + 1, z + 2, strlen(z + 2) + 1);
    }
}

int tt_diff_compare(const tt_diff_side *b, const tt_diff_side *n, const tt_diff_options *o,
                    tt_diff_result *r)
{
    tt_diff_options def = TT_DIFF_OPTIONS_INIT;
    int device, which, rc;
    size_t i;
    double base_step;
    memset(r, 0, sizeof(*r));
    if (!o)
        o = &def;
    env_line(r->env[0], sizeof(r->env[0]), b);
    env_line(r->env[1], sizeof(r->env[1]), n);
    mismatch(r, b, n);
    if (!(r->metrics = calloc(M_COUNT + (o->rank_each ? b->n : 0), sizeof(*r->metrics))))
        return tt__oom();
    /* the device clock needs a step before each sample: single-step traces
     * fall back to ProfilerStep durations */
    device = b->has_gpu && n->has_gpu && o->step_clock == 0 && !isnan(vmax(b->m[M_DEV_STEP], b->n)) &&
             !isnan(vmax(n->m[M_DEV_STEP], n->n));
    /* the primary step time first */
    which = device ? M_DEV_STEP : M_CPU_STEP;
    if ((rc = add_metric(r, b, n, which, (o->gate & TT_GATE_STEP) && !o->rank_each, o)) < 0)
        return rc;
    if (r->nmetrics == 0 || strcmp(r->metrics[0].id, metric_id[which])) {
        r->not_comparable = 1;
        snprintf(r->reason, sizeof(r->reason),
                 "NOT COMPARABLE: %s has no step to compare (no ProfilerStep#N in the chosen"
                 " steps, and no events)",
                 b->n && !isnan(vmax(b->m[which], b->n)) ? "NEW" : "BASE");
    }
    base_step = r->nmetrics ? r->metrics[0].base : 0;
    r->step_delta_ns = r->nmetrics ? r->metrics[0].new_ - r->metrics[0].base : 0;
    for (i = 0; i < M_COUNT; i++) {
        if ((int)i == which || (i == M_DEV_STEP && !device && o->step_clock == 0))
            continue;
        if ((rc = add_metric(r, b, n, (int)i,
                             (i == M_PEAK_ALLOC || i == M_PEAK_RES) && (o->gate & TT_GATE_MEMORY),
                             o)) < 0)
            return rc;
    }
    if (o->rank_each && r->nmetrics && (rc = per_rank(r, b, n, which, o)) < 0)
        return rc;
    if (o->rank_each && r->nmetrics && !r->not_comparable && !ranks_paired(r))
        no_rank_pairs(r, b, n);
    for (i = 0; i < r->nmetrics; i++)
        if (r->metrics[i].gated && r->metrics[i].verdict != TT_V_NOT_GATED &&
            r->metrics[i].verdict > r->verdict)
            r->verdict = r->metrics[i].verdict;
    if ((rc = build_rows(r, b, n, o, base_step)) < 0)
        return rc;
    if (r->mismatch[0] && !o->allow_env_mismatch && !r->not_comparable) {
        r->not_comparable = 1;
        snprintf(r->reason, sizeof(r->reason),
                 "NOT COMPARABLE: %s (--allow-env-mismatch compares anyway)", r->mismatch);
    }
    if (!r->not_comparable && tt__diff_steps_differ(b, n, r->reason, sizeof(r->reason)))
        r->not_comparable = 1;
    verdict_line(r);
    r->exit_code = r->not_comparable                                              ? 6
                   : r->verdict == TT_V_REGRESSED                                 ? 1
                   : r->verdict == TT_V_INCONCLUSIVE && o->fail_on_inconclusive ? 6
                                                                                  : 0;
    return 0;
}

void tt_diff_result_free(tt_diff_result *r)
{
    size_t i;
    if (!r)
        return;
    for (i = 0; i < r->nmetrics; i++) {
        free((double *)r->metrics[i].b);
        free((double *)r->metrics[i].n);
    }
    for (i = 0; i < r->nrows; i++) {
        free(r->rows[i].kind);
        free(r->rows[i].key);
    }
    free(r->metrics);
    free(r->rows);
    free(r->notes);
    memset(r, 0, sizeof(*r));
}
