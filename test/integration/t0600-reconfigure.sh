#!/usr/bin/env bash
# scontrol reconfigure re-reads jobtap.conf: a broken file (TOML syntax, a
# missing plugin) is logged with its file and line and the previous
# configuration keeps deciding; a good one takes over. 22.05 reloads in the
# running slurmctld after scontrol has been told it succeeded, so the
# refusal shows in `jobtap status` (exit 1); 24.11 starts slurmctld anew,
# and when the new one cannot start, scontrol reconfigure fails and the
# daemonized old one carries on (docs/admin.md).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start_policy_cluster 'max-duration = 86400.0' '' --ctld-daemon || bail_out "cluster did not start"
restarts=0
[ "$(cluster_slurm_release)" -ge 2411 ] && restarts=1
plugin=$JOBTAP_BUILD_DIR/test/integration/slurm-policy.so
conf=$CLUSTER_DIR/jobtap.conf
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
# jobtap status into status_out, with its times as T, and status_rc
run_status() {
	status_out=$("$jobtap" status 2>&1)
	status_rc=$?
	status_out=$(printf '%s\n' "$status_out" |
		sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/T/g')
}
# when the configuration in use was loaded, to the microsecond
loaded_at() { "$jobtap" status --json | grep -o '"loaded_at": [0-9.]*'; }
reject_msg() { sbatch -o /dev/null -t "$1" --wrap true 2>&1 | head -n 1; }
reconfigure() {
	local before
	before=$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' "$CLUSTER_DIR/log/slurmctld.log")
	reconf_out=$(scontrol reconfigure 2>&1)
	reconf_rc=$?
	cluster_wait_for 20 sh -c "test \$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' '$CLUSTER_DIR/log/slurmctld.log') -gt $before"
	# 24.11: until the old slurmctld resumes, or the new one answers
	cluster_wait_for 20 squeue -h
}
failed="jobtap: reconfigure failed, keeping the previous configuration:"
[ "$restarts" = 1 ] && failed="jobtap: reconfigure failed:"

is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" "the configured limit applies"
run_status
is "$status_out" "config: $conf
loaded: T
last reload: none" "jobtap status: the jobtap.conf in use, when it was loaded"
is "$status_rc" 0 "... exit 0"
loaded_before=$(loaded_at)

printf '[job-manager]\nplugins = [ { load = "%s" ]\n' "$plugin" >"$conf"
reconfigure
like "$(cluster_log)" "$failed $conf:2:" "a TOML syntax error is logged with the file and line"
if [ "$restarts" = 1 ]; then
	like "$(cluster_log)" "Resuming operation, reconfigure failed" "the old slurmctld carries on"
	# scontrol's own wording: no space after the colon since 25.11
	reconf_error="slurm_reconfigure error: Unspecified error"
	[ "$(cluster_slurm_release)" -ge 2511 ] && reconf_error="slurm_reconfigure error:Unspecified error"
	is "$reconf_rc:$reconf_out" "1:$reconf_error" \
		"24.11 and later: scontrol reconfigure fails"
	run_status
	is "$status_out" "config: $conf
loaded: T
last reload: none" "jobtap status: the old slurmctld's configuration"
	is "$status_rc" 0 "... exit 0"
else
	is "$reconf_rc:$reconf_out" "0:" "22.05: scontrol reconfigure reports success before the reload"
	# the column of the "]" after the path: 22 characters before it, 3 after
	toml_error="$conf:2:$((${#plugin} + 25)): Error while parsing inline table: expected key or closing '}', saw ']'"
	run_status
	is "$status_out" "config: $conf
loaded: T
last reload: T refused
error: $toml_error" "jobtap status: the refused reload and why, with file and line"
	is "$status_rc" 1 "... exit 1"
fi
is "$(loaded_at)" "$loaded_before" "the configuration in use is the one loaded before"
is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" \
	"the previous configuration keeps deciding"

printf '[job-manager]\nplugins = [ { load = "nosuch.so" } ]\n' >"$conf"
reconfigure
like "$(cluster_log)" "$failed .*\\[job-manager.plugins\\]\\[0\\]: load: nosuch.so: No such plugin found" \
	"a missing plugin is logged with its entry"
if [ "$restarts" = 0 ]; then
	run_status
	is "$status_out" "config: $conf
loaded: T
last reload: T refused
error: $conf:2: [job-manager.plugins][0]: load: nosuch.so: No such plugin found" \
		"jobtap status: the missing plugin's entry"
	is "$status_rc" 1 "... exit 1"
else
	is "$reconf_rc" 1 "24.11: scontrol reconfigure fails"
fi
is "$(reject_msg 2-0)" "sbatch: error: duration 172800s exceeds the limit of 86400s" \
	"the previous configuration still decides"

printf '[job-manager]\nplugins = [ { load = "%s", conf = { max-duration = 7200.0 } } ]\n' "$plugin" >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: configuration reloaded" "a good configuration is loaded"
is "$reconf_rc:$reconf_out" "0:" "scontrol reconfigure succeeds"
if [ "$restarts" = 0 ]; then
	run_status
	is "$status_out" "config: $conf
loaded: T
last reload: T ok" "jobtap status: the reload took"
else
	run_status
	is "$status_out" "config: $conf
loaded: T
last reload: none" "jobtap status: the new slurmctld's configuration"
fi
is "$status_rc" 0 "... exit 0"
ok "$([ "$(loaded_at)" != "$loaded_before" ]; echo $?)" "... with the new configuration's load time"
is "$(reject_msg 3:00:00)" "sbatch: error: duration 10800s exceeds the limit of 7200s" "and its new limit applies"
ok $(kill -0 "$(cluster_ctld_pid)"; echo $?) "slurmctld is alive"

cluster_finish
done_testing
