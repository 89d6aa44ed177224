/* The exported forms of the exact numeric primitives (the inline forms are in the headers,
 * shared with the kernels). */
#include "config.h"
#include "pagedkv.h"
#include "bf16.h"
#include "fp8.h"
#include "rsqrt_cr.h"
#include "tree.h"
#include "cr_trig.h"
#include "../lib/status.h"

uint16_t pkv_bf16_from_f32(float x) { return pkvi_bf16_from_f32(x); }
float pkv_bf16_to_f32(uint16_t b) { return pkvi_bf16_to_f32(b); }
uint8_t pkv_e4m3_from_f32(float x) { return pkvi_e4m3_from_f32(x); }
float pkv_e4m3_to_f32(uint8_t q) { return pkvi_e4m3_to_f32(q); }
float pkv_rsqrtf_cr(float y) { return pkvi_rsqrt_cr(y); }
float pkv_sinf_cr(float x) { return pkvi_sinf_cr(x); }
float pkv_cosf_cr(float x) { return pkvi_cosf_cr(x); }

void pkv_sincosf_cr(float x, float *sin_out, float *cos_out)
{
    float s, c;
    pkvi_sincosf_cr(x, &s, &c, NULL);
    if (sin_out) *sin_out = s;
    if (cos_out) *cos_out = c;
}

pkv_status pkv_tree_sum(const float *leaves, uint32_t n, float *out)
{
    pkvi_clear_error();
    if (n > PKVI_TREE_MAX_LEAVES)
        return pkvi_fail(PKV_EINVAL, "tree_sum: n (%u) exceeds %u", n, PKVI_TREE_MAX_LEAVES);
    if ((n && !leaves) || !out) return pkvi_fail(PKV_EINVAL, "tree_sum: NULL pointer");
    *out = pkvi_tree_sum(leaves, n);
    return PKV_OK;
}
