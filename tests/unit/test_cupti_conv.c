/*
 * tests/unit/test_cupti_conv.c - CUPTI records into Kineto's GPU events
 * (capture/src/cupti_conv.c, capture/src/gpu_out.c).
 *
 * The records of tests/fixtures/capture/cupti_records.json are built in
 * CUPTI's own structs (cupti_activity.h of the toolkit built with), packed
 * into a buffer as CUPTI lays one out (each record its struct's size, 8-byte
 * aligned: libcupti 13 walks them so, checked here), walked with libcupti's
 * cuptiActivityGetNextRecord, converted, and written. The events written are
 * compared, parsed, value by value and key by key in order, with
 * cupti_expect.json, which cupti_expect.py computes from the same records by
 * Kineto's rules (written from Kineto's source, not from this code).
 *
 * Skipped (never passed) without the CUDA headers or when libcupti cannot
 * be loaded.
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "capture/src/gpu.h"
#include "common/arena.h"
#include "formats/json.h"
#include "tracetool/analyze.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIXTURES TT_TESTDATA "/../tests/fixtures/capture/"

#ifndef TT_HAVE_CUPTI

static void need_cupti(void)
{
    cr_skip_test("built without the CUDA toolkit's CUPTI headers");
}

#else

#include <cupti.h>

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* ---- comparing two JSON values: types, keys in order, strings, numbers ---- */

static char comm[64];

static int cmp_value(tt_jp *x, tt_jp *y, tt_arena *a, const char *path);

static int cmp_number(tt_jp *x, tt_jp *y, const char *path)
{
    tt_jnum p, q;
    char s1[64], s2[64];
    cr_assert_eq(tt_jp_number(x, &p), 0);
    cr_assert_eq(tt_jp_number(y, &q), 0);
    if (p.len == q.len && !memcmp(p.text, q.text, p.len))
        return 0;
    if (p.is_int && q.is_int && p.fits && q.fits)
        return p.i == q.i ? 0 : -1;
    if (p.len >= sizeof(s1) || q.len >= sizeof(s2))
        return -1;
    memcpy(s1, p.text, p.len);
    s1[p.len] = 0;
    memcpy(s2, q.text, q.len);
    s2[q.len] = 0;
    if (strtod(s1, NULL) == strtod(s2, NULL))
        return 0;
    cr_log_error("%s: expected %s, written %s", path, s1, s2);
    return -1;
}

static int cmp_string(tt_jp *x, tt_jp *y, tt_arena *a, const char *path)
{
    const char *s, *t;
    size_t n, m;
    cr_assert_eq(tt_jp_string(x, a, &s, &n), 0);
    cr_assert_eq(tt_jp_string(y, a, &t, &m), 0);
    if (n == 6 && !memcmp(s, "@comm@", 6)) { /* the process's name: this test's */
        s = comm;
        n = strlen(comm);
    }
    if (n == m && !memcmp(s, t, n))
        return 0;
    cr_log_error("%s: expected \"%.*s\", written \"%.*s\"", path, (int)n, s, (int)m, t);
    return -1;
}

static int cmp_object(tt_jp *x, tt_jp *y, tt_arena *a, const char *path)
{
    char sub[512];
    int bad = 0, rx, ry;
    cr_assert_eq(tt_jp_object_begin(x), 0);
    cr_assert_eq(tt_jp_object_begin(y), 0);
    for (;;) {
        const char *k1 = NULL, *k2 = NULL;
        size_t l1 = 0, l2 = 0;
        rx = tt_jp_object_next(x, a, &k1, &l1);
        ry = tt_jp_object_next(y, a, &k2, &l2);
        cr_assert(rx >= 0 && ry >= 0, "%s: bad JSON", path);
        if (!rx || !ry) {
            if (rx != ry)
                cr_log_error("%s: %s", path, rx ? "a key is missing" : "an extra key");
            return bad || rx != ry ? -1 : 0;
        }
        if (l1 != l2 || memcmp(k1, k2, l1)) {
            cr_log_error("%s: expected key \"%.*s\", written \"%.*s\"", path, (int)l1, k1,
                         (int)l2, k2);
            return -1;
        }
        snprintf(sub, sizeof(sub), "%s.%.*s", path, (int)l1, k1);
        bad |= cmp_value(x, y, a, sub);
    }
}

