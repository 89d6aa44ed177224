// Ops 5-8 on the device, the 16-byte path (the launcher checks that every row and pointer is
// aligned to 8 elements and head_dim % E == 0). A thread owns E consecutive elements of one
// (token, head) item, loaded and stored 16 bytes at a time; an item takes `group` threads, a
// block `ipb` items, so at prefill sizes a block holds several tokens and at decode sizes the
// heads of a token run side by side. E is 8, and 16 for op 8 when head_dim allows and a block
// then has at most one RoPE pair per thread (the launcher's rule; 16 was measured faster for
// op 8 on the H200 at 8ba1162, slower for ops 5-7 there and at 4180ff4). K and V rows arrive
// by cp.async while the block computes its sin and cos, both for a pair on one thread, or
// copies them from the handle's table (kernels/rope_cs.cuh) by cp.async too.
//
// The sum of squares is still the normative tree (ref/tree.h): a thread holds L leaves
// (E elements, or E / 2 pairs for op 8), so the 32-leaf chunk of the tree spans 32 / L adjacent
// threads. Butterfly levels with off >= L pair leaf l with leaf l ^ off, which lives in thread
// j ^ (off / L) at the same position: a shuffle. Levels with off < L pair leaves inside the
// thread. When an item is a power-of-two lane group of one warp, the chunk sums meet over
// shuffles too (only the levels that pair real chunks: see the body); otherwise they go
// through shared memory and every thread finishes the tree over them (padded with +0.0 to 32)
// with the reference's own pkvi_butterfly32. Groups are padded to whole chunks, so a chunk
// never straddles items or warps. Divisions by launch constants use kernels/fastdiv.h.
#include "kernels.cuh"
#include "fused_common.cuh"
#include "cp_async.cuh"

#define PKVK_VEC_THREADS 256
/* blocks per multiprocessor the register allocation aims at: 64 and 80 registers, the
 * fewest spills the ptxas reports showed for 8 and 16 elements per thread (3 blocks for E = 8,
 * 68 registers and no spills, measured 10-18% slower on the H200 at ecb0d17) */
#define PKVK_VEC8_BLOCKS 4
#define PKVK_VEC16_BLOCKS 3
/* sin/cos slots: ipb * rotary_dim / 2 <= (256 / group) * (E / 2) * group = 128 E */
#define PKVK_VEC_PAIRS(E) (128 * (E))

// Where thread group il of this block is: its token t and head h (if live: an item of the
// call), and the block's tokens [t_first, t_end). Item indices fit 32 bits in every call the
// launcher marks idx32, and then take 32-bit arithmetic: fewer instructions before the first
// load and the sin/cos loop, which are on the critical path of a small call.
struct pkvk_item_index {
    uint64_t t_first, t, t_end;
    unsigned h;
    bool live;
};

__device__ __forceinline__ pkvk_item_index pkvk_index(const pkvk_fused_params &p, unsigned il)
{
    const unsigned nh = p.g.num_kv_heads;
    pkvk_item_index x;
    if (p.idx32) {
        const unsigned item0 = blockIdx.x * p.ipb, item = item0 + il;
        const unsigned t_end = pkvk_div32_q(item0 + p.ipb + nh - 1, p.div_heads);
        x.live = il < p.ipb && item < p.num_tokens * nh;
        x.t_first = pkvk_div32_q(item0, p.div_heads);
        x.t = x.live ? pkvk_div32_q(item, p.div_heads) : 0u;
        x.h = x.live ? item - (unsigned)x.t * nh : 0u;
        x.t_end = t_end < p.num_tokens ? t_end : p.num_tokens;
    } else {
        const uint64_t item0 = (uint64_t)blockIdx.x * p.ipb, item = item0 + il;
        const uint64_t t_end = pkvk_div(item0 + p.ipb + nh - 1, p.div_heads);
        x.live = il < p.ipb && item < (uint64_t)p.num_tokens * nh;
        x.t_first = pkvk_div(item0, p.div_heads);
        x.t = x.live ? pkvk_div(item, p.div_heads) : 0u;
        x.h = x.live ? (unsigned)(item - x.t * nh) : 0u;
        x.t_end = t_end < p.num_tokens ? t_end : p.num_tokens;
    }
    return x;
}

