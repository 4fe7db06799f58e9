/*
 * export/export_out.c - the JSON pieces of `tracetool export` (export_out.h).
 */
#include "common/compat.h"
#include "export/export_out.h"

#include <inttypes.h>

void xb_u64(tt_buf *b, uint64_t u)
{
    char t[24];
    size_t k = sizeof(t);
    do {
        t[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    bput(b, t + k, sizeof(t) - k);
}

void xb_i64(tt_buf *b, int64_t v)
{
    if (v < 0) {
        BPUTS(b, "-");
        xb_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        xb_u64(b, (uint64_t)v);
    }
}

/* ns as exact decimal us: 1500 -> 1.5, 2000 -> 2, -1 -> -0.001 */
void xb_us(tt_buf *b, int64_t ns)
{
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(u % 1000);
    if (ns < 0)
        BPUTS(b, "-");
    xb_u64(b, u / 1000);
    if (frac) {
        char t[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                      (char)('0' + frac % 10) };
        size_t n = 4;
        while (t[n - 1] == '0')
            n--;
        bput(b, t, n);
    }
}

void xo_str(tt_out *o, const char *s)
{
    tt_buf_add_json_string(&o->b, s, strlen(s));
}
