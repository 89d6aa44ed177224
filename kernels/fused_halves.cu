// The halves form of the warp kernels (fused_warp.cu) for ops 5 to 8, for calls of many
// waves whose rotation covers the whole head (rotary_dim == head_dim) and whose head is
// 16 x a power-of-two threads with whole chunks in each half (the launcher checks): a thread
// owns E elements (8, 16 or 32) of the first half and the E elements half a head further,
// each pair's two elements. So the rotation needs no
// shuffles, the thread reads only its pairs' cos and sin, and the item's fixed work (indices,
// slot, rsqrt) is spread over 2 E elements. When each half is whole chunks, the chunk trees
// run per half, the chunk butterfly's top level (chunk c with c + chunks / 2) adds the
// thread's two halves and the lower levels shuffle; when the head is one chunk, see below.
// A chunk of 32 leaves lies on 4 lanes (E = 8: a lane reads one word of each of the chunk's
// 4 units, so levels 16 and 8 add in the lane and levels 4 and 2 shuffle 2 values; op 8's
// chunk of 32 pair leaves lies on 8 lanes, each reading one word of 4 of its 8 units, so
// levels 16 and 8 add in the lane and 4, 2 and 1 shuffle one value), on 2 (E = 16: a lane
// reads the chunk's units j and j + 2, so the top level adds in the lane and only level 8
// shuffles), or on 1 (E = 32: no shuffle).
//
// Pipelined: the launcher gives at most one wave of blocks, and each warp walks its tiles (32 /
// group items each) a grid's warps apart. The K (and V) rows of the next tile are copied into
// the warp's shared memory by cp.async, which holds no register while in flight; positions
// and slots are loaded a tile ahead into registers; the table row of the tile being worked on
// is loaded before its tree, from a position that arrived a tile ago, and with 16 or 32
// elements each later unit's cos and sin a unit ahead. Warps that each waited for one item's
// loads, worked, stored and exited left the memory system idle between (on the H200, 18% of
// that kernel's stall samples were waits for K and 18% for the table row). Op 8's lanes
// copy only their own 16-byte slots, and at head_dim 64 read only them; otherwise the tree
// reads other lanes' slots, ordered by warp barriers. A position past the table has its pairs'
// cos and sin computed at the top of the iteration, where few values are live (with 16 or 32
// elements into local memory, read back like a table row), so the rare path does not raise the
// kernel's register count nor put calls between the units.
//
// MRoPE (op 6) is the same kernel: a token whose three positions are equal (a text token) is
// one row, as for one stream. A token of three different positions in the table (an image
// patch): with 8 elements the lanes of its first item in the tile copy its pairs' cos and sin,
// each from its stream's row, into a shared row for the token by cp.async, read after the tree
// (pkvk_mrope_merge); with 16 each lane loads its pairs' from the three rows into registers, a
// unit ahead (pkvk_mrope_cs8_rows: on the H200 at 8 x 128 image patches 18-24% faster than
// with the shared rows, text tokens as fast to 6% faster). A position past the table takes the
// rare path at the top of the iteration, which reloads the three positions and fills the
// lane's pairs, each from its stream's row or computed. (With 32, each lane filling its pairs into
// local memory at the top, MRoPE was 3-13% slower at 4 x 256 than with 16; the launcher gives it 8
// or 16.) Before this form MRoPE had a kernel of one item per lane group and no loop: on the H200
// at 8 x 128 x 65,536 106-109 us for text tokens, 114 for an image's; pipelined 86-90 and 117-122
// (doc/PERFORMANCE-HISTORY.md).
#include "halves_tile.cuh"

// Where in a tile's iteration the next tile's copies are issued (ISSUE, below)
enum { PKVK_NEXT_FIRST, PKVK_NEXT_AFTER_CS, PKVK_NEXT_AFTER_TREE };

