/* Internal: the "pkv check" sweep. */
#ifndef PKV_CHECK_H
#define PKV_CHECK_H

/* Run the sweep, print the table; returns the process exit status: 0 no mismatch, 1 a
 * mismatch, 3 out of memory, a cos/sin table not built, or (require_gpu) no CUDA backend. */
int pkvi_check_main(int quick, int require_gpu);

#endif
