/* Independent arithmetic formulations of the BF16 and E4M3 conversions (binary64 frexp /
 * ldexp / rint and a search of the decoded E4M3 values), for the exhaustive tests and the
 * conversion fuzzer. They share nothing with ref/bf16.h and ref/fp8.h. */
#ifndef PKV_CONV_MODEL_H
#define PKV_CONV_MODEL_H

#include "bits.h"

#include <math.h>
#include <stdint.h>

/* Round |x| to 8 significant bits at the binary32 exponent range (quantum 2^(e-8), never
 * below the subnormal quantum 2^-133), ties to even by rint, overflow past the largest BF16
 * to Inf; then read the (exact) binary32's top half. */
static inline uint16_t bf16_arith(float x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double)x), y;
    int e;
    if (isnan(x)) return 0x7fff;
    if (isinf(x) || a == 0.0) return (uint16_t)(bits(x) >> 16);
    frexp(a, &e);
    e = (e > -125 ? e : -125) - 8;
    y = ldexp(rint(ldexp(a, -e)), e);
    if (y >= 0x1p128) return (uint16_t)(sign | 0x7f80);
    return (uint16_t)(sign | (bits((float)y) >> 16));
}

/* E4M3 from the OCP definition: exponent field e (bias 7), mantissa m of 3 bits. */
static inline double e4m3_value(unsigned code)
{
    unsigned e = (code >> 3) & 15, m = code & 7;
    return e == 0 ? ldexp(m, -9) : ldexp(8 + m, (int)e - 10);
}

/* RNE to 4 significant bits (quantum 2^(e-4), at least the subnormal 2^-9), saturate to 448,
 * then find the code whose value it is. */
static inline uint8_t e4m3_arith(float x)
{
    uint8_t sign = signbit(x) ? 0x80 : 0;
    double a = fabs((double)x), y;
    int e, lo = 0, hi = 126;
    if (isnan(x)) return 0x7f;
    if (isinf(x)) y = 448.0;
    else if (a == 0.0) y = 0.0;
    else {
        frexp(a, &e);
        e = (e > -5 ? e : -5) - 4;
        y = ldexp(rint(ldexp(a, -e)), e);
        if (y > 448.0) y = 448.0;
    }
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (e4m3_value((unsigned)mid) < y) lo = mid + 1;
        else hi = mid;
    }
    return (uint8_t)(sign | lo);
}

#endif
