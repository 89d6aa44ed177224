#!/bin/bash
# Graph replays with a cos/sin table of the three writes at decode sizes, for pkv builds given
# as NAME=PATH (e.g. main=./pkv skel=/tmp/skel/pkv cand=/tmp/cand/pkv), rounds interleaved with
# the builds' order rotated, then one CSV of every row (a first column names the build) and a
# summary: per build, op, geometry and tokens the median of the rounds' medians, its ratio to
# the empty kernel, the floor's, and the median of the rounds' % of copy bandwidth. Prepared in
# the fortieth session for doc/trials' patches.
#
#   doc/trials/write-decode.sh OUTDIR ROUNDS NAME=PATH...
#   doc/trials/write-decode.sh OUTDIR summary      (the summary of OUTDIR/all.csv only, e.g.
#                                                   after a run was stopped)
# Environment: HEADS (default "8 16"), TOKENS ("1 8 64 256"), OPS (the three writes); a build
# given as NAME=PATH:VAR=VALUE runs with that variable set (skeleton shapes: PKVX_WB, PKVX_CPT);
# EXIT3 names the builds whose runs exit 3 by design (doc/skeleton.patch's fused skeletons write
# other bytes than the unfused chain, so pkv bench reports the rows, then exits 3): their rows
# are kept.
# OUTDIR gets a CSV and a log per run: tar it to bring it back from the device tool.
set -u
out=$1 rounds=$2
shift 2
builds=("$@")
all="$out/all.csv"

# columns after the two added: mode,op,num_kv_heads,head_dim,tokens,us_median,...,empty_us
# (13),ratio_to_empty,...,floor_us (20)
summary() {
    sort -t, -k1,1 -k4,4 -k5,5n -k7,7n "$all" | awk -F, '
    function med(s,   n, a, i, j, x) {
        n = split(s, a, " ")
        for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $1 " " $4 " " $5 "x" $6 " " $7; us[k] = us[k] " " $8; em[k] = em[k] " " $15; fl[k] = fl[k] " " $22
      pc[k] = pc[k] " " $14
      if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
    END {
        printf "%-36s %8s %8s %7s %7s %6s\n", "build op geometry tokens", "us", "empty", "xempty", "xfloor", "copy%"
        for (i = 1; i <= n; i++) { k = order[i]; u = med(us[k]); e = med(em[k]); f = med(fl[k])
            printf "%-36s %8.3f %8.3f %7.3f %7.3f %6.1f\n", k, u, e, u / e, f / e, med(pc[k]) }
    }' | tee "$out/summary.txt"
}

if [ "$rounds" = summary ]; then
    summary
    exit
fi
mkdir -p "$out"
HEADS=${HEADS:-"8 16"} TOKENS=${TOKENS:-"1 8 64 256"} OPS=${OPS:-"write_bf16 write_v_bf16 write_fp8"}
: >"$all"
fail=0
for ((r = 0; r < rounds; r++)); do
    for ((k = 0; k < ${#builds[@]}; k++)); do
        b=${builds[$(((k + r) % ${#builds[@]}))]}
        name=${b%%=*} spec=${b#*=}
        pkv=${spec%%:*} vars=()
        [ "$spec" != "$pkv" ] && vars=("${spec#*:}")
        for op in $OPS; do
            for h in $HEADS; do
                for t in $TOKENS; do
                    f="$out/$name-r$r-$op-$h-$t.csv"
                    env "${vars[@]}" "$pkv" bench --rope-table --graph --op "$op" --heads "$h" \
                        --tokens "$t" --runs 1 --csv "$f" >"$f.log" 2>&1
                    st=$?
                    # (kept only with a row: pkv bench also exits 3 when it cannot run)
                    [ $st -eq 3 ] && [[ " ${EXIT3:-} " == *" $name "* ]] &&
                        [ "$({ wc -l <"$f"; } 2>/dev/null || echo 0)" -ge 2 ] && st=0
                    if [ $st -ne 0 ]; then
                        echo "FAIL $name round $r $op $h x $t (exit $st)" | tee -a "$out/fail.txt"
                        fail=1
                        continue
                    fi
                    tail -n +2 "$f" | sed "s/^/$name,$r,/" >>"$all"
                done
            done
        done
    done
done
summary
exit $fail
