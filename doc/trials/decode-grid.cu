// A standalone measurement for issue 7's decode rows, not part of the library or its build:
// what a launch's grid costs by itself in CUDA-graph replays with programmatic dependent
// launch, against what a write of the same grid costs. The tables' xempty divides by an empty
// kernel of one block of 32 threads (pkvk_probe); the writes at 64 tokens run 64 blocks (8 x
// 128) and miss 1.25x of it. This program times, in the launch shape of pkvk_write_vec32
// (trigger first, L2 prefetch of the inputs, wait, every load, the slot's test, the stores):
//   empty  B blocks of T threads, thread 0 stores a word after the wait (B = 1, T = 32 is the
//          tables' empty kernel)
//   v      a V-only copy of n 16-byte chunks through a slot table (one load, one store a chunk;
//          n = 16,384 moves write_bf16's 64-token bytes with K and V in separate threads)
//   kv     the same with K (two loads, two stores a chunk: write_bf16's bytes)
//   floor  one thread: slot, 16 bytes of V, a store (the tables' floor kernel without a table)
// with cpt chunks a thread (grid-stride, every load before the first store), over input sets in
// turn like pkv bench: 64 sets (SETS=N: N; COLD=1: 512), one launch each, graphs of 64 nodes
// (more sets: several graphs, replayed in turn; fewer: the sets repeat in the graph). Rows of 128
// chunks (8 x 128 BF16: n = 128 x tokens); set s writes its own rows of the pools. SWEEP=1 times
// the write kernel's shape (blocks of 128, a chunk a thread) at 4 to 512 sets instead: for n =
// 8,192 the sets' inputs and rows are 2 to 256 MiB. SEPARATE=1: every set's buffers are their
// own allocations of the call's size, as in pkv bench, instead of parts of four large ones.
// SHAPES=1 times other launch shapes at 8, 64 and 128 tokens instead (fifty-fourth session):
// the copies and the empty kernel launched without programmatic dependent launch (plain), a
// V-only copy that lets the next launch start only after its stores (v_late), and copies by
// each multiprocessor's bulk copy engine (TMA: tma_v, tma_kv; _read: waiting for the bulk
// stores only until they have read shared memory), a thread a piece of 256 to 2,048 bytes,
// 1 to 32 threads a block. Every copy's configuration is first run once into two poisoned
// pools of its own, compared whole: the written rows with the inputs, the rest with the poison
// (a mismatch exits 1).
// Medians of ROUNDS x 40 replays, each replay after a spin kernel that holds the stream until
// the host has queued it (as pkv bench does), per launch.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o decode-grid decode-grid.cu
//   [SEPARATE=1] [SETS=N | COLD=1 | SWEEP=1 | SHAPES=1] ./decode-grid [ROUNDS] > out.csv
//
// Written in the fifty-third session; its results are in doc/PERFORMANCE-HISTORY.md.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { K_EMPTY, K_V, K_KV, K_FLOOR, K_V_LATE, K_TMA_V, K_TMA_KV, K_TMA_V_R, K_TMA_KV_R };
enum { NODES = 64, CPR = 128, MAX_N = 16384, MAX_SETS = 512, REPLAYS = 40, WARM = 5 };
static const char *kind_name[] = {"empty", "v",      "kv",         "floor",      "v_late",
                                  "tma_v", "tma_kv", "tma_v_read", "tma_kv_read"};

struct args {
    const uint4 *k, *v;
    const long long *slots;
    uint4 *kc, *vc;
    unsigned *out;
    unsigned n, piece; // piece: bytes a thread's bulk copy (TMA kinds)
};

__device__ __forceinline__ void prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// Loads in volatile asm, so that, as in pkvk_write_vec32, every load of a thread issues before
// its slot is tested and before its first store (plain loads were sunk past the test: a second
// round trip)
__device__ __forceinline__ uint4 load16(const uint4 *p)
{
    uint4 x;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w)
                 : "l"(p));
    return x;
}
__device__ __forceinline__ long long load8(const long long *p)
{
    long long x;
    asm volatile("ld.global.s64 %0, [%1];" : "=l"(x) : "l"(p));
    return x;
}

