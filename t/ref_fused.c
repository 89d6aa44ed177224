/* Reference ops 5-8 against a model written here from doc/SPEC.md, on whole poisoned pools;
 * the MRoPE and chain properties; a float64 tolerance check; and mutation checks: each
 * rounding point of op 8 (and its tree) removed or changed must change the bytes. */
#include "config.h"
#include "tap.h"
#include "refkit.h"
#include "pagedkv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MUT_NONE, MUT_SKIP_NORM_ROUND, MUT_SKIP_ROPE_ROUND, MUT_ELEMENT_TREE, MUT_PAIR_TREE,
       MUT_GPTJ_PAIRS, MUT_DIVIDE_SCALE, MUT_MUL_ORDER, MUT_SQRT_THEN_DIVIDE, MUT_COUNT };
static const char *const mut_name[MUT_COUNT] = {
    "none", "no BF16 rounding after the norm", "no BF16 rounding after RoPE",
    "element leaves instead of pair leaves", "pair leaves instead of element leaves",
    "GPT-J (2i, 2i+1) pairs", "x / scale instead of x * RN(1/scale)",
    "x * (rms * (1 + w)) instead of (x * rms) * (1 + w)",
    "RN(1 / RN(sqrt(y))) instead of the correctly rounded rsqrt"};

typedef struct tcase {
    pkv_fused_desc d;
    uint16_t *k, *v, *w;
    uint32_t *pos[3];
    int64_t *slots;
    uint64_t row, kstride, vstride, pool, bstride;
} tcase;

static float f(uint16_t b) { return pkv_bf16_to_f32(b); }

/* binary32 sum of squares of one head, element or pair leaves, through the normative tree */
static float sumsq(const uint16_t *x, uint32_t hd, int pairs)
{
    float leaves[1024];
    float out;
    uint32_t n = pairs ? hd / 2 : hd;
    for (uint32_t i = 0; i < n; i++)
        leaves[i] = pairs ? f(x[2 * i]) * f(x[2 * i]) + f(x[2 * i + 1]) * f(x[2 * i + 1])
                          : f(x[i]) * f(x[i]);
    pkv_tree_sum(leaves, n, &out);
    return out;
}

/* One head of the chain (op 8) under a mutation; returns FP8 codes. */
static void chain_head(int mut, const tcase *c, const uint16_t *x, uint32_t t, uint8_t *out)
{
    const pkv_fused_desc *d = &c->d;
    uint32_t hd = d->cache.head_dim, half = d->rotary_dim / 2;
    float normed[512], roped[512], inv_freq[256], inv = 1.0f / d->k_scale;
    int pairs = mut == MUT_ELEMENT_TREE ? 0 : 1;
    float y_ms = sumsq(x, hd, pairs) / (float)hd + d->rms_eps;
    float rms = mut == MUT_SQRT_THEN_DIVIDE ? 1.0f / sqrtf(y_ms) : pkv_rsqrtf_cr(y_ms);
    for (uint32_t e = 0; e < hd; e++) {
        float one_w = 1.0f + f(c->w[e]);
        float y = mut == MUT_MUL_ORDER ? f(x[e]) * (rms * one_w) : (f(x[e]) * rms) * one_w;
        normed[e] = mut == MUT_SKIP_NORM_ROUND ? y : f(pkv_bf16_from_f32(y));
    }
    memcpy(roped, normed, sizeof(float) * hd);
    if (half) pkv_inv_freq_table(d->theta, d->rotary_dim, inv_freq);
    for (uint32_t p = 0; p < half; p++) {
        float s, co, angle = (float)c->pos[0][t] * inv_freq[p];
        uint32_t i0 = mut == MUT_GPTJ_PAIRS ? 2 * p : p, i1 = mut == MUT_GPTJ_PAIRS ? 2 * p + 1 : p + half;
        float x0 = normed[i0], x1 = normed[i1];
        pkv_sincosf_cr(angle, &s, &co);
        roped[i0] = x0 * co - x1 * s;
        roped[i1] = x1 * co + x0 * s;
    }
    for (uint32_t e = 0; e < hd; e++) {
        float kb = mut == MUT_SKIP_ROPE_ROUND ? roped[e] : f(pkv_bf16_from_f32(roped[e]));
        out[e] = pkv_e4m3_from_f32(mut == MUT_DIVIDE_SCALE ? kb / d->k_scale : kb * inv);
    }
}

