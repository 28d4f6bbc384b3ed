#!/usr/bin/env bash
# scontrol reconfigure reloads a changed policy into a fresh Lua state
# (jobtap.state carries over); a policy that fails to load leaves the old
# one running, with the error in the log.
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
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"

submit() { sbatch -o /dev/null -t 5 -J "$1" --wrap true 2>&1 | head -n 1; }
reloads() { grep -c 'lua: reload.lua: reloaded' "$CLUSTER_DIR/log/slurmctld.log"; }
is "$(submit x)" "sbatch: error: v1 says no (call 1)" "version 1 runs"

policy v2
scontrol reconfigure
cluster_wait_for 20 sh -c "grep -q 'lua: reload.lua: reloaded' '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "lua: reload.lua: reloaded $dir/reload.lua" "reconfigure reloads the changed file"
is "$(submit x)" "sbatch: error: v2 says no (call 2)" "version 2 runs, and jobtap.state carried over"

printf 'this is not Lua\n' >>"$dir/reload.lua"
scontrol reconfigure
cluster_wait_for 20 sh -c "grep -q 'reload failed' '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "lua: reload.lua: reload failed, keeping the loaded version: reload.lua:9: syntax error near 'is'" \
	"a broken file is not loaded, and the log says why"
is "$(submit x)" "sbatch: error: v2 says no (call 3)" "version 2 keeps running"
id=$(sbatch --parsable -o /dev/null -t 5 -J ok --wrap true 2>&1)
like "$id" '^[0-9]+$' "and accepts other jobs"

policy v3
scontrol reconfigure
cluster_wait_for 20 sh -c "[ \$(grep -c 'lua: reload.lua: reloaded' '$CLUSTER_DIR/log/slurmctld.log') -ge 2 ]"
is "$(reloads)" 2 "a fixed file loads at the next reconfigure"
is "$(submit x)" "sbatch: error: v3 says no (call 5)" "and runs"
scontrol reconfigure
sleep 2
is "$(reloads)" 2 "an unchanged file is not reloaded"

cluster_finish
rm -rf "$dir"
done_testing
