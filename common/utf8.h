/*
 * common/utf8.h - the length of a valid UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), for the JSON
 * reader's repairs and the capture library's writer. Internal.
 */
#ifndef TT_COMMON_UTF8_H
#define TT_COMMON_UTF8_H

#include <stdint.h>

/* Length of a valid UTF-8 sequence at p (1..4), or 0 if invalid; end is one
 * past the last byte that may be read. */
static inline int tt_utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    int n, i;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (end - p < n)
        return 0;
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

#endif
