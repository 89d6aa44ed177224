#!/usr/bin/env python3
"""Put one run of `doc/trials/gpu-run.sh tables` into the docs: each mode's printed table into
its section of doc/PERFORMANCE.md ("## Tables"), its CSV over doc/bench-h200*.csv, the two plots
redrawn (bench/plot.py), then issue 7's tallies of the new CSVs (bench/targets.py). The prose
above the tables (the summary, "Latest", the targets table) is left to be written from those
tallies. Modes the run lacks keep their old section and CSV.

    python3 doc/trials/splice-tables.py LOGS_DIR COMMIT DATE SESSION
    e.g. ... /tmp/t/logs dc9dee0 2026-12-06 "forty-fourth session"

LOGS_DIR holds bench-MODE.txt and bench-MODE.csv (MODE: single, table, graph, graph-table,
vision), as gpu-run.sh's tables-logs.tgz unpacks. A table not from an H200 is refused.
With gpu-run.sh's OPS it holds bench-MODE-OP.txt and .csv instead, one `--op` run each of ops
the mode's CSV in doc/ has rows of: those ops' rows replace theirs in the mode's table and CSV, the other rows stay, and the section's
heading, which says whose rows are whose, is left to be rewritten by hand.
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "doc", "PERFORMANCE.md")

# mode: (its section's heading up to the first "(", the options, the CSV in doc/)
MODES = {
    "single": ("### Single launches (", "--runs 3", "bench-h200.csv"),
    "table": ("### Single launches with a cos/sin table (", "--rope-table --runs 3",
              "bench-h200-table.csv"),
    "graph": ("### CUDA graph replays (", "--graph --runs 3", "bench-h200-graph.csv"),
    "graph-table": ("### CUDA graph replays with a cos/sin table (",
                    "--graph --rope-table --runs 3", "bench-h200-graph-table.csv"),
    "vision": ("### MRoPE with image patches (",
               "--rope-table --vision --op fused_mrope_bf16 --runs 3",
               "bench-h200-vision-table.csv"),
}


def table_text(path):
    """The printed table: from its "device:" line on, trailing blanks dropped."""
    with open(path) as f:
        lines = [ln.rstrip() for ln in f]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("device:"))
    body = lines[start:]
    while body and not body[-1]:
        body.pop()
    if not any(ln.startswith("op ") for ln in body):
        raise ValueError(f"{path}: no table header line")
    # the device tool may lend an H100 for an H200 call; its rows go elsewhere (PERFORMANCE-H100.md)
    if "H200" not in body[0]:
        raise ValueError(f"{path}: {body[0]!r}: doc/PERFORMANCE.md's tables are an H200's")
    return body


def splice(doc, heading, options, body, commit, session):
    """Replace the section's heading, prose and fenced block; the next heading stays."""
    i, _, end = section(doc, heading)
    new = [f"{heading}`pkv bench {options}`, {commit}'s kernels and benchmark, {session})",
           "", "```", *body, "```"]
    return doc[:i] + new + doc[end + 1:]


def section(doc, heading):
    """The line index of the section's heading, of its table's first line and of the closing
    fence."""
    i = next((k for k, ln in enumerate(doc) if ln.startswith(heading)), None)
    if i is None:
        raise ValueError(f"no section starting {heading!r}")
    fence = next(k for k in range(i + 1, len(doc)) if doc[k].startswith("```"))
    end = next(k for k in range(fence + 1, len(doc)) if doc[k].startswith("```"))
    return i, fence + 1, end


def op_of(line):
    """A table's or a CSV's row's op: its first field (a CSV's first is the mode)."""
    fields = line.split(",")
    if len(fields) > 1:
        return fields[1]
    return (line.split() or [""])[0]


def merge_rows(old, new, op, first, what):
    """old with its rows of op (it has some) replaced by new's rows of op, where its first one
    was; the lines before index first, old's and new's header, are left out of it."""
    mine = [ln for ln in new[first:] if op_of(ln) == op]
    if not mine:
        raise ValueError(f"{what}: no {op} row")
    ks = range(first, len(old))
    at = next(k for k in ks if op_of(old[k]) == op)
    return (old[:first] + [old[k] for k in ks if k < at and op_of(old[k]) != op] + mine +
            [old[k] for k in ks if k > at and op_of(old[k]) != op])


