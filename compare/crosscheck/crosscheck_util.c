/*
 * compare/crosscheck/crosscheck_util.c - what the crosscheck joins share: pid/tid
 * values, counts in sorted arrays, the samples of Kineto-only ops and
 * duplicate ids, and the index of Kineto threads.
 */
#include "compare/crosscheck/crosscheck_state.h"

/* first index i with a[i] >= v */
size_t xc_lower_i64(const int64_t *a, size_t n, int64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int xc_val_eq(const tt_xc_id *a, const tt_xc_id *b)
{
    if (a->type != b->type)
        return 0;
    if (a->type == TT_XC_ID_INT)
        return a->i == b->i;
    if (a->type == TT_XC_ID_TEXT)
        return strcmp(a->s, b->s) == 0;
    return 1;
}

uint64_t xc_val_hash(const tt_xc_id *v, uint64_t h)
{
    const unsigned char *c = (const unsigned char *)v->s;
    h = (h ^ (uint64_t)v->type) * 0x100000001b3ull;
    if (v->type == TT_XC_ID_INT)
        return (h ^ (uint64_t)v->i) * 0x100000001b3ull;
    for (; *c; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return h;
}

static size_t kt_slot(const struct result *r, const tt_xc_id *pid, const tt_xc_id *tid)
{
    uint64_t h = xc_val_hash(tid, xc_val_hash(pid, 0xcbf29ce484222325ull));
    size_t i = (size_t)(h ^ (h >> 29)) & (r->kthcap - 1);
    while (r->kth[i]) {
        const struct kthr *k = &r->kt[r->kth[i] - 1];
        if (xc_val_eq(&k->tid, tid) && xc_val_eq(&k->pid, pid))
            break;
        i = (i + 1) & (r->kthcap - 1);
    }
    return i;
}

size_t xc_count_sorted(const int64_t *a, size_t n, int64_t v)
{
    size_t lo = xc_lower_i64(a, n, v);
    if (lo == n || a[lo] != v)
        return 0;
    if (v == INT64_MAX)
        return n - lo;
    return xc_lower_i64(a + lo, n - lo, v + 1);
}

void xc_kdup_add(struct xc *x, struct result *r, int64_t id, int64_t count, int64_t n1,
                     int64_t n2)
{
    r->dup_k += count - 1;
    if (r->nkdups < x->limit) {
        struct dupo *d = &r->kdups[r->nkdups++];
        d->et_side = 0;
        d->id = id;
        d->count = count;
        d->name1 = n1;
        d->name2 = n2;
    }
}

/* a Kineto op inside the window that no ET op took; keeps the `limit` smallest keys */
void xc_konly_add(struct xc *x, struct result *r, const struct koff *k)
{
    size_t i;
    r->k_only++;
    if (k->kt >= 0)
        r->kt[k->kt].k_only++;
    if (!x->limit)
        return;
    if (r->nkonly == x->limit && r->konly[r->nkonly - 1].key <= k->key)
        return;
    i = r->nkonly < x->limit ? r->nkonly++ : r->nkonly - 1;
    while (i > 0 && r->konly[i - 1].key > k->key) {
        r->konly[i] = r->konly[i - 1];
        i--;
    }
    r->konly[i] = *k;
}

/* index of Kineto thread (pid, tid), added when new; -1 on OOM */
int xc_kt_index(struct result *r, const tt_xc_id *pid, const tt_xc_id *tid)
{
    size_t i;
    if (r->kthcap && r->kth[i = kt_slot(r, pid, tid)])
        return r->kth[i] - 1;
    if (TT_ALLOC_GROW(r->kt, r->nkt + 1, r->akt) < 0)
        return -1;
    if (2 * (r->nkt + 1) >= r->kthcap) { /* rehash */
        size_t cap = r->kthcap ? 2 * r->kthcap : 64, k;
        int *h = calloc(cap, sizeof(*h));
        if (!h)
            return -1;
        free(r->kth);
        r->kth = h;
        r->kthcap = cap;
        for (k = 0; k < r->nkt; k++)
            r->kth[kt_slot(r, &r->kt[k].pid, &r->kt[k].tid)] = (int)k + 1;
    }
    memset(&r->kt[r->nkt], 0, sizeof(r->kt[0]));
    r->kt[r->nkt].pid = *pid;
    r->kt[r->nkt].tid = *tid;
    r->kth[kt_slot(r, pid, tid)] = (int)r->nkt + 1;
    return (int)r->nkt++;
}

int xc_oom(void)
{
    return tt__oom();
}

void xc_widen(int *has, int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
    if (!*has) {
        *has = 1;
        *lo = a;
        *hi = b;
        return;
    }
    if (a < *lo)
        *lo = a;
    if (b > *hi)
        *hi = b;
}

int xc_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}
