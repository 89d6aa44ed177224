/* Correctly rounded binary32 reciprocal square root (host and device). */
#ifndef PKV_RSQRT_CR_H
#define PKV_RSQRT_CR_H

#include "hd.h"
#include <math.h>

/* Three roundings (double sqrt, double divide, narrowing) that together round correctly:
 * 1/sqrt(y) is irrational unless y is an even power of two (then it is exact), so it is never
 * a binary32 midpoint, and the double result is within 2^-52 relative of it; the exhaustive
 * MPFR test over [1, 4) (t/rsqrt_cr) shows no binary32 input lands that close to a midpoint,
 * and rsqrt(4y) = rsqrt(y)/2 exactly at every step, with no binary32 result subnormal, so
 * those two binades cover every input. sqrt and / are IEEE operations on host and device. */
PKV_HD float pkvi_rsqrt_cr(float y) { return (float)(1.0 / sqrt((double)y)); }

#endif
