// Baselines for pkv bench only (no launcher uses them): what the ops cost when written the
// plain way. pkvk_naive_write is one thread per element of ops 2-4. The unfused chain runs
// ops 5-8 as three launches through a scratch buffer (binary32 for ops 5-7, BF16 for op 8,
// as ref/fused.c and ref/chain.c round): norm, rope, store. Both give the ops' bytes; the
// benchmark checks that the chain's pools equal the fused kernel's. pkvk_floor is no op at all:
// the dependent loads every op's launch waits for, timed as a lower bound.
#include "kernels.cuh"

extern "C" __global__ void pkvk_naive_write(const pkvk_write_params p)
{
    pkvk_grid_dependency();
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i >= p.num_tokens * p.g.row) return;
    uint64_t t = i / p.g.row, e = i % p.g.row, off = 0;
    if (pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                         p.g.block_stride, p.g.row, &off) != PKVI_SLOT_OK)
        return;
    unsigned short k = p.key ? ((const unsigned short *)p.key)[t * p.k_stride + e] : 0;
    unsigned short v = ((const unsigned short *)p.value)[t * p.v_stride + e];
    if (p.fp8) {
        ((unsigned char *)p.k_cache)[off + e] =
            pkvi_e4m3_from_f32(__fmul_rn(pkvi_bf16_to_f32(k), p.inv_k));
        ((unsigned char *)p.v_cache)[off + e] =
            pkvi_e4m3_from_f32(__fmul_rn(pkvi_bf16_to_f32(v), p.inv_v));
    } else {
        if (p.key) ((unsigned short *)p.k_cache)[off + e] = k;
        ((unsigned short *)p.v_cache)[off + e] = v;
    }
}

// One block per (token, head), one thread per element (blockDim = head_dim rounded up to 32).
extern "C" __global__ void pkvk_chain_norm(const pkvk_fused_params p, uint64_t scratch)
{
    pkvk_grid_dependency();
    __shared__ float tree[33];
    unsigned hd = p.g.head_dim, e = threadIdx.x, nh = p.g.num_kv_heads;
    uint64_t t = blockIdx.x / nh, h = blockIdx.x % nh, i = (uint64_t)blockIdx.x * hd + e;
    float x = e < hd
                  ? pkvi_bf16_to_f32(((const unsigned short *)p.key)[t * p.k_stride + h * hd + e])
                  : 0.0f;
    float leaf = __fmul_rn(x, x);
    if (p.k_fp8 && p.v_cache) { // op 8: pair leaves, thread e < hd / 2 owns (2e, 2e + 1)
        float a =
            2 * e < hd
                ? pkvi_bf16_to_f32(((const unsigned short *)p.key)[t * p.k_stride + h * hd + 2 * e])
                : 0.0f;
        float b = 2 * e < hd
                      ? pkvi_bf16_to_f32(
                            ((const unsigned short *)p.key)[t * p.k_stride + h * hd + 2 * e + 1])
                      : 0.0f;
        leaf = __fadd_rn(__fmul_rn(a, a), __fmul_rn(b, b));
    }
    float sum = pkvk_block_tree(leaf, tree);
    float rms = pkvi_rsqrt_cr(__fadd_rn(__fdiv_rn(sum, (float)hd), p.eps));
    if (e >= hd) return;
    float n = __fmul_rn(__fmul_rn(x, rms),
                        __fadd_rn(1.0f, pkvi_bf16_to_f32(((const unsigned short *)p.weight)[e])));
    if (p.k_fp8 && p.v_cache)
        ((unsigned short *)scratch)[i] = pkvi_bf16_from_f32(n);
    else
        ((float *)scratch)[i] = n;
}

