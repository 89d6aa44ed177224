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
    i = next((k for k, ln in enumerate(doc) if ln.startswith(heading)), None)
    if i is None:
        raise ValueError(f"no section starting {heading!r}")
    fence = next(k for k in range(i + 1, len(doc)) if doc[k].startswith("```"))
    end = next(k for k in range(fence + 1, len(doc)) if doc[k].startswith("```"))
    new = [f"{heading}`pkv bench {options}`, {commit}'s kernels and benchmark, {session})",
           "", "```", *body, "```"]
    return doc[:i] + new + doc[end + 1:]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    logs, commit, date, session = sys.argv[1:]
    with open(DOC) as f:
        doc = f.read().split("\n")
    bodies = {}  # every table read (and checked) before anything is changed
    for mode in MODES:
        txt, src = (os.path.join(logs, f"bench-{mode}.{e}") for e in ("txt", "csv"))
        if os.path.exists(txt) and os.path.exists(src):
            bodies[mode] = (table_text(txt), src)
        else:
            print(f"{mode}: not in {logs}, left as it was")
    done = []
    for mode, (body, src) in bodies.items():
        heading, options, csv = MODES[mode]
        doc = splice(doc, heading, options, body, commit, session)
        shutil.copyfile(src, os.path.join(ROOT, "doc", csv))
        done.append(mode)
        print(f"{mode}: section and doc/{csv} replaced")
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
    if len(done) < len(MODES):
        print("some modes were missing: the plots and tallies mix this run with older rows")


if __name__ == "__main__":
    main()
