/*
 * tests/unit/test_collectives.c - `tracetool collectives`: what a
 * collective's names, args and dtypes mean (coll_meta.c), and the calls of
 * a 2-rank job written here in the older vintage (a record_param_comms op
 * without args, its nccl:* op with "Input Dims" / "Input type"), matched by
 * order, whose arrivals, stragglers and sizes are known by construction;
 * the same with every spill writing to disk; a trace without a collective.
 */
#include "common/compat.h"
#include "common/spill.h"
#include "analyze/collectives/coll_state.h"
#include "tracetool/analyze.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(collectives, .timeout = 60);

Test(collectives, kinds)
{
    static const struct { const char *name; int kind; } k[] = {
        { "allreduce", CK_ALLREDUCE }, { "all_reduce", CK_ALLREDUCE },
        { "AllReduce", CK_ALLREDUCE }, { "allreduce_coalesced", CK_ALLREDUCE },
        { "_allgather_base", CK_ALLGATHER }, { "all_gather_into_tensor_coalesced", CK_ALLGATHER },
        { "reduce_scatter_tensor", CK_REDUCESCATTER }, { "_reduce_scatter_base", CK_REDUCESCATTER },
        { "all_to_all", CK_ALLTOALL }, { "alltoall_base", CK_ALLTOALL }, { "all2all", CK_ALLTOALL },
        { "SendRecv", CK_SENDRECV }, { "broadcast", CK_BROADCAST }, { "Reduce", CK_REDUCE },
        { "send", CK_SEND }, { "recv", CK_RECV }, { "gather", CK_GATHER },
        { "scatter", CK_SCATTER }, { "barrier", CK_BARRIER }, { "wait", CK_OTHER },
        { "coalesced", CK_OTHER },
    };
    const char *p;
    size_t i, n;
    for (i = 0; i < TT_ARRAY_SIZE(k); i++)
        cr_expect_eq(tt__coll_kind(k[i].name, strlen(k[i].name)), k[i].kind, "%s", k[i].name);
    n = tt__coll_kernel_coll("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", &p);
    cr_expect(n == 9 && !strncmp(p, "AllReduce", 9));
    n = tt__coll_kernel_coll("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", &p);
    cr_expect(n == 8 && !strncmp(p, "SendRecv", 8));
    cr_expect_eq(tt__coll_kernel_coll("ncclDevKernel_Generic_4(x)", &p), 0);
    cr_expect_eq(tt__coll_kernel_coll("void gemm(float*)", &p), 0);
    cr_expect(tt__coll_is_annot("nccl:all_reduce", &p) && !strcmp(p, "all_reduce"));
    cr_expect(tt__coll_is_annot("gloo:broadcast", &p));
    cr_expect(!tt__coll_is_annot("aten::add", &p));
    cr_expect(!tt__coll_is_annot("nccl:", &p));
}

Test(collectives, dtypes_and_bandwidth)
{
    static const struct { const char *d; int size; } t[] = {
        { "Float", 4 }, { "float", 4 }, { "c10::Half", 2 }, { "BFloat16", 2 },
        { "long int", 8 }, { "Long", 8 }, { "signed char", 1 }, { "unsigned char", 1 },
        { "Byte", 1 }, { "Double", 8 }, { "int", 4 }, { "Float8_e4m3fn", 1 },
        { "ComplexFloat", 8 }, { "TensorList", 0 }, { "", 0 },
    };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(t); i++)
        cr_expect_eq(tt__coll_dtype_size(t[i].d), t[i].size, "%s", t[i].d);
    cr_expect_float_eq(tt__coll_bus_factor(CK_ALLREDUCE, 8), 2.0 * 7 / 8, 1e-12);
    cr_expect_float_eq(tt__coll_bus_factor(CK_ALLGATHER, 4), 0.75, 1e-12);
    cr_expect_float_eq(tt__coll_bus_factor(CK_REDUCESCATTER, 2), 0.5, 1e-12);
    cr_expect_float_eq(tt__coll_bus_factor(CK_ALLTOALL, 8), 7.0 / 8, 1e-12);
    cr_expect_float_eq(tt__coll_bus_factor(CK_BROADCAST, CNULL), 1.0, 1e-12);
    cr_expect_float_eq(tt__coll_bus_factor(CK_SEND, 3), 1.0, 1e-12);
    cr_expect(isnan(tt__coll_bus_factor(CK_ALLREDUCE, CNULL)));
    cr_expect(isnan(tt__coll_bus_factor(CK_BARRIER, 4)));
    /* S: allgather the whole output (the input x n without it) */
    cr_expect_eq(tt__coll_size(CK_ALLGATHER, 100, 400, 4), 400);
    cr_expect_eq(tt__coll_size(CK_ALLGATHER, 100, CNULL, 4), 400);
    cr_expect_eq(tt__coll_size(CK_ALLGATHER, 100, CNULL, CNULL), CNULL);
    cr_expect_eq(tt__coll_size(CK_REDUCESCATTER, 400, 100, 4), 400);
    cr_expect_eq(tt__coll_size(CK_REDUCESCATTER, CNULL, 100, 4), 400);
    cr_expect_eq(tt__coll_size(CK_ALLREDUCE, 64, 64, 2), 64);
    cr_expect_eq(tt__coll_size(CK_ALLTOALL, CNULL, 32, 2), 32);
}

