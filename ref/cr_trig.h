/* Correctly rounded binary32 sine and cosine (round to nearest even), one portable source for
 * the host and the CUDA device. Only IEEE basic operations, explicit fma() (inside ref/dd.h)
 * and integer arithmetic decide the result; no libm function, no long double, no __int128.
 *
 * Special values: sin(+-0) = +-0, cos(+-0) = 1; NaN and +-Inf give the quiet NaN 0x7FC00000.
 *
 * Method and error analysis (doc/SPEC.md, appendix "Correctly rounded sine and cosine"):
 *  1. Split. |x| = k pi/64 + r (mod 2 pi), |r| <= pi/128: below 2^20 by Cody-Waite with a
 *     three-part pi/64 (pkvi_trig_split_cw); above, by Payne-Hanek's quadrant reduction
 *     (x = m 2^e with m a 24-bit integer and e in [-24, 104]; x * 2/pi mod 4 is m times a
 *     192-bit window of 2/pi's bits starting where m 2^e b_j 2^-j stops being a multiple of 4;
 *     the product gives the quadrant q and the fraction f in [-1/2, 1/2) with 190 fraction
 *     bits, the bits past the window adding less than 2^-166) followed by the nearest
 *     multiple of 1/32 of a quadrant. r is within 2^-51.4 |r| (tools/trig_reduce_check
 *     measures it on every input).
 *  2. Fast path, binary64: sin and cos of u = (k mod 32) pi/64 + r from a table of the 32
 *     sin and cos of j pi/64 and short Taylor polynomials in r (pkvi_trig_fast); the result y
 *     is within 2^-50.2 |y|. The quadrant k / 32 picks and signs sin u or cos u. The path is
 *     taken only when y (1 - 2^-47) and y (1 + 2^-47) round to the same binary32, so the exact
 *     value rounds to it too.
 *  3. Accurate path, double-double (about 2^-100 relative): taken for the rest, about one input
 *     in four million: Payne-Hanek (none below pi/4) and series to 2^-108; rounding the
 *     double-double to binary32 is exact (pkvi_dd_to_f32). sin and cos of a nonzero binary32
 *     are transcendental, never a binary32 midpoint; the exhaustive comparison with MPFR on
 *     all 2^32 inputs (doc/VERIFICATION.md) shows no input is closer to one than this path
 *     resolves. */
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

/* Payne-Hanek's reduced argument: |x| = (q + f) pi/2 (mod 2 pi), f in [-1/2, 1/2) a normalised
 * double-double. */
typedef struct pkvi_trig_arg {
    int q; /* quadrant, 0..3 */
    pkvi_dd f;
} pkvi_trig_arg;

/* Payne-Hanek for |x| >= 0x3f490fdb, a = the bits of |x|. */
PKV_HD pkvi_trig_arg pkvi_trig_reduce_large(uint32_t a)
{
    pkvi_trig_arg out;
    uint64_t m = (a & 0x7fffffu) | 0x800000u;
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
    return out;
}

/* The fast path's split of |x|: |x| = k pi/64 + r (mod 2 pi), k taken mod 128 (the quadrant
 * k / 32 and the table entry k % 32), r in binary64 with |r| <= pi/128 (1 + 2^-40). */
typedef struct pkvi_trig_split {
    uint32_t k;
    double r;
} pkvi_trig_split;

/* Cody-Waite for |x| < 2^20: k = the integer nearest RN(|x| 64/pi) (< 2^25, read from the low
 * bits of the rounding sum), r = ((|x| - k C1) - k C2) - k C3 with pi/64 = C1 + C2 + C3 + (below
 * 2^-119): C1 and C2 of at most 28 bits, so k C1 and k C2 are exact, and |x| - k C1 is exact
 * (for k >= 1 both are multiples of 2^-32 and the difference is below 2^-4). The two roundings
 * left are relative to r; k C3 and the truncation add under 2^-87 absolute. */
