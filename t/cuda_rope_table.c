/* The handle's RoPE cos/sin table (pkv_cuda_rope_table): its argument checks; every entry
 * against the host's correctly rounded sin and cos of the kernels' angle; the fused ops with a
 * table against the reference over whole poisoned pools (positions inside and past the
 * table, 16-byte and element kernels); and that the kernels really read it: a table
 * overwritten on purpose changes the bytes of tokens it covers, and only while it matches the
 * call's theta and rotary_dim. */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "bits.h"
#include "diffcase.h"
#include "randcase.h"
#include "pagedkv.h"
#include "../lib/cuda_plan.h"
#include "tablecase.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long row_mismatches(const float *rows, const float *inv, uint32_t rot,
                                         uint64_t pos)
{
    uint32_t half = rot / 2;
    unsigned long long bad = 0;
    for (uint32_t p = 0; p < half; p++) {
        float s, c;
        pkv_sincosf_cr((float)pos * inv[p], &s, &c);
        if (bits(rows[pos * rot + p]) != bits(c) || bits(rows[pos * rot + half + p]) != bits(s)) {
            diag("position %llu pair %u: cos %08x sin %08x, want %08x %08x",
                 (unsigned long long)pos, p, bits(rows[pos * rot + p]),
                 bits(rows[pos * rot + half + p]), bits(c), bits(s));
            bad++;
        }
    }
    return bad;
}

/* Download h's table and compare rows 0, stride, 2 stride, ... and the last with the host;
 * returns the entries that differ. */
static unsigned long long table_mismatches(pkv_cuda *h, float theta, uint32_t rot, uint32_t len,
                                           uint32_t stride)
{
    float inv[256], *rows = malloc((size_t)len * rot * sizeof(float));
    unsigned long long bad = 0;
    if (!rows || pkv_inv_freq_table(theta, rot, inv) != PKV_OK) bail("table_mismatches setup");
    gpu_download(h, rows, h->cs_table, (size_t)len * rot * sizeof(float));
    for (uint64_t pos = 0; pos < len && bad < 10; pos += stride)
        bad += row_mismatches(rows, inv, rot, pos);
    bad += row_mismatches(rows, inv, rot, len - 1);
    free(rows);
    return bad;
}

static void contents(pkv_cuda *h)
{
    static const struct {
        float theta;
        uint32_t rot, len, stride;
    } t[] = {{1e4f, 128, 70000, 1},
             {1e6f, 512, 3000, 1},
             {5e5f, 2, 16777216 + 300, 1},
             {1e8f, 64, 1u << 20, 97}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint32_t stride = t[i].stride * (uint32_t)tap_sample_stride();
        pkv_status st = pkv_cuda_rope_table(h, t[i].theta, t[i].rot, t[i].len);
        if (!is_int(st, PKV_OK, "table theta %g rotary_dim %u, %u positions: built", t[i].theta,
                    t[i].rot, t[i].len))
            diag("%s", pkv_last_error());
        if (st) continue;
        is_int((long long)table_mismatches(h, t[i].theta, t[i].rot, t[i].len, stride), 0,
               "  every %u-th row (and the last) equals the host's cos and sin of "
               "RN(pos * inv_freq)",
               stride);
    }
}

