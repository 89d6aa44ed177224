// Ops 2-4 on the device, the 16-byte path: used when every source row, cache row and pointer is
// aligned to 8 elements (the launcher checks), which is what engines pass. A thread owns one
// chunk of 8 elements of one token's row for K and V, so a warp moves 512 contiguous bytes of
// each and 32 bytes per thread are in flight (2-byte accesses cannot cover HBM latency). The
// source loads are issued before the slot is classified, so at decode sizes the slot read and
// the data reads overlap instead of following each other. Same bytes as pkvk_write: each
// element goes through the specified conversion (kernels/cvt.cuh), only the access width
// differs.
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
    uint64_t o = off / 8 + c; // off is a multiple of 8 (block_stride and row are)
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

// Grid-stride over num_tokens * row / 8 chunks; 32-bit index arithmetic when it fits (64-bit
// division is a long software sequence).
extern "C" __global__ void pkvk_write_vec(const pkvk_write_params p)
{
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
