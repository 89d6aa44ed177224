/* "pkv check": a sweep of shapes and hostile inputs through every backend present, comparing
 * whole poisoned pools (lib/diffcase.c does one case). */
#include "config.h"
#include "check.h"
#include "diffcase.h"
#include "randcase.h"
#include "pagedkv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON PKVI_POISON

typedef struct tally {
    long cases;
    unsigned long long bytes, mismatches;
    double secs;
} tally;

static pkvi_rng rng = {0x243f6a8885a308d3ull};
static uint64_t rnd(void) { return pkvi_rng_next(&rng); }

/* op 1 against its definition, on random tables with negative entries */
static void check_fill_slots(int quick, tally *t)
{
    clock_t c0 = clock();
    for (int i = 0; i < (quick ? 100 : 400); i++) {
        int32_t table[16];
        int64_t got[64];
        pkv_fill_slots_desc d;
        d.block_size = 1 + (uint32_t)(rnd() % 40);
        d.start_pos = i % 4 == 0 ? 0xffffffffu - (uint32_t)(rnd() % 100) : (uint32_t)(rnd() % 300);
        d.count = (uint32_t)(rnd() % 64);
        d.table_len = (uint32_t)(rnd() % 17);
        for (int e = 0; e < 16; e++) table[e] = rnd() % 5 ? (int32_t)(rnd() % 100000) : -1 - (int32_t)(rnd() % 9);
        memset(got, POISON, sizeof got);
        pkv_ref_fill_slots(&d, table, got);
        for (uint32_t k = 0; k < 64; k++) {
            uint64_t pos = (uint64_t)d.start_pos + k, blk = pos / d.block_size;
            int64_t want = k >= d.count ? (int64_t)0xa5a5a5a5a5a5a5a5ull
                           : blk >= d.table_len || table[blk] < 0
                               ? -1
                               : (int64_t)table[blk] * d.block_size + (int64_t)(pos % d.block_size);
            t->mismatches += got[k] != want;
        }
        t->cases++;
        t->bytes += sizeof got;
    }
    t->secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
}

/* Half of the fused cases: positions folded below twice a random bound and, with a GPU, the
 * handle given a cos/sin table for the case's theta and rotary_dim up to that bound, so that
 * the kernels read about half of their cos/sin from it (which must change no byte). */
static int with_table(pkv_cuda *gpu, pkvi_case *k)
{
    uint32_t len = 1 + (uint32_t)(rnd() % 3000);
    for (uint32_t i = 0; i < k->f.num_tokens; i++)
        k->pos[0][i] %= 2 * len; /* pkvi_case_random: one stream */
    if (!gpu || k->f.rotary_dim == 0) return 0;
    if (pkv_cuda_rope_table(gpu, k->f.theta, k->f.rotary_dim, len) == PKV_OK) return 0;
    fprintf(stderr, "pkv check: %s\n", pkv_last_error());
    return 1;
}

static void row(const char *name, long cases, unsigned long long bytes, unsigned long long bad,
                double secs)
{
    printf("%-18s %8ld %14llu %11llu %8.2fs\n", name, cases, bytes, bad, secs);
}

int pkvi_check_main(int quick, int require_gpu)
{
    static const uint32_t nkvs[] = {1, 2, 8}, hds[] = {2, 64, 80, 128, 256, 512},
                          bss[] = {1, 7, 16}, toks[] = {0, 1, 3, 33};
    tally t[PKV_OP_COUNT], fill;
    pkvi_outcome out[PKV_OP_COUNT];
    unsigned long long total = 0;
    pkv_cuda *gpu = NULL;
    char gpu_why[256] = "";
    memset(t, 0, sizeof t);
    memset(out, 0, sizeof out);
    memset(&fill, 0, sizeof fill);
    if (pkv_cuda_open(0, &gpu) != PKV_OK) {
        snprintf(gpu_why, sizeof gpu_why, "%s", pkv_last_error());
        gpu = NULL;
        /* a GPU host's check must not pass by comparing the reference alone */
        if (require_gpu) {
            fprintf(stderr, "pkv check: --gpu: no CUDA backend (%s)\n", gpu_why);
            return 3;
        }
    }
    printf("%-18s %8s %14s %11s %9s\n", "op (reference)", "cases", "bytes", "mismatches", "time");
    check_fill_slots(quick, &fill);
    row("fill_slots", fill.cases, fill.bytes, fill.mismatches, fill.secs);
    total += fill.mismatches;
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
        clock_t c0 = clock();
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 6; b++)
                for (size_t c = 0; c < 3; c++)
                    for (size_t d = 0; d < (quick ? 2u : 4u); d++) {
                        pkvi_case k;
                        if (pkvi_case_random(&k, &rng, nkvs[a], hds[b], bss[c], toks[d])) {
                            fprintf(stderr, "pkv check: out of memory\n");
                            return 3;
                        }
                        if (op >= PKV_OP_FUSED_BF16 && d % 2 && with_table(gpu, &k)) {
                            pkvi_case_free(&k);
                            return 3;
                        }
                        pkvi_case_run(op, &k, gpu, &out[op]);
                        pkvi_case_free(&k);
                        t[op].cases++;
                    }
        t[op].secs = (double)(clock() - c0) / CLOCKS_PER_SEC - out[op].gpu_secs;
        row(pkv_op_name((pkv_op)op), t[op].cases, out[op].ref_bytes, out[op].ref_mismatches,
            t[op].secs);
        total += out[op].ref_mismatches;
    }
    if (gpu) {
        printf("%-18s %8s %14s %11s %9s\n", "op (CUDA)", "cases", "bytes", "mismatches", "time");
        printf("  device: %s; half of the fused cases with a cos/sin table\n",
               pkv_cuda_describe(gpu));
        for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
            row(pkv_op_name((pkv_op)op), t[op].cases, out[op].gpu_bytes, out[op].gpu_mismatches,
                out[op].gpu_secs);
            total += out[op].gpu_mismatches;
        }
        pkv_cuda_close(gpu);
    } else {
        printf("CUDA backend: not checked (%s)\n", gpu_why);
    }
    for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++)
        if (out[op].what[0]) printf("first mismatch: %s\n", out[op].what);
    printf("%s: %llu mismatches\n", total ? "FAIL" : "PASS", total);
    return total ? 1 : 0;
}
