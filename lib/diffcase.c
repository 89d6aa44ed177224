/* One differential case; see diffcase.h. Used by "pkv check" and by the fuzzers. */
#include "config.h"
#include "diffcase.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "pagedkv diffcase: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

size_t pkvi_case_pool_elems(const pkvi_case *c)
{
    const pkv_cache_layout *l = &c->f.cache;
    uint64_t row = (uint64_t)l->num_kv_heads * l->head_dim;
    uint64_t bstride = l->block_stride ? l->block_stride : row * l->block_size;
    return (size_t)(l->num_blocks * bstride);
}

/* Describe the first differing byte of two pools as a cache coordinate. */
static void describe(pkvi_outcome *o, const char *who, int op, const pkvi_case *c,
                     const char *pool, const unsigned char *want, const unsigned char *got,
                     size_t bytes, size_t esz)
{
    const pkv_cache_layout *l = &c->f.cache;
    uint64_t row = (uint64_t)l->num_kv_heads * l->head_dim;
    uint64_t bstride = l->block_stride ? l->block_stride : row * l->block_size;
    for (size_t i = 0; i < bytes; i++) {
        if (want[i] == got[i]) continue;
        {
            uint64_t e = i / esz, blk = e / bstride, in = e % bstride;
            if (o->what[0]) return;
            snprintf(o->what, sizeof o->what,
                     "%s: %s %s pool byte %zu (block %llu, %s %llu, head %llu, dim %llu): "
                     "expected 0x%02x, got 0x%02x; layout %u heads x %u dims, block_size %u, "
                     "block_stride %llu, %u tokens, rotary_dim %u",
                     who, pkv_op_name((pkv_op)op), pool, i, (unsigned long long)blk,
                     in < row * l->block_size ? "offset" : "padding element",
                     (unsigned long long)(in < row * l->block_size ? in / row : in),
                     (unsigned long long)(in % row / l->head_dim),
                     (unsigned long long)(in % l->head_dim), want[i], got[i], l->num_kv_heads,
                     l->head_dim, l->block_size, (unsigned long long)bstride, c->f.num_tokens,
                     c->f.rotary_dim);
            return;
        }
    }
}

static unsigned long long diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned long long d = 0;
    for (size_t i = 0; i < n; i++) d += x[i] != y[i];
    return d;
}

static pkv_status run_ref(int op, const pkvi_case *c, unsigned char *kp, unsigned char *vp,
                          uint64_t *oob)
{
    switch (op) {
    case PKV_OP_WRITE_BF16:
        return pkv_ref_write_bf16(&c->w, c->k, c->v, c->slots, (uint16_t *)kp, (uint16_t *)vp,
                                  oob);
    case PKV_OP_WRITE_V_BF16:
        return pkv_ref_write_v_bf16(&c->w, c->v, c->slots, (uint16_t *)vp, oob);
    case PKV_OP_WRITE_FP8: return pkv_ref_write_fp8(&c->w, c->k, c->v, c->slots, kp, vp, oob);
    case PKV_OP_FUSED_BF16:
        return pkv_ref_fused_bf16(&c->f, c->k, c->wt, c->pos[0], c->slots, (uint16_t *)kp, oob);
    case PKV_OP_FUSED_MROPE_BF16:
        return pkv_ref_fused_mrope_bf16(&c->f, c->k, c->wt, c->pos[0], c->pos[1], c->pos[2],
                                        c->slots, (uint16_t *)kp, oob);
    case PKV_OP_FUSED_FP8_K:
        return pkv_ref_fused_fp8_k(&c->f, c->k, c->wt, c->pos[0], c->slots, kp, oob);
    default:
        return pkv_ref_fused_fp8_kv(&c->f, c->k, c->v, c->wt, c->pos[0], c->slots, kp, vp, oob);
    }
}

/* The reference's expected pools by another route: the definition (writes), a second run
 * with a stray-write check (single-round ops), the scalar op (MRoPE with one stream), or the
 * explicit chain (op 8). Returns the expected out-of-range count. */
