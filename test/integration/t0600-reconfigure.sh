#!/usr/bin/env bash
# scontrol reconfigure re-reads jobtap.conf: a broken file (TOML syntax, a
# missing plugin) is logged with its file and line and the previous
# configuration keeps deciding; a good one takes over. 22.05 reloads in the
# running slurmctld; 24.11 starts slurmctld anew, and when the new one cannot
# start, the daemonized old one carries on (docs/admin.md).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start_policy_cluster 'max-duration = 86400.0' '' --ctld-daemon || bail_out "cluster did not start"
restarts=0
[ "$(cluster_slurm_release)" -ge 2411 ] && restarts=1
plugin=$JOBTAP_BUILD_DIR/test/integration/slurm-policy.so
conf=$CLUSTER_DIR/jobtap.conf
reject_msg() { sbatch -o /dev/null -t "$1" --wrap true 2>&1 | head -n 1; }
reconfigure() {
	local before
	before=$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' "$CLUSTER_DIR/log/slurmctld.log")
	scontrol reconfigure
	cluster_wait_for 20 sh -c "test \$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' '$CLUSTER_DIR/log/slurmctld.log') -gt $before"
	# 24.11: until the old slurmctld resumes, or the new one answers
	cluster_wait_for 20 squeue -h
}
failed="jobtap: reconfigure failed, keeping the previous configuration:"
[ "$restarts" = 1 ] && failed="jobtap: reconfigure failed:"

is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" "the configured limit applies"

printf '[job-manager]\nplugins = [ { load = "%s" ]\n' "$plugin" >"$conf"
reconfigure
like "$(cluster_log)" "$failed $conf:2:" "a TOML syntax error is logged with the file and line"
if [ "$restarts" = 1 ]; then
	like "$(cluster_log)" "Resuming operation, reconfigure failed" "the old slurmctld carries on"
fi
is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" \
	"the previous configuration keeps deciding"

printf '[job-manager]\nplugins = [ { load = "nosuch.so" } ]\n' >"$conf"
reconfigure
like "$(cluster_log)" "$failed .*\\[job-manager.plugins\\]\\[0\\]: load: nosuch.so: No such plugin found" \
	"a missing plugin is logged with its entry"
is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" \
	"the previous configuration still decides"

printf '[job-manager]\nplugins = [ { load = "%s", conf = { max-duration = 7200.0 } } ]\n' "$plugin" >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: configuration reloaded" "a good configuration is loaded"
is "$(reject_msg 3:00:00)" "sbatch: error: duration 10800s exceeds the limit of 7200s" "and its new limit applies"
ok $(kill -0 "$(cluster_ctld_pid)"; echo $?) "slurmctld is alive"

cluster_finish
done_testing
