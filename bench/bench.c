/* "pkv bench": times every op on the GPU with CUDA events and compares it with the
 * device-to-device copy bandwidth measured in the same run on the same byte count, and with an
 * empty kernel launched the same way. Input sets rotate so that large cases stream from HBM.
 *
 *   pkv bench [--quick] [--csv FILE]
 */
#include "config.h"
#include "bench.h"
#include "pagedkv.h"
#include "../lib/cuda_device.h"
#include "../lib/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS 40
#define L2_BYTES (64u << 20) /* rotate sets until at least twice this is touched */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    float median, p10, p90; /* microseconds */
} stats;

static stats summarise(float *us, int n)
{
    stats s;
    qsort(us, (size_t)n, sizeof *us, cmp_float);
    s.median = us[n / 2];
    s.p10 = us[n / 10];
    s.p90 = us[n * 9 / 10];
    return s;
}

typedef struct set {
    uint64_t k, v, w, pos, slots, kc, vc;
} set;

typedef struct bench_case {
    uint32_t nkv, hd, tokens;
    int op;
    size_t nsets;
    set s[64];
    pkv_fused_desc f;
    pkv_write_desc wd;
} bench_case;

static pkv_cuda *h;

static void die(const char *what)
{
    fprintf(stderr, "pkv bench: %s: %s\n", what, pkv_last_error());
    exit(3);
}

static uint64_t dalloc(size_t bytes, unsigned char fill)
{
    uint64_t p;
    if (pkv_cuda_alloc(h, bytes, &p) || pkv_cuda_fill(h, p, fill, bytes)) die("alloc");
    return p;
}

/* Minimal bytes: each input read once, each output written once. */
static double op_bytes(int op, uint64_t T, uint64_t row, uint32_t hd)
{
    double rw = (double)T * row;
    switch (op) {
    case PKV_OP_WRITE_BF16: return rw * 2 * 2 * 2 + T * 8.0;
    case PKV_OP_WRITE_V_BF16: return rw * 2 * 2 + T * 8.0;
    case PKV_OP_WRITE_FP8: return rw * 2 * (2 + 1) + T * 8.0;
    case PKV_OP_FUSED_BF16: return rw * (2 + 2) + T * 12.0 + hd * 2.0;
    case PKV_OP_FUSED_MROPE_BF16: return rw * (2 + 2) + T * 20.0 + hd * 2.0;
    case PKV_OP_FUSED_FP8_K: return rw * (2 + 1) + T * 12.0 + hd * 2.0;
    default: return rw * 2 * (2 + 1) + T * 12.0 + hd * 2.0;
    }
}

static void setup(bench_case *b)
{
    uint64_t row = (uint64_t)b->nkv * b->hd, T = b->tokens;
    size_t per_set = (size_t)(op_bytes(b->op, T, row, b->hd) + 1);
    uint32_t bs = 16;
    int64_t *slots = malloc(T * 8);
    uint32_t *pos = malloc(T * 4);
    if (!slots || !pos) die("malloc");
    b->nsets = 1 + 2 * L2_BYTES / per_set;
    if (b->nsets > 64) b->nsets = 64;
    memset(&b->f, 0, sizeof b->f);
    b->f.cache.num_kv_heads = b->nkv;
    b->f.cache.head_dim = b->hd;
    b->f.cache.block_size = bs;
    b->f.cache.num_blocks = (T + bs - 1) / bs;
    b->f.num_tokens = (uint32_t)T;
    b->f.rotary_dim = b->hd;
    b->f.theta = 1e6f;
    b->f.rms_eps = 1e-6f;
    b->f.k_scale = b->f.v_scale = 0.0117f;
    b->f.k_inv_scale = 1.0f / 0.0117f;
    memset(&b->wd, 0, sizeof b->wd);
    b->wd.cache = b->f.cache;
    b->wd.num_tokens = (uint32_t)T;
    b->wd.k_scale = b->wd.v_scale = 0.0117f;
    for (uint64_t t = 0; t < T; t++) {
        slots[t] = (int64_t)t; /* a contiguous prefill-like layout */
        pos[t] = (uint32_t)(1000 + t);
    }
    for (size_t i = 0; i < b->nsets; i++) {
        set *s = &b->s[i];
        size_t src = T * row * 2, pool = b->f.cache.num_blocks * bs * row * 2;
        s->k = dalloc(src, 0x3c); /* BF16 0x3c3c: about 0.0115 */
        s->v = dalloc(src, 0x3c);
        s->w = dalloc(b->hd * 2, 0);
        s->pos = dalloc(T * 4, 0);
        s->slots = dalloc(T * 8, 0);
        s->kc = dalloc(pool, 0xa5);
        s->vc = dalloc(pool, 0xa5);
        if (pkv_cuda_upload(h, s->slots, slots, T * 8) || pkv_cuda_upload(h, s->pos, pos, T * 4))
            die("upload");
    }
    free(slots);
    free(pos);
}

