/* The device's numeric primitives on a list of inputs (kernels/numerics.cu), for the fuzzers'
 * GPU backend of the crmath and convert targets. Synchronous: upload, launch, download. */
#include "config.h"
#include "cuda_plan.h"
#include "status.h"

pkv_status pkvi_cuda_numerics(pkv_cuda *h, const uint32_t *in, uint32_t n, uint32_t *out)
{
    pkvk_numerics_params p = {0, 0, n, 0};
    pkv_status st;
    if (!h) return pkvi_fail(PKV_EINVAL, "numerics: handle is NULL");
    if (n == 0) return PKV_OK;
    if ((st = pkv_cuda_alloc(h, (size_t)n * 4, &p.in))) return st;
    if ((st = pkv_cuda_alloc(h, (size_t)n * 32, &p.out))) {
        pkv_cuda_free(h, p.in);
        return st;
    }
    if (!(st = pkv_cuda_upload(h, p.in, in, (size_t)n * 4)) &&
        !(st = pkvi_cuda_launch(h, PKVI_K_NUMERICS, (n + 255u) / 256u, 1, 256, &p, NULL)) &&
        !(st = pkv_cuda_synchronize(h, NULL)))
        st = pkv_cuda_download(h, out, p.out, (size_t)n * 32);
    pkv_cuda_free(h, p.in);
    pkv_cuda_free(h, p.out);
    return st;
}
