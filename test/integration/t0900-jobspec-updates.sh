#!/usr/bin/env bash
# A plugin's jobspec updates after submit reach the Slurm job: a comment filled in at job.new is the job's comment (a bank
# would be its account, but without slurmdbd Slurm keeps the account it
# has); a name set from a service is its name; an update Slurm refuses is logged with the
# job and the plugin, and jobtap's jobspec agrees with Slurm again. And
# scontrol update right after sbatch works at once.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/lifecycle.so", conf = { at-new = { "attributes.system.slurm.comment" = "from job.new" } } } ]
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
spec() { "$jobtap" job "$1" --json | python3 -c "import json,sys; j=json.load(sys.stdin)['jobspec']; print(j$2)"; }

id=$(sbatch --parsable -o /dev/null -t 5 -H --wrap true)
cluster_wait_for 10 sh -c "scontrol show job $id | grep -q 'Comment=from job.new'"
like "$(scontrol show job "$id")" "Comment=from job.new" "a comment a plugin fills in at job.new is the Slurm job's comment"
is "$(spec "$id" "['attributes']['system']['slurm']['comment']")" "from job.new" "and jobtap's jobspec has it"

out=$("$jobtap" rpc lifecycle.update "{\"id\": $id, \"updates\": {\"attributes.system.job.name\": \"renamed\"}}" 2>&1)
ok $? "a service updates the job's name" || diag "$out"
cluster_wait_for 10 sh -c "scontrol show job $id | grep -q JobName=renamed"
is "$(field "$id" JobName)" renamed "scontrol show job has the new name"

out=$("$jobtap" rpc lifecycle.update "{\"id\": $id, \"updates\": {\"attributes.system.queue\": \"nosuch\"}}" 2>&1)
ok $? "a service moves the job to a partition that does not exist" || diag "$out"
cluster_wait_for 10 sh -c "grep -q \"JobId=$id: Slurm refused lifecycle.so's update\" '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "jobtap: JobId=$id: Slurm refused lifecycle.so's update \\{\"attributes.system.queue\":\"nosuch\"\\}: Invalid partition name specified" \
	"Slurm refuses it: logged with the job and the plugin"
is "$(field "$id" Partition)" debug "the job stays in its partition"
cluster_wait_for 10 sh -c "$jobtap job $id --json | grep -q '\"queue\": \"debug\"'"
is "$(spec "$id" "['attributes']['system']['queue']")" debug "and jobtap's jobspec agrees with Slurm again"

out=$("$jobtap" rpc lifecycle.update "{\"id\": $id, \"updates\": {\"attributes.system.nosuch\": 1}}" 2>&1)
cluster_wait_for 10 sh -c "grep -q \"JobId=$id: lifecycle.so's update cannot be made in Slurm\" '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "jobtap: JobId=$id: lifecycle.so's update cannot be made in Slurm: " \
	"a key with no Slurm equivalent is logged too"
scontrol release "$id"
cluster_wait_for 20 sh -c "squeue -h -t all -j $id -o %T | grep -q COMPLETED"
is "$(squeue -h -t all -j "$id" -o %T)" COMPLETED "the job then runs as usual"

# scontrol update right after sbatch: accepted at once, and the plugins
# see it (the job is bound on the spot if the agent has not yet).
for i in 1 2 3; do
	id=$(sbatch --parsable -o /dev/null -t 5 -H --wrap true)
	out=$(scontrol update jobid="$id" timelimit=3 comment="right-after-$i" 2>&1)
	ok $? "scontrol update right after sbatch ($i) is accepted" || diag "$out"
	is "$(spec "$id" "['attributes']['system']['duration']")" 180.0 \
		"and jobtap's jobspec has the new time limit at once"
done

cluster_finish
done_testing