// E elements of each half per lane (8: op 8; 16: ops 5-7), B = E / 8 units of 8; GC: 0, or
// the group size of every call the launcher sends to the kernel (a constant); ISSUE: below. The
// tree takes each lane's E consecutive elements of each half (chunk trees of fewer shuffles when E
// is 16); the normalisation, rotation and stores take units b G + j (whole sectors), so a
// lane's slots are read by others in the tree when B > 1: a warp barrier after the copies
// arrive and before they are overwritten.
template <bool OP8, bool MROPE, int E, int T, unsigned GC, int ISSUE, bool ST>
__device__ __forceinline__ void pkvk_fused_halves_body(const pkvk_fused_params &p)
{
    constexpr int B = E / 8, L = OP8 ? E / 2 : E, CT = 32 / L, U = OP8 ? 4 * B : 2 * B;
    constexpr unsigned W = T / 32;
    constexpr bool WORDS = !OP8 && E == 8; // the tree of word reads when chunks span 4 lanes
    // op 8's tree of word reads when chunks span 8 lanes (head_dim 128 or more)
    const bool pwords = OP8 && E == 8 && (GC ? GC : p.group) >= 8u;
    // A tile's item (token, head) is found once, two tiles ahead, and carried to the tiles that
    // use it (2 x 3 registers across the loop), where these kernels divided each item by the
    // head count three times: on the H200 at 65,536 tokens 16 x 64 fused_bf16 and fused_fp8_k
    // 4-6% faster; but op 8 then spills, and finds them anew
    constexpr bool CARRY = !OP8;
    // ISSUE: the next tile's copies are issued first, or after this tile's cos/sin loads (so
    // the loads the tree is followed by are not queued behind them), or after the tree too (its
    // shared-memory reads not behind them either; the copies then wait for nothing but this
    // tile's). On the H200, graph replays with a table: after the cos/sin loads, op 8 with its
    // pair word tree 1.6-3.7% faster from 16,384 tokens at 8 x 128, 4 x 256 and 16 x 64 (no
    // spills once the chunk-tree branch it never takes is left out, 0.1-0.5% more), the g4
    // kernel 0.5-0.9% faster for 16 x 64 fused_bf16 from 16,384 tokens; after the tree, the
    // 16-element kernel of fused_fp8_k 0.5-2.2% faster again (4 x 256 x 16,384 2.2%) and of
    // fused_bf16 at head_dim 256 0.5%, the 32-element kernel 1.5%. Op 8 after the tree
    // 0.3-2.3% faster at every geometry and size measured but 4 x 256 from 32,768 tokens (as
    // fast at 32,768 and 49,152, 5.2-6.3% slower at 65,536), where it keeps them after the
    // cos/sin loads (two kernels, the launcher choosing); the g4 kernel -0.1% to +0.3%: after
    // the cos/sin loads. Fused_bf16 at head_dim 128 takes the 16-element kernel with them
    // first (below), and the 8-element kernel of ops 5 and 7 gained nothing from later copies
    // (fused_bf16 8 x 128 +0.0% at 16,384 tokens, +0.3% at 65,536). MRoPE keeps them first: its
    // 16-element kernel spilled 12 bytes and ran 6.6-7.9% slower at 8 x 128
    // (doc/PERFORMANCE-HISTORY.md)
    constexpr bool LATE = ISSUE != PKVK_NEXT_FIRST, AFTER = ISSUE == PKVK_NEXT_AFTER_TREE;
    static_assert(!LATE || !MROPE, "later copies: ops 5, 7 and 8");
    static_assert(!MROPE || E <= 16, "MRoPE: 8 or 16 elements a thread");
    // each stage U * 512 bytes from a 128-byte boundary: the word trees' slot addresses are one
    // address XOR the slot number (below)
    __shared__ __align__(128) uint4 stages[W][2][U * 32];
    // 1 + w: row hf 2B + 2b + k of lane j's unit b G + j (G = head_dim / (2 E) <= 32 / B)
    __shared__ float4 w1[4 * B][32 / B];
    // MRoPE's shared rows for tokens of three positions (pkvk_mrope_merge), with 8 elements (a
    // tile's items span at most 32 / group tokens of head_dim = 16 group: 512 floats); not
    // with 32, whose 6 blocks a multiprocessor leave no room for them. With 16 (RG) such a
    // token's pairs are loaded from its three rows into registers, a unit ahead
    // (pkvk_mrope_cs8_rows), as in the wide kernel
    constexpr bool MS = MROPE && E == 8, RG = MROPE && E == 16;
    constexpr unsigned MCAP = 512;
    __shared__ __align__(16) float merged[MS ? W : 1][MS ? MCAP : 1];
    // G threads an item: the launch's (p.group), or the kernel's constant GC
    const unsigned G = GC ? GC : p.group, lg = GC ? pkvk_log2(GC) : __ffs(G) - 1,
                   lane = threadIdx.x & 31u, j = lane & (G - 1), sub = lane >> lg,
                   wid = threadIdx.x / 32u;
    const unsigned hd = p.g.head_dim, half = hd / 2, nh = p.g.num_kv_heads;
    // item indices fit 32 bits, with a grid's warps of tiles to spare (the launcher)
    const unsigned total = p.num_tokens * nh, ipw = 32u >> lg,
                   tiles = (total + ipw - 1) >> (5 - lg);
    const unsigned nw = gridDim.x * (blockDim.x / 32u);
    // RG: this lane's pairs of streams 1 and 2 in unit b at bits 16 b and 16 b + 8
    unsigned bits = 0;
    if (RG) {
#pragma unroll
        for (int b = 0; b < B; b++) {
            unsigned s1, s2;
            pkvk_mrope_bits8(p, 8 * (b * G + j), &s1, &s2);
            bits |= (s1 | s2 << 8) << 16 * b;
        }
    }
    unsigned tile = blockIdx.x * (blockDim.x / 32u) + wid;
    pkvk_halves_item a0 = pkvk_halves_item_of(p, tile, tiles, ipw, sub, total),
                     a1 = pkvk_halves_item_of(p, tile + nw, tiles, ipw, sub, total);
    // (RG: stream 0's position in the meta, the others in n)
    pkvk_halves_meta m0 = pkvk_halves_meta_of<(MROPE && !RG)>(p, a0),
                     m1 = pkvk_halves_meta_of<(MROPE && !RG)>(p, a1);
    uint2 n0 = pkvk_halves_q12<RG>(p, a0), n1 = pkvk_halves_q12<RG>(p, a1);
    pkvk_halves_issue<OP8, B, ST>(p, stages[wid][0], a0, lane, j, G);
    // 1 + w once a block, after the first tile's loads and copies are issued: before them, the
    // block's barrier held every warp's first requests back by the weights' load, a share of a
    // call of few tiles a warp. 4 B G = head_dim / 4 <= 64 threads (the warp kernels take
    // head_dim <= 256), and a block has more: the launcher sends here only calls of more than
    // one block of 8-element threads, so items x head_dim > 2048 and this grid has more than
    // 2048 / (2 E) threads
    if (threadIdx.x < 4 * B * G) {
        const unsigned q = threadIdx.x >> lg, jj = threadIdx.x & (G - 1), r = q % (2 * B);
        const uint2 wr = *(const uint2 *)((const unsigned short *)p.weight + (q / (2 * B)) * half +
                                          8 * ((r / 2) * G + jj) + (r % 2) * 4);
        w1[q][jj] = make_float4(__fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)wr.x)),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)(wr.x >> 16))),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)wr.y)),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)(wr.y >> 16))));
    }
    __syncthreads();
    for (unsigned stage = 0; tile < tiles; tile += nw, stage ^= 1u) {
        if (B > 1 || WORDS || pwords) __syncwarp(); // the other stage: read by the last tree
        if constexpr (!CARRY) {
            a0 = pkvk_halves_item_of(p, tile, tiles, ipw, sub, total);
            a1 = pkvk_halves_item_of(p, tile + nw, tiles, ipw, sub, total);
        }
        if constexpr (!MS && !LATE) {
            pkvk_halves_issue<OP8, B, ST>(p, stages[wid][stage ^ 1u], a1, lane, j, G);
        }
        const unsigned h = a0.h;
        const bool live = a0.live;
        bool mt = false; // this token's cos/sin in merged
        bool rg = false; // RG: this token's pairs from its three rows
        // unit b's cos at cs0 + b cst, its sin sd further (B > 1): the table's row, or (a
        // position past the table, or no item) this lane's pairs computed into local memory
        // here, where few values are live, so that the units' loads below need no call and the
        // next unit's can be issued a unit ahead
        __align__(16) float loc[B * 16];
        const float *cs0 = loc;
        unsigned cst = 16, sd = 8;
        float c[8], s[8];
        if constexpr (B == 1 && !MROPE) {
            pkvk_warp_cs(p, live, m0.pos, 8 * j, c, s);
        } else {
            const unsigned far = RG ? max(m0.pos, max(n0.x, n0.y)) : m0.pos;
            if (live && far < p.cs_len && (!RG || (n0.x == m0.pos && n0.y == m0.pos))) {
                cs0 = pkvk_rope_row(p, m0.pos) + 8 * j, cst = 8 * G, sd = p.rotary_dim / 2;
            } else if (RG && live && far < p.cs_len) {
                rg = true;
            } else if (MS && live && m0.pos == ~0u &&
                       pkvk_mrope_merge<E>(p, a0.t, pkvk_div32_q(tile * ipw, p.div_heads),
                                           h == 0 || sub == 0, j, merged[wid], MCAP, &cs0)) {
                mt = true, cst = 8 * G, sd = half;
            } else {
#pragma unroll 1
                for (unsigned q = 0; q < 8 * B; q++) {
                    float cq = 0.0f, sq = 0.0f;
                    if (live)
                        pkvk_halves_cs_past<MROPE>(p, a0.t, m0.pos, 8 * ((q / 8) * G + j) + q % 8,
                                                   &sq, &cq);
                    loc[(q / 8) * 16 + q % 8] = cq, loc[(q / 8) * 16 + 8 + q % 8] = sq;
                }
            }
            if (RG && rg)
                pkvk_mrope_cs8_rows(p, m0.pos, n0.x, n0.y, 8 * j, bits & 0xffu, (bits >> 8) & 0xffu,
                                    c, s);
            else if (RG || !mt)
                pkvk_cs8(cs0, cs0 + sd, c, s);
        }
        if constexpr (ISSUE == PKVK_NEXT_AFTER_CS) {
            pkvk_halves_issue<OP8, B, ST>(p, stages[wid][stage ^ 1u], a1, lane, j, G);
        }
        if constexpr (MS) {
            // the merged rows' group, then the next tile's K: this tile's K arrives first
            pkvk_cp_async_commit();
            pkvk_halves_issue<OP8, B, ST>(p, stages[wid][stage ^ 1u], a1, lane, j, G);
            pkvk_cp_async_wait_n<2>();
        } else if constexpr (AFTER) {
            pkvk_cp_async_wait_n<0>(); // (the next tile's not issued yet)
        } else {
            pkvk_cp_async_wait_n<1>();
        }
        if (B > 1 || WORDS || pwords) __syncwarp(); // every lane's copies of this stage arrived
        const uint4 *cur = stages[wid][stage];
        float sum;
        if (pwords) {
            // chunks of 32 pair leaves on 8 lanes: the pair word tree, then the butterfly over
            // the chunks
            sum = pkvk_pair_word_tree(cur, lane);
            for (unsigned off = G / CT >> 1; off; off >>= 1) // chunks of the first half
                sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off * CT));
        } else if (WORDS && G >= 4) {
            // each half's chunks of 32 leaves on 4 lanes: the word tree, then the butterfly
            // over the chunks
            sum = pkvk_word_tree(cur, lane);
            for (unsigned off = G / CT >> 1; off; off >>= 1) // chunks of the first half
                sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off * CT));
        } else if (!WORDS && !OP8 && (E == 32 || G * L >= 32)) { // (op 8 there: pwords)
            float part[2];
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                float x[8], leaf[L];
#pragma unroll
                for (int b = 0; b < B; b++) { // unit q of the half: lane's unit q / G
                    const unsigned q = L == 16 ? 4 * (j >> 1) + (j & 1) + 2 * b : j * B + b;
                    pkvk_unpack8(
                        pkvk_lds128(&cur[(hf * B + (q >> lg)) * 32 + sub * G + (q & (G - 1))]), x);
                    pkvk_leaves<OP8, L / B>(x, &leaf[b * (L / B)]);
                }
                if constexpr (L == 16) {
                    // the chunk's leaves 8 (j & 1) + 16 b + k: level 16 in the lane, level 8
                    // with lane j ^ 1, then 4, 2, 1 in the lane
#pragma unroll
                    for (int k = 0; k < 8; k++)
                        leaf[k] = __fadd_rn(leaf[k], leaf[8 + k]);
#pragma unroll
                    for (int k = 0; k < 8; k++)
                        leaf[k] = __fadd_rn(leaf[k], __shfl_xor_sync(0xffffffffu, leaf[k], 1));
                    pkvk_fold<4>(leaf);
                    part[hf] = leaf[0];
                } else {
                    part[hf] = pkvk_chunk_tree<L>(leaf);
                }
            }
            sum = __fadd_rn(part[0], part[1]);
            for (unsigned off = G / CT >> 1; off; off >>= 1) // chunks of the first half
                sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off * CT));
        } else {
            // one chunk, its two halves 16 leaves apart: the lane butterfly's first level (leaf
            // i with leaf i ^ 16) adds the thread's own leaves, the rest runs as a 16-leaf chunk
            // (G is 1 when B is 2: every unit is the lane's own)
            float x[8], leaf[L], l1[L / B];
#pragma unroll
            for (int b = 0; b < B; b++) {
                pkvk_unpack8(pkvk_lds128(&cur[b * 32 + lane]), x);
                pkvk_leaves<OP8, L / B>(x, &leaf[b * (L / B)]);
                pkvk_unpack8(pkvk_lds128(&cur[(B + b) * 32 + lane]), x);
                pkvk_leaves<OP8, L / B>(x, l1);
#pragma unroll
                for (int k = 0; k < L / B; k++)
                    leaf[b * (L / B) + k] = __fadd_rn(leaf[b * (L / B) + k], l1[k]);
            }
            sum = pkvk_chunk_tree<L, 8>(leaf);
        }
        const float rms = pkvi_rsqrt_cr(__fadd_rn(pkvk_mean(p, sum), p.eps));
        if constexpr (AFTER)
            pkvk_halves_issue<OP8, B, ST>(p, stages[wid][stage ^ 1u], a1, lane, j, G);
        if constexpr (MS) {
            pkvk_cp_async_wait_n<1>(); // the merged rows
            __syncwarp();
            if (mt) pkvk_cs8(cs0, cs0 + sd, c, s);
        }
        const int kind = pkvi_slot_kind(m0.slot, p.g.num_slots);
