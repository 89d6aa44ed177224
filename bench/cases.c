/* pkv bench's cases: buffers for one (op, geometry, tokens), the op's launch through the public
 * launchers, and the baselines (the plain write, the unfused chain) with the same parameters. */
#include "config.h"
#include "bench_case.h"
#include "../lib/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pkv_cuda *pkvi_bench_gpu;

void pkvi_bench_die(const char *what)
{
    fprintf(stderr, "pkv bench: %s: %s\n", what, pkv_last_error());
    exit(3);
}

void pkvi_bench_cu_check(pkvi_CUresult r, const char *what)
{
    if (r) {
        pkvi_cuda_fail(r, what);
        pkvi_bench_die(what);
    }
}

uint64_t pkvi_bench_alloc(size_t bytes, unsigned char fill)
{
    uint64_t p;
    if (pkv_cuda_alloc(pkvi_bench_gpu, bytes, &p) || pkv_cuda_fill(pkvi_bench_gpu, p, fill, bytes))
        pkvi_bench_die("alloc");
    return p;
}

int pkvi_bench_is_fused(int op)
{
    return op >= PKV_OP_FUSED_BF16;
}

size_t pkvi_bench_sets(size_t bytes)
{
    size_t n = 1 + 2 * (size_t)L2_BYTES / (bytes ? bytes : 1);
    return n > 64 ? 64 : n;
}

double pkvi_bench_op_bytes(int op, uint64_t T, uint64_t row, uint32_t hd)
{
    double rw = (double)T * row;
    switch (op) {
    case PKV_OP_WRITE_BF16:
        return rw * 2 * 2 * 2 + T * 8.0;
    case PKV_OP_WRITE_V_BF16:
        return rw * 2 * 2 + T * 8.0;
    case PKV_OP_WRITE_FP8:
        return rw * 2 * (2 + 1) + T * 8.0;
    case PKV_OP_FUSED_BF16:
        return rw * (2 + 2) + T * 12.0 + hd * 2.0;
    case PKV_OP_FUSED_MROPE_BF16:
        return rw * (2 + 2) + T * 20.0 + hd * 2.0;
    case PKV_OP_FUSED_FP8_K:
        return rw * (2 + 1) + T * 12.0 + hd * 2.0;
    default:
        return rw * 2 * (2 + 1) + T * 12.0 + hd * 2.0;
    }
}

/* MRoPE's three streams, each its own array as the rows of an engine's [3][T] positions tensor
 * are. Text tokens: all three PKVI_BENCH_POS0 + t (so the kernels read one table row a token,
 * but three positions). An image of T patches after PKVI_BENCH_POS0 text tokens (vision), as
 * Qwen2-VL numbers them: temporal PKVI_BENCH_POS0 for all, height and width PKVI_BENCH_POS0 plus
 * the patch's row and column in a square grid. The three differ for every patch but the first,
 * so the kernels read three rows a token, from few rows in all. */
static void mrope_positions(bench_case *b, uint32_t *pos)
{
    uint64_t T = b->tokens, side = 1;
    while (side * side < T)
        side++;
    for (int st = 0; st < 3; st++) {
        for (uint64_t t = 0; t < T; t++)
            pos[t] = PKVI_BENCH_POS0 + (uint32_t)(!b->vision ? t
                                                  : st == 0  ? 0
                                                  : st == 1  ? t / side
                                                             : t % side);
        for (size_t i = 0; i < b->nsets; i++) {
            b->s[i].mpos[st] = pkvi_bench_alloc(T * 4, 0);
            if (pkv_cuda_upload(pkvi_bench_gpu, b->s[i].mpos[st], pos, T * 4))
                pkvi_bench_die("upload");
        }
    }
}