Test(collectives, args_and_dims)
{
    static const char args[] =
        "{\"External id\": 5, \"Collective name\": \"allgather\", \"In msg nelems\": 10,"
        " \"Out msg nelems\": 40, \"dtype\": \"BFloat16\", \"Process Group Ranks\": \"[0, 1, 2, 3]\","
        " \"Seq\": \"17\", \"In split size\": \"[]\", \"nested\": {\"Seq\": 1}}";
    struct coll_strs st;
    struct coll_fields f;
    memset(&st, 0, sizeof(st));
    tt__coll_fields_init(&f);
    cr_assert_eq(tt__coll_args(&st, args, strlen(args), &f), 0);
    cr_expect_str_eq(tt__coll_str_of(&st, f.name), "allgather");
    cr_expect_eq(f.in_n, 10);
    cr_expect_eq(f.out_n, 40);
    cr_expect_eq(f.group, 4, "the ranks counted without a Group size");
    cr_expect_eq(f.seq, 17, "a Seq written as a string");
    cr_expect_str_eq(tt__coll_str_of(&st, f.dtype), "BFloat16");
    cr_expect_str_eq(tt__coll_str_of(&st, f.pg), "[0, 1, 2, 3]", "no name: the ranks");
    tt__coll_fields_init(&f);
    cr_assert_eq(tt__coll_args(&st, "{\"Collective name\": ", 20, &f), 0, "bad JSON: no error");
    tt__coll_fields_init(&f);
    cr_assert_eq(tt__coll_dims(&st, "[[8,1024,8816],[4]]", "[\"float\",\"float\"]", &f), 0);
    cr_expect_eq(f.in_n, 8 * 1024 * 8816 + 4, "the tensors' elements summed");
    cr_expect_str_eq(tt__coll_str_of(&st, f.dtype), "float");
    tt__coll_fields_init(&f);
    cr_assert_eq(tt__coll_dims(&st, "[[],[],[]]", "[\"TensorList\",\"Scalar\"]", &f), 0);
    cr_expect_eq(f.in_n, CNULL, "no dims: no size");
    tt__coll_strs_free(&st);
}

/* ---- a 2-rank job ---- */

/* kernel starts (us) of 3 all_reduces (float, 1000 elems) and an all_to_all
 * (int, 256 elems) per rank; the kernels of a call all end at END[i] */
static const int START[2][4] = { { 100, 300, 520, 700 }, { 130, 310, 500, 760 } };
static const int END[4] = { 200, 400, 600, 800 };

static void write_rank(const char *dir, int r)
{
    char path[600];
    FILE *f;
    int i;
    snprintf(path, sizeof(path), "%s/rank_%d.json", dir, r);
    cr_assert((f = fopen(path, "w")) != NULL);
    fprintf(f, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [\n", r);
    for (i = 0; i < 4; i++) {
        int op = START[r][i] - 50, a2a = i == 3;
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
                   "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 20},\n", op);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:%s\", "
                   "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 10, \"args\": {\"Input Dims\": "
                   "[[%d]], \"Input type\": [\"%s\"]}},\n",
                a2a ? "all_to_all" : "all_reduce", op + 5, a2a ? 256 : 1000, a2a ? "int" : "float");
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                   "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 4, \"args\": {\"correlation\": "
                   "%d}},\n", op + 7, i + 1);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_%s_RING_LL_Sum_"
                   "float(x)\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": %d, \"args\": "
                   "{\"correlation\": %d}},\n", a2a ? "SendRecv" : "AllReduce", START[r][i],
                END[i] - START[r][i], i + 1);
    }
    /* a record_param_comms alone (a wait): no call */
    fprintf(f, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
               "\"pid\": 1, \"tid\": 1, \"ts\": 900, \"dur\": 2}]}\n");
    fclose(f);
}

