/* MPFR helpers for the tests: correctly rounded binary32 results, subnormals included. */
#ifndef PKV_MPFR_F32_H
#define PKV_MPFR_F32_H

#include <mpfr.h>

/* Significant bits of a binary32 whose exponent (MPFR's convention: |y| in [2^(e-1), 2^e)) is
 * e: 24 for normal results, fewer in the subnormal range. */
static inline mpfr_prec_t f32_bits_at(mpfr_exp_t e)
{
    return e >= -125 ? 24 : (e + 149 >= 1 ? e + 149 : 1);
}

/* Round y (exact or accurate enough; see mpfr_can_round) to the binary32 grid, nearest even.
 * Values below half the smallest subnormal become signed zero. */
static inline float f32_round(mpfr_t y)
{
    mpfr_t r;
    float out;
    if (!mpfr_number_p(y) || mpfr_zero_p(y)) return mpfr_get_flt(y, MPFR_RNDN);
    if (mpfr_get_exp(y) < -148) /* |y| < 2^-149: 0 or the smallest subnormal */
        return mpfr_get_flt(y, MPFR_RNDN);
    mpfr_init2(r, f32_bits_at(mpfr_get_exp(y)));
    mpfr_set(r, y, MPFR_RNDN);
    /* rounding up can move to the next binade, which can only add precision: stays exact */
    out = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_clear(r);
    return out;
}

#endif
