/* Qualifiers that let one numeric source compile as host C and as CUDA device code. */
#ifndef PKV_HD_H
#define PKV_HD_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define PKV_HD static __host__ __device__ __forceinline__
/* a rarely taken path, kept out of line so that it does not raise the register count of
 * the code that calls it */
#define PKV_HD_COLD static __host__ __device__ __noinline__
#else
#define PKV_HD static inline
#define PKV_HD_COLD static inline
#endif

PKV_HD uint32_t pkvi_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

PKV_HD float pkvi_f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

PKV_HD uint64_t pkvi_f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

PKV_HD double pkvi_f64_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#endif
