// The kernels of decode-grid.cu's SHAPES=1 mode that are not in the write kernel's launch
// shape (fifty-fourth session); included by decode-grid.cu after its helpers and copy kernels.
#pragma once

// A V-only copy of a chunk a thread that lets the next launch start only after its stores
__global__ void copy_late_kernel(const args a)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < a.n) {
        prefetch_l2(a.v + i);
        if (i % CPR == 0) prefetch_l2(a.slots + i / CPR);
    }
    wait();
    if (i < a.n) {
        const uint4 vx = load16(a.v + i);
        const long long s = load8(a.slots + i / CPR);
        if (s >= 0) a.vc[(uint64_t)s * CPR + i % CPR] = vx;
    }
    trigger();
}

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// The copy engine of each multiprocessor (TMA) instead of the threads' loads and stores: a
// thread moves one piece of a.piece bytes (within a token's row) of V (and K) through its own
// shared memory and mbarrier: bulk L2 prefetch before the wait, bulk loads after it, the slot by
// a plain load meanwhile, bulk stores, then waits for them (READ: only until shared memory has
// been read)
template <bool KV, bool READ> __global__ void tma_kernel(const args a)
{
    extern __shared__ __align__(128) unsigned char sm[];
    __shared__ unsigned long long bar[64];
    trigger();
    const unsigned cpp = a.piece / 16u, i = blockIdx.x * blockDim.x + threadIdx.x, c0 = i * cpp;
    const bool live = c0 < a.n;
    const unsigned b = smem_addr(&bar[threadIdx.x]);
    if (live) {
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a.v + c0), "r"(a.piece));
        if (KV)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a.k + c0),
                         "r"(a.piece));
        if (c0 % CPR == 0) prefetch_l2(a.slots + c0 / CPR);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    wait();
    if (!live) return;
    unsigned char *mine = sm + (size_t)threadIdx.x * a.piece * (KV ? 2 : 1);
    const unsigned sv = smem_addr(mine), sk = sv + a.piece;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
                 "r"(a.piece * (KV ? 2u : 1u))
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];" ::"r"(sv),
                 "l"(a.v + c0), "r"(a.piece), "r"(b)
                 : "memory");
    if (KV)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
                     "[%1], %2, [%3];" ::"r"(sk),
                     "l"(a.k + c0), "r"(a.piece), "r"(b)
                     : "memory");
    const long long s = load8(a.slots + c0 / CPR);
    asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
                 "@!p bra W;\n}" ::"r"(b)
                 : "memory");
    if (s < 0) return;
    const uint64_t o = (uint64_t)s * CPR + c0 % CPR;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(a.vc + o),
                 "r"(sv), "r"(a.piece)
                 : "memory");
    if (KV)
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(a.kc + o),
                     "r"(sk), "r"(a.piece)
                     : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (READ)
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    else
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
