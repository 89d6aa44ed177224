/* "pkv bench": times every op on the GPU with CUDA events, against the device-to-device copy
 * bandwidth measured in the same run on the same byte count, an empty kernel launched the same
 * way, a floor kernel (the loads every launch of the op waits for: a lower bound), and a
 * baseline (the plain one-thread-per-element write, or the unfused norm -> rope -> store chain),
 * whose bytes must equal the op's. Input sets rotate so that large cases stream
 * from HBM. Each launch is queued behind a short spin kernel, so that its events time the
 * GPU, not the host's submission. With --graph every launch is captured into a CUDA graph (the
 * input sets in turn, at least 16 nodes) and the graph replays are timed, which is how engines
 * run decode steps; the copy too (the buffer offsets in turn).
 *
 *   pkv bench [--quick] [--graph] [--rope-table] [--op NAME] [--tokens N] [--heads N]
 *             [--runs N] [--read-back] [--cold-l2] [--csv FILE]
 *
 * With --runs N each row's timings (op, baseline, empty, floor, copy) are taken in N rounds,
 * one after another, and each figure is the median (p10, p90) of all N x 40 launches: on the
 * H200 the copy's rate at one byte count has moved by up to a quarter from one run to the next
 * (doc/PERFORMANCE-HISTORY.md), and rounds sample the op and its copy over the same stretch of
 * time.
 *
 * With --rope-table the handle gets a cos/sin table (pkv_cuda_rope_table) covering every
 * position the cases use, before each fused case: the fused ops and the chain's RoPE kernel
 * then read cos and sin instead of computing them (the bytes are the same).
 *
 * The op alone, launched again and again, is not what an engine runs: there attention reads the
 * rows the call wrote, and a layer's GEMMs stream their weights through L2 between its calls.
 * With --read-back each launch of the op (and of its baseline) is followed, inside the timing, by
 * a device-to-device copy of the cache rows it wrote (the figures are the call's and its
 * reader's); with --cold-l2 (single launches) each timed launch of anything is preceded, outside
 * the timing, by a copy of COLD_BYTES that clears L2. They show what L2 cache hints cost or earn
 * a caller (doc/PERFORMANCE-HISTORY.md, thirty-fourth session).
 */
#include "config.h"
#include "bench.h"
#include "pagedkv.h"
#include "bench_case.h"
#include "../lib/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS 40
#define GRAPH_NODES 16                 /* at least, a graph (timed) */
#define COLD_BYTES ((size_t)128 << 20) /* copied (read and written) to clear L2: over 4 x L2 */

typedef struct stats {
    float median, p10, p90; /* microseconds per launch (per op for the chain) */
} stats;

/* ITERS samples a round, for every round of a row */
typedef struct samples {
    float us[PKVI_BENCH_MAX_RUNS * ITERS];
} samples;

static uint64_t empty_out;
/* --cold-l2: 2 x COLD_BYTES, else 0. A buffer of its own, not the copies' scratch: the clearing
 * copy leaves its last lines in L2, which the timed copy would then hit */
static uint64_t cold_buf;

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

/* Event-to-event times of ITERS launches (after warm-up), or with graph of ITERS replays of
 * a graph of launches over the input sets, divided by the launches, into us[0 .. ITERS).
 * Each launch (or replay) is queued behind pkvk_delay, which holds the stream until the host
 * has queued the launch and both events: otherwise the first event completes while the host is
 * still submitting, and the time between the events is partly the host's (on the H200 3-5 us
 * a single launch: the op and its copy carried it before the twenty-fourth session). If the first
 * event has completed by the time the second is queued, the hold was too short: it is doubled and
 * the launch timed again. A graph holds at least GRAPH_NODES launches (the sets, or the copy's
 * offsets, in turn): on the H200 a replay cost about 2 us beyond its nodes, which a graph of one
 * node (the largest cases have one set) carried whole, and the copy's graph, of twice the offsets,
 * half of. copy_bytes: time a device-to-device copy instead, the same way: with graph, a graph of
 * copies (copies launched one by one pay a launch cost that graph replays of the op do not,
 * and made copy% 250-600% at one token). On the H200 a copy of a size that is not a multiple
 * of 4 KiB ran at 2.5-2.8 TB/s where a multiple ran at 3.6-4.2 (doc/PERFORMANCE.md), so each
 * copies copy_bytes rounded up to 4 KiB: a few bytes more than the op's half (under 0.13% from
 * 16,384 tokens; at decode sizes a copy of 4 KiB takes the time of a smaller one). */
