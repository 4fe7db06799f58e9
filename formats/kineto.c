/*
 * formats/kineto.c - what a Kineto event means: the class of a complete
 * event from its category (every vintage's names: cpu_op / Operator,
 * cuda_runtime / Runtime, kernel / Kernel, gpu_memcpy / Memcpy, ...; other
 * devices' runtime calls, MTIA's mtia_ccp_events as kernels), the
 * copy kind of a memcpy/memset, and the rank written in a file name.
 */
#include "common/compat.h"
#include "formats/json.h"
#include "formats/kineto.h"
#include "tracetool/formats.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

int tt_kineto_class(const char *cat)
{
    if (!cat)
        return TT_XC_SLICE;
    switch (cat[0]) {
    case 'k':
    case 'K':
        if (!strcmp(cat, "kernel") || !strcmp(cat, "Kernel"))
            return TT_XC_KERNEL;
        break;
    case 'g':
        if (!strcmp(cat, "gpu_memcpy"))
            return TT_XC_MEMCPY;
        if (!strcmp(cat, "gpu_memset"))
            return TT_XC_MEMSET;
        if (!strcmp(cat, "gpu_user_annotation"))
            return TT_XC_GPU_ANNOT;
        break;
    case 'M':
        if (!strcmp(cat, "Memcpy"))
            return TT_XC_MEMCPY;
        if (!strcmp(cat, "Memset"))
            return TT_XC_MEMSET;
        break;
    case 'c':
        if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver"))
            return TT_XC_RUNTIME;
        if (!strcmp(cat, "cuda_sync"))
            return TT_XC_SYNC;
        break;
    case 'R':
        if (!strcmp(cat, "Runtime"))
            return TT_XC_RUNTIME;
        break;
    case 'x':
    case 'm':
    case 'p':
    case 'h':
        /* MTIA's on-device CCP events (its kernels, DMA requests, event
         * records and waits), linked by correlation to an mtia_runtime call
         * as a CUDA kernel to its launch (HTA counts them as GPU kernels) */
        if (!strcmp(cat, "mtia_ccp_events"))
            return TT_XC_KERNEL;
        if (!strcmp(cat, "xpu_runtime") || !strcmp(cat, "xpu_driver") ||
            !strcmp(cat, "mtia_runtime") || !strcmp(cat, "privateuse1_runtime") ||
            !strcmp(cat, "privateuse1_driver") || !strcmp(cat, "hip_runtime"))
            return TT_XC_RUNTIME;
        break;
    default:
        break;
    }
    return TT_XC_SLICE;
}

const char *const tt_kineto_kind_name[] = { "slice", "runtime", "kernel", "memcpy",
                                           "memset", "annotation", "sync" };

/* "Memcpy HtoD (Pageable -> Device)" -> "HtoD"; "Memset (Device)" -> "Device" */
size_t tt_kineto_copy_kind(const char *name, const char **start)
{
    const char *p = strchr(name, ' '), *e;
    if (!p || (strncmp(name, "Memcpy", 6) && strncmp(name, "Memset", 6)))
        return 0;
    p++;
    if (*p == '(')
        p++;
    e = p;
    while (*e && *e != ' ' && *e != ')')
        e++;
    *start = p;
    return (size_t)(e - p);
}

/* ---- communication kernels ---- */

/* collective and point-to-point tokens: the lower-case concatenation of one
 * to three consecutive words of a name (all_reduce, AllReduce, allreduce,
 * ALL_REDUCE: "allreduce"); never a word that compute kernels use alone
 * ("reduce", "gather", "scatter", "broadcast", "send") */
static const char *const comm_tokens[] = {
    "allreduce", "allgather", "allgatherv", "reducescatter", "reducescatterv", "alltoall",
    "alltoallv", "all2all", "all2allv", "sendrecv", "crossdevicereduce",
};
/* libraries whose kernels are all communication: a word that starts so */
static const char *const comm_libs[] = { "nvshmem", "msccl", "userbuffers", "kuserbuffers" };

#define COMM_WORD 24 /* a longer word is no token, and breaks a run */

/* one more word (n chars at p; NULL: a break) after the last two in w;
 * 1 when it, or it with the one or two before, is communication */
static int comm_word(char w[3][COMM_WORD + 1], const char *p, size_t n)
{
    char cat[3 * COMM_WORD + 1];
    size_t i, k;
    memmove(w[0], w[1], 2 * sizeof(w[0]));
    w[2][0] = 0;
    if (!p || n > COMM_WORD)
        return 0;
    for (i = 0; i < n; i++)
        w[2][i] = (char)tolower((unsigned char)p[i]);
    w[2][n] = 0;
    if (!strcmp(w[2], "multimem")) /* NVLink SHARP: only collectives use it */
        return 1;
    for (k = 0; k < TT_ARRAY_SIZE(comm_libs); k++)
        if (!strncmp(w[2], comm_libs[k], strlen(comm_libs[k])))
            return 1;
    cat[0] = 0;
    for (i = 3; i-- > 0 && w[i][0];) { /* w[2], w[1] w[2], w[0] w[1] w[2] */
        memmove(cat + strlen(w[i]), cat, strlen(cat) + 1);
        memcpy(cat, w[i], strlen(w[i]));
        for (k = 0; k < TT_ARRAY_SIZE(comm_tokens); k++)
            if (!strcmp(cat, comm_tokens[k]))
                return 1;
    }
    return 0;
}

