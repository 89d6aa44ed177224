/* Properties of the reference fused ops: MRoPE with three equal streams is the scalar op;
 * sections that cover every pair are the p % 3 rule; op 8 is the explicit chain of the public
 * building blocks; rotary_dim 0 writes the normed K; op 5 is within its stated tolerance of a
 * binary64 evaluation. */
#include "config.h"
#include "tap.h"
#include "refkit.h"
#include "pagedkv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NKV 4
#define HD 128
#define T 24
#define BS 16
#define NB 8
#define POOL (NB * BS * NKV * HD)

static uint16_t k[T * NKV * HD], v[T * NKV * HD], w[HD];
static uint32_t pt[T], ph[T], pw[T];
static int64_t slots[T];
static uint16_t pool_a[POOL], pool_b[POOL];

static pkv_fused_desc desc(uint32_t rot)
{
    pkv_fused_desc d;
    memset(&d, 0, sizeof d);
    d.cache.num_kv_heads = NKV;
    d.cache.head_dim = HD;
    d.cache.block_size = BS;
    d.cache.num_blocks = NB;
    d.num_tokens = T;
    d.rotary_dim = rot;
    d.theta = 1e6f;
    d.rms_eps = 1e-6f;
    d.k_scale = 0.0625f;
    d.v_scale = 0.03125f;
    d.k_inv_scale = 16.0f;
    return d;
}

static void fill(float scale)
{
    for (size_t i = 0; i < T * NKV * HD; i++) {
        float u = (float)((double)(kit_rand() >> 11) * 0x1p-53) * 2.0f - 1.0f;
        k[i] = pkv_bf16_from_f32(u * scale);
    }
    kit_fill_bf16(v, T * NKV * HD, 2.0f);
    for (int e = 0; e < HD; e++)
        w[e] = pkv_bf16_from_f32((float)((double)(kit_rand() >> 11) * 0x1p-53) * 0.5f - 0.25f);
    for (int t = 0; t < T; t++) {
        pt[t] = (uint32_t)kit_rand();
        ph[t] = (uint32_t)kit_rand() % 4096;
        pw[t] = (uint32_t)kit_rand() % 4096;
        slots[t] = t % 5 == 4 ? -1 : 5 * t;
    }
}

static void mrope(void)
{
    pkv_fused_desc d = desc(HD);
    memset(pool_a, POISON, sizeof pool_a);
    memset(pool_b, POISON, sizeof pool_b);
    pkv_ref_fused_bf16(&d, k, w, pt, slots, pool_a, NULL);
    pkv_ref_fused_mrope_bf16(&d, k, w, pt, pt, pt, slots, pool_b, NULL);
    ok(memcmp(pool_a, pool_b, sizeof pool_a) == 0, "MRoPE with t = h = w equals the scalar op");

    /* 64 pairs: h takes p % 3 == 1 below 3 * 22 = 66, w takes p % 3 == 2 below 3 * 21 = 63
     * (p = 62 is the last such pair), which is every pair: the p % 3 rule */
    memset(pool_a, POISON, sizeof pool_a);
    memset(pool_b, POISON, sizeof pool_b);
    pkv_ref_fused_mrope_bf16(&d, k, w, pt, ph, pw, slots, pool_a, NULL);
    d.mrope_section[0] = 21;
    d.mrope_section[1] = 22;
    d.mrope_section[2] = 21;
    pkv_ref_fused_mrope_bf16(&d, k, w, pt, ph, pw, slots, pool_b, NULL);
    ok(memcmp(pool_a, pool_b, sizeof pool_a) == 0,
       "sections {21, 22, 21} over 64 pairs equal the p %% 3 rule");
    /* HF Qwen2.5-VL-like sections stop h and w early: the tail pairs go to t */
    d.mrope_section[0] = 32;
    d.mrope_section[1] = 16;
    d.mrope_section[2] = 16;
    memset(pool_b, POISON, sizeof pool_b);
    pkv_ref_fused_mrope_bf16(&d, k, w, pt, ph, pw, slots, pool_b, NULL);
    ok(memcmp(pool_a, pool_b, sizeof pool_a) != 0, "sections {32, 16, 16} differ from p %% 3");
}

static void chain(void)
{
    pkv_fused_desc d = desc(64);
    pkv_write_desc wd;
    uint16_t tmp[T * NKV * HD];
    uint8_t ka[POOL], va[POOL], kb[POOL], vb[POOL];
    uint64_t oa = 0, ob = 0;
    memset(ka, POISON, POOL);
    memset(va, POISON, POOL);
    memcpy(kb, ka, POOL);
    memcpy(vb, va, POOL);
    slots[3] = NB * BS + 9; /* one out of range */
    is_int(pkv_ref_fused_fp8_kv(&d, k, v, w, pt, slots, ka, va, &oa), PKV_OK, "op 8 runs");
    is_int(pkv_ref_rms_norm(T * NKV, HD, k, w, d.rms_eps, tmp), PKV_OK, "chain: rms_norm");
    is_int(pkv_ref_rope(T, NKV, HD, 64, d.theta, pt, tmp), PKV_OK, "chain: rope");
    memset(&wd, 0, sizeof wd);
    wd.cache = d.cache;
    wd.num_tokens = T;
    wd.k_scale = d.k_scale;
    wd.v_scale = d.v_scale;
    is_int(pkv_ref_write_fp8(&wd, tmp, v, slots, kb, vb, &ob), PKV_OK, "chain: write_fp8");
    ok(memcmp(ka, kb, POOL) == 0 && memcmp(va, vb, POOL) == 0 && oa == 1 && ob == 1,
       "op 8 equals rms_norm -> rope -> write_fp8, byte for byte, and counts the same");
    slots[3] = 15;
}

