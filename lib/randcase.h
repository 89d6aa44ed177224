/* Internal (tools and tests): random differential cases for pkv check and t/cuda_threads.
 * The generator state is explicit, so threads can build cases independently. */
#ifndef PKV_RANDCASE_H
#define PKV_RANDCASE_H

#include "diffcase.h"

#include <stdint.h>

typedef struct pkvi_rng {
    uint64_t s; /* xorshift64* state, nonzero */
} pkvi_rng;

uint64_t pkvi_rng_next(pkvi_rng *r);

/* A random case of that shape: padded rows and blocks at random (aligned or not), buffers
 * aligned or one element off, -1 and out-of-range slots, hostile BF16 values (NaN payloads of
 * both signs, infinities, subnormals, signed zeros, values near the FP8 limits). Returns 0, or
 * -1 when memory runs out (nothing to free then). */
int pkvi_case_random(pkvi_case *c, pkvi_rng *r, uint32_t nkv, uint32_t hd, uint32_t bs,
                     uint32_t tokens);

void pkvi_case_free(pkvi_case *c);

/* A write descriptor for the same cache, token count, row strides and scales as f, so that
 * one case serves the write ops and the fused ops. */
void pkvi_write_desc_like(pkv_write_desc *w, const pkv_fused_desc *f);

#endif