static char job[256];

static void make_job(void)
{
    snprintf(job, sizeof(job), "%s/tt_coll_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert(mkdtemp(job) != NULL);
    write_rank(job, 0);
    write_rank(job, 1);
}

static void remove_job(void)
{
    char p[600];
    int r;
    for (r = 0; r < 2; r++) {
        snprintf(p, sizeof(p), "%s/rank_%d.json", job, r);
        unlink(p);
    }
    rmdir(job);
}

struct got {
    tt_coll_call c[16];
    char coll[16][16];
    int n;
};

static int keep(void *ctx, const tt_coll_call *c)
{
    struct got *g = ctx;
    cr_assert(g->n < 16);
    g->c[g->n] = *c;
    snprintf(g->coll[g->n], sizeof(g->coll[0]), "%s", c->collective);
    g->c[g->n].collective = g->coll[g->n];
    g->c[g->n].pg = g->c[g->n].name = g->c[g->n].dtype = NULL; /* not kept */
    g->n++;
    return 0;
}

static void check_job(const struct got *g, const tt_coll_result *res)
{
    int i, r, k;
    cr_assert_eq(g->n, 8, "4 calls x 2 ranks, no wait");
    cr_expect_eq(res->calls, 8);
    cr_expect_eq(res->instances, 4);
    for (k = 0; k < g->n; k++) {
        const tt_coll_call *c = &g->c[k];
        int a2a = !strcmp(g->coll[k], "alltoall"), last;
        i = a2a ? 3 : (int)c->seq - 1;
        r = (int)c->rank;
        last = START[1][i] > START[0][i] ? 1 : 0;
        cr_expect(a2a || !strcmp(g->coll[k], "allreduce"), "%s", g->coll[k]);
        cr_expect_eq(c->by_seq, 0, "no Seq: matched by order");
        cr_expect_eq(c->start_ns, START[r][i] * 1000LL);
        cr_expect_eq(c->dur_ns, (END[i] - START[r][i]) * 1000LL);
        cr_expect_eq(c->cpu_start_ns, (START[r][i] - 50) * 1000LL);
        cr_expect_eq(c->size_bytes, a2a ? 1024 : 4000);
        cr_expect_eq(c->group_size, 2, "distributedInfo's world size");
        cr_expect_eq(c->ranks, 2);
        cr_expect_eq(c->straggler_rank, last);
        cr_expect_eq(c->skew_ns, llabs(START[1][i] - START[0][i]) * 1000LL);
        cr_expect_float_eq(c->algbw, (a2a ? 1024.0 : 4000.0) / (double)c->dur_ns, 1e-12);
        cr_expect_float_eq(c->busbw, c->algbw * (a2a ? 0.5 : 1.0), 1e-12);
        if (k) /* by the instance's earliest arrival */
            cr_expect(g->c[k - 1].arrival_ns - g->c[k - 1].late_ns <=
                      c->arrival_ns - c->late_ns);
    }
    cr_assert_eq(res->nranks, 2);
    cr_expect_eq(res->ranks[0].last, 1); /* the third all_reduce */
    cr_expect_eq(res->ranks[0].skew_total_ns, 20000);
    cr_expect_eq(res->ranks[1].last, 3);
    cr_expect_eq(res->ranks[1].skew_total_ns, 30000 + 10000 + 60000);
    cr_expect_eq(res->ranks[1].skew_max_ns, 60000);
    cr_expect_eq(res->ranks[0].bytes, 3 * 4000 + 1024);
}

Test(collectives, job, .init = make_job, .fini = remove_job)
{
    tt_coll_options o = TT_COLL_OPTIONS_INIT;
    tt_coll_result res;
    struct got g;
    uint64_t spilled;
    size_t peak;
    memset(&g, 0, sizeof(g));
    cr_assert_eq(tt_collectives_file_calls(job, &o, keep, &g, &res), 0, "%s",
                 tt_error_last()->message);
    check_job(&g, &res);
    tt_coll_result_free(&res);
    /* every spill on disk: the same */
    memset(&g, 0, sizeof(g));
    tt__spill_stats_reset();
    tt__spill_set_limit(300);
    cr_assert_eq(tt_collectives_file_calls(job, &o, keep, &g, &res), 0);
    tt__spill_set_limit(0);
    tt__spill_stats(&spilled, &peak);
    cr_expect(spilled >= 3, "the items, the calls, the instances written out (%lu)",
              (unsigned long)spilled);
    check_job(&g, &res);
    tt_coll_result_free(&res);
    /* the time range: the ops of the second and third calls */
    o.filter.from_ns = 240000;
    o.filter.to_ns = 480000;
    memset(&g, 0, sizeof(g));
    cr_assert_eq(tt_collectives_file_calls(job, &o, keep, &g, &res), 0);
    cr_expect_eq(g.n, 4);
    cr_expect(g.c[0].seq == 2 && g.c[3].seq == 3, "the ordinals of the whole trace");
    tt_coll_result_free(&res);
}

/* --name: the collective or the name; --under: the op, annotation or a
 * kernel's launch in a matching op; both after the calls are numbered */
static int filtered(const char *name, const char *under, unsigned version, struct got *g)
{
    tt_coll_options o = TT_COLL_OPTIONS_INIT;
    tt_coll_result res;
    int rc;
    o.version = version;
    o.filter.name = name;
    o.filter.under = under;
    memset(g, 0, sizeof(*g));
    rc = tt_collectives_file_calls(job, &o, keep, g, &res);
    if (rc == 0)
        cr_expect_eq(res.calls, g->n, "the summary counts what passes");
    tt_coll_result_free(&res);
    return rc;
}

Test(collectives, filters, .init = make_job, .fini = remove_job)
{
    struct got g;
    int k;
    cr_assert_eq(filtered("alltoall", NULL, 2, &g), 0, "%s", tt_error_last()->message);
    cr_expect_eq(g.n, 2, "the all_to_all of each rank (its collective)");
    for (k = 0; k < g.n; k++)
        cr_expect(!strcmp(g.coll[k], "alltoall") && g.c[k].ranks == 2 && g.c[k].seq == 1);
    cr_assert_eq(filtered("^all_reduce$", NULL, 2, &g), 0);
    cr_expect_eq(g.n, 6, "the name nccl:all_reduce gives");
    for (k = 0; k < g.n; k++)
        cr_expect(!strcmp(g.coll[k], "allreduce") && g.c[k].ranks == 2);
    cr_assert_eq(filtered(NULL, "nccl:all_to_all", 2, &g), 0);
    cr_expect_eq(g.n, 2, "its annotation and kernel launch in nccl:all_to_all");
    cr_assert_eq(filtered(NULL, "record_param_comms", 2, &g), 0);
    cr_expect_eq(g.n, 8, "the op itself");
    cr_assert_eq(filtered("reduce", "record_param_comms", 2, &g), 0);
    cr_expect_eq(g.n, 6);
    cr_expect(g.c[5].seq == 3, "the ordinals of the whole trace");
    cr_assert_eq(filtered(NULL, "nccl:none", 2, &g), 0);
    cr_expect_eq(g.n, 0, "nothing under: no call, no error");
    cr_expect_eq(filtered("alltoall", NULL, 1, &g), TT_EINVALID, "version 1 knew no --name");
    cr_expect_eq(filtered("(", NULL, 2, &g), TT_EINVALID, "a bad expression");
}

Test(collectives, nothing)
{
    char path[256];
    tt_coll_options o = TT_COLL_OPTIONS_INIT;
    tt_coll_result res;
    FILE *f;
    int fd;
    snprintf(path, sizeof(path), "/tmp/tt_coll_none_XXXXXX.json");
    cr_assert((fd = mkstemps(path, 5)) >= 0);
    cr_assert((f = fdopen(fd, "w")) != NULL);
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", "
          "\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2}]}", f);
    fclose(f);
    cr_expect_eq(tt_collectives_file_result(path, &o, &res), TT_ENOTFOUND);
    cr_expect(strstr(tt_error_last()->message, "no collective") != NULL);
    cr_expect_eq(res.nranks, 0);
    unlink(path);
}
