#!/usr/bin/env python3
"""Worked vectors for t/ref_vectors: expected cache bytes derived independently of ref/.

Every binary32 step is done in exact rational arithmetic (fractions.Fraction) and then rounded
to nearest-even binary32 by rn32(); BF16 and E4M3 are rounded from the exact binary32 value by
their own grid rules. rsqrt, sin, cos and theta^(-2p/R) come from mpmath at 300 bits and are
rounded once with rn32(). Nothing here calls pagedkv. Run it to regenerate t/vectors.h:

    python3 t/vectors.py > t/vectors.h
"""
from fractions import Fraction as Q
import struct

import mpmath

mpmath.mp.prec = 300
INF = float("inf")


def round_grid(q, sig_bits, min_exp):
    """Nearest-even rounding of q to sig_bits significant bits, quantum never below 2^min_exp."""
    if q == 0:
        return Q(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+2)
    while Q(2) ** e > a:
        e -= 1
    while Q(2) ** (e + 1) <= a:
        e += 1
    quantum = Q(2) ** max(e - sig_bits + 1, min_exp)
    n = a / quantum
    fl = n.numerator // n.denominator
    rest = n - fl
    if rest > Q(1, 2) or (rest == Q(1, 2) and fl % 2 == 1):
        fl += 1
    return sign * fl * quantum


def rn32(q):
    """binary32 round to nearest even; returns a Fraction, or +-INF on overflow."""
    r = round_grid(q, 24, -149)
    if abs(r) >= Q(2) ** 128:
        return INF if r > 0 else -INF
    return r


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", float(v)))[0]


def bf16_value(b):
    return Q(struct.unpack("<f", struct.pack("<I", b << 16))[0])


def bf16(v):
    """binary32 value (exact Fraction) -> BF16 bits; overflow -> Inf."""
    r = round_grid(v, 8, -133)
    if abs(r) >= Q(2) ** 128:
        return 0x7F80 if r > 0 else 0xFF80
    bits = f32_bits(r)
    if r == 0 and v < 0:
        bits = 0x80000000
    return bits >> 16


E4M3 = [Q(m, 512) if e == 0 else (8 + m) * Q(2) ** (e - 10) for e in range(16) for m in range(8)][:127]


def e4m3(v, negative_zero=False):
    """binary32 value -> E4M3FN bits: RNE on the grid, saturating at 448, signed zero kept."""
    sign = 0x80 if (v < 0 or (v == 0 and negative_zero)) else 0
    r = min(round_grid(abs(v), 4, -9), Q(448))
    return sign | E4M3.index(r)


def fp8_of_bf16(src, inv):
    """e4m3(RN(f32(src) * inv)) for any BF16 bits, inv finite and > 0."""
    if (src & 0x7FFF) > 0x7F80:
        return 0x7F                                 # NaN
    if (src & 0x7FFF) == 0x7F80:
        return 0xFE if src & 0x8000 else 0x7E       # Inf * inv = Inf, saturated
    return e4m3(rn32(bf16_value(src) * inv), negative_zero=bool(src & 0x8000))


def mp_to_q(x):
    m, e = mpmath.mpf(x).man_exp
    return Q(m) * Q(2) ** e if e >= 0 else Q(m, 2 ** -e)


def rsqrt(y):
    return rn32(mp_to_q(1 / mpmath.sqrt(mpmath.mpf(y.numerator) / y.denominator)))


def sincos(angle):
    a = mpmath.mpf(angle.numerator) / angle.denominator
    return rn32(mp_to_q(mpmath.sin(a))), rn32(mp_to_q(mpmath.cos(a)))


def inv_freq(theta, rot, p):
    t = mpmath.mpf(theta.numerator) / theta.denominator
    return rn32(mp_to_q(mpmath.power(t, mpmath.mpf(-2 * p) / rot)))


def tree(leaves):
    """The normative tree: 32-lane butterflies over chunks, then over the chunk sums."""
    def butterfly(v):
        v = list(v)
        off = 16
        while off:
            v = [rn32(v[l] + v[l ^ off]) for l in range(32)]
            off //= 2
        return v[0]
    n = len(leaves)
    chunks = (n + 31) // 32
    sums = [butterfly([leaves[c * 32 + l] if c * 32 + l < n else Q(0) for l in range(32)])
            for c in range(chunks)]
    return butterfly(sums + [Q(0)] * (32 - chunks))


