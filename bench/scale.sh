#!/usr/bin/env bash
# Does a submission cost more when many jobs are pending? Submissions with
# an empty cluster and with PRELOAD pending jobs, with no job_submit plugin
# (mode a), job_submit/jobtap (mode c) and Slurm's job_submit/lua (mode b),
# SchedulerParameters=defer.
#
#   bench/scale.sh [--preload N] [--jobs N] [--reps R] [--modes "a c b"] [--out FILE]
#
# The pending jobs are submitted once with no job_submit plugin (fast) and
# the job state saved; every loaded sample restarts slurmctld from a copy
# of that state, so each sees exactly PRELOAD jobs (in jobtap mode the
# shim's start-up replay takes them in, and the sample waits for it), and
# starts after the shim's first periodic pass (bench_after_first_pass).
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"

preload=50000 jobs=2000 reps=3 modes="a c b" out=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--preload) preload=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--preload N] [--jobs N] [--reps R] [--modes M] [--out FILE]" >&2; exit 2 ;;
	esac
done

bench_begin "$out" || exit 1
bench_cluster_start $((preload + jobs * 4 + 2000)) || exit 1
rc=0
bench_restart a defer || rc=1
if [ $rc = 0 ]; then
	t0=$SECONDS
	"$BENCH_CLIENT" -q -n "$preload" -t 4 >/dev/null || { bench_say "preload failed"; rc=1; }
	bench_say "preloaded $preload jobs in $((SECONDS - t0)) s"
	# Stop slurmctld so the state on disk is complete, then keep a copy.
	kill "${CLUSTER_PIDS[1]}"
	_cluster_wait_exit "${CLUSTER_PIDS[1]}" 120
	cp -a "$CLUSTER_DIR/state" "$CLUSTER_DIR/state.loaded"
fi
for ((rep = 1; rep <= reps && rc == 0; rep++)); do
	for mode in $modes; do
		for load in 0 "$preload"; do
			snap=
			[ "$load" != 0 ] && snap=$CLUSTER_DIR/state.loaded
			bench_restart "$mode" defer "$snap" || { rc=1; break 3; }
			[ -n "$snap" ] && bench_after_first_pass
			line=$(bench_submit "$jobs" 4) || { rc=1; break 3; }
			printf 'sched=defer mode=%s load=%s rep=%d %s\n' "$mode" "$load" "$rep" "$line" >>"$out"
			bench_say "scale rep $rep mode=$mode pending=$load: $(bench_field rate "$line") jobs/s, $(bench_field ctld_cpu_us "$line") us CPU/job"
		done
	done
done
bench_finish $rc
