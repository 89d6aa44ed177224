// The normative reduction tree (ref/tree.h) mapped onto warps: thread i holds leaf i (+0.0
// past the leaves); each warp runs the xor butterfly with shuffles, which is exactly the
// normative per-lane step; warp 0 then runs it over the warp sums, padded with +0.0 to 32.
#pragma once

__device__ __forceinline__ float pkvk_warp_butterfly(float v)
{
    for (int off = 16; off; off >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

// Every thread of the block must call this (blockDim.x a multiple of 32, <= 1024); returns
// the tree's sum to all of them. scratch: 33 floats of shared memory.
__device__ __forceinline__ float pkvk_block_tree(float leaf, float *scratch)
{
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float s = pkvk_warp_butterfly(leaf);
    if (lane == 0) scratch[warp] = s;
    __syncthreads();
    if (warp == 0) {
        float t = pkvk_warp_butterfly(lane < warps ? scratch[lane] : 0.0f);
        if (lane == 0) scratch[32] = t;
    }
    __syncthreads();
    return scratch[32];
}
