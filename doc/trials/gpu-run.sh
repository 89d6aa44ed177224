#!/bin/bash
# The device side of doc/trials/gpu-prep.sh: run from the repository root on the GPU machine
# with the carried folder, one stage a call (each fits the device tool's 10 minutes):
#   check NAME  NAME's release tarball (main or cand): PKV_TEST_REQUIRE_GPU=1 make check and
#               pkv check --gpu; then NAME's fuzzers, FUZZ_SECONDS each, all at once, the
#               fused ones also with PKV_FUZZ_MANY_WAVES=1
#   fuzz NAME   NAME's fuzzers alone, as check runs them (a longer campaign: FUZZ_SECONDS)
#   bench       write-decode.sh on main, cand and the skeleton (three block shapes), ROUNDS
#               rounds, stopped after BENCH_SECONDS so that what ran still comes back (with
#               its summary)
#   tables      main's pkv: the bench modes of doc/PERFORMANCE.md's tables (MODES, default all
#               five: table vision graph-table single graph), --runs 3, each mode's table and
#               CSV; a mode stopped after MODE_SECONDS (300), or when TABLES_SECONDS (540) in
#               all have passed, keeps what it printed; with OPS (e.g. "write_bf16 write_fp8"),
#               one run per op and mode of those ops' rows only (bench-MODE-OP.txt, .csv)
#   sanitize    main's GPU test programs under compute-sanitizer by make check-cuda-sanitizer's
#               script (tools/cuda_sanitize.sh), one run a tool and program: each of TOOLS
#               (memcheck with leak checking, racecheck, synccheck, initcheck) on each of TESTS
#               (every carried t/cuda_*), SAN_JOBS (8) at once, each stopped after SAN_SECONDS
#               (240) or when SAN_TOTAL (500) in all have passed, with PKV_TEST_SAMPLE=SAMPLE (1:
#               every case); the summary has each run's exit (124: stopped) and result line
# Logs and results go to one tarball in $OUT (the tool brings back few files), and a summary
# to stdout. Made in the forty-first session (no GPU); run on GPUs since the forty-second.
#
#   doc/trials/gpu-run.sh check main|cand [CARRY_DIR]      (default .carry)
#   doc/trials/gpu-run.sh fuzz main|cand [CARRY_DIR]
#   doc/trials/gpu-run.sh bench [CARRY_DIR]
#   doc/trials/gpu-run.sh tables [CARRY_DIR]
#   doc/trials/gpu-run.sh sanitize [CARRY_DIR]
# Environment: FUZZ_SECONDS (30), ROUNDS (3), BENCH_SECONDS (500), MODES, MODE_SECONDS and
# TABLES_SECONDS (tables), OPS (tables: the ops to run; bench: write-decode.sh's, with its HEADS
# and TOKENS), TOOLS, TESTS, SAN_JOBS, SAN_SECONDS, SAN_TOTAL and SAMPLE (sanitize), and
# REQUIRE_GPU (1; 0 for a dry run on a machine without a GPU, but sanitize requires one).
set -uo pipefail
stage=$1 name=
root=$(cd "$(dirname "$0")/../.." && pwd)
case $stage in check | fuzz) name=${2:?$stage needs main or cand} && shift ;; esac
carry=$(realpath "${2:-.carry}")
out=${OUT:?the device tool sets OUT}
w=/tmp/pkv-gpu-run
req=${REQUIRE_GPU:-1} gpu_flag=--gpu
[ "$req" = 0 ] && gpu_flag=
mkdir -p "$w" "$out/logs"
[ -d "$w/fz" ] || tar -xJf "$carry/bins.txz" -C "$w"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/logs/gpu.txt"

