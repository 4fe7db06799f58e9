/*
 * analyze/diff_save.c - a side of `tracetool diff` as a small JSON file
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
 * The schema key comes first, so the first bytes tell a summary from a trace.
 */
#include "common/compat.h"
#include "analyze/diff_state.h"
#include "common/arena.h"
#include "common/buf.h"
#include "formats/json.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#define SCHEMA "tracetool.diff-summary/1"
#define HEAD "{\"schema\":\"" SCHEMA "\","
#define MAX_SUMMARY (256u << 20)

static const char *const mname[M_COUNT] = {
    "cpu_step_time", "device_step_time", "gpu_busy", "peak_allocated", "peak_reserved",
    "kernels_per_step", "memcpy_per_step", "memset_per_step",
};

static void add_num(tt_buf *b, double v)
{
    char t[40];
    if (isnan(v) || isinf(v))
        tt_buf_add(b, "null", 4);
    else {
        snprintf(t, sizeof(t), v == floor(v) && fabs(v) < 9e15 ? "%.0f" : "%.17g", v);
        tt_buf_add(b, t, strlen(t));
    }
}

static void add_arr(tt_buf *b, const double *v, size_t n)
{
    size_t i;
    tt_buf_addch(b, '[');
    for (i = 0; i < n; i++) {
        if (i)
            tt_buf_addch(b, ',');
        add_num(b, v[i]);
    }
    tt_buf_addch(b, ']');
}

static void add_key(tt_buf *b, const char *k)
{
    tt_buf_add_json_string(b, k, strlen(k));
    tt_buf_addch(b, ':');
}

int tt_diff_side_save(const tt_diff_side *s, const char *path)
{
    tt_buf b;
    size_t i, m;
    char t[64];
    int rc;
    tt_buf_init(&b);
    tt_buf_add(&b, HEAD, strlen(HEAD));
    add_key(&b, "label");
    tt_buf_add_json_string(&b, s->label, strlen(s->label));
    tt_buf_addch(&b, ',');
    add_key(&b, "gpu");
    tt_buf_add_json_string(&b, s->gpu, strlen(s->gpu));
    snprintf(t, sizeof(t), ",\"world\":%lld,\"has_gpu\":%d,\"has_mem\":%d,", (long long)s->world,
             s->has_gpu, s->has_mem);
    tt_buf_add(&b, t, strlen(t));
    snprintf(t, sizeof(t), "\"traces\":%zu,\"runs\":%zu,\n\"steps\":[", s->ntraces, s->nruns);
    tt_buf_add(&b, t, strlen(t));
    for (i = 0; i < s->n; i++) {
        snprintf(t, sizeof(t), "%s%lld", i ? "," : "", (long long)s->step[i]);
        tt_buf_add(&b, t, strlen(t));
    }
    tt_buf_add(&b, "],\n\"ranks\":[", 12);
    for (i = 0; i < s->n; i++) {
        snprintf(t, sizeof(t), "%s%lld", i ? "," : "", (long long)s->rank[i]);
        tt_buf_add(&b, t, strlen(t));
    }
    tt_buf_add(&b, "],\n\"metrics\":{", 14);
    for (m = 0; m < M_COUNT; m++) {
        if (m)
            tt_buf_addch(&b, ',');
        tt_buf_add(&b, "\n", 1);
        add_key(&b, mname[m]);
        add_arr(&b, s->m[m], s->n);
    }
    tt_buf_add(&b, "},\n\"keys\":[", 11);
    for (i = 0; i < s->nkeys; i++) {
        const struct dkey *k = &s->keys[i];
        tt_buf_add(&b, i ? ",\n{" : "\n{", i ? 3 : 2);
        add_key(&b, "kind");
        tt_buf_add_json_string(&b, k->kind, strlen(k->kind));
        tt_buf_addch(&b, ',');
        add_key(&b, "key");
        tt_buf_add_json_string(&b, k->key, strlen(k->key));
        tt_buf_add(&b, ",\"count\":", 9);
        add_arr(&b, k->count, s->n);
        tt_buf_add(&b, ",\"ns\":", 6);
        add_arr(&b, k->ns, s->n);
        tt_buf_add(&b, ",\"dev\":", 7);
        add_arr(&b, k->dev, s->n);
        tt_buf_addch(&b, '}');
    }
    tt_buf_add(&b, "\n]}\n", 4);
    rc = b.oom ? tt_error_set(TT_ENOMEM, "out of memory") : tt__write_file_atomic(path, b.buf, b.len);
    tt_buf_release(&b);
    return rc;
}

