/*
 * tests/capture/alloc_prog.c - a program that knows nothing of tracetool:
 * it allocates and frees blocks (malloc, calloc, realloc) and prints a
 * result. test_capture.py runs it plain and with the malloc interposer
 * preloaded: same output, and the heap's events in a trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *blocks[1000];
    long sum = 0;
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
    printf("alloc_prog %ld\n", sum);
    return 0;
}
