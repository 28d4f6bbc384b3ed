#!/usr/bin/env bash
# After slurmctld restarts, its active jobs are replayed into the runtime
# (job.create then job.new, with their real ids and, from the state kept
# under StateSaveLocation, the state each had), the holds the shim owns
# are still in force, and plugins pick up where they were.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start_policy_cluster '' || bail_out "cluster did not start"

submit() { sbatch --parsable --exclusive -o /dev/null -t 5 -J "$1" "${@:2}" --wrap "${WRAP:-true}"; }
blocker=$(WRAP='sleep 300' submit blocker)
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
waiter=$(submit wait-r)
p300=$(submit prio-300)
held=$(submit user-held -H)
banked=$(submit bank-physics) # the policy sets its bank at job.validate
cluster_wait_for 10 sh -c "squeue -h -j $waiter -o %r | grep -q jobtap"
cluster_wait_for 10 sh -c "sprio -h -j $p300 -o %S | grep -q 300"
is "$(squeue -h -j "$waiter" -o %r)" "jobtap: wait for release-r" "before the restart: the jobtap hold"
# A job's jobspec as jobtap shows it, read only after the agent's pass has
# let the tree go: built again from what the job keeps at rest.
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
spec_of() { "$jobtap" job "$1" --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["jobspec"], sort_keys=True))'; }
sleep 2
spec_before=$(spec_of "$banked")
like "$spec_before" '"bank": "physics"' "before the restart: the policy's update is in the resting job's jobspec"

marker=$(wc -l <"$CLUSTER_DIR/log/slurmctld.log")
cluster_restart_slurmctld || bail_out "slurmctld did not come back"
ok 0 "slurmctld restarted"
after() { tail -n +"$((marker + 1))" "$CLUSTER_DIR/log/slurmctld.log"; }
cluster_wait_for 15 sh -c "tail -n +$((marker + 1)) '$CLUSTER_DIR/log/slurmctld.log' | grep -q 'job.new id=$held '"

for id in "$blocker" "$waiter" "$p300" "$held"; do
	create=$(after | grep -n "slurm-policy: job.create id=$id " | cut -d: -f1)
	new=$(after | grep -n "slurm-policy: job.new id=$id " | cut -d: -f1)
	ok $([ -n "$create" ] && [ -n "$new" ] && [ "$create" -lt "$new" ]; echo $?) \
		"job $id is replayed: job.create, then job.new"
	is "$(after | grep -c "slurm-policy: job.new id=$id ")" 1 "job.new once for job $id"
done
is "$(after | grep -o "job.new id=$waiter .* state=[a-z]*" | sed 's/.* //')" state=depend \
	"job.new sees the waiting job in DEPEND, as kept"
is "$(after | grep -o "job.new id=$blocker .* state=[a-z]*" | sed 's/.* //')" state=run \
	"job.new sees the running job in RUN"
is "$(after | grep -o "job.new id=$p300 .* state=[a-z]*" | sed 's/.* //')" state=sched \
	"job.new sees the pending job in SCHED (then it goes back to PRIORITY)"
like "$(after)" "jobtap: jobs' state is kept in $CLUSTER_DIR/.*/jobtap-state" \
	"the log says where jobs' state is kept"
order=$(after | sed -n 's/.*slurm-policy: job.new id=\([0-9]*\) .*/\1/p' | tr '\n' ' ')
is "$order" "$waiter $p300 $held $banked $blocker " \
	"replay order is by state (jobtap-held, pending, running), then id"
is "$(squeue -h -j "$waiter" -o '%T %r')" "PENDING jobtap: wait for release-r" "the jobtap hold is still in force"
is "$(squeue -h -j "$held" -o '%T %r')" "PENDING JobHeldUser" "the user hold is still the user's"
is "$(squeue -h -j "$blocker" -o %T)" RUNNING "the running job kept running"
cluster_wait_for 10 sh -c "sprio -h -j $p300 -o %S | grep -q 300"
is "$(sprio -h -j "$p300" -o %S | tr -d ' ')" 300 "the replayed job keeps its jobtap priority"
sleep 2
is "$(spec_of "$banked")" "$spec_before" \
	"after the restart, the resting job's jobspec (built again from the record and the kept update) is the same"
unlike "$(cluster_log)" "jobspec not rebuilt" "no jobspec failed to be built again"

submit release-r >/dev/null
cluster_wait_for 10 sh -c "squeue -h -j $waiter -o %r | grep -vq jobtap"
unlike "$(squeue -h -j "$waiter" -o %r)" '^jobtap' "the plugin still releases the replayed job"

# Stopped while the agent's pass is still restoring jobs: a plugin sleeps
# in a restored job's job.new, Slurm's locks held, while slurmctld shuts
# down and unloads priority/multifactor and site_factor/jobtap. The pass
# must not call into them once they are gone (it sets restored jobs'
# priorities), and slurmctld must stop cleanly, then start with every job.
slow=$(submit slow-restore-6)
cluster_wait_for 10 sh -c "squeue -h -j $slow -o %T | grep -q PENDING"
pid=${CLUSTER_PIDS[1]}
kill -TERM "$pid" && _cluster_wait_exit "$pid" 20 # saves the job
marker=$(wc -l <"$CLUSTER_DIR/log/slurmctld.log")
cluster_spawn_slurmctld
pid=${CLUSTER_PIDS[1]}
cluster_wait_for 20 sh -c "tail -n +$((marker + 1)) '$CLUSTER_DIR/log/slurmctld.log' | grep -q 'job.new id=$slow .*state=sched'" ||
	bail_out "job $slow was not restored"
kill -TERM "$pid" # while the plugin sleeps in the pass
_cluster_wait_exit "$pid" 30
wait "$pid"
is "$?" 0 "slurmctld stopped during the agent's restoring pass exits cleanly"
like "$(after)" "jobtap: restored [0-9]+ jobs" \
	"the pass ended before slurmctld unloaded the priority plugins"
marker=$(wc -l <"$CLUSTER_DIR/log/slurmctld.log")
cluster_spawn_slurmctld
cluster_wait_for 30 sh -c "tail -n +$((marker + 1)) '$CLUSTER_DIR/log/slurmctld.log' | grep -q 'jobtap: restored'" ||
	bail_out "slurmctld did not come back"
is "$(squeue -h -j "$slow" -o %T)" PENDING "the job is still there at the next start"
is "$(squeue -h -j "$blocker" -o %T)" RUNNING "and the running job still runs"

cluster_finish
done_testing
