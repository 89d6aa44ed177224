/* trig_exhaustive: compare pkv_sinf_cr and pkv_cosf_cr with MPFR's correctly rounded sine and
 * cosine on a range of binary32 bit patterns (all 2^32 by default), on many threads.
 *
 *   trig_exhaustive [--threads N] [--from U32] [--to U64] [--stride K]
 *
 * MPFR emulates binary32 exactly: 24-bit precision, exponent range [-148, 128] and
 * mpfr_subnormalize after each correctly rounded call. Exit status 1 on any mismatch. */
#include "config.h"
#include "pagedkv.h"
#include "../t/bits.h"
#include "../t/par.h"
#include "cr_trig.h"

#include <mpfr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct stats {
    par_result sin_r, cos_r;
} stats;

/* MPFR's correctly rounded binary32 result for a finite x. */
static float mpfr_f32(mpfr_t y, mpfr_t a, float x, int cosine)
{
    int t;
    mpfr_set_flt(a, x, MPFR_RNDN);
    t = cosine ? mpfr_cos(y, a, MPFR_RNDN) : mpfr_sin(y, a, MPFR_RNDN);
    t = mpfr_subnormalize(y, t, MPFR_RNDN);
    return mpfr_get_flt(y, MPFR_RNDN);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long slow_total;

static void check(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    stats *st = ctx;
    par_result sr = {0, 0, 0}, cr = {0, 0, 0};
    mpfr_t a, y;
    int slow = 0;
    (void)r;
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    mpfr_inits2(24, a, y, (mpfr_ptr)0);
    for (uint64_t i = b; i < e; i += stride) {
        uint32_t u = (uint32_t)i;
        float x = f32(u), s, c, ms, mc;
        pkvi_sincosf_cr(x, &s, &c, &slow);
        sr.checked++;
        cr.checked++;
        if ((u & 0x7fffffffu) >= 0x7f800000u) { /* NaN, Inf: exactly 0x7FC00000 */
            if (bits(s) != 0x7fc00000u || bits(pkv_sinf_cr(x)) != 0x7fc00000u) par_fail(&sr, i);
            if (bits(c) != 0x7fc00000u || bits(pkv_cosf_cr(x)) != 0x7fc00000u) par_fail(&cr, i);
            continue;
        }
        ms = mpfr_f32(y, a, x, 0);
        mc = mpfr_f32(y, a, x, 1);
        if (bits(s) != bits(ms) || bits(pkv_sinf_cr(x)) != bits(ms)) par_fail(&sr, i);
        if (bits(c) != bits(mc) || bits(pkv_cosf_cr(x)) != bits(mc)) par_fail(&cr, i);
    }
    mpfr_clears(a, y, (mpfr_ptr)0);
    mpfr_free_cache();
    pthread_mutex_lock(&lock);
    slow_total += slow;
    if (sr.mismatches && (st->sin_r.mismatches == 0 || sr.first_bad < st->sin_r.first_bad))
        st->sin_r.first_bad = sr.first_bad;
    if (cr.mismatches && (st->cos_r.mismatches == 0 || cr.first_bad < st->cos_r.first_bad))
        st->cos_r.first_bad = cr.first_bad;
    st->sin_r.checked += sr.checked;
    st->sin_r.mismatches += sr.mismatches;
    st->cos_r.checked += cr.checked;
    st->cos_r.mismatches += cr.mismatches;
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
    uint64_t from = 0, to = 1ull << 32, stride = 1;
    stats st;
    struct timespec t0, t1;
    double secs;
    memset(&st, 0, sizeof st);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) setenv("PKV_TEST_THREADS", argv[i + 1], 1);
        else if (!strcmp(argv[i], "--from")) from = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--to")) to = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--stride")) stride = strtoull(argv[i + 1], NULL, 0);
        else {
            fprintf(stderr, "usage: %s [--threads N] [--from U32] [--to U64] [--stride K]\n",
                    argv[0]);
            return 2;
        }
    }
    if (to > (1ull << 32) || from > to || stride == 0) {
        fprintf(stderr, "trig_exhaustive: bad range\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    par_run(from, to, stride, check, &st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("range [0x%08llx, 0x%09llx) stride %llu: %llu inputs, %.1f s, MPFR %s\n",
           (unsigned long long)from, (unsigned long long)to, (unsigned long long)stride,
           (unsigned long long)st.sin_r.checked, secs, mpfr_get_version());
    printf("sin: %llu mismatches", (unsigned long long)st.sin_r.mismatches);
    if (st.sin_r.mismatches) printf(" (first 0x%08llx)", (unsigned long long)st.sin_r.first_bad);
    printf("\ncos: %llu mismatches", (unsigned long long)st.cos_r.mismatches);
    if (st.cos_r.mismatches) printf(" (first 0x%08llx)", (unsigned long long)st.cos_r.first_bad);
    printf("\naccurate-path evaluations: %ld\n", slow_total);
    return st.sin_r.mismatches || st.cos_r.mismatches;
}
