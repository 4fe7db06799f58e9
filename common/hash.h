/*
 * common/hash.h - streaming 128-bit content hash used to recognise a trace
 * already ingested. Not cryptographic: four 64-bit multiply-rotate lanes over
 * 32-byte stripes, then a final avalanche. Written for tracetool.
 */
#ifndef TT_COMMON_HASH_H
#define TT_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct tt_hash {
    uint64_t v[4];
    uint64_t total;
    unsigned char tail[32];
    size_t ntail;
} tt_hash;

/* a 64-bit finaliser (MurmurHash3's fmix64): every input bit moves every
 * output bit, for hash tables keyed by ids that share their low bits */
static inline uint64_t tt_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

void tt_hash_init(tt_hash *h);
void tt_hash_update(tt_hash *h, const void *data, size_t len);
/* Writes 32 lowercase hex digits and a NUL into out[33]. */
void tt_hash_final_hex(tt_hash *h, char out[33]);

#endif
