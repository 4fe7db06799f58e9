/*
 * formats/json.c - streaming window + value cursor (see json.h).
 */
#include "common/compat.h"
#include "common/utf8.h"
#include "formats/json.h"

#include <errno.h>
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JS_INITIAL_CAP (1u << 20)
#define JP_MAX_DEPTH 512

/*
 * Byte classes for the structural scanner: constant tables, filled at compile
 * time by TT_CLS_TABLE(PRED), which expands PRED(c) for c = 0..255 in order.
 * Nothing is built at run time, so parsers opened on several threads at once
 * share no mutable state (issue 24: the tables used to be built lazily).
 */
#define TT_CLS_4(P, c) P(c), P((c) + 1), P((c) + 2), P((c) + 3)
#define TT_CLS_16(P, c) TT_CLS_4(P, c), TT_CLS_4(P, (c) + 4), TT_CLS_4(P, (c) + 8), \
                        TT_CLS_4(P, (c) + 12)
#define TT_CLS_64(P, c) TT_CLS_16(P, c), TT_CLS_16(P, (c) + 16), TT_CLS_16(P, (c) + 32), \
                        TT_CLS_16(P, (c) + 48)
#define TT_CLS_TABLE(P) { TT_CLS_64(P, 0), TT_CLS_64(P, 64), TT_CLS_64(P, 128), \
                          TT_CLS_64(P, 192) }

#define IS_STR(c) ((c) == '"' || (c) == '\\')
#define IS_STRUCT(c) ((c) == '"' || (c) == '{' || (c) == '}' || (c) == '[' || (c) == ']')
#define IS_DELIM(c) ((c) == ' ' || (c) == '\t' || (c) == '\r' || (c) == '\n' || \
                     (c) == ',' || (c) == ']' || (c) == '}' || (c) == ':' || \
                     (c) == '{' || (c) == '[' || (c) == '"')
#define IS_PLAIN(c) ((c) >= 0x20 && (c) < 0x80 && !IS_STR(c))

static const unsigned char cls_str[256] = TT_CLS_TABLE(IS_STR);       /* '"' or '\\' */
static const unsigned char cls_struct[256] = TT_CLS_TABLE(IS_STRUCT); /* '"' '{' '}' '[' ']' */
static const unsigned char cls_delim[256] = TT_CLS_TABLE(IS_DELIM);   /* ends a scalar */
/* string byte needing no care: ASCII, not a control character, '"' or '\\' */
static const unsigned char cls_plain[256] = TT_CLS_TABLE(IS_PLAIN);

int tt_js_init(tt_jstream *js, tt_source *src)
{
    memset(js, 0, sizeof(*js));
    js->src = src;
    js->name = tt_source_name(src);
    js->buf = malloc(JS_INITIAL_CAP);
    if (!js->buf)
        return tt__oom();
    js->cap = JS_INITIAL_CAP;
    return 0;
}

void tt_js_release(tt_jstream *js)
{
    free(js->buf);
    js->buf = NULL;
}

/* Read more input; keeps [pos, end). 0, 1 at EOF, or <0 error. */
static int js_fill(tt_jstream *js)
{
    ssize_t r;
    if (js->src_err)
        return js->src_err;
    if (js->eof)
        return 1;
    if (js->pos > 0) {
        size_t keep = js->end - js->pos;
        if (keep)
            memmove(js->buf, js->buf + js->pos, keep);
        js->base += (int64_t)js->pos;
        js->end = keep;
        js->pos = 0;
    }
    if (js->end == js->cap) {
        size_t ncap;
        char *nb;
        if (js->cap >= TT_JS_MAX_VALUE)
            return tt_error_set_at(TT_EINVALID, js->name, tt_js_offset(js),
                                   "a single JSON value (one event, node or key) larger than"
                                   " %d MiB starts here: not a trace tracetool reads",
                                   TT_JS_MAX_VALUE >> 20);
        if (tt_st_mult(&ncap, js->cap, 2))
            return tt__oom();
        if (ncap > TT_JS_MAX_VALUE)
            ncap = TT_JS_MAX_VALUE;
        nb = realloc(js->buf, ncap);
        if (!nb)
            return tt_error_set_at(TT_ENOMEM, js->name, tt_js_offset(js),
                                   "out of memory (a single value larger "
                                   "than %zu bytes)",
                                   js->cap);
        js->buf = nb;
        js->cap = ncap;
    }
    r = tt_source_read(js->src, js->buf + js->end, js->cap - js->end);
    if (r < 0) {
        js->src_err = (int)r;
        return (int)r;
    }
    if (r == 0) {
        js->eof = 1;
        return 1;
    }
    js->end += (size_t)r;
    return 0;
}

