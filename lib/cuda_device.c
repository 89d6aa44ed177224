/* Device handles: the primary context retained, the embedded fatbin loaded once per handle,
 * every kernel resolved up front; plus plain device memory for tools and tests. */
#include "config.h"
#include "cuda_device.h"
#include "fatbin.h"
#include "env.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* in the order of the PKVI_K_ enum (lib/cuda_device.h) */
static const char *const kernel_names[PKVI_K_COUNT] = {
    "pkvk_fill_slots",              "pkvk_write",
    "pkvk_write_vec",               "pkvk_write_vec32",
    "pkvk_fused",
    "pkvk_fused_vec",               "pkvk_fused_fp8_kv",
    "pkvk_fused_fp8_kv_vec",        "pkvk_fused_fp8_kv_vec16",
    "pkvk_fused_vec_tab",           "pkvk_fused_fp8_kv_vec_tab",
    "pkvk_fused_fp8_kv_vec16_tab",  "pkvk_fused_warp",
    "pkvk_fused_fp8_kv_warp",       "pkvk_fused_warp_small",
    "pkvk_fused_fp8_kv_warp_small", "pkvk_fused_halves",
    "pkvk_fused_fp8_kv_halves",     "pkvk_fused_mrope_halves",
    "pkvk_fused_halves16",          "pkvk_fused_halves32",
    "pkvk_fused_mrope_halves16",
    "pkvk_fused_mrope_warp_small",  "pkvk_fused_halves_g4",
    "pkvk_fused_wide64",            "pkvk_fused_mrope_wide64",
    "pkvk_fused_halves16_early",    "pkvk_fused_wide64_t16",
    "pkvk_fused_fp8_kv_halves_tree", "pkvk_fused_mrope_wide64_t16",
    "pkvk_fused_halves_stream",     "pkvk_fused_halves16_stream",
    "pkvk_fused_fp8_kv_halves_tree_stream",
    "pkvk_fused_mrope_halves_stream", "pkvk_fused_mrope_halves16_stream",
    "pkvk_convert_range",           "pkvk_probe",
    "pkvk_numerics",                "pkvk_rope_table",
    "pkvk_naive_write",             "pkvk_chain_norm",
    "pkvk_chain_rope",              "pkvk_chain_store",
    "pkvk_floor",                   "pkvk_delay"};

#define CU(call, what)                                                                         \
    do {                                                                                       \
        pkvi_CUresult r_ = (call);                                                             \
        if (r_ != 0) return pkvi_cuda_fail(r_, what);                                          \
    } while (0)

pkv_status pkv_cuda_device_count(int *count)
{
    pkv_status st;
    const pkvi_cuda_api *cu;
    pkvi_clear_error();
    if (!count) return pkvi_fail(PKV_EINVAL, "cuda_device_count: count is NULL");
    *count = 0;
    if (!(cu = pkvi_cuda(&st))) return st;
    CU(cu->cuDeviceGetCount(count), "cuDeviceGetCount");
    return PKV_OK;
}

pkv_status pkvi_cuda_enter(pkv_cuda *h)
{
    CU(h->cu->cuCtxPushCurrent(h->ctx), "cuCtxPushCurrent");
    return PKV_OK;
}

void pkvi_cuda_leave(pkv_cuda *h)
{
    pkvi_CUcontext popped;
    h->cu->cuCtxPopCurrent(&popped);
}

static pkv_status load_module(pkv_cuda *h)
{
    pkv_status st;
    if ((st = pkvi_cuda_enter(h))) return st;
    if (pkvi_fatbin_size == 0) {
        pkvi_cuda_leave(h);
        return pkvi_fail(PKV_ENOTSUP, "this build has no CUDA kernels (nvcc was not found)");
    }
    {
        /* PKV_CUDA_JIT_PTX=1: the compute_80 PTX, compiled by the driver (a test mode) */
        int use_ptx = pkvi_env_on("PKV_CUDA_JIT_PTX");
        pkvi_CUresult r = h->cu->cuModuleLoadData(&h->module, use_ptx ? pkvi_ptx80 : pkvi_fatbin);
        if (use_ptx && !r) strncat(h->description, " [compute_80 PTX, JIT]",
                                   sizeof h->description - strlen(h->description) - 1);
        if (r) {
            st = pkvi_cuda_fail(r, "cuModuleLoadData (no kernel image for this GPU?)");
            pkvi_cuda_leave(h);
            return st;
        }
    }
    for (int k = 0; k < PKVI_K_COUNT; k++) {
        pkvi_CUresult r = h->cu->cuModuleGetFunction(&h->fn[k], h->module, kernel_names[k]);
        if (r) {
            st = pkvi_cuda_fail(r, kernel_names[k]);
            pkvi_cuda_leave(h);
            return st;
        }
    }
    pkvi_cuda_leave(h);
    return PKV_OK;
}

