/*
 * compare/diff/diff_save.c - a side of `tracetool diff` as a small JSON file
 * (--save-summary), and read back as an input: CI keeps kilobytes of
 * per-step samples as its baseline instead of gigabytes of traces.
 *
 *   {"schema": "tracetool.diff-summary/1", "label": ..., "gpu": ...,
 *    "world": N, "has_gpu": 0|1, "has_mem": 0|1, "traces": N, "runs": N,
 *    "steps": [N, ...],
 *    "metrics": {"cpu_step_time": [ns or null per sample], ...},
 *    "keys": [{"kind": "op", "key": ..., "count": [...], "ns": [...],
 *              "dev": [...]}, ...]}
 *
 * A reader takes the keys in any order and layout (re-indented, sorted);
 * the schema comes first only for the reader's convenience.
 */
#include "common/compat.h"
#include "compare/diff/diff_state.h"
#include "compare/diff/diff_sumsec.h"
#include "common/arena.h"
#include "common/buf.h"
#include "formats/json.h"
#include "formats/source.h"
#include "report/json.h"
#include "report/out.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#define SCHEMA "tracetool.diff-summary/1"
#define MAX_SUMMARY (256u << 20)

static const char *const mname[M_COUNT] = {
    "cpu_step_time", "device_step_time", "gpu_busy", "peak_allocated", "peak_reserved",
    "kernels_per_step", "memcpy_per_step", "memset_per_step",
};

/* the samples as an array: "%.17g" (an integer whole; read back exactly),
 * a missing one null */
static void add_arr(tt_jw *w, const char *k, const double *v, size_t n)
{
    size_t i;
    tt_jw_karr(w, k);
    for (i = 0; i < n; i++)
        tt_jw_num(w, v[i], -1);
    tt_jw_end(w);
}

/* qsort_r: key indices by kind, then key (bytes) */
static int cmp_key_idx(const void *x, const void *y, void *ctx)
{
    const struct dkey *keys = ctx, *a = &keys[*(const size_t *)x], *b = &keys[*(const size_t *)y];
    int c = strcmp(a->kind, b->kind);
    return c ? c : strcmp(a->key, b->key);
}

/*
 * The keys are written sorted by kind and key: a summary is the same file
 * whichever way its traces were read (a file's rows, a database's), and two
 * summaries kept as CI baselines differ line by line only where they differ.
 */
static void nl(tt_jw *w, int lines)
{
    if (lines)
        tt_jw_nl(w, 0);
}

/* the side's members after "schema" (ord: the keys' order, NULL as made;
 * lines: a line break before each array) */
static void side_body(tt_jw *w, const tt_diff_side *s, const size_t *ord, int lines)
{
    size_t i, m;
    tt_jw_kstr(w, "label", s->label);
    tt_jw_kstr(w, "gpu", s->gpu);
    tt_jw_kint(w, "world", s->world);
    tt_jw_kint(w, "has_gpu", s->has_gpu);
    tt_jw_kint(w, "has_mem", s->has_mem);
    tt_jw_kuint(w, "traces", s->ntraces);
    tt_jw_kuint(w, "runs", s->nruns);
    nl(w, lines);
    tt_jw_karr(w, "steps");
    for (i = 0; i < s->n; i++)
        tt_jw_int(w, s->step[i]);
    tt_jw_end(w);
    nl(w, lines);
    tt_jw_karr(w, "ranks");
    for (i = 0; i < s->n; i++)
        tt_jw_int(w, s->rank[i]);
    tt_jw_end(w);
    nl(w, lines);
    tt_jw_karr(w, "sample_runs");
    for (i = 0; i < s->n; i++)
        tt_jw_int(w, s->run[i]);
    tt_jw_end(w);
    nl(w, lines);
    tt_jw_kobj(w, "metrics"); /* a metric a line */
    for (m = 0; m < M_COUNT; m++) {
        nl(w, lines);
        add_arr(w, mname[m], s->m[m], s->n);
    }
    tt_jw_end(w);
    nl(w, lines);
    tt_jw_karr(w, "keys"); /* a key a line */
    for (i = 0; i < s->nkeys; i++) {
        const struct dkey *k = &s->keys[ord ? ord[i] : i];
        nl(w, lines);
        tt_jw_obj(w);
        tt_jw_kstr(w, "kind", k->kind);
        tt_jw_kstr(w, "key", k->key);
        add_arr(w, "count", k->count, s->n);
        add_arr(w, "ns", k->ns, s->n);
        add_arr(w, "dev", k->dev, s->n);
        tt_jw_end(w);
    }
    nl(w, lines);
    tt_jw_end(w);
}

