/* Reference ops 1-4 (slot fill, BF16 copies, FP8 write) on a sweep of shapes: whole poisoned
 * pools compared byte for byte with expectations built here from the definitions. */
#include "config.h"
#include "tap.h"
#include "refkit.h"
#include "pagedkv.h"

#include <stdlib.h>
#include <string.h>

typedef struct shape {
    uint32_t nkv, hd, bs, tokens;
    uint64_t pad, block_pad; /* extra elements per source row, per block */
} shape;

static int check_op(pkv_op op, const shape *s, float k_scale, float v_scale)
{
    pkv_write_desc d;
    uint64_t row = (uint64_t)s->nkv * s->hd, stride = row + s->pad, oob = 0, want_oob = 0;
    uint64_t num_blocks = 3 + (uint64_t)s->tokens * 3 / s->bs, bstride;
    size_t esz = op == PKV_OP_WRITE_FP8 ? 1 : 2, src_n, pool_bytes;
    uint16_t *k, *v;
    int64_t *slots;
    unsigned char *kc, *vc, *kw, *vw;
    pkv_status st;
    int good = 1;

    memset(&d, 0, sizeof d);
    d.cache.num_kv_heads = s->nkv;
    d.cache.head_dim = s->hd;
    d.cache.block_size = s->bs;
    d.cache.num_blocks = num_blocks;
    bstride = row * s->bs + s->block_pad;
    d.cache.block_stride = s->block_pad ? bstride : 0;
    d.num_tokens = s->tokens;
    d.k_row_stride = s->pad ? stride : 0;
    d.v_row_stride = s->pad ? stride + 1 : 0;
    d.k_scale = k_scale;
    d.v_scale = v_scale;

    src_n = (size_t)(s->tokens ? s->tokens : 1) * (stride + 1);
    /* sources and pools start one element past an aligned allocation */
    k = (uint16_t *)kit_alloc(src_n * 2 + 2) + 1;
    v = (uint16_t *)kit_alloc(src_n * 2 + 2) + 1;
    kit_fill_bf16(k, src_n, 100.0f);
    kit_fill_bf16(v, src_n, 3.0f);
    slots = kit_alloc((size_t)(s->tokens ? s->tokens : 1) * sizeof *slots);
    kit_slots(slots, s->tokens, num_blocks * s->bs, 100, 100);
    pool_bytes = (size_t)(num_blocks * bstride * esz);
    kc = (unsigned char *)kit_alloc(pool_bytes + esz) + esz;
    vc = (unsigned char *)kit_alloc(pool_bytes + esz) + esz;
    kw = kit_alloc(pool_bytes);
    vw = kit_alloc(pool_bytes);
    memset(kc, POISON, pool_bytes);
    memset(vc, POISON, pool_bytes);
    memcpy(kw, kc, pool_bytes);
    memcpy(vw, vc, pool_bytes);

    for (uint32_t t = 0; t < s->tokens; t++) {
        uint64_t off;
        float inv_k = 1.0f / k_scale, inv_v = 1.0f / v_scale;
        if (slots[t] < 0) continue;
        if ((uint64_t)slots[t] >= num_blocks * s->bs) {
            want_oob++;
            continue;
        }
        off = kit_row_offset(slots[t], s->bs, bstride, row);
        for (uint64_t e = 0; e < row; e++) {
            uint16_t kx = k[t * stride + e], vx = v[t * (s->pad ? stride + 1 : stride) + e];
            if (op == PKV_OP_WRITE_FP8) {
                kw[off + e] = pkv_e4m3_from_f32(pkv_bf16_to_f32(kx) * inv_k);
                vw[off + e] = pkv_e4m3_from_f32(pkv_bf16_to_f32(vx) * inv_v);
            } else {
                if (op == PKV_OP_WRITE_BF16) memcpy(kw + 2 * (off + e), &kx, 2);
                memcpy(vw + 2 * (off + e), &vx, 2);
            }
        }
    }
    if (op == PKV_OP_WRITE_BF16)
        st = pkv_ref_write_bf16(&d, k, v, slots, (uint16_t *)kc, (uint16_t *)vc, &oob);
    else if (op == PKV_OP_WRITE_V_BF16)
        st = pkv_ref_write_v_bf16(&d, v, slots, (uint16_t *)vc, &oob);
    else st = pkv_ref_write_fp8(&d, k, v, slots, kc, vc, &oob);

    if (st != PKV_OK || kit_first_diff(kc, kw, pool_bytes) >= 0 ||
        kit_first_diff(vc, vw, pool_bytes) >= 0 || oob != want_oob) {
        diag("%s nkv %u hd %u bs %u tokens %u pad %llu block_pad %llu: status %d, K diff at %ld, "
             "V diff at %ld, oob %llu want %llu",
             pkv_op_name(op), s->nkv, s->hd, s->bs, s->tokens, (unsigned long long)s->pad,
             (unsigned long long)s->block_pad, (int)st, kit_first_diff(kc, kw, pool_bytes),
             kit_first_diff(vc, vw, pool_bytes), (unsigned long long)oob,
             (unsigned long long)want_oob);
        good = 0;
    }
    free(k - 1);
    free(v - 1);
    free(slots);
    free(kc - esz);
    free(vc - esz);
    free(kw);
    free(vw);
    return good;
}

