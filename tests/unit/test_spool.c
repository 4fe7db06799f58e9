/*
 * tests/unit/test_spool.c - formats/spool.c: an input readable only once
 * (a pipe as standard input) copied to an anonymous temporary file that
 * can be read any number of times; regular files read where they are.
 */
#include "common/compat.h"
#include "formats/spool.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* the whole content of path (malloc'd, *n bytes) */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    size_t cap = 0, len = 0, r;
    cr_assert_not_null(f, "open %s", path);
    do {
        if (len == cap)
            b = realloc(b, cap = cap ? 2 * cap : 4096);
        r = fread(b + len, 1, cap - len, f);
        len += r;
    } while (r > 0);
    fclose(f);
    *n = len;
    return b;
}

/* standard input becomes a pipe fed by a child with n bytes of a pattern */
static pid_t stdin_from_pipe(size_t n, int *saved)
{
    int p[2];
    pid_t pid;
    cr_assert_eq(pipe(p), 0);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char buf[4096];
        size_t i, k = 0;
        close(p[0]);
        for (i = 0; i < n; i++) {
            buf[k++] = (char)('a' + i % 23);
            if ((k == sizeof(buf) || i + 1 == n) && write(p[1], buf, k) != (ssize_t)k)
                _exit(1);
            k = k == sizeof(buf) || i + 1 == n ? 0 : k;
        }
        _exit(0);
    }
    close(p[1]);
    *saved = dup(STDIN_FILENO);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    return pid;
}

static void stdin_restore(pid_t pid, int saved)
{
    int st;
    dup2(saved, STDIN_FILENO);
    close(saved);
    waitpid(pid, &st, 0);
}

Test(spool, a_pipe_is_copied_and_reads_twice)
{
    tt__spool sp;
    const char *rd = NULL;
    size_t n1, n2, i, want = 200000; /* past one copy buffer */
    int saved;
    pid_t pid = stdin_from_pipe(want, &saved);
    char *a, *b;
    cr_assert_eq(tt__spool_needed("-"), 1);
    cr_assert_eq(tt__spool_input(&sp, "-", &rd), 0, "%s", tt_error_last()->message);
    stdin_restore(pid, saved);
    cr_assert_str_neq(rd, "-");
    a = slurp(rd, &n1);
    b = slurp(rd, &n2); /* a second reading sees the same bytes from the start */
    cr_assert_eq(n1, want);
    cr_assert_eq(n2, want);
    for (i = 0; i < want; i++)
        cr_assert_eq(a[i], (char)('a' + i % 23), "byte %zu", i);
    cr_assert_eq(memcmp(a, b, want), 0);
    free(a);
    free(b);
    tt__spool_release(&sp);
    cr_assert_eq(sp.fd, -1);
}

Test(spool, regular_files_directories_and_missing_paths_are_read_where_they_are)
{
    char path[] = "/tmp/tt-spool-test-XXXXXX";
    int fd = mkstemp(path);
    tt__spool sp;
    const char *rd = NULL;
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(tt__spool_needed(path), 0);
    cr_assert_eq(tt__spool_input(&sp, path, &rd), 0);
    cr_assert_eq(rd, path);
    cr_assert_eq(sp.fd, -1);
    tt__spool_release(&sp);
    cr_assert_eq(tt__spool_needed("/tmp"), 0);
    cr_assert_eq(tt__spool_needed("/nonexistent/x.json"), 0);
    cr_assert_eq(tt__spool_input(&sp, "/nonexistent/x.json", &rd), 0);
    cr_assert_str_eq(rd, "/nonexistent/x.json");
    unlink(path);
}

Test(spool, an_empty_pipe_gives_an_empty_copy)
{
    tt__spool sp;
    const char *rd = NULL;
    size_t n;
    int saved;
    pid_t pid = stdin_from_pipe(0, &saved);
    char *a;
    cr_assert_eq(tt__spool_input(&sp, "-", &rd), 0);
    stdin_restore(pid, saved);
    a = slurp(rd, &n);
    cr_assert_eq(n, 0);
    free(a);
    tt__spool_release(&sp);
}

Test(spool, a_copy_that_cannot_be_made_names_the_input_and_tmpdir)
{
    tt__spool sp;
    const char *rd = NULL;
    int saved, rc;
    pid_t pid = stdin_from_pipe(10, &saved);
    setenv("TMPDIR", "/proc/self", 1); /* a directory nothing can be created in */
    rc = tt__spool_input(&sp, "-", &rd);
    unsetenv("TMPDIR");
    stdin_restore(pid, saved);
    cr_assert_eq(rc, TT_EIO);
    cr_assert_str_eq(tt_error_last()->source, "-");
    cr_assert_not_null(strstr(tt_error_last()->message, "TMPDIR"), "%s", tt_error_last()->message);
    tt__spool_release(&sp);
}
