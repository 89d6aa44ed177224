// The fused ops on the device when the handle has a cos/sin table for the call and an item
// (token, head) is a power-of-two lane group of one warp (the launcher checks that, the
// 16-byte alignment and 32-bit offsets of kernels/fused_vec.cu, item indices below 2^32,
// rotary_dim % 16 == 0 and at most 16 heads). A warp takes 32 / group items alone: no shared
// memory, no barrier; the item's sum of squares is the normative tree over shuffles (as in
// fused_vec.cu). A token whose position is past the table has its cos and sin computed pair by
// pair by each thread that needs them: correct, slower (a table should cover the positions in
// use).
//
// The 8-element form (ops 5, 7, 8; one position stream): a thread owns 8 consecutive elements
// of an item, reads the cos and sin of its own 8 pairs from the table row of its token's
// position (16-byte loads: the heads of a token share the row in L1), and the rotation
// partners, 8 elements of the other half, from the lane half / 8 away by shuffles. Calls of
// many waves load the row after the normalisation (64 registers, 4 blocks per multiprocessor:
// loaded before the tree, the row's 16 registers would spill); calls that fit one wave
// (`_small`) load it as soon as the position arrives, so that its latency overlaps the tree and
// the rsqrt instead of following them.
//
// MRoPE (op 6) takes only the `_small` form: calls of one wave, decode above all. A token whose
// three positions are equal (text) reads one row as one stream does; any other reads its three
// rows and each pair takes its stream's (or, a position past the table, computes them). Before,
// such calls took the block kernel: on the H200 1.84-1.93 us a launch in graph replays at one
// token, fused_bf16's `_small` 1.61-1.73.
//
// The halves form (fused_halves.cu) for calls of many waves
// that rotate the whole head.
#include "kernels.cuh"
#include "fused_common.cuh"
#include "mrope_cs.cuh"

/* blocks per multiprocessor: at most 64 registers (on the H200, 3 blocks, 70 registers and no
 * spills, were 10-17% slower; 5 and 6 blocks, 88-144 bytes of spills, 18-54% slower) */
#define PKVK_WARP_BLOCKS 4

// cos and sin of the pairs pr0 .. pr0 + 7 at position pos: from the table when it holds the
// position (16-byte loads), else computed pair by pair; 0 when the thread rotates nothing
__device__ __forceinline__ void pkvk_warp_cs(const pkvk_fused_params &p, bool rotated, unsigned pos,
                                             unsigned pr0, float *c, float *s)
{
    if (rotated && pos < p.cs_len) {
        pkvk_row_cs8(p, pkvk_rope_row(p, pos), pr0, c, s);
    } else if (rotated) {
        float cf[8], sf[8];
#pragma unroll 1
        for (unsigned k = 0; k < 8; k++)
            pkvk_rope_cs(p, pos, pr0 + k, &sf[k], &cf[k]);
#pragma unroll
        for (int k = 0; k < 8; k++)
            c[k] = cf[k], s[k] = sf[k];
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++)
            c[k] = s[k] = 0.0f;
    }
}

// MRoPE, the same for a token of positions q0, q1, q2 (its three streams'). Stream 0's row is
// loaded as soon as q0 arrives (a table has a row 0 to load for a q0 past it), and q1 and q2
// are compared while it is in flight: a token of three equal positions (text, as in decode)
// needs nothing more. Otherwise the pairs of streams 1 and 2 take their rows'
// (pkvk_mrope_take12), or, a position past the table, every pair its stream's position, pair
// by pair. On the H200 (graph replays with a table), against comparing first and then loading
// the one row: 1 x 128 x 1 text token 1.70-1.74 -> 1.65-1.69 us, image patches in calls of 8 to
// 256 tokens 0.4-6% less, text tokens within -0.6% to +2%. (With q1 and q2 read here, after q0
// had arrived, text tokens took 2-5% longer at 8 to 256 tokens.)
__device__ __forceinline__ void pkvk_mrope_warp_cs(const pkvk_fused_params &p, bool rotated,
                                                   unsigned q0, unsigned q1, unsigned q2,
                                                   unsigned pr0, float *c, float *s)
{
    if (!rotated) {
        pkvk_warp_cs(p, false, q0, pr0, c, s);
        return;
    }
    const bool in0 = q0 < p.cs_len;
    pkvk_row_cs8(p, pkvk_rope_row(p, in0 ? q0 : 0u), pr0, c, s);
    if (in0 && q1 == q0 && q2 == q0) return;
    if (in0 && q1 < p.cs_len && q2 < p.cs_len) {
        pkvk_mrope_take12(p, pkvk_rope_row(p, q1), pkvk_rope_row(p, q2), pr0, c, s);
        return;
    }
    // pkvk_warp_cs's pair-by-pair loop with each pair's stream: as one helper shared with it,
    // this kernel compiled differently and image patches took 1-4% longer at 8 to 256 tokens
    // (H200, graph replays)
    float cf[8], sf[8];
#pragma unroll 1
    for (unsigned k = 0; k < 8; k++) {
        const int st = pkvi_mrope_stream(pr0 + k, p.section);
        pkvk_rope_cs(p, st == 0 ? q0 : st == 1 ? q1 : q2, pr0 + k, &sf[k], &cf[k]);
    }
#pragma unroll
    for (int k = 0; k < 8; k++)
        c[k] = cf[k], s[k] = sf[k];
}

