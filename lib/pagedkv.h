/* pagedkv: the bit-exact specification of paged KV-cache writes, and CUDA kernels for them.
 * This is the whole public C API. It is C99 and C++ clean and includes only standard headers. */
#ifndef PAGEDKV_H
#define PAGEDKV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status ------------------------------------------------------------------------------ */

/* Every function that can fail returns a pkv_status. On failure, pkv_last_error() gives a
 * message (per thread) that names what was wrong, for example the descriptor field. */
typedef enum pkv_status {
    PKV_OK = 0,
    PKV_EINVAL = -1,   /* an argument or descriptor field is invalid */
    PKV_ERANGE = -2,   /* a size or extent does not fit the representable range */
    PKV_ENOMEM = -3,   /* memory could not be allocated */
    PKV_ENODEV = -4,   /* no CUDA driver or no such device */
    PKV_ECUDA = -5,    /* the CUDA driver reported an error */
    PKV_ENOTSUP = -6,  /* this build or device does not support the request */
    PKV_EINTERNAL = -7 /* a bug in pagedkv; please report it */
} pkv_status;

/* A static, short description of a status ("invalid argument"). Never NULL. */
const char *pkv_strerror(pkv_status status);

/* The detailed message of the most recent failure in the calling thread ("" if none). The
 * pointer stays valid until the next pagedkv call in that thread. */
const char *pkv_last_error(void);

/* The library version, "MAJOR.MINOR.PATCH". */
const char *pkv_version(void);

/* ---- Operations ---------------------------------------------------------------------------- */

typedef enum pkv_op {
    PKV_OP_FILL_SLOTS = 0,      /* slot mapping from an int32 block table */
    PKV_OP_WRITE_BF16 = 1,      /* BF16 K and V paged write (bit copy) */
    PKV_OP_WRITE_V_BF16 = 2,    /* BF16 V-only paged write (bit copy) */
    PKV_OP_WRITE_FP8 = 3,       /* FP8 E4M3 K and V paged write with dequant scales */
    PKV_OP_FUSED_BF16 = 4,      /* K RMSNorm(1+w) + RoPE + BF16 write, one rounding */
    PKV_OP_FUSED_MROPE_BF16 = 5, /* the same with interleaved MRoPE */
    PKV_OP_FUSED_FP8_K = 6,     /* K RMSNorm + RoPE + FP8 write of K, one FP8 cast */
    PKV_OP_FUSED_FP8_KV = 7     /* K RMSNorm + RoPE + FP8 write of K and V, chain-exact */
} pkv_op;
#define PKV_OP_COUNT 8

/* The op's short name ("write_bf16"), or NULL for a value that is not a pkv_op. */
const char *pkv_op_name(pkv_op op);

/* ---- Descriptors --------------------------------------------------------------------------- */

/* Limits, enforced by the validation functions (doc/SPEC.md). */
#define PKV_MAX_FUSED_HEAD_DIM 512u /* head_dim of the fused (norm + RoPE) ops */
#define PKV_MAX_TOKENS 0x7fffffffu  /* num_tokens and count of one call */

/* A paged cache pool: [num_blocks][block_size][num_kv_heads][head_dim] (NHD), with blocks
 * block_stride elements apart. K and V pools of one op share this layout. */
typedef struct pkv_cache_layout {
    uint32_t num_kv_heads; /* heads per token, >= 1 */
    uint32_t head_dim;     /* elements per head, >= 1 */
    uint32_t block_size;   /* tokens per block, >= 1 */
    uint64_t num_blocks;   /* blocks in the pool; slots >= num_blocks * block_size are skipped
                            * and counted */
    uint64_t block_stride; /* elements from one block to the next; 0 = dense
                            * (block_size * num_kv_heads * head_dim); smaller is an error */
} pkv_cache_layout;

/* PKV_OP_FILL_SLOTS: slots[i] = block_table[p / block_size] * block_size + p % block_size for
 * p = start_pos + i, i < count; -1 where p / block_size >= table_len or the entry is < 0. */
typedef struct pkv_fill_slots_desc {
    uint32_t block_size; /* tokens per block, >= 1 */
    uint32_t start_pos;  /* position of the first slot to fill */
    uint32_t count;      /* slots to fill */
    uint32_t table_len;  /* entries in the block table */
} pkv_fill_slots_desc;

/* PKV_OP_WRITE_BF16, PKV_OP_WRITE_V_BF16, PKV_OP_WRITE_FP8: sources are
 * [num_tokens][num_kv_heads][head_dim] BF16 with token rows *_row_stride elements apart. */
