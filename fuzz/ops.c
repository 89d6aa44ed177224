/* Fuzz targets for the cache ops: a descriptor, buffers and slots decoded from the input (valid
 * and invalid descriptors alike), run through the reference and, when a GPU is present, the
 * CUDA backend (lib/diffcase.c compares the whole poisoned pools and the counts). Sources,
 * slots, positions and weights are allocated to their exact extents so that AddressSanitizer
 * sees any read past them. */
#include "config.h"
#include "fuzz.h"
#include "provider.h"
#include "diffcase.h"
#include "randcase.h"
#include "pagedkv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROW 4096u /* num_kv_heads * head_dim, to keep one execution fast */

static void *zalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p) abort();
    return p;
}

/* A large case's payload (build): n bytes of which at most a quarter of what is left comes from
 * the front, the rest pkvi_rng's stream seeded by those bytes, so that the choices read after
 * the payloads still come from the input. */
static void payload_part(fz *f, void *dst, size_t n)
{
    uint8_t *d = dst;
    const size_t k = n < f->n / 4 ? n : f->n / 4;
    pkvi_rng r = {0xcbf29ce484222325ull};
    fz_bytes(f, d, k);
    for (size_t i = 0; i < k; i++) r.s = (r.s ^ d[i]) * 0x100000001b3ull;
    r.s |= 1; /* a zero state stays zero */
    for (size_t i = k; i < n; i += 8) { /* a generator value fills 8 bytes, high byte first */
        const uint64_t v = pkvi_rng_next(&r);
        for (size_t j = 0; j < 8 && i + j < n; j++) d[i + j] = (uint8_t)(v >> (56 - 8 * j));
    }
}

static float pick_scale(fz *f)
{
    static const float s[] = {1.0f, 0.01171875f, 0.3f, 7.0f, 1e-30f, 3e30f, 448.0f, 0x1p-126f,
                              0x1p-149f, 0.0f, -1.0f, INFINITY, NAN};
    /* mostly valid: invalid scales are a small share of the choices */
    return fz_range(f, 0, 7) ? s[fz_range(f, 0, 8)] : FZ_PICK(f, s);
}

/* Decode a case. With many waves (fz_many_waves) an eighth of the fused cases are large ones,
 * for the kernels of larger tiles, which the launcher gives only calls of enough tiles a warp
 * (on one multiprocessor from 2,273 items for fused_fp8_k's wide kernel, 2,041 for fused_bf16's
 * 16-element kernel at head_dim 128, 1,529 for its 32-element kernel; at most 48 tokens of 16
 * heads are 768): up to 320 tokens of 4 to 16 heads of 64, 128 or 256 elements, dense aligned
 * rows, a cos/sin table (rope_table), and payloads that leave most of the input for the
 * choices after them (payload_part); slots, positions, values and scales as hostile as in the
 * others. Returns whether the case is such a large one. */
