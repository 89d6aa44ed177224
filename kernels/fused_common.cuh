// Helpers of the 16-byte fused kernels (fused_vec.cu, fused_warp.cu).
#pragma once

// a / d with the launch's multiplier when a fits 32 bits (a 64-bit division, and even a
// 32-bit one by a run-time divisor, is a long software sequence on the GPU)
__device__ __forceinline__ uint64_t pkvk_div(uint64_t a, pkvk_div32 d)
{
    return a <= 0xffffffffull ? pkvk_div32_q((uint32_t)a, d) : a / d.d;
}

// The 16-byte kernels run only when num_slots <= 2^32 and the cache's block stride and row and
// the sources' row strides are below 2^32 elements (the launcher's rule; other calls take the
// element kernels). Then a valid slot, its quotient and remainder fit 32 bits and every offset
// is a sum of 32 x 32 -> 64-bit products: one wide multiply each instead of 64-bit sequences.

// pkvi_slot_row_offset of a valid slot
__device__ __forceinline__ uint64_t pkvk_row_offset(const pkvk_fused_params &p, int64_t slot)
{
    const uint32_t s = (uint32_t)slot, q = pkvk_div32_q(s, p.div_bs);
    return (uint64_t)q * (uint32_t)p.g.block_stride +
           (uint64_t)(s - q * p.g.block_size) * (uint32_t)p.g.row;
}

// element offset of element e of token t's row in a source of row stride `stride`
__device__ __forceinline__ uint64_t pkvk_src_offset(uint64_t t, uint64_t stride, unsigned e)
{
    return (uint64_t)(uint32_t)t * (uint32_t)stride + e;
}

// sum / head_dim, correctly rounded: a product with the exact reciprocal when head_dim is a
// power of two (the same real number, so the same rounding), else the division
__device__ __forceinline__ float pkvk_mean(const pkvk_fused_params &p, float sum)
{
    return p.inv_hd != 0.0f ? __fmul_rn(sum, p.inv_hd) : __fdiv_rn(sum, (float)p.g.head_dim);
}

// The rotated value of element o whose partner is pv: RN(RN(o c) - RN(pv s)) when o is in the
// first half, RN(RN(o c) + RN(pv s)) in the second. With s negated for the first half, both are
// RN(RN(o c) + RN(pv s')): RN(pv (-s)) = -RN(pv s) (rounding to nearest is symmetric) and
// a - b is a + (-b) in IEEE 754, so the bits are the same, NaN aside (the BF16 and E4M3
// casts canonicalise NaN).
__device__ __forceinline__ float pkvk_rotate(float o, float pv, float c, float s, bool first)
{
    return __fadd_rn(__fmul_rn(o, c), __fmul_rn(pv, first ? -s : s));
}

__host__ __device__ constexpr int pkvk_log2(int n)
{
    return n > 1 ? 1 + pkvk_log2(n / 2) : 0;
}

// v[k] += v[k + OFF] for k < OFF, then OFF / 2 .. 1: the in-lane levels of the tree (a
// recursion, so that every level is unrolled: with loops, 16 leaves per lane stayed in local
// memory)
template <int OFF> __device__ __forceinline__ void pkvk_fold(float *v)
{
#pragma unroll
    for (int k = 0; k < OFF; k++)
        v[k] = __fadd_rn(v[k], v[k + OFF]);
    if constexpr (OFF > 1) pkvk_fold<OFF / 2>(v);
}

// The lane butterfly of a 32-leaf chunk whose lanes hold L consecutive leaves each, from level
// `top` down (top 8: a chunk folded to 16 leaves by its first level)
template <int L, int top = 16> __device__ __forceinline__ float pkvk_chunk_tree(float *v)
{
    constexpr int lanes = top >= L ? pkvk_log2(top / L) + 1 : 0;
#pragma unroll
    for (int i = 0; i < lanes; i++)
#pragma unroll
        for (int k = 0; k < L; k++)
            v[k] = __fadd_rn(v[k], __shfl_xor_sync(0xffffffffu, v[k], (top >> i) / L));
    if constexpr (L > 1) pkvk_fold<L / 2>(v);
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

// The tree's leaves of a thread's elements: their squares (ops 5-7), or the sums of the
// squares of their pairs (op 8, pair leaves).
template <bool OP8, int L> __device__ __forceinline__ void pkvk_leaves(const float *x, float *leaf)
{
#pragma unroll
    for (int k = 0; k < L; k++)
        leaf[k] =
            OP8 ? __fadd_rn(__fmul_rn(x[2 * k], x[2 * k]), __fmul_rn(x[2 * k + 1], x[2 * k + 1]))
                : __fmul_rn(x[k], x[k]);
}

// RN(RN(x * rms) * w1) of E elements, w1 = RN(1 + w); op 8 rounds them to BF16 (held exactly
// as floats).
template <bool OP8, int E>
__device__ __forceinline__ void pkvk_normed1(const float *x, const float *w1, float rms, float *own)
{
#pragma unroll
    for (int k = 0; k < E; k++) {
        own[k] = __fmul_rn(__fmul_rn(x[k], rms), w1[k]);
        if (OP8 && k % 2) {
            unsigned b = pkvk_bf16x2(own[k - 1], own[k]);
            own[k - 1] = pkvi_bf16_to_f32((unsigned short)b);
            own[k] = pkvi_bf16_to_f32((unsigned short)(b >> 16));
        }
    }
}

// The same from the weights w
template <bool OP8, int E>
__device__ __forceinline__ void pkvk_normed(const float *x, const float *wt, float rms, float *own)
{
    float w1[E];
#pragma unroll
    for (int k = 0; k < E; k++)
        w1[k] = __fadd_rn(1.0f, wt[k]);
    pkvk_normed1<OP8, E>(x, w1, rms, own);
}

// Store 8 rotated K elements, unit q of 8 from element offset o (a multiple of 8) of the K pool
// (BF16, or E4M3 of y * k_mul), and for op 8 the 8 V elements vr there as E4M3 of v * v_mul.
// Plain stores in every kernel: the attention that follows reads these rows. With st.global.cs
// (the thirty-second session's streaming variants) a copy of the rows after the call ran
// 0.6-31.1% slower on the H200 and call + copy took longer than with the plain kernels in 13 of
// 14 measurements (7 calls, L2 cleared before each or not: doc/PERFORMANCE-HISTORY.md,
// thirty-fourth session)
template <bool OP8>
__device__ __forceinline__ void pkvk_store8(const pkvk_fused_params &p, uint64_t o, int q,
                                            const float *y, uint4 vr)
{
    if (p.k_fp8) {
        ((uint2 *)p.k_cache)[o / 8 + q] = pkvk_e4m3x8(y, p.k_mul);
    } else {
        ((uint4 *)p.k_cache)[o / 8 + q] =
            make_uint4(pkvk_bf16x2(y[0], y[1]), pkvk_bf16x2(y[2], y[3]), pkvk_bf16x2(y[4], y[5]),
                       pkvk_bf16x2(y[6], y[7]));
    }
    if (OP8) {
        float v[8];
        pkvk_unpack8(vr, v);
        ((uint2 *)p.v_cache)[o / 8 + q] = pkvk_e4m3x8(v, p.v_mul);
    }
}
