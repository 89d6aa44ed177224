/* Loading the CUDA driver at run time: dlopen("libcuda.so.1") once, every entry point pagedkv
 * uses resolved into one table. The library never links CUDA, so it loads and runs (ref-only)
 * on machines without a driver. */
#include "config.h"
#include "cuda_api.h"
#include "status.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pkvi_cuda_api api;
static pkv_status load_status = PKV_ENODEV;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    pkvi_CUresult r;
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load libcuda.so.1 (no NVIDIA driver?)");
        return;
    }
#define SYM(field, name)                                                                       \
    do {                                                                                       \
        *(void **)&api.field = dlsym(lib, name);                                               \
        if (!api.field) {                                                                      \
            snprintf(load_error, sizeof load_error, "libcuda.so.1 lacks %s (driver too old)",  \
                     name);                                                                    \
            return;                                                                            \
        }                                                                                      \
    } while (0)
    SYM(cuInit, "cuInit");
    SYM(cuDriverGetVersion, "cuDriverGetVersion");
    SYM(cuDeviceGetCount, "cuDeviceGetCount");
    SYM(cuDeviceGet, "cuDeviceGet");
    SYM(cuDeviceGetName, "cuDeviceGetName");
    SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    SYM(cuCtxSynchronize, "cuCtxSynchronize");
    SYM(cuModuleLoadData, "cuModuleLoadData");
    SYM(cuModuleUnload, "cuModuleUnload");
    SYM(cuModuleGetFunction, "cuModuleGetFunction");
    SYM(cuLaunchKernel, "cuLaunchKernel");
    SYM(cuStreamSynchronize, "cuStreamSynchronize");
    SYM(cuMemAlloc, "cuMemAlloc_v2");
    SYM(cuMemFree, "cuMemFree_v2");
    SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(cuMemsetD8, "cuMemsetD8_v2");
    SYM(cuGetErrorName, "cuGetErrorName");
    SYM(cuEventCreate, "cuEventCreate");
    SYM(cuEventDestroy, "cuEventDestroy_v2");
    SYM(cuEventRecord, "cuEventRecord");
    SYM(cuEventSynchronize, "cuEventSynchronize");
    SYM(cuEventQuery, "cuEventQuery");
    SYM(cuEventElapsedTime, "cuEventElapsedTime_v2");
    SYM(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    SYM(cuStreamCreate, "cuStreamCreate");
    SYM(cuStreamDestroy, "cuStreamDestroy_v2");
    SYM(cuStreamBeginCapture, "cuStreamBeginCapture_v2");
    SYM(cuStreamEndCapture, "cuStreamEndCapture");
    SYM(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    SYM(cuGraphLaunch, "cuGraphLaunch");
    SYM(cuGraphExecDestroy, "cuGraphExecDestroy");
    SYM(cuGraphDestroy, "cuGraphDestroy");
#undef SYM
    *(void **)&api.cuLaunchKernelEx = dlsym(lib, "cuLaunchKernelEx");
    *(void **)&api.cuFuncGetAttribute = dlsym(lib, "cuFuncGetAttribute");
    r = api.cuInit(0);
    if (r != 0) {
        const char *name = "unknown error";
        api.cuGetErrorName(r, &name);
        snprintf(load_error, sizeof load_error, "cuInit failed: %s%s", name ? name : "?",
                 r == PKVI_CUDA_ERROR_NO_DEVICE ? " (no CUDA device)" : "");
        return;
    }
    load_status = PKV_OK;
}

const pkvi_cuda_api *pkvi_cuda(pkv_status *st)
{
    pthread_once(&once, load);
    *st = load_status;
    if (load_status != PKV_OK) {
        pkvi_fail(PKV_ENODEV, "%s", load_error);
        return NULL;
    }
    return &api;
}

pkv_status pkvi_cuda_fail(pkvi_CUresult r, const char *what)
{
    const char *name = NULL;
    if (load_status == PKV_OK) api.cuGetErrorName(r, &name);
    return pkvi_fail(PKV_ECUDA, "%s: %s (%d)", what, name ? name : "CUDA error", r);
}
