/* trig_reduce_check: the Cody-Waite reduction of ref/cr_trig.h against Payne-Hanek on every
 * binary32 input it serves (0x3f490fdb <= |x| < 2^20). Where the two pick different quadrants
 * (r at +-pi/4) their r differ by pi/2, which is added back before comparing. It prints how
 * often that happened, the largest relative error of r and the smallest |r|; exit status 1 if
 * the error exceeds the 2^-51.4 that the fast path's bound allows. `make check-trig-reduce`. */
#include "config.h"
#include "cr_trig.h"

#include <math.h>
#include <stdio.h>

int main(void)
{
    const double PIO2 = 0x1.921fb54442d18p+0;
    double worst = 0.0, min_r = 1.0;
    uint32_t worst_at = 0, min_at = 0;
    unsigned long long n = 0, q_differ = 0;
    for (uint32_t a = 0x3f490fdbu; a < 0x49800000u; a++) {
        pkvi_trig_arg cw = pkvi_trig_reduce_cw(a), ph = pkvi_trig_reduce_large(a);
        /* PH's r, to about 2^-100 relative: f pi/2 in double-double, rounded once */
        const pkvi_dd pio2 = pkvi_dd_make(PIO2, 0x1.1a62633145c07p-54);
        pkvi_dd r_dd = pkvi_dd_mul(ph.f, pio2);
        double r, err;
        n++;
        if (cw.q != ph.q) { /* a boundary case: then the two r differ by pi/2 */
            q_differ++;
            r_dd = pkvi_dd_add(r_dd, (cw.q - ph.q + 4) % 4 == 1 ? pkvi_dd_neg(pio2) : pio2);
        }
        r = r_dd.hi + r_dd.lo;
        err = fabs((cw.r - r) / r);
        if (err > worst) {
            worst = err;
            worst_at = a;
        }
        if (fabs(r) < min_r) {
            min_r = fabs(r);
            min_at = a;
        }
    }
    printf("inputs %llu, quadrant differs %llu, largest relative error of r 2^%.2f (at 0x%08x), "
           "smallest |r| 2^%.2f (at 0x%08x)\n",
           n, q_differ, log2(worst), (unsigned)worst_at, log2(min_r), (unsigned)min_at);
    return worst <= exp2(-51.4) ? 0 : 1;
}
