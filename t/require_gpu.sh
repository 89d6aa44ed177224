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
progs="cuda_ops cuda_threads cuda_rope_table cuda_mrope_table cuda_plan cuda_write_plan cuda_pdl"
progs="$progs cuda_convert"
[ -x "$b/t/cuda_runtime" ] && progs="$progs cuda_runtime"
echo "1..$(($(echo $progs | wc -w) * 3 + 1))"
n=0
t() { n=$((n + 1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skips() { out=$("$@" 2>&1) && case "$out" in "1..0 # SKIP"*) true ;; *) false ;; esac; }
bails() { out=$("$@" 2>&1); [ $? -ne 0 ] && case "$out" in *"Bail out!"*) true ;; *) false ;; esac; }
aborts() { out=$("$@" 2>&1); [ $? -ne 0 ] && case "$out" in *"but no GPU"*) true ;; *) false ;; esac; }
for p in $progs; do
    t 'skips env -u PKV_TEST_REQUIRE_GPU "$b/t/$p"' "t/$p skips with PKV_TEST_REQUIRE_GPU unset"
    t 'skips env PKV_TEST_REQUIRE_GPU=0 "$b/t/$p"' "  and with it 0"
    t 'bails env PKV_TEST_REQUIRE_GPU=1 "$b/t/$p"' "  and bails out with it 1"
done
t 'aborts env PKV_TEST_REQUIRE_GPU=1 "$b/fuzz/replay"' "fuzz/replay (the fuzzers' GPU backend) fails with it 1"
