/*
 * tests/capture/cpu_prog.c - a CPU-bound program that knows nothing of
 * tracetool or CUDA: a deterministic loop (about half a second by default)
 * and its checksum on stdout. test_record.py and bench/record_overhead.sh
 * run it plain and under `tracetool record`: same output, same status.
 *
 *   cpu_prog [--iters N] [--stdin] [--alloc N] [--exit CODE] [--kill SIG]
 *
 * --stdin: read standard input to its end and print its size and hash (the
 * pass-through check); --alloc N: malloc and free N blocks (heap events for
 * --memory); --exit CODE: exit with it; --kill SIG: die of that signal.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t spin(uint64_t iters)
{
    uint64_t x = 88172645463325252ull, sum = 0, i;
    for (i = 0; i < iters; i++) { /* xorshift64: nothing to optimise away */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum += x >> 60;
    }
    return sum ^ x;
}

static void read_stdin(void)
{
    unsigned char buf[65536];
    uint64_t h = 1469598103934665603ull, n = 0;
    size_t k, i;
    while ((k = fread(buf, 1, sizeof(buf), stdin)) > 0) {
        for (i = 0; i < k; i++)
            h = (h ^ buf[i]) * 1099511628211ull; /* FNV-1a */
        n += k;
    }
    printf("stdin %llu bytes fnv1a %016llx\n", (unsigned long long)n, (unsigned long long)h);
}

static long alloc_blocks(long n)
{
    long i, sum = 0;
    for (i = 0; i < n; i++) {
        char *p = malloc(64 + (size_t)(i % 256));
        if (!p)
            return -1;
        memset(p, (int)(i & 0x7f), 64);
        sum += p[i % 64];
        free(p);
    }
    return sum;
}

int main(int argc, char **argv)
{
    uint64_t iters = 300000000ull;
    int i, code = 0, sig = 0, in = 0;
    long blocks = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--stdin"))
            in = 1;
        else if (!strcmp(argv[i], "--alloc") && i + 1 < argc)
            blocks = atol(argv[++i]);
        else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
            code = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kill") && i + 1 < argc)
            sig = atoi(argv[++i]);
        else {
            fprintf(stderr, "cpu_prog: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (in)
        read_stdin();
    if (blocks)
        printf("alloc %ld\n", alloc_blocks(blocks));
    printf("cpu_prog checksum %016llx\n", (unsigned long long)spin(iters));
    fflush(stdout);
    fprintf(stderr, "cpu_prog: done\n");
    if (sig)
        raise(sig);
    return code;
}