static int cmp_array(tt_jp *x, tt_jp *y, tt_arena *a, const char *path)
{
    char sub[512];
    int bad = 0, rx, ry, i;
    cr_assert_eq(tt_jp_array_begin(x), 0);
    cr_assert_eq(tt_jp_array_begin(y), 0);
    for (i = 0;; i++) {
        rx = tt_jp_array_next(x);
        ry = tt_jp_array_next(y);
        cr_assert(rx >= 0 && ry >= 0, "%s: bad JSON", path);
        if (!rx || !ry) {
            if (rx != ry)
                cr_log_error("%s: %s at [%d]", path, rx ? "too few elements" : "too many", i);
            return bad || rx != ry ? -1 : 0;
        }
        snprintf(sub, sizeof(sub), "%s[%d]", path, i);
        bad |= cmp_value(x, y, a, sub);
    }
}

static int cmp_value(tt_jp *x, tt_jp *y, tt_arena *a, const char *path)
{
    enum tt_jtype tx = tt_jp_peek(x), ty = tt_jp_peek(y), l;
    if (tx != ty) {
        cr_log_error("%s: expected JSON type %d, written %d", path, tx, ty);
        return -1;
    }
    switch (tx) {
    case TT_JT_OBJECT:
        return cmp_object(x, y, a, path);
    case TT_JT_ARRAY:
        return cmp_array(x, y, a, path);
    case TT_JT_STRING:
        return cmp_string(x, y, a, path);
    case TT_JT_NUMBER:
        return cmp_number(x, y, path);
    default:
        cr_assert_eq(tt_jp_literal(x, &l), 0);
        cr_assert_eq(tt_jp_literal(y, &l), 0);
        return 0;
    }
}

/* the expected document's value at top-level key `key` against all of `path` */
static void compare_with(const char *expect, size_t elen, const char *key, const char *path)
{
    size_t alen;
    char *act = read_all(path, &alen);
    tt_arena a = TT_ARENA_INIT;
    tt_jp x, y;
    const char *k;
    size_t kl;
    int r, found = 0;
    tt_jp_init(&x, "cupti_expect.json", expect, 0, expect, elen);
    tt_jp_init(&y, path, act, 0, act, alen);
    cr_assert_eq(tt_jp_object_begin(&x), 0);
    while ((r = tt_jp_object_next(&x, &a, &k, &kl)) == 1) {
        if (kl != strlen(key) || memcmp(k, key, kl)) {
            cr_assert_eq(tt_jp_skip(&x), 0);
            continue;
        }
        found = 1;
        cr_expect_eq(cmp_value(&x, &y, &a, key), 0, "the %s written differ from Kineto's", key);
        cr_assert_eq(tt_jp_finish(&y), 0, "%s: not one JSON value", path);
        cr_expect_eq(y.repairs, 0, "%s: JSON needing repairs (NaN, bad UTF-8, ...)", path);
        break;
    }
    cr_assert(found, "no \"%s\" in cupti_expect.json", key);
    tt_arena_release(&a);
    free(act);
}

static struct {
    CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*cbname)(CUpti_CallbackDomain, uint32_t, const char **);
} cupti;

/* NULL, or why libcupti cannot be used */
static const char *load_cupti(void)
{
    static const char *const names[] = { TT_CUDA_ROOT "/lib64/libcupti.so",
                                         TT_CUDA_ROOT "/lib/libcupti.so", "libcupti.so.13",
                                         "libcupti.so" };
    void *h = NULL;
    size_t i;
    for (i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return "libcupti cannot be loaded";
    *(void **)&cupti.next = dlsym(h, "cuptiActivityGetNextRecord");
    *(void **)&cupti.cbname = dlsym(h, "cuptiGetCallbackName");
    if (!cupti.next || !cupti.cbname)
        return "this libcupti lacks cuptiActivityGetNextRecord / cuptiGetCallbackName";
    return NULL;
}

static void need_cupti(void)
{
    const char *why = load_cupti();
    if (why)
        cr_skip_test("%s", why);
}

static int callback_name(int domain, uint32_t cbid, const char **name)
{
    return cupti.cbname((CUpti_CallbackDomain)domain, cbid, name) == CUPTI_SUCCESS && *name ? 0
                                                                                           : -1;
}

/* ---- cupti_records.json ---- */

struct kv {
    char key[32];
    int64_t i;
    char *s;
};

struct rec {
    char kind[16];
    struct kv kv[48];
    int n;
};

static struct {
    struct rec rec[64];
    int nrec;
    int64_t t_lo, t_hi, mono_to_unix, base, ev_idx;
    uint32_t tid_from[8], tid_to[8];
    int ntid;
} doc;

static const struct kv *find(const struct rec *r, const char *key)
{
    int i;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->kv[i].key, key))
            return &r->kv[i];
    return NULL;
}

