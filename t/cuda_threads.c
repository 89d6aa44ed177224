/* One CUDA handle shared by several threads, and handles opened and closed by threads while
 * others launch: every op on random cases (lib/randcase.c), each compared with the reference
 * over whole poisoned pools (lib/diffcase.c). Calls from different threads interleave on the
 * shared handle's context (push/pop per call), on its inv_freq cache (the cases mix thetas and
 * rotary_dims, so it is replaced under contention), and on the thread-local last error. */
#include "config.h"
#include "tap.h"
#include "gpu.h"
#include "diffcase.h"
#include "randcase.h"
#include "pagedkv.h"

#include <pthread.h>
#include <string.h>

#define THREADS 8

typedef struct worker {
    pkv_cuda *shared;
    int id, own_handle_failures, alloc_failures, cases;
    pkvi_outcome out;
    char first[400];
} worker;

static void *work(void *arg)
{
    static const uint32_t nkvs[] = {1, 2, 8}, hds[] = {8, 64, 80, 128, 256}, bss[] = {1, 16, 7},
                          toks[] = {1, 3, 40, 300};
    worker *w = arg;
    pkvi_rng r = {0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1)};
    int rounds = tap_sample_stride() > 1 ? 2 : 6;
    for (int round = 0; round < rounds; round++) {
        /* every other round on a handle of this thread's own, opened and closed here */
        pkv_cuda *own = NULL, *h = w->shared;
        if (round % 2 && pkv_cuda_open(0, &own) != PKV_OK) w->own_handle_failures++;
        if (own) h = own;
        for (int op = PKV_OP_WRITE_BF16; op < PKV_OP_COUNT; op++) {
            pkvi_case c;
            uint64_t x = pkvi_rng_next(&r);
            if (pkvi_case_random(&c, &r, nkvs[x % 3], hds[(x >> 8) % 5], bss[(x >> 16) % 3],
                                 toks[(x >> 24) % 4])) {
                w->alloc_failures++;
                continue;
            }
            pkvi_case_run(op, &c, h, &w->out);
            if (w->out.what[0] && !w->first[0]) memcpy(w->first, w->out.what, sizeof w->first);
            pkvi_case_free(&c);
            w->cases++;
        }
        if (own) pkv_cuda_close(own);
    }
    return NULL;
}

int main(void)
{
    pkv_cuda *h = gpu_open_or_skip();
    pthread_t th[THREADS];
    worker w[THREADS];
    unsigned long long gpu_bytes = 0, gpu_bad = 0, ref_bad = 0;
    int cases = 0, own_failures = 0, alloc_failures = 0, started = 0;
    plan(5);
    memset(w, 0, sizeof w);
    for (int i = 0; i < THREADS; i++) {
        w[i].shared = h;
        w[i].id = i;
        started += pthread_create(&th[i], NULL, work, &w[i]) == 0;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        cases += w[i].cases;
        own_failures += w[i].own_handle_failures;
        alloc_failures += w[i].alloc_failures;
        gpu_bytes += w[i].out.gpu_bytes;
        gpu_bad += w[i].out.gpu_mismatches;
        ref_bad += w[i].out.ref_mismatches;
        if (w[i].first[0]) diag("thread %d: %s", i, w[i].first);
    }
    is_int(started, THREADS, "%d threads ran %d cases (every op, random shapes)", THREADS, cases);
    is_int(alloc_failures, 0, "every case could be built (host memory)");
    is_int(own_failures, 0, "each thread opened and closed handles of its own meanwhile");
    ok(gpu_bytes > 0 && gpu_bad == 0,
       "GPU == reference on every case from every thread (%llu pool bytes compared)", gpu_bytes);
    is_int((long long)ref_bad, 0, "the reference kept its properties in every thread");
    pkv_cuda_close(h);
    return done_testing();
}
