/* Programmatic dependent launch (pkv_cuda_set_pdl, kernels/grid_dep.cuh): a launch may start
 * while the kernel ahead of it finishes, so every kernel must wait for it before touching
 * memory. Three launches back to back, no synchronisation between them: fill_slots writes the
 * slot mapping (poisoned to -1 before) that a large write then reads (read after write), and a
 * one-token write then stores to the slot that the large write's last block stores to (write
 * after write). Without the waits the large write would read slots not yet filled, and the
 * small one's row could land before the large one's: the slots and both whole pools are
 * compared with the reference applied in order. With and without the overlap, on the legacy
 * stream, a stream of our own, and a CUDA graph captured from it. */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "refkit.h"
#include "pagedkv.h"
#include "../lib/cuda_device.h"
#include "../lib/env.h"

#include <stdlib.h>
#include <string.h>

#define TOKENS 65536u /* 4 waves of 256-thread blocks at 1 x 128 on an H200 */
#define BS 16u
#define HD 128u
#define TRIALS 8

typedef struct bufs {
    pkv_fill_slots_desc fd;
    pkv_write_desc big, small;
    size_t pool_bytes;
    int32_t *table;
    int64_t *slots, small_slot;
    uint16_t *k1, *v1, *k2, *v2, *kc, *vc; /* kc, vc: the reference's pools */
    uint64_t d_table, d_slots, d_small_slot, d_k1, d_v1, d_k2, d_v2, d_kc, d_vc;
} bufs;

static void setup(pkv_cuda *h, bufs *b)
{
    const uint32_t blocks = TOKENS / BS;
    const size_t src_bytes = (size_t)TOKENS * HD * 2;
    memset(b, 0, sizeof *b);
    b->fd.block_size = BS;
    b->fd.count = TOKENS;
    b->fd.table_len = blocks;
    b->big.cache.num_kv_heads = 1;
    b->big.cache.head_dim = HD;
    b->big.cache.block_size = BS;
    b->big.cache.num_blocks = blocks;
    b->big.num_tokens = TOKENS;
    b->small = b->big;
    b->small.num_tokens = 1;
    b->pool_bytes = src_bytes;
    /* blocks in reverse: the last tokens, written by the large write's last block, go to slots
     * 0 .. 15, and the small write's slot 0 is token TOKENS - 16's */
    b->table = kit_alloc((size_t)blocks * 4);
    for (uint32_t i = 0; i < blocks; i++)
        b->table[i] = (int32_t)(blocks - 1 - i);
    b->slots = kit_alloc((size_t)TOKENS * 8);
    if (pkv_ref_fill_slots(&b->fd, b->table, b->slots) != PKV_OK) bail("ref fill_slots");
    b->small_slot = 0;
    b->k1 = kit_alloc(src_bytes);
    b->v1 = kit_alloc(src_bytes);
    b->k2 = kit_alloc(HD * 2);
    b->v2 = kit_alloc(HD * 2);
    kit_fill_bf16(b->k1, (size_t)TOKENS * HD, 8.0f);
    kit_fill_bf16(b->v1, (size_t)TOKENS * HD, 4.0f);
    kit_fill_bf16(b->k2, HD, 2.0f);
    kit_fill_bf16(b->v2, HD, 1.0f);
    b->kc = kit_alloc(b->pool_bytes);
    b->vc = kit_alloc(b->pool_bytes);
    memset(b->kc, 0xA5, b->pool_bytes);
    memset(b->vc, 0xA5, b->pool_bytes);
    if (pkv_ref_write_bf16(&b->big, b->k1, b->v1, b->slots, b->kc, b->vc, NULL) ||
        pkv_ref_write_bf16(&b->small, b->k2, b->v2, &b->small_slot, b->kc, b->vc, NULL))
        bail("ref write_bf16");
    b->d_table = gpu_upload(h, b->table, (size_t)blocks * 4, 0);
    b->d_slots = gpu_upload(h, NULL, (size_t)TOKENS * 8, 0);
    b->d_small_slot = gpu_upload(h, &b->small_slot, 8, 0);
    b->d_k1 = gpu_upload(h, b->k1, src_bytes, 0);
    b->d_v1 = gpu_upload(h, b->v1, src_bytes, 0);
    b->d_k2 = gpu_upload(h, b->k2, HD * 2, 0);
    b->d_v2 = gpu_upload(h, b->v2, HD * 2, 0);
    b->d_kc = gpu_upload(h, NULL, b->pool_bytes, 0);
    b->d_vc = gpu_upload(h, NULL, b->pool_bytes, 0);
}

static void poison(pkv_cuda *h, const bufs *b)
{
    if (pkv_cuda_fill(h, b->d_slots, 0xFF, (size_t)TOKENS * 8) || /* every slot -1: skipped */
        pkv_cuda_fill(h, b->d_kc, 0xA5, b->pool_bytes) ||
        pkv_cuda_fill(h, b->d_vc, 0xA5, b->pool_bytes) || pkv_cuda_synchronize(h, NULL))
        bail("poison: %s", pkv_last_error());
}

static pkv_status launch3(pkv_cuda *h, const bufs *b, void *stream)
{
    pkv_status st = pkv_cuda_fill_slots(h, &b->fd, b->d_table, b->d_slots, stream);
    if (!st)
        st = pkv_cuda_write_bf16(h, &b->big, b->d_k1, b->d_v1, b->d_slots, b->d_kc, b->d_vc, 0,
                                 stream);
    if (!st)
        st = pkv_cuda_write_bf16(h, &b->small, b->d_k2, b->d_v2, b->d_small_slot, b->d_kc, b->d_vc,
                                 0, stream);
    return st;
}