// TAB: the handle has a cos/sin table for this call (a separate kernel: the table's branch in
// the pair loop made the kernels without it 2-5% slower on the H200)
template <bool OP8, int E, bool TAB>
__device__ __forceinline__ void pkvk_fused_vec_body(const pkvk_fused_params &p)
{
    constexpr int L = OP8 ? E / 2 : E, CT = 32 / L, NV = E / 8; // leaves, threads per chunk, uint4s
    __shared__ float csum[PKVK_VEC_THREADS / CT];
    // normed values by thread, E per thread plus 4 of padding: 16-byte stores and loads then
    // hit distinct banks (a stride of E words would put 8 or 16 threads on one bank)
    __shared__ __align__(16) float normed[PKVK_VEC_THREADS * (E + 4)];
    __shared__ __align__(16) float cs[PKVK_VEC_PAIRS(E)], sn[PKVK_VEC_PAIRS(E)];
    const unsigned G = p.group, hd = p.g.head_dim, half = p.rotary_dim / 2;
    const unsigned tid = threadIdx.x, il = pkvk_div32_q(tid, p.div_group), j = tid - il * G,
                   e0 = E * j;
    const pkvk_item_index ix = pkvk_index(p, il);
    const uint64_t t_first = ix.t_first, t = ix.t;
    const unsigned h = ix.h;
    const bool live = ix.live, mine = live && e0 < hd;

    // This thread's K (and V) come into its own slots of `normed` by cp.async, in flight
    // during the sin/cos loop without holding registers (held in registers, they were spilled
    // to local memory by stores that waited for the loads). Each thread reads back only what
    // it copied, before it writes its normed values there.
    float *const mine_smem = normed + tid * (E + 4);
    if (mine) {
        const uint4 *xs = (const uint4 *)((const unsigned short *)p.key +
                                          pkvk_src_offset(t, p.k_stride, h * hd + e0));
        const uint4 *vs = (const uint4 *)((const unsigned short *)p.value +
                                          pkvk_src_offset(t, p.v_stride, h * hd + e0));
#pragma unroll
        for (int q = 0; q < NV; q++) {
            pkvk_cp_async16((uint4 *)mine_smem + q, xs + q);
            if (OP8) pkvk_cp_async16((uint4 *)mine_smem + NV + q, vs + q);
        }
    }
    pkvk_cp_async_commit(); // group 1: K (and V); the table's cos/sin follow as group 2
    // the slot is read now and classified after the loop, when the read has landed
    const long long slot = live ? ((const long long *)p.slots)[t] : -1;

    // the sin and cos of every pair of the block's tokens, each once, one thread per pair:
    // computed, or copied from the handle's table in flight with the K rows
    const unsigned pairs = half ? (unsigned)(ix.t_end - t_first) * half : 0u;
    for (unsigned kk = tid; kk < pairs; kk += blockDim.x) {
        const unsigned tl = pkvk_div32_q(kk, p.div_half), pr = kk - tl * half;
        const int stream = p.mrope ? pkvi_mrope_stream(pr, p.section) : 0;
        const unsigned pos = ((const unsigned *)p.pos[stream])[t_first + tl];
        if (TAB && pos < p.cs_len) {
            const float *row = pkvk_rope_row(p, pos);
            pkvk_cp_async4(&cs[kk], row + pr);
            pkvk_cp_async4(&sn[kk], row + half + pr);
        } else {
            pkvi_sincosf_cr(__fmul_rn((float)pos, p.inv_freq[pr]), &sn[kk], &cs[kk], 0);
        }
    }

    pkvk_cp_async_commit();
    uint64_t off = 0;
    const int kind = pkvi_slot_kind(slot, p.g.num_slots);
    if (kind == PKVI_SLOT_OK) off = pkvk_row_offset(p, slot);
    if (live && kind == PKVI_SLOT_OOB && h == 0 && j == 0 && p.oob)
        atomicAdd((unsigned long long *)p.oob, 1ull);
    // the weights after the loop too: every item reads the same ones (cache hits)
    uint4 xr[NV], wr[NV], vr[NV];
    pkvk_cp_async_wait_n<1>(); // K and V: the cos/sin may still be in flight
#pragma unroll
    for (int q = 0; q < NV; q++) {
        xr[q] = wr[q] = vr[q] = make_uint4(0, 0, 0, 0);
        if (mine) {
            xr[q] = ((const uint4 *)mine_smem)[q];
            if (OP8) vr[q] = ((const uint4 *)mine_smem)[NV + q];
            wr[q] = ((const uint4 *)((const unsigned short *)p.weight + e0))[q];
        }
    }
    float x[E], wt[E], leaf[L];
#pragma unroll
    for (int q = 0; q < NV; q++) {
        pkvk_unpack8(xr[q], x + 8 * q);
        pkvk_unpack8(wr[q], wt + 8 * q);
    }
    pkvk_leaves<OP8, L>(x, leaf);
    float sum = pkvk_chunk_tree<L>(leaf); // every thread of the chunk holds its sum
    const unsigned chunks = G / CT;
    if (G <= 32 && (G & (G - 1)) == 0) {
        // The item is an aligned lane group of one warp and its chunk count a power of two.
        // The chunk butterfly's levels with off >= chunks add the +0.0 padding to each real
        // chunk sum, which leaves it as it is (a sum of squares is never -0.0, and a NaN
        // stays a NaN, whose payload no byte depends on); the levels below pair real chunks,
        // whose threads are off * CT lanes apart. So only those levels run, as shuffles.
        for (unsigned off = chunks >> 1; off; off >>= 1)
            sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, off * CT));
    } else { // items that straddle warps: the chunk sums go through shared memory
        if (j % CT == 0) csum[tid / CT] = sum;
        __syncthreads();
        float sums[32];
#pragma unroll
        for (unsigned c = 0; c < 32; c++)
            sums[c] = il < p.ipb && c < chunks ? csum[il * chunks + c] : 0.0f;
        sum = pkvi_butterfly32(sums);
    }
    float rms = pkvi_rsqrt_cr(__fadd_rn(pkvk_mean(p, sum), p.eps));
    // the normed values (op 8: rounded to BF16, held exactly as floats) stay in registers and
    // go to shared memory for the rotation partners in other threads
    float own[E];
    pkvk_normed<OP8, E>(x, wt, rms, own);
