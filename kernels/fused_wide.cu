// The wide form of the halves kernels (fused_halves.cu) for head_dim 64, ops 5-7: the same
// lanes and elements (4 threads an item, 8 elements of each half a thread, the chunk trees of
// word reads), but a warp's tile is 32 items, worked as 4 sub-tiles of 8, and each lane owns
// one item of the tile for the work that is the item's alone: its (token, head), position and
// slot loads, source row address, slot class, cache row offset and rsqrt. In the 8-item tiles
// of pkvk_fused_halves_g4 every one of those was computed by all 4 lanes of the item (a warp
// instruction per 8 items); here a warp instruction serves 32, and the sub-tiles take the
// owner's values by shuffles. On the H200 at 16 x 64 x 65,536 tokens that owned work was
// about a quarter of the g4 kernel's 428 warp instructions a tile (Nsight Compute, per
// instruction); this kernel issues 1,259 a tile of 32 items (315 per 8) at 80 registers and
// runs fused_fp8_k 14-17% faster there, MRoPE 14% (text) and 33% (image patches). The same
// body works tiles of 16 items (2 sub-tiles, lanes 16-31 owning none): with fewer tiles a warp
// the longer tiles' start and end cost more than the owned work saves, and tiles of 16 halve
// them (below, and doc/PERFORMANCE-HISTORY.md).
//
// So the rsqrt waits for all 4 sub-tiles' trees, and K is read from the stage twice (the tree,
// then after the rsqrt the normalisation), as in the halves kernels. A stage is a tile's K, 4
// KB a warp, double-buffered by cp.async; blocks of 4 warps, PKVK_WIDE_BLOCKS_PER_SM of them
// (MRoPE: PKVK_MROPE_WIDE_BLOCKS_PER_SM). A sub-tile's cos and sin rows are loaded a sub-tile
// ahead (the first before the trees); an item with a position past the table has its pairs
// computed at the top of the iteration into local memory, for all 4 sub-tiles, where few
// values are live. MRoPE: a token of three different positions (an image patch) has each
// pair's cos and sin loaded from its stream's row into registers, also a sub-tile ahead.
#include "halves_tile.cuh"

// Copy a tile's K into a stage: sub-tile s, lane 4 sub + j: units j (first half) and 4 + j
// (second) of item 8 s + sub at st[s][lane] and st[s][32 + lane], the layout of the halves
// kernels' stages, each sub-tile a commit group of its own (its tree waits for it alone). The
// owner lane's item row comes by shuffles (0: no item). NS sub-tiles.
template <int NS>
__device__ __forceinline__ void pkvk_wide_issue(const pkvk_fused_params &p, uint4 (*st)[64],
                                                const pkvk_halves_item &a, unsigned lane)
{
    const unsigned long long row =
        a.live ? p.key + 2ull * pkvk_src_offset(a.t, p.k_stride, a.h * 64u) : 0ull;
#pragma unroll
    for (int s = 0; s < NS; s++) {
        const unsigned long long r = __shfl_sync(0xffffffffu, row, 8 * s + (lane >> 2));
        const unsigned short *kr = (const unsigned short *)r + 8 * (lane & 3u);
        pkvk_cp_async16_z(&st[s][lane], kr, r != 0ull);
        pkvk_cp_async16_z(&st[s][32 + lane], kr + 32, r != 0ull);
        pkvk_cp_async_commit();
    }
}

// Wait for this lane's copies of sub-tile t of the tile being worked on: this tile's groups
// after t stay in flight (the next tile's are issued after the trees; t is a constant once the
// loop is unrolled)
template <int NS> __device__ __forceinline__ void pkvk_wide_wait(int t)
{
    switch (t + 4 - NS) {
    case 0:
        pkvk_cp_async_wait_n<3>();
        break;
    case 1:
        pkvk_cp_async_wait_n<2>();
        break;
    case 2:
        pkvk_cp_async_wait_n<1>();
        break;
    default:
        pkvk_cp_async_wait_n<0>();
        break;
    }
}

