/* f32 <-> BF16: exhaustive over all 2^32 binary32 inputs against an independent arithmetic
 * formulation (frexp / ldexp / rint in binary64), plus named cases and all 2^16 decodes. */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "par.h"
#include "pagedkv.h"
#include "conv_model.h"

#include <math.h>
#include <string.h>

static void check_range(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    (void)ctx;
    for (uint64_t i = b; i < e; i += stride) {
        float x = f32((uint32_t)i);
        r->checked++;
        if (pkv_bf16_from_f32(x) != bf16_arith(x)) par_fail(r, i);
    }
}

static void named(void)
{
    static const struct {
        uint32_t in;
        uint16_t out;
        const char *what;
    } c[] = {
        {0x3f800000, 0x3f80, "1.0"},
        {0x3f808000, 0x3f80, "tie to even (down)"},
        {0x3f818000, 0x3f82, "tie to even (up)"},
        {0x3f808001, 0x3f81, "just above a tie"},
        {0x3f807fff, 0x3f80, "just below a tie"},
        {0x7f7f7fff, 0x7f7f, "largest value that stays finite"},
        {0x7f7f8000, 0x7f80, "tie at the top rounds to Inf"},
        {0x7f7fffff, 0x7f80, "FLT_MAX overflows to Inf"},
        {0xff7fffff, 0xff80, "-FLT_MAX overflows to -Inf"},
        {0x7f800000, 0x7f80, "+Inf"},
        {0xff800000, 0xff80, "-Inf"},
        {0x7fc00000, 0x7fff, "quiet NaN"},
        {0xffc00000, 0x7fff, "negative quiet NaN drops the sign"},
        {0x7f800001, 0x7fff, "signalling NaN"},
        {0xff800001, 0x7fff, "negative signalling NaN"},
        {0x7fffffff, 0x7fff, "NaN with all payload bits"},
        {0x7fbfffff, 0x7fff, "NaN payload that would carry into Inf"},
        {0x00000000, 0x0000, "+0"},
        {0x80000000, 0x8000, "-0"},
        {0x00000001, 0x0000, "smallest subnormal"},
        {0x00008000, 0x0000, "subnormal tie to even 0"},
        {0x00018000, 0x0002, "subnormal tie to even 2"},
        {0x807fffff, 0x8080, "largest negative subnormal rounds to -FLT_MIN"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        is_hex(pkv_bf16_from_f32(f32(c[i].in)), c[i].out, "bf16(0x%08x): %s", c[i].in,
               c[i].what);
}

int main(void)
{
    uint64_t stride = tap_sample_stride();
    par_result r;
    int bad_decode = 0, bad_trip = 0;

    named();
    for (uint32_t b = 0; b < 65536; b++) {
        float x = pkv_bf16_to_f32((uint16_t)b);
        uint16_t back = pkv_bf16_from_f32(x);
        bad_decode += bits(x) != b << 16;
        bad_trip += back != (isnan(x) ? 0x7fff : b);
    }
    is_int(bad_decode, 0, "bf16 -> f32 is exact for all 65536 encodings");
    is_int(bad_trip, 0, "bf16 -> f32 -> bf16 round-trips (NaN -> 0x7FFF)");

    r = par_run(0, 1ull << 32, stride, check_range, NULL);
    if (!is_int((long long)r.mismatches, 0,
                "f32 -> bf16 equals the arithmetic formulation on %llu inputs (stride %llu)",
                (unsigned long long)r.checked, (unsigned long long)stride))
        diag("first mismatch 0x%08llx: got 0x%04x want 0x%04x", (unsigned long long)r.first_bad,
             pkv_bf16_from_f32(f32((uint32_t)r.first_bad)),
             bf16_arith(f32((uint32_t)r.first_bad)));
    ok(r.checked == ((1ull << 32) + stride - 1) / stride, "visited every sampled input");
    return done_testing();
}
