/*
 * analyze/collectives/coll_meta.c - what a collective's args, names and
 * dtypes mean (coll_state.h): the args PyTorch writes on a
 * record_param_comms op and Kineto copies onto an NCCL kernel
 * (torch/csrc/profiler/util.h: "Collective name", "In msg nelems", "Out msg
 * nelems", "Group size", "dtype", "Process Group Name", "Process Group
 * Ranks", "Seq"), the "Input Dims" / "Input type" of the nccl:* op older
 * PyTorch writes instead, the sizes of the dtypes under both spellings
 * (c10's ScalarType names, caffe2's TypeMeta names), the kind of a
 * collective under its many names, and nccl-tests' bandwidth formulas
 * (doc/PERFORMANCE.md).
 */
#include "common/compat.h"
#include "analyze/collectives/coll_state.h"
#include "formats/json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>

/* ---- the run's strings ---- */

static int32_t no_str(void)
{
    tt__oom();
    return 0;
}

int32_t tt__coll_str(struct coll_strs *st, const char *s, size_t len)
{
    uint64_t h = tt_strhash(s, len);
    size_t slot = 0;
    int64_t id;
    char *copy;
    if (!st->tab.nslots && tt_strtab_rehash(&st->tab) < 0)
        return no_str();
    if ((id = tt_strtab_find(&st->tab, s, len, h, &slot)) > 0)
        return (int32_t)id;
    if (st->n >= INT32_MAX - 1 || TT_ALLOC_GROW(st->s, st->n + 1, st->alloc) < 0 ||
        !(copy = strndup(s, len)))
        return no_str();
    st->s[st->n] = copy;
    if (tt_strtab_add(&st->tab, s, len, h, (int64_t)st->n + 1) < 0) {
        free(copy);
        return no_str();
    }
    return (int32_t)++st->n;
}

const char *tt__coll_str_of(const struct coll_strs *st, int32_t id)
{
    return id > 0 && (size_t)id <= st->n ? st->s[id - 1] : NULL;
}

void tt__coll_strs_free(struct coll_strs *st)
{
    size_t i;
    for (i = 0; i < st->n; i++)
        free((char *)st->s[i]);
    free(st->s);
    tt_strtab_release(&st->tab);
    memset(st, 0, sizeof(*st));
}

/* ---- args ---- */

void tt__coll_fields_init(struct coll_fields *f)
{
    f->in_n = f->out_n = f->group = f->seq = CNULL;
    f->name = f->dtype = f->pg = 0;
}

/* a number, or a string holding an integer ("Seq": "12"); 1 when one */
static int int_value(tt_jp *jp, tt_arena *a, int64_t *v)
{
    enum tt_jtype t = tt_jp_peek(jp);
    const char *s;
    size_t len;
    tt_jnum num;
    if (t == TT_JT_NUMBER) {
        if (tt_jp_number(jp, &num) < 0)
            return -1;
        if (!num.fits)
            return 0;
        *v = num.i;
        return 1;
    }
    if (t == TT_JT_STRING) {
        char buf[32], *end;
        long long x;
        if (tt_jp_string(jp, a, &s, &len) < 0)
            return -1;
        if (len == 0 || len >= sizeof(buf))
            return 0;
        memcpy(buf, s, len);
        buf[len] = 0;
        errno = 0;
        x = strtoll(buf, &end, 10);
        if (*end || errno)
            return 0;
        *v = x;
        return 1;
    }
    return tt_jp_skip(jp) < 0 ? -1 : 0;
}

/* a string value as a run string id into *id (0 when not a string) */
static int str_value(struct coll_strs *st, tt_jp *jp, tt_arena *a, int32_t *id)
{
    const char *s;
    size_t len;
    if (tt_jp_peek(jp) != TT_JT_STRING)
        return tt_jp_skip(jp) < 0 ? -1 : 0;
    if (tt_jp_string(jp, a, &s, &len) < 0)
        return -1;
    if (!(*id = tt__coll_str(st, s, len)))
        return TT_ENOMEM;
    return 0;
}