// The cos and sin of this lane's 8 pairs (8 j ..) for the item of owner lane src: its
// position's table row, or loc (filled at the loop top) past the table. MRoPE, a token of
// three positions: each pair from its stream's row straight into registers, pair by pair
// (st1, st2: bit k when pair 8 j + k is of stream 1 or 2), loaded a sub-tile ahead like a text
// token's row; filling such tokens' pairs into local memory at the loop top made image
// patches 15-17% slower than in the g4 kernel (H200, 16 x 64)
template <bool MROPE>
__device__ __forceinline__ void pkvk_wide_cs(const pkvk_fused_params &p, unsigned q0, uint2 q12,
                                             unsigned src, unsigned j, unsigned st1, unsigned st2,
                                             const float *loc, float *c, float *s)
{
    const unsigned a = __shfl_sync(0xffffffffu, q0, src);
    unsigned b = a, d = a;
    if (MROPE) b = __shfl_sync(0xffffffffu, q12.x, src), d = __shfl_sync(0xffffffffu, q12.y, src);
    // (the largest of the three: one past the table sends all of the item's pairs to loc)
    const unsigned far = MROPE ? (a > b ? (a > d ? a : d) : (b > d ? b : d)) : a;
    const bool in = far < p.cs_len;
    if (MROPE && in && (b != a || d != a)) {
        pkvk_mrope_cs8_rows(p, a, b, d, 8 * j, st1, st2, c, s);
    } else {
        const float *cs = in ? pkvk_rope_row(p, a) + 8 * j : loc;
        pkvk_cs8(cs, cs + (in ? p.rotary_dim / 2 : 8u), c, s);
    }
}

