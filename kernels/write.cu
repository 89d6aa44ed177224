// Ops 1-4 on the device: the slot fill, the BF16 copies and the FP8 write (ref/fill_slots.c,
// ref/write.c). One block per token; elements are read and written one at a time, so any
// element alignment and any stride work.
#include "kernels.cuh"

extern "C" __global__ void pkvk_fill_slots(const pkvk_fill_slots_params p)
{
    pkvk_grid_dependency();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.count) {
        const int *table = (const int *)p.block_table;
        unsigned long long pos = (unsigned long long)p.start_pos + i, blk = pos / p.block_size;
        int entry = blk < p.table_len ? table[blk] : -1;
        ((long long *)p.slots)[i] =
            entry < 0 ? -1 : (long long)((unsigned long long)entry * p.block_size + pos % p.block_size);
    }
}

extern "C" __global__ void pkvk_write(const pkvk_write_params p)
{
    pkvk_grid_dependency();
    unsigned t = blockIdx.x;
    uint64_t off = 0;
    int kind = pkvi_slot_offset(((const long long *)p.slots)[t], p.g.num_slots, p.g.block_size,
                                p.g.block_stride, p.g.row, &off);
    if (kind == PKVI_SLOT_OOB && threadIdx.x == 0 && p.oob)
        atomicAdd((unsigned long long *)p.oob, 1ull);
    if (kind != PKVI_SLOT_OK) return;
    const unsigned short *k = (const unsigned short *)p.key + t * p.k_stride;
    const unsigned short *v = (const unsigned short *)p.value + t * p.v_stride;
    for (unsigned long long e = threadIdx.x; e < p.g.row; e += blockDim.x) {
        if (p.fp8) {
            ((unsigned char *)p.k_cache)[off + e] =
                pkvi_e4m3_from_f32(__fmul_rn(pkvi_bf16_to_f32(k[e]), p.inv_k));
            ((unsigned char *)p.v_cache)[off + e] =
                pkvi_e4m3_from_f32(__fmul_rn(pkvi_bf16_to_f32(v[e]), p.inv_v));
        } else {
            if (p.key) ((unsigned short *)p.k_cache)[off + e] = k[e];
            ((unsigned short *)p.v_cache)[off + e] = v[e];
        }
    }
}
