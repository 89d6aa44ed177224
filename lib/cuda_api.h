/* Internal: the CUDA driver API entry points pagedkv uses, resolved at run time from
 * libcuda.so.1 (no CUDA header or library is needed to build). The types and constants are
 * the driver ABI's. */
#ifndef PKV_CUDA_API_H
#define PKV_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "pagedkv.h"

typedef int pkvi_CUresult; /* CUDA_SUCCESS = 0 */
typedef int pkvi_CUdevice;
typedef void *pkvi_CUcontext;
typedef void *pkvi_CUmodule;
typedef void *pkvi_CUfunction;
typedef void *pkvi_CUstream;
typedef unsigned long long pkvi_CUdeviceptr;
typedef void *pkvi_CUevent;
typedef void *pkvi_CUgraph;
typedef void *pkvi_CUgraphExec;

#define PKVI_CU_ATTR_SM_COUNT 16
#define PKVI_CU_ATTR_L2_BYTES 38
#define PKVI_CU_ATTR_THREADS_PER_SM 39
#define PKVI_CU_ATTR_CC_MAJOR 75
#define PKVI_CU_ATTR_CC_MINOR 76
#define PKVI_CUDA_ERROR_NO_DEVICE 100
#define PKVI_CUDA_ERROR_NOT_READY 600
#define PKVI_CU_FUNC_ATTR_PTX_VERSION 5
#define PKVI_CU_LAUNCH_ATTR_PROGRAMMATIC 6 /* programmatic stream serialization */

/* cuLaunchKernelEx's configuration and one attribute (CUlaunchConfig, CUlaunchAttribute) */
typedef struct pkvi_CUlaunchAttribute {
    int id;
    char pad[4];
    union {
        char pad[64];
        uint64_t align;
        int programmatic; /* PKVI_CU_LAUNCH_ATTR_PROGRAMMATIC: overlap allowed */
    } value;
} pkvi_CUlaunchAttribute;

typedef struct pkvi_CUlaunchConfig {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    pkvi_CUstream stream;
    pkvi_CUlaunchAttribute *attrs;
    unsigned num_attrs;
} pkvi_CUlaunchConfig;

typedef struct pkvi_cuda_api {
    pkvi_CUresult (*cuInit)(unsigned);
    pkvi_CUresult (*cuDriverGetVersion)(int *);
    pkvi_CUresult (*cuDeviceGetCount)(int *);
    pkvi_CUresult (*cuDeviceGet)(pkvi_CUdevice *, int);
    pkvi_CUresult (*cuDeviceGetName)(char *, int, pkvi_CUdevice);
    pkvi_CUresult (*cuDeviceGetAttribute)(int *, int, pkvi_CUdevice);
    pkvi_CUresult (*cuDevicePrimaryCtxRetain)(pkvi_CUcontext *, pkvi_CUdevice);
    pkvi_CUresult (*cuDevicePrimaryCtxRelease)(pkvi_CUdevice);
    pkvi_CUresult (*cuCtxPushCurrent)(pkvi_CUcontext);
    pkvi_CUresult (*cuCtxPopCurrent)(pkvi_CUcontext *);
    pkvi_CUresult (*cuCtxSynchronize)(void);
    pkvi_CUresult (*cuModuleLoadData)(pkvi_CUmodule *, const void *);
    pkvi_CUresult (*cuModuleUnload)(pkvi_CUmodule);
    pkvi_CUresult (*cuModuleGetFunction)(pkvi_CUfunction *, pkvi_CUmodule, const char *);
    pkvi_CUresult (*cuLaunchKernel)(pkvi_CUfunction, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, unsigned, pkvi_CUstream, void **,
                                    void **);
    pkvi_CUresult (*cuStreamSynchronize)(pkvi_CUstream);
    pkvi_CUresult (*cuMemAlloc)(pkvi_CUdeviceptr *, size_t);
    pkvi_CUresult (*cuMemFree)(pkvi_CUdeviceptr);
    pkvi_CUresult (*cuMemcpyHtoD)(pkvi_CUdeviceptr, const void *, size_t);
    pkvi_CUresult (*cuMemcpyDtoH)(void *, pkvi_CUdeviceptr, size_t);
    pkvi_CUresult (*cuMemsetD8)(pkvi_CUdeviceptr, unsigned char, size_t);
    pkvi_CUresult (*cuGetErrorName)(pkvi_CUresult, const char **);
    /* for benchmarks */
    pkvi_CUresult (*cuEventCreate)(pkvi_CUevent *, unsigned);
    pkvi_CUresult (*cuEventDestroy)(pkvi_CUevent);
    pkvi_CUresult (*cuEventRecord)(pkvi_CUevent, pkvi_CUstream);
    pkvi_CUresult (*cuEventSynchronize)(pkvi_CUevent);
    pkvi_CUresult (*cuEventQuery)(pkvi_CUevent); /* 0: reached; PKVI_CUDA_ERROR_NOT_READY */
    pkvi_CUresult (*cuEventElapsedTime)(float *, pkvi_CUevent, pkvi_CUevent);
    pkvi_CUresult (*cuMemcpyDtoDAsync)(pkvi_CUdeviceptr, pkvi_CUdeviceptr, size_t, pkvi_CUstream);
    pkvi_CUresult (*cuStreamCreate)(pkvi_CUstream *, unsigned);
    pkvi_CUresult (*cuStreamDestroy)(pkvi_CUstream);
    pkvi_CUresult (*cuStreamBeginCapture)(pkvi_CUstream, int); /* mode 0: global */
    pkvi_CUresult (*cuStreamEndCapture)(pkvi_CUstream, pkvi_CUgraph *);
    pkvi_CUresult (*cuGraphInstantiateWithFlags)(pkvi_CUgraphExec *, pkvi_CUgraph,
                                                 unsigned long long);
    pkvi_CUresult (*cuGraphLaunch)(pkvi_CUgraphExec, pkvi_CUstream);
    pkvi_CUresult (*cuGraphExecDestroy)(pkvi_CUgraphExec);
    pkvi_CUresult (*cuGraphDestroy)(pkvi_CUgraph);
    /* optional (NULL when the driver lacks them): programmatic dependent launch */
    pkvi_CUresult (*cuLaunchKernelEx)(const pkvi_CUlaunchConfig *, pkvi_CUfunction, void **,
                                      void **);
    pkvi_CUresult (*cuFuncGetAttribute)(int *, int, pkvi_CUfunction);
} pkvi_cuda_api;

/* The driver table, loading libcuda.so.1 and calling cuInit once (thread-safe). On failure,
 * NULL with PKV_ENODEV and a message in *st. */
const pkvi_cuda_api *pkvi_cuda(pkv_status *st);

/* PKV_ECUDA with "what: CUDA_ERROR_NAME" recorded as the message. */
pkv_status pkvi_cuda_fail(pkvi_CUresult r, const char *what);

#endif