__device__ __forceinline__ void trigger(void)
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ void wait(void)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

__global__ void empty_kernel(const args a)
{
    trigger();
    wait();
    if (blockIdx.x == 0 && threadIdx.x == 0) *a.out = 1;
}

__global__ void floor_kernel(const args a)
{
    trigger();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        prefetch_l2(a.slots);
        prefetch_l2(a.v);
    }
    wait();
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const long long s = load8(a.slots);
    const uint4 v = load16(a.v);
    a.out[(unsigned)s & 0xffffu] = v.x;
}

// CPT chunks a thread, grid-stride; every load before any store
template <bool KV, int CPT> __global__ void copy_kernel(const args a)
{
    trigger();
    const unsigned i0 = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
#pragma unroll
    for (int j = 0; j < CPT; j++) {
        const unsigned i = i0 + j * step;
        if (i < a.n) {
            if (KV) prefetch_l2(a.k + i);
            prefetch_l2(a.v + i);
            if (i % CPR == 0) prefetch_l2(a.slots + i / CPR);
        }
    }
    wait();
    uint4 kx[CPT], vx[CPT];
    long long s[CPT];
#pragma unroll
    for (int j = 0; j < CPT; j++) {
        const unsigned i = i0 + j * step;
        if (i < a.n) {
            if (KV) kx[j] = load16(a.k + i);
            vx[j] = load16(a.v + i);
            s[j] = load8(a.slots + i / CPR);
        }
    }
#pragma unroll
    for (int j = 0; j < CPT; j++) {
        const unsigned i = i0 + j * step;
        if (i < a.n && s[j] >= 0) {
            const uint64_t o = (uint64_t)s[j] * CPR + i % CPR;
            if (KV) a.kc[o] = kx[j];
            a.vc[o] = vx[j];
        }
    }
}

#include "decode-shapes.cuh"

extern "C" __global__ void hold(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}

struct config {
    unsigned kind, n, threads, cpt, blocks, sets;
    unsigned piece = 0; // TMA kinds: bytes a thread
    bool plain = false; // launched without programmatic dependent launch
};

struct buffers {
    uint4 *k, *v, *kc, *vc;
    long long *slots;
    unsigned *out;
    bool separate;
};

typedef void (*kernel)(args);
static kernel kernel_for(const config &c)
{
    static const kernel copies[2][4] = {
        {copy_kernel<false, 1>, copy_kernel<false, 2>, copy_kernel<false, 4>, copy_kernel<false, 8>},
        {copy_kernel<true, 1>, copy_kernel<true, 2>, copy_kernel<true, 4>, copy_kernel<true, 8>}};
    return c.kind == K_EMPTY      ? empty_kernel
           : c.kind == K_FLOOR    ? floor_kernel
           : c.kind == K_V_LATE   ? copy_late_kernel
           : c.kind == K_TMA_V    ? tma_kernel<false, false>
           : c.kind == K_TMA_KV   ? tma_kernel<true, false>
           : c.kind == K_TMA_V_R  ? tma_kernel<false, true>
           : c.kind == K_TMA_KV_R ? tma_kernel<true, true>
                                  : copies[c.kind == K_KV][__builtin_ctz(c.cpt)];
}
static bool is_tma(unsigned kind)
{
    return kind >= K_TMA_V;
}
static bool has_k(unsigned kind)
{
    return kind == K_KV || kind == K_TMA_KV || kind == K_TMA_KV_R;
}

static void launch(const config &c, const args &a, cudaStream_t st)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(c.blocks);
    lc.blockDim = dim3(c.threads);
    lc.stream = st;
    lc.dynamicSmemBytes = is_tma(c.kind) ? c.threads * c.piece * (has_k(c.kind) ? 2 : 1) : 0;
    lc.attrs = attr;
    lc.numAttrs = c.plain ? 0 : 1;
    const kernel fn = kernel_for(c);
    CK(cudaLaunchKernelEx(&lc, fn, a));
}

