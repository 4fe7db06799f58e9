/*
 * common/strtab.h - string interning: each distinct string gets one id
 * (the ingest's `strings` table), found again through an open-addressing
 * hash. Internal.
 */
#ifndef TT_COMMON_STRTAB_H
#define TT_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef struct tt_strent {
    uint64_t hash;
    int64_t id;
    size_t off, len;
} tt_strent;

typedef struct tt_strtab {
    uint32_t *slots; /* entry index + 1, 0 = empty */
    size_t nslots;
    tt_strent *ent;
    size_t n, alloc;
    tt_buf pool;
    int64_t next_id;
} tt_strtab;

/* Hash of n bytes (never 0). */
uint64_t tt_strhash(const char *s, size_t n);
/* Double the slots (first call: make them). 0 or TT_ENOMEM. */
int tt_strtab_rehash(tt_strtab *t);
/* Find s (hash h); returns the id or 0 when absent (then *slot is where it goes). */
int64_t tt_strtab_find(tt_strtab *t, const char *s, size_t len, uint64_t h, size_t *slot);
/* Add s with id (no-op when present). 0 or TT_ENOMEM. */
int tt_strtab_add(tt_strtab *t, const char *s, size_t len, uint64_t h, int64_t id);
void tt_strtab_release(tt_strtab *t);

#endif