// AT: the sub-tile in whose turn (after the trees, after the next sub-tile's cos/sin loads) the
// next tile's copies are issued; NS: sub-tiles of 8 items in a tile (4 or 2)
template <bool MROPE, int AT, int NS = 4>
__device__ __forceinline__ void pkvk_fused_wide64_body(const pkvk_fused_params &p)
{
    static_assert(NS == 2 || NS == 4, "the owner's sum below picks from 2 or 4 sub-tiles");
    constexpr unsigned W = PKVK_WIDE_THREADS / 32, IPT = 8 * NS;
    __shared__ __align__(64) uint4 stages[W][2][NS][64];
    // 1 + w: row 2 hf + k of lane j's unit (elements 8 j + 4 k .. of half hf)
    __shared__ float4 w1[4][4];
    const unsigned lane = threadIdx.x & 31u, j = lane & 3u, sub = lane >> 2,
                   wid = threadIdx.x / 32u;
    const unsigned total = p.num_tokens * p.g.num_kv_heads, tiles = (total + IPT - 1) / IPT;
    // a lane owns item `lane` of a tile (none past IPT)
    const auto item_of = [&](unsigned tl) {
        pkvk_halves_item a = pkvk_halves_item_of(p, tl, tiles, IPT, lane < IPT ? lane : 0u, total);
        if (lane >= IPT) a.live = false, a.t = 0u, a.h = 0u;
        return a;
    };
    const unsigned nw = gridDim.x * W;
    // MRoPE: this lane's pairs of streams 1 and 2, a bit each
    unsigned st1 = 0, st2 = 0;
    if (MROPE) pkvk_mrope_bits8(p, 8 * j, &st1, &st2);
    unsigned tile = blockIdx.x * W + wid;
    // the owner lane's item of this tile and the next
    pkvk_halves_item a0 = item_of(tile), a1 = item_of(tile + nw);
    pkvk_wide_issue<NS>(p, stages[wid][0], a0, lane);
    pkvk_halves_meta m0 = pkvk_halves_meta_of<false>(p, a0), m1 = pkvk_halves_meta_of<false>(p, a1);
    uint2 n0 = pkvk_halves_q12<MROPE>(p, a0), n1 = pkvk_halves_q12<MROPE>(p, a1);
    // 1 + w once a block, after the first tile's copies and loads are issued (as in the halves
    // kernels)
    if (threadIdx.x < 16) {
        const unsigned q = threadIdx.x >> 2, jj = threadIdx.x & 3u;
        const uint2 wr = *(const uint2 *)((const unsigned short *)p.weight + (q / 2) * 32 + 8 * jj +
                                          (q % 2) * 4);
        w1[q][jj] = make_float4(__fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)wr.x)),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)(wr.x >> 16))),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)wr.y)),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)(wr.y >> 16))));
    }
    __syncthreads();
    for (unsigned stage = 0; tile < tiles; tile += nw, stage ^= 1u) {
        __syncwarp(); // the other stage's slots: read by the last tile's trees
        // sub-tile s's cos at cs + 16 s, its sin 8 further, when a position is past the table
        __align__(16) float loc[NS * 16];
        // (MRoPE: an item any of whose three positions is past the table)
        const unsigned far = MROPE ? max(m0.pos, max(n0.x, n0.y)) : m0.pos;
        if (__any_sync(0xffffffffu, a0.live && far >= p.cs_len)) {
#pragma unroll 1
            for (unsigned s = 0; s < NS; s++) {
                const unsigned src = 8 * s + sub, pos = __shfl_sync(0xffffffffu, m0.pos, src),
                               fs = MROPE ? __shfl_sync(0xffffffffu, far, src) : pos,
                               t = MROPE ? __shfl_sync(0xffffffffu, a0.t, src) : 0u;
                const bool live = __shfl_sync(0xffffffffu, a0.live, src);
                if (!live || fs < p.cs_len) continue;
#pragma unroll 1
                for (unsigned q = 0; q < 8; q++) {
                    float cq, sq;
                    pkvk_halves_cs_past<MROPE>(p, t, pos, 8 * j + q, &sq, &cq);
                    loc[16 * s + q] = cq, loc[16 * s + 8 + q] = sq;
                }
            }
        }
        float c[8], s[8];
        pkvk_wide_cs<MROPE>(p, m0.pos, n0, sub, j, st1, st2, loc, c, s);
        float sums[NS];
#pragma unroll
        for (int t = 0; t < NS; t++) {
            pkvk_wide_wait<NS>(t);
            __syncwarp(); // every lane's copies of sub-tile t have arrived
            sums[t] = pkvk_word_tree(stages[wid][stage][t], lane);
        }
        // lane 4 sub + j holds sub-tile j's sum of item 8 j + sub: the owner's
        float mine;
        if constexpr (NS == 4)
            mine = j == 0 ? sums[0] : j == 1 ? sums[1] : j == 2 ? sums[2] : sums[3];
        else
            mine = j == 0 ? sums[0] : sums[NS - 1];
        const float sum = __shfl_sync(0xffffffffu, mine, 4 * (lane & 7u) + (lane >> 3));
        const float rms_o = pkvi_rsqrt_cr(__fadd_rn(pkvk_mean(p, sum), p.eps));
        const int kind = pkvi_slot_kind(m0.slot, p.g.num_slots);
        // the item's first element in the cache, or none
        const unsigned long long base =
            kind == PKVI_SLOT_OK ? pkvk_row_offset(p, m0.slot) + a0.h * 64u : ~0ull;
        if (kind == PKVI_SLOT_OOB && a0.h == 0 && p.oob)
            atomicAdd((unsigned long long *)p.oob, 1ull);
#pragma unroll
        for (int t = 0; t < NS; t++) {
            const unsigned src = 8 * t + sub;
            float cn[8], sn[8]; // the next sub-tile's
            if (t + 1 < NS)
                pkvk_wide_cs<MROPE>(p, m0.pos, n0, src + 8, j, st1, st2, loc + 16 * (t + 1), cn,
                                    sn);
            // the next tile's copies after the trees, so that the cos/sin rows the trees are
            // followed by are not queued behind them: on the H200 (graph replays with a table,
            // 16 x 64) fused_fp8_k's after sub-tile 1's loads 3.2% faster at 65,536 tokens and
            // 5.9% at 32,768 than before the trees; fused_bf16's after sub-tile 3's 1.6-2.7% (at
            // 32,768 and 65,536; it takes tiles of 16 since), MRoPE's after sub-tile 1's 1.0%
            // (65,536) and 4.3% (16,384); in tiles of 16, after sub-tile 0's loads (fused_bf16
            // 3.0% faster at 16,384 tokens than after sub-tile 1's)
            if (t == AT) pkvk_wide_issue<NS>(p, stages[wid][stage ^ 1u], a1, lane);
            const float rms = __shfl_sync(0xffffffffu, rms_o, src);
            const unsigned long long o = __shfl_sync(0xffffffffu, base, src);
            const uint4 *cur = stages[wid][stage][t];
            float own[2][8], y[2][8];
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                const float4 w0 = w1[hf * 2][j], w4 = w1[hf * 2 + 1][j];
                const float wp[8] = {w0.x, w0.y, w0.z, w0.w, w4.x, w4.y, w4.z, w4.w};
                float x[8];
                pkvk_unpack8(pkvk_lds128(&cur[hf * 32 + lane]), x);
                pkvk_normed1<false, 8>(x, wp, rms, own[hf]);
            }
#pragma unroll
            for (int k = 0; k < 8; k++) {
                y[0][k] = __fsub_rn(__fmul_rn(own[0][k], c[k]), __fmul_rn(own[1][k], s[k]));
                y[1][k] = __fadd_rn(__fmul_rn(own[1][k], c[k]), __fmul_rn(own[0][k], s[k]));
            }
            if (o != ~0ull) {
                const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll
                for (int hf = 0; hf < 2; hf++)
                    pkvk_store8<false>(p, o + 8 * j, hf * 4, y[hf], z);
            }
            if (t + 1 < NS) {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    c[k] = cn[k], s[k] = sn[k];
            }
        }
        a0 = a1, m0 = m1;
        if (MROPE) n0 = n1;
        a1 = item_of(tile + 2 * nw);
        m1 = pkvk_halves_meta_of<false>(p, a1);
        if (MROPE) n1 = pkvk_halves_q12<MROPE>(p, a1);
    }
    pkvk_cp_async_wait_n<0>(); // no copy in flight at exit
}

