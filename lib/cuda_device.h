/* Internal: the device handle and its use by the launchers. */
#ifndef PKV_CUDA_DEVICE_H
#define PKV_CUDA_DEVICE_H

#include "cuda_api.h"

#include <pthread.h>
#include <stdatomic.h>

enum {
    PKVI_K_FILL_SLOTS,
    PKVI_K_WRITE,
    PKVI_K_WRITE_VEC,
    PKVI_K_WRITE_VEC32,
    PKVI_K_FUSED,
    PKVI_K_FUSED_VEC,
    PKVI_K_FUSED_FP8_KV,
    PKVI_K_FUSED_FP8_KV_VEC,
    PKVI_K_FUSED_FP8_KV_VEC16,
    /* the same three reading the handle's cos/sin table */
    PKVI_K_FUSED_VEC_TAB,
    PKVI_K_FUSED_FP8_KV_VEC_TAB,
    PKVI_K_FUSED_FP8_KV_VEC16_TAB,
    PKVI_K_FUSED_WARP, /* with the table, items of one warp (kernels/fused_warp.cu) */
    PKVI_K_FUSED_FP8_KV_WARP,
    PKVI_K_FUSED_WARP_SMALL, /* the same two for calls of one wave: the table row loaded early */
    PKVI_K_FUSED_FP8_KV_WARP_SMALL,
    PKVI_K_FUSED_HALVES, /* the halves form: calls of many waves rotating whole heads */
    PKVI_K_FUSED_FP8_KV_HALVES,
    PKVI_K_FUSED_MROPE_HALVES,
    PKVI_K_FUSED_HALVES16,       /* ops 5 and 7, 16 elements of each half per thread */
    PKVI_K_FUSED_HALVES32,       /* op 5, 32 */
    PKVI_K_FUSED_MROPE_HALVES16, /* MRoPE, 16 */
    PKVI_K_FUSED_MROPE_WARP_SMALL, /* MRoPE in calls of one wave (kernels/fused_warp.cu) */
    PKVI_K_FUSED_HALVES_G4,        /* PKVI_K_FUSED_HALVES for head_dim 64 (ops 5 and 7) */
    PKVI_K_FUSED_WIDE64, /* head_dim 64, tiles of 32 items (kernels/fused_wide.cu): fused_fp8_k */
    PKVI_K_FUSED_MROPE_WIDE64, /* and MRoPE */
    PKVI_K_FUSED_HALVES16_EARLY, /* PKVI_K_FUSED_HALVES16, the next tile's copies first: op 5 */
    PKVI_K_FUSED_WIDE64_T16,     /* PKVI_K_FUSED_WIDE64 in tiles of 16 items: ops 5 and 7 */
    PKVI_K_FUSED_FP8_KV_HALVES_TREE, /* PKVI_K_FUSED_FP8_KV_HALVES, copies after the tree */
    PKVI_K_FUSED_MROPE_WIDE64_T16,   /* PKVI_K_FUSED_MROPE_WIDE64 in tiles of 16 items */
    /* the halves kernels' streaming variants: K, V and the cache rows first out of L2 */
    PKVI_K_FUSED_HALVES_STREAM,
    PKVI_K_FUSED_HALVES16_STREAM,
    PKVI_K_FUSED_FP8_KV_HALVES_TREE_STREAM,
    PKVI_K_FUSED_MROPE_HALVES_STREAM,
    PKVI_K_FUSED_MROPE_HALVES16_STREAM,
    PKVI_K_CONVERT,
    PKVI_K_PROBE,
    PKVI_K_NUMERICS,
    PKVI_K_ROPE_TABLE,
    /* benchmark baselines (kernels/baseline.cu) */
    PKVI_K_NAIVE_WRITE,
    PKVI_K_CHAIN_NORM,
    PKVI_K_CHAIN_ROPE,
    PKVI_K_CHAIN_STORE,
    PKVI_K_FLOOR, /* pkv bench's lower bound at decode sizes */
    PKVI_K_DELAY, /* pkv bench: holds the stream while the timed work is queued behind it */
    PKVI_K_COUNT
};

struct pkv_cuda {
    const pkvi_cuda_api *cu;
    pkvi_CUdevice dev;
    int sm_count;       /* multiprocessors: how many blocks a small launch should spread over */
    int l2_bytes;       /* the L2's size: which calls take the streaming kernels (0: none) */
    int threads_per_sm; /* resident threads a multiprocessor: a write's first wave */
    pkvi_CUcontext ctx; /* the primary context, retained */
    pkvi_CUmodule module;
    pkvi_CUfunction fn[PKVI_K_COUNT];
    int pdl_available; /* programmatic dependent launch (kernels/grid_dep.cuh) can be used */
    atomic_int pdl;    /* and launches ask for it (pkv_cuda_set_pdl) */
    char description[128];
    /* The last inv_freq table, so that a launch does not pay for the correctly rounded pow
     * (about 50 us for 64 pairs): engines call with one (theta, rotary_dim) per model. */
    pthread_mutex_t freq_lock; /* guards these and the cos/sin table */
    int freq_valid;
    float freq_theta;
    uint32_t freq_rotary_dim;
    float freq_table[256];
    /* pkv_cuda_rope_table's device table: rows for positions < cs_len, or cs_table = 0 */
    uint64_t cs_table;
    uint32_t cs_len, cs_rotary_dim;
    float cs_theta;
};

/* What a fused launch of (theta, rotary_dim) needs for RoPE: the inv_freq table (from the
 * handle's cache when it matches) and the handle's cos/sin table when it was built for the
 * same theta and rotary_dim (else *cs_table = 0, *cs_len = 0). */
pkv_status pkvi_cuda_rope(pkv_cuda *h, float theta, uint32_t rotary_dim, float *inv_freq,
                          uint64_t *cs_table, uint32_t *cs_len);

/* Make h's context current for this thread (push) and undo it (pop). */
pkv_status pkvi_cuda_enter(pkv_cuda *h);
void pkvi_cuda_leave(pkv_cuda *h);

/* Launch kernel k with one parameter block. */
pkv_status pkvi_cuda_launch(pkv_cuda *h, int k, unsigned gx, unsigned gy, unsigned block,
                            void *params, void *stream);

/* The same with the kernel's argument array, h's context already current (as pkvi_cuda_enter
 * makes it): as a programmatic dependent launch when h->pdl is set. */
pkvi_CUresult pkvi_cuda_launch_args(pkv_cuda *h, int k, unsigned gx, unsigned gy, unsigned block,
                                    void **args, void *stream);

#endif