static void no_rotation(void)
{
    pkv_fused_desc d = desc(0);
    d.theta = 0.0f; /* ignored without rotation */
    memset(pool_a, POISON, sizeof pool_a);
    memset(pool_b, POISON, sizeof pool_b); /* the expected pool, built below */
    is_int(pkv_ref_fused_bf16(&d, k, w, pt, slots, pool_a, NULL), PKV_OK,
           "rotary_dim 0 runs");
    for (int t = 0; t < T; t++) {
        if (slots[t] < 0) continue;
        for (int h = 0; h < NKV; h++) {
            const uint16_t *x = k + ((size_t)t * NKV + h) * HD;
            float leaves[HD], sum, rms;
            for (int e = 0; e < HD; e++) leaves[e] = pkv_bf16_to_f32(x[e]) * pkv_bf16_to_f32(x[e]);
            pkv_tree_sum(leaves, HD, &sum);
            rms = pkv_rsqrtf_cr(sum / (float)HD + d.rms_eps);
            for (int e = 0; e < HD; e++) {
                float y = (pkv_bf16_to_f32(x[e]) * rms) * (1.0f + pkv_bf16_to_f32(w[e]));
                size_t o = (size_t)slots[t] / BS * BS * NKV * HD + (size_t)slots[t] % BS * NKV * HD +
                           (size_t)h * HD + e;
                pool_b[o] = pkv_bf16_from_f32(y);
            }
        }
    }
    ok(memcmp(pool_a, pool_b, sizeof pool_a) == 0,
       "rotary_dim 0 writes BF16(normed K), and nothing else (whole pool)");
}

/* |written - exact| <= (2^-8 + 2^-12) |exact| + 2^-14 max|normed| per element: the BF16 store
 * (half an ulp: at most 2^-8 relative, at the bottom of a binade) plus a few binary32
 * roundings, amplified only through cancellation in the rotation. The exact value takes the
 * same binary32 angle (it is part of the definition, not an approximation). */
static void tolerance(void)
{
    pkv_fused_desc d = desc(HD);
    double worst = 0;
    int bad = 0, stray = 0;
    float inv_freq[HD / 2];
    memset(pool_a, POISON, sizeof pool_a);
    memset(pool_b, 0, sizeof pool_b); /* marks the elements the rows below cover */
    pkv_ref_fused_bf16(&d, k, w, pt, slots, pool_a, NULL);
    pkv_inv_freq_table(d.theta, HD, inv_freq);
    for (int t = 0; t < T; t++) {
        if (slots[t] < 0) continue;
        for (int h = 0; h < NKV; h++) {
            const uint16_t *x = k + ((size_t)t * NKV + h) * HD;
            double ss = 0, normed[HD], maxn = 0;
            for (int e = 0; e < HD; e++) ss += (double)pkv_bf16_to_f32(x[e]) * pkv_bf16_to_f32(x[e]);
            for (int e = 0; e < HD; e++) {
                normed[e] = pkv_bf16_to_f32(x[e]) / sqrt(ss / HD + d.rms_eps) *
                            (1.0 + pkv_bf16_to_f32(w[e]));
                maxn = fmax(maxn, fabs(normed[e]));
            }
            for (int p = 0; p < HD / 2; p++) {
                double a = (double)((float)pt[t] * inv_freq[p]);
                double y[2] = {normed[p] * cos(a) - normed[p + HD / 2] * sin(a),
                               normed[p + HD / 2] * cos(a) + normed[p] * sin(a)};
                for (int j = 0; j < 2; j++) {
                    int e = p + j * HD / 2;
                    size_t o = (size_t)slots[t] / BS * BS * NKV * HD +
                               (size_t)slots[t] % BS * NKV * HD + (size_t)h * HD + e;
                    double err = fabs(pkv_bf16_to_f32(pool_a[o]) - y[j]);
                    pool_b[o] = 1;
                    double tol = (0x1p-8 + 0x1p-12) * fabs(y[j]) + 0x1p-14 * maxn;
                    if (err > tol) bad++;
                    if (err / tol > worst) worst = err / tol;
                }
            }
        }
    }
    is_int(bad, 0, "op 5 is within (2^-8 + 2^-12) |y| + 2^-14 max|normed| of binary64 (worst %.2f of "
                   "the tolerance)", worst);
    for (size_t i = 0; i < POOL; i++) stray += !pool_b[i] && pool_a[i] != 0xa5a5;
    is_int(stray, 0, "  and every other element of the pool is still poison");
}

int main(void)
{
    fill(4.0f);
    mrope();
    chain();
    no_rotation();
    tolerance();
    fill(300.0f);
    tolerance();
    return done_testing();
}