static int build(fz *f, int op, pkvi_case *c)
{
    static const uint32_t hds[] = {1, 2, 3, 8, 31, 32, 33, 64, 80, 96, 112, 128, 192, 256, 320,
                                   512, 514, 0},
                          big_hds[] = {64, 128, 256};
    static const float thetas[] = {1e4f, 1e6f, 1e8f, 1.0f, 3.4e38f, 0.5f, INFINITY, NAN};
    static const float epss[] = {1e-6f, 1e-5f, 0.0f, 1e30f, 0x1p-149f, -1e-6f, NAN};
    pkv_cache_layout *l = &c->f.cache;
    uint64_t row, dense, slots, ks, vs;
    uint32_t T, valid_slots_used = 0;
    int fused = op >= PKV_OP_FUSED_BF16, valid;
    const int big = fused && fz_many_waves() && fz_range(f, 0, 7) == 0;
    void (*payload)(fz *, void *, size_t) = big ? payload_part : fz_bytes;
    memset(c, 0, sizeof *c);
    l->head_dim = big     ? FZ_PICK(f, big_hds)
                  : fused ? FZ_PICK(f, hds)
                          : (uint32_t)fz_range(f, 0, 300);
    l->num_kv_heads = (uint32_t)fz_range(f, big ? 4 : 0, 16);
    if (l->num_kv_heads && l->head_dim && (uint64_t)l->num_kv_heads * l->head_dim > MAX_ROW)
        l->num_kv_heads = MAX_ROW / l->head_dim ? MAX_ROW / l->head_dim : 1;
    l->block_size = (uint32_t)fz_range(f, 0, 40);
    T = (uint32_t)fz_range(f, 0, big ? 320 : 48);
    row = (uint64_t)l->num_kv_heads * l->head_dim;
    dense = row * l->block_size;
    l->num_blocks = fz_range(f, 0, 2 + (l->block_size ? 2u * T / l->block_size : 0));
    switch (fz_range(f, 0, 7)) {
    case 0: l->block_stride = dense ? dense - 1 : 0; break; /* invalid unless 0 */
    case 1: case 2: l->block_stride = dense + fz_range(f, 1, 9); break;
    default: l->block_stride = 0;
    }
    c->f.num_tokens = T;
    ks = big ? 0 : fz_range(f, 0, 9) ? (fz_bool(f) ? 0 : row + fz_range(f, 0, 7)) : row / 2;
    vs = big ? 0 : fz_range(f, 0, 9) ? (fz_bool(f) ? 0 : row + fz_range(f, 0, 7)) : row / 2;
    c->f.k_row_stride = ks;
    c->f.v_row_stride = vs;
    c->f.rotary_dim = fz_range(f, 0, 15) ? 2 * (uint32_t)fz_range(f, 0, l->head_dim / 2)
                                         : (uint32_t)fz_range(f, 0, 600);
    c->f.theta = fz_range(f, 0, 7) ? FZ_PICK(f, thetas) : (float)fz_range(f, 1, 100000000);
    c->f.rms_eps = FZ_PICK(f, epss);
    c->f.k_scale = pick_scale(f);
    c->f.v_scale = pick_scale(f);
    c->f.k_inv_scale = pick_scale(f);
    if (fz_bool(f)) {
        uint32_t pairs = c->f.rotary_dim / 2, h = (uint32_t)fz_range(f, 0, pairs);
        uint32_t w = (uint32_t)fz_range(f, 0, pairs - h);
        c->f.mrope_section[1] = h;
        c->f.mrope_section[2] = w;
        c->f.mrope_section[0] = fz_range(f, 0, 15) ? pairs - h - w : (uint32_t)fz_range(f, 0, 9);
    }
    pkvi_write_desc_like(&c->w, &c->f);

    valid = (fused ? pkv_fused_check((pkv_op)op, &c->f) : pkv_write_check((pkv_op)op, &c->w)) ==
            PKV_OK;
    /* exact extents when valid (ASan sees any overread); token buffers always exact */
    if (valid && T) {
        uint64_t kstride = ks ? ks : row, vstride = vs ? vs : row;
        uint64_t ke = (T - 1) * kstride + row, ve = (T - 1) * vstride + row;
        c->src_elems = (size_t)(ke > ve ? ke : ve);
    } else {
        c->src_elems = 0;
    }
    c->k = zalloc(c->src_elems * 2);
    c->v = zalloc(c->src_elems * 2);
    payload(f, c->k, c->src_elems * 2);
    payload(f, c->v, c->src_elems * 2);
    c->wt = zalloc((size_t)l->head_dim * 2);
    payload(f, c->wt, (size_t)l->head_dim * 2);
    c->pos[0] = zalloc((size_t)T * 4);
    payload(f, c->pos[0], (size_t)T * 4);
    if (op == PKV_OP_FUSED_MROPE_BF16 && fz_bool(f)) {
        c->pos[1] = zalloc((size_t)T * 4);
        c->pos[2] = zalloc((size_t)T * 4);
        payload(f, c->pos[1], (size_t)T * 4);
        payload(f, c->pos[2], (size_t)T * 4);
    } else {
        c->pos[1] = c->pos[2] = c->pos[0];
    }
    c->slots = zalloc((size_t)T * 8);
    slots = l->num_blocks * l->block_size;
    for (uint32_t t = 0; t < T; t++) {
        switch (fz_range(f, 0, 7)) {
        case 0: c->slots[t] = -1 - (int64_t)fz_range(f, 0, 1000); break;
        case 1: c->slots[t] = (int64_t)(slots + fz_range(f, 0, 5)); break;
        case 2: c->slots[t] = INT64_MAX - (int64_t)fz_range(f, 0, 3); break;
        default:
            /* distinct valid slots: a walk with strides from the input */
            valid_slots_used += 1 + (uint32_t)fz_range(f, 0, 3);
            c->slots[t] = valid_slots_used - 1 < slots ? (int64_t)(valid_slots_used - 1) : -1;
        }
    }
    c->shift = big ? 0 : fz_bool(f);
    return big;
}