typedef struct pkv_write_desc {
    pkv_cache_layout cache;
    uint32_t num_tokens;   /* entries of slot_mapping; sources may have more rows */
    uint64_t k_row_stride; /* elements between K source rows; 0 = packed (ignored for V-only) */
    uint64_t v_row_stride; /* elements between V source rows; 0 = packed */
    float k_scale;         /* PKV_OP_WRITE_FP8: dequant scale of K (finite, > 0) */
    float v_scale;         /* PKV_OP_WRITE_FP8: dequant scale of V (finite, > 0) */
} pkv_write_desc;

/* PKV_OP_FUSED_*: K is normalised per head with RMSNorm and a (1 + w) weight, rotated with
 * NeoX RoPE on its first rotary_dim elements, and written; the FP8 K+V op also writes V. */
typedef struct pkv_fused_desc {
    pkv_cache_layout cache;
    uint32_t num_tokens;
    uint64_t k_row_stride;       /* elements between K source rows; 0 = packed */
    uint64_t v_row_stride;       /* PKV_OP_FUSED_FP8_KV: elements between V rows; 0 = packed */
    uint32_t rotary_dim;         /* even, <= head_dim; 0 = no rotation */
    float theta;                 /* RoPE base, finite and >= 1 */
    float rms_eps;               /* finite and >= 0 */
    float k_scale;               /* PKV_OP_FUSED_FP8_KV: dequant scale of K (finite, > 0) */
    float v_scale;               /* PKV_OP_FUSED_FP8_KV: dequant scale of V (finite, > 0) */
    float k_inv_scale;           /* PKV_OP_FUSED_FP8_K: quant multiplier (finite, > 0) */
    uint32_t mrope_section[3];   /* PKV_OP_FUSED_MROPE_BF16: pairs of t, h, w; all zero = the
                                  * p % 3 rule, else they sum to rotary_dim / 2 */
} pkv_fused_desc;

/* Validation: PKV_OK, or PKV_EINVAL / PKV_ERANGE with a message that names the field. Every
 * op runs the same check first; these are exposed so callers can validate once up front. */
pkv_status pkv_fill_slots_check(const pkv_fill_slots_desc *desc);
pkv_status pkv_write_check(pkv_op op, const pkv_write_desc *desc);
pkv_status pkv_fused_check(pkv_op op, const pkv_fused_desc *desc);

/* ---- The reference (ref/): host pointers ---------------------------------------------------
 *
 * BF16 and FP8 values are passed as their bit patterns (uint16_t, uint8_t). Every op validates
 * its descriptor and pointers first and writes nothing on failure. A token whose slot is < 0
 * writes nothing; a slot >= num_blocks * block_size writes nothing and is counted: the count
 * is ADDED to *oob_count (pass NULL to ignore it). Nothing outside the described buffers is
 * read or written. */

pkv_status pkv_ref_fill_slots(const pkv_fill_slots_desc *desc, const int32_t *block_table,
                              int64_t *slots);

pkv_status pkv_ref_write_bf16(const pkv_write_desc *desc, const uint16_t *key,
                              const uint16_t *value, const int64_t *slot_mapping,
                              uint16_t *k_cache, uint16_t *v_cache, uint64_t *oob_count);

pkv_status pkv_ref_write_v_bf16(const pkv_write_desc *desc, const uint16_t *value,
                                const int64_t *slot_mapping, uint16_t *v_cache,
                                uint64_t *oob_count);

pkv_status pkv_ref_write_fp8(const pkv_write_desc *desc, const uint16_t *key,
                             const uint16_t *value, const int64_t *slot_mapping,
                             uint8_t *k_cache, uint8_t *v_cache, uint64_t *oob_count);

/* k_norm_weight: head_dim BF16 weights w, applied as (1 + w). positions: one per token. */
pkv_status pkv_ref_fused_bf16(const pkv_fused_desc *desc, const uint16_t *key,
                              const uint16_t *k_norm_weight, const uint32_t *positions,
                              const int64_t *slot_mapping, uint16_t *k_cache,
                              uint64_t *oob_count);

pkv_status pkv_ref_fused_mrope_bf16(const pkv_fused_desc *desc, const uint16_t *key,
                                    const uint16_t *k_norm_weight, const uint32_t *pos_t,
                                    const uint32_t *pos_h, const uint32_t *pos_w,
                                    const int64_t *slot_mapping, uint16_t *k_cache,
                                    uint64_t *oob_count);

pkv_status pkv_ref_fused_fp8_k(const pkv_fused_desc *desc, const uint16_t *key,
                               const uint16_t *k_norm_weight, const uint32_t *positions,
                               const int64_t *slot_mapping, uint8_t *k_cache,
                               uint64_t *oob_count);

