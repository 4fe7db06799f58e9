/*
 * common/i64map.h - a map from int64 keys to size_t values (open
 * addressing), for the analyses' lookups by id, address or duration.
 * Internal; not installed.
 */
#ifndef TT_COMMON_I64MAP_H
#define TT_COMMON_I64MAP_H

#include <stddef.h>
#include <stdint.h>

/* zero-initialised = empty; k/v/used hold cap slots (used[i]: slot i taken) */
struct i64map {
    int64_t *k;
    size_t *v;
    unsigned char *used;
    size_t cap, n;
};

/* set key's value (added when absent); 0 or TT_ENOMEM */
int tt__i64map_put(struct i64map *m, int64_t key, size_t val);
/* 1 and *val when key is there, else 0 */
int tt__i64map_get(const struct i64map *m, int64_t key, size_t *val);
/* frees and leaves the map empty (usable again) */
void tt__i64map_free(struct i64map *m);

#endif
