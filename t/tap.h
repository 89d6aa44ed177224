/* A minimal TAP producer for the tests (automake's tap-driver.sh reads it). A test program
 * whose assertions fail exits non-zero. */
#ifndef PKV_TAP_H
#define PKV_TAP_H

#include <stdint.h>

#if defined(__GNUC__)
#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TAP_NORETURN __attribute__((noreturn))
#else
#define TAP_PRINTF(a, b)
#define TAP_NORETURN
#endif

/* Announce the number of tests up front (optional: done_testing() prints the plan). */
void plan(int n);
/* One test result; returns cond so callers can add diagnostics on failure. */
int ok(int cond, const char *fmt, ...) TAP_PRINTF(2, 3);
/* Equality of unsigned integers, printing both values in hex on failure. */
int is_hex(uint64_t got, uint64_t want, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Equality of signed integers. */
int is_int(long long got, long long want, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Equality of strings; NULL is allowed. */
int is_str(const char *got, const char *want, const char *fmt, ...) TAP_PRINTF(3, 4);
/* A comment line ("# ...") on standard output. */
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Record n skipped tests with a reason. */
void skip(int n, const char *fmt, ...) TAP_PRINTF(2, 3);
/* Skip the whole program (prints "1..0 # SKIP reason") and exit 0. */
void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
/* Abort the program ("Bail out!") and exit non-zero. */
void bail(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
/* Print the plan if none was given and return the exit status: 0 iff every test passed. */
int done_testing(void);

/* The sampling stride for exhaustive loops: PKV_TEST_SAMPLE=k visits every k-th input
 * (Valgrind and sanitizer runs); 1, the default, visits all. */
uint64_t tap_sample_stride(void);

#endif
