/* See refkit.h. */
#include "refkit.h"
#include "tap.h"
#include "pagedkv.h"

#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9e3779b97f4a7c15ull;

void kit_seed(uint64_t seed) { state = seed ? seed : 1; }

uint64_t kit_rand(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dull;
}

uint16_t kit_bf16(float scale)
{
    static const uint16_t hostile[] = {
        0x7fc1, 0xffc0, 0x7f81, 0xff81, /* NaN payloads, both signs */
        0x7f80, 0xff80, 0x0000, 0x8000, /* +-Inf, +-0 */
        0x0001, 0x807f, 0x7f7f, 0xff7f, /* subnormals, +-BF16 max */
        0x43e0, 0x43e8, 0xc3e8, 0x43e9, /* 448, 464, -464, 466 */
    };
    uint64_t r = kit_rand();
    if (r % 64 == 0) return hostile[(r >> 8) % (sizeof hostile / sizeof hostile[0])];
    {
        /* uniform in [-scale, scale) rounded to BF16 */
        float u = (float)((double)(r >> 11) * 0x1p-53) * 2.0f - 1.0f;
        return pkv_bf16_from_f32(u * scale);
    }
}

void kit_fill_bf16(uint16_t *p, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++) p[i] = kit_bf16(scale);
}

void *kit_alloc(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) bail("out of memory (%zu bytes)", bytes);
    return p;
}

uint64_t kit_row_offset(int64_t s, uint32_t bs, uint64_t block_stride, uint64_t row)
{
    uint64_t block = (uint64_t)s / bs, within = (uint64_t)s - block * bs;
    return block * block_stride + within * row;
}

void kit_slots(int64_t *slots, uint32_t n, uint64_t num_slots, int neg_permille,
               int oob_permille)
{
    /* a random walk with random strides keeps the valid slots distinct */
    uint64_t next = num_slots ? kit_rand() % num_slots : 0;
    for (uint32_t i = 0; i < n; i++) {
        int r = (int)(kit_rand() % 1000);
        if (r < neg_permille) slots[i] = -1 - (int64_t)(kit_rand() % 3);
        else if (r < neg_permille + oob_permille || num_slots == 0)
            slots[i] = (int64_t)(num_slots + kit_rand() % 1000);
        else {
            slots[i] = (int64_t)next;
            next = (next + 1 + kit_rand() % 3) % num_slots;
        }
    }
}

long kit_first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return (long)i;
    return -1;
}