/* One head of the single-round ops (5-7): binary32 result before the store. */
static void single_head(int op, int mut, const tcase *c, const uint16_t *x, uint32_t t,
                        float *out)
{
    const pkv_fused_desc *d = &c->d;
    uint32_t hd = d->cache.head_dim, half = d->rotary_dim / 2;
    float normed[512], inv_freq[256];
    float rms = pkv_rsqrtf_cr(sumsq(x, hd, mut == MUT_PAIR_TREE) / (float)hd + d->rms_eps);
    for (uint32_t e = 0; e < hd; e++) normed[e] = (f(x[e]) * rms) * (1.0f + f(c->w[e]));
    memcpy(out, normed, sizeof(float) * hd);
    if (half) pkv_inv_freq_table(d->theta, d->rotary_dim, inv_freq);
    for (uint32_t p = 0; p < half; p++) {
        int stream = 0;
        float s, co, angle;
        if (op == PKV_OP_FUSED_MROPE_BF16) {
            const uint32_t *sec = d->mrope_section;
            if (!sec[0] && !sec[1] && !sec[2]) stream = (int)(p % 3);
            else if (p % 3 == 1 && p < 3 * sec[1]) stream = 1;
            else if (p % 3 == 2 && p < 3 * sec[2]) stream = 2;
        }
        angle = (float)c->pos[stream][t] * inv_freq[p];
        pkv_sincosf_cr(angle, &s, &co);
        out[p] = normed[p] * co - normed[p + half] * s;
        out[p + half] = normed[p + half] * co + normed[p] * s;
    }
}

/* The expected K pool (and V pool for op 8) under a mutation. */
static void expect(int op, int mut, const tcase *c, unsigned char *kp, unsigned char *vp,
                   uint64_t *oob)
{
    const pkv_fused_desc *d = &c->d;
    uint32_t hd = d->cache.head_dim;
    size_t esz = op == PKV_OP_FUSED_BF16 || op == PKV_OP_FUSED_MROPE_BF16 ? 2 : 1;
    float out[512];
    uint8_t q[512];
    memset(kp, POISON, c->pool * esz);
    if (vp) memset(vp, POISON, c->pool);
    *oob = 0;
    for (uint32_t t = 0; t < d->num_tokens; t++) {
        uint64_t base;
        if (c->slots[t] < 0) continue;
        if ((uint64_t)c->slots[t] >= d->cache.num_blocks * d->cache.block_size) {
            (*oob)++;
            continue;
        }
        base = kit_row_offset(c->slots[t], d->cache.block_size, c->bstride, c->row);
        for (uint32_t h = 0; h < d->cache.num_kv_heads; h++) {
            const uint16_t *x = c->k + t * c->kstride + (uint64_t)h * hd;
            uint64_t o = base + (uint64_t)h * hd;
            if (op == PKV_OP_FUSED_FP8_KV) {
                float inv_v = 1.0f / d->v_scale;
                chain_head(mut, c, x, t, q);
                memcpy(kp + o, q, hd);
                for (uint32_t e = 0; e < hd; e++) {
                    float vv = f(c->v[t * c->vstride + (uint64_t)h * hd + e]);
                    vp[o + e] = pkv_e4m3_from_f32(mut == MUT_DIVIDE_SCALE ? vv / d->v_scale
                                                                          : vv * inv_v);
                }
                continue;
            }
            single_head(op, mut, c, x, t, out);
            for (uint32_t e = 0; e < hd; e++) {
                if (esz == 2) {
                    uint16_t b = pkv_bf16_from_f32(out[e]);
                    memcpy(kp + 2 * (o + e), &b, 2);
                } else {
                    kp[o + e] = pkv_e4m3_from_f32(out[e] * d->k_inv_scale);
                }
            }
        }
    }
}