def merge_ops(doc, mode, runs):
    """Put the op runs {op: (table body, csv path)} of one mode into its section and CSV."""
    heading, _, csv = MODES[mode]
    _, a, b = section(doc, heading)
    table = doc[a:b]
    hdr = next(k for k, ln in enumerate(table) if ln.startswith("op "))
    csv_path = os.path.join(ROOT, "doc", csv)
    with open(csv_path) as f:
        rows = f.read().rstrip("\n").split("\n")
    for op, (body, src) in runs.items():
        # the same mode line and columns, or the rows would not be the table's
        for line in ("mode:", "op "):
            mine = next(ln for ln in body if ln.startswith(line))
            theirs = next(ln for ln in table if ln.startswith(line))
            if mine != theirs:
                raise ValueError(f"{mode} {op}: {mine!r} is not the table's {theirs!r}")
        with open(src) as f:
            new = f.read().rstrip("\n").split("\n")
        if new[0] != rows[0] or new[1].split(",")[0] != rows[1].split(",")[0]:
            raise ValueError(f"{src}: its CSV header or mode is not doc/{csv}'s")
        table = merge_rows(table, body, op, hdr + 1, f"bench-{mode}-{op}.txt")
        rows = merge_rows(rows, new, op, 1, src)
    return doc[:a] + table + doc[b:], (csv_path, rows)


def ops_in(csv):
    """The ops doc/CSV has rows of, in order: those an op run of its mode may replace."""
    with open(os.path.join(ROOT, "doc", csv)) as f:
        ops = [op_of(ln) for ln in f.read().rstrip("\n").split("\n")[1:]]
    return list(dict.fromkeys(ops))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    logs, commit, date, session = sys.argv[1:]
    with open(DOC) as f:
        doc = f.read().split("\n")
    bodies, op_runs = {}, {}  # every table read (and checked) before anything is changed
    for mode in MODES:
        txt, src = (os.path.join(logs, f"bench-{mode}.{e}") for e in ("txt", "csv"))
        runs = {}
        for op in ops_in(MODES[mode][2]):
            t, c = (os.path.join(logs, f"bench-{mode}-{op}.{e}") for e in ("txt", "csv"))
            if os.path.exists(t) and os.path.exists(c):
                runs[op] = (table_text(t), c)
        if os.path.exists(txt) and os.path.exists(src):
            if runs:
                raise ValueError(f"{logs}: both bench-{mode}.txt and {mode}'s op runs")
            bodies[mode] = (table_text(txt), src)
        elif runs:
            op_runs[mode] = runs
        else:
            print(f"{mode}: not in {logs}, left as it was")
    merged = {}
    for mode, runs in op_runs.items():
        doc, merged[mode] = merge_ops(doc, mode, runs)
    for mode, (body, _) in bodies.items():
        heading, options, _ = MODES[mode]
        doc = splice(doc, heading, options, body, commit, session)
    # nothing is written before every section and CSV has been made
    for mode, (csv_path, rows) in merged.items():
        with open(csv_path, "w") as f:
            f.write("\n".join(rows) + "\n")
        print(f"{mode}: the rows of {', '.join(op_runs[mode])} replaced in its section and"
              f" {os.path.relpath(csv_path, ROOT)}; rewrite the section's heading by hand")
    for mode, (_, src) in bodies.items():
        shutil.copyfile(src, os.path.join(ROOT, "doc", MODES[mode][2]))
        print(f"{mode}: section and doc/{MODES[mode][2]} replaced")
    with open(DOC, "w") as f:
        f.write("\n".join(doc))
    plot = os.path.join(ROOT, "bench", "plot.py")
    d = os.path.join(ROOT, "doc")
    for solid, dotted, png, what in (("bench-h200.csv", "bench-h200-table.csv", "perf-h200.png",
                                      "single launches"),
                                     ("bench-h200-graph.csv", "bench-h200-graph-table.csv",
                                      "perf-h200-graph.png", "graph replays")):
        title = f"H200 {what}: {commit}, dotted with a cos/sin table; {date}"
        subprocess.run([sys.executable, plot, os.path.join(d, solid), os.path.join(d, png), title,
                        os.path.join(d, dotted)], check=True)
        print(f"doc/{png} redrawn")
    csvs = [os.path.join(d, MODES[m][2]) for m in ("single", "table", "graph", "graph-table")]
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "targets.py"), *csvs], check=True)
    if merged or len(bodies) < len(MODES):
        print("some modes or ops were missing: the plots and tallies mix this run with older rows")


if __name__ == "__main__":
    main()
