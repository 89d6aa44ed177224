// Ops 2-4 on the device, the 16-byte path: used when every source row, cache row and pointer is
// aligned to 8 elements (the launcher checks), which is what engines pass. A thread owns one
// chunk of 8 elements of one token's row for K and V, so a warp moves 512 contiguous bytes of
// each and 32 bytes per thread are in flight (2-byte accesses cannot cover HBM latency). The
// source loads are issued before the slot is classified, so at decode sizes the slot read and
// the data reads overlap instead of following each other. Same bytes as pkvk_write: each
// element goes through the specified conversion (kernels/cvt.cuh), only the access width
// differs. pkvk_write_vec32 (at the end) is the same for calls that fit 32-bit arithmetic.
#include "kernels.cuh"

// E4M3 of RN(v * inv) for the four BF16 values in a (low half first) and b.
__device__ __forceinline__ unsigned pkvk_e4m3x4(unsigned a, unsigned b, float inv)
{
    float f0 = __fmul_rn(pkvi_bf16_to_f32((unsigned short)a), inv);
    float f1 = __fmul_rn(pkvi_bf16_to_f32((unsigned short)(a >> 16)), inv);
    float f2 = __fmul_rn(pkvi_bf16_to_f32((unsigned short)b), inv);
    float f3 = __fmul_rn(pkvi_bf16_to_f32((unsigned short)(b >> 16)), inv);
    return pkvk_e4m3x2(f0, f1) | pkvk_e4m3x2(f2, f3) << 16;
}

// Store a chunk's K (when the op has one) and V at chunk o of the pools
__device__ __forceinline__ void pkvk_write_store(const pkvk_write_params &p, uint64_t o, uint4 kx,
                                                 uint4 vx)
{
    if (p.fp8) {
        ((uint2 *)p.k_cache)[o] =
            make_uint2(pkvk_e4m3x4(kx.x, kx.y, p.inv_k), pkvk_e4m3x4(kx.z, kx.w, p.inv_k));
        ((uint2 *)p.v_cache)[o] =
            make_uint2(pkvk_e4m3x4(vx.x, vx.y, p.inv_v), pkvk_e4m3x4(vx.z, vx.w, p.inv_v));
    } else {
        if (p.key) ((uint4 *)p.k_cache)[o] = kx;
        ((uint4 *)p.v_cache)[o] = vx;
    }
}

// One chunk: token t, chunk c of its row.
__device__ __forceinline__ void pkvk_write_chunk(const pkvk_write_params &p, uint64_t t, uint64_t c)
{
    uint4 kx = make_uint4(0, 0, 0, 0), vx;
    if (p.key) kx = ((const uint4 *)((const unsigned short *)p.key + t * p.k_stride))[c];
    vx = ((const uint4 *)((const unsigned short *)p.value + t * p.v_stride))[c];
    uint64_t off = 0;
    int kind = pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                                p.g.block_stride, p.g.row, &off);
    if (kind == PKVI_SLOT_OOB && c == 0 && p.oob) atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return;
    pkvk_write_store(p, off / 8 + c, kx, vx); // off is a multiple of 8 (block_stride and row are)
}

// Grid-stride over num_tokens * row / 8 chunks; 32-bit index arithmetic when it fits (64-bit
// division is a long software sequence).
extern "C" __global__ void pkvk_write_vec(const pkvk_write_params p)
{
    pkvk_grid_dependency();
    uint64_t cpr = p.g.row / 8, n = p.num_tokens * cpr;
    if (n <= 0xffffffffull) {
        unsigned c32 = (unsigned)cpr, n32 = (unsigned)n;
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n32;
             i += gridDim.x * blockDim.x) {
            unsigned t = i / c32;
            pkvk_write_chunk(p, t, i - t * c32);
            if (gridDim.x * blockDim.x > n32 - i) break; // no wrap of the 32-bit index
        }
        return;
    }
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        pkvk_write_chunk(p, i / cpr, i % cpr);
}

