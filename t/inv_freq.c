/* inv_freq: every pair of every even rotary_dim up to 512 for the common RoPE bases, and 10^5
 * random (theta, rotary_dim, p), against MPFR (Ziv's loop with mpfr_can_round); argument
 * checks; and the table form equal to the single form. */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "pagedkv.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if PKV_HAVE_MPFR
#include "mpfr_f32.h"
#endif

/* xorshift64*: reproducible random numbers */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

#if PKV_HAVE_MPFR
/* theta^(-2p/R), correctly rounded to binary32 (subnormal results too). */
static float mpfr_inv_freq(float theta, uint32_t rotary_dim, uint32_t p)
{
    float out;
    if (p == 0) return 1.0f;
    for (mpfr_prec_t prec = 96;; prec *= 2) {
        mpfr_t t, y;
        mpfr_inits2(prec, t, y, (mpfr_ptr)0);
        mpfr_set_flt(t, theta, MPFR_RNDN);
        mpfr_log(y, t, MPFR_RNDN);
        mpfr_mul_si(y, y, -2 * (long)p, MPFR_RNDN);
        mpfr_div_ui(y, y, rotary_dim, MPFR_RNDN);
        mpfr_exp(y, y, MPFR_RNDN);
        /* about 4 ulp of error in all; round to nearest at the result's binary32 precision.
         * An exactly representable result (a power of two) can never be proven by this test;
         * past 4096 bits nothing else is that close to the binary32 grid. */
        if (prec >= 4096 || mpfr_can_round(y, prec - 4, MPFR_RNDN, MPFR_RNDZ,
                                           f32_bits_at(mpfr_get_exp(y)) + 1)) {
            out = f32_round(y);
            mpfr_clears(t, y, (mpfr_ptr)0);
            return out;
        }
        mpfr_clears(t, y, (mpfr_ptr)0);
    }
}

static int check(float theta, uint32_t rotary_dim, uint32_t p, long *bad)
{
    float got = 0.0f, want = mpfr_inv_freq(theta, rotary_dim, p);
    if (pkv_inv_freq(theta, rotary_dim, p, &got) != PKV_OK || bits(got) != bits(want)) {
        if (++*bad <= 5)
            diag("theta %a rotary_dim %u p %u: got %a want %a", (double)theta, rotary_dim, p,
                 (double)got, (double)want);
        return 0;
    }
    return 1;
}
#endif

int main(void)
{
    float v, table[256];
    int same = 1;

    is_int(pkv_inv_freq(0.5f, 64, 1, &v), PKV_EINVAL, "theta < 1 is rejected");
    ok(strstr(pkv_last_error(), "theta") != NULL, "the message names theta: %s",
       pkv_last_error());
    is_int(pkv_inv_freq(INFINITY, 64, 1, &v), PKV_EINVAL, "theta = Inf is rejected");
    is_int(pkv_inv_freq(NAN, 64, 1, &v), PKV_EINVAL, "theta = NaN is rejected");
    is_int(pkv_inv_freq(1e4f, 63, 1, &v), PKV_EINVAL, "odd rotary_dim is rejected");
    is_int(pkv_inv_freq(1e4f, 0, 0, &v), PKV_EINVAL, "rotary_dim 0 is rejected");
    is_int(pkv_inv_freq(1e4f, 64, 32, &v), PKV_EINVAL, "p = rotary_dim / 2 is rejected");
    is_int(pkv_inv_freq(1e4f, 64, 1, NULL), PKV_EINVAL, "NULL out is rejected");
    ok(pkv_inv_freq(1e4f, 64, 0, &v) == PKV_OK && v == 1.0f, "p = 0 gives 1");
    ok(pkv_inv_freq(1.0f, 64, 5, &v) == PKV_OK && v == 1.0f, "theta = 1 gives 1");
    ok(pkv_inv_freq(16.0f, 4, 1, &v) == PKV_OK && v == 0.25f, "16^(-1/2) = 0.25 exactly");
    ok(pkv_inv_freq(65536.0f, 8, 3, &v) == PKV_OK && v == 0x1p-12f, "65536^(-3/4) = 2^-12");
    ok(pkv_inv_freq(FLT_MAX, 512, 255, &v) == PKV_OK && v > 0 && v < FLT_MIN,
       "FLT_MAX^(-255/256) is subnormal (%a)", (double)v);

    is_int(pkv_inv_freq_table(1e6f, 256, table), PKV_OK, "table for theta 1e6, rotary_dim 256");
    for (uint32_t p = 0; p < 128; p++) {
        float one;
        pkv_inv_freq(1e6f, 256, p, &one);
        same &= bits(one) == bits(table[p]);
    }
    ok(same, "the table equals the single form entry by entry");

#if PKV_HAVE_MPFR
    {
        static const float thetas[] = {1e4f, 5e5f, 1e6f, 5e6f, 1e7f, 1e8f};
        long bad = 0, n = 0, k = 0, stride = (long)tap_sample_stride();
        for (size_t i = 0; i < sizeof thetas / sizeof thetas[0]; i++)
            for (uint32_t rd = 2; rd <= 512; rd += 2)
                for (uint32_t p = 0; p < rd / 2; p++)
                    if (k++ % stride == 0) {
                        check(thetas[i], rd, p, &bad);
                        n++;
                    }
        is_int(bad, 0, "MPFR agrees on %ld (theta, rotary_dim, p) of the common grid (stride %ld)",
               n, stride);

        bad = 0;
        for (long i = 0; i < 100000; i += stride) {
            /* theta spread over [1, FLT_MAX] log-uniformly, plus exact binary32 bit patterns */
            uint32_t u = 0x3f800000u + (uint32_t)(rnd() % (0x7f7fffffu - 0x3f800000u + 1));
            uint32_t rd = 2 + 2 * (uint32_t)(rnd() % 256);
            uint32_t p = (uint32_t)(rnd() % (rd / 2));
            float theta;
            memcpy(&theta, &u, 4);
            check(theta, rd, p, &bad);
        }
        is_int(bad, 0, "MPFR agrees on 100000 random (theta, rotary_dim, p) (stride %ld)", stride);
    }
#else
    skip(2, "MPFR not available");
#endif
    return done_testing();
}
