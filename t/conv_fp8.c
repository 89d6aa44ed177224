/* f32 <-> FP8 E4M3FN: exhaustive over all 2^32 binary32 inputs against an independent
 * arithmetic formulation (rint in binary64, then a search of the decoded value table), plus
 * named cases (ties, 448/464/465, subnormals, NaN of both signs, Inf, signed zero). */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "par.h"
#include "pagedkv.h"
#include "conv_model.h"

#include <math.h>
#include <string.h>

static double value[127]; /* the magnitude of codes 0x00..0x7E, increasing */

static void check_range(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    (void)ctx;
    for (uint64_t i = b; i < e; i += stride) {
        float x = f32((uint32_t)i);
        r->checked++;
        if (pkv_e4m3_from_f32(x) != e4m3_arith(x)) par_fail(r, i);
    }
}

static void named(void)
{
    static const struct {
        float in;
        uint8_t out;
        const char *what;
    } c[] = {
        {1.0f, 0x38, "1.0"},
        {-1.0f, 0xb8, "-1.0"},
        {1.0625f, 0x38, "tie between 1 and 1.125 goes to even 1"},
        {1.1875f, 0x3a, "tie between 1.125 and 1.25 goes to even 1.25"},
        {448.0f, 0x7e, "448 is the largest finite"},
        {464.0f, 0x7e, "464 is a tie that goes to the even 448"},
        {465.0f, 0x7e, "465 saturates to 448"},
        {480.0f, 0x7e, "480 saturates to 448"},
        {-1e30f, 0xfe, "-1e30 saturates to -448"},
        {0x1p-10f, 0x00, "2^-10 is a tie that goes to even 0"},
        {-0x1p-10f, 0x80, "-2^-10 goes to -0"},
        {0x1.000002p-10f, 0x01, "just above 2^-10 rounds to the smallest subnormal"},
        {0x1p-9f, 0x01, "2^-9 is the smallest subnormal"},
        {0x1.8p-9f, 0x02, "1.5 * 2^-9 ties to even 2 * 2^-9"},
        {0x1.4p-8f, 0x02, "2.5 * 2^-9 ties to even 2 * 2^-9"},
        {0x1.ep-7f, 0x08, "7.5 * 2^-9 ties up into the smallest normal"},
        {0x1p-6f, 0x08, "2^-6 is the smallest normal"},
        {0x1p-149f, 0x00, "smallest binary32 subnormal underflows to +0"},
        {-0x1p-149f, 0x80, "negative tiny underflows to -0"},
        {0.0f, 0x00, "+0"},
        {-0.0f, 0x80, "-0 keeps its sign"},
    };
    static const struct {
        uint32_t in;
        uint8_t out;
        const char *what;
    } b[] = {
        {0x7f800000, 0x7e, "+Inf saturates to 448"},
        {0xff800000, 0xfe, "-Inf saturates to -448"},
        {0x7fc00000, 0x7f, "quiet NaN"},
        {0xffc00000, 0x7f, "negative quiet NaN gives 0x7F"},
        {0x7f800001, 0x7f, "signalling NaN"},
        {0xffffffff, 0x7f, "negative NaN with all payload bits"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        is_hex(pkv_e4m3_from_f32(c[i].in), c[i].out, "e4m3(%a): %s", (double)c[i].in,
               c[i].what);
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        is_hex(pkv_e4m3_from_f32(f32(b[i].in)), b[i].out, "e4m3(0x%08x): %s", b[i].in,
               b[i].what);
}

int main(void)
{
    uint64_t stride = tap_sample_stride();
    int bad_decode = 0;
    par_result r;

    for (unsigned c = 0; c < 127; c++) value[c] = e4m3_value(c);
    named();
    for (unsigned q = 0; q < 256; q++) {
        float x = pkv_e4m3_to_f32((uint8_t)q);
        int is_nan = (q & 0x7f) == 0x7f;
        if (is_nan) bad_decode += !(isnan(x) && (bits(x) >> 31) == (q >> 7));
        else bad_decode += (double)x != (q & 0x80 ? -1 : 1) * value[q & 0x7f] ||
                           (signbit(x) != 0) != (q >= 0x80) ||
                           pkv_e4m3_from_f32(x) != q;
    }
    is_int(bad_decode, 0, "e4m3 -> f32 decodes all 256 codes exactly and round-trips");

    r = par_run(0, 1ull << 32, stride, check_range, NULL);
    if (!is_int((long long)r.mismatches, 0,
                "f32 -> e4m3 equals the arithmetic formulation on %llu inputs (stride %llu)",
                (unsigned long long)r.checked, (unsigned long long)stride))
        diag("first mismatch 0x%08llx: got 0x%02x want 0x%02x", (unsigned long long)r.first_bad,
             pkv_e4m3_from_f32(f32((uint32_t)r.first_bad)),
             e4m3_arith(f32((uint32_t)r.first_bad)));
    ok(r.checked == ((1ull << 32) + stride - 1) / stride, "visited every sampled input");
    return done_testing();
}