PKV_HD pkvi_trig_split pkvi_trig_split_cw(uint32_t a)
{
    const double C1 = 0x1.921fb54p-5, C2 = 0x1.10b461p-35, C3 = 0x1.a62633145c06ep-63;
    const double SIXTYFOUR_OVER_PI = 0x1.45f306dc9c883p+4, ROUND = 0x1.8p52;
    pkvi_trig_split out;
    double x = (double)pkvi_f32_from_bits(a), kr = x * SIXTYFOUR_OVER_PI + ROUND, k = kr - ROUND;
    out.k = (uint32_t)pkvi_f64_bits(kr); /* the significand's low bits: 2^51 + k */
    out.r = ((x - k * C1) - k * C2) - k * C3;
    return out;
}

/* |x| >= 2^20: Payne-Hanek, then k = 32 q + j with j the integer nearest 32 f (|j| <= 16):
 * f - j/32 is exact (Sterbenz: f.hi is within 1/64 of j/32), and r = RN(RN(f - j/32 + f.lo)
 * RN(pi/2)), within 2^-51.4 |r| (2^-100 absolute of f is negligible: only j = 0, where r is
 * relative to f itself, needs the relative error, as in the quadrant reduction). */
PKV_HD_COLD pkvi_trig_split pkvi_trig_split_large(uint32_t a)
{
    const double PIO2_HI = 0x1.921fb54442d18p+0, ROUND = 0x1.8p52;
    pkvi_trig_arg t = pkvi_trig_reduce_large(a);
    pkvi_trig_split out;
    double jr = t.f.hi * 32.0 + ROUND, j = jr - ROUND;
    out.k = ((uint32_t)t.q * 32u + (uint32_t)pkvi_f64_bits(jr)) & 127u; /* j mod 2^32 */
    out.r = ((t.f.hi - j * 0x1p-5) + t.f.lo) * PIO2_HI;
    return out;
}

PKV_HD pkvi_trig_split pkvi_trig_split_arg(uint32_t a)
{
    return a < 0x49800000u ? pkvi_trig_split_cw(a) : pkvi_trig_split_large(a);
}

/* RN(sin(j pi/64)), RN(cos(j pi/64)) for j = 0..31 (mpmath at 400 bits, rounded once). The
 * device reads its own copy from global memory: each thread of a warp may want another entry,
 * which constant memory would serialise. */
#define PKVI_TRIG_TABLE                                                                          \
    {                                                                                            \
        {0.0, 0x1.0000000000000p+0}, {0x1.91f65f10dd814p-5, 0x1.ff621e3796d7ep-1},               \
        {0x1.917a6bc29b42cp-4, 0x1.fd88da3d12526p-1},                                            \
        {0x1.2c8106e8e613ap-3, 0x1.fa7557f08a517p-1},                                            \
        {0x1.8f8b83c69a60bp-3, 0x1.f6297cff75cb0p-1},                                            \
        {0x1.f19f97b215f1bp-3, 0x1.f0a7efb9230d7p-1},                                            \
        {0x1.294062ed59f06p-2, 0x1.e9f4156c62ddap-1},                                            \
        {0x1.58f9a75ab1fddp-2, 0x1.e212104f686e5p-1},                                            \
        {0x1.87de2a6aea963p-2, 0x1.d906bcf328d46p-1},                                            \
        {0x1.b5d1009e15cc0p-2, 0x1.ced7af43cc773p-1},                                            \
        {0x1.e2b5d3806f63bp-2, 0x1.c38b2f180bdb1p-1},                                            \
        {0x1.073879922ffeep-1, 0x1.b728345196e3ep-1},                                            \
        {0x1.1c73b39ae68c8p-1, 0x1.a9b66290ea1a3p-1},                                            \
        {0x1.30ff7fce17035p-1, 0x1.9b3e047f38741p-1},                                            \
        {0x1.44cf325091dd6p-1, 0x1.8bc806b151741p-1},                                            \
        {0x1.57d69348ceca0p-1, 0x1.7b5df226aafafp-1},                                            \
        {0x1.6a09e667f3bcdp-1, 0x1.6a09e667f3bcdp-1},                                            \
        {0x1.7b5df226aafafp-1, 0x1.57d69348ceca0p-1},                                            \
        {0x1.8bc806b151741p-1, 0x1.44cf325091dd6p-1},                                            \
        {0x1.9b3e047f38741p-1, 0x1.30ff7fce17035p-1},                                            \
        {0x1.a9b66290ea1a3p-1, 0x1.1c73b39ae68c8p-1},                                            \
        {0x1.b728345196e3ep-1, 0x1.073879922ffeep-1},                                            \
        {0x1.c38b2f180bdb1p-1, 0x1.e2b5d3806f63bp-2},                                            \
        {0x1.ced7af43cc773p-1, 0x1.b5d1009e15cc0p-2},                                            \
        {0x1.d906bcf328d46p-1, 0x1.87de2a6aea963p-2},                                            \
        {0x1.e212104f686e5p-1, 0x1.58f9a75ab1fddp-2},                                            \
        {0x1.e9f4156c62ddap-1, 0x1.294062ed59f06p-2},                                            \
        {0x1.f0a7efb9230d7p-1, 0x1.f19f97b215f1bp-3},                                            \
        {0x1.f6297cff75cb0p-1, 0x1.8f8b83c69a60bp-3},                                            \
        {0x1.fa7557f08a517p-1, 0x1.2c8106e8e613ap-3},                                            \
        {0x1.fd88da3d12526p-1, 0x1.917a6bc29b42cp-4},                                            \
        {0x1.ff621e3796d7ep-1, 0x1.91f65f10dd814p-5},                                            \
    }