static void teardown(bench_case *b)
{
    for (size_t i = 0; i < b->nsets; i++) {
        set *s = &b->s[i];
        pkv_cuda_free(h, s->k);
        pkv_cuda_free(h, s->v);
        pkv_cuda_free(h, s->w);
        pkv_cuda_free(h, s->pos);
        pkv_cuda_free(h, s->slots);
        pkv_cuda_free(h, s->kc);
        pkv_cuda_free(h, s->vc);
    }
}

static pkv_status launch(const bench_case *b, const set *s)
{
    switch (b->op) {
    case PKV_OP_WRITE_BF16: return pkv_cuda_write_bf16(h, &b->wd, s->k, s->v, s->slots, s->kc, s->vc, 0, NULL);
    case PKV_OP_WRITE_V_BF16: return pkv_cuda_write_v_bf16(h, &b->wd, s->v, s->slots, s->vc, 0, NULL);
    case PKV_OP_WRITE_FP8: return pkv_cuda_write_fp8(h, &b->wd, s->k, s->v, s->slots, s->kc, s->vc, 0, NULL);
    case PKV_OP_FUSED_BF16: return pkv_cuda_fused_bf16(h, &b->f, s->k, s->w, s->pos, s->slots, s->kc, 0, NULL);
    case PKV_OP_FUSED_MROPE_BF16:
        return pkv_cuda_fused_mrope_bf16(h, &b->f, s->k, s->w, s->pos, s->pos, s->pos, s->slots, s->kc, 0, NULL);
    case PKV_OP_FUSED_FP8_K: return pkv_cuda_fused_fp8_k(h, &b->f, s->k, s->w, s->pos, s->slots, s->kc, 0, NULL);
    default: return pkv_cuda_fused_fp8_kv(h, &b->f, s->k, s->v, s->w, s->pos, s->slots, s->kc, s->vc, 0, NULL);
    }
}

/* Time ITERS runs of fn (after warm-up), each between two events. kind: 0 op, 1 copy of
 * `bytes` (src -> dst), 2 the empty kernel. */
static stats timed(int kind, const bench_case *b, uint64_t dst, uint64_t src, size_t bytes)
{
    const pkvi_cuda_api *cu = h->cu;
    pkvi_CUevent e0, e1;
    float us[ITERS];
    unsigned params[4] = {0};
    if (pkvi_cuda_enter(h)) die("context");
    cu->cuEventCreate(&e0, 0);
    cu->cuEventCreate(&e1, 0);
    pkvi_cuda_leave(h);
    for (int i = -5; i < ITERS; i++) {
        size_t k = (size_t)(i + 5) % (b ? b->nsets : 1);
        pkvi_cuda_enter(h);
        cu->cuEventRecord(e0, NULL);
        pkvi_cuda_leave(h);
        if (kind == 0 && launch(b, &b->s[k])) die("launch");
        if (kind == 1) {
            pkvi_cuda_enter(h);
            cu->cuMemcpyDtoD(dst, src, bytes);
            pkvi_cuda_leave(h);
        }
        if (kind == 2) {
            uint64_t out = dst;
            void *args[2] = {&out, &params[0]};
            pkvi_cuda_enter(h);
            cu->cuLaunchKernel(h->fn[PKVI_K_PROBE], 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
            pkvi_cuda_leave(h);
        }
        pkvi_cuda_enter(h);
        cu->cuEventRecord(e1, NULL);
        cu->cuEventSynchronize(e1);
        if (i >= 0) {
            float ms;
            cu->cuEventElapsedTime(&ms, e0, e1);
            us[i] = ms * 1000.0f;
        }
        pkvi_cuda_leave(h);
    }
    pkvi_cuda_enter(h);
    cu->cuEventDestroy(e0);
    cu->cuEventDestroy(e1);
    pkvi_cuda_leave(h);
    return summarise(us, ITERS);
}

/* Host cost of a launcher call before the launch (validation, argument packing and, for the
 * fused ops, the inv_freq table): zero-token calls, which do all of it and launch nothing,
 * timed on the CPU. */
static double host_overhead_us(int fused)
{
    pkv_fused_desc f;
    pkv_write_desc d;
    struct timespec t0, t1;
    int n = fused ? 2000 : 200000;
    memset(&d, 0, sizeof d);
    d.cache.num_kv_heads = 8;
    d.cache.head_dim = 128;
    d.cache.block_size = 16;
    d.cache.num_blocks = 1000;
    memset(&f, 0, sizeof f);
    f.cache = d.cache;
    f.rotary_dim = 128;
    f.theta = 1e6f;
    f.rms_eps = 1e-6f;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < n; i++)
        if (fused ? pkv_cuda_fused_bf16(h, &f, 0, 0, 0, 0, 256, 0, NULL)
                  : pkv_cuda_write_bf16(h, &d, 0, 0, 0, 256, 256, 0, NULL))
            die("host overhead");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n;
}

