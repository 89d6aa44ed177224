/* The CUDA launcher's kernel choice for fused calls whose buffers are 16-byte aligned
 * (lib/cuda_ops.c, lib/cuda_warp_plan.c; the write calls' in t/cuda_write_plan.c, the streaming
 * variants' in t/cuda_stream_plan.c): the warp kernels
 * with a matching cos/sin table and at most 16 heads, in their _small form when the call fits one
 * wave, else in the halves form where the whole head is rotated and each half is whole chunks; the
 * 16-byte block kernels for MRoPE in one wave, more heads, no table, and item counts past the warp
 * kernels' 32-bit indices; the element kernels whenever a slot, stride or row could leave the
 * 16-byte kernels' 32 x 32-bit offset arithmetic. Only descriptors and plans: nothing is launched
 * and the addresses are never dereferenced, so pools far beyond the device's memory can be
 * described. That each kernel writes the reference's bytes is for t/cuda_ops, t/cuda_rope_table,
 * pkv check and the fuzzers; this test keeps the 32-bit kernels away from calls they cannot
 * address. */
#include "config.h"
#include "fused_plan.h"

#define TWO32 4294967296ull

static void with_table(pkv_cuda *h)
{
    const pkv_op bf16 = PKV_OP_FUSED_BF16, kv = PKV_OP_FUSED_FP8_KV;
    pkv_fused_desc d = desc(8, 128, 64);
    unsigned grid = 0;
    if (pkv_cuda_rope_table(h, 1e4f, 128, 1000) != PKV_OK) bail("%s", pkv_last_error());
    is_int(kernel(h, bf16, &d, &grid), PKVI_K_FUSED_WARP_SMALL, "8 x 128, 64 tokens: _small");
    ok(grid <= (unsigned)h->sm_count, "  in one wave (%u blocks)", grid);
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_WARP_SMALL, "  and for fused_fp8_kv");
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_WARP_SMALL,
           "  fused_fp8_k: the same kernel as fused_bf16");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_WARP_SMALL,
           "  MRoPE: its own _small kernel");
    /* the _small kernels take blocks of 2, 4 or 8 warps, the smallest that keep the grid
     * within 64 blocks, or one block of fewer warps, and index items by blockIdx.x * p.ipb;
     * at head_dim 128 an item is 16 lanes, two a warp */
    for (unsigned i = 0; i < 9; i++) {
        static const uint32_t heads[9] = {8, 8, 1, 1, 16, 4, 8, 1, 8},
                              toks[9] = {1, 3, 1, 7, 33, 100, 64, 256, 32};
        static const unsigned want_block[9] = {64, 64, 32, 64, 256, 128, 128, 64, 64};
        pkv_fused_desc s = desc(heads[i], 128, toks[i]);
        const unsigned warps = (heads[i] * toks[i] + 1) / 2, per = want_block[i] / 32;
        for (int o = 0; o < 2; o++) {
            int k = kernel(h, o ? bf16 : PKV_OP_FUSED_MROPE_BF16, &s, &grid);
            ok(k == (o ? PKVI_K_FUSED_WARP_SMALL : PKVI_K_FUSED_MROPE_WARP_SMALL) &&
                   last_block == want_block[i] && grid == (warps + per - 1) / per &&
                   last_ipb == per * 2,
               "  %s %u x 128 x %u tokens (%u warps): _small, %u blocks of %u threads, %u items "
               "a block",
               o ? "fused_bf16" : "MRoPE", heads[i], toks[i], warps, grid, last_block, last_ipb);
        }
    }
    d = desc(16, 128, 65536);
    is_int(kernel(h, bf16, &d, &grid), PKVI_K_FUSED_HALVES16_EARLY,
           "16 x 128, 65536 tokens: many waves, 16 elements of each half (the next tile's "
           "copies first)");
    is_int(grid, (long long)h->sm_count * PKVK_HALVES16_BLOCKS_PER_SM,
           "  one wave of blocks, which loop over the tiles");
    is_int(last_block, PKVK_HALVES16_THREADS, "  of %d threads", PKVK_HALVES16_THREADS);
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, &grid), PKVI_K_FUSED_HALVES16,
           "  fused_fp8_k: 16 elements, the next tile's copies late");
    is_int(grid, (long long)h->sm_count * PKVK_HALVES16_BLOCKS_PER_SM, "  the same grid");
    is_int(kernel(h, kv, &d, &grid), PKVI_K_FUSED_FP8_KV_HALVES_TREE,
           "  fused_fp8_kv: 8 elements, the next tile's copies after the tree");
    is_int(grid, (long long)h->sm_count * PKVK_HALVES_BLOCKS_PER_SM, "  one wave of blocks");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, &grid), PKVI_K_FUSED_MROPE_HALVES16,
           "  MRoPE: its halves form, 16 elements");
    is_int(grid, (long long)h->sm_count * PKVK_MROPE_HALVES16_BLOCKS_PER_SM,
           "  one wave of its blocks (%d per multiprocessor)", PKVK_MROPE_HALVES16_BLOCKS_PER_SM);
    is_int(last_block, PKVK_HALVES16_THREADS, "  blocks of %d threads", PKVK_HALVES16_THREADS);
    /* at head_dim 128 16 elements for fused_bf16 from 8 tiles (of 8 items) a warp of the
     * kernel's one wave, for fused_fp8_k from 3, for MRoPE always; else 8: at 8 heads, T
     * tokens are T tiles */
    {
        const long long w =
            (long long)h->sm_count * PKVK_HALVES16_BLOCKS_PER_SM * (PKVK_HALVES16_THREADS / 32);
        d = desc(8, 128, (uint32_t)(8 * w));
        is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES16_EARLY,
               "8 x 128, %u tokens: 16 elements", d.num_tokens);
        d.num_tokens--;
        is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES, "  a tile fewer: 8 elements");
        d.num_tokens = (uint32_t)(3 * w);
        is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_HALVES16,
               "  fused_fp8_k, %u tokens (3 a warp): 16 elements", d.num_tokens);
        d.num_tokens--;
        is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_HALVES,
               "  a tile fewer: 8 elements");
        d.num_tokens = 4096;
        is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_HALVES16,
               "  MRoPE, 4096 tokens: 16 elements");
    }
    d = desc(2, 128, 65536);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES, "2 x 128: 8 elements of each half");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_HALVES,
           "  and for MRoPE");
    d.rotary_dim = 64; /* a table for another rotary_dim: the block kernel without it */
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_VEC, "  rotary_dim 64: no table");
    d = desc(17, 128, 65536);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_VEC_TAB, "17 heads: the block kernel");
    /* the halves form's item indices: the last tile's warp index plus a block's spare warps
     * must stay below 2^32 / 32. 16 heads of 4 threads (16 elements), 8 items a warp: */
    d = desc(16, 128, (1u << 26) - 5u);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES16_EARLY, "2^30 - 80 items: halves form");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_HALVES16,
           "  and MRoPE's");
    d = desc(16, 128, (1u << 26) - 4u);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_VEC_TAB, "2^30 - 64 items: block kernel");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_VEC_TAB, "  and MRoPE's");
    /* 16 heads of 8 threads (fused_fp8_kv), 4 items a warp */
    d = desc(16, 128, (1u << 25) - 3u);
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_HALVES_TREE,
           "2^29 - 48 items: fused_fp8_kv halves");
    d = desc(16, 128, (1u << 25) - 2u);
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_VEC16_TAB, "2^29 - 32 items: block kernel");
    /* 2 heads of 8 threads (MRoPE's 8 elements), 4 items a warp: the same bound in items */
    d = desc(2, 128, (1u << 28) - 24u);
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_HALVES,
           "2 x 128, 2^29 - 48 items: MRoPE halves");
    d = desc(2, 128, (1u << 28) - 16u);
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_VEC_TAB,
           "  2^29 - 32 items: block kernel");
    if (pkv_cuda_rope_table(h, 1e4f, 256, 1000) != PKV_OK) bail("%s", pkv_last_error());
    d = desc(4, 256, 1u << 18);
    is_int(kernel(h, bf16, &d, &grid), PKVI_K_FUSED_HALVES32,
           "4 x 256, 2^18 tokens: 32 elements of each half");
    is_int(grid, (long long)h->sm_count * PKVK_HALVES32_BLOCKS_PER_SM,
           "  one wave of its blocks (%d per multiprocessor)", PKVK_HALVES32_BLOCKS_PER_SM);
    is_int(last_block, PKVK_HALVES32_THREADS, "  of %d threads", PKVK_HALVES32_THREADS);
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, &grid), PKVI_K_FUSED_HALVES16,
           "  fused_fp8_k: 16 elements");
    is_int(grid, (long long)h->sm_count * PKVK_HALVES16_BLOCKS_PER_SM, "  one wave of blocks");
    is_int(kernel(h, kv, &d, &grid), PKVI_K_FUSED_FP8_KV_HALVES,
           "  fused_fp8_kv: 8 elements, the next tile's copies after the cos/sin loads");
    is_int(grid, (long long)h->sm_count * PKVK_HALVES_BLOCKS_PER_SM, "  one wave of blocks");
    /* op 8 at head_dim 256 takes that kernel from 12 tiles (of 2 items) a warp of its wave,
     * else the one with the copies after the tree: at 4 heads a token is 2 tiles */
    {
        const uint32_t tn = (uint32_t)(12 * (long long)h->sm_count * PKVK_HALVES_BLOCKS_PER_SM *
                                       (PKVK_WARP_THREADS / 32) / 2);
        d.num_tokens = tn;
        is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_HALVES, "  %u tokens: the same", tn);
        d.num_tokens = tn - 1;
        is_int(kernel(h, kv, &d, &grid), PKVI_K_FUSED_FP8_KV_HALVES_TREE,
               "  %u tokens: copies after the tree", tn - 1);
        is_int(grid, (long long)h->sm_count * PKVK_HALVES_BLOCKS_PER_SM, "  one wave of blocks");
        d.num_tokens = 1u << 18;
    }
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, &grid), PKVI_K_FUSED_MROPE_HALVES16,
           "  MRoPE: 16 elements");
    is_int(grid, (long long)h->sm_count * PKVK_MROPE_HALVES16_BLOCKS_PER_SM,
           "  one wave of its blocks");
    is_int(last_block, PKVK_HALVES16_THREADS, "  of %d threads", PKVK_HALVES16_THREADS);
    /* fused_bf16: 32 elements from 8 tiles (of 8 items) a warp of that kernel's wave; at 4
     * heads 2 T tokens are T tiles, 2 T - 2 are T - 1 */
    {
        const long long t8 =
            8ll * h->sm_count * PKVK_HALVES32_BLOCKS_PER_SM * (PKVK_HALVES32_THREADS / 32);
        d.num_tokens = (uint32_t)(2 * t8);
        is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES32,
               "  fused_bf16, %u tokens: 32 elements", d.num_tokens);
        d.num_tokens = (uint32_t)(2 * t8 - 2);
        is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES16, "  a tile fewer: 16 elements");
        d.num_tokens = 2048;
        is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_HALVES16,
               "  fused_fp8_k, 2048 tokens: 16 elements");
    }
    d = desc(2, 256, 65536);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES, "2 x 256: 8 elements of each half");
    /* 16 heads of 4 threads (32 elements of each half), 8 items a warp, as for 16 x 128 */
    d = desc(16, 256, (1u << 26) - 5u);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES32, "16 x 256, 2^30 - 80 items: halves");
    d = desc(16, 256, (1u << 26) - 4u);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_VEC_TAB, "  2^30 - 64 items: block kernel");
    if (pkv_cuda_rope_table(h, 1e4f, 80, 1000) != PKV_OK) bail("%s", pkv_last_error());
    /* a partial rotation: 8 elements per thread, 16 threads, two items per warp */
    d = desc(8, 128, 65536);
    d.rotary_dim = 80;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP, "rotary_dim 80, many waves: 8-element");
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_WARP, "  and for fused_fp8_kv");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_VEC_TAB,
           "  MRoPE: the block kernel");
    d.num_tokens = 64;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP_SMALL, "  64 tokens: 8-element _small");
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_WARP_SMALL, "  and for fused_fp8_kv");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_WARP_SMALL,
           "  and MRoPE's _small (a partial rotation)");
    d = desc(16, 128, (1u << 24) - 2u);
    d.rotary_dim = 80;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP, "  2^28 - 32 items: warp kernel");
    d = desc(16, 128, (1u << 24) - 1u);
    d.rotary_dim = 80;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_VEC_TAB, "  2^28 - 16 items: block kernel");
    if (pkv_cuda_rope_table(h, 1e4f, 96, 1000) != PKV_OK) bail("%s", pkv_last_error());
    d = desc(8, 120, 65536); /* head_dim % 16 != 0 (and a partial rotation) */
    d.rotary_dim = 96;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP, "head_dim 120, many waves: 8-element");
    /* head_dim 64, 4 threads an item: ops 5 and 7 and MRoPE take the wide kernels in tiles of
     * 16 items in calls of 2 tiles a warp of their wave or more, fused_fp8_k and MRoPE in tiles
     * of 32 in calls of 4 tiles of 32 or more; fewer: MRoPE tiles of 32, the others the kernel
     * with that group size built in (g4); other group sizes the general ones */
    if (pkv_cuda_rope_table(h, 1e4f, 64, 1000) != PKV_OK) bail("%s", pkv_last_error());
    d = desc(16, 64, 65536);
    is_int(kernel(h, bf16, &d, &grid), PKVI_K_FUSED_WIDE64_T16,
           "16 x 64, many waves: halves form, the wide kernel in tiles of 16 items");
    is_int(grid, (long long)h->sm_count * PKVK_WIDE_BLOCKS_PER_SM, "  one wave of its blocks");
    is_int(last_block, PKVK_WIDE_THREADS, "  of %d threads", PKVK_WIDE_THREADS);
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, &grid), PKVI_K_FUSED_WIDE64,
           "  fused_fp8_k: the wide kernel in tiles of 32");
    is_int(grid, (long long)h->sm_count * PKVK_WIDE_BLOCKS_PER_SM, "  one wave of its blocks");
    is_int(last_block, PKVK_WIDE_THREADS, "  of %d threads", PKVK_WIDE_THREADS);
    /* at 16 heads a token is a tile of 16 items and half a tile of 32: n tiles of 16 a warp of
     * a wave of w warps are n w tokens; 4 tiles of 32, 8 w - 1 tokens (8 w - 2: a tile fewer) */
    for (int oi = 0; oi < 3; oi++) {
        const pkv_op op = oi == 0 ? bf16 : oi == 1 ? PKV_OP_FUSED_FP8_K : PKV_OP_FUSED_MROPE_BF16;
        const int per = oi == 2 ? PKVK_MROPE_WIDE_BLOCKS_PER_SM : PKVK_WIDE_BLOCKS_PER_SM,
                  t16 = oi == 2 ? PKVI_K_FUSED_MROPE_WIDE64_T16 : PKVI_K_FUSED_WIDE64_T16,
                  t32 = oi == 2 ? PKVI_K_FUSED_MROPE_WIDE64 : PKVI_K_FUSED_WIDE64,
                  small = oi == 2 ? PKVI_K_FUSED_MROPE_WIDE64 : PKVI_K_FUSED_HALVES_G4;
        const long long w = (long long)h->sm_count * per * (PKVK_WIDE_THREADS / 32);
        d.num_tokens = (uint32_t)(2 * w);
        is_int(kernel(h, op, &d, &grid), t16, "  %s, %u tokens (2 tiles of 16 a warp): tiles of 16",
               pkv_op_name(op), d.num_tokens);
        is_int(grid, (long long)h->sm_count * per, "  one wave of its blocks");
        d.num_tokens = (uint32_t)(2 * w - 1);
        is_int(kernel(h, op, &d, &grid), small, "  %u tokens (a tile fewer): %s", d.num_tokens,
               oi == 2 ? "tiles of 32" : "the g4 kernel");
        /* (tiles of 32: 2 w - 1 tokens are w tiles, a wave) */
        is_int(grid, (long long)h->sm_count * (oi == 2 ? per : PKVK_HALVES_BLOCKS_PER_SM),
               "  one wave of its blocks");
        d.num_tokens = (uint32_t)(8 * w - 2);
        is_int(kernel(h, op, &d, NULL), t16,
               "  %u tokens (4 tiles of 32 a warp but one): tiles of 16", d.num_tokens);
        d.num_tokens = (uint32_t)(8 * w - 1);
        is_int(kernel(h, op, &d, &grid), oi == 0 ? t16 : t32, "  %u tokens: %s", d.num_tokens,
               oi == 0 ? "tiles of 16 still" : "tiles of 32");
        is_int(grid, (long long)h->sm_count * per, "  one wave of its blocks");
    }
    d.num_tokens = (1u << 26) - 5u;
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_WIDE64,
           "  2^30 - 80 items: the wide kernel");
    d.num_tokens = (1u << 26) - 4u;
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_VEC_TAB,
           "  2^30 - 64 items: block kernel");
    d.num_tokens = 65536;
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV_HALVES_TREE,
           "  fused_fp8_kv: its halves kernel (its chunk is the whole head)");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, &grid), PKVI_K_FUSED_MROPE_WIDE64,
           "  MRoPE: its wide kernel");
    is_int(grid, (long long)h->sm_count * PKVK_MROPE_WIDE_BLOCKS_PER_SM,
           "  one wave of its blocks (%d per multiprocessor)", PKVK_MROPE_WIDE_BLOCKS_PER_SM);
    is_int(last_block, PKVK_WIDE_THREADS, "  of %d threads", PKVK_WIDE_THREADS);
    /* MRoPE's tiles of 32 below 2 tiles of 16 a warp: 2048 tokens (or fewer, an even n, on a
     * GPU of few multiprocessors) are 16 n items, n / 2 warps of 32; n + 1: n / 2 + 1 warps (the
     * last of 16 items); a block of PKVK_WIDE_THREADS / 32 warps, one wave of blocks at most */
    {
        const long long wave = (long long)h->sm_count * PKVK_MROPE_WIDE_BLOCKS_PER_SM,
                        w = PKVK_WIDE_THREADS / 32,
                        n = 2049 < 2 * wave * w ? 2048 : 2 * (wave * w - 1),
                        b0 = (n / 2 + w - 1) / w, b1 = (n / 2 + 1 + w - 1) / w;
        d.num_tokens = (uint32_t)n;
        is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, &grid), PKVI_K_FUSED_MROPE_WIDE64,
               "  MRoPE, %u tokens: tiles of 32", d.num_tokens);
        is_int(grid, b0 < wave ? b0 : wave, "  a warp per 32 items (%lld blocks, wave %lld)", b0,
               wave);
        d.num_tokens = (uint32_t)n + 1;
        is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, &grid), PKVI_K_FUSED_MROPE_WIDE64,
               "  %u tokens: the same", d.num_tokens);
        is_int(grid, b1 < wave ? b1 : wave,
               "  a warp more for the last 16 items (%lld blocks, wave %lld)", b1, wave);
    }
    d = desc(3, 64, 1u << 20);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WIDE64_T16, "3 x 64: tiles of 16");
    is_int(kernel(h, PKV_OP_FUSED_FP8_K, &d, NULL), PKVI_K_FUSED_WIDE64,
           "  fused_fp8_k: tiles of 32");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_WIDE64,
           "  and MRoPE's");
    if (pkv_cuda_rope_table(h, 1e4f, 32, 1000) != PKV_OK) bail("%s", pkv_last_error());
    d = desc(16, 32, 65536);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_HALVES, "16 x 32 (2 threads an item): general");
    is_int(kernel(h, PKV_OP_FUSED_MROPE_BF16, &d, NULL), PKVI_K_FUSED_MROPE_HALVES,
           "  and for MRoPE");
    if (pkv_cuda_rope_table(h, 1e4f, 128, 1000) != PKV_OK) bail("%s", pkv_last_error());
}

