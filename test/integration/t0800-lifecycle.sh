#!/usr/bin/env bash
# The job lifecycle in real time through prep/jobtap, with a test plugin in
# the manner of flux-core's perilog-test (lifecycle.so): every job passes
# through run, cleanup and inactive in Flux's order as it happens, even
# one that ends in a second; job.state.run carries R naming the node and
# the cores; a plugin's prolog holds the start (CONFIGURING) until it
# finishes, and a failing one fails the job with its text; an epilog holds
# the completion; a requeued job ends in jobtap and starts anew.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
plugin=$JOBTAP_BUILD_DIR/test/integration/lifecycle.so
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$plugin" } ]
[slurm-jobtap]
reprioritize-period = 3600
keep-eventlog = true
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock

seen() { "$jobtap" rpc lifecycle.seen "{\"id\": $1}"; }
states() { seen "$1" | python3 -c 'import json,sys; print(",".join(json.load(sys.stdin)["states"]))'; }
finish() { "$jobtap" rpc lifecycle.finish "{\"id\": $1, \"which\": \"$2\", \"status\": ${3:-0}}"; }
state() { squeue -h -t all -j "$1" -o %T; }

like "$(cluster_log)" "prep/jobtap: init: loaded" "prep/jobtap is loaded"

# A job of one second: run, cleanup and inactive at once, in order (the
# periodic pass is an hour away).
id=$(sbatch --parsable -o /dev/null -c 2 -t 5 --wrap 'sleep 1')
cluster_wait_for 20 sh -c "squeue -h -t all -j $id -o %T | grep -q COMPLETED"
cluster_wait_for 5 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q inactive"
is "$(states "$id")" "depend,priority,sched,run,cleanup,inactive" \
	"a one-second job passes through run, cleanup and inactive, in Flux's order"
like "$(seen "$id")" '"end":"finish"' "cleanup came from its finish (a result, not an exception)"
run_at=$(seen "$id" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["run_at"]))')
started=$(date -d "$(squeue -h -t all -j "$id" -o %S)" +%s)
ok $((run_at < started - 1 || run_at > started + 1)) \
	"the run event's timestamp is Slurm's start time ($run_at, $started)"
R=$(seen "$id" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["R"], sort_keys=True))')
like "$R" "\"R_lite\": \\[\\{\"children\": \\{\"core\": \"0-1\"\\}, \"rank\": \"0\"\\}\\]" \
	"job.state.run carries R with the job's two cores"
like "$R" "\"nodelist\": \\[\"$CLUSTER_NODE\"\\]" "and its node"
like "$("$jobtap" job "$id")" 'Annotations +\{"sched":\{"resource_summary":"rank0/core\[0-1\]"\}\}' \
	"its annotations have sched.resource_summary, as Flux's schedulers give it at alloc"
events=$("$jobtap" job "$id" | awk '/^Events:/ { on = 1; next } on { print $2 }' | tr '\n' ' ')
like "$events" "priority annotations alloc start " "the annotations event comes just before alloc"

like "$(grep "lifecycle: job $id: " "$CLUSTER_DIR/log/slurmctld.log" | tail -n 3 | tr '\n' ' ')" \
	"run .*cleanup .*inactive" "the log shows them in order as they happened"

# jobtap load reads KEY=VALUE as flux jobtap load does: JSON values, and
# dotted keys nest.
out=$("$jobtap" remove lifecycle.so 2>&1 && "$jobtap" load "$plugin" foo.test=1 foo.name=x list='[1,2]' 2>&1)
ok $? "jobtap load with dotted keys" || diag "$out"
is "$("$jobtap" query lifecycle.so | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["conf"], sort_keys=True))')" \
	'{"foo": {"name": "x", "test": 1}, "list": [1, 2]}' "the plugin's conf: foo.test=1 is {\"foo\": {\"test\": 1}}"
like "$("$jobtap" load "$plugin" a=1 a.b=2 2>&1)" "load: a.b: a is not an object" \
	"a key under a value that is not an object is refused with a clear error"

