/* MRoPE with the handle's cos/sin table: the halves form and the _small warp kernel against the
 * reference over whole poisoned pools, three position streams (text tokens, tokens of three
 * positions, positions past the table), interleaved and explicit sections; and that the kernels
 * really read the table (an overwritten one changes the bytes). */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "tablecase.h"
#include "../lib/cuda_plan.h"

#include <stdlib.h>
#include <string.h>

/* MRoPE in the halves form (4096 tokens, the whole head rotated), at every element count of
 * its kernels (a tile's items span one token at 16 x 64, two at 4 x 128 and 2 x 128, up to three at
 * 5 x 128, four at 1 x 128 and up to four at 3 x 64): three position streams, each pair's cos and
 * sin from its own stream's row, interleaved (sections all 0) and with explicit sections; a twelfth
 * of the tokens have a width position past the table and a twenty-fourth a temporal one (those
 * pairs computed, not read; the others read from their rows), and runs of four tokens, a third of
 * them drawn at random, have three equal positions (text tokens: one row read for every pair; so
 * whole tiles of text tokens lie between tiles with other tokens, and, the runs being drawn, not
 * with a period that the warps' stride over the tiles could match: every third run would give
 * each of 24 warps, 6 blocks of 4 on one multiprocessor, tokens of one kind only), as has a
 * twenty-fourth past the table. Each also on a grid for one multiprocessor, whose warps loop over
 * many tiles (the positions are loaded a tile ahead). The wide kernel in tiles of 16 items at 16
 * x 64 in a call of 2 tiles a warp of its wave (a token a tile; on one multiprocessor's grid,
 * tiles of 32). */
