/* The normative reduction tree: hand-checked cases, and equality with a literal simulation of
 * 32 lanes exchanging values by xor butterfly (all lanes kept, as a warp does). */
#include "config.h"
#include "tap.h"
#include "bits.h"
#include "pagedkv.h"

#include <math.h>
#include <string.h>

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* All 32 lanes: after each step lane l holds old[l] + old[l ^ off]. Returns lane 0 and checks
 * that every lane ends with the same bits (NaN payloads aside). */
static float warp_butterfly(const float in[32], int *lanes_agree)
{
    float v[32], w[32];
    memcpy(v, in, sizeof v);
    for (unsigned off = 16; off; off >>= 1) {
        for (unsigned l = 0; l < 32; l++) w[l] = v[l] + v[l ^ off];
        memcpy(v, w, sizeof v);
    }
    for (unsigned l = 1; l < 32; l++)
        if (bits(v[l]) != bits(v[0]) && !(isnan(v[l]) && isnan(v[0]))) *lanes_agree = 0;
    return v[0];
}

/* Warps of 32 threads, thread t holding leaf t (or +0), then warp 0 reducing the warp sums. */
static float block_simulation(const float *leaves, unsigned n, int *agree)
{
    float warp_sums[32], lanes[32];
    unsigned warps = (n + 31) / 32;
    for (unsigned w = 0; w < 32; w++) {
        for (unsigned l = 0; l < 32; l++) lanes[l] = w * 32 + l < n ? leaves[w * 32 + l] : 0.0f;
        warp_sums[w] = w < warps ? warp_butterfly(lanes, agree) : 0.0f;
    }
    return warp_butterfly(warp_sums, agree);
}

static float draw(void)
{
    uint64_t r = rnd();
    switch (r % 8) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return (float)ldexp((double)(r >> 40), -(int)(r % 200)); /* wide range, subnormals */
    case 3: return 1e38f;                                            /* sums overflow */
    default: return (float)((double)(r >> 11) * 0x1p-53) * 1000.0f - 500.0f;
    }
}

int main(void)
{
    float leaves[1024], out;
    int agree = 1, bad = 0;

    for (unsigned i = 0; i < 1024; i++) leaves[i] = 1.0f;
    pkv_tree_sum(leaves, 1024, &out);
    ok(out == 1024.0f, "1024 ones sum to 1024");
    pkv_tree_sum(leaves, 0, &out);
    ok(out == 0.0f && !signbit(out), "no leaves sum to +0");
    leaves[0] = -0.0f;
    pkv_tree_sum(leaves, 1, &out);
    ok(out == 0.0f && !signbit(out), "a lone -0 is padded with +0 and gives +0");

    /* 2^24 + 1 + 1: a left-to-right sum gives 2^24 (each 1 lost), the tree pairs lane 1 with
     * lane 17 first, so the two ones meet before the big value */
    memset(leaves, 0, sizeof leaves);
    leaves[0] = 0x1p24f;
    leaves[1] = 1.0f;
    leaves[17] = 1.0f;
    pkv_tree_sum(leaves, 32, &out);
    ok(out == 0x1p24f + 2.0f, "tree order: 2^24 + (1 + 1) = 2^24 + 2");
    /* the same leaves one apart (lanes 1 and 2) are combined with lane 0's partners first */
    memset(leaves, 0, sizeof leaves);
    leaves[0] = 0x1p24f;
    leaves[16] = 1.0f;
    leaves[8] = 1.0f;
    pkv_tree_sum(leaves, 32, &out);
    ok(out == 0x1p24f, "tree order: (2^24 + 1) + 1 with ties to even = 2^24");
    /* chunk sums: 33 leaves, the 33rd in a chunk of its own */
    for (unsigned i = 0; i < 33; i++) leaves[i] = i == 32 ? 0.5f : 0x1p-28f;
    pkv_tree_sum(leaves, 33, &out);
    ok(out == 0x1.000004p-1f, "two chunks: 32 * 2^-28 + 0.5 = 0.5 + 2^-23");

    is_int(pkv_tree_sum(leaves, 1025, &out), PKV_EINVAL, "1025 leaves are rejected");
    is_int(pkv_tree_sum(NULL, 3, &out), PKV_EINVAL, "NULL leaves are rejected");

    for (int trial = 0; trial < 20000; trial++) {
        unsigned n = 1 + (unsigned)(rnd() % 1024);
        float want;
        for (unsigned i = 0; i < n; i++) leaves[i] = draw();
        pkv_tree_sum(leaves, n, &out);
        want = block_simulation(leaves, n, &agree);
        if (bits(out) != bits(want) && !(isnan(out) && isnan(want))) bad++;
    }
    is_int(bad, 0, "tree_sum equals the 32-lane warp simulation on 20000 random cases");
    ok(agree, "every simulated lane ends with the same sum");
    return done_testing();
}
