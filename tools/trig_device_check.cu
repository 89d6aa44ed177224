// trig_device_check: the device build of ref/cr_trig.h (compiled with the kernels' flags) must
// give the host library's bits for sin and cos on every one of the 2^32 binary32 inputs.
// Also reports the throughput of both. Needs a CUDA GPU; exit status 1 on any difference.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>

#include "cr_trig.h"
extern "C" {
#include "pagedkv.h"
#include "../t/par.h"
}

#define CHUNK (1ull << 28)
#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                        \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

__global__ void sincos_kernel(unsigned long long base, unsigned n, float *s, float *c)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned u = (unsigned)(base + i);
        pkvi_sincosf_cr(__uint_as_float(u), &s[i], &c[i], 0);
    }
}

struct ctx {
    unsigned long long base;
    const float *s, *c;
};

static void compare(uint64_t b, uint64_t e, uint64_t stride, void *p, par_result *r)
{
    const ctx *x = (const ctx *)p;
    for (uint64_t i = b; i < e; i += stride) {
        float hs, hc;
        uint32_t u = (uint32_t)(x->base + i), a, bb, cc, d;
        float in;
        memcpy(&in, &u, 4);
        pkv_sincosf_cr(in, &hs, &hc);
        memcpy(&a, &hs, 4);
        memcpy(&bb, &x->s[i], 4);
        memcpy(&cc, &hc, 4);
        memcpy(&d, &x->c[i], 4);
        r->checked++;
        if (a != bb || cc != d) par_fail(r, x->base + i);
    }
}

static double now()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main()
{
    float *ds, *dc, *hs, *hc;
    cudaDeviceProp prop;
    cudaEvent_t e0, e1;
    double gpu_ms_total = 0, host_s = 0;
    unsigned long long mismatches = 0, first = 0, checked = 0;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaMalloc(&ds, CHUNK * 4));
    CHECK(cudaMalloc(&dc, CHUNK * 4));
    CHECK(cudaMallocHost(&hs, CHUNK * 4));
    CHECK(cudaMallocHost(&hc, CHUNK * 4));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (unsigned long long base = 0; base < (1ull << 32); base += CHUNK) {
        float ms;
        ctx x = {base, hs, hc};
        par_result r;
        double t0;
        CHECK(cudaEventRecord(e0));
        sincos_kernel<<<(unsigned)(CHUNK / 256), 256>>>(base, (unsigned)CHUNK, ds, dc);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaGetLastError());
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        gpu_ms_total += ms;
        CHECK(cudaMemcpy(hs, ds, CHUNK * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hc, dc, CHUNK * 4, cudaMemcpyDeviceToHost));
        t0 = now();
        r = par_run(0, CHUNK, 1, compare, &x);
        host_s += now() - t0;
        if (r.mismatches && !mismatches) first = r.first_bad;
        mismatches += r.mismatches;
        checked += r.checked;
    }
    printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    printf("inputs: %llu, sin or cos differing from the host: %llu", checked, mismatches);
    if (mismatches) printf(" (first 0x%08llx)", first);
    printf("\nGPU: %.1f ms for 2^32 sincos, %.3g sincos/s\n", gpu_ms_total,
           4294967296.0 / (gpu_ms_total * 1e-3));
    printf("host (%s threads, including the comparison): %.1f s, %.3g sincos/s\n",
           getenv("PKV_TEST_THREADS") ? getenv("PKV_TEST_THREADS") : "all", host_s,
           4294967296.0 / host_s);
    return mismatches != 0;
}
