// The conversions over a range of binary32 bit patterns, for the exhaustive device check
// (t/cuda_convert): out16[i] = bf16(x), out8[i] = e4m3(x) for x = bits(base + i). The
// hardware cvt instructions are used where the GPU has them, proving them equal to the spec.
#include "kernels.cuh"
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void pkvk_convert_range(unsigned base, unsigned n, unsigned short *out16,
                                              unsigned char *out8, unsigned char *out8_sw)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __uint_as_float(base + i);
    __nv_bfloat16 b = __float2bfloat16_rn(x);
    out16[i] = *(unsigned short *)&b;
    out8[i] = (unsigned char)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    out8_sw[i] = pkvi_e4m3_from_f32(x);
}
