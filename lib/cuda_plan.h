/* Internal: what a CUDA launcher would launch, without launching it. The launchers use it,
 * and so does pkv bench, which times the same parameter blocks in CUDA graphs and runs its
 * baseline kernels with them. */
#ifndef PKV_CUDA_PLAN_H
#define PKV_CUDA_PLAN_H

#include "cuda_device.h"
#include "../kernels/params.h"

typedef struct pkvi_plan {
    int kernel; /* PKVI_K_*; -1: nothing to launch (no tokens) */
    unsigned grid, block;
} pkvi_plan;

/* The reference's validation (same status and message), then the parameter block and the
 * kernel ops 2-4 take for these buffers (the 16-byte one when alignment allows). */
pkv_status pkvi_cuda_write_plan(pkv_cuda *h, pkv_op op, const pkv_write_desc *d, uint64_t key,
                                uint64_t value, uint64_t slots, uint64_t k_cache, uint64_t v_cache,
                                uint64_t oob, pkvk_write32_params *p, pkvi_plan *plan);

/* The same for ops 5-8; pos[] holds the three streams (all equal for one stream). */
pkv_status pkvi_cuda_fused_plan(pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, uint64_t key,
                                uint64_t value, uint64_t weight, const uint64_t pos[3],
                                uint64_t slots, uint64_t k_cache, uint64_t v_cache, uint64_t oob,
                                pkvk_fused_params *p, pkvi_plan *plan);

/* The warp kernels for a fused call whose K, weight and cache rows allow 16-byte access and
 * whose handle has a cos/sin table (lib/cuda_warp_plan.c): 1 with the plan and p's group and
 * divisors set, 0 when none applies. epc: the elements a chunk of the tree covers (32; 64 for
 * op 8's pair leaves). */
int pkvi_cuda_warp_plan(const pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, unsigned epc,
                        uint64_t items, pkvk_fused_params *p, pkvi_plan *plan);

/* The streaming variant of a halves kernel (its K and V copies first out of L2), which the
 * warp plan takes for calls of at most 1.5 x the L2's bytes (h->l2_bytes; 0: never), or kernel
 * itself when it has none */
int pkvi_cuda_streaming_variant(int kernel);

/* The device's sin and cos (together and alone), rsqrt, BF16, E4M3 and BF16 decode of each of
 * n inputs: out[8 * i ..] (kernels/numerics.cu). Synchronous. */
pkv_status pkvi_cuda_numerics(pkv_cuda *h, const uint32_t *in, uint32_t n, uint32_t *out);

#endif