// A thread's item (token t, head h) in the warp kernels: lane groups of 2^lg lanes, 32 / 2^lg
// items per warp; item indices fit 32 bits (the launcher's rule). Its slot is read at once.
struct pkvk_warp_item {
    unsigned t, h;
    bool live;
    long long slot;
};

// The item of a thread's lane group: blocks of PKVK_WARP_THREADS, or for the `_small` kernels
// of the launch's p.ipb items (lib/cuda_warp_plan.c). The launcher's block size, not blockDim.x:
// reading that waited for a constant-bank line before any load could issue (on the H200 the
// _small kernels took 1-2% longer in graph replays at 1 to 256 tokens); p.ipb shares a line
// with p.group.
template <bool SMALL>
__device__ __forceinline__ unsigned pkvk_warp_item_index(const pkvk_fused_params &p, unsigned lane,
                                                         unsigned lg)
{
    if (SMALL) return blockIdx.x * p.ipb + (threadIdx.x / 32u) * (32u >> lg) + (lane >> lg);
    return (blockIdx.x * (PKVK_WARP_THREADS / 32u) + threadIdx.x / 32u) * (32u >> lg) +
           (lane >> lg);
}

template <bool SMALL>
__device__ __forceinline__ pkvk_warp_item pkvk_warp_item_of(const pkvk_fused_params &p,
                                                            unsigned lane, unsigned lg)
{
    const unsigned nh = p.g.num_kv_heads;
    const unsigned item = pkvk_warp_item_index<SMALL>(p, lane, lg);
    pkvk_warp_item it;
    it.live = item < p.num_tokens * nh;
    it.t = it.live ? pkvk_div32_q(item, p.div_heads) : 0u;
    it.h = it.live ? item - it.t * nh : 0u;
    it.slot = it.live ? ((const long long *)p.slots)[it.t] : -1;
    return it;
}

// The inputs of a thread's item to L2 while the kernel ahead finishes (grid_dep.cuh): its slot,
// positions, K (and V) elements and weights. The table's row waits for the position.
template <bool OP8, bool MROPE, bool SMALL>
__device__ __forceinline__ void pkvk_warp_prefetch(const pkvk_fused_params &p)
{
    const unsigned G = p.group, lg = __ffs(G) - 1, lane = threadIdx.x & 31u,
                   e0 = 8 * (lane & (G - 1));
    const unsigned nh = p.g.num_kv_heads, hd = p.g.head_dim;
    const unsigned item = pkvk_warp_item_index<SMALL>(p, lane, lg);
    if (item >= p.num_tokens * nh || e0 >= hd) return;
    const unsigned t = pkvk_div32_q(item, p.div_heads), h = item - t * nh;
    pkvk_prefetch_l2((const unsigned short *)p.key + pkvk_src_offset(t, p.k_stride, h * hd + e0));
    if (OP8)
        pkvk_prefetch_l2((const unsigned short *)p.value +
                         pkvk_src_offset(t, p.v_stride, h * hd + e0));
    // the lines every item of a token, or of the call, reads: once a token, once a block
    if (h == 0 && e0 == 0) {
        pkvk_prefetch_l2((const long long *)p.slots + t);
        pkvk_prefetch_l2((const unsigned *)p.pos[0] + t);
        if (MROPE) {
            pkvk_prefetch_l2((const unsigned *)p.pos[1] + t);
            pkvk_prefetch_l2((const unsigned *)p.pos[2] + t);
        }
    }
    if (threadIdx.x < G) pkvk_prefetch_l2((const unsigned short *)p.weight + e0);
}

