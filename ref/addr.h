/* Paged-cache addressing shared by the reference and the kernels (doc/SPEC.md, "Slots"). */
#ifndef PKV_ADDR_H
#define PKV_ADDR_H

#include "hd.h"

#define PKVI_SLOT_SKIP 0 /* slot < 0: padding, nothing is written */
#define PKVI_SLOT_OOB 1  /* slot >= num_slots: nothing is written, the token is counted */
#define PKVI_SLOT_OK 2

/* The two steps of pkvi_slot_offset, for callers that divide by block_size their own way
 * (the kernels, with a launch-time multiplier): classify the slot; then, for a valid slot s
 * with q = s / block_size, the element offset of its token row. */
PKV_HD int pkvi_slot_kind(int64_t slot, uint64_t num_slots)
{
    if (slot < 0) return PKVI_SLOT_SKIP;
    return (uint64_t)slot >= num_slots ? PKVI_SLOT_OOB : PKVI_SLOT_OK;
}

PKV_HD uint64_t pkvi_slot_row_offset(uint64_t s, uint64_t q, uint32_t block_size,
                                     uint64_t block_stride, uint64_t row)
{
    return q * block_stride + (s - q * block_size) * row;
}

/* Classify a slot and, when it is valid, give the element offset of its token row:
 * (slot / block_size) * block_stride + (slot % block_size) * row. 64-bit throughout; the
 * descriptor checks guarantee that num_slots * row and the pool fit. */
PKV_HD int pkvi_slot_offset(int64_t slot, uint64_t num_slots, uint32_t block_size,
                            uint64_t block_stride, uint64_t row, uint64_t *offset)
{
    int kind = pkvi_slot_kind(slot, num_slots);
    uint64_t s = (uint64_t)slot, q;
    if (kind != PKVI_SLOT_OK) return kind;
    /* the same quotient; a GPU divides 32-bit words far faster */
    q = s <= 0xffffffffu ? (uint32_t)s / block_size : s / block_size;
    *offset = pkvi_slot_row_offset(s, q, block_size, block_stride, row);
    return PKVI_SLOT_OK;
}

/* The position stream of RoPE pair p under interleaved MRoPE: 0 = t, 1 = h, 2 = w. With no
 * sections (all zero) it is p % 3; otherwise h for p % 3 == 1 below 3 * section_h, w for
 * p % 3 == 2 below 3 * section_w, else t (the Hugging Face interleaved rule). */
PKV_HD int pkvi_mrope_stream(uint32_t p, const uint32_t section[3])
{
    uint32_t r = p % 3u;
    if (section[0] == 0 && section[1] == 0 && section[2] == 0) return (int)r;
    if (r == 1u && p < 3u * section[1]) return 1;
    if (r == 2u && p < 3u * section[2]) return 2;
    return 0;
}

#endif