static void timed(int what, const bench_case *b, int graph, void *st, uint64_t dst, uint64_t src,
                  size_t copy_bytes, float *us)
{
    static unsigned long long hold_ns = 20000;
    const pkvi_cuda_api *cu = pkvi_bench_gpu->cu;
    pkvi_CUevent e0, e1;
    pkvi_CUgraph g = NULL;
    pkvi_CUgraphExec ge = NULL;
    size_t n = b->nsets, sets;
    /* copies rotate through the scratch buffers like the ops through their sets, so that both
     * stream from HBM rather than L2 */
    size_t span = (copy_bytes + 4095) / 4096 * 4096, copies = pkvi_bench_sets(copy_bytes);
    if (span && SCRATCH_BYTES / span < copies) copies = SCRATCH_BYTES / span;
    if (graph && copy_bytes) n = copies;
    sets = n;
    if (graph) n = (GRAPH_NODES + sets - 1) / sets * sets;
    if (graph) {
        if (pkvi_cuda_enter(pkvi_bench_gpu)) pkvi_bench_die("context");
        pkvi_bench_cu_check(cu->cuStreamBeginCapture(st, 0), "cuStreamBeginCapture");
        if (copy_bytes)
            for (size_t k = 0; k < n; k++)
                pkvi_bench_cu_check(cu->cuMemcpyDtoDAsync(dst + span * (k % sets),
                                                          src + span * (k % sets), span, st),
                                    "cuMemcpyDtoDAsync");
        pkvi_cuda_leave(pkvi_bench_gpu);
        if (!copy_bytes)
            for (size_t k = 0; k < n; k++)
                pkvi_bench_run(what, b, k % sets, st, empty_out);
        pkvi_cuda_enter(pkvi_bench_gpu);
        pkvi_bench_cu_check(cu->cuStreamEndCapture(st, &g), "cuStreamEndCapture");
        pkvi_bench_cu_check(cu->cuGraphInstantiateWithFlags(&ge, g, 0), "cuGraphInstantiate");
        pkvi_cuda_leave(pkvi_bench_gpu);
    }
    pkvi_cuda_enter(pkvi_bench_gpu);
    pkvi_bench_cu_check(cu->cuEventCreate(&e0, 0), "cuEventCreate");
    pkvi_bench_cu_check(cu->cuEventCreate(&e1, 0), "cuEventCreate");
    pkvi_cuda_leave(pkvi_bench_gpu);
    for (int i = -5; i < ITERS;) {
        size_t off = span * ((size_t)(i + 5) % copies);
        pkvi_CUresult reached;
        if (cold_buf && !ge) {
            pkvi_cuda_enter(pkvi_bench_gpu);
            pkvi_bench_cu_check(
                cu->cuMemcpyDtoDAsync(cold_buf + COLD_BYTES, cold_buf, COLD_BYTES, st),
                "cuMemcpyDtoDAsync");
            pkvi_cuda_leave(pkvi_bench_gpu);
        }
        pkvi_bench_hold(st, hold_ns);
        pkvi_cuda_enter(pkvi_bench_gpu);
        cu->cuEventRecord(e0, st);
        if (copy_bytes && !ge)
            pkvi_bench_cu_check(cu->cuMemcpyDtoDAsync(dst + off, src + off, span, st),
                                "cuMemcpyDtoDAsync");
        if (ge) pkvi_bench_cu_check(cu->cuGraphLaunch(ge, st), "cuGraphLaunch");
        pkvi_cuda_leave(pkvi_bench_gpu);
        if (!copy_bytes && !ge) pkvi_bench_run(what, b, (size_t)(i + 5) % n, st, empty_out);
        pkvi_cuda_enter(pkvi_bench_gpu);
        cu->cuEventRecord(e1, st);
        reached = cu->cuEventQuery(e0);
        pkvi_bench_cu_check(cu->cuEventSynchronize(e1), "cuEventSynchronize");
        if (reached != PKVI_CUDA_ERROR_NOT_READY) {
            pkvi_bench_cu_check(reached, "cuEventQuery");
            pkvi_cuda_leave(pkvi_bench_gpu);
            if (hold_ns >= 100000000ull)
                pkvi_bench_die("the host took over 0.1 s to queue a launch");
            hold_ns *= 2;
            continue;
        }
        if (i >= 0) {
            float ms;
            cu->cuEventElapsedTime(&ms, e0, e1);
            us[i] = ms * 1000.0f / (float)(ge ? n : 1);
        }
        pkvi_cuda_leave(pkvi_bench_gpu);
        i++;
    }
    pkvi_cuda_enter(pkvi_bench_gpu);
    cu->cuEventDestroy(e0);
    cu->cuEventDestroy(e1);
    if (ge) cu->cuGraphExecDestroy(ge);
    if (g) cu->cuGraphDestroy(g);
    pkvi_cuda_leave(pkvi_bench_gpu);
}

