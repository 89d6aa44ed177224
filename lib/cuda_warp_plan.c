/* Which warp kernel a fused call with the handle's cos/sin table takes, its grid and block
 * (the halves, wide and warp kernels: kernels/fused_halves.cu, fused_wide.cu, fused_warp.cu),
 * and the rules' measurements on the H200 (doc/PERFORMANCE-HISTORY.md). */
#include "config.h"
#include "cuda_device.h"
#include "cuda_plan.h"

/* The warps that items of g threads (a power of two <= 32) fill */
static uint64_t warp_count(unsigned g, uint64_t items)
{
    return (items + 32u / g - 1) / (32u / g);
}

/* The warp kernels' grid for items of g threads in blocks of `threads`; 0 when their 32-bit
 * item indices, up to the last block's spare warps (at most 7), or the grid would overflow. */
static int warp_grid(unsigned g, uint64_t items, unsigned threads, pkvi_plan *plan)
{
    uint64_t warps = warp_count(g, items), blocks;
    if ((warps + 8u) * 32u > 0xffffffffu) return 0;
    plan->block = warps < threads / 32u ? (unsigned)warps * 32u : threads;
    blocks = (warps + plan->block / 32u - 1) / (plan->block / 32u);
    if (blocks > 0x7fffffffu) return 0;
    plan->grid = (unsigned)blocks;
    return 1;
}

/* The halves kernels of ops 5, 7 and 8 loop over their tiles (kernels/fused_halves.cu): one
 * wave of blocks at most, of `threads` threads, `per_sm` per multiprocessor (the plan's grid
 * was counted in blocks of 256 threads) */
static void halves_wave(const pkv_cuda *h, pkvi_plan *plan, unsigned threads, unsigned per_sm)
{
    uint64_t wave = (uint64_t)h->sm_count * per_sm, grid = plan->grid;
    if (threads != plan->block) {
        uint64_t warps = grid * (plan->block / 32u);
        grid = (warps + threads / 32u - 1) / (threads / 32u);
        plan->block = threads;
    }
    plan->grid = (unsigned)(grid > wave ? wave : grid);
}

/* Whether a call of `items` items has `min` tiles or more a warp of the one wave of a looping
 * kernel (halves, wide) of `warps` warps a multiprocessor and `g` threads an item (32 / g
 * items a tile). With few tiles a warp the warps that start together compute together and
 * then wait together, and the kernels of smaller tiles run faster (below) */
static int deep(const pkv_cuda *h, uint64_t items, unsigned g, unsigned warps, unsigned min)
{
    return (items * g + 31u) / 32u >= (uint64_t)min * h->sm_count * warps;
}

/* (lib/cuda_plan.h) */
int pkvi_cuda_streaming_variant(int kernel)
{
    static const int pairs[][2] = {
        {PKVI_K_FUSED_HALVES, PKVI_K_FUSED_HALVES_STREAM},
        {PKVI_K_FUSED_HALVES16, PKVI_K_FUSED_HALVES16_STREAM},
        {PKVI_K_FUSED_FP8_KV_HALVES_TREE, PKVI_K_FUSED_FP8_KV_HALVES_TREE_STREAM},
        {PKVI_K_FUSED_MROPE_HALVES, PKVI_K_FUSED_MROPE_HALVES_STREAM},
        {PKVI_K_FUSED_MROPE_HALVES16, PKVI_K_FUSED_MROPE_HALVES16_STREAM}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i][0] == kernel) return pairs[i][1];
    return kernel;
}

