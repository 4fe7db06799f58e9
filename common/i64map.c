/*
 * common/i64map.c - an int64 -> size_t map (common/i64map.h): open
 * addressing, a multiplicative hash, doubled at half full.
 */
#include "common/compat.h"
#include "common/i64map.h"

static size_t i64map_slot(const struct i64map *m, int64_t key)
{
    size_t j = (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 17) & (m->cap - 1);
    while (m->used[j] && m->k[j] != key)
        j = (j + 1) & (m->cap - 1);
    return j;
}

static int i64map_grow(struct i64map *m)
{
    struct i64map nm = { NULL, NULL, NULL, m->cap ? m->cap * 2 : 64, 0 };
    size_t i;
    nm.k = malloc(nm.cap * sizeof(*nm.k));
    nm.v = malloc(nm.cap * sizeof(*nm.v));
    nm.used = calloc(nm.cap, 1);
    if (!nm.k || !nm.v || !nm.used) {
        free(nm.k);
        free(nm.v);
        free(nm.used);
        return TT_ENOMEM;
    }
    for (i = 0; i < m->cap; i++)
        if (m->used[i])
            tt__i64map_put(&nm, m->k[i], m->v[i]);
    free(m->k);
    free(m->v);
    free(m->used);
    *m = nm;
    return 0;
}

int tt__i64map_put(struct i64map *m, int64_t key, size_t val)
{
    size_t j;
    if ((m->n + 1) * 2 > m->cap && i64map_grow(m) < 0)
        return TT_ENOMEM;
    j = i64map_slot(m, key);
    if (!m->used[j]) {
        m->used[j] = 1;
        m->k[j] = key;
        m->n++;
    }
    m->v[j] = val;
    return 0;
}

int tt__i64map_get(const struct i64map *m, int64_t key, size_t *val)
{
    size_t j;
    if (!m->cap)
        return 0;
    j = i64map_slot(m, key);
    if (!m->used[j])
        return 0;
    *val = m->v[j];
    return 1;
}

void tt__i64map_free(struct i64map *m)
{
    free(m->k);
    free(m->v);
    free(m->used);
    memset(m, 0, sizeof(*m)); /* empty again, ready for reuse */
}
