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
                                uint64_t oob, pkvk_write32_params *pp, pkvi_plan *plan)
{
    pkvk_write_params p;
    pkvk_div32 div_cpr = pkvk_div32_make(1), div_bs = div_cpr;
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
    plan->block = 256;
    if (rows_vec8(&g) && k.stride % 8 == 0 && v.stride % 8 == 0 && vec8(key, 2) && vec8(value, 2) &&
        vec8(k_cache, pkvi_cache_elem_bytes(op)) && vec8(v_cache, pkvi_cache_elem_bytes(op))) {
        const uint64_t chunks = (uint64_t)d->num_tokens * (g.row / 8);
        plan->kernel = PKVI_K_WRITE_VEC;
        plan->grid = grid_for(chunks);
        if (chunks <= 0xffffffffu && offsets32(&g, &k, &v)) {
            plan->kernel = PKVI_K_WRITE_VEC32;
            div_cpr = pkvk_div32_make((uint32_t)(g.row / 8));
            div_bs = pkvk_div32_make(d->cache.block_size);
            /* decode: blocks of 128 while there is at most one a multiprocessor. On the H200,
             * graph replays, the kernel triggering first (kernels/grid_dep.cuh): 3.1-13.1%
             * faster than blocks of 256 at 2 to 64 tokens, 0.4-0.8% slower at 1 token and
             * 1 x 128 x 8; 0.7-0.9% slower at 256 and 2,048 tokens (8 x 128: 256 and 2,048
             * blocks of 128), which keep 256 (doc/PERFORMANCE-HISTORY.md, thirty-ninth session) */
            if ((chunks + 127u) / 128u <= (uint64_t)h->sm_count) {
                plan->block = 128;
                plan->grid = (unsigned)((chunks + 127u) / 128u);
            }
        }
    } else {
        plan->kernel = PKVI_K_WRITE;
        plan->grid = d->num_tokens;
    }
    pp->w = p;
    pp->div_cpr = div_cpr;
    pp->div_bs = div_bs;
    /* the blocks that fit the multiprocessors at once (the write kernels' registers allow every
     * resident thread): only they can start before the kernel ahead has finished */
    pp->prefetch_blocks = (uint32_t)h->sm_count * ((uint32_t)h->threads_per_sm / plan->block);
    pp->flat = g.block_stride == (uint64_t)d->cache.block_size * g.row;
    return PKV_OK;
}

static pkv_status write_op(pkv_cuda *h, pkv_op op, const pkv_write_desc *d, uint64_t key,
                           uint64_t value, uint64_t slots, uint64_t k_cache, uint64_t v_cache,
                           uint64_t oob, void *stream)
{
    pkvk_write32_params p;
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
        if (pkvi_cuda_warp_plan(h, op, d, elems_per_chunk, items, p, plan)) return PKV_OK;
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