#pragma unroll
        for (int b = 0; b < B; b++) {
            float cn[8], sn[8]; // the next unit's
            const float *un = cs0 + (b + 1) * cst;
            if (b + 1 < B) {
                if (rg)
                    pkvk_mrope_cs8_rows(p, m0.pos, n0.x, n0.y, 8 * ((b + 1) * G + j),
                                        (bits >> 16 * (b + 1)) & 0xffu,
                                        (bits >> (16 * (b + 1) + 8)) & 0xffu, cn, sn);
                else
                    pkvk_cs8(un, un + sd, cn, sn);
            }
            float own[2][8], y[2][8];
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                const float4 w0 = w1[hf * 2 * B + 2 * b][j], w4 = w1[hf * 2 * B + 2 * b + 1][j];
                const float wp[8] = {w0.x, w0.y, w0.z, w0.w, w4.x, w4.y, w4.z, w4.w};
                float x[8];
                pkvk_unpack8(pkvk_lds128(&cur[(hf * B + b) * 32 + lane]), x);
                pkvk_normed1<OP8, 8>(x, wp, rms, own[hf]);
            }
#pragma unroll
            for (int k = 0; k < 8; k++) {
                y[0][k] = __fsub_rn(__fmul_rn(own[0][k], c[k]), __fmul_rn(own[1][k], s[k]));
                y[1][k] = __fadd_rn(__fmul_rn(own[1][k], c[k]), __fmul_rn(own[0][k], s[k]));
                if (OP8) {
                    const unsigned bb = pkvk_bf16x2(y[0][k], y[1][k]);
                    y[0][k] = pkvi_bf16_to_f32((unsigned short)bb);
                    y[1][k] = pkvi_bf16_to_f32((unsigned short)(bb >> 16));
                }
            }
            if (kind == PKVI_SLOT_OK) {
                const uint64_t o = pkvk_row_offset(p, m0.slot) + h * hd + 8 * j; // a multiple of 8
                const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll
                for (int hf = 0; hf < 2; hf++)
                    pkvk_store8<OP8>(p, o, hf * (half / 8) + b * G, y[hf],
                                     OP8 ? pkvk_lds128(&cur[(2 * B + hf * B + b) * 32 + lane]) : z);
            }
            if (b + 1 < B) {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    c[k] = cn[k], s[k] = sn[k];
            }
        }
        if (kind == PKVI_SLOT_OOB && h == 0 && j == 0 && p.oob)
            atomicAdd((unsigned long long *)p.oob, 1ull);
        m0 = m1;
        if (RG) n0 = n1;
        if constexpr (CARRY) {
            a0 = a1;
            a1 = pkvk_halves_item_of(p, tile + 2 * nw, tiles, ipw, sub, total);
            m1 = pkvk_halves_meta_of<(MROPE && !RG)>(p, a1);
            if (RG) n1 = pkvk_halves_q12<RG>(p, a1);
        } else {
            m1 = pkvk_halves_meta_of<MROPE>(
                p, pkvk_halves_item_of(p, tile + 2 * nw, tiles, ipw, sub, total));
        }
    }
    pkvk_cp_async_wait_n<0>(); // no copy in flight at exit
}