/* ---- reading one back ---- */

int tt__diff_is_summary(const char *path)
{
    char head[64];
    size_t n;
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f)
        return 0;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return 0;
    }
    n = fread(head, 1, sizeof(head) - 1, f);
    fclose(f);
    head[n] = '\0';
    return strstr(head, "\"schema\":\"" SCHEMA "\"") != NULL;
}

struct rd {
    tt_jp jp;
    tt_arena a;
    const char *path;
};

static int bad(struct rd *r, const char *what)
{
    return tt_error_set_at(TT_EINVALID, r->path, tt_jp_offset(&r->jp), "not a diff summary: %s",
                           what);
}

/* an array of numbers (null: NaN) into v[0..n) */
static int read_arr(struct rd *r, double *v, size_t n, size_t *got)
{
    int rc;
    size_t k = 0;
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
            if ((rc = tt_jp_number(&r->jp, &num)) < 0)
                return rc;
            if (num.len >= sizeof(buf))
                return bad(r, "a number too long");
            memcpy(buf, num.text, num.len);
            buf[num.len] = '\0';
            x = strtod(buf, NULL);
        } else {
            return bad(r, "a sample that is not a number");
        }
        if (k >= n)
            return bad(r, "more samples than steps");
        v[k++] = x;
    }
    if (rc < 0)
        return rc;
    if (got)
        *got = k;
    else if (k != n)
        return bad(r, "fewer samples than steps");
    return 0;
}

