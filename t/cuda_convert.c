/* On the GPU, all 2^32 binary32 inputs: the conversions as the kernels compute them
 * (kernels/cvt.cuh: both lanes of cvt.rn.bf16x2.f32 and, where the GPU has it,
 * cvt.rn.satfinite.e4m3x2.f32) and the shared software E4M3 path compiled for the device equal
 * the reference's conversions bit for bit. */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "par.h"
#include "pagedkv.h"
#include "cuda_device.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 26)

typedef struct outs {
    uint32_t base;
    uint16_t *b16;
    uint8_t *f8, *f8sw;
    uint64_t bad16, bad8, bad8sw;
} outs;

static void check(uint64_t b, uint64_t e, uint64_t stride, void *ctx, par_result *r)
{
    outs *o = ctx;
    for (uint64_t i = b; i < e; i += stride) {
        uint32_t u = o->base + (uint32_t)i;
        float x;
        memcpy(&x, &u, 4);
        r->checked++;
        if (o->b16[i] != pkv_bf16_from_f32(x)) par_fail(r, u);
        if (o->f8[i] != pkv_e4m3_from_f32(x)) par_fail(r, u | 0x100000000ull);
        if (o->f8sw[i] != pkv_e4m3_from_f32(x)) par_fail(r, u | 0x200000000ull);
    }
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    outs o;
    uint64_t d16, d8, d8sw, bad = 0, first = 0, checked = 0;
    uint64_t stride = tap_sample_stride();
    o.b16 = malloc((size_t)CHUNK * 2);
    o.f8 = malloc(CHUNK);
    o.f8sw = malloc(CHUNK);
    if (!o.b16 || !o.f8 || !o.f8sw) bail("out of memory");
    d16 = gpu_upload(h, NULL, (size_t)CHUNK * 2, 0);
    d8 = gpu_upload(h, NULL, CHUNK, 0);
    d8sw = gpu_upload(h, NULL, CHUNK, 0);
    for (uint64_t base = 0; base < (1ull << 32); base += CHUNK) {
        struct {
            unsigned base, n;
            uint64_t out16, out8, out8sw;
        } args = {(unsigned)base, CHUNK, d16, d8, d8sw};
        void *kp[5] = {&args.base, &args.n, &args.out16, &args.out8, &args.out8sw};
        pkvi_CUresult r;
        par_result pr;
        if (pkvi_cuda_enter(h)) bail("%s", pkv_last_error());
        r = h->cu->cuLaunchKernel(h->fn[PKVI_K_CONVERT], CHUNK / 256, 1, 1, 256, 1, 1, 0, NULL, kp,
                                  NULL);
        pkvi_cuda_leave(h);
        if (r) bail("launch failed: %d", r);
        gpu_download(h, o.b16, d16, (size_t)CHUNK * 2);
        gpu_download(h, o.f8, d8, CHUNK);
        gpu_download(h, o.f8sw, d8sw, CHUNK);
        o.base = (uint32_t)base;
        pr = par_run(0, CHUNK, stride, check, &o);
        if (pr.mismatches && !bad) first = pr.first_bad;
        bad += pr.mismatches;
        checked += pr.checked;
    }
    if (!is_int((long long)bad, 0, "GPU BF16, hardware E4M3 and software E4M3 equal the "
                "reference on %llu inputs", (unsigned long long)checked))
        diag("first: 0x%llx (bit 32: hardware e4m3, bit 33: software e4m3)",
             (unsigned long long)first);
    gpu_free_all(h);
    pkv_cuda_close(h);
    free(o.b16);
    free(o.f8);
    free(o.f8sw);
    return done_testing();
}
