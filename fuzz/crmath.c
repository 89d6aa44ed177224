/* Fuzz target for the numeric primitives: sin, cos, rsqrt and inv_freq against
 * binary64 libm (the correctly rounded binary32 result must be the rounding of the binary64
 * value unless that value lies within 2^-45 of a binary32 midpoint), their symmetries, and on a
 * GPU the device build of the same code, bit for bit. */
#include "config.h"
#include "fuzz.h"
#include "provider.h"
#include "pagedkv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* 1 when f is the binary32 nearest to the exact value approximated by d (relative error of d
 * below 2^-50), or when d is too close to a binary32 midpoint to tell. */
static int agrees(float f, double d)
{
    float g = (float)d;
    double lo, hi;
    if (f == g || (isnan(f) && isnan(g))) return 1;
    lo = d * (1.0 - 0x1p-45);
    hi = d * (1.0 + 0x1p-45);
    return (float)lo != (float)hi; /* ambiguous: a midpoint is within reach */
}

static void fail(const char *what, float x, float got, double ref)
{
    fprintf(stderr, "pagedkv fuzz: %s(%a) = %a, binary64 says %a\n", what, (double)x,
            (double)got, ref);
    abort();
}

int fz_crmath(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    uint32_t u = (uint32_t)fz_bits(&f, 4);
    float x, s, c;
    memcpy(&x, &u, 4);
    pkv_sincosf_cr(x, &s, &c);
    if (isfinite(x)) {
        if (!agrees(s, sin((double)x))) fail("sin", x, s, sin((double)x));
        if (!agrees(c, cos((double)x))) fail("cos", x, c, cos((double)x));
        if (pkv_sinf_cr(-x) != -s || pkv_cosf_cr(-x) != c) fail("symmetry", x, s, 0);
    } else if (!isnan(s) || !isnan(c)) {
        fail("sin/cos of NaN or Inf", x, s, NAN);
    }
    if (x > 0 && isfinite(x) && !agrees(pkv_rsqrtf_cr(x), 1.0 / sqrt((double)x)))
        fail("rsqrt", x, pkv_rsqrtf_cr(x), 1.0 / sqrt((double)x));
    {
        uint32_t rd = 2 * (uint32_t)fz_range(&f, 1, 256), p = (uint32_t)fz_range(&f, 0, rd / 2 - 1);
        float theta = fabsf(x), v = 0;
        if (pkv_inv_freq(theta, rd, p, &v) == PKV_OK) {
            double want = pow((double)theta, -2.0 * p / rd);
            if (!(theta >= 1.0f) || !agrees(v, want)) fail("inv_freq", theta, v, want);
        } else if (theta >= 1.0f && isfinite(theta)) {
            fail("inv_freq rejected a valid theta", theta, 0, 0);
        }
    }
    { /* the device build: x and every further word of the input */
        uint32_t in[1024], n = 0;
        in[n++] = u;
        for (size_t i = 0; i + 4 <= size && n < 1024; i += 4) memcpy(&in[n++], data + i, 4);
        fz_gpu_numerics(in, n);
    }
    return 0;
}