// A pkvk_write_vec32 chunk, c of its token's row, from its K (0 for V only), V and slot
// addresses. A valid slot's row is at slot x row when the pool's blocks are dense (q.flat: the
// launcher's test of block_stride == block_size x row), which spares the division's five
// dependent instructions between the slot's arrival and the stores.
__device__ __forceinline__ void pkvk_write_chunk32_at(const pkvk_write32_params &q, unsigned c,
                                                      const uint4 *kp, const uint4 *vp,
                                                      const long long *sp)
{
    const pkvk_write_params &p = q.w;
    uint4 kx = make_uint4(0, 0, 0, 0);
    if (kp) kx = *kp;
    const uint4 vx = *vp;
    const long long slot = *sp;
    const int kind = pkvi_slot_kind(slot, p.g.num_slots);
    if (kind == PKVI_SLOT_OOB && c == 0 && p.oob) atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return;
    const uint32_t s = (uint32_t)slot;
    uint64_t off;
    if (q.flat) {
        off = (uint64_t)s * (uint32_t)p.g.row;
    } else {
        const uint32_t b = pkvk_div32_q(s, q.div_bs);
        off = (uint64_t)b * (uint32_t)p.g.block_stride +
              (uint64_t)(s - b * p.g.block_size) * (uint32_t)p.g.row;
    }
    pkvk_write_store(p, off / 8 + c, kx, vx);
}

// The addresses of chunk i: the token by the launch's divisor, offsets as 32 x 32 -> 64-bit
// products (kernels/fused_common.cuh)
struct pkvk_write_chunk_addr {
    unsigned c;
    const uint4 *k, *v;
    const long long *s;
};
__device__ __forceinline__ pkvk_write_chunk_addr pkvk_write_addr32(const pkvk_write32_params &q,
                                                                   unsigned i)
{
    const pkvk_write_params &p = q.w;
    const unsigned t = pkvk_div32_q(i, q.div_cpr);
    pkvk_write_chunk_addr a;
    a.c = i - t * q.div_cpr.d;
    const unsigned short *kr = (const unsigned short *)p.key, *vr = (const unsigned short *)p.value;
    a.k = kr ? (const uint4 *)(kr + (uint64_t)t * (uint32_t)p.k_stride) + a.c : nullptr;
    a.v = (const uint4 *)(vr + (uint64_t)t * (uint32_t)p.v_stride) + a.c;
    a.s = (const long long *)p.slots + t;
    return a;
}

// pkvk_write_vec for calls of fewer than 2^32 chunks whose valid slots, block stride, row and
// row strides fit 32 bits (the launcher's rule, the fused 16-byte kernels' too): the GPU's
// 32-bit division, a sequence of about 20 instructions, came before each chunk's loads (the
// token) and again before its stores (the slot's block), and at decode sizes those are the
// launch's time. On the H200, three interleaved rounds: graph replays 4.5-11.5% faster at 1 to
// 64 tokens, 1.2% slower at 256, -1.6% to +0.1% from 2,048; single launches -7.6% to +3.3% at 1
// to 256 tokens (doc/PERFORMANCE-HISTORY.md, thirty-fifth session). A thread's first chunk's
// addresses are computed before the dependency wait (arithmetic on the launch's parameters
// only; no load moves), so that its loads issue as the wait returns: on the H200, graph
// replays of K+V writes 1.9-12.6% faster at 1 to 256 tokens, V-only writes 0-1.8% slower
// (three interleaved rounds), every write 0.1-4.9% faster at 16,384 and 65,536 tokens and
// within 1% in single launches (doc/PERFORMANCE-HISTORY.md, forty-second session).
extern "C" __global__ void pkvk_write_vec32(const pkvk_write32_params q)
{
    pkvk_launch_dependents(); // first (grid_dep.cuh)
    const unsigned n = q.w.num_tokens * q.div_cpr.d;
    const unsigned i0 = blockIdx.x * blockDim.x + threadIdx.x;
    pkvk_write_chunk_addr a = {0, nullptr, nullptr, nullptr};
    if (i0 < n) {
        a = pkvk_write_addr32(q, i0);
        // the first chunk's inputs, while the kernel ahead finishes, in the blocks of a first
        // wave (grid_dep.cuh); a bound from the launch, as %nsmid's read made V-only writes at
        // 8 x 128 x 1 0.09 us slower on the H200 (graph replays; doc/PERFORMANCE-HISTORY.md,
        // thirty-seventh session)
        if (blockIdx.x < q.prefetch_blocks) {
            if (a.k) pkvk_prefetch_l2(a.k);
            pkvk_prefetch_l2(a.v);
            if (a.c == 0) pkvk_prefetch_l2(a.s);
        }
    }
    pkvk_grid_wait();
    if (i0 >= n) return;
    pkvk_write_chunk32_at(q, a.c, a.k, a.v, a.s);
    const unsigned step = gridDim.x * blockDim.x;
    for (unsigned i = i0; step < n - i;) { // i + step < n: no wrap of the 32-bit index
        i += step;
        a = pkvk_write_addr32(q, i);
        pkvk_write_chunk32_at(q, a.c, a.k, a.v, a.s);
    }
}
