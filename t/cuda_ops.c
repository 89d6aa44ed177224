/* The CUDA backend against the reference, every op, on a sweep of shapes: whole poisoned
 * pools compared byte for byte, out-of-range counts compared, sources and pools aligned (the
 * 16-byte kernels) or offset by one element (the element kernels); then the error paths (same
 * status and message, nothing launched). */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "refkit.h"
#include "randcase.h"
#include "pagedkv.h"

#include <stdlib.h>
#include <string.h>

typedef struct gcase {
    pkv_fused_desc f;
    pkv_write_desc w;
    uint16_t *k, *v, *wt;
    uint32_t *pos[3];
    int64_t *slots;
    size_t src_elems, pool_elems;
    int shifted; /* sources and pools one element off 16-byte alignment */
} gcase;

static const float thetas[] = {1e4f, 1e6f, 1e8f};
static const float scales[] = {1.0f, 0.01171875f, 3e-5f, 2e4f};

static void make(gcase *c, uint32_t nkv, uint32_t hd, uint32_t bs, uint32_t tokens, int variant)
{
    uint64_t row = (uint64_t)nkv * hd, bstride;
    int padded = variant % 2;
    memset(c, 0, sizeof *c);
    c->shifted = variant / 2 % 2;
    c->f.cache.num_kv_heads = nkv;
    c->f.cache.head_dim = hd;
    c->f.cache.block_size = bs;
    c->f.cache.num_blocks = 1 + (uint64_t)tokens * 2 / bs;
    bstride = row * bs + (padded ? 7 : 0);
    c->f.cache.block_stride = padded ? bstride : 0;
    c->f.num_tokens = tokens;
    c->f.k_row_stride = row + (padded ? 3 : 0);
    c->f.v_row_stride = row + (padded ? 1 : 0);
    c->f.rotary_dim = variant % 3 == 0 ? hd - hd % 2 : (hd / 4) * 2;
    c->f.theta = thetas[variant % 3];
    c->f.rms_eps = variant % 4 ? 1e-6f : 0.0f;
    c->f.k_scale = scales[variant % 4];
    c->f.v_scale = scales[(variant + 1) % 4];
    c->f.k_inv_scale = 1.0f / scales[(variant + 2) % 4];
    if (variant % 5 == 1) {
        c->f.mrope_section[1] = c->f.rotary_dim / 6;
        c->f.mrope_section[2] = c->f.rotary_dim / 6;
        c->f.mrope_section[0] = c->f.rotary_dim / 2 - 2 * (c->f.rotary_dim / 6);
    }
    pkvi_write_desc_like(&c->w, &c->f);
    c->src_elems = (size_t)tokens * (row + 3) + 1;
    c->pool_elems = (size_t)(c->f.cache.num_blocks * bstride);
    c->k = kit_alloc(c->src_elems * 2);
    c->v = kit_alloc(c->src_elems * 2);
    c->wt = kit_alloc((size_t)hd * 2);
    kit_fill_bf16(c->k, c->src_elems, variant % 3 ? 8.0f : 400.0f);
    kit_fill_bf16(c->v, c->src_elems, 4.0f);
    for (uint32_t e = 0; e < hd; e++) c->wt[e] = kit_bf16(0.25f);
    for (int i = 0; i < 3; i++) {
        c->pos[i] = kit_alloc((size_t)tokens * 4 + 4);
        for (uint32_t t = 0; t < tokens; t++)
            c->pos[i][t] = variant % 2 ? (uint32_t)kit_rand() : (uint32_t)(kit_rand() % 40000);
    }
    c->slots = kit_alloc((size_t)tokens * 8 + 8);
    kit_slots(c->slots, tokens, c->f.cache.num_blocks * bs, 80, 80);
}

static void release(gcase *c)
{
    free(c->k);
    free(c->v);
    free(c->wt);
    for (int i = 0; i < 3; i++) free(c->pos[i]);
    free(c->slots);
}

