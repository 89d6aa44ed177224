// The halves kernels' cos/sin loads, and MRoPE's fills for tokens of three different positions
// (fused_halves.cu)
#pragma once
#include "fused_common.cuh"
#include "cp_async.cuh"

// 8 cos from a, 8 sin from a + sd (global, shared or local memory: generic loads)
__device__ __forceinline__ void pkvk_halves_cs(const float *a, unsigned sd, float *c, float *s)
{
    const float4 c0 = ((const float4 *)a)[0], c1 = ((const float4 *)a)[1],
                 s0 = ((const float4 *)(a + sd))[0], s1 = ((const float4 *)(a + sd))[1];
    c[0] = c0.x, c[1] = c0.y, c[2] = c0.z, c[3] = c0.w;
    c[4] = c1.x, c[5] = c1.y, c[6] = c1.z, c[7] = c1.w;
    s[0] = s0.x, s[1] = s0.y, s[2] = s0.z, s[3] = s0.w;
    s[4] = s1.x, s[5] = s1.y, s[6] = s1.z, s[7] = s1.w;
}

// MRoPE with 32 elements, a live token whose three positions differ: this lane's pairs'
// cos and sin into loc (unit b's cos at loc + 16 b, its sin 8 further), each unit from 16-byte
// loads of the three streams' rows, all issued together, each pair then taking its stream's;
// false when a position is past the table. Pair by pair, where each pair's loads waited for
// the last's, such tokens took 3.1x the time of tokens of one row (H200, 4 x 256 x 65,536
// tokens); so, 2.2x. (With 8 elements this form spilled, its 48 loaded values at once, and
// slowed the kernel's text tokens by 3-5%.)
template <int B>
__device__ __forceinline__ bool pkvk_mrope_rows(const pkvk_fused_params &p, unsigned t, unsigned G,
                                                unsigned j, float *loc)
{
    const unsigned q0 = ((const unsigned *)p.pos[0])[t], q1 = ((const unsigned *)p.pos[1])[t],
                   q2 = ((const unsigned *)p.pos[2])[t];
    if (q0 >= p.cs_len || q1 >= p.cs_len || q2 >= p.cs_len) return false;
    const float *r0 = pkvk_rope_row(p, q0), *r1 = pkvk_rope_row(p, q1), *r2 = pkvk_rope_row(p, q2);
    const unsigned sd = p.rotary_dim / 2;
#pragma unroll 1
    for (int b = 0; b < B; b++) {
        const unsigned pr0 = 8 * (b * G + j);
        int st[8];
        float c[8], s[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            st[k] = pkvi_mrope_stream(pr0 + k, p.section);
        pkvk_halves_cs(r0 + pr0, sd, c, s);
#pragma unroll
        for (int i = 1; i < 3; i++) {
            float ci[8], si[8];
            pkvk_halves_cs((i == 1 ? r1 : r2) + pr0, sd, ci, si);
#pragma unroll
            for (int k = 0; k < 8; k++)
                if (st[k] == i) c[k] = ci[k], s[k] = si[k];
        }
        float4 *d = (float4 *)(loc + 16 * b);
        d[0] = make_float4(c[0], c[1], c[2], c[3]), d[1] = make_float4(c[4], c[5], c[6], c[7]);
        d[2] = make_float4(s[0], s[1], s[2], s[3]), d[3] = make_float4(s[4], s[5], s[6], s[7]);
    }
    return true;
}

// MRoPE with 8 or 16 elements, a live token of three different positions, all in the table:
// its pairs' cos and sin (each from its stream's row) copied into the warp's shared rows mg,
// at row t - tf (tf the tile's first token; cap floats in all), by the lanes of its first
// item in the tile (first), E pairs a lane, as a copy group the lanes wait for after the
// tree, so the rows' latency is hidden as a text token's row's is. Filled into registers and
// local memory at the top of the loop, such tokens took 141-146 us at 8 x 128 x 65,536 on the
// H200 and 181 at 16 x 64; this way 117-122 and 142, but text tokens 86-87 -> 90 and 93 ->
// 96, at 1 x 128 25 -> 27. *cs0 is this lane's first unit there. False: a position past the
// table, or no room.
template <int E>
__device__ __forceinline__ bool pkvk_mrope_merge(const pkvk_fused_params &p, unsigned t,
                                                 unsigned tf, bool first, unsigned j, float *mg,
                                                 unsigned cap, const float **cs0)
{
    const unsigned hd = p.g.head_dim, half = hd / 2;
    const unsigned q0 = ((const unsigned *)p.pos[0])[t], q1 = ((const unsigned *)p.pos[1])[t],
                   q2 = ((const unsigned *)p.pos[2])[t];
    if (q0 >= p.cs_len || q1 >= p.cs_len || q2 >= p.cs_len || (t - tf + 1) * hd > cap) return false;
    float *m = mg + (t - tf) * hd;
    if (first) {
        const float *r0 = pkvk_rope_row(p, q0), *r1 = pkvk_rope_row(p, q1),
                    *r2 = pkvk_rope_row(p, q2);
#pragma unroll 1
        for (unsigned k = 0; k < E; k++) {
            const unsigned pr = E * j + k;
            const int st = pkvi_mrope_stream(pr, p.section);
            const float *row = st == 0 ? r0 : st == 1 ? r1 : r2;
            pkvk_cp_async4(&m[pr], row + pr);
            pkvk_cp_async4(&m[half + pr], row + half + pr);
        }
    }
    *cs0 = m + 8 * j;
    return true;
}
