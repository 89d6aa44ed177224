// Ops 5-7 on the device (ref/fused.c): one block per (token, head), one thread per element,
// blockDim = head_dim rounded up to 32. The sum of squares goes through the normative tree
// (element leaves), every other step is the reference's binary32 operation in its order.
#include "kernels.cuh"

extern "C" __global__ void pkvk_fused(const pkvk_fused_params p)
{
    __shared__ float scratch[33];
    __shared__ float normed[512];
    unsigned t = blockIdx.x, h = blockIdx.y, e = threadIdx.x, hd = p.g.head_dim;
    uint64_t off = 0;
    int kind = pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                                p.g.block_stride, p.g.row, &off);
    if (kind == PKVI_SLOT_OOB && h == 0 && e == 0 && p.oob)
        atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return; // uniform per block, before any barrier
    const unsigned short *x = (const unsigned short *)p.key + t * p.k_stride + (unsigned long long)h * hd;
    float xe = e < hd ? pkvi_bf16_to_f32(x[e]) : 0.0f;
    float sum = pkvk_block_tree(e < hd ? __fmul_rn(xe, xe) : 0.0f, scratch);
    float rms = pkvi_rsqrt_cr(__fadd_rn(__fdiv_rn(sum, (float)hd), p.eps));
    if (e < hd) {
        float w = pkvi_bf16_to_f32(((const unsigned short *)p.weight)[e]);
        normed[e] = __fmul_rn(__fmul_rn(xe, rms), __fadd_rn(1.0f, w));
    }
    __syncthreads();
    if (e >= hd) return;
    float y = normed[e];
    unsigned half = p.rotary_dim / 2;
    if (e < p.rotary_dim) {
        unsigned pr = e < half ? e : e - half;
        int stream = p.mrope ? pkvi_mrope_stream(pr, p.section) : 0;
        float angle = __fmul_rn((float)((const unsigned *)p.pos[stream])[t], p.inv_freq[pr]);
        float s, c;
        pkvi_sincosf_cr(angle, &s, &c, 0);
        float x0 = normed[pr], x1 = normed[pr + half];
        y = e < half ? __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s))
                     : __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
    }
    unsigned long long o = off + (unsigned long long)h * hd + e;
    if (p.v_cache == 0 && p.k_mul == 0.0f) // BF16 cache
        ((unsigned short *)p.k_cache)[o] = pkvi_bf16_from_f32(y);
    else
        ((unsigned char *)p.k_cache)[o] = pkvi_e4m3_from_f32(__fmul_rn(y, p.k_mul));
}
