/*
 * compare/diff/diff_stats.c - the statistics of `tracetool diff`: medians, the
 * interquartile ratio, the Hodges-Lehmann shift, the one-sided
 * Mann-Whitney U test (exact distribution by the usual recurrence when
 * there are no ties and at most 50 samples, else the normal approximation
 * with tie and continuity corrections) and Benjamini-Hochberg.
 */
#include "common/compat.h"
#include "tracetool/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX 50 /* nx + ny up to this: exact */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double *sorted_copy(const double *v, size_t n)
{
    double *s = malloc((n ? n : 1) * sizeof(*s));
    if (!s)
        return NULL;
    memcpy(s, v, n * sizeof(*s));
    TT_QSORT(s, n, sizeof(*s), cmp_d);
    return s;
}

static double median_sorted(const double *s, size_t n)
{
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

double tt_median(const double *v, size_t n)
{
    double *s, m;
    if (!n || !(s = sorted_copy(v, n)))
        return NAN;
    m = median_sorted(s, n);
    free(s);
    return m;
}

/* numpy's default (linear) quantile of sorted s */
static double quantile(const double *s, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    double f = pos - (double)lo;
    return lo + 1 < n ? s[lo] + f * (s[lo + 1] - s[lo]) : s[lo];
}

double tt_iqr_ratio(const double *v, size_t n)
{
    double *s, r, m;
    if (!n || !(s = sorted_copy(v, n)))
        return NAN;
    m = median_sorted(s, n);
    r = m != 0 ? (quantile(s, n, 0.75) - quantile(s, n, 0.25)) / fabs(m) : NAN;
    free(s);
    return r;
}

/* pairs beyond which the Hodges-Lehmann shift is not computed (NaN): it
 * needs them all; step samples stay far below */
#define HL_MAX_PAIRS 10000000u

double tt_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny)
{
    double *d, m;
    size_t i, j, k = 0;
    if (!nx || !ny || nx > HL_MAX_PAIRS / ny || !(d = malloc(nx * ny * sizeof(*d))))
        return NAN;
    for (i = 0; i < nx; i++)
        for (j = 0; j < ny; j++)
            d[k++] = y[j] - x[i];
    TT_QSORT(d, k, sizeof(*d), cmp_d);
    m = median_sorted(d, k);
    free(d);
    return m;
}

double tt_mwu_p_min(size_t nx, size_t ny)
{
    /* 1 / C(nx + ny, nx), as a product to stay in range */
    double c = 1;
    size_t k;
    for (k = 1; k <= nx; k++)
        c = c * (double)(ny + k) / (double)k;
    return 1.0 / c;
}

/* P(U >= u) for U the number of (x, y) pairs with y > x, no ties: the
 * count of arrangements by the recurrence f(n, m, u) = f(n - 1, m, u - m) +
 * f(n, m - 1, u) (the largest value from y or from x), over C(n + m, n) */
static double exact_upper(size_t n, size_t m, size_t u)
{
    size_t maxu = n * m, a, b, k;
    /* f(a, b, k): arrangements of a x and b y values with U = k; two layers
     * of a (f: a - 1, g: a), each [b][k] */
    double *f = calloc((m + 1) * (maxu + 1), sizeof(double));
    double *g = calloc((m + 1) * (maxu + 1), sizeof(double));
    double tail = 0, total = 0;
    if (!f || !g) {
        free(f);
        free(g);
        return NAN;
    }
#define F(t, bb, kk) (t)[(bb) * (maxu + 1) + (kk)]
    /* a = 0 x values: one arrangement, U = 0, whatever b */
    for (b = 0; b <= m; b++)
        F(f, b, 0) = 1;
    for (a = 1; a <= n; a++) {
        double *t;
        memset(g, 0, (m + 1) * (maxu + 1) * sizeof(double));
        for (b = 0; b <= m; b++)
            for (k = 0; k <= a * b; k++) {
                /* the largest value is an x: no y above it, U as for the
                 * rest; a y: above all a x values, U - a for the rest */
                F(g, b, k) = F(f, b, k) + (b > 0 && k >= a ? F(g, b - 1, k - a) : 0);
            }
        t = f;
        f = g;
        g = t;
    }
    for (k = 0; k <= maxu; k++) {
        total += F(f, m, k);
        if (k >= u)
            tail += F(f, m, k);
    }
#undef F
    free(f);
    free(g);
    return total > 0 ? tail / total : NAN;
}

struct tagged {
    double v;
    int is_y;
};

static int cmp_tagged(const void *a, const void *b)
{
    const struct tagged *p = a, *q = b;
    return p->v < q->v ? -1 : p->v > q->v;
}