#pragma unroll
    for (int q = 0; q < E / 4; q++)
        ((float4 *)(normed + tid * (E + 4)))[q] =
            make_float4(own[4 * q], own[4 * q + 1], own[4 * q + 2], own[4 * q + 3]);
    pkvk_cp_async_wait(); // this thread's cos/sin copies; the barrier shows them to the block
    __syncthreads();
    if (kind != PKVI_SLOT_OK || !mine) return; // after the last barrier
    const float *c_t = cs + (t - t_first) * half, *s_t = sn + (t - t_first) * half;
    const unsigned item_tid = il * G, rot = p.rotary_dim;
    float y[E];
    if (e0 >= rot) {
#pragma unroll
        for (int k = 0; k < E; k++)
            y[k] = own[k];
    } else if (half % E == 0) { // all E elements on one side of half: 16-byte reads
        const bool first = e0 < half;
        const unsigned pr0 = first ? e0 : e0 - half, pe0 = first ? e0 + half : e0 - half;
        const float4 *pv = (const float4 *)(normed + (item_tid + pe0 / E) * (E + 4));
#pragma unroll
        for (int q = 0; q < E / 4; q++) {
            float4 pq = pv[q], cq = ((const float4 *)(c_t + pr0))[q],
                   sq = ((const float4 *)(s_t + pr0))[q];
            const float pa[4] = {pq.x, pq.y, pq.z, pq.w}, ca[4] = {cq.x, cq.y, cq.z, cq.w},
                        sa[4] = {sq.x, sq.y, sq.z, sq.w};
#pragma unroll
            for (int r = 0; r < 4; r++) {
                // x0 = own, x1 = partner below half; the reverse above
                y[4 * q + r] = pkvk_rotate(own[4 * q + r], pa[r], ca[r], sa[r], first);
            }
        }
    } else {
#pragma unroll
        for (int k = 0; k < E; k++) {
            unsigned e = e0 + k, pr = e < half ? e : e - half, pe = e < half ? e + half : e - half;
            float o = own[k], pv = normed[(item_tid + pe / E) * (E + 4) + pe % E];
            y[k] = e >= rot   ? o
                   : e < half ? __fsub_rn(__fmul_rn(o, c_t[pr]), __fmul_rn(pv, s_t[pr]))
                              : __fadd_rn(__fmul_rn(o, c_t[pr]), __fmul_rn(pv, s_t[pr]));
        }
    }
    if (OP8) { // the rotation's BF16 rounding (the chain's rope output), before the FP8 cast
#pragma unroll
        for (int k = 0; k < E; k++)
            if (e0 + k < rot) y[k] = pkvi_bf16_to_f32((unsigned short)pkvk_bf16x2(y[k], 0.0f));
    }
    uint64_t o = off + (uint64_t)h * hd + e0; // a multiple of 8
#pragma unroll
    for (int q = 0; q < NV; q++)
        pkvk_store8<OP8>(p, o, q, y + 8 * q, vr[q]);
}

#define PKVK_FUSED_VEC_KERNEL(name, op8, e, blocks)                                                \
    extern "C" __global__ void __launch_bounds__(PKVK_VEC_THREADS, blocks)                         \
        name(const pkvk_fused_params p)                                                            \
    {                                                                                              \
        pkvk_grid_dependency();                                                                    \
        pkvk_fused_vec_body<op8, e, false>(p);                                                     \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(PKVK_VEC_THREADS, blocks)                         \
        name##_tab(const pkvk_fused_params p)                                                      \
    {                                                                                              \
        pkvk_grid_dependency();                                                                    \
        pkvk_fused_vec_body<op8, e, true>(p);                                                      \
    }

PKVK_FUSED_VEC_KERNEL(pkvk_fused_vec, false, 8, PKVK_VEC8_BLOCKS)
PKVK_FUSED_VEC_KERNEL(pkvk_fused_fp8_kv_vec, true, 8, PKVK_VEC8_BLOCKS)
PKVK_FUSED_VEC_KERNEL(pkvk_fused_fp8_kv_vec16, true, 16, PKVK_VEC16_BLOCKS)
