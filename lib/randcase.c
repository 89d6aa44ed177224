/* Random differential cases (lib/randcase.h). */
#include "config.h"
#include "randcase.h"
#include "pagedkv.h"

#include <stdlib.h>
#include <string.h>

uint64_t pkvi_rng_next(pkvi_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

static uint16_t hostile_bf16(pkvi_rng *r)
{
    static const uint16_t h[] = {0x7fc1, 0xffc0, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001,
                                 0x807f, 0x7f7f, 0xff7f, 0x43e0, 0x43e8, 0xc3e8};
    uint64_t x = pkvi_rng_next(r);
    if (x % 50 == 0) return h[(x >> 8) % (sizeof h / sizeof h[0])];
    return pkv_bf16_from_f32(((float)(x >> 40) * 0x1p-24f * 2.0f - 1.0f) * 16.0f);
}

void pkvi_write_desc_like(pkv_write_desc *w, const pkv_fused_desc *f)
{
    memset(w, 0, sizeof *w);
    w->cache = f->cache;
    w->num_tokens = f->num_tokens;
    w->k_row_stride = f->k_row_stride;
    w->v_row_stride = f->v_row_stride;
    w->k_scale = f->k_scale;
    w->v_scale = f->v_scale;
}

void pkvi_case_free(pkvi_case *c)
{
    free(c->k);
    free(c->v);
    free(c->wt);
    free(c->pos[0]);
    free(c->slots);
    memset(c, 0, sizeof *c);
}

int pkvi_case_random(pkvi_case *c, pkvi_rng *r, uint32_t nkv, uint32_t hd, uint32_t bs,
                     uint32_t tokens)
{
    static const uint64_t block_pad[] = {0, 3, 8};
    static const float thetas[] = {1e4f, 1e6f, 1e8f}, k_scales[] = {1.0f, 1e-3f, 3e4f, 0.0117f},
                       v_scales[] = {1.0f, 2e-2f, 448.0f, 0.3f};
    uint64_t row = (uint64_t)nkv * hd, slots;
    memset(c, 0, sizeof *c);
    c->f.cache.num_kv_heads = nkv;
    c->f.cache.head_dim = hd;
    c->f.cache.block_size = bs;
    c->f.cache.num_blocks = 1 + (uint64_t)tokens * 2 / bs;
    c->f.cache.block_stride = row * bs + block_pad[pkvi_rng_next(r) % 3];
    c->f.num_tokens = tokens;
    /* dense, padded by whole 16-byte units, or padded off alignment */
    c->f.k_row_stride = row + (pkvi_rng_next(r) % 2 ? 0 : 8 + pkvi_rng_next(r) % 3);
    c->f.v_row_stride = row + (pkvi_rng_next(r) % 2 ? 0 : 8 + pkvi_rng_next(r) % 3);
    c->f.rotary_dim = (uint32_t)(pkvi_rng_next(r) % (hd / 2 + 1)) * 2;
    c->f.theta = thetas[pkvi_rng_next(r) % 3];
    c->f.rms_eps = 1e-6f;
    c->f.k_scale = k_scales[pkvi_rng_next(r) % 4];
    c->f.v_scale = v_scales[pkvi_rng_next(r) % 4];
    c->f.k_inv_scale = 1.0f / c->f.k_scale;
    pkvi_write_desc_like(&c->w, &c->f);
    c->src_elems = (size_t)tokens * (row + 10) + 1; /* the largest row stride above */
    c->shift = (int)(pkvi_rng_next(r) % 2);
    c->k = malloc(c->src_elems * 2);
    c->v = malloc(c->src_elems * 2);
    c->wt = malloc((size_t)hd * 2 + 2);
    c->pos[0] = malloc((size_t)tokens * 4 + 4);
    c->slots = malloc((size_t)tokens * 8 + 8);
    if (!c->k || !c->v || !c->wt || !c->pos[0] || !c->slots) {
        pkvi_case_free(c);
        return -1;
    }
    c->pos[1] = c->pos[2] = c->pos[0]; /* one stream: MRoPE must equal the scalar op */
    for (size_t i = 0; i < c->src_elems; i++) {
        c->k[i] = hostile_bf16(r);
        c->v[i] = hostile_bf16(r);
    }
    for (uint32_t e = 0; e < hd; e++)
        c->wt[e] = pkv_bf16_from_f32((float)(pkvi_rng_next(r) % 512) / 1024.0f - 0.25f);
    slots = c->f.cache.num_blocks * bs;
    for (uint32_t t = 0; t < tokens; t++) {
        uint64_t x = pkvi_rng_next(r) % 10;
        c->pos[0][t] = (uint32_t)pkvi_rng_next(r);
        /* valid slots 2t + 1 are distinct; -1 and out-of-range ones mixed in */
        c->slots[t] = x == 0 || 2ull * t + 1 >= slots ? -1
                      : x == 1                       ? (int64_t)(slots + pkvi_rng_next(r) % 7)
                                                     : (int64_t)(2 * t + 1);
    }
    return 0;
}
