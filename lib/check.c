/* "pkv check": a sweep of shapes and hostile inputs through every backend present, comparing
 * whole poisoned pools (lib/diffcase.c does one case). */
#include "config.h"
#include "check.h"
#include "diffcase.h"
#include "pagedkv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON PKVI_POISON

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

/* A random case: padded rows and blocks at random, -1 and out-of-range slots, hostile values. */
static void make_case(pkvi_case *c, uint32_t nkv, uint32_t hd, uint32_t bs, uint32_t tokens)
{
    uint64_t row = (uint64_t)nkv * hd, slots;
    memset(c, 0, sizeof *c);
    c->f.cache.num_kv_heads = nkv;
    c->f.cache.head_dim = hd;
    c->f.cache.block_size = bs;
    c->f.cache.num_blocks = 1 + (uint64_t)tokens * 2 / bs;
    c->f.cache.block_stride = row * bs + (const uint64_t[]){0, 3, 8}[rnd() % 3];
    c->f.num_tokens = tokens;
    /* dense, padded by whole 16-byte units, or padded off alignment */
    c->f.k_row_stride = row + (rnd() % 2 ? 0 : 8 + rnd() % 3);
    c->f.v_row_stride = row + (rnd() % 2 ? 0 : 8 + rnd() % 3);
    c->f.rotary_dim = (uint32_t)(rnd() % (hd / 2 + 1)) * 2;
    c->f.theta = (const float[]){1e4f, 1e6f, 1e8f}[rnd() % 3];
    c->f.rms_eps = 1e-6f;
    c->f.k_scale = (const float[]){1.0f, 1e-3f, 3e4f, 0.0117f}[rnd() % 4];
    c->f.v_scale = (const float[]){1.0f, 2e-2f, 448.0f, 0.3f}[rnd() % 4];
    c->f.k_inv_scale = 1.0f / c->f.k_scale;
    c->w.cache = c->f.cache;
    c->w.num_tokens = tokens;
    c->w.k_row_stride = c->f.k_row_stride;
    c->w.v_row_stride = c->f.v_row_stride;
    c->w.k_scale = c->f.k_scale;
    c->w.v_scale = c->f.v_scale;
    c->src_elems = (size_t)tokens * (row + 10) + 1; /* the largest row stride above */
    c->shift = (int)(rnd() % 2);
    c->k = xalloc(c->src_elems * 2);
    c->v = xalloc(c->src_elems * 2);
    c->wt = xalloc((size_t)hd * 2);
    c->pos[0] = xalloc((size_t)tokens * 4 + 4);
    c->pos[1] = c->pos[2] = c->pos[0]; /* one stream: MRoPE must equal the scalar op */
    c->slots = xalloc((size_t)tokens * 8 + 8);
    for (size_t i = 0; i < c->src_elems; i++) {
        c->k[i] = hostile_bf16();
        c->v[i] = hostile_bf16();
    }
    for (uint32_t e = 0; e < hd; e++) c->wt[e] = pkv_bf16_from_f32((float)(rnd() % 512) / 1024.0f - 0.25f);
    slots = c->f.cache.num_blocks * bs;
    for (uint32_t t = 0; t < tokens; t++) {
        uint64_t r = rnd() % 10;
        c->pos[0][t] = (uint32_t)rnd();
        /* valid slots 2t + 1 are distinct; -1 and out-of-range ones mixed in */
        c->slots[t] = r == 0 || 2ull * t + 1 >= slots ? -1
                      : r == 1 ? (int64_t)(slots + rnd() % 7)
                               : (int64_t)(2 * t + 1);
    }
}

static void free_case(pkvi_case *c)
{
    free(c->k);
    free(c->v);
    free(c->wt);
    free(c->pos[0]);
    free(c->slots);
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

static void row(const char *name, long cases, unsigned long long bytes, unsigned long long bad,
                double secs)
{
    printf("%-18s %8ld %14llu %11llu %8.2fs\n", name, cases, bytes, bad, secs);
}

int pkvi_check_main(int quick)
{
    static const uint32_t nkvs[] = {1, 2, 8}, hds[] = {2, 64, 80, 128, 256, 512},
                          bss[] = {1, 7, 16}, toks[] = {0, 1, 3, 33};
    tally t[PKV_OP_COUNT], fill;
    pkvi_outcome out[PKV_OP_COUNT];
    unsigned long long total = 0;
    pkv_cuda *gpu = NULL;
    char gpu_why[256] = "";
    memset(t, 0, sizeof t);
    memset(out, 0, sizeof out);
    memset(&fill, 0, sizeof fill);
    if (pkv_cuda_open(0, &gpu) != PKV_OK) {
        snprintf(gpu_why, sizeof gpu_why, "%s", pkv_last_error());
        gpu = NULL;
    }
    printf("%-18s %8s %14s %11s %9s\n", "op (reference)", "cases", "bytes", "mismatches", "time");
    check_fill_slots(quick, &fill);
    row("fill_slots", fill.cases, fill.bytes, fill.mismatches, fill.secs);
    total += fill.mismatches;
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
        clock_t c0 = clock();
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 6; b++)
                for (size_t c = 0; c < 3; c++)
                    for (size_t d = 0; d < (quick ? 2u : 4u); d++) {
                        pkvi_case k;
                        make_case(&k, nkvs[a], hds[b], bss[c], toks[d]);
                        pkvi_case_run(op, &k, gpu, &out[op]);
                        free_case(&k);
                        t[op].cases++;
                    }
        t[op].secs = (double)(clock() - c0) / CLOCKS_PER_SEC - out[op].gpu_secs;
        row(pkv_op_name((pkv_op)op), t[op].cases, out[op].ref_bytes, out[op].ref_mismatches,
            t[op].secs);
        total += out[op].ref_mismatches;
    }
    if (gpu) {
        printf("%-18s %8s %14s %11s %9s\n", "op (CUDA)", "cases", "bytes", "mismatches", "time");
        printf("  device: %s\n", pkv_cuda_describe(gpu));
        for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
            row(pkv_op_name((pkv_op)op), t[op].cases, out[op].gpu_bytes, out[op].gpu_mismatches,
                out[op].gpu_secs);
            total += out[op].gpu_mismatches;
        }
        pkv_cuda_close(gpu);
    } else {
        printf("CUDA backend: not checked (%s)\n", gpu_why);
    }
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++)
        if (out[op].what[0]) printf("first mismatch: %s\n", out[op].what);
    printf("%s: %llu mismatches\n", total ? "FAIL" : "PASS", total);
    return total ? 1 : 0;
}