// 8 elements: PKVK_HALVES_BLOCKS_PER_SM blocks of 256 threads per multiprocessor, 64 registers
// (MRoPE: PKVK_MROPE_HALVES_BLOCKS_PER_SM); 16: as many warps in blocks of 128
// (PKVK_HALVES16_THREADS); 32 elements: their stages take twice the shared memory per warp, so
// blocks of 128 threads, PKVK_HALVES32_BLOCKS_PER_SM of them
#define PKVK_FUSED_HALVES_KERNEL(name, op8, mrope, e, t, blocks, gc, issue, st)                    \
    extern "C" __global__ void __launch_bounds__(t, blocks) name(const pkvk_fused_params p)        \
    {                                                                                              \
        pkvk_grid_wait();                                                                          \
        pkvk_fused_halves_body<op8, mrope, e, t, gc, issue, st>(p);                                \
    }

PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves, false, false, 8, PKVK_WARP_THREADS,
                         PKVK_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, false)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves16, false, false, 16, PKVK_HALVES16_THREADS,
                         PKVK_HALVES16_BLOCKS_PER_SM, 0, PKVK_NEXT_AFTER_TREE, false)
// fused_bf16 at head_dim 128 (8 tiles a warp or more): the 16-element kernel with the next
// tile's copies first, 1.0-1.2% faster than with them late at 8 x 128 x 65,536 on the H200 (two
// interleaved A/Bs of five runs; doc/PERFORMANCE-HISTORY.md); at head_dim 256 it was 2.9% slower at
// 16,384 tokens and as fast in the 32-element form, so fused_bf16 keeps them later there
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves16_early, false, false, 16, PKVK_HALVES16_THREADS,
                         PKVK_HALVES16_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, false)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves32, false, false, 32, PKVK_HALVES32_THREADS,
                         PKVK_HALVES32_BLOCKS_PER_SM, 0, PKVK_NEXT_AFTER_TREE, false)
