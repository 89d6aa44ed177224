// The cos/sin table of a handle (lib/cuda_rope_table.c): one thread per (position, pair)
// computes what a fused kernel would, RN(pos * inv_freq[pr]) and its correctly rounded sin
// and cos, into row pos: cos of every pair, then sin.
#include "kernels.cuh"

extern "C" __global__ void pkvk_rope_table(const pkvk_rope_table_params p)
{
    pkvk_grid_dependency();
    const unsigned half = p.rotary_dim / 2;
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint64_t)p.len * half) return;
    const unsigned pos = (unsigned)(i / half), pr = (unsigned)(i % half);
    float *row = (float *)p.out + (uint64_t)pos * p.rotary_dim, s, c;
    pkvi_sincosf_cr(__fmul_rn((float)pos, p.inv_freq[pr]), &s, &c, 0);
    row[pr] = c;
    row[half + pr] = s;
}
