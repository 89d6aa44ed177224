/* Bit patterns of binary32 values, for the tests. */
#ifndef PKV_TEST_BITS_H
#define PKV_TEST_BITS_H

#include <stdint.h>
#include <string.h>

static inline float f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

static inline uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

#endif
