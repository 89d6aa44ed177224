/* Status strings and descriptor validation: every rule returns its status and a message that
 * names the field; valid descriptors pass. */
#include "config.h"
#include "tap.h"
#include "pagedkv.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int names(const char *field)
{
    return ok(strstr(pkv_last_error(), field) != NULL, "  message names %s: \"%s\"", field,
              pkv_last_error());
}

static pkv_write_desc good_write(void)
{
    pkv_write_desc d;
    memset(&d, 0, sizeof d);
    d.cache.num_kv_heads = 8;
    d.cache.head_dim = 128;
    d.cache.block_size = 16;
    d.cache.num_blocks = 100;
    d.num_tokens = 5;
    d.k_scale = d.v_scale = 0.5f;
    return d;
}

static pkv_fused_desc good_fused(void)
{
    pkv_fused_desc d;
    memset(&d, 0, sizeof d);
    d.cache.num_kv_heads = 4;
    d.cache.head_dim = 128;
    d.cache.block_size = 16;
    d.cache.num_blocks = 10;
    d.num_tokens = 3;
    d.rotary_dim = 64;
    d.theta = 1e6f;
    d.rms_eps = 1e-6f;
    d.k_scale = d.v_scale = d.k_inv_scale = 1.0f;
    return d;
}

#define EXPECT_WRITE(op, mod, st, field)                                                       \
    do {                                                                                       \
        pkv_write_desc d = good_write();                                                       \
        mod;                                                                                   \
        is_int(pkv_write_check(op, &d), st, "%s: %s", pkv_op_name(op), #mod);                 \
        names(field);                                                                          \
    } while (0)

#define EXPECT_FUSED(op, mod, st, field)                                                       \
    do {                                                                                       \
        pkv_fused_desc d = good_fused();                                                       \
        mod;                                                                                   \
        is_int(pkv_fused_check(op, &d), st, "%s: %s", pkv_op_name(op), #mod);                 \
        names(field);                                                                          \
    } while (0)

int main(void)
{
    pkv_write_desc w = good_write();
    pkv_fused_desc f = good_fused();
    pkv_fill_slots_desc s = {16, 0, 10, 4};

    is_str(pkv_strerror(PKV_OK), "success", "strerror(PKV_OK)");
    is_str(pkv_strerror(PKV_EINVAL), "invalid argument", "strerror(PKV_EINVAL)");
    is_str(pkv_strerror((pkv_status)42), "unknown status", "strerror of an unknown value");
    for (int st = PKV_EINTERNAL; st <= PKV_OK; st++)
        ok(pkv_strerror((pkv_status)st)[0] != '\0', "strerror(%d) is not empty", st);
    is_str(pkv_version(), PACKAGE_VERSION, "pkv_version");
    is_str(pkv_op_name(PKV_OP_FUSED_FP8_KV), "fused_fp8_kv", "op name");
    ok(pkv_op_name((pkv_op)PKV_OP_COUNT) == NULL, "op name of a non-op is NULL");

    is_int(pkv_write_check(PKV_OP_WRITE_BF16, &w), PKV_OK, "a valid BF16 write descriptor");
    is_str(pkv_last_error(), "", "a success clears the message");
    is_int(pkv_write_check(PKV_OP_WRITE_FP8, &w), PKV_OK, "a valid FP8 write descriptor");
    w.k_scale = NAN;
    is_int(pkv_write_check(PKV_OP_WRITE_BF16, &w), PKV_OK, "scales are ignored by BF16 writes");
    w = good_write();
    w.k_row_stride = 5;
    is_int(pkv_write_check(PKV_OP_WRITE_V_BF16, &w), PKV_OK, "k_row_stride is ignored by V-only");
    is_int(pkv_fill_slots_check(&s), PKV_OK, "a valid fill_slots descriptor");
    s.block_size = 0;
    is_int(pkv_fill_slots_check(&s), PKV_EINVAL, "fill_slots: block_size 0");
    names("block_size");
    is_int(pkv_fill_slots_check(NULL), PKV_EINVAL, "fill_slots: NULL descriptor");

    EXPECT_WRITE(PKV_OP_FUSED_BF16, (void)0, PKV_EINVAL, "not a write op");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.cache.num_kv_heads = 0, PKV_EINVAL, "num_kv_heads");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.cache.head_dim = 0, PKV_EINVAL, "head_dim");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.cache.block_size = 0, PKV_EINVAL, "block_size");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.cache.block_stride = 16 * 8 * 128 - 1, PKV_EINVAL,
                 "block_stride");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.cache.num_blocks = UINT64_MAX / 1000, PKV_ERANGE,
                 "num_blocks");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.cache.num_blocks = (1ull << 62) / (16 * 8 * 128),
                 PKV_ERANGE, "num_blocks");
    EXPECT_WRITE(PKV_OP_WRITE_BF16,
                 (d.cache.num_kv_heads = d.cache.head_dim = d.cache.block_size = UINT32_MAX),
                 PKV_ERANGE, "block_size * num_kv_heads * head_dim");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.k_row_stride = 1023, PKV_EINVAL, "k_row_stride");
    EXPECT_WRITE(PKV_OP_WRITE_V_BF16, d.v_row_stride = 1, PKV_EINVAL, "v_row_stride");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, (d.num_tokens = 3, d.k_row_stride = UINT64_MAX / 2),
                 PKV_ERANGE, "k_row_stride");
    EXPECT_WRITE(PKV_OP_WRITE_BF16, d.num_tokens = 0x80000000u, PKV_EINVAL, "num_tokens");
    EXPECT_WRITE(PKV_OP_WRITE_FP8, d.k_scale = 0.0f, PKV_EINVAL, "k_scale");
    EXPECT_WRITE(PKV_OP_WRITE_FP8, d.k_scale = -1.0f, PKV_EINVAL, "k_scale");
    EXPECT_WRITE(PKV_OP_WRITE_FP8, d.v_scale = INFINITY, PKV_EINVAL, "v_scale");
    EXPECT_WRITE(PKV_OP_WRITE_FP8, d.v_scale = NAN, PKV_EINVAL, "v_scale");
    {
        const char *msg;
        is_int(pkv_write_check(PKV_OP_WRITE_BF16, NULL), PKV_EINVAL, "NULL write descriptor");
        msg = pkv_last_error();
        ok(strstr(msg, "desc") != NULL, "  message names desc: \"%s\"", msg);
    }

    for (int op = PKV_OP_FUSED_BF16; op <= PKV_OP_FUSED_FP8_KV; op++)
        is_int(pkv_fused_check((pkv_op)op, &f), PKV_OK, "a valid %s descriptor",
               pkv_op_name((pkv_op)op));
    f.rotary_dim = 0;
    f.theta = 0.0f;
    is_int(pkv_fused_check(PKV_OP_FUSED_BF16, &f), PKV_OK, "theta is ignored when rotary_dim = 0");
    f = good_fused();
    f.cache.head_dim = 81;
    f.rotary_dim = 80;
    is_int(pkv_fused_check(PKV_OP_FUSED_BF16, &f), PKV_OK, "odd head_dim is fine for single-round");

    EXPECT_FUSED(PKV_OP_WRITE_FP8, (void)0, PKV_EINVAL, "not a fused op");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.cache.head_dim = 513, PKV_EINVAL, "head_dim");
    EXPECT_FUSED(PKV_OP_FUSED_FP8_KV, (d.cache.head_dim = 81, d.rotary_dim = 2), PKV_EINVAL,
                 "head_dim");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.rotary_dim = 63, PKV_EINVAL, "rotary_dim");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.rotary_dim = 130, PKV_EINVAL, "rotary_dim");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.theta = 0.5f, PKV_EINVAL, "theta");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.theta = INFINITY, PKV_EINVAL, "theta");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.rms_eps = -1e-6f, PKV_EINVAL, "rms_eps");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.rms_eps = NAN, PKV_EINVAL, "rms_eps");
    EXPECT_FUSED(PKV_OP_FUSED_BF16, d.k_row_stride = 511, PKV_EINVAL, "k_row_stride");
    EXPECT_FUSED(PKV_OP_FUSED_FP8_KV, d.v_row_stride = 1, PKV_EINVAL, "v_row_stride");
    EXPECT_FUSED(PKV_OP_FUSED_FP8_KV, d.k_scale = 0.0f, PKV_EINVAL, "k_scale");
    EXPECT_FUSED(PKV_OP_FUSED_FP8_KV, d.v_scale = -INFINITY, PKV_EINVAL, "v_scale");
    EXPECT_FUSED(PKV_OP_FUSED_FP8_K, d.k_inv_scale = NAN, PKV_EINVAL, "k_inv_scale");
    EXPECT_FUSED(PKV_OP_FUSED_MROPE_BF16,
                 (d.mrope_section[0] = 11, d.mrope_section[1] = 11, d.mrope_section[2] = 11),
                 PKV_EINVAL, "mrope_section");
    EXPECT_FUSED(PKV_OP_FUSED_FP8_KV, d.cache.block_stride = 1, PKV_EINVAL, "block_stride");

    f = good_fused();
    f.mrope_section[0] = 12;
    f.mrope_section[1] = 10;
    f.mrope_section[2] = 10;
    is_int(pkv_fused_check(PKV_OP_FUSED_MROPE_BF16, &f), PKV_OK, "sections summing to 32 pass");
    return done_testing();
}
