/*
 * export/export_out.c - the JSON pieces of `tracetool export` (export_out.h).
 */
#include "common/compat.h"
#include "export/export_out.h"

#include <inttypes.h>

/* the text of v, ending at end: where it starts */
static char *i64_at(char *end, int64_t v)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--end = '-';
    return end;
}

/* the text of ns as us, ending at end: where it starts */
static char *us_at(char *end, int64_t ns)
{
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(u % 1000);
    if (frac) {
        int n = frac % 100 ? frac % 10 ? 3 : 2 : 1; /* decimals without trailing zeros */
        int k;
        for (k = 3; k > n; k--)
            frac /= 10;
        for (k = 0; k < n; k++, frac /= 10)
            *--end = (char)('0' + frac % 10);
        *--end = '.';
    }
    u /= 1000;
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (ns < 0)
        *--end = '-';
    return end;
}

size_t tt__xp_i64_text(char *t, int64_t v)
{
    char d[TT_XP_NUM], *p = i64_at(d + sizeof(d), v);
    memcpy(t, p, (size_t)(d + sizeof(d) - p));
    return (size_t)(d + sizeof(d) - p);
}

void xb_i64(tt_buf *b, int64_t v)
{
    char d[TT_XP_NUM], *p = i64_at(d + sizeof(d), v);
    bput(b, p, (size_t)(d + sizeof(d) - p));
}

void xb_us(tt_buf *b, int64_t ns)
{
    char d[TT_XP_NUM + 4], *p = us_at(d + sizeof(d), ns);
    bput(b, p, (size_t)(d + sizeof(d) - p));
}

void xj_i64(tt_jw *w, int64_t v)
{
    char d[TT_XP_NUM], *p = i64_at(d + sizeof(d), v);
    tt_jw_raw(w, p, (size_t)(d + sizeof(d) - p));
}

void xj_us(tt_jw *w, int64_t ns)
{
    char d[TT_XP_NUM + 4], *p = us_at(d + sizeof(d), ns);
    tt_jw_raw(w, p, (size_t)(d + sizeof(d) - p));
}
