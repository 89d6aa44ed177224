/* The fuzz targets: each takes one libFuzzer input. A difference between backends, a reference
 * that breaks one of its own properties, or a sanitizer report aborts. */
#ifndef PKV_FUZZ_H
#define PKV_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#define FZ_TARGETS(X)                                                                          \
    X(fill_slots) X(write_bf16) X(write_v_bf16) X(write_fp8) X(fused_bf16) X(fused_mrope_bf16) \
    X(fused_fp8_k) X(fused_fp8_kv) X(crmath) X(convert)

#define FZ_DECLARE(name) int fz_##name(const uint8_t *data, size_t size);
FZ_TARGETS(FZ_DECLARE)
#undef FZ_DECLARE

typedef struct pkv_cuda pkv_cuda;

/* The GPU, or NULL (none, or PKV_FUZZ_NO_GPU set); aborts where there is none and
 * PKV_TEST_REQUIRE_GPU is set. */
pkv_cuda *fz_gpu(void);

/* Whether the launcher may take the halves kernels' streaming variants (lib/cuda_warp_plan.c:
 * the device's L2 size, or none), so that the fused targets' calls reach both forms. */
void fz_gpu_streaming(int on);

/* PKV_FUZZ_MANY_WAVES is on (lib/env.h): the GPU handle's launcher sees one multiprocessor, so
 * that small cases take the kernels meant for calls of many waves (which kernel runs is a
 * performance choice; the bytes must not depend on it), and the fused targets rotate whole
 * heads. */
int fz_many_waves(void);

/* Every numeric primitive on the GPU for in[0..n) against the host's; aborts on a difference
 * (NaN results of rsqrt compare equal to any NaN). Nothing without a GPU. */
void fz_gpu_numerics(const uint32_t *in, uint32_t n);

#endif
