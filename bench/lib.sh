# Shared by the cluster benchmarks (sourced after test/lib/cluster.sh).
#
# One private cluster; each sample restarts slurmctld with the mode's
# slurm.conf keys and a cleared (or restored) job state, drains the node,
# then submits. Modes:
#   a  no job_submit plugin (multifactor priority, site_factor/none)
#   b  Slurm's job_submit/lua with bench/policies/job_submit.lua
#   c  job_submit/jobtap + site_factor/jobtap, bench-policy.so (C)
#   d  job_submit/jobtap + site_factor/jobtap, bench-policy.lua
#   k  as c, without the jobs' kept state (state-dir = "")
#   n  job_submit/jobtap + site_factor/jobtap, no plugin in jobtap.conf
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_BUILD=${JOBTAP_BUILD_DIR:-$BENCH_DIR/../build}
BENCH_CLIENT=${BENCH_CLIENT:-$BENCH_BUILD/bench/bench-throughput}
BENCH_PLUGIN=$BENCH_BUILD/bench/bench-policy.so
BENCH_LUA=$BENCH_DIR/policies/bench-policy.lua
# Per-job debug logging would dominate what we measure.
export CLUSTER_DEBUG=${CLUSTER_DEBUG:-info}

# The cluster's dir (job state: a directory and two files per job) goes on
# tmpfs: on this VM's ext4, creating them costs slurmctld 0.5 to 3 ms of
# system time per job, varying over minutes, which would drown what we
# measure. BENCH_TMPDIR overrides.
export TMPDIR=${BENCH_TMPDIR:-/dev/shm}

bench_say() { printf 'bench: %s\n' "$*" >&2; }

# Before a run: the samples file OUT holds this run's alone (summarize.py
# reads every line of it; emptied first, so a failed run leaves no old
# samples behind), and the build has what the modes need.
bench_begin() {
	local f out=$1
	[ "$out" = /dev/stdout ] || : >"$out"
	for f in "$BENCH_CLIENT" "$BENCH_PLUGIN"; do
		[ -e "$f" ] || { bench_say "$f missing: ninja -C build"; return 1; }
	done
}

# After a run: stop the cluster (keeping its logs if RC says it failed)
# and exit with RC.
bench_finish() {
	if [ "$1" = 0 ]; then cluster_stop; else cluster_stop --failed; fi
	_bench_cgroup_remove
	exit "$1"
}

# Cluster with two partitions on the one node: "debug" (Slurm's default)
# and "batch", where the policies send jobs that named none.
bench_cluster_start() {
	local maxjobs=${1:-20000}
	cluster_start --no-jobtap --conf "PriorityType=priority/multifactor
MaxJobCount=$maxjobs
MinJobAge=600
PartitionName=debug Nodes=$CLUSTER_NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=batch Nodes=$CLUSTER_NODE MaxTime=INFINITE State=UP" || return 1
	cp "$BENCH_DIR/policies/job_submit.lua" "$CLUSTER_DIR/job_submit.lua"
	mkdir -p "$CLUSTER_DIR/state.empty"
}

_bench_jobtap_conf() {
	case $1 in
	c) printf '[job-manager]\nplugins = [ { load = "%s" } ]\n' "$BENCH_PLUGIN" ;;
	# c without the jobs' state kept: what keeping it costs
	k) printf '[job-manager]\nplugins = [ { load = "%s" } ]\n[slurm-jobtap]\nstate-dir = ""\n' "$BENCH_PLUGIN" ;;
	d) printf '[job-manager]\nplugins = [ { load = "%s" } ]\n' "$BENCH_LUA" ;;
	# c with a priority (job.priority.get for every pending job) and a
	# reprioritize pass every 5 s
	p) printf '[job-manager]\nplugins = [ { load = "%s", conf = { priority = true } } ]\n[slurm-jobtap]\nreprioritize-period = 5\n' "$BENCH_PLUGIN" ;;
	n) printf '[job-manager]\nplugins = []\n' ;;
	esac >"$CLUSTER_DIR/jobtap.conf"
}

# bench_restart MODE SCHED [STATE_SNAPSHOT]
# SCHED: default or defer. The job state is emptied, or replaced by a copy
# of STATE_SNAPSHOT (a saved StateSaveLocation).
bench_restart() {
	local mode=$1 sched=$2 snap=${3:-} conf=$CLUSTER_DIR/slurm.conf
	local pid=${CLUSTER_PIDS[1]}
	kill "$pid" 2>/dev/null
	_cluster_wait_exit "$pid" 60 || { kill -9 "$pid"; _cluster_wait_exit "$pid" 5; }
	rm -rf "$CLUSTER_DIR/state"
	if [ -n "$snap" ]; then
		cp -a "$snap" "$CLUSTER_DIR/state"
	else
		mkdir "$CLUSTER_DIR/state"
	fi
	sed -i -e '/^JobSubmitPlugins=/d' -e '/^PrioritySiteFactorPlugin=/d' \
		-e '/^SchedulerParameters=/d' "$conf"
	case $mode in
	a) ;;
	b) echo "JobSubmitPlugins=lua" >>"$conf" ;;
	c | d | k | n | p)
		_bench_jobtap_conf "$mode"
		printf 'JobSubmitPlugins=jobtap\nPrioritySiteFactorPlugin=site_factor/jobtap\n' >>"$conf"
		;;
	*) bench_say "unknown mode $mode"; return 1 ;;
	esac
	[ "$sched" = defer ] && echo "SchedulerParameters=defer" >>"$conf"
	: >"$CLUSTER_DIR/log/slurmctld.log"
	/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$CLUSTER_DIR/log/slurmctld.out" 2>&1 &
	CLUSTER_PIDS[1]=$!
	echo "$!" >"$CLUSTER_DIR/run/slurmctld.pid"
	_bench_cgroup_join "$!"
	cluster_wait_for 120 _bench_node_up || { bench_say "slurmctld did not come back ($mode)"; return 1; }
	_cluster_check_plugins || return 1
	if [ "$mode" = b ] && ! scontrol show config | grep -Eq '^JobSubmitPlugins += (job_submit/)?lua'; then
		bench_say "job_submit/lua is not configured"
		return 1
	fi
	scontrol update nodename="$CLUSTER_NODE" state=drain reason=bench ||
		return 1
	_bench_wait_idle
}