static int64_t geti(const struct rec *r, const char *key)
{
    const struct kv *v = find(r, key);
    cr_assert(v, "a %s record has no \"%s\"", r->kind, key);
    return v->i;
}

static char *gets_(const struct rec *r, const char *key)
{
    const struct kv *v = find(r, key);
    return v ? v->s : NULL;
}

/* a flat object: numbers and strings kept, the rest skipped */
static void read_flat(tt_jp *jp, tt_arena *a, struct rec *r)
{
    const char *k, *s;
    size_t kl, sl;
    tt_jnum num;
    cr_assert_eq(tt_jp_object_begin(jp), 0);
    while (tt_jp_object_next(jp, a, &k, &kl) == 1) {
        struct kv *v = &r->kv[r->n];
        enum tt_jtype t = tt_jp_peek(jp);
        cr_assert(r->n < 48 && kl < sizeof(v->key));
        memcpy(v->key, k, kl);
        v->key[kl] = 0;
        if (t == TT_JT_NUMBER) {
            cr_assert_eq(tt_jp_number(jp, &num), 0);
            cr_assert(num.fits);
            v->i = num.i;
            r->n++;
        } else if (t == TT_JT_STRING) {
            cr_assert_eq(tt_jp_string(jp, a, &s, &sl), 0);
            v->s = strndup(s, sl);
            if (!strcmp(v->key, "kind"))
                snprintf(r->kind, sizeof(r->kind), "%s", v->s);
            r->n++;
        } else {
            cr_assert_eq(tt_jp_skip(jp), 0);
        }
    }
}

static void read_records(void)
{
    size_t len, kl;
    char *text = read_all(FIXTURES "cupti_records.json", &len);
    tt_arena a = TT_ARENA_INIT;
    const char *k;
    tt_jp jp;
    memset(&doc, 0, sizeof(doc));
    tt_jp_init(&jp, "cupti_records.json", text, 0, text, len);
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    while (tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
        if (kl == 7 && !memcmp(k, "records", 7)) {
            cr_assert_eq(tt_jp_array_begin(&jp), 0);
            while (tt_jp_array_next(&jp) == 1) {
                cr_assert(doc.nrec < 64);
                read_flat(&jp, &a, &doc.rec[doc.nrec++]);
            }
        } else if (kl == 6 && !memcmp(k, "window", 6)) {
            struct rec w;
            memset(&w, 0, sizeof(w));
            read_flat(&jp, &a, &w);
            doc.t_lo = geti(&w, "t_lo");
            doc.t_hi = geti(&w, "t_hi");
            doc.mono_to_unix = geti(&w, "mono_to_unix");
            doc.base = geti(&w, "base");
            doc.ev_idx = geti(&w, "ev_idx");
        } else if (kl == 7 && !memcmp(k, "tid_map", 7)) {
            int64_t v[2];
            cr_assert_eq(tt_jp_array_begin(&jp), 0);
            while (tt_jp_array_next(&jp) == 1) {
                cr_assert_eq(tt_jp_array_begin(&jp), 0);
                cr_assert(tt_jp_array_next(&jp) == 1 && tt_jp_int_fast(&jp, &v[0]) == 0);
                cr_assert(tt_jp_array_next(&jp) == 1 && tt_jp_int_fast(&jp, &v[1]) == 0);
                cr_assert_eq(tt_jp_array_next(&jp), 0);
                doc.tid_from[doc.ntid] = (uint32_t)v[0];
                doc.tid_to[doc.ntid++] = (uint32_t)v[1];
            }
        } else {
            cr_assert_eq(tt_jp_skip(&jp), 0);
        }
    }
    tt_arena_release(&a);
    free(text);
}

static void free_records(void)
{
    int i, j;
    for (i = 0; i < doc.nrec; i++)
        for (j = 0; j < doc.rec[i].n; j++)
            free(doc.rec[i].kv[j].s);
    doc.nrec = 0;
}

