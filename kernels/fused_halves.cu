// The halves form of the warp kernels (fused_warp.cu), for calls of many waves whose rotation
// covers the whole head (rotary_dim == head_dim) and whose head is 16 x a power-of-two threads
// with whole chunks in each half (the launcher checks): a thread owns 8 elements of the first
// half and the 8 elements half a head further, each pair's two elements. So the rotation needs
// no shuffles, the thread reads only its 8 pairs' cos and sin, and the item's fixed work
// (indices, slot, rsqrt) is spread over twice the bytes. When each half is whole chunks, the
// chunk trees run per half as in the 8-element form, the chunk butterfly's top level (chunk c
// with c + chunks / 2) adds the thread's two halves and the lower levels shuffle; when the head
// is one chunk, see below.
//
// Pipelined: the launcher gives at most one wave of blocks, and each warp walks its tiles (32 /
// group items each) a grid's warps apart. The K (and V) rows of the tile PKVK_HALVES_STAGES - 1
// ahead are copied into the warp's shared memory by cp.async, which holds no register while in
// flight; positions and slots are loaded one tile ahead into registers; the table row of the
// tile being worked on is loaded before its tree, from a position that arrived a tile ago. One
// wave of warps that each wait for a tile's loads, work, store and exit left the memory system
// idle between (on the H200, a third of the kernel's stall samples were waits for K, a third for
// the table row). Each lane copies and reads only its own 16-byte slots: no barrier in the loop.
// A position past the table has its pairs' cos and sin computed at the top of the iteration,
// where few values are live, so the rare path does not raise the kernel's register count.
#include "kernels.cuh"
#include "fused_common.cuh"

#define PKVK_HALVES_STAGES 2

// A 16-byte global -> shared copy, or (copy false) 16 zero bytes and no global read
__device__ __forceinline__ void pkvk_cp_async16_z(void *smem, const void *gmem, bool copy)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(smem)),
                 "l"(gmem), "r"(copy ? 16u : 0u)
                 : "memory");
}

// Wait until at most N of this thread's newest copy groups are in flight
template <int N> __device__ __forceinline__ void pkvk_cp_async_wait_n()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

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

// A tile's item of this lane, and whether it is one of the call's (tile < tiles first: past
// the last tile, tile * ipw may not fit 32 bits)
__device__ __forceinline__ bool pkvk_halves_live(unsigned tile, unsigned tiles, unsigned ipw,
                                                 unsigned sub, unsigned total, unsigned *item)
{
    *item = tile * ipw + sub;
    return tile < tiles && *item < total;
}

// Copy the K (and V) elements of this lane's item into its slots of a stage: unit u of 16 bytes
// at st[u * 32 + lane] (units 0, 1: K's two halves; 2, 3: V's), then commit the group
template <bool OP8>
__device__ __forceinline__ void pkvk_halves_issue(const pkvk_fused_params &p, uint4 *st,
                                                  unsigned item, bool live, unsigned lane,
                                                  unsigned e0)
{
    const unsigned nh = p.g.num_kv_heads, hd = p.g.head_dim, half = hd / 2;
    const unsigned t = live ? pkvk_div32_q(item, p.div_heads) : 0u, h = live ? item - t * nh : 0u;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const unsigned e = h * hd + e0 + u * half;
        pkvk_cp_async16_z(&st[u * 32 + lane],
                          (const unsigned short *)p.key + pkvk_src_offset(t, p.k_stride, e), live);
        if (OP8)
            pkvk_cp_async16_z(&st[(2 + u) * 32 + lane],
                              (const unsigned short *)p.value + pkvk_src_offset(t, p.v_stride, e),
                              live);
    }
    pkvk_cp_async_commit();
}

// A tile's positions (one, or three streams for MRoPE) and slot for this lane's item
template <bool MROPE> struct pkvk_halves_meta {
    unsigned pos[MROPE ? 3 : 1];
    long long slot;
};