void pkvi_bench_setup(bench_case *b)
{
    uint64_t row = (uint64_t)b->nkv * b->hd, T = b->tokens;
    size_t per_set = (size_t)(pkvi_bench_op_bytes(b->op, T, row, b->hd) + 1);
    uint32_t bs = 16;
    int64_t *slots = malloc(T * 8);
    uint32_t *pos = malloc(T * 4);
    if (!slots || !pos) pkvi_bench_die("malloc");
    b->nsets = pkvi_bench_sets(per_set);
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
        pos[t] = (uint32_t)(PKVI_BENCH_POS0 + t);
    }
    b->pool_bytes = b->f.cache.num_blocks * bs * row * 2;
    for (size_t i = 0; i < b->nsets; i++) {
        set *s = &b->s[i];
        s->k = pkvi_bench_alloc(T * row * 2, 0x3c); /* BF16 0x3c3c: about 0.0115 */
        s->v = pkvi_bench_alloc(T * row * 2, 0x3d);
        s->w = pkvi_bench_alloc(b->hd * 2, 0);
        s->pos = pkvi_bench_alloc(T * 4, 0);
        s->slots = pkvi_bench_alloc(T * 8, 0);
        s->kc = pkvi_bench_alloc(b->pool_bytes, 0xa5);
        s->vc = pkvi_bench_alloc(b->pool_bytes, 0xa5);
        if (pkv_cuda_upload(pkvi_bench_gpu, s->slots, slots, T * 8) ||
            pkv_cuda_upload(pkvi_bench_gpu, s->pos, pos, T * 4))
            pkvi_bench_die("upload");
    }
    if (b->op == PKV_OP_FUSED_MROPE_BF16) mrope_positions(b, pos);
    b->scratch = pkvi_bench_is_fused(b->op) ? pkvi_bench_alloc(T * row * 4, 0) : 0;
    b->rb = b->read_back ? pkvi_bench_alloc(T * row * 4, 0) : 0;
    free(slots);
    free(pos);
}

void pkvi_bench_teardown(bench_case *b)
{
    for (size_t i = 0; i < b->nsets; i++) {
        set *s = &b->s[i];
        uint64_t *all[] = {&s->k,  &s->v,  &s->w,       &s->pos,     &s->slots,
                           &s->kc, &s->vc, &s->mpos[0], &s->mpos[1], &s->mpos[2]};
        for (size_t j = 0; j < sizeof all / sizeof *all; j++)
            if (*all[j]) pkv_cuda_free(pkvi_bench_gpu, *all[j]);
    }
    if (b->scratch) pkv_cuda_free(pkvi_bench_gpu, b->scratch);
    if (b->rb) pkv_cuda_free(pkvi_bench_gpu, b->rb);
}

static void launch2(int k, uint64_t grid, unsigned block, void *params, uint64_t scratch,
                    void *stream)
{
    void *args[2] = {params, &scratch};
    if (pkvi_cuda_enter(pkvi_bench_gpu)) pkvi_bench_die("context");
    pkvi_bench_cu_check(
        pkvi_cuda_launch_args(pkvi_bench_gpu, k, (unsigned)grid, 1, block, args, stream),
        "cuLaunchKernel");
    pkvi_cuda_leave(pkvi_bench_gpu);
}

static uint64_t stream_pos(const set *s, int st)
{
    return s->mpos[st] ? s->mpos[st] : s->pos;
}

static pkv_status run_op(const bench_case *b, const set *s, void *st)
{
    const pkv_write_desc *w = &b->wd;
    const pkv_fused_desc *f = &b->f;
    switch (b->op) {
    case PKV_OP_WRITE_BF16:
        return pkv_cuda_write_bf16(pkvi_bench_gpu, w, s->k, s->v, s->slots, s->kc, s->vc, 0, st);
    case PKV_OP_WRITE_V_BF16:
        return pkv_cuda_write_v_bf16(pkvi_bench_gpu, w, s->v, s->slots, s->vc, 0, st);
    case PKV_OP_WRITE_FP8:
        return pkv_cuda_write_fp8(pkvi_bench_gpu, w, s->k, s->v, s->slots, s->kc, s->vc, 0, st);
    case PKV_OP_FUSED_BF16:
        return pkv_cuda_fused_bf16(pkvi_bench_gpu, f, s->k, s->w, s->pos, s->slots, s->kc, 0, st);
    case PKV_OP_FUSED_MROPE_BF16:
        return pkv_cuda_fused_mrope_bf16(pkvi_bench_gpu, f, s->k, s->w, stream_pos(s, 0),
                                         stream_pos(s, 1), stream_pos(s, 2), s->slots, s->kc, 0,
                                         st);
    case PKV_OP_FUSED_FP8_K:
        return pkv_cuda_fused_fp8_k(pkvi_bench_gpu, f, s->k, s->w, s->pos, s->slots, s->kc, 0, st);
    default:
        return pkv_cuda_fused_fp8_kv(pkvi_bench_gpu, f, s->k, s->v, s->w, s->pos, s->slots, s->kc,
                                     s->vc, 0, st);
    }
}