/*
 * The keys are written sorted by kind and key: a summary is the same file
 * whichever way its traces were read (a file's rows, a database's), and two
 * summaries kept as CI baselines differ line by line only where they differ.
 */
int tt_diff_side_save(const tt_diff_side *s, const char *path)
{
    tt_out o; /* report/out.h: written beside path, renamed when complete */
    tt_jw w;
    size_t i, *ord = malloc((s->nkeys ? s->nkeys : 1) * sizeof(*ord));
    int rc;
    if (!ord)
        return tt__oom();
    if ((rc = tt_out_open(&o, path, TT_OUT_GZ_BY_NAME)) < 0) {
        free(ord);
        return rc;
    }
    for (i = 0; i < s->nkeys; i++)
        ord[i] = i;
    TT_QSORT_R(ord, s->nkeys, sizeof(*ord), cmp_key_idx, s->keys);
    tt_jw_init_out(&w, &o, TT_JW_COMPACT | TT_JW_LINE); /* handed on as it fills */
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "schema", SCHEMA);
    side_body(&w, s, ord, 1);
    tt_jw_end(&w);
    rc = tt_jw_finish(&w);
    free(ord);
    return tt_out_close(&o, rc);
}

void tt__diff_side_json(tt_jw *w, const struct tt_diff_side *s, int64_t rank)
{
    tt_jw_obj(w);
    tt_jw_kint(w, "rank", rank);
    side_body(w, s, NULL, 0);
    tt_jw_end(w);
}

/* ---- reading one back ---- */

/*
 * A summary is a JSON object whose "schema" names a tracetool document,
 * found by reading the top-level keys (any order, any layout): a trace's
 * "traceEvents" (or an ET's "nodes") ends the search before its events are
 * read. Only a regular file is looked at: a pipe or a FIFO can be read once
 * only, and the trace reader that follows must get all of it.
 */
int tt__diff_is_summary(const char *path)
{
    struct stat sb;
    tt_source *src;
    tt_jstream js;
    int n, found = 0;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || tt_source_open(&src, path) < 0)
        return 0;
    if (tt_js_init(&js, src) < 0) {
        tt_source_free(src);
        return 0;
    }
    if (tt_js_peek(&js) == '{') {
        tt_js_advance(&js, 1);
        for (n = 0; n < 64; n++) {
            const char *v;
            size_t len;
            int c = tt_js_peek(&js), schema;
            if (c == ',' && n) {
                tt_js_advance(&js, 1);
                c = tt_js_peek(&js);
            }
            if (c != '"' || tt_js_scan_value(&js, &v, &len) < 0)
                break;
            schema = len == 8 && !memcmp(v, "\"schema\"", 8);
            if ((len == 13 && !memcmp(v, "\"traceEvents\"", 13)) ||
                (len == 7 && !memcmp(v, "\"nodes\"", 7)))
                break;
            tt_js_advance(&js, len);
            if (tt_js_peek(&js) != ':')
                break;
            tt_js_advance(&js, 1);
            if (tt_js_scan_value(&js, &v, &len) < 0)
                break;
            if (schema) {
                found = len > 11 && !memcmp(v, "\"tracetool.", 11);
                break;
            }
            tt_js_advance(&js, len);
        }
    }
    tt_js_release(&js);
    tt_source_free(src);
    return found;
}

