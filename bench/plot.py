#!/usr/bin/env python3
"""Plot pkv bench CSV output: % of the same-run copy bandwidth against tokens, one panel per op,
one line per (num_kv_heads x head_dim), with the issue's targets dashed; with TABLE.csv (pkv bench
--rope-table, whose write rows may be of newer kernels) its rows as dotted lines of the same colours.

    python3 bench/plot.py BENCH.csv OUT.png [TITLE [TABLE.csv]]
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OPS = ["write_bf16", "write_v_bf16", "write_fp8", "fused_bf16", "fused_mrope_bf16",
       "fused_fp8_k", "fused_fp8_kv"]


def read(path):
    rows = defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["op"], f'{r["num_kv_heads"]}x{r["head_dim"]}')
            rows[key].append((int(r["tokens"]), float(r["pct_of_copy"])))
    return rows


def main():
    src, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else src
    rows, table = read(src), read(sys.argv[4]) if len(sys.argv) > 4 else {}
    fig, axes = plt.subplots(2, 4, figsize=(16, 7.5), sharex=True, sharey=True)
    for ax, op in zip(axes.flat, OPS):
        for (o, geo), pts in sorted(rows.items()):
            if o != op:
                continue
            pts.sort()
            line = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=geo)
            tab = sorted(table.get((o, geo), []))
            if tab:
                ax.plot([p[0] for p in tab], [p[1] for p in tab], ls=":", marker="x", ms=3,
                        color=line[0].get_color(), label=geo + " table")
        target = 92 if op.startswith("write") else 85
        ax.axhline(target, color="k", ls="--", lw=0.8)
        ax.axvline(16384, color="grey", ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(op)
        ax.set_ylim(0, 125)
        ax.grid(alpha=0.3)
    axes.flat[-1].axis("off")
    axes.flat[0].legend(title="heads x dim", fontsize=8)
    if table:
        axes.flat[3].legend(title="dotted: cos/sin table", fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("tokens")
    for ax in axes[:, 0]:
        ax.set_ylabel("% of device-to-device copy bandwidth")
    fig.suptitle(title + "  (dashed: target from 16384 tokens)")
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main()
