#!/usr/bin/env bash
# Instruction profile of slurmctld itself (perf does not work on every
# machine; callgrind counts instructions reproducibly) while it takes N
# submissions in one mode (bench/lib.sh), to see where a mode's added cost
# per job goes.
#
#   bench/profile-ctld.sh MODE [N] [OUTFILE]
#
# Writes a callgrind dump (default /tmp/ctld.MODE.callgrind.1) holding only
# the N submissions (counters are zeroed after a warm-up of 300 jobs, more
# than the runtime's 256 kept jobspec trees, so steady state is measured)
# and prints the top inclusive entries. The dump without ".1" is written
# at exit (teardown) and is not the one to read. Slow: slurmctld runs ~50x
# slower under valgrind.
#
# By default the node is drained, so the profile holds the submissions
# alone (Slurm's node test included, as SchedulerParameters=defer keeps).
# With --run the node stays up, prep/jobtap is loaded in the jobtap modes
# and each job runs and ends before the dump: a job's whole life in
# slurmctld (submission, start, prolog and epilog topics, completion).
# Completions are counted in slurmctld's log, not by asking slurmctld,
# so the waiting adds nothing to the profile.
#
# --summary DUMP N prints the per-job summary of an earlier dump again.
#
# BENCH_PARTITION=batch submits the jobs to "batch" by name (by default
# they name none): with mode a, Slurm alone doing what the benchmark
# policies decide, to tell Slurm's own work on that decision from ours.
top=$(cd "$(dirname "$0")/.." && pwd)

# Per job, from a dump of N jobs (bench/ctld_summary.py says what).
_profile_summary() {
	callgrind_annotate --tree=caller --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		python3 "$top/bench/ctld_summary.py" "$2"
}
if [ "${1:-}" = --summary ]; then
	usage="usage: $0 --summary DUMP N"
	_profile_summary "${2:?$usage}" "${3:?$usage}"
	exit
fi
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"
run=0
[ "${1:-}" = --run ] && { run=1; shift; }
mode=${1:?usage: $0 [--run] MODE [N] [OUTFILE]} n=${2:-300} outfile=${3:-/tmp/ctld.$1.callgrind}

# Jobs that have ended, by slurmctld's log.
_profile_jobs_done() {
	grep -c '_job_complete: JobId=[0-9]* done' "$CLUSTER_DIR/log/slurmctld.log"
}

# Submit COUNT jobs; with --run, wait until DONE jobs have ended in all.
_profile_submit() {
	local count=$1 done=$2
	"$BENCH_CLIENT" -q -s -n "$count" -t 2 ${BENCH_PARTITION:+-p "$BENCH_PARTITION"} >/dev/null || return 1
	[ "$run" = 1 ] || return 0
	cluster_wait_for 1800 eval '[ "$(_profile_jobs_done)" -ge "$done" ]' ||
		{ bench_say "$(_profile_jobs_done) of $done jobs ended"; return 1; }
}

bench_cluster_start || exit 1
if [ "$run" = 1 ]; then
	bench_restart "$mode" default || bench_finish 1
	case $mode in a | b) ;; *) echo "PrEpPlugins=prep/jobtap" >>"$SLURM_CONF" ;; esac
else
	bench_restart "$mode" defer || bench_finish 1
fi
pid=${CLUSTER_PIDS[1]}
kill "$pid"
_cluster_wait_exit "$pid" 60
rm -rf "$CLUSTER_DIR/state" && mkdir "$CLUSTER_DIR/state"
valgrind --tool=callgrind --callgrind-out-file="$outfile" \
	/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$CLUSTER_DIR/log/slurmctld.out" 2>&1 &
CLUSTER_PIDS[1]=$!
cluster_wait_for 300 _bench_node_up || { bench_say "slurmctld under valgrind did not come up"; bench_finish 1; }
[ "$run" = 1 ] || scontrol update nodename="$CLUSTER_NODE" state=drain reason=bench
_profile_submit 300 300 || bench_finish 1
sleep 2
callgrind_control -z "${CLUSTER_PIDS[1]}" >/dev/null
_profile_submit "$n" $((300 + n)) || bench_finish 1
sleep 2
callgrind_control -d "${CLUSTER_PIDS[1]}" >/dev/null
cluster_stop; _bench_cgroup_remove
dump=$outfile.1 # the first dump: the N submissions
bench_say "profile: $dump"
callgrind_annotate --inclusive=yes "$dump" | sed -n '/PROGRAM TOTALS/,$p' | grep -v '???:0x' | head -n 60
_profile_summary "$dump" "$n"
