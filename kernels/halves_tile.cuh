// The parts of a looping kernel's tile shared by the halves kernels (fused_halves.cu) and the
// wide kernels (fused_wide.cu): ordered shared loads, a lane's item of a tile and its
// position and slot, the copies of its K (and V) rows into a stage, cos and sin past the
// table, and the word tree of 8-element units.
#pragma once

#include "kernels.cuh"
#include "fused_common.cuh"
#include "mrope_cs.cuh"
#include "cp_async.cuh"

// A shared load the compiler cannot merge with an earlier one: K is read twice (tree, then
// normalisation) rather than held in registers across the tree and the rsqrt
__device__ __forceinline__ uint4 pkvk_lds128(const uint4 *a)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"((unsigned)__cvta_generic_to_shared(a)));
    return v;
}

// A 4-byte shared load at shared-window address a, ordered like pkvk_lds128
__device__ __forceinline__ unsigned pkvk_lds32(unsigned a)
{
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a));
    return v;
}

// This lane's item of a tile: whether it is one of the call's, its token and head (0 and 0
// when not)
struct pkvk_halves_item {
    unsigned t, h;
    bool live;
};

__device__ __forceinline__ pkvk_halves_item pkvk_halves_item_of(const pkvk_fused_params &p,
                                                                unsigned tile, unsigned tiles,
                                                                unsigned ipw, unsigned sub,
                                                                unsigned total)
{
    pkvk_halves_item a;
    const unsigned item = tile * ipw + sub; // tile < tiles first: past the last tile, tile * ipw
    a.live = tile < tiles && item < total;  // may not fit 32 bits
    a.t = a.live ? pkvk_div32_q(item, p.div_heads) : 0u;
    a.h = a.live ? item - a.t * p.g.num_kv_heads : 0u;
    return a;
}

// Copy the K (and V) elements of this lane's item into its slots of a stage: 16-byte unit b of
// half hf, elements 8 (b G + j) .. of the half (consecutive lanes, consecutive units: whole
// sectors), at st[(hf B + b) * 32 + lane], V's 2 B units further; then commit the group.
// EF: the copies' lines first to be evicted from L2
template <bool OP8, int B, bool EF = false>
__device__ __forceinline__ void pkvk_halves_issue(const pkvk_fused_params &p, uint4 *st,
                                                  const pkvk_halves_item &a, unsigned lane,
                                                  unsigned j, unsigned G)
{
    const unsigned hd = p.g.head_dim, half = hd / 2, t = a.t;
    const bool live = a.live;
    const unsigned e = a.h * hd + 8 * j; // the lane's first unit in the row
    const unsigned short *kr = (const unsigned short *)p.key + pkvk_src_offset(t, p.k_stride, e),
                         *vr = OP8 ? (const unsigned short *)p.value +
                                         pkvk_src_offset(t, p.v_stride, e)
                                   : nullptr;
#pragma unroll
    for (int u = 0; u < 2 * B; u++) {
        const unsigned o = (u / B) * half + 8 * (u % B) * G;
        if constexpr (EF) {
            pkvk_cp_async16_z_first(&st[u * 32 + lane], kr + o, live);
            if (OP8) pkvk_cp_async16_z_first(&st[(2 * B + u) * 32 + lane], vr + o, live);
        } else {
            pkvk_cp_async16_z(&st[u * 32 + lane], kr + o, live);
            if (OP8) pkvk_cp_async16_z(&st[(2 * B + u) * 32 + lane], vr + o, live);
        }
    }
    pkvk_cp_async_commit();
}

// A tile's position and slot for this lane's item
struct pkvk_halves_meta {
    unsigned pos;
    long long slot;
};

// (MRoPE: the position when the token's three are equal, else ~0u, which no table holds: the
// pairs then take their streams' positions, reloaded where a position past the table is
// handled)
template <bool MROPE>
__device__ __forceinline__ pkvk_halves_meta pkvk_halves_meta_of(const pkvk_fused_params &p,
                                                                const pkvk_halves_item &a)
{
    pkvk_halves_meta m;
    const unsigned t = a.t;
    const bool live = a.live;
    m.pos = live ? ((const unsigned *)p.pos[0])[t] : 0u;
    if (MROPE && live) {
        const unsigned p1 = ((const unsigned *)p.pos[1])[t], p2 = ((const unsigned *)p.pos[2])[t];
        if (p1 != m.pos || p2 != m.pos) m.pos = ~0u;
    }
    m.slot = live ? ((const long long *)p.slots)[t] : -1;
    return m;
}

// MRoPE: the item's positions of streams 1 and 2 (stream 0's in its meta); 0 and 0 for one
// stream or no item
template <bool MROPE>
__device__ __forceinline__ uint2 pkvk_halves_q12(const pkvk_fused_params &p,
                                                 const pkvk_halves_item &a)
{
    if (!MROPE || !a.live) return make_uint2(0u, 0u);
    return make_uint2(((const unsigned *)p.pos[1])[a.t], ((const unsigned *)p.pos[2])[a.t]);
}

