/* Test kit for the reference ops: reproducible hostile inputs, poisoned pools, and the
 * address of a token row written out independently of ref/addr.h. */
#ifndef PKV_REFKIT_H
#define PKV_REFKIT_H

#include <stddef.h>
#include <stdint.h>

#define POISON 0xA5

uint64_t kit_rand(void);
void kit_seed(uint64_t seed);

/* A BF16 bit pattern: mostly ordinary values of the given scale, sometimes NaN payloads of
 * both signs, +-Inf, subnormals, +-0, BF16 max, and values near 448 and 464. */
uint16_t kit_bf16(float scale);

/* Fill n elements with kit_bf16(scale). */
void kit_fill_bf16(uint16_t *p, size_t n, float scale);

/* A zeroed allocation that aborts the test on failure. */
void *kit_alloc(size_t bytes);

/* Element offset of slot s's row: block s / bs at block_stride, offset s % bs at row. */
uint64_t kit_row_offset(int64_t s, uint32_t bs, uint64_t block_stride, uint64_t row);

/* Distinct slots for n tokens in [0, num_slots), with -1 and out-of-range slots mixed in at the
 * given per-mille rates. */
void kit_slots(int64_t *slots, uint32_t n, uint64_t num_slots, int neg_permille,
               int oob_permille);

/* Index of the first differing byte, or -1. */
long kit_first_diff(const void *a, const void *b, size_t n);

#endif
