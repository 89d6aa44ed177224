/* GPU test helpers: open device 0, or SKIP (FAIL with PKV_TEST_REQUIRE_GPU=1). */
#ifndef PKV_GPU_H
#define PKV_GPU_H

#include "pagedkv.h"

/* Whether a missing GPU fails the test: PKV_TEST_REQUIRE_GPU set, not to "" or "0". */
int gpu_required(void);

/* Returns an open handle or does not return (skip_all / bail). */
pkv_cuda *gpu_open_or_skip(void);

/* Device copies of host buffers; gpu_upload offsets the device address by `shift` bytes
 * (to test element-aligned, not vector-aligned, pointers). Freed by gpu_free_all(). */
uint64_t gpu_upload(pkv_cuda *h, const void *src, size_t bytes, size_t shift);
uint64_t gpu_poisoned(pkv_cuda *h, size_t bytes, size_t shift);
void gpu_download(pkv_cuda *h, void *dst, uint64_t src, size_t bytes);
void gpu_free_all(pkv_cuda *h);

/* For the plan tests (nothing launched): `tokens` rows of nkv x hd in dense blocks of 16, one
 * block more than they need. */
pkv_cache_layout gpu_plan_cache(uint32_t nkv, uint32_t hd, uint32_t tokens);

#endif