enum { ON_LEGACY, ON_STREAM, ON_GRAPH };
static const char *const where_names[] = {"the legacy stream", "a stream", "a CUDA graph"};

/* TRIALS rounds of the three launches; the number of rounds whose slots, and whose pools,
 * differ from the reference, in *slots_bad and *pools_bad. */
static int run(pkv_cuda *h, const bufs *b, int where, int *slots_bad, int *pools_bad)
{
    const pkvi_cuda_api *cu = h->cu;
    pkvi_CUstream s = NULL;
    pkvi_CUgraph g = NULL;
    pkvi_CUgraphExec x = NULL;
    int64_t *slots = kit_alloc((size_t)TOKENS * 8);
    uint16_t *kc = kit_alloc(b->pool_bytes), *vc = kit_alloc(b->pool_bytes);
    int failed = 0;
    *slots_bad = *pools_bad = 0;
    if (pkvi_cuda_enter(h)) bail("context: %s", pkv_last_error());
    if (where != ON_LEGACY && cu->cuStreamCreate(&s, 0)) bail("cuStreamCreate");
    if (where == ON_GRAPH) {
        if (cu->cuStreamBeginCapture(s, 0)) bail("cuStreamBeginCapture");
        failed = launch3(h, b, s) != PKV_OK;
        if (cu->cuStreamEndCapture(s, &g) || (!failed && cu->cuGraphInstantiateWithFlags(&x, g, 0)))
            bail("capture: %s", failed ? pkv_last_error() : "cuGraphInstantiate");
    }
    for (int trial = 0; trial < TRIALS && !failed; trial++) {
        poison(h, b);
        if (where == ON_GRAPH)
            failed = cu->cuGraphLaunch(x, s) != 0;
        else
            failed = launch3(h, b, s) != PKV_OK;
        if (!failed && s) failed = cu->cuStreamSynchronize(s) != 0;
        if (failed) break;
        gpu_download(h, slots, b->d_slots, (size_t)TOKENS * 8);
        gpu_download(h, kc, b->d_kc, b->pool_bytes);
        gpu_download(h, vc, b->d_vc, b->pool_bytes);
        *slots_bad += memcmp(slots, b->slots, (size_t)TOKENS * 8) != 0;
        *pools_bad +=
            memcmp(kc, b->kc, b->pool_bytes) != 0 || memcmp(vc, b->vc, b->pool_bytes) != 0;
        if (*pools_bad && trial == 0)
            diag("first pool difference at byte %ld (K) / %ld (V)",
                 kit_first_diff(kc, b->kc, b->pool_bytes),
                 kit_first_diff(vc, b->vc, b->pool_bytes));
    }
    if (x) cu->cuGraphExecDestroy(x);
    if (g) cu->cuGraphDestroy(g);
    if (s) cu->cuStreamDestroy(s);
    pkvi_cuda_leave(h);
    free(slots);
    free(kc);
    free(vc);
    return failed;
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    const char *d = strstr(pkv_cuda_describe(h), "(sm_");
    int sm = d ? atoi(d + 4) : 0, version = 0, want;
    bufs b;
    is_int(pkv_cuda_set_pdl(NULL, 1), PKV_EINVAL, "set_pdl: a NULL handle is PKV_EINVAL");
    if (h->cu->cuDriverGetVersion(&version)) bail("cuDriverGetVersion");
    /* the default build has sm_90 code (or PTX for later GPUs); the compute_80 PTX has none */
    want = sm >= 90 && version >= 12030 && !pkvi_env_on("PKV_CUDA_JIT_PTX");
    diag("sm_%d, driver %d, PKV_CUDA_JIT_PTX %s", sm, version,
         pkvi_env_on("PKV_CUDA_JIT_PTX") ? "set" : "unset");
    is_int(pkv_cuda_set_pdl(h, 1), want ? PKV_OK : PKV_ENOTSUP,
           "set_pdl(1): %s on this device and driver", want ? "available" : "not available");
    is_int(atomic_load(&h->pdl), want, "launches ask for the overlap when it is on");
    is_int(pkv_cuda_set_pdl(h, 0), PKV_OK, "set_pdl(0) is always allowed");
    is_int(atomic_load(&h->pdl), 0, "and launches no longer ask for it");
    kit_seed(7);
    setup(h, &b);
    for (int pdl = want; pdl >= 0; pdl--) {
        if (pkv_cuda_set_pdl(h, pdl)) bail("set_pdl(%d): %s", pdl, pkv_last_error());
        for (int where = ON_LEGACY; where <= ON_GRAPH; where++) {
            int slots_bad, pools_bad;
            int failed = run(h, &b, where, &slots_bad, &pools_bad);
            ok(!failed, "%s, overlap %s: launches succeed", where_names[where], pdl ? "on" : "off");
            is_int(slots_bad, 0, "%s, overlap %s: fill_slots's slots in %d of %d rounds",
                   where_names[where], pdl ? "on" : "off", TRIALS - slots_bad, TRIALS);
            is_int(pools_bad, 0,
                   "%s, overlap %s: both pools are the reference's (read after write, write "
                   "after write) in %d of %d rounds",
                   where_names[where], pdl ? "on" : "off", TRIALS - pools_bad, TRIALS);
        }
    }
    gpu_free_all(h);
    pkv_cuda_close(h);
    free(b.table);
    free(b.slots);
    free(b.k1);
    free(b.v1);
    free(b.k2);
    free(b.v2);
    free(b.kc);
    free(b.vc);
    return done_testing();
}
