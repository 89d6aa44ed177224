// Programmatic dependent launch (sm_90 and later). A launch with the programmatic stream
// serialization attribute may start its blocks before the kernel ahead of it in the stream has
// finished: griddepcontrol.wait holds them until that kernel has completed and its memory
// operations are visible, so every kernel calls one of these before its first global memory
// access (kernel parameters are not global memory; an L2 prefetch, pkvk_prefetch_l2 below, loads
// nothing into the thread and may come before). Without the attribute both are no-ops; code
// built for an older architecture has neither, and the launcher then does not ask for the
// overlap (lib/cuda_device.c). The bytes written do not change.
#pragma once

// The wait alone. For the looping kernels of one wave (kernels/fused_halves.cu,
// kernels/fused_wide.cu): the next launch may start as their blocks exit. Started at once, its
// blocks took the multiprocessors' spare room for the whole call and made the large calls slower
// (H200, graph replays: up to 6.2%, fused_fp8_k 1 x 128 x 65,536; doc/PERFORMANCE-HISTORY.md,
// thirty-sixth session).
static __device__ __forceinline__ void pkvk_grid_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// For every other kernel (a thread's work, then exit): launch_dependents lets the next launch
// start its blocks now, which it can only do once every block of this grid has started, so at
// decode sizes the next launch's start overlaps this one's memory latency.
static __device__ __forceinline__ void pkvk_grid_dependency(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// For the write kernel and the floor (kernels/write_vec.cu, kernels/baseline.cu), as their first
// instruction, before their prefetches and pkvk_grid_wait: the next launch may start its blocks
// as soon as every block of this one has started, before the kernel ahead has finished; they too
// hold at their wait. A block's first thread to issue it is what counts (PTX ISA: repeated
// invocations in a CTA have no further effect), so it comes before anything that reads a kernel
// parameter. On the H200, graph replays with a table, against waiting first: writes 0-12% faster
// at 1 to 64 tokens (thirty-seventh session). Issued first instead of after the prefetches, with
// blocks of 128 for calls of at most one such block a multiprocessor (lib/cuda_ops.c): 10.1-15.7%
// faster at 2 to 8 tokens, 11.4-14.8% at 256, -14.4% to +0.5% at 64, -0.9% to +1.7% at 1 token
// and in 1 x 128 x 8; single launches -1.8% to +1.4% (doc/PERFORMANCE-HISTORY.md, thirty-ninth
// session). The fused kernels wait first: they were 5.0% slower to 7.2% faster with the trigger
// after their prefetches and 1.5-12.5% slower with it first (thirty-seventh and thirty-ninth).
static __device__ __forceinline__ void pkvk_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether this block can be in the launch's first wave, when at most `per_sm` blocks fit a
// multiprocessor: only those can start before the kernel ahead has finished, so only they
// prefetch (in the later waves a prefetch is one more request for a line the load then asks for:
// on the H200 2.1-2.4% slower, write_fp8 8 x 128 x 16,384 in graph replays). %nsmid may exceed
// the multiprocessors' count (their ids need not be contiguous): a few more blocks prefetch. For
// the fused warp kernel of many waves; the write kernel has the bound from its launch, as the
// register's read cost its V-only decode calls 0.09 us (kernels/write_vec.cu).
static __device__ __forceinline__ bool pkvk_first_wave(unsigned per_sm)
{
    unsigned nsm;
    asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    return blockIdx.x < per_sm * nsm;
}

// A hint that the line holding `a` will be read, to L2, for a kernel's inputs before its
// griddepcontrol.wait: while the kernel ahead finishes, this launch's first loads come from HBM
// to L2, and after the wait they are L2 hits. It reads nothing into the thread and L2 is where
// every SM's stores land, so a line fetched before the kernel ahead writes it is updated by
// that write like any other: the bytes loaded after the wait are the same. Only on sm_90 and
// later, where the wait can hold a launch back; elsewhere it would only add instructions. On the
// H200, against 9f14b51: graph replays 2-22% faster for the writes and 7-15% for the fused
// ops at 1 to 64 tokens; a launch with nothing ahead of it to overlap pays for the
// prefetch followed at once by the load of the same line: single launches of 1-token writes
// 3-4% (0.1 us) slower, the fused ops -1.5% to +4% (doc/PERFORMANCE-HISTORY.md, thirty-seventh
// session).
static __device__ __forceinline__ void pkvk_prefetch_l2(const void *a)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("prefetch.L2 [%0];" ::"l"(a));
#else
    (void)a;
#endif
}
