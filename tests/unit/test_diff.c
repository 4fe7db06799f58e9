/*
 * tests/unit/test_diff.c - the statistics and keys of `tracetool diff`.
 * Expected values: exact Mann-Whitney tails 1/C(n+m, n) for complete
 * separation (the floors quoted in docs/DIFF.md), and the rest computed by
 * brute-force enumeration / the textbook formulas in a Python standard-library
 * script (itertools over all arrangements, statistics.median, math.erfc).
 * Then the bounds of --rename rules: regcomp's expansion of nested
 * repetitions, line length, keys kept whole.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/diff/diff_state.h" /* --rename's rules (internal) */
#include "tracetool/diff.h"
#include "tracetool/formats.h" /* tt_kernel_family */

#define NEAR(a, b) cr_expect(fabs((a) - (b)) < 1e-12 * (fabs(b) > 1 ? fabs(b) : 1), "%.15g vs %.15g", (a), (b))

Test(diff_stats, exact_complete_separation)
{
    double b3[] = { 1, 2, 3 }, n3[] = { 4, 5, 6 };
    double b5[] = { 76.1, 76.5, 76.8, 77.0, 77.2 }, n5[] = { 115, 116, 116.7, 117, 118 };
    double b6[] = { 1, 2, 3, 4, 5, 6 }, n6[] = { 7, 8, 9, 10, 11, 12 };
    int exact = 0;
    NEAR(tt_mwu_p_greater(b3, 3, n3, 3, &exact), 0.05);
    cr_expect_eq(exact, 1);
    NEAR(tt_mwu_p_greater(b5, 5, n5, 5, NULL), 1.0 / 252);
    NEAR(tt_mwu_p_greater(b6, 6, n6, 6, NULL), 1.0 / 924);
    /* the other direction: every arrangement is at least as large */
    NEAR(tt_mwu_p_greater(n5, 5, b5, 5, NULL), 1.0);
    NEAR(tt_mwu_p_min(5, 5), 1.0 / 252);
    NEAR(tt_mwu_p_min(4, 4), 1.0 / 70);
    NEAR(tt_mwu_p_min(2, 3), 0.1);
}

Test(diff_stats, exact_against_enumeration)
{
    /* itertools.combinations over all 35 / 252 arrangements */
    double x[] = { 1, 5, 9 }, y[] = { 2, 3, 10, 11 };
    double x2[] = { 10, 20, 30, 40, 50 }, y2[] = { 11, 12, 13, 60, 70 };
    NEAR(tt_mwu_p_greater(x, 3, y, 4, NULL), 11.0 / 35);
    NEAR(tt_mwu_p_greater(x2, 5, y2, 5, NULL), 0.5);
}

Test(diff_stats, ties_normal_approximation)
{
    /* U = 17.5; tie-corrected variance, continuity 0.5: 0.03927292547559535 */
    double x[] = { 1, 2, 2, 3 }, y[] = { 2, 3, 4, 4, 5 };
    int exact = 1;
    double p = tt_mwu_p_greater(x, 4, y, 5, &exact);
    cr_expect_eq(exact, 0);
    cr_expect(fabs(p - 0.03927292547559535) < 1e-12, "p = %.17g", p);
    /* all equal: no evidence either way */
    {
        double a[] = { 5, 5, 5 }, b[] = { 5, 5, 5 };
        cr_expect(tt_mwu_p_greater(a, 3, b, 3, NULL) >= 0.5);
    }
    cr_expect(isnan(tt_mwu_p_greater(x, 0, y, 5, NULL)));
}

Test(diff_stats, effects)
{
    double x[] = { 1, 2, 2, 3 }, y[] = { 2, 3, 4, 4, 5 }, e[] = { 4, 1, 3, 2 };
    double q[4], p[] = { 0.01, 0.04, 0.03, 0.2 };
    NEAR(tt_hodges_lehmann(x, 4, y, 5), 2.0);
    NEAR(tt_median(y, 5), 4.0);
    NEAR(tt_median(e, 4), 2.5);
    cr_expect(isnan(tt_median(e, 0)));
    /* numpy quantiles of 1 2 3 4: 1.75 and 3.25, median 2.5 */
    NEAR(tt_iqr_ratio(e, 4), 1.5 / 2.5);
    cr_assert_eq(tt_bh_adjust(p, 4, q), 0);
    NEAR(q[0], 0.04);
    NEAR(q[1], 0.16 / 3);
    NEAR(q[2], 0.16 / 3);
    NEAR(q[3], 0.2);
}

static void fam(const char *name, const char *want)
{
    char out[256];
    tt_kernel_family(name, out, sizeof(out));
    cr_expect_str_eq(out, want, "%s", name);
}