struct rd {
    tt_jp jp;
    tt_arena a;
    const char *path;
    const char *data;
    size_t len;
    int section; /* one trace's diff section of a tracetool.summary/1 */
    const struct tt__renames *ren; /* applied to the keys read (NULL: none) */
    int64_t rank; /* a section's "rank" */
};

static int bad(struct rd *r, const char *what)
{
    return tt_error_set_at(TT_EINVALID, r->path, tt_jp_offset(&r->jp), "not a diff %s: %s",
                           r->section ? "section" : "summary", what);
}

/* an array of numbers (null: NaN) into v[0..n) (exactly n of them); with
 * nonneg, a negative one is refused */
static int read_arr(struct rd *r, double *v, size_t n, int nonneg, const char *what)
{
    int rc;
    size_t k = 0;
    char msg[96];
    if (tt_jp_peek(&r->jp) != TT_JT_ARRAY)
        return bad(r, "an array of samples expected");
    if ((rc = tt_jp_array_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_array_next(&r->jp)) == 1) {
        tt_jnum num;
        enum tt_jtype t = tt_jp_peek(&r->jp);
        double x = NAN;
        if (t == TT_JT_NULL) {
            if ((rc = tt_jp_literal(&r->jp, &t)) < 0)
                return rc;
        } else if (t == TT_JT_NUMBER) {
            char buf[64];
            int64_t at = tt_jp_offset(&r->jp);
            if ((rc = tt_jp_number(&r->jp, &num)) < 0)
                return rc;
            if (num.len >= sizeof(buf))
                return bad(r, "a number too long");
            memcpy(buf, num.text, num.len);
            buf[num.len] = '\0';
            x = strtod(buf, NULL);
            if (nonneg && x < 0) {
                snprintf(msg, sizeof(msg), "not a diff summary: a negative %s", what);
                return tt_error_set_at(TT_EINVALID, r->path, at, "%s", msg);
            }
        } else {
            return bad(r, "a sample that is not a number");
        }
        if (k >= n)
            return bad(r, "more samples than steps");
        v[k++] = x;
    }
    if (rc < 0)
        return rc;
    return k != n ? bad(r, "fewer samples than steps") : 0;
}

/* a string value, malloc'd whole */
static int read_str(struct rd *r, char **out)
{
    const char *s;
    size_t len;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_STRING)
        return bad(r, "a string expected");
    if ((rc = tt_jp_string(&r->jp, &r->a, &s, &len)) < 0)
        return rc;
    free(*out);
    if (!(*out = malloc(len + 1)))
        return tt__oom();
    memcpy(*out, s, len);
    (*out)[len] = '\0';
    return 0;
}

/* a string value into a fixed field (the label and the GPU: shown, never keys) */
static int read_field(struct rd *r, char *out, size_t cap)
{
    char *s = NULL;
    int rc = read_str(r, &s);
    if (rc == 0)
        snprintf(out, cap, "%s", s);
    free(s);
    return rc;
}

static int read_int(struct rd *r, int64_t *v)
{
    tt_jnum num;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_NUMBER)
        return bad(r, "a number expected");
    if ((rc = tt_jp_number(&r->jp, &num)) < 0)
        return rc;
    if (!num.fits)
        return bad(r, "an integer expected");
    *v = num.i;
    return 0;
}

#define IS(k, kl, lit) ((kl) == sizeof(lit) - 1 && !memcmp((k), (lit), (kl)))

