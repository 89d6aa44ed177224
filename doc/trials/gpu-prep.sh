#!/bin/bash
# Builds, on a machine without a GPU, everything one GPU session of doc/trials needs, into one
# folder to carry to the device (the device tool carries ignored paths; .carry is ignored):
#   main.tar.gz, cand.tar.gz   release tarballs of HEAD and of HEAD + write-first-chunk.patch
#   bins.txz                   pkv of main, cand and the skeleton (write-skeleton.patch), for
#                              sm_90 only; libFuzzer + ASan + UBSan fuzzers of main (ten
#                              targets) and cand (the four writes), stripped; main's GPU test
#                              programs (t/cuda_*), stripped, for gpu-run.sh sanitize; the corpus
#   fskel/pkv, fskel2/pkv      with FUSED_SKEL=1: pkv of HEAD + doc/skeleton.patch, the fused
#                              kernels' memory skeleton (-DPKVK_SKEL) and that without the table's
#                              loads (-DPKVK_SKEL -DPKVK_SKEL2), for write-decode.sh's A/Bs (EXIT3)
# Fuzzers need clang, which the device lacks; the binaries load libcuda.so.1 at run time.
# Made in the forty-first session (no GPU) so that a GPU session spends its minutes measuring.
#
#   doc/trials/gpu-prep.sh [CARRY_DIR]      (default .carry, from a clean checkout's root)
# Environment: GENCODE (default sm_90's), JOBS (default: the CPU count), BASE (the commit to
# build, default HEAD; the two patches apply to ffc1298, where write-first-chunk.patch had not
# yet landed: BASE=ffc1298 rebuilds the forty-second session's A/B), MAIN_ONLY (1: main alone,
# without cand and the skeleton, for gpu-run.sh's check main and tables), FUSED_SKEL (above).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
carry=$(realpath -m "${1:-$root/.carry}")
gencode=${GENCODE:-"-gencode=arch=compute_90,code=sm_90"}
jobs=${JOBS:-$(nproc)}
work=$(mktemp -d /tmp/pkv-gpu-prep.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$carry" "$work/fz/bin" "$work/fz/pkv"
log() { printf '== %s (%s)\n' "$*" "$(date -u +%T)"; }

# checkout NAME [PATCH...]: HEAD's tree (committed files only), patched, bootstrapped
checkout() {
    local d="$work/$1"
    shift
    git clone -q "$root" "$d"
    git -C "$d" checkout -q "${BASE:-HEAD}"
    for p in "$@"; do git -C "$d" apply "$root/doc/trials/$p"; done
    (cd "$d" && ./bootstrap >/dev/null 2>&1)
}

# gcc build: the tarball (if asked) and pkv
build() {
    local name=$1 tarball=$2
    shift 2
    (cd "$work/$name" && ./configure -q --with-nvcc-gencode="$gencode" "$@" >/dev/null &&
        make -s -j"$jobs" pkv >/dev/null)
    if [ "$tarball" = yes ]; then
        (cd "$work/$name" && make -s dist >/dev/null && cp pagedkv-*.tar.gz "$carry/$name.tar.gz")
    fi
    mkdir -p "$work/fz/pkv/$name"
    cp "$work/$name/pkv" "$work/fz/pkv/$name/pkv"
}

# NAME's GPU test programs (Makefile.am's CUDA_TESTS; gcc, sm_90), stripped, into
# fz/tests/NAME: compute-sanitizer runs them on the device (gpu-run.sh sanitize)
tests() {
    local name=$1 t progs
    # shellcheck disable=SC2016 # $(CUDA_TESTS) is make's
    progs=$(cd "$work/$name" && printf 'print-cuda-tests:\n\t@echo $(CUDA_TESTS)\n' |
        make -s -f Makefile -f - print-cuda-tests)
    # shellcheck disable=SC2086 # the programs' names, split on purpose
    (cd "$work/$name" && make -s -j"$jobs" $progs >/dev/null)
    mkdir -p "$work/fz/tests/$name"
    for t in $progs; do strip -o "$work/fz/tests/$name/${t#t/}" "$work/$name/$t"; done
}

# clang build of the named fuzz targets into fz/bin/NAME
fuzzers() {
    local name=$1
    shift
    local d="$work/$name-fz" t targets=()
    for t in "$@"; do targets+=("fuzz/fuzz_$t"); done
    cp -a "$work/$name" "$d"
    (cd "$d" && { make -s distclean >/dev/null 2>&1 || true; })
    (cd "$d" && CC=clang ./configure -q --enable-fuzzing --enable-sanitizers \
        --with-nvcc-gencode="$gencode" >/dev/null &&
        make -s -j"$jobs" "${targets[@]}" >/dev/null)
    mkdir -p "$work/fz/bin/$name"
    for t in "$@"; do
        strip -o "$work/fz/bin/$name/fuzz_$t" "$d/fuzz/fuzz_$t"
    done
}

log "main: $(git -C "$root" rev-parse --short "${BASE:-HEAD}")"
checkout main
build main yes
tests main
fuzzers main fill_slots write_bf16 write_v_bf16 write_fp8 fused_bf16 fused_mrope_bf16 \
    fused_fp8_k fused_fp8_kv crmath convert
if [ "${MAIN_ONLY:-0}" != 1 ]; then
    log "cand: + write-first-chunk.patch"
    checkout cand write-first-chunk.patch
    build cand yes
    fuzzers cand fill_slots write_bf16 write_v_bf16 write_fp8
    log "skel: + write-skeleton.patch"
    checkout skel write-skeleton.patch
    build skel no NVCCFLAGS=-DPKVK_WSKEL CFLAGS='-O2 -DPKVK_WSKEL'
fi
if [ "${FUSED_SKEL:-0}" = 1 ]; then
    for v in fskel fskel2; do
        log "$v: + doc/skeleton.patch"
        checkout "$v" ../skeleton.patch
    done
    build fskel no NVCCFLAGS=-DPKVK_SKEL
    build fskel2 no "NVCCFLAGS=-DPKVK_SKEL -DPKVK_SKEL2"
    for v in fskel fskel2; do mkdir -p "$carry/$v" && cp "$work/fz/pkv/$v/pkv" "$carry/$v/pkv"; done
fi
cp -a "$root/fuzz/corpus" "$work/fz/corpus"
cp "$root/doc/trials/write-decode.sh" "$work/fz/"
tar -cJf "$carry/bins.txz" -C "$work" fz
log "done: $(du -sh "$carry" | cut -f1) in $carry"
ls -l "$carry"
