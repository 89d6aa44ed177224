#!/bin/sh
# make check-cuda-sanitizer: the GPU test programs given, each under each of compute-sanitizer's
# tools in TOOLS (default: memcheck with leak checking, racecheck, synccheck, initcheck), one
# run at a time, with the GPU required (PKV_TEST_REQUIRE_GPU=1: a test that cannot open it
# fails). A run fails on any error, hazard or leak the tool reports (exit 9) or any failed test;
# its log is PROGRAM.TOOL.log. PKV_TEST_SAMPLE=k shortens the tests' exhaustive loops, as under
# Valgrind. compute-sanitizer: $COMPUTE_SANITIZER, else on PATH, else beside $NVCC.
#
# racecheck does not run t/cuda_threads: with launches from several host threads at once, CUDA
# 13.0's compute-sanitizer reported "Internal Sanitizer Error: Detected a failure to track a
# kernel launch" and did not finish in 400 s (doc/VERIFICATION.md, fifty-sixth session); the
# other tools run it, and racecheck runs its ops in t/cuda_ops and the table tests.
san=${COMPUTE_SANITIZER:-}
[ -n "$san" ] || san=$(command -v compute-sanitizer 2>/dev/null) || san=
[ -n "$san" ] || { [ -n "${NVCC:-}" ] && [ -x "$(dirname "$NVCC")/compute-sanitizer" ] &&
    san=$(dirname "$NVCC")/compute-sanitizer; }
if [ -z "$san" ]; then
    echo "check-cuda-sanitizer: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2
    exit 1
fi
# as under make check: an ASan build initialises CUDA only without the shadow gap's protection
ASAN_OPTIONS=${ASAN_OPTIONS:-protect_shadow_gap=0}
export ASAN_OPTIONS
runs=0 failed=0
for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
    opt=
    [ "$tool" = memcheck ] && opt="--leak-check full"
    for prog in "$@"; do
        case $tool:$prog in *racecheck:*cuda_threads) continue ;; esac
        log=$prog.$tool.log
        # shellcheck disable=SC2086 # $opt is options, split on purpose
        PKV_TEST_REQUIRE_GPU=1 "$san" --tool "$tool" $opt --error-exitcode 9 "./$prog" >"$log" 2>&1
        st=$?
        runs=$((runs + 1))
        summary=$(grep -m1 -o '\(ERROR\|RACECHECK\) SUMMARY: .*' "$log")
        # a leak fails the run whether or not the tool counts it among its errors
        leak=$(grep -m1 -o 'LEAK SUMMARY: [1-9].*' "$log") && summary="$summary; $leak" &&
            [ "$st" -eq 0 ] && st=9
        if [ "$st" -eq 0 ]; then
            echo "PASS: $tool $prog ($(grep -c '^ok' "$log") ok; $summary)"
        else
            failed=$((failed + 1))
            echo "FAIL: $tool $prog (exit $st; $(grep -c '^ok' "$log") ok, $(grep -c '^not ok' "$log")" \
                "not ok; $summary; see $log)"
        fi
    done
done
echo "check-cuda-sanitizer: $runs runs, $failed failed"
[ "$failed" -eq 0 ]