static void errors(pkv_cuda *h)
{
    uint64_t before;
    is_int(pkv_cuda_rope_table(NULL, 1e4f, 128, 10), PKV_EINVAL, "NULL handle: EINVAL");
    is_str(pkv_last_error(), "cuda_rope_table: handle is NULL", "  message");
    ok(pkv_cuda_rope_table(h, 1e4f, 64, 100) == PKV_OK, "a table to keep through the errors");
    before = h->cs_table;
    is_int(pkv_cuda_rope_table(h, 1e4f, 1024, 10), PKV_EINVAL, "rotary_dim 1024: EINVAL");
    is_str(pkv_last_error(), "cuda_rope_table: rotary_dim 1024 exceeds 512", "  message");
    is_int(pkv_cuda_rope_table(h, 1e4f, 7, 10), PKV_EINVAL, "odd rotary_dim: EINVAL");
    is_int(pkv_cuda_rope_table(h, 0.5f, 64, 10), PKV_EINVAL, "theta < 1: EINVAL");
    is_int(pkv_cuda_rope_table(h, 1e4f, 0, 10), PKV_EINVAL, "rotary_dim 0: EINVAL");
    ok(h->cs_table == before && h->cs_len == 100 && h->cs_rotary_dim == 64,
       "a failed call leaves the last table in place");
    ok(pkv_cuda_rope_table(h, 1e4f, 64, 100) == PKV_OK && h->cs_table == before,
       "the same arguments again: kept, not rebuilt");
    ok(pkv_cuda_rope_table(h, 1e4f, 64, 0) == PKV_OK && h->cs_table == 0 && h->cs_len == 0,
       "max_positions 0 frees it");
    ok(pkv_cuda_rope_table(h, 1e4f, 64, 0) == PKV_OK, "freeing no table is fine");
}

/* Every fused op on random cases with a table for the case's theta and rotary_dim covering
 * about half of the positions. */
static void ops(pkv_cuda *h)
{
    static const uint32_t nkvs[] = {1, 2, 8}, hds[] = {8, 64, 80, 128, 256}, bss[] = {1, 16, 7},
                          toks[] = {1, 3, 40, 300};
    pkvi_rng r = {0x2545f4914f6cdd1dull};
    int rounds = tap_sample_stride() > 1 ? 3 : 12, cases = 0, failures = 0;
    pkvi_outcome out;
    memset(&out, 0, sizeof out);
    for (int round = 0; round < rounds; round++)
        for (int op = PKV_OP_FUSED_BF16; op <= PKV_OP_FUSED_FP8_KV; op++) {
            pkvi_case c;
            uint64_t x = pkvi_rng_next(&r);
            uint32_t len = 1 + (uint32_t)(pkvi_rng_next(&r) % 5000);
            if (pkvi_case_random(&c, &r, nkvs[x % 3], hds[(x >> 8) % 5], bss[(x >> 16) % 3],
                                 toks[(x >> 24) % 4]))
                bail("out of memory");
            /* half of them rotate a multiple of 16 elements: the warp kernels */
            if (round % 2 && c.f.rotary_dim >= 16) c.f.rotary_dim -= c.f.rotary_dim % 16;
            if (c.f.rotary_dim == 0) c.f.rotary_dim = 2;
            for (uint32_t t = 0; t < c.f.num_tokens; t++)
                c.pos[0][t] = (uint32_t)(pkvi_rng_next(&r) % (2ull * len));
            if (pkv_cuda_rope_table(h, c.f.theta, c.f.rotary_dim, len) != PKV_OK) failures++;
            pkvi_case_run(op, &c, h, &out);
            pkvi_case_free(&c);
            cases++;
        }
    if (out.what[0]) diag("%s", out.what);
    is_int(failures, 0, "a table built for each of %d cases", cases);
    ok(out.gpu_bytes > 0 && out.gpu_mismatches == 0 && out.ref_mismatches == 0,
       "fused ops with a table == reference: %llu bytes compared, %llu differ", out.gpu_bytes,
       out.gpu_mismatches);
}

/* The kernel lib/cuda_warp_plan.c gives op 5 or 7 for a call of `items` items whose row lists
 * `listed`, its kernel for large calls: the kernels of larger tiles take calls of enough tiles a
 * warp of their one wave (at head_dim 64 the wide kernel in tiles of 32 items fused_fp8_k's 4,
 * in tiles of 16 both ops' 2; at head_dim 128 the 16-element kernels 8 for fused_bf16 (its own),
 * 3 for fused_fp8_k, 1 when the call streams; the 32-element kernel 8), else
 * the next smaller (fused_bf16 at head_dim 256: the 16-element kernel of ops 5 and 7); op 8 at
 * head_dim 256 its kernel of copies after the cos/sin loads from 12 tiles (of 2 items), else the
 * one of copies after the tree */