/* Run op on the reference and the GPU; 1 when the pools and counts are identical. */
static int compare(pkv_cuda *h, int op, gcase *c, unsigned long long *bytes)
{
    size_t esz = op == PKV_OP_WRITE_FP8 || op >= PKV_OP_FUSED_FP8_K ? 1 : 2;
    size_t pb = c->pool_elems * esz, sb = c->src_elems * 2, T = c->f.num_tokens;
    unsigned char *rk = kit_alloc(pb), *rv = kit_alloc(pb), *gk = kit_alloc(pb), *gv = kit_alloc(pb);
    uint64_t roob = 0, goob = 0, dk, dv, dw, dp[3], ds, dkc, dvc, doob;
    pkv_status rs = PKV_OK, gs = PKV_OK;
    int same;
    memset(rk, 0xA5, pb);
    memset(rv, 0xA5, pb);
    /* unshifted and unpadded, the launchers take the 16-byte kernels; else the element ones */
    dk = gpu_upload(h, c->k, sb, c->shifted ? 2 : 0);
    dv = gpu_upload(h, c->v, sb, c->shifted ? 2 : 0);
    dw = gpu_upload(h, c->wt, (size_t)c->f.cache.head_dim * 2, 0);
    for (int i = 0; i < 3; i++) dp[i] = gpu_upload(h, c->pos[i], T * 4 + 4, 4);
    ds = gpu_upload(h, c->slots, T * 8 + 8, 0);
    dkc = gpu_poisoned(h, pb, c->shifted ? esz : 0);
    dvc = gpu_poisoned(h, pb, c->shifted ? esz : 0);
    doob = gpu_upload(h, &goob, 8, 0);
    switch (op) {
    case PKV_OP_WRITE_BF16:
        rs = pkv_ref_write_bf16(&c->w, c->k, c->v, c->slots, (uint16_t *)rk, (uint16_t *)rv, &roob);
        gs = pkv_cuda_write_bf16(h, &c->w, dk, dv, ds, dkc, dvc, doob, NULL);
        break;
    case PKV_OP_WRITE_V_BF16:
        rs = pkv_ref_write_v_bf16(&c->w, c->v, c->slots, (uint16_t *)rv, &roob);
        gs = pkv_cuda_write_v_bf16(h, &c->w, dv, ds, dvc, doob, NULL);
        break;
    case PKV_OP_WRITE_FP8:
        rs = pkv_ref_write_fp8(&c->w, c->k, c->v, c->slots, rk, rv, &roob);
        gs = pkv_cuda_write_fp8(h, &c->w, dk, dv, ds, dkc, dvc, doob, NULL);
        break;
    case PKV_OP_FUSED_BF16:
        rs = pkv_ref_fused_bf16(&c->f, c->k, c->wt, c->pos[0], c->slots, (uint16_t *)rk, &roob);
        gs = pkv_cuda_fused_bf16(h, &c->f, dk, dw, dp[0], ds, dkc, doob, NULL);
        break;
    case PKV_OP_FUSED_MROPE_BF16:
        rs = pkv_ref_fused_mrope_bf16(&c->f, c->k, c->wt, c->pos[0], c->pos[1], c->pos[2],
                                      c->slots, (uint16_t *)rk, &roob);
        gs = pkv_cuda_fused_mrope_bf16(h, &c->f, dk, dw, dp[0], dp[1], dp[2], ds, dkc, doob, NULL);
        break;
    case PKV_OP_FUSED_FP8_K:
        rs = pkv_ref_fused_fp8_k(&c->f, c->k, c->wt, c->pos[0], c->slots, rk, &roob);
        gs = pkv_cuda_fused_fp8_k(h, &c->f, dk, dw, dp[0], ds, dkc, doob, NULL);
        break;
    default:
        rs = pkv_ref_fused_fp8_kv(&c->f, c->k, c->v, c->wt, c->pos[0], c->slots, rk, rv, &roob);
        gs = pkv_cuda_fused_fp8_kv(h, &c->f, dk, dv, dw, dp[0], ds, dkc, dvc, doob, NULL);
    }
    gpu_download(h, gk, dkc, pb);
    gpu_download(h, gv, dvc, pb);
    gpu_download(h, &goob, doob, 8);
    same = rs == PKV_OK && gs == PKV_OK && roob == goob && memcmp(rk, gk, pb) == 0 &&
           memcmp(rv, gv, pb) == 0;
    if (!same) {
        long i = kit_first_diff(rk, gk, pb), j = kit_first_diff(rv, gv, pb);
        diag("%s nkv %u hd %u bs %u tokens %u rot %u: ref %d gpu %d (%s), oob %llu/%llu, first K "
             "diff %ld (%02x vs %02x), first V diff %ld",
             pkv_op_name((pkv_op)op), c->f.cache.num_kv_heads, c->f.cache.head_dim,
             c->f.cache.block_size, c->f.num_tokens, c->f.rotary_dim, (int)rs, (int)gs,
             pkv_last_error(), (unsigned long long)roob, (unsigned long long)goob, i,
             i >= 0 ? rk[i] : 0, i >= 0 ? gk[i] : 0, j);
    }
    *bytes += 2 * pb;
    gpu_free_all(h);
    free(rk);
    free(rv);
    free(gk);
    free(gv);
    return same;
}