static uint32_t map_tid(uint32_t t)
{
    int i;
    for (i = 0; i < doc.ntid; i++)
        if (doc.tid_from[i] == t)
            return doc.tid_to[i];
    return 0;
}

/* ---- records in CUPTI's structs ---- */

static size_t pack_api(uint8_t *p, const struct rec *r, int driver)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof(a));
    a.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = (CUpti_CallbackId)geti(r, "cbid");
    a.start = (uint64_t)geti(r, "start");
    a.end = (uint64_t)geti(r, "end");
    a.processId = (uint32_t)geti(r, "pid");
    a.threadId = (uint32_t)geti(r, "tid");
    a.correlationId = (uint32_t)geti(r, "correlation");
    memcpy(p, &a, sizeof(a));
    return sizeof(a);
}

static size_t pack_kernel(uint8_t *p, const struct rec *r)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.registersPerThread = (uint16_t)geti(r, "regs");
    k.start = (uint64_t)geti(r, "start");
    k.end = (uint64_t)geti(r, "end");
    k.deviceId = (uint32_t)geti(r, "device");
    k.contextId = (uint32_t)geti(r, "context");
    k.streamId = (uint32_t)geti(r, "stream");
    k.gridX = (int32_t)geti(r, "grid_x");
    k.gridY = (int32_t)geti(r, "grid_y");
    k.gridZ = (int32_t)geti(r, "grid_z");
    k.blockX = (int32_t)geti(r, "block_x");
    k.blockY = (int32_t)geti(r, "block_y");
    k.blockZ = (int32_t)geti(r, "block_z");
    k.staticSharedMemory = (int32_t)geti(r, "static_smem");
    k.dynamicSharedMemory = (int32_t)geti(r, "dynamic_smem");
    k.correlationId = (uint32_t)geti(r, "correlation");
    k.name = gets_(r, "name");
    k.queued = CUPTI_TIMESTAMP_UNKNOWN;
    memcpy(p, &k, sizeof(k));
    return sizeof(k);
}

static size_t pack_copy(uint8_t *p, const struct rec *r)
{
    CUpti_ActivityMemcpy6 c;
    CUpti_ActivityMemcpyPtoP4 q;
    if (!strcmp(r->kind, "memcpy")) {
        memset(&c, 0, sizeof(c));
        c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        c.copyKind = (uint8_t)geti(r, "copy_kind");
        c.srcKind = (uint8_t)geti(r, "src_kind");
        c.dstKind = (uint8_t)geti(r, "dst_kind");
        c.bytes = (uint64_t)geti(r, "bytes");
        c.start = (uint64_t)geti(r, "start");
        c.end = (uint64_t)geti(r, "end");
        c.deviceId = (uint32_t)geti(r, "device");
        c.contextId = (uint32_t)geti(r, "context");
        c.streamId = (uint32_t)geti(r, "stream");
        c.correlationId = (uint32_t)geti(r, "correlation");
        memcpy(p, &c, sizeof(c));
        return sizeof(c);
    }
    memset(&q, 0, sizeof(q));
    q.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    q.copyKind = (uint8_t)geti(r, "copy_kind");
    q.srcKind = (uint8_t)geti(r, "src_kind");
    q.dstKind = (uint8_t)geti(r, "dst_kind");
    q.bytes = (uint64_t)geti(r, "bytes");
    q.start = (uint64_t)geti(r, "start");
    q.end = (uint64_t)geti(r, "end");
    q.deviceId = (uint32_t)geti(r, "device");
    q.contextId = (uint32_t)geti(r, "context");
    q.streamId = (uint32_t)geti(r, "stream");
    q.srcDeviceId = (uint32_t)geti(r, "src_device");
    q.srcContextId = (uint32_t)geti(r, "src_context");
    q.dstDeviceId = (uint32_t)geti(r, "dst_device");
    q.dstContextId = (uint32_t)geti(r, "dst_context");
    q.correlationId = (uint32_t)geti(r, "correlation");
    memcpy(p, &q, sizeof(q));
    return sizeof(q);
}

static size_t pack_memset(uint8_t *p, const struct rec *r)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = (uint64_t)geti(r, "bytes");
    m.start = (uint64_t)geti(r, "start");
    m.end = (uint64_t)geti(r, "end");
    m.deviceId = (uint32_t)geti(r, "device");
    m.contextId = (uint32_t)geti(r, "context");
    m.streamId = (uint32_t)geti(r, "stream");
    m.correlationId = (uint32_t)geti(r, "correlation");
    m.memoryKind = (uint16_t)geti(r, "memory_kind");
    memcpy(p, &m, sizeof(m));
    return sizeof(m);
}

