#!/bin/sh
# make fuzz: every target for SECONDS, then the fused ones again with PKV_FUZZ_MANY_WAVES=1,
# JOBS runs at a time. Every run is bounded by the same -max_total_time, so batches of JOBS
# lose little to waiting. Each run's output goes to a scratch folder (not CORPUS, which may be
# the checked-in corpus), all of them are printed in order at the end (concurrent libFuzzer
# output would interleave), and the exit status is 1 if any run failed, after every run ended.
#
#   fuzz/run-all.sh SRCDIR CORPUS SECONDS JOBS TARGET...
set -u
srcdir=$1 corpus=$2 seconds=$3 jobs=$4 jobs_arg=$4
shift 4
case $jobs in '' | *[!0-9]*) jobs=0 ;; esac
[ "$jobs" -ge 1 ] || { echo "FUZZ_JOBS must be a positive integer, not '$jobs_arg'" >&2 && exit 2; }

runs=
for t; do runs="$runs $t"; done
for t; do case $t in fused_*) runs="$runs $t:waves" ;; esac; done

mkdir -p "$corpus" || exit 1
logs=$(mktemp -d) || exit 1
trap 'rm -rf "$logs"' EXIT

# run TAG: one libFuzzer run, its output and status into the scratch folder
run() {
    t=${1%:waves} tag=$t waves=
    [ "$1" != "$t" ] && tag=$t-waves waves=1
    mkdir -p "$corpus/$t"
    env ASAN_OPTIONS="${ASAN_OPTIONS:-protect_shadow_gap=0}" ${waves:+PKV_FUZZ_MANY_WAVES=1} \
        "./fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$corpus/crash-$tag-" \
        "$corpus/$t" "$srcdir/fuzz/corpus/$t" >"$logs/$tag.log" 2>&1
    echo $? >"$logs/$tag.status"
    echo "== fuzz $tag: exit $(cat "$logs/$tag.status")"
}

n=0
for r in $runs; do
    run "$r" &
    n=$((n + 1))
    [ $((n % jobs)) -eq 0 ] && wait
done
wait

failed=0
for r in $runs; do
    t=${r%:waves} tag=$t what=
    [ "$r" != "$t" ] && tag=$t-waves what=", PKV_FUZZ_MANY_WAVES"
    echo "== fuzz $t$what: $seconds s"
    cat "$logs/$tag.log"
    st=$(cat "$logs/$tag.status" 2>/dev/null || echo missing)
    [ "$st" = 0 ] || { echo "== fuzz $tag FAILED: exit $st" && failed=1; }
done
exit $failed