static uint64_t expected(int op, const pkvi_case *c, const unsigned char *ka, unsigned char *kb,
                         unsigned char *vb, size_t n, size_t esz)
{
    const pkv_cache_layout *l = &c->f.cache;
    uint64_t row = (uint64_t)l->num_kv_heads * l->head_dim, ob = 0;
    uint64_t bstride = l->block_stride ? l->block_stride : row * l->block_size;
    switch (op) {
    case PKV_OP_WRITE_BF16:
    case PKV_OP_WRITE_V_BF16:
    case PKV_OP_WRITE_FP8: {
        float ik = 1.0f / c->w.k_scale, iv = 1.0f / c->w.v_scale;
        uint64_t ks = c->w.k_row_stride ? c->w.k_row_stride : row;
        uint64_t vs = c->w.v_row_stride ? c->w.v_row_stride : row;
        for (uint32_t t = 0; t < c->w.num_tokens; t++) {
            uint64_t s = (uint64_t)c->slots[t], off;
            if (c->slots[t] < 0) continue;
            if (s >= l->num_blocks * l->block_size) {
                ob++;
                continue;
            }
            off = s / l->block_size * bstride + s % l->block_size * row;
            for (uint64_t e = 0; e < row; e++) {
                uint16_t vx = c->v[t * vs + e], kx = op == PKV_OP_WRITE_V_BF16 ? 0 : c->k[t * ks + e];
                if (op == PKV_OP_WRITE_FP8) {
                    kb[off + e] = pkv_e4m3_from_f32(pkv_bf16_to_f32(kx) * ik);
                    vb[off + e] = pkv_e4m3_from_f32(pkv_bf16_to_f32(vx) * iv);
                } else {
                    if (op == PKV_OP_WRITE_BF16) memcpy(kb + 2 * (off + e), &kx, 2);
                    memcpy(vb + 2 * (off + e), &vx, 2);
                }
            }
        }
        return ob;
    }
    case PKV_OP_FUSED_BF16:
    case PKV_OP_FUSED_FP8_K: {
        /* deterministic; and every byte outside the rows of valid tokens is still poison */
        unsigned char *mask = calloc(n + 1, 1);
        if (!mask) abort();
        run_ref(op, c, kb, NULL, &ob);
        for (uint32_t t = 0; t < c->f.num_tokens; t++) {
            uint64_t s = (uint64_t)c->slots[t];
            if (c->slots[t] < 0 || s >= l->num_blocks * l->block_size) continue;
            memset(mask + s / l->block_size * bstride + s % l->block_size * row, 1, row);
        }
        for (size_t e = 0; e < n * esz; e++)
            if (!mask[e / esz] && ka[e] != PKVI_POISON) kb[e] = (unsigned char)~PKVI_POISON;
        free(mask);
        return ob;
    }
    case PKV_OP_FUSED_MROPE_BF16:
        if (c->pos[1] == c->pos[0] && c->pos[2] == c->pos[0]) {
            pkv_ref_fused_bf16(&c->f, c->k, c->wt, c->pos[0], c->slots, (uint16_t *)kb, &ob);
        } else {
            run_ref(op, c, kb, NULL, &ob); /* no other route: determinism only */
        }
        return ob;
    default: { /* op 8: the explicit chain of the public building blocks */
        uint64_t ks = c->f.k_row_stride ? c->f.k_row_stride : row;
        uint16_t *tmp = xalloc((size_t)c->f.num_tokens * row * 2 + 2);
        pkv_write_desc w;
        for (uint32_t t = 0; t < c->f.num_tokens; t++)
            memcpy(tmp + t * row, c->k + t * ks, row * 2);
        pkv_ref_rms_norm((uint64_t)c->f.num_tokens * l->num_kv_heads, l->head_dim, tmp, c->wt,
                         c->f.rms_eps, tmp);
        pkv_ref_rope(c->f.num_tokens, l->num_kv_heads, l->head_dim, c->f.rotary_dim, c->f.theta,
                     c->pos[0], tmp);
        memset(&w, 0, sizeof w);
        w.cache = c->f.cache;
        w.num_tokens = c->f.num_tokens;
        w.v_row_stride = c->f.v_row_stride;
        w.k_scale = c->f.k_scale;
        w.v_scale = c->f.v_scale;
        pkv_ref_write_fp8(&w, tmp, c->v, c->slots, kb, vb, &ob);
        free(tmp);
        return ob;
    }
    }
}