static void mrope_halves(pkv_cuda *h)
{
    /* the handle's L2 0 (no streaming variants) or so large that every call whose kernel has
     * one takes it (main runs both) */
    const int stream = h->l2_bytes != 0;
    static const struct {
        uint32_t heads, hd;
        int want;
    } gs[] = {{4, 128, PKVI_K_FUSED_MROPE_HALVES16}, {5, 128, PKVI_K_FUSED_MROPE_HALVES16},
              {2, 128, PKVI_K_FUSED_MROPE_HALVES},   {1, 128, PKVI_K_FUSED_MROPE_HALVES},
              {3, 64, PKVI_K_FUSED_MROPE_WIDE64},    {16, 64, PKVI_K_FUSED_MROPE_WIDE64},
              {4, 256, PKVI_K_FUSED_MROPE_HALVES16}, {16, 64, PKVI_K_FUSED_MROPE_WIDE64_T16}};
    pkvi_rng r = {0x2545f4914f6cdd1dull};
    for (size_t gi = 0; gi < sizeof gs / sizeof gs[0]; gi++)
        for (int v = 0; v < 2; v++) {
            const uint64_t a = 1u << 20, pos[3] = {a, a, a};
            const uint32_t hd = gs[gi].hd, sec[3] = {v ? 24 * hd / 128 : 0, v ? 20 * hd / 128 : 0,
                                                     v ? 20 * hd / 128 : 0};
            const int t16 = gs[gi].want == PKVI_K_FUSED_MROPE_WIDE64_T16,
                      one = t16 ? PKVI_K_FUSED_MROPE_WIDE64 : gs[gi].want;
            const int sms = h->sm_count, per_sm = one == PKVI_K_FUSED_MROPE_WIDE64
                                                      ? PKVK_MROPE_WIDE_BLOCKS_PER_SM
                                                  : one == PKVI_K_FUSED_MROPE_HALVES16
                                                      ? PKVK_MROPE_HALVES16_BLOCKS_PER_SM
                                                      : PKVK_MROPE_HALVES_BLOCKS_PER_SM;
            const uint32_t n =
                t16 ? (uint32_t)(2 * sms * PKVK_MROPE_WIDE_BLOCKS_PER_SM * (PKVK_WIDE_THREADS / 32))
                    : 4096u;
            uint32_t *ph, *pw;
            pkvi_case c;
            pkvk_fused_params prm;
            pkvi_plan plan;
            unsigned long long bad;
            plain_case(&c, 0, gs[gi].heads, hd, n);
            ph = malloc((size_t)n * 4);
            pw = malloc((size_t)n * 4);
            if (!ph || !pw) bail("out of memory");
            int text = 0;
            for (uint32_t t = 0; t < n; t++) {
                if (t % 4 == 0) text = pkvi_rng_next(&r) % 3 == 0;
                ph[t] = (uint32_t)(pkvi_rng_next(&r) % 1000);
                pw[t] = (uint32_t)(pkvi_rng_next(&r) % 1000) + (t % 12 == 5 ? 1000u : 0u);
                if (t % 24 == 9) c.pos[0][t] += 1000;  /* equal, and past the table */
                if (t % 24 == 10) c.pos[0][t] += 1000; /* distinct: stream 0 past the table */
                if (text || t % 24 == 9) ph[t] = pw[t] = c.pos[0][t];
            }
            c.pos[1] = ph;
            c.pos[2] = pw;
            memcpy(c.f.mrope_section, sec, sizeof c.f.mrope_section);
            if (pkv_cuda_rope_table(h, 1e4f, hd, 1000) != PKV_OK) bail("%s", pkv_last_error());
            is_int(pkvi_cuda_fused_plan(h, PKV_OP_FUSED_MROPE_BF16, &c.f, a, a, a, pos, a, a, a, 0,
                                        &prm, &plan) == PKV_OK
                       ? plan.kernel
                       : -2,
                   stream ? pkvi_cuda_streaming_variant(gs[gi].want) : gs[gi].want,
                   "MRoPE %u x %u, %u tokens, sections %u %u %u: the halves form", gs[gi].heads, hd,
                   n, sec[0], sec[1], sec[2]);
            is_int((long long)run_diff(h, PKV_OP_FUSED_MROPE_BF16, &c), 0,
                   "  three streams, table of 1000 == reference");
            h->sm_count = 1;
            ok(pkvi_cuda_fused_plan(h, PKV_OP_FUSED_MROPE_BF16, &c.f, a, a, a, pos, a, a, a, 0,
                                    &prm, &plan) == PKV_OK &&
                   plan.kernel == (stream ? pkvi_cuda_streaming_variant(one) : one) &&
                   plan.grid == (unsigned)per_sm,
               "  on one multiprocessor: kernel %d, %d blocks",
               stream ? pkvi_cuda_streaming_variant(one) : one, per_sm);
            is_int((long long)run_diff(h, PKV_OP_FUSED_MROPE_BF16, &c), 0,
                   "  one multiprocessor's grid: the same");
            h->sm_count = sms;
            pkv_cuda_fill(h, h->cs_table, 0x3f, (size_t)1000 * hd * 4);
            bad = run_diff(h, PKV_OP_FUSED_MROPE_BF16, &c);
            ok(bad > 0 && bad != ~0ull, "  overwritten table: %llu bytes differ (it is read)", bad);
            pkv_cuda_rope_table(h, 1e4f, hd, 0);
            free(ph);
            free(pw);
            c.pos[1] = c.pos[2] = c.pos[0];
            pkvi_case_free(&c);
        }
}

/* MRoPE in calls of one wave: the _small warp kernel, whose threads own 8 consecutive pairs (so a
 * thread's pairs may lie in two streams' sections), with the whole head or part of it rotated,
 * one token (decode) or a few; interleaved and explicit sections; text tokens (three equal
 * positions: one row), tokens of three different positions (each pair its stream's row) and
 * positions past the table (computed) in one call */