# A plugin's prolog and epilog hold the job.
out=$("$jobtap" remove lifecycle.so 2>&1 && "$jobtap" load "$plugin" prolog=true epilog=true 2>&1)
ok $? "lifecycle.so loaded again with a prolog and an epilog" || diag "$out"
id=$(sbatch --parsable -o /dev/null -t 5 --wrap 'sleep 1')
cluster_wait_for 15 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q run"
sleep 2
is "$(state "$id")" CONFIGURING "while the prolog runs the job waits in CONFIGURING"
finish "$id" prolog >/dev/null
start=$SECONDS
cluster_wait_for 15 sh -c "squeue -h -t all -j $id -o %T | grep -Eq 'RUNNING|COMPLETING'"
ok $? "when the prolog finishes the job runs"
cluster_wait_for 15 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q cleanup"
sleep 2
is "$(state "$id")" COMPLETING "while the epilog runs the job stays COMPLETING"
unlike "$(states "$id")" inactive "and is not inactive in jobtap"
finish "$id" epilog >/dev/null
cluster_wait_for 10 sh -c "squeue -h -t all -j $id -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "when the epilog finishes the job completes"
cluster_wait_for 5 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q inactive"
is "$(states "$id")" "depend,priority,sched,run,cleanup,inactive" "and goes inactive"
events=$("$jobtap" job "$id" | awk '/^Events:/ { on = 1; next } on { print $2 }' | tr '\n' ' ')
like "$events" "alloc prolog-start prolog-finish start finish " \
	"its events: start follows prolog-finish, as the script starts after the prolog (Flux's order)"

# slurmctld restarted while a prolog holds a job: neither the job nor the
# hold is lost. The job comes back from its kept state in RUN with its
# prolog still active (no second job.state.run, as in Flux), Slurm runs
# the job's prolog hook again, and the launch waits until the plugin
# finishes the prolog.
# (what jobtap load did is not kept across a restart: jobtap.conf says it)
cat >"$CLUSTER_DIR/jobtap.conf" <<TOML
[job-manager]
plugins = [ { load = "$plugin", conf = { prolog = true, epilog = true } } ]
[slurm-jobtap]
reprioritize-period = 3600
TOML
id=$(sbatch --parsable -o /dev/null -t 5 --wrap 'sleep 1')
cluster_wait_for 15 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q run"
cluster_restart_slurmctld
cluster_wait_for 20 sh -c "grep -q 'JobId=$id waits for a jobtap prolog again after the restart' '$CLUSTER_DIR/log/slurmctld.log'"
ok $? "after a restart the job waits for its prolog again"
sleep 2
is "$(state "$id")" CONFIGURING "and is still CONFIGURING"
cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' >/dev/null 2>&1"
unlike "$(states "$id")" run "the restored job is not given job.state.run again"
cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.finish '{\"id\": $id, \"which\": \"prolog\"}' >/dev/null 2>&1"
cluster_wait_for 15 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q cleanup"
finish "$id" epilog >/dev/null
cluster_wait_for 15 sh -c "squeue -h -t all -j $id -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "when the plugin finishes the prolog the job runs to completion"

# A failing prolog fails the job with the plugin's text.
id=$(sbatch --parsable -o /dev/null -t 5 --wrap 'sleep 1')
cluster_wait_for 15 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q run"
finish "$id" prolog 3 >/dev/null
cluster_wait_for 15 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q cleanup"
finish "$id" epilog >/dev/null
cluster_wait_for 10 sh -c "squeue -h -t all -j $id -o %T | grep -q CANCELLED"
is "$(state "$id")" CANCELLED "a prolog that fails (status 3) ends the job; Slurm does not requeue it"
like "$(scontrol show job "$id")" "Reason=jobtap:_prolog_lifecycle_failed:_status_3" \
	"scontrol show job gives the reason"
like "$(seen "$id")" '"end":"exception prolog"' "plugins saw cleanup come from a prolog exception, as in Flux"
unlike "$(squeue -h -t all -j "$id" -o %S)" "N/A" "the job never launched its script"

# A fatal exception a plugin raises in job.state.run ends the job before
# Slurm launches it (flux-core's perilog-test prolog-exception), without a
# prolog and with one the plugin started first (its timer finishes it).
for with in "" prolog-seconds=2; do
	what=${with:+with a prolog}
	what=${what:-without a prolog}
	"$jobtap" remove lifecycle.so >/dev/null && "$jobtap" load "$plugin" raise-at-run=true $with >/dev/null
	id=$(sbatch --parsable -o /dev/null -t 5 --wrap 'sleep 30')
	cluster_wait_for 20 sh -c "squeue -h -t all -j $id -o %T | grep -q CANCELLED"
	is "$(state "$id")" CANCELLED "an exception raised at run, $what: the job ends CANCELLED"
	like "$(scontrol show job "$id")" "Reason=jobtap:_exception_probe:_raised_at_run" \
		"... with the exception as its reason"
	is "$(grep -c "Launching batch job $id " "$CLUSTER_DIR/log/slurmd.log")" 0 "... and was never launched"
	cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q inactive"
	is "$(states "$id")" "depend,priority,sched,run,cleanup,inactive" "... and goes inactive in jobtap"
	like "$(seen "$id")" '"end":"exception probe"' "... its cleanup from the exception, as in Flux"
done

