#!/usr/bin/env bash
# Flux's [policy] and [queues] in jobtap.conf, applied by the builtins
# .limit-job-size and .limit-duration and the jobspec defaults inside
# slurmctld: flux-core's t2221 and t2222 cases as sbatch, srun, salloc and
# scontrol update see them (Flux's messages, exit codes), the defaults as
# squeue shows them, Flux-only tables and queues with no partition logged,
# and a bad table refused at reconfigure with its file and line.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

node=$(hostname -s)
conf=$(mktemp)
cat >"$conf" <<'EOF'
[job-manager]
plugins = []

[policy.jobspec.defaults.system]
duration = "10m"
queue = "batch"

[policy.limits]
duration = "1h"
job-size.max.nnodes = 1
job-size.max.ncores = 2
job-size.max.ngpus = 0

[queues.debug.policy.jobspec.defaults.system]
duration = "5m"

[queues.batch.policy.limits]
duration = "8h"
job-size.max.ngpus = -1

[queues.short.policy.limits]
duration = "1m"
job-size.min.ncores = 2

[queues.long.policy.limits]
duration = "0"

[queues.sub]
parent = "short"

[queues.gone]

[resource]
noverify = true

[exec]
service = "sdexec"
EOF
cluster_start --jobtap-conf "$conf" --ctld-daemon --conf "PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
PartitionName=batch Nodes=$node MaxTime=INFINITE State=UP
PartitionName=short Nodes=$node MaxTime=INFINITE State=UP
PartitionName=long Nodes=$node MaxTime=INFINITE State=UP
PartitionName=sub Nodes=$node MaxTime=INFINITE State=UP" || bail_out "cluster did not start"
rm -f "$conf"
conf=$CLUSTER_DIR/jobtap.conf
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock

is "$("$jobtap" list --all)" ".priority-default
.limit-job-size
.limit-duration
.dependency-slurm
.update-duration" "jobtap list --all: the limit builtins, in Flux's order"
like "$(cluster_log)" "jobtap: \\[resource\\] is Flux's own configuration, with no meaning under Slurm: ignored" \
	"a Flux-only table is named once, not refused"
like "$(cluster_log)" "jobtap: \\[exec\\] is Flux's own configuration" "each of them"
cluster_wait_for 10 grep -q "queues.gone" "$CLUSTER_DIR/log/slurmctld.log"
like "$(cluster_log)" "jobtap: jobtap.conf's \\[queues.gone\\] is no partition of this cluster: its limits and defaults apply to no job" \
	"a queue no partition has is logged"
unlike "$(cluster_log)" "\\[queues.(debug|batch|short|long|sub)\\] is no partition" \
	"queues that are partitions are not"

# One submission's first stderr line and exit code: "RC: LINE".
submit() {
	local out rc
	out=$(sbatch -o /dev/null "$@" --wrap true 2>&1)
	rc=$?
	printf '%s: %s' "$rc" "$(head -n 1 <<<"$out")"
}
submitted() { sbatch --parsable -H -o /dev/null "$@" --wrap true; }
field() { scontrol show job -o "$1" | grep -o " $2=[^ ]*" | cut -d= -f2-; }

# t2221: durations
is "$(submit -p debug -t 2:00:00)" \
	"1: sbatch: error: requested duration (2h) exceeds policy limit of 1h for queue debug" \
	"a job over the general duration limit is rejected, with Flux's details"
is "$(submit -p debug -t 0)" \
	"1: sbatch: error: requested duration (unlimited) exceeds policy limit of 1h for queue debug" \
	"an unlimited one (-t 0) too"
id=$(submitted -p batch -t 2:00:00)
ok $? "a queue with a higher limit accepts it"
is "$(field "$id" TimeLimit)" 02:00:00 "with its time limit"
is "$(submit -p batch -t 16:00:00)" \
	"1: sbatch: error: requested duration (16h) exceeds policy limit of 8h for queue batch" \
	"that queue's limit rejects one over it"
like "$(submit -p batch -t 0)" "^1: sbatch: error: requested duration \\(unlimited\\)" \
	"and one with no limit"
