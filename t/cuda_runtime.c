/* pagedkv beside the CUDA runtime in one process, as in an inference engine: device memory and
 * a stream created by the runtime go straight into the launchers (one primary context serves
 * both), the bytes equal the reference's, and closing the handle leaves the runtime working. */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "diffcase.h"
#include "randcase.h"
#include "pagedkv.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

static void *dev_copy(const void *src, size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes + 16) != cudaSuccess) bail("cudaMalloc failed");
    if (src && cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        bail("cudaMemcpy failed");
    if (!src && cudaMemset(p, 0xA5, bytes) != cudaSuccess) bail("cudaMemset failed");
    return p;
}

static uint64_t u(const void *p) { return (uint64_t)(uintptr_t)p; }

int main(void)
{
    pkvi_rng r = {0x2545f4914f6cdd1dull};
    pkvi_case c;
    pkv_cuda *h = NULL;
    cudaStream_t s;
    int n = 0;
    size_t pool, src;
    unsigned char *want_k, *want_v, *got_k, *got_v;
    void *dk, *dv, *dw, *dp, *ds, *dkc, *dvc;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        if (gpu_required()) bail("no CUDA device for the runtime");
        skip_all("no CUDA device for the runtime");
    }
    plan(6);
    ok(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess,
       "the runtime set device 0 and created a stream");
    if (pkvi_case_random(&c, &r, 8, 128, 16, 300)) bail("out of memory");
    c.f.cache.block_stride = 0; /* dense, aligned: the 16-byte kernels */
    c.w.cache.block_stride = 0;
    c.f.k_row_stride = c.w.k_row_stride = 0;
    c.f.v_row_stride = c.w.v_row_stride = 0;
    c.f.rotary_dim = 128;
    pool = (size_t)c.f.cache.num_blocks * 16 * 8 * 128; /* FP8 bytes */
    src = c.src_elems * 2;
    want_k = malloc(pool);
    want_v = malloc(pool);
    got_k = malloc(pool);
    got_v = malloc(pool);
    if (!want_k || !want_v || !got_k || !got_v) bail("out of memory");
    memset(want_k, 0xA5, pool);
    memset(want_v, 0xA5, pool);
    dk = dev_copy(c.k, src);
    dv = dev_copy(c.v, src);
    dw = dev_copy(c.wt, 128 * 2);
    dp = dev_copy(c.pos[0], (size_t)c.f.num_tokens * 4);
    ds = dev_copy(c.slots, (size_t)c.f.num_tokens * 8);
    dkc = dev_copy(NULL, pool);
    dvc = dev_copy(NULL, pool);

    ok(pkv_cuda_open(0, &h) == PKV_OK, "pagedkv opened device 0 beside the runtime");
    is_int(pkv_cuda_fused_fp8_kv(h, &c.f, u(dk), u(dv), u(dw), u(dp), u(ds), u(dkc), u(dvc), 0,
                                 (void *)s),
           PKV_OK, "fused_fp8_kv took cudaMalloc pointers and a runtime stream");
    ok(cudaStreamSynchronize(s) == cudaSuccess &&
           cudaMemcpy(got_k, dkc, pool, cudaMemcpyDeviceToHost) == cudaSuccess &&
           cudaMemcpy(got_v, dvc, pool, cudaMemcpyDeviceToHost) == cudaSuccess &&
           pkv_ref_fused_fp8_kv(&c.f, c.k, c.v, c.wt, c.pos[0], c.slots, want_k, want_v, NULL) ==
               PKV_OK &&
           memcmp(got_k, want_k, pool) == 0 && memcmp(got_v, want_v, pool) == 0,
       "its pools equal the reference's (%zu bytes each)", pool);
    pkv_cuda_close(h);
    ok(cudaMemcpy(got_k, dkc, pool, cudaMemcpyDeviceToHost) == cudaSuccess &&
           memcmp(got_k, want_k, pool) == 0,
       "after pkv_cuda_close the runtime's memory and context still work");
    ok(cudaFree(dk) == cudaSuccess && cudaFree(dv) == cudaSuccess && cudaFree(dw) == cudaSuccess &&
           cudaFree(dp) == cudaSuccess && cudaFree(ds) == cudaSuccess &&
           cudaFree(dkc) == cudaSuccess && cudaFree(dvc) == cudaSuccess &&
           cudaStreamDestroy(s) == cudaSuccess,
       "the runtime freed everything");
    pkvi_case_free(&c);
    free(want_k);
    free(want_v);
    free(got_k);
    free(got_v);
    return done_testing();
}
