// Every numeric primitive the op kernels use, on a list of binary32 bit patterns, so that the
// fuzzers can compare the device build of ref/*.h with the host build input by input
// (fuzz/crmath.c, fuzz/convert.c). Eight words per input: sin, cos (together), sin, cos (alone),
// rsqrt, BF16 and E4M3 as the kernels convert (kernels/cvt.cuh), and the BF16 decode of the
// input's low half.
#include "kernels.cuh"

extern "C" __global__ void pkvk_numerics(const pkvk_numerics_params p)
{
    pkvk_grid_dependency();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    unsigned u = ((const unsigned *)p.in)[i], *out = (unsigned *)p.out + 8ull * i;
    float x = __uint_as_float(u), s, c;
    pkvi_sincosf_cr(x, &s, &c, 0);
    out[0] = __float_as_uint(s);
    out[1] = __float_as_uint(c);
    out[2] = __float_as_uint(pkvi_sin_or_cos_cr(x, 0));
    out[3] = __float_as_uint(pkvi_sin_or_cos_cr(x, 1));
    out[4] = __float_as_uint(pkvi_rsqrt_cr(x));
    out[5] = pkvk_bf16x2(x, 0.0f) & 0xffffu;
    out[6] = pkvk_e4m3x2(x, 0.0f) & 0xffu;
    out[7] = __float_as_uint(pkvi_bf16_to_f32((unsigned short)u));
}