pkv_status pkv_ref_fused_fp8_kv(const pkv_fused_desc *desc, const uint16_t *key,
                                const uint16_t *value, const uint16_t *k_norm_weight,
                                const uint32_t *positions, const int64_t *slot_mapping,
                                uint8_t *k_cache, uint8_t *v_cache, uint64_t *oob_count);

/* Building blocks of the chain that PKV_OP_FUSED_FP8_KV equals. Both work on packed BF16
 * vectors of head_dim elements (rows of them; in place is allowed for rms_norm: out == x).
 * rms_norm: pair-leaf reduction tree, (1 + w) weight, one BF16 rounding at the store.
 * rope: rows = num_tokens * heads_per_token, row r uses positions[r / heads_per_token]. */
pkv_status pkv_ref_rms_norm(uint64_t rows, uint32_t head_dim, const uint16_t *x,
                            const uint16_t *weight, float eps, uint16_t *out);
pkv_status pkv_ref_rope(uint32_t num_tokens, uint32_t heads_per_token, uint32_t head_dim,
                        uint32_t rotary_dim, float theta, const uint32_t *positions,
                        uint16_t *x);

/* ---- The CUDA backend: device pointers (uint64_t), a CUstream as void * -------------------
 *
 * The driver (libcuda.so.1) is loaded at run time; without it, or without a device, these
 * return PKV_ENODEV. A handle uses the device's primary context, so it works beside the CUDA
 * runtime (PyTorch) in one process, and from several threads. Launchers validate exactly as
 * the reference does (same status, same message), launch asynchronously on the stream and
 * return; PKV_ECUDA carries the driver's error name. oob_count, if not 0, is the device
 * address of a uint64 counter to which the op atomically adds its out-of-range tokens. */
typedef struct pkv_cuda pkv_cuda;

pkv_status pkv_cuda_device_count(int *count);
pkv_status pkv_cuda_open(int ordinal, pkv_cuda **out);
void pkv_cuda_close(pkv_cuda *h);
/* "NVIDIA H200 (sm_90)" */
const char *pkv_cuda_describe(const pkv_cuda *h);
pkv_status pkv_cuda_synchronize(pkv_cuda *h, void *stream);
/* Programmatic dependent launch (sm_90 or later, driver 12.3 or later): h's launches may then
 * start while the kernel ahead of them in the stream finishes, and let the next such launch
 * start while they finish. Every pagedkv kernel waits for the kernel ahead of it to complete,
 * its writes visible, before it touches memory, so the bytes and the stream order are those of
 * plain launches; in a CUDA graph or a stream of small launches the gaps between kernels
 * shrink. On by default where available (PKV_CUDA_PDL=0 in the environment when a handle is
 * opened: off). enable 0 turns it off for h's later launches; enable 1 turns it on, or
 * returns PKV_ENOTSUP where it is not available (an older GPU or driver, or the compute_80 PTX
 * JIT-compiled). A kernel of yours launched after one of ours with the attribute must itself
 * wait (cudaGridDependencySynchronize) before reading what ours wrote. */
pkv_status pkv_cuda_set_pdl(pkv_cuda *h, int enable);

/* Plain device memory, for tools and tests (engines bring their own). */
pkv_status pkv_cuda_alloc(pkv_cuda *h, size_t bytes, uint64_t *ptr);
pkv_status pkv_cuda_free(pkv_cuda *h, uint64_t ptr);
pkv_status pkv_cuda_upload(pkv_cuda *h, uint64_t dst, const void *src, size_t bytes);
pkv_status pkv_cuda_download(pkv_cuda *h, void *dst, uint64_t src, size_t bytes);
pkv_status pkv_cuda_fill(pkv_cuda *h, uint64_t dst, unsigned char byte, size_t bytes);

pkv_status pkv_cuda_fill_slots(pkv_cuda *h, const pkv_fill_slots_desc *desc,
                               uint64_t block_table, uint64_t slots, void *stream);
pkv_status pkv_cuda_write_bf16(pkv_cuda *h, const pkv_write_desc *desc, uint64_t key,
                               uint64_t value, uint64_t slot_mapping, uint64_t k_cache,
                               uint64_t v_cache, uint64_t oob_count, void *stream);
pkv_status pkv_cuda_write_v_bf16(pkv_cuda *h, const pkv_write_desc *desc, uint64_t value,
                                 uint64_t slot_mapping, uint64_t v_cache, uint64_t oob_count,
                                 void *stream);
