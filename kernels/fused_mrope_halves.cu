// MRoPE (op 6) in the halves form (fused_halves.cu explains the form) for calls of many waves,
// one item per lane group and no loop: with fused_halves.cu's pipeline, whose per-pair table
// loads from three position streams spill at 64 registers, MRoPE was 13% slower on the H200
// (8 x 128 x 65,536: 130 against 115 us). Each pair's cos and sin are read from the row of its
// stream's position after the normalisation; when the three positions are equal (text tokens)
// all from one row, by 16-byte loads. Past the table, a thread computes its 8 pairs'
// cos and sin first, where few values are live, into a local array read back at the rotation,
// so that the rare path does not set the kernel's register count (64: 4 blocks per
// multiprocessor; with the path inline, 80 and 3 blocks, 9% slower).
#include "kernels.cuh"
#include "fused_common.cuh"

// The position of pair pr: its stream's (pkvi_mrope_stream)
__device__ __forceinline__ unsigned pkvk_mrope_pos(const pkvk_fused_params &p, const unsigned *pt,
                                                   unsigned pr)
{
    const int st = pkvi_mrope_stream(pr, p.section);
    return st == 0 ? pt[0] : st == 1 ? pt[1] : pt[2];
}

__device__ __forceinline__ void pkvk_mrope_halves_body(const pkvk_fused_params &p)
{
    constexpr int L = 8, CT = 4;
    const unsigned G = p.group, lg = __ffs(G) - 1, lane = threadIdx.x & 31u, j = lane & (G - 1),
                   e0 = 8 * j;
    const unsigned hd = p.g.head_dim, half = hd / 2;
    const pkvk_warp_item it = pkvk_warp_item_of(p, lane, lg);
    const unsigned t = it.t, h = it.h;
    unsigned pt[3];
#pragma unroll
    for (int i = 0; i < 3; i++)
        pt[i] = it.live ? ((const unsigned *)p.pos[i])[t] : 0u;
    const bool in = pt[0] < p.cs_len && pt[1] < p.cs_len && pt[2] < p.cs_len;
    float cs_past[16];
    if (it.live && !in) {
#pragma unroll 1
        for (unsigned k = 0; k < 8; k++)
            pkvk_rope_cs_computed(p, pkvk_mrope_pos(p, pt, e0 + k), e0 + k, &cs_past[8 + k],
                                  &cs_past[k]);
    }
    uint4 xr[2], wr[2];
#pragma unroll
    for (int u = 0; u < 2; u++) {
        xr[u] = wr[u] = make_uint4(0, 0, 0, 0);
        if (it.live) {
            xr[u] = *(const uint4 *)((const unsigned short *)p.key +
                                     pkvk_src_offset(t, p.k_stride, h * hd + e0 + u * half));
            wr[u] = *(const uint4 *)((const unsigned short *)p.weight + e0 + u * half);
        }
    }
    float c[8], s[8];
    float x[2][8], wt[2][8], own[2][8], leaf[2][L], total;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        pkvk_unpack8(xr[u], x[u]);
        pkvk_unpack8(wr[u], wt[u]);
        pkvk_leaves<false, L>(x[u], leaf[u]);
    }
    if (G * L >= 32) {
        total = __fadd_rn(pkvk_chunk_tree<L>(leaf[0]), pkvk_chunk_tree<L>(leaf[1]));
        for (unsigned off = G / CT >> 1; off; off >>= 1) // chunks of the first half, chunk xor off
            total = __fadd_rn(total, __shfl_xor_sync(0xffffffffu, total, off * CT));
    } else {
        // one chunk, its two halves 16 leaves apart: the lane butterfly's first level (leaf i
        // with leaf i ^ 16) adds the thread's own leaves, the rest runs as a 16-leaf chunk
#pragma unroll
        for (int k = 0; k < L; k++)
            leaf[0][k] = __fadd_rn(leaf[0][k], leaf[1][k]);
        total = pkvk_chunk_tree<L, 8>(leaf[0]);
    }
    const float rms = pkvi_rsqrt_cr(__fadd_rn(pkvk_mean(p, total), p.eps));
    float y[2][8];
#pragma unroll
    for (int u = 0; u < 2; u++)
        pkvk_normed<false, 8>(x[u], wt[u], rms, own[u]);
    if (it.live && in && pt[0] == pt[1] && pt[0] == pt[2]) {
        pkvk_warp_cs_row(p, pt[0], e0, c, s); // a text token: one row for every pair
    } else if (it.live && in) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const float *row = pkvk_rope_row(p, pkvk_mrope_pos(p, pt, e0 + k));
            c[k] = row[e0 + k];
            s[k] = row[half + e0 + k];
        }
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            c[k] = it.live ? cs_past[k] : 0.0f;
            s[k] = it.live ? cs_past[8 + k] : 0.0f;
        }
    }
#pragma unroll
    for (int k = 0; k < 8; k++) {
        y[0][k] = __fsub_rn(__fmul_rn(own[0][k], c[k]), __fmul_rn(own[1][k], s[k]));
        y[1][k] = __fadd_rn(__fmul_rn(own[1][k], c[k]), __fmul_rn(own[0][k], s[k]));
    }
    const int kind = pkvi_slot_kind(it.slot, p.g.num_slots);
    if (kind == PKVI_SLOT_OOB && h == 0 && j == 0 && p.oob)
        atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return;
    const uint64_t o = pkvk_row_offset(p, it.slot) + h * hd + e0; // a multiple of 8
    pkvk_store8<false>(p, o, 0, y[0], make_uint4(0, 0, 0, 0));
    pkvk_store8<false>(p, o, G, y[1], make_uint4(0, 0, 0, 0));
}

extern "C" __global__ void __launch_bounds__(PKVK_WARP_THREADS, 4)
    pkvk_fused_mrope_halves(const pkvk_fused_params p)
{
    pkvk_mrope_halves_body(p);
}