static void release(pkvi_case *c)
{
    free(c->k);
    free(c->v);
    free(c->wt);
    if (c->pos[1] != c->pos[0]) {
        free(c->pos[1]);
        free(c->pos[2]);
    }
    free(c->pos[0]);
    free(c->slots);
}

/* PKV_FUZZ_MANY_WAVES (fz_many_waves): every valid case rotates the whole head (MRoPE sections
 * reset to interleaved if they no longer fit), the shape of the warp kernels' halves form,
 * which random rotary_dim values rarely give, and the launcher sees one multiprocessor, so that
 * these small cases take the kernels of calls of many waves (and an eighth are large: build). */
static void many_waves(int op, pkvi_case *c)
{
    if (fz_many_waves() && pkv_fused_check((pkv_op)op, &c->f) == PKV_OK) {
        const pkv_fused_desc was = c->f;
        c->f.rotary_dim = c->f.cache.head_dim;
        if (pkv_fused_check((pkv_op)op, &c->f) != PKV_OK)
            memset(c->f.mrope_section, 0, sizeof c->f.mrope_section);
        if (pkv_fused_check((pkv_op)op, &c->f) != PKV_OK) c->f = was;
    }
}

/* The fused ops' cos/sin table for this input: none, or one bound from the input (read
 * last, so older corpus inputs mean what they meant: no table; always one for a large case of
 * many waves, build), every position folded below
 * twice the bound so that about half of them are in the table, and, with a GPU, the handle's
 * table built for the case's theta and rotary_dim over it (a table must never change a byte;
 * one for an invalid theta or rotary_dim fails to build, and then there is none). */
static void rope_table(fz *f, int op, pkvi_case *c, int big)
{
    pkv_cuda *h = fz_gpu();
    uint32_t len = big || fz_bool(f) ? (uint32_t)fz_range(f, 1, 4096) : 0;
    many_waves(op, c); /* before the table: it is built for the case's rotary_dim */
    for (int i = 0; len && i < 3; i++)
        if (i == 0 || c->pos[i] != c->pos[0])
            for (uint32_t t = 0; t < c->f.num_tokens; t++)
                c->pos[i][t] %= 2 * len;
    if (h && (!len || pkv_cuda_rope_table(h, c->f.theta, c->f.rotary_dim, len) != PKV_OK))
        pkv_cuda_rope_table(h, 0.0f, 0, 0);
    /* the halves kernels' streaming variants for odd token counts (no byte read: the corpus's
     * inputs keep their meaning) */
    fz_gpu_streaming(c->f.num_tokens & 1u);
}

