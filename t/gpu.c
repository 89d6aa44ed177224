/* See gpu.h. */
#include "gpu.h"
#include "tap.h"
#include "../lib/env.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ALLOCS 64
static uint64_t allocs[MAX_ALLOCS];
static int nallocs;

int gpu_required(void)
{
    return pkvi_env_on("PKV_TEST_REQUIRE_GPU");
}

pkv_cuda *gpu_open_or_skip(void)
{
    pkv_cuda *h = NULL;
    int required = gpu_required();
    pkv_status st;
    if (getenv("VALGRIND") && !required) skip_all("GPU tests do not run under Valgrind");
    st = pkv_cuda_open(0, &h);
    if (st != PKV_OK) {
        if (required) bail("PKV_TEST_REQUIRE_GPU is set but no GPU: %s", pkv_last_error());
        skip_all("no CUDA device: %s", pkv_last_error());
    }
    diag("device: %s", pkv_cuda_describe(h));
    return h;
}

uint64_t gpu_upload(pkv_cuda *h, const void *src, size_t bytes, size_t shift)
{
    uint64_t p = 0;
    if (nallocs == MAX_ALLOCS) bail("too many device allocations");
    if (pkv_cuda_alloc(h, bytes + shift + 16, &p) != PKV_OK) bail("cuda_alloc: %s", pkv_last_error());
    allocs[nallocs++] = p;
    if (src && pkv_cuda_upload(h, p + shift, src, bytes) != PKV_OK)
        bail("cuda_upload: %s", pkv_last_error());
    return p + shift;
}

uint64_t gpu_poisoned(pkv_cuda *h, size_t bytes, size_t shift)
{
    uint64_t p = gpu_upload(h, NULL, bytes, shift);
    if (pkv_cuda_fill(h, p, 0xA5, bytes) != PKV_OK) bail("cuda_fill: %s", pkv_last_error());
    return p;
}

void gpu_download(pkv_cuda *h, void *dst, uint64_t src, size_t bytes)
{
    if (pkv_cuda_synchronize(h, NULL) != PKV_OK) bail("synchronize: %s", pkv_last_error());
    if (pkv_cuda_download(h, dst, src, bytes) != PKV_OK) bail("cuda_download: %s", pkv_last_error());
}

void gpu_free_all(pkv_cuda *h)
{
    for (int i = 0; i < nallocs; i++) pkv_cuda_free(h, allocs[i]);
    nallocs = 0;
}

pkv_cache_layout gpu_plan_cache(uint32_t nkv, uint32_t hd, uint32_t tokens)
{
    pkv_cache_layout c;
    memset(&c, 0, sizeof c);
    c.num_kv_heads = nkv;
    c.head_dim = hd;
    c.block_size = 16;
    c.num_blocks = tokens / 16u + 1u;
    return c;
}
