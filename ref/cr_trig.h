/* Correctly rounded binary32 sine and cosine (round to nearest even), one portable source for
 * the host and the CUDA device. Only IEEE basic operations, explicit fma() (inside ref/dd.h)
 * and integer arithmetic decide the result; no libm function, no long double, no __int128.
 *
 * Special values: sin(+-0) = +-0, cos(+-0) = 1; NaN and +-Inf give the quiet NaN 0x7FC00000.
 *
 * Method and error analysis (doc/SPEC.md, appendix "Correctly rounded sine and cosine"):
 *  1. Reduction. |x| < 0x3f490fdb (just above pi/4): r = x exactly, quadrant 0. Below 2^20
 *     the fast path reduces by Cody-Waite (pkvi_trig_reduce_cw: r within 2^-51.9 |r|, inside
 *     the 2^-51.4 budget of step 2) and only the accurate path uses Payne-Hanek. Otherwise
 *     Payne-Hanek: x = m 2^e with m a 24-bit integer and e in [-24, 104]; x * 2/pi mod 4 is
 *     m times a 192-bit window of 2/pi's bits starting where m 2^e b_j 2^-j stops being a
 *     multiple of 4. The product gives the quadrant q and the fraction f in [-1/2, 1/2) with
 *     190 fraction bits; the bits of 2/pi past the window add less than 2^24 2^-190 = 2^-166.
 *     The smallest |f| of any binary32 input is far above 2^-60 (|x - k pi/2| over all floats),
 *     so f is known to better than 2^-100 relative; r = f pi/2.
 *  2. Fast path, binary64: r_d = RN(RN(f) * RN(pi/2)) has relative error below 2^-51.4; the
 *     Taylor polynomials (to r^19 for sin, r^20 for cos; truncation below 2^-63 for |r| <=
 *     0.786) add under 2^-52.4 of rounding error, and sin and cos do not amplify a relative
 *     error of r (|r cot r| <= 1, |r tan r| < 1). The result y is thus within 2^-50.5 |y|; the
 *     path is taken only when y (1 - 2^-47) and y (1 + 2^-47) round to the same binary32, so
 *     the exact value rounds to it too.
 *  3. Accurate path, double-double (about 2^-100 relative): taken for the rest, which the
 *     exhaustive tests show is about one input in four million; rounding the double-double to
 *     binary32 is exact (pkvi_dd_to_f32). sin and cos of a nonzero binary32 are transcendental,
 *     never a binary32 midpoint; the exhaustive comparison with MPFR on all 2^32 inputs
 *     (doc/VERIFICATION.md) shows no input is closer to one than this path resolves. */
#ifndef PKV_CR_TRIG_H
#define PKV_CR_TRIG_H

#include "dd.h"

