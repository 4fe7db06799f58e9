/*
 * tests/capture/cuda_prog.cu - a CUDA program that knows nothing of
 * tracetool: a line on stdout, a vector add launched 3 times and a scale
 * kernel once, the result copied back and checked. Any CUDA error is one
 * line on stderr and exit status 2 (on a host without a GPU or driver:
 * "no CUDA-capable device" or "driver" errors at the first call).
 *
 *   cuda_prog [--range]
 *
 * --range: cudaProfilerStart before the second vec_add and cudaProfilerStop
 * after the third (2 launches inside, for --capture-range cuda-profiler-api).
 * test_record.py and bench/gpu/check_kernels.sh know these launches.
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#define N (1 << 20)

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

__global__ void scale(float *c, float k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] *= k;
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "cuda_prog: %s: %s\n", what, cudaGetErrorString(e));
    return -1;
}

int main(int argc, char **argv)
{
    static float ha[N], hb[N], hc[N];
    float *a = NULL, *b = NULL, *c = NULL;
    int range = argc > 1 && !strcmp(argv[1], "--range"), i, bad = 0;
    size_t bytes = N * sizeof(float);
    printf("cuda_prog: vector add of %d floats\n", N);
    fflush(stdout);
    for (i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = (float)(2 * i);
    }
    if (check(cudaMalloc((void **)&a, bytes), "cudaMalloc") ||
        check(cudaMalloc((void **)&b, bytes), "cudaMalloc") ||
        check(cudaMalloc((void **)&c, bytes), "cudaMalloc") ||
        check(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice), "cudaMemcpy HtoD") ||
        check(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice), "cudaMemcpy HtoD"))
        return 2;
    for (i = 0; i < 3; i++) {
        if (range && i == 1 && check(cudaProfilerStart(), "cudaProfilerStart"))
            return 2;
        vec_add<<<(N + 255) / 256, 256>>>(a, b, c, N);
        if (check(cudaGetLastError(), "vec_add launch"))
            return 2;
        if (range && i == 2 && check(cudaProfilerStop(), "cudaProfilerStop"))
            return 2;
    }
    scale<<<(N + 255) / 256, 256>>>(c, 0.5f, N);
    if (check(cudaGetLastError(), "scale launch") ||
        check(cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy DtoH"))
        return 2;
    for (i = 0; i < N; i++)
        bad += hc[i] != 1.5f * (float)i;
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    printf("cuda_prog: %s (%d wrong)\n", bad ? "FAILED" : "ok", bad);
    return bad ? 1 : 0;
}
