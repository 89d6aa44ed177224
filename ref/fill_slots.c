/* Reference op 1: slot mapping from an int32 block table. */
#include "config.h"
#include "pagedkv.h"
#include "../lib/pointers.h"

pkv_status pkv_ref_fill_slots(const pkv_fill_slots_desc *d, const int32_t *block_table,
                              int64_t *slots)
{
    pkv_status st = pkv_fill_slots_check(d);
    if (st) return st;
    PKVI_NEED("fill_slots", slots, d->count);
    PKVI_NEED("fill_slots", block_table, d->table_len);
    for (uint32_t i = 0; i < d->count; i++) {
        uint64_t pos = (uint64_t)d->start_pos + i; /* 64-bit: no wrap past 2^32 */
        uint64_t blk = pos / d->block_size;
        int32_t entry = blk < d->table_len ? block_table[blk] : -1;
        /* entry <= 2^31 - 1, block_size <= 2^32 - 1: the slot stays below 2^63 */
        slots[i] = entry < 0 ? -1
                             : (int64_t)((uint64_t)entry * d->block_size + pos % d->block_size);
    }
    return PKV_OK;
}
