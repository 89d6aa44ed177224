#!/bin/sh
# PKV_TEST_REQUIRE_GPU where there is no GPU: unset or "0", every GPU test skips; any other
# value, every one bails out (a GPU host's "make check" must not pass by skipping), and the
# fuzzers' backend (fuzz/replay here) aborts. One rule, lib/env.h; t/cuda_runtime once bailed
# out on "0".
b="${BUILDDIR:-.}"
if ! "$b/pkv" info | grep -q '^GPUs: *none'; then
    echo "1..0 # SKIP a GPU is present (the rule is checked where there is none)"
    exit 0
fi
# every GPU test program built (t/cuda_*: cuda_runtime only with the CUDA runtime)
progs=
for f in "$b"/t/cuda_*; do
    case "${f##*/}" in *.*) continue ;; esac
    [ -x "$f" ] && progs="$progs ${f##*/}"
done
[ -n "$progs" ] || { echo "Bail out! no t/cuda_* program in $b/t"; exit 1; }
echo "1..$(($(echo $progs | wc -w) * 3 + 1))"
n=0
t() { n=$((n + 1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skips() { out=$("$@" 2>&1) && case "$out" in "1..0 # SKIP"*) true ;; *) false ;; esac; }
# fails TEXT CMD...: CMD exits non-zero and says TEXT
fails() {
    text=$1
    shift
    out=$("$@" 2>&1)
    [ $? -ne 0 ] && case "$out" in *"$text"*) true ;; *) false ;; esac
}
for p in $progs; do
    t 'skips env -u PKV_TEST_REQUIRE_GPU "$b/t/$p"' "t/$p skips with PKV_TEST_REQUIRE_GPU unset"
    t 'skips env PKV_TEST_REQUIRE_GPU=0 "$b/t/$p"' "  and with it 0"
    t 'fails "Bail out!" env PKV_TEST_REQUIRE_GPU=1 "$b/t/$p"' "  and bails out with it 1"
done
t 'fails "but no GPU" env PKV_TEST_REQUIRE_GPU=1 "$b/fuzz/replay"' \
    "fuzz/replay (the fuzzers' GPU backend) fails with it 1"
