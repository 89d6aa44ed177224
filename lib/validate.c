/* Descriptor validation: every rule of doc/SPEC.md "Arguments and bounds", with a message that
 * names the offending field. The reference and the CUDA launchers call exactly this code. */
#include "config.h"
#include "validate.h"
#include "status.h"

#include <math.h>

static const char *const op_names[PKV_OP_COUNT] = {
    "fill_slots",       "write_bf16",  "write_v_bf16", "write_fp8",
    "fused_bf16",       "fused_mrope_bf16", "fused_fp8_k", "fused_fp8_kv",
};

const char *pkv_op_name(pkv_op op)
{
    return (unsigned)op < PKV_OP_COUNT ? op_names[op] : NULL;
}

size_t pkvi_cache_elem_bytes(pkv_op op)
{
    switch (op) {
    case PKV_OP_WRITE_FP8:
    case PKV_OP_FUSED_FP8_K:
    case PKV_OP_FUSED_FP8_KV: return 1;
    default: return 2;
    }
}

/* a * b without wrapping; 0 on success. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a) return -1;
    *out = a * b;
    return 0;
}

/* Byte extents must be addressable with signed 64-bit offsets and size_t on this host. */
static int bytes_fit(uint64_t elems, size_t elem_bytes)
{
    uint64_t limit = (uint64_t)INT64_MAX < (uint64_t)SIZE_MAX ? (uint64_t)INT64_MAX
                                                              : (uint64_t)SIZE_MAX;
    return elems <= limit / elem_bytes;
}

static pkv_status layout_resolve(const char *op, const pkv_cache_layout *c, size_t elem_bytes,
                                 pkvi_geom *g)
{
    uint64_t dense;
    if (c->num_kv_heads == 0)
        return pkvi_fail(PKV_EINVAL, "%s: cache.num_kv_heads is 0", op);
    if (c->head_dim == 0) return pkvi_fail(PKV_EINVAL, "%s: cache.head_dim is 0", op);
    if (c->block_size == 0) return pkvi_fail(PKV_EINVAL, "%s: cache.block_size is 0", op);
    g->row = (uint64_t)c->num_kv_heads * c->head_dim;
    if (mul_u64(g->row, c->block_size, &dense))
        return pkvi_fail(PKV_ERANGE, "%s: cache.block_size * num_kv_heads * head_dim overflows",
                         op);
    g->block_stride = c->block_stride ? c->block_stride : dense;
    if (g->block_stride < dense)
        return pkvi_fail(PKV_EINVAL,
                         "%s: cache.block_stride (%llu) is smaller than block_size * "
                         "num_kv_heads * head_dim (%llu)",
                         op, (unsigned long long)g->block_stride, (unsigned long long)dense);
    if (mul_u64(c->num_blocks, g->block_stride, &g->pool_elems) ||
        !bytes_fit(g->pool_elems, elem_bytes))
        return pkvi_fail(PKV_ERANGE, "%s: cache.num_blocks * block_stride bytes overflow", op);
    g->num_slots = c->num_blocks * c->block_size; /* <= pool_elems: cannot wrap */
    return PKV_OK;
}

static pkv_status src_resolve(const char *op, const char *field, uint64_t stride, uint32_t tokens,
                              uint64_t row, pkvi_src *s)
{
    uint64_t span;
    s->stride = stride ? stride : row;
    if (s->stride < row)
        return pkvi_fail(PKV_EINVAL,
                         "%s: %s (%llu) is smaller than num_kv_heads * head_dim (%llu)", op,
                         field, (unsigned long long)s->stride, (unsigned long long)row);
    if (tokens == 0) {
        s->elems = 0;
        return PKV_OK;
    }
    if (mul_u64(tokens - 1u, s->stride, &span) || span > UINT64_MAX - row ||
        !bytes_fit(span + row, 2))
        return pkvi_fail(PKV_ERANGE, "%s: num_tokens rows of %s bytes overflow", op, field);
    s->elems = span + row;
    return PKV_OK;
}

static pkv_status check_scale(const char *op, const char *field, float s)
{
    if (!(isfinite(s) && s > 0.0f))
        return pkvi_fail(PKV_EINVAL, "%s: %s (%g) must be finite and > 0", op, field, (double)s);
    return PKV_OK;
}

pkv_status pkv_fill_slots_check(const pkv_fill_slots_desc *d)
{
    pkvi_clear_error();
    if (!d) return pkvi_fail(PKV_EINVAL, "fill_slots: desc is NULL");
    if (d->block_size == 0) return pkvi_fail(PKV_EINVAL, "fill_slots: block_size is 0");
    if (d->count > PKV_MAX_TOKENS)
        return pkvi_fail(PKV_EINVAL, "fill_slots: count (%u) exceeds %u", d->count,
                         PKV_MAX_TOKENS);
    return PKV_OK;
}

