/* Internal: the "pkv bench" GPU benchmark. */
#ifndef PKV_BENCH_H
#define PKV_BENCH_H

typedef struct pkvi_bench_opts {
    int quick;            /* every other geometry and token count */
    int graph;            /* time CUDA-graph replays instead of single launches */
    const char *csv_path; /* or NULL: the machine-readable rows */
    const char *only_op;  /* or NULL: one op by name */
    unsigned only_tokens; /* or 0: that token count alone (any count, not only the table's) */
    int rope_table;       /* fused ops read cos/sin from a pkv_cuda_rope_table table */
    unsigned only_heads;  /* or 0: the geometry of that many KV heads */
    int vision;           /* MRoPE's tokens are an image's patches, not text */
    unsigned runs;        /* rounds of each row's timings, 1 to PKVI_BENCH_MAX_RUNS (0: 1) */
    int read_back;        /* each op (and baseline) launch followed by a copy of the rows written */
    int cold_l2;          /* single launches: L2 cleared (untimed) before each timed launch */
} pkvi_bench_opts;

#define PKVI_BENCH_MAX_RUNS 15

/* Run it; returns the exit status (3 when a baseline's bytes differ from the op's). */
int pkvi_bench_main(const pkvi_bench_opts *o);

#endif
