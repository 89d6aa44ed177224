/* Reference ops 5-7: K RMSNorm(1 + w) + RoPE, kept in binary32 and rounded once at the store
 * (BF16, or FP8 after the caller's inv_scale). Every line below is one rounding step of
 * doc/SPEC.md; changing the order of any of them changes the cache bytes. */
#include "config.h"
#include "pagedkv.h"
#include "addr.h"
#include "bf16.h"
#include "cr_trig.h"
#include "fp8.h"
#include "rsqrt_cr.h"
#include "tree.h"
#include "../lib/pointers.h"
#include "../lib/validate.h"

/* cos and sin of every RoPE pair of one token: angle = RN((float)pos * inv_freq[p]). */
static void token_angles(uint32_t pairs, const float *inv_freq, const uint32_t *const pos[3],
                         const uint32_t *section, uint32_t t, float *c, float *s)
{
    for (uint32_t p = 0; p < pairs; p++) {
        int stream = section ? pkvi_mrope_stream(p, section) : 0;
        float angle = (float)pos[stream][t] * inv_freq[p];
        pkvi_sincosf_cr(angle, &s[p], &c[p], NULL);
    }
}

/* One head: x (BF16 bits) -> out (binary32), element leaves, no intermediate rounding. */
static void norm_rope_head(const uint16_t *x_bits, const uint16_t *w_bits, uint32_t hd,
                           float eps, uint32_t rotary_dim, const float *c, const float *s,
                           float *out)
{
    float x[PKV_MAX_FUSED_HEAD_DIM], leaves[PKV_MAX_FUSED_HEAD_DIM],
        normed[PKV_MAX_FUSED_HEAD_DIM];
    uint32_t half = rotary_dim / 2;
    float ms, rms;
    for (uint32_t e = 0; e < hd; e++) {
        x[e] = pkvi_bf16_to_f32(x_bits[e]);
        leaves[e] = x[e] * x[e];
    }
    ms = pkvi_tree_sum(leaves, hd) / (float)hd;
    rms = pkvi_rsqrt_cr(ms + eps);
    for (uint32_t e = 0; e < hd; e++)
        normed[e] = (x[e] * rms) * (1.0f + pkvi_bf16_to_f32(w_bits[e]));
    for (uint32_t p = 0; p < half; p++) {
        float x0 = normed[p], x1 = normed[p + half];
        out[p] = x0 * c[p] - x1 * s[p];
        out[p + half] = x1 * c[p] + x0 * s[p];
    }
    for (uint32_t e = rotary_dim; e < hd; e++) out[e] = normed[e];
}

static pkv_status run_fused(pkv_op op, const pkv_fused_desc *d, const uint16_t *key,
                            const uint16_t *w, const uint32_t *const pos[3],
                            const int64_t *slots, uint16_t *k16, uint8_t *k8,
                            uint64_t *oob_count)
{
    pkvi_geom g;
    pkvi_src k;
    uint64_t oob = 0;
    float inv_freq[PKV_MAX_FUSED_HEAD_DIM / 2], c[PKV_MAX_FUSED_HEAD_DIM / 2],
        s[PKV_MAX_FUSED_HEAD_DIM / 2], out[PKV_MAX_FUSED_HEAD_DIM];
    const char *name = pkv_op_name(op);
    const uint32_t *section = op == PKV_OP_FUSED_MROPE_BF16 ? d->mrope_section : NULL;
    uint32_t hd, pairs;
    pkv_status st = pkvi_fused_resolve(op, d, &g, &k, NULL);
    if (st) return st;
    hd = d->cache.head_dim;
    pairs = d->rotary_dim / 2;
    PKVI_NEED(name, key, k.elems);
    PKVI_NEED(name, w, d->num_tokens ? hd : 0);
    PKVI_NEED(name, slots, d->num_tokens);
    for (int i = 0; i < (section ? 3 : 1); i++)
        if (d->num_tokens && !pos[i])
            return pkvi_fail(PKV_EINVAL, "%s: %s is NULL", name,
                             section ? (const char *[]){"pos_t", "pos_h", "pos_w"}[i]
                                     : "positions");
    if (k16) PKVI_NEED(name, k16, g.pool_elems);
    else PKVI_NEED(name, k8, g.pool_elems);
    if (pairs && (st = pkv_inv_freq_table(d->theta, d->rotary_dim, inv_freq))) return st;

    for (uint32_t t = 0; t < d->num_tokens; t++) {
        uint64_t off = 0;
        int kind = pkvi_slot_offset(slots[t], g.num_slots, d->cache.block_size, g.block_stride,
                                    g.row, &off);
        if (kind == PKVI_SLOT_OOB) oob++;
        if (kind != PKVI_SLOT_OK) continue;
        token_angles(pairs, inv_freq, pos, section, t, c, s);
        for (uint32_t h = 0; h < d->cache.num_kv_heads; h++) {
            const uint16_t *x = key + (uint64_t)t * k.stride + (uint64_t)h * hd;
            uint64_t base = off + (uint64_t)h * hd;
            norm_rope_head(x, w, hd, d->rms_eps, d->rotary_dim, c, s, out);
            for (uint32_t e = 0; e < hd; e++) {
                if (k16) k16[base + e] = pkvi_bf16_from_f32(out[e]);
                else k8[base + e] = pkvi_e4m3_from_f32(out[e] * d->k_inv_scale);
            }
        }
    }
    if (oob_count) *oob_count += oob;
    return PKV_OK;
}

pkv_status pkv_ref_fused_bf16(const pkv_fused_desc *d, const uint16_t *key,
                              const uint16_t *k_norm_weight, const uint32_t *positions,
                              const int64_t *slot_mapping, uint16_t *k_cache,
                              uint64_t *oob_count)
{
    const uint32_t *const pos[3] = {positions, positions, positions};
    return run_fused(PKV_OP_FUSED_BF16, d, key, k_norm_weight, pos, slot_mapping, k_cache, NULL,
                     oob_count);
}

pkv_status pkv_ref_fused_mrope_bf16(const pkv_fused_desc *d, const uint16_t *key,
                                    const uint16_t *k_norm_weight, const uint32_t *pos_t,
                                    const uint32_t *pos_h, const uint32_t *pos_w,
                                    const int64_t *slot_mapping, uint16_t *k_cache,
                                    uint64_t *oob_count)
{
    const uint32_t *const pos[3] = {pos_t, pos_h, pos_w};
    return run_fused(PKV_OP_FUSED_MROPE_BF16, d, key, k_norm_weight, pos, slot_mapping, k_cache,
                     NULL, oob_count);
}

pkv_status pkv_ref_fused_fp8_k(const pkv_fused_desc *d, const uint16_t *key,
                               const uint16_t *k_norm_weight, const uint32_t *positions,
                               const int64_t *slot_mapping, uint8_t *k_cache,
                               uint64_t *oob_count)
{
    const uint32_t *const pos[3] = {positions, positions, positions};
    return run_fused(PKV_OP_FUSED_FP8_K, d, key, k_norm_weight, pos, slot_mapping, NULL, k_cache,
                     oob_count);
}
