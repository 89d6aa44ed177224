// Ops 5-7 on the device (ref/fused.c): one block per token, one thread per element of a head,
// blockDim = head_dim rounded up to 32, the heads of the token taken in turn. The token's
// cos/sin of every RoPE pair are computed (or read from the handle's table) once, by one
// thread each, into shared memory: they do not depend on the head. The sum of squares goes
// through the normative tree (element leaves); every other step is the reference's binary32
// operation in its order.
#include "kernels.cuh"

// cos and sin of the token's pairs into c[], s[] (threads p < pairs); the caller syncs.
__device__ __forceinline__ void pkvk_token_angles(const pkvk_fused_params &p, unsigned t,
                                                  float *c, float *s)
{
    unsigned pr = threadIdx.x, pairs = p.rotary_dim / 2;
    if (pr < pairs) {
        int stream = p.mrope ? pkvi_mrope_stream(pr, p.section) : 0;
        pkvk_rope_cs(p, ((const unsigned *)p.pos[stream])[t], pr, &s[pr], &c[pr]);
    }
}

extern "C" __global__ void pkvk_fused(const pkvk_fused_params p)
{
    pkvk_grid_dependency();
    __shared__ float scratch[33];
    __shared__ float normed[512];
    __shared__ float cs[PKVK_MAX_PAIRS], sn[PKVK_MAX_PAIRS];
    unsigned t = blockIdx.x, e = threadIdx.x, hd = p.g.head_dim, half = p.rotary_dim / 2;
    uint64_t off = 0;
    int kind = pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                                p.g.block_stride, p.g.row, &off);
    if (kind == PKVI_SLOT_OOB && e == 0 && p.oob) atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return; // uniform per block, before any barrier
    pkvk_token_angles(p, t, cs, sn);
    float w = e < hd ? __fadd_rn(1.0f, pkvi_bf16_to_f32(((const unsigned short *)p.weight)[e])) : 0.0f;
    for (unsigned h = 0; h < p.g.num_kv_heads; h++) {
        const unsigned short *x = (const unsigned short *)p.key + t * p.k_stride + (unsigned long long)h * hd;
        float xe = e < hd ? pkvi_bf16_to_f32(x[e]) : 0.0f;
        // the tree's barriers also order this head's reads of normed[] after the last head's
        float sum = pkvk_block_tree(e < hd ? __fmul_rn(xe, xe) : 0.0f, scratch);
        float rms = pkvi_rsqrt_cr(__fadd_rn(__fdiv_rn(sum, (float)hd), p.eps));
        if (e < hd) normed[e] = __fmul_rn(__fmul_rn(xe, rms), w);
        __syncthreads();
        if (e < hd) {
            float y = normed[e];
            if (e < p.rotary_dim) {
                unsigned pr = e < half ? e : e - half;
                float x0 = normed[pr], x1 = normed[pr + half];
                y = e < half ? __fsub_rn(__fmul_rn(x0, cs[pr]), __fmul_rn(x1, sn[pr]))
                             : __fadd_rn(__fmul_rn(x1, cs[pr]), __fmul_rn(x0, sn[pr]));
            }
            unsigned long long o = off + (unsigned long long)h * hd + e;
            if (!p.k_fp8)
                ((unsigned short *)p.k_cache)[o] = pkvi_bf16_from_f32(y);
            else
                ((unsigned char *)p.k_cache)[o] = pkvi_e4m3_from_f32(__fmul_rn(y, p.k_mul));
        }
        __syncthreads(); // normed[] is rewritten by the next head
    }
}
