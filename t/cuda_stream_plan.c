/* The CUDA launcher's streaming variants of the halves kernels (lib/cuda_warp_plan.c): which
 * fused calls take them for a given L2 size, and the one-wave launch of those that do. Moved out
 * of t/cuda_plan.c (which checks the choice among the other kernels) as they were. Only
 * descriptors and plans: nothing is launched. */
#include "config.h"
#include "fused_plan.h"

/* The streaming variants of the halves kernels (lib/cuda_warp_plan.c): taken by calls whose K
 * (and V) bytes read and written are at most 1.5 x the L2's, by no call past that (an L2 set
 * here on both sides of each call's bytes), and by none with no L2 size; the other warp kernels
 * have none, whatever the L2. Bytes an item: fused_bf16 and MRoPE 4 head_dim, fused_fp8_k 3,
 * fused_fp8_kv 6. (Calls whose halves kernel does not depend on the multiprocessor count.) */
static void streaming(pkv_cuda *h)
{
    static const struct {
        pkv_op op;
        uint32_t heads, hd, tokens;
        int base, stream; /* the kernel without an L2 size, and the call's streaming one; -1:
                           * another kernel, with no streaming variant */
    } cs[] = {
        {PKV_OP_FUSED_BF16, 1, 128, 65536, PKVI_K_FUSED_HALVES, PKVI_K_FUSED_HALVES_STREAM},
        {PKV_OP_FUSED_FP8_K, 1, 128, 16384, PKVI_K_FUSED_HALVES, PKVI_K_FUSED_HALVES_STREAM},
        {PKV_OP_FUSED_FP8_K, 4, 256, 16384, PKVI_K_FUSED_HALVES16, PKVI_K_FUSED_HALVES16_STREAM},
        {PKV_OP_FUSED_FP8_KV, 1, 128, 65536, PKVI_K_FUSED_FP8_KV_HALVES_TREE,
         PKVI_K_FUSED_FP8_KV_HALVES_TREE_STREAM},
        {PKV_OP_FUSED_FP8_KV, 8, 128, 16384, PKVI_K_FUSED_FP8_KV_HALVES_TREE,
         PKVI_K_FUSED_FP8_KV_HALVES_TREE_STREAM},
        {PKV_OP_FUSED_MROPE_BF16, 2, 128, 65536, PKVI_K_FUSED_MROPE_HALVES,
         PKVI_K_FUSED_MROPE_HALVES_STREAM},
        {PKV_OP_FUSED_MROPE_BF16, 8, 128, 16384, PKVI_K_FUSED_MROPE_HALVES16,
         PKVI_K_FUSED_MROPE_HALVES16_STREAM},
        {PKV_OP_FUSED_BF16, 16, 64, 16384, -1, -1},
        {PKV_OP_FUSED_FP8_K, 16, 64, 65536, -1, -1},
        {PKV_OP_FUSED_MROPE_BF16, 16, 64, 16384, -1, -1},
        {PKV_OP_FUSED_BF16, 16, 64, 1024, -1, -1},
        {PKV_OP_FUSED_BF16, 16, 128, 65536, -1, -1},
        {PKV_OP_FUSED_BF16, 4, 256, 65536, -1, -1},
        {PKV_OP_FUSED_FP8_KV, 4, 256, 65536, -1, -1},
        {PKV_OP_FUSED_BF16, 8, 128, 64, -1, -1},
    };
    const int l2 = h->l2_bytes;
    diag("this GPU's L2: %d bytes", l2);
    ok(l2 > 0, "the handle knows the L2's size");
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const pkv_fused_desc d = desc(cs[i].heads, cs[i].hd, cs[i].tokens);
        const char *name = pkv_op_name(cs[i].op);
        const uint64_t per = cs[i].op == PKV_OP_FUSED_FP8_KV  ? 6u * cs[i].hd
                             : cs[i].op == PKV_OP_FUSED_FP8_K ? 3u * cs[i].hd
                                                              : 4u * cs[i].hd,
                       bytes = per * cs[i].heads * cs[i].tokens;
        const uint64_t least = (bytes * 2u + 2u) / 3u; /* the least L2 whose 1.5 x holds them */
        int k0;
        if (pkv_cuda_rope_table(h, 1e4f, cs[i].hd, 1000) != PKV_OK) bail("%s", pkv_last_error());
        h->l2_bytes = 0;
        k0 = kernel(h, cs[i].op, &d, NULL);
        if (cs[i].base < 0) {
            h->l2_bytes = 0x7fffffff;
            is_int(kernel(h, cs[i].op, &d, NULL), k0,
                   "%s %u x %u x %u: kernel %d, no streaming variant at any L2 size", name,
                   cs[i].heads, cs[i].hd, cs[i].tokens, k0);
            is_int(pkvi_cuda_streaming_variant(k0), k0, "  none listed");
        } else {
            is_int(k0, cs[i].base, "%s %u x %u x %u, %llu bytes: kernel %d without an L2 size",
                   name, cs[i].heads, cs[i].hd, cs[i].tokens, (unsigned long long)bytes,
                   cs[i].base);
            h->l2_bytes = (int)least;
            is_int(kernel(h, cs[i].op, &d, NULL), cs[i].stream, "  L2 of %llu bytes: kernel %d",
                   (unsigned long long)least, cs[i].stream);
            h->l2_bytes = (int)least - 1;
            is_int(kernel(h, cs[i].op, &d, NULL), cs[i].base, "  L2 a byte smaller: kernel %d",
                   cs[i].base);
            is_int(pkvi_cuda_streaming_variant(cs[i].base), cs[i].stream,
                   "  its streaming variant");
        }
        pkv_cuda_rope_table(h, 1e4f, cs[i].hd, 0);
    }
    h->l2_bytes = l2;
}