/* a word ends before p (an alphanumeric after p[-1], in the same word):
 * camel case (allReduce, ALLReduce) and a letter after digits (the
 * lengths of a mangled name: 26cross_device_reduce) */
static int word_break(const char *p)
{
    unsigned char c = (unsigned char)p[0], b = (unsigned char)p[-1];
    if (isalpha(c) && isdigit(b))
        return 1;
    return isupper(c) && (islower(b) || (isupper(b) && islower((unsigned char)p[1])));
}

/* the token rule on the words outside template arguments and parameter
 * lists ("(anonymous namespace)" and "<unnamed>" are separators): the
 * name of the function and its namespaces, never the types it takes */
static int comm_tokens_in(const char *name)
{
    char w[3][COMM_WORD + 1] = { "", "", "" };
    const char *p, *start = NULL;
    int depth = 0;
    for (p = name;; p++) {
        int alnum = *p && isalnum((unsigned char)*p);
        if (start && (!alnum || word_break(p))) {
            if (depth == 0 && comm_word(w, start, (size_t)(p - start)))
                return 1;
            start = NULL;
        }
        if (!*p)
            return 0;
        if (alnum) {
            start = start ? start : p;
            continue;
        }
        if (depth == 0 && !strncmp(p, "(anonymous namespace)", 21))
            p += 20;
        else if (depth == 0 && !strncmp(p, "<unnamed>", 9))
            p += 8;
        else if (*p == '<' || *p == '(')
            depth++, comm_word(w, NULL, 0);
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
    }
}

/* kineto.h */
int tt_kineto_is_comm(const char *name, const tt_comm_rules *extra)
{
    size_t k;
    if (!name)
        return 0;
    /* HTA's (^nccl)|(^hccl)|(ncclKernel) with rccl, without ^hip */
    if (!strncmp(name, "nccl", 4) || !strncmp(name, "rccl", 4) || !strncmp(name, "hccl", 4) ||
        strstr(name, "ncclKernel") || strstr(name, "ncclDevKernel"))
        return 1;
    /* Inductor names a kernel after the ops it fused: triton_poi_fused_all_reduce_0
     * copies into an all-reduce's buffer, the collective is NCCL's */
    if (!(!strncmp(name, "triton_", 7) && strstr(name, "_fused_")) && comm_tokens_in(name))
        return 1;
    for (k = 0; extra && k < extra->n; k++)
        if (regexec(&extra->re[k], name, 0, NULL, 0) == 0)
            return 1;
    return 0;
}

int tt_comm_rules_compile(tt_comm_rules *r, const char *const *patterns, size_t n)
{
    size_t k;
    memset(r, 0, sizeof(*r));
    if (!n)
        return 0;
    if (!(r->re = calloc(n, sizeof(*r->re))))
        return tt__oom();
    for (k = 0; k < n; k++) {
        char msg[160];
        int e = regcomp(&r->re[k], patterns[k] ? patterns[k] : "", REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            regerror(e, &r->re[k], msg, sizeof(msg));
            tt_comm_rules_free(r);
            return tt_error_set(TT_EINVALID, "bad communication pattern '%s': %s",
                                patterns[k] ? patterns[k] : "", msg);
        }
        r->n++;
    }
    return 0;
}

void tt_comm_rules_free(tt_comm_rules *r)
{
    size_t k;
    for (k = 0; k < r->n; k++)
        regfree(&r->re[k]);
    free(r->re);
    memset(r, 0, sizeof(*r));
}

/* rank from a file name: "rank-70", "rank_3", "rank3", "worker5_..." */
int tt_rank_from_name(const char *path, int64_t *rank)
{
    const char *base = strrchr(path, '/');
    const char *pats[] = { "rank", "worker" };
    size_t i;
    base = base ? base + 1 : path;
    for (i = 0; i < TT_ARRAY_SIZE(pats); i++) {
        const char *p = base;
        while ((p = strstr(p, pats[i])) != NULL) {
            const char *q = p + strlen(pats[i]);
            if (*q == '-' || *q == '_')
                q++;
            if (isdigit((unsigned char)*q)) {
                int64_t v = 0;
                while (isdigit((unsigned char)*q) && v < 1000000000)
                    v = v * 10 + (*q++ - '0');
                *rank = v;
                return 1;
            }
            p++;
        }
    }
    return 0;
}

/* ---- top-level keys ---- */

static int set_str(char **dst, const char *s, size_t n)
{
    char *c = strndup(s, n);
    if (!c)
        return TT_ENOMEM;
    free(*dst);
    *dst = c;
    return 0;
}

