/* Double-double arithmetic (an unevaluated sum hi + lo of two binary64 values, about 106
 * significant bits) for the correctly rounded functions; host and device. Every operation is
 * an IEEE basic operation or an explicit fma(), which is exact in its rounding on both. */
#ifndef PKV_DD_H
#define PKV_DD_H

#include "hd.h"
#include <math.h>

typedef struct pkvi_dd {
    double hi, lo;
} pkvi_dd;

PKV_HD pkvi_dd pkvi_dd_make(double hi, double lo)
{
    pkvi_dd r;
    r.hi = hi;
    r.lo = lo;
    return r;
}

/* a + b exactly, for any a, b (Knuth). */
PKV_HD pkvi_dd pkvi_two_sum(double a, double b)
{
    double s = a + b, bb = s - a;
    return pkvi_dd_make(s, (a - (s - bb)) + (b - bb));
}

/* a + b exactly, when |a| >= |b| or a == 0 (Dekker). */
PKV_HD pkvi_dd pkvi_fast_two_sum(double a, double b)
{
    double s = a + b;
    return pkvi_dd_make(s, b - (s - a));
}

/* a * b exactly (barring underflow), via one fma. */
PKV_HD pkvi_dd pkvi_two_prod(double a, double b)
{
    double p = a * b;
    return pkvi_dd_make(p, fma(a, b, -p));
}

PKV_HD pkvi_dd pkvi_dd_add(pkvi_dd x, pkvi_dd y)
{
    pkvi_dd s = pkvi_two_sum(x.hi, y.hi), t = pkvi_two_sum(x.lo, y.lo);
    s.lo += t.hi;
    s = pkvi_fast_two_sum(s.hi, s.lo);
    s.lo += t.lo;
    return pkvi_fast_two_sum(s.hi, s.lo);
}

PKV_HD pkvi_dd pkvi_dd_neg(pkvi_dd x) { return pkvi_dd_make(-x.hi, -x.lo); }

PKV_HD pkvi_dd pkvi_dd_mul(pkvi_dd x, pkvi_dd y)
{
    pkvi_dd p = pkvi_two_prod(x.hi, y.hi);
    p.lo += x.hi * y.lo + x.lo * y.hi;
    return pkvi_fast_two_sum(p.hi, p.lo);
}

PKV_HD pkvi_dd pkvi_dd_mul_d(pkvi_dd x, double d)
{
    pkvi_dd p = pkvi_two_prod(x.hi, d);
    p.lo += x.lo * d;
    return pkvi_fast_two_sum(p.hi, p.lo);
}

/* x / y by two correction steps of the quotient. */
PKV_HD pkvi_dd pkvi_dd_div(pkvi_dd x, pkvi_dd y)
{
    double q1 = x.hi / y.hi, q2, q3;
    pkvi_dd r = pkvi_dd_add(x, pkvi_dd_neg(pkvi_dd_mul_d(y, q1)));
    q2 = r.hi / y.hi;
    r = pkvi_dd_add(r, pkvi_dd_neg(pkvi_dd_mul_d(y, q2)));
    q3 = r.hi / y.hi;
    r = pkvi_fast_two_sum(q1, q2);
    return pkvi_dd_add(r, pkvi_dd_make(q3, 0.0));
}

/* The binary32 nearest to hi + lo (ties to even), subnormal results included. (float)hi is
 * the nearest binary32 to hi; hi + lo can round differently only when hi is exactly halfway
 * between two binary32 values (|lo| is below half an ulp of hi, far below the binary32
 * spacing), and then lo's sign decides. */
PKV_HD float pkvi_dd_to_f32(pkvi_dd x)
{
    float f = (float)x.hi;
    double fd = (double)f;
    if (fd != x.hi && x.lo != 0.0) {
        uint32_t fb = pkvi_f32_bits(f);
        /* the binary32 on the other side of hi (f is never Inf or NaN here for our uses) */
        int away = (x.hi > fd) == ((fb >> 31) == 0u); /* sign bit: -0 counts as negative */
        float g = pkvi_f32_from_bits(away ? fb + 1u : fb - 1u);
        if ((fd + (double)g) * 0.5 == x.hi && ((x.lo > 0.0) == (x.hi > fd))) return g;
    }
    return f;
}

#endif