static void sweep(void)
{
    static const uint32_t nkvs[] = {1, 3, 8}, hds[] = {1, 64, 80, 128, 257}, bss[] = {1, 7, 16},
                          toks[] = {0, 1, 5, 64};
    static const float scales[][2] = {{1.0f, 1.0f}, {0.01171875f, 0.009765625f},
                                      {1e-30f, 3e30f}, {0.3f, 7.0f}};
    long cases = 0, bad[3] = {0, 0, 0};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t c = 0; c < 3; c++)
                for (size_t t = 0; t < 4; t++)
                    for (int pad = 0; pad < 2; pad++) {
                        shape s = {nkvs[a], hds[b], bss[c], toks[t], pad ? 3u : 0u,
                                   pad ? 5u : 0u};
                        cases++;
                        bad[0] += !check_op(PKV_OP_WRITE_BF16, &s, 1, 1);
                        bad[1] += !check_op(PKV_OP_WRITE_V_BF16, &s, 1, 1);
                        bad[2] += !check_op(PKV_OP_WRITE_FP8, &s, scales[cases % 4][0],
                                            scales[cases % 4][1]);
                    }
    is_int(bad[0], 0, "write_bf16: whole pools equal on %ld shapes", cases);
    is_int(bad[1], 0, "write_v_bf16: whole pools equal on %ld shapes", cases);
    is_int(bad[2], 0, "write_fp8: whole pools equal on %ld shapes", cases);
}

static void errors_write_nothing(void)
{
    pkv_write_desc d;
    uint16_t k[16] = {0}, v[16] = {0};
    int64_t slot = 0;
    unsigned char pool[64], copy[64];
    uint64_t oob = 7;
    memset(&d, 0, sizeof d);
    d.cache.num_kv_heads = 1;
    d.cache.head_dim = 8;
    d.cache.block_size = 2;
    d.cache.num_blocks = 2;
    d.num_tokens = 1;
    d.k_scale = 1.0f;
    d.v_scale = 0.0f;
    memset(pool, POISON, sizeof pool);
    memcpy(copy, pool, sizeof pool);
    is_int(pkv_ref_write_fp8(&d, k, v, &slot, pool, pool + 32, &oob), PKV_EINVAL,
           "write_fp8 with v_scale 0 fails");
    ok(memcmp(pool, copy, sizeof pool) == 0 && oob == 7, "  and writes nothing");
    d.v_scale = 1.0f;
    is_int(pkv_ref_write_bf16(&d, k, NULL, &slot, (uint16_t *)pool, (uint16_t *)(pool + 32), &oob),
           PKV_EINVAL, "write_bf16 with value NULL fails");
    ok(strstr(pkv_last_error(), "value") != NULL, "  the message names value");
    ok(memcmp(pool, copy, sizeof pool) == 0, "  and writes nothing");
    d.num_tokens = 0;
    is_int(pkv_ref_write_bf16(&d, NULL, NULL, NULL, (uint16_t *)pool, (uint16_t *)(pool + 32),
                              &oob),
           PKV_OK, "zero tokens need no source pointers");
    slot = 4; /* == num_blocks * block_size: out of range */
    d.num_tokens = 1;
    oob = 10;
    is_int(pkv_ref_write_v_bf16(&d, v, &slot, (uint16_t *)pool, &oob), PKV_OK,
           "an out-of-range slot is not an error");
    ok(oob == 11 && memcmp(pool, copy, sizeof pool) == 0, "  it writes nothing and adds 1");
}

static void fill_slots(void)
{
    int32_t table[4] = {5, -1, 0, 7};
    int64_t slots[12], want[12] = {83, 84, 85, 86, 87, -1, -1, -1, -1, -1, -1, -1};
    pkv_fill_slots_desc d = {4, 3, 12, 4};
    /* positions 3..14 with block_size 4: blocks 0 (entry 5), 1 (-1), 2 (0), 3 (7) */
    want[0] = 5 * 4 + 3;
    want[1] = -1, want[2] = -1, want[3] = -1, want[4] = -1;
    want[5] = 0, want[6] = 1, want[7] = 2, want[8] = 3;
    want[9] = 28, want[10] = 29, want[11] = 30;
    memset(slots, POISON, sizeof slots);
    is_int(pkv_ref_fill_slots(&d, table, slots), PKV_OK, "fill_slots runs");
    ok(memcmp(slots, want, sizeof want) == 0, "fill_slots: negative entries give -1");
    d.start_pos = 13;
    d.count = 5;
    memset(slots, POISON, sizeof slots);
    pkv_ref_fill_slots(&d, table, slots);
    ok(slots[0] == 29 && slots[1] == 30 && slots[2] == 31 && slots[3] == -1 && slots[4] == -1 &&
           slots[5] == (int64_t)0xa5a5a5a5a5a5a5a5ull,
       "fill_slots: past the table gives -1, nothing past count is written");
    {
        int32_t big[1] = {0x7fffffff};
        pkv_fill_slots_desc e = {0xffffffffu, 0xfffffffeu, 2, 1};
        pkv_ref_fill_slots(&e, big, slots);
        ok(slots[0] == (int64_t)0x7fffffffll * 0xffffffffll + 0xfffffffell && slots[1] == -1,
           "fill_slots: 64-bit slot arithmetic, positions do not wrap at 2^32");
    }
    d.count = 1;
    is_int(pkv_ref_fill_slots(&d, NULL, slots), PKV_EINVAL, "fill_slots: NULL table fails");
}

int main(void)
{
    fill_slots();
    errors_write_nothing();
    sweep();
    return done_testing();
}