/* one {"kind", "key", "count", "ns", "dev"} of "keys", members in any order */
static int read_key(struct rd *r, struct tt_diff_side *s, double *v[3])
{
    static const char *const arr[3] = { "count", "ns", "dev" };
    char *kind = NULL, *key = NULL, *renamed = NULL;
    unsigned char have[3] = { 0, 0, 0 };
    const char *k;
    size_t kl, i, a;
    long idx;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_OBJECT)
        return bad(r, "a key object expected");
    if ((rc = tt_jp_object_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&r->jp, &r->a, &k, &kl)) == 1) {
        for (a = 0; a < 3 && !(strlen(arr[a]) == kl && !memcmp(k, arr[a], kl)); a++)
            ;
        if (IS(k, kl, "kind"))
            rc = read_str(r, &kind);
        else if (IS(k, kl, "key"))
            rc = read_str(r, &key);
        else if (a < 3 && (have[a] = 1))
            rc = read_arr(r, v[a], s->n, a == 0, "call count");
        else
            rc = tt_jp_skip(&r->jp);
        if (rc < 0)
            break;
    }
    if (rc == 0 && (!kind || !key))
        rc = bad(r, "a key without its kind or name");
    if (rc == 0 && r->ren && r->ren->n && (rc = tt__renames_apply(r->ren, key, &renamed)) == 0) {
        free(key);
        key = renamed; /* keys renamed alike add up, as when the trace was read */
    }
    if (rc == 0 && (idx = tt__diff_key(s, kind, key)) < 0)
        rc = tt__oom();
    for (a = 0; rc == 0 && a < 3; a++) {
        double *dst = a == 0 ? s->keys[idx].count : a == 1 ? s->keys[idx].ns : s->keys[idx].dev;
        for (i = 0; have[a] && i < s->n; i++) /* absent samples are zeros */
            dst[i] += isnan(v[a][i]) ? 0 : v[a][i];
    }
    free(kind);
    free(key);
    return rc;
}

static int read_keys(struct rd *r, struct tt_diff_side *s)
{
    double *v[3];
    size_t a;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_ARRAY)
        return bad(r, "an array of keys expected");
    for (a = 0; a < 3; a++)
        v[a] = malloc((s->n ? s->n : 1) * sizeof(double));
    if (!v[0] || !v[1] || !v[2])
        rc = tt__oom();
    else if ((rc = tt_jp_array_begin(&r->jp)) == 0)
        while ((rc = tt_jp_array_next(&r->jp)) == 1 && (rc = read_key(r, s, v)) == 0)
            ;
    for (a = 0; a < 3; a++)
        free(v[a]);
    return rc;
}

/* what a tracetool document that is not a summary this version reads is */
static int not_ours(struct rd *r, const char *schema)
{
    if (!strncmp(schema, "tracetool.diff-summary/", 23))
        return tt_error_set_at(TT_EUNSUPPORTED, r->path, -1,
                               "unsupported summary schema %.64s (this tracetool reads %s)",
                               schema + 23, SCHEMA);
    if (!strncmp(schema, "tracetool.diff/", 15))
        return tt_error_set_at(TT_EUNSUPPORTED, r->path, -1,
                               "a diff report (%.64s), not an input: a saved summary"
                               " (--save-summary) is", schema);
    return tt_error_set_at(TT_EUNSUPPORTED, r->path, -1,
                           "a %.64s document, not a trace or a diff summary", schema);
}

/* the first pass: the schema, then the steps (the samples every array
 * holds one value for), wherever they are */
