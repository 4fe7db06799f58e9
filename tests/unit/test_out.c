/*
 * tests/unit/test_out.c - the output module (report/out.h): plain and gzip
 * files read back (gzip inflated with zlib), standard output, the target
 * left as it was and no temporary left behind when a write fails or is
 * given up, and tt__write_file_atomic.
 */
#define _GNU_SOURCE
#include "common/compat.h"
#include "report/out.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static void setup(void)
{
    strcpy(dir, "/tmp/tt_out_unit_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    umask(022);
}

static void teardown(void)
{
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(out, .init = setup, .fini = teardown);

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* the file, inflated by zlib when it is gzip (gzread passes plain bytes) */
static char *slurp(const char *path, size_t *n)
{
    gzFile f = gzopen(path, "rb");
    size_t cap = 1 << 16;
    char *b = malloc(cap + 1);
    int k;
    cr_assert_not_null(f, "%s", path);
    *n = 0;
    while ((k = gzread(f, b + *n, (unsigned)(cap - *n))) > 0) {
        *n += (size_t)k;
        if (*n == cap)
            b = realloc(b, (cap *= 2) + 1);
    }
    cr_assert_geq(k, 0, "%s: inflates", path);
    gzclose(f);
    b[*n] = 0;
    return b;
}

static int is_gzip(const char *path)
{
    unsigned char m[2] = { 0, 0 };
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(m, 1, 2, f), 2);
    fclose(f);
    return m[0] == 0x1f && m[1] == 0x8b;
}

static void tmp_of(char *tmp, size_t cap, const char *path)
{
    snprintf(tmp, cap, "%s.tmp", path);
}

/* what write_some writes: printf pieces, small writes, one write larger
 * than the buffer (not copied), well past TT_OUT_FLUSH_AT in all */
static void write_some(tt_out *o, tt_buf *want)
{
    size_t i, big = TT_OUT_FLUSH_AT + 12345;
    char *blob = malloc(big);
    for (i = 0; i < 60000; i++) {
        cr_assert_eq(tt_out_printf(o, "%zu:%s,", i, i % 7 ? "x" : "seven"), 0);
        tt_buf_addf(want, "%zu:%s,", i, i % 7 ? "x" : "seven");
    }
    for (i = 0; i < big; i++)
        blob[i] = (char)('a' + i % 26);
    cr_assert_eq(tt_out_write(o, blob, big), 0);
    tt_buf_add(want, blob, big);
    cr_assert_eq(tt_out_puts(o, "\n]}\n"), 0);
    tt_buf_addstr(want, "\n]}\n");
    free(blob);
}

static void round_trip(const char *name, int how, int want_gzip)
{
    char path[128], tmp[140];
    tt_out o;
    tt_buf want;
    size_t n;
    char *got;
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    tmp_of(tmp, sizeof(tmp), path);
    tt_buf_init(&want);
    cr_assert_eq(tt_out_open(&o, path, how), 0);
    cr_assert(exists(tmp), "written beside the target first");
    cr_assert_eq(stat(tmp, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "0600 while written");
    cr_assert_not(exists(path));
    write_some(&o, &want);
    cr_assert_eq(tt_out_close(&o, 0), 0);
    cr_assert(exists(path) && !exists(tmp), "renamed when complete");
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0644, "a new file's mode (umask 022)");
    cr_assert_eq(is_gzip(path), want_gzip, "%s", name);
    got = slurp(path, &n);
    cr_assert_eq(n, want.len);
    cr_assert(!memcmp(got, want.buf, n), "the same bytes back");
    if (want_gzip) { /* and smaller */
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_lt(st.st_size, (off_t)n / 2);
        cr_assert_eq(tt_out_bytes(&o), (int64_t)st.st_size);
    }
    free(got);
    tt_buf_release(&want);
}

Test(out, plain_round_trip)
{
    round_trip("a.json", TT_OUT_GZ_BY_NAME, 0);
}

Test(out, gzip_round_trip)
{
    round_trip("a.json.gz", TT_OUT_GZ_BY_NAME, 1);
}

Test(out, gzip_forced_or_refused_whatever_the_name)
{
    round_trip("forced.json", TT_OUT_GZIP, 1);
    round_trip("plain.json.gz", TT_OUT_PLAIN, 0);
}

Test(out, an_empty_gzip_file_inflates_to_nothing)
{
    char path[128];
    tt_out o;
    size_t n;
    char *got;
    snprintf(path, sizeof(path), "%s/empty.gz", dir);
    cr_assert_eq(tt_out_open(&o, path, TT_OUT_GZ_BY_NAME), 0);
    cr_assert_eq(tt_out_close(&o, 0), 0);
    cr_assert(is_gzip(path));
    got = slurp(path, &n);
    cr_assert_eq(n, 0);
    free(got);
}

static void write_old(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("old contents\n", f);
    fclose(f);
}

static void assert_old(const char *path)
{
    size_t n;
    char *got = slurp(path, &n);
    cr_assert_str_eq(got, "old contents\n", "the target is as it was");
    free(got);
}

/* past a file-size limit every write fails (EFBIG): a full disk */
static void fail_midway(const char *name, int how)
{
    char path[128], tmp[140];
    struct rlimit old, lim = { 1 << 16, 1 << 16 };
    tt_out o;
    size_t i;
    int rc = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    tmp_of(tmp, sizeof(tmp), path);
    write_old(path);
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    cr_assert_eq(tt_out_open(&o, path, how), 0);
    srand(7);
    for (i = 0; i < 400000 && rc == 0; i++) /* random digits: gzip cannot shrink them much */
        rc = tt_out_printf(&o, "%d%d,", rand(), rand());
    rc = tt_out_close(&o, 0);
    setrlimit(RLIMIT_FSIZE, &old);
    cr_assert_eq(rc, TT_EIO);
    cr_assert(strstr(tt_error_last()->source, name) != NULL, "%s", tt_error_last()->source);
    cr_assert(strstr(tt_error_last()->message, strerror(EFBIG)) != NULL, "%s",
              tt_error_last()->message);
    assert_old(path);
    cr_assert_not(exists(tmp), "no temporary left");
}

Test(out, a_failed_write_leaves_the_target_and_no_temporary)
{
    fail_midway("full.json", TT_OUT_GZ_BY_NAME);
}

Test(out, a_failed_gzip_write_too)
{
    fail_midway("full.json.gz", TT_OUT_GZ_BY_NAME);
}

Test(out, a_cancel_leaves_the_target_and_no_temporary)
{
    char path[128], tmp[140];
    tt_out o;
    snprintf(path, sizeof(path), "%s/cancel.json.gz", dir);
    tmp_of(tmp, sizeof(tmp), path);
    write_old(path);
    cr_assert_eq(tt_out_open(&o, path, TT_OUT_GZ_BY_NAME), 0);
    tt_out_puts(&o, "{\"half\": ");
    cr_assert_eq(tt_out_close(&o, TT_ECANCELED), TT_ECANCELED, "the caller's code back");
    assert_old(path);
    cr_assert_not(exists(tmp));
}

/* a second writer of the same output is refused while the first writes
 * (its temporary is not emptied under it); a stale temporary is reused */
Test(out, a_second_writer_is_refused)
{
    char path[128], tmp[140];
    tt_out a, b;
    size_t n;
    char *got;
    snprintf(path, sizeof(path), "%s/two.json", dir);
    tmp_of(tmp, sizeof(tmp), path);
    write_old(tmp); /* stale, from a writer that died */
    cr_assert_eq(tt_out_open(&a, path, TT_OUT_PLAIN), 0);
    cr_assert_eq(tt_out_puts(&a, "first"), 0);
    cr_assert_eq(tt_out__hand_on(&a), 0);
    cr_assert_eq(tt_out_open(&b, path, TT_OUT_PLAIN), TT_EIO);
    cr_assert(strstr(tt_error_last()->message, "another writer") != NULL, "%s",
              tt_error_last()->message);
    cr_assert_str_eq(tt_error_last()->source, path);
    cr_assert(exists(tmp), "the first writer's temporary is left alone");
    cr_assert_eq(tt_out_close(&a, 0), 0);
    got = slurp(path, &n);
    cr_assert_str_eq(got, "first", "the stale temporary was emptied, not appended to");
    free(got);
    cr_assert_eq(tt_out_open(&b, path, TT_OUT_PLAIN), 0, "free again once the first is done");
    cr_assert_eq(tt_out_close(&b, 0), 0);
}

/* a directory without write permission (root writes anywhere: then a
 * "directory" that is a file) */
Test(out, a_directory_that_cannot_be_written)
{
    char sub[96], path[128];
    int e = geteuid() == 0 ? ENOTDIR : EACCES;
    tt_out o;
    snprintf(sub, sizeof(sub), "%s/ro", dir);
    if (e == EACCES)
        cr_assert_eq(mkdir(sub, 0555), 0);
    else
        write_old(sub);
    snprintf(path, sizeof(path), "%s/x.json", sub);
    cr_assert_eq(tt_out_open(&o, path, 0), TT_EIO);
    cr_assert_str_eq(tt_error_last()->source, path);
    cr_assert(strstr(tt_error_last()->message, strerror(e)) != NULL, "%s",
              tt_error_last()->message);
    cr_assert_eq(tt__write_file_atomic(path, "x", 1), TT_EIO);
    cr_assert_not(exists(path));
}

Test(out, a_missing_directory)
{
    char path[128];
    tt_out o;
    snprintf(path, sizeof(path), "%s/no/such/x.json.gz", dir);
    cr_assert_eq(tt_out_open(&o, path, 0), TT_EIO);
    cr_assert(strstr(tt_error_last()->message, "cannot write") != NULL);
}

/* fd 1 pointed at path while fn runs */
static int with_stdout(const char *path, int (*fn)(void))
{
    int saved = dup(STDOUT_FILENO), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc;
    cr_assert(saved >= 0 && fd >= 0, "%s", path);
    fflush(stdout);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    rc = fn();
    dup2(saved, STDOUT_FILENO);
    close(saved);
    return rc;
}

static int write_dash(void)
{
    tt_out o;
    int rc;
    printf("stdio first, "); /* still in stdio's buffer: goes first */
    if ((rc = tt_out_open(&o, "-", TT_OUT_GZ_BY_NAME)) < 0)
        return rc;
    tt_out_puts(&o, "then the module");
    return tt_out_close(&o, 0);
}

Test(out, dash_is_standard_output)
{
    char path[128];
    size_t n;
    char *got;
    snprintf(path, sizeof(path), "%s/stdout.txt", dir);
    cr_assert_eq(with_stdout(path, write_dash), 0);
    got = slurp(path, &n);
    cr_assert_str_eq(got, "stdio first, then the module");
    free(got);
}

static int write_dash_big(void)
{
    tt_out o;
    size_t i;
    int rc = tt_out_open(&o, "-", TT_OUT_GZ_BY_NAME);
    for (i = 0; rc == 0 && i < 200000; i++)
        rc = tt_out_printf(&o, "%zu,", i);
    return tt_out_close(&o, rc);
}

Test(out, a_full_standard_output_is_an_error)
{
    cr_assert_eq(with_stdout("/dev/full", write_dash_big), TT_EIO);
    cr_assert_str_eq(tt_error_last()->source, "standard output");
    cr_assert(strstr(tt_error_last()->message, strerror(ENOSPC)) != NULL, "%s",
              tt_error_last()->message);
}

Test(out, a_device_is_written_in_place)
{
    tt_out o;
    cr_assert_eq(tt_out_open(&o, "/dev/null", TT_OUT_GZIP), 0);
    tt_out_puts(&o, "gone");
    cr_assert_eq(tt_out_close(&o, 0), 0);
    cr_assert_eq(tt_out_open(&o, "/dev/full", 0), 0);
    tt_out_puts(&o, "no room");
    cr_assert_eq(tt_out_close(&o, 0), TT_EIO, "found at close");
    cr_assert(strstr(tt_error_last()->message, strerror(ENOSPC)) != NULL);
}

Test(out, write_file_atomic_replaces_whole_or_not_at_all)
{
    char path[128], tmp[140];
    struct rlimit old, lim = { 4096, 4096 };
    char *big = calloc(1, 100000), *got;
    size_t n;
    snprintf(path, sizeof(path), "%s/page.html", dir);
    tmp_of(tmp, sizeof(tmp), path);
    write_old(path);
    cr_assert_eq(tt__write_file_atomic(path, "<p>new</p>\n", 11), 0);
    got = slurp(path, &n);
    cr_assert_str_eq(got, "<p>new</p>\n");
    free(got);
    write_old(path);
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    memset(big, 'x', 99999);
    cr_assert_eq(tt__write_file_atomic(path, big, 99999), TT_EIO);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_old(path);
    cr_assert_not(exists(tmp));
    free(big);
}