static size_t pack_memory(uint8_t *p, const struct rec *r)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = (CUpti_ActivityMemoryOperationType)geti(r, "op");
    m.memoryKind = (CUpti_ActivityMemoryKind)geti(r, "memory_kind");
    m.correlationId = (uint32_t)geti(r, "correlation");
    m.address = (uint64_t)geti(r, "address");
    m.bytes = (uint64_t)geti(r, "bytes");
    m.timestamp = (uint64_t)geti(r, "timestamp");
    m.processId = (uint32_t)geti(r, "pid");
    m.deviceId = (uint32_t)geti(r, "device");
    m.contextId = (uint32_t)geti(r, "context");
    m.streamId = (uint32_t)geti(r, "stream");
    memcpy(p, &m, sizeof(m));
    return sizeof(m);
}

static size_t pack_device(uint8_t *p, const struct rec *r)
{
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.globalMemorySize = (uint64_t)geti(r, "global_mem");
    d.numThreadsPerWarp = (uint32_t)geti(r, "warp_size");
    d.numMultiprocessors = (uint32_t)geti(r, "num_sms");
    d.maxWarpsPerMultiprocessor = (uint32_t)geti(r, "max_warps_per_sm");
    d.maxBlocksPerMultiprocessor = (uint32_t)geti(r, "max_blocks_per_sm");
    d.maxSharedMemoryPerMultiprocessor = (uint32_t)geti(r, "smem_per_sm");
    d.maxRegistersPerMultiprocessor = (uint32_t)geti(r, "regs_per_sm");
    d.maxRegistersPerBlock = (uint32_t)geti(r, "regs_per_block");
    d.maxSharedMemoryPerBlock = (uint32_t)geti(r, "smem_per_block");
    d.maxThreadsPerBlock = (uint32_t)geti(r, "max_threads_per_block");
    d.computeCapabilityMajor = (uint32_t)geti(r, "major");
    d.computeCapabilityMinor = (uint32_t)geti(r, "minor");
    d.id = (uint32_t)geti(r, "id");
    d.name = gets_(r, "name");
    memcpy(p, &d, sizeof(d));
    return sizeof(d);
}

static size_t pack_other(uint8_t *p, const struct rec *r)
{
    CUpti_ActivityExternalCorrelation x;
    CUpti_ActivityOverhead3 o;
    if (!strcmp(r->kind, "ext")) {
        memset(&x, 0, sizeof(x));
        x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        x.externalKind = (CUpti_ExternalCorrelationKind)geti(r, "ext_kind");
        x.externalId = (uint64_t)geti(r, "external_id");
        x.correlationId = (uint32_t)geti(r, "correlation");
        memcpy(p, &x, sizeof(x));
        return sizeof(x);
    }
    cr_assert_str_eq(r->kind, "overhead", "unknown record kind in cupti_records.json");
    memset(&o, 0, sizeof(o));
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD; /* a kind the converter does not know */
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER;
    o.start = (uint64_t)geti(r, "start");
    o.end = (uint64_t)geti(r, "end");
    memcpy(p, &o, sizeof(o));
    return sizeof(o);
}

static size_t pack(uint8_t *p, const struct rec *r)
{
    if (!strcmp(r->kind, "runtime") || !strcmp(r->kind, "driver"))
        return pack_api(p, r, !strcmp(r->kind, "driver"));
    if (!strcmp(r->kind, "kernel"))
        return pack_kernel(p, r);
    if (!strcmp(r->kind, "memcpy") || !strcmp(r->kind, "p2p"))
        return pack_copy(p, r);
    if (!strcmp(r->kind, "memset"))
        return pack_memset(p, r);
    if (!strcmp(r->kind, "memory"))
        return pack_memory(p, r);
    if (!strcmp(r->kind, "device"))
        return pack_device(p, r);
    return pack_other(p, r);
}

static _Alignas(8) uint8_t buffer[64 * 256];

/* the records, one after another as CUPTI's buffers hold them */
static size_t build_buffer(void)
{
    size_t used = 0, n;
    int i;
    for (i = 0; i < doc.nrec; i++) {
        cr_assert(used + 256 <= sizeof(buffer));
        n = pack(buffer + used, &doc.rec[i]);
        cr_assert_eq(n % 8, 0);
        used += n;
    }
    return used;
}