pkv_status pkvi_write_resolve(pkv_op op, const pkv_write_desc *d, pkvi_geom *g, pkvi_src *k,
                              pkvi_src *v)
{
    pkvi_geom gg;
    pkvi_src kk, vv;
    pkv_status st;
    const char *name = pkv_op_name(op);
    pkvi_clear_error();
    if (op != PKV_OP_WRITE_BF16 && op != PKV_OP_WRITE_V_BF16 && op != PKV_OP_WRITE_FP8)
        return pkvi_fail(PKV_EINVAL, "op %d is not a write op (write_bf16, write_v_bf16, "
                                     "write_fp8)", (int)op);
    if (!d) return pkvi_fail(PKV_EINVAL, "%s: desc is NULL", name);
    if ((st = layout_resolve(name, &d->cache, pkvi_cache_elem_bytes(op), &gg))) return st;
    if (d->num_tokens > PKV_MAX_TOKENS)
        return pkvi_fail(PKV_EINVAL, "%s: num_tokens (%u) exceeds %u", name, d->num_tokens,
                         PKV_MAX_TOKENS);
    kk.stride = kk.elems = 0;
    if (op != PKV_OP_WRITE_V_BF16 &&
        (st = src_resolve(name, "k_row_stride", d->k_row_stride, d->num_tokens, gg.row, &kk)))
        return st;
    if ((st = src_resolve(name, "v_row_stride", d->v_row_stride, d->num_tokens, gg.row, &vv)))
        return st;
    if (op == PKV_OP_WRITE_FP8) {
        if ((st = check_scale(name, "k_scale", d->k_scale))) return st;
        if ((st = check_scale(name, "v_scale", d->v_scale))) return st;
    }
    if (g) *g = gg;
    if (k) *k = kk;
    if (v) *v = vv;
    return PKV_OK;
}

pkv_status pkv_write_check(pkv_op op, const pkv_write_desc *d)
{
    return pkvi_write_resolve(op, d, NULL, NULL, NULL);
}

static pkv_status check_mrope(const char *name, const pkv_fused_desc *d)
{
    const uint32_t *s = d->mrope_section;
    uint64_t sum = (uint64_t)s[0] + s[1] + s[2];
    if (sum != 0 && sum != d->rotary_dim / 2)
        return pkvi_fail(PKV_EINVAL,
                         "%s: mrope_section {%u, %u, %u} must be all 0 or sum to rotary_dim / 2 "
                         "(%u)",
                         name, s[0], s[1], s[2], d->rotary_dim / 2);
    return PKV_OK;
}

pkv_status pkvi_fused_resolve(pkv_op op, const pkv_fused_desc *d, pkvi_geom *g, pkvi_src *k,
                              pkvi_src *v)
{
    pkvi_geom gg;
    pkvi_src kk, vv;
    pkv_status st;
    const char *name = pkv_op_name(op);
    pkvi_clear_error();
    if (op != PKV_OP_FUSED_BF16 && op != PKV_OP_FUSED_MROPE_BF16 && op != PKV_OP_FUSED_FP8_K &&
        op != PKV_OP_FUSED_FP8_KV)
        return pkvi_fail(PKV_EINVAL, "op %d is not a fused op", (int)op);
    if (!d) return pkvi_fail(PKV_EINVAL, "%s: desc is NULL", name);
    if ((st = layout_resolve(name, &d->cache, pkvi_cache_elem_bytes(op), &gg))) return st;
    if (d->cache.head_dim > PKV_MAX_FUSED_HEAD_DIM)
        return pkvi_fail(PKV_EINVAL, "%s: cache.head_dim (%u) exceeds %u", name,
                         d->cache.head_dim, PKV_MAX_FUSED_HEAD_DIM);
    if (op == PKV_OP_FUSED_FP8_KV && d->cache.head_dim % 2)
        return pkvi_fail(PKV_EINVAL, "%s: cache.head_dim (%u) must be even (pair leaves)", name,
                         d->cache.head_dim);
    if (d->num_tokens > PKV_MAX_TOKENS)
        return pkvi_fail(PKV_EINVAL, "%s: num_tokens (%u) exceeds %u", name, d->num_tokens,
                         PKV_MAX_TOKENS);
    if (d->rotary_dim % 2 || d->rotary_dim > d->cache.head_dim)
        return pkvi_fail(PKV_EINVAL, "%s: rotary_dim (%u) must be even and <= head_dim (%u)",
                         name, d->rotary_dim, d->cache.head_dim);
    if (d->rotary_dim && !(isfinite(d->theta) && d->theta >= 1.0f))
        return pkvi_fail(PKV_EINVAL, "%s: theta (%g) must be finite and >= 1", name,
                         (double)d->theta);
    if (!(isfinite(d->rms_eps) && d->rms_eps >= 0.0f))
        return pkvi_fail(PKV_EINVAL, "%s: rms_eps (%g) must be finite and >= 0", name,
                         (double)d->rms_eps);
    if ((st = src_resolve(name, "k_row_stride", d->k_row_stride, d->num_tokens, gg.row, &kk)))
        return st;
    vv.stride = vv.elems = 0;
    if (op == PKV_OP_FUSED_FP8_KV) {
        if ((st = src_resolve(name, "v_row_stride", d->v_row_stride, d->num_tokens, gg.row,
                              &vv)))
            return st;
        if ((st = check_scale(name, "k_scale", d->k_scale))) return st;
        if ((st = check_scale(name, "v_scale", d->v_scale))) return st;
    }
    if (op == PKV_OP_FUSED_FP8_K && (st = check_scale(name, "k_inv_scale", d->k_inv_scale)))
        return st;
    if (op == PKV_OP_FUSED_MROPE_BF16 && (st = check_mrope(name, d))) return st;
    if (g) *g = gg;
    if (k) *k = kk;
    if (v) *v = vv;
    return PKV_OK;
}

pkv_status pkv_fused_check(pkv_op op, const pkv_fused_desc *d)
{
    return pkvi_fused_resolve(op, d, NULL, NULL, NULL);
}