double tt_mwu_p_greater(const double *x, size_t nx, const double *y, size_t ny, int *exact)
{
    double u, rank_y = 0, mean, var, ties = 0, z;
    size_t i, n = nx + ny;
    int tied = 0;
    struct tagged *all;
    if (exact)
        *exact = 0;
    if (!nx || !ny)
        return NAN;
    /* U from the ranks (average ranks for ties): O(n log n) */
    if (!(all = malloc(n * sizeof(*all))))
        return NAN;
    for (i = 0; i < nx; i++) {
        all[i].v = x[i];
        all[i].is_y = 0;
    }
    for (i = 0; i < ny; i++) {
        all[nx + i].v = y[i];
        all[nx + i].is_y = 1;
    }
    TT_QSORT(all, n, sizeof(*all), cmp_tagged);
    for (i = 0; i < n;) {
        size_t k = i, m;
        double avg;
        while (k < n && all[k].v == all[i].v)
            k++;
        avg = ((double)(i + 1) + (double)k) / 2.0; /* ranks i+1 .. k */
        for (m = i; m < k; m++)
            if (all[m].is_y)
                rank_y += avg;
        if (k - i > 1) {
            double t = (double)(k - i);
            ties += t * t * t - t;
            tied = 1;
        }
        i = k;
    }
    free(all);
    u = rank_y - (double)ny * (double)(ny + 1) / 2.0;
    if (!tied && n <= EXACT_MAX) {
        if (exact)
            *exact = 1;
        return exact_upper(nx, ny, (size_t)u);
    }
    mean = (double)nx * (double)ny / 2.0;
    var = (double)nx * (double)ny / 12.0 *
          ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
    if (var <= 0)
        return u > mean ? 0.0 : 1.0;
    z = (u - mean - 0.5) / sqrt(var);
    return 0.5 * erfc(z / sqrt(2.0));
}

struct pidx {
    double p;
    size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
    const struct pidx *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

int tt_bh_adjust(const double *p, size_t n, double *q)
{
    struct pidx *s;
    double run = 1.0;
    size_t k;
    if (!n)
        return 0;
    if (!(s = malloc(n * sizeof(*s))))
        return tt__oom();
    for (k = 0; k < n; k++) {
        s[k].p = isnan(p[k]) ? 1.0 : p[k];
        s[k].i = k;
    }
    TT_QSORT(s, n, sizeof(*s), cmp_pidx);
    for (k = n; k-- > 0;) {
        double v = s[k].p * (double)n / (double)(k + 1);
        if (v < run)
            run = v;
        q[s[k].i] = run;
    }
    free(s);
    return 0;
}

/* ---- Welch's t-test ---- */

/* the continued fraction of the regularized incomplete beta function
 * (modified Lentz), for x < (a + 1) / (a + b + 2) */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;
    int m;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1.0 / d;
    h = d;
    for (m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, aa, del;
        aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + aa * d;
        c = 1.0 + aa / c;
        d = 1.0 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d;
        c = 1.0 + aa / c;
        d = 1.0 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}

/* I_x(a, b) */
static double beta_reg(double a, double b, double x)
{
    double lbt;
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1.0) / (a + b + 2.0))
        return exp(lbt) * beta_cf(a, b, x) / a;
    return 1.0 - exp(lbt) * beta_cf(b, a, 1.0 - x) / b;
}

double tt_student_t_sf(double t, double df)
{
    double tail;
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 0.0 : 1.0;
    /* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2) */
    tail = 0.5 * beta_reg(df / 2.0, 0.5, df / (df + t * t));
    return t > 0 ? tail : 1.0 - tail;
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    size_t i;
    for (i = 0; i < n; i++)
        s += v[i];
    *mean = s / (double)n;
    for (i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *var = ss / (double)(n - 1);
}

double tt_welch_p_greater(const double *x, size_t nx, const double *y, size_t ny)
{
    double mx, vx, my, vy, sx, sy, se2, t, df;
    if (nx < 2 || ny < 2)
        return NAN;
    mean_var(x, nx, &mx, &vx);
    mean_var(y, ny, &my, &vy);
    sx = vx / (double)nx;
    sy = vy / (double)ny;
    se2 = sx + sy;
    if (!(se2 > 0))
        return my > mx ? 0.0 : my < mx ? 1.0 : NAN;
    t = (my - mx) / sqrt(se2);
    df = se2 * se2 / (sx * sx / (double)(nx - 1) + sy * sy / (double)(ny - 1));
    return tt_student_t_sf(t, df);
}