id=$(submitted -p debug -t 60)
ok $? "a job at the general limit is accepted"
is "$(submit -p short -t 60 -n 2)" \
	"1: sbatch: error: requested duration (1h) exceeds policy limit of 1m for queue short" \
	"a queue with a lower limit rejects it"
id=$(submitted -p long -t 0)
ok $? "a queue whose limit is \"0\" takes an unlimited job"
is "$(field "$id" TimeLimit)" UNLIMITED "... unlimited"
is "$(submit -p sub -t 2 -n 2)" \
	"1: sbatch: error: requested duration (2m) exceeds policy limit of 1m for queue sub" \
	"a virtual queue has its parent's limit"

# t2222: sizes
is "$(submit -p debug -t 5 -N 2)" \
	"1: sbatch: error: requested nnodes (2) exceeds policy limit of 1 for queue debug" \
	"over job-size.max.nnodes"
is "$(submit -p debug -t 5 -n 3)" \
	"1: sbatch: error: requested ncores (3) exceeds policy limit of 2 for queue debug" \
	"over job-size.max.ncores"
is "$(submit -p debug -t 5 -n 1 -c 3)" \
	"1: sbatch: error: requested ncores (3) exceeds policy limit of 2 for queue debug" \
	"cores are tasks times cores per task"
is "$(submit -p short -t 1 -n 1)" \
	"1: sbatch: error: requested ncores (1) is under policy limit of 2 for queue short" \
	"under a queue's job-size.min.ncores"
# GPU limits: this cluster has no GPUs, and Slurm refuses a GPU request
# before job_submit, as without slurm-jobtap (the offline runner's test,
# test/lua/t-jobtap-run-policy.sh, checks the GPU limits).
is "$(submit -p debug -t 5 -n 1 --gpus-per-task=1)" \
	"1: sbatch: error: Invalid generic resource (gres) specification" \
	"a GPU request on a cluster without GPUs: Slurm's own refusal comes first"
id=$(submitted -p short -t 1 -n 2)
ok $? "a job between a queue's limits is accepted"

# srun and salloc get the same answers
out=$(srun -p debug -t 2:00:00 true 2>&1)
is "$?:$(head -n 1 <<<"$out")" \
	"1:srun: error: requested duration (2h) exceeds policy limit of 1h for queue debug" \
	"srun shows Flux's rejection"
out=$(salloc -p debug -N 2 -t 5 true 2>&1)
is "$?:$(head -n 1 <<<"$out")" \
	"1:salloc: error: requested nnodes (2) exceeds policy limit of 1 for queue debug" \
	"salloc too"

# The jobspec defaults
id=$(submitted)
is "$(field "$id" Partition):$(field "$id" TimeLimit)" batch:00:10:00 \
	"no -p, no -t: the default queue and the general default duration"
id=$(submitted -p debug)
is "$(field "$id" Partition):$(field "$id" TimeLimit)" debug:00:05:00 \
	"a queue's own default duration"
id=$(submitted -p debug -t 20)
is "$(field "$id" TimeLimit)" 00:20:00 "a job's own time limit stays"
is "$(submit -p sub -n 2)" \
	"1: sbatch: error: requested duration (10m) exceeds policy limit of 1m for queue sub" \
	"a default duration is checked like a requested one (as in Flux)"

# Updates: the limits judge a user's updated jobspec (a user may only
# shorten a time limit: Slurm's rule); an operator's duration update is
# Flux's instance owner's, which the builtin .update-duration validates.
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
nobody_uid=$(id -u nobody)
id=$(as_nobody sbatch --parsable -H -o /dev/null -p debug -t 60 --wrap true)
ok $? "a user's job in debug at the limit"
cluster_wait_for 10 sh -c "squeue -h -j $id | grep -q ."
out=$(as_nobody scontrol update job="$id" TimeLimit=2:00:00 2>&1)
ok $((!$?)) "its user's TimeLimit update over the limit is refused"
like "$(cluster_log)" "jobtap: update of JobId=$id by uid $nobody_uid rejected: requested duration \\(2h\\) exceeds policy limit of 1h for queue debug" \
	"with Flux's message in slurmctld's log"