/* Whether a call takes the streaming variant of its halves kernel (kernels/fused_halves.cu: K
 * and V copied first to be evicted from L2, so more of the table's rows stay): its K (and V)
 * bytes read and written are at most 1.5 x the L2's. On the H200 (60 MiB of L2: calls of up to
 * 90 MiB) the thirty-second session's variants, which stored the cache rows st.global.cs too,
 * were 0.3-24.0% faster in graph replays with a table in each of 18 calls of 2,048 to 65,536
 * tokens of up to 64 MiB, 1.4% faster and 1.1% slower at 96 MiB and 1.7-13.3% slower in every
 * call from 128 MiB (the wide kernels of head_dim 64 2.6% faster to 6.8% slower, so they have
 * none); but a copy of the rows after the call then ran slower (pkvk_store8). The variants
 * without it (thirty-fourth session, 7 calls of 12-64 MiB), against the plain kernels: the call
 * alone in graph replays 9.4% faster to 3.0% slower; call + a copy of its rows 3.8% faster to
 * 0.4% slower, and with L2 cleared before each single launch 4.6% faster to 3.2% slower
 * (doc/PERFORMANCE-HISTORY.md) */
static int streams(const pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, uint64_t items)
{
    const uint64_t hd = d->cache.head_dim,
                   per = op == PKV_OP_FUSED_FP8_KV  ? 6u * hd  /* K and V: 2 + 1 bytes each */
                         : op == PKV_OP_FUSED_FP8_K ? 3u * hd  /* K: 2 + 1 */
                                                    : 4u * hd; /* K: 2 + 2 */
    return h->l2_bytes > 0 && items * per <= (uint64_t)h->l2_bytes * 3u / 2u;
}

/* The wide kernels (head_dim 64, kernels/fused_wide.cu): a warp per tile of `ipt` items (32 or
 * 16), one wave of `per_sm` blocks a multiprocessor at most; 0 when the call has fewer than
 * `min_tiles` tiles a warp of that wave */
static int wide_plan(const pkv_cuda *h, uint64_t items, unsigned ipt, unsigned per_sm,
                     unsigned min_tiles, pkvi_plan *plan)
{
    const unsigned wpb = PKVK_WIDE_THREADS / 32u;
    uint64_t wave = (uint64_t)h->sm_count * per_sm, tiles = (items + ipt - 1u) / ipt,
             grid = (tiles + wpb - 1u) / wpb;
    if (!deep(h, items, 32u / ipt, per_sm * wpb, min_tiles)) return 0;
    plan->block = PKVK_WIDE_THREADS;
    plan->grid = (unsigned)(grid > wave ? wave : grid);
    return 1;
}

/* The fused ops with the handle's cos/sin table: the warp kernels (kernels/fused_warp.cu) when
 * an item of 8-element threads is a power-of-two lane group of one warp, the rotated elements
 * come in whole halves of 8, and a token has at most 16 heads; a warp per 32 / group items.
 * Calls of many waves that rotate the whole head take the halves form (8, 16 or 32 elements
 * of each half per thread; kernels/fused_halves.cu): before its pipeline, on the H200 at
 * 65,536 tokens, 8-30% faster than the 8-element form for ops 5, 7 and 8 and for MRoPE 17-23%
 * faster than the block kernel; pipelined, ops 5, 7 and 8 a further 9-18%, MRoPE 9-20%
 * (doc/PERFORMANCE-HISTORY.md).
 * MRoPE takes the 8-element form only in one wave (`_small`, one row read for a token of three
 * equal positions): in many waves, with 8 consecutive pairs per thread read row by row, it was
 * 45% slower at 4 x 256 than the block kernel. The 8-element form beat the block kernels at every
 * geometry of the benchmark once its rotation had no branches (8 x 128 fused_bf16 153 against 161
 * us, 16 x 64 142 against 148). More than 16 heads was not measured and keeps the block kernels,
 * which share a token's cos/sin through shared memory. Returns 0 when they do not apply. */
