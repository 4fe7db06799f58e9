/*
 * tests/capture/alloc_prog.c - a program that knows nothing of tracetool:
 * it allocates and frees blocks (malloc, calloc, realloc, and the aligned
 * ones: posix_memalign, aligned_alloc, memalign, valloc, pvalloc) and prints
 * a result. test_capture.py runs it plain and with the malloc interposer
 * preloaded: same output, and the heap's events in a trace. One block comes
 * from glibc's own entry point (__libc_malloc, which no interposer sees) and
 * is freed with free(): its free must not be an event.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);

#define NALIGNED 100

static long aligned_blocks(void)
{
    void *b[5][NALIGNED];
    long sum = 0;
    int i, k;
    for (i = 0; i < NALIGNED; i++) {
        if (posix_memalign(&b[0][i], 64, 200 + (size_t)i) != 0)
            return -1;
        b[1][i] = aligned_alloc(128, 4096);
        b[2][i] = memalign(256, 300 + (size_t)i);
        b[3][i] = valloc(100 + (size_t)i);
        b[4][i] = pvalloc(100 + (size_t)i);
        for (k = 0; k < 5; k++) {
            if (!b[k][i])
                return -1;
            memset(b[k][i], (i + k) & 0x7f, 64);
            sum += ((unsigned char *)b[k][i])[10] + (long)((uintptr_t)b[k][i] % 64);
        }
    }
    /* posix_memalign refuses an alignment that is not a power of two */
    sum += posix_memalign(&b[0][0], 24, 10) != 0 ? 1000 : 0;
    for (i = 0; i < NALIGNED; i++)
        for (k = 0; k < 5; k++)
            free(b[k][i]);
    return sum;
}

int main(void)
{
    char *blocks[1000], *unseen;
    long sum = 0, al;
    int i;
    for (i = 0; i < 1000; i++) {
        blocks[i] = i % 2 ? malloc(100 + (size_t)i) : calloc(1, 100 + (size_t)i);
        if (!blocks[i])
            return 1;
        memset(blocks[i], i & 0x7f, 100);
        sum += blocks[i][50];
    }
    for (i = 0; i < 1000; i += 10) {
        blocks[i] = realloc(blocks[i], 5000);
        sum += blocks[i][50];
    }
    for (i = 0; i < 1000; i++)
        free(blocks[i]);
    if ((al = aligned_blocks()) < 0)
        return 1;
    if (!(unseen = __libc_malloc(1 << 20)))
        return 1;
    memset(unseen, 1, 1 << 20);
    sum += unseen[12345];
    free(unseen);
    printf("alloc_prog %ld aligned %ld\n", sum, al);
    return 0;
}