static void mrope_small(pkv_cuda *h)
{
    static const struct {
        uint32_t heads, hd, tokens, rot, sec[3];
    } gs[] = {{8, 128, 64, 128, {24, 20, 20}}, {1, 128, 1, 128, {24, 20, 20}},
              {1, 128, 64, 128, {24, 20, 20}}, {4, 128, 64, 80, {16, 12, 12}},
              {16, 64, 16, 64, {12, 10, 10}},  {4, 256, 8, 256, {48, 40, 40}}};
    pkvi_rng r = {0x9e3779b97f4a7c15ull};
    for (size_t gi = 0; gi < sizeof gs / sizeof gs[0]; gi++)
        for (int v = 0; v < 4; v++) {
            const uint64_t a = 1u << 20, pos[3] = {a, a, a};
            const uint32_t n = gs[gi].tokens, zero[3] = {0, 0, 0};
            uint32_t *ph, *pw;
            pkvi_case c;
            pkvk_fused_params prm;
            pkvi_plan plan;
            unsigned long long bad;
            plain_case(&c, 0, gs[gi].heads, gs[gi].hd, n);
            c.f.rotary_dim = gs[gi].rot;
            memcpy(c.f.mrope_section, v & 1 ? gs[gi].sec : zero, sizeof c.f.mrope_section);
            ph = malloc(n * 4);
            pw = malloc(n * 4);
            if (!ph || !pw) bail("out of memory");
            for (uint32_t t = 0; t < n; t++) {
                /* v 0, 1: tokens of three positions (one token alone is one), every fourth
                 * text, one in five with a width past the table, one in seven text past it,
                 * one in seven with its temporal position past it (only that one, unless it
                 * is also a fourth, text); v 2, 3: every token text, two in seven past the
                 * table */
                ph[t] = (uint32_t)(pkvi_rng_next(&r) % 1000);
                pw[t] = (uint32_t)(pkvi_rng_next(&r) % 1000) + (t % 5 == 3 ? 1000u : 0u);
                if (t % 7 == 6 || t % 7 == 2) c.pos[0][t] += 1000;
                if (v >= 2 || (n > 1 && t % 4 == 0) || t % 7 == 6) ph[t] = pw[t] = c.pos[0][t];
            }
            c.pos[1] = ph;
            c.pos[2] = pw;
            if (pkv_cuda_rope_table(h, 1e4f, gs[gi].rot, 1000) != PKV_OK)
                bail("%s", pkv_last_error());
            is_int(pkvi_cuda_fused_plan(h, PKV_OP_FUSED_MROPE_BF16, &c.f, a, a, a, pos, a, a, a, 0,
                                        &prm, &plan) == PKV_OK
                       ? plan.kernel
                       : -2,
                   PKVI_K_FUSED_MROPE_WARP_SMALL,
                   "MRoPE %u x %u, %u tokens, rotary %u, %s sections, %s: the _small kernel",
                   gs[gi].heads, gs[gi].hd, n, gs[gi].rot, v & 1 ? "explicit" : "interleaved",
                   v >= 2 ? "text tokens" : "mixed tokens");
            is_int((long long)run_diff(h, PKV_OP_FUSED_MROPE_BF16, &c), 0,
                   "  three streams, table of 1000 == reference");
            pkv_cuda_fill(h, h->cs_table, 0x3f, (size_t)1000 * gs[gi].rot * 4);
            bad = run_diff(h, PKV_OP_FUSED_MROPE_BF16, &c);
            ok(bad > 0 && bad != ~0ull, "  overwritten table: %llu bytes differ (it is read)", bad);
            pkv_cuda_rope_table(h, 1e4f, gs[gi].rot, 0);
            free(ph);
            free(pw);
            c.pos[1] = c.pos[2] = c.pos[0];
            pkvi_case_free(&c);
        }
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    const int l2 = h->l2_bytes;
    h->l2_bytes = 0;
    mrope_halves(h);
    h->l2_bytes = 0x7fffffff;
    diag("again, with the halves kernels' streaming variants");
    mrope_halves(h);
    h->l2_bytes = l2;
    mrope_small(h);
    gpu_free_all(h);
    pkv_cuda_close(h);
    return done_testing();
}