template <bool MROPE>
__device__ __forceinline__ pkvk_halves_meta<MROPE> pkvk_halves_meta_of(const pkvk_fused_params &p,
                                                                       unsigned item, bool live)
{
    pkvk_halves_meta<MROPE> m;
    const unsigned t = live ? pkvk_div32_q(item, p.div_heads) : 0u;
#pragma unroll
    for (int i = 0; i < (MROPE ? 3 : 1); i++)
        m.pos[i] = live ? ((const unsigned *)p.pos[i])[t] : 0u;
    m.slot = live ? ((const long long *)p.slots)[t] : -1;
    return m;
}

template <bool OP8, bool MROPE>
__device__ __forceinline__ void pkvk_fused_halves_body(const pkvk_fused_params &p)
{
    constexpr int L = OP8 ? 4 : 8, CT = 32 / L, U = OP8 ? 4 : 2, S = PKVK_HALVES_STAGES;
    constexpr unsigned W = PKVK_WARP_THREADS / 32;
    __shared__ uint4 stages[W][S][U * 32];
    __shared__ float4 w1[4][32]; // 1 + w of lane j's elements e0 .. e0 + 3, e0 + 4 .., and half on
    const unsigned G = p.group, lg = __ffs(G) - 1, lane = threadIdx.x & 31u, j = lane & (G - 1),
                   e0 = 8 * j, sub = lane >> lg, wid = threadIdx.x / 32u;
    const unsigned hd = p.g.head_dim, half = hd / 2, nh = p.g.num_kv_heads;
    // item indices fit 32 bits, with a grid's warps of tiles to spare (the launcher)
    const unsigned total = p.num_tokens * nh, ipw = 32u >> lg,
                   tiles = (total + ipw - 1) >> (5 - lg);
    const unsigned nw = gridDim.x * (blockDim.x / 32u);
    if (threadIdx.x < 4 * G) {
        const unsigned q = threadIdx.x >> lg, jj = threadIdx.x & (G - 1);
        const uint2 wr = *(const uint2 *)((const unsigned short *)p.weight + (q >> 1) * half +
                                          8 * jj + (q & 1) * 4);
        w1[q][jj] = make_float4(__fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)wr.x)),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)(wr.x >> 16))),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)wr.y)),
                                __fadd_rn(1.0f, pkvi_bf16_to_f32((unsigned short)(wr.y >> 16))));
    }
    __syncthreads();
    unsigned tile = blockIdx.x * (blockDim.x / 32u) + wid, item;
    bool live;
