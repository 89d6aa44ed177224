/* Internal: descriptor validation shared by the reference and every backend, and the
 * resolved geometry it produces. */
#ifndef PKV_VALIDATE_H
#define PKV_VALIDATE_H

#include "pagedkv.h"

/* A cache layout with its derived sizes, all in elements and all known not to overflow. */
typedef struct pkvi_geom {
    uint64_t row;          /* num_kv_heads * head_dim: elements of one token */
    uint64_t block_stride; /* the resolved block stride */
    uint64_t num_slots;    /* num_blocks * block_size: valid slots are [0, num_slots) */
    uint64_t pool_elems;   /* num_blocks * block_stride */
} pkvi_geom;

/* Source rows of one tensor: num_tokens rows of `row` elements, `stride` apart. */
typedef struct pkvi_src {
    uint64_t stride; /* resolved row stride */
    uint64_t elems;  /* elements spanned: (num_tokens - 1) * stride + row, or 0 */
} pkvi_src;

/* Element size in bytes of the cache an op writes. */
size_t pkvi_cache_elem_bytes(pkv_op op);

/* Validate a descriptor and resolve its geometry (g, k, v may be NULL when not wanted). */
pkv_status pkvi_write_resolve(pkv_op op, const pkv_write_desc *d, pkvi_geom *g, pkvi_src *k,
                              pkvi_src *v);
pkv_status pkvi_fused_resolve(pkv_op op, const pkv_fused_desc *d, pkvi_geom *g, pkvi_src *k,
                              pkvi_src *v);

#endif