// op 8: the next tile's copies after the tree, or (head_dim 256, 12 tiles a warp or more) after
// the cos/sin loads
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_fp8_kv_halves_tree, true, false, 8, PKVK_WARP_THREADS,
                         PKVK_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_AFTER_TREE, false)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_fp8_kv_halves, true, false, 8, PKVK_WARP_THREADS,
                         PKVK_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_AFTER_CS, false)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_mrope_halves, false, true, 8, PKVK_WARP_THREADS,
                         PKVK_MROPE_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, false)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_mrope_halves16, false, true, 16, PKVK_HALVES16_THREADS,
                         PKVK_MROPE_HALVES16_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, false)
// head_dim 64, 4 threads an item (ops 5 and 7 in calls too few tiles a warp for their wide
// kernels, fused_wide.cu, which MRoPE takes at every size):
// the group size a constant, folded into every lane index, tile count and loop of the body
// (on the H200 at 16 x 64 x 65,536: 4.9% fewer instructions for fused_fp8_k)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves_g4, false, false, 8, PKVK_WARP_THREADS,
                         PKVK_HALVES_BLOCKS_PER_SM, 4, PKVK_NEXT_AFTER_CS, false)

// Streaming variants (ST): K and V copied with their L2 lines first to be evicted (an
// evict_first policy; the call reads them once), so that more of the table's rows, which every
// call at these positions reads again, stay in L2 while the call's bytes stream past. The cache
// rows are stored plainly, as in every kernel (pkvk_store8). The launcher takes them for calls of
// at most 1.5 x the L2's bytes, and not in larger calls, where they were slower
// (lib/cuda_warp_plan.c)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves_stream, false, false, 8, PKVK_WARP_THREADS,
                         PKVK_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, true)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves16_stream, false, false, 16, PKVK_HALVES16_THREADS,
                         PKVK_HALVES16_BLOCKS_PER_SM, 0, PKVK_NEXT_AFTER_TREE, true)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_fp8_kv_halves_tree_stream, true, false, 8, PKVK_WARP_THREADS,
                         PKVK_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_AFTER_TREE, true)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_mrope_halves_stream, false, true, 8, PKVK_WARP_THREADS,
                         PKVK_MROPE_HALVES_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, true)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_mrope_halves16_stream, false, true, 16, PKVK_HALVES16_THREADS,
                         PKVK_MROPE_HALVES16_BLOCKS_PER_SM, 0, PKVK_NEXT_FIRST, true)