/* libcupti's walk of the buffer, each record converted; the records seen */
static int convert_all(struct gpu_store *s, size_t used, int *failures)
{
    struct gpu_names nm = { callback_name };
    CUpti_Activity *r = NULL;
    CUptiResult rc;
    int n = 0;
    *failures = 0;
    while ((rc = cupti.next(buffer, used, &r)) == CUPTI_SUCCESS) {
        *failures += tt_cap__gpu_convert(s, r, &nm) < 0;
        n++;
    }
    cr_assert_eq(rc, CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI's walk ended with %d", rc);
    return n;
}

/* the store's events as written, inside [ ] (fault: its allocations fail) */
static int write_events(struct gpu_store *s, const char *path, int64_t *ev_idx, int fault)
{
    struct out *o = tt_cap__out_open(path);
    int first = 1, rc;
    cr_assert(o, "cannot write %s", path);
    tt_cap__out_printf(o, "[");
    tt_cap__fault_alloc = fault;
    rc = tt_cap__gpu_write_events(o, s, doc.base, doc.mono_to_unix, doc.t_lo, doc.t_hi, ev_idx,
                                  &first);
    tt_cap__fault_alloc = 0;
    tt_cap__out_printf(o, "\n]\n");
    cr_assert_eq(tt_cap__out_close(o, rc == 0), rc == 0 ? 0 : -1);
    return rc;
}

static void setup(struct gpu_store *s, size_t max, size_t *used)
{
    FILE *f = fopen("/proc/self/comm", "r");
    size_t k = f ? fread(comm, 1, sizeof(comm) - 1, f) : 0;
    if (f)
        fclose(f);
    while (k && comm[k - 1] == '\n')
        k--;
    comm[k] = 0;
    need_cupti();
    read_records();
    *used = build_buffer();
    tt_cap__gpu_store_init(s, max);
    s->map_tid = map_tid;
}

/* an int at expect[section][key] */
static int64_t expected_in(const char *expect, size_t len, const char *section, const char *key)
{
    tt_arena a = TT_ARENA_INIT;
    tt_jp jp;
    const char *k;
    size_t kl;
    int64_t v = -1;
    tt_jp_init(&jp, "cupti_expect.json", expect, 0, expect, len);
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    while (tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
        if (kl == strlen(section) && !memcmp(k, section, kl)) {
            struct rec r;
            memset(&r, 0, sizeof(r));
            read_flat(&jp, &a, &r);
            v = geti(&r, key);
            break;
        }
        cr_assert_eq(tt_jp_skip(&jp), 0);
    }
    tt_arena_release(&a);
    return v;
}

static void check_external_ids(const struct gpu_store *s, const char *expect, size_t len)
{
    tt_arena a = TT_ARENA_INIT;
    tt_jp jp;
    const char *k;
    size_t kl;
    int64_t v[2];
    int n = 0;
    tt_jp_init(&jp, "cupti_expect.json", expect, 0, expect, len);
    cr_assert_eq(tt_jp_object_begin(&jp), 0);
    while (tt_jp_object_next(&jp, &a, &k, &kl) == 1) {
        if (kl != 12 || memcmp(k, "external_ids", 12)) {
            cr_assert_eq(tt_jp_skip(&jp), 0);
            continue;
        }
        cr_assert_eq(tt_jp_array_begin(&jp), 0);
        while (tt_jp_array_next(&jp) == 1) {
            cr_assert_eq(tt_jp_array_begin(&jp), 0);
            cr_assert(tt_jp_array_next(&jp) == 1 && tt_jp_int_fast(&jp, &v[0]) == 0);
            cr_assert(tt_jp_array_next(&jp) == 1 && tt_jp_int_fast(&jp, &v[1]) == 0);
            cr_assert_eq(tt_jp_array_next(&jp), 0);
            cr_expect_eq(tt_cap__gpu_external_id(s, (uint32_t)v[0]), (uint64_t)v[1],
                         "External id of correlation %lld", (long long)v[0]);
            n++;
        }
        break;
    }
    cr_assert_gt(n, 0);
    tt_arena_release(&a);
}

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char path[128];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/tt_cupti_XXXXXX");
        cr_assert(mkdtemp(tmpdir));
    }
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    return path;
}