/* The timings of one row, in `runs` rounds of ITERS launches each: the op, its baseline, the
 * op without RoPE (fused ops: what sin/cos and rotation cost), the empty and floor kernels,
 * and a device-to-device copy of copy_bytes */
enum { T_OP, T_BASE, T_NOROPE, T_EMPTY, T_FLOOR, T_COPY, T_COUNT };

static void time_row(bench_case *b, int graph, void *st, unsigned runs, uint64_t dst, uint64_t src,
                     size_t copy_bytes, stats out[T_COUNT])
{
    static samples sm[T_COUNT];
    const int fused = pkvi_bench_is_fused(b->op);
    for (unsigned r = 0; r < runs; r++) {
        const size_t at = (size_t)r * ITERS;
        timed(RUN_OP, b, graph, st, 0, 0, 0, sm[T_OP].us + at);
        timed(RUN_BASELINE, b, graph, st, 0, 0, 0, sm[T_BASE].us + at);
        if (fused) {
            b->f.rotary_dim = 0;
            timed(RUN_OP, b, graph, st, 0, 0, 0, sm[T_NOROPE].us + at);
            b->f.rotary_dim = b->hd;
        }
        timed(RUN_EMPTY, b, graph, st, 0, 0, 0, sm[T_EMPTY].us + at);
        timed(RUN_FLOOR, b, graph, st, 0, 0, 0, sm[T_FLOOR].us + at);
        timed(RUN_COPY, b, graph, st, dst, src, copy_bytes, sm[T_COPY].us + at);
    }
    for (int k = 0; k < T_COUNT; k++) {
        const stats none = {0, 0, 0};
        out[k] = k == T_NOROPE && !fused ? none : summarise(sm[k].us, (int)(runs * ITERS));
    }
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
        if (fused ? pkv_cuda_fused_bf16(pkvi_bench_gpu, &f, 0, 0, 0, 0, 256, 0, NULL)
                  : pkv_cuda_write_bf16(pkvi_bench_gpu, &d, 0, 0, 0, 256, 256, 0, NULL))
            pkvi_bench_die("host overhead");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n;
}