/* Ops 5 and 6 against a binary64 evaluation of the same definition (with the same binary32
 * angles, which are part of it): every written element within (2^-8 + 2^-12) |y| + 2^-14
 * max|normed| of it (the BF16 store plus a few binary32 roundings, amplified only through
 * cancellation in the rotation). Heads with non-finite inputs, whose binary32 sum of squares
 * would overflow or underflow, or whose normalised values fall near or below the binary32
 * normal range, are outside this property. */
static unsigned long long tolerance(int op, const pkvi_case *c, const unsigned char *ka,
                                    pkvi_outcome *o)
{
    const pkv_cache_layout *l = &c->f.cache;
    uint64_t row = (uint64_t)l->num_kv_heads * l->head_dim, ks = c->f.k_row_stride ? c->f.k_row_stride : row;
    uint64_t bstride = l->block_stride ? l->block_stride : row * l->block_size;
    uint32_t hd = l->head_dim, half = c->f.rotary_dim / 2;
    float inv_freq[PKV_MAX_FUSED_HEAD_DIM / 2];
    double normed[PKV_MAX_FUSED_HEAD_DIM];
    unsigned long long bad = 0;
    if (half && pkv_inv_freq_table(c->f.theta, c->f.rotary_dim, inv_freq) != PKV_OK) return 0;
    for (uint32_t t = 0; t < c->f.num_tokens; t++) {
        uint64_t s = (uint64_t)c->slots[t];
        if (c->slots[t] < 0 || s >= l->num_blocks * l->block_size) continue;
        for (uint32_t h = 0; h < l->num_kv_heads; h++) {
            const uint16_t *x = c->k + t * ks + (uint64_t)h * hd;
            double ss = 0, maxn = 0, ms;
            int finite = 1;
            uint64_t base = s / l->block_size * bstride + s % l->block_size * row + (uint64_t)h * hd;
            for (uint32_t e = 0; e < hd; e++) {
                double v = pkv_bf16_to_f32(x[e]), w = pkv_bf16_to_f32(c->wt[e]);
                finite &= isfinite(v) && isfinite(w);
                ss += v * v;
            }
            ms = ss / hd;
            if (!finite || ms > 1e36 || (ms < 0x1p-100 && ms != 0) || ms + c->f.rms_eps == 0) continue;
            for (uint32_t e = 0; e < hd; e++) {
                double xr = pkv_bf16_to_f32(x[e]) / sqrt(ms + c->f.rms_eps);
                normed[e] = xr * (1.0 + pkv_bf16_to_f32(c->wt[e]));
                maxn = fmax(maxn, fabs(normed[e]));
                /* binary32 intermediates near the ends of the normal range lose their value */
                if ((xr != 0 && fabs(xr) < 0x1p-120) || (normed[e] != 0 && fabs(normed[e]) < 0x1p-120) ||
                    fabs(normed[e]) > 0x1p126)
                    finite = 0;
            }
            if (!finite) continue;
            for (uint32_t e = 0; e < hd; e++) {
                double y = normed[e], got, tol;
                uint16_t b;
                if (e < c->f.rotary_dim) {
                    uint32_t p = e < half ? e : e - half, stream = 0;
                    if (op == PKV_OP_FUSED_MROPE_BF16) {
                        const uint32_t *sec = c->f.mrope_section;
                        if (!sec[0] && !sec[1] && !sec[2]) stream = p % 3;
                        else if (p % 3 == 1 && p < 3 * sec[1]) stream = 1;
                        else if (p % 3 == 2 && p < 3 * sec[2]) stream = 2;
                    }
                    {
                        double a = (double)((float)c->pos[stream][t] * inv_freq[p]);
                        y = e < half ? normed[p] * cos(a) - normed[p + half] * sin(a)
                                     : normed[p + half] * cos(a) + normed[p] * sin(a);
                    }
                }
                memcpy(&b, ka + 2 * (base + e), 2);
                got = pkv_bf16_to_f32(b);
                tol = (0x1p-8 + 0x1p-12) * fabs(y) + 0x1p-14 * maxn;
                if (!(fabs(got - y) <= tol) && fabs(y) < 3e38) {
                    bad++;
                    if (!o->what[0])
                        snprintf(o->what, sizeof o->what, "reference %s: token %u head %u dim %u "
                                 "is %a, binary64 says %a (tolerance %a)",
                                 pkv_op_name((pkv_op)op), t, h, e, got, y, tol);
                }
            }
        }
    }
    return bad;
}

