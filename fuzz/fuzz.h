/* The fuzz targets: each takes one libFuzzer input. A difference between backends, a reference
 * that breaks one of its own properties, or a sanitizer report aborts. */
#ifndef PKV_FUZZ_H
#define PKV_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#define FZ_TARGETS(X)                                                                          \
    X(fill_slots) X(write_bf16) X(write_v_bf16) X(write_fp8) X(fused_bf16) X(fused_mrope_bf16) \
    X(fused_fp8_k) X(fused_fp8_kv) X(crmath) X(convert)

#define FZ_DECLARE(name) int fz_##name(const uint8_t *data, size_t size);
FZ_TARGETS(FZ_DECLARE)
#undef FZ_DECLARE

#endif
