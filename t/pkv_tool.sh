#!/bin/sh
# The pkv tool: help, an unknown command, and "pkv check --quick" passing with a full table;
# "pkv check --gpu" fails where there is no GPU and passes where there is one.
pkv="${BUILDDIR:-.}/pkv"
echo "1..31"
n=0
t() { n=$((n + 1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
t '"$pkv" --help | grep -q "check"' "pkv --help lists the commands"
t '"$pkv" --help | grep -q -- "--vision"' "  and bench's options, --vision among them"
t '"$pkv" --help | grep -q -- "--runs"' "  and --runs"
t '"$pkv" --help | grep -q -- "--read-back" && "$pkv" --help | grep -q -- "--cold-l2"' "  and --read-back, --cold-l2"
t '! "$pkv" bogus 2>/dev/null' "an unknown command fails"
t '"$pkv" bench --quick --help 2>&1 | grep -q -- "--cold-l2"' "pkv bench --help prints the help"
t '"$pkv" check -h >/dev/null 2>&1 && "$pkv" info --help >/dev/null 2>&1' \
    "  pkv check -h and pkv info --help exit 0"
t '"$pkv" bogus --help >/dev/null 2>&1; [ $? -eq 2 ]' "  an unknown command with --help still exits 2"
t '"$pkv" info --bogus >/dev/null 2>&1; [ $? -eq 2 ]' "pkv info: an argument exits 2"
t '"$pkv" --version --bogus >/dev/null 2>&1; [ $? -eq 2 ]' "pkv --version: an argument exits 2"
t '"$pkv" bench --bogus 2>/dev/null; [ $? -eq 2 ]' "pkv bench: an unknown option exits 2 (before any GPU work)"
t '"$pkv" bench --heads 2>/dev/null; [ $? -eq 2 ]' "  and --heads without its number"
t '"$pkv" bench --tokens 2>/dev/null; [ $? -eq 2 ]' "  and --tokens without its number"
t '"$pkv" bench --runs 2>/dev/null; [ $? -eq 2 ]' "  and --runs without its number"
t '"$pkv" bench --runs 0 2>/dev/null; [ $? -eq 2 ]' "  and --runs 0"
t '"$pkv" bench --runs 16 2>/dev/null; [ $? -eq 2 ]' "  and --runs past 15"
t '"$pkv" bench --runs 3x 2>/dev/null; [ $? -eq 2 ]' "  and --runs 3x"
t '"$pkv" bench --graph --cold-l2 2>/dev/null; [ $? -eq 2 ]' "  and --cold-l2 with --graph (a graph has no gap to clear L2 in)"
t '"$pkv" bench --op write_bf15 2>/dev/null; [ $? -eq 2 ]' "  and --op with an unknown op (an empty table before)"
t '"$pkv" bench --op fill_slots 2>/dev/null; [ $? -eq 2 ]' "  and --op fill_slots (not timed)"
t '"$pkv" bench --heads 3 2>/dev/null; [ $? -eq 2 ]' "  and --heads 3 (no such geometry)"
t '"$pkv" bench --tokens 0 2>/dev/null; [ $? -eq 2 ]' "  and --tokens 0 (every count before)"
t '"$pkv" bench --tokens 8x 2>/dev/null; [ $? -eq 2 ]' "  and --tokens 8x"
t '"$pkv" bench --tokens " 8" 2>/dev/null; [ $? -eq 2 ]' "  and --tokens with a space"
t '"$pkv" check --bogus 2>/dev/null; [ $? -eq 2 ]' "pkv check: an unknown option exits 2 (before any case)"
t '"$pkv" check --quick extra 2>/dev/null; [ $? -eq 2 ]' "  and an extra argument after --quick"
# with a GPU the sweep must reach it (--gpu); PKV_TEST_REQUIRE_GPU (set, not "" or "0") as
# in the GPU tests: no GPU is then a failure, not a pass of the reference alone
gpu=--gpu
if "$pkv" info | grep -q '^GPUs: *none'; then
    case "${PKV_TEST_REQUIRE_GPU:-0}" in
    0) gpu= ;;
    *) echo "Bail out! PKV_TEST_REQUIRE_GPU is set but pkv info finds no GPU"; exit 1 ;;
    esac
fi
out=$("$pkv" check --quick $gpu)
st=$?
t '[ $st -eq 0 ]' "pkv check --quick${gpu:+ $gpu} exits 0"
t 'echo "$out" | grep -q "^PASS: 0 mismatches"' "it reports no mismatch"
t '[ "$(echo "$out" | grep -c -E "^(fill_slots|write_|fused_)")" -ge 8 ]' "its table has all eight ops"
if [ -z "$gpu" ]; then
    "$pkv" check --quick --gpu >/dev/null 2>&1
    st=$?
    t '[ $st -eq 3 ]' "no GPU: pkv check --quick --gpu exits 3"
    t '"$pkv" check --quick --gpu 2>&1 >/dev/null | grep -q "no CUDA backend"' "  and says why"
else
    # the ops pkv info lists, fill_slots aside (a host function, no kernel)
    nops=$("$pkv" info | sed -n 's/^ops: *//p' | tr ' ' '\n' | grep -c -v '^fill_slots$')
    cuda=$(echo "$out" | sed -n '/^op (CUDA)/,$p')
    t '[ -n "$cuda" ]' "a GPU: the table has the CUDA backend's part"
    # at least the seven kernel ops: an empty "ops:" line must not make 0 rows pass
    t '[ "$nops" -ge 7 ] && [ "$(echo "$cuda" | grep -c -E "^(write_|fused_)")" -eq "$nops" ]' \
        "  with a row for each of the $nops ops pkv info lists but fill_slots"
fi
