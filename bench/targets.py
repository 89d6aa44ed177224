#!/usr/bin/env python3
"""Tally issue 7's targets from pkv bench CSV files, so that doc/PERFORMANCE.md's counts and ranges
are computed, not read off the tables by hand. One block per file, with its mode.

    python3 bench/targets.py BENCH.csv [BENCH.csv ...]

Per file: writes from 16,384 tokens at >= 92% of copy; fused ops from 16,384 at >= 85%; fused ops at
1 token >= 2.5x the unfused chain; writes at 1-64 tokens within 1.25x of the empty kernel and fused
ops within 1.5x (with the floor kernel's own ratio beside them); RoPE's share from 16,384 tokens.
Each line: rows met / rows, the range, and the rows missed.
"""
import csv
import sys

WRITES = ("write_bf16", "write_v_bf16", "write_fp8")


def rows(path):
    with open(path) as f:
        out = []
        for r in csv.DictReader(f):
            for k in ("us_median", "pct_of_copy", "empty_us", "ratio_to_empty",
                      "speedup_over_baseline", "rope_share_pct", "floor_us"):
                r[k] = float(r[k])
            r["tokens"] = int(r["tokens"])
            r["name"] = f'{r["op"]} {r["num_kv_heads"]}x{r["head_dim"]}x{r["tokens"]}'
            out.append(r)
        return out


def tally(label, sel, value, ok, fmt="{:.1f}", extra=None):
    """One target: the rows sel picks, value of each, ok(value) met."""
    if not sel:
        print(f"  {label}: no rows")
        return
    vals = [value(r) for r in sel]
    met = [r for r, v in zip(sel, vals) if ok(v)]
    lo, hi = min(vals), max(vals)
    print(f"  {label}: {len(met)} of {len(sel)} met, {fmt.format(lo)} to {fmt.format(hi)}")
    for r, v in zip(sel, vals):
        if not ok(v):
            note = f"  ({extra(r)})" if extra else ""
            print(f"    miss {r['name']}: {fmt.format(v)}{note}")


def report(path):
    rs = rows(path)
    mode = rs[0]["mode"] if rs else "?"
    print(f"{path} ({mode}, {len(rs)} rows)")
    big = [r for r in rs if r["tokens"] >= 16384]
    small = [r for r in rs if 1 <= r["tokens"] <= 64]
    is_write = lambda r: r["op"] in WRITES  # noqa: E731
    floor = lambda r: f"floor {r['floor_us'] / r['empty_us']:.3f}x, {r['us_median']:.3f} us"  # noqa: E731
    tally("writes >= 16384 tokens, >= 92% of copy", [r for r in big if is_write(r)],
          lambda r: r["pct_of_copy"], lambda v: v >= 92.0)
    tally("fused >= 16384 tokens, >= 85% of copy", [r for r in big if not is_write(r)],
          lambda r: r["pct_of_copy"], lambda v: v >= 85.0)
    tally("fused at 1 token, >= 2.5x the unfused chain",
          [r for r in rs if r["tokens"] == 1 and not is_write(r)],
          lambda r: r["speedup_over_baseline"], lambda v: v >= 2.5, "{:.2f}")
    tally("writes at 1-64 tokens, <= 1.25x empty", [r for r in small if is_write(r)],
          lambda r: r["ratio_to_empty"], lambda v: v <= 1.25, "{:.3f}", floor)
    tally("fused at 1-64 tokens, <= 1.5x empty", [r for r in small if not is_write(r)],
          lambda r: r["ratio_to_empty"], lambda v: v <= 1.5, "{:.3f}", floor)
    fused_big = [r for r in big if not is_write(r)]
    if fused_big:
        shares = [r["rope_share_pct"] for r in fused_big]
        print(f"  RoPE share >= 16384 tokens: {min(shares):.1f}% to {max(shares):.1f}%")
    if small:
        # a run of only fused ops (--op, --vision) has no write rows
        us = [r["us_median"] for r in small if is_write(r)]
        empty = sorted({r["empty_us"] for r in small})
        writes = f"writes 1-64 tokens {min(us):.3f} to {max(us):.3f} us; " if us else ""
        print(f"  {writes}empty kernel at 1-64 tokens {empty[0]:.3f} to {empty[-1]:.3f} us")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for i, p in enumerate(sys.argv[1:]):
        if i:
            print()
        report(p)


if __name__ == "__main__":
    main()
