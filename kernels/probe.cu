// A kernel with no numerics: it lets the loader and the tests prove that the embedded fatbin
// loads and launches on a device before any op kernel is involved.
#include "kernels.cuh"

extern "C" __global__ void pkvk_probe(unsigned int *out, unsigned int value)
{
    pkvk_grid_dependency();
    if (blockIdx.x == 0 && threadIdx.x == 0) *out = value ^ 0x706b7631u;
}
