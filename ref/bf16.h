/* BF16 <-> binary32, exactly as doc/SPEC.md defines them (host and device). */
#ifndef PKV_BF16_H
#define PKV_BF16_H

#include "hd.h"

/* Round to nearest even by adding 0x7FFF plus the lowest kept bit: the carry out of the low
 * half is the rounding. Finite values that round past the largest BF16 carry into the
 * exponent and become Inf, as IEEE rounding requires. NaN is canonicalised first because the
 * addition could otherwise carry a NaN into Inf. */
PKV_HD uint16_t pkvi_bf16_from_f32(float x)
{
    uint32_t u = pkvi_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

PKV_HD float pkvi_bf16_to_f32(uint16_t b) { return pkvi_f32_from_bits((uint32_t)b << 16); }

#endif
