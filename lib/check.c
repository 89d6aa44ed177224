/* "pkv check": a sweep of shapes and hostile inputs through every backend present, comparing
 * whole poisoned pools. The reference is checked against its definitions and self-properties
 * (bit copies equal their source, FP8 rows equal the value rule, nothing outside the written
 * rows changes, MRoPE with equal streams is the scalar op, op 8 is the explicit chain, every
 * op is deterministic); the CUDA backend, when a GPU is present, against the reference. */
#include "config.h"
#include "check.h"
#include "pagedkv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON 0xA5

typedef struct tally {
    long cases;
    unsigned long long bytes, mismatches;
    double secs;
} tally;

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static uint16_t hostile_bf16(void)
{
    static const uint16_t h[] = {0x7fc1, 0xffc0, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001,
                                 0x807f, 0x7f7f, 0xff7f, 0x43e0, 0x43e8, 0xc3e8};
    uint64_t r = rnd();
    if (r % 50 == 0) return h[(r >> 8) % (sizeof h / sizeof h[0])];
    return pkv_bf16_from_f32(((float)(r >> 40) * 0x1p-24f * 2.0f - 1.0f) * 16.0f);
}

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "pkv check: out of memory\n");
        exit(3);
    }
    return p;
}

static unsigned long long diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned long long d = 0;
    for (size_t i = 0; i < n; i++) d += x[i] != y[i];
    return d;
}

typedef struct input {
    pkv_fused_desc f;
    pkv_write_desc w;
    uint16_t *k, *v, *wt;
    uint32_t *pos;
    int64_t *slots;
    size_t pool; /* elements */
    uint64_t row, bstride;
} input;

static void make_input(input *in, uint32_t nkv, uint32_t hd, uint32_t bs, uint32_t tokens)
{
    size_t src;
    memset(in, 0, sizeof *in);
    in->row = (uint64_t)nkv * hd;
    in->f.cache.num_kv_heads = nkv;
    in->f.cache.head_dim = hd;
    in->f.cache.block_size = bs;
    in->f.cache.num_blocks = 1 + (uint64_t)tokens * 2 / bs;
    in->bstride = in->row * bs + (rnd() % 2 ? 3 : 0);
    in->f.cache.block_stride = in->bstride;
    in->f.num_tokens = tokens;
    in->f.k_row_stride = in->row + rnd() % 3;
    in->f.v_row_stride = in->row + rnd() % 3;
    in->f.rotary_dim = (uint32_t)(rnd() % (hd / 2 + 1)) * 2;
    in->f.theta = (const float[]){1e4f, 1e6f, 1e8f}[rnd() % 3];
    in->f.rms_eps = 1e-6f;
    in->f.k_scale = (const float[]){1.0f, 1e-3f, 3e4f, 0.0117f}[rnd() % 4];
    in->f.v_scale = (const float[]){1.0f, 2e-2f, 448.0f, 0.3f}[rnd() % 4];
    in->f.k_inv_scale = 1.0f / in->f.k_scale;
    in->w.cache = in->f.cache;
    in->w.num_tokens = tokens;
    in->w.k_row_stride = in->f.k_row_stride;
    in->w.v_row_stride = in->f.v_row_stride;
    in->w.k_scale = in->f.k_scale;
    in->w.v_scale = in->f.v_scale;
    src = (size_t)tokens * (in->row + 2) + 1;
    in->k = xalloc(src * 2);
    in->v = xalloc(src * 2);
    in->wt = xalloc(hd * 2);
    in->pos = xalloc((size_t)tokens * 4 + 4);
    in->slots = xalloc((size_t)tokens * 8 + 8);
    for (size_t i = 0; i < src; i++) {
        in->k[i] = hostile_bf16();
        in->v[i] = hostile_bf16();
    }
    for (uint32_t e = 0; e < hd; e++) in->wt[e] = pkv_bf16_from_f32((float)(rnd() % 512) / 1024.0f - 0.25f);
    for (uint32_t t = 0; t < tokens; t++) {
        uint64_t r = rnd() % 10, slots = in->f.cache.num_blocks * bs;
        in->pos[t] = (uint32_t)rnd();
        in->slots[t] = r == 0 ? -1 : r == 1 ? (int64_t)(slots + rnd() % 7) : (int64_t)((t * 2 + 1) % slots);
    }
    /* keep valid slots distinct: token t owns slot (2t + 1) mod slots only once */
    for (uint32_t t = 0; t < tokens; t++)
        if (in->slots[t] >= 0 && (uint64_t)in->slots[t] < in->f.cache.num_blocks * bs &&
            (uint64_t)t * 2 + 1 >= in->f.cache.num_blocks * bs)
            in->slots[t] = -1;
    in->pool = (size_t)(in->f.cache.num_blocks * in->bstride);
}

