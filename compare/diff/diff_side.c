/*
 * compare/diff/diff_side.c - a side of `tracetool diff` as a table: per-sample
 * step numbers and metrics, and per key (kind + name) a value per sample,
 * looked up by a hash of the key. diff_summary.c fills it from traces,
 * diff_save.c from a saved summary.
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"

#include <math.h>
#include <string.h>

static uint64_t key_hash(const char *kind, const char *key)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *kind; kind++)
        h = (h ^ (unsigned char)*kind) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 1099511628211ULL;
    return h;
}

static int kmap_grow(struct tt_diff_side *s)
{
    size_t cap = s->kcap ? s->kcap * 2 : 256, i;
    size_t *m = calloc(cap, sizeof(*m));
    if (!m)
        return -1;
    for (i = 0; i < s->nkeys; i++) {
        size_t j = (size_t)key_hash(s->keys[i].kind, s->keys[i].key) & (cap - 1);
        while (m[j])
            j = (j + 1) & (cap - 1);
        m[j] = i + 1;
    }
    free(s->kmap);
    s->kmap = m;
    s->kcap = cap;
    return 0;
}

static double *zeros(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

long tt__diff_find(const struct tt_diff_side *s, const char *kind, const char *key)
{
    size_t j;
    if (!s->kcap)
        return -1;
    for (j = (size_t)key_hash(kind, key) & (s->kcap - 1); s->kmap[j]; j = (j + 1) & (s->kcap - 1)) {
        const struct dkey *k = &s->keys[s->kmap[j] - 1];
        if (!strcmp(k->kind, kind) && !strcmp(k->key, key))
            return (long)(s->kmap[j] - 1);
    }
    return -1;
}

long tt__diff_key(struct tt_diff_side *s, const char *kind, const char *key)
{
    size_t j;
    struct dkey *k;
    if (2 * (s->nkeys + 1) >= s->kcap && kmap_grow(s) < 0)
        return -1;
    for (j = (size_t)key_hash(kind, key) & (s->kcap - 1); s->kmap[j]; j = (j + 1) & (s->kcap - 1)) {
        k = &s->keys[s->kmap[j] - 1];
        if (!strcmp(k->kind, kind) && !strcmp(k->key, key))
            return (long)(s->kmap[j] - 1);
    }
    if (TT_ALLOC_GROW(s->keys, s->nkeys + 1, s->akeys) < 0)
        return -1;
    k = &s->keys[s->nkeys];
    memset(k, 0, sizeof(*k));
    if (!(k->kind = strdup(kind)) || !(k->key = strdup(key)) || !(k->count = zeros(s->alloc)) ||
        !(k->ns = zeros(s->alloc)) || !(k->dev = zeros(s->alloc))) {
        free(k->kind);
        free(k->key);
        free(k->count);
        free(k->ns);
        free(k->dev);
        return -1;
    }
    s->kmap[j] = ++s->nkeys;
    return (long)(s->nkeys - 1);
}

static int grow_arr(double **a, size_t old, size_t cap, double fill)
{
    double *p = realloc(*a, cap * sizeof(*p));
    size_t i;
    if (!p)
        return -1;
    for (i = old; i < cap; i++)
        p[i] = fill;
    *a = p;
    return 0;
}

long tt__diff_add_sample(struct tt_diff_side *s, int64_t step)
{
    size_t i, k;
    if (s->n == s->alloc) {
        size_t cap = s->alloc ? s->alloc * 2 : 16;
        int64_t *st = realloc(s->step, cap * sizeof(*st));
        if (!st)
            return -1;
        s->step = st;
        if (!(st = realloc(s->rank, cap * sizeof(*st))))
            return -1;
        s->rank = st;
        {
            int32_t *ru = realloc(s->run, cap * sizeof(*ru));
            if (!ru)
                return -1;
            s->run = ru;
        }
        for (i = 0; i < M_COUNT; i++)
            if (grow_arr(&s->m[i], s->alloc, cap, NAN) < 0)
                return -1;
        for (k = 0; k < s->nkeys; k++)
            if (grow_arr(&s->keys[k].count, s->alloc, cap, 0) < 0 ||
                grow_arr(&s->keys[k].ns, s->alloc, cap, 0) < 0 ||
                grow_arr(&s->keys[k].dev, s->alloc, cap, 0) < 0)
                return -1;
        s->alloc = cap;
    }
    s->step[s->n] = step;
    s->rank[s->n] = -1;
    s->run[s->n] = s->cur_run;
    return (long)s->n++;
}

void tt_diff_side_free(tt_diff_side *s)
{
    size_t i;
    if (!s)
        return;
    for (i = 0; i < s->nkeys; i++) {
        free(s->keys[i].kind);
        free(s->keys[i].key);
        free(s->keys[i].count);
        free(s->keys[i].ns);
        free(s->keys[i].dev);
    }
    for (i = 0; i < M_COUNT; i++)
        free(s->m[i]);
    free(s->keys);
    free(s->kmap);
    free(s->step);
    free(s->rank);
    free(s->run);
    free(s);
}