int pkvi_bench_main(int quick, const char *csv_path)
{
    static const uint32_t geo[][2] = {{8, 128}, {4, 256}, {1, 128}, {16, 64}};
    static const uint32_t toks[] = {1, 8, 64, 256, 2048, 16384, 65536};
    FILE *csv = NULL;
    uint64_t scratch_a, scratch_b;
    size_t scratch = (size_t)1 << 30;
    stats empty;
    if (pkv_cuda_open(0, &h) != PKV_OK) die("no GPU");
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "pkv bench: cannot write %s\n", csv_path);
        return 2;
    }
    scratch_a = dalloc(scratch, 0);
    scratch_b = dalloc(scratch, 0);
    empty = timed(2, NULL, scratch_a, 0, 0);
    printf("device: %s\nempty kernel: %.2f us (median of %d, event to event)\n",
           pkv_cuda_describe(h), empty.median, ITERS);
    printf("host overhead before the launch: write_bf16 %.3f us, fused_bf16 (rotary 128, "
           "inv_freq table) %.3f us\n", host_overhead_us(0), host_overhead_us(1));
    printf("%-17s %-7s %6s %9s %9s %9s %10s %8s %8s %7s\n", "op", "heads", "tokens", "us", "p10",
           "p90", "MB", "GB/s", "copy%", "xempty");
    if (csv) fprintf(csv, "op,num_kv_heads,head_dim,tokens,us_median,us_p10,us_p90,bytes,gbps,"
                          "copy_gbps,pct_of_copy,ratio_to_empty\n");
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++)
        for (size_t g = 0; g < 4; g++)
            for (size_t t = 0; t < 7; t++) {
                bench_case b;
                stats s, copy;
                double bytes, gbps, copy_gbps;
                if (quick && (t % 2 || g % 2)) continue;
                memset(&b, 0, sizeof b);
                b.op = op;
                b.nkv = geo[g][0];
                b.hd = geo[g][1];
                b.tokens = toks[t];
                setup(&b);
                s = timed(0, &b, 0, 0, 0);
                bytes = op_bytes(op, b.tokens, (uint64_t)b.nkv * b.hd, b.hd);
                /* the roofline: copying half the bytes moves them all (read + write) */
                copy = timed(1, NULL, scratch_b, scratch_a,
                             (size_t)(bytes / 2) < scratch ? (size_t)(bytes / 2) : scratch);
                gbps = bytes / (s.median * 1e3);
                copy_gbps = bytes / (copy.median * 1e3);
                printf("%-17s %2ux%-4u %6u %9.2f %9.2f %9.2f %10.3f %8.1f %7.1f%% %7.2f\n",
                       pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens, s.median, s.p10, s.p90,
                       bytes / 1e6, gbps, 100.0 * gbps / copy_gbps, s.median / empty.median);
                if (csv)
                    fprintf(csv, "%s,%u,%u,%u,%.3f,%.3f,%.3f,%.0f,%.1f,%.1f,%.1f,%.2f\n",
                            pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens, s.median, s.p10,
                            s.p90, bytes, gbps, copy_gbps, 100.0 * gbps / copy_gbps,
                            s.median / empty.median);
                teardown(&b);
            }
    pkv_cuda_free(h, scratch_a);
    pkv_cuda_free(h, scratch_b);
    pkv_cuda_close(h);
    if (csv) fclose(csv);
    return 0;
}
