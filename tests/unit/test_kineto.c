/*
 * tests/unit/test_kineto.c - the meaning of Kineto values (formats/kineto.c):
 * c10 device names; which kernel names are communication (tt_kineto_is_comm,
 * with and without extra patterns).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "formats/kineto.h"
#include "tracetool/formats.h"

static void parses(const char *s, int type, int64_t index)
{
    int t = -99;
    int64_t i = -99;
    cr_assert_eq(tt_device_parse(s, &t, &i), 0, "%s", s);
    cr_assert_eq(t, type, "%s: type %d", s, t);
    cr_assert_eq(i, index, "%s: index %lld", s, (long long)i);
}

Test(device, every_c10_type_by_name)
{
    /* c10/core/DeviceType.h values */
    parses("cpu", 0, -1);
    parses("cpu:0", 0, -1);
    parses("cuda", 1, 0);
    parses("cuda:3", 1, 3);
    parses("hip:0", 6, 0);
    parses("xpu:1", 12, 1);
    parses("mps:0", 13, 0);
    parses("meta", 14, 0);
    parses("hpu:2", 15, 2);
    parses("mtia:0", 19, 0);
    parses("privateuseone:1", 20, 1);
    parses("6:0", 6, 0);
}

Test(device, bad_ones_are_refused)
{
    static const char *bad[] = { "cuda:abc", "cuda:", "cuda:-1", "cuda:1x", "gpu:0", "",
                                 ":0", "CUDA:0", "cuda:99999999999" };
    size_t k;
    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        int t;
        int64_t i;
        cr_assert_eq(tt_device_parse(bad[k], &t, &i), TT_EINVALID, "'%s' accepted", bad[k]);
    }
}

Test(device, names_round_trip)
{
    char buf[32];
    int t;
    for (t = 0; t <= 20; t++) {
        int t2;
        int64_t i2;
        cr_assert_not_null(tt_device_type_name(t));
        tt_device_format(t, t == 0 ? -1 : 2, buf, sizeof(buf));
        cr_assert_eq(tt_device_parse(buf, &t2, &i2), 0, "%s", buf);
        cr_assert_eq(t2, t);
        cr_assert_eq(i2, t == 0 ? -1 : 2);
    }
    cr_assert_null(tt_device_type_name(21));
    tt_device_format(42, 3, buf, sizeof(buf));
    cr_assert_str_eq(buf, "type42:3");
}

/* ---- communication kernels ---- */

/* names as Kineto writes them: NCCL / RCCL / HCCL, vLLM / sglang / TensorRT-LLM
 * custom all-reduce, PyTorch symmetric memory (the multimem all-reduce of a
 * B200 vLLM trace), NVSHMEM, MSCCL, Transformer Engine userbuffers, mangled */
static const char *const comm_names[] = {
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
    "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)",
    "hcclAllReduce",
    "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, "
    "unsigned long, unsigned int**, unsigned long, unsigned long)",
    "void <unnamed>::multimem_all_reduce_kernel<c10::BFloat16, (int)16>(c10::BFloat16*)",
    "void c10d::symmetric_memory::multimem_all_gather_kernel<16>(char*, unsigned long)",
    "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, "
    "vllm::Signal*, __nv_bfloat16*, int, int)",
    "void sglang::cross_device_reduce_2stage<half, 8>(sglang::RankData*, int)",
    "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 4>(float**, unsigned long)",
    "two_shot_all_reduce_kernel_inplace",
    "void tensorrt_llm::kernels::oneShotAllReduceKernel<half, 8>(tensorrt_llm::kernels::"
    "AllReduceParams)",
    "void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP<half>>(int)",
    "void nvshmemi_reduce_kernel<float>(int)",
    "nvshmemx_barrier_all_on_stream_kernel",
    "mscclKernel_Sum_float_LL",
    "void kuserbuffers_pushsend(int*, int*, int4*, int4*, int)",
    "dlslime::intranode_alltoall_kernel",
    "ReduceScatterKernel",
    "all_to_all_kernel",
    "ALL_GATHER_V",
    "all2all_kernel",
    "_ZN4vllm26cross_device_reduce_1stageI6__halfLi8EEvPNS_8RankDataENS_11RankSignalsEPT_ii",
    "_ZN12_GLOBAL__N_126multimem_all_reduce_kernelIN3c108BFloat16ELi16EEEvPT_mPPjmm",
};

