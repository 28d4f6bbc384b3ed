#!/usr/bin/env bash
# How a jobtap priority enters Slurm: by default as the site factor
# NICE_OFFSET + priority, clamped to what the uint32 field carries; with
# priority-mode = "authoritative" as the Slurm priority itself, 0 holding.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start() {
	start_policy_cluster "${2:-}" "$1" || bail_out "cluster did not start"
	blocker=$(sbatch --parsable --exclusive -J blocker -o /dev/null -t 10 --wrap 'sleep 300')
	cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
}
submit() { sbatch --parsable --exclusive -o /dev/null -t 5 -J "$1" --wrap true; }
wait_new() { cluster_wait_for 10 sh -c "grep -q 'job.new id=$1 ' '$CLUSTER_DIR/log/slurmctld.log'"; sleep 0.5; }

# Default: site factor.
start ""
max=$(submit prio-4294967295)
zero=$(submit prio-0)
wait_new "$zero"
cluster_wait_for 10 sh -c "sprio -h -j $max -o %S | grep -q 2147483647"
is "$(sprio -h -j "$max" -o %S | tr -d ' ')" 2147483647 \
	"priority 4294967295 is clamped to the largest site factor (NICE_OFFSET + 2147483647)"
is "$(squeue -h -j "$zero" -o '%T %Q')" "PENDING 1" \
	"priority 0 is the smallest site factor: the job stays eligible at Slurm's floor of 1"
cluster_stop

# A plugin's flux_jobtap_reprioritize_all takes effect at once (the
# periodic pass is an hour away here).
prio_file=$(mktemp)
start "[slurm-jobtap]
reprioritize-period = 3600" "priority-file = \"$prio_file\""
plain=$(submit plain)
cluster_wait_for 10 sh -c "sprio -h -j $plain -o %S | grep -q 16"
echo 555 >"$prio_file"
submit reprioritize-all >/dev/null
cluster_wait_for 10 sh -c "sprio -h -j $plain -o %S | grep -q 555"
is "$(sprio -h -j "$plain" -o %S | tr -d ' ')" 555 "flux_jobtap_reprioritize_all from a plugin updates sprio"
rm -f "$prio_file"
cluster_stop

# Authoritative: Slurm priority == jobtap priority.
start '[slurm-jobtap]
priority-mode = "authoritative"'
p=$(submit prio-1000)
plain=$(submit plain)
zero=$(submit prio-0)
wait_new "$zero"
is "$(squeue -h -j "$p" -o %Q)" 1000 "priority 1000 is the Slurm priority"
is "$(squeue -h -j "$plain" -o %Q)" 16 "the default priority (urgency 16) is the Slurm priority"
cluster_wait_for 10 sh -c "squeue -h -j $zero -o %r | grep -q jobtap"
is "$(squeue -h -j "$zero" -o '%Q %r')" "0 jobtap: priority 0" "priority 0 holds the job"

cluster_finish
done_testing