typedef struct dev {
    pkv_cuda *h;
    uint64_t base[10];
    int n;
    pkv_status st;
} dev;

/* Upload (or allocate) `shift` bytes past an aligned allocation; 0 for empty buffers. */
static uint64_t up(dev *d, const void *src, size_t bytes, size_t shift)
{
    uint64_t p = 0;
    if (d->st) return 0;
    if ((d->st = pkv_cuda_alloc(d->h, bytes + shift + 8, &p))) return 0;
    d->base[d->n++] = p;
    if (src && bytes) d->st = pkv_cuda_upload(d->h, p + shift, src, bytes);
    return p + shift;
}

/* The launch's status; its message (before any later call clears it) goes to msg. */
static pkv_status run_gpu(int op, const pkvi_case *c, pkv_cuda *h, unsigned char *gk,
                          unsigned char *gv, uint64_t *goob, size_t pool_bytes, size_t esz,
                          char *msg, size_t msg_size)
{
    dev d;
    uint64_t dk, dv, dw, dp[3], ds, dkc, dvc, doob;
    size_t T = c->f.num_tokens;
    pkv_status st = PKV_OK;
    memset(&d, 0, sizeof d);
    d.h = h;
    dk = up(&d, c->k, c->src_elems * 2, c->shift ? 2 : 0);
    dv = up(&d, c->v, c->src_elems * 2, c->shift ? 2 : 0);
    dw = up(&d, c->wt, (size_t)c->f.cache.head_dim * 2, 0);
    for (int i = 0; i < 3; i++) dp[i] = up(&d, c->pos[i], T * 4, 4);
    ds = up(&d, c->slots, T * 8, 0);
    dkc = up(&d, NULL, pool_bytes, c->shift ? esz : 0);
    dvc = up(&d, NULL, pool_bytes, c->shift ? esz : 0);
    doob = up(&d, goob, 8, 0);
    if (!d.st) d.st = pkv_cuda_fill(h, dkc, PKVI_POISON, pool_bytes);
    if (!d.st) d.st = pkv_cuda_fill(h, dvc, PKVI_POISON, pool_bytes);
    if (d.st) {
        for (int i = 0; i < d.n; i++) pkv_cuda_free(h, d.base[i]);
        return d.st;
    }
    switch (op) {
    case PKV_OP_WRITE_BF16:
        st = pkv_cuda_write_bf16(h, &c->w, dk, dv, ds, dkc, dvc, doob, NULL);
        break;
    case PKV_OP_WRITE_V_BF16: st = pkv_cuda_write_v_bf16(h, &c->w, dv, ds, dvc, doob, NULL); break;
    case PKV_OP_WRITE_FP8:
        st = pkv_cuda_write_fp8(h, &c->w, dk, dv, ds, dkc, dvc, doob, NULL);
        break;
    case PKV_OP_FUSED_BF16:
        st = pkv_cuda_fused_bf16(h, &c->f, dk, dw, dp[0], ds, dkc, doob, NULL);
        break;
    case PKV_OP_FUSED_MROPE_BF16:
        st = pkv_cuda_fused_mrope_bf16(h, &c->f, dk, dw, dp[0], dp[1], dp[2], ds, dkc, doob, NULL);
        break;
    case PKV_OP_FUSED_FP8_K:
        st = pkv_cuda_fused_fp8_k(h, &c->f, dk, dw, dp[0], ds, dkc, doob, NULL);
        break;
    default:
        st = pkv_cuda_fused_fp8_kv(h, &c->f, dk, dv, dw, dp[0], ds, dkc, dvc, doob, NULL);
    }
    snprintf(msg, msg_size, "%s", pkv_last_error());
    {
        pkv_status s2 = pkv_cuda_synchronize(h, NULL);
        if (!s2) s2 = pkv_cuda_download(h, gk, dkc, pool_bytes);
        if (!s2) s2 = pkv_cuda_download(h, gv, dvc, pool_bytes);
        if (!s2) s2 = pkv_cuda_download(h, goob, doob, 8);
        if (s2 && !st) {
            st = s2 == PKV_EINVAL ? PKV_ECUDA : s2;
            snprintf(msg, msg_size, "%s", pkv_last_error());
        }
    }
    for (int i = 0; i < d.n; i++) pkv_cuda_free(h, d.base[i]);
    return st;
}

