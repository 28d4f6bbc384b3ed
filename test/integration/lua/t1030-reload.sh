#!/usr/bin/env bash
# scontrol reconfigure reloads a changed policy into a fresh Lua state
# (jobtap.state carries over); a policy that fails to load refuses the
# reload: the old one keeps running, the error is in the log and in
# `jobtap status` (exit 1). On 24.11 reconfigure starts
# slurmctld anew: the policy loads afresh (so does jobtap.state), and when
# it cannot, the daemonized old slurmctld carries on (docs/admin.md).
. "$(dirname "$0")/../../lib/tap.sh"
. "$(dirname "$0")/../../lib/cluster.sh"

dir=$(mktemp -d)
policy() { # VERSION
	cat >"$dir/reload.lua" <<EOF
local jobtap = require "jobtap"
jobtap.state.calls = jobtap.state.calls or 0
jobtap.on ("job.validate", function (job)
    jobtap.state.calls = jobtap.state.calls + 1
    if job.name == "x" then
        return false, string.format ("$1 says no (call %d)", jobtap.state.calls)
    end
end)
EOF
}
policy v1
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$dir/reload.lua" } ]
TOML
cluster_start --jobtap-conf "$conf" --ctld-daemon || bail_out "cluster did not start"
rm -f "$conf"
restarts=0
[ "$(cluster_slurm_release)" -ge 2411 ] && restarts=1
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
# the last lines of jobtap status, from "last reload" on, times as T
last_reload() {
	"$jobtap" status | sed -n '/^last reload: /,$p' |
		sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/T/'
	return "${PIPESTATUS[0]}"
}
count() { grep -c "$1" "$CLUSTER_DIR/log/slurmctld.log"; }
# scontrol reconfigure, then wait for LOG-PATTERN to appear once more, and
# for slurmctld (the old or the new one) to answer.
reconfigure() {
	local before
	before=$(count "$1")
	scontrol reconfigure
	cluster_wait_for 20 sh -c "[ \$(grep -c '$1' '$CLUSTER_DIR/log/slurmctld.log') -gt $before ]"
	cluster_wait_for 20 squeue -h
}

submit() { sbatch -o /dev/null -t 5 -J "$1" --wrap true 2>&1 | head -n 1; }
is "$(submit x)" "sbatch: error: v1 says no (call 1)" "version 1 runs"

policy v2
if [ "$restarts" = 1 ]; then
	reconfigure 'jobtap: configuration reloaded'
	like "$(cluster_log)" "jobtap: configuration reloaded" "reconfigure starts slurmctld anew with the changed file"
	is "$(submit x)" "sbatch: error: v2 says no (call 1)" "version 2 runs, with a new jobtap.state"
else
	reconfigure 'lua: reload.lua: reloaded'
	like "$(cluster_log)" "lua: reload.lua: reloaded $dir/reload.lua" "reconfigure reloads the changed file"
	is "$(submit x)" "sbatch: error: v2 says no (call 2)" "version 2 runs, and jobtap.state carried over"
fi

printf 'this is not Lua\n' >>"$dir/reload.lua"
if [ "$restarts" = 1 ]; then
	reconfigure 'jobtap: reconfigure failed'
	like "$(cluster_log)" "jobtap: reconfigure failed: .*reload.lua:9: syntax error near 'is'" \
		"a broken file stops the new slurmctld, and the log says why"
	like "$(cluster_log)" "Resuming operation, reconfigure failed" "the old slurmctld carries on"
	is "$(submit x)" "sbatch: error: v2 says no (call 2)" "version 2 keeps running"
else
	reconfigure 'jobtap: reconfigure failed'
	like "$(cluster_log)" "jobtap: reconfigure failed, keeping the previous configuration: reload.lua: reload failed, keeping the loaded version: reload.lua:9: syntax error near 'is'" \
		"a broken file is not loaded, and the log says why"
	is "$(last_reload)" "last reload: T refused
error: reload.lua: reload failed, keeping the loaded version: reload.lua:9: syntax error near 'is'" \
		"jobtap status shows the refusal"
	last_reload >/dev/null
	is "$?" 1 "... and exits 1"
	is "$(submit x)" "sbatch: error: v2 says no (call 3)" "version 2 keeps running"
fi
id=$(sbatch --parsable -o /dev/null -t 5 -J ok --wrap true 2>&1)
like "$id" '^[0-9]+$' "and accepts other jobs"

policy v3
if [ "$restarts" = 1 ]; then
	reconfigure 'jobtap: configuration reloaded'
	is "$(count 'jobtap: configuration reloaded')" 2 "a fixed file loads at the next reconfigure"
	is "$(submit x)" "sbatch: error: v3 says no (call 1)" "and runs"
else
	reconfigure 'lua: reload.lua: reloaded'
	is "$(count 'lua: reload.lua: reloaded')" 2 "a fixed file loads at the next reconfigure"
	is "$(last_reload)" "last reload: T ok" "jobtap status: the reload took"
	is "$(submit x)" "sbatch: error: v3 says no (call 5)" "and runs"
	scontrol reconfigure
	sleep 2
	is "$(count 'lua: reload.lua: reloaded')" 2 "an unchanged file is not reloaded"
fi

cluster_finish
rm -rf "$dir"
done_testing
