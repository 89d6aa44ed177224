// cp.async: global -> shared copies that hold no register while in flight (sm_80+), committed in
// groups (an empty group is legal), and the waits after which a thread sees its own copies
// (and, after a barrier, the block): the block kernels' (fused_vec.cu) and the halves
// kernels' (fused_halves.cu, mrope_cs.cuh)
#pragma once

// 16 bytes
__device__ __forceinline__ void pkvk_cp_async16(void *smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(smem)),
                 "l"(gmem)
                 : "memory");
}

// 16 bytes, or (copy false) 16 zero bytes and no global read
__device__ __forceinline__ void pkvk_cp_async16_z(void *smem, const void *gmem, bool copy)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(smem)),
                 "l"(gmem), "r"(copy ? 16u : 0u)
                 : "memory");
}

// The same, the copy's lines in L2 first to be evicted (an L2::evict_first policy made at
// each copy: held across the loop, its 64-bit register made kernels of 64 registers spill).
// The halves kernels' streaming variants read K and V so (kernels/fused_halves.cu)
__device__ __forceinline__ void pkvk_cp_async16_z_first(void *smem, const void *gmem, bool copy)
{
    asm volatile("{\n.reg .b64 pol;\n"
                 "createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
                 "cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, pol;\n}\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(smem)),
                 "l"(gmem), "r"(copy ? 16u : 0u)
                 : "memory");
}

// 4 bytes (the 16-byte form needs 16 consecutive bytes of one source)
__device__ __forceinline__ void pkvk_cp_async4(void *smem, const void *gmem)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(smem)),
                 "l"(gmem)
                 : "memory");
}

__device__ __forceinline__ void pkvk_cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// every copy of this thread
__device__ __forceinline__ void pkvk_cp_async_wait()
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// all but the newest N groups of this thread (a thread uses its K rows while its table copies
// are still in flight)
template <int N> __device__ __forceinline__ void pkvk_cp_async_wait_n()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
