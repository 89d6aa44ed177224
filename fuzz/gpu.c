/* The fuzzers' CUDA backend: one handle per process, opened on first use unless
 * PKV_FUZZ_NO_GPU is set (lib/env.h); without a GPU every target runs its CPU checks only, or,
 * with PKV_TEST_REQUIRE_GPU set, aborts. */
#include "config.h"
#include "fuzz.h"
#include "pagedkv.h"
#include "../lib/cuda_plan.h"
#include "../lib/env.h"
#include "../t/bits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int l2_bytes; /* the device's, while the handle's may be set to 0 (fz_gpu_streaming) */

pkv_cuda *fz_gpu(void)
{
    static int tried;
    static pkv_cuda *h;
    if (!tried) {
        tried = 1;
        if (!pkvi_env_on("PKV_FUZZ_NO_GPU") && pkv_cuda_open(0, &h) != PKV_OK) {
            h = NULL;
            /* a GPU host's fuzzing must not run the reference alone unnoticed */
            if (pkvi_env_on("PKV_TEST_REQUIRE_GPU")) {
                fprintf(stderr, "pagedkv fuzz: PKV_TEST_REQUIRE_GPU is set but no GPU: %s\n",
                        pkv_last_error());
                abort();
            }
        }
        if (h) l2_bytes = h->l2_bytes;
        if (h && fz_many_waves()) h->sm_count = 1; /* fuzz/fuzz.h */
        fprintf(stderr, "pagedkv fuzz: backends: reference%s%s\n", h ? " + CUDA " : "",
                h ? pkv_cuda_describe(h) : "");
    }
    return h;
}

void fz_gpu_streaming(int on)
{
    pkv_cuda *h = fz_gpu();
    if (h) h->l2_bytes = on ? l2_bytes : 0;
}

int fz_many_waves(void)
{
    return pkvi_env_on("PKV_FUZZ_MANY_WAVES");
}

static int same_or_both_nan(uint32_t a, uint32_t b)
{
    return a == b || ((a & 0x7fffffffu) > 0x7f800000u && (b & 0x7fffffffu) > 0x7f800000u);
}

void fz_gpu_numerics(const uint32_t *in, uint32_t n)
{
    pkv_cuda *h = fz_gpu();
    uint32_t *out;
    if (!h || n == 0) return;
    if (!(out = malloc((size_t)n * 32))) abort();
    if (pkvi_cuda_numerics(h, in, n, out) != PKV_OK) {
        fprintf(stderr, "pagedkv fuzz: numerics on the GPU failed: %s\n", pkv_last_error());
        abort();
    }
    for (uint32_t i = 0; i < n; i++) {
        float x = f32(in[i]), s, c;
        const uint32_t *o = out + 8 * (size_t)i;
        pkv_sincosf_cr(x, &s, &c);
        /* rsqrt of a negative or NaN input is a NaN whose sign and payload the platforms
         * choose; no written byte depends on them (the BF16 and E4M3 casts canonicalise) */
        if (o[0] != bits(s) || o[1] != bits(c) || o[2] != bits(s) || o[3] != bits(c) ||
            !same_or_both_nan(o[4], bits(pkv_rsqrtf_cr(x))) || o[5] != pkv_bf16_from_f32(x) ||
            o[6] != pkv_e4m3_from_f32(x) || o[7] != bits(pkv_bf16_to_f32((uint16_t)in[i]))) {
            fprintf(stderr,
                    "pagedkv fuzz: GPU numerics of 0x%08x differ: sin %08x %08x/%08x cos %08x "
                    "%08x/%08x rsqrt %08x/%08x bf16 %04x/%04x e4m3 %02x/%02x\n",
                    in[i], o[0], o[2], bits(s), o[1], o[3], bits(c), o[4], bits(pkv_rsqrtf_cr(x)),
                    o[5], pkv_bf16_from_f32(x), o[6], pkv_e4m3_from_f32(x));
            abort();
        }
    }
    free(out);
}