static void fill_slots(pkv_cuda *h)
{
    int bad = 0;
    for (int i = 0; i < 200; i++) {
        int32_t table[64];
        int64_t want[300], got[300];
        pkv_fill_slots_desc d;
        uint64_t dt, ds;
        d.block_size = 1 + (uint32_t)(kit_rand() % 50);
        d.start_pos = i % 3 ? (uint32_t)(kit_rand() % 2000) : 0xffffffffu - (uint32_t)(kit_rand() % 200);
        d.count = (uint32_t)(kit_rand() % 300);
        d.table_len = (uint32_t)(kit_rand() % 65);
        for (int e = 0; e < 64; e++) table[e] = kit_rand() % 6 ? (int32_t)(kit_rand() >> 33) : -1;
        memset(want, 0xA5, sizeof want);
        pkv_ref_fill_slots(&d, table, want);
        dt = gpu_upload(h, table, sizeof table, 0);
        ds = gpu_upload(h, want, sizeof want, 0); /* same poison as the reference's */
        {
            int64_t poison[300];
            memset(poison, 0xA5, sizeof poison);
            pkv_cuda_upload(h, ds, poison, sizeof poison);
        }
        if (pkv_cuda_fill_slots(h, &d, dt, ds, NULL) != PKV_OK) bad++;
        gpu_download(h, got, ds, sizeof got);
        bad += memcmp(got, want, sizeof got) != 0;
        gpu_free_all(h);
    }
    is_int(bad, 0, "fill_slots: GPU == reference on 200 tables (whole output arrays)");
}

static void sweep(pkv_cuda *h)
{
    static const uint32_t hds[] = {40, 64, 80, 96, 128, 192, 256, 512}, nkvs[] = {1, 2, 4, 8, 16},
                          bss[] = {1, 7, 16, 32, 128}, toks[] = {0, 1, 3, 64, 1000, 5000};
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
        long cases = 0, bad = 0, i = 0;
        unsigned long long bytes = 0;
        for (size_t a = 0; a < 8; a++)
            for (size_t b = 0; b < 5; b++, i++)
                for (size_t t = 0; t < 6; t++) {
                    gcase c;
                    uint32_t tokens = toks[t];
                    /* the largest shapes once per (head_dim, heads), not for every block size */
                    if ((uint64_t)tokens * nkvs[b] * hds[a] > 3000000u) tokens = 1000;
                    /* sampled runs (compute-sanitizer) keep the shapes, not the big counts */
                    if (tap_sample_stride() > 1 && tokens > 64) tokens = 64;
                    make(&c, nkvs[b], hds[a], bss[(i + t) % 5], tokens, (int)(i + t));
                    cases++;
                    bad += !compare(h, op, &c, &bytes);
                    release(&c);
                }
        is_int(bad, 0, "%s: GPU == reference on %ld cases (%llu pool bytes)",
               pkv_op_name((pkv_op)op), cases, bytes);
    }
}