if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	like "$out" "^scontrol: error: requested duration \\(2h\\) exceeds policy limit of 1h for queue debug" \
		"and scontrol's error (24.11 and later)"
fi
is "$(field "$id" TimeLimit)" 01:00:00 "the time limit is unchanged"
as_nobody scontrol update job="$id" TimeLimit=30
ok $? "an update within the limit is accepted"
is "$(field "$id" TimeLimit)" 00:30:00 "and applied"
out=$(as_nobody scontrol update job="$id" Partition=short 2>&1)
ok $((!$?)) "moving it to a queue whose limits it breaks is refused"
like "$(cluster_log)" "jobtap: update of JobId=$id by uid $nobody_uid rejected: requested ncores \\(1\\) is under policy limit of 2 for queue short" \
	"judged by the new queue's limits (sizes first, as Flux's builtins run)"
is "$(field "$id" Partition)" debug "the partition is unchanged"
own=$(submitted -p debug -t 30)
scontrol update job="$own" Partition=batch
unlike "$(cluster_log)" "jobtap: update of JobId=$own by uid 0 rejected" \
	"a move to a queue whose limits the job meets passes the limits"
# Whether Slurm then makes it is Slurm's: on a cluster without accounting
# (this one) every release ends a partition update with whatever errno
# holds (_retrieve_new_assoc finds no association and sets none), with or
# without slurm-jobtap. Either way jobtap's queue is the job's partition
# once the agent has looked.
queue_of() { "$jobtap" job "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['jobspec']['attributes']['system']['queue'])"; }
for _ in $(seq 50); do # the agent's next pass: a few milliseconds
	[ "$(queue_of "$own")" = "$(field "$own" Partition)" ] && break
	sleep 0.2
done
is "$(queue_of "$own")" "$(field "$own" Partition)" "jobtap's queue is the job's partition, whatever Slurm made of the move"
scontrol update job="$id" TimeLimit=10:00:00
ok $? "an operator's TimeLimit over the queue's limit is accepted (Flux's instance owner)"
is "$(field "$id" TimeLimit)" 10:00:00 "and applied"
out=$(as_nobody scontrol update job="$id" TimeLimit=20 2>&1)
ok $((!$?)) "then the job's user can no longer update it"
like "$(cluster_log)" "jobtap: update of JobId=$id by uid $nobody_uid rejected: job is immutable due to previous instance owner update" \
	"with Flux's reason"

# A bad table is refused at reconfigure, with its file and line; the
# loaded policy keeps deciding.
reconfigure() {
	local before
	before=$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' "$CLUSTER_DIR/log/slurmctld.log")
	scontrol reconfigure >/dev/null 2>&1
	cluster_wait_for 30 sh -c "test \$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' '$CLUSTER_DIR/log/slurmctld.log') -gt $before"
	cluster_wait_for 30 squeue -h
}
printf '[policy.limits]\nduration = "2h"\n\n[queues.debug.policy.limits]\nduration = "30 minutes"\n' >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: reconfigure failed.*: $conf:4: error parsing \\[queues.debug.policy.limits\\] config table: 'duration' is not a valid FSD" \
	"a bad queue limit is refused with the file, the table's line and Flux's words"
is "$(submit -p debug -t 2:00:00)" \
	"1: sbatch: error: requested duration (2h) exceeds policy limit of 1h for queue debug" \
	"the loaded limits still decide"
printf '[policy.limits]\nduration = "2h"\n' >"$conf"
reconfigure
like "$(cluster_log)" "jobtap: configuration reloaded" "a good policy is loaded"
is "$(submit -p debug -t 3:00:00)" \
	"1: sbatch: error: requested duration (3h) exceeds policy limit of 2h for queue debug" \
	"its limit applies"
id=$(submitted -p debug -t 2:00:00)
ok $? "and a job within it is accepted"
is "$(submit -p debug)" \
	"1: sbatch: error: requested duration (unlimited) exceeds policy limit of 2h for queue debug" \
	"with no default duration a job asking for none is unlimited (the partition's MaxTime) and rejected, as in Flux"
unlike "$(submit -p debug -t 5 -N 2)" "policy limit" "the size limits are gone with their table"

cluster_finish
done_testing
