/* Fuzz target for the conversions: BF16 and E4M3 of fuzzed binary32 bit patterns against the
 * independent arithmetic formulation of the tests (t/conv_model.h), their decodes, and on a GPU
 * the device build of the same code. */
#include "config.h"
#include "fuzz.h"
#include "provider.h"
#include "pagedkv.h"
#include "../t/conv_model.h"

#include <stdio.h>
#include <stdlib.h>

int fz_convert(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    uint32_t words[1024], n = 0;
    while (f.n >= 4) {
        uint32_t u = (uint32_t)fz_bits(&f, 4);
        float x;
        memcpy(&x, &u, 4);
        if (n < 1024) words[n++] = u;
        if (pkv_bf16_from_f32(x) != bf16_arith(x) || pkv_e4m3_from_f32(x) != e4m3_arith(x)) {
            fprintf(stderr, "pagedkv fuzz: conversion of 0x%08x: bf16 %04x/%04x e4m3 %02x/%02x\n",
                    u, pkv_bf16_from_f32(x), bf16_arith(x), pkv_e4m3_from_f32(x), e4m3_arith(x));
            abort();
        }
        if (bits(pkv_bf16_to_f32((uint16_t)u)) != (u & 0xffffu) << 16) abort();
        {
            float d = pkv_e4m3_to_f32((uint8_t)u);
            if ((u & 0x7f) != 0x7f && (double)fabsf(d) != e4m3_value(u & 0x7f)) abort();
        }
    }
    fz_gpu_numerics(words, n); /* the device build of the same conversions */
    return 0;
}
