/* Worked vectors: every op on small cases (padded source rows, padded blocks, a valid, a
 * padding and an out-of-range slot, partial rotary, hostile V values) whose expected bytes
 * t/vectors.py derives independently in exact rational arithmetic and mpmath. */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "pagedkv.h"

#include <string.h>

#include "vectors.h"

static void set_cache(pkv_cache_layout *c)
{
    c->num_kv_heads = VEC_NKV;
    c->head_dim = VEC_HD;
    c->block_size = VEC_BS;
    c->num_blocks = VEC_NB;
    c->block_stride = VEC_BSTRIDE;
}

int main(void)
{
    pkv_write_desc w;
    pkv_fused_desc d;
    uint16_t k16[VEC_POOL], v16[VEC_POOL];
    uint8_t k8[VEC_POOL], v8[VEC_POOL];
    int64_t slots[VEC_FILL_COUNT + 1];
    uint64_t oob;
    pkv_fill_slots_desc fd = {VEC_FILL_BS, VEC_FILL_START, VEC_FILL_COUNT, 4};

    ok(pkv_ref_fill_slots(&fd, vec_table, slots) == PKV_OK &&
           memcmp(slots, want_fill_slots, sizeof want_fill_slots) == 0,
       "fill_slots");

    memset(&w, 0, sizeof w);
    set_cache(&w.cache);
    w.num_tokens = VEC_T;
    w.k_row_stride = VEC_KSTRIDE;
    w.v_row_stride = VEC_VSTRIDE;
    w.k_scale = f32(VEC_KSCALE);
    w.v_scale = f32(VEC_VSCALE);

    memset(k16, 0xa5, sizeof k16);
    memset(v16, 0xa5, sizeof v16);
    oob = 0;
    pkv_ref_write_bf16(&w, vec_k, vec_v, vec_slots, k16, v16, &oob);
    ok(!memcmp(k16, want_write_bf16_k, sizeof k16) && !memcmp(v16, want_write_bf16_v, sizeof v16) &&
           oob == 1,
       "write_bf16: both pools and one out-of-range token");
    memset(k16, 0xa5, sizeof k16);
    memset(v16, 0xa5, sizeof v16);
    pkv_ref_write_v_bf16(&w, vec_v, vec_slots, v16, NULL);
    ok(!memcmp(v16, want_write_bf16_v, sizeof v16), "write_v_bf16");
    memset(k8, 0xa5, sizeof k8);
    memset(v8, 0xa5, sizeof v8);
    pkv_ref_write_fp8(&w, vec_k, vec_v, vec_slots, k8, v8, NULL);
    ok(!memcmp(k8, want_write_fp8_k, sizeof k8) && !memcmp(v8, want_write_fp8_v, sizeof v8),
       "write_fp8: 448, 464, 465, -Inf, NaN, -0, subnormal and tiny V values");

    memset(&d, 0, sizeof d);
    set_cache(&d.cache);
    d.num_tokens = VEC_T;
    d.k_row_stride = VEC_KSTRIDE;
    d.v_row_stride = VEC_VSTRIDE;
    d.rotary_dim = VEC_ROT;
    d.theta = f32(VEC_THETA);
    d.rms_eps = f32(VEC_EPS);
    d.k_scale = f32(VEC_KSCALE);
    d.v_scale = f32(VEC_VSCALE);
    d.k_inv_scale = f32(VEC_KINV);

    memset(k16, 0xa5, sizeof k16);
    pkv_ref_fused_bf16(&d, vec_k, vec_w, vec_pos, vec_slots, k16, NULL);
    ok(!memcmp(k16, want_fused_bf16, sizeof k16), "fused_bf16 (partial rotary)");
    memset(k16, 0xa5, sizeof k16);
    pkv_ref_fused_mrope_bf16(&d, vec_k, vec_w, vec_pos, vec_pos_h, vec_pos_w, vec_slots, k16,
                             NULL);
    ok(!memcmp(k16, want_fused_mrope, sizeof k16), "fused_mrope_bf16, p %% 3 rule");
    d.mrope_section[1] = 1;
    d.mrope_section[2] = 1;
    memset(k16, 0xa5, sizeof k16);
    pkv_ref_fused_mrope_bf16(&d, vec_k, vec_w, vec_pos, vec_pos_h, vec_pos_w, vec_slots, k16,
                             NULL);
    ok(!memcmp(k16, want_fused_mrope_sec, sizeof k16), "fused_mrope_bf16, sections {0, 1, 1}");
    d.mrope_section[1] = d.mrope_section[2] = 0;
    memset(k8, 0xa5, sizeof k8);
    pkv_ref_fused_fp8_k(&d, vec_k, vec_w, vec_pos, vec_slots, k8, NULL);
    ok(!memcmp(k8, want_fused_fp8_k, sizeof k8), "fused_fp8_k");
    memset(k8, 0xa5, sizeof k8);
    memset(v8, 0xa5, sizeof v8);
    pkv_ref_fused_fp8_kv(&d, vec_k, vec_v, vec_w, vec_pos, vec_slots, k8, v8, NULL);
    ok(!memcmp(k8, want_fused_fp8_kv_k, sizeof k8) && !memcmp(v8, want_fused_fp8_kv_v, sizeof v8),
       "fused_fp8_kv (chain-exact) K and V");
    return done_testing();
}
