/*
 * common/arena.c - the tt_arena bump allocator.
 */
#include "common/compat.h"
#include "common/arena.h"

struct tt_arena_block {
    struct tt_arena_block *prev;
    size_t size, used;
    /* data follows, 8-byte aligned */
    _Alignas(8) unsigned char data[];
};

void *tt_arena_alloc(tt_arena *a, size_t size)
{
    struct tt_arena_block *b = a->head;
    size_t need = (size + 7) & ~(size_t)7;
    if (need < size)
        return NULL;
    if (!b || b->size - b->used < need) {
        size_t bs = a->block_size ? a->block_size : 16384, total;
        while (bs < need) {
            if (tt_st_mult(&bs, bs, 2))
                return NULL;
        }
        if (tt_st_add(&total, bs, sizeof(*b)))
            return NULL;
        b = malloc(total);
        if (!b)
            return NULL;
        b->prev = a->head;
        b->size = bs;
        b->used = 0;
        a->head = b;
        if (bs > a->block_size)
            a->block_size = bs;
    }
    b->used += need;
    return b->data + b->used - need;
}

char *tt_arena_strndup(tt_arena *a, const char *s, size_t len)
{
    char *p;
    size_t n;
    if (tt_st_add(&n, len, 1))
        return NULL;
    p = tt_arena_alloc(a, n);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void tt_arena_reset(tt_arena *a)
{
    struct tt_arena_block *b = a->head;
    if (!b)
        return;
    /* keep the largest (newest) block, free the rest */
    while (b->prev) {
        struct tt_arena_block *p = b->prev;
        b->prev = p->prev;
        free(p);
    }
    b->used = 0;
}

void tt_arena_release(tt_arena *a)
{
    struct tt_arena_block *b = a->head;
    while (b) {
        struct tt_arena_block *p = b->prev;
        free(b);
        b = p;
    }
    a->head = NULL;
    a->block_size = 0;
}