/* the number of entries of a "Process Group Ranks" list ("[0, 1, 2]") */
static int64_t list_count(const char *s)
{
    int64_t n = 0;
    int digit = 0;
    for (; *s; s++) {
        if (isdigit((unsigned char)*s)) {
            n += !digit;
            digit = 1;
        } else {
            digit = 0;
        }
    }
    return n;
}

enum { K_NAME, K_IN, K_OUT, K_GROUP, K_DTYPE, K_PG, K_RANKS, K_SEQ, K_N };
static const char *const arg_keys[K_N] = {
    "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype",
    "Process Group Name", "Process Group Ranks", "Seq",
};

static int arg_key(const char *k, size_t len)
{
    int i;
    for (i = 0; i < K_N; i++)
        if (strlen(arg_keys[i]) == len && !memcmp(arg_keys[i], k, len))
            return i;
    return -1;
}

/* one key's value into f (ranks: the process group's ranks list) */
static int arg_value(struct coll_strs *st, tt_jp *jp, tt_arena *a, int k, struct coll_fields *f,
                     int32_t *ranks)
{
    int64_t *dst = k == K_IN ? &f->in_n : k == K_OUT ? &f->out_n : k == K_GROUP ? &f->group
                                                                           : &f->seq;
    int64_t v;
    int r;
    switch (k) {
    case K_NAME: return str_value(st, jp, a, &f->name);
    case K_DTYPE: return str_value(st, jp, a, &f->dtype);
    case K_PG: return str_value(st, jp, a, &f->pg);
    case K_RANKS: return str_value(st, jp, a, ranks);
    default:
        if ((r = int_value(jp, a, &v)) > 0)
            *dst = v;
        return r < 0 ? r : 0;
    }
}

int tt__coll_args(struct coll_strs *st, const char *json, size_t len, struct coll_fields *f)
{
    tt_arena a = TT_ARENA_INIT;
    const char *key;
    size_t klen;
    int32_t ranks = 0;
    tt_jp jp;
    int r, rc = 0;
    tt_jp_init(&jp, "args", json, 0, json, len);
    if (tt_jp_peek(&jp) != TT_JT_OBJECT || tt_jp_object_begin(&jp) < 0)
        goto out;
    while (rc == 0 && (r = tt_jp_object_next(&jp, &a, &key, &klen)) > 0) {
        int k = arg_key(key, klen);
        if (k < 0)
            rc = tt_jp_skip(&jp) < 0 ? 1 : 0;
        else
            rc = arg_value(st, &jp, &a, k, f, &ranks);
    }
    if (ranks) { /* the group: its name, else its ranks; its size, else their count */
        if (!f->pg)
            f->pg = ranks;
        if (f->group == CNULL && list_count(tt__coll_str_of(st, ranks)) > 0)
            f->group = list_count(tt__coll_str_of(st, ranks));
    }
out:
    tt_arena_release(&a);
    if (rc == TT_ENOMEM)
        return rc;
    tt_error_clear(); /* bad args say nothing, they are no error */
    return 0;
}

/* the elements of one tensor's dims ([8, 1024, 8816]); NO_DIMS for [],
 * BAD_DIMS for what is not dims */
#define NO_DIMS (-1)
#define BAD_DIMS (-2)
static int64_t tensor_elems(tt_jp *jp)
{
    int64_t n = 1, d;
    int any = 0, r;
    tt_jnum num;
    if (tt_jp_peek(jp) != TT_JT_ARRAY || tt_jp_array_begin(jp) < 0)
        return BAD_DIMS;
    while ((r = tt_jp_array_next(jp)) > 0) {
        if (tt_jp_peek(jp) != TT_JT_NUMBER || tt_jp_number(jp, &num) < 0 || !num.fits)
            return BAD_DIMS;
        d = num.i;
        if (d < 0 || (d && n > INT64_MAX / d))
            return BAD_DIMS;
        n *= d;
        any = 1;
    }
    return r < 0 ? BAD_DIMS : any ? n : NO_DIMS;
}

