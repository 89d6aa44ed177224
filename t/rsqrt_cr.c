/* rsqrt_cr: the special values, and every binary32 input in [1, 4) against MPFR's correctly
 * rounded mpfr_rec_sqrt. rsqrt(4y) = rsqrt(y) / 2 exactly in binary64 at every step and no
 * binary32 result is subnormal, so [1, 4) covers all positive inputs; the scaling identity is
 * itself checked on a sample of every binade. */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "par.h"
#include "pagedkv.h"

#include <math.h>
#include <string.h>
#if PKV_HAVE_MPFR
#include <mpfr.h>
#endif

#if PKV_HAVE_MPFR
static void check_mpfr(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    mpfr_t x, y;
    (void)ctx;
    mpfr_inits2(24, x, y, (mpfr_ptr)0);
    for (uint64_t i = b; i < e; i += stride) {
        float in = f32((uint32_t)i);
        mpfr_set_flt(x, in, MPFR_RNDN);
        mpfr_rec_sqrt(y, x, MPFR_RNDN);
        r->checked++;
        if (bits(pkv_rsqrtf_cr(in)) != bits(mpfr_get_flt(y, MPFR_RNDN))) par_fail(r, i);
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
    mpfr_free_cache();
}
#endif

/* Every binade maps onto [1, 4): rsqrt(y * 4^k) == rsqrt(y) * 2^-k, bit for bit. */
static void check_scaling(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    (void)ctx;
    for (uint64_t i = b; i < e; i += stride) {
        uint32_t u = (uint32_t)i;
        float y = f32(u), base, got, want;
        int ex;
        if (!(y > 0.0f) || isinf(y)) continue;
        base = (float)frexp((double)y, &ex); /* y = base * 2^ex, base in [0.5, 1) */
        base *= 4.0f;                        /* [2, 4) */
        ex -= 2;
        if (ex % 2) {
            base *= 0.5f; /* [1, 2) */
            ex += 1;
        }
        got = pkv_rsqrtf_cr(y);
        want = (float)ldexp((double)pkv_rsqrtf_cr(base), -ex / 2);
        r->checked++;
        if (bits(got) != bits(want)) par_fail(r, i);
    }
}

int main(void)
{
    par_result r;
    uint64_t stride = tap_sample_stride();

    is_hex(bits(pkv_rsqrtf_cr(0.0f)), 0x7f800000, "rsqrt(+0) = +Inf");
    is_hex(bits(pkv_rsqrtf_cr(-0.0f)), 0xff800000, "rsqrt(-0) = -Inf");
    is_hex(bits(pkv_rsqrtf_cr(INFINITY)), 0, "rsqrt(+Inf) = +0");
    ok(isnan(pkv_rsqrtf_cr(-1.0f)), "rsqrt(-1) is NaN");
    ok(isnan(pkv_rsqrtf_cr(-INFINITY)), "rsqrt(-Inf) is NaN");
    ok(isnan(pkv_rsqrtf_cr(NAN)), "rsqrt(NaN) is NaN");
    is_hex(bits(pkv_rsqrtf_cr(4.0f)), bits(0.5f), "rsqrt(4) = 0.5 exactly");
    is_hex(bits(pkv_rsqrtf_cr(0x1p-148f)), bits(0x1p74f), "rsqrt(2^-148) = 2^74");
    is_hex(bits(pkv_rsqrtf_cr(0x1p-149f)), bits((float)0x1.6a09e667f3bcdp74),
           "rsqrt(2^-149) = RN(2^74.5)");
    /* a value known to be mis-rounded by the approximate rsqrtf: RN(1/sqrt(2)) */
    is_hex(bits(pkv_rsqrtf_cr(2.0f)), 0x3f3504f3, "rsqrt(2) = 0x3f3504f3");

    r = par_run(0, 1ull << 32, stride * 97, check_scaling, NULL);
    is_int((long long)r.mismatches, 0, "rsqrt(y * 4^k) == rsqrt(y) * 2^-k on %llu inputs",
           (unsigned long long)r.checked);
#if PKV_HAVE_MPFR
    r = par_run(bits(1.0f), bits(4.0f), stride, check_mpfr, NULL);
    if (!is_int((long long)r.mismatches, 0,
                "rsqrt equals MPFR on %llu inputs of [1, 4) (stride %llu)",
                (unsigned long long)r.checked, (unsigned long long)stride))
        diag("first mismatch: 0x%08llx", (unsigned long long)r.first_bad);
#else
    skip(1, "MPFR not available");
#endif
    return done_testing();
}
