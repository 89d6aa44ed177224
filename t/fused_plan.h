/* The fused plan tests' shared helpers (t/cuda_plan.c, t/cuda_stream_plan.c): a fused call's
 * descriptor of dense blocks, and the kernel the launcher would plan for it, with the plan's block
 * and items a block kept for the checks. Only plans: nothing is launched. */
#ifndef PKV_T_FUSED_PLAN_H
#define PKV_T_FUSED_PLAN_H

#include "tap.h"
#include "gpu.h"
#include "pagedkv.h"
#include "../lib/cuda_plan.h"

#include <string.h>

static inline pkv_fused_desc desc(uint32_t nkv, uint32_t hd, uint32_t tokens)
{
    pkv_fused_desc d;
    memset(&d, 0, sizeof d);
    d.cache = gpu_plan_cache(nkv, hd, tokens);
    d.num_tokens = tokens;
    d.rotary_dim = hd;
    d.theta = 1e4f;
    d.rms_eps = 1e-6f;
    d.k_scale = d.v_scale = d.k_inv_scale = 1.0f;
    return d;
}

static unsigned last_block, last_ipb; /* the block size and items a block of the last plan
                                       * kernel() made */

/* the kernel the launcher would take, or -2 when it rejects the call */
static inline int kernel(pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, unsigned *grid)
{
    const uint64_t a = 1ull << 20, pos[3] = {a, a, a};
    pkvk_fused_params p;
    pkvi_plan plan;
    if (pkvi_cuda_fused_plan(h, op, d, a, a, a, pos, a, a, a, 0, &p, &plan) != PKV_OK) {
        diag("rejected: %s", pkv_last_error());
        return -2;
    }
    if (grid) *grid = plan.grid;
    last_block = plan.block;
    last_ipb = p.ipb;
    return plan.kernel;
}

#endif
