/*
 * formats/kernel_family.c - the family of a GPU kernel name, so that the same
 * kernel matches across library versions, architectures and tile choices
 * (docs/DIFF.md, "Keys"): what HTA's shorten_name drops (return type,
 * parameter list, template arguments) plus architecture prefixes, tile and
 * layout tokens, Triton's numeric suffix, and NCCL kernels keyed by
 * collective and data type from either naming scheme. What a kernel's name
 * means lives here, beside kineto.c, for every analysis (diff keys kernels by
 * it, breakdown groups by it).
 */
#include "common/compat.h"
#include "tracetool/formats.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
static void fam_put(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
    while (len-- && *n + 1 < cap)
        out[(*n)++] = *s++;
    out[*n < cap ? *n : cap - 1] = '\0';
}

static const char *dtype_short(const char *t, size_t len)
{
    static const char *const map[][2] = {
        { "float", "f32" },  { "f32", "f32" },     { "half", "f16" },   { "f16", "f16" },
        { "double", "f64" }, { "f64", "f64" },     { "bfloat16", "bf16" }, { "bf16", "bf16" },
        { "__nv_bfloat16", "bf16" }, { "int8_t", "i8" }, { "i8", "i8" }, { "uint8_t", "u8" },
        { "u8", "u8" },      { "int32_t", "i32" }, { "i32", "i32" },    { "uint32_t", "u32" },
        { "u32", "u32" },    { "int64_t", "i64" }, { "i64", "i64" },    { "uint64_t", "u64" },
        { "u64", "u64" },    { "fp8_e4m3", "f8e4m3" }, { "fp8_e5m2", "f8e5m2" },
    };
    size_t k;
    for (k = 0; k < sizeof(map) / sizeof(map[0]); k++)
        if (strlen(map[k][0]) == len && !strncmp(map[k][0], t, len))
            return map[k][1];
    return NULL;
}

/* the '_'-separated fields of s (up to '(' or the end) */
static size_t fields(const char *s, const char *f[], size_t flen[], size_t max)
{
    size_t n = 0;
    while (*s && *s != '(' && n < max) {
        const char *e = s;
        while (*e && *e != '_' && *e != '(')
            e++;
        f[n] = s;
        flen[n++] = (size_t)(e - s);
        s = *e == '_' ? e + 1 : e;
    }
    return n;
}

/* nccl:<collective>:<dtype>; 0 when name is not an NCCL kernel */
static int nccl_family(const char *name, char *out, size_t cap)
{
    const char *f[12], *coll = NULL, *ty = NULL;
    size_t fl[12], nf, n = 0, k, cl = 0, tl = 0;
    if (!strncmp(name, "ncclKernel_", 11))
        nf = fields(name + 11, f, fl, 12);
    else if (!strncmp(name, "ncclDevKernel_", 14))
        nf = fields(name + 14, f, fl, 12);
    else
        return 0;
    if (nf) {
        coll = f[0];
        cl = fl[0];
    }
    /* the data type: the last field that is one (both schemes put it after
     * the reduction op; the algorithm and protocol are not types) */
    for (k = 1; k < nf; k++) {
        /* int8_t, uint64_t: a type with an underscore spans two fields */
        size_t len = k + 1 < nf && fl[k + 1] == 1 && f[k + 1][0] == 't' ? fl[k] + 2 : fl[k];
        if (dtype_short(f[k], len)) {
            ty = dtype_short(f[k], len);
            tl = strlen(ty);
        }
    }
    fam_put(out, cap, &n, "nccl:", 5);
    for (k = 0; k < cl; k++) {
        char c = (char)tolower((unsigned char)coll[k]);
        fam_put(out, cap, &n, &c, 1);
    }
    if (!cl)
        fam_put(out, cap, &n, "generic", 7);
    if (ty) {
        fam_put(out, cap, &n, ":", 1);
        fam_put(out, cap, &n, ty, tl);
    }
    return 1;
}