int pkvi_bench_main(const pkvi_bench_opts *o)
{
    static const uint32_t geo[][2] = {{8, 128}, {4, 256}, {1, 128}, {16, 64}};
    static const unsigned all_toks[] = {1, 8, 64, 256, 2048, 16384, 65536};
    /* --tokens N: that count alone, any count (sweeps between the table's sizes) */
    const unsigned *toks = o->only_tokens ? &o->only_tokens : all_toks;
    const size_t ntoks = o->only_tokens ? 1 : sizeof all_toks / sizeof *all_toks;
    const unsigned runs = o->runs ? o->runs : 1;
    FILE *csv = NULL;
    uint64_t scratch_a, scratch_b;
    size_t scratch = SCRATCH_BYTES;
    pkvi_CUstream st = NULL;
    int disagree = 0;
    char mode[48];
    if (runs > PKVI_BENCH_MAX_RUNS) {
        fprintf(stderr, "pkv bench: --runs takes 1 to %d\n", PKVI_BENCH_MAX_RUNS);
        return 2;
    }
    if (o->only_op) {
        int known = 0;
        for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++)
            known |= strcmp(o->only_op, pkv_op_name((pkv_op)op)) == 0;
        if (!known) {
            fprintf(stderr, "pkv bench: --op takes write_bf16 .. fused_fp8_kv, not '%s'\n",
                    o->only_op);
            return 2;
        }
    }
    if (o->only_heads) {
        int known = 0;
        for (size_t gi = 0; gi < sizeof geo / sizeof *geo; gi++)
            known |= geo[gi][0] == o->only_heads;
        if (!known) {
            fprintf(stderr, "pkv bench: --heads takes 8, 4, 1 or 16 (the geometries' KV heads)\n");
            return 2;
        }
    }
    if (o->cold_l2 && o->graph) {
        fprintf(stderr, "pkv bench: --cold-l2 times single launches (a graph has no gap)\n");
        return 2;
    }
    if (pkv_cuda_open(0, &pkvi_bench_gpu) != PKV_OK) pkvi_bench_die("no GPU");
    if (o->csv_path && !(csv = fopen(o->csv_path, "w"))) {
        fprintf(stderr, "pkv bench: cannot write %s\n", o->csv_path);
        return 2;
    }
    if (o->graph) { /* capture needs a stream of its own */
        pkvi_cuda_enter(pkvi_bench_gpu);
        pkvi_bench_cu_check(pkvi_bench_gpu->cu->cuStreamCreate(&st, 1 /* non-blocking */),
                            "cuStreamCreate");
        pkvi_cuda_leave(pkvi_bench_gpu);
    }
    scratch_a = pkvi_bench_alloc(scratch, 0);
    scratch_b = pkvi_bench_alloc(scratch, 0);
    empty_out = scratch_a;
    cold_buf = o->cold_l2 ? pkvi_bench_alloc(2 * COLD_BYTES, 0) : 0;
    snprintf(mode, sizeof mode, "%s%s%s%s%s%s", o->graph ? "graph" : "launch",
             o->rope_table ? "+table" : "", o->vision ? "+vision" : "",
             o->read_back ? "+readback" : "", o->cold_l2 ? "+cold" : "",
             atomic_load(&pkvi_bench_gpu->pdl) ? "+pdl" : "");
    printf("device: %s\nmode: %s%s%s%s%s%s; medians of %u x %d, event to event\n",
           pkv_cuda_describe(pkvi_bench_gpu),
           atomic_load(&pkvi_bench_gpu->pdl) ? "programmatic dependent launches, " : "",
           o->graph ? "CUDA graph replays (per launch)" : "single launches",
           o->rope_table ? ", fused ops with a cos/sin table" : "",
           o->vision ? ", MRoPE tokens an image's patches" : "",
           o->read_back ? ", each launch with a copy of the rows it wrote" : "",
           o->cold_l2 ? ", L2 cleared before each" : "", runs, ITERS);
    printf("host overhead before the launch: write_bf16 %.3f us, fused_bf16 (rotary 128, "
           "inv_freq table) %.3f us\n",
           host_overhead_us(0), host_overhead_us(1));
    printf("%-17s %-7s %6s %9s %9s %9s %9s %8s %7s %7s %7s %9s %6s %6s\n", "op", "heads", "tokens",
           "us", "p10", "p90", "MB", "GB/s", "copy%", "xempty", "xfloor", "base_us", "xbase",
           "rope%");
    if (csv)
        fprintf(csv, "mode,op,num_kv_heads,head_dim,tokens,us_median,us_p10,us_p90,bytes,"
                     "gbps,copy_gbps,pct_of_copy,empty_us,ratio_to_empty,baseline,"
                     "baseline_us,speedup_over_baseline,no_rope_us,rope_share_pct,floor_us,runs\n");
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++)
        for (size_t gi = 0; gi < 4; gi++)
            for (size_t t = 0; t < ntoks; t++) {
                bench_case b;
                stats row[T_COUNT], s, copy, empty, floor_st, base, norope;
                double bytes, gbps, copy_gbps, rope_pct;
                if (o->quick && (t % 2 || gi % 2)) continue;
                if (o->only_op && strcmp(o->only_op, pkv_op_name((pkv_op)op)) != 0) continue;
                if (o->only_heads && o->only_heads != geo[gi][0]) continue;
                memset(&b, 0, sizeof b);
                b.op = op;
                b.nkv = geo[gi][0];
                b.hd = geo[gi][1];
                b.tokens = toks[t];
                b.vision = o->vision;
                b.read_back = o->read_back;
                pkvi_bench_setup(&b);
                if (o->rope_table && pkvi_bench_is_fused(op) &&
                    pkv_cuda_rope_table(pkvi_bench_gpu, b.f.theta, b.f.rotary_dim,
                                        PKVI_BENCH_POS0 + b.tokens) != PKV_OK)
                    pkvi_bench_die("rope table");
                bytes = pkvi_bench_op_bytes(op, b.tokens, (uint64_t)b.nkv * b.hd, b.hd);
                /* the roofline: copying half the bytes moves them all (read + write) */
                time_row(&b, o->graph, st, runs, scratch_b, scratch_a,
                         (size_t)(bytes / 2) < scratch ? (size_t)(bytes / 2) : scratch, row);
                s = row[T_OP], base = row[T_BASE], norope = row[T_NOROPE];
                empty = row[T_EMPTY], floor_st = row[T_FLOOR], copy = row[T_COPY];
                gbps = bytes / (s.median * 1e3);
                copy_gbps = bytes / (copy.median * 1e3);
                rope_pct = pkvi_bench_is_fused(op) ? 100.0 * (1.0 - norope.median / s.median) : 0.0;
                printf("%-17s %2ux%-4u %6u %9.2f %9.2f %9.2f %9.3f %8.1f %6.1f%% %7.2f %7.2f %9.2f "
                       "%6.2f %5.1f%%\n",
                       pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens, s.median, s.p10, s.p90,
                       bytes / 1e6, gbps, 100.0 * gbps / copy_gbps, s.median / empty.median,
                       s.median / floor_st.median, base.median, base.median / s.median, rope_pct);
                if (csv)
                    fprintf(csv,
                            "%s,%s,%u,%u,%u,%.3f,%.3f,%.3f,%.0f,%.1f,%.1f,%.1f,%.3f,%.3f,%s,"
                            "%.3f,%.3f,%.3f,%.1f,%.3f,%u\n",
                            mode, pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens, s.median, s.p10,
                            s.p90, bytes, gbps, copy_gbps, 100.0 * gbps / copy_gbps, empty.median,
                            s.median / empty.median,
                            pkvi_bench_is_fused(op) ? "unfused_chain" : "one_thread_per_element",
                            base.median, base.median / s.median, norope.median, rope_pct,
                            floor_st.median, runs);
                if (!pkvi_bench_baseline_agrees(&b)) {
                    fprintf(stderr, "pkv bench: %s %ux%u %u tokens: the baseline's bytes differ\n",
                            pkv_op_name((pkv_op)op), b.nkv, b.hd, b.tokens);
                    disagree = 1;
                }
                pkvi_bench_teardown(&b);
            }
    pkv_cuda_free(pkvi_bench_gpu, scratch_a);
    pkv_cuda_free(pkvi_bench_gpu, scratch_b);
    if (cold_buf) pkv_cuda_free(pkvi_bench_gpu, cold_buf);
    if (st) {
        pkvi_cuda_enter(pkvi_bench_gpu);
        pkvi_bench_gpu->cu->cuStreamDestroy(st);
        pkvi_cuda_leave(pkvi_bench_gpu);
    }
    pkv_cuda_close(pkvi_bench_gpu);
    if (csv) fclose(csv);
    return disagree ? 3 : 0;
}