# A restarted slurmctld is busy for a few seconds (start-up work, the
# shim's replay): samples taken then are several times slower. Wait until
# it uses under 2% of a CPU over half a second (at most 30 s).
_bench_wait_idle() {
	local t0 t1 end=$((SECONDS + 30))
	sleep 1
	while [ $SECONDS -lt $end ]; do
		t0=$(_bench_ctld_ticks)
		sleep 0.5
		t1=$(_bench_ctld_ticks)
		[ $((t1 - t0)) -le 1 ] && return 0
	done
	bench_say "slurmctld did not go idle"
}

_bench_node_up() {
	sinfo -h -n "$CLUSTER_NODE" -o %T 2>/dev/null | grep -Eq '^(idle|drained|draining|mixed)'
}

# slurmctld's CPU time (user + system) in clock ticks.
_bench_ctld_ticks() {
	awk '{ print $14 + $15 }' "/proc/${CLUSTER_PIDS[1]}/stat"
}

# slurmctld's CPU time in nanoseconds. /proc's ticks are sampled 100 times
# a second (+-10% over a one-second run), so where a cgroup can be made
# slurmctld is put in one of its own and the kernel's exact runtime of all
# its threads, gone ones too, is read from there.
BENCH_CGROUP=
_bench_cgroup_join() {
	local root dir
	if [ -z "$BENCH_CGROUP" ]; then
		for root in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/unified /sys/fs/cgroup; do
			if [ -e "$root/cpuacct.usage" ] || [ -e "$root/cgroup.controllers" ]; then
				dir=$root/slurm-jobtap-bench.$$
				mkdir -p "$dir" 2>/dev/null && BENCH_CGROUP=$dir && break
			fi
		done
	fi
	[ -n "$BENCH_CGROUP" ] && echo "$1" >"$BENCH_CGROUP/cgroup.procs" 2>/dev/null ||
		BENCH_CGROUP=
}

_bench_ctld_cpu_ns() {
	if [ -n "$BENCH_CGROUP" ] && [ -e "$BENCH_CGROUP/cpuacct.usage" ]; then
		cat "$BENCH_CGROUP/cpuacct.usage"
	elif [ -n "$BENCH_CGROUP" ]; then
		awk '$1 == "usage_usec" { print $2 * 1000 }' "$BENCH_CGROUP/cpu.stat"
	else
		echo $(($(_bench_ctld_ticks) * 1000000000 / $(getconf CLK_TCK)))
	fi
}

# Remove the cgroup once slurmctld has left it.
_bench_cgroup_remove() {
	[ -n "$BENCH_CGROUP" ] && rmdir "$BENCH_CGROUP" 2>/dev/null
	BENCH_CGROUP=
}

# bench_submit N THREADS: one timed submission run (after a short warm-up
# that also waits for the shim's agent); prints the client's line plus
# ctld_cpu_us, slurmctld's CPU time per accepted job over the run (less
# sensitive than wall time to whatever else shares the machine).
bench_submit() {
	local n=$1 threads=$2 line t0 t1 acc
	"$BENCH_CLIENT" -q -s -n 200 -t "$threads" >/dev/null ||
		{ bench_say "warm-up failed"; return 1; }
	t0=$(_bench_ctld_cpu_ns)
	line=$("$BENCH_CLIENT" -q -s -n "$n" -t "$threads") || { bench_say "run failed: $line"; return 1; }
	t1=$(_bench_ctld_cpu_ns)
	acc=$(bench_field accepted "$line")
	printf '%s ctld_cpu_us=%s cpu_clock=%s\n' "$line" \
		"$(awk -v a="$t0" -v b="$t1" -v n="$acc" 'BEGIN { printf "%.1f", (b - a) / 1e3 / (n > 0 ? n : 1) }')" \
		"$([ -n "$BENCH_CGROUP" ] && echo cgroup || echo ticks)"
}

# The shim's periodic pass (reprioritize-period, 30 s by default: every
# pending job's job.priority.get, and the sweep for jobs that started or
# ended) costs O(jobs) once a period; it is not a cost of a submission.
# With 50k jobs a one-second sample it lands in reads tens of us per job
# more, and after a restart it lands at the same moment every time. Wait
# until slurmctld has been up past the first one (then the next is ~30 s
# away).
bench_after_first_pass() {
	local start up hz
	hz=$(getconf CLK_TCK)
	start=$(awk '{ print $22 }' "/proc/${CLUSTER_PIDS[1]}/stat")
	while :; do
		up=$(awk -v st="$start" -v hz="$hz" '{ printf "%d", $1 - st / hz }' /proc/uptime)
		[ "$up" -ge 33 ] && return 0
		sleep 1
	done
}

# The value of KEY in a client line.
bench_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | head -n 1; }
