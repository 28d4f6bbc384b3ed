#!/usr/bin/env bash
# CI smoke test of the benchmark harness (TAP): bench/run --quick must run
# end to end. Tiny counts, no timing assertion.
top=$(cd "$(dirname "$0")/.." && pwd)
echo "1..3"
if [ "$(id -u)" != 0 ]; then
	echo "ok 1 # SKIP needs root (private cluster)"
	echo "ok 2 # SKIP needs root"
	echo "ok 3 # SKIP needs root"
	exit 0
fi
out=$(mktemp -d)
if "$top/bench/run" --quick --out "$out" >"$out/run.log" 2>&1; then
	echo "ok 1 bench/run --quick completes"
else
	echo "not ok 1 bench/run --quick completes"
	sed 's/^/# /' "$out/run.log" | tail -n 40
fi
n=$(grep -c 'mode=' "$out/throughput.txt" 2>/dev/null)
if [ "${n:-0}" -eq 4 ]; then
	echo "ok 2 one throughput sample per mode"
else
	echo "not ok 2 one throughput sample per mode (got ${n:-0})"
fi
if grep -q '^submit_us c1 ' "$out/micro.txt" 2>/dev/null &&
	grep -q 'Scale' "$out/summary.md" 2>/dev/null; then
	echo "ok 3 micro and scale results summarized"
else
	echo "not ok 3 micro and scale results summarized"
fi
rm -rf "$out"