static void free_input(input *in)
{
    free(in->k);
    free(in->v);
    free(in->wt);
    free(in->pos);
    free(in->slots);
}

/* whether element e of the pool is in the row of some valid token */
static unsigned char *written_mask(const input *in)
{
    unsigned char *m = calloc(in->pool + 1, 1);
    if (!m) exit(3);
    for (uint32_t t = 0; t < in->f.num_tokens; t++) {
        uint64_t s = (uint64_t)in->slots[t], bs = in->f.cache.block_size, off;
        if (in->slots[t] < 0 || s >= in->f.cache.num_blocks * bs) continue;
        off = s / bs * in->bstride + s % bs * in->row;
        memset(m + off, 1, in->row);
    }
    return m;
}

static pkv_cuda *gpu;      /* the CUDA backend, when a device is present */
static tally gpu_tally[PKV_OP_COUNT];

static uint64_t up(const void *src, size_t bytes, size_t shift, uint64_t *base)
{
    if (pkv_cuda_alloc(gpu, bytes + shift + 8, base) != PKV_OK ||
        (src && pkv_cuda_upload(gpu, *base + shift, src, bytes) != PKV_OK)) {
        fprintf(stderr, "pkv check: %s\n", pkv_last_error());
        exit(3);
    }
    return *base + shift;
}

/* The same case on the GPU (sources and pools one element off alignment), against the
 * reference's pools ka / va and count oa. */
