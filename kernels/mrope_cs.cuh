// The 8-pair cos/sin loads of the halves, wide and warp kernels, and MRoPE's fills for tokens of
// three different positions (fused_halves.cu, fused_wide.cu, fused_warp.cu)
#pragma once
#include "fused_common.cuh"
#include "cp_async.cuh"

// 8 cos from cr, 8 sin from sr (global, shared or local memory: generic 16-byte loads)
__device__ __forceinline__ void pkvk_cs8(const float *cr, const float *sr, float *c, float *s)
{
    const float4 c0 = ((const float4 *)cr)[0], c1 = ((const float4 *)cr)[1],
                 s0 = ((const float4 *)sr)[0], s1 = ((const float4 *)sr)[1];
    c[0] = c0.x, c[1] = c0.y, c[2] = c0.z, c[3] = c0.w;
    c[4] = c1.x, c[5] = c1.y, c[6] = c1.z, c[7] = c1.w;
    s[0] = s0.x, s[1] = s0.y, s[2] = s0.z, s[3] = s0.w;
    s[4] = s1.x, s[5] = s1.y, s[6] = s1.z, s[7] = s1.w;
}

// the cos and sin of the pairs pr0 .. pr0 + 7 from a table row
__device__ __forceinline__ void pkvk_row_cs8(const pkvk_fused_params &p, const float *row,
                                             unsigned pr0, float *c, float *s)
{
    pkvk_cs8(row + pr0, row + p.rotary_dim / 2 + pr0, c, s);
}

// MRoPE, pairs pr0 .. pr0 + 7 of a token whose three positions differ, with stream 0's cos and
// sin already in c and s (from row r0): the pairs of streams 1 and 2 take theirs from rows r1
// and r2, both rows' 16-byte loads issued before any is used. Pair by pair, where each pair's
// loads waited for the last's, such tokens took 3.1x the time of tokens of one row (H200, 4 x
// 256 x 65,536 tokens, 32-element halves kernel), and 1.4-1.7x in calls of 8 to 256 tokens of
// the warp kernel
__device__ __forceinline__ void pkvk_mrope_take12(const pkvk_fused_params &p, const float *r1,
                                                  const float *r2, unsigned pr0, float *c, float *s)
{
    float c1[8], s1[8], c2[8], s2[8];
    pkvk_row_cs8(p, r1, pr0, c1, s1);
    pkvk_row_cs8(p, r2, pr0, c2, s2);
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const int st = pkvi_mrope_stream(pr0 + k, p.section);
        if (st == 1) c[k] = c1[k], s[k] = s1[k];
        if (st == 2) c[k] = c2[k], s[k] = s2[k];
    }
}

// MRoPE, a token of three positions q0, q1, q2, all in the table: the cos and sin of pairs
// pr0 .. pr0 + 7, each from its stream's row, pair by pair into registers (st1, st2: bit k
// when pair pr0 + k is of stream 1 or 2), where only the 16 values are live. Pair by pair is
// slow where the values are waited for at once (above); the wide kernel and the 16-element
// halves kernel load them a unit ahead, as a text token's row, and there it beat both
// pkvk_mrope_take12's form filled at the loop top and the shared rows (doc/PERFORMANCE-HISTORY.md)
__device__ __forceinline__ void pkvk_mrope_cs8_rows(const pkvk_fused_params &p, unsigned q0,
                                                    unsigned q1, unsigned q2, unsigned pr0,
                                                    unsigned st1, unsigned st2, float *c, float *s)
{
    const unsigned half = p.rotary_dim / 2;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const unsigned q = (st1 >> k) & 1u ? q1 : (st2 >> k) & 1u ? q2 : q0;
        const float *r = pkvk_rope_row(p, q) + pr0 + k;
        c[k] = r[0], s[k] = r[half];
    }
}

// the stream bits of pairs pr0 .. pr0 + 7 for pkvk_mrope_cs8_rows
__device__ __forceinline__ void pkvk_mrope_bits8(const pkvk_fused_params &p, unsigned pr0,
                                                 unsigned *st1, unsigned *st2)
{
    *st1 = 0, *st2 = 0;
#pragma unroll
    for (unsigned k = 0; k < 8; k++) {
        const int st = pkvi_mrope_stream(pr0 + k, p.section);
        *st1 |= (st == 1) << k, *st2 |= (st == 2) << k;
    }
}

// MRoPE with 8 elements, a live token of three different positions, all in the table:
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
