#!/usr/bin/env bash
# Services reached from outside slurmctld with the jobtap command: a plugin
# shaped like flux-accounting's mf_priority keeps jobs at "priority
# unavailable" until its data arrives through `jobtap rpc`, then gives
# exactly the priorities the data implies; its owner check refuses an
# ordinary user; `jobtap load` and `jobtap remove` change the stack for the
# next submission, with no restart.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
plugins=$JOBTAP_BUILD_DIR/test/integration
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$plugins/bank-priority.so" } ]
[slurm-jobtap]
reprioritize-period = 3600
keep-eventlog = true
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
jobtap_public=$(cluster_public_copy "$jobtap") || bail_out "cannot copy jobtap"

as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
nobody=$(id -u nobody)
submit() { sbatch --parsable --exclusive -o /dev/null -t 5 --wrap true; }
site() { sprio -h -j "$1" -o %S | tr -d ' '; }
reason() { squeue -h -j "$1" -o %r; }

is "$("$jobtap" list)" "bank-priority.so" "jobtap list shows the loaded plugin"
unlike "$(cluster_log)" "jobtap: control port" "the control port (TCP) is off by default"

# Keep the node busy so the others stay pending (the blocker waits for data
# too, so give root's data first).
out=$("$jobtap" rpc job-manager.bank-priority.rec_update \
	'{"data": [{"userid": 0, "bank": "root", "fairshare": 0.9}]}' 2>&1)
ok $? "root sends root's record with jobtap rpc" || diag "$out"
blocker=$(sbatch --parsable --exclusive -o /dev/null -t 10 --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"

a=$(as_nobody sbatch --parsable --exclusive -o /dev/null -t 5 --wrap true)
b=$(as_nobody sbatch --parsable --exclusive -o /dev/null -t 5 --wrap true)
r=$(submit)
cluster_wait_for 10 sh -c "squeue -h -j $b -o %r | grep -q jobtap"
is "$(reason "$a")" "jobtap: priority unavailable" "nobody's jobs wait for their data"
is "$(reason "$b")" "jobtap: priority unavailable" "both of them"
cluster_wait_for 10 sh -c "sprio -h -j $r -o %S | grep -q 90000"
is "$(site "$r")" 90000 "root's job has its priority from root's record (0.9 * 100000)"

out=$(as_nobody env JOBTAP_CONTROL_SOCKET="$JOBTAP_CONTROL_SOCKET" "$jobtap_public" rpc \
	job-manager.bank-priority.rec_update \
	"{\"data\": [{\"userid\": $nobody, \"bank\": \"mine\", \"fairshare\": 1.0}]}" 2>&1)
ok $((!$?)) "an ordinary user's rec_update is refused"
like "$out" "rec_update is for the owner" "by the plugin's owner check, with its message"
is "$(reason "$a")" "jobtap: priority unavailable" "and nobody's jobs still wait"

out=$("$jobtap" rpc bank-priority.rec_update \
	"{\"data\": [{\"userid\": $nobody, \"bank\": \"physics\", \"fairshare\": 0.25}]}" 2>&1)
ok $? "root sends nobody's record (the short topic form)" || diag "$out"
# the agent applies the two jobs' new priorities in one pass or in two
# a few ms apart, in either order: wait for both
cluster_wait_for 10 sh -c "sprio -h -j $a -o %S | grep -q 25000 && sprio -h -j $b -o %S | grep -q 25000"
is "$(site "$a")" 25000 "nobody's first job gets 0.25 * 100000"
is "$(site "$b")" 25000 "and the second"
# Slurm's reason once its scheduler has looked at the released job
cluster_wait_for 10 sh -c "squeue -h -j $a -o %r | grep -Eqx 'Priority|Resources'"
like "$(reason "$a")" "^(Priority|Resources)$" "no longer held by jobtap"
like "$("$jobtap" query bank-priority.so)" '"bank": "physics"' "jobtap query shows the plugin's records"
out=$("$jobtap" job "$a" --json 2>&1)
ok $? "jobtap job shows the runtime's view of a job" || diag "$out"
like "$out" '"priority": 25000' "with the priority the data implies"
like "$("$jobtap" job "$a" 2>&1)" "State +SCHED" "and as text, in the state a scheduled job has"
like "$("$jobtap" job "$a" 2>&1 | sed -n '/^Events:/,$p' | awk '{print $2}' | tr '\n' ' ')" \
	"^ *submit validate depend priority *$" \
	"with its posted events in order (keep-eventlog): priority only once the data came"

out=$("$jobtap" rpc job-manager.nosuch.method '{}' 2>&1)
ok $((!$?)) "a call to an unknown service fails"
like "$out" "No service matching job-manager.nosuch.method is registered" "with Flux's answer (ENOSYS)"

# A rejecting plugin loaded at run time takes effect for the next sbatch.
out=$("$jobtap" load "$plugins/slurm-policy.so" max-duration=60 2>&1)
ok $? "jobtap load of a policy plugin" || diag "$out"
out=$(sbatch -o /dev/null -t 5 --wrap true 2>&1)
is "$(head -n 1 <<<"$out")" "sbatch: error: duration 300s exceeds the limit of 60s" \
	"the next sbatch is rejected by it"
out=$(as_nobody env JOBTAP_CONTROL_SOCKET="$JOBTAP_CONTROL_SOCKET" "$jobtap_public" remove slurm-policy.so 2>&1)
ok $((!$?)) "an ordinary user cannot remove it"
like "$out" "Request requires owner credentials" "and is told why"
out=$("$jobtap" remove slurm-policy.so 2>&1)
ok $? "root removes it" || diag "$out"
id=$(sbatch --parsable -o /dev/null -t 5 --wrap true 2>&1)
like "$id" '^[0-9]+$' "and the next sbatch is accepted again"
ok $(kill -0 "${CLUSTER_PIDS[1]}"; echo $?) "slurmctld is alive"

cluster_finish
done_testing
