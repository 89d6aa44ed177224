/* Reference ops 2-4: the BF16 copies and the FP8 write with dequant scales. */
#include "config.h"
#include "pagedkv.h"
#include "addr.h"
#include "bf16.h"
#include "fp8.h"
#include "../lib/pointers.h"
#include "../lib/validate.h"

/* The one value rule of the FP8 write: e4m3(RN(x * inv)), inv = RN(1 / scale) computed once. */
static uint8_t fp8_of(uint16_t x, float inv) { return pkvi_e4m3_from_f32(pkvi_bf16_to_f32(x) * inv); }

/* Copy (BF16) or quantize (FP8, when dst8) one source tensor into its pool. */
static void write_rows(const pkv_write_desc *d, const pkvi_geom *g, const pkvi_src *src,
                       const uint16_t *in, const int64_t *slots, uint16_t *dst16,
                       uint8_t *dst8, float inv, uint64_t *oob)
{
    for (uint32_t t = 0; t < d->num_tokens; t++) {
        uint64_t off = 0;
        const uint16_t *row = in + (uint64_t)t * src->stride;
        int k = pkvi_slot_offset(slots[t], g->num_slots, d->cache.block_size, g->block_stride,
                                 g->row, &off);
        if (k == PKVI_SLOT_OOB) (*oob)++;
        if (k != PKVI_SLOT_OK) continue;
        for (uint64_t e = 0; e < g->row; e++) {
            if (dst8) dst8[off + e] = fp8_of(row[e], inv);
            else dst16[off + e] = row[e];
        }
    }
}

pkv_status pkv_ref_write_bf16(const pkv_write_desc *d, const uint16_t *key,
                              const uint16_t *value, const int64_t *slot_mapping,
                              uint16_t *k_cache, uint16_t *v_cache, uint64_t *oob_count)
{
    pkvi_geom g;
    pkvi_src k, v;
    uint64_t oob = 0;
    pkv_status st = pkvi_write_resolve(PKV_OP_WRITE_BF16, d, &g, &k, &v);
    if (st) return st;
    PKVI_NEED("write_bf16", key, k.elems);
    PKVI_NEED("write_bf16", value, v.elems);
    PKVI_NEED("write_bf16", slot_mapping, d->num_tokens);
    PKVI_NEED("write_bf16", k_cache, g.pool_elems);
    PKVI_NEED("write_bf16", v_cache, g.pool_elems);
    write_rows(d, &g, &k, key, slot_mapping, k_cache, NULL, 0.0f, &oob);
    oob = 0; /* both passes see the same slots: count the tokens once */
    write_rows(d, &g, &v, value, slot_mapping, v_cache, NULL, 0.0f, &oob);
    if (oob_count) *oob_count += oob;
    return PKV_OK;
}

pkv_status pkv_ref_write_v_bf16(const pkv_write_desc *d, const uint16_t *value,
                                const int64_t *slot_mapping, uint16_t *v_cache,
                                uint64_t *oob_count)
{
    pkvi_geom g;
    pkvi_src v;
    uint64_t oob = 0;
    pkv_status st = pkvi_write_resolve(PKV_OP_WRITE_V_BF16, d, &g, NULL, &v);
    if (st) return st;
    PKVI_NEED("write_v_bf16", value, v.elems);
    PKVI_NEED("write_v_bf16", slot_mapping, d->num_tokens);
    PKVI_NEED("write_v_bf16", v_cache, g.pool_elems);
    write_rows(d, &g, &v, value, slot_mapping, v_cache, NULL, 0.0f, &oob);
    if (oob_count) *oob_count += oob;
    return PKV_OK;
}

pkv_status pkv_ref_write_fp8(const pkv_write_desc *d, const uint16_t *key,
                             const uint16_t *value, const int64_t *slot_mapping,
                             uint8_t *k_cache, uint8_t *v_cache, uint64_t *oob_count)
{
    pkvi_geom g;
    pkvi_src k, v;
    uint64_t oob = 0;
    float inv_k, inv_v;
    pkv_status st = pkvi_write_resolve(PKV_OP_WRITE_FP8, d, &g, &k, &v);
    if (st) return st;
    PKVI_NEED("write_fp8", key, k.elems);
    PKVI_NEED("write_fp8", value, v.elems);
    PKVI_NEED("write_fp8", slot_mapping, d->num_tokens);
    PKVI_NEED("write_fp8", k_cache, g.pool_elems);
    PKVI_NEED("write_fp8", v_cache, g.pool_elems);
    inv_k = 1.0f / d->k_scale;
    inv_v = 1.0f / d->v_scale;
    write_rows(d, &g, &k, key, slot_mapping, NULL, k_cache, inv_k, &oob);
    oob = 0;
    write_rows(d, &g, &v, value, slot_mapping, NULL, v_cache, inv_v, &oob);
    if (oob_count) *oob_count += oob;
    return PKV_OK;
}
