#!/usr/bin/env bash
# Interactive start as users feel it, side by side in one run: on an idle
# node, the wall time of `srun -n1 true` and of `salloc -n1 true`, and from
# `sbatch` to the job seen RUNNING (squeue polled every 10 ms). Modes
# (bench/lib.sh): a (Slurm alone), n (the plugins, no policy), c (one C
# plugin); the modes take turns, round after round, so drift in the
# machine's speed falls on all of them. Prints each mode's median and
# range in milliseconds.
#
#   bench/interactive.sh [SAMPLES_PER_MODE (20)] [MODES ("a n c")]
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"
samples=${1:-20} modes=${2:-a n c} rounds=4
per_round=$(((samples + rounds - 1) / rounds))
out=$(mktemp)

now_ms() { date +%s%3N; }
running() { squeue -h -j "$1" -t all -o %T | grep -Eqx 'RUNNING|COMPLETING|COMPLETED'; }

bench_cluster_start || exit 1
for round in $(seq "$rounds"); do
	for mode in $modes; do
		bench_restart "$mode" default || bench_finish 1
		scontrol update nodename="$CLUSTER_NODE" state=resume
		cluster_wait_for 30 _cluster_node_idle || bench_finish 1
		for _ in $(seq "$per_round"); do
			t0=$(now_ms); srun -n1 true || bench_finish 1; t1=$(now_ms)
			echo "$mode srun $((t1 - t0))" >>"$out"
			t0=$(now_ms); salloc -Q -n1 true || bench_finish 1; t1=$(now_ms)
			echo "$mode salloc $((t1 - t0))" >>"$out"
			t0=$(now_ms)
			id=$(sbatch --parsable -n1 -o /dev/null --wrap true) || bench_finish 1
			while ! running "$id"; do sleep 0.01; done
			t1=$(now_ms)
			echo "$mode sbatch-to-running $((t1 - t0))" >>"$out"
			cluster_wait_for 30 _cluster_node_idle
		done
	done
done
python3 - "$out" <<'PY'
import statistics, sys
from collections import defaultdict
d = defaultdict(list)
for line in open(sys.argv[1]):
    mode, what, ms = line.split()
    d[(what, mode)].append(int(ms))
for (what, mode), v in sorted(d.items()):
    print(f"{what:18} {mode}: median {statistics.median(v):6.1f} ms  "
          f"(min {min(v)}, max {max(v)}, n {len(v)})")
PY
rm -f "$out"
bench_finish 0