#if defined(__CUDA_ARCH__)
#define PKVI_MUL64HI(a, b) __umul64hi((a), (b))
#define PKVI_CLZ64(a) __clzll((long long)(a))
#else
/* The high 64 bits of a 64x64-bit product, from 32-bit halves. */
static inline uint64_t pkvi_mul64hi(uint64_t a, uint64_t b)
{
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
#define PKVI_MUL64HI(a, b) pkvi_mul64hi((a), (b))
#if defined(__GNUC__)
#define PKVI_CLZ64(a) __builtin_clzll(a)
#else
static inline int pkvi_clz64(uint64_t a)
{
    int n = 0;
    while (!(a & 0x8000000000000000u)) {
        a <<= 1;
        n++;
    }
    return n;
}
#define PKVI_CLZ64(a) pkvi_clz64(a)
#endif
#endif

/* 2^k for k in [-1022, 1023], exactly. */
PKV_HD double pkvi_pow2(int k) { return pkvi_f64_from_bits((uint64_t)(1023 + k) << 52); }

/* 64 bits of 2/pi starting at bit j (bit 1 is the first after the binary point; bits j <= 0
 * are zero). Bits 1..448 are stored: j + 63 <= 104 - 1 + 191 + 63 stays inside. */
PKV_HD uint64_t pkvi_two_over_pi_bits(int j)
{
    const uint64_t w[8] = {0x0000000000000000u, 0xa2f9836e4e441529u, 0xfc2757d1f534ddc0u,
                           0xdb6295993c439041u, 0xfe5163abdebbc561u, 0xb7246e3a424dd2e0u,
                           0x06492eea09d1921cu, 0xfe1deb1cb129a73eu};
    int pos = j + 63; /* bit index into w[], where w[1] holds bits 1..64 */
    int i = pos / 64, s = pos % 64;
    return s ? (w[i] << s) | (w[i + 1] >> (64 - s)) : w[i];
}

/* The reduced argument of one input: x = (q + f) pi/2 with f in [-1/2, 1/2). f is a
 * normalised double-double. */
typedef struct pkvi_trig_arg {
    int q;      /* quadrant, 0..3 */
    pkvi_dd f;  /* fraction of a quadrant; the argument is exact when the input is small */
    int small;  /* 1: no reduction, f holds x itself (in radians, not quadrants) */
    int cw;     /* 1: Cody-Waite, r alone is known (binary64, radians); f is not set */
    double r;
    uint32_t a; /* the bits of |x| */
} pkvi_trig_arg;

/* Payne-Hanek for |x| >= 0x3f490fdb, a = the bits of |x|. */
PKV_HD pkvi_trig_arg pkvi_trig_reduce_large(uint32_t a)
{
    pkvi_trig_arg out;
    uint64_t m = (a & 0x7fffffu) | 0x800000u;
    out.cw = 0;
    out.r = 0.0;
    out.a = a;
    int e = (int)(a >> 23) - 150, j0 = e - 1, neg = 0, s;
    uint64_t w0 = pkvi_two_over_pi_bits(j0), w1 = pkvi_two_over_pi_bits(j0 + 64),
             w2 = pkvi_two_over_pi_bits(j0 + 128);
    /* P = m * (w0:w1:w2), 216 bits; x 2/pi = P 2^-190 (mod 4) */
    uint64_t l2 = m * w2, h2 = PKVI_MUL64HI(m, w2), l1 = m * w1, h1 = PKVI_MUL64HI(m, w1),
             l0 = m * w0;
    uint64_t p0 = l2, p1 = h2 + l1, c1 = p1 < l1, p2 = h1 + l0 + c1, f2, f1, f0, hi, lo;
    out.q = (int)(p2 >> 62);
    f2 = p2 & 0x3fffffffffffffffu;
    f1 = p1;
    f0 = p0;
    if (f2 >> 61) { /* f >= 1/2: take f - 1 and the next quadrant */
        neg = 1;
        out.q = (out.q + 1) & 3;
        /* 2^190 - F over three words */
        f0 = ~f0 + 1u;
        f1 = ~f1 + (f0 == 0u);
        f2 = ((~f2) & 0x3fffffffffffffffu) + (f0 == 0u && f1 == 0u);
    }
    /* normalise F into a 128-bit N with its top bit set: F = N 2^-s (roughly) */
    if (f2) {
        int lz = PKVI_CLZ64(f2); /* >= 2 */
        hi = (f2 << lz) | (f1 >> (64 - lz));
        lo = (f1 << lz) | (f0 >> (64 - lz));
        s = lz - 64;
    } else if (f1) {
        int lz = PKVI_CLZ64(f1);
        hi = lz ? (f1 << lz) | (f0 >> (64 - lz)) : f1;
        lo = f0 << lz;
        s = lz;
    } else if (f0) {
        int lz = PKVI_CLZ64(f0);
        hi = f0 << lz;
        lo = 0;
        s = 64 + lz;
    } else {
        out.f = pkvi_dd_make(0.0, 0.0);
        out.small = 0;
        return out;
    }
    /* N = hi53 2^75 + rest 2^11 + (below 2^11); f = N 2^(-s-190) */
    {
        uint64_t hi53 = hi >> 11, rest = ((hi & 0x7ffu) << 53) | (lo >> 11);
        double dh = (double)hi53 * pkvi_pow2(75 - s - 190);
        double dl = (double)rest * pkvi_pow2(11 - s - 190);
        out.f = pkvi_fast_two_sum(dh, dl);
        if (neg) out.f = pkvi_dd_neg(out.f);
    }
    out.small = 0;
    return out;
}

/* Cody-Waite for 0x3f490fdb <= |x| < 2^20: k = the integer nearest RN(|x| 2/pi) (< 2^20),
 * r = ((|x| - k C1) - k C2) - k C3 with pi/2 = C1 + C2 + C3 + (below 2^-122), C1 and C2 of
 * 33 bits, so k C1 and k C2 are exact, |x| - k C1 is exact (a multiple of 2^-32 below 1), and
 * the two remaining roundings are relative to r; k C3 and the truncation of pi/2 add under
 * 2^-98 absolute, below 2^-70 |r| since every binary32 input in this range has |r| above
 * 2^-28 (tools/trig_reduce_check measures the minimum over all of them). */
PKV_HD pkvi_trig_arg pkvi_trig_reduce_cw(uint32_t a)
{
    const double C1 = 0x1.921fb544p+0, C2 = 0x1.0b4611a6p-34, C3 = 0x1.3198a2e037073p-69;
    const double TWO_OVER_PI = 0x1.45f306dc9c883p-1, ROUND = 0x1.8p52; /* RN to an integer */
    pkvi_trig_arg out;
    double x = (double)pkvi_f32_from_bits(a), y = x * TWO_OVER_PI;
    double k = (y + ROUND) - ROUND;
    out.q = (int)((uint32_t)k & 3u);
    out.r = ((x - k * C1) - k * C2) - k * C3;
    out.f = pkvi_dd_make(0.0, 0.0);
    out.small = 0;
    out.cw = 1;
    out.a = a;
    return out;
}

PKV_HD pkvi_trig_arg pkvi_trig_reduce(float x)
{
    uint32_t a = pkvi_f32_bits(x) & 0x7fffffffu;
    pkvi_trig_arg out;
    if (a < 0x3f490fdbu) {
        out.q = 0;
        out.f = pkvi_dd_make((double)pkvi_f32_from_bits(a), 0.0);
        out.small = 1;
        out.cw = 0;
        out.r = 0.0;
        out.a = a;
        return out;
    }
    if (a < 0x49800000u) return pkvi_trig_reduce_cw(a);
    return pkvi_trig_reduce_large(a);
}

/* sin(r) and cos(r) for |r| <= 0.786 in binary64 (Taylor, Horner in z = r^2). */
PKV_HD double pkvi_sin_poly(double r)
{
    double z = r * r;
    double p = -0x1.2f49b46814157p-57;                 /* -1/19! */
    p = 0x1.952c77030ad4ap-49 + z * p;                 /* 1/17! */
    p = -0x1.ae7f3e733b81fp-41 + z * p;                /* -1/15! */
    p = 0x1.6124613a86d09p-33 + z * p;                 /* 1/13! */
    p = -0x1.ae64567f544e4p-26 + z * p;                /* -1/11! */
    p = 0x1.71de3a556c734p-19 + z * p;                 /* 1/9! */
    p = -0x1.a01a01a01a01ap-13 + z * p;                /* -1/7! */
    p = 0x1.1111111111111p-7 + z * p;                  /* 1/5! */
    p = -0x1.5555555555555p-3 + z * p;                 /* -1/3! */
    return r + (r * z) * p;
}

PKV_HD double pkvi_cos_poly(double r)
{
    double z = r * r;
    double p = 0x1.e542ba4020225p-62;                  /* 1/20! */
    p = -0x1.6827863b97d97p-53 + z * p;                /* -1/18! */
    p = 0x1.ae7f3e733b81fp-45 + z * p;                 /* 1/16! */
    p = -0x1.93974a8c07c9dp-37 + z * p;                /* -1/14! */
    p = 0x1.1eed8eff8d898p-29 + z * p;                 /* 1/12! */
    p = -0x1.27e4fb7789f5cp-22 + z * p;                /* -1/10! */
    p = 0x1.a01a01a01a01ap-16 + z * p;                 /* 1/8! */
    p = -0x1.6c16c16c16c17p-10 + z * p;                /* -1/6! */
    p = 0x1.5555555555555p-5 + z * p;                  /* 1/4! */
    p = -0.5 + z * p;                                  /* -1/2! */
    return 1.0 + z * p;
}

/* The same in double-double: sin r = r (1 - z/(2.3) (1 - z/(4.5) (1 - ...))), to r^29;
 * cos r = 1 - z/(1.2) (1 - z/(3.4) (1 - ...)), to r^30. Truncation below 2^-108. */
PKV_HD pkvi_dd pkvi_sin_dd(pkvi_dd r)
{
    pkvi_dd z = pkvi_dd_mul(r, r), acc = pkvi_dd_make(1.0, 0.0);
    for (int k = 14; k >= 1; k--) {
        pkvi_dd t = pkvi_dd_div(pkvi_dd_mul(z, acc), pkvi_dd_make((2.0 * k) * (2.0 * k + 1), 0));
        acc = pkvi_dd_add(pkvi_dd_make(1.0, 0.0), pkvi_dd_neg(t));
    }
    return pkvi_dd_mul(r, acc);
}

PKV_HD pkvi_dd pkvi_cos_dd(pkvi_dd r)
{
    pkvi_dd z = pkvi_dd_mul(r, r), acc = pkvi_dd_make(1.0, 0.0);
    for (int k = 15; k >= 1; k--) {
        pkvi_dd t =
            pkvi_dd_div(pkvi_dd_mul(z, acc), pkvi_dd_make((2.0 * k - 1) * (2.0 * k), 0));
        acc = pkvi_dd_add(pkvi_dd_make(1.0, 0.0), pkvi_dd_neg(t));
    }
    return acc;
}

/* The binary32 that y rounds to if every value within 2^-47 |y| rounds to it; else NaN. */
PKV_HD float pkvi_trig_round_fast(double y)
{
    double d = (y < 0 ? -y : y) * 0x1p-47;
    float lo = (float)(y - d), hi = (float)(y + d);
    return pkvi_f32_bits(lo) == pkvi_f32_bits(hi) ? lo : pkvi_f32_from_bits(0x7fc00000u);
}

/* The binary64 argument the fast path evaluates its polynomial at. */
PKV_HD double pkvi_trig_fast_r(const pkvi_trig_arg *t)
{
    const double PIO2_HI = 0x1.921fb54442d18p+0;
    return t->cw ? t->r : t->small ? t->f.hi : (t->f.hi + t->f.lo) * PIO2_HI;
}

/* f, the magnitude of sin (which = 0) or cos (which = 1) of a reduced argument, with its sign:
 * cos(x) = sin(x + pi/2), and quadrants 2 and 3 negate; negate: x < 0, for sin. */
PKV_HD float pkvi_trig_signed(const pkvi_trig_arg *t, int which, int negate, float f)
{
    return (((t->q + which) & 3) >> 1) ^ negate ? -f : f;
}

/* The accurate path of pkvi_trig_eval (which = 0: sin, 1: cos): the reduced argument in
 * double-double and the series to 2^-108. */
PKV_HD_COLD float pkvi_trig_eval_accurate(const pkvi_trig_arg *t, int which, int negate, int *slow)
{
    const pkvi_dd PIO2 = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};
    pkvi_trig_arg ph;
    pkvi_dd rr;
    if (t->cw) { /* the accurate path needs Payne-Hanek's 2^-100; its quadrant may differ */
        ph = pkvi_trig_reduce_large(t->a);
        t = &ph;
    }
    rr = t->small ? t->f : pkvi_dd_mul(t->f, PIO2);
    if (slow) (*slow)++;
    return pkvi_trig_signed(
        t, which, negate,
        pkvi_dd_to_f32((t->q + which) & 1 ? pkvi_cos_dd(rr) : pkvi_sin_dd(rr)));
}