static void gpu_case(int op, const input *in, const unsigned char *ka, const unsigned char *va,
                     uint64_t oa, size_t pool_bytes, size_t esz)
{
    uint64_t base[9], dk, dv, dw, dp, ds, dkc, dvc, doob, goob = 0;
    size_t src = ((size_t)in->f.num_tokens * (in->row + 2) + 1) * 2, T = in->f.num_tokens;
    unsigned char *gk = xalloc(pool_bytes + 1), *gv = xalloc(pool_bytes + 1);
    pkv_status st = PKV_OK;
    tally *t = &gpu_tally[op];
    clock_t c0 = clock();
    dk = up(in->k, src, 2, &base[0]);
    dv = up(in->v, src, 2, &base[1]);
    dw = up(in->wt, in->f.cache.head_dim * 2, 0, &base[2]);
    dp = up(in->pos, T * 4 + 4, 0, &base[3]);
    ds = up(in->slots, T * 8 + 8, 0, &base[4]);
    dkc = up(NULL, pool_bytes, esz, &base[5]); /* one element off alignment */
    dvc = up(NULL, pool_bytes, esz, &base[6]);
    doob = up(&goob, 8, 0, &base[7]);
    pkv_cuda_fill(gpu, dkc, POISON, pool_bytes);
    pkv_cuda_fill(gpu, dvc, POISON, pool_bytes);
    switch (op) {
    case PKV_OP_WRITE_BF16:
        st = pkv_cuda_write_bf16(gpu, &in->w, dk, dv, ds, dkc, dvc, doob, NULL);
        break;
    case PKV_OP_WRITE_V_BF16:
        st = pkv_cuda_write_v_bf16(gpu, &in->w, dv, ds, dvc, doob, NULL);
        break;
    case PKV_OP_WRITE_FP8:
        st = pkv_cuda_write_fp8(gpu, &in->w, dk, dv, ds, dkc, dvc, doob, NULL);
        break;
    case PKV_OP_FUSED_BF16:
        st = pkv_cuda_fused_bf16(gpu, &in->f, dk, dw, dp, ds, dkc, doob, NULL);
        break;
    case PKV_OP_FUSED_MROPE_BF16:
        st = pkv_cuda_fused_mrope_bf16(gpu, &in->f, dk, dw, dp, dp, dp, ds, dkc, doob, NULL);
        break;
    case PKV_OP_FUSED_FP8_K:
        st = pkv_cuda_fused_fp8_k(gpu, &in->f, dk, dw, dp, ds, dkc, doob, NULL);
        break;
    default:
        st = pkv_cuda_fused_fp8_kv(gpu, &in->f, dk, dv, dw, dp, ds, dkc, dvc, doob, NULL);
    }
    if (st == PKV_OK) st = pkv_cuda_synchronize(gpu, NULL);
    if (st == PKV_OK) st = pkv_cuda_download(gpu, gk, dkc, pool_bytes);
    if (st == PKV_OK) st = pkv_cuda_download(gpu, gv, dvc, pool_bytes);
    if (st == PKV_OK) st = pkv_cuda_download(gpu, &goob, doob, 8);
    t->cases++;
    t->bytes += 2 * pool_bytes;
    if (st != PKV_OK) {
        fprintf(stderr, "pkv check: %s on the GPU: %s\n", pkv_op_name((pkv_op)op),
                pkv_last_error());
        t->mismatches++;
    } else {
        t->mismatches += diff(ka, gk, pool_bytes) + diff(va, gv, pool_bytes) + (goob != oa);
    }
    for (int i = 0; i < 8; i++) pkv_cuda_free(gpu, base[i]);
    free(gk);
    free(gv);
    t->secs += (double)(clock() - c0) / CLOCKS_PER_SEC;
}