/* compute kernels whose names come near: "reduce", "gather", "scatter" alone,
 * a collective in a template argument or a parameter type, Inductor's copies
 * named after the collective they feed, words that only contain a token */
static const char *const compute_names[] = {
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float,"
    " float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, "
    "float>, unsigned int, float, 4>)",
    "void cub::DeviceReduceKernel<cub::DeviceReducePolicy<float>::Policy600, float*>(float*)",
    "void cub::DeviceReduceSingleTileKernel<int>(int)",
    "void cub::DeviceSegmentedReduceKernel<int>(int)",
    "void at::native::_scatter_gather_elementwise_kernel<128, 4>(at::TensorIterator&)",
    "void at::native::(anonymous namespace)::scatter_reduce_kernel<float>(int)",
    "void splitKreduce_kernel<float, float, float>(cublasSplitKParams<float>, float const*)",
    "void cublasLt::splitKreduce_kernel<32, 16, int, float>(cublasLt::cublasSplitKParams<float>)",
    "void reduce_1Block_kernel<float, 128, 7>(float const*)",
    "void gemm_kernel<AllReduceEpilogue>(int)",
    "void foo_kernel(tensorrt_llm::kernels::AllReduceParams)",
    "triton_poi_fused_all_reduce_0",
    "triton_poi_fused_all_to_all_single_clone_permute_view_0",
    "small_reduce_kernel",
    "void all_gatherer(int)",
    "void multimemory_copy(int)",
    "ncc_kernel",
    "hipKernel_all",
    "ampere_sgemm_128x64_nn",
    "",
};

Test(comm, the_collective_families_are_communication)
{
    size_t k;
    for (k = 0; k < sizeof(comm_names) / sizeof(comm_names[0]); k++)
        cr_expect_eq(tt_kineto_is_comm(comm_names[k], NULL), 1, "%s", comm_names[k]);
    cr_expect_eq(tt_kineto_is_comm(NULL, NULL), 0);
}

Test(comm, reduce_alone_is_compute)
{
    size_t k;
    for (k = 0; k < sizeof(compute_names) / sizeof(compute_names[0]); k++)
        cr_expect_eq(tt_kineto_is_comm(compute_names[k], NULL), 0, "%s", compute_names[k]);
}

Test(comm, extra_patterns_add_names)
{
    static const char *const pats[] = { "^void deep_ep::(intranode|internode)::", "my_ar_kernel$" };
    tt_comm_rules r;
    cr_assert_eq(tt_comm_rules_compile(&r, pats, 2), 0);
    cr_expect_eq(r.n, 2);
    cr_expect_eq(tt_kineto_is_comm("void deep_ep::intranode::dispatch<8, 768>(int4*)", &r), 1);
    cr_expect_eq(tt_kineto_is_comm("void deep_ep::get_dispatch_layout(long*)", &r), 0);
    cr_expect_eq(tt_kineto_is_comm("void ns::my_ar_kernel", &r), 1);
    cr_expect_eq(tt_kineto_is_comm("void ns::my_ar_kernel<int>", &r), 0);
    /* they add, never take away */
    cr_expect_eq(tt_kineto_is_comm("ncclDevKernel_Generic(int)", &r), 1);
    cr_expect_eq(tt_kineto_is_comm("small_reduce_kernel", &r), 0);
    tt_comm_rules_free(&r);
    cr_expect_eq(r.n, 0);
    cr_expect_null(r.re);
}

Test(comm, a_bad_pattern_is_refused)
{
    static const char *const pats[] = { "ok", "(unclosed" };
    tt_comm_rules r;
    cr_expect_eq(tt_comm_rules_compile(&r, pats, 2), TT_EINVALID);
    cr_expect_eq(r.n, 0);
    cr_expect_null(r.re);
    cr_expect_eq(tt_comm_rules_compile(&r, NULL, 0), 0);
    cr_expect_eq(tt_kineto_is_comm("x", &r), 0);
    tt_comm_rules_free(&r);
}
