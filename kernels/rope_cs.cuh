// cos and sin of one RoPE pair at one position, as every fused kernel needs them: from the
// handle's table when it holds that position (the table's rows were computed by
// pkvk_rope_table with this very angle and these functions, so the values are the same), else
// computed: angle = RN(pos * inv_freq[pr]), then the correctly rounded sin and cos.
#pragma once

__device__ __forceinline__ const float *pkvk_rope_row(const pkvk_fused_params &p, unsigned pos)
{
    return (const float *)p.cs_table + (uint64_t)pos * p.rotary_dim;
}

// computed, whatever the table holds
__device__ __forceinline__ void pkvk_rope_cs_computed(const pkvk_fused_params &p, unsigned pos,
                                                      unsigned pr, float *s, float *c)
{
    pkvi_sincosf_cr(__fmul_rn((float)pos, p.inv_freq[pr]), s, c, 0);
}

__device__ __forceinline__ void pkvk_rope_cs(const pkvk_fused_params &p, unsigned pos, unsigned pr,
                                             float *s, float *c)
{
    if (pos < p.cs_len) {
        const float *row = pkvk_rope_row(p, pos);
        *c = row[pr];
        *s = row[p.rotary_dim / 2 + pr];
    } else {
        pkvk_rope_cs_computed(p, pos, pr, s, c);
    }
}
