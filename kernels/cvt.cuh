// The conversions of doc/SPEC.md 1.2 as the kernels compute them, two values at a time. From
// sm_89 (E4M3) and sm_80 (BF16) on, the cvt instructions compute exactly the specified
// rounding, NaN and saturation rules, one instruction per pair; t/cuda_convert proves both
// lanes equal to the reference on all 2^32 inputs of the GPU at hand. Earlier architectures
// (and the compute_80 PTX for E4M3) run the shared software code of ref/.
#pragma once

// E4M3 of lo in bits 0-7, of hi in bits 8-15.
__device__ __forceinline__ unsigned pkvk_e4m3x2(float lo, float hi)
{
#if __CUDA_ARCH__ >= 890
    unsigned short r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return pkvi_e4m3_from_f32(lo) | (unsigned)pkvi_e4m3_from_f32(hi) << 8;
#endif
}

// BF16 of lo in bits 0-15, of hi in bits 16-31.
__device__ __forceinline__ unsigned pkvk_bf16x2(float lo, float hi)
{
#if __CUDA_ARCH__ >= 800
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return pkvi_bf16_from_f32(lo) | (unsigned)pkvi_bf16_from_f32(hi) << 16;
#endif
}
