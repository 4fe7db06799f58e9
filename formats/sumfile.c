/*
 * formats/sumfile.c - a summary file (docs/SUMMARY.md) read into a
 * struct tt_summary and written back: the container alone; each section's
 * text is kept minified and only its analysis parses it.
 */
#include "common/compat.h"
#include "formats/sumfile_internal.h"
#include "report/out.h"

#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>

const char *const tt__sec_name[TT__SEC_COUNT] = { "info", "averages", "kernels", "breakdown",
                                                  "diff" };

void tt__sum_section_jp(const struct tt_summary *s, const struct tt__sum_trace *t, int sec,
                        tt_jp *jp)
{
    const char *text = t->sec[sec] ? t->sec[sec] : "null";
    size_t len = t->sec[sec] ? t->seclen[sec] : 4;
    int64_t off = t->secoff[sec] > 0 ? t->secoff[sec] : 0;
    tt_jp_init(jp, s->path, text, off, text, len);
}

/* ---- a section's values, for the analyses reading their own ---- */

static int not_a(tt_jp *jp, const char *what, const char *expected)
{
    return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp), "%s: %s expected", what,
                           expected);
}

int tt__sum_int(tt_jp *jp, const char *what, int64_t *v)
{
    tt_jnum n;
    int rc = tt_jp_int_fast(jp, v); /* most values: a few digits */
    if (rc <= 0)
        return rc;
    if (tt_jp_peek(jp) != TT_JT_NUMBER)
        return not_a(jp, what, "an integer");
    if ((rc = tt_jp_number(jp, &n)) < 0)
        return rc;
    if (!n.fits)
        return not_a(jp, what, "an integer");
    *v = n.i;
    return 0;
}

int tt__sum_num(tt_jp *jp, const char *what, double *v)
{
    char tmp[64], *end;
    enum tt_jtype t = tt_jp_peek(jp);
    tt_jnum n;
    int rc;
    if (t == TT_JT_NULL) { /* not finite, as the writers write it */
        *v = NAN;
        return tt_jp_literal(jp, &t);
    }
    if (t != TT_JT_NUMBER)
        return not_a(jp, what, "a number");
    if ((rc = tt_jp_number(jp, &n)) < 0)
        return rc;
    if (n.len == 0 || n.len >= sizeof(tmp))
        return not_a(jp, what, "a number");
    memcpy(tmp, n.text, n.len);
    tmp[n.len] = '\0';
    *v = strtod(tmp, &end);
    return *end ? not_a(jp, what, "a number") : 0;
}

int tt__sum_str(tt_jp *jp, const char *what, tt_arena *a, const char **s, size_t *len)
{
    enum tt_jtype t = tt_jp_peek(jp);
    size_t n;
    *s = NULL;
    if (len)
        *len = 0;
    if (t == TT_JT_NULL)
        return tt_jp_literal(jp, &t);
    if (t != TT_JT_STRING)
        return not_a(jp, what, "a string");
    return tt_jp_string(jp, a, s, len ? len : &n);
}


int tt__sum_missing(const struct tt_summary *s, const struct tt__sum_trace *t, int sec)
{
    return tt_error_set_at(TT_EINVALID, s->path, -1,
                           "trace %" PRId64 " (%s) has no \"%s\" section: the summary was "
                           "written by a tracetool without it; summarise the trace again",
                           t->id, t->path, tt__sec_name[sec]);
}

int tt__sum_unsupported(const struct tt_summary *s, const char *what)
{
    return tt_error_set_at(TT_EUNSUPPORTED, s->path, -1,
                           "a summary cannot answer %s: give the traces or their database",
                           what);
}

/* ---- recognising one ---- */

/* the schema text (len bytes, quotes excluded) names a summary: its major
 * version into *major (0 when it is not a number) */
static int schema_major(const char *v, size_t len, long *major)
{
    size_t pl = strlen(TT__SUM_SCHEMA_PREFIX), i;
    long m = 0;
    if (len < pl || memcmp(v, TT__SUM_SCHEMA_PREFIX, pl) != 0)
        return 0;
    for (i = pl; i < len && v[i] >= '0' && v[i] <= '9' && m < 100000; i++)
        m = m * 10 + (v[i] - '0');
    *major = (i == pl || (i < len && v[i] != '.')) ? 0 : m;
    return 1;
}

