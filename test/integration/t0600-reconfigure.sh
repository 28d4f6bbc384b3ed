#!/usr/bin/env bash
# scontrol reconfigure re-reads jobtap.conf: a broken file (TOML syntax, a
# missing plugin) is logged with its file and line and the previous
# configuration keeps deciding; a good one takes over.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start_policy_cluster 'max-duration = 86400.0' || bail_out "cluster did not start"
plugin=$JOBTAP_BUILD_DIR/test/integration/slurm-policy.so
conf=$CLUSTER_DIR/jobtap.conf
reject_msg() { sbatch -o /dev/null -t "$1" --wrap true 2>&1 | head -n 1; }
reconfigure() {
	local before
	before=$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' "$CLUSTER_DIR/log/slurmctld.log")
	scontrol reconfigure
	cluster_wait_for 20 sh -c "test \$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' '$CLUSTER_DIR/log/slurmctld.log') -gt $before"
}

is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" "the configured limit applies"

printf '[job-manager]\nplugins = [ { load = "%s" ]\n' "$plugin" >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: reconfigure failed, keeping the previous configuration: $conf:2:" \
	"a TOML syntax error is logged with the file and line"
is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" \
	"the previous configuration keeps deciding"

printf '[job-manager]\nplugins = [ { load = "nosuch.so" } ]\n' >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: reconfigure failed, keeping the previous configuration: .*\\[job-manager.plugins\\]\\[0\\]: load: nosuch.so: No such plugin found" \
	"a missing plugin is logged with its entry"
is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" \
	"the previous configuration still decides"

printf '[job-manager]\nplugins = [ { load = "%s", conf = { max-duration = 7200.0 } } ]\n' "$plugin" >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: configuration reloaded" "a good configuration is loaded"
is "$(reject_msg 3:00:00)" "sbatch: error: duration 10800s exceeds the limit of 7200s" "and its new limit applies"
ok $(kill -0 "${CLUSTER_PIDS[1]}"; echo $?) "slurmctld is alive"

cluster_finish
done_testing