extern "C" __global__ void __launch_bounds__(PKVK_WIDE_THREADS, PKVK_WIDE_BLOCKS_PER_SM)
    pkvk_fused_wide64(const pkvk_fused_params p)
{
    pkvk_grid_wait();
    pkvk_fused_wide64_body<false, 1>(p);
}

extern "C" __global__ void __launch_bounds__(PKVK_WIDE_THREADS, PKVK_MROPE_WIDE_BLOCKS_PER_SM)
    pkvk_fused_mrope_wide64(const pkvk_fused_params p)
{
    pkvk_grid_wait();
    pkvk_fused_wide64_body<true, 1>(p);
}

// Tiles of 16 items (2 sub-tiles; lanes 16-31 own no item), the next tile's copies in the first
// sub-tile's turn: twice the tiles a warp of tiles of 32 (on the H200 at 16 x 64, graph replays
// with a table, against the kernels the launcher gave before: fused_bf16 5.7% faster at 16,384
// and 24,576 tokens, 4.8% at 32,768, 2.5% at 65,536 (tiles of 32 issuing in the last
// sub-tile's turn: 3.7-4.0% there); fused_fp8_k 7.7% at 8,192, 4.8% at 16,384, but 2.7% and
// 6.9% slower at 32,768 and 65,536; MRoPE 5.9% faster at 16,384 for text tokens, 0.9% for
// image patches, at 65,536 0.4% and 5.8% slower). The launcher gives it calls of 2 tiles of 16
// a warp of its wave or more, but fused_fp8_k's and MRoPE's of 4 tiles of 32 or more
extern "C" __global__ void __launch_bounds__(PKVK_WIDE_THREADS, PKVK_WIDE_BLOCKS_PER_SM)
    pkvk_fused_wide64_t16(const pkvk_fused_params p)
{
    pkvk_grid_wait();
    pkvk_fused_wide64_body<false, 0, 2>(p);
}

extern "C" __global__ void __launch_bounds__(PKVK_WIDE_THREADS, PKVK_MROPE_WIDE_BLOCKS_PER_SM)
    pkvk_fused_mrope_wide64_t16(const pkvk_fused_params p)
{
    pkvk_grid_wait();
    pkvk_fused_wide64_body<true, 0, 2>(p);
}