int tt_is_summary_file(const char *path)
{
    struct stat sb;
    tt_source *src;
    tt_jstream js;
    const char *v;
    size_t len;
    long major;
    int ok = 0;
    if (!path || !strcmp(path, "-") || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
        tt_source_open(&src, path) < 0)
        return 0;
    if (tt_js_init(&js, src) < 0) {
        tt_source_free(src);
        return 0;
    }
    if (tt_js_peek(&js) == '{') {
        tt_js_advance(&js, 1);
        if (tt_js_peek(&js) == '"' && tt_js_scan_value(&js, &v, &len) == 0 && len == 8 &&
            !memcmp(v, "\"schema\"", 8)) {
            tt_js_advance(&js, len);
            if (tt_js_peek(&js) == ':') {
                tt_js_advance(&js, 1);
                if (tt_js_peek(&js) == '"' && tt_js_scan_value(&js, &v, &len) == 0 && len >= 2)
                    ok = schema_major(v + 1, len - 2, &major);
            }
        }
    }
    tt_js_release(&js);
    tt_source_free(src);
    return ok;
}

/* ---- freeing ---- */

void tt__sum_trace_release(struct tt__sum_trace *t)
{
    int k;
    free(t->path);
    free(t->content_hash);
    for (k = 0; k < TT__SEC_COUNT; k++)
        free(t->sec[k]);
    memset(t, 0, sizeof(*t));
}

void tt_summary_free(tt_summary *s)
{
    size_t i;
    if (!s)
        return;
    for (i = 0; i < s->n; i++)
        tt__sum_trace_release(&s->traces[i]);
    free(s->traces);
    free(s->path);
    free(s);
}

size_t tt_summary_ntraces(const tt_summary *s)
{
    return s ? s->n : 0;
}

/* ---- loading ---- */

/* the file, whole and decompressed, at most TT__SUM_MAX_BYTES */
static int read_whole(const char *path, tt_buf *b)
{
    tt_source *src;
    int rc;
    if ((rc = tt_source_open(&src, path)) < 0)
        return rc;
    for (;;) {
        ssize_t got;
        if (b->len > TT__SUM_MAX_BYTES) {
            rc = tt_error_set_at(TT_EINVALID, path, (int64_t)b->len,
                                 "a summary over %zu MiB: not one tracetool writes",
                                 TT__SUM_MAX_BYTES >> 20);
            break;
        }
        if (tt_buf_grow(b, 1u << 20) < 0) {
            rc = tt__oom();
            break;
        }
        got = tt_source_read(src, b->buf + b->len, b->alloc - b->len - 1);
        if (got <= 0) {
            rc = (int)got; /* 0 at the end; an error names the file */
            break;
        }
        b->len += (size_t)got;
        b->buf[b->len] = '\0';
    }
    tt_source_free(src);
    if (rc == 0 && b->len == 0)
        rc = tt_error_set_at(TT_EEMPTY, path, 0, "empty file: not a summary");
    return rc;
}

struct ld {
    tt_jp jp;
    tt_arena a;
    struct tt_summary *s;
    size_t alloc;
};

static int bad(struct ld *l, int64_t off, const char *what)
{
    return tt_error_set_at(TT_EINVALID, l->s->path, off, "%s", what);
}

/* a string value, copied (NUL-terminated) into *out */
static int get_string(struct ld *l, const char *key, char **out)
{
    const char *v;
    size_t len;
    int64_t off = tt_jp_offset(&l->jp);
    int rc;
    char msg[128];
    if (tt_jp_peek(&l->jp) != TT_JT_STRING) {
        snprintf(msg, sizeof(msg), "\"%s\" must be a string", key);
        return bad(l, off, msg);
    }
    if ((rc = tt_jp_string(&l->jp, &l->a, &v, &len)) < 0)
        return rc;
    free(*out);
    return (*out = strndup(v, len)) ? 0 : tt__oom();
}

static int sec_of(const char *k, size_t klen)
{
    int i;
    for (i = 0; i < TT__SEC_COUNT; i++)
        if (strlen(tt__sec_name[i]) == klen && !memcmp(tt__sec_name[i], k, klen))
            return i;
    return -1;
}

