/* kernels/fastdiv.h against C's `/`: every divisor below 2^16 and every power of two, its
 * neighbours and random divisors up to 2^32 - 1, each with the dividends where a wrong
 * multiplier or shift shows first (0, around multiples of d, around 2^32) and random ones;
 * plus long runs of consecutive dividends for the divisors the kernels see most. */
#include "config.h"
#include "tap.h"
#include "../kernels/fastdiv.h"

#include <stdio.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t checked, wrong;

static void check(uint32_t n, pkvk_div32 v)
{
    uint32_t got = pkvk_div32_q(n, v), want = n / v.d;
    checked++;
    if (got != want && wrong++ < 5)
        diag("%u / %u: got %u, want %u", (unsigned)n, (unsigned)v.d, (unsigned)got, (unsigned)want);
}

static void edges(uint32_t d)
{
    pkvk_div32 v = pkvk_div32_make(d);
    uint32_t top = UINT32_MAX / d * d; /* the largest multiple of d */
    const uint32_t n[] = {0,           1,           2,          d - 1,
                          d,           d + 1,       2 * d - 1,  2 * d,
                          3 * d - 1,   top,         top - 1,    top - d,
                          top - d + 1, top - d - 1, UINT32_MAX, UINT32_MAX - 1,
                          0x80000000u, 0x7fffffffu};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        check(n[i], v);
    if (top < UINT32_MAX) check(top + 1, v);
    for (int i = 0; i < 8; i++)
        check((uint32_t)rng(), v);
}

static void run(const char *what, void (*body)(void))
{
    checked = wrong = 0;
    body();
    ok(wrong == 0 && checked > 0, "%s: %llu quotients, %llu wrong", what,
       (unsigned long long)checked, (unsigned long long)wrong);
}

static void small_divisors(void)
{
    for (uint32_t d = 1; d <= 65536; d++)
        edges(d);
}

static void powers_of_two(void)
{
    for (int k = 0; k < 32; k++) {
        uint32_t p = (uint32_t)1 << k;
        edges(p);
        edges(p + 1);
        if (p > 1) edges(p - 1);
    }
    edges(UINT32_MAX);
    edges(UINT32_MAX - 1);
}

static void random_divisors(void)
{
    for (int i = 0; i < 200000; i++) {
        uint32_t d = (uint32_t)rng() >> (rng() % 32);
        edges(d ? d : 1);
    }
}

static void consecutive(void)
{
    /* group sizes, head counts, pair counts and block sizes the kernels divide by */
    const uint32_t ds[] = {3, 5, 7, 8, 12, 16, 24, 32, 40, 48, 64, 96, 100, 128, 256, 1000};
    uint64_t stride = tap_sample_stride();
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        pkvk_div32 v = pkvk_div32_make(ds[i]);
        for (uint64_t n = 0; n < (1u << 22); n += stride)
            check((uint32_t)n, v);
        for (uint64_t n = 0; n < (1u << 22); n += stride)
            check(UINT32_MAX - (uint32_t)n, v);
    }
}

int main(void)
{
    pkvk_div32 z = pkvk_div32_make(0);
    is_int(z.d, 1, "divisor 0 is made the divisor 1");
    run("divisors 1..65536", small_divisors);
    run("powers of two, their neighbours, 2^32 - 1 and 2^32 - 2", powers_of_two);
    run("200000 random divisors", random_divisors);
    run("consecutive dividends at both ends of the range", consecutive);
    return done_testing();
}
