// The conversions over a range of binary32 bit patterns, for the exhaustive device check
// (t/cuda_convert): out16[i] = bf16(x), out8[i] = e4m3(x) as the kernels compute them
// (kernels/cvt.cuh: the cvt instructions where the GPU has them), and out8_sw[i] = the shared
// software E4M3. Each pair conversion gets x in both lanes; a lane that disagrees with the
// other flips the low bit of the output, so the comparison sees it.
#include "kernels.cuh"

extern "C" __global__ void pkvk_convert_range(unsigned base, unsigned n, unsigned short *out16,
                                              unsigned char *out8, unsigned char *out8_sw)
{
    pkvk_grid_dependency();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __uint_as_float(base + i);
    unsigned b = pkvk_bf16x2(x, x), e = pkvk_e4m3x2(x, x);
    out16[i] = (unsigned short)((b & 0xffffu) ^ ((b >> 16) != (b & 0xffffu)));
    out8[i] = (unsigned char)((e & 0xffu) ^ (((e >> 8) & 0xffu) != (e & 0xffu)));
    out8_sw[i] = pkvi_e4m3_from_f32(x);
}