// cos and sin of pair pr of a live item whose meta position pos no table row holds: computed
// (one stream), or (MRoPE) from the pair's stream's position, reloaded: the table's row when
// it holds that position, else computed
template <bool MROPE>
__device__ __forceinline__ void pkvk_halves_cs_past(const pkvk_fused_params &p, unsigned t,
                                                    unsigned pos, unsigned pr, float *s, float *c)
{
    if constexpr (MROPE) {
        pkvk_rope_cs(p, ((const unsigned *)p.pos[pkvi_mrope_stream(pr, p.section)])[t], pr, s, c);
    } else {
        pkvk_rope_cs_computed(p, pos, pr, s, c);
    }
}

// The word tree of a stage of 8-element units: on the 4 lanes of a chunk of 32 leaves, the chunk's
// sum in the first half plus the same chunk's in the second (the chunk butterfly's top level; at
// head_dim 64, each half one chunk, the item's sum). A chunk's leaves lie on 4 lanes, a lane
// reading word w (leaves 2w, 2w + 1) of each of the chunk's 4 slots: levels 16 and 8 add in the
// lane and only levels 4 and 2 shuffle, 2 values each (with each lane's own 8 leaves, as the other
// forms read them, both levels shuffle 8: 32 shuffles and 46 adds a tile, not 8 and 22). The
// chunks of a warp take their slots in different orders (k ^ rot), so the 4-byte reads are
// conflict-free; level 16 pairs slot m with m + 2 in every order, and level 8 adds the two sums,
// so the sums are the tree's (with operands swapped: IEEE addition commutes). Slot k ^ rot's word
// w is at a0 ^ 16 k, a0 the lane's slot rot: a chunk's 4 slots are 64 bytes from a 64-byte
// boundary, the slot index in bits 4-5 (where the index arithmetic of (k + rot) & 3 took about 24
// instructions a tile, 13 now: SASS).
__device__ __forceinline__ float pkvk_word_tree(const uint4 *cur, unsigned lane)
{
    const unsigned a0 = (unsigned)__cvta_generic_to_shared(cur) +
                        16u * ((lane & ~3u) | ((lane >> 3) & 3u)) + 4u * (lane & 3u);
    float part[2];
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        float sq[4][2];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned u = pkvk_lds32((a0 ^ (16u * k)) + 512u * hf);
            const float x0 = __uint_as_float(u << 16), x1 = __uint_as_float(u & 0xffff0000u);
            sq[k][0] = __fmul_rn(x0, x0), sq[k][1] = __fmul_rn(x1, x1);
        }
        float s0 = __fadd_rn(__fadd_rn(sq[0][0], sq[2][0]), __fadd_rn(sq[1][0], sq[3][0])),
              s1 = __fadd_rn(__fadd_rn(sq[0][1], sq[2][1]), __fadd_rn(sq[1][1], sq[3][1]));
        s0 = __fadd_rn(s0, __shfl_xor_sync(0xffffffffu, s0, 2));
        s1 = __fadd_rn(s1, __shfl_xor_sync(0xffffffffu, s1, 2));
        s0 = __fadd_rn(s0, __shfl_xor_sync(0xffffffffu, s0, 1));
        s1 = __fadd_rn(s1, __shfl_xor_sync(0xffffffffu, s1, 1));
        part[hf] = __fadd_rn(s0, s1);
    }
    return __fadd_rn(part[0], part[1]);
}

// Op 8's tree (pair leaves) of a stage of 8-element units, for chunks of 8 lanes (head_dim 128 or
// more): a chunk of 32 pair leaves is 8 units, one a lane. Lane 4 g + w of the chunk reads word w
// (one pair leaf) of units g, g + 2, g + 4 and g + 6: levels 16 (unit u with u + 4) and 8 (u with
// u + 2) add in the lane, and levels 4, 2 and 1 shuffle one value each: 6 shuffles and 12 adds a
// tile after the leaves, where the chunk trees of each lane's own 4 leaves took 24 and 30. The 4
// chunks of a warp's row of 32 slots take their units in different orders (k ^ rot,
// rot the chunk's index in the warp), so the 4-byte reads are conflict-free; level 16 pairs k
// with k ^ 2 in every order. Unit g + 2 (k ^ rot)'s word w is at a0 ^ 32 k: the stage is
// 128-byte aligned, and 32 rot sits in bits 5-6 of a0.
__device__ __forceinline__ float pkvk_pair_word_tree(const uint4 *cur, unsigned lane)
{
    const unsigned a0 = (unsigned)__cvta_generic_to_shared(cur) + 128u * (lane >> 3) +
                        32u * ((lane >> 3) & 3u) + 4u * (lane & 7u);
    float part[2];
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        float sq[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned u = pkvk_lds32((a0 ^ (32u * k)) + 512u * hf);
            const float x0 = __uint_as_float(u << 16), x1 = __uint_as_float(u & 0xffff0000u);
            sq[k] = __fadd_rn(__fmul_rn(x0, x0), __fmul_rn(x1, x1));
        }
        float s = __fadd_rn(__fadd_rn(sq[0], sq[2]), __fadd_rn(sq[1], sq[3]));
        s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, 4));
        s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, 2));
        part[hf] = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, 1));
    }
    return __fadd_rn(part[0], part[1]);
}