/* The fused launcher's parameter block and plan for set s, as the op's launch has them. */
static void fused_plan(const bench_case *b, const set *s, pkvk_fused_params *p, pkvi_plan *plan)
{
    const uint64_t pos[3] = {stream_pos(s, 0), stream_pos(s, 1), stream_pos(s, 2)};
    if (pkvi_cuda_fused_plan(pkvi_bench_gpu, (pkv_op)b->op, &b->f, s->k, s->v, s->w, pos, s->slots,
                             s->kc, b->op == PKV_OP_FUSED_FP8_KV ? s->vc : 0, 0, p, plan))
        pkvi_bench_die("fused plan");
}

/* The baseline with the op's own parameter block: the plain write, or the unfused chain. */
static void run_baseline(const bench_case *b, const set *s, void *st)
{
    uint64_t T = b->tokens, row = (uint64_t)b->nkv * b->hd;
    pkvi_plan plan;
    if (!pkvi_bench_is_fused(b->op)) {
        pkvk_write32_params p;
        if (pkvi_cuda_write_plan(pkvi_bench_gpu, (pkv_op)b->op, &b->wd,
                                 b->op == PKV_OP_WRITE_V_BF16 ? 0 : s->k, s->v, s->slots,
                                 b->op == PKV_OP_WRITE_V_BF16 ? 0 : s->kc, s->vc, 0, &p, &plan))
            pkvi_bench_die("write plan");
        if (pkvi_cuda_launch(pkvi_bench_gpu, PKVI_K_NAIVE_WRITE, (unsigned)((T * row + 255) / 256),
                             1, 256, &p, st))
            pkvi_bench_die("naive write");
    } else {
        pkvk_fused_params p;
        fused_plan(b, s, &p, &plan);
        launch2(PKVI_K_CHAIN_NORM, T * b->nkv, (b->hd + 31u) / 32u * 32u, &p, b->scratch, st);
        launch2(PKVI_K_CHAIN_ROPE, (T * (b->f.rotary_dim / 2) + 255) / 256, 256, &p, b->scratch,
                st);
        launch2(PKVI_K_CHAIN_STORE, (T * row + 255) / 256, 256, &p, b->scratch, st);
    }
}

/* One warp, launched as the ops are (the hold plainly: it must not start before the work
 * ahead of it has finished). */
static void launch_one(int k, void **args, void *stream)
{
    if (pkvi_cuda_enter(pkvi_bench_gpu)) pkvi_bench_die("context");
    pkvi_bench_cu_check(k == PKVI_K_DELAY
                            ? pkvi_bench_gpu->cu->cuLaunchKernel(pkvi_bench_gpu->fn[k], 1, 1, 1, 32,
                                                                 1, 1, 0, stream, args, NULL)
                            : pkvi_cuda_launch_args(pkvi_bench_gpu, k, 1, 1, 32, args, stream),
                        "cuLaunchKernel");
    pkvi_cuda_leave(pkvi_bench_gpu);
}

/* The floor kernel on set s's slots and source, and for a fused op with the handle's table for
 * the call its first token's position and row (the fused launcher's plan says which table). */
