/* The handle's cos/sin table (pkv_cuda_rope_table): built on the device by
 * kernels/rope_table.cu, which computes each entry exactly as a fused kernel does (the angle
 * RN(pos * inv_freq[p]) and the correctly rounded sin and cos shared with the host), and read
 * by the fused kernels for the positions it covers. So the table changes how fast the bytes
 * are written, never which bytes. */
#include "config.h"
#include "cuda_device.h"
#include "status.h"
#include "../kernels/params.h"

#include <string.h>

#define NAME "cuda_rope_table"

/* Free h's table; with `wait`, first wait for everything launched in h's context (kernels
 * in flight may read it). */
static pkv_status drop(pkv_cuda *h, int wait)
{
    pkvi_CUresult r = 0;
    pkv_status st;
    if (!h->cs_table) return PKV_OK;
    if ((st = pkvi_cuda_enter(h))) return st;
    if (!wait || !(r = h->cu->cuCtxSynchronize())) r = h->cu->cuMemFree(h->cs_table);
    pkvi_cuda_leave(h);
    if (r) return pkvi_cuda_fail(r, NAME ": releasing the old table");
    h->cs_table = 0;
    h->cs_len = 0;
    return PKV_OK;
}

static pkv_status build(pkv_cuda *h, float theta, uint32_t rotary_dim, uint32_t max_positions)
{
    pkvk_rope_table_params p;
    pkvi_CUdeviceptr fresh = 0;
    pkvi_CUresult r;
    pkv_status st;
    uint64_t threads = (uint64_t)max_positions * (rotary_dim / 2), blocks = (threads + 255) / 256;
    memset(&p, 0, sizeof p);
    if (rotary_dim > 2 * PKVK_MAX_PAIRS)
        return pkvi_fail(PKV_EINVAL, NAME ": rotary_dim %u exceeds %u", rotary_dim,
                         2 * PKVK_MAX_PAIRS);
    if ((st = pkv_inv_freq_table(theta, rotary_dim, p.inv_freq))) return st;
    if (blocks > 0x7fffffffu)
        return pkvi_fail(PKV_ERANGE, NAME ": %u positions x %u pairs exceed the grid",
                         max_positions, rotary_dim / 2);
    if ((st = pkvi_cuda_enter(h))) return st;
    r = h->cu->cuMemAlloc(&fresh, (size_t)max_positions * rotary_dim * sizeof(float));
    pkvi_cuda_leave(h);
    if (r) return pkvi_cuda_fail(r, NAME ": cuMemAlloc");
    p.out = fresh;
    p.rotary_dim = rotary_dim;
    p.len = max_positions;
    st = pkvi_cuda_launch(h, PKVI_K_ROPE_TABLE, (unsigned)blocks, 1, 256, &p, NULL);
    if (!st && !(st = pkvi_cuda_enter(h))) {
        /* the rows complete, and every launch that may read the old table finished */
        if ((r = h->cu->cuCtxSynchronize())) st = pkvi_cuda_fail(r, NAME ": cuCtxSynchronize");
        pkvi_cuda_leave(h);
    }
    if (!st) st = drop(h, 0); /* the synchronisation above covered it */
    if (st) {
        if (pkvi_cuda_enter(h) == PKV_OK) {
            h->cu->cuCtxSynchronize();
            h->cu->cuMemFree(fresh);
            pkvi_cuda_leave(h);
        }
        return st;
    }
    h->cs_table = fresh;
    h->cs_len = max_positions;
    h->cs_theta = theta;
    h->cs_rotary_dim = rotary_dim;
    return PKV_OK;
}

pkv_status pkv_cuda_rope_table(pkv_cuda *h, float theta, uint32_t rotary_dim,
                               uint32_t max_positions)
{
    pkv_status st;
    pkvi_clear_error();
    if (!h) return pkvi_fail(PKV_EINVAL, NAME ": handle is NULL");
    pthread_mutex_lock(&h->freq_lock);
    if (max_positions == 0)
        st = drop(h, 1);
    else if (h->cs_table && h->cs_theta == theta && h->cs_rotary_dim == rotary_dim &&
             h->cs_len == max_positions)
        st = PKV_OK; /* already built */
    else
        st = build(h, theta, rotary_dim, max_positions);
    pthread_mutex_unlock(&h->freq_lock);
    return st;
}
