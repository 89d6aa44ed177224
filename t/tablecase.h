/* The cases the table tests share (t/cuda_rope_table.c, t/cuda_mrope_table.c). */
#ifndef PKV_T_TABLECASE_H
#define PKV_T_TABLECASE_H

#include "diffcase.h"
#include "randcase.h"
#include "pagedkv.h"

/* A case whose every position is below 1000, rotary_dim = head_dim, rows and blocks dense;
 * pkvi_case_random's slots: valid ones mixed with -1 and out-of-range ones. */
void plain_case(pkvi_case *c, int shift, uint32_t nkv, uint32_t hd, uint32_t tokens);

/* The bytes of op's whole pools on h that differ from the reference's, or ~0 when the GPU wrote
 * none (the call failed) */
unsigned long long run_diff(pkv_cuda *h, int op, const pkvi_case *c);

#endif