static int read_str(struct rd *r, char *out, size_t cap)
{
    const char *s;
    size_t len;
    int rc;
    if (tt_jp_peek(&r->jp) != TT_JT_STRING)
        return bad(r, "a string expected");
    if ((rc = tt_jp_string(&r->jp, &r->a, &s, &len)) < 0)
        return rc;
    snprintf(out, cap, "%.*s", (int)len, s);
    return 0;
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

static int read_keys(struct rd *r, struct tt_diff_side *s)
{
    int rc;
    if ((rc = tt_jp_array_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_array_next(&r->jp)) == 1) {
        char kind[32] = "", key[4096] = "";
        const char *k;
        size_t kl, i;
        long idx = -1;
        if ((rc = tt_jp_object_begin(&r->jp)) < 0)
            return rc;
        while ((rc = tt_jp_object_next(&r->jp, &r->a, &k, &kl)) == 1) {
            if (kl == 4 && !memcmp(k, "kind", 4))
                rc = read_str(r, kind, sizeof(kind));
            else if (kl == 3 && !memcmp(k, "key", 3))
                rc = read_str(r, key, sizeof(key));
            else if (idx < 0 && kind[0] && (idx = tt__diff_key(s, kind, key)) < 0)
                return tt_error_set(TT_ENOMEM, "out of memory");
            if (rc < 0)
                return rc;
            if (idx < 0)
                continue;
            if (kl == 5 && !memcmp(k, "count", 5))
                rc = read_arr(r, s->keys[idx].count, s->n, NULL);
            else if (kl == 2 && !memcmp(k, "ns", 2))
                rc = read_arr(r, s->keys[idx].ns, s->n, NULL);
            else if (kl == 3 && !memcmp(k, "dev", 3))
                rc = read_arr(r, s->keys[idx].dev, s->n, NULL);
            else if (!(kl == 4 && !memcmp(k, "kind", 4)) && !(kl == 3 && !memcmp(k, "key", 3)))
                rc = tt_jp_skip(&r->jp);
            if (rc < 0)
                return rc;
        }
        if (rc < 0)
            return rc;
        for (i = 0; idx >= 0 && i < s->n; i++) /* absent samples are zeros */
            if (isnan(s->keys[idx].count[i]))
                s->keys[idx].count[i] = 0;
    }
    return rc;
}

static int read_top(struct rd *r, struct tt_diff_side *s)
{
    const char *k;
    size_t kl, i, m;
    int rc, schema = 0;
    int64_t v;
    if ((rc = tt_jp_object_begin(&r->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&r->jp, &r->a, &k, &kl)) == 1) {
        char tmp[64];
#define IS(lit) (kl == sizeof(lit) - 1 && !memcmp(k, lit, kl))
        if (IS("schema")) {
            if ((rc = read_str(r, tmp, sizeof(tmp))) == 0 && strcmp(tmp, SCHEMA))
                return bad(r, "another schema");
            schema = 1;
        } else if (IS("label")) {
            rc = read_str(r, s->label, sizeof(s->label));
        } else if (IS("gpu")) {
            rc = read_str(r, s->gpu, sizeof(s->gpu));
        } else if (IS("world") && (rc = read_int(r, &v)) == 0) {
            s->world = v;
        } else if (IS("has_gpu") && (rc = read_int(r, &v)) == 0) {
            s->has_gpu = v != 0;
        } else if (IS("has_mem") && (rc = read_int(r, &v)) == 0) {
            s->has_mem = v != 0;
        } else if (IS("traces") && (rc = read_int(r, &v)) == 0) {
            s->ntraces = (size_t)(v > 0 ? v : 0);
        } else if (IS("runs") && (rc = read_int(r, &v)) == 0) {
            s->nruns = (size_t)(v > 0 ? v : 0);
        } else if (IS("steps")) {
            double *st = NULL;
            size_t n = 0, cap = 0;
            if ((rc = tt_jp_array_begin(&r->jp)) < 0)
                return rc;
            while ((rc = tt_jp_array_next(&r->jp)) == 1 && (rc = read_int(r, &v)) == 0) {
                if (TT_ALLOC_GROW(st, n + 1, cap) < 0) {
                    free(st);
                    return tt_error_set(TT_ENOMEM, "out of memory");
                }
                st[n++] = (double)v;
            }
            for (i = 0; rc >= 0 && i < n; i++)
                if (tt__diff_add_sample(s, (int64_t)st[i]) < 0)
                    rc = tt_error_set(TT_ENOMEM, "out of memory");
            free(st);
        } else if (IS("ranks")) {
            size_t nr = 0;
            if ((rc = tt_jp_array_begin(&r->jp)) < 0)
                return rc;
            while ((rc = tt_jp_array_next(&r->jp)) == 1 && (rc = read_int(r, &v)) == 0) {
                if (nr >= s->n)
                    return bad(r, "more ranks than steps");
                s->rank[nr++] = v;
            }
        } else if (IS("metrics")) {
            const char *mk;
            size_t ml;
            if ((rc = tt_jp_object_begin(&r->jp)) < 0)
                return rc;
            while ((rc = tt_jp_object_next(&r->jp, &r->a, &mk, &ml)) == 1) {
                for (m = 0; m < M_COUNT && !(strlen(mname[m]) == ml && !memcmp(mname[m], mk, ml)); m++)
                    ;
                rc = m < M_COUNT ? read_arr(r, s->m[m], s->n, NULL) : tt_jp_skip(&r->jp);
                if (rc < 0)
                    return rc;
            }
        } else if (IS("keys")) {
            rc = read_keys(r, s);
        } else {
            rc = tt_jp_skip(&r->jp);
        }
#undef IS
        if (rc < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    return schema ? tt_jp_finish(&r->jp) : bad(r, "no schema");
}

int tt__diff_summary_read(const char *path, struct tt_diff_side **out)
{
    struct rd r;
    struct tt_diff_side *s;
    char *data = NULL;
    size_t len = 0, cap = 0;
    FILE *f;
    int rc;
    *out = NULL;
    if (!(f = fopen(path, "rb")))
        return tt_error_set_at(TT_EIO, path, -1, "%s", strerror(errno));
    for (;;) {
        size_t got;
        if (len + 65536 > cap) {
            char *p;
            cap = cap ? cap * 2 : 65536;
            if (cap > MAX_SUMMARY + 65536 || !(p = realloc(data, cap))) {
                free(data);
                fclose(f);
                return tt_error_set_at(TT_EINVALID, path, -1, "a diff summary over 256 MiB");
            }
            data = p;
        }
        got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    rc = ferror(f) ? tt_error_set_at(TT_EIO, path, -1, "cannot read: %s", strerror(errno)) : 0;
    fclose(f);
    if (rc < 0 || !(s = calloc(1, sizeof(*s)))) {
        free(data);
        return rc < 0 ? rc : tt_error_set(TT_ENOMEM, "out of memory");
    }
    s->world = -1;
    memset(&r, 0, sizeof(r));
    r.path = path;
    tt_jp_init(&r.jp, path, data, 0, data, len);
    rc = read_top(&r, s);
    tt_arena_release(&r.a);
    free(data);
    if (rc < 0) {
        if (!tt_error_last()->source[0])
            tt_error_set_at(rc, path, -1, "%s", tt_error_last()->message);
        tt_diff_side_free(s);
        return rc;
    }
    *out = s;
    return 0;
}
