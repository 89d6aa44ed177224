/* The normative reduction tree of the RMSNorm sum of squares (doc/SPEC.md, "Reduction"). */
#ifndef PKV_TREE_H
#define PKV_TREE_H

#include "hd.h"

#define PKVI_TREE_MAX_LEAVES 1024u

/* One 32-lane xor butterfly: for off = 16, 8, 4, 2, 1, lane l becomes v[l] + v[l ^ off].
 * Every lane ends with the same value (binary32 addition is commutative), so only the lanes
 * below off are carried: lane l and lane l + off hold the same sum. Destroys v. */
PKV_HD float pkvi_butterfly32(float v[32])
{
    for (unsigned off = 16; off; off >>= 1)
        for (unsigned l = 0; l < off; l++) v[l] = v[l] + v[l + off];
    return v[0];
}

/* n <= 1024 leaves: chunks of 32 (the last padded with +0.0f) each through the butterfly, then
 * the chunk sums, padded with +0.0f to 32, through the butterfly once more. */
PKV_HD float pkvi_tree_sum(const float *leaves, unsigned n)
{
    float chunk_sums[32], lanes[32];
    unsigned chunks = (n + 31u) / 32u;
    for (unsigned c = 0; c < 32; c++) {
        if (c < chunks) {
            for (unsigned l = 0; l < 32; l++) {
                unsigned t = c * 32u + l;
                lanes[l] = t < n ? leaves[t] : 0.0f;
            }
            chunk_sums[c] = pkvi_butterfly32(lanes);
        } else {
            chunk_sums[c] = 0.0f;
        }
    }
    return pkvi_butterfly32(chunk_sums);
}

#endif
