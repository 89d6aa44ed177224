/* Internal: the kernels' fatbin embedded in the library (size 0 in a build without nvcc). */
#ifndef PKV_FATBIN_H
#define PKV_FATBIN_H

#include <stddef.h>

extern const unsigned char pkvi_fatbin[];
extern const size_t pkvi_fatbin_size;
/* The kernels as compute_80 PTX text (NUL-terminated), for PKV_CUDA_JIT_PTX=1. */
extern const unsigned char pkvi_ptx80[];
extern const size_t pkvi_ptx80_size;

#endif