static int run_op(int op, const uint8_t *data, size_t size)
{
    fz f = {data, size};
    pkvi_case c;
    pkvi_outcome o;
    memset(&o, 0, sizeof o);
    const int big = build(&f, op, &c);
    if (op >= PKV_OP_FUSED_BF16) rope_table(&f, op, &c, big);
    pkvi_case_run(op, &c, fz_gpu(), &o);
    release(&c);
    if (o.ref_mismatches || o.gpu_mismatches) {
        fprintf(stderr, "pagedkv fuzz: MISMATCH (%llu reference, %llu GPU bytes or counts)\n%s\n",
                o.ref_mismatches, o.gpu_mismatches, o.what);
        abort();
    }
    return 0;
}

int fz_write_bf16(const uint8_t *d, size_t n) { return run_op(PKV_OP_WRITE_BF16, d, n); }
int fz_write_v_bf16(const uint8_t *d, size_t n) { return run_op(PKV_OP_WRITE_V_BF16, d, n); }
int fz_write_fp8(const uint8_t *d, size_t n) { return run_op(PKV_OP_WRITE_FP8, d, n); }
int fz_fused_bf16(const uint8_t *d, size_t n) { return run_op(PKV_OP_FUSED_BF16, d, n); }
int fz_fused_mrope_bf16(const uint8_t *d, size_t n)
{
    return run_op(PKV_OP_FUSED_MROPE_BF16, d, n);
}
int fz_fused_fp8_k(const uint8_t *d, size_t n) { return run_op(PKV_OP_FUSED_FP8_K, d, n); }
int fz_fused_fp8_kv(const uint8_t *d, size_t n) { return run_op(PKV_OP_FUSED_FP8_KV, d, n); }

/* fill_slots: the reference against the definition and the GPU against the reference. */
int fz_fill_slots(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    pkv_fill_slots_desc d;
    int32_t *table;
    int64_t *ref, *want;
    pkv_status st;
    d.block_size = fz_range(&f, 0, 9) ? (uint32_t)fz_range(&f, 1, 64) : (uint32_t)fz_bits(&f, 4);
    d.start_pos = fz_bool(&f) ? (uint32_t)fz_bits(&f, 4) : (uint32_t)fz_range(&f, 0, 500);
    d.count = (uint32_t)fz_range(&f, 0, 300);
    d.table_len = (uint32_t)fz_range(&f, 0, 64);
    table = zalloc((size_t)d.table_len * 4);
    fz_bytes(&f, table, (size_t)d.table_len * 4);
    ref = zalloc((size_t)d.count * 8);
    want = zalloc((size_t)d.count * 8);
    st = pkv_ref_fill_slots(&d, table, ref);
    if (st == PKV_OK) {
        for (uint32_t i = 0; i < d.count; i++) {
            uint64_t pos = (uint64_t)d.start_pos + i, b = pos / d.block_size;
            want[i] = b >= d.table_len || table[b] < 0
                          ? -1
                          : (int64_t)table[b] * d.block_size + (int64_t)(pos % d.block_size);
        }
        if (memcmp(ref, want, (size_t)d.count * 8)) {
            fprintf(stderr, "pagedkv fuzz: fill_slots reference differs from its definition\n");
            abort();
        }
        if (fz_gpu() && d.count) {
            pkv_cuda *h = fz_gpu();
            uint64_t dt = 0, ds = 0;
            int64_t *got = zalloc((size_t)d.count * 8);
            if (pkv_cuda_alloc(h, (size_t)d.table_len * 4 + 4, &dt) ||
                pkv_cuda_alloc(h, (size_t)d.count * 8, &ds) ||
                pkv_cuda_upload(h, dt, table, (size_t)d.table_len * 4) ||
                pkv_cuda_fill_slots(h, &d, dt, ds, NULL) || pkv_cuda_synchronize(h, NULL) ||
                pkv_cuda_download(h, got, ds, (size_t)d.count * 8) ||
                memcmp(got, ref, (size_t)d.count * 8)) {
                fprintf(stderr, "pagedkv fuzz: fill_slots GPU differs: %s\n", pkv_last_error());
                abort();
            }
            pkv_cuda_free(h, dt);
            pkv_cuda_free(h, ds);
            free(got);
        }
    }
    free(table);
    free(ref);
    free(want);
    return 0;
}
