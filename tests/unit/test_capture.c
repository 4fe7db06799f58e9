/*
 * tests/unit/test_capture.c - the capture library's parts on their results:
 * the output file (escaping, gzip, .tmp and rename, failures), the records
 * a window holds, and what the writers make of them, read back with
 * tracetool's own readers (tt_read_trace) and zlib.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/buf.h"
#include "tracetool/formats.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static void setup(void)
{
    strcpy(dir, "/tmp/tt_cap_unit_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(capture, .init = setup, .fini = teardown);

static char *slurp(const char *path, size_t *n)
{
    gzFile f = gzopen(path, "rb");
    tt_buf b = TT_BUF_INIT;
    char tmp[4096];
    int k;
    cr_assert_not_null(f, "%s", path);
    while ((k = gzread(f, tmp, sizeof(tmp))) > 0)
        tt_buf_add(&b, tmp, (size_t)k);
    cr_assert_eq(gzclose(f), Z_OK);
    *n = b.len;
    return b.buf;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

Test(capture, json_strings_are_escaped_and_made_utf8)
{
    char path[128], tmp[140];
    static const char in[] = "q\"b\\s\x01\n\x7f ok\xc3\xa9 bad\xff\xe2\x82 end\xf0\x9f\x98\x80";
    /* U+FFFD for each byte that is not UTF-8, then common/buf.c's escaping */
    static const char want[] = "\"q\\\"b\\\\s\\u0001\\n\x7f ok\xc3\xa9 bad\xef\xbf\xbd\xef\xbf\xbd"
                               "\xef\xbf\xbd end\xf0\x9f\x98\x80\"";
    struct out *o;
    size_t n;
    char *got;
    snprintf(path, sizeof(path), "%s/s.json", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    cr_assert_not_null(o = tt_cap__out_open(path));
    cr_assert(exists(tmp), "written to path.tmp first");
    cr_assert_not(exists(path));
    tt_cap__out_json_string(o, in, sizeof(in) - 1);
    cr_assert_eq(tt_cap__out_close(o, 1), 0);
    cr_assert(exists(path) && !exists(tmp), "renamed when complete");
    got = slurp(path, &n);
    cr_assert_str_eq(got, want);
    free(got);
}

Test(capture, gzip_by_name_and_failures_leave_nothing)
{
    char path[128], tmp[140];
    struct out *o;
    size_t n, i;
    char *got;
    unsigned char magic[2];
    FILE *f;
    snprintf(path, sizeof(path), "%s/big.json.gz", dir);
    cr_assert_not_null(o = tt_cap__out_open(path));
    for (i = 0; i < 100000; i++) /* more than the write buffer */
        tt_cap__out_printf(o, "%zu,", i);
    cr_assert_eq(tt_cap__out_close(o, 1), 0);
    f = fopen(path, "rb");
    cr_assert_eq(fread(magic, 1, 2, f), 2);
    fclose(f);
    cr_assert(magic[0] == 0x1f && magic[1] == 0x8b, "gzip");
    got = slurp(path, &n);
    cr_assert(n > 500000 && !strncmp(got, "0,1,2,", 6) && !strcmp(got + n - 6, "99999,"));
    free(got);

    /* a directory that does not exist: an error, nothing written */
    snprintf(path, sizeof(path), "%s/no/such/dir/t.json", dir);
    cr_assert_null(tt_cap__out_open(path));
    cr_assert(strstr(tt_cap_last_error(), "cannot write") != NULL, "%s", tt_cap_last_error());
    /* a write given up (ok = 0): the .tmp is removed, no file */
    snprintf(path, sizeof(path), "%s/given_up.json", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    cr_assert_not_null(o = tt_cap__out_open(path));
    tt_cap__out_printf(o, "{\"half\": ");
    cr_assert_lt(tt_cap__out_close(o, 0), 0);
    cr_assert(!exists(path) && !exists(tmp));
    /* a full disk: past a file-size limit every write fails (EFBIG) */
    {
        struct rlimit old, lim = { 65536, 65536 };
        cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, SIG_IGN);
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
        snprintf(path, sizeof(path), "%s/full.json", dir);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        cr_assert_not_null(o = tt_cap__out_open(path));
        for (i = 0; i < 20000; i++)
            tt_cap__out_printf(o, "0123456789");
        cr_assert_lt(tt_cap__out_close(o, 1), 0);
        setrlimit(RLIMIT_FSIZE, &old);
        cr_assert(!exists(path) && !exists(tmp), "nothing half-written is left");
        cr_assert(strstr(tt_cap_last_error(), "too large") != NULL, "%s", tt_cap_last_error());
    }
}