#if defined(__CUDACC__)
static __device__ const double __align__(16) pkvi_trig_table_dev[32][2] = PKVI_TRIG_TABLE;
#endif
static const double pkvi_trig_table_host[32][2] = PKVI_TRIG_TABLE;

/* sin u and cos u for u = j pi/64 + r (j = k % 32, so u in [-pi/128, pi/2)): with S = sin(j
 * pi/64), C = cos(j pi/64) from the table, sin u = S + (S (cos r - 1) + C sin r) and cos u =
 * C + (C (cos r - 1) - S sin r). Taylor to r^7 (sin r) and r^8 (cos r - 1): truncation below
 * 2^-61 relative for |r| <= pi/128. For j = 0 the result is sin r or cos r itself, within
 * 2^-51.9; for j >= 1, S and C are at least sin(pi/64) and the result at least half of the
 * table entry it starts from, so the table's rounding, the correction's (below 2^-56.9 of an
 * at most 0.0246 correction) and the last addition's add up to under 2^-50.2 relative. */
PKV_HD void pkvi_trig_fast(const pkvi_trig_split *sp, double *su, double *cu)
{
#if defined(__CUDA_ARCH__)
    const double *T = pkvi_trig_table_dev[sp->k & 31u];
#else
    const double *T = pkvi_trig_table_host[sp->k & 31u];
#endif
    double r = sp->r, z = r * r, S = T[0], C = T[1];
    double ps = -0x1.a01a01a01a01ap-13;                /* -1/7! */
    ps = 0x1.1111111111111p-7 + z * ps;                /* 1/5! */
    ps = -0x1.5555555555555p-3 + z * ps;               /* -1/3! */
    double pc = 0x1.a01a01a01a01ap-16;                 /* 1/8! */
    pc = -0x1.6c16c16c16c17p-10 + z * pc;              /* -1/6! */
    pc = 0x1.5555555555555p-5 + z * pc;                /* 1/4! */
    pc = -0.5 + z * pc;                                /* -1/2! */
    double sr = r + (r * z) * ps, cm1 = z * pc;
    *su = S + (S * cm1 + C * sr);
    *cu = C + (C * cm1 - S * sr);
}