static pkv_status run(int op, const tcase *c, unsigned char *kp, unsigned char *vp,
                      uint64_t *oob)
{
    memset(kp, POISON, c->pool * 2);
    if (vp) memset(vp, POISON, c->pool);
    *oob = 0;
    switch (op) {
    case PKV_OP_FUSED_BF16:
        return pkv_ref_fused_bf16(&c->d, c->k, c->w, c->pos[0], c->slots, (uint16_t *)kp, oob);
    case PKV_OP_FUSED_MROPE_BF16:
        return pkv_ref_fused_mrope_bf16(&c->d, c->k, c->w, c->pos[0], c->pos[1], c->pos[2],
                                        c->slots, (uint16_t *)kp, oob);
    case PKV_OP_FUSED_FP8_K:
        return pkv_ref_fused_fp8_k(&c->d, c->k, c->w, c->pos[0], c->slots, kp, oob);
    default:
        return pkv_ref_fused_fp8_kv(&c->d, c->k, c->v, c->w, c->pos[0], c->slots, kp, vp, oob);
    }
}

static void make_case(tcase *c, uint32_t nkv, uint32_t hd, uint32_t rot, uint32_t bs,
                      uint32_t tokens, float theta, float eps, float scale, uint32_t pos0,
                      int padded)
{
    memset(c, 0, sizeof *c);
    c->d.cache.num_kv_heads = nkv;
    c->d.cache.head_dim = hd;
    c->d.cache.block_size = bs;
    c->d.cache.num_blocks = 2 + tokens * 3 / bs;
    c->row = (uint64_t)nkv * hd;
    c->bstride = c->row * bs + (padded ? 6 : 0);
    c->d.cache.block_stride = padded ? c->bstride : 0;
    c->d.num_tokens = tokens;
    c->kstride = c->row + (padded ? 5 : 0);
    c->vstride = c->row + (padded ? 2 : 0);
    c->d.k_row_stride = padded ? c->kstride : 0;
    c->d.v_row_stride = padded ? c->vstride : 0;
    c->d.rotary_dim = rot;
    c->d.theta = theta;
    c->d.rms_eps = eps;
    c->d.k_scale = 0.01171875f;
    c->d.v_scale = 0.009765625f;
    c->d.k_inv_scale = 1.0f / 0.01171875f;
    c->pool = c->d.cache.num_blocks * c->bstride;
    c->k = kit_alloc((tokens + 1) * c->kstride * 2);
    c->v = kit_alloc((tokens + 1) * c->vstride * 2);
    c->w = kit_alloc(hd * 2);
    kit_fill_bf16(c->k, (tokens + 1) * c->kstride, scale);
    kit_fill_bf16(c->v, (tokens + 1) * c->vstride, scale);
    for (uint32_t e = 0; e < hd; e++) /* weights near 0: (1 + w) around 1 */
        c->w[e] = pkv_bf16_from_f32((float)((double)(kit_rand() >> 11) * 0x1p-53) * 0.5f - 0.25f);
    for (int i = 0; i < 3; i++) {
        c->pos[i] = kit_alloc((tokens + 1) * 4);
        for (uint32_t t = 0; t < tokens; t++)
            c->pos[i][t] = pos0 == 0xffffffffu ? (uint32_t)kit_rand() : pos0 + t * (uint32_t)(i + 1);
    }
    c->slots = kit_alloc((tokens + 1) * 8);
    kit_slots(c->slots, tokens, c->d.cache.num_blocks * bs, 100, 100);
}

static void free_case(tcase *c)
{
    free(c->k);
    free(c->v);
    free(c->w);
    for (int i = 0; i < 3; i++) free(c->pos[i]);
    free(c->slots);
}

/* 64 tokens of 16 heads of 512: about 1 in 3 heads has a different sum of squares under the
 * other leaf kind, by a few 2^-24 relative, so the BF16 bytes of op 5 see the tree only on
 * this many elements. V holds every BF16 bit pattern once, with scales that make division and
 * multiplication by the reciprocal differ for a few of them. */
static void make_big_case(tcase *c)
{
    make_case(c, 16, 512, 512, 16, 64, 1e6f, 1e-6f, 8.0f, 12345, 0);
    for (uint32_t i = 0; i < 65536; i++) c->v[i] = (uint16_t)i;
    for (uint64_t i = 0; i < 64 * c->kstride; i++) { /* finite K: hostile values make NaN heads */
        float u = (float)((double)(kit_rand() >> 11) * 0x1p-53) * 16.0f - 8.0f;
        c->k[i] = pkv_bf16_from_f32(kit_rand() % 8 ? u : 64.0f * u);
    }
    for (uint32_t t = 0; t < 64; t++) c->slots[t] = 3 * t + 1;
    c->d.k_scale = 0.3f;
    c->d.v_scale = 7.0f;
}