static void offsets(pkv_cuda *h)
{
    const pkv_op bf16 = PKV_OP_FUSED_BF16, kv = PKV_OP_FUSED_FP8_KV;
    pkv_fused_desc d = desc(8, 128, 64);
    d.cache.block_stride = TWO32 - 8u;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP_SMALL, "block stride 2^32 - 8: 16-byte");
    d.cache.block_stride = TWO32;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED, "block stride 2^32: element kernel");
    d = desc(8, 128, 64);
    d.cache.num_blocks = TWO32 / 16u;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP_SMALL, "2^32 slots: 16-byte");
    d.cache.num_blocks = TWO32 / 16u + 1u;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED, "2^32 + 16 slots: element kernel");
    d = desc(8, 128, 64);
    d.k_row_stride = TWO32 - 8u;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_WARP_SMALL, "K row stride 2^32 - 8: 16-byte");
    d.k_row_stride = TWO32;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED, "K row stride 2^32: element kernel");
    d = desc(8, 128, 64);
    d.v_row_stride = TWO32;
    is_int(kernel(h, kv, &d, NULL), PKVI_K_FUSED_FP8_KV, "V row stride 2^32: element kernel");
    pkv_cuda_rope_table(h, 1e4f, 128, 0);
    d = desc(8, 128, 64);
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED_VEC, "no table: the block kernel");
    d.cache.block_stride = TWO32;
    is_int(kernel(h, bf16, &d, NULL), PKVI_K_FUSED, "  block stride 2^32: element kernel");
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    const int l2 = h->l2_bytes;
    h->l2_bytes = 0; /* the kernels below are chosen without the streaming variants
                      * (t/cuda_stream_plan checks those) */
    with_table(h);
    offsets(h);
    h->l2_bytes = l2;
    pkv_cuda_close(h);
    return done_testing();
}
