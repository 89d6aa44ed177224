/* Correctly rounded sin and cos. Without MPFR: special values, symmetries and a table of
 * results written down from MPFR 4.2 (binary32 emulation). With MPFR: 10^6 random inputs, and
 * every input of [0, 2^24] that takes the accurate (double-double) path. */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "par.h"
#include "pagedkv.h"
#include "cr_trig.h"

#include <math.h>
#include <string.h>
#if PKV_HAVE_MPFR
#include <mpfr.h>
#include <pthread.h>
#endif

static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* x, sin x, cos x: MPFR 4.2.0, precision 24, emin -148, emax 128, subnormalised */
static const uint32_t known[][3] = {
    {0x3f000000u, 0x3ef57744u, 0x3f60a940u}, /* 0.5 */
    {0x3f800000u, 0x3f576aa4u, 0x3f0a5140u}, /* 1 */
    {0x3fc90fdbu, 0x3f800000u, 0xb33bbd2eu}, /* RN(pi/2) */
    {0x40490fdbu, 0xb3bbbd2eu, 0xbf800000u}, /* RN(pi) */
    {0x42c80000u, 0xbf01a12eu, 0x3f5cc0eeu}, /* 100 */
    {0x4640e6b6u, 0xbf344b08u, 0x3f35be20u}, /* 12345.678 */
    {0x49742400u, 0xbeb33259u, 0x3f6fcefdu}, /* 1e6 */
    {0x4b800000u, 0xbf47917cu, 0x3f2056b4u}, /* 2^24 */
    {0x7f7fffffu, 0xbf0599b3u, 0x3f5a5f96u}, /* FLT_MAX */
    {0x7149f2cau, 0xbf4a89b0u, 0xbf1c9222u}, /* 1e30 */
    {0xc0200000u, 0xbf193578u, 0xbf4d17bfu}, /* -2.5 */
    {0x00000200u, 0x00000200u, 0x3f800000u}, /* 2^-140 (subnormal) */
    {0x39800000u, 0x39800000u, 0x3f800000u}, /* 2^-12: cos is just above a midpoint */
    {0x4f800000u, 0xbeec8981u, 0xbf630b05u}, /* 2^32 */
    {0x41b00000u, 0xbc110515u, 0xbf7ffd6fu}, /* 22 (close to 7 pi) */
    {0x43b18000u, 0xb7fcde82u, 0xbf800000u}, /* 355 (very close to 113 pi) */
};

static void host_only(void)
{
    int bad = 0, sym = 0;
    float s, c;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        float x = f32(known[i][0]);
        pkv_sincosf_cr(x, &s, &c);
        if (bits(pkv_sinf_cr(x)) != known[i][1] || bits(pkv_cosf_cr(x)) != known[i][2] ||
            bits(s) != known[i][1] || bits(c) != known[i][2]) {
            bad++;
            diag("x = %a: sin %a cos %a", (double)x, (double)pkv_sinf_cr(x),
                 (double)pkv_cosf_cr(x));
        }
    }
    is_int(bad, 0, "the table of MPFR results (%zu inputs)", sizeof known / sizeof known[0]);

    is_hex(bits(pkv_sinf_cr(0.0f)), 0x00000000u, "sin(+0) = +0");
    is_hex(bits(pkv_sinf_cr(-0.0f)), 0x80000000u, "sin(-0) = -0");
    is_hex(bits(pkv_cosf_cr(-0.0f)), 0x3f800000u, "cos(-0) = 1");
    is_hex(bits(pkv_sinf_cr(INFINITY)), 0x7fc00000u, "sin(+Inf) = 0x7FC00000");
    is_hex(bits(pkv_cosf_cr(-INFINITY)), 0x7fc00000u, "cos(-Inf) = 0x7FC00000");
    is_hex(bits(pkv_sinf_cr(f32(0xffc00123u))), 0x7fc00000u, "sin(negative NaN) = 0x7FC00000");
    is_hex(bits(pkv_cosf_cr(f32(0x7f800001u))), 0x7fc00000u, "cos(signalling NaN) = 0x7FC00000");
    is_hex(bits(pkv_sinf_cr(0x1p-149f)), 0x00000001u, "sin(smallest subnormal) = itself");

    for (int i = 0; i < 200000; i++) {
        float x = f32((uint32_t)rnd() & 0x7f7fffffu);
        sym += bits(pkv_sinf_cr(-x)) != (bits(pkv_sinf_cr(x)) ^ 0x80000000u);
        sym += bits(pkv_cosf_cr(-x)) != bits(pkv_cosf_cr(x));
        pkv_sincosf_cr(x, &s, &c);
        sym += bits(s) != bits(pkv_sinf_cr(x)) || bits(c) != bits(pkv_cosf_cr(x));
        sym += !(fabsf(s) <= 1.0f && fabsf(c) <= 1.0f);
    }
    is_int(sym, 0, "odd sin, even cos, sincos == sin, cos, |results| <= 1 on 200000 inputs");
}

