/* trig_reduce_check: the fast path's split |x| = k pi/64 + r of ref/cr_trig.h against a
 * reference r on every finite binary32 input of at least 2^-7 (below, k = 0 and r must be x
 * itself: checked too). The reference is r = (x 2/pi - k/32) pi/2 in double-double from
 * Payne-Hanek's x 2/pi = q + f (mod 4), or, below pi/4 (where the code does not use
 * Payne-Hanek), x - k pi/64 in double-double. It prints the largest relative error of r for
 * the Cody-Waite range (|x| < 2^20) and above it, the largest |r| and the smallest; exit status
 * 1 if an error exceeds the 2^-51.4 that the fast path's bound allows, or |r| exceeds
 * pi/128 (1 + 2^-40). `make check-trig-reduce`. */
#include "config.h"
#include "cr_trig.h"

#include <math.h>
#include <stdio.h>

typedef struct range_stats {
    double worst, min_r, max_r;
    uint32_t worst_at, min_at, max_at;
    unsigned long long n;
} range_stats;

static pkvi_dd reference_r(uint32_t a, uint32_t k)
{
    const pkvi_dd PIO2 = {0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54};
    const pkvi_dd PIO64 = {0x1.921fb54442d18p-5, 0x1.1a62633145c07p-59};
    if (a < 0x3f490fdbu) /* k <= 16: k pi/64 to about 2^-105 */
        return pkvi_dd_add(pkvi_dd_make((double)pkvi_f32_from_bits(a), 0.0),
                           pkvi_dd_neg(pkvi_dd_mul_d(PIO64, (double)k)));
    pkvi_trig_arg t = pkvi_trig_reduce_large(a);
    /* r 2/pi = (q - k / 32) + f (mod 4): the representative nearest zero */
    int d = (t.q - (int)(k >> 5)) & 3;
    double base = d - (double)(k & 31u) / 32.0;
    base -= 4.0 * floor((base + t.f.hi + 2.0) / 4.0);
    return pkvi_dd_mul(pkvi_dd_add(pkvi_dd_make(base, 0.0), t.f), PIO2);
}

static void note(range_stats *s, uint32_t a, double r, double err)
{
    s->n++;
    if (err > s->worst) {
        s->worst = err;
        s->worst_at = a;
    }
    if (fabs(r) < s->min_r) {
        s->min_r = fabs(r);
        s->min_at = a;
    }
    if (fabs(r) > s->max_r) {
        s->max_r = fabs(r);
        s->max_at = a;
    }
}

static void report(const char *name, const range_stats *s)
{
    printf("%s: inputs %llu, largest relative error of r 2^%.2f (at 0x%08x), smallest |r| "
           "2^%.2f (at 0x%08x), largest |r| %.17g (at 0x%08x)\n",
           name, s->n, log2(s->worst), (unsigned)s->worst_at, log2(s->min_r), (unsigned)s->min_at,
           s->max_r, (unsigned)s->max_at);
}

int main(void)
{
    const double BOUND = exp2(-51.4), R_MAX = 0x1.921fb54442d18p-6 * (1 + 0x1p-40);
    range_stats cw = {0.0, 1.0, 0.0, 0, 0, 0, 0}, large = cw;
    unsigned long long not_exact = 0;
    for (uint32_t a = 0; a < 0x3c000000u; a++) {
        pkvi_trig_split sp = pkvi_trig_split_arg(a);
        if (sp.k != 0 || sp.r != (double)pkvi_f32_from_bits(a)) not_exact++;
    }
    for (uint32_t a = 0x3c000000u; a < 0x7f800000u; a++) {
        pkvi_trig_split sp = pkvi_trig_split_arg(a);
        pkvi_dd ref = reference_r(a, sp.k);
        double r = ref.hi + ref.lo;
        note(a < 0x49800000u ? &cw : &large, a, sp.r, fabs((sp.r - r) / r));
    }
    printf("below 2^-7: inputs %u, r not x itself or k not 0: %llu\n", 0x3c000000u, not_exact);
    report("2^-7 <= |x| < 2^20 (Cody-Waite)", &cw);
    report("|x| >= 2^20 (Payne-Hanek)", &large);
    return not_exact == 0 && cw.worst <= BOUND && large.worst <= BOUND && cw.max_r <= R_MAX &&
                   large.max_r <= R_MAX
               ? 0
               : 1;
}
