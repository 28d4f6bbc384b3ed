#!/usr/bin/env bash
# The private cluster starts with both jobtap plugins loaded, runs a batch job
# to completion and lists pending jobs in sprio.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

cluster_start || bail_out "cluster did not start"
ok 0 "cluster with job_submit/jobtap and site_factor/jobtap is up"

log=$(cluster_log)
like "$log" 'job_submit/jobtap: init: loaded \(slurm-jobtap runtime [0-9.]+\)' "slurmctld log shows job_submit/jobtap loaded"
like "$log" 'site_factor/jobtap: init: loaded \(slurm-jobtap runtime [0-9.]+\)' "slurmctld log shows site_factor/jobtap loaded"

id=$(sbatch --parsable -o "$CLUSTER_DIR/out.%j" --wrap 'echo hello from job $SLURM_JOB_ID')
like "$id" '^[0-9]+$' "sbatch returns a job id"
cluster_wait_for 30 sh -c "scontrol show job -o $id | grep -q JobState=COMPLETED"
like "$(scontrol show job -o "$id")" 'JobState=COMPLETED' "batch job $id ran to COMPLETED"
is "$(cat "$CLUSTER_DIR/out.$id")" "hello from job $id" "job output is right"

# One job holds the node, so the next one pends and sprio must list it.
busy=$(sbatch --parsable --exclusive -o /dev/null --wrap 'sleep 60')
pending=$(sbatch --parsable --exclusive -o /dev/null --wrap 'true')
cluster_wait_for 15 sh -c "squeue -h -j $busy -o %T | grep -q RUNNING"
is "$(squeue -h -j "$pending" -o %T)" PENDING "second exclusive job is pending"
is "$(sprio -h -j "$pending" -o %i)" "$pending" "sprio lists the pending job"

cluster_finish
done_testing
