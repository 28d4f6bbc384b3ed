#!/usr/bin/env bash
# With slurmdbd and AccountingStorageEnforce=associations,qos, as sites
# run Slurm: a bank a plugin sets at job.new reaches the Slurm job's
# Account (without slurmdbd Slurm keeps the account it has: t0900); a bank
# with no association is refused by Slurm, logged with the job and the
# plugin, and jobtap's jobspec agrees with Slurm again; a QOS a plugin
# sets lives, also when set before slurmdbd gave the job its database
# index; an mf_priority-shaped plugin's default bank reaches Slurm.
# The cluster has a private MariaDB and slurmdbd
# (test/lib/accounting.sh).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/lifecycle.so", conf = { at-new = { "attributes.system.bank" = "physics" } } } ]
TOML
cluster_start --accounting --jobtap-conf "$conf" --conf "AccountingStorageEnforce=associations,qos" ||
	bail_out "the cluster with accounting did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
cluster=$(sed -n 's/^ClusterName=//Ip' "$SLURM_CONF" | tail -n 1)
field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
spec() { "$jobtap" job "$1" --json | python3 -c "import json,sys; j=json.load(sys.stdin)['jobspec']; print(j$2)"; }

out=$({
	sacctmgr -i add qos fast &&
		sacctmgr -i add account physics Cluster="$cluster" &&
		sacctmgr -i add user root Account=physics Cluster="$cluster" &&
		sacctmgr -i modify user root set qos+=fast
} 2>&1)
ok $? "sacctmgr adds account physics and QOS fast for root" || diag "$out"
# slurmdbd pushes the new associations to slurmctld
cluster_wait_for 20 sh -c "scontrol show assoc_mgr users=root accounts=physics flags=assoc 2>/dev/null | grep -q 'Account=physics'"

id=$(sbatch --parsable -o /dev/null -t 5 -H --wrap true)
cluster_wait_for 10 sh -c "scontrol show job $id | grep -q Account=physics"
is "$(field "$id" Account)" physics "a bank the plugin sets at job.new is the Slurm job's Account"
is "$(spec "$id" "['attributes']['system']['bank']")" physics "and jobtap's jobspec has it"

out=$("$jobtap" rpc lifecycle.update "{\"id\": $id, \"updates\": {\"attributes.system.bank\": \"nosuch\"}}" 2>&1)
ok $? "a service moves the job to a bank with no association" || diag "$out"
cluster_wait_for 10 sh -c "grep -q \"JobId=$id: Slurm refused lifecycle.so's update\" '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "jobtap: JobId=$id: Slurm refused lifecycle.so's update \\{\"attributes.system.bank\":\"nosuch\"\\}: Invalid account" \
	"Slurm refuses it: logged with the job and the plugin"
is "$(field "$id" Account)" physics "the job keeps its account"
cluster_wait_for 10 sh -c "$jobtap job $id --json | grep -q '\"bank\": \"physics\"'"
is "$(spec "$id" "['attributes']['system']['bank']")" physics "and jobtap's jobspec agrees with Slurm again"

out=$("$jobtap" rpc lifecycle.update "{\"id\": $id, \"updates\": {\"attributes.system.slurm.qos\": \"fast\"}}" 2>&1)
ok $? "a service sets the job's QOS" || diag "$out"
cluster_wait_for 10 sh -c "scontrol show job $id | grep -q QOS=fast"
is "$(field "$id" QOS)" fast "the QOS the plugin set is the Slurm job's"
scontrol release "$id"
cluster_wait_for 20 sh -c "squeue -h -t all -j $id -o %T | grep -q COMPLETED"
is "$(squeue -h -t all -j "$id" -o %T)" COMPLETED "the job runs with them"
cluster_wait_for 20 sh -c "sacct -n -X -j $id -o account,qos | grep -q physics"
like "$(sacct -n -X -j "$id" -o account,qos)" "physics +fast" "and accounting records its account and QOS"

# While slurmdbd has not yet given a new job its database index, 22.05
# refuses every update of the job ("try again in a bit"; scontrol gives up
# after 5 s). A plugin's update waits for the index and is made then.
# 24.11 makes updates at once. With slurmdbd stopped, the job's index
# stays unset once slurmctld asked for it.
kill -STOP "${ACCOUNTING_PIDS[1]}"
id=$(sbatch --parsable -o /dev/null -t 5 -H --wrap true)
if [ "$(cluster_slurm_release)" -lt 2411 ]; then
	asked=1
	for _ in $(seq 1 20); do
		if scontrol update jobid="$id" comment=probe 2>&1 | grep -q "DB index is being set"; then
			asked=0
			break
		fi
		sleep 0.5
	done
	ok "$asked" "with slurmdbd stopped, Slurm refuses updates of a new job (22.05)"
fi
cluster_wait_for 10 "$jobtap" job "$id"
out=$("$jobtap" rpc lifecycle.update "{\"id\": $id, \"updates\": {\"attributes.system.slurm.qos\": \"fast\"}}" 2>&1)
ok $? "a service sets the QOS of a job slurmdbd has not seen" || diag "$out"
if [ "$(cluster_slurm_release)" -lt 2411 ]; then
	cluster_wait_for 10 grep -q "JobId=$id: lifecycle.so's update waits for the job's database index" "$CLUSTER_DIR/log/slurmctld.log"
	like "$(cluster_log)" "jobtap: JobId=$id: lifecycle.so's update waits for the job's database index" \
		"a plugin's update then waits for it"
	is "$(field "$id" QOS)" normal "and is not made yet"
	kill -CONT "${ACCOUNTING_PIDS[1]}"
fi
cluster_wait_for 15 sh -c "scontrol show job $id | grep -q QOS=fast"
is "$(field "$id" QOS)" fast "the update is made (22.05: once slurmdbd is back)"
kill -CONT "${ACCOUNTING_PIDS[1]}"
unlike "$(cluster_log)" "JobId=$id: Slurm refused" "and nothing was refused"
scancel "$id"

# A plugin shaped like flux-accounting's mf_priority fills in its user's
# bank for a job submitted without one (a jobspec update at job.new).
out=$("$jobtap" remove lifecycle.so 2>&1 &&
	"$jobtap" load "$JOBTAP_BUILD_DIR/test/integration/bank-priority.so" 2>&1 &&
	"$jobtap" rpc bank-priority.rec_update '{"data": [{"userid": 0, "bank": "physics", "fairshare": 0.5}]}' 2>&1)
ok $? "bank-priority.so loaded with root's bank physics" || diag "$out"
id=$(sbatch --parsable -o /dev/null -t 5 -H --wrap true)
cluster_wait_for 10 sh -c "scontrol show job $id | grep -q Account=physics"
is "$(field "$id" Account)" physics \
	"a job submitted without -A gets the plugin's bank, not the user's DefaultAccount (jobtap)"
scancel "$id"

cluster_finish
done_testing