static int by_size(const pkv_cuda *h, int op, uint64_t items, uint32_t hd, int listed)
{
    const uint64_t sm = (uint64_t)h->sm_count, bf16 = op == PKV_OP_FUSED_BF16;
    const int streams = h->l2_bytes != 0; /* main: L2 0, or so large that every call streams */
    if (listed == PKVI_K_FUSED_WIDE64 || listed == PKVI_K_FUSED_WIDE64_T16) {
        const uint64_t w = sm * PKVK_WIDE_BLOCKS_PER_SM * (PKVK_WIDE_THREADS / 32);
        if (!bf16 && (items + 31) / 32 >= 4 * w) return PKVI_K_FUSED_WIDE64;
        return (items + 15) / 16 >= 2 * w ? PKVI_K_FUSED_WIDE64_T16 : PKVI_K_FUSED_HALVES_G4;
    }
    if ((listed == PKVI_K_FUSED_HALVES16 || listed == PKVI_K_FUSED_HALVES16_EARLY) && hd == 128) {
        const uint64_t tiles = (items * 4 + 31) / 32,
                       w = sm * PKVK_HALVES16_BLOCKS_PER_SM * (PKVK_HALVES16_THREADS / 32);
        return tiles >= (bf16 ? 8 : streams ? 1 : 3) * w ? listed : PKVI_K_FUSED_HALVES;
    }
    if (listed == PKVI_K_FUSED_FP8_KV_HALVES && hd == 256)
        return (items * 16 + 31) / 32 >=
                       12 * sm * PKVK_HALVES_BLOCKS_PER_SM * (PKVK_WARP_THREADS / 32)
                   ? listed
                   : PKVI_K_FUSED_FP8_KV_HALVES_TREE;
    if (listed == PKVI_K_FUSED_HALVES32)
        return (items * 4 + 31) / 32 >=
                       8 * sm * PKVK_HALVES32_BLOCKS_PER_SM * (PKVK_HALVES32_THREADS / 32)
                   ? listed
                   : PKVI_K_FUSED_HALVES16;
    return listed;
}

/* The kernel the launcher takes for a call by_size gives `base`: its streaming variant when the
 * handle's L2 is set so large that every call takes one (main runs the calls both ways) */
static int streamed(const pkv_cuda *h, int base)
{
    return h->l2_bytes ? pkvi_cuda_streaming_variant(base) : base;
}

/* 4 heads aligned: the warp kernels, in one wave (the _small forms) and in many (4096 tokens
 * are 256 blocks of the halves form, 1024 tokens 256 blocks of 8-element threads: more than
 * the multiprocessors of the GPUs this was written for; the test says so if not), in the
 * halves form when the whole head is rotated (also on a grid for one multiprocessor, whose
 * warps loop over many tiles; the kernels of larger tiles take calls of enough tiles a warp
 * (by_size): on one multiprocessor's grid, and on the full grid of a GPU of few), else with 8
 * elements per thread; 32 heads
 * aligned: the 16-byte block kernels; shifted by an element: the element kernels
 * (lib/cuda_ops.c chooses) */
