#!/usr/bin/env bash
# The control socket's cost: the round trip of a service call
# from a client on the same machine, and submission throughput while a
# client calls a service 100 times a second, beside the same runs without.
#
#   bench/control.sh [--jobs N] [--reps R] [--calls N] [--out FILE]
#
# Prints the round trip (median, p99, max over --calls calls of
# job-manager.bench-policy.ping) and writes throughput samples for
# bench/summarize.py: mode a (no plugin), c (the C jobtap plugin) and e (c,
# with 100 calls/s of ping during the submissions). Targets: round trip
# median under 1 ms, e/a equal to c/a within noise. Needs root.
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"

jobs=2000 reps=3 calls=2000 threads=4 out=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) jobs=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--calls) calls=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--jobs N] [--reps R] [--calls N] [--out FILE]" >&2; exit 2 ;;
	esac
done
rtt=$CLUSTER_BUILD/bench/control-rtt
topic=job-manager.bench-policy.ping
bench_begin "$out" || exit 1
bench_cluster_start $((jobs * 2 + 1000)) || exit 1
sock=$CLUSTER_DIR/state/jobtap.sock

bench_restart c defer || bench_finish 1
cluster_wait_for 10 test -S "$sock" || { bench_say "no control socket at $sock"; bench_finish 1; }
"$rtt" "$sock" "$topic" 100 >/dev/null # warm up
bench_say "round trip: $("$rtt" "$sock" "$topic" "$calls")"

rc=0
for ((rep = 1; rep <= reps; rep++)); do
	for mode in a c e; do
		bench_restart "${mode/e/c}" defer || { rc=1; break 2; }
		caller=
		if [ "$mode" = e ]; then
			cluster_wait_for 10 test -S "$sock"
			"$rtt" "$sock" "$topic" 1000000 100 >"$CLUSTER_DIR/calls.out" 2>&1 &
			caller=$!
		fi
		line=$(bench_submit "$jobs" "$threads") || { rc=1; break 2; }
		[ -n "$caller" ] && { kill "$caller" 2>/dev/null; wait "$caller" 2>/dev/null; }
		printf 'sched=defer mode=%s rep=%d %s\n' "$mode" "$rep" "$line" >>"$out"
		bench_say "rep $rep mode=$mode: $(bench_field rate "$line") jobs/s, $(bench_field ctld_cpu_us "$line") us CPU/job"
	done
done
bench_finish $rc
