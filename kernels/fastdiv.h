/* Unsigned 32-bit division by a divisor fixed for a launch: the launcher computes a magic
 * multiplier once, the kernels divide with a multiply-high, a subtract, an add and two
 * shifts instead of the ~20-instruction sequence a GPU runs for n / d (Granlund and
 * Montgomery, "Division by invariant integers using multiplication", PLDI 1994, Figure 4.1:
 * exact for every n and d below 2^32). C for the launchers, CUDA for the kernels; t/fastdiv
 * checks it against `/`. */
#ifndef PKV_FASTDIV_H
#define PKV_FASTDIV_H

#include "../ref/hd.h"

typedef struct pkvk_div32 {
    uint32_t d, m;   /* divisor (>= 1), multiplier */
    uint32_t s1, s2; /* shifts: min(l, 1) and l - s1, l = ceil(log2 d) */
} pkvk_div32;

/* d >= 1 (0 gives the divisor 1: the kernels never divide by an absent quantity). */
static inline pkvk_div32 pkvk_div32_make(uint32_t d)
{
    pkvk_div32 r;
    uint32_t l = 0;
    if (d == 0) d = 1;
    while (l < 32 && ((uint64_t)1 << l) < d)
        l++;
    r.d = d;
    /* m = floor(2^32 (2^l - d) / d) + 1 < 2^32; 2^l - d < 2^32, so the shift fits 64 bits */
    r.m = (uint32_t)(((((uint64_t)1 << l) - d) << 32) / d + 1);
    r.s1 = l < 1 ? l : 1;
    r.s2 = l - r.s1;
    return r;
}

/* n / v.d */
PKV_HD uint32_t pkvk_div32_q(uint32_t n, pkvk_div32 v)
{
#if defined(__CUDA_ARCH__)
    uint32_t t = __umulhi(v.m, n); /* nvcc keeps the 64-bit form as a wide multiply */
#else
    uint32_t t = (uint32_t)(((uint64_t)v.m * n) >> 32);
#endif
    return (t + ((n - t) >> v.s1)) >> v.s2;
}

#endif
