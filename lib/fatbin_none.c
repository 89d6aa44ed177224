/* The embedded fatbin of a build without nvcc: empty, so the CUDA backend reports that this
 * build has no kernels. */
#include "fatbin.h"

const unsigned char pkvi_fatbin[1] = {0};
const size_t pkvi_fatbin_size = 0;
const unsigned char pkvi_ptx80[1] = {0};
const size_t pkvi_ptx80_size = 0;