// Per-launch microseconds of each replay: graphs of NODES launches over the sets in turn
static std::vector<double> time_config(const config &c, const buffers &b, cudaStream_t st)
{
    const unsigned graphs = c.sets > NODES ? c.sets / NODES : 1;
    std::vector<cudaGraphExec_t> ex(graphs);
    // SEPARATE=1: every set's buffers their own allocations of the call's size, as pkv bench's
    std::vector<args> own;
    if (b.separate) {
        const size_t n = c.n ? c.n : (unsigned)CPR, tokens = (n + CPR - 1) / CPR;
        std::vector<long long> slots(tokens);
        for (size_t t = 0; t < tokens; t++) slots[t] = (long long)t;
        for (unsigned s = 0; s < c.sets; s++) {
            uint4 *k, *v, *kc, *vc;
            long long *sl;
            CK(cudaMalloc(&k, n * 16));
            CK(cudaMalloc(&v, n * 16));
            CK(cudaMalloc(&sl, tokens * 8));
            CK(cudaMalloc(&kc, tokens * CPR * 16));
            CK(cudaMalloc(&vc, tokens * CPR * 16));
            CK(cudaMemset(k, 0x11, n * 16));
            CK(cudaMemset(v, 0x22, n * 16));
            CK(cudaMemcpy(sl, slots.data(), tokens * 8, cudaMemcpyHostToDevice));
            own.push_back({k, v, sl, kc, vc, b.out, c.n, c.piece});
        }
    }
    for (unsigned g = 0; g < graphs; g++) {
        cudaGraph_t graph;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (unsigned k = 0; k < NODES; k++) {
            const size_t s = ((size_t)g * NODES + k) % c.sets;
            args a = {b.k + s * MAX_N,
                      b.v + s * MAX_N,
                      b.slots + s * (MAX_N / CPR),
                      b.kc,
                      b.vc,
                      b.out,
                      c.n,
                      c.piece};
            if (b.separate) a = own[s];
            launch(c, a, st);
        }
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphInstantiate(&ex[g], graph, 0));
        CK(cudaGraphDestroy(graph));
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> us;
    for (unsigned r = 0; r < WARM + REPLAYS; r++) {
        hold<<<1, 32, 0, st>>>(40000);
        CK(cudaEventRecord(e0, st));
        CK(cudaGraphLaunch(ex[r % graphs], st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= WARM) us.push_back(ms * 1000.0 / NODES);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    for (auto &e : ex) CK(cudaGraphExecDestroy(e));
    for (auto &a : own) {
        CK(cudaFree((void *)a.k));
        CK(cudaFree((void *)a.v));
        CK(cudaFree((void *)a.slots));
        CK(cudaFree(a.kc));
        CK(cudaFree(a.vc));
    }
    return us;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// SHAPES=1: the launch shapes other than the write kernel's at decode sizes (8, 64 and 128
// tokens of 8 x 128 BF16): launched without programmatic dependent launch, the next launch let
// start only after the stores, and the copies by each multiprocessor's bulk copy engine (TMA)
static std::vector<config> shape_configs(unsigned ns)
{
    std::vector<config> cs;
    cs.push_back({K_FLOOR, 1, 32, 1, 1, ns});
    cs.push_back({K_EMPTY, 0, 32, 1, 1, ns});
    config plain = {K_EMPTY, 0, 32, 1, 1, ns};
    plain.plain = true;
    cs.push_back(plain);
    for (unsigned n : {1024u, 8192u, 16384u}) {
        for (unsigned kind : {K_V, K_KV, K_V_LATE}) {
            if (kind == K_KV && n == 16384) continue;
            config c = {kind, n, 128, 1, (n + 127) / 128, ns};
            cs.push_back(c);
            if (kind == K_V_LATE) continue;
            c.plain = true;
            cs.push_back(c);
        }
        for (unsigned kind : {K_TMA_V, K_TMA_KV, K_TMA_V_R, K_TMA_KV_R})
            for (unsigned piece : {256u, 512u, 1024u, 2048u})
                for (unsigned t : {1u, 2u, 8u, 32u}) {
                    const unsigned pieces = n * 16 / piece;
                    if (has_k(kind) && n == 16384) continue;
                    if (t > pieces || t * piece * (has_k(kind) ? 2 : 1) > 64 * 1024) continue;
                    config c = {kind, n, t, 1, (pieces + t - 1) / t, ns};
                    c.piece = piece;
                    cs.push_back(c);
                }
    }
    return cs;
}

__global__ void fill(uint4 *p, size_t n, unsigned salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_uint4((unsigned)i, (unsigned)(i >> 32) ^ salt, ~(unsigned)i, salt);
}

enum { POISON = 0xa5, VERIFY_N = 2 * MAX_N }; // chunks of each verification pool

// One launch of c on set 0 into two pools of their own (vk, vv: VERIFY_N chunks each), poisoned
// first: the rows of set 0's tokens must be the inputs (V's, and K's for the kinds with K), bit
// for bit, and every other byte of both pools still the poison
static bool verify(const config &c, const buffers &b, uint4 *vk, uint4 *vv, cudaStream_t st)
{
    if (c.kind == K_EMPTY || c.kind == K_FLOOR) return true;
    CK(cudaMemsetAsync(vk, POISON, (size_t)VERIFY_N * 16, st));
    CK(cudaMemsetAsync(vv, POISON, (size_t)VERIFY_N * 16, st));
    launch(c, {b.k, b.v, b.slots, vk, vv, b.out, c.n, c.piece}, st);
    CK(cudaStreamSynchronize(st));
    std::vector<unsigned char> in((size_t)c.n * 16), out((size_t)VERIFY_N * 16);
    for (int kv = 0; kv < 2; kv++) {
        const bool written = kv == 0 || has_k(c.kind);
        CK(cudaMemcpy(in.data(), kv ? b.k : b.v, in.size(), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(out.data(), kv ? vk : vv, out.size(), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < out.size(); i++)
            if (out[i] != (written && i < in.size() ? in[i] : (unsigned char)POISON)) return false;
    }
    return true;
}

// The configurations: every grid at one number of sets, or (SWEEP=1) the write kernel's
// shape (blocks of 128, a chunk a thread) at each number of sets
static std::vector<config> configs(unsigned sets, bool sweep)
{
    std::vector<config> cs;
    const std::vector<unsigned> all_sets = {4, 8, 16, 32, 64, 128, 256, MAX_SETS};
    for (unsigned ns : sweep ? all_sets : std::vector<unsigned>{sets}) {
        cs.push_back({K_FLOOR, 1, 32, 1, 1, ns});
        cs.push_back({K_EMPTY, 0, 32, 1, 1, ns});
        if (sweep) {
            cs.push_back({K_EMPTY, 0, 128, 1, 64, ns});
            for (unsigned n : {128u, 1024u, 8192u, 16384u}) {
                cs.push_back({K_V, n, 128, 1, (n + 127) / 128, ns});
                if (n < 16384) cs.push_back({K_KV, n, 128, 1, (n + 127) / 128, ns});
            }
            continue;
        }
        for (unsigned t : {32u, 64u, 128u, 256u, 512u, 1024u})
            for (unsigned bl : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u, 132u, 256u})
                if (t != 32 || bl != 1) cs.push_back({K_EMPTY, 0, t, 1, bl, ns});
        for (unsigned kind : {K_V, K_KV})
            for (unsigned n : {128u, 1024u, 8192u, 16384u})
                for (unsigned t : {32u, 64u, 128u, 256u, 512u, 1024u})
                    for (unsigned cpt : {1u, 2u, 4u, 8u}) {
                        if ((size_t)t * cpt > 2u * n && !(t == 32 && cpt == 1)) continue;
                        if (kind == K_KV && n == 16384) continue;
                        const config c = {kind, n, t, cpt, (n + t * cpt - 1) / (t * cpt), ns};
                        cudaFuncAttributes fa;
                        CK(cudaFuncGetAttributes(&fa, kernel_for(c)));
                        if ((unsigned)fa.maxThreadsPerBlock < t) continue; // registers
                        cs.push_back(c);
                    }
    }
    return cs;
}

int main(int argc, char **argv)
{
    const unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
    const char *cold = getenv("COLD"), *sweep = getenv("SWEEP"), *sets = getenv("SETS"),
               *shapes = getenv("SHAPES");
    const bool sweeping = sweep && *sweep == '1';
    const char *sep = getenv("SEPARATE");
    buffers b;
    b.separate = sep && *sep == '1';
    const size_t chunks = (size_t)MAX_SETS * MAX_N, tokens = chunks / CPR;
    CK(cudaMalloc(&b.k, chunks * 16));
    CK(cudaMalloc(&b.v, chunks * 16));
    CK(cudaMalloc(&b.kc, chunks * 16));
    CK(cudaMalloc(&b.vc, chunks * 16));
    CK(cudaMalloc(&b.slots, tokens * 8));
    CK(cudaMalloc(&b.out, 65536 * 4));
    fill<<<1024, 256>>>(b.k, chunks, 0x11u);
    fill<<<1024, 256>>>(b.v, chunks, 0x22u);
    for (auto fn : {tma_kernel<false, false>, tma_kernel<true, false>, tma_kernel<false, true>,
                    tma_kernel<true, true>})
        CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
    // set s's token t goes to row s x MAX_N / CPR + t of the pools: every set its own rows
    std::vector<long long> slots(tokens);
    for (size_t i = 0; i < tokens; i++) slots[i] = (long long)i;
    CK(cudaMemcpy(b.slots, slots.data(), tokens * 8, cudaMemcpyHostToDevice));
    const unsigned nsets =
        sets ? (unsigned)atoi(sets) : cold && *cold == '1' ? (unsigned)MAX_SETS : (unsigned)NODES;
    if (nsets < 1 || nsets > MAX_SETS || (nsets > NODES && nsets % NODES)) {
        fprintf(stderr, "SETS: 1 to %d, a multiple of %d above it\n", MAX_SETS, NODES);
        return 2;
    }
    const std::vector<config> cs =
        shapes && *shapes == '1' ? shape_configs(nsets) : configs(nsets, sweeping);

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    uint4 *vk, *vv;
    CK(cudaMalloc(&vk, (size_t)VERIFY_N * 16));
    CK(cudaMalloc(&vv, (size_t)VERIFY_N * 16));
    unsigned bad = 0;
    for (const config &c : cs)
        if (!verify(c, b, vk, vv, st)) {
            fprintf(stderr, "MISMATCH: %s n %u threads %u piece %u\n", kind_name[c.kind], c.n,
                    c.threads, c.piece);
            bad++;
        }
    fprintf(stderr, "verified %zu configurations, %u mismatched\n", cs.size(), bad);
    CK(cudaFree(vk));
    CK(cudaFree(vv));
    if (bad) return 1;
    std::vector<std::vector<double>> all(cs.size());
    for (unsigned r = 0; r < rounds; r++)
        for (size_t i = 0; i < cs.size(); i++) {
            const size_t j = (i + r * cs.size() / rounds) % cs.size(); // order rotated a round
            auto us = time_config(cs[j], b, st);
            all[j].insert(all[j].end(), us.begin(), us.end());
        }
    CK(cudaDeviceSynchronize());
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# %s, %u SMs, %u rounds x %d replays of %d launches%s; x = over the empty kernel of "
           "1 block of 32 at as many sets\n",
           prop.name, prop.multiProcessorCount, rounds, REPLAYS, NODES,
           b.separate ? ", every set's buffers their own allocations" : "");
    printf("kind,chunks,tokens,threads,cpt,blocks,sets,piece,plain,us_median,us_p10,us_p90,"
           "x_empty1\n");
    for (size_t i = 0; i < cs.size(); i++) {
        double empty1 = 0;
        for (size_t e = 0; e < cs.size(); e++)
            if (cs[e].kind == K_EMPTY && cs[e].threads == 32 && cs[e].blocks == 1 &&
                cs[e].sets == cs[i].sets && !cs[e].plain)
                empty1 = median(all[e]);
        std::vector<double> v = all[i];
        std::sort(v.begin(), v.end());
        const double m = median(v);
        printf("%s,%u,%u,%u,%u,%u,%u,%u,%d,%.4f,%.4f,%.4f,%.3f\n", kind_name[cs[i].kind], cs[i].n,
               cs[i].n / CPR, cs[i].threads, cs[i].cpt, cs[i].blocks, cs[i].sets, cs[i].piece,
               (int)cs[i].plain, m, v[v.size() / 10], v[v.size() * 9 / 10], m / empty1);
    }
    return 0;
}