static void really_read(pkv_cuda *h)
{
    static const struct {
        uint32_t heads, hd, tokens, rotary;
        /* the kernels of ops 5, 7 and 8 in large calls (by_size), or -1: not asserted */
        int shift, want5, want7, want8;
        const char *kind;
    } vs[] = {
        {4, 128, 64, 128, 0, PKVI_K_FUSED_WARP_SMALL, PKVI_K_FUSED_WARP_SMALL,
         PKVI_K_FUSED_FP8_KV_WARP_SMALL, "4 heads, 64 tokens, warp kernels (one wave)"},
        {4, 128, 4096, 128, 0, PKVI_K_FUSED_HALVES16_EARLY, PKVI_K_FUSED_HALVES16,
         PKVI_K_FUSED_FP8_KV_HALVES_TREE,
         "4 heads, 4096 tokens, halves form (ops 5, 7: 16 elements)"},
        {4, 256, 2048, 256, 0, PKVI_K_FUSED_HALVES32, PKVI_K_FUSED_HALVES16,
         PKVI_K_FUSED_FP8_KV_HALVES,
         "4 x 256, 2048 tokens, halves form (op 5: 32 elements, 7: 16)"},
        {2, 128, 8192, 128, 0, PKVI_K_FUSED_HALVES, PKVI_K_FUSED_HALVES,
         PKVI_K_FUSED_FP8_KV_HALVES_TREE, "2 x 128, 8192 tokens, halves form (8 elements)"},
        {4, 128, 1024, 64, 0, PKVI_K_FUSED_WARP, PKVI_K_FUSED_WARP, PKVI_K_FUSED_FP8_KV_WARP,
         "4 heads, 1024 tokens, rotary_dim 64, 8-element warp kernels"},
        {4, 128, 1024, 80, 0, PKVI_K_FUSED_WARP, PKVI_K_FUSED_WARP, PKVI_K_FUSED_FP8_KV_WARP,
         "4 heads, 1024 tokens, rotary_dim 80, 8-element warp kernels"},
        {16, 64, 1024, 64, 0, PKVI_K_FUSED_WIDE64_T16, PKVI_K_FUSED_WIDE64,
         PKVI_K_FUSED_FP8_KV_HALVES_TREE,
         "16 x 64, 1024 tokens, halves form (ops 5, 7: the kernel for 4 threads an item or "
         "their wide kernels; op 8: one chunk)"},
        {3, 64, 4099, 64, 0, PKVI_K_FUSED_WIDE64_T16, PKVI_K_FUSED_WIDE64,
         PKVI_K_FUSED_FP8_KV_HALVES_TREE,
         "3 x 64, 4099 tokens, halves form (tiles across tokens, the last in part)"},
        {16, 32, 2048, 32, 0, PKVI_K_FUSED_HALVES, PKVI_K_FUSED_HALVES, PKVI_K_FUSED_FP8_KV_WARP,
         "16 x 32, 2048 tokens, halves form (ops 5, 7: one chunk), op 8 8-element"},
        {32, 128, 64, 128, 0, PKVI_K_FUSED_VEC_TAB, PKVI_K_FUSED_VEC_TAB,
         PKVI_K_FUSED_FP8_KV_VEC16_TAB, "32 heads, 16-byte block kernels"},
        {4, 128, 64, 128, 1, -1, -1, -1, "element kernels"},
    };
    for (size_t variant = 0; variant < sizeof vs / sizeof vs[0]; variant++) {
        const char *kind = vs[variant].kind;
        const uint32_t rot = vs[variant].rotary;
        static const int ops[] = {PKV_OP_FUSED_BF16, PKV_OP_FUSED_FP8_K, PKV_OP_FUSED_FP8_KV};
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
            const int op = ops[oi];
            const uint64_t items = (uint64_t)vs[variant].heads * vs[variant].tokens;
            const int listed = op == PKV_OP_FUSED_FP8_KV  ? vs[variant].want8
                               : op == PKV_OP_FUSED_FP8_K ? vs[variant].want7
                                                          : vs[variant].want5;
            const int base = by_size(h, op, items, vs[variant].hd, listed),
                      want = base < 0 ? base : streamed(h, base);
            pkvi_case c;
            unsigned long long bad;
            plain_case(&c, vs[variant].shift, vs[variant].heads, vs[variant].hd,
                       vs[variant].tokens);
            c.f.rotary_dim = rot;
            if (pkv_cuda_rope_table(h, 1e4f, rot, 1000) != PKV_OK) bail("%s", pkv_last_error());
            if (want >= 0) { /* the kernel the launcher takes for aligned buffers */
                const uint64_t a = 1u << 20, pos[3] = {a, a, a};
                pkvk_fused_params prm;
                pkvi_plan plan;
                is_int(pkvi_cuda_fused_plan(h, (pkv_op)op, &c.f, a, a, a, pos, a, a, a, 0, &prm,
                                            &plan) == PKV_OK
                           ? plan.kernel
                           : -2,
                       want, "%s, %s: the launcher's kernel", pkv_op_name((pkv_op)op), kind);
                if (vs[variant].tokens > 64 && plan.grid <= (unsigned)h->sm_count)
                    diag("%u blocks, %d multiprocessors: one wave here", plan.grid, h->sm_count);
            }
            is_int((long long)run_diff(h, op, &c), 0, "%s, %s: table of 1000 == reference",
                   pkv_op_name((pkv_op)op), kind);
            if (base == PKVI_K_FUSED_HALVES || base == PKVI_K_FUSED_HALVES16 ||
                base == PKVI_K_FUSED_HALVES16_EARLY || base == PKVI_K_FUSED_HALVES32 ||
                base == PKVI_K_FUSED_FP8_KV_HALVES || base == PKVI_K_FUSED_FP8_KV_HALVES_TREE ||
                base == PKVI_K_FUSED_HALVES_G4 || base == PKVI_K_FUSED_WIDE64 ||
                base == PKVI_K_FUSED_WIDE64_T16) {
                /* a grid for one multiprocessor: every warp loops over many tiles */
                const uint64_t a = 1u << 20, pos[3] = {a, a, a};
                const int sms = h->sm_count;
                int one, per_sm;
                pkvk_fused_params prm;
                pkvi_plan plan;
                h->sm_count = 1;
                one = by_size(h, op, items, vs[variant].hd, listed);
                per_sm = one == PKVI_K_FUSED_HALVES32 ? PKVK_HALVES32_BLOCKS_PER_SM
                         : one == PKVI_K_FUSED_HALVES16 || one == PKVI_K_FUSED_HALVES16_EARLY
                             ? PKVK_HALVES16_BLOCKS_PER_SM
                         : one == PKVI_K_FUSED_WIDE64 || one == PKVI_K_FUSED_WIDE64_T16
                             ? PKVK_WIDE_BLOCKS_PER_SM
                             : PKVK_HALVES_BLOCKS_PER_SM;
                ok(pkvi_cuda_fused_plan(h, (pkv_op)op, &c.f, a, a, a, pos, a, a, a, 0, &prm,
                                        &plan) == PKV_OK &&
                       plan.kernel == streamed(h, one) && plan.grid == (unsigned)per_sm,
                   "  on one multiprocessor: kernel %d (%s), %d blocks", streamed(h, one),
                   one == base ? "the same" : "another, by size", per_sm);
                is_int((long long)run_diff(h, op, &c), 0, "  one multiprocessor's grid: the same");
                h->sm_count = sms;
            }
            /* a fifth of the tokens past the table, in tiles with tokens it holds */
            for (uint32_t t = 0; t < c.f.num_tokens; t += 5)
                c.pos[0][t] += 1000;
            is_int((long long)run_diff(h, op, &c), 0,
                   "  a fifth of the positions 1000 and above: those computed, the rest read");
            for (uint32_t t = 0; t < c.f.num_tokens; t += 5)
                c.pos[0][t] -= 1000;
            /* cos = sin = 0.75 everywhere: no longer the true values */
            pkv_cuda_fill(h, h->cs_table, 0x3f, (size_t)1000 * rot * 4);
            bad = run_diff(h, op, &c);
            ok(bad > 0 && bad != ~0ull, "  overwritten table: %llu bytes differ (it is read)", bad);
            for (uint32_t t = 0; t < c.f.num_tokens; t++)
                c.pos[0][t] += 1000;
            is_int((long long)run_diff(h, op, &c), 0,
                   "  positions 1000 and above: computed, not read");
            for (uint32_t t = 0; t < c.f.num_tokens; t++)
                c.pos[0][t] -= 1000;
            c.f.theta = 1e6f;
            is_int((long long)run_diff(h, op, &c), 0, "  another theta: not read");
            c.f.theta = 1e4f;
            c.f.rotary_dim = rot / 2;
            is_int((long long)run_diff(h, op, &c), 0, "  another rotary_dim: not read");
            pkv_cuda_rope_table(h, 1e4f, rot, 0);
            pkvi_case_free(&c);
        }
    }
}

