#!/usr/bin/env bash
# The example policies limits.lua, defaults.lua and priority.lua, stacked,
# on a real cluster: rejections word for word, defaults applied to the
# Slurm job, priorities in sprio's SITE column.
. "$(dirname "$0")/../../lib/tap.sh"
. "$(dirname "$0")/../../lib/cluster.sh"

ex=$(cd "$(dirname "$0")/../../../conf/examples" && pwd)
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [
  { load = "$ex/defaults.lua", conf = { default-queue = "batch", replace-queues = ["debug"], default-bank = "general" } },
  { load = "$ex/limits.lua", conf = { queues = { short = { max-duration = 3600, max-nodes = 1, max-cores = 1 }, batch = { max-duration = 86400 } } } },
  { load = "$ex/priority.lua", conf = { urgency-weight = 1000, core-weight = 10 } },
]
[slurm-jobtap]
reprioritize-period = 1
TOML
node=$(hostname -s)
cluster_start --jobtap-conf "$conf" --conf "PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
PartitionName=batch Nodes=$node MaxTime=INFINITE State=UP
PartitionName=short Nodes=$node MaxTime=INFINITE State=UP" || bail_out "cluster did not start"
rm -f "$conf"

# limits.lua (the first line is the policy's; Slurm adds its own after it)
first() { head -n 1 <<<"$1"; }
out=$(sbatch -p short -t 120 -o /dev/null --wrap true 2>&1)
ok $((!$?)) "a 2-hour job in queue short is rejected"
is "$(first "$out")" "sbatch: error: queue short: duration 7200s exceeds the limit of 3600s" "with the policy's message"
out=$(sbatch -p short -t 10 -n 2 -o /dev/null --wrap true 2>&1)
is "$(first "$out")" "sbatch: error: queue short: 2 cores exceeds the limit of 1" "2 cores in short: rejected"
out=$(sbatch -p short -t 10 -N 2 -o /dev/null --wrap true 2>&1)
is "$(first "$out")" "sbatch: error: queue short: 2 nodes exceeds the limit of 1" "2 nodes in short: rejected"
out=$(sbatch -p short -o /dev/null --wrap true 2>&1)
is "$(first "$out")" "sbatch: error: queue short: a time limit is required (at most 3600s)" \
	"no time limit in short (MaxTime=INFINITE): rejected"
out=$(srun -p short -t 120 true 2>&1)
is "$(first "$out")" "srun: error: queue short: duration 7200s exceeds the limit of 3600s" "srun gets the same message"
# A heterogeneous job is refused as one when a policy refuses one of its
# components: Slurm names the component (its offset) before the message,
# and creates none of them.
script=$CLUSTER_DIR/het.sh
printf '#!/bin/sh\ntrue\n' >"$script"
before=$(squeue -h -t all | wc -l)
out=$(sbatch -p short -t 10 -o /dev/null : -p short -t 120 "$script" 2>&1)
is "$? $(first "$out")" "1 sbatch: error: 1: queue short: duration 7200s exceeds the limit of 3600s" \
	"a hetjob whose second component breaks a limit: refused, the policy's message"
is "$(squeue -h -t all | wc -l)" "$before" "and no component of it is left"
out=$(sbatch -p batch -t 2-0 -o /dev/null --wrap true 2>&1)
is "$(first "$out")" "sbatch: error: queue batch: duration 172800s exceeds the limit of 86400s" "batch has its own limit"

# defaults.lua
show() { scontrol show job -o "$1"; }
id=$(sbatch --parsable -p short -t 30 -o /dev/null --wrap true)
ok $? "a job within short's limits is accepted"
like "$(show "$id")" ' Partition=short ' "it stays in short"
like "$(show "$id")" ' Account=general ' "and gets the default bank"
id=$(sbatch --parsable -t 10 -o /dev/null --wrap true)
like "$(show "$id")" ' Partition=batch ' "a job naming no partition goes to the default queue batch"
id=$(sbatch --parsable -t 10 -A MyBank -o /dev/null --wrap true)
like "$(show "$id")" ' Account=mybank ' "a job naming a bank keeps it"

# priority.lua: keep the node busy so the others stay pending
blocker=$(sbatch --parsable --exclusive -p batch -J blocker -o /dev/null -t 10 --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
site() { sprio -h -j "$1" -o %S | tr -d ' '; }
one=$(sbatch --parsable -p batch -t 5 -n 1 -o /dev/null --wrap true)
two=$(sbatch --parsable -p batch -t 5 -n 2 -o /dev/null --wrap true)
held=$(sbatch --parsable -p batch -t 5 -n 2 -H -o /dev/null --wrap true)
cluster_wait_for 10 sh -c "sprio -h -j $two -o %S | grep -q 16020"
is "$(site "$one")" 16010 "1 core, urgency 16: priority 16*1000 + 1*10"
is "$(site "$two")" 16020 "2 cores: 16*1000 + 2*10"
is "$(squeue -h -j "$two" -o %Q)" 16020 "the Slurm priority follows"
is "$(squeue -h -j "$held" -o '%T %r')" "PENDING JobHeldUser" "a held job stays held"
scontrol release "$held"
cluster_wait_for 10 sh -c "sprio -h -j $held -o %S | grep -q 16020"
is "$(site "$held")" 16020 "released, it gets its priority from the policy"
like "$(cluster_log)" 'jobtap: lua: defaults.lua: defaults for user 0' "policies log through slurmctld" 

cluster_finish
done_testing
