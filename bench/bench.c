/* "pkv bench": times every op on the GPU with CUDA events, against the device-to-device copy
 * bandwidth measured in the same run on the same byte count, an empty kernel launched the same
 * way, and a baseline (the plain one-thread-per-element write, or the unfused norm -> rope ->
 * store chain), whose bytes must equal the op's. Input sets rotate so that large cases stream
 * from HBM. With --graph every launch is captured into a CUDA graph (one node per input set)
 * and the graph replays are timed, which is how engines run decode steps.
 *
 *   pkv bench [--quick] [--graph] [--op NAME] [--tokens N] [--csv FILE]
 */
#include "config.h"
#include "bench.h"
#include "pagedkv.h"
#include "../lib/cuda_plan.h"
#include "../lib/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS 40
#define L2_BYTES (64u << 20) /* rotate sets until at least twice this is touched */
#define SCRATCH_BYTES ((size_t)1 << 30) /* each of the copy's two buffers */

/* Input sets for a case moving `bytes`, or copies of `bytes`: enough to touch twice L2. */
static size_t n_copy_sets(size_t bytes)
{
    size_t n = 1 + 2 * (size_t)L2_BYTES / (bytes ? bytes : 1);
    return n > 64 ? 64 : n;
}

enum { RUN_OP, RUN_BASELINE, RUN_EMPTY, RUN_COPY };

typedef struct stats {
    float median, p10, p90; /* microseconds per launch (per op for the chain) */
} stats;

typedef struct set {
    uint64_t k, v, w, pos, slots, kc, vc;
} set;

typedef struct bench_case {
    uint32_t nkv, hd, tokens;
    int op;
    size_t nsets;
    set s[64];
    uint64_t scratch; /* the chain's intermediate */
    size_t pool_bytes;
    pkv_fused_desc f;
    pkv_write_desc wd;
} bench_case;

static pkv_cuda *h;
static uint64_t empty_out;

static void die(const char *what)
{
    fprintf(stderr, "pkv bench: %s: %s\n", what, pkv_last_error());
    exit(3);
}