/* The kernels of larger tiles on the full grid: really_read's calls take them only on one
 * multiprocessor's grid on a GPU of many (the H200's 132), so here each runs a call just large
 * enough (the fewest tokens, found by doubling and halving) for by_size to give it on this GPU:
 * the launcher's kernel and one wave of its blocks, then the bytes against the reference */
static void large_tiles(pkv_cuda *h)
{
    static const struct {
        uint32_t heads, hd;
        int op, want, per_sm;
    } ls[] = {{8, 128, PKV_OP_FUSED_BF16, PKVI_K_FUSED_HALVES16_EARLY, PKVK_HALVES16_BLOCKS_PER_SM},
              {8, 128, PKV_OP_FUSED_FP8_K, PKVI_K_FUSED_HALVES16, PKVK_HALVES16_BLOCKS_PER_SM},
              {4, 256, PKV_OP_FUSED_BF16, PKVI_K_FUSED_HALVES32, PKVK_HALVES32_BLOCKS_PER_SM},
              {16, 64, PKV_OP_FUSED_FP8_K, PKVI_K_FUSED_WIDE64, PKVK_WIDE_BLOCKS_PER_SM},
              {16, 64, PKV_OP_FUSED_BF16, PKVI_K_FUSED_WIDE64_T16, PKVK_WIDE_BLOCKS_PER_SM},
              {16, 64, PKV_OP_FUSED_FP8_K, PKVI_K_FUSED_WIDE64_T16, PKVK_WIDE_BLOCKS_PER_SM},
              {4, 256, PKV_OP_FUSED_FP8_KV, PKVI_K_FUSED_FP8_KV_HALVES, PKVK_HALVES_BLOCKS_PER_SM}};
    for (size_t li = 0; li < sizeof ls / sizeof ls[0]; li++) {
        const uint64_t a = 1u << 20, pos[3] = {a, a, a}, nkv = ls[li].heads;
        uint32_t lo = 0, hi = 1024; /* by_size gives the kernel at hi tokens, not at lo */
        pkvi_case c;
        pkvk_fused_params prm;
        pkvi_plan plan;
        while (by_size(h, ls[li].op, hi * nkv, ls[li].hd, ls[li].want) != ls[li].want) {
            if (hi >= (1u << 24)) bail("no call of up to 2^24 tokens takes kernel %d", ls[li].want);
            lo = hi, hi *= 2;
        }
        while (hi - lo > 1) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (by_size(h, ls[li].op, mid * nkv, ls[li].hd, ls[li].want) == ls[li].want)
                hi = mid;
            else
                lo = mid;
        }
        plain_case(&c, 0, ls[li].heads, ls[li].hd, hi);
        if (pkv_cuda_rope_table(h, 1e4f, ls[li].hd, 1000) != PKV_OK) bail("%s", pkv_last_error());
        ok(pkvi_cuda_fused_plan(h, (pkv_op)ls[li].op, &c.f, a, a, a, pos, a, a, a, 0, &prm,
                                &plan) == PKV_OK &&
               plan.kernel == streamed(h, ls[li].want) &&
               plan.grid == (unsigned)(ls[li].per_sm * h->sm_count),
           "%s %u x %u, %u tokens: kernel %d, %d blocks of %d multiprocessors",
           pkv_op_name((pkv_op)ls[li].op), ls[li].heads, ls[li].hd, hi, streamed(h, ls[li].want),
           ls[li].per_sm * h->sm_count, h->sm_count);
        is_int((long long)run_diff(h, ls[li].op, &c), 0, "  table of 1000 == reference");
        pkv_cuda_rope_table(h, 1e4f, ls[li].hd, 0);
        pkvi_case_free(&c);
    }
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    errors(h);
    contents(h);
    ops(h);
    {
        const int l2 = h->l2_bytes;
        h->l2_bytes = 0; /* no call takes a streaming variant */
        really_read(h);
        large_tiles(h);
        h->l2_bytes = 0x7fffffff; /* every call whose kernel has one takes it */
        diag("again, with the halves kernels' streaming variants");
        really_read(h);
        large_tiles(h);
        h->l2_bytes = l2;
    }
    pkv_cuda_rope_table(h, 1e4f, 128, 5000); /* left for pkv_cuda_close to free */
    gpu_free_all(h);
    pkv_cuda_close(h);
    return done_testing();
}