/* Whether launches may overlap the kernel ahead of them: every kernel waits for it before its
 * first global access (kernels/grid_dep.cuh), but only in code built for sm_90 or later, which
 * the loaded module's PTX version says (the compute_80 PTX, JIT-compiled, has no wait); the
 * driver must have cuLaunchKernelEx and capture such launches into graphs (12.3). */
static int pdl_usable(const pkv_cuda *h)
{
    int ptx = 0, version = 0;
    if (!h->cu->cuLaunchKernelEx || !h->cu->cuFuncGetAttribute ||
        h->cu->cuDriverGetVersion(&version) || version < 12030)
        return 0;
    for (int k = 0; k < PKVI_K_COUNT; k++)
        if (h->cu->cuFuncGetAttribute(&ptx, PKVI_CU_FUNC_ATTR_PTX_VERSION, h->fn[k]) || ptx < 90)
            return 0;
    return 1;
}

pkv_status pkv_cuda_set_pdl(pkv_cuda *h, int enable)
{
    pkvi_clear_error();
    if (!h) return pkvi_fail(PKV_EINVAL, "cuda_set_pdl: handle is NULL");
    if (enable && !h->pdl_available)
        return pkvi_fail(PKV_ENOTSUP, "cuda_set_pdl: programmatic dependent launch needs "
                                      "sm_90 code and a 12.3 driver");
    atomic_store_explicit(&h->pdl, enable != 0, memory_order_relaxed);
    return PKV_OK;
}

pkv_status pkv_cuda_open(int ordinal, pkv_cuda **out)
{
    pkv_status st;
    const pkvi_cuda_api *cu;
    pkv_cuda *h;
    int n = 0, major = 0, minor = 0;
    char name[96];
    pkvi_clear_error();
    if (!out) return pkvi_fail(PKV_EINVAL, "cuda_open: out is NULL");
    *out = NULL;
    if (!(cu = pkvi_cuda(&st))) return st;
    CU(cu->cuDeviceGetCount(&n), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= n)
        return pkvi_fail(PKV_ENODEV, "cuda_open: no CUDA device %d (%d present)", ordinal, n);
    if (!(h = calloc(1, sizeof *h))) return pkvi_fail(PKV_ENOMEM, "cuda_open: out of memory");
    h->cu = cu;
    pthread_mutex_init(&h->freq_lock, NULL);
    if (cu->cuDeviceGet(&h->dev, ordinal) || cu->cuDeviceGetName(name, sizeof name, h->dev) ||
        cu->cuDeviceGetAttribute(&major, PKVI_CU_ATTR_CC_MAJOR, h->dev) ||
        cu->cuDeviceGetAttribute(&minor, PKVI_CU_ATTR_CC_MINOR, h->dev) ||
        cu->cuDeviceGetAttribute(&h->sm_count, PKVI_CU_ATTR_SM_COUNT, h->dev) ||
        cu->cuDeviceGetAttribute(&h->l2_bytes, PKVI_CU_ATTR_L2_BYTES, h->dev) ||
        cu->cuDeviceGetAttribute(&h->threads_per_sm, PKVI_CU_ATTR_THREADS_PER_SM, h->dev)) {
        free(h);
        return pkvi_fail(PKV_ECUDA, "cuda_open: cannot query device %d", ordinal);
    }
    snprintf(h->description, sizeof h->description, "%s (sm_%d%d)", name, major, minor);
    {
        pkvi_CUresult r = cu->cuDevicePrimaryCtxRetain(&h->ctx, h->dev);
        if (r) {
            free(h);
            return pkvi_cuda_fail(r, "cuDevicePrimaryCtxRetain");
        }
    }
    if ((st = load_module(h))) {
        cu->cuDevicePrimaryCtxRelease(h->dev);
        free(h);
        return st;
    }
    h->pdl_available = pdl_usable(h);
    {
        const char *env = getenv("PKV_CUDA_PDL");
        atomic_init(&h->pdl, h->pdl_available && !(env && strcmp(env, "0") == 0));
    }
    *out = h;
    return PKV_OK;
}

void pkv_cuda_close(pkv_cuda *h)
{
    if (!h) return;
    if (pkvi_cuda_enter(h) == PKV_OK) {
        if (h->cs_table) {
            h->cu->cuCtxSynchronize(); /* launches in flight may still read it */
            h->cu->cuMemFree(h->cs_table);
        }
        h->cu->cuModuleUnload(h->module);
        pkvi_cuda_leave(h);
    }
    h->cu->cuDevicePrimaryCtxRelease(h->dev);
    pthread_mutex_destroy(&h->freq_lock);
    free(h);
}