# check NAME: build the tarball, run its tests with the GPU required, then pkv check
check() {
    local name=$1 d="$w/$1"
    rm -rf "$d" && mkdir -p "$d" && tar -xzf "$carry/$name.tar.gz" -C "$d" --strip-components=1
    (cd "$d" && ./configure -q --with-nvcc-gencode="-gencode=arch=compute_90,code=sm_90" &&
        make -s -j"$(nproc)" >/dev/null) >"$out/logs/$name-build.log" 2>&1 || {
        echo "$name: build failed"
        return 1
    }
    (cd "$d" && PKV_TEST_REQUIRE_GPU=$req make -j"$(nproc)" check) \
        >"$out/logs/$name-check.log" 2>&1
    echo "$name: make check exit $?"
    cp "$d/test-suite.log" "$out/logs/$name-test-suite.log"
    for t in "$d"/t/*.log; do cp "$t" "$out/logs/$name-t-$(basename "$t")"; done
    grep '^# [A-Z]*:' "$d/test-suite.log"
    (cd "$d" && ./pkv check $gpu_flag) >"$out/logs/$name-pkv-check.log" 2>&1
    echo "$name: pkv check${gpu_flag:+ $gpu_flag} exit $?"
    tail -n 3 "$out/logs/$name-pkv-check.log"
}

# fuzz NAME TARGET [ENV...]: one libFuzzer run on a scratch copy of the target's corpus
fuzz() {
    local name=$1 t=$2 tag=$1-$2
    shift 2
    [ $# -gt 0 ] && tag=$tag-waves
    mkdir -p "$w/corpus-$tag" && cp "$w/fz/corpus/$t"/* "$w/corpus-$tag/" 2>/dev/null
    env ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 PKV_TEST_REQUIRE_GPU="$req" "$@" \
        "$w/fz/bin/$name/fuzz_$t" \
        -max_total_time="${FUZZ_SECONDS:-30}" -timeout=30 -rss_limit_mb=8192 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$out/logs/crash-$tag-" "$w/corpus-$tag" \
        >"$out/logs/fuzz-$tag.log" 2>&1
    echo "fuzz $tag: exit $? $(grep -o 'stat::number_of_executed_units: *[0-9]*' \
        "$out/logs/fuzz-$tag.log" | grep -o '[0-9]*$') executions;" \
        "$(grep -m1 -o 'backends: .*' "$out/logs/fuzz-$tag.log")"
}

# san TOOL TEST SECONDS: make check-cuda-sanitizer's script on one carried test program under
# one tool (its log is TEST.TOOL.log beside the program); its summary line
san() {
    local tool=$1 t=$2 d=$w/fz/tests/main st res
    (cd "$d" && env PKV_TEST_SAMPLE="${SAMPLE:-1}" PKV_TEST_THREADS=2 TOOLS="$tool" \
        timeout "$3" sh "$root/tools/cuda_sanitize.sh" "$t") >"$out/logs/san-$tool-$t.txt" 2>&1
    st=$?
    cp "$d/$t.$tool.log" "$out/logs/san-$tool-$t.log" 2>/dev/null
    res=$(grep -m1 '^\(PASS\|FAIL\):' "$out/logs/san-$tool-$t.txt")
    [ -z "$res" ] && [ "$st" -eq 124 ] &&
        res="stopped, $(grep -c '^ok' "$out/logs/san-$tool-$t.log") ok, no summary"
    [ -z "$res" ] && res=$(tail -n 1 "$out/logs/san-$tool-$t.txt")
    echo "sanitize $tool $t: exit $st; $res"
}

# fuzz_all NAME: every fuzzer of NAME at once, the fused ones also over many waves
fuzz_all() {
    local f t
    for f in "$w/fz/bin/$1"/fuzz_*; do
        t=${f##*/fuzz_}
        fuzz "$1" "$t" &
        case $t in fused_*) fuzz "$1" "$t" PKV_FUZZ_MANY_WAVES=1 & ;; esac
    done
    wait
}

case $stage in
check)
    check "$name"
    fuzz_all "$name"
    ;;
fuzz)
    fuzz_all "$name"
    ;;
bench)
    p=$w/fz/pkv
    timeout "${BENCH_SECONDS:-500}" bash "$w/fz/write-decode.sh" "$out/logs/wd" "${ROUNDS:-3}" \
        main=$p/main/pkv cand=$p/cand/pkv skel=$p/skel/pkv skel64=$p/skel/pkv:PKVX_WB=64 \
        skel256=$p/skel/pkv:PKVX_WB=256
    st=$?
    echo "write-decode.sh exit $st"
    # stopped by the timeout: the rows that ran
    [ $st -eq 124 ] && bash "$w/fz/write-decode.sh" "$out/logs/wd" summary
    ;;
tables)
    # every mode within TABLES_SECONDS (540) in all, so the logs' tarball is made in time
    deadline=$(($(date +%s) + ${TABLES_SECONDS:-540}))
    for m in ${MODES:-table vision graph-table single graph}; do
        case $m in
        single) a= ;;
        graph) a=--graph ;;
        table) a=--rope-table ;;
        graph-table) a="--graph --rope-table" ;;
        vision) a="--rope-table --vision --op fused_mrope_bf16" ;;
        *) echo "unknown mode $m" && continue ;;
        esac
        # OPS: only those ops' rows, one --op run each (bench-MODE-OP.*), which splice-tables.py
        # merges into the mode's table; vision is one op already
        ops=${OPS:-} && [ "$m" = vision ] && ops=
        for op in ${ops:-all}; do
            f=bench-$m && o= && [ "$op" != all ] && f=bench-$m-$op && o="--op $op"
            left=$((deadline - $(date +%s)))
            [ "$left" -gt "${MODE_SECONDS:-300}" ] && left=${MODE_SECONDS:-300}
            [ "$left" -lt 5 ] && echo "tables $m $op: not run, no time left" && continue
            s0=$(date +%s)
            # shellcheck disable=SC2086 # $a and $o are options, split on purpose
            timeout "$left" "$w/fz/pkv/main/pkv" bench $a $o --runs 3 \
                --csv "$out/logs/$f.csv" >"$out/logs/$f.txt" 2>&1
            echo "tables $m${o:+ $op}: exit $? in $(($(date +%s) - s0)) s, $(grep -c . "$out/logs/$f.csv" 2>/dev/null) CSV lines"
        done
    done
    ;;
sanitize)
    deadline=$(($(date +%s) + ${SAN_TOTAL:-500})) n=0
    for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
        for t in ${TESTS:-$(ls "$w/fz/tests/main")}; do
            [ "$n" -ge "${SAN_JOBS:-8}" ] && wait -n && n=$((n - 1))
            left=$((deadline - $(date +%s)))
            [ "$left" -gt "${SAN_SECONDS:-240}" ] && left=${SAN_SECONDS:-240}
            [ "$left" -lt 5 ] && echo "sanitize $tool $t: not run, no time left" && continue
            san "$tool" "$t" "$left" &
            n=$((n + 1))
        done
    done
    wait
    ;;
*)
    echo "usage: $0 check|fuzz main|cand [CARRY_DIR] | bench [CARRY_DIR] |" \
        "tables [CARRY_DIR] | sanitize [CARRY_DIR]" >&2
    exit 2
    ;;
esac
tar -czf "$out/$stage${name:+-$name}-logs.tgz" -C "$out" logs && rm -rf "$out/logs"
