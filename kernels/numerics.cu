// Every numeric primitive the op kernels use, on a list of binary32 bit patterns, so that the
// fuzzers can compare the device build of ref/*.h with the host build input by input
// (fuzz/crmath.c, fuzz/convert.c). Six words per input: sin, cos, rsqrt, BF16, E4M3, and the
// BF16 decode of the input's low half.
#include "kernels.cuh"

extern "C" __global__ void pkvk_numerics(const pkvk_numerics_params p)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    unsigned u = ((const unsigned *)p.in)[i], *out = (unsigned *)p.out + 6ull * i;
    float x = __uint_as_float(u), s, c;
    pkvi_sincosf_cr(x, &s, &c, 0);
    out[0] = __float_as_uint(s);
    out[1] = __float_as_uint(c);
    out[2] = __float_as_uint(pkvi_rsqrt_cr(x));
    out[3] = pkvi_bf16_from_f32(x);
    out[4] = pkvi_e4m3_from_f32(x);
    out[5] = __float_as_uint(pkvi_bf16_to_f32((unsigned short)u));
}
