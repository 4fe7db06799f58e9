/*
 * tests/unit/test_summary.c - the summary container (formats/sumfile.h):
 * loading (plain and gzip; every bad file a clear error naming it) and
 * merging (associative, commutative and idempotent byte for byte; the same
 * path with two contents refused, naming both inputs).
 */
#include "common/compat.h"
#include "formats/sumfile.h"
#include "tracetool/summary.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

TestSuite(summary, .timeout = 120);

static char dir[64];

static void mkdir_tmp(void)
{
    strcpy(dir, "/tmp/tt_sum_test.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* dir/name, in a static slot of four */
static const char *at(const char *name)
{
    static char slot[4][256];
    static int k;
    char *p = slot[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
}

static void put_gz(const char *name, const char *text)
{
    gzFile g = gzopen(at(name), "wb");
    cr_assert_not_null(g);
    cr_assert_eq(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
    cr_assert_eq(gzclose(g), Z_OK);
}

/* the whole file (decompressed when gzip), malloc'd */
static char *slurp(const char *path)
{
    gzFile g = gzopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    int got;
    cr_assert_not_null(g);
    while ((got = gzread(g, b + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)got;
        if (cap - n < 1024)
            b = realloc(b, cap *= 2);
    }
    gzclose(g);
    b[n] = '\0';
    return b;
}

#define HEAD "{\"schema\": \"tracetool.summary/1\", \"tool_version\": \"0.0.9\", \"traces\": ["

/* a trace with two sections (opaque to the container) */
#define TR(path, hash, rank, v)                                                               \
    "{\"path\": \"" path "\", \"content_hash\": \"" hash "\", \"rank\": " rank               \
    ", \"info\": {\"events\": " v ", \"x\": [1, 2.50, null]}, \"kernels\": {\"k\": \"" v "\"}}"

static void three(void)
{
    put("a.json", HEAD TR("r/rank2.json", "h2", "2", "20") ", " TR("r/rank0.json", "h0", "0", "1") "]}");
    put_gz("b.json.gz", HEAD TR("r/rank1.json", "h1", "1", "10") "]}");
    put("c.json", HEAD TR("r/rank3.json", "h3", "null", "30") ", " TR("r/rank0.json", "h0", "0", "1") "]}");
}

static void merge2(const char *a, const char *b, const char *out)
{
    const char *in[2] = { a, b };
    int rc = tt_summary_merge(in, 2, out);
    cr_assert_eq(rc, 0, "merge %s %s: %s", a, b, tt_error_last()->message);
}

Test(summary, load_sorted_numbered)
{
    tt_summary *s;
    mkdir_tmp();
    three();
    cr_assert_eq(tt_is_summary_file(at("a.json")), 1);
    cr_assert_eq(tt_is_summary_file(at("b.json.gz")), 1);
    cr_assert_eq(tt_summary_load(at("a.json"), &s), 0, "%s", tt_error_last()->message);
    cr_assert_eq(tt_summary_ntraces(s), 2);
    cr_assert_str_eq(s->traces[0].path, "r/rank0.json");
    cr_assert_eq(s->traces[0].id, 1);
    cr_assert_str_eq(s->traces[1].path, "r/rank2.json");
    cr_assert_eq(s->traces[1].id, 2);
    cr_assert_eq(s->traces[1].rank, 2);
    /* a section kept as its text, minified */
    cr_assert_str_eq(s->traces[1].sec[TT__SEC_INFO], "{\"events\":20,\"x\":[1,2.50,null]}");
    cr_assert_null(s->traces[1].sec[TT__SEC_AVERAGES]);
    cr_assert_eq(tt__sum_missing(s, &s->traces[1], TT__SEC_AVERAGES), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "\"averages\""));
    cr_assert_eq(tt__sum_unsupported(s, "--steps"), TT_EUNSUPPORTED);
    cr_assert(strstr(tt_error_last()->message, "--steps"));
    tt_summary_free(s);
    tt_summary_free(NULL);
    rm_tmp();
}

Test(summary, merge_associative_commutative_idempotent)
{
    char *x, *y;
    tt_summary *s;
    mkdir_tmp();
    three();
    /* (a b) c == a (b c) */
    merge2(at("a.json"), at("b.json.gz"), at("ab.json"));
    merge2(at("ab.json"), at("c.json"), at("ab_c.json"));
    merge2(at("b.json.gz"), at("c.json"), at("bc.json"));
    merge2(at("a.json"), at("bc.json"), at("a_bc.json"));
    x = slurp(at("ab_c.json"));
    y = slurp(at("a_bc.json"));
    cr_assert_str_eq(x, y);
    free(y);
    /* c a b in one go, gzip */
    {
        const char *in[3] = { at("c.json"), at("a.json"), at("b.json.gz") };
        cr_assert_eq(tt_summary_merge(in, 3, at("cab.json.gz")), 0);
    }
    y = slurp(at("cab.json.gz"));
    cr_assert_str_eq(x, y);
    free(y);
    /* a b == b a */
    merge2(at("b.json.gz"), at("a.json"), at("ba.json"));
    y = slurp(at("ba.json"));
    free(x);
    x = slurp(at("ab.json"));
    cr_assert_str_eq(x, y);
    free(y);
    /* (a b) (a b) == a b, and a merged twice == once */
    merge2(at("ab.json"), at("ab.json"), at("abab.json"));
    y = slurp(at("abab.json"));
    cr_assert_str_eq(x, y);
    free(y);
    free(x);
    /* four traces, rank0 once */
    cr_assert_eq(tt_summary_load(at("ab_c.json"), &s), 0);
    cr_assert_eq(tt_summary_ntraces(s), 4);
    cr_assert_str_eq(s->traces[3].path, "r/rank3.json");
    cr_assert_eq(s->traces[3].have_rank, 0);
    tt_summary_free(s);
    rm_tmp();
}

Test(summary, merge_conflict_names_both)
{
    const char *in[2];
    mkdir_tmp();
    three();
    put("d.json", HEAD TR("r/rank0.json", "OTHER", "0", "5") "]}");
    in[0] = at("a.json");
    in[1] = at("d.json");
    cr_assert_eq(tt_summary_merge(in, 2, at("out.json")), TT_EINVALID);
    cr_assert(strstr(tt_error_last()->message, "a.json") || strstr(tt_error_last()->source, "a.json"));
    cr_assert(strstr(tt_error_last()->message, "d.json") || strstr(tt_error_last()->source, "d.json"));
    cr_assert(strstr(tt_error_last()->message, "r/rank0.json"));
    cr_assert_neq(access(at("out.json"), F_OK), 0, "nothing written");
    rm_tmp();
}

/* load fails with code, naming the file */
static void refused(const char *name, int code, const char *words)
{
    tt_summary *s = (tt_summary *)1;
    int rc = tt_summary_load(at(name), &s);
    cr_assert_eq(rc, code, "%s: got %d (%s), want %d", name, rc, tt_error_last()->message, code);
    cr_assert_null(s);
    cr_assert(strstr(tt_error_last()->source, name), "%s: source '%s'", name,
              tt_error_last()->source);
    if (words)
        cr_assert(strstr(tt_error_last()->message, words), "%s: message '%s'", name,
                  tt_error_last()->message);
}

Test(summary, bad_files)
{
    char *full;
    mkdir_tmp();
    three();
    put("empty.json", "");
    put("notjson.json", "this is not JSON");
    put("schema.json", "{\"schema\": \"tracetool.diff/1\", \"traces\": []}");
    put("first.json", "{\"traces\": [], \"schema\": \"tracetool.summary/1\"}");
    put("newer.json", "{\"schema\": \"tracetool.summary/2\", \"traces\": []}");
    put("traces.json", "{\"schema\": \"tracetool.summary/1\", \"traces\": 5}");
    put("rank.json", HEAD "{\"path\": \"p\", \"content_hash\": \"h\", \"rank\": \"x\"}]}");
    put("path.json", HEAD "{\"path\": 3, \"content_hash\": \"h\", \"rank\": 0}]}");
    put("nopath.json", HEAD "{\"content_hash\": \"h\", \"rank\": 0}]}");
    put("dup.json", HEAD TR("p", "h", "0", "1") ", " TR("p", "h", "0", "1") "]}");
    put("cut.json", HEAD TR("p", "h", "0", "1"));
    put("array.json", "[1, 2]");
    /* a gzip stream cut in half */
    full = slurp(at("a.json"));
    put_gz("trunc.json.gz", full);
    free(full);
    cr_assert_eq(truncate(at("trunc.json.gz"), 60), 0);
    refused("empty.json", TT_EEMPTY, NULL);
    refused("notjson.json", TT_EINVALID, NULL);
    refused("schema.json", TT_EUNSUPPORTED, "not a tracetool summary");
    refused("first.json", TT_EUNSUPPORTED, "\"schema\"");
    refused("newer.json", TT_EUNSUPPORTED, "newer");
    refused("traces.json", TT_EINVALID, "\"traces\"");
    refused("rank.json", TT_EINVALID, "\"rank\"");
    refused("path.json", TT_EINVALID, "\"path\"");
    refused("nopath.json", TT_EINVALID, "\"path\"");
    refused("dup.json", TT_EINVALID, "duplicate");
    refused("cut.json", TT_EINVALID, NULL);
    refused("array.json", TT_EINVALID, "object");
    refused("trunc.json.gz", TT_ETRUNCATED, NULL);
    refused("missing.json", TT_ENOTFOUND, "No such file");
    cr_assert_eq(tt_is_summary_file(at("notjson.json")), 0);
    cr_assert_eq(tt_is_summary_file(at("schema.json")), 0);
    cr_assert_eq(tt_is_summary_file(at("missing.json")), 0);
    cr_assert_eq(tt_is_summary_file(dir), 0);
    cr_assert_eq(tt_is_summary_file("-"), 0);
    rm_tmp();
}
