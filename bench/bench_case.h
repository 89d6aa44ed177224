/* Internal to pkv bench: the benchmark cases (their buffers, the op and baseline launches). */
#ifndef PKV_BENCH_CASE_H
#define PKV_BENCH_CASE_H

#include "pagedkv.h"
#include "../lib/cuda_plan.h"

#include <stddef.h>
#include <stdint.h>

#define L2_BYTES (64u << 20)            /* rotate sets until at least twice this is touched */
#define PKVI_BENCH_POS0 1000u           /* token t is at position PKVI_BENCH_POS0 + t */
#define SCRATCH_BYTES ((size_t)1 << 30) /* each of the copy's two buffers */

enum { RUN_OP, RUN_BASELINE, RUN_EMPTY, RUN_COPY, RUN_FLOOR };

typedef struct set {
    uint64_t k, v, w, pos, slots, kc, vc;
    uint64_t mpos[3]; /* MRoPE's three streams (each its own array), else 0 */
} set;

typedef struct bench_case {
    uint32_t nkv, hd, tokens;
    int op;
    int vision;    /* MRoPE's tokens are an image's patches (pkvi_bench_setup), not text */
    int read_back; /* each op and baseline launch is followed by a copy of the rows it wrote */
    size_t nsets;
    set s[64];
    uint64_t scratch; /* the chain's intermediate */
    uint64_t rb;      /* with read_back: where the copy of the written rows goes */
    size_t pool_bytes;
    pkv_fused_desc f;
    pkv_write_desc wd;
} bench_case;

extern pkv_cuda *pkvi_bench_gpu;

/* Print the failure (with the library's last message) and exit with status 3. */
void pkvi_bench_die(const char *what);
void pkvi_bench_cu_check(pkvi_CUresult r, const char *what);
uint64_t pkvi_bench_alloc(size_t bytes, unsigned char fill);

/* Input sets for a case moving `bytes`, or copies of `bytes`: enough to touch twice L2. */
size_t pkvi_bench_sets(size_t bytes);
int pkvi_bench_is_fused(int op);
/* Minimal bytes: each input read once, each output written once. */
double pkvi_bench_op_bytes(int op, uint64_t tokens, uint64_t row, uint32_t head_dim);

void pkvi_bench_setup(bench_case *b);
void pkvi_bench_teardown(bench_case *b);
/* Launch what (RUN_OP, RUN_BASELINE, or RUN_EMPTY or RUN_FLOOR writing to empty_out) on input
 * set k; with read_back, after RUN_OP and RUN_BASELINE a copy of the cache rows written. */
void pkvi_bench_run(int what, const bench_case *b, size_t k, void *stream, uint64_t empty_out);
/* Queue pkvk_delay on the stream: the GPU waits ns nanoseconds there (bench.c, timed) */
void pkvi_bench_hold(void *stream, unsigned long long ns);
/* 1 when the baseline writes the op's bytes into set 0's pools. */
int pkvi_bench_baseline_agrees(const bench_case *b);

#endif