int tt_js_ensure(tt_jstream *js, size_t n)
{
    while (js->end - js->pos < n && !js->eof) {
        int rc;
        if (js->pos == 0 && js->end == js->cap && js->cap >= n)
            break;
        rc = js_fill(js);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int tt_js_peek(tt_jstream *js)
{
    for (;;) {
        while (js->pos < js->end) {
            unsigned char c = (unsigned char)js->buf[js->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return c;
            js->pos++;
        }
        {
            int rc = js_fill(js);
            if (rc < 0)
                return rc == -1 ? TT_ERROR - 100 : rc;
            if (rc == 1)
                return -1;
        }
    }
}

#if defined(__SSE2__)
static inline unsigned ctz32(unsigned x)
{
    return (unsigned)__builtin_ctz(x);
}

/* first byte in [p, e) that is '"' or '\\', or e */
static inline const unsigned char *skip_str(const unsigned char *p, const unsigned char *e)
{
    const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\');
    while (e - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)));
        if (m)
            return p + ctz32(m);
        p += 16;
    }
    while (p < e && !cls_str[*p])
        p++;
    return p;
}

/* first byte in [p, e) that is one of '"' '{' '}' '[' ']', or e */
static inline const unsigned char *skip_struct(const unsigned char *p, const unsigned char *e)
{
    const __m128i q = _mm_set1_epi8('"'), o = _mm_set1_epi8('{');
    const __m128i c = _mm_set1_epi8('}'), lb = _mm_set1_epi8('['), rb = _mm_set1_epi8(']');
    while (e - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i x = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, o)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, c),
                                              _mm_or_si128(_mm_cmpeq_epi8(v, lb),
                                                           _mm_cmpeq_epi8(v, rb))));
        unsigned m = (unsigned)_mm_movemask_epi8(x);
        if (m)
            return p + ctz32(m);
        p += 16;
    }
    while (p < e && !cls_struct[*p])
        p++;
    return p;
}
#else
static inline const unsigned char *skip_str(const unsigned char *p, const unsigned char *e)
{
    while (p < e && !cls_str[*p])
        p++;
    return p;
}
static inline const unsigned char *skip_struct(const unsigned char *p, const unsigned char *e)
{
    while (p < e && !cls_struct[*p])
        p++;
    return p;
}
#endif

int tt_js_scan_value(tt_jstream *js, const char **start, size_t *len)
{
    int c = tt_js_peek(js);
    if (c == -1)
        return tt_error_set_at(TT_ETRUNCATED, js->name, tt_js_offset(js),
                               "unexpected end of input (truncated file?)");
    if (c < 0)
        return c;
    if (!js->scan_started) {
        js->scan_started = 1;
        js->scan_depth = 0;
        js->scan_instr = 0;
        js->scan_esc = 0;
        js->scan_off = 1;
        if (c == '"')
            js->scan_instr = 1;
        else if (c == '{' || c == '[')
            js->scan_depth = 1;
        else
            js->scan_depth = -1; /* scalar */
    }
    for (;;) {
        const unsigned char *b = (const unsigned char *)js->buf + js->pos;
        const unsigned char *p = b + js->scan_off;
        const unsigned char *e = (const unsigned char *)js->buf + js->end;
        const unsigned char *done = NULL;
        int rc;

        if (js->scan_depth < 0) {
            while (p < e && !cls_delim[*p])
                p++;
            if (p < e || js->eof)
                done = p;
        } else {
            int depth = js->scan_depth, instr = js->scan_instr;
            int esc = js->scan_esc;
            for (;;) {
                if (esc) {
                    if (p >= e)
                        break;
                    p++;
                    esc = 0;
                }
                if (instr) {
                    p = skip_str(p, e);
                    if (p >= e)
                        break;
                    if (*p++ == '\\') {
                        esc = 1;
                        continue;
                    }
                    instr = 0;
                    if (depth == 0) {
                        done = p;
                        break;
                    }
                } else {
                    unsigned char ch;
                    p = skip_struct(p, e);
                    if (p >= e)
                        break;
                    ch = *p++;
                    if (ch == '"') {
                        instr = 1;
                    } else if (ch == '{' || ch == '[') {
                        depth++;
                    } else if (--depth == 0) {
                        done = p;
                        break;
                    }
                }
            }
            js->scan_depth = depth;
            js->scan_instr = instr;
            js->scan_esc = esc;
        }
        if (done) {
            *start = (const char *)b;
            *len = (size_t)(done - b);
            js->scan_started = 0;
            return 0;
        }
        js->scan_off = (size_t)(p - b);
        rc = js_fill(js);
        if (rc < 0) {
            js->scan_started = 0;
            return rc;
        }
        if (rc == 1) {
            js->scan_started = 0;
            return tt_error_set_at(TT_ETRUNCATED, js->name, js->base + (int64_t)js->end,
                                   "unexpected end of input inside a value "
                                   "starting at byte %lld (truncated file?)",
                                   (long long)tt_js_offset(js));
        }
    }
}

