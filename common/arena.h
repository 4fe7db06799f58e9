/*
 * common/arena.h - bump allocator whose allocations never move; everything
 * is released at once by tt_arena_reset (keeps the first block) or
 * tt_arena_release.
 */
#ifndef TT_COMMON_ARENA_H
#define TT_COMMON_ARENA_H

#include <stddef.h>

struct tt_arena_block;
typedef struct tt_arena {
    struct tt_arena_block *head; /* current block */
    size_t block_size;
} tt_arena;

#define TT_ARENA_INIT { NULL, 0 }

/* Returns NULL on allocation failure. Memory is 8-byte aligned. */
void *tt_arena_alloc(tt_arena *a, size_t size);
/* Copy len bytes and add a NUL. */
char *tt_arena_strndup(tt_arena *a, const char *s, size_t len);
void tt_arena_reset(tt_arena *a);
void tt_arena_release(tt_arena *a);

#endif
