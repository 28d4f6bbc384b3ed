#!/usr/bin/env bash
# CI smoke test of the benchmark harness (TAP): summarize.py's verdicts on
# made-up samples, then bench/run --quick must run end to end. Tiny counts,
# no timing assertion.
top=$(cd "$(dirname "$0")/.." && pwd)
echo "1..6"

# summarize.py's verdicts on made-up samples: steady ones decide a target,
# noisy ones do not. Lines: sched, mode, rate (jobs/s).
samples() { # MODE RATE...
	local mode=$1 r
	shift
	for r in "$@"; do echo "sched=defer mode=$mode rate=$r ctld_cpu_us=400"; done
}
verdicts=$(mktemp)
{
	samples a 2000 2002 1998 2001 1999
	samples b 1800 1802 1798 1801 1799
	samples c 1990 1992 1988 1991 1989
	samples d 1950 1952 1948 1951 1949
} >"$verdicts"
steady=$(python3 "$top/bench/summarize.py" "$verdicts")
{
	samples a 1500 2500 1600 2400 2000
	samples b 1500 2500 1600 2400 2000
	samples c 1500 2500 1600 2400 2000
	samples d 1500 2500 1600 2400 2000
} >"$verdicts"
noisy=$(python3 "$top/bench/summarize.py" "$verdicts")
rm -f "$verdicts"
if grep -q '^c/a = 0.995, 90% interval .* (target >= 0.97: met)' <<<"$steady" &&
	grep -q '^margin .* +15.0 us/job, 90% interval .* (target <= 0.5, margin >= 0: met)' <<<"$steady"; then
	echo "ok 1 summarize.py: steady samples meet both targets"
else
	echo "not ok 1 summarize.py: steady samples meet both targets"
	sed 's/^/# /' <<<"$steady"
fi
if grep -q "(target >= 0.97: not resolved by this run's noise)" <<<"$noisy"; then
	echo "ok 2 summarize.py: noisy samples leave c/a undecided"
else
	echo "not ok 2 summarize.py: noisy samples leave c/a undecided"
	sed 's/^/# /' <<<"$noisy"
fi

if [ "$(id -u)" != 0 ]; then
	echo "ok 3 # SKIP needs root (private cluster)"
	echo "ok 4 # SKIP needs root"
	echo "ok 5 # SKIP needs root"
	echo "ok 6 # SKIP needs root"
	exit 0
fi
out=$(mktemp -d)
if "$top/bench/run" --quick --out "$out" >"$out/run.log" 2>&1; then
	echo "ok 3 bench/run --quick completes"
else
	echo "not ok 3 bench/run --quick completes"
	sed 's/^/# /' "$out/run.log" | tail -n 40
fi
n=$(grep -c 'mode=' "$out/throughput.txt" 2>/dev/null)
if [ "${n:-0}" -eq 4 ]; then
	echo "ok 4 one throughput sample per mode"
else
	echo "not ok 4 one throughput sample per mode (got ${n:-0})"
fi
if grep -q '^submit_us c1 ' "$out/micro.txt" 2>/dev/null &&
	grep -q 'Scale' "$out/summary.md" 2>/dev/null; then
	echo "ok 5 micro and scale results summarized"
else
	echo "not ok 5 micro and scale results summarized"
fi
# slurmctld's CPU per sample, from its own cgroup where one can be made;
# the cgroup is gone afterwards.
clocks=$(sed -n 's/.* ctld_cpu_us=[0-9.]* cpu_clock=\(cgroup\|ticks\)$/\1/p' \
	"$out/throughput.txt" "$out/scale.txt" 2>/dev/null | sort -u | tr '\n' ' ')
if [ -n "$clocks" ] && ! ls -d /sys/fs/cgroup/*/slurm-jobtap-bench.* /sys/fs/cgroup/slurm-jobtap-bench.* >/dev/null 2>&1 &&
	[ "$(grep -c 'cpu_clock=' "$out/throughput.txt" "$out/scale.txt" | awk -F: '{ n += $2 } END { print n }')" -eq 6 ]; then
	echo "ok 6 every sample has slurmctld's CPU (${clocks% }), and no cgroup is left"
else
	echo "not ok 6 every sample has slurmctld's CPU, and no cgroup is left (clocks: $clocks)"
fi
rm -rf "$out"