/* ------------------------------------------------------------------ */
/* cursor                                                              */

void tt_jp_init(tt_jp *jp, const char *name, const char *buf, int64_t base,
                const char *start, size_t len)
{
    jp->p = start;
    jp->end = start + len;
    jp->buf = buf;
    jp->base = base;
    jp->depth = 0;
    jp->repairs = 0;
    jp->name = name;
}

static int jp_err(tt_jp *jp, const char *what)
{
    if (jp->p >= jp->end)
        return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                               "%s, found end of value", what);
    {
        unsigned char c = (unsigned char)*jp->p;
        if (c >= 0x20 && c < 0x7f)
            return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                                   "%s, found '%c'", what, c);
        return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                               "%s, found byte 0x%02x", what, c);
    }
}

static inline void ws(tt_jp *jp)
{
    while (jp->p < jp->end) {
        char c = *jp->p;
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            break;
        jp->p++;
    }
}

static int match_word(tt_jp *jp, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(jp->end - jp->p) >= n && memcmp(jp->p, w, n) == 0) {
        if ((size_t)(jp->end - jp->p) == n || cls_delim[(unsigned char)jp->p[n]])
            return 1;
    }
    return 0;
}

enum tt_jtype tt_jp_peek(tt_jp *jp)
{
    ws(jp);
    if (jp->p >= jp->end)
        return TT_JT_NONE;
    switch (*jp->p) {
    case '{': return TT_JT_OBJECT;
    case '[': return TT_JT_ARRAY;
    case '"': return TT_JT_STRING;
    case 't': return TT_JT_TRUE;
    case 'f': return TT_JT_FALSE;
    case 'n':
        return match_word(jp, "nan") ? TT_JT_NUMBER : TT_JT_NULL;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
    case 'N': case 'I': case 'i':
        return TT_JT_NUMBER;
    default: return TT_JT_NONE;
    }
}

int tt_jp_object_begin(tt_jp *jp)
{
    ws(jp);
    if (jp->p >= jp->end || *jp->p != '{')
        return jp_err(jp, "expected '{'");
    if (++jp->depth > JP_MAX_DEPTH)
        return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                               "nesting deeper than %d levels", JP_MAX_DEPTH);
    jp->p++;
    jp->first[jp->depth] = 1;
    return 0;
}

int tt_jp_object_next(tt_jp *jp, tt_arena *a, const char **key, size_t *klen)
{
    int rc;
    ws(jp);
    if (jp->p >= jp->end)
        return jp_err(jp, "expected ',' or '}' in object");
    if (*jp->p == '}') {
        jp->p++;
        jp->depth--;
        return 0;
    }
    if (jp->first[jp->depth]) {
        jp->first[jp->depth] = 0;
    } else {
        if (*jp->p != ',')
            return jp_err(jp, "expected ',' or '}' in object");
        jp->p++;
        ws(jp);
        if (jp->p < jp->end && *jp->p == '}') {
            jp->repairs++; /* trailing comma */
            jp->p++;
            jp->depth--;
            return 0;
        }
    }
    if (jp->p >= jp->end || *jp->p != '"')
        return jp_err(jp, "expected a string key in object");
    {
        /* clean keys are returned in place (not NUL-terminated) */
        const char *q = jp->p + 1;
        while (q < jp->end && cls_plain[(unsigned char)*q])
            q++;
        if (q < jp->end && *q == '"') {
            *key = jp->p + 1;
            *klen = (size_t)(q - *key);
            jp->p = q + 1;
        } else if ((rc = tt_jp_string(jp, a, key, klen)) < 0) {
            return rc;
        }
    }
    ws(jp);
    if (jp->p >= jp->end || *jp->p != ':')
        return jp_err(jp, "expected ':' after object key");
    jp->p++;
    return 1;
}