static void cu_check(pkvi_CUresult r, const char *what)
{
    if (r) {
        pkvi_cuda_fail(r, what);
        die(what);
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static stats summarise(float *us, int n)
{
    stats s;
    qsort(us, (size_t)n, sizeof *us, cmp_float);
    s.median = us[n / 2];
    s.p10 = us[n / 10];
    s.p90 = us[n * 9 / 10];
    return s;
}

static uint64_t dalloc(size_t bytes, unsigned char fill)
{
    uint64_t p;
    if (pkv_cuda_alloc(h, bytes, &p) || pkv_cuda_fill(h, p, fill, bytes)) die("alloc");
    return p;
}

static int is_fused(int op) { return op >= PKV_OP_FUSED_BF16; }

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
    b->nsets = n_copy_sets(per_set);
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
    b->pool_bytes = b->f.cache.num_blocks * bs * row * 2;
    for (size_t i = 0; i < b->nsets; i++) {
        set *s = &b->s[i];
        s->k = dalloc(T * row * 2, 0x3c); /* BF16 0x3c3c: about 0.0115 */
        s->v = dalloc(T * row * 2, 0x3d);
        s->w = dalloc(b->hd * 2, 0);
        s->pos = dalloc(T * 4, 0);
        s->slots = dalloc(T * 8, 0);
        s->kc = dalloc(b->pool_bytes, 0xa5);
        s->vc = dalloc(b->pool_bytes, 0xa5);
        if (pkv_cuda_upload(h, s->slots, slots, T * 8) || pkv_cuda_upload(h, s->pos, pos, T * 4))
            die("upload");
    }
    b->scratch = is_fused(b->op) ? dalloc(T * row * 4, 0) : 0;
    free(slots);
    free(pos);
}

static void teardown(bench_case *b)
{
    for (size_t i = 0; i < b->nsets; i++) {
        set *s = &b->s[i];
        uint64_t *all[] = {&s->k, &s->v, &s->w, &s->pos, &s->slots, &s->kc, &s->vc};
        for (size_t j = 0; j < sizeof all / sizeof *all; j++) pkv_cuda_free(h, *all[j]);
    }
    if (b->scratch) pkv_cuda_free(h, b->scratch);
}

static void launch2(int k, uint64_t grid, unsigned block, void *params, uint64_t scratch,
                    void *stream)
{
    void *args[2] = {params, &scratch};
    if (pkvi_cuda_enter(h)) die("context");
    cu_check(h->cu->cuLaunchKernel(h->fn[k], (unsigned)grid, 1, 1, block, 1, 1, 0, stream, args,
                                   NULL),
             "cuLaunchKernel");
    pkvi_cuda_leave(h);
}

static pkv_status run_op(const bench_case *b, const set *s, void *st)
{
    const pkv_write_desc *w = &b->wd;
    const pkv_fused_desc *f = &b->f;
    switch (b->op) {
    case PKV_OP_WRITE_BF16: return pkv_cuda_write_bf16(h, w, s->k, s->v, s->slots, s->kc, s->vc, 0, st);
    case PKV_OP_WRITE_V_BF16: return pkv_cuda_write_v_bf16(h, w, s->v, s->slots, s->vc, 0, st);
    case PKV_OP_WRITE_FP8: return pkv_cuda_write_fp8(h, w, s->k, s->v, s->slots, s->kc, s->vc, 0, st);
    case PKV_OP_FUSED_BF16: return pkv_cuda_fused_bf16(h, f, s->k, s->w, s->pos, s->slots, s->kc, 0, st);
    case PKV_OP_FUSED_MROPE_BF16:
        return pkv_cuda_fused_mrope_bf16(h, f, s->k, s->w, s->pos, s->pos, s->pos, s->slots, s->kc, 0, st);
    case PKV_OP_FUSED_FP8_K: return pkv_cuda_fused_fp8_k(h, f, s->k, s->w, s->pos, s->slots, s->kc, 0, st);
    default: return pkv_cuda_fused_fp8_kv(h, f, s->k, s->v, s->w, s->pos, s->slots, s->kc, s->vc, 0, st);
    }
}

/* The baseline with the op's own parameter block: the plain write, or the unfused chain. */
static void run_baseline(const bench_case *b, const set *s, void *st)
{
    uint64_t T = b->tokens, row = (uint64_t)b->nkv * b->hd;
    pkvi_plan plan;
    if (!is_fused(b->op)) {
        pkvk_write_params p;
        if (pkvi_cuda_write_plan(h, (pkv_op)b->op, &b->wd, b->op == PKV_OP_WRITE_V_BF16 ? 0 : s->k,
                                 s->v, s->slots, b->op == PKV_OP_WRITE_V_BF16 ? 0 : s->kc, s->vc,
                                 0, &p, &plan))
            die("write plan");
        if (pkvi_cuda_launch(h, PKVI_K_NAIVE_WRITE, (unsigned)((T * row + 255) / 256), 1, 256, &p, st))
            die("naive write");
    } else {
        pkvk_fused_params p;
        const uint64_t pos[3] = {s->pos, s->pos, s->pos};
        if (pkvi_cuda_fused_plan(h, (pkv_op)b->op, &b->f, s->k, s->v, s->w, pos, s->slots, s->kc,
                                 b->op == PKV_OP_FUSED_FP8_KV ? s->vc : 0, 0, &p, &plan))
            die("fused plan");
        launch2(PKVI_K_CHAIN_NORM, T * b->nkv, (b->hd + 31u) / 32u * 32u, &p, b->scratch, st);
        launch2(PKVI_K_CHAIN_ROPE, (T * (b->f.rotary_dim / 2) + 255) / 256, 256, &p, b->scratch, st);
        launch2(PKVI_K_CHAIN_STORE, (T * row + 255) / 256, 256, &p, b->scratch, st);
    }
}

static void run(int what, const bench_case *b, size_t k, void *st)
{
    if (what == RUN_OP && run_op(b, &b->s[k], st)) die("launch");
    if (what == RUN_BASELINE) run_baseline(b, &b->s[k], st);
    if (what == RUN_EMPTY) {
        unsigned value = 0;
        void *args[2] = {&empty_out, &value};
        if (pkvi_cuda_enter(h)) die("context");
        cu_check(h->cu->cuLaunchKernel(h->fn[PKVI_K_PROBE], 1, 1, 1, 32, 1, 1, 0, st, args, NULL),
                 "cuLaunchKernel");
        pkvi_cuda_leave(h);
    }
}

/* Event-to-event times of ITERS launches (after warm-up), or with graph of ITERS replays of
 * a graph holding one launch per input set, divided by the launches. copy_bytes: time a
 * device-to-device copy instead. */
static stats timed(int what, const bench_case *b, int graph, void *st, uint64_t dst,
                   uint64_t src, size_t copy_bytes)
{
    const pkvi_cuda_api *cu = h->cu;
    pkvi_CUevent e0, e1;
    pkvi_CUgraph g = NULL;
    pkvi_CUgraphExec ge = NULL;
    size_t n = b->nsets;
    float us[ITERS];
    if (graph && !copy_bytes) {
        if (pkvi_cuda_enter(h)) die("context");
        cu_check(cu->cuStreamBeginCapture(st, 0), "cuStreamBeginCapture");
        pkvi_cuda_leave(h);
        for (size_t k = 0; k < n; k++) run(what, b, k, st);
        pkvi_cuda_enter(h);
        cu_check(cu->cuStreamEndCapture(st, &g), "cuStreamEndCapture");
        cu_check(cu->cuGraphInstantiateWithFlags(&ge, g, 0), "cuGraphInstantiate");
        pkvi_cuda_leave(h);
    }
    pkvi_cuda_enter(h);
    cu_check(cu->cuEventCreate(&e0, 0), "cuEventCreate");
    cu_check(cu->cuEventCreate(&e1, 0), "cuEventCreate");
    pkvi_cuda_leave(h);
    for (int i = -5; i < ITERS; i++) {
        /* copies rotate through the scratch buffers like the ops through their sets, so that
         * both stream from HBM rather than L2 */
        size_t span = (copy_bytes + 255) / 256 * 256, nspan = SCRATCH_BYTES / (span ? span : 1);
        size_t off = span * ((size_t)(i + 5) % (nspan < n_copy_sets(copy_bytes) ? nspan : n_copy_sets(copy_bytes)));
        pkvi_cuda_enter(h);
        cu->cuEventRecord(e0, st);
        if (copy_bytes) cu_check(cu->cuMemcpyDtoD(dst + off, src + off, copy_bytes), "cuMemcpyDtoD");
        if (ge) cu_check(cu->cuGraphLaunch(ge, st), "cuGraphLaunch");
        pkvi_cuda_leave(h);
        if (!copy_bytes && !ge) run(what, b, (size_t)(i + 5) % n, st);
        pkvi_cuda_enter(h);
        cu->cuEventRecord(e1, st);
        cu_check(cu->cuEventSynchronize(e1), "cuEventSynchronize");
        if (i >= 0) {
            float ms;
            cu->cuEventElapsedTime(&ms, e0, e1);
            us[i] = ms * 1000.0f / (float)(ge ? n : 1);
        }
        pkvi_cuda_leave(h);
    }
    pkvi_cuda_enter(h);
    cu->cuEventDestroy(e0);
    cu->cuEventDestroy(e1);
    if (ge) cu->cuGraphExecDestroy(ge);
    if (g) cu->cuGraphDestroy(g);
    pkvi_cuda_leave(h);
    return summarise(us, ITERS);
}

/* 1 when the baseline writes the op's bytes into set 0's pools. All on the legacy default
 * stream, which the fills and downloads synchronise with (a non-blocking one would not). */
static int baseline_agrees(const bench_case *b)
{
    size_t n = b->pool_bytes;
    unsigned char *a = malloc(2 * n), *c = malloc(2 * n);
    const set *s = &b->s[0];
    int same;
    if (!a || !c) die("malloc");
    for (int pass = 0; pass < 2; pass++) {
        unsigned char *out = pass ? c : a;
        if (pkv_cuda_fill(h, s->kc, 0xa5, n) || pkv_cuda_fill(h, s->vc, 0xa5, n)) die("fill");
        run(pass ? RUN_BASELINE : RUN_OP, b, 0, NULL);
        if (pkv_cuda_synchronize(h, NULL) || pkv_cuda_download(h, out, s->kc, n) ||
            pkv_cuda_download(h, out + n, s->vc, n))
            die("download");
    }
    same = memcmp(a, c, 2 * n) == 0;
    free(a);
    free(c);
    return same;
}

/* Host cost of a launcher call before the launch (validation, argument packing and, for the
 * fused ops, the inv_freq table): zero-token calls, which do all of it and launch nothing,
 * timed on the CPU. */
static double host_overhead_us(int fused)
{
    pkv_fused_desc f;
    pkv_write_desc d;
    struct timespec t0, t1;
    int n = fused ? 20000 : 200000;
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

int pkvi_bench_main(const pkvi_bench_opts *o)
{
    static const uint32_t geo[][2] = {{8, 128}, {4, 256}, {1, 128}, {16, 64}};
    static const uint32_t toks[] = {1, 8, 64, 256, 2048, 16384, 65536};
    FILE *csv = NULL;
    uint64_t scratch_a, scratch_b;
    size_t scratch = SCRATCH_BYTES;
    pkvi_CUstream st = NULL;
    int disagree = 0;
    if (pkv_cuda_open(0, &h) != PKV_OK) die("no GPU");
    if (o->csv_path && !(csv = fopen(o->csv_path, "w"))) {
        fprintf(stderr, "pkv bench: cannot write %s\n", o->csv_path);
        return 2;
    }
    if (o->graph) { /* capture needs a stream of its own */
        pkvi_cuda_enter(h);
        cu_check(h->cu->cuStreamCreate(&st, 1 /* non-blocking */), "cuStreamCreate");
        pkvi_cuda_leave(h);
    }
    scratch_a = dalloc(scratch, 0);
    scratch_b = dalloc(scratch, 0);
    empty_out = scratch_a;
    printf("device: %s\nmode: %s; medians of %d, event to event\n", pkv_cuda_describe(h),
           o->graph ? "CUDA graph replays (per launch)" : "single launches", ITERS);
    printf("host overhead before the launch: write_bf16 %.3f us, fused_bf16 (rotary 128, "
           "inv_freq table) %.3f us\n", host_overhead_us(0), host_overhead_us(1));
    printf("%-17s %-7s %6s %9s %9s %9s %9s %8s %7s %7s %9s %6s %6s\n", "op", "heads", "tokens", "us",
           "p10", "p90", "MB", "GB/s", "copy%", "xempty", "base_us", "xbase", "rope%");
    if (csv) fprintf(csv, "mode,op,num_kv_heads,head_dim,tokens,us_median,us_p10,us_p90,bytes,"
                          "gbps,copy_gbps,pct_of_copy,empty_us,ratio_to_empty,baseline,"
                          "baseline_us,speedup_over_baseline,no_rope_us,rope_share_pct\n");
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++)
        for (size_t gi = 0; gi < 4; gi++)
            for (size_t t = 0; t < 7; t++) {
                bench_case b;
                stats s, copy, empty, base, norope = {0, 0, 0};
                double bytes, gbps, copy_gbps, rope_pct;
                if (o->quick && (t % 2 || gi % 2)) continue;
                if (o->only_op && strcmp(o->only_op, pkv_op_name((pkv_op)op)) != 0) continue;
                if (o->only_tokens && o->only_tokens != toks[t]) continue;
                memset(&b, 0, sizeof b);
                b.op = op;
                b.nkv = geo[gi][0];
                b.hd = geo[gi][1];
                b.tokens = toks[t];
                setup(&b);
                s = timed(RUN_OP, &b, o->graph, st, 0, 0, 0);
                base = timed(RUN_BASELINE, &b, o->graph, st, 0, 0, 0);
                if (is_fused(op)) { /* the same without RoPE: what sin/cos and rotation cost */
                    b.f.rotary_dim = 0;
                    norope = timed(RUN_OP, &b, o->graph, st, 0, 0, 0);
                    b.f.rotary_dim = b.hd;
                }
                empty = timed(RUN_EMPTY, &b, o->graph, st, 0, 0, 0);
                bytes = op_bytes(op, b.tokens, (uint64_t)b.nkv * b.hd, b.hd);
                /* the roofline: copying half the bytes moves them all (read + write) */
                copy = timed(RUN_COPY, &b, 0, NULL, scratch_b, scratch_a,
                             (size_t)(bytes / 2) < scratch ? (size_t)(bytes / 2) : scratch);
                gbps = bytes / (s.median * 1e3);
                copy_gbps = bytes / (copy.median * 1e3);
                rope_pct = is_fused(op) ? 100.0 * (1.0 - norope.median / s.median) : 0.0;
                printf("%-17s %2ux%-4u %6u %9.2f %9.2f %9.2f %9.3f %8.1f %6.1f%% %7.2f %9.2f %6.2f "
                       "%5.1f%%\n",
                       pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens, s.median, s.p10, s.p90,
                       bytes / 1e6, gbps, 100.0 * gbps / copy_gbps, s.median / empty.median,
                       base.median, base.median / s.median, rope_pct);
                if (csv)
                    fprintf(csv, "%s,%s,%u,%u,%u,%.3f,%.3f,%.3f,%.0f,%.1f,%.1f,%.1f,%.3f,%.3f,%s,"
                                 "%.3f,%.3f,%.3f,%.1f\n",
                            o->graph ? "graph" : "launch", pkv_op_name((pkv_op)op), b.nkv, b.hd,
                            b.tokens, s.median, s.p10, s.p90, bytes, gbps, copy_gbps,
                            100.0 * gbps / copy_gbps, empty.median, s.median / empty.median,
                            is_fused(op) ? "unfused_chain" : "one_thread_per_element",
                            base.median, base.median / s.median, norope.median, rope_pct);
                if (!baseline_agrees(&b)) {
                    fprintf(stderr, "pkv bench: %s %ux%u %u tokens: the baseline's bytes differ\n",
                            pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens);
                    disagree = 1;
                }
                teardown(&b);
            }
    pkv_cuda_free(h, scratch_a);
    pkv_cuda_free(h, scratch_b);
    if (st) {
        pkvi_cuda_enter(h);
        h->cu->cuStreamDestroy(st);
        pkvi_cuda_leave(h);
    }
    pkv_cuda_close(h);
    if (csv) fclose(csv);
    return disagree ? 3 : 0;
}
