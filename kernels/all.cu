// The single translation unit nvcc turns into the embedded fatbin: one file per op family,
// included here so that one module holds every kernel.
#include "probe.cu"
#include "write.cu"
#include "write_vec.cu"
#include "fused.cu"
#include "fused_fp8_kv.cu"
#include "fused_vec.cu"
#include "fused_warp.cu"
#include "fused_halves.cu"
#include "convert.cu"
#include "numerics.cu"
#include "rope_table.cu"
#include "baseline.cu"