static void tmp_clean(void)
{
    char path[128];
    if (!tmpdir[0])
        return;
    snprintf(path, sizeof(path), "%s/events.json", tmpdir);
    remove(path);
    snprintf(path, sizeof(path), "%s/devices.json", tmpdir);
    remove(path);
    rmdir(tmpdir);
}

static int64_t expected_counter(const char *expect, size_t len, const char *key)
{
    return expected_in(expect, len, "counters", key);
}

#endif /* TT_HAVE_CUPTI */

Test(cupti_conv, kineto_events)
{
#ifndef TT_HAVE_CUPTI
    need_cupti();
#else
    struct gpu_store s;
    size_t used, elen;
    char *expect = read_all(FIXTURES "cupti_expect.json", &elen);
    int64_t ev_idx;
    int failures, i;
    struct out *o;
    setup(&s, 0, &used);
    cr_assert_eq(convert_all(&s, used, &failures), doc.nrec, "libcupti's walk skipped records");
    cr_assert_eq(failures, 0);
    ev_idx = doc.ev_idx;
    cr_assert_eq(write_events(&s, tmp_path("events.json"), &ev_idx, 0), 0);
    compare_with(expect, elen, "events", tmp_path("events.json"));
    o = tt_cap__out_open(tmp_path("devices.json"));
    cr_assert(o);
    cr_assert_eq(tt_cap__gpu_write_devices(o, &s), 0);
    cr_assert_eq(tt_cap__out_close(o, 1), 0);
    compare_with(expect, elen, "devices", tmp_path("devices.json"));
    cr_expect_eq(s.bad_timestamps, (uint64_t)expected_counter(expect, elen, "bad_timestamps"));
    cr_expect_eq(s.unknown_records, (uint64_t)expected_counter(expect, elen, "unknown_records"));
    cr_expect_eq(s.dropped_store, (uint64_t)expected_counter(expect, elen, "dropped_store"));
    cr_expect_eq(ev_idx, expected_counter(expect, elen, "ev_idx_after"));
    check_external_ids(&s, expect, elen);
    /* API names without CUPTI's "_v7000" */
    for (i = 0; i < (int)s.n; i++)
        if (s.ev[i].kind == GPU_RUNTIME || s.ev[i].kind == GPU_DRIVER)
            cr_expect(!strstr(s.ev[i].name, "_v"), "%s", s.ev[i].name);
    tt_cap__gpu_store_free(&s);
    tmp_clean();
    free_records();
    free(expect);
#endif
}

/* a store holding at most `max` records drops (and counts) the rest */
Test(cupti_conv, store_limit)
{
#ifndef TT_HAVE_CUPTI
    need_cupti();
#else
    struct gpu_store s;
    size_t used, full_n, full_ext;
    int failures;
    setup(&s, 0, &used);
    convert_all(&s, used, &failures);
    full_n = s.n;
    full_ext = s.ext.n;
    cr_assert_gt(full_n, 4);
    cr_assert_gt(full_ext, 4);
    cr_assert_eq(s.dropped_store, 0);
    tt_cap__gpu_store_free(&s);
    tt_cap__gpu_store_init(&s, 4);
    s.map_tid = map_tid;
    convert_all(&s, used, &failures);
    cr_expect_eq(failures, 0, "over the limit is not out of memory");
    cr_expect_eq(s.n, 4);
    cr_expect_eq(s.ext.n, 4);
    cr_expect_eq(s.dropped_store, (full_n - 4) + (full_ext - 4));
    cr_expect_eq(s.ndev, 2, "devices are not records");
    tt_cap__gpu_store_free(&s);
    free_records();
#endif
}

/* allocation failures: -1, the record counted as dropped, the store intact;
 * clear() empties records and correlations, keeps names and devices */
