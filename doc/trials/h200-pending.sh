#!/bin/bash
# The H200 measurements left open (doc/PERFORMANCE-HISTORY.md, fifty-fourth to fifty-sixth
# sessions), for a device call that may get an H100 instead: on an H200 only, decode-grid
# SHAPES=1 in both layouts, then main's pkv against the block-pass MRoPE trial
# (mrope-dispatch.patch), graph replays with a table, text tokens and image patches at 8,192,
# 16,384 and 65,536 tokens, up to 3 rounds in turn (none begun after AB_SECONDS, 120), with
# fused_bf16 16 x 64 x 16,384 in each round; on another GPU it does nothing. To $OUT/h200.tgz.
# Written (and carried, as .carry/ab/h200.sh) in the fifty-sixth session; run on an H200 in the
# fifty-eighth, with the tables step below (doc/PERFORMANCE-HISTORY.md, "Fifty-eighth session").
#
# Its folder, beside gpu-prep.sh's carry (whose bins.txz has main's pkv), built here for sm_90:
#   mkdir .carry/ab && cp doc/trials/h200-pending.sh .carry/ab/h200.sh
#   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o .carry/ab/decode-grid \
#       doc/trials/decode-grid.cu
#   pkv of a clone with `git apply doc/trials/mrope-dispatch.patch`, configured with
#       --with-nvcc-gencode="-gencode=arch=compute_90,code=sm_90": strip -o .carry/ab/pkv-disp pkv
# and on the device: bash .carry/ab/h200.sh
# Then, in the same call on an H200, MRoPE's rows of the tables with text tokens in three
# position arrays (7489516): the modes with a table (MODES="graph-table table") were run so in the
# fifty-eighth session, those without in the fifty-ninth (on their own, with gpu-prep.sh's carry):
#   MODES="graph single" OPS=fused_mrope_bf16 TABLES_SECONDS=300 MODE_SECONDS=200 \
#       doc/trials/gpu-run.sh tables .carry
# Nothing it lists is left to run. Left for an H200 since the sixtieth session: the fused
# skeleton A/B of doc/trials/README.md.
set -u
ab=$(dirname "$(realpath "$0")")
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "h200.sh on: $gpu"
case $gpu in *H200*) ;; *) echo "not an H200: h200.sh skipped"; exit 0 ;; esac
l=$OUT/h200 && mkdir -p "$l"
main=/tmp/pkv-gpu-run/fz/pkv/main/pkv
[ -x "$main" ] || { mkdir -p /tmp/pkv-gpu-run && tar -xJf "$ab/../bins.txz" -C /tmp/pkv-gpu-run; }
SHAPES=1 "$ab/decode-grid" 3 >"$l/shapes.csv" 2>"$l/shapes.err"; echo "decode-grid SHAPES=1 exit $?; $(tail -n1 "$l/shapes.err")"
SEPARATE=1 SHAPES=1 "$ab/decode-grid" 3 >"$l/shapes-sep.csv" 2>"$l/shapes-sep.err"; echo "decode-grid SEPARATE=1 SHAPES=1 exit $?; $(tail -n1 "$l/shapes-sep.err")"
t0=$(date +%s)
for r in 1 2 3; do
    [ $(($(date +%s) - t0)) -gt "${AB_SECONDS:-120}" ] && echo "round $r: not run, no time left" && break
    for b in main disp; do
        p=$main && [ $b = disp ] && p=$ab/pkv-disp
        for v in text image; do
            vf= && [ $v = image ] && vf=--vision
            for t in 8192 16384 65536; do
                $p bench --rope-table --graph $vf --op fused_mrope_bf16 --heads 16 --tokens $t \
                    --runs 1 --csv "$l/$b-$v-$t-r$r.csv" >"$l/$b-$v-$t-r$r.txt" 2>&1 ||
                    echo "$b $v $t round $r: exit $?"
            done
        done
    done
    $main bench --rope-table --graph --op fused_bf16 --heads 16 --tokens 16384 --runs 1 \
        --csv "$l/bf16-16384-r$r.csv" >"$l/bf16-16384-r$r.txt" 2>&1 || echo "bf16 round $r: exit $?"
done
tar -czf "$OUT/h200.tgz" -C "$OUT" h200 && rm -rf "$l"
