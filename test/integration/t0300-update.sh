#!/usr/bin/env bash
# scontrol update through job_submit/jobtap's job_modify: job.update.<key>
# handlers may refuse a change (their message is logged); keys with no
# handler follow Slurm's rules but the updated jobspec must still pass
# job.validate; job.update sees what was applied. An operator's duration
# update is Flux's instance owner's: not judged by job.validate, and the
# job is then immutable to its user.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start_policy_cluster 'max-duration = 86400.0, default-duration = 3600.0' ||
	bail_out "cluster did not start"

blocker=$(sbatch --parsable --exclusive -J blocker -o /dev/null -t 10 --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
# a user's job, updated by its user and by an operator (root)
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
nobody_uid=$(id -u nobody)
id=$(as_nobody sbatch --parsable --exclusive -J first -o /dev/null -t 30 --wrap true)
cluster_wait_for 10 sh -c "grep -q 'job.new id=$id ' '$CLUSTER_DIR/log/slurmctld.log'"
field() { scontrol show job -o "$id" | grep -o " $1=[^ ]*" | cut -d= -f2-; }

out=$(as_nobody scontrol update job="$id" TimeLimit=3-0 2>&1)
ok $((!$?)) "a user's 3-day TimeLimit update is refused"
like "$out" 'Access/permission denied' "scontrol reports the refusal"
if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	is "$out" "scontrol: error: duration 259200s exceeds the limit of 86400s
Access/permission denied for job $id" "with the policy's reason first (24.11; 22.05 has no way to pass it)"
fi
like "$(cluster_log)" "jobtap: update of JobId=$id by uid $nobody_uid rejected: duration 259200s exceeds the limit of 86400s" \
	"job.validate on the updated jobspec refused it, logged with the reason"
is "$(field TimeLimit)" 00:30:00 "the time limit is unchanged"

# a user may only shorten a time limit (Slurm's rule)
as_nobody scontrol update job="$id" TimeLimit=20
ok $? "a 20-minute TimeLimit update is accepted"
is "$(field TimeLimit)" 00:20:00 "and applied"
like "$(cluster_log)" "slurm-policy: job.update id=$id \\{\"attributes.system.duration\":1200(\\.0)?\\}" \
	"job.update saw the new duration"

# An update the plugins accept but Slurm then refuses (a partition that
# does not exist: Slurm checks that after job_modify): jobtap takes
# Slurm's value back, so both agree (and a restart does not make it).
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
queue() { "$jobtap" job "$id" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['jobspec']['attributes']['system']['queue'])"; }
out=$(as_nobody scontrol update job="$id" Partition=nosuch 2>&1)
ok $((!$?)) "a partition Slurm does not have is refused after the plugins accepted it"
is "$(field Partition)" debug "Slurm's partition is unchanged"
cluster_wait_for 10 grep -q "JobId=$id: Slurm did not make the update" "$CLUSTER_DIR/log/slurmctld.log"
like "$(cluster_log)" "jobtap: JobId=$id: Slurm did not make the update the plugins accepted; jobtap takes Slurm's values back: \\{\"attributes.system.queue\":\"debug\"\\}" \
	"the agent finds it out and says so"
is "$(queue)" debug "jobtap's jobspec has Slurm's partition again"

# An operator is Flux's instance owner: the builtin .update-duration
# validates its duration update, so job.validate does not judge it, and
# the job is then the operator's to change (immutable to its user).
scontrol update job="$id" TimeLimit=3-0
ok $? "an operator's 3-day TimeLimit update is accepted"
is "$(field TimeLimit)" 3-00:00:00 "and applied"
out=$(as_nobody scontrol update job="$id" TimeLimit=10 2>&1)
ok $((!$?)) "the job's user can no longer update it"
like "$(cluster_log)" "jobtap: update of JobId=$id by uid $nobody_uid rejected: job is immutable due to previous instance owner update" \
	"with Flux's reason"
if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	like "$out" "^scontrol: error: job is immutable due to previous instance owner update" \
		"shown to the user (24.11 and later)"
fi
scontrol update job="$id" TimeLimit=20
ok $? "the operator still can"

out=$(scontrol update job="$id" Name=badname 2>&1)
ok $((!$?)) "a name refused by job.update.attributes.system.job.name fails"
like "$(cluster_log)" "jobtap: update of JobId=$id by uid 0 rejected: job name badname is not allowed" \
	"the handler's message is logged"
if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	like "$out" "^scontrol: error: job name badname is not allowed" "and shown to the user (24.11)"
fi
is "$(field JobName)" first "the name is unchanged"
scontrol update job="$id" Name=goodname
ok $? "an allowed name is accepted"
is "$(field JobName)" goodname "and applied"

scontrol update job="$id" Comment=hello
ok $? "a field no plugin handles follows Slurm's rules"
is "$(field Comment)" hello "and is applied"

cluster_finish
done_testing
