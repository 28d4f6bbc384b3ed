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
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"
mode=${1:?usage: $0 MODE [N] [OUTFILE]} n=${2:-300} outfile=${3:-/tmp/ctld.$1.callgrind}

# The runtime's jansson pool stays off under valgrind unless asked for;
# the profile is of what slurmctld runs in production.
export SLURM_JOBTAP_JSON_POOL=${SLURM_JOBTAP_JSON_POOL:-1}
bench_cluster_start || exit 1
bench_restart "$mode" defer || bench_finish 1
pid=${CLUSTER_PIDS[1]}
kill "$pid"
_cluster_wait_exit "$pid" 60
rm -rf "$CLUSTER_DIR/state" && mkdir "$CLUSTER_DIR/state"
valgrind --tool=callgrind --callgrind-out-file="$outfile" \
	/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$CLUSTER_DIR/log/slurmctld.out" 2>&1 &
CLUSTER_PIDS[1]=$!
cluster_wait_for 300 _bench_node_up || { bench_say "slurmctld under valgrind did not come up"; bench_finish 1; }
scontrol update nodename="$CLUSTER_NODE" state=drain reason=bench
"$BENCH_CLIENT" -q -s -n 300 -t 2 >/dev/null
sleep 2
callgrind_control -z "${CLUSTER_PIDS[1]}" >/dev/null
"$BENCH_CLIENT" -q -s -n "$n" -t 2
sleep 2
callgrind_control -d "${CLUSTER_PIDS[1]}" >/dev/null
cluster_stop; _bench_cgroup_remove
dump=$outfile.1 # the first dump: the N submissions
bench_say "profile: $dump"
callgrind_annotate --inclusive=yes "$dump" | sed -n '/PROGRAM TOTALS/,$p' | grep -v '???:0x' | head -n 60
