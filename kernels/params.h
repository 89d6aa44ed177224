/* The kernels' parameter blocks, shared by the C launchers (lib/) and the CUDA kernels: one
 * struct passed by value per launch, so both sides agree on the layout by construction.
 * Pointers are device addresses (uint64_t); 0 means absent. Sizes are elements. */
#ifndef PKV_KERNEL_PARAMS_H
#define PKV_KERNEL_PARAMS_H

#include <stdint.h>

#include "fastdiv.h"

#define PKVK_MAX_PAIRS 256 /* PKV_MAX_FUSED_HEAD_DIM / 2 */

/* The warp kernels' threads per block (kernels/fused_warp.cu): a call of fewer warps takes one
 * block of as many warps (lib/cuda_warp_plan.c), so a block's first warp is blockIdx.x times
 * this */
#define PKVK_WARP_THREADS 256
/* The halves kernels' blocks per multiprocessor (their launch bounds): their grid is one wave
 * of that many blocks per multiprocessor at most (kernels/fused_halves.cu) */
#define PKVK_HALVES_BLOCKS_PER_SM 4
/* MRoPE's 8- and 16-element halves kernels: 3 (up to 85 registers: with 64 they rematerialise
 * and spill around the shared rows of tokens of three positions, or with 16 elements the three
 * rows' loads; on the H200 at 8 x 128 x 65,536 4-5% faster than with 4; with the loads, at 4
 * text tokens took 24% and image patches 16% longer) */
#define PKVK_MROPE_HALVES_BLOCKS_PER_SM 3
/* The 16-element halves kernels (and MRoPE's): as many warps a multiprocessor, in blocks of 4
 * (on the H200, five interleaved runs at 8 x 128 and 4 x 256, 8,192-65,536 tokens, against
 * blocks of 8: fused_fp8_k 8 x 128 2-4% faster from 16,384 tokens, MRoPE's image patches 3-4%,
 * the other rows -1.9% to +1.3%; doc/PERFORMANCE-HISTORY.md) */
#define PKVK_HALVES16_THREADS 128
#define PKVK_HALVES16_BLOCKS_PER_SM 8
#define PKVK_MROPE_HALVES16_BLOCKS_PER_SM 6
/* The 32-element halves kernel: its stages take twice the shared memory per warp, so blocks
 * of 4 warps (static shared memory stays under 48 KB), 6 per multiprocessor (80 registers) */
#define PKVK_HALVES32_THREADS 128
#define PKVK_HALVES32_BLOCKS_PER_SM 6
/* The wide kernel (head_dim 64, kernels/fused_wide.cu): a tile's stages take 8 KB a warp, so
 * blocks of 4 warps, 6 per multiprocessor (80 registers) */
#define PKVK_WIDE_THREADS 128
#define PKVK_WIDE_BLOCKS_PER_SM 6
/* and MRoPE's, 5 (96 registers: with 80 it spills around its image patches' three rows) */
#define PKVK_MROPE_WIDE_BLOCKS_PER_SM 5

typedef struct pkvk_geom {
    uint64_t num_slots;    /* num_blocks * block_size */
    uint64_t block_stride; /* resolved */
    uint64_t row;          /* num_kv_heads * head_dim */
    uint32_t block_size, num_kv_heads, head_dim, pad_;
} pkvk_geom;

typedef struct pkvk_fill_slots_params {
    uint64_t block_table, slots;
    uint32_t block_size, start_pos, count, table_len;
} pkvk_fill_slots_params;

typedef struct pkvk_write_params {
    pkvk_geom g;
    uint64_t key, value, slots, k_cache, v_cache, oob; /* key / k_cache 0: V only */
    uint64_t k_stride, v_stride;
    float inv_k, inv_v; /* FP8: RN(1 / scale) */
    uint32_t num_tokens, fp8;
} pkvk_write_params;

/* pkvk_write_vec32's: the write's, then the chunks of 8 elements in a row and block_size as
 * divisors (kernels/write_vec.cu). Apart, because in pkvk_write_params they changed the code
 * nvcc made for the other write kernels. Every write kernel is launched with this block: those
 * that take pkvk_write_params read its first member. */
typedef struct pkvk_write32_params {
    pkvk_write_params w;
    pkvk_div32 div_cpr, div_bs;
    uint32_t prefetch_blocks; /* the blocks of a first wave (they prefetch before the wait) */
    uint32_t flat;            /* block_stride == block_size * row: a slot's row at slot * row */
} pkvk_write32_params;

typedef struct pkvk_fused_params {
    pkvk_geom g;
    uint64_t key, value, weight, pos[3], slots, k_cache, v_cache, oob;
    uint64_t k_stride, v_stride;
    uint64_t cs_table; /* the handle's cos/sin rows (pkvk_rope_table) for this theta and
                        * rotary_dim, or 0; rows for positions < cs_len */
    uint32_t cs_len;
    uint32_t num_tokens, rotary_dim;
    uint32_t section[3]; /* MRoPE sections; all 0 = p % 3; mrope = 0: one stream */
    uint32_t mrope;
    uint32_t k_fp8;      /* K cache is FP8 (ops 7, 8) */
    uint32_t group, ipb; /* 16-byte and warp kernels: threads per (token, head) item; items per
                          * block (16-byte and `_small` warp kernels) */
    uint32_t idx32;      /* 16-byte kernels: grid * ipb + num_kv_heads fits 32 bits */
    float inv_hd;        /* 1 / head_dim when head_dim is a power of two (exact), else 0 */
    /* 16-byte kernels: group, num_kv_heads, rotary_dim / 2 and block_size as divisors */
    pkvk_div32 div_group, div_heads, div_half, div_bs;
    float eps, k_mul, v_mul; /* k_mul: k_inv_scale (op 7) or RN(1 / k_scale) (op 8) */
    float inv_freq[PKVK_MAX_PAIRS];
} pkvk_fused_params;

/* Row pos of a cos/sin table: cos then sin of RN(pos * inv_freq[p]) for every pair p, the
 * fused kernels' own angle and functions (kernels/rope_table.cu). */
typedef struct pkvk_rope_table_params {
    uint64_t out;
    uint32_t rotary_dim, len;
    float inv_freq[PKVK_MAX_PAIRS];
} pkvk_rope_table_params;

typedef struct pkvk_numerics_params {
    uint64_t in, out; /* n binary32 bit patterns; 8 * n words */
    uint32_t n, pad_;
} pkvk_numerics_params;

#endif