#pragma unroll
    for (int s = 0; s < S - 1; s++) {
        live = pkvk_halves_live(tile + s * nw, tiles, ipw, sub, total, &item);
        pkvk_halves_issue<OP8>(p, stages[wid][s], item, live, lane, e0);
    }
    live = pkvk_halves_live(tile, tiles, ipw, sub, total, &item);
    pkvk_halves_meta<MROPE> m0 = pkvk_halves_meta_of<MROPE>(p, item, live);
    live = pkvk_halves_live(tile + nw, tiles, ipw, sub, total, &item);
    pkvk_halves_meta<MROPE> m1 = pkvk_halves_meta_of<MROPE>(p, item, live);
    for (unsigned stage = 0; tile < tiles; tile += nw, stage = stage + 1 == S ? 0 : stage + 1) {
        {
            const unsigned ahead = stage + S - 1 >= S ? stage - 1 : stage + S - 1;
            live = pkvk_halves_live(tile + (S - 1) * nw, tiles, ipw, sub, total, &item);
            pkvk_halves_issue<OP8>(p, stages[wid][ahead], item, live, lane, e0);
        }
        live = pkvk_halves_live(tile, tiles, ipw, sub, total, &item);
        const unsigned h = live ? item - pkvk_div32_q(item, p.div_heads) * nh : 0u;
        float c[8], s[8];
        pkvk_warp_cs<MROPE>(p, live, m0.pos, e0, c, s);
        pkvk_cp_async_wait_n<S - 1>();
        const uint4 *cur = stages[wid][stage];
        float x[2][8], own[2][8], leaf[2][L], sum;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            pkvk_unpack8(pkvk_lds128(&cur[u * 32 + lane]), x[u]);
            pkvk_leaves<OP8, L>(x[u], leaf[u]);
        }
        if (G * L >= 32) {
            sum = __fadd_rn(pkvk_chunk_tree<L>(leaf[0]), pkvk_chunk_tree<L>(leaf[1]));
            for (unsigned off = G / CT >> 1; off; off >>= 1) // chunks of the first half
                sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off * CT));
        } else {
            // one chunk, its two halves 16 leaves apart: the lane butterfly's first level (leaf
            // i with leaf i ^ 16) adds the thread's own leaves, the rest runs as a 16-leaf chunk
#pragma unroll
            for (int k = 0; k < L; k++)
                leaf[0][k] = __fadd_rn(leaf[0][k], leaf[1][k]);
            sum = pkvk_chunk_tree<L, 8>(leaf[0]);
        }
        const float rms = pkvi_rsqrt_cr(__fadd_rn(pkvk_mean(p, sum), p.eps));
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const float4 a = w1[2 * u][j], b = w1[2 * u + 1][j];
            const float wp[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
            pkvk_unpack8(pkvk_lds128(&cur[u * 32 + lane]), x[u]);
            pkvk_normed1<OP8, 8>(x[u], wp, rms, own[u]);
        }
        float y[2][8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
            y[0][k] = __fsub_rn(__fmul_rn(own[0][k], c[k]), __fmul_rn(own[1][k], s[k]));
            y[1][k] = __fadd_rn(__fmul_rn(own[1][k], c[k]), __fmul_rn(own[0][k], s[k]));
            if (OP8) {
                const unsigned b = pkvk_bf16x2(y[0][k], y[1][k]);
                y[0][k] = pkvi_bf16_to_f32((unsigned short)b);
                y[1][k] = pkvi_bf16_to_f32((unsigned short)(b >> 16));
            }
        }
        const int kind = pkvi_slot_kind(m0.slot, p.g.num_slots);
        if (kind == PKVI_SLOT_OOB && h == 0 && j == 0 && p.oob)
            atomicAdd((unsigned long long *)p.oob, 1ull);
        if (kind == PKVI_SLOT_OK) {
            const uint64_t o = pkvk_row_offset(p, m0.slot) + h * hd + e0; // a multiple of 8
            const uint4 z = make_uint4(0, 0, 0, 0);
            pkvk_store8<OP8>(p, o, 0, y[0], OP8 ? pkvk_lds128(&cur[2 * 32 + lane]) : z);
            pkvk_store8<OP8>(p, o, G, y[1], OP8 ? pkvk_lds128(&cur[3 * 32 + lane]) : z);
        }
        m0 = m1;
        live = pkvk_halves_live(tile + 2 * nw, tiles, ipw, sub, total, &item);
        m1 = pkvk_halves_meta_of<MROPE>(p, item, live);
    }
    pkvk_cp_async_wait_n<0>(); // no copy in flight at exit
}

// ops 5-8 at 4 blocks per multiprocessor (the launcher's PKVI_HALVES_BLOCKS_PER_SM)
#define PKVK_FUSED_HALVES_KERNEL(name, op8, mrope)                                                 \
    extern "C" __global__ void __launch_bounds__(PKVK_WARP_THREADS, PKVK_HALVES_BLOCKS_PER_SM)     \
        name(const pkvk_fused_params p)                                                            \
    {                                                                                              \
        pkvk_fused_halves_body<op8, mrope>(p);                                                     \
    }

PKVK_FUSED_HALVES_KERNEL(pkvk_fused_halves, false, false)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_mrope_halves, false, true)
PKVK_FUSED_HALVES_KERNEL(pkvk_fused_fp8_kv_halves, true, false)