Test(cupti_conv, out_of_memory_and_clear)
{
#ifndef TT_HAVE_CUPTI
    need_cupti();
#else
    struct gpu_store s;
    size_t used, n, nnames, ndev;
    int failures, records;
    int64_t ev_idx = 0;
    const char *first_name;
    setup(&s, 0, &used);
    tt_cap__fault_alloc = 1;
    records = convert_all(&s, used, &failures);
    tt_cap__fault_alloc = 0;
    cr_expect_gt(failures, 0);
    cr_expect_eq(s.n, 0);
    cr_expect_eq(s.ndev, 0);
    cr_expect_eq(s.ext.n, 0);
    cr_expect_eq(s.dropped_store, (uint64_t)failures);
    cr_expect_gt(records, failures);
    cr_expect_eq(tt_cap__gpu_external_id(&s, 22), 0);
    /* the same store, memory back */
    tt_cap__gpu_store_clear(&s);
    convert_all(&s, used, &failures);
    cr_expect_eq(failures, 0);
    n = s.n;
    nnames = s.nnames;
    ndev = s.ndev;
    cr_assert_gt(n, 0);
    cr_expect_eq(tt_cap__gpu_external_id(&s, 22), 5);
    first_name = s.ev[0].name;
    cr_expect_eq(write_events(&s, tmp_path("events.json"), &ev_idx, 1), -1);
    tt_cap__gpu_store_clear(&s);
    cr_expect_eq(s.n, 0);
    cr_expect_eq(s.ext.n, 0);
    cr_expect_eq(s.bad_timestamps, 0);
    cr_expect_eq(tt_cap__gpu_external_id(&s, 22), 0);
    cr_expect_eq(s.ndev, ndev);
    cr_expect_eq(s.nnames, nnames);
    convert_all(&s, used, &failures);
    cr_expect_eq(s.n, n);
    cr_expect_eq(s.nnames, nnames, "names are kept once");
    cr_expect_eq(s.ev[0].name, first_name);
    cr_expect_eq(write_events(&s, tmp_path("events.json"), &ev_idx, 0), 0);
    tt_cap__gpu_store_free(&s);
    tmp_clean();
    free_records();
#endif
}

/* the events in a whole trace, as the capture library writes a window with
 * GPU records (no CPU thread): tracetool's own readers find every kernel,
 * copy, set and [memory] event of the fixture */
Test(cupti_conv, read_back)
{
#ifndef TT_HAVE_CUPTI
    need_cupti();
#else
    tt_kern_options ko = TT_KERN_OPTIONS_INIT;
    tt_info_options io = TT_INFO_OPTIONS_INIT;
    tt_kern_result kr;
    tt_info_result ir;
    size_t elen, i;
    char *expect = read_all(FIXTURES "cupti_expect.json", &elen);
    int64_t inst[2] = { 0, 0 };
    int status = 0;
    const char *path = tmp_path("trace.json");
    /*
     * libcupti (and the libstdc++ the converter demangles with) in a child:
     * LeakSanitizer's thread walk at exit fails on their dynamic TLS once the
     * readers' threads have run in the same process
     */
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        struct gpu_store s;
        struct tt_cap_trace tr;
        size_t used;
        int failures;
        if (load_cupti())
            _exit(77);
        setup(&s, 0, &used);
        convert_all(&s, used, &failures);
        memset(&tr, 0, sizeof(tr));
        tr.start_mono = doc.t_lo;
        tr.end_mono = doc.t_hi;
        tr.mono_to_unix = doc.mono_to_unix;
        tr.gpu = &s;
        _exit(tt_cap__write_kineto(&tr, path) == 0 && failures == 0 ? 0 : 1);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        cr_skip_test("libcupti cannot be loaded");
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer: status %d", status);
    cr_assert_eq(tt_kernels_file_result(path, &ko, &kr), 0, "%s", tt_error_last()->message);
    for (i = 0; i < kr.nsummaries; i++) {
        size_t j;
        for (j = 0; j < kr.summaries[i].nrows; j++)
            inst[kr.summaries[i].memory ? 1 : 0] += kr.summaries[i].rows[j].instances;
    }
    cr_expect_eq(inst[0], expected_in(expect, elen, "readback", "kernels"));
    cr_expect_eq(inst[1], expected_in(expect, elen, "readback", "memory_ops"));
    tt_kern_result_free(&kr);
    cr_assert_eq(tt_info_file_result(path, &io, &ir), 0, "%s", tt_error_last()->message);
    cr_assert_eq(ir.ntraces, 1);
    cr_expect_eq(ir.traces[0].gpu_kernels, expected_in(expect, elen, "readback", "kernels"));
    cr_expect_eq(ir.traces[0].memory_events,
                 expected_in(expect, elen, "readback", "memory_events"));
    cr_expect_eq(ir.traces[0].repaired, 0);
    cr_expect_eq(ir.traces[0].skipped, 0);
    tt_info_result_free(&ir);
    remove(path);
    tmp_clean();
    free(expect);
#endif
}