int tt_jp_array_begin(tt_jp *jp)
{
    ws(jp);
    if (jp->p >= jp->end || *jp->p != '[')
        return jp_err(jp, "expected '['");
    if (++jp->depth > JP_MAX_DEPTH)
        return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                               "nesting deeper than %d levels", JP_MAX_DEPTH);
    jp->p++;
    jp->first[jp->depth] = 1;
    return 0;
}

int tt_jp_array_next(tt_jp *jp)
{
    ws(jp);
    if (jp->p >= jp->end)
        return jp_err(jp, "expected ',' or ']' in array");
    if (*jp->p == ']') {
        jp->p++;
        jp->depth--;
        return 0;
    }
    if (jp->first[jp->depth]) {
        jp->first[jp->depth] = 0;
        return 1;
    }
    if (*jp->p != ',')
        return jp_err(jp, "expected ',' or ']' in array");
    jp->p++;
    ws(jp);
    if (jp->p < jp->end && *jp->p == ']') {
        jp->repairs++; /* trailing comma */
        jp->p++;
        jp->depth--;
        return 0;
    }
    return 1;
}

static inline int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int read_hex4(const char *p, const char *end)
{
    int v = 0, i;
    if (end - p < 4)
        return -1;
    for (i = 0; i < 4; i++) {
        int h = hexval((unsigned char)p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static char *put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

int tt_jp_string(tt_jp *jp, tt_arena *a, const char **s, size_t *len)
{
    const unsigned char *p, *e, *start;
    char *out, *o;
    size_t raw, cap;
    ws(jp);
    if (jp->p >= jp->end || *jp->p != '"')
        return jp_err(jp, "expected a string");
    start = p = (const unsigned char *)jp->p + 1;
    e = (const unsigned char *)jp->end;
    /* fast path: printable ASCII without escapes */
    while (p < e && cls_plain[*p])
        p++;
    if (p < e && *p == '"') {
        char *c = tt_arena_strndup(a, (const char *)start, (size_t)(p - start));
        if (!c)
            return tt__oom();
        *s = c;
        *len = (size_t)(p - start);
        jp->p = (const char *)p + 1;
        return 0;
    }
    /* find the closing quote */
    while (p < e && *p != '"') {
        if (*p == '\\')
            p++;
        p++;
    }
    if (p >= e) {
        jp->p = jp->end;
        return tt_error_set_at(TT_EINVALID, jp->name, tt_jp_offset(jp),
                               "unterminated string");
    }
    raw = (size_t)(p - start);
    if (tt_st_mult(&cap, raw, 3) || tt_st_add(&cap, cap, 1))
        return tt__oom();
    out = tt_arena_alloc(a, cap);
    if (!out)
        return tt__oom();
    o = out;
    e = p; /* closing quote */
    p = start;
    while (p < e) {
        unsigned char c = *p;
        if (c == '\\') {
            unsigned char x = p + 1 < e ? p[1] : 0;
            p += 2;
            switch (x) {
            case '"': *o++ = '"'; break;
            case '\\': *o++ = '\\'; break;
            case '/': *o++ = '/'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u': {
                int h = read_hex4((const char *)p, (const char *)e);
                uint32_t cp;
                if (h < 0) {
                    /* "\u" not followed by 4 hex digits: keep literally */
                    jp->repairs++;
                    *o++ = '\\';
                    *o++ = 'u';
                    break;
                }
                p += 4;
                cp = (uint32_t)h;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    int lo = (e - p >= 6 && p[0] == '\\' && p[1] == 'u')
                                 ? read_hex4((const char *)p + 2, (const char *)e)
                                 : -1;
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                        p += 6;
                    } else {
                        cp = 0xFFFD;
                        jp->repairs++;
                    }
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    cp = 0xFFFD;
                    jp->repairs++;
                }
                if (cp == 0) {
                    /* NUL would cut C strings: keep it escaped as U+FFFD */
                    cp = 0xFFFD;
                    jp->repairs++;
                }
                o = put_utf8(o, cp);
                break;
            }
            default:
                /* invalid escape such as a Windows path "C:\Users": keep it */
                jp->repairs++;
                *o++ = '\\';
                if (x) {
                    p--;
                } else {
                    p--;
                }
                break;
            }
            continue;
        }
        if (c < 0x20) {
            /* raw control character: keep it, count the repair */
            jp->repairs++;
            *o++ = c ? (char)c : ' ';
            p++;
            continue;
        }
        if (c < 0x80) {
            *o++ = (char)c;
            p++;
            continue;
        }
        {
            int n = tt_utf8_len(p, e);
            if (n == 0) {
                jp->repairs++;
                o = put_utf8(o, 0xFFFD);
                p++;
            } else {
                memcpy(o, p, (size_t)n);
                o += n;
                p += n;
            }
        }
    }
    *o = '\0';
    *s = out;
    *len = (size_t)(o - out);
    jp->p = (const char *)e + 1;
    return 0;
}