static int read_head(struct rd *r, struct tt_diff_side *s)
{
    const char *k;
    size_t kl;
    int rc, steps = 0;
    char *schema = NULL;
    int64_t v;
    if ((rc = tt_jp_object_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&r->jp, &r->a, &k, &kl)) == 1) {
        if (IS(k, kl, "schema")) {
            rc = read_str(r, &schema);
        } else if (IS(k, kl, "steps") && !steps) {
            steps = 1;
            if (tt_jp_peek(&r->jp) != TT_JT_ARRAY)
                rc = bad(r, "an array of steps expected");
            else if ((rc = tt_jp_array_begin(&r->jp)) == 0)
                while ((rc = tt_jp_array_next(&r->jp)) == 1 && (rc = read_int(r, &v)) == 0)
                    if (tt__diff_add_sample(s, v) < 0)
                        rc = tt__oom();
        } else {
            rc = tt_jp_skip(&r->jp);
        }
        if (rc < 0)
            break;
    }
    if (rc == 0 && !schema && !r->section)
        rc = bad(r, "no schema");
    else if (rc == 0 && !r->section && strcmp(schema, SCHEMA))
        rc = not_ours(r, schema);
    else if (rc == 0 && !steps)
        rc = bad(r, "no steps");
    free(schema);
    return rc < 0 ? rc : tt_jp_finish(&r->jp);
}

/* metrics that are times or counts: never negative */
static int nonneg_metric(size_t m)
{
    return m == M_CPU_STEP || m == M_DEV_STEP || m == M_BUSY || m >= M_NKERNEL;
}

static int read_metrics(struct rd *r, struct tt_diff_side *s)
{
    const char *mk;
    size_t ml, m;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_OBJECT)
        return bad(r, "an object of metrics expected");
    if ((rc = tt_jp_object_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&r->jp, &r->a, &mk, &ml)) == 1) {
        for (m = 0; m < M_COUNT && !(strlen(mname[m]) == ml && !memcmp(mname[m], mk, ml)); m++)
            ;
        rc = m < M_COUNT ? read_arr(r, s->m[m], s->n, nonneg_metric(m),
                                    m < M_PEAK_ALLOC ? "step time" : "count")
                         : tt_jp_skip(&r->jp);
        if (rc < 0)
            return rc;
    }
    return rc;
}

/* the second pass: everything else */
static int read_top(struct rd *r, struct tt_diff_side *s)
{
    const char *k;
    size_t kl, nr = 0;
    int rc;
    int64_t v;
    if ((rc = tt_jp_object_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&r->jp, &r->a, &k, &kl)) == 1) {
        if (IS(k, kl, "label")) {
            rc = read_field(r, s->label, sizeof(s->label));
        } else if (IS(k, kl, "gpu")) {
            rc = read_field(r, s->gpu, sizeof(s->gpu));
        } else if (IS(k, kl, "rank") && r->section && (rc = read_int(r, &v)) == 0) {
            r->rank = v;
        } else if (IS(k, kl, "world") && (rc = read_int(r, &v)) == 0) {
            s->world = v;
        } else if (IS(k, kl, "has_gpu") && (rc = read_int(r, &v)) == 0) {
            s->has_gpu = v != 0;
        } else if (IS(k, kl, "has_mem") && (rc = read_int(r, &v)) == 0) {
            s->has_mem = v != 0;
        } else if (IS(k, kl, "traces") && (rc = read_int(r, &v)) == 0) {
            s->ntraces = (size_t)(v > 0 ? v : 0);
        } else if (IS(k, kl, "runs") && (rc = read_int(r, &v)) == 0) {
            s->nruns = (size_t)(v > 0 ? v : 0);
        } else if (IS(k, kl, "ranks")) {
            if (tt_jp_peek(&r->jp) != TT_JT_ARRAY)
                return bad(r, "an array of ranks expected");
            if ((rc = tt_jp_array_begin(&r->jp)) < 0)
                return rc;
            while ((rc = tt_jp_array_next(&r->jp)) == 1 && (rc = read_int(r, &v)) == 0) {
                if (nr >= s->n)
                    return bad(r, "more ranks than steps");
                s->rank[nr++] = v;
            }
        } else if (IS(k, kl, "sample_runs")) {
            /* each sample's run (older summaries: all run 0) */
            size_t nu = 0;
            if (tt_jp_peek(&r->jp) != TT_JT_ARRAY)
                return bad(r, "an array of runs expected");
            if ((rc = tt_jp_array_begin(&r->jp)) < 0)
                return rc;
            while ((rc = tt_jp_array_next(&r->jp)) == 1 && (rc = read_int(r, &v)) == 0) {
                if (nu >= s->n)
                    return bad(r, "more sample runs than steps");
                if (v < 0 || v > INT32_MAX)
                    return bad(r, "a run index out of range");
                s->run[nu++] = (int32_t)v;
            }
        } else if (IS(k, kl, "metrics")) {
            rc = read_metrics(r, s);
        } else if (IS(k, kl, "keys")) {
            rc = read_keys(r, s);
        } else {
            rc = tt_jp_skip(&r->jp);
        }
        if (rc < 0)
            return rc;
    }
    return rc < 0 ? rc : tt_jp_finish(&r->jp);
}