# Timers on the reactor: a prolog a timer finishes after 3 s delays the
# start by about that; a dependency a timer removes after 2 s holds the
# job that long.
"$jobtap" remove lifecycle.so >/dev/null && "$jobtap" load "$plugin" prolog-seconds=3 >/dev/null
id=$(sbatch --parsable -o /dev/null -t 5 --wrap true)
cluster_wait_for 20 sh -c "squeue -h -t all -j $id -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "a job whose prolog a timer finishes runs to completion"
stamp() { grep -m1 "$1" "$CLUSTER_DIR/log/slurmctld.log" | sed 's/^\[\([^]]*\)\].*/\1/' | xargs -I{} date -d {} +%s.%N; }
run_at=$(stamp "lifecycle: job $id: run")
launched_at=$(stamp "Configuration for JobId=$id is complete")
delay=$(awk "BEGIN { printf \"%.2f\", $launched_at - $run_at }")
ok "$(awk "BEGIN { print ($delay < 2.9 || $delay > 6) }")" "the 3 s prolog delayed the launch by about that (${delay} s)"

"$jobtap" remove lifecycle.so >/dev/null && "$jobtap" load "$plugin" hold-seconds=2 >/dev/null
submitted=$(date +%s.%N)
id=$(sbatch --parsable -o /dev/null -t 5 --wrap true)
sleep 0.5
is "$(squeue -h -j "$id" -o %r)" "jobtap: lifecycle-timer" "a job a plugin's timer holds waits with its reason"
cluster_wait_for 15 sh -c "squeue -h -t all -j $id -o %T | grep -Eq 'RUNNING|COMPLETING|COMPLETED'"
released=$(date +%s.%N)
held=$(awk "BEGIN { printf \"%.2f\", $released - $submitted }")
ok "$(awk "BEGIN { print ($held < 1.8 || $held > 8) }")" "the timer released it after about 2 s (${held} s)"

# A requeued job ends in jobtap and starts anew.
"$jobtap" remove lifecycle.so >/dev/null && "$jobtap" load "$plugin" >/dev/null
id=$(sbatch --parsable -o /dev/null -t 5 --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $id -o %T | grep -q RUNNING"
out=$(scontrol requeue "$id" 2>&1)
ok $? "scontrol requeue of a running job" || diag "$out"
cluster_wait_for 60 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q 'inactive\", \"depend\|inactive\",\"depend'"
like "$(states "$id")" "^depend,priority,sched,run,cleanup,inactive,depend,priority,sched" \
	"it goes cleanup, inactive, then back through depend, priority, sched as a new job"
like "$(cluster_log)" "jobtap: JobId=$id was requeued: it starts anew in jobtap" "the log says so"
# Slurm makes a requeued job wait for the credential lifetime once its
# old run is cleaned up; start it now. (The cleanup took 35 s once under
# CI's load: a start time set before it is overwritten by the requeue.)
cluster_wait_for 180 sh -c "squeue -h -j $id -o %r | grep -q BeginTime"
scontrol update jobid="$id" starttime=now
# (Slurm starts it at its next scheduling pass: under CI's load, a while)
cluster_wait_for 120 sh -c "squeue -h -j $id -o %T | grep -q RUNNING"
ok $? "the requeued job runs again once its start time is now" ||
	diag "squeue: $(squeue -h -t all -j "$id" -o '%T %r %S')"
cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q 'sched\", \"run\"\]\|sched\",\"run\"\]'"
like "$(states "$id")" ",sched,run$" "when it starts again, job.state.run again"
scancel "$id"

ok $(kill -0 "${CLUSTER_PIDS[1]}"; echo $?) "slurmctld is alive"
cluster_finish

# A plugin's epilog holds clean for a job cancelled while pending too
# (flux-core's "epilog prevents clean"), though Slurm runs no epilog for
# it. Slurm calls no hook at such a cancel: the shim's periodic pass sees
# it, here every second.
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$plugin", conf = { epilog = true } } ]
[slurm-jobtap]
reprioritize-period = 1
keep-eventlog = true
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
id=$(sbatch --parsable -H -o /dev/null --wrap true)
cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q sched"
scancel "$id"
cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q cleanup"
sleep 2
is "$(states "$id")" "depend,priority,sched,cleanup" \
	"a job cancelled while pending: cleanup, and its epilog keeps it from inactive"
finish "$id" epilog >/dev/null
cluster_wait_for 10 sh -c "$jobtap rpc lifecycle.seen '{\"id\": $id}' | grep -q inactive"
is "$(states "$id")" "depend,priority,sched,cleanup,inactive" "once the epilog finishes it goes inactive"
events=$("$jobtap" job "$id" | awk '/^Events:/ { on = 1; next } on { print $2 }' | tr '\n' ' ')
like "$events" "exception .*epilog-start .*epilog-finish .*clean $" \
	"its events: the epilog finishes before clean, as in Flux"
cluster_finish
done_testing