int pkvi_cuda_warp_plan(const pkv_cuda *h, pkv_op op, const pkv_fused_desc *d, unsigned epc,
                        uint64_t items, pkvk_fused_params *p, pkvi_plan *plan)
{
    unsigned g = (d->cache.head_dim + epc - 1) / epc * (epc / 8u);
    unsigned hd16 = d->cache.head_dim / 16u;
    int kv = op == PKV_OP_FUSED_FP8_KV, fits8, halves;
    /* the halves kernels of ops 5 to 7 take 16 elements of each half per thread at 4 heads
     * or more of 128 elements or more (on the H200 at 65,536 tokens, two runs, 8 x 128: 5-7%
     * faster for fused_bf16, 19-20% for fused_fp8_k, 11-12% for MRoPE; 4 x 256: as fast, 16%
     * faster; but 16 x 64: 12% slower for fused_bf16, 5-16% for fused_fp8_k, 1 x 128: 5-7%
     * slower), else 8; at head_dim 128 fused_bf16 only from 8 tiles a warp of the 16-element
     * kernel's wave, fused_fp8_k from 3 (H200, 8 x 128, three interleaved runs: with 8 elements
     * fused_bf16 8%, 6% and 1% faster at 8,192, 16,384 and 32,768 tokens, 1.9 to 7.8 tiles a
     * warp, 2% slower at 65,536, 15.5; fused_fp8_k 5% faster at 8,192, 1-17% slower from
     * 16,384, 3.9 tiles; MRoPE 3-13% slower at every size) */
    /* Calls that stream (streams(), above): fused_fp8_k takes them from 1 tile a warp (H200, 8 x
     * 128, graph replays with a table, three interleaved runs, against the 8-element kernel's
     * streaming variant: 1.8%, 9.5% and 12.8% faster at 4,096, 8,192 and 12,288 tokens, 0.97,
     * 1.9 and 2.9 tiles a warp, single launches +1.3%, -5.7%, -8.7%; doc/PERFORMANCE-HISTORY.md,
     * thirty-third session; with plain stores, thirty-fourth session, at 8,192 and 12,288 11.0%
     * and 15.6% faster alone, 8.5% and 10.0% with a copy of its rows after it). fused_bf16 does
     * not: its 16-element kernel below 2 tiles a warp was 5.1-9.5% faster alone in back-to-back
     * graph replays at 2,048 to 8,192 tokens, but with L2 cleared before each call the 8-element
     * kernel was 6.0-12.7% faster alone and 3.4-9.3% with a copy of its rows after it, which is
     * how an engine's chunked prefill runs (thirty-fourth session) */
    const int mrope = op == PKV_OP_FUSED_MROPE_BF16, bf16 = op == PKV_OP_FUSED_BF16,
              st = streams(h, op, d, items);
    const unsigned w16 = PKVK_HALVES16_BLOCKS_PER_SM * (PKVK_HALVES16_THREADS / 32u),
                   g16 = d->cache.head_dim / 32u;
    const int d8 = deep(h, items, g16, w16, 8u);
    int e16 = !kv && d->cache.head_dim >= 128u && d->cache.num_kv_heads >= 4u &&
              (d->cache.head_dim >= 256u || mrope ||
               (bf16 ? d8 : deep(h, items, g16, w16, st ? 1u : 3u)));
    /* and 32 at 256 elements (4 threads an item) for fused_bf16 from 8 tiles a warp of its
     * wave (H200, 4 x 256, the same runs: with 16 elements 2-7% faster from 8,192 to 32,768
     * tokens, 5.2 tiles a warp, 5% slower at 65,536, 10.3; fused_fp8_k 2-9% and MRoPE 3-13%
     * faster with 16 at every size); with 2 or 1 threads an item (head_dim 128, 64) each copy
     * and store reaches 32 or 16 bytes of an item, twice or four times the memory requests of
     * 16 elements, and it was 27-155% slower */
    int e32 = e16 && d->cache.head_dim >= 256u && bf16 &&
              deep(h, items, d->cache.head_dim / 64u,
                   PKVK_HALVES32_BLOCKS_PER_SM * (PKVK_HALVES32_THREADS / 32u), 8u);
    unsigned gh = d->cache.head_dim / (e32 ? 64u : e16 ? 32u : 16u);
    if (!p->cs_table || d->cache.num_kv_heads > 16u || g == 0 || g > 32u || (g & (g - 1u)) ||
        d->rotary_dim % 16u)
        return 0;
    /* the halves form: the whole head rotated, 16 x a power-of-two threads, each half whole
     * chunks of the tree or the head one chunk */
    halves = d->rotary_dim == d->cache.head_dim && hd16 && hd16 <= 32u &&
             (hd16 & (hd16 - 1u)) == 0 && d->cache.head_dim == 16u * hd16 &&
             ((d->cache.head_dim / 2u) % epc == 0 || d->cache.head_dim == epc);
    fits8 = warp_grid(g, items, PKVK_WARP_THREADS, plan);
    if (fits8 && plan->grid <= (unsigned)h->sm_count) {
        /* one wave: the _small kernels, which load the table row before the tree (1 x 128 at
         * one token on the H200: see doc/PERFORMANCE.md; the halves form was 6-21% slower
         * there in graph replays). MRoPE's reads one row for a token of three equal positions
         * and its three streams' rows otherwise, each pair taking its stream's. Their blocks
         * are as small as keeps the grid within 64 blocks (2, 4 or 8 warps): a multiprocessor's
         * warps share its pipes, so the tree, rotation and loads of a call spread over more
         * of them take less time, but every block more costs its launch some time (H200,
         * graph replays with a table, the four fused ops at the four geometries with 1 to 256
         * tokens, blocks of 64 and 128 threads against 256: calls of 4 to 128 warps 1.1-14.2%
         * faster in blocks of 64; of 256 warps 5.1-10.3% faster in 64 blocks of 128, whose 128
         * blocks of 64 took 2.6-6.0% longer; of 1,024 warps 5.8-19.3% slower in 256 blocks of
         * 128 and 27.7-59.2% in 512 of 64 than in 128 of 256; doc/PERFORMANCE-HISTORY.md,
         * thirty-eighth session) */
        {
            const uint64_t warps = warp_count(g, items);
            const unsigned threads = warps <= 128u ? 64u : warps <= 256u ? 128u : PKVK_WARP_THREADS;
            warp_grid(g, items, threads, plan);
            p->ipb = plan->block / 32u * (32u / g);
        }
        plan->kernel = kv      ? PKVI_K_FUSED_FP8_KV_WARP_SMALL
                       : mrope ? PKVI_K_FUSED_MROPE_WARP_SMALL
                               : PKVI_K_FUSED_WARP_SMALL;
    } else if (mrope && !halves) {
        /* in many waves MRoPE only in the halves form, each pair's cos and sin from its
         * stream's row; the 8-element form, whose threads read rows pair by pair, was slower
         * than the block kernel, which shares them */
        return 0;
    } else if (halves && warp_grid(gh, items, PKVK_WARP_THREADS, plan)) {
        g = gh;
        /* 8 elements at head_dim 64 (4 threads an item): the kernels with that group size
         * built in (g4), or the wide kernels, whose tiles of 32 or 16 items do each item's own
         * work once (kernels/fused_wide.cu). On the H200 at 16 x 64, three interleaved runs from
         * 2,048 to 65,536 tokens (doc/PERFORMANCE-HISTORY.md): MRoPE's wide kernel as fast as the
         * g4 kernel (-1% to +0.5%) to 14% faster for text tokens and 10-33% faster for image
         * patches, at every size. Graph replays with a table: tiles of 32 for fused_fp8_k 7.4%
         * faster than the g4 kernel at 16,384 tokens (2.6 tiles a warp of its wave), 1.0% slower
         * at 8,192 (1.3). Tiles of 16, against the kernels taken before: fused_bf16 3.9-5.7%
         * faster from 8,192 to 32,768 tokens (2.6 to 10.3 tiles of 16 a warp), 2.5% at 65,536,
         * 1.6% slower at 4,096 (1.3); fused_fp8_k 7.7% faster at 8,192 (g4 before), 4.8% at
         * 16,384, 2.7% and 6.9% slower at 32,768 and 65,536 (5.2 and 10.3 tiles of 32); MRoPE
         * at 16,384 5.9% faster for text tokens and 0.9% for image patches, at 65,536 (12.4
         * tiles of 32) 0.4% faster and 5.8% slower. So tiles of 16 from 2 a warp, but fused_fp8_k
         * and MRoPE tiles of 32 from 4 (the sizes between were not measured), and MRoPE tiles of 32
         * below 2 of 16 too; else the g4 kernel */
        const int g64 = gh == 4u && !e16 && !kv;
        const unsigned wper = mrope ? PKVK_MROPE_WIDE_BLOCKS_PER_SM : PKVK_WIDE_BLOCKS_PER_SM;
        int wide = g64 && !bf16 && wide_plan(h, items, 32u, wper, 4u, plan);
        const int t16 = g64 && !wide && wide_plan(h, items, 16u, wper, 2u, plan);
        if (g64 && mrope && !wide && !t16) wide = wide_plan(h, items, 32u, wper, 0u, plan);
        /* fused_bf16's 16-element kernel at head_dim 128 issues the next tile's copies first
         * (kernels/fused_halves.cu: the other order was 1.0-1.2% slower for it, 2-7% faster
         * for fused_fp8_k); op 8's after the tree but at head_dim 256 from 12 tiles a warp of
         * its wave (H200, graph replays with a table, against after the cos/sin loads: 0.3-2.3%
         * faster at 1 x 128, 8 x 128 and 16 x 64 from 4,096 to 65,536 tokens, 0.4-1.6% at 4 x
         * 256 x 16,384 and 24,576, 7.8 and 11.6 tiles; as fast at 32,768 and 49,152, 15.5 and
         * 23.3; 5.2-6.3% slower at 65,536, 31) */
        const int early = bf16 && d->cache.head_dim < 256u && d8;
        const int kv_tree =
            kv && !(d->cache.head_dim >= 256u &&
                    deep(h, items, gh, PKVK_HALVES_BLOCKS_PER_SM * (256u / 32u), 12u));
        plan->kernel = kv_tree    ? PKVI_K_FUSED_FP8_KV_HALVES_TREE
                       : kv       ? PKVI_K_FUSED_FP8_KV_HALVES
                       : mrope    ? (e16    ? PKVI_K_FUSED_MROPE_HALVES16
                                     : t16  ? PKVI_K_FUSED_MROPE_WIDE64_T16
                                     : wide ? PKVI_K_FUSED_MROPE_WIDE64
                                            : PKVI_K_FUSED_MROPE_HALVES)
                       : e32      ? PKVI_K_FUSED_HALVES32
                       : e16      ? (early ? PKVI_K_FUSED_HALVES16_EARLY : PKVI_K_FUSED_HALVES16)
                       : t16      ? PKVI_K_FUSED_WIDE64_T16
                       : wide     ? PKVI_K_FUSED_WIDE64
                       : gh == 4u ? PKVI_K_FUSED_HALVES_G4
                                  : PKVI_K_FUSED_HALVES;
        if (st) plan->kernel = pkvi_cuda_streaming_variant(plan->kernel);
        if (e32)
            halves_wave(h, plan, PKVK_HALVES32_THREADS, PKVK_HALVES32_BLOCKS_PER_SM);
        else if (e16)
            halves_wave(h, plan, PKVK_HALVES16_THREADS,
                        mrope ? PKVK_MROPE_HALVES16_BLOCKS_PER_SM : PKVK_HALVES16_BLOCKS_PER_SM);
        else if (!wide && !t16) /* (else wide_plan's grid) */
            halves_wave(h, plan, 256u,
                        mrope ? PKVK_MROPE_HALVES_BLOCKS_PER_SM : PKVK_HALVES_BLOCKS_PER_SM);
    } else if (fits8 && !mrope) {
        warp_grid(g, items, PKVK_WARP_THREADS, plan);
        plan->kernel = kv ? PKVI_K_FUSED_FP8_KV_WARP : PKVI_K_FUSED_WARP;
    } else {
        return 0;
    }
    p->group = g;
    p->div_heads = pkvk_div32_make(d->cache.num_kv_heads);
    p->div_bs = pkvk_div32_make(d->cache.block_size);
    return 1;
}
