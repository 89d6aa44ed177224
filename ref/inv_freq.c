/* The RoPE inverse frequencies theta^(-2p / rotary_dim), correctly rounded to binary32.
 *
 * Computed on the host only, once per table, and handed to every backend, so host and device
 * can never disagree. Method: ln(theta) and exp() in double-double arithmetic (ref/dd.h),
 * about 2^-96 relative error at the end (22-term atanh series for the log, a 10-term Taylor
 * series of exp(r / 256) squared 8 times), then one correct rounding of the double-double to
 * binary32. The exact result is never a binary32 midpoint: theta^(-a/b) = y with y having an
 * odd significand of 25 bits would make theta^a = y^-b dyadic, which forces y to be a power of
 * two. The MPFR tests (t/inv_freq) check every pair of the common (theta, rotary_dim) grid and
 * random inputs. */
#include "config.h"
#include "pagedkv.h"
#include "dd.h"
#include "../lib/status.h"

#include <math.h>

static const pkvi_dd LN2 = {0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56};

/* ln(theta) for binary32 theta >= 1. theta = m 2^E with m in [sqrt(1/2), sqrt(2)), and
 * ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = (m - 1) / (m + 1), |s| < 0.172. */
static pkvi_dd dd_log_f32(float theta)
{
    uint32_t u = pkvi_f32_bits(theta);
    int e = (int)(u >> 23) - 127;
    double m = (double)pkvi_f32_from_bits((u & 0x7fffffu) | 0x3f800000u);
    pkvi_dd s, z, acc;
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e += 1;
    }
    /* m - 1 and m + 1 are exact: m has 24 significant bits */
    s = pkvi_dd_div(pkvi_dd_make(m - 1.0, 0.0), pkvi_dd_make(m + 1.0, 0.0));
    z = pkvi_dd_mul(s, s);
    acc = pkvi_dd_div(pkvi_dd_make(1.0, 0.0), pkvi_dd_make(45.0, 0.0)); /* k = 22: z^23/47 < 2^-121 */
    for (int k = 21; k >= 0; k--)
        acc = pkvi_dd_add(pkvi_dd_div(pkvi_dd_make(1.0, 0.0), pkvi_dd_make(2.0 * k + 1.0, 0.0)),
                          pkvi_dd_mul(z, acc));
    acc = pkvi_dd_mul_d(pkvi_dd_mul(s, acc), 2.0);
    return pkvi_dd_add(pkvi_dd_mul_d(LN2, (double)e), acc);
}

/* exp(x) for x in [-89, 0]: x = k ln2 + r, |r| <= ln2/2; exp(r) = exp(r/256)^256. */
static pkvi_dd dd_exp(pkvi_dd x)
{
    double kd = x.hi * 1.4426950408889634;
    int k = (int)(kd < 0 ? kd - 0.5 : kd + 0.5);
    pkvi_dd r = pkvi_dd_add(x, pkvi_dd_neg(pkvi_dd_mul_d(LN2, (double)k))), y;
    r.hi *= 0x1p-8; /* exact */
    r.lo *= 0x1p-8;
    y = pkvi_dd_make(1.0, 0.0);
    for (int n = 10; n >= 1; n--) /* 1 + r(1 + r/2(1 + r/3(...))): |r|^11/11! < 2^-130 */
        y = pkvi_dd_add(pkvi_dd_make(1.0, 0.0),
                        pkvi_dd_div(pkvi_dd_mul(y, r), pkvi_dd_make((double)n, 0.0)));
    for (int i = 0; i < 8; i++) y = pkvi_dd_mul(y, y);
    {
        double scale = pkvi_f64_from_bits((uint64_t)(1023 + k) << 52); /* 2^k, k >= -129 */
        return pkvi_dd_make(y.hi * scale, y.lo * scale);
    }
}

static pkv_status check_args(float theta, uint32_t rotary_dim)
{
    if (!(theta >= 1.0f && theta <= 0x1.fffffep127f))
        return pkvi_fail(PKV_EINVAL, "inv_freq: theta (%g) must be finite and >= 1",
                         (double)theta);
    if (rotary_dim < 2 || rotary_dim % 2)
        return pkvi_fail(PKV_EINVAL, "inv_freq: rotary_dim (%u) must be even and >= 2",
                         rotary_dim);
    return PKV_OK;
}

static float inv_freq_one(pkvi_dd ln_theta, uint32_t rotary_dim, uint32_t p)
{
    pkvi_dd x;
    if (p == 0) return 1.0f;
    x = pkvi_dd_mul_d(ln_theta, -2.0 * (double)p); /* 2p < 2^32: exact as a double */
    x = pkvi_dd_div(x, pkvi_dd_make((double)rotary_dim, 0.0));
    return pkvi_dd_to_f32(dd_exp(x));
}

pkv_status pkv_inv_freq(float theta, uint32_t rotary_dim, uint32_t p, float *out)
{
    pkv_status st;
    pkvi_clear_error();
    if ((st = check_args(theta, rotary_dim))) return st;
    if (p >= rotary_dim / 2)
        return pkvi_fail(PKV_EINVAL, "inv_freq: p (%u) must be < rotary_dim / 2 (%u)", p,
                         rotary_dim / 2);
    if (!out) return pkvi_fail(PKV_EINVAL, "inv_freq: out is NULL");
    *out = inv_freq_one(dd_log_f32(theta), rotary_dim, p);
    return PKV_OK;
}

pkv_status pkv_inv_freq_table(float theta, uint32_t rotary_dim, float *out)
{
    pkv_status st;
    pkvi_dd ln_theta;
    pkvi_clear_error();
    if ((st = check_args(theta, rotary_dim))) return st;
    if (!out) return pkvi_fail(PKV_EINVAL, "inv_freq_table: out is NULL");
    ln_theta = dd_log_f32(theta);
    for (uint32_t p = 0; p < rotary_dim / 2; p++) out[p] = inv_freq_one(ln_theta, rotary_dim, p);
    return PKV_OK;
}