/* Row strides of 2^32 elements, one token (its row is all a source holds): the 16-byte writes
 * take their 64-bit kernel there (t/cuda_write_plan), which the sweep's calls never reach. */
static void wide_strides(pkv_cuda *h)
{
    for (int op = PKV_OP_WRITE_BF16; op <= PKV_OP_WRITE_FP8; op++) {
        unsigned long long bytes = 0;
        gcase c;
        make(&c, 8, 128, 16, 1, 0);
        c.slots[0] = 5; /* of 16 */
        c.w.k_row_stride = c.w.v_row_stride = 4294967296ull;
        ok(compare(h, op, &c, &bytes), "%s, row strides 2^32: GPU == reference (%llu pool bytes)",
           pkv_op_name((pkv_op)op), bytes);
        release(&c);
    }
}

static void errors(pkv_cuda *h)
{
    pkv_write_desc w;
    pkv_fused_desc f;
    char ref_msg[512];
    uint64_t pool = gpu_poisoned(h, 4096, 0);
    unsigned char back[4096];
    int clean = 1;
    memset(&w, 0, sizeof w);
    w.cache.num_kv_heads = 1;
    w.cache.head_dim = 8;
    w.cache.block_size = 4;
    w.cache.num_blocks = 4;
    w.cache.block_stride = 5; /* too small */
    w.num_tokens = 1;
    is_int(pkv_ref_write_bf16(&w, NULL, NULL, NULL, NULL, NULL, NULL), PKV_EINVAL, "ref rejects");
    strcpy(ref_msg, pkv_last_error());
    is_int(pkv_cuda_write_bf16(h, &w, pool, pool, pool, pool, pool, 0, NULL), PKV_EINVAL,
           "the GPU launcher rejects the same descriptor");
    is_str(pkv_last_error(), ref_msg, "with the same message");
    memset(&f, 0, sizeof f);
    f.cache = w.cache;
    f.cache.block_stride = 0;
    f.num_tokens = 1;
    f.rotary_dim = 6;
    f.theta = 0.5f;
    is_int(pkv_ref_fused_bf16(&f, NULL, NULL, NULL, NULL, NULL, NULL), PKV_EINVAL, "ref: theta");
    strcpy(ref_msg, pkv_last_error());
    is_int(pkv_cuda_fused_bf16(h, &f, pool, pool, pool, pool, pool, 0, NULL), PKV_EINVAL,
           "GPU: theta");
    is_str(pkv_last_error(), ref_msg, "with the same message");
    {
        pkv_write_desc ok_desc = w;
        ok_desc.cache.block_stride = 0;
        is_int(pkv_cuda_write_bf16(h, &ok_desc, pool, pool, pool, pool + 1, pool, 0, NULL),
               PKV_EINVAL, "a BF16 pool at an odd address is rejected, not a fault");
        ok(strstr(pkv_last_error(), "k_cache") != NULL, "  the message names k_cache: %s",
           pkv_last_error());
    }
    gpu_download(h, back, pool, sizeof back);
    for (size_t i = 0; i < sizeof back; i++) clean &= back[i] == 0xA5;
    ok(clean, "nothing was launched: the pool is untouched");
    gpu_free_all(h);
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    errors(h);
    fill_slots(h);
    sweep(h);
    wide_strides(h);
    pkv_cuda_close(h);
    return done_testing();
}
