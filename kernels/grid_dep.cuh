// Programmatic dependent launch (sm_90 and later). A launch with the programmatic stream
// serialization attribute may start its blocks before the kernel ahead of it in the stream has
// finished: griddepcontrol.wait holds them until that kernel has completed and its memory
// operations are visible, so every kernel calls this before its first global memory access
// (kernel parameters are not global memory). launch_dependents then lets the next such launch
// start its own blocks as ours exit, instead of after our completion has been signalled, which
// is most of a small launch's time in a stream or a graph. Without the attribute both are no-ops;
// code built for an older architecture has neither, and the launcher then does not ask for it
// (lib/cuda_device.c). The bytes written do not change.
#pragma once

static __device__ __forceinline__ void pkvk_grid_dependency(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
