/* The CUDA launcher's kernel choice and launch shape for write calls (lib/cuda_ops.c): the
 * 16-byte kernel when every row, stride and pointer is aligned to 8 elements, in its 32-bit form
 * when the call's chunks, slots, strides and row fit 32 bits, with blocks of 128 threads while a
 * call has at most one such block a multiprocessor; the element kernel otherwise. Only
 * descriptors and plans: nothing is launched and the addresses are never dereferenced, so pools
 * far beyond the device's memory can be described. That each kernel writes the reference's
 * bytes is for t/cuda_ops, pkv check and the fuzzers. */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "pagedkv.h"
#include "../lib/cuda_plan.h"

#include <string.h>

#define TWO32 4294967296ull

static pkv_write_desc wdesc(uint32_t nkv, uint32_t hd, uint32_t tokens)
{
    pkv_write_desc d;
    memset(&d, 0, sizeof d);
    d.cache = gpu_plan_cache(nkv, hd, tokens);
    d.num_tokens = tokens;
    d.k_scale = d.v_scale = 1.0f;
    return d;
}

static pkvk_write32_params last_wp; /* the parameters of the last plan wkernel() made */
static pkvi_plan last_wplan;

/* The device's own limits (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
 * ..._MAX_THREADS_PER_MULTIPROCESSOR = 39), not the handle's copies */
static int attr(pkv_cuda *h, int which)
{
    int v = -1;
    if (h->cu->cuDeviceGetAttribute(&v, which, h->dev)) return -1;
    return v;
}

/* Blocks of `block` threads that the device holds at once */
static long long first_wave(pkv_cuda *h, int block)
{
    return (long long)attr(h, 16) * (attr(h, 39) / block);
}

/* the write kernel the launcher would take (addresses 16-byte aligned unless `a` is not), or -2 */
static int wkernel(pkv_cuda *h, pkv_op op, const pkv_write_desc *d, uint64_t a)
{
    pkvi_plan plan;
    if (pkvi_cuda_write_plan(h, op, d, a, a, 1ull << 20, a, a, 0, &last_wp, &plan) != PKV_OK) {
        diag("rejected: %s", pkv_last_error());
        return -2;
    }
    last_wplan = plan;
    return plan.kernel;
}

/* The 32-bit kernel's blocks: 128 threads while a call has at most one such block a
 * multiprocessor (chunks <= 128 x SMs), else 256; the first wave's blocks prefetch. 8 x 128 is
 * 128 chunks a token, so SMs tokens fill one block a multiprocessor. */
static void write_blocks(pkv_cuda *h)
{
    const uint64_t a = 1ull << 20;
    const int sms = attr(h, 16);
    const struct {
        uint32_t tokens;
        unsigned block, grid;
    } cs[] = {
        {1, 128, 1},
        {2, 128, 2},
        {(uint32_t)sms - 1u, 128, (unsigned)sms - 1u},
        {(uint32_t)sms, 128, (unsigned)sms},
        {(uint32_t)sms + 1u, 256, ((unsigned)sms + 1u + 1u) / 2u},
        {(uint32_t)sms * 2u, 256, (unsigned)sms},
        {16384, 256, 8192},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        pkv_write_desc d = wdesc(8, 128, cs[i].tokens);
        is_int(wkernel(h, PKV_OP_WRITE_BF16, &d, a), PKVI_K_WRITE_VEC32,
               "8 x 128 x %u (%d SMs): 32-bit kernel", cs[i].tokens, sms);
        is_int(last_wplan.block, cs[i].block, "  blocks of %u", cs[i].block);
        is_int(last_wplan.grid, cs[i].grid, "  %u of them", cs[i].grid);
        is_int(last_wp.prefetch_blocks, first_wave(h, (int)cs[i].block),
               "  the blocks of a first wave prefetch");
    }
    {
        pkv_write_desc d = wdesc(1, 24, 0x55555556u); /* the 64-bit kernel keeps 256 */
        is_int(wkernel(h, PKV_OP_WRITE_BF16, &d, a), PKVI_K_WRITE_VEC, "64-bit kernel");
        is_int(last_wplan.block, 256, "  blocks of 256");
    }
}

/* Write calls (lib/cuda_ops.c): the 16-byte kernel when every row, stride and pointer is aligned
 * to 8 elements, in its 32-bit form (divisors from the launch) when the chunk count, the valid
 * slots, the block stride, the row and the row strides fit 32 bits, and the 64-bit form on
 * either side of each bound; the element kernel when unaligned. */
