/*
 * common/strtab.c - string interning (common/strtab.h).
 */
#include "common/compat.h"
#include "common/strtab.h"

#include <stdlib.h>
#include <string.h>

/*
 * String hash for the intern table: eight bytes per step (kernel names run to
 * hundreds of bytes, and every event's name and category pass through here).
 * Not FNV any more; the name stays for the call sites.
 */
uint64_t tt_strhash(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xC2B2AE3D27D4EB4FULL), w;
    while (n >= 8) {
        memcpy(&w, s, 8);
        h = (h ^ (w * 0xFF51AFD7ED558CCDULL)) * 0xC4CEB9FE1A85EC53ULL;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    if (n) {
        w = 0;
        memcpy(&w, s, n);
        h = (h ^ (w * 0xFF51AFD7ED558CCDULL)) * 0xC4CEB9FE1A85EC53ULL;
    }
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return h ? h : 1;
}

int tt_strtab_rehash(tt_strtab *t)
{
    size_t ns = t->nslots ? t->nslots * 2 : 4096, i;
    uint32_t *slots = calloc(ns, sizeof(*slots));
    if (!slots)
        return TT_ENOMEM;
    for (i = 0; i < t->n; i++) {
        size_t j = t->ent[i].hash & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return 0;
}

/* Find s; returns the id or 0 when absent (then *slot is where it goes). */
int64_t tt_strtab_find(tt_strtab *t, const char *s, size_t len,
                           uint64_t h, size_t *slot)
{
    size_t j = h & (t->nslots - 1);
    while (t->slots[j]) {
        tt_strent *e = &t->ent[t->slots[j] - 1];
        if (e->hash == h && e->len == len &&
            memcmp(t->pool.buf + e->off, s, len) == 0)
            return e->id;
        j = (j + 1) & (t->nslots - 1);
    }
    *slot = j;
    return 0;
}

int tt_strtab_add(tt_strtab *t, const char *s, size_t len, uint64_t h,
                      int64_t id)
{
    size_t slot = 0;
    if ((t->n + 1) * 2 > t->nslots && tt_strtab_rehash(t) < 0)
        return TT_ENOMEM;
    if (tt_strtab_find(t, s, len, h, &slot))
        return 0;
    if (TT_ALLOC_GROW(t->ent, t->n + 1, t->alloc) < 0)
        return TT_ENOMEM;
    t->ent[t->n].hash = h;
    t->ent[t->n].id = id;
    t->ent[t->n].off = t->pool.len;
    t->ent[t->n].len = len;
    if (tt_buf_add(&t->pool, s, len) < 0)
        return TT_ENOMEM;
    t->n++;
    t->slots[slot] = (uint32_t)t->n;
    if (id >= t->next_id)
        t->next_id = id + 1;
    return 0;
}

void tt_strtab_release(tt_strtab *t)
{
    free(t->slots);
    free(t->ent);
    tt_buf_release(&t->pool);
    memset(t, 0, sizeof(*t));
}