/* which = 0: sin, 1: cos. The quadrant rotates which function of r is evaluated. */
PKV_HD float pkvi_trig_eval(const pkvi_trig_arg *t, int which, int negate, int *slow)
{
    double r = pkvi_trig_fast_r(t);
    float f = pkvi_trig_round_fast((t->q + which) & 1 ? pkvi_cos_poly(r) : pkvi_sin_poly(r));
    if (f == f) return pkvi_trig_signed(t, which, negate, f);
    return pkvi_trig_eval_accurate(t, which, negate, slow);
}

/* sin and cos of x; *slow (if not NULL) counts accurate-path evaluations. One reduction and
 * both polynomials, whichever the quadrant: the same values as two pkvi_trig_eval calls
 * (sin x is +-sin r for an even quadrant, +-cos r for an odd one; cos x the other), without
 * choosing the polynomial at run time. */
PKV_HD void pkvi_sincosf_cr(float x, float *s, float *c, int *slow)
{
    uint32_t u = pkvi_f32_bits(x);
    pkvi_trig_arg t;
    double r, ys, yc;
    float fs, fc;
    if ((u & 0x7fffffffu) >= 0x7f800000u) { /* NaN or Inf */
        *s = *c = pkvi_f32_from_bits(0x7fc00000u);
        return;
    }
    t = pkvi_trig_reduce(x);
    r = pkvi_trig_fast_r(&t);
    ys = pkvi_sin_poly(r);
    yc = pkvi_cos_poly(r);
    fs = pkvi_trig_round_fast(t.q & 1 ? yc : ys);
    fc = pkvi_trig_round_fast(t.q & 1 ? ys : yc);
    *s = fs == fs ? pkvi_trig_signed(&t, 0, (int)(u >> 31), fs)
                  : pkvi_trig_eval_accurate(&t, 0, (int)(u >> 31), slow);
    *c = fc == fc ? pkvi_trig_signed(&t, 1, 0, fc) : pkvi_trig_eval_accurate(&t, 1, 0, slow);
}

/* sin (which = 0) or cos (which = 1) of x alone: the kernels hand the two to two threads. */
PKV_HD float pkvi_sin_or_cos_cr(float x, int which)
{
    uint32_t u = pkvi_f32_bits(x);
    pkvi_trig_arg t;
    if ((u & 0x7fffffffu) >= 0x7f800000u) return pkvi_f32_from_bits(0x7fc00000u);
    t = pkvi_trig_reduce(x);
    return pkvi_trig_eval(&t, which, which ? 0 : (int)(u >> 31), 0);
}

PKV_HD float pkvi_sinf_cr(float x) { return pkvi_sin_or_cos_cr(x, 0); }

PKV_HD float pkvi_cosf_cr(float x) { return pkvi_sin_or_cos_cr(x, 1); }

#endif
