#!/bin/sh
# fuzz/run-all.sh (make fuzz) with stub fuzzers: every target runs, the fused ones a second
# time with PKV_FUZZ_MANY_WAVES=1, FUZZ_JOBS at a time, and a failing run fails the whole
# after the others have run, its output shown.
# shellcheck disable=SC2016,SC2034 # t() evals its first argument, which reads $st
src="${SRCDIR:-.}"
run_all="$(cd "$src" && pwd)/fuzz/run-all.sh"
d=$(mktemp -d) || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/fuzz"
# A stub records its name, PKV_FUZZ_MANY_WAVES and arguments; "bad" fails; meet_a and meet_b
# each wait (up to 10 s) for the other to have started, so they pass only when run at once.
stub() {
    cat >"$d/fuzz/fuzz_$1" <<'EOF'
#!/bin/sh
name=${0##*/fuzz_}
echo "$name waves=${PKV_FUZZ_MANY_WAVES:-} args=$*" >>"$STUB_RECORD"
case $name in
bad) echo "stub failure of bad" && exit 3 ;;
meet_*)
    touch "$STUB_DIR/started-$name"
    other=meet_a && [ "$name" = meet_a ] && other=meet_b
    i=0
    while [ ! -e "$STUB_DIR/started-$other" ]; do
        i=$((i + 1)) && [ $i -gt 100 ] && echo "$other never started" && exit 4
        sleep 0.1
    done
    ;;
esac
echo "stub output of $name"
EOF
    chmod +x "$d/fuzz/fuzz_$1"
}
for s in one fused_two bad meet_a meet_b; do stub "$s"; done
STUB_DIR=$d
export STUB_DIR

echo "1..12"
n=0
t() { n=$((n + 1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
# go NAME JOBS TARGET...: run-all.sh in $d, record in $d/NAME.rec, output in $d/NAME.out
go() {
    name=$1 jobs=$2
    shift 2
    : >"$d/$name.rec" && rm -f "$d"/started-*
    (cd "$d" && STUB_RECORD="$d/$name.rec" sh "$run_all" "$d" "corpus-$name" 7 "$jobs" "$@") \
        >"$d/$name.out" 2>&1
}
has() { grep -q -- "$2" "$d/$1"; }
count() { grep -c -- "$2" "$d/$1"; }

go ok 1 one fused_two
st=$?
t '[ $st -eq 0 ]' "every run passing: exit 0"
t '[ "$(count ok.rec "^one waves= ")" = 1 ] && [ "$(count ok.rec "^fused_two waves= ")" = 1 ] &&
   [ "$(count ok.rec "^fused_two waves=1 ")" = 1 ] && [ "$(count ok.rec .)" = 3 ]' \
    "each target once, a fused one again with PKV_FUZZ_MANY_WAVES=1, nothing else"
t 'has ok.rec "^one waves= args=-max_total_time=7 .*-artifact_prefix=corpus-ok/crash-one- corpus-ok/one $d/fuzz/corpus/one\$" &&
   has ok.rec "^fused_two waves=1 .*-artifact_prefix=corpus-ok/crash-fused_two-waves- corpus-ok/fused_two "' \
    "the time limit, crash prefix and both corpus folders are passed"
t 'has ok.out "^stub output of one" && has ok.out "^== fuzz fused_two, PKV_FUZZ_MANY_WAVES: 7 s"' \
    "every run's output is printed, under its heading"
t '[ -d "$d/corpus-ok/one" ] && [ -d "$d/corpus-ok/fused_two" ] &&
   [ "$(ls "$d/corpus-ok" | tr "\n" " ")" = "fused_two one " ]' \
    "the new-input folders are made, and nothing else in the corpus folder"

go fail 1 one bad fused_two
st=$?
t '[ $st -ne 0 ] && has fail.out "FAILED: exit 3"' "a failing run: non-zero exit, the run named"
t 'has fail.out "^stub failure of bad"' "  its output is shown"
t '[ "$(count fail.rec "^fused_two")" = 2 ]' "  the runs after it still run"

go meet 2 meet_a meet_b
st=$?
t '[ $st -eq 0 ] && ! has meet.out "never started"' "FUZZ_JOBS=2: two runs at once"
go alone 1 meet_a meet_b
st=$?
t '[ $st -ne 0 ] && has alone.out "meet_b never started"' "FUZZ_JOBS=1: one at a time"

go zero 0 one
st=$?
t '[ $st -eq 2 ] && has zero.out "FUZZ_JOBS must be a positive integer"' "FUZZ_JOBS=0: usage error"
go word x one
st=$?
t '[ $st -eq 2 ] && [ "$(count word.rec .)" = 0 ]' "FUZZ_JOBS=x: usage error, nothing run"