/* sin and cos of a double-double r, |r| <= 0.786: sin r = r (1 - z/(2.3) (1 - z/(4.5) (1 - ...))), to r^29;
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
    /* |y| by clearing the sign bit: one integer operation, where a compare and a negation
     * take two binary64 instructions on the device */
    double d = pkvi_f64_from_bits(pkvi_f64_bits(y) & 0x7fffffffffffffffu) * 0x1p-47;
    float lo = (float)(y - d), hi = (float)(y + d);
    return pkvi_f32_bits(lo) == pkvi_f32_bits(hi) ? lo : pkvi_f32_from_bits(0x7fc00000u);
}

/* f, the magnitude of sin (which = 0) or cos (which = 1) of a reduced argument in quadrant q,
 * with its sign: cos(x) = sin(x + pi/2), and quadrants 2 and 3 negate; negate: x < 0, for sin. */
PKV_HD float pkvi_trig_signed(int q, int which, int negate, float f)
{
    return (((q + which) & 3) >> 1) ^ negate ? -f : f;
}

/* The accurate path (which = 0: sin, 1: cos) of the input with bits a = |x|: the reduced
 * argument in double-double (none below pi/4, else Payne-Hanek) and the series to 2^-108. */
PKV_HD_COLD float pkvi_trig_eval_accurate(uint32_t a, int which, int negate, int *slow)
{
    const pkvi_dd PIO2 = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};
    pkvi_trig_arg t;
    pkvi_dd rr;
    if (a < 0x3f490fdbu) {
        t.q = 0;
        rr = pkvi_dd_make((double)pkvi_f32_from_bits(a), 0.0);
    } else {
        t = pkvi_trig_reduce_large(a);
        rr = pkvi_dd_mul(t.f, PIO2);
    }
    if (slow) (*slow)++;
    return pkvi_trig_signed(
        t.q, which, negate,
        pkvi_dd_to_f32((t.q + which) & 1 ? pkvi_cos_dd(rr) : pkvi_sin_dd(rr)));
}

/* The rest of sin and cos of x (bits u, |x| bits a) once pkvi_trig_fast gave su, cu for the
 * split sp: sin x is +-sin u for an even quadrant, +-cos u for an odd one; cos x the other.
 * Each is the fast path's rounding when that is certain, else the accurate path's. */
PKV_HD void pkvi_trig_finish(uint32_t u, const pkvi_trig_split *sp, double su, double cu,
                             float *s, float *c, int *slow)
{
    const uint32_t a = u & 0x7fffffffu;
    const int q = (int)(sp->k >> 5) & 3;
    float fs = pkvi_trig_round_fast(q & 1 ? cu : su), fc = pkvi_trig_round_fast(q & 1 ? su : cu);
    *s = fs == fs ? pkvi_trig_signed(q, 0, (int)(u >> 31), fs)
                  : pkvi_trig_eval_accurate(a, 0, (int)(u >> 31), slow);
    *c = fc == fc ? pkvi_trig_signed(q, 1, 0, fc) : pkvi_trig_eval_accurate(a, 1, 0, slow);
}

/* sin and cos of x; *slow (if not NULL) counts accurate-path evaluations. */
PKV_HD void pkvi_sincosf_cr(float x, float *s, float *c, int *slow)
{
    uint32_t u = pkvi_f32_bits(x);
    pkvi_trig_split sp;
    double su, cu;
    if ((u & 0x7fffffffu) >= 0x7f800000u) { /* NaN or Inf */
        *s = *c = pkvi_f32_from_bits(0x7fc00000u);
        return;
    }
    sp = pkvi_trig_split_arg(u & 0x7fffffffu);
    pkvi_trig_fast(&sp, &su, &cu);
    pkvi_trig_finish(u, &sp, su, cu, s, c, slow);
}

/* sin (which = 0) or cos (which = 1) of x alone. */
PKV_HD float pkvi_sin_or_cos_cr(float x, int which)
{
    float s, c;
    pkvi_sincosf_cr(x, &s, &c, 0);
    return which ? c : s;
}

PKV_HD float pkvi_sinf_cr(float x) { return pkvi_sin_or_cos_cr(x, 0); }

PKV_HD float pkvi_cosf_cr(float x) { return pkvi_sin_or_cos_cr(x, 1); }

#endif
