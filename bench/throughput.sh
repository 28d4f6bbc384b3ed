#!/usr/bin/env bash
# Throughput of submissions through slurmctld in four modes (bench/lib.sh),
# interleaved, repeated, with SchedulerParameters default and defer.
#
#   bench/throughput.sh [--jobs N] [--threads T] [--reps R]
#                       [--sched "default defer"] [--modes "a b c d"] [--out FILE]
#
# Writes one line per sample (sched, mode, rep, then the client's fields)
# to FILE (default: stdout) for bench/summarize.py. Needs root.
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"

jobs=2000 threads=4 reps=5 scheds="default defer" modes="a b c d" out=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) jobs=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--sched) scheds=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--jobs N] [--threads T] [--reps R] [--sched S] [--modes M] [--out FILE]" >&2; exit 2 ;;
	esac
done
bench_begin "$out" || exit 1
bench_cluster_start $((jobs * 2 + 1000)) || exit 1
# Rotate the mode order each repetition so no mode always follows another.
read -r -a order <<<"$modes"
rc=0
for ((rep = 1; rep <= reps; rep++)); do
	for sched in $scheds; do
		for ((k = 0; k < ${#order[@]}; k++)); do
			mode=${order[(k + rep - 1) % ${#order[@]}]}
			bench_restart "$mode" "$sched" || { rc=1; break 3; }
			line=$(bench_submit "$jobs" "$threads") || { rc=1; break 3; }
			printf 'sched=%s mode=%s rep=%d %s\n' "$sched" "$mode" "$rep" "$line" >>"$out"
			bench_say "rep $rep sched=$sched mode=$mode: $(bench_field rate "$line") jobs/s, $(bench_field ctld_cpu_us "$line") us CPU/job"
		done
	done
done
bench_finish $rc
