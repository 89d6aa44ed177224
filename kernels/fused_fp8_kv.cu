// Op 8 on the device: the chain rms_norm -> rope -> write_fp8 in one kernel, byte-identical to
// ref/chain.c. One block per token, the heads in turn; thread i owns the element pair
// (2i, 2i+1), so the sum of squares is the normative tree over pair leaves; the normed K is
// rounded to BF16 in shared memory, rotated with the token's cos/sin (computed once per pair),
// rounded to BF16 again, and cast to FP8.
#include "kernels.cuh"

extern "C" __global__ void pkvk_fused_fp8_kv(const pkvk_fused_params p)
{
    pkvk_grid_dependency();
    __shared__ float scratch[33];
    __shared__ unsigned short nb[512];
    __shared__ float cs[PKVK_MAX_PAIRS], sn[PKVK_MAX_PAIRS];
    unsigned t = blockIdx.x, i = threadIdx.x, hd = p.g.head_dim, np = hd / 2, half = p.rotary_dim / 2;
    uint64_t off = 0;
    int kind = pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                                p.g.block_stride, p.g.row, &off);
    if (kind == PKVI_SLOT_OOB && i == 0 && p.oob) atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return;
    pkvk_token_angles(p, t, cs, sn); // rotary_dim / 2 <= head_dim / 2 <= blockDim
    const unsigned short *w = (const unsigned short *)p.weight;
    for (unsigned h = 0; h < p.g.num_kv_heads; h++) {
        const unsigned short *x = (const unsigned short *)p.key + t * p.k_stride + (unsigned long long)h * hd;
        float a = 0.0f, b = 0.0f;
        if (i < np) {
            a = pkvi_bf16_to_f32(x[2 * i]);
            b = pkvi_bf16_to_f32(x[2 * i + 1]);
        }
        float sum = pkvk_block_tree(i < np ? __fadd_rn(__fmul_rn(a, a), __fmul_rn(b, b)) : 0.0f, scratch);
        float rms = pkvi_rsqrt_cr(__fadd_rn(__fdiv_rn(sum, (float)hd), p.eps));
        if (i < np) {
            nb[2 * i] = pkvi_bf16_from_f32(__fmul_rn(__fmul_rn(a, rms), __fadd_rn(1.0f, pkvi_bf16_to_f32(w[2 * i]))));
            nb[2 * i + 1] =
                pkvi_bf16_from_f32(__fmul_rn(__fmul_rn(b, rms), __fadd_rn(1.0f, pkvi_bf16_to_f32(w[2 * i + 1]))));
        }
        __syncthreads();
        if (i < np) {
            const unsigned short *v = (const unsigned short *)p.value + t * p.v_stride + (unsigned long long)h * hd;
            unsigned long long o = off + (unsigned long long)h * hd;
            for (unsigned e = 2 * i; e < 2 * i + 2; e++) {
                unsigned short kb = nb[e];
                if (e < p.rotary_dim) {
                    unsigned pr = e < half ? e : e - half;
                    float x0 = pkvi_bf16_to_f32(nb[pr]), x1 = pkvi_bf16_to_f32(nb[pr + half]);
                    kb = pkvi_bf16_from_f32(e < half ? __fsub_rn(__fmul_rn(x0, cs[pr]), __fmul_rn(x1, sn[pr]))
                                                     : __fadd_rn(__fmul_rn(x1, cs[pr]), __fmul_rn(x0, sn[pr])));
                }
                ((unsigned char *)p.k_cache)[o + e] = pkvi_e4m3_from_f32(__fmul_rn(pkvi_bf16_to_f32(kb), p.k_mul));
                ((unsigned char *)p.v_cache)[o + e] = pkvi_e4m3_from_f32(__fmul_rn(pkvi_bf16_to_f32(v[e]), p.v_mul));
            }
        }
        __syncthreads(); // nb[] is rewritten by the next head
    }
}