pkv_status pkvi_cuda_rope(pkv_cuda *h, float theta, uint32_t rotary_dim, float *inv_freq,
                          uint64_t *cs_table, uint32_t *cs_len)
{
    pkv_status st = PKV_OK;
    size_t n = rotary_dim / 2 * sizeof *inv_freq;
    pthread_mutex_lock(&h->freq_lock);
    if (h->freq_valid && h->freq_theta == theta && h->freq_rotary_dim == rotary_dim) {
        memcpy(inv_freq, h->freq_table, n);
    } else if ((st = pkv_inv_freq_table(theta, rotary_dim, inv_freq)) == PKV_OK) {
        memcpy(h->freq_table, inv_freq, n);
        h->freq_theta = theta;
        h->freq_rotary_dim = rotary_dim;
        h->freq_valid = 1;
    }
    *cs_table = 0;
    *cs_len = 0;
    if (!st && h->cs_table && h->cs_theta == theta && h->cs_rotary_dim == rotary_dim) {
        *cs_table = h->cs_table;
        *cs_len = h->cs_len;
    }
    pthread_mutex_unlock(&h->freq_lock);
    return st;
}

const char *pkv_cuda_describe(const pkv_cuda *h) { return h ? h->description : ""; }

pkv_status pkvi_cuda_launch(pkv_cuda *h, int k, unsigned gx, unsigned gy, unsigned block,
                            void *params, void *stream)
{
    void *args[1];
    pkvi_CUresult r;
    pkv_status st;
    args[0] = params;
    if ((st = pkvi_cuda_enter(h))) return st;
    r = pkvi_cuda_launch_args(h, k, gx, gy, block, args, stream);
    pkvi_cuda_leave(h);
    return r ? pkvi_cuda_fail(r, kernel_names[k]) : PKV_OK;
}

pkvi_CUresult pkvi_cuda_launch_args(pkv_cuda *h, int k, unsigned gx, unsigned gy, unsigned block,
                                    void **args, void *stream)
{
    pkvi_CUlaunchAttribute attr;
    pkvi_CUlaunchConfig c;
    if (!atomic_load_explicit(&h->pdl, memory_order_relaxed))
        return h->cu->cuLaunchKernel(h->fn[k], gx, gy, 1, block, 1, 1, 0, (pkvi_CUstream)stream,
                                     args, NULL);
    memset(&attr, 0, sizeof attr);
    attr.id = PKVI_CU_LAUNCH_ATTR_PROGRAMMATIC;
    attr.value.programmatic = 1;
    memset(&c, 0, sizeof c);
    c.grid_x = gx;
    c.grid_y = gy;
    c.grid_z = 1;
    c.block_x = block;
    c.block_y = 1;
    c.block_z = 1;
    c.stream = (pkvi_CUstream)stream;
    c.attrs = &attr;
    c.num_attrs = 1;
    return h->cu->cuLaunchKernelEx(&c, h->fn[k], args, NULL);
}

/* Run one driver call with h's context current. */
#define WITH_CTX(h, call, what)                                                                \
    do {                                                                                       \
        pkvi_CUresult r_;                                                                      \
        pkv_status st_;                                                                        \
        pkvi_clear_error();                                                                    \
        if (!(h)) return pkvi_fail(PKV_EINVAL, "%s: handle is NULL", what);                    \
        if ((st_ = pkvi_cuda_enter(h))) return st_;                                            \
        r_ = (call);                                                                           \
        pkvi_cuda_leave(h);                                                                    \
        return r_ ? pkvi_cuda_fail(r_, what) : PKV_OK;                                         \
    } while (0)

pkv_status pkv_cuda_synchronize(pkv_cuda *h, void *stream)
{
    WITH_CTX(h, h->cu->cuStreamSynchronize((pkvi_CUstream)stream), "cuStreamSynchronize");
}

pkv_status pkv_cuda_alloc(pkv_cuda *h, size_t bytes, uint64_t *ptr)
{
    pkvi_CUdeviceptr p = 0;
    if (!ptr) return pkvi_fail(PKV_EINVAL, "cuda_alloc: ptr is NULL");
    *ptr = 0;
    {
        pkvi_CUresult r;
        pkv_status st;
        pkvi_clear_error();
        if (!h) return pkvi_fail(PKV_EINVAL, "cuda_alloc: handle is NULL");
        if ((st = pkvi_cuda_enter(h))) return st;
        r = h->cu->cuMemAlloc(&p, bytes ? bytes : 1);
        pkvi_cuda_leave(h);
        if (r) return pkvi_cuda_fail(r, "cuMemAlloc");
    }
    *ptr = p;
    return PKV_OK;
}

pkv_status pkv_cuda_free(pkv_cuda *h, uint64_t ptr)
{
    if (!ptr) return PKV_OK;
    WITH_CTX(h, h->cu->cuMemFree(ptr), "cuMemFree");
}

pkv_status pkv_cuda_upload(pkv_cuda *h, uint64_t dst, const void *src, size_t bytes)
{
    if (!bytes) return PKV_OK;
    WITH_CTX(h, h->cu->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

pkv_status pkv_cuda_download(pkv_cuda *h, void *dst, uint64_t src, size_t bytes)
{
    if (!bytes) return PKV_OK;
    WITH_CTX(h, h->cu->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

pkv_status pkv_cuda_fill(pkv_cuda *h, uint64_t dst, unsigned char byte, size_t bytes)
{
    if (!bytes) return PKV_OK;
    WITH_CTX(h, h->cu->cuMemsetD8(dst, byte, bytes), "cuMemsetD8");
}