static int is_arch(const char *s, size_t len)
{
    static const char *const arch[] = { "ampere", "volta", "turing", "hopper", "maxwell",
                                        "pascal", "kepler", "blackwell" };
    size_t k;
    for (k = 0; k < sizeof(arch) / sizeof(arch[0]); k++)
        if (strlen(arch[k]) == len && !strncmp(arch[k], s, len))
            return 1;
    if (len > 2 && s[0] == 's' && s[1] == 'm') {
        for (k = 2; k < len && isdigit((unsigned char)s[k]); k++)
            ;
        return k == len;
    }
    return 0;
}

/* 128x64, 32x1x1, nn/nt/tn/tt, align8, sliced1x4 */
static int is_tile(const char *s, size_t len)
{
    size_t k = 0, groups = 0;
    if (len == 2 && (s[0] == 'n' || s[0] == 't') && (s[1] == 'n' || s[1] == 't'))
        return 1;
    if (len > 5 && !strncmp(s, "align", 5)) {
        for (k = 5; k < len && isdigit((unsigned char)s[k]); k++)
            ;
        return k == len;
    }
    if (len > 6 && !strncmp(s, "sliced", 6))
        k = 6;
    while (k < len) {
        size_t d = k;
        while (k < len && isdigit((unsigned char)s[k]))
            k++;
        if (k == d)
            return 0;
        groups++;
        if (k < len && s[k] != 'x')
            return 0;
        if (k < len)
            k++;
    }
    return groups >= 2;
}

/* name without "(anonymous namespace)::", its parameter list and template
 * arguments, and its return type */
static void strip_signature(const char *name, char *out, size_t cap)
{
    size_t n = 0, i, depth = 0, start = 0;
    int sig = 0;
    char *sp;
    for (i = 0; name[i] && n + 1 < cap; i++) {
        if (name[i] == '(' && !strncmp(name + i, "(anonymous namespace)::", 23)) {
            i += 22;
            continue;
        }
        if (name[i] == '<') {
            depth++;
            continue;
        }
        if (name[i] == '>' && depth) {
            depth--;
            continue;
        }
        if (depth)
            continue;
        if (name[i] == '(') {
            sig = 1;
            break;
        }
        out[n++] = name[i];
    }
    out[n] = '\0';
    while (n && out[n - 1] == ' ')
        out[--n] = '\0';
    /* a signature's return type: "void at::native::f" -> "at::native::f" */
    if (sig && (sp = strrchr(out, ' ')))
        start = (size_t)(sp - out) + 1;
    memmove(out, out + start, n - start + 1);
}

void tt_kernel_family(const char *name, char *out, size_t cap)
{
    char *base, *s;
    const char *f[64];
    size_t fl[64], nf, k, n = 0, last;
    int prev_tile = 0;
    if (!cap)
        return;
    out[0] = '\0';
    if (!name)
        return;
    if (nccl_family(name, out, cap))
        return;
    if (!(s = malloc(strlen(name) + 1)))
        return;
    strip_signature(name, s, strlen(name) + 1);
    /* the last component carries the tokens; namespaces kept as they are */
    base = strrchr(s, ':');
    base = base ? base + 1 : s;
    fam_put(out, cap, &n, s, (size_t)(base - s));
    nf = fields(base, f, fl, 64);
    /* Triton: triton_poi_fused_add_0 -> triton_poi_fused_add */
    last = nf;
    if (nf > 2 && !strncmp(base, "triton_", 7)) {
        for (k = 0; k < fl[nf - 1] && isdigit((unsigned char)f[nf - 1][k]); k++)
            ;
        if (k == fl[nf - 1] && k)
            last = nf - 1;
    }
    for (k = 0; k < last; k++) {
        const char *tok = f[k];
        size_t len = fl[k];
        int tile = 0;
        if (k == 0 && is_arch(tok, len)) {
            tok = "ARCH";
            len = 4;
        } else if (is_tile(tok, len)) {
            tile = 1;
            tok = "TILE";
            len = 4;
        }
        if (tile && prev_tile)
            continue;
        if (k)
            fam_put(out, cap, &n, "_", 1);
        fam_put(out, cap, &n, tok, len);
        prev_tile = tile;
    }
    free(s);
}