static int int_value(tt_jp *jp, int64_t *out)
{
    tt_jnum n;
    if (tt_jp_peek(jp) != TT_JT_NUMBER || tt_jp_number(jp, &n) != 0 || !n.fits)
        return 0;
    *out = n.i;
    return 1;
}

/* "distributedInfo": {"rank": R, "world_size": W, ...} */
static void distributed_info(tt_kineto_meta *m, tt_jp *jp, tt_arena *a)
{
    const char *k;
    size_t kl;
    if (tt_jp_peek(jp) != TT_JT_OBJECT || tt_jp_object_begin(jp) != 0)
        return;
    while (tt_jp_object_next(jp, a, &k, &kl) == 1) {
        if (kl == 4 && !memcmp(k, "rank", 4) && tt_jp_peek(jp) == TT_JT_NUMBER) {
            m->have_rank |= int_value(jp, &m->rank);
            continue;
        }
        if (kl == 10 && !memcmp(k, "world_size", 10) && tt_jp_peek(jp) == TT_JT_NUMBER) {
            m->have_world |= int_value(jp, &m->world_size);
            continue;
        }
        if (tt_jp_skip(jp) < 0)
            break;
    }
}

int tt_kineto_meta_key(tt_kineto_meta *m, const char *key, const char *json, size_t len)
{
    tt_jp jp;
    tt_arena a = TT_ARENA_INIT;
    const char *s;
    size_t l;
    int rc = 0, str;
    tt_jp_init(&jp, "", json, 0, json, len);
    str = tt_jp_peek(&jp) == TT_JT_STRING;
    if (!strcmp(key, "baseTimeNanoseconds")) {
        int64_t base;
        /* a base time the relative times can be added to without overflow */
        if (int_value(&jp, &base) && base >= 0 && base < TT_TIME_MAX_NS) {
            m->base_time_ns = base;
            m->have_base = 1;
        }
    } else if (!strcmp(key, "schemaVersion") || !strcmp(key, "schema")) {
        if (str && tt_jp_string(&jp, &a, &s, &l) == 0)
            rc = set_str(&m->schema_version, s, strlen(s));
        else
            rc = set_str(&m->schema_version, json, len);
    } else if (!strcmp(key, "displayTimeUnit") || !strcmp(key, "traceName")) {
        if (str && tt_jp_string(&jp, &a, &s, &l) == 0)
            rc = set_str(key[0] == 'd' ? &m->display_time_unit : &m->trace_name, s, strlen(s));
    } else if (!strcmp(key, "pid")) {
        m->have_pid |= int_value(&jp, &m->pid);
    } else if (!strcmp(key, "distributedInfo")) {
        distributed_info(m, &jp, &a);
    }
    tt_arena_release(&a);
    return rc;
}

void tt_kineto_meta_release(tt_kineto_meta *m)
{
    free(m->schema_version);
    free(m->display_time_unit);
    free(m->trace_name);
    memset(m, 0, sizeof(*m));
}

/* ---- c10 devices ---- */

/* c10/core/DeviceType.h, in enum order (DeviceTypeName, lower case) */
static const char *const device_names[] = {
    "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla",
    "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia",
    "privateuseone",
};
#define NDEVICES ((int)(sizeof(device_names) / sizeof(device_names[0])))

const char *tt_device_type_name(int type)
{
    return type >= 0 && type < NDEVICES ? device_names[type] : NULL;
}

int tt_device_parse(const char *s, int *type, int64_t *index)
{
    const char *colon = strchr(s, ':');
    size_t tl = colon ? (size_t)(colon - s) : strlen(s);
    int t = -1, i;
    for (i = 0; i < NDEVICES; i++) {
        if (strlen(device_names[i]) == tl && !strncmp(s, device_names[i], tl)) {
            t = i;
            break;
        }
    }
    if (t < 0 && tl > 0 && tl < 4 && strspn(s, "0123456789") == tl)
        t = atoi(s); /* a bare DeviceType value */
    if (t < 0)
        return tt_error_set(TT_EINVALID, "unknown device type '%.*s' (cpu, cuda, hip, xpu,"
                                         " mps, mtia, privateuseone, ...)", (int)tl, s);
    *type = t;
    *index = t == 0 ? -1 : 0;
    if (colon) {
        const char *d = colon + 1;
        char *end;
        long long v;
        if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9)
            return tt_error_set(TT_EINVALID, "bad device index '%s' in '%s' (want %.*s:N,"
                                             " N >= 0)", d, s, (int)tl, s);
        v = strtoll(d, &end, 10);
        if (t != 0) /* the CPU is one device: its events carry -1 */
            *index = v;
    }
    return 0;
}

void tt_device_format(int type, int64_t index, char *buf, size_t cap)
{
    const char *n = tt_device_type_name(type);
    if (type == 0)
        snprintf(buf, cap, "cpu");
    else if (n)
        snprintf(buf, cap, "%s:%lld", n, (long long)(index < 0 ? 0 : index));
    else
        snprintf(buf, cap, "type%d:%lld", type, (long long)(index < 0 ? 0 : index));
}