/* ---- a window's records, through the public API ---- */

static size_t got_scopes;
static char got_path[256];

static void keep(const tt_cap_trace *t, void *user)
{
    (void)user;
    got_scopes = tt_cap_trace_scopes(t);
    cr_assert_eq(tt_cap_write_trace(t, got_path, NULL), TT_CAP_OK, "%s", tt_cap_last_error());
}

struct seen {
    int ops, annotations, memory, nested;
    int64_t rf_max;
};

static int on_event(void *ctx, const tt_event *ev)
{
    struct seen *s = ctx;
    if (ev->cat && !strcmp(ev->cat, "cpu_op"))
        s->ops++;
    else if (ev->cat && !strcmp(ev->cat, "user_annotation"))
        s->annotations++;
    else if (ev->name && !strcmp(ev->name, "[memory]"))
        s->memory++;
    if (ev->have & TT_A_RF_ID && ev->rf_id > s->rf_max)
        s->rf_max = ev->rf_id;
    return 0;
}

Test(capture, a_window_read_back_by_tracetool)
{
    static const tt_cap_srcloc outer = { "outer", __FILE__, __LINE__, TT_CAP_USER_ANNOTATION };
    static const tt_cap_srcloc inner = { "aten::mul", __FILE__, __LINE__, TT_CAP_CPU_OP };
    tt_cap_config c;
    tt_trace_sink sink;
    tt_read_options ro = TT_READ_OPTIONS_INIT;
    tt_read_stats rs;
    struct seen s;
    int i;
    memset(&s, 0, sizeof(s));
    memset(&sink, 0, sizeof(sink));
    snprintf(got_path, sizeof(got_path), "%s/w.json.gz", dir);
    tt_cap_config_default(&c);
    c.on_trace_ready = keep;
    cr_assert_eq(tt_cap_start(&c), TT_CAP_OK, "%s", tt_cap_last_error());
    for (i = 0; i < 100; i++) {
        tt_cap_scope a = tt_cap_scope_begin(&outer);
        tt_cap_scope b = tt_cap_scope_begin(&inner);
        tt_cap_mem_event(&b, 16, 16, 64, TT_CAP_DEV_CPU, 0);
        tt_cap_scope_end(&b);
        tt_cap_scope_end(&a);
    }
    cr_assert_eq(tt_cap_stop(), TT_CAP_OK);
    cr_assert_eq(got_scopes, 200);
    sink.ctx = &s;
    sink.on_event = on_event;
    cr_assert_eq(tt_read_trace(got_path, &sink, &ro, &rs), 0, "%s", tt_error_last()->message);
    cr_assert_eq(rs.truncated, 0);
    cr_assert_eq(s.ops, 100);
    cr_assert_eq(s.annotations, 100);
    cr_assert_eq(s.memory, 100);
    cr_assert_gt(s.rf_max, 0);
    /* no profile: scopes cost nothing and record nothing */
    {
        tt_cap_scope x = tt_cap_scope_begin(&inner);
        cr_assert_eq(x.rf_id, 0);
        tt_cap_scope_end(&x);
    }
    cr_assert_eq(tt_cap_step(), TT_CAP_EOFF);
}
