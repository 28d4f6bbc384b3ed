#!/usr/bin/env bash
# A large job array, side by side: `sbatch --array=0-(N-1)` on a drained
# node, in modes a (Slurm alone), c (one C plugin), d (a Lua policy) and
# p (the C plugin with a priority, reprioritized every 5 s) (bench/lib.sh).
# For each: the time sbatch takes to return, the time until the agent has
# made the last task a jobtap job (c, d, p), slurmctld's resident memory
# per pending task (its growth over the submission, divided by N), and in
# mode p the length of the agent's next reprioritize pass over the tasks
# (slurmctld's debug line).
#
#   bench/array-scale.sh [N (100000)] [MODES ("a c d")]
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"
n=${1:-100000} modes=${2:-a c d}
jobtap=$BENCH_BUILD/src/jobtap/jobtap

now_ms() { date +%s%3N; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/${CLUSTER_PIDS[1]}/status"; }

bench_cluster_start $((n + 1000)) || exit 1
echo "MaxArraySize=$((n + 1))" >>"$CLUSTER_DIR/slurm.conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
for mode in $modes; do
	bench_restart "$mode" default || bench_finish 1
	before=$(rss_kb)
	t0=$(now_ms)
	arr=$(sbatch --parsable -o /dev/null --array=0-$((n - 1)) --wrap true) || bench_finish 1
	t1=$(now_ms)
	bound=-
	if [ "$mode" != a ]; then
		until "$jobtap" job "${arr}_$((n - 1))" >/dev/null 2>&1; do sleep 0.05; done
		bound=$(($(now_ms) - t0))
	fi
	sleep 2
	after=$(rss_kb)
	printf '%s: sbatch returns in %d ms; last task a jobtap job after %s ms; RSS +%d KiB, %d bytes per task\n' \
		"$mode" $((t1 - t0)) "$bound" $((after - before)) $(((after - before) * 1024 / n))
	if [ "$mode" = p ]; then
		scontrol setdebug debug # the pass's line, only from now on
		pattern="reprioritize pass: $n jobs asked"
		cluster_wait_for 30 sh -c "[ \$(grep -c '$pattern' '$CLUSTER_DIR/log/slurmctld.log') -ge 3 ]"
		grep -o "$pattern in .*CPU)" "$CLUSTER_DIR/log/slurmctld.log" | head -n 3 | sed 's/^/p: /'
	fi
done
bench_finish 0