Test(diff_keys, kernel_families)
{
    fam("volta_sgemm_128x64_nn", "ARCH_sgemm_TILE");
    fam("ampere_sgemm_64x32_sliced1x4_tn", "ARCH_sgemm_TILE");
    fam("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16", "ARCH_xmma_gemm_f32f32_tf32f32_f32_TILE_n_tilesize128x128x16");
    fam("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "at::native::vectorized_elementwise_kernel");
    fam("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, float const*, int, int, int)",
        "softmax_warp_forward");
    fam("triton_poi_fused_add_relu_3", "triton_poi_fused_add_relu");
    fam("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "nccl:allreduce:f32");
    fam("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        "nccl:allreduce:f32");
    fam("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        "nccl:allreduce:f32");
    fam("ncclDevKernel_Generic(ncclDevComm*, unsigned long, ncclWork*)", "nccl:generic");
    fam("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "nccl:sendrecv:i8");
    fam("cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
        "cutlass::Kernel");
    fam("Memcpy HtoD", "Memcpy HtoD");
}

/* ---- --rename FILE: bounded (issue 29) ---- */

/* load a rules file holding text; the code, and the message in msg */
static int load_rules(const char *text, char *msg, size_t cap)
{
    char path[] = "/tmp/tt_rename_XXXXXX";
    int fd = mkstemp(path), rc;
    struct tt__renames r;
    FILE *f;
    cr_assert(fd >= 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    rc = tt__renames_load(path, &r);
    snprintf(msg, cap, "%s", rc < 0 ? tt_error_last()->message : "");
    if (rc == 0)
        tt__renames_free(&r);
    unlink(path);
    return rc;
}

Test(diff_rename, costly_rules_refused)
{
    static const char *const ok[] = {
        "a{1,255} => x\n", "^(cutlass::Kernel|ARCH_sgemm_TILE)$ => GEMM\n",
        "[0-9]{1,3}(x[0-9]{1,3}){0,3} => N\n", "a{1,255}{1,8} => x\n", "[{]{1,255} => x\n",
        "(((a+)+)+)+ => x\n",
    };
    static const char *const bad[] = {
        "a{1,255}{1,255}{1,255} => x\n", "a{1,255}{1,255} => x\n", "(a{1,100}){1,100} => x\n",
        "((((x{2,}){1,200}))){1,30} => y\n", "(a|b|c|d){1,255}{1,4} => z\n",
        "a{,255}{,255} => x\n", "a{01,0255}{1,255} => x\n",
    };
    char msg[512];
    size_t k;
    for (k = 0; k < sizeof(ok) / sizeof(ok[0]); k++)
        cr_expect_eq(load_rules(ok[k], msg, sizeof(msg)), 0, "%s: %s", ok[k], msg);
    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        cr_expect_eq(load_rules(bad[k], msg, sizeof(msg)), TT_EINVALID, "%s", bad[k]);
        cr_expect(strstr(msg, "line 1: the regular expression is too costly") != NULL, "%s", msg);
    }
    /* 200 rules of 1,000 positions each: the file's bound */
    {
        char *text = malloc(200 * 24 + 1), *p = text;
        for (k = 0; k < 200; k++)
            p += sprintf(p, "a{1,250}{1,4} => b\n");
        cr_expect_eq(load_rules(text, msg, sizeof(msg)), TT_EINVALID);
        cr_expect(strstr(msg, "the rules together are too costly") != NULL, "%s", msg);
        free(text);
    }
    /* nesting deeper than the bound */
    {
        char text[256];
        memset(text, '(', 100);
        strcpy(text + 100, "a => b\n");
        cr_expect_eq(load_rules(text, msg, sizeof(msg)), TT_EINVALID);
        cr_expect(strstr(msg, "nested deeper") != NULL, "%s", msg);
    }
}

Test(diff_rename, long_lines_and_whole_keys)
{
    char msg[512], *text = malloc(5000 + 64), path[] = "/tmp/tt_rename_XXXXXX";
    char *key = malloc(70001), *out = NULL;
    struct tt__renames r;
    int fd;
    FILE *f;
    memset(text, 'x', 5000);
    strcpy(text + 5000, " => y\n");
    cr_expect_eq(load_rules(text, msg, sizeof(msg)), TT_EINVALID);
    cr_expect(strstr(msg, "line 1: too long") != NULL, "%s", msg);
    free(text);
    /* a 70 KB key comes out whole, renamed */
    fd = mkstemp(path);
    f = fdopen(fd, "w");
    fputs("^op_(x*)$ => OP_\\1\n", f);
    fclose(f);
    cr_assert_eq(tt__renames_load(path, &r), 0);
    unlink(path);
    memcpy(key, "op_", 3);
    memset(key + 3, 'x', 69997);
    key[70000] = '\0';
    cr_assert_eq(tt__renames_apply(&r, key, &out), 0);
    cr_expect_eq(strlen(out), 70000);
    cr_expect(!strncmp(out, "OP_xxx", 6));
    free(out);
    tt__renames_free(&r);
    free(key);
}