/* one section's value, minified */
static int get_section(struct ld *l, struct tt__sum_trace *t, int sec)
{
    tt_buf b = TT_BUF_INIT;
    int rc;
    t->secoff[sec] = tt_jp_offset(&l->jp);
    if ((rc = tt_jp_minify(&l->jp, &b)) < 0) {
        tt_buf_release(&b);
        return rc;
    }
    free(t->sec[sec]);
    t->sec[sec] = b.buf; /* never the shared empty buffer: a value is never empty */
    t->seclen[sec] = b.len;
    return 0;
}

static int get_rank(struct ld *l, struct tt__sum_trace *t)
{
    tt_jnum n;
    int64_t off = tt_jp_offset(&l->jp);
    enum tt_jtype ty = tt_jp_peek(&l->jp);
    if (ty == TT_JT_NULL) {
        t->have_rank = 0;
        return tt_jp_skip(&l->jp);
    }
    if (ty != TT_JT_NUMBER || tt_jp_number(&l->jp, &n) < 0 || !n.fits || n.i < 0)
        return bad(l, off, "\"rank\" must be a whole number >= 0 or null");
    t->have_rank = 1;
    t->rank = n.i;
    return 0;
}

static int get_trace(struct ld *l, struct tt__sum_trace *t)
{
    const char *k;
    size_t klen;
    int64_t off = tt_jp_offset(&l->jp);
    int rc, sec;
    if (tt_jp_peek(&l->jp) != TT_JT_OBJECT)
        return bad(l, off, "each of \"traces\" must be an object");
    if ((rc = tt_jp_object_begin(&l->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&l->jp, &l->a, &k, &klen)) > 0) {
        if (klen == 4 && !memcmp(k, "path", 4))
            rc = get_string(l, "path", &t->path);
        else if (klen == 12 && !memcmp(k, "content_hash", 12))
            rc = get_string(l, "content_hash", &t->content_hash);
        else if (klen == 4 && !memcmp(k, "rank", 4))
            rc = get_rank(l, t);
        else if ((sec = sec_of(k, klen)) >= 0)
            rc = get_section(l, t, sec);
        else
            rc = tt_jp_skip(&l->jp); /* a later minor version's: not ours to keep */
        if (rc < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (!t->path || !t->content_hash)
        return bad(l, off, "a trace without \"path\" or \"content_hash\"");
    return 0;
}

static int get_traces(struct ld *l)
{
    int rc;
    int64_t off = tt_jp_offset(&l->jp);
    if (tt_jp_peek(&l->jp) != TT_JT_ARRAY)
        return bad(l, off, "\"traces\" must be an array");
    if ((rc = tt_jp_array_begin(&l->jp)) < 0)
        return rc;
    while ((rc = tt_jp_array_next(&l->jp)) > 0) {
        struct tt__sum_trace *t;
        if (TT_ALLOC_GROW(l->s->traces, l->s->n + 1, l->alloc) < 0)
            return tt__oom();
        t = &l->s->traces[l->s->n++];
        memset(t, 0, sizeof(*t));
        if ((rc = get_trace(l, t)) < 0)
            return rc;
    }
    return rc;
}

static int check_schema(struct ld *l)
{
    char *v = NULL;
    long major = 0;
    int64_t off = tt_jp_offset(&l->jp);
    int rc = get_string(l, "schema", &v);
    if (rc == 0 && !schema_major(v, strlen(v), &major))
        rc = tt_error_set_at(TT_EUNSUPPORTED, l->s->path, off,
                             "schema \"%s\" is not a tracetool summary (%s)", v,
                             TT_SUMMARY_SCHEMA);
    else if (rc == 0 && major > TT__SUM_MAJOR)
        rc = tt_error_set_at(TT_EUNSUPPORTED, l->s->path, off,
                             "schema \"%s\" is newer than this tracetool reads (%s): "
                             "update tracetool", v, TT_SUMMARY_SCHEMA);
    else if (rc == 0 && major < 1)
        rc = tt_error_set_at(TT_EINVALID, l->s->path, off, "bad schema version \"%s\"", v);
    free(v);
    return rc;
}

/* the document: "schema" first, then "traces" (other keys skipped) */
static int get_top(struct ld *l)
{
    const char *k;
    size_t klen;
    int rc, n = 0, have_traces = 0;
    if (tt_jp_peek(&l->jp) != TT_JT_OBJECT)
        return tt_error_set_at(TT_EINVALID, l->s->path, tt_jp_offset(&l->jp),
                               "not a summary: expected a JSON object");
    if ((rc = tt_jp_object_begin(&l->jp)) < 0)
        return rc;
    while ((rc = tt_jp_object_next(&l->jp, &l->a, &k, &klen)) > 0) {
        int schema = klen == 6 && !memcmp(k, "schema", 6);
        if (n++ == 0 && !schema)
            return tt_error_set_at(TT_EUNSUPPORTED, l->s->path, tt_jp_offset(&l->jp),
                                   "not a tracetool summary: its first key is not \"schema\"");
        if (schema && n == 1)
            rc = check_schema(l);
        else if (klen == 6 && !memcmp(k, "traces", 6) && !have_traces++)
            rc = get_traces(l);
        else
            rc = tt_jp_skip(&l->jp);
        if (rc < 0)
            return rc;
    }
    if (rc == 0 && n == 0)
        return tt_error_set_at(TT_EUNSUPPORTED, l->s->path, 0,
                               "not a tracetool summary: an empty object");
    if (rc == 0 && !have_traces)
        return tt_error_set_at(TT_EINVALID, l->s->path, -1, "a summary without \"traces\"");
    return rc < 0 ? rc : tt_jp_finish(&l->jp);
}

/* each (path, hash) once, and the traces in order, as written */
static int check_order(const struct tt_summary *s)
{
    size_t i;
    for (i = 1; i < s->n; i++) {
        const struct tt__sum_trace *a = &s->traces[i - 1], *b = &s->traces[i];
        if (!strcmp(a->path, b->path))
            return tt_error_set_at(TT_EINVALID, s->path, -1,
                                   "duplicate trace %s (%s%s%s)", b->path, a->content_hash,
                                   strcmp(a->content_hash, b->content_hash) ? " and " : "",
                                   strcmp(a->content_hash, b->content_hash) ? b->content_hash
                                                                            : "");
    }
    return 0;
}

static int cmp_trace(const void *x, const void *y)
{
    const struct tt__sum_trace *a = x, *b = y;
    int c = strcmp(a->path, b->path);
    return c ? c : strcmp(a->content_hash, b->content_hash);
}

int tt_summary_load(const char *path, tt_summary **out)
{
    struct ld l;
    tt_buf b = TT_BUF_INIT;
    size_t i;
    int rc;
    *out = NULL;
    memset(&l, 0, sizeof(l));
    if (!(l.s = calloc(1, sizeof(*l.s))) || !(l.s->path = strdup(path))) {
        free(l.s);
        return tt__oom();
    }
    rc = read_whole(path, &b);
    if (rc == 0) {
        tt_jp_init(&l.jp, path, b.buf, 0, b.buf, b.len);
        rc = get_top(&l);
    }
    tt_arena_release(&l.a);
    tt_buf_release(&b);
    if (rc == 0) {
        TT_QSORT(l.s->traces, l.s->n, sizeof(*l.s->traces), cmp_trace);
        rc = check_order(l.s);
    }
    if (rc < 0) {
        if (!tt_error_last()->source[0])
            tt_error_set_source(path);
        tt_summary_free(l.s);
        return rc;
    }
    for (i = 0; i < l.s->n; i++)
        l.s->traces[i].id = (int64_t)i + 1;
    *out = l.s;
    return 0;
}

/* ---- normalising (summarize, merge) ---- */

/* fold b into a (same path and hash): each section a lacks from b, and of
 * two texts the smaller, so that the fold is commutative */
static int fold(struct tt__sum_trace *a, struct tt__sum_trace *b)
{
    int k;
    for (k = 0; k < TT__SEC_COUNT; k++) {
        int take = 0;
        if (!b->sec[k])
            continue;
        if (!a->sec[k])
            take = 1;
        else if (a->seclen[k] != b->seclen[k])
            take = b->seclen[k] < a->seclen[k];
        else
            take = memcmp(b->sec[k], a->sec[k], a->seclen[k]) < 0;
        if (take) {
            char *x = a->sec[k];
            size_t n = a->seclen[k];
            int64_t o = a->secoff[k];
            a->sec[k] = b->sec[k];
            a->seclen[k] = b->seclen[k];
            a->secoff[k] = b->secoff[k];
            b->sec[k] = x;
            b->seclen[k] = n;
            b->secoff[k] = o;
        }
    }
    if (!a->have_rank && b->have_rank) {
        a->have_rank = 1;
        a->rank = b->rank;
    } else if (a->have_rank && b->have_rank && b->rank < a->rank) {
        a->rank = b->rank;
    }
    return 0;
}

struct ord {
    struct tt__sum_trace t;
    const char *origin;
};

static int cmp_ord(const void *x, const void *y)
{
    const struct ord *a = x, *b = y;
    int c = cmp_trace(&a->t, &b->t);
    if (c)
        return c;
    return strcmp(a->origin ? a->origin : "", b->origin ? b->origin : "");
}

int tt__sum_normalize(struct tt_summary *s, const char **origin)
{
    struct ord *o;
    size_t i, n = 0;
    int rc = 0;
    if (!s->n)
        return 0;
    if (!(o = calloc(s->n, sizeof(*o))))
        return tt__oom();
    for (i = 0; i < s->n; i++) {
        o[i].t = s->traces[i];
        o[i].origin = origin ? origin[i] : s->path;
    }
    qsort(o, s->n, sizeof(*o), cmp_ord);
    for (i = 0; i < s->n; i++) {
        if (n && !strcmp(o[n - 1].t.path, o[i].t.path)) {
            if (strcmp(o[n - 1].t.content_hash, o[i].t.content_hash) && rc == 0)
                rc = tt_error_set_at(TT_EINVALID, o[i].origin, -1,
                                     "trace %s has other contents (hash %s) than in %s "
                                     "(hash %s): two different traces with one path",
                                     o[i].t.path, o[i].t.content_hash, o[n - 1].origin,
                                     o[n - 1].t.content_hash);
            fold(&o[n - 1].t, &o[i].t);
            tt__sum_trace_release(&o[i].t);
            continue;
        }
        o[n++] = o[i];
    }
    for (i = 0; i < n; i++) {
        s->traces[i] = o[i].t;
        s->traces[i].id = (int64_t)i + 1;
        if (origin)
            origin[i] = o[i].origin;
    }
    s->n = n;
    free(o);
    return rc;
}

/* ---- writing ---- */

static void write_trace(tt_jw *w, const struct tt__sum_trace *t)
{
    int k;
    tt_jw_nl(w, 0);
    tt_jw_obj(w);
    tt_jw_kstr(w, "path", t->path);
    tt_jw_kstr(w, "content_hash", t->content_hash);
    tt_jw_key(w, "rank");
    if (t->have_rank)
        tt_jw_int(w, t->rank);
    else
        tt_jw_null(w);
    for (k = 0; k < TT__SEC_COUNT; k++) {
        if (!t->sec[k])
            continue;
        tt_jw_key(w, tt__sec_name[k]);
        tt_jw_raw(w, t->sec[k], t->seclen[k]);
    }
    tt_jw_end(w);
}

int tt__sum_write(const struct tt_summary *s, const char *out_path)
{
    tt_out o;
    tt_jw w;
    size_t i;
    int rc, wr;
    if ((rc = tt_out_open(&o, out_path, TT_OUT_GZ_BY_NAME)) < 0)
        return rc;
    tt_jw_init_out(&w, &o, TT_JW_COMPACT | TT_JW_LINE);
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "schema", TT_SUMMARY_SCHEMA);
    tt_jw_kstr(&w, "tool_version", TT_VERSION);
    tt_jw_karr(&w, "traces");
    for (i = 0; i < s->n; i++)
        write_trace(&w, &s->traces[i]);
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    tt_jw_end(&w);
    wr = tt_jw_finish(&w);
    if (wr == TT_EINVALID)
        wr = tt_error_set_at(wr, out_path, -1, "summary left unfinished (a bug)");
    return tt_out_close(&o, wr);
}
