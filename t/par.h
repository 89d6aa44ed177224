/* Parallel loops over large input ranges (every binary32 bit pattern, say) for the tests. */
#ifndef PKV_PAR_H
#define PKV_PAR_H

#include <stdint.h>

typedef struct par_result {
    uint64_t checked;    /* inputs visited */
    uint64_t mismatches; /* inputs whose check failed */
    uint64_t first_bad;  /* the smallest failing input, valid when mismatches > 0 */
} par_result;

/* Check inputs [begin, end) that are begin + j * stride; adds into *r. */
typedef void (*par_fn)(uint64_t begin, uint64_t end, uint64_t stride, void *ctx, par_result *r);

/* Run fn over [begin, end) in chunks on all online CPUs (PKV_TEST_THREADS overrides), visiting
 * begin + j * stride. Returns the summed result. */
par_result par_run(uint64_t begin, uint64_t end, uint64_t stride, par_fn fn, void *ctx);

/* Record one failing input in r. */
static inline void par_fail(par_result *r, uint64_t input)
{
    if (r->mismatches == 0 || input < r->first_bad) r->first_bad = input;
    r->mismatches++;
}

#endif