template <bool OP8, bool EARLY, bool MROPE = false>
__device__ __forceinline__ void pkvk_fused_warp_body(const pkvk_fused_params &p)
{
    constexpr int E = 8, L = OP8 ? 4 : 8, CT = 32 / L;
    // G is a power of two: shifts, not divisions by a run-time value (a software sequence)
    const unsigned G = p.group, lg = __ffs(G) - 1, lane = threadIdx.x & 31u, j = lane & (G - 1),
                   e0 = E * j;
    const unsigned hd = p.g.head_dim, half = p.rotary_dim / 2;
    const unsigned chunks = G / CT;
    const bool in_head = e0 < hd, rotated = e0 < p.rotary_dim, first = e0 < half;
    const unsigned pr0 = first ? e0 : e0 - half;
    const unsigned partner = rotated ? (first ? lane + half / E : lane - half / E) : lane;
    const pkvk_warp_item it = pkvk_warp_item_of<EARLY>(p, lane, lg);
    const bool live = it.live;
    const unsigned t = it.t, h = it.h;
    const long long slot = it.slot;
    const unsigned pos = live ? ((const unsigned *)p.pos[0])[t] : 0u;
    // MRoPE: streams 1 and 2's positions, loaded with stream 0's (loaded where they are used,
    // they were issued only after stream 0's had arrived)
    unsigned q1 = pos, q2 = pos;
    if (MROPE && live) q1 = ((const unsigned *)p.pos[1])[t], q2 = ((const unsigned *)p.pos[2])[t];
    uint4 xr = make_uint4(0, 0, 0, 0), vr = xr, wr = xr;
    if (live && in_head) {
        xr = *(const uint4 *)((const unsigned short *)p.key +
                              pkvk_src_offset(t, p.k_stride, h * hd + e0));
        if (OP8)
            vr = *(const uint4 *)((const unsigned short *)p.value +
                                  pkvk_src_offset(t, p.v_stride, h * hd + e0));
        wr = *(const uint4 *)((const unsigned short *)p.weight + e0);
    }
    float c[E], s[E];
    if (MROPE)
        pkvk_mrope_warp_cs(p, rotated && live, pos, q1, q2, pr0, c, s);
    else if (EARLY)
        pkvk_warp_cs(p, rotated && live, pos, pr0, c, s);
    float x[E], wt[E], leaf[L];
    pkvk_unpack8(xr, x);
    pkvk_unpack8(wr, wt);
    pkvk_leaves<OP8, L>(x, leaf);
    float sum = pkvk_chunk_tree<L>(leaf);
    // the chunk butterfly's levels that pair real chunks (fused_vec.cu explains why the
    // +0.0 padding levels can be left out)
    for (unsigned off = chunks >> 1; off; off >>= 1)
        sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off * CT));
    const float rms = pkvi_rsqrt_cr(__fadd_rn(pkvk_mean(p, sum), p.eps));
    float own[E], y[E];
    pkvk_normed<OP8, E>(x, wt, rms, own);
    if (!EARLY && !MROPE) pkvk_warp_cs(p, rotated && live, pos, pr0, c, s);
#pragma unroll
    for (int k = 0; k < E; k++) {
        // x0 c - x1 s below half, x1 c + x0 s above, as one expression with selects: the lanes
        // of both halves share a warp, and branches on `first` ran both sides one after another
        const float pv = __shfl_sync(0xffffffffu, own[k], partner);
        float r = pkvk_rotate(own[k], pv, c[k], s[k], first);
        if (OP8) r = pkvi_bf16_to_f32((unsigned short)pkvk_bf16x2(r, 0.0f));
        y[k] = rotated ? r : own[k];
    }
    const int kind = pkvi_slot_kind(slot, p.g.num_slots);
    if (kind == PKVI_SLOT_OOB && h == 0 && j == 0 && p.oob)
        atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK || !in_head) return;
    pkvk_store8<OP8>(p, pkvk_row_offset(p, slot) + h * hd + e0, 0, y, vr); // a multiple of 8
}

#define PKVK_FUSED_WARP_KERNEL(name, op8)                                                          \
    extern "C" __global__ void __launch_bounds__(PKVK_WARP_THREADS, PKVK_WARP_BLOCKS)              \
        name(const pkvk_fused_params p)                                                            \
    {                                                                                              \
        if (pkvk_first_wave(PKVK_WARP_BLOCKS)) pkvk_warp_prefetch<op8, false, false>(p);           \
        pkvk_grid_dependency();                                                                    \
        pkvk_fused_warp_body<op8, false>(p);                                                       \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(PKVK_WARP_THREADS, 1)                             \
        name##_small(const pkvk_fused_params p)                                                    \
    {                                                                                              \
        pkvk_warp_prefetch<op8, false, true>(p);                                                   \
        pkvk_grid_dependency();                                                                    \
        pkvk_fused_warp_body<op8, true>(p);                                                        \
    }

PKVK_FUSED_WARP_KERNEL(pkvk_fused_warp, false)
PKVK_FUSED_WARP_KERNEL(pkvk_fused_fp8_kv_warp, true)

extern "C" __global__ void __launch_bounds__(PKVK_WARP_THREADS, 1)
    pkvk_fused_mrope_warp_small(const pkvk_fused_params p)
{
    pkvk_warp_prefetch<false, true, true>(p);
    pkvk_grid_dependency();
    pkvk_fused_warp_body<false, true, true>(p);
}
