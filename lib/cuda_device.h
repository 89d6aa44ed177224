/* Internal: the device handle and its use by the launchers. */
#ifndef PKV_CUDA_DEVICE_H
#define PKV_CUDA_DEVICE_H

#include "cuda_api.h"

#include <pthread.h>

enum {
    PKVI_K_FILL_SLOTS,
    PKVI_K_WRITE,
    PKVI_K_WRITE_VEC,
    PKVI_K_FUSED,
    PKVI_K_FUSED_VEC,
    PKVI_K_FUSED_FP8_KV,
    PKVI_K_FUSED_FP8_KV_VEC,
    PKVI_K_FUSED_FP8_KV_VEC16,
    PKVI_K_CONVERT,
    PKVI_K_PROBE,
    PKVI_K_NUMERICS,
    /* benchmark baselines (kernels/baseline.cu) */
    PKVI_K_NAIVE_WRITE,
    PKVI_K_CHAIN_NORM,
    PKVI_K_CHAIN_ROPE,
    PKVI_K_CHAIN_STORE,
    PKVI_K_COUNT
};

struct pkv_cuda {
    const pkvi_cuda_api *cu;
    pkvi_CUdevice dev;
    int sm_count;       /* multiprocessors: how many blocks a small launch should spread over */
    pkvi_CUcontext ctx; /* the primary context, retained */
    pkvi_CUmodule module;
    pkvi_CUfunction fn[PKVI_K_COUNT];
    char description[128];
    /* The last inv_freq table, so that a launch does not pay for the correctly rounded pow
     * (about 50 us for 64 pairs): engines call with one (theta, rotary_dim) per model. */
    pthread_mutex_t freq_lock;
    int freq_valid;
    float freq_theta;
    uint32_t freq_rotary_dim;
    float freq_table[256];
};

/* inv_freq table for (theta, rotary_dim), from the handle's cache when it matches. */
pkv_status pkvi_cuda_inv_freq(pkv_cuda *h, float theta, uint32_t rotary_dim, float *out);

/* Make h's context current for this thread (push) and undo it (pop). */
pkv_status pkvi_cuda_enter(pkv_cuda *h);
void pkvi_cuda_leave(pkv_cuda *h);

/* Launch kernel k with one parameter block. */
pkv_status pkvi_cuda_launch(pkv_cuda *h, int k, unsigned gx, unsigned gy, unsigned block,
                            void *params, void *stream);

#endif
