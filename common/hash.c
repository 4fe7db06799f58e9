/*
 * common/hash.c - the tt_hash content hash (see hash.h).
 */
#include "common/compat.h"
#include "common/hash.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL

static inline uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t round1(uint64_t acc, uint64_t in)
{
    acc += in * P2;
    acc = rotl(acc, 31);
    return acc * P1;
}

void tt_hash_init(tt_hash *h)
{
    h->v[0] = P1 + P2;
    h->v[1] = P2;
    h->v[2] = 0;
    h->v[3] = (uint64_t)0 - P1;
    h->total = 0;
    h->ntail = 0;
}

static void stripes(tt_hash *h, const unsigned char *p, size_t n)
{
    uint64_t a = h->v[0], b = h->v[1], c = h->v[2], d = h->v[3];
    for (; n >= 32; n -= 32, p += 32) {
        a = round1(a, rd64(p));
        b = round1(b, rd64(p + 8));
        c = round1(c, rd64(p + 16));
        d = round1(d, rd64(p + 24));
    }
    h->v[0] = a;
    h->v[1] = b;
    h->v[2] = c;
    h->v[3] = d;
}

void tt_hash_update(tt_hash *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    h->total += len;
    if (h->ntail) {
        size_t take = 32 - h->ntail;
        if (take > len)
            take = len;
        memcpy(h->tail + h->ntail, p, take);
        h->ntail += take;
        p += take;
        len -= take;
        if (h->ntail < 32)
            return;
        stripes(h, h->tail, 32);
        h->ntail = 0;
    }
    if (len >= 32) {
        size_t n = len & ~(size_t)31;
        stripes(h, p, n);
        p += n;
        len -= n;
    }
    if (len) {
        memcpy(h->tail, p, len);
        h->ntail = len;
    }
}

static uint64_t avalanche(uint64_t x)
{
    x ^= x >> 33;
    x *= P2;
    x ^= x >> 29;
    x *= P3;
    x ^= x >> 32;
    return x;
}

void tt_hash_final_hex(tt_hash *h, char out[33])
{
    uint64_t a = h->v[0], b = h->v[1], c = h->v[2], d = h->v[3];
    uint64_t x, y;
    size_t i;
    for (i = 0; i < h->ntail; i++) {
        a = round1(a, (uint64_t)h->tail[i] + ((uint64_t)i << 8));
        c = round1(c, (uint64_t)h->tail[i] ^ P3);
    }
    x = avalanche(rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) +
                  h->total * P3);
    y = avalanche((a ^ rotl(d, 29)) + (b * P1) + (c ^ h->total) + P2);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)x,
             (unsigned long long)y);
}