/* One case of one op: expected vs actual whole pools (K, and V when the op writes it). */
static void run_case(int op, input *in, tally *t)
{
    size_t n = in->pool, esz = (op == PKV_OP_WRITE_FP8 || op >= PKV_OP_FUSED_FP8_K) ? 1 : 2;
    unsigned char *ka = xalloc(n * 2 + 1), *va = xalloc(n * 2 + 1), *kb = xalloc(n * 2 + 1),
                  *vb = xalloc(n * 2 + 1), *mask = written_mask(in);
    uint64_t oa = 0, ob = 0;
    int two = op == PKV_OP_WRITE_BF16 || op == PKV_OP_WRITE_FP8 || op == PKV_OP_FUSED_FP8_KV;
    memset(ka, POISON, n * 2);
    memset(va, POISON, n * 2);
    memcpy(kb, ka, n * 2);
    memcpy(vb, va, n * 2);
    switch (op) {
    case PKV_OP_WRITE_BF16:
    case PKV_OP_WRITE_V_BF16:
    case PKV_OP_WRITE_FP8: {
        float ik = 1.0f / in->w.k_scale, iv = 1.0f / in->w.v_scale;
        if (op == PKV_OP_WRITE_BF16)
            pkv_ref_write_bf16(&in->w, in->k, in->v, in->slots, (uint16_t *)ka, (uint16_t *)va, &oa);
        else if (op == PKV_OP_WRITE_V_BF16)
            pkv_ref_write_v_bf16(&in->w, in->v, in->slots, (uint16_t *)va, &oa);
        else pkv_ref_write_fp8(&in->w, in->k, in->v, in->slots, ka, va, &oa);
        /* the definition, element by element */
        for (uint32_t tk = 0; tk < in->w.num_tokens; tk++) {
            uint64_t s = (uint64_t)in->slots[tk], bs = in->w.cache.block_size, off;
            if (in->slots[tk] < 0) continue;
            if (s >= in->w.cache.num_blocks * bs) {
                ob++;
                continue;
            }
            off = s / bs * in->bstride + s % bs * in->row;
            for (uint64_t e = 0; e < in->row; e++) {
                uint16_t kx = in->k[tk * in->w.k_row_stride + e], vx = in->v[tk * in->w.v_row_stride + e];
                if (op == PKV_OP_WRITE_FP8) {
                    kb[off + e] = pkv_e4m3_from_f32(pkv_bf16_to_f32(kx) * ik);
                    vb[off + e] = pkv_e4m3_from_f32(pkv_bf16_to_f32(vx) * iv);
                } else {
                    if (op == PKV_OP_WRITE_BF16) memcpy(kb + 2 * (off + e), &kx, 2);
                    memcpy(vb + 2 * (off + e), &vx, 2);
                }
            }
        }
        break;
    }
    case PKV_OP_FUSED_BF16:
    case PKV_OP_FUSED_FP8_K:
        /* deterministic, and nothing outside the written rows changes */
        for (int rep = 0; rep < 2; rep++) {
            unsigned char *dst = rep ? kb : ka;
            uint64_t *o = rep ? &ob : &oa;
            if (op == PKV_OP_FUSED_BF16)
                pkv_ref_fused_bf16(&in->f, in->k, in->wt, in->pos, in->slots, (uint16_t *)dst, o);
            else pkv_ref_fused_fp8_k(&in->f, in->k, in->wt, in->pos, in->slots, dst, o);
        }
        for (size_t e = 0; e < n * esz; e++)
            if (!mask[e / esz] && ka[e] != POISON) ob = ~0ull; /* a stray write */
        break;
    case PKV_OP_FUSED_MROPE_BF16:
        pkv_ref_fused_mrope_bf16(&in->f, in->k, in->wt, in->pos, in->pos, in->pos, in->slots,
                                 (uint16_t *)ka, &oa);
        pkv_ref_fused_bf16(&in->f, in->k, in->wt, in->pos, in->slots, (uint16_t *)kb, &ob);
        break;
    default: { /* op 8 against the explicit chain */
        uint16_t *tmp = xalloc((size_t)in->f.num_tokens * in->row * 2 + 2);
        pkv_write_desc w = in->w;
        pkv_ref_fused_fp8_kv(&in->f, in->k, in->v, in->wt, in->pos, in->slots, ka, va, &oa);
        for (uint32_t tk = 0; tk < in->f.num_tokens; tk++)
            memcpy(tmp + tk * in->row, in->k + tk * in->f.k_row_stride, in->row * 2);
        pkv_ref_rms_norm((uint64_t)in->f.num_tokens * in->f.cache.num_kv_heads,
                         in->f.cache.head_dim, tmp, in->wt, in->f.rms_eps, tmp);
        pkv_ref_rope(in->f.num_tokens, in->f.cache.num_kv_heads, in->f.cache.head_dim,
                     in->f.rotary_dim, in->f.theta, in->pos, tmp);
        w.k_row_stride = 0;
        pkv_ref_write_fp8(&w, tmp, in->v, in->slots, kb, vb, &ob);
        free(tmp);
    }
    }
    if (gpu) gpu_case(op, in, ka, va, oa, n * esz, esz);
    t->cases++;
    t->bytes += n * esz * (two || op == PKV_OP_WRITE_V_BF16 ? 2 : 1);
    t->mismatches += diff(ka, kb, n * esz) + (two || op == PKV_OP_WRITE_V_BF16 ? diff(va, vb, n * esz) : 0) +
                     (oa != ob);
    free(ka);
    free(va);
    free(kb);
    free(vb);
    free(mask);
}

