/* The cases the table tests share. */
#include "config.h"
#include "tap.h"
#include "tablecase.h"

#include <string.h>

void plain_case(pkvi_case *c, int shift, uint32_t nkv, uint32_t hd, uint32_t tokens)
{
    pkvi_rng r = {0x5851f42d4c957f2dull};
    if (pkvi_case_random(c, &r, nkv, hd, 16, tokens)) bail("out of memory");
    c->f.rotary_dim = hd;
    c->f.theta = 1e4f;
    c->f.k_row_stride = c->f.v_row_stride = 0; /* dense rows and blocks: 16-byte aligned */
    c->f.cache.block_stride = 0;
    pkvi_write_desc_like(&c->w, &c->f);
    c->shift = shift;
    for (uint32_t t = 0; t < c->f.num_tokens; t++)
        c->pos[0][t] = (uint32_t)(pkvi_rng_next(&r) % 1000);
}

unsigned long long run_diff(pkv_cuda *h, int op, const pkvi_case *c)
{
    pkvi_outcome o;
    memset(&o, 0, sizeof o);
    pkvi_case_run(op, c, h, &o);
    return o.gpu_bytes ? o.gpu_mismatches : ~0ull;
}
