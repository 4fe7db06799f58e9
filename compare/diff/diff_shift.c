/*
 * compare/diff/diff_shift.c - how much a key's time changed beyond its runs' own
 * speed: the signal that gates a row of `tracetool diff` (docs/DIFF.md).
 *
 * Runs of the same code on a loaded machine differ in speed by tens of
 * percent, and not uniformly: the mix of memory- and compute-bound ops moves
 * with the load, so one op's share of the step swings between runs while the
 * dominant op takes up the difference. A key's time is therefore measured
 * against two references of its own run, and the change is the smaller of
 * the two (the larger for a key that got faster):
 *   - its share of the run's step (a run-wide slowdown cancels), and
 *   - its time over the run's typical other key of the same kind: the median,
 *     over the other keys holding at least a point of the run's step (not
 *     the step itself), of their times (a dominant op that got faster in one
 *     run does not make the others grow).
 * Each side's value is the median over its runs; the change is NEW's minus
 * BASE's, in logarithms (0.4 is a factor of 1.49).
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"

#include <math.h>
#include <string.h>

static const char *const kinds[] = { "op", "runtime", "kernel", "memcpy", "memset" };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

struct tt__runs {
    size_t nr;
    size_t *order;          /* sample indices, grouped by run */
    size_t *start;          /* run r is order[start[r] .. start[r + 1]) */
    double *tmp;            /* scratch, one value per sample */
    /* per kind: the log times of each run's keys holding a point of its step,
     * sorted: run r's are ref[k][rs[k][r] .. rs[k][r + 1]) */
    double *ref[NKINDS];
    size_t *rs[NKINDS];
    int have_ref[NKINDS];
};

void tt__runs_free(struct tt__runs *r)
{
    size_t k;
    if (!r)
        return;
    for (k = 0; k < NKINDS; k++) {
        free(r->ref[k]);
        free(r->rs[k]);
    }
    free(r->order);
    free(r->start);
    free(r->tmp);
    free(r);
}

int tt__runs_build(const struct tt_diff_side *s, struct tt__runs **out)
{
    struct tt__runs *r = calloc(1, sizeof(*r));
    size_t i, nr = 0;
    *out = NULL;
    if (!r)
        return -1;
    for (i = 0; i < s->n; i++)
        if (s->run[i] >= 0 && (size_t)s->run[i] + 1 > nr)
            nr = (size_t)s->run[i] + 1;
    r->nr = nr;
    r->order = malloc((s->n + 1) * sizeof(*r->order));
    r->start = calloc(nr + 2, sizeof(*r->start));
    r->tmp = malloc((s->n + 1) * sizeof(*r->tmp));
    if (!r->order || !r->start || !r->tmp) {
        tt__runs_free(r);
        return -1;
    }
    /* a counting sort of the samples by run */
    for (i = 0; i < s->n; i++)
        if (s->run[i] >= 0)
            r->start[s->run[i] + 2]++;
    for (i = 2; i < nr + 2; i++)
        r->start[i] += r->start[i - 1];
    for (i = 0; i < s->n; i++)
        if (s->run[i] >= 0)
            r->order[r->start[s->run[i] + 1]++] = i;
    *out = r;
    return 0;
}

/* the median of run ru's finite values of x/den per sample (den NULL: of x) */
static double run_median(struct tt__runs *r, size_t ru,
                         const double *x, const double *den)
{
    size_t j, c = 0;
    for (j = r->start[ru]; j < r->start[ru + 1]; j++) {
        size_t i = r->order[j];
        double v = den ? (den[i] > 0 ? x[i] / den[i] : NAN) : x[i];
        if (!isnan(v))
            r->tmp[c++] = v;
    }
    return c ? tt_median(r->tmp, c) : NAN;
}

static int kind_index(const char *kind)
{
    size_t k;
    for (k = 0; k < NKINDS; k++)
        if (!strcmp(kind, kinds[k]))
            return (int)k;
    return -1;
}