static void run_floor(const bench_case *b, const set *s, void *st, uint64_t out)
{
    uint64_t src = b->op == PKV_OP_WRITE_V_BF16 ? s->v : s->k, pos = stream_pos(s, 0), table = 0;
    unsigned row_floats = 0;
    if (pkvi_bench_is_fused(b->op)) {
        pkvk_fused_params p;
        pkvi_plan plan;
        fused_plan(b, s, &p, &plan);
        if (p.cs_len > PKVI_BENCH_POS0) table = p.cs_table, row_floats = p.rotary_dim;
    }
    {
        uint64_t slots = s->slots;
        void *args[6] = {&slots, &src, &pos, &table, &row_floats, &out};
        launch_one(PKVI_K_FLOOR, args, st);
    }
}

void pkvi_bench_hold(void *st, unsigned long long ns)
{
    void *args[1] = {&ns};
    launch_one(PKVI_K_DELAY, args, st);
}

/* What attention does next in a prefill: read the cache rows the launch wrote (slots 0 .. T - 1,
 * the pools' first T rows), here by a device-to-device copy of them. */
static void read_back(const bench_case *b, const set *s, void *st)
{
    const int k_rows = b->op != PKV_OP_WRITE_V_BF16,
              v_rows = b->op <= PKV_OP_WRITE_FP8 || b->op == PKV_OP_FUSED_FP8_KV,
              fp8 = b->op == PKV_OP_WRITE_FP8 || b->op == PKV_OP_FUSED_FP8_K ||
                    b->op == PKV_OP_FUSED_FP8_KV;
    const size_t n = (size_t)b->tokens * b->nkv * b->hd * (fp8 ? 1u : 2u);
    pkvi_cuda_enter(pkvi_bench_gpu);
    if (k_rows)
        pkvi_bench_cu_check(pkvi_bench_gpu->cu->cuMemcpyDtoDAsync(b->rb, s->kc, n, st),
                            "cuMemcpyDtoDAsync");
    if (v_rows)
        pkvi_bench_cu_check(pkvi_bench_gpu->cu->cuMemcpyDtoDAsync(b->rb + n, s->vc, n, st),
                            "cuMemcpyDtoDAsync");
    pkvi_cuda_leave(pkvi_bench_gpu);
}

void pkvi_bench_run(int what, const bench_case *b, size_t k, void *st, uint64_t empty_out)
{
    if (what == RUN_OP && run_op(b, &b->s[k], st)) pkvi_bench_die("launch");
    if (what == RUN_BASELINE) run_baseline(b, &b->s[k], st);
    if (b->read_back && (what == RUN_OP || what == RUN_BASELINE)) read_back(b, &b->s[k], st);
    if (what == RUN_FLOOR) run_floor(b, &b->s[k], st, empty_out);
    if (what == RUN_EMPTY) {
        unsigned value = 0;
        void *args[2] = {&empty_out, &value};
        launch_one(PKVI_K_PROBE, args, st);
    }
}

/* All on the legacy default stream, which the fills and downloads synchronise with (a
 * non-blocking one would not). */
int pkvi_bench_baseline_agrees(const bench_case *b)
{
    size_t n = b->pool_bytes;
    unsigned char *a = malloc(2 * n), *c = malloc(2 * n);
    const set *s = &b->s[0];
    int same;
    if (!a || !c) pkvi_bench_die("malloc");
    for (int pass = 0; pass < 2; pass++) {
        unsigned char *out = pass ? c : a;
        if (pkv_cuda_fill(pkvi_bench_gpu, s->kc, 0xa5, n) ||
            pkv_cuda_fill(pkvi_bench_gpu, s->vc, 0xa5, n))
            pkvi_bench_die("fill");
        pkvi_bench_run(pass ? RUN_BASELINE : RUN_OP, b, 0, NULL, 0);
        if (pkv_cuda_synchronize(pkvi_bench_gpu, NULL) ||
            pkv_cuda_download(pkvi_bench_gpu, out, s->kc, n) ||
            pkv_cuda_download(pkvi_bench_gpu, out + n, s->vc, n))
            pkvi_bench_die("download");
    }
    same = memcmp(a, c, 2 * n) == 0;
    free(a);
    free(c);
    return same;
}
