#!/bin/sh
# The pkv tool: help, an unknown command, and "pkv check --quick" passing with a full table.
pkv="${BUILDDIR:-.}/pkv"
echo "1..16"
n=0
t() { n=$((n + 1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
t '"$pkv" --help | grep -q "check"' "pkv --help lists the commands"
t '"$pkv" --help | grep -q -- "--vision"' "  and bench's options, --vision among them"
t '"$pkv" --help | grep -q -- "--runs"' "  and --runs"
t '"$pkv" --help | grep -q -- "--read-back" && "$pkv" --help | grep -q -- "--cold-l2"' "  and --read-back, --cold-l2"
t '! "$pkv" bogus 2>/dev/null' "an unknown command fails"
t '"$pkv" bench --bogus 2>/dev/null; [ $? -eq 2 ]' "pkv bench: an unknown option exits 2 (before any GPU work)"
t '"$pkv" bench --heads 2>/dev/null; [ $? -eq 2 ]' "  and --heads without its number"
t '"$pkv" bench --tokens 2>/dev/null; [ $? -eq 2 ]' "  and --tokens without its number"
t '"$pkv" bench --runs 2>/dev/null; [ $? -eq 2 ]' "  and --runs without its number"
t '"$pkv" bench --runs 0 2>/dev/null; [ $? -eq 2 ]' "  and --runs 0"
t '"$pkv" bench --runs 16 2>/dev/null; [ $? -eq 2 ]' "  and --runs past 15"
t '"$pkv" bench --runs 3x 2>/dev/null; [ $? -eq 2 ]' "  and --runs 3x"
t '"$pkv" bench --graph --cold-l2 2>/dev/null; [ $? -eq 2 ]' "  and --cold-l2 with --graph (a graph has no gap to clear L2 in)"
out=$("$pkv" check --quick)
st=$?
t '[ $st -eq 0 ]' "pkv check --quick exits 0"
t 'echo "$out" | grep -q "^PASS: 0 mismatches"' "it reports no mismatch"
t '[ "$(echo "$out" | grep -c -E "^(fill_slots|write_|fused_)")" -ge 8 ]' "its table has all eight ops"