#undef IS

/* the file, whole and decompressed (at most MAX_SUMMARY bytes) */
static int slurp(const char *path, char **data, size_t *len)
{
    tt_source *src;
    size_t cap = 0;
    int rc;
    *data = NULL;
    *len = 0;
    if ((rc = tt_source_open(&src, path)) < 0)
        return rc;
    for (;;) {
        ssize_t got;
        if (*len + 65536 > cap) {
            char *p;
            cap = cap ? cap * 2 : 65536;
            if (cap > MAX_SUMMARY + 65536 || !(p = realloc(*data, cap))) {
                rc = tt_error_set_at(TT_EINVALID, path, -1, "a diff summary over 256 MiB");
                break;
            }
            *data = p;
        }
        if ((got = tt_source_read(src, *data + *len, cap - *len)) <= 0) {
            rc = (int)got; /* 0 at the end; an error names the file */
            break;
        }
        *len += (size_t)got;
    }
    tt_source_free(src);
    if (rc < 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

/* the side in the object that init(ctx, jp) sets jp at (read twice) */
static int parse_side(struct rd *r, void (*init)(void *ctx, tt_jp *jp), void *ctx,
                      struct tt_diff_side **out)
{
    struct tt_diff_side *s;
    int rc;
    *out = NULL;
    if (!(s = calloc(1, sizeof(*s))))
        return tt__oom();
    s->world = -1;
    init(ctx, &r->jp);
    if (r->section && tt_jp_peek(&r->jp) != TT_JT_OBJECT)
        rc = bad(r, "an object expected");
    else
        rc = read_head(r, s);
    if (rc == 0) {
        init(ctx, &r->jp);
        rc = read_top(r, s);
    }
    tt_arena_release(&r->a);
    if (rc < 0) {
        if (!tt_error_last()->source[0])
            tt_error_set_source(r->path);
        tt_diff_side_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

struct whole {
    const char *path, *data;
    size_t len;
};

static void whole_init(void *ctx, tt_jp *jp)
{
    struct whole *f = ctx;
    tt_jp_init(jp, f->path, f->data, 0, f->data, f->len);
}

int tt__diff_summary_read(const char *path, struct tt_diff_side **out)
{
    struct rd r;
    struct whole f;
    char *data;
    size_t len;
    int rc;
    *out = NULL;
    if ((rc = slurp(path, &data, &len)) < 0)
        return rc;
    memset(&r, 0, sizeof(r));
    r.path = path;
    f.path = path;
    f.data = data;
    f.len = len;
    rc = parse_side(&r, whole_init, &f, out);
    free(data);
    return rc;
}

int tt__diff_section_read(void (*init)(void *ctx, tt_jp *jp), void *ctx, const char *path,
                          const struct tt__renames *ren, struct tt_diff_side **out, int64_t *rank)
{
    struct rd r;
    int rc;
    memset(&r, 0, sizeof(r));
    r.path = path;
    r.section = 1;
    r.ren = ren;
    r.rank = -1;
    rc = parse_side(&r, init, ctx, out);
    *rank = r.rank;
    return rc;
}