// One thread per (token, pair): the pair's cos/sin once, then every head rotated in place.
extern "C" __global__ void pkvk_chain_rope(const pkvk_fused_params p, uint64_t scratch)
{
    pkvk_grid_dependency();
    unsigned half = p.rotary_dim / 2, hd = p.g.head_dim;
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (half == 0 || i >= (uint64_t)p.num_tokens * half) return;
    uint64_t t = i / half;
    unsigned pr = (unsigned)(i % half);
    int stream = p.mrope ? pkvi_mrope_stream(pr, p.section) : 0;
    float c, s;
    pkvk_rope_cs(p, ((const unsigned *)p.pos[stream])[t], pr, &s, &c);
    for (uint64_t h = 0; h < p.g.num_kv_heads; h++) {
        uint64_t b = (t * p.g.num_kv_heads + h) * hd;
        if (p.k_fp8 && p.v_cache) {
            unsigned short *x = (unsigned short *)scratch + b;
            float x0 = pkvi_bf16_to_f32(x[pr]), x1 = pkvi_bf16_to_f32(x[pr + half]);
            x[pr] = pkvi_bf16_from_f32(__fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s)));
            x[pr + half] = pkvi_bf16_from_f32(__fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s)));
        } else {
            float *x = (float *)scratch + b, x0 = x[pr], x1 = x[pr + half];
            x[pr] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
            x[pr + half] = __fadd_rn(__fmul_rn(x1, c), __fmul_rn(x0, s));
        }
    }
}

// One thread per element of a token's row: the rounding or FP8 cast and the paged store.
extern "C" __global__ void pkvk_chain_store(const pkvk_fused_params p, uint64_t scratch)
{
    pkvk_grid_dependency();
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, off = 0;
    if (i >= p.num_tokens * p.g.row) return;
    uint64_t t = i / p.g.row, e = i % p.g.row;
    if (pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                         p.g.block_stride, p.g.row, &off) != PKVI_SLOT_OK)
        return;
    if (p.k_fp8 && p.v_cache) {
        float k = pkvi_bf16_to_f32(((const unsigned short *)scratch)[i]);
        float v = pkvi_bf16_to_f32(((const unsigned short *)p.value)[t * p.v_stride + e]);
        ((unsigned char *)p.k_cache)[off + e] = pkvi_e4m3_from_f32(__fmul_rn(k, p.k_mul));
        ((unsigned char *)p.v_cache)[off + e] = pkvi_e4m3_from_f32(__fmul_rn(v, p.v_mul));
    } else if (p.k_fp8) {
        ((unsigned char *)p.k_cache)[off + e] =
            pkvi_e4m3_from_f32(__fmul_rn(((const float *)scratch)[i], p.k_mul));
    } else {
        ((unsigned short *)p.k_cache)[off + e] = pkvi_bf16_from_f32(((const float *)scratch)[i]);
    }
}

// pkv bench's floor: what any launch of an op waits for at decode sizes. One thread reads the
// first token's slot (where the op's bytes go), position and a source word together, with a
// table then a word of that position's row (the row is what RoPE reads), and stores one word
// where the slot says (in `out`, a scratch buffer, not the cache). A kernel
// writing the op's bytes cannot store before the same loads have arrived, in the same order,
// so this launch's time is a lower bound for the op's timed the same way. It prefetches its
// first loads' lines before its wait as the ops do, and lets the next launch start first thing
// as the write kernel does (kernels/grid_dep.cuh).
extern "C" __global__ void pkvk_floor(uint64_t slots, uint64_t src, uint64_t pos, uint64_t table,
                                      unsigned row_floats, uint64_t out)
{
    pkvk_launch_dependents();
    if (blockIdx.x == 0 && threadIdx.x == 0) { // as the ops do before their wait (grid_dep.cuh)
        pkvk_prefetch_l2((const long long *)slots);
        pkvk_prefetch_l2((const unsigned *)pos);
        pkvk_prefetch_l2((const unsigned *)src);
    }
    pkvk_grid_wait();
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const long long slot = *(const long long *)slots;
    const unsigned at = *(const unsigned *)pos;
    unsigned v = *(const unsigned *)src;
    if (table) v ^= __float_as_uint(((const float *)table)[(uint64_t)at * row_floats]);
    ((unsigned *)out)[(unsigned)slot & 0xffffu] = v;
}

// pkv bench's hold: the launch's one warp spins for ns nanoseconds of the global timer, so
// that the timed launch and the events around it are queued on the stream before the GPU
// reaches them, and the time between the events is the GPU's alone (without it, an event
// recorded before a launch completes while the host is still submitting the launch, and on
// the H200 every single launch carried 3-5 us of host time)
extern "C" __global__ void pkvk_delay(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
