#!/usr/bin/env bash
# max-running.lua on a real cluster: a user's jobs beyond the limit wait
# with the reason "jobtap: max-running-jobs" and start one by one as the
# running ones end (seen at the adapter's sweep, every 3 s here), also
# across a slurmctld restart (the waiting jobs come back in DEPEND, and the
# policy queues them again at job.new).
. "$(dirname "$0")/../../lib/tap.sh"
. "$(dirname "$0")/../../lib/cluster.sh"

ex=$(cd "$(dirname "$0")/../../../conf/examples" && pwd)
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [
  { load = "$ex/max-running.lua", conf = { max-running = 1 } },
]
[slurm-jobtap]
reprioritize-period = 3
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"

state() { squeue -h -j "$1" -t all -o '%T'; }
reason() { squeue -h -j "$1" -o '%r'; }
a=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J a --wrap 'sleep 4')
b=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J b --wrap 'sleep 4')
c=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J c --wrap 'sleep 1')
cluster_wait_for 15 sh -c "squeue -h -j $a -o %T | grep -q RUNNING"
cluster_wait_for 10 sh -c "squeue -h -j $c -o %r | grep -q jobtap"
is "$(state "$a")" RUNNING "the first job runs"
is "$(state "$b") $(reason "$b")" "PENDING jobtap: max-running-jobs" \
	"the second waits for max-running-jobs (one CPU would be free)"
is "$(state "$c") $(reason "$c")" "PENDING jobtap: max-running-jobs" "so does the third"
# Held at submit (in job.new, inside the submission): what the agent's
# hold put back of the fence that kept the job from starting meanwhile
# (docs/admin.md, "How a job goes through the shim").
unlike "$(scontrol show job "$b")" 'EligibleTime=2038-01-19' "the held job's eligible time is its own again"
like "$(scontrol show job "$b")" 'Deadline=N/A' "and it has no deadline"
out=$(srun --immediate=2 -n 1 -t 5 -J imm true 2>&1)
ok $((!$?)) "srun --immediate of a job the policy holds fails"
like "$out" 'Unable to allocate resources' "with Slurm's message"
is "$(squeue -h -n imm -t all -o %T | sort -u)" CANCELLED "and that job never ran"
like "$(cluster_log)" "lua: max-running.lua: job $b of user 0 waits: 1 of the user's jobs are admitted \\(released to run, or running\\)" \
	"the policy logs why"

# Released at the sweep after the first ends, each starts within seconds:
# the adapter asks slurmctld for a scheduler pass.  The 3 s sweep lands
# after the pass slurmctld makes when a job ends, so without that request
# a released job would wait for the backfill pass, 30 s away.
cluster_wait_for 12 sh -c "squeue -h -j $b -o %T | grep -q RUNNING"
is "$(state "$b")" RUNNING "when the first ends, the second runs"
is "$(state "$a")" COMPLETED "the first completed"
is "$(state "$c") $(reason "$c")" "PENDING jobtap: max-running-jobs" "the third still waits"
cluster_wait_for 12 sh -c "squeue -h -j $c -t all -o %T | grep -q COMPLETED"
is "$(state "$c")" COMPLETED "and runs after the second"
is "$(state "$b")" COMPLETED "all three completed"

# A waiting job that is canceled frees its place in the queue.
d=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J d --wrap 'sleep 4')
e=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J e --wrap 'sleep 1')
f=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J f --wrap 'sleep 1')
cluster_wait_for 10 sh -c "squeue -h -j $f -o %r | grep -q jobtap"
scancel "$e"
# d waits for a scheduler pass (up to ~5 s), runs 4 s, the sweep sees it end
# (up to 3 s), then f waits for a pass and runs 1 s: up to ~14 s.
cluster_wait_for 24 sh -c "squeue -h -j $f -t all -o %T | grep -q COMPLETED"
is "$(state "$f")" COMPLETED "after a waiting job is canceled the next one still runs"
is "$(state "$e")" CANCELLED "the canceled one never ran"

# Across a restart: the running job counts, the waiting one waits, and it
# runs when the first ends.
g=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J g --wrap 'sleep 6')
h=$(sbatch --parsable -n 1 -t 5 -o /dev/null -J h --wrap 'sleep 1')
cluster_wait_for 15 sh -c "squeue -h -j $g -o %T | grep -q RUNNING"
cluster_wait_for 10 sh -c "squeue -h -j $h -o %r | grep -q jobtap"
cluster_restart_slurmctld || bail_out "slurmctld did not come back"
sleep 1
is "$(state "$h") $(reason "$h")" "PENDING jobtap: max-running-jobs" \
	"after a restart the waiting job still waits"
cluster_wait_for 24 sh -c "squeue -h -j $h -t all -o %T | grep -q COMPLETED"
is "$(state "$h")" COMPLETED "and runs once the running one ended"

cluster_finish
done_testing
