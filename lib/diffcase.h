/* Internal (tools and fuzzers, not the library): one case of one op run through the
 * reference (against its definitions and self-properties) and, when a handle is given,
 * through the CUDA backend (against the reference), comparing whole poisoned pools. */
#ifndef PKV_DIFFCASE_H
#define PKV_DIFFCASE_H

#include "pagedkv.h"

#define PKVI_POISON 0xA5

typedef struct pkvi_case {
    pkv_fused_desc f;      /* ops 5-8 (its cache is also w's) */
    pkv_write_desc w;      /* ops 2-4 */
    uint16_t *k, *v, *wt;  /* sources (src_elems each) and the head_dim norm weights */
    uint32_t *pos[3];      /* t, h, w streams; pos[1] == pos[0] means "one stream" */
    int64_t *slots;
    size_t src_elems;
    int shift; /* GPU: sources and pools one element past 16-byte alignment (the element
                * kernels); 0: aligned, so the launchers may take the 16-byte kernels */
} pkvi_case;

typedef struct pkvi_outcome {
    unsigned long long ref_bytes, ref_mismatches; /* the reference vs its definition */
    unsigned long long gpu_bytes, gpu_mismatches; /* the GPU vs the reference */
    double gpu_secs;
    char what[400]; /* the first mismatch, readable; "" if none */
} pkvi_outcome;

/* Run op (PKV_OP_WRITE_BF16 .. PKV_OP_FUSED_FP8_KV) on c; adds into *o. Invalid descriptors
 * are allowed: every backend must then return the reference's status and write nothing. */
void pkvi_case_run(int op, const pkvi_case *c, pkv_cuda *gpu, pkvi_outcome *o);

/* Pool elements of c (0 when the layout is invalid). */
size_t pkvi_case_pool_elems(const pkvi_case *c);

#endif