/* the elements of every tensor of an "Input Dims" list summed into *in */
static void dims_sum(const char *dims, int64_t *in)
{
    int64_t sum = 0, n = 0;
    int any = 0, r;
    tt_jp jp;
    tt_jp_init(&jp, "dims", dims, 0, dims, strlen(dims));
    if (tt_jp_peek(&jp) != TT_JT_ARRAY || tt_jp_array_begin(&jp) < 0)
        return;
    while ((r = tt_jp_array_next(&jp)) > 0 && (n = tensor_elems(&jp)) != BAD_DIMS) {
        if (n >= 0 && n <= INT64_MAX - sum) {
            sum += n;
            any = 1;
        }
    }
    if (r == 0 && any)
        *in = sum;
}

int tt__coll_dims(struct coll_strs *st, const char *dims, const char *types,
                  struct coll_fields *f)
{
    tt_arena a = TT_ARENA_INIT;
    const char *s;
    size_t len;
    tt_jp jp;
    int rc = 0;
    if (dims)
        dims_sum(dims, &f->in_n);
    if (types) {
        tt_jp_init(&jp, "types", types, 0, types, strlen(types));
        if (tt_jp_peek(&jp) == TT_JT_ARRAY && tt_jp_array_begin(&jp) == 0 &&
            tt_jp_array_next(&jp) > 0 && tt_jp_peek(&jp) == TT_JT_STRING &&
            tt_jp_string(&jp, &a, &s, &len) == 0 && len &&
            !(f->dtype = tt__coll_str(st, s, len)))
            rc = TT_ENOMEM;
    }
    tt_arena_release(&a);
    if (rc == 0)
        tt_error_clear(); /* bad dims say nothing */
    return rc;
}

/* ---- names ---- */

static const char *const kind_names[CK_COUNT] = {
    "other", "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce",
    "send", "recv", "sendrecv", "gather", "scatter", "barrier",
};

const char *tt__coll_kind_name(int kind)
{
    return kind > CK_OTHER && kind < CK_COUNT ? kind_names[kind] : NULL;
}

int tt__coll_kind(const char *name, size_t len)
{
    /* the first that the name holds, lower case and without '_' */
    static const struct { const char *w; int k; } rules[] = {
        { "allreduce", CK_ALLREDUCE }, { "allgather", CK_ALLGATHER },
        { "reducescatter", CK_REDUCESCATTER }, { "alltoall", CK_ALLTOALL },
        { "all2all", CK_ALLTOALL }, { "sendrecv", CK_SENDRECV }, { "broadcast", CK_BROADCAST },
        { "bcast", CK_BROADCAST }, { "reduce", CK_REDUCE }, { "gather", CK_GATHER },
        { "scatter", CK_SCATTER }, { "barrier", CK_BARRIER }, { "send", CK_SEND },
        { "recv", CK_RECV },
    };
    char norm[64];
    size_t i, n = 0;
    for (i = 0; i < len && n + 1 < sizeof(norm); i++)
        if (isalnum((unsigned char)name[i]))
            norm[n++] = (char)tolower((unsigned char)name[i]);
    norm[n] = 0;
    for (i = 0; i < TT_ARRAY_SIZE(rules); i++)
        if (strstr(norm, rules[i].w))
            return rules[i].k;
    return CK_OTHER;
}

size_t tt__coll_kernel_coll(const char *kernel, const char **start)
{
    static const char *const pre[] = { "ncclKernel_", "ncclDevKernel_", "rcclKernel_" };
    const char *p = NULL, *e;
    size_t i;
    for (i = 0; !p && i < TT_ARRAY_SIZE(pre); i++)
        if ((p = strstr(kernel, pre[i])))
            p += strlen(pre[i]);
    if (!p)
        return 0;
    for (e = p; isalnum((unsigned char)*e); e++)
        ;
    *start = p;
    return tt__coll_kind(p, (size_t)(e - p)) == CK_OTHER ? 0 : (size_t)(e - p);
}

