/* Internal: the "pkv bench" GPU benchmark. */
#ifndef PKV_BENCH_H
#define PKV_BENCH_H

/* Run it; csv_path (or NULL) receives the machine-readable rows. Returns the exit status. */
int pkvi_bench_main(int quick, const char *csv_path);

#endif