static const double *values_of(const struct tt_diff_side *s, long k, int what)
{
    return what == 1 ? s->keys[k].ns : s->keys[k].dev;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the keys a run's typical key is taken from: of the kind, not the step
 * itself nor NCCL (waits for peers) */
static int ref_key(const struct tt_diff_side *s, size_t k, int ki)
{
    return !strcmp(s->keys[k].kind, kinds[ki]) && strcmp(s->keys[k].key, "ProfilerStep*") &&
           strncmp(s->keys[k].key, "nccl:", 5);
}

/* each run's keys of kind ki holding a point of its step: their log median
 * times, sorted; -1 out of memory */
static int make_ref(const struct tt_diff_side *s, struct tt__runs *r, int ki, int what, int den)
{
    size_t ru, k, c = 0, cap = 16;
    double *v = malloc(cap * sizeof(*v));
    if (!v || !(r->rs[ki] = malloc((r->nr + 1) * sizeof(size_t)))) {
        free(v);
        return -1;
    }
    for (ru = 0; ru < r->nr; ru++) {
        double d = run_median(r, ru, s->m[den], NULL);
        r->rs[ki][ru] = c;
        for (k = 0; k < s->nkeys; k++) {
            double t;
            if (!ref_key(s, k, ki))
                continue;
            t = run_median(r, ru, values_of(s, (long)k, what), NULL);
            if (!(t > 0 && d > 0 && t / d >= 0.01))
                continue;
            if (c == cap) {
                double *g = realloc(v, 2 * cap * sizeof(*v));
                if (!g) {
                    free(v);
                    return -1;
                }
                v = g;
                cap *= 2;
            }
            v[c++] = log(t);
        }
        TT_QSORT(v + r->rs[ki][ru], c - r->rs[ki][ru], sizeof(*v), cmp_dbl);
    }
    r->rs[ki][r->nr] = c;
    r->ref[ki] = v;
    r->have_ref[ki] = 1;
    return 0;
}

/* the median of run ru's sorted log times of kind ki without one value
 * equal to self (the key's own, when it is among them); NaN when none */
static double ref_without(const struct tt__runs *r, int ki, size_t ru, double self)
{
    const double *v = r->ref[ki] + r->rs[ki][ru];
    size_t m = r->rs[ki][ru + 1] - r->rs[ki][ru], j, skip = m, a, b;
    for (j = 0; j < m; j++)
        if (v[j] == self) {
            skip = j;
            break;
        }
    if (skip < m)
        m--; /* m values remain; index i of them is v[i < skip ? i : i + 1] */
    if (!m)
        return NAN;
    a = (m - 1) / 2;
    b = m / 2;
    a = a < skip ? a : a + 1;
    b = b < skip ? b : b + 1;
    return (v[a] + v[b]) / 2;
}

/* a side's median over runs of the key's log share (*ls) and of its log time
 * over the run's typical key (*lm); NaN when not known */
static int side_levels(const struct tt_diff_side *s, struct tt__runs *r, long k, int what,
                       int den, const char *kind, double *ls, double *lm)
{
    int ki = kind_index(kind);
    size_t ru, cs = 0, cm = 0;
    double *vs, *vm;
    *ls = *lm = NAN;
    if (k < 0 || !r->nr)
        return 0;
    if (ki >= 0 && !r->have_ref[ki] && make_ref(s, r, ki, what, den) < 0)
        return -1;
    vs = malloc((r->nr + 1) * sizeof(*vs));
    vm = malloc((r->nr + 1) * sizeof(*vm));
    if (!vs || !vm) {
        free(vs);
        free(vm);
        return -1;
    }
    for (ru = 0; ru < r->nr; ru++) {
        double sh = run_median(r, ru, values_of(s, k, what), s->m[den]);
        double t = run_median(r, ru, values_of(s, k, what), NULL);
        if (sh > 0)
            vs[cs++] = log(sh);
        double ref = ki >= 0 && t > 0 ? ref_without(r, ki, ru, log(t)) : NAN;
        if (!isnan(ref))
            vm[cm++] = log(t) - ref;
    }
    if (cs)
        *ls = tt_median(vs, cs);
    if (cm)
        *lm = tt_median(vm, cm);
    free(vs);
    free(vm);
    return 0;
}

int tt__diff_shift(const struct tt_diff_side *b, struct tt__runs *rb, long kb, int den_b,
                   const struct tt_diff_side *n, struct tt__runs *rn, long kn, int den_n,
                   const char *kind, int what, int up, double *shift)
{
    double lsb, lmb, lsn, lmn, ds, dm;
    *shift = NAN;
    if (side_levels(b, rb, kb, what, den_b, kind, &lsb, &lmb) < 0 ||
        side_levels(n, rn, kn, what, den_n, kind, &lsn, &lmn) < 0)
        return -1;
    ds = lsn - lsb;
    dm = lmn - lmb;
    if (isnan(ds))
        return 0;
    /* the smaller change toward the row's direction: both references must
     * agree that the key moved */
    *shift = isnan(dm) ? ds : up ? fmin(ds, dm) : fmax(ds, dm);
    return 0;
}