int tt__coll_is_annot(const char *name, const char **coll)
{
    static const char *const backends[] = { "nccl:", "rccl:", "gloo:", "ucc:", "mpi:",
                                            "xccl:", "hccl:" };
    size_t i, n;
    for (i = 0; name && i < TT_ARRAY_SIZE(backends); i++) {
        n = strlen(backends[i]);
        if (!strncmp(name, backends[i], n) && name[n] && name[n] != ':') {
            *coll = name + n;
            return 1;
        }
    }
    return 0;
}

int tt__coll_dtype_size(const char *dtype)
{
    static const struct { const char *n; int size; } types[] = {
        { "float", 4 }, { "float32", 4 }, { "int", 4 }, { "int32", 4 }, { "uint32", 4 },
        { "unsigned int", 4 }, { "qint32", 4 }, { "complexhalf", 4 },
        { "double", 8 }, { "float64", 8 }, { "long", 8 }, { "long int", 8 },
        { "long long", 8 }, { "int64", 8 }, { "int64_t", 8 }, { "uint64", 8 },
        { "unsigned long", 8 }, { "complexfloat", 8 }, { "complex<float>", 8 },
        { "complexdouble", 16 }, { "complex<double>", 16 },
        { "half", 2 }, { "float16", 2 }, { "bfloat16", 2 }, { "short", 2 },
        { "short int", 2 }, { "int16", 2 }, { "uint16", 2 }, { "bits16", 2 },
        { "byte", 1 }, { "char", 1 }, { "signed char", 1 }, { "unsigned char", 1 },
        { "int8", 1 }, { "uint8", 1 }, { "bool", 1 }, { "qint8", 1 }, { "quint8", 1 },
        { "quint4x2", 1 }, { "quint2x4", 1 }, { "bits8", 1 }, { "float8_e4m3fn", 1 },
        { "float8_e5m2", 1 }, { "float8_e4m3fnuz", 1 }, { "float8_e5m2fnuz", 1 },
        { "float8_e8m0fnu", 1 }, { "float4_e2m1fn_x2", 1 },
    };
    size_t i;
    if (!dtype)
        return 0;
    if (!strncmp(dtype, "c10::", 5))
        dtype += 5;
    for (i = 0; i < TT_ARRAY_SIZE(types); i++)
        if (!strcasecmp(dtype, types[i].n))
            return types[i].size;
    return 0;
}

/* ---- nccl-tests' bandwidths ---- */

double tt__coll_bus_factor(int kind, int64_t n)
{
    switch (kind) {
    case CK_BROADCAST: case CK_REDUCE: case CK_SEND: case CK_RECV: case CK_SENDRECV:
        return 1.0;
    case CK_ALLREDUCE:
        return n > 0 && n != CNULL ? 2.0 * (double)(n - 1) / (double)n : NAN;
    case CK_ALLGATHER: case CK_REDUCESCATTER: case CK_ALLTOALL:
        return n > 0 && n != CNULL ? (double)(n - 1) / (double)n : NAN;
    default:
        return NAN;
    }
}

/* a x n, CNULL when either is unknown or it does not fit */
static int64_t times(int64_t a, int64_t n)
{
    if (a == CNULL || n == CNULL || n <= 0 || (a && a > INT64_MAX / n))
        return CNULL;
    return a * n;
}

int64_t tt__coll_size(int kind, int64_t in_b, int64_t out_b, int64_t n)
{
    switch (kind) {
    case CK_ALLGATHER: case CK_GATHER: /* the whole output */
        return out_b != CNULL ? out_b : times(in_b, n);
    case CK_REDUCESCATTER: case CK_SCATTER: /* the whole input */
        return in_b != CNULL ? in_b : times(out_b, n);
    default:
        return in_b != CNULL ? in_b : out_b;
    }
}