int tt_jp_number(tt_jp *jp, tt_jnum *n)
{
    const char *p, *start;
    int neg = 0;
    uint64_t acc = 0;
    int overflow = 0;
    ws(jp);
    start = p = jp->p;
    memset(n, 0, sizeof(*n));
    /* non-standard literals seen in the wild (only checked off the fast path) */
    if (p < jp->end && !(*p >= '0' && *p <= '9') &&
        !(*p == '-' && p + 1 < jp->end && p[1] >= '0' && p[1] <= '9')) {
        static const char *const lits[] = { "NaN", "nan", "Infinity",
                                            "-Infinity", "inf", "-inf" };
        size_t i;
        for (i = 0; i < TT_ARRAY_SIZE(lits); i++) {
            if (match_word(jp, lits[i])) {
                n->text = start;
                n->len = strlen(lits[i]);
                n->nonfinite = 1;
                jp->p += n->len;
                jp->repairs++;
                return 0;
            }
        }
    }
    if (p < jp->end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= jp->end || *p < '0' || *p > '9')
        return jp_err(jp, "expected a value");
    if (*p == '0') {
        p++;
        if (p < jp->end && *p >= '0' && *p <= '9') {
            jp->p = p;
            return jp_err(jp, "leading zero in number");
        }
    } else {
        /* 19 digits cannot overflow 64 bits: no check until then */
        const char *stop = jp->end - p > 19 ? p + 19 : jp->end;
        while (p < stop && (unsigned)(*p - '0') < 10)
            acc = acc * 10 + (unsigned)(*p++ - '0');
        while (p < jp->end && *p >= '0' && *p <= '9') {
            unsigned d = (unsigned)(*p - '0');
            if (acc > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                acc = acc * 10 + d;
            p++;
        }
    }
    n->is_int = 1;
    if (p < jp->end && *p == '.') {
        n->is_int = 0;
        p++;
        if (p >= jp->end || *p < '0' || *p > '9') {
            jp->p = p;
            return jp_err(jp, "expected a digit after '.'");
        }
        while (p < jp->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < jp->end && (*p == 'e' || *p == 'E')) {
        n->is_int = 0;
        p++;
        if (p < jp->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= jp->end || *p < '0' || *p > '9') {
            jp->p = p;
            return jp_err(jp, "expected a digit in exponent");
        }
        while (p < jp->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < jp->end && !cls_delim[(unsigned char)*p]) {
        jp->p = p;
        return jp_err(jp, "invalid character after number");
    }
    n->text = start;
    n->len = (size_t)(p - start);
    if (n->is_int && !overflow) {
        if (!neg && acc <= (uint64_t)INT64_MAX) {
            n->fits = 1;
            n->i = (int64_t)acc;
        } else if (neg && acc <= (uint64_t)INT64_MAX + 1) {
            n->fits = 1;
            n->i = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
        }
    }
    jp->p = p;
    return 0;
}

int tt_jp_int_fast(tt_jp *jp, int64_t *v)
{
    const char *p, *e = jp->end, *d0;
    uint64_t acc = 0;
    int neg = 0;
    ws(jp);
    p = jp->p;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    d0 = p;
    while (p < e && (unsigned)(*p - '0') < 10 && p - d0 < 18)
        acc = acc * 10 + (unsigned)(*p++ - '0');
    if (p == d0 || (p - d0 > 1 && *d0 == '0') || (p < e && !cls_delim[(unsigned char)*p]))
        return 1; /* 19+ digits, '.', exponent, leading zero, garbage */
    *v = neg ? -(int64_t)acc : (int64_t)acc;
    jp->p = p;
    return 0;
}

/* Digits after a '.' in microseconds: the first three (ns) into *frac, the
 * fourth rounds; returns how many digits there were. */
static int frac_digits(const char **pp, const char *e, uint64_t *frac, int *round_up)
{
    const char *p = *pp;
    int fd = 0;
    while (p < e && (unsigned)(*p - '0') < 10) {
        if (fd < 3)
            *frac = *frac * 10 + (unsigned)(*p - '0');
        else if (fd == 3)
            *round_up = *p >= '5';
        fd++;
        p++;
    }
    *pp = p;
    return fd;
}

int tt_jp_time_ns(tt_jp *jp, int64_t *ns)
{
    const char *p, *e = jp->end;
    uint64_t ip = 0, frac = 0;
    int neg = 0, nd = 0, fd = 0, round_up = 0;
    ws(jp);
    p = jp->p;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    while (p < e && (unsigned)(*p - '0') < 10 && nd < 17) {
        ip = ip * 10 + (unsigned)(*p++ - '0');
        nd++;
    }
    if (!nd || nd == 17 || (nd > 1 && p[-nd] == '0') || ip > (uint64_t)(INT64_MAX / 1000) - 1)
        return 1;
    if (p < e && *p == '.') {
        p++;
        if (!(fd = frac_digits(&p, e, &frac, &round_up)))
            return 1;
    }
    if (p < e && !cls_delim[(unsigned char)*p])
        return 1; /* exponent, garbage: the general path decides */
    for (; fd < 3; fd++)
        frac *= 10;
    {
        int64_t v = (int64_t)(ip * 1000 + frac + (uint64_t)round_up);
        *ns = neg ? -v : v;
    }
    jp->p = p;
    return 0;
}

int tt_jp_literal(tt_jp *jp, enum tt_jtype *t)
{
    ws(jp);
    if (match_word(jp, "true")) {
        jp->p += 4;
        *t = TT_JT_TRUE;
    } else if (match_word(jp, "false")) {
        jp->p += 5;
        *t = TT_JT_FALSE;
    } else if (match_word(jp, "null")) {
        jp->p += 4;
        *t = TT_JT_NULL;
    } else {
        return jp_err(jp, "expected a value");
    }
    return 0;
}

static int value(tt_jp *jp, tt_buf *out, tt_arena *scratch);

static int container(tt_jp *jp, tt_buf *out, tt_arena *scratch, int obj)
{
    int rc, first = 1;
    if (obj) {
        const char *k;
        size_t kl;
        if ((rc = tt_jp_object_begin(jp)) < 0)
            return rc;
        if (out)
            tt_buf_addch(out, '{');
        while ((rc = tt_jp_object_next(jp, scratch, &k, &kl)) == 1) {
            if (out) {
                if (!first)
                    tt_buf_addch(out, ',');
                tt_buf_add_json_string(out, k, kl);
                tt_buf_addch(out, ':');
            }
            first = 0;
            if ((rc = value(jp, out, scratch)) < 0)
                return rc;
        }
        if (rc < 0)
            return rc;
        if (out)
            tt_buf_addch(out, '}');
    } else {
        if ((rc = tt_jp_array_begin(jp)) < 0)
            return rc;
        if (out)
            tt_buf_addch(out, '[');
        while ((rc = tt_jp_array_next(jp)) == 1) {
            if (out && !first)
                tt_buf_addch(out, ',');
            first = 0;
            if ((rc = value(jp, out, scratch)) < 0)
                return rc;
        }
        if (rc < 0)
            return rc;
        if (out)
            tt_buf_addch(out, ']');
    }
    return 0;
}

static int value(tt_jp *jp, tt_buf *out, tt_arena *scratch)
{
    int rc;
    switch (tt_jp_peek(jp)) {
    case TT_JT_OBJECT:
        return container(jp, out, scratch, 1);
    case TT_JT_ARRAY:
        return container(jp, out, scratch, 0);
    case TT_JT_STRING: {
        const char *s;
        size_t l;
        const char *raw = jp->p;
        unsigned before = jp->repairs;
        /* clean strings are copied through as they are */
        const char *q = raw + 1;
        while (q < jp->end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x80 &&
               *q != '"' && *q != '\\')
            q++;
        if (q < jp->end && *q == '"') {
            if (out)
                tt_buf_add(out, raw, (size_t)(q + 1 - raw));
            jp->p = q + 1;
            return 0;
        }
        if ((rc = tt_jp_string(jp, scratch, &s, &l)) < 0)
            return rc;
        (void)before;
        if (out)
            tt_buf_add_json_string(out, s, l);
        return 0;
    }
    case TT_JT_NUMBER: {
        tt_jnum n;
        if ((rc = tt_jp_number(jp, &n)) < 0)
            return rc;
        if (out) {
            if (n.nonfinite) {
                tt_buf_addch(out, '"');
                tt_buf_add(out, n.text, n.len);
                tt_buf_addch(out, '"');
            } else {
                tt_buf_add(out, n.text, n.len);
            }
        }
        return 0;
    }
    case TT_JT_TRUE:
    case TT_JT_FALSE:
    case TT_JT_NULL: {
        enum tt_jtype t;
        if ((rc = tt_jp_literal(jp, &t)) < 0)
            return rc;
        if (out)
            tt_buf_addstr(out, t == TT_JT_TRUE ? "true"
                               : t == TT_JT_FALSE ? "false" : "null");
        return 0;
    }
    default:
        return jp_err(jp, "expected a value");
    }
}

int tt_jp_skip(tt_jp *jp)
{
    tt_arena scratch = TT_ARENA_INIT;
    int rc = value(jp, NULL, &scratch);
    tt_arena_release(&scratch);
    return rc;
}

int tt_jp_minify(tt_jp *jp, tt_buf *out)
{
    tt_arena scratch = TT_ARENA_INIT;
    int rc = value(jp, out, &scratch);
    tt_arena_release(&scratch);
    if (rc == 0 && out->oom)
        rc = tt__oom();
    return rc;
}

int tt_jp_finish(tt_jp *jp)
{
    ws(jp);
    if (jp->p < jp->end)
        return jp_err(jp, "unexpected data after value");
    return 0;
}

int tt_parse_i64(const char *text, size_t len, int64_t *out)
{
    const char *p = text, *e = text + len;
    int neg = 0;
    uint64_t acc = 0;
    if (p < e && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    if (p >= e)
        return TT_EINVALID;
    for (; p < e; p++) {
        unsigned d;
        if (*p < '0' || *p > '9')
            return TT_EINVALID;
        d = (unsigned)(*p - '0');
        if (acc > (UINT64_MAX - d) / 10)
            return TT_EINVALID;
        acc = acc * 10 + d;
    }
    if (!neg && acc > (uint64_t)INT64_MAX)
        return TT_EINVALID;
    if (neg && acc > (uint64_t)INT64_MAX + 1)
        return TT_EINVALID;
    *out = neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc)
               : (int64_t)acc;
    return 0;
}

int tt_us_text_to_ns(const char *text, size_t len, int64_t *ns)
{
    const char *p = text, *e = text + len;
    int neg = 0, digits = 0, fd = 0;
    uint64_t ip = 0, frac = 0;
    int round_up = 0;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (p < e && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    while (p < e && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (ip > (UINT64_MAX - d) / 10)
            return TT_EINVALID;
        ip = ip * 10 + d;
        p++;
        digits++;
    }
    if (p < e && *p == '.') {
        p++;
        fd = frac_digits(&p, e, &frac, &round_up);
        digits += fd;
    }
    if (!digits)
        return TT_EINVALID;
    if (p < e && (*p == 'e' || *p == 'E')) {
        /* exponent form: go through double (rare; precision is that of a double) */
        char tmp[64];
        double d;
        char *endp;
        size_t n = len < sizeof(tmp) - 1 ? len : sizeof(tmp) - 1;
        memcpy(tmp, text, n);
        tmp[n] = '\0';
        errno = 0;
        d = strtod(tmp, &endp);
        while (*endp == ' ' || *endp == '\t')
            endp++;
        if (errno || *endp || n != len || !isfinite(d) || fabs(d * 1000.0) > 9.2e18)
            return TT_EINVALID;
        *ns = (int64_t)llround(d * 1000.0);
        return 0;
    }
    if (p != e)
        return TT_EINVALID;
    while (fd < 3) {
        frac *= 10;
        fd++;
    }
    if (ip > (uint64_t)(INT64_MAX / 1000) - 1)
        return TT_EINVALID;
    {
        int64_t v = (int64_t)(ip * 1000 + frac + (uint64_t)round_up);
        *ns = neg ? -v : v;
    }
    return 0;
}
