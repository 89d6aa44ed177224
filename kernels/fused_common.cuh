// Helpers of the 16-byte fused kernels (fused_vec.cu, fused_warp.cu).
#pragma once

// a / d with the launch's multiplier when a fits 32 bits (a 64-bit division, and even a
// 32-bit one by a run-time divisor, is a long software sequence on the GPU)
__device__ __forceinline__ uint64_t pkvk_div(uint64_t a, pkvk_div32 d)
{
    return a <= 0xffffffffull ? pkvk_div32_q((uint32_t)a, d) : a / d.d;
}

template <int L> __device__ __forceinline__ float pkvk_chunk_tree(float *v)
{
#pragma unroll
    for (int off = 16; off >= L; off >>= 1)
#pragma unroll
        for (int k = 0; k < L; k++)
            v[k] = __fadd_rn(v[k], __shfl_xor_sync(0xffffffffu, v[k], off / L));
#pragma unroll
    for (int off = L / 2; off; off >>= 1)
#pragma unroll
        for (int k = 0; k < off; k++)
            v[k] = __fadd_rn(v[k], v[k + off]);
    return v[0];
}

// E4M3 of RN(v[k] * mul) for k = 0..7, packed in that order.
__device__ __forceinline__ uint2 pkvk_e4m3x8(const float *v, float mul)
{
    float m[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        m[k] = __fmul_rn(v[k], mul);
    return make_uint2(pkvk_e4m3x2(m[0], m[1]) | pkvk_e4m3x2(m[2], m[3]) << 16,
                      pkvk_e4m3x2(m[4], m[5]) | pkvk_e4m3x2(m[6], m[7]) << 16);
}

__device__ __forceinline__ void pkvk_unpack8(uint4 u, float *f)
{
    unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        f[2 * k] = pkvi_bf16_to_f32((unsigned short)w[k]);
        f[2 * k + 1] = pkvi_bf16_to_f32((unsigned short)(w[k] >> 16));
    }
}