void pkvi_case_run(int op, const pkvi_case *c, pkv_cuda *gpu, pkvi_outcome *o)
{
    size_t n = pkvi_case_pool_elems(c);
    size_t esz = (op == PKV_OP_WRITE_FP8 || op >= PKV_OP_FUSED_FP8_K) ? 1 : 2, pb;
    unsigned char *ka, *va, *kb, *vb;
    uint64_t oa = 0, ob;
    pkv_status rs;
    char ref_msg[512];
    pkv_status valid = op <= PKV_OP_WRITE_FP8 ? pkv_write_check((pkv_op)op, &c->w)
                                              : pkv_fused_check((pkv_op)op, &c->f);
    if (valid != PKV_OK) n = 0; /* the pools may be absurd; nothing may be written anyway */
    pb = n * esz;
    ka = xalloc(pb);
    va = xalloc(pb);
    kb = xalloc(pb);
    vb = xalloc(pb);
    memset(ka, PKVI_POISON, pb);
    memset(va, PKVI_POISON, pb);
    memcpy(kb, ka, pb);
    memcpy(vb, va, pb);
    rs = run_ref(op, c, ka, va, &oa);
    snprintf(ref_msg, sizeof ref_msg, "%s", pkv_last_error());
    o->ref_bytes += 2 * pb;
    if (rs != valid) {
        o->ref_mismatches++;
        if (!o->what[0])
            snprintf(o->what, sizeof o->what, "reference: %s returned %d but its check %d (%.200s)",
                     pkv_op_name((pkv_op)op), (int)rs, (int)valid, ref_msg);
    }
    ob = rs == PKV_OK ? expected(op, c, ka, kb, vb, n, esz) : 0;
    if (rs == PKV_OK && (op == PKV_OP_FUSED_BF16 || op == PKV_OP_FUSED_MROPE_BF16))
        o->ref_mismatches += tolerance(op, c, ka, o);
    {
        unsigned long long d = diff(ka, kb, pb) + diff(va, vb, pb) + (oa != ob);
        o->ref_mismatches += d;
        if (d) {
            describe(o, "reference vs its definition", op, c, "K", kb, ka, pb, esz);
            describe(o, "reference vs its definition", op, c, "V", vb, va, pb, esz);
            if (!o->what[0])
                snprintf(o->what, sizeof o->what, "reference: %s counted %llu out-of-range "
                         "tokens, expected %llu", pkv_op_name((pkv_op)op),
                         (unsigned long long)oa, (unsigned long long)ob);
        }
    }
    if (gpu) {
        clock_t c0 = clock();
        uint64_t goob = 0;
        pkv_status gs;
        char gpu_msg[512];
        memset(kb, 0, pb);
        memset(vb, 0, pb);
        gs = run_gpu(op, c, gpu, kb, vb, &goob, pb, esz, gpu_msg, sizeof gpu_msg);
        o->gpu_bytes += 2 * pb;
        if (gs != rs || (rs != PKV_OK && strcmp(ref_msg, gpu_msg) != 0)) {
            o->gpu_mismatches++;
            if (!o->what[0])
                snprintf(o->what, sizeof o->what, "GPU vs reference: %s status %d (%.150s), "
                         "reference %d (%.150s)", pkv_op_name((pkv_op)op), (int)gs, gpu_msg,
                         (int)rs, ref_msg);
        } else {
            unsigned long long d = diff(ka, kb, pb) + diff(va, vb, pb) + (goob != oa);
            o->gpu_mismatches += d;
            describe(o, "GPU vs reference", op, c, "K", ka, kb, pb, esz);
            describe(o, "GPU vs reference", op, c, "V", va, vb, pb, esz);
            if (d && !o->what[0])
                snprintf(o->what, sizeof o->what, "GPU vs reference: %s counted %llu "
                         "out-of-range tokens, the reference %llu", pkv_op_name((pkv_op)op),
                         (unsigned long long)goob, (unsigned long long)oa);
        }
        o->gpu_secs += (double)(clock() - c0) / CLOCKS_PER_SEC;
    }
    free(ka);
    free(va);
    free(kb);
    free(vb);
}