/* the op's pools equal the model's, whole, and the counts agree */
static int matches(int op, int mut, const tcase *c)
{
    size_t kb = c->pool * 2;
    unsigned char *k1 = kit_alloc(kb), *k2 = kit_alloc(kb), *v1 = kit_alloc(c->pool + 1),
                  *v2 = kit_alloc(c->pool + 1);
    uint64_t o1, o2;
    int fp8kv = op == PKV_OP_FUSED_FP8_KV, same;
    pkv_status st = run(op, c, k1, fp8kv ? v1 : NULL, &o1);
    memset(k2, POISON, kb);
    expect(op, mut, c, k2, fp8kv ? v2 : NULL, &o2);
    same = st == PKV_OK && o1 == o2 && memcmp(k1, k2, kb) == 0 &&
           (!fp8kv || memcmp(v1, v2, c->pool) == 0);
    free(k1);
    free(k2);
    free(v1);
    free(v2);
    return same;
}

int main(void)
{
    static const struct {
        uint32_t nkv, hd, rot, bs;
        float theta, eps;
        uint32_t pos;
    } seeds[] = {{8, 128, 128, 16, 1e6f, 1e-6f, 30011}, {4, 256, 64, 16, 1e7f, 1e-6f, 8191},
                 {3, 224, 112, 32, 5e5f, 1e-5f, 0},    {2, 80, 80, 7, 1e4f, 1e-6f, 1u << 31},
                 {1, 96, 0, 1, 1e4f, 0.0f, 5},         {5, 64, 32, 128, 1e8f, 1e-6f, 0xffffffffu},
                 {2, 512, 512, 16, 1e6f, 1e-6f, 100000}, {3, 192, 96, 16, 1e6f, 1e-5f, 4000000}};
    static const float mags[] = {0.5f, 8.0f, 448.0f};
    int mutation_seen[MUT_COUNT] = {0};
    long cases = 0, bad[4] = {0, 0, 0, 0};

    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        for (size_t m = 0; m < 3; m++)
            for (uint32_t tokens = 0; tokens <= 9; tokens += 3) {
                tcase c;
                make_case(&c, seeds[i].nkv, seeds[i].hd, seeds[i].rot, seeds[i].bs, tokens,
                          seeds[i].theta, seeds[i].eps, mags[m], seeds[i].pos, (int)(i % 2));
                cases++;
                for (int op = PKV_OP_FUSED_BF16; op <= PKV_OP_FUSED_FP8_KV; op++) {
                    if (!matches(op, MUT_NONE, &c)) {
                        bad[op - PKV_OP_FUSED_BF16]++;
                        diag("%s differs: shape %zu magnitude %g tokens %u",
                             pkv_op_name((pkv_op)op), i, (double)mags[m], tokens);
                    }
                }
                if (tokens)
                    for (int mut = 1; mut < MUT_COUNT; mut++) {
                        int op = mut == MUT_PAIR_TREE ? PKV_OP_FUSED_BF16 : PKV_OP_FUSED_FP8_KV;
                        if (!matches(op, mut, &c)) mutation_seen[mut] = 1;
                    }
                free_case(&c);
            }
    {
        tcase c;
        make_big_case(&c);
        cases++;
        for (int op = PKV_OP_FUSED_BF16; op <= PKV_OP_FUSED_FP8_KV; op++)
            bad[op - PKV_OP_FUSED_BF16] += !matches(op, MUT_NONE, &c);
        for (int mut = 1; mut < MUT_COUNT; mut++) {
            int op = mut == MUT_PAIR_TREE ? PKV_OP_FUSED_BF16 : PKV_OP_FUSED_FP8_KV;
            if (!matches(op, mut, &c)) mutation_seen[mut] = 1;
        }
        free_case(&c);
    }
    for (int op = PKV_OP_FUSED_BF16; op <= PKV_OP_FUSED_FP8_KV; op++)
        is_int(bad[op - PKV_OP_FUSED_BF16], 0, "%s equals the model on %ld cases (whole pools)",
               pkv_op_name((pkv_op)op), cases);
    for (int mut = 1; mut < MUT_COUNT; mut++)
        ok(mutation_seen[mut], "the tests see the mutation: %s", mut_name[mut]);
    return done_testing();
}
