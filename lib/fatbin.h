/* Internal: the kernels' fatbin embedded in the library (size 0 in a build without nvcc). */
#ifndef PKV_FATBIN_H
#define PKV_FATBIN_H

#include <stddef.h>

extern const unsigned char pkvi_fatbin[];
extern const size_t pkvi_fatbin_size;

#endif
