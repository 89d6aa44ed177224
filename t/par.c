/* par_run: a pthread pool pulling fixed-size chunks from an atomic counter. */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define CHUNK (1u << 22)
#define MAX_THREADS 256

typedef struct job {
    uint64_t begin, end, stride;
    par_fn fn;
    void *ctx;
    atomic_uint_fast64_t next; /* next chunk index */
    par_result result[MAX_THREADS];
} job;

typedef struct worker {
    job *j;
    int id;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    job *j = w->j;
    par_result *r = &j->result[w->id];
    for (;;) {
        uint64_t c = atomic_fetch_add(&j->next, 1);
        uint64_t lo = j->begin + c * (uint64_t)CHUNK, hi, first;
        if (c >= (j->end - j->begin + CHUNK - 1) / CHUNK) break;
        hi = lo + CHUNK < j->end ? lo + CHUNK : j->end;
        /* first input of this chunk on the begin + k * stride lattice */
        first = j->begin + ((lo - j->begin + j->stride - 1) / j->stride) * j->stride;
        if (first < hi) j->fn(first, hi, j->stride, j->ctx, r);
    }
    return NULL;
}

static int thread_count(void)
{
    const char *s = getenv("PKV_TEST_THREADS");
    long n = s ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    return (int)n;
}

par_result par_run(uint64_t begin, uint64_t end, uint64_t stride, par_fn fn, void *ctx)
{
    static job j; /* large; one run at a time */
    pthread_t tid[MAX_THREADS];
    worker w[MAX_THREADS];
    par_result total = {0, 0, 0};
    int n = thread_count(), started = 0;
    j.begin = begin;
    j.end = end;
    j.stride = stride ? stride : 1;
    j.fn = fn;
    j.ctx = ctx;
    atomic_store(&j.next, 0);
    for (int i = 0; i < n; i++) {
        j.result[i] = total;
        w[i].j = &j;
        w[i].id = i;
    }
    for (int i = 0; i < n; i++)
        if (pthread_create(&tid[i], NULL, work, &w[i]) == 0) started++;
        else break;
    if (started == 0) work(&w[0]); /* no threads: do it all here */
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    for (int i = 0; i < n; i++) {
        par_result *r = &j.result[i];
        total.checked += r->checked;
        if (r->mismatches && (total.mismatches == 0 || r->first_bad < total.first_bad))
            total.first_bad = r->first_bad;
        total.mismatches += r->mismatches;
    }
    return total;
}