pkv_status pkv_cuda_write_fp8(pkv_cuda *h, const pkv_write_desc *desc, uint64_t key,
                              uint64_t value, uint64_t slot_mapping, uint64_t k_cache,
                              uint64_t v_cache, uint64_t oob_count, void *stream);
pkv_status pkv_cuda_fused_bf16(pkv_cuda *h, const pkv_fused_desc *desc, uint64_t key,
                               uint64_t k_norm_weight, uint64_t positions,
                               uint64_t slot_mapping, uint64_t k_cache, uint64_t oob_count,
                               void *stream);
pkv_status pkv_cuda_fused_mrope_bf16(pkv_cuda *h, const pkv_fused_desc *desc, uint64_t key,
                                     uint64_t k_norm_weight, uint64_t pos_t, uint64_t pos_h,
                                     uint64_t pos_w, uint64_t slot_mapping, uint64_t k_cache,
                                     uint64_t oob_count, void *stream);
pkv_status pkv_cuda_fused_fp8_k(pkv_cuda *h, const pkv_fused_desc *desc, uint64_t key,
                                uint64_t k_norm_weight, uint64_t positions,
                                uint64_t slot_mapping, uint64_t k_cache, uint64_t oob_count,
                                void *stream);
pkv_status pkv_cuda_fused_fp8_kv(pkv_cuda *h, const pkv_fused_desc *desc, uint64_t key,
                                 uint64_t value, uint64_t k_norm_weight, uint64_t positions,
                                 uint64_t slot_mapping, uint64_t k_cache, uint64_t v_cache,
                                 uint64_t oob_count, void *stream);

/* An optional speed-up of the fused ops: a table of the RoPE cos and sin of every pair of
 * (theta, rotary_dim) at positions 0 .. max_positions - 1, computed on the device once (4 *
 * rotary_dim bytes per position) with the same angle and the same correctly rounded functions
 * the kernels use. Fused launches on h with that theta and rotary_dim then read it for tokens
 * whose positions it covers, and compute the rest: the bytes written are the same either way.
 * One table per handle: this replaces the last one (a call with the same arguments returns at
 * once); max_positions 0 frees it (pkv_cuda_close also does). Building or freeing a table
 * synchronises the device. Call it while no other thread launches on h, and before capturing
 * CUDA graphs of fused launches: a captured launch keeps the table it was captured with. */
pkv_status pkv_cuda_rope_table(pkv_cuda *h, float theta, uint32_t rotary_dim,
                               uint32_t max_positions);

/* ---- Exact numeric primitives (doc/SPEC.md, "Numerics") ------------------------------------ */

/* binary32 -> BF16, round to nearest even; any NaN -> 0x7FFF; overflow -> +-Inf. */
uint16_t pkv_bf16_from_f32(float x);
/* BF16 -> binary32, exact. */
float pkv_bf16_to_f32(uint16_t b);
/* binary32 -> FP8 E4M3FN, round to nearest even, saturating: |x| > 448 and +-Inf -> +-448;
 * any NaN -> 0x7F; zero and underflow keep the sign. */
uint8_t pkv_e4m3_from_f32(float x);
/* FP8 E4M3FN -> binary32, exact; 0x7F / 0xFF decode to a quiet NaN of that sign. */
float pkv_e4m3_to_f32(uint8_t q);

/* Correctly rounded binary32 1 / sqrt(y): +0 -> +Inf, -0 -> -Inf, y < 0 -> NaN, +Inf -> +0. */
float pkv_rsqrtf_cr(float y);

/* Correctly rounded binary32 theta^(-2p / rotary_dim), for 1 <= theta <= FLT_MAX,
 * rotary_dim even and >= 2, p < rotary_dim / 2. */
pkv_status pkv_inv_freq(float theta, uint32_t rotary_dim, uint32_t p, float *out);
/* The whole table, out[p] for p < rotary_dim / 2. */
pkv_status pkv_inv_freq_table(float theta, uint32_t rotary_dim, float *out);

/* Correctly rounded binary32 sine and cosine (round to nearest even) of every binary32 input:
 * sin(+-0) = +-0, cos(+-0) = 1, NaN and +-Inf -> the quiet NaN 0x7FC00000. */
float pkv_sinf_cr(float x);
float pkv_cosf_cr(float x);
void pkv_sincosf_cr(float x, float *sin_out, float *cos_out);

/* The normative sum-of-squares reduction tree over n leaves (n <= 1024): leaves padded with
 * +0.0f to a multiple of 32, a 32-lane xor butterfly per chunk, then the butterfly over the
 * chunk sums padded to 32. */
pkv_status pkv_tree_sum(const float *leaves, uint32_t n, float *out);

#ifdef __cplusplus
}
#endif

#endif /* PAGEDKV_H */