/* At head_dim 128 the calls that stream take the 16-element kernels with fewer tiles a warp of
 * their one wave (lib/cuda_warp_plan.c): fused_fp8_k from 1 (3 otherwise), fused_bf16 below 2
 * too, in the form of later copies (HALVES16, not the _early form it takes from 8). At 8 heads
 * T tokens are T tiles; each call with an L2 whose 1.5 x holds its bytes exactly, and with a
 * byte less, where it keeps the rule without streaming */
static void streaming_sizes(pkv_cuda *h)
{
    static const struct {
        pkv_op op;
        long long waves, less; /* tokens: waves x the wave's warps - less */
        int stream, plain;     /* the kernel when the call streams, and when not */
    } cs[] = {
        {PKV_OP_FUSED_FP8_K, 1, 0, PKVI_K_FUSED_HALVES16_STREAM, PKVI_K_FUSED_HALVES},
        {PKV_OP_FUSED_FP8_K, 1, 1, PKVI_K_FUSED_HALVES_STREAM, PKVI_K_FUSED_HALVES},
        {PKV_OP_FUSED_FP8_K, 3, 0, PKVI_K_FUSED_HALVES16_STREAM, PKVI_K_FUSED_HALVES16},
        {PKV_OP_FUSED_BF16, 2, 1, PKVI_K_FUSED_HALVES_STREAM, PKVI_K_FUSED_HALVES},
        {PKV_OP_FUSED_BF16, 2, 0, PKVI_K_FUSED_HALVES_STREAM, PKVI_K_FUSED_HALVES},
        {PKV_OP_FUSED_BF16, 8, 1, PKVI_K_FUSED_HALVES_STREAM, PKVI_K_FUSED_HALVES},
        {PKV_OP_FUSED_BF16, 8, 0, PKVI_K_FUSED_HALVES16_EARLY, PKVI_K_FUSED_HALVES16_EARLY},
        {PKV_OP_FUSED_MROPE_BF16, 1, 1, PKVI_K_FUSED_MROPE_HALVES16_STREAM,
         PKVI_K_FUSED_MROPE_HALVES16},
    };
    const int l2 = h->l2_bytes;
    const long long w =
        (long long)h->sm_count * PKVK_HALVES16_BLOCKS_PER_SM * (PKVK_HALVES16_THREADS / 32);
    if (pkv_cuda_rope_table(h, 1e4f, 128, 1000) != PKV_OK) bail("%s", pkv_last_error());
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const pkv_fused_desc d = desc(8, 128, (uint32_t)(cs[i].waves * w - cs[i].less));
        const uint64_t bytes = (cs[i].op == PKV_OP_FUSED_FP8_K ? 3u : 4u) * 128u * 8u *
                               (uint64_t)d.num_tokens,
                       least = (bytes * 2u + 2u) / 3u;
        unsigned grid = 0;
        if (least > 0x7fffffffu) bail("%llu bytes: past an int L2", (unsigned long long)bytes);
        h->l2_bytes = (int)least;
        is_int(kernel(h, cs[i].op, &d, &grid), cs[i].stream,
               "%s 8 x 128, %u tokens (%lld waves - %lld), streaming: kernel %d",
               pkv_op_name(cs[i].op), d.num_tokens, cs[i].waves, cs[i].less, cs[i].stream);
        {
            const int e8 = cs[i].stream == PKVI_K_FUSED_HALVES_STREAM;
            const int per_sm = e8 ? PKVK_HALVES_BLOCKS_PER_SM
                               : cs[i].op == PKV_OP_FUSED_MROPE_BF16
                                   ? PKVK_MROPE_HALVES16_BLOCKS_PER_SM
                                   : PKVK_HALVES16_BLOCKS_PER_SM;
            ok(last_block == (e8 ? 256u : PKVK_HALVES16_THREADS) &&
                   grid == (unsigned)(per_sm * h->sm_count),
               "  one wave of %d blocks of %u threads", per_sm * h->sm_count,
               e8 ? 256u : PKVK_HALVES16_THREADS);
        }
        h->l2_bytes = (int)least - 1;
        is_int(kernel(h, cs[i].op, &d, NULL), cs[i].plain, "  L2 a byte smaller: kernel %d",
               cs[i].plain);
    }
    pkv_cuda_rope_table(h, 1e4f, 128, 0);
    h->l2_bytes = l2;
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    streaming(h);
    streaming_sizes(h);
    pkv_cuda_close(h);
    return done_testing();
}
