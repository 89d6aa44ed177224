/* FP8 E4M3FN <-> binary32, exactly as doc/SPEC.md defines them (host and device).
 * E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no Inf; NaN is S.1111.111; the
 * largest finite value is 448 (0x7E); subnormals are multiples of 2^-9. */
#ifndef PKV_FP8_H
#define PKV_FP8_H

#include "hd.h"

PKV_HD uint8_t pkvi_e4m3_from_f32(float x)
{
    uint32_t u = pkvi_f32_bits(x);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7f; /* NaN of either sign */
    /* Everything from 448 up rounds to 448 (464 is a tie that goes to the even 448) or past it
     * (saturates to 448), Inf included. */
    if (a >= 0x43e00000u) return (uint8_t)(sign | 0x7eu);
    if (a >= 0x3c800000u) { /* normal result, |x| >= 2^-6: keep 3 of 23 mantissa bits */
        uint32_t r = (a + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
        return (uint8_t)(sign | (r - ((127u - 7u) << 3)));
    }
    /* Subnormal result: n = RNE(|x| * 2^9) in [0, 8]; |x| <= 2^-10 gives 0 (the tie at
     * 2^-10 goes to the even 0). Here |x| < 2^-6 so the exponent e is -10..-7. */
    if (a <= 0x3a800000u) return (uint8_t)sign;
    {
        uint32_t e = (a >> 23) - 127u + 32u;       /* e + 32, in 22..25 */
        uint32_t m = (a & 0x7fffffu) | 0x800000u;  /* 24-bit significand */
        uint32_t s = 14u + 32u - e;                /* n = m >> s, rounded: s in 21..24 */
        uint32_t n = (m + (1u << (s - 1u)) - 1u + ((m >> s) & 1u)) >> s;
        return (uint8_t)(sign | n);
    }
}

PKV_HD float pkvi_e4m3_to_f32(uint8_t q)
{
    uint32_t sign = (uint32_t)(q & 0x80u) << 24;
    uint32_t e = (q >> 3) & 15u, m = q & 7u;
    if (e == 15u && m == 7u) return pkvi_f32_from_bits(sign | 0x7fc00000u);
    if (e == 0u) { /* m * 2^-9, exact */
        float v = (float)m * 0.001953125f;
        return pkvi_f32_from_bits(sign | pkvi_f32_bits(v));
    }
    return pkvi_f32_from_bits(sign | ((e + 120u) << 23) | (m << 20));
}

#endif