#if PKV_HAVE_MPFR
static int mpfr_check(uint32_t u)
{
    float x = f32(u), want[2];
    mpfr_t a, y;
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    mpfr_inits2(24, a, y, (mpfr_ptr)0);
    mpfr_set_flt(a, x, MPFR_RNDN);
    for (int k = 0; k < 2; k++) {
        int t = k ? mpfr_cos(y, a, MPFR_RNDN) : mpfr_sin(y, a, MPFR_RNDN);
        mpfr_subnormalize(y, t, MPFR_RNDN);
        want[k] = mpfr_get_flt(y, MPFR_RNDN);
    }
    mpfr_clears(a, y, (mpfr_ptr)0);
    return bits(pkv_sinf_cr(x)) == bits(want[0]) && bits(pkv_cosf_cr(x)) == bits(want[1]);
}

/* Collect the inputs whose sin or cos takes the accurate path. */
#define MAX_SLOW 100000
static uint32_t slow_inputs[MAX_SLOW];
static long slow_count;
static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;

static void find_slow(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    (void)ctx;
    for (uint64_t i = b; i < e; i += stride) {
        float s, c;
        int slow = 0;
        pkvi_sincosf_cr(f32((uint32_t)i), &s, &c, &slow);
        r->checked++;
        if (slow) {
            pthread_mutex_lock(&slow_lock);
            if (slow_count < MAX_SLOW) slow_inputs[slow_count] = (uint32_t)i;
            slow_count++;
            pthread_mutex_unlock(&slow_lock);
        }
    }
}
#endif

int main(void)
{
    host_only();
#if PKV_HAVE_MPFR
    {
        long bad = 0, n = 1000000 / (long)tap_sample_stride();
        par_result r;
        for (long i = 0; i < n; i++) {
            uint32_t u = (uint32_t)rnd();
            if ((u & 0x7fffffffu) >= 0x7f800000u) continue;
            if (!mpfr_check(u) && ++bad <= 5) diag("mismatch at 0x%08x", u);
        }
        is_int(bad, 0, "MPFR agrees on %ld random inputs", n);

        r = par_run(0, 0x4b800001u, tap_sample_stride(), find_slow, NULL);
        bad = 0;
        for (long i = 0; i < slow_count && i < MAX_SLOW; i++)
            if (!mpfr_check(slow_inputs[i]) && ++bad <= 5)
                diag("mismatch at 0x%08x", slow_inputs[i]);
        /* all of [0, 2^24] holds 115 of them; a sampled run (PKV_TEST_SAMPLE) may hold none */
        ok(slow_count <= MAX_SLOW && (tap_sample_stride() > 1 || slow_count > 0),
           "%ld of %llu inputs in [0, 2^24] take the accurate path", slow_count,
           (unsigned long long)r.checked);
        is_int(bad, 0, "MPFR agrees on every one of them");
    }
    mpfr_free_cache();
#else
    skip(3, "MPFR not available");
#endif
    return done_testing();
}