/* op 1 against its definition, on random tables with negative entries */
static void check_fill_slots(int quick, tally *t)
{
    clock_t c0 = clock();
    for (int i = 0; i < (quick ? 100 : 400); i++) {
        int32_t table[16];
        int64_t got[64];
        pkv_fill_slots_desc d;
        d.block_size = 1 + (uint32_t)(rnd() % 40);
        d.start_pos = i % 4 == 0 ? 0xffffffffu - (uint32_t)(rnd() % 100) : (uint32_t)(rnd() % 300);
        d.count = (uint32_t)(rnd() % 64);
        d.table_len = (uint32_t)(rnd() % 17);
        for (int e = 0; e < 16; e++) table[e] = rnd() % 5 ? (int32_t)(rnd() % 100000) : -1 - (int32_t)(rnd() % 9);
        memset(got, POISON, sizeof got);
        pkv_ref_fill_slots(&d, table, got);
        for (uint32_t k = 0; k < 64; k++) {
            uint64_t pos = (uint64_t)d.start_pos + k, blk = pos / d.block_size;
            int64_t want = k >= d.count ? (int64_t)0xa5a5a5a5a5a5a5a5ull
                           : blk >= d.table_len || table[blk] < 0
                               ? -1
                               : (int64_t)table[blk] * d.block_size + (int64_t)(pos % d.block_size);
            t->mismatches += got[k] != want;
        }
        t->cases++;
        t->bytes += sizeof got;
    }
    t->secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
}

int pkvi_check_main(int quick)
{
    static const uint32_t nkvs[] = {1, 2, 8}, hds[] = {2, 64, 80, 128, 256, 512}, bss[] = {1, 7, 16},
                          toks[] = {0, 1, 3, 33};
    tally t[PKV_OP_COUNT];
    unsigned long long total = 0;
    char gpu_why[256] = "";
    memset(t, 0, sizeof t);
    if (pkv_cuda_open(0, &gpu) != PKV_OK) {
        snprintf(gpu_why, sizeof gpu_why, "%s", pkv_last_error());
        gpu = NULL;
    }
    printf("%-18s %8s %14s %11s %9s\n", "op (reference)", "cases", "bytes", "mismatches", "time");
    check_fill_slots(quick, &t[PKV_OP_FILL_SLOTS]);
    printf("%-18s %8ld %14llu %11llu %8.2fs\n", "fill_slots", t[0].cases, t[0].bytes,
           t[0].mismatches, t[0].secs);
    total += t[0].mismatches;
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
        clock_t c0 = clock();
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 6; b++)
                for (size_t c = 0; c < 3; c++)
                    for (size_t d = 0; d < (quick ? 2u : 4u); d++) {
                        input in;
                        make_input(&in, nkvs[a], hds[b], bss[c], toks[d]);
                        run_case(op, &in, &t[op]);
                        free_input(&in);
                    }
        t[op].secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
        printf("%-18s %8ld %14llu %11llu %8.2fs\n", pkv_op_name((pkv_op)op), t[op].cases,
               t[op].bytes, t[op].mismatches, t[op].secs);
        total += t[op].mismatches;
    }
    if (gpu) {
        printf("%-18s %8s %14s %11s %9s\n", "op (CUDA)", "cases", "bytes", "mismatches", "time");
        printf("  device: %s\n", pkv_cuda_describe(gpu));
        for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
            printf("%-18s %8ld %14llu %11llu %8.2fs\n", pkv_op_name((pkv_op)op),
                   gpu_tally[op].cases, gpu_tally[op].bytes, gpu_tally[op].mismatches,
                   gpu_tally[op].secs);
            total += gpu_tally[op].mismatches;
        }
        pkv_cuda_close(gpu);
        gpu = NULL;
    } else {
        printf("CUDA backend: not checked (%s)\n", gpu_why);
    }
    printf("%s: %llu mismatches\n", total ? "FAIL" : "PASS", total);
    return total ? 1 : 0;
}
