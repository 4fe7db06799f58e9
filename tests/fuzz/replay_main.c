/*
 * tests/fuzz/replay_main.c - run a libFuzzer target without libFuzzer.
 *
 *   replay_json  FILE|DIR...
 *   replay_trace FILE|DIR...
 *
 * Calls LLVMFuzzerTestOneInput once for every FILE, and for every regular
 * file under every DIR (recursively, in name order, skipping names that start
 * with '.'). Each input is passed in an exactly sized heap buffer, so that a
 * sanitizer build catches a read past its end. Exits 0 when every input was
 * run (a failing input aborts, as under libFuzzer), 2 when a path cannot be
 * read or no input was found.
 *
 * Linked with the same fuzz_*.c sources as the libFuzzer targets, with any
 * compiler: the corpus replays in every build (ctest fuzz/replay_*).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long n_run;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long sz;
    size_t got;
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "replay: %s: cannot size the file\n", path);
        fclose(f);
        return -1;
    }
    /* exactly sized (malloc(0) may return NULL: ask for 1 and pass 0) */
    buf = malloc(sz ? (size_t)sz : 1);
    if (!buf) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        fclose(f);
        return -1;
    }
    got = sz ? fread(buf, 1, (size_t)sz, f) : 0;
    fclose(f);
    if (got != (size_t)sz) {
        fprintf(stderr, "replay: %s: short read\n", path);
        free(buf);
        return -1;
    }
    if (getenv("REPLAY_VERBOSE"))
        fprintf(stderr, "replay: %s (%ld bytes)\n", path, sz);
    LLVMFuzzerTestOneInput(buf, (size_t)sz);
    free(buf);
    n_run++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path);

static int run_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    int rc = 0;
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **nn;
            cap = cap ? cap * 2 : 64;
            nn = realloc(names, cap * sizeof(*names));
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
        }
        names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
        if (!names[n]) {
            rc = -1;
            break;
        }
        sprintf(names[n], "%s/%s", path, de->d_name);
        n++;
    }
    closedir(d);
    if (rc == 0 && n)
        qsort(names, n, sizeof(*names), cmp_names);
    for (i = 0; i < n; i++) {
        if (rc == 0 && run_path(names[i]) < 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    if (rc < 0)
        fprintf(stderr, "replay: %s: failed\n", path);
    return rc;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode))
        return run_dir(path);
    if (S_ISREG(st.st_mode))
        return run_file(path);
    return 0; /* sockets, fifos, ...: not inputs */
}

int main(int argc, char **argv)
{
    int i, rc = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (i = 1; i < argc; i++) {
        if (run_path(argv[i]) < 0)
            rc = 2;
    }
    if (n_run == 0) {
        fprintf(stderr, "replay: no input files\n");
        return 2;
    }
    printf("replay: %ld input%s run, %s\n", n_run, n_run == 1 ? "" : "s",
           rc ? "some paths could not be read" : "no failure");
    return rc;
}
