/* The CUDA launchers: the reference's validation (same status and message), then one
 * parameter block and one asynchronous launch. No host synchronisation. */
#include "config.h"
#include "cuda_device.h"
#include "status.h"
#include "validate.h"
#include "cuda_plan.h"

#include <string.h>

/* A device pointer may be 0 only for an empty buffer, and must be aligned to its element:
 * a misaligned one would fault inside the kernel, so it is rejected here. */
#define NEEDA(op, ptr, elems, align)                                                               \
    do {                                                                                           \
        if ((elems) != 0 && (ptr) == 0) return pkvi_fail(PKV_EINVAL, "%s: %s is NULL", op, #ptr);  \
        if ((ptr) % (align) != 0)                                                                  \
            return pkvi_fail(PKV_EINVAL, "%s: %s is not %d-byte aligned", op, #ptr, (align));      \
    } while (0)
#define NEED(op, ptr, elems) NEEDA(op, ptr, elems, 2)

static void geom(pkvk_geom *k, const pkv_cache_layout *c, const pkvi_geom *g)
{
    k->num_slots = g->num_slots;
    k->block_stride = g->block_stride;
    k->row = g->row;
    k->block_size = c->block_size;
    k->num_kv_heads = c->num_kv_heads;
    k->head_dim = c->head_dim;
    k->pad_ = 0;
}

static unsigned round32(unsigned n)
{
    return (n + 31u) / 32u * 32u;
}

/* The 16-byte kernels need every row start 8-element aligned: the pointers, the source row
 * strides, and the cache row and block strides (a slot's offset is built from them). */
static int vec8(uint64_t ptr, uint64_t elem_bytes)
{
    return ptr % (8 * elem_bytes) == 0;
}

static int rows_vec8(const pkvi_geom *g)
{
    return g->row % 8 == 0 && g->block_stride % 8 == 0;
}

/* The 16-byte fused kernels' offset arithmetic is 32 x 32 -> 64-bit (kernels/fused_common.cuh):
 * it needs slots below 2^32 and strides and rows below 2^32 elements. */
static int offsets32(const pkvi_geom *g, const pkvi_src *k, const pkvi_src *v)
{
    const uint64_t w = 0xffffffffu;
    return g->num_slots <= w + 1 && g->block_stride <= w && g->row <= w && k->stride <= w &&
           v->stride <= w;
}

/* Blocks for a grid-stride kernel over n threads' worth of work, 256 threads each. */
static unsigned grid_for(uint64_t n)
{
    uint64_t b = (n + 255u) / 256u;
    return b > (1u << 20) ? 1u << 20 : (unsigned)b;
}

pkv_status pkv_cuda_fill_slots(pkv_cuda *h, const pkv_fill_slots_desc *d, uint64_t block_table,
                               uint64_t slots, void *stream)
{
    pkvk_fill_slots_params p;
    pkv_status st = pkv_fill_slots_check(d);
    if (st) return st;
    if (!h) return pkvi_fail(PKV_EINVAL, "fill_slots: handle is NULL");
    NEEDA("fill_slots", slots, d->count, 8);
    NEEDA("fill_slots", block_table, d->table_len, 4);
    if (d->count == 0) return PKV_OK;
    memset(&p, 0, sizeof p);
    p.block_table = block_table;
    p.slots = slots;
    p.block_size = d->block_size;
    p.start_pos = d->start_pos;
    p.count = d->count;
    p.table_len = d->table_len;
    return pkvi_cuda_launch(h, PKVI_K_FILL_SLOTS, (d->count + 255u) / 256u, 1, 256, &p, stream);
}

pkv_status pkvi_cuda_write_plan(pkv_cuda *h, pkv_op op, const pkv_write_desc *d, uint64_t key,
                                uint64_t value, uint64_t slots, uint64_t k_cache, uint64_t v_cache,
                                uint64_t oob, pkvk_write_params *pp, pkvi_plan *plan)
{
    pkvk_write_params p;
    pkvi_geom g;
    pkvi_src k, v;
    const char *name = pkv_op_name(op);
    pkv_status st = pkvi_write_resolve(op, d, &g, &k, &v);
    if (st) return st;
    if (!h) return pkvi_fail(PKV_EINVAL, "%s: handle is NULL", name);
    if (op != PKV_OP_WRITE_V_BF16) {
        NEED(name, key, k.elems);
        NEEDA(name, k_cache, g.pool_elems, (int)pkvi_cache_elem_bytes(op));
    }
    NEED(name, value, v.elems);
    NEEDA(name, slots, d->num_tokens, 8);
    NEEDA(name, v_cache, g.pool_elems, (int)pkvi_cache_elem_bytes(op));
    NEEDA(name, oob, 0, 8);
    memset(&p, 0, sizeof p);
    plan->kernel = -1;
    if (d->num_tokens == 0) return PKV_OK;
    geom(&p.g, &d->cache, &g);
    p.key = op == PKV_OP_WRITE_V_BF16 ? 0 : key;
    p.value = value;
    p.slots = slots;
    p.k_cache = op == PKV_OP_WRITE_V_BF16 ? 0 : k_cache;
    p.v_cache = v_cache;
    p.oob = oob;
    p.k_stride = k.stride;
    p.v_stride = v.stride;
    p.num_tokens = d->num_tokens;
    p.fp8 = op == PKV_OP_WRITE_FP8;
    if (p.fp8) {
        p.inv_k = 1.0f / d->k_scale;
        p.inv_v = 1.0f / d->v_scale;
    }
    *pp = p;
    plan->block = 256;
    if (rows_vec8(&g) && k.stride % 8 == 0 && v.stride % 8 == 0 && vec8(key, 2) && vec8(value, 2) &&
        vec8(k_cache, pkvi_cache_elem_bytes(op)) && vec8(v_cache, pkvi_cache_elem_bytes(op))) {
        plan->kernel = PKVI_K_WRITE_VEC;
        plan->grid = grid_for((uint64_t)d->num_tokens * (g.row / 8));
    } else {
        plan->kernel = PKVI_K_WRITE;
        plan->grid = d->num_tokens;
    }
    return PKV_OK;
}

static pkv_status write_op(pkv_cuda *h, pkv_op op, const pkv_write_desc *d, uint64_t key,
                           uint64_t value, uint64_t slots, uint64_t k_cache, uint64_t v_cache,
                           uint64_t oob, void *stream)
{
    pkvk_write_params p;
    pkvi_plan plan;
    pkv_status st =
        pkvi_cuda_write_plan(h, op, d, key, value, slots, k_cache, v_cache, oob, &p, &plan);
    if (st || plan.kernel < 0) return st;
    return pkvi_cuda_launch(h, plan.kernel, plan.grid, 1, plan.block, &p, stream);
}

pkv_status pkv_cuda_write_bf16(pkv_cuda *h, const pkv_write_desc *d, uint64_t key, uint64_t value,
                               uint64_t slot_mapping, uint64_t k_cache, uint64_t v_cache,
                               uint64_t oob_count, void *stream)
{
    return write_op(h, PKV_OP_WRITE_BF16, d, key, value, slot_mapping, k_cache, v_cache, oob_count,
                    stream);
}

pkv_status pkv_cuda_write_v_bf16(pkv_cuda *h, const pkv_write_desc *d, uint64_t value,
                                 uint64_t slot_mapping, uint64_t v_cache, uint64_t oob_count,
                                 void *stream)
{
    return write_op(h, PKV_OP_WRITE_V_BF16, d, 0, value, slot_mapping, 0, v_cache, oob_count,
                    stream);
}

pkv_status pkv_cuda_write_fp8(pkv_cuda *h, const pkv_write_desc *d, uint64_t key, uint64_t value,
                              uint64_t slot_mapping, uint64_t k_cache, uint64_t v_cache,
                              uint64_t oob_count, void *stream)
{
    return write_op(h, PKV_OP_WRITE_FP8, d, key, value, slot_mapping, k_cache, v_cache, oob_count,
                    stream);
}

/* The warp kernels' grid for items of g threads (a power of two <= 32); 0 when their 32-bit
 * item indices, up to the last block's spare warps (at most 7), or the grid would overflow. */
static int warp_grid(unsigned g, uint64_t items, pkvi_plan *plan)
{
    uint64_t warps = (items + 32u / g - 1) / (32u / g), blocks;
    if ((warps + 8u) * 32u > 0xffffffffu) return 0;
    plan->block = warps < PKVK_WARP_THREADS / 32u ? (unsigned)warps * 32u : PKVK_WARP_THREADS;
    blocks = (warps + plan->block / 32u - 1) / (plan->block / 32u);
    if (blocks > 0x7fffffffu) return 0;
    plan->grid = (unsigned)blocks;
    return 1;
}

/* The halves kernels of ops 5, 7 and 8 loop over their tiles (kernels/fused_halves.cu): one
 * wave of blocks at most, of `threads` threads, `per_sm` per multiprocessor (the plan's grid
 * was counted in blocks of 256 threads) */
static void halves_wave(const pkv_cuda *h, pkvi_plan *plan, unsigned threads, unsigned per_sm)
{
    uint64_t wave = (uint64_t)h->sm_count * per_sm, grid = plan->grid;
    if (threads != plan->block) {
        uint64_t warps = grid * (plan->block / 32u);
        grid = (warps + threads / 32u - 1) / (threads / 32u);
        plan->block = threads;
    }
    plan->grid = (unsigned)(grid > wave ? wave : grid);
}

/* Whether a call of `items` items has `min` tiles or more a warp of the one wave of a looping
 * kernel (halves, wide) of `warps` warps a multiprocessor and `g` threads an item (32 / g
 * items a tile). With few tiles a warp the warps that start together compute together and
 * then wait together, and the kernels of smaller tiles run faster (below) */
static int deep(const pkv_cuda *h, uint64_t items, unsigned g, unsigned warps, unsigned min)
{
    return (items * g + 31u) / 32u >= (uint64_t)min * h->sm_count * warps;
}

/* The wide kernels (head_dim 64, kernels/fused_wide.cu): a warp per 32 items, one wave of
 * `per_sm` blocks a multiprocessor at most; 0 when the call has fewer than `min_tiles` tiles
 * of 32 items a warp of that wave (the g4 kernels then) */
static int wide_plan(const pkv_cuda *h, uint64_t items, unsigned per_sm, unsigned min_tiles,
                     pkvi_plan *plan)
{
    const unsigned wpb = PKVK_WIDE_THREADS / 32u;
    uint64_t wave = (uint64_t)h->sm_count * per_sm, tiles = (items + 31u) / 32u,
             grid = (tiles + wpb - 1u) / wpb;
    if (!deep(h, items, 1u, per_sm * wpb, min_tiles)) return 0;
    plan->block = PKVK_WIDE_THREADS;
    plan->grid = (unsigned)(grid > wave ? wave : grid);
    return 1;
}

/* The fused ops with the handle's cos/sin table: the warp kernels (kernels/fused_warp.cu) when
 * an item of 8-element threads is a power-of-two lane group of one warp, the rotated elements
 * come in whole halves of 8, and a token has at most 16 heads; a warp per 32 / group items.
 * Calls of many waves that rotate the whole head take the halves form (8, 16 or 32 elements
 * of each half per thread; kernels/fused_halves.cu): before its pipeline, on the H200 at
 * 65,536 tokens, 8-30% faster than the 8-element form for ops 5, 7 and 8 and for MRoPE 17-23%
 * faster than the block kernel; pipelined, ops 5, 7 and 8 a further 9-18%, MRoPE 9-20%
 * (doc/PERFORMANCE.md).
 * MRoPE takes the 8-element form only in one wave (`_small`, one row read for a token of three
 * equal positions): in many waves, with 8 consecutive pairs per thread read row by row, it was
 * 45% slower at 4 x 256 than the block kernel. The 8-element form beat the block kernels at every
 * geometry of the benchmark once its rotation had no branches (8 x 128 fused_bf16 153 against 161
 * us, 16 x 64 142 against 148). More than 16 heads was not measured and keeps the block kernels,
 * which share a token's cos/sin through shared memory. Returns 0 when they do not apply. */
static int warp_plan(const pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, unsigned epc,
                     uint64_t items, pkvk_fused_params *p, pkvi_plan *plan)
{
    unsigned g = (d->cache.head_dim + epc - 1) / epc * (epc / 8u);
    unsigned hd16 = d->cache.head_dim / 16u;
    int kv = op == PKV_OP_FUSED_FP8_KV, fits8, halves;
    /* the halves kernels of ops 5 to 7 take 16 elements of each half per thread at 4 heads
     * or more of 128 elements or more (on the H200 at 65,536 tokens, two runs, 8 x 128: 5-7%
     * faster for fused_bf16, 19-20% for fused_fp8_k, 11-12% for MRoPE; 4 x 256: as fast, 16%
     * faster; but 16 x 64: 12% slower for fused_bf16, 5-16% for fused_fp8_k, 1 x 128: 5-7%
     * slower), else 8; at head_dim 128 fused_bf16 only from 8 tiles a warp of the 16-element
     * kernel's wave, fused_fp8_k from 3 (H200, 8 x 128, three interleaved runs: with 8 elements
     * fused_bf16 8%, 6% and 1% faster at 8,192, 16,384 and 32,768 tokens, 1.9 to 7.8 tiles a
     * warp, 2% slower at 65,536, 15.5; fused_fp8_k 5% faster at 8,192, 1-17% slower from
     * 16,384, 3.9 tiles; MRoPE 3-13% slower at every size) */
    int mrope = op == PKV_OP_FUSED_MROPE_BF16;
    int e16 = !kv && d->cache.head_dim >= 128u && d->cache.num_kv_heads >= 4u &&
              (d->cache.head_dim >= 256u || mrope ||
               deep(h, items, d->cache.head_dim / 32u,
                    PKVK_HALVES16_BLOCKS_PER_SM * (PKVK_HALVES16_THREADS / 32u),
                    op == PKV_OP_FUSED_BF16 ? 8u : 3u));
    /* and 32 at 256 elements (4 threads an item) for fused_bf16 from 8 tiles a warp of its
     * wave (H200, 4 x 256, the same runs: with 16 elements 2-7% faster from 8,192 to 32,768
     * tokens, 5.2 tiles a warp, 5% slower at 65,536, 10.3; fused_fp8_k 2-9% and MRoPE 3-13%
     * faster with 16 at every size); with 2 or 1 threads an item (head_dim 128, 64) each copy
     * and store reaches 32 or 16 bytes of an item, twice or four times the memory requests of
     * 16 elements, and it was 27-155% slower */
    int e32 = e16 && d->cache.head_dim >= 256u && op == PKV_OP_FUSED_BF16 &&
              deep(h, items, d->cache.head_dim / 64u,
                   PKVK_HALVES32_BLOCKS_PER_SM * (PKVK_HALVES32_THREADS / 32u), 8u);
    unsigned gh = d->cache.head_dim / (e32 ? 64u : e16 ? 32u : 16u);
    if (!p->cs_table || d->cache.num_kv_heads > 16u || g == 0 || g > 32u || (g & (g - 1u)) ||
        d->rotary_dim % 16u)
        return 0;
    /* the halves form: the whole head rotated, 16 x a power-of-two threads, each half whole
     * chunks of the tree or the head one chunk */
    halves = d->rotary_dim == d->cache.head_dim && hd16 && hd16 <= 32u &&
             (hd16 & (hd16 - 1u)) == 0 && d->cache.head_dim == 16u * hd16 &&
             ((d->cache.head_dim / 2u) % epc == 0 || d->cache.head_dim == epc);
    fits8 = warp_grid(g, items, plan);
    if (fits8 && plan->grid <= (unsigned)h->sm_count) {
        /* one wave: the _small kernels, which load the table row before the tree (1 x 128 at
         * one token on the H200: see doc/PERFORMANCE.md; the halves form was 6-21% slower
         * there in graph replays). MRoPE's reads one row for a token of three equal positions
         * and its three streams' rows otherwise, each pair taking its stream's */
        plan->kernel = kv      ? PKVI_K_FUSED_FP8_KV_WARP_SMALL
                       : mrope ? PKVI_K_FUSED_MROPE_WARP_SMALL
                               : PKVI_K_FUSED_WARP_SMALL;
    } else if (mrope && !halves) {
        /* in many waves MRoPE only in the halves form, each pair's cos and sin from its
         * stream's row; the 8-element form, whose threads read rows pair by pair, was slower
         * than the block kernel, which shares them */
        return 0;
    } else if (halves && warp_grid(gh, items, plan)) {
        g = gh;
        /* 8 elements at head_dim 64 (4 threads an item): the kernels with that group size
         * built in, or the wide kernels, whose tiles of 32 items do each item's own work once
         * (kernels/fused_wide.cu). On the H200 at 16 x 64, three interleaved runs from 2,048 to
         * 65,536 tokens (doc/PERFORMANCE.md): MRoPE's wide kernel as fast as the g4 kernel
         * (-1% to +0.5%) to 14% faster for text tokens and 10-33% faster for image patches,
         * at every size; fused_fp8_k's wide kernel 2-9% slower up to 16,384 tokens (2.6 tiles a
         * warp of its wave), the g4 kernel 7-20% slower from 24,576 (3.9), so fused_fp8_k takes
         * the wide kernel at 3 tiles a warp or more; fused_bf16, which writes twice the bytes,
         * keeps the g4 kernel (as fast at 65,536 tokens, 5-6% slower at 2,048 and 16,384) */
        const int wide =
            gh == 4u && !e16 && !kv && op != PKV_OP_FUSED_BF16 &&
            wide_plan(h, items, mrope ? PKVK_MROPE_WIDE_BLOCKS_PER_SM : PKVK_WIDE_BLOCKS_PER_SM,
                      mrope ? 0u : 3u, plan);
        /* fused_bf16's 16-element kernel at head_dim 128 issues the next tile's copies first
         * (kernels/fused_halves.cu: the other order was 1.0-1.2% slower for it, 2-7% faster
         * for fused_fp8_k) */
        plan->kernel = kv         ? PKVI_K_FUSED_FP8_KV_HALVES
                       : mrope    ? (e16    ? PKVI_K_FUSED_MROPE_HALVES16
                                     : wide ? PKVI_K_FUSED_MROPE_WIDE64
                                            : PKVI_K_FUSED_MROPE_HALVES)
                       : e32      ? PKVI_K_FUSED_HALVES32
                       : e16      ? (op == PKV_OP_FUSED_BF16 && d->cache.head_dim < 256u
                                         ? PKVI_K_FUSED_HALVES16_EARLY
                                         : PKVI_K_FUSED_HALVES16)
                       : wide     ? PKVI_K_FUSED_WIDE64
                       : gh == 4u ? PKVI_K_FUSED_HALVES_G4
                                  : PKVI_K_FUSED_HALVES;
        if (e32)
            halves_wave(h, plan, PKVK_HALVES32_THREADS, PKVK_HALVES32_BLOCKS_PER_SM);
        else if (e16)
            halves_wave(h, plan, PKVK_HALVES16_THREADS,
                        mrope ? PKVK_MROPE_HALVES16_BLOCKS_PER_SM : PKVK_HALVES16_BLOCKS_PER_SM);
        else if (!wide) /* (else wide_plan's grid) */
            halves_wave(h, plan, 256u,
                        mrope ? PKVK_MROPE_HALVES_BLOCKS_PER_SM : PKVK_HALVES_BLOCKS_PER_SM);
    } else if (fits8 && !mrope) {
        warp_grid(g, items, plan);
        plan->kernel = kv ? PKVI_K_FUSED_FP8_KV_WARP : PKVI_K_FUSED_WARP;
    } else {
        return 0;
    }
    p->group = g;
    p->div_heads = pkvk_div32_make(d->cache.num_kv_heads);
    p->div_bs = pkvk_div32_make(d->cache.block_size);
    return 1;
}

pkv_status pkvi_cuda_fused_plan(pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, uint64_t key,
                                uint64_t value, uint64_t weight, const uint64_t pos[3],
                                uint64_t slots, uint64_t k_cache, uint64_t v_cache, uint64_t oob,
                                pkvk_fused_params *p, pkvi_plan *plan)
{
    pkvi_geom g;
    pkvi_src k, v;
    const char *name = pkv_op_name(op);
    int streams = op == PKV_OP_FUSED_MROPE_BF16 ? 3 : 1;
    pkv_status st = pkvi_fused_resolve(op, d, &g, &k, &v);
    if (st) return st;
    if (!h) return pkvi_fail(PKV_EINVAL, "%s: handle is NULL", name);
    NEED(name, key, k.elems);
    NEED(name, weight, d->num_tokens ? d->cache.head_dim : 0);
    NEEDA(name, slots, d->num_tokens, 8);
    NEEDA(name, k_cache, g.pool_elems, (int)pkvi_cache_elem_bytes(op));
    NEEDA(name, oob, 0, 8);
    for (int i = 0; i < streams; i++)
        if ((d->num_tokens && !pos[i]) || pos[i] % 4)
            return pkvi_fail(PKV_EINVAL, "%s: %s is NULL or not 4-byte aligned", name,
                             streams == 3 ? (const char *[]){"pos_t", "pos_h", "pos_w"}[i]
                                          : "positions");
    if (op == PKV_OP_FUSED_FP8_KV) {
        NEED(name, value, v.elems);
        NEEDA(name, v_cache, g.pool_elems, 1);
    }
    memset(p, 0, sizeof *p);
    plan->kernel = -1;
    if (d->rotary_dim &&
        (st = pkvi_cuda_rope(h, d->theta, d->rotary_dim, p->inv_freq, &p->cs_table, &p->cs_len)))
        return st;
    if (d->num_tokens == 0) return PKV_OK;
    geom(&p->g, &d->cache, &g);
    p->key = key;
    p->value = value;
    p->weight = weight;
    for (int i = 0; i < 3; i++)
        p->pos[i] = pos[streams == 3 ? i : 0];
    p->slots = slots;
    p->k_cache = k_cache;
    p->v_cache = op == PKV_OP_FUSED_FP8_KV ? v_cache : 0;
    p->oob = oob;
    p->k_stride = k.stride;
    p->v_stride = v.stride;
    p->num_tokens = d->num_tokens;
    p->rotary_dim = d->rotary_dim;
    p->mrope = op == PKV_OP_FUSED_MROPE_BF16;
    memcpy(p->section, d->mrope_section, sizeof p->section);
    p->eps = d->rms_eps;
    if (op == PKV_OP_FUSED_FP8_K) p->k_mul = d->k_inv_scale;
    if (op == PKV_OP_FUSED_FP8_KV) {
        p->k_mul = 1.0f / d->k_scale;
        p->v_mul = 1.0f / d->v_scale;
    }
    p->k_fp8 = op == PKV_OP_FUSED_FP8_K || op == PKV_OP_FUSED_FP8_KV;
    if ((d->cache.head_dim & (d->cache.head_dim - 1u)) == 0)
        p->inv_hd = 1.0f / (float)d->cache.head_dim; /* exact */
    if (d->cache.head_dim % 8 == 0 && rows_vec8(&g) && offsets32(&g, &k, &v) && k.stride % 8 == 0 &&
        vec8(key, 2) && vec8(weight, 2) && vec8(k_cache, pkvi_cache_elem_bytes(op)) &&
        (op != PKV_OP_FUSED_FP8_KV || (v.stride % 8 == 0 && vec8(value, 2) && vec8(v_cache, 1)))) {
        /* an item is one (token, head): `group` threads of E elements, padded to whole
         * chunks of 32 tree leaves (elements, or pairs for op 8). E is 16 for op 8 when
         * head_dim allows and a 256-thread block of such items still has at most one RoPE
         * pair per thread: a thread computes its pairs' sin and cos one after the other, so
         * more would lengthen every block (measured on the H200: 16 elements faster at 8 x 128
         * and 16 x 64, 8 faster at 4 x 256 and 1 x 128, where a block would hold 512 and
         * 2048 pairs) */
        unsigned elems_per_chunk = op == PKV_OP_FUSED_FP8_KV ? 64u : 32u;
        unsigned e = 8u;
        uint64_t items = (uint64_t)d->num_tokens * d->cache.num_kv_heads, blocks;
        if (warp_plan(h, op, d, elems_per_chunk, items, p, plan)) return PKV_OK;
        if (op == PKV_OP_FUSED_FP8_KV && d->cache.head_dim % 16 == 0) {
            unsigned group16 = (d->cache.head_dim + 63u) / 64u * 4u;
            uint64_t tokens16 =
                (256u / group16 + d->cache.num_kv_heads - 1) / d->cache.num_kv_heads;
            if (tokens16 * (d->rotary_dim / 2) <= 256u) e = 16u;
        }
        unsigned block;
        p->group =
            (d->cache.head_dim + elems_per_chunk - 1) / elems_per_chunk * (elems_per_chunk / e);
        /* a block takes up to 256 threads' worth of items, but few enough that a small call
         * still spreads over every multiprocessor; it gets a thread per RoPE pair of its
         * tokens (up to 256), which computes the pair's sin and cos */
        p->ipb = 256u / p->group;
        if ((uint64_t)p->ipb * (uint64_t)h->sm_count > items)
            p->ipb = (uint32_t)((items + (uint64_t)h->sm_count - 1) / (uint64_t)h->sm_count);
        blocks = (items + p->ipb - 1) / p->ipb;
        block = round32(p->ipb * p->group);
        p->idx32 = blocks * p->ipb + d->cache.num_kv_heads <= 0xffffffffu;
        p->div_group = pkvk_div32_make(p->group);
        p->div_heads = pkvk_div32_make(d->cache.num_kv_heads);
        p->div_half = pkvk_div32_make(d->rotary_dim / 2);
        p->div_bs = pkvk_div32_make(d->cache.block_size);
        {
            uint64_t tokens = (p->ipb + d->cache.num_kv_heads - 1) / d->cache.num_kv_heads + 1;
            uint64_t angle_threads = tokens * (d->rotary_dim / 2);
            if (tokens > d->num_tokens)
                angle_threads = (uint64_t)d->num_tokens * (d->rotary_dim / 2);
            if (angle_threads > 256) angle_threads = 256;
            if (angle_threads > block) block = round32((unsigned)angle_threads);
        }
        if (blocks > 0x7fffffffu)
            return pkvi_fail(PKV_ERANGE, "%s: %llu blocks exceed the grid", name,
                             (unsigned long long)blocks);
        if (op != PKV_OP_FUSED_FP8_KV)
            plan->kernel = p->cs_table ? PKVI_K_FUSED_VEC_TAB : PKVI_K_FUSED_VEC;
        else if (e == 16)
            plan->kernel = p->cs_table ? PKVI_K_FUSED_FP8_KV_VEC16_TAB : PKVI_K_FUSED_FP8_KV_VEC16;
        else
            plan->kernel = p->cs_table ? PKVI_K_FUSED_FP8_KV_VEC_TAB : PKVI_K_FUSED_FP8_KV_VEC;
        plan->grid = (unsigned)blocks;
        plan->block = block;
    } else if (op == PKV_OP_FUSED_FP8_KV) {
        plan->kernel = PKVI_K_FUSED_FP8_KV;
        plan->grid = d->num_tokens;
        plan->block = round32(d->cache.head_dim / 2);
    } else {
        plan->kernel = PKVI_K_FUSED;
        plan->grid = d->num_tokens;
        plan->block = round32(d->cache.head_dim);
    }
    return PKV_OK;
}

static pkv_status fused_op(pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, uint64_t key,
                           uint64_t value, uint64_t weight, const uint64_t pos[3], uint64_t slots,
                           uint64_t k_cache, uint64_t v_cache, uint64_t oob, void *stream)
{
    pkvk_fused_params p;
    pkvi_plan plan;
    pkv_status st = pkvi_cuda_fused_plan(h, op, d, key, value, weight, pos, slots, k_cache, v_cache,
                                         oob, &p, &plan);
    if (st || plan.kernel < 0) return st;
    return pkvi_cuda_launch(h, plan.kernel, plan.grid, 1, plan.block, &p, stream);
}

pkv_status pkv_cuda_fused_bf16(pkv_cuda *h, const pkv_fused_desc *d, uint64_t key,
                               uint64_t k_norm_weight, uint64_t positions, uint64_t slot_mapping,
                               uint64_t k_cache, uint64_t oob_count, void *stream)
{
    const uint64_t pos[3] = {positions, positions, positions};
    return fused_op(h, PKV_OP_FUSED_BF16, d, key, 0, k_norm_weight, pos, slot_mapping, k_cache, 0,
                    oob_count, stream);
}

pkv_status pkv_cuda_fused_mrope_bf16(pkv_cuda *h, const pkv_fused_desc *d, uint64_t key,
                                     uint64_t k_norm_weight, uint64_t pos_t, uint64_t pos_h,
                                     uint64_t pos_w, uint64_t slot_mapping, uint64_t k_cache,
                                     uint64_t oob_count, void *stream)
{
    const uint64_t pos[3] = {pos_t, pos_h, pos_w};
    return fused_op(h, PKV_OP_FUSED_MROPE_BF16, d, key, 0, k_norm_weight, pos, slot_mapping,
                    k_cache, 0, oob_count, stream);
}

pkv_status pkv_cuda_fused_fp8_k(pkv_cuda *h, const pkv_fused_desc *d, uint64_t key,
                                uint64_t k_norm_weight, uint64_t positions, uint64_t slot_mapping,
                                uint64_t k_cache, uint64_t oob_count, void *stream)
{
    const uint64_t pos[3] = {positions, positions, positions};
    return fused_op(h, PKV_OP_FUSED_FP8_K, d, key, 0, k_norm_weight, pos, slot_mapping, k_cache, 0,
                    oob_count, stream);
}

pkv_status pkv_cuda_fused_fp8_kv(pkv_cuda *h, const pkv_fused_desc *d, uint64_t key, uint64_t value,
                                 uint64_t k_norm_weight, uint64_t positions, uint64_t slot_mapping,
                                 uint64_t k_cache, uint64_t v_cache, uint64_t oob_count,
                                 void *stream)
{
    const uint64_t pos[3] = {positions, positions, positions};
    return fused_op(h, PKV_OP_FUSED_FP8_KV, d, key, value, k_norm_weight, pos, slot_mapping,
                    k_cache, v_cache, oob_count, stream);
}
