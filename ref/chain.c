/* The unfused chain and reference op 8. rms_norm (pair leaves, BF16 store) and rope (BF16
 * store) are the seed engine's separate kernels; fused_fp8_kv is defined as exactly their
 * composition followed by write_fp8, and is written here literally that way. */
#include "config.h"
#include "pagedkv.h"
#include "bf16.h"
#include "cr_trig.h"
#include "rsqrt_cr.h"
#include "tree.h"
#include "../lib/pointers.h"
#include "../lib/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

pkv_status pkv_ref_rms_norm(uint64_t rows, uint32_t hd, const uint16_t *x,
                            const uint16_t *weight, float eps, uint16_t *out)
{
    float leaves[PKV_MAX_FUSED_HEAD_DIM / 2];
    pkvi_clear_error();
    if (hd == 0 || hd % 2 || hd > PKV_MAX_FUSED_HEAD_DIM)
        return pkvi_fail(PKV_EINVAL, "rms_norm: head_dim (%u) must be even, 2..%u", hd,
                         PKV_MAX_FUSED_HEAD_DIM);
    if (!(isfinite(eps) && eps >= 0.0f))
        return pkvi_fail(PKV_EINVAL, "rms_norm: eps (%g) must be finite and >= 0", (double)eps);
    PKVI_NEED("rms_norm", x, rows);
    PKVI_NEED("rms_norm", out, rows);
    PKVI_NEED("rms_norm", weight, rows ? hd : 0);
    for (uint64_t r = 0; r < rows; r++) {
        const uint16_t *xr = x + r * hd;
        uint16_t *yr = out + r * hd;
        float ms, rms;
        /* pair leaf i: RN(RN(a^2) + RN(b^2)) of elements 2i, 2i+1 */
        for (uint32_t i = 0; i < hd / 2; i++) {
            float a = pkvi_bf16_to_f32(xr[2 * i]), b = pkvi_bf16_to_f32(xr[2 * i + 1]);
            leaves[i] = a * a + b * b;
        }
        ms = pkvi_tree_sum(leaves, hd / 2) / (float)hd;
        rms = pkvi_rsqrt_cr(ms + eps);
        for (uint32_t e = 0; e < hd; e++) {
            float v = pkvi_bf16_to_f32(xr[e]); /* read before the (possibly in-place) store */
            yr[e] = pkvi_bf16_from_f32((v * rms) * (1.0f + pkvi_bf16_to_f32(weight[e])));
        }
    }
    return PKV_OK;
}

pkv_status pkv_ref_rope(uint32_t num_tokens, uint32_t heads, uint32_t hd, uint32_t rotary_dim,
                        float theta, const uint32_t *positions, uint16_t *x)
{
    float inv_freq[PKV_MAX_FUSED_HEAD_DIM / 2];
    uint32_t half = rotary_dim / 2;
    pkv_status st;
    pkvi_clear_error();
    if (hd == 0 || hd > PKV_MAX_FUSED_HEAD_DIM || rotary_dim % 2 || rotary_dim > hd)
        return pkvi_fail(PKV_EINVAL,
                         "rope: need 1 <= head_dim (%u) <= %u and rotary_dim (%u) even and "
                         "<= head_dim",
                         hd, PKV_MAX_FUSED_HEAD_DIM, rotary_dim);
    if (half == 0) return PKV_OK;
    PKVI_NEED("rope", positions, num_tokens);
    PKVI_NEED("rope", x, (uint64_t)num_tokens * heads);
    if ((st = pkv_inv_freq_table(theta, rotary_dim, inv_freq))) return st;
    for (uint32_t t = 0; t < num_tokens; t++) {
        for (uint32_t p = 0; p < half; p++) {
            float angle = (float)positions[t] * inv_freq[p], c, s;
            pkvi_sincosf_cr(angle, &s, &c, NULL);
            for (uint32_t h = 0; h < heads; h++) {
                uint16_t *row = x + ((uint64_t)t * heads + h) * hd;
                float x0 = pkvi_bf16_to_f32(row[p]), x1 = pkvi_bf16_to_f32(row[p + half]);
                row[p] = pkvi_bf16_from_f32(x0 * c - x1 * s);
                row[p + half] = pkvi_bf16_from_f32(x1 * c + x0 * s);
            }
        }
    }
    return PKV_OK;
}

pkv_status pkv_ref_fused_fp8_kv(const pkv_fused_desc *d, const uint16_t *key,
                                const uint16_t *value, const uint16_t *k_norm_weight,
                                const uint32_t *positions, const int64_t *slot_mapping,
                                uint8_t *k_cache, uint8_t *v_cache, uint64_t *oob_count)
{
    pkvi_geom g;
    pkvi_src k, v;
    pkv_write_desc w;
    uint16_t *tmp;
    pkv_status st = pkvi_fused_resolve(PKV_OP_FUSED_FP8_KV, d, &g, &k, &v);
    if (st) return st;
    PKVI_NEED("fused_fp8_kv", key, k.elems);
    PKVI_NEED("fused_fp8_kv", value, v.elems);
    PKVI_NEED("fused_fp8_kv", k_norm_weight, d->num_tokens ? d->cache.head_dim : 0);
    PKVI_NEED("fused_fp8_kv", positions, d->num_tokens);
    PKVI_NEED("fused_fp8_kv", slot_mapping, d->num_tokens);
    PKVI_NEED("fused_fp8_kv", k_cache, g.pool_elems);
    PKVI_NEED("fused_fp8_kv", v_cache, g.pool_elems);
    if (d->num_tokens == 0) return PKV_OK;

    /* K rows, packed: the chain's norm and rope work in place on them */
    tmp = malloc((size_t)d->num_tokens * g.row * sizeof *tmp);
    if (!tmp) return pkvi_fail(PKV_ENOMEM, "fused_fp8_kv: no memory for %u K rows", d->num_tokens);
    for (uint32_t t = 0; t < d->num_tokens; t++)
        memcpy(tmp + (uint64_t)t * g.row, key + (uint64_t)t * k.stride, g.row * sizeof *tmp);

    st = pkv_ref_rms_norm((uint64_t)d->num_tokens * d->cache.num_kv_heads, d->cache.head_dim,
                          tmp, k_norm_weight, d->rms_eps, tmp);
    if (!st)
        st = pkv_ref_rope(d->num_tokens, d->cache.num_kv_heads, d->cache.head_dim,
                          d->rotary_dim, d->theta, positions, tmp);
    if (!st) {
        memset(&w, 0, sizeof w);
        w.cache = d->cache;
        w.num_tokens = d->num_tokens;
        w.k_row_stride = 0;
        w.v_row_stride = d->v_row_stride;
        w.k_scale = d->k_scale;
        w.v_scale = d->v_scale;
        st = pkv_ref_write_fp8(&w, tmp, value, slot_mapping, k_cache, v_cache, oob_count);
    }
    free(tmp);
    return st;
}