# ---- the cases -------------------------------------------------------------------------------
NKV, HD, ROT, BS, NB, T = 2, 8, 4, 2, 3, 3
ROW = NKV * HD
KSTRIDE, VSTRIDE = ROW + 1, ROW + 3  # padded source rows
BSTRIDE = BS * ROW + 2                # padded blocks
POOL = NB * BSTRIDE
SLOTS = [3, -1, 9]                    # valid, padding, out of range (NB * BS = 6)
POS = [7, 123456, 5]
POS_H, POS_W = [2, 9, 1], [40, 3, 2]
THETA, EPS = Q(10000), rn32(Q(1, 10 ** 6))
KSCALE, VSCALE = rn32(Q(3, 256)), Q(3)   # 3/256 is exact; 1/3 is not
KINV = rn32(1 / KSCALE)


def lcg(seed):
    while True:
        seed = (seed * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        yield seed >> 33


rng = lcg(2026)
K = [bf16(rn32(Q(next(rng) % 2001 - 1000, 100))) for _ in range(T * KSTRIDE)]
V = [bf16(rn32(Q(next(rng) % 2001 - 1000, 37))) for _ in range(T * VSTRIDE)]
W = [bf16(rn32(Q(next(rng) % 101 - 50, 200))) for _ in range(HD)]
# hostile V values for the FP8 write: 448, 464, 465, -Inf, NaN, -0, a subnormal, tiny
V[0:8] = [0x43E0, 0x43E8, 0x43E9, 0xFF80, 0xFFC1, 0x8000, 0x0003, 0x3A80]


def row_offset(s):
    return (s // BS) * BSTRIDE + (s % BS) * ROW


def f(b):
    return bf16_value(b)


def head_norm_single(x, w):
    """Op 5 steps 1-5: element leaves, binary32 normalised values."""
    s = tree([rn32(f(v) * f(v)) for v in x])
    rms = rsqrt(rn32(rn32(s / HD) + EPS))
    return [rn32(rn32(f(x[e]) * rms) * rn32(1 + f(w[e]))) for e in range(HD)]


def rotate(n, cs):
    y = list(n)
    half = ROT // 2
    for p in range(half):
        s, c = cs[p]
        y[p] = rn32(rn32(n[p] * c) - rn32(n[p + half] * s))
        y[p + half] = rn32(rn32(n[p + half] * c) + rn32(n[p] * s))
    return y


def angles(streams):
    out = []
    for p in range(ROT // 2):
        a = rn32(Q(streams[p]) * inv_freq(THETA, ROT, p))
        out.append(sincos(a))
    return out


def fused(kind, section=(0, 0, 0)):
    kp = [0xA5A5 if kind in ("bf16", "mrope") else 0xA5] * POOL
    vp = [0xA5] * POOL
    for t in range(T):
        s = SLOTS[t]
        if s < 0 or s >= NB * BS:
            continue
        if kind == "mrope":
            def stream(p):
                if section == (0, 0, 0):
                    return [POS, POS_H, POS_W][p % 3][t]
                if p % 3 == 1 and p < 3 * section[1]:
                    return POS_H[t]
                if p % 3 == 2 and p < 3 * section[2]:
                    return POS_W[t]
                return POS[t]
            cs = angles([stream(p) for p in range(ROT // 2)])
        else:
            cs = angles([POS[t]] * (ROT // 2))
        for h in range(NKV):
            x = K[t * KSTRIDE + h * HD: t * KSTRIDE + (h + 1) * HD]
            o = row_offset(s) + h * HD
            if kind == "kv":  # chain: pair leaves, BF16 after norm, BF16 after rope
                leaves = [rn32(rn32(f(x[2 * i]) * f(x[2 * i])) + rn32(f(x[2 * i + 1]) * f(x[2 * i + 1])))
                          for i in range(HD // 2)]
                rms = rsqrt(rn32(rn32(tree(leaves) / HD) + EPS))
                nb = [f(bf16(rn32(rn32(f(x[e]) * rms) * rn32(1 + f(W[e]))))) for e in range(HD)]
                kb = [f(bf16(v)) for v in rotate(nb, cs)]
                for e in range(HD):
                    kp[o + e] = e4m3(rn32(kb[e] * KINV))
                    vp[o + e] = fp8_of_bf16(V[t * VSTRIDE + h * HD + e], rn32(1 / VSCALE))
                continue
            y = rotate(head_norm_single(x, W), cs)
            for e in range(HD):
                kp[o + e] = bf16(y[e]) if kind in ("bf16", "mrope") else e4m3(rn32(y[e] * KINV))
    return kp, vp


def writes():
    k16 = [0xA5A5] * POOL
    v16 = [0xA5A5] * POOL
    k8 = [0xA5] * POOL
    v8 = [0xA5] * POOL
    inv_k, inv_v = rn32(1 / KSCALE), rn32(1 / VSCALE)
    for t in range(T):
        s = SLOTS[t]
        if s < 0 or s >= NB * BS:
            continue
        for e in range(ROW):
            kx, vx = K[t * KSTRIDE + e], V[t * VSTRIDE + e]
            k16[row_offset(s) + e], v16[row_offset(s) + e] = kx, vx
            k8[row_offset(s) + e] = fp8_of_bf16(kx, inv_k)
            v8[row_offset(s) + e] = fp8_of_bf16(vx, inv_v)
    return k16, v16, k8, v8


def fill_slots():
    table = [5, -1, 0, 7]
    bs, start, count = 4, 3, 12
    out = []
    for i in range(count):
        pos = start + i
        b = pos // bs
        out.append(-1 if b >= len(table) or table[b] < 0 else table[b] * bs + pos % bs)
    return table, bs, start, count, out


def arr(ctype, name, vals, fmt):
    body = ", ".join(fmt % v for v in vals)
    return "static const %s %s[%d] = {%s};\n" % (ctype, name, len(vals), body)


def main():
    out = ['/* Generated by t/vectors.py; do not edit. Expected bytes derived independently. */\n']
    out.append("#define VEC_NKV %d\n#define VEC_HD %d\n#define VEC_ROT %d\n#define VEC_BS %d\n"
               "#define VEC_NB %d\n#define VEC_T %d\n#define VEC_KSTRIDE %d\n#define VEC_VSTRIDE %d\n"
               "#define VEC_BSTRIDE %d\n#define VEC_POOL %d\n"
               % (NKV, HD, ROT, BS, NB, T, KSTRIDE, VSTRIDE, BSTRIDE, POOL))
    out.append("#define VEC_THETA 0x%08xu\n#define VEC_EPS 0x%08xu\n#define VEC_KSCALE 0x%08xu\n"
               "#define VEC_VSCALE 0x%08xu\n#define VEC_KINV 0x%08xu\n"
               % (f32_bits(THETA), f32_bits(EPS), f32_bits(KSCALE), f32_bits(VSCALE), f32_bits(KINV)))
    out.append(arr("uint16_t", "vec_k", K, "0x%04x"))
    out.append(arr("uint16_t", "vec_v", V, "0x%04x"))
    out.append(arr("uint16_t", "vec_w", W, "0x%04x"))
    out.append(arr("int64_t", "vec_slots", SLOTS, "%d"))
    out.append(arr("uint32_t", "vec_pos", POS, "%du"))
    out.append(arr("uint32_t", "vec_pos_h", POS_H, "%du"))
    out.append(arr("uint32_t", "vec_pos_w", POS_W, "%du"))
    k16, v16, k8, v8 = writes()
    out.append(arr("uint16_t", "want_write_bf16_k", k16, "0x%04x"))
    out.append(arr("uint16_t", "want_write_bf16_v", v16, "0x%04x"))
    out.append(arr("uint8_t", "want_write_fp8_k", k8, "0x%02x"))
    out.append(arr("uint8_t", "want_write_fp8_v", v8, "0x%02x"))
    out.append(arr("uint16_t", "want_fused_bf16", fused("bf16")[0], "0x%04x"))
    out.append(arr("uint16_t", "want_fused_mrope", fused("mrope")[0], "0x%04x"))
    out.append(arr("uint16_t", "want_fused_mrope_sec", fused("mrope", (0, 1, 1))[0], "0x%04x"))
    out.append(arr("uint8_t", "want_fused_fp8_k", fused("fp8k")[0], "0x%02x"))
    kp, vp = fused("kv")
    out.append(arr("uint8_t", "want_fused_fp8_kv_k", kp, "0x%02x"))
    out.append(arr("uint8_t", "want_fused_fp8_kv_v", vp, "0x%02x"))
    table, bs, start, count, slots = fill_slots()
    out.append(arr("int32_t", "vec_table", table, "%d"))
    out.append("#define VEC_FILL_BS %d\n#define VEC_FILL_START %d\n#define VEC_FILL_COUNT %d\n"
               % (bs, start, count))
    out.append(arr("int64_t", "want_fill_slots", slots, "%d"))
    print("".join(out), end="")


if __name__ == "__main__":
    main()
