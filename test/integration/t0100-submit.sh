#!/usr/bin/env bash
# job_submit/jobtap on real submissions: rejections reach sbatch, srun and
# salloc word for word; jobspec updates change the Slurm job; --test-only
# validates without job.new; job.new runs exactly once per created job with
# its real id.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

node=$(hostname -s)
start_policy_cluster 'max-duration = 86400.0, default-duration = 3600.0' '' \
	--conf "TrackWCKey=yes
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
PartitionName=batch Nodes=$node MaxTime=INFINITE State=UP" || bail_out "cluster did not start"

# Rejections, word for word, from every submission command.
out=$(sbatch -t 2-0 -o /dev/null --wrap true 2>&1)
ok $((!$?)) "sbatch of a 2-day job fails"
like "$out" '^sbatch: error: duration 172800s exceeds the limit of 86400s$' "sbatch shows the plugin's message"
out=$(srun -t 2-0 true 2>&1)
ok $((!$?)) "srun of a 2-day job fails"
like "$out" '^srun: error: duration 172800s exceeds the limit of 86400s$' "srun shows the plugin's message"
out=$(salloc -t 2-0 true 2>&1)
ok $((!$?)) "salloc of a 2-day job fails"
like "$out" '^salloc: error: duration 172800s exceeds the limit of 86400s$' "salloc shows the plugin's message"
like "$(cluster_log)" 'jobtap: rejected a job of user 0: duration 172800s exceeds the limit of 86400s' \
	"slurmctld logs the rejection"

# Jobspec updates made in job.validate change the Slurm job.
show() { scontrol show job -o "$1"; }
id=$(sbatch --parsable -o /dev/null -J plain --wrap true)
like "$(show "$id")" 'TimeLimit=01:00:00' "a job without a time limit gets the policy's 1h duration"
id=$(sbatch --parsable -o /dev/null -J rename-me -t 10 --wrap true)
like "$(show "$id")" 'JobName=renamed ' "job.name update renames the job"
id=$(sbatch --parsable -o /dev/null -J to-batch -t 10 --wrap true)
like "$(show "$id")" 'Partition=batch ' "queue update moves the job to partition batch"
id=$(sbatch --parsable -o /dev/null -J bank-special -t 10 --wrap true)
like "$(show "$id")" 'Account=special ' "bank update sets the account"
id=$(sbatch --parsable -o /dev/null -J project-science -t 10 --wrap true)
like "$(show "$id")" 'WCKey=science ' "project update sets the wckey"
out=$(sbatch -o /dev/null -J bad-update -t 10 --wrap true 2>&1)
ok $((!$?)) "a job whose update has no Slurm field is rejected"
like "$out" '^sbatch: error: jobtap: jobspec update of attributes.system.frobnicate has no Slurm equivalent$' \
	"with a message naming the key"

# Misbehaving plugins: a bare -1 gets Flux's default message; a priority of
# the wrong type is an exception on the job, never a crash.
out=$(sbatch -o /dev/null -J reject-silently -t 10 --wrap true 2>&1)
like "$out" '^sbatch: error: rejected by job-manager plugin$' \
	"a rejection without a message gets Flux's default message"
bad=$(sbatch --parsable -o /dev/null -J bad-priority -t 10 --wrap true)
cluster_wait_for 10 sh -c "grep -q 'job.new id=$bad ' '$CLUSTER_DIR/log/slurmctld.log'"
cluster_wait_for 10 sh -c "squeue -h -j $bad -o %r | grep -q jobtap"
is "$(squeue -h -j "$bad" -o '%T %r')" "PENDING jobtap: priority unavailable" \
	"a job whose priority a plugin got wrong is held, not run"
like "$(cluster_log)" "jobtap: job $bad: exception type=job.state.priority severity=4: arg_unpack: .* \\(job may be stuck in PRIORITY state\\)" \
	"the bad priority is logged as an exception on the job"
fatal=$(sbatch --parsable -o /dev/null -J raise-fatal -t 10 --wrap true)
cluster_wait_for 10 sh -c "squeue -h -j $fatal -t all -o %T | grep -q CANCELLED"
is "$(squeue -h -j "$fatal" -t all -o %T)" CANCELLED "a fatal exception from job.state.depend cancels the Slurm job"
is "$(squeue -h -j "$fatal" -t all -o %r)" 'jobtap: exception policy: not today' \
	"its reason names the exception"
ok $(kill -0 "${CLUSTER_PIDS[1]}"; echo $?) "slurmctld is alive"

# --test-only validates but never creates a job.
news_before=$(cluster_log | grep -c 'job.new id=')
out=$(sbatch --test-only -t 10 --wrap true 2>&1)
like "$out" 'sbatch: Job [0-9]+ to start at' "--test-only of a valid job succeeds"
out=$(sbatch --test-only -t 2-0 --wrap true 2>&1)
like "$out" 'duration 172800s exceeds the limit of 86400s' "--test-only of an invalid job shows the rejection"
# A job Slurm itself refuses after job_submit gets no job.new either.
out=$(sbatch -p nosuchpartition -t 10 --wrap true 2>&1)
like "$out" 'invalid partition' "Slurm refuses a job with a bad partition after job_submit"
sleep 1
is "$(cluster_log | grep -c 'job.new id=')" "$news_before" "neither got job.new"

# job.new: once per job, with the real id, the user and the urgency.
ids=()
for i in 1 2 3; do ids+=("$(sbatch --parsable -o /dev/null -J "n$i" -t 5 --wrap true)"); done
held=$(sbatch --parsable -o /dev/null -H -J held -t 5 --wrap true)
cluster_wait_for 10 sh -c "grep -q 'job.new id=$held ' '$CLUSTER_DIR/log/slurmctld.log'"
for id in "${ids[@]}"; do
	is "$(cluster_log | grep -c "job.new id=$id userid=0 urgency=16 name=n")" 1 \
		"job.new ran once for job $id with its id, userid 0 and urgency 16"
done
is "$(cluster_log | grep -c "job.new id=$held userid=0 urgency=0 name=held")" 1 "a job held with -H has urgency 0"
for i in 1 2 3; do
	like "$(cluster_log | grep "job.new id=${ids[i - 1]} ")" "name=n$i aux=n$i state=new\$" \
		"job aux stored in job.validate reaches job ${ids[i - 1]}'s job.new"
done
cluster_wait_for 30 sh -c "squeue -h -j ${ids[2]} -t CD -o %T | grep -q COMPLETED"
is "$(squeue -h -j "${ids[2]}" -t all -o %T)" COMPLETED "accepted jobs run to completion"
is "$(squeue -h -j "$held" -o '%T %r')" "PENDING JobHeldUser" "the -H job stays held by its user"
scontrol release "$held"
cluster_wait_for 30 sh -c "squeue -h -j $held -t CD -o %T | grep -q COMPLETED"
is "$(squeue -h -j "$held" -t all -o %T)" COMPLETED "and runs once the user releases it"

# A job array: one jobtap job per Slurm job record, each with one job.new.
arr=$(sbatch --parsable -o /dev/null -J arr -t 5 --array=1-3 --wrap true)
cluster_wait_for 30 sh -c "test \$(squeue -h -t CD -o %i | grep -c '^${arr}_') -eq 3"
is "$(squeue -h -t all -o '%i %T' | grep -c "^${arr}_[123] COMPLETED")" 3 "the three array tasks complete"
is "$(cluster_log | grep -c 'job.new id=[0-9]* userid=0 urgency=16 name=arr ')" 3 \
	"each array task's job record got one job.new"

cluster_finish
done_testing
