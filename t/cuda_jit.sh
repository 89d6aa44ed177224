#!/bin/sh
# The kernels loaded as compute_80 PTX and JIT-compiled by the driver (the software FP8 path
# of older GPUs) give the same bytes: t/cuda_ops and t/cuda_convert pass in that mode, and
# t/cuda_pdl (that code has no grid dependency wait, so the launches must not overlap).
b="${BUILDDIR:-.}"
out=$(PKV_CUDA_JIT_PTX=1 "$b/t/cuda_ops" 2>&1)
st=$?
case "$out" in
*"1..0 # SKIP"*) echo "1..0 # SKIP no CUDA device"; exit 0 ;;
esac
echo "1..4"
echo "$out" | grep -q "compute_80 PTX, JIT" && echo "ok 1 - the PTX image was loaded" ||
    echo "not ok 1 - the PTX image was loaded"
[ $st -eq 0 ] && echo "ok 2 - t/cuda_ops passes with the JIT-compiled compute_80 PTX" || {
    echo "not ok 2 - t/cuda_ops passes with the JIT-compiled compute_80 PTX"
    echo "$out" | grep -v '^ok' | sed 's/^/# /'
}
out=$(PKV_CUDA_JIT_PTX=1 PKV_TEST_SAMPLE=${PKV_TEST_SAMPLE:-1} "$b/t/cuda_convert" 2>&1)
[ $? -eq 0 ] && echo "ok 3 - t/cuda_convert passes with the JIT-compiled compute_80 PTX" || {
    echo "not ok 3 - t/cuda_convert passes with the JIT-compiled compute_80 PTX"
    echo "$out" | sed 's/^/# /'
}
out=$(PKV_CUDA_JIT_PTX=1 "$b/t/cuda_pdl" 2>&1)
[ $? -eq 0 ] && echo "ok 4 - t/cuda_pdl passes with the JIT-compiled compute_80 PTX" || {
    echo "not ok 4 - t/cuda_pdl passes with the JIT-compiled compute_80 PTX"
    echo "$out" | grep -v '^ok' | sed 's/^/# /'
}
