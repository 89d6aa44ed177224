/* Internal: the "pkv check" sweep. */
#ifndef PKV_CHECK_H
#define PKV_CHECK_H

/* Run the sweep, print the table; returns the process exit status (0: no mismatch). */
int pkvi_check_main(int quick);

#endif