static void writes(pkv_cuda *h)
{
    static const pkv_op ops[] = {PKV_OP_WRITE_BF16, PKV_OP_WRITE_V_BF16, PKV_OP_WRITE_FP8};
    const uint64_t a = 1ull << 20;
    pkv_write_desc d;
    for (int i = 0; i < 3; i++) {
        d = wdesc(8, 128, 64);
        d.cache.block_size = 7;
        is_int(wkernel(h, ops[i], &d, a), PKVI_K_WRITE_VEC32, "%s 8 x 128: 32-bit 16-byte kernel",
               pkv_op_name(ops[i]));
        ok(last_wp.div_cpr.d == 128u && last_wp.div_bs.d == 7u, "  divisors 128 and 7 (%u, %u)",
           last_wp.div_cpr.d, last_wp.div_bs.d);
        /* 64 tokens: 8,192 chunks, 64 blocks of 128 */
        is_int(last_wp.prefetch_blocks, first_wave(h, attr(h, 16) >= 64 ? 128 : 256),
               "  the blocks of a first wave prefetch");
        is_int(wkernel(h, ops[i], &d, a + 2), PKVI_K_WRITE,
               "  sources one element off: element kernel");
    }
    /* a slot's row at slot x row when the blocks are dense (kernels/write_vec.cu) */
    d = wdesc(8, 128, 64);
    ok(wkernel(h, ops[0], &d, a) == PKVI_K_WRITE_VEC32 && last_wp.flat == 1,
       "dense blocks (block stride 0): 32-bit, flat (%u)", last_wp.flat);
    d.cache.block_stride = 16u * 1024u;
    ok(wkernel(h, ops[0], &d, a) == PKVI_K_WRITE_VEC32 && last_wp.flat == 1,
       "  block stride 16 x 1,024 given: flat (%u)", last_wp.flat);
    d.cache.block_stride = 16u * 1024u + 8u;
    ok(wkernel(h, ops[0], &d, a) == PKVI_K_WRITE_VEC32 && last_wp.flat == 0,
       "  block stride 16 x 1,024 + 8: not flat (%u)", last_wp.flat);
    d.cache.block_size = 7;
    d.cache.block_stride = 0;
    ok(wkernel(h, ops[2], &d, a) == PKVI_K_WRITE_VEC32 && last_wp.flat == 1,
       "  block_size 7, dense: flat (%u)", last_wp.flat);
    d.cache.block_stride = 8u * 1024u;
    ok(wkernel(h, ops[2], &d, a) == PKVI_K_WRITE_VEC32 && last_wp.flat == 0,
       "  block_size 7, block stride 8 x 1,024: not flat (%u)", last_wp.flat);
    d = wdesc(8, 128, 64);
    d.cache.block_stride = TWO32 - 8u;
    is_int(wkernel(h, ops[0], &d, a), PKVI_K_WRITE_VEC32, "block stride 2^32 - 8: 32-bit");
    d.cache.block_stride = TWO32;
    is_int(wkernel(h, ops[0], &d, a), PKVI_K_WRITE_VEC, "block stride 2^32: 64-bit");
    d = wdesc(8, 128, 64);
    d.cache.num_blocks = TWO32 / 16u;
    is_int(wkernel(h, ops[2], &d, a), PKVI_K_WRITE_VEC32, "2^32 slots: 32-bit");
    d.cache.num_blocks = TWO32 / 16u + 1u;
    is_int(wkernel(h, ops[2], &d, a), PKVI_K_WRITE_VEC, "2^32 + 16 slots: 64-bit");
    d = wdesc(8, 128, 64);
    d.k_row_stride = TWO32 - 8u;
    is_int(wkernel(h, ops[0], &d, a), PKVI_K_WRITE_VEC32, "K row stride 2^32 - 8: 32-bit");
    d.k_row_stride = TWO32;
    is_int(wkernel(h, ops[0], &d, a), PKVI_K_WRITE_VEC, "K row stride 2^32: 64-bit");
    is_int(wkernel(h, ops[1], &d, a), PKVI_K_WRITE_VEC32, "  write_v_bf16 ignores it: 32-bit");
    d = wdesc(8, 128, 64);
    d.v_row_stride = TWO32;
    is_int(wkernel(h, ops[1], &d, a), PKVI_K_WRITE_VEC, "V row stride 2^32: 64-bit");
    d = wdesc(1, 24, 0x55555555u); /* 3 chunks a row: 2^32 - 1 chunks */
    is_int(wkernel(h, ops[0], &d, a), PKVI_K_WRITE_VEC32, "2^32 - 1 chunks: 32-bit");
    d = wdesc(1, 24, 0x55555556u);
    is_int(wkernel(h, ops[0], &d, a), PKVI_K_WRITE_VEC, "2^32 + 2 chunks: 64-bit");
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    writes(h);
    write_blocks(h);
    pkv_cuda_close(h);
    return done_testing();
}
