/* A deterministic splitter of a fuzz input (the libFuzzer FuzzedDataProvider convention, in
 * C): integers and choices come from the tail, payload bytes from the front, so mutations of
 * one kind do not disturb the other. An exhausted input reads as zeros. */
#ifndef PKV_FUZZ_PROVIDER_H
#define PKV_FUZZ_PROVIDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

/* An integer of nbytes (<= 8) from the tail. */
static inline uint64_t fz_bits(fz *f, int nbytes)
{
    uint64_t v = 0;
    for (int i = 0; i < nbytes && f->n; i++) v = (v << 8) | f->p[--f->n];
    return v;
}

/* Uniform-ish in [lo, hi] (inclusive). */
static inline uint64_t fz_range(fz *f, uint64_t lo, uint64_t hi)
{
    uint64_t span = hi - lo;
    int nbytes = span < 0x100u ? 1 : span < 0x10000u ? 2 : span < 0x100000000ull ? 4 : 8;
    return span == UINT64_MAX ? fz_bits(f, 8) : lo + fz_bits(f, nbytes) % (span + 1);
}

static inline int fz_bool(fz *f) { return (int)(fz_bits(f, 1) & 1u); }

/* n payload bytes from the front. */
static inline void fz_bytes(fz *f, void *dst, size_t n)
{
    size_t k = n < f->n ? n : f->n;
    memcpy(dst, f->p, k);
    memset((uint8_t *)dst + k, 0, n - k);
    f->p += k;
    f->n -= k;
}

#define FZ_PICK(f, array) ((array)[fz_range((f), 0, sizeof(array) / sizeof((array)[0]) - 1)])

#endif
