#!/usr/bin/env bash
# site_factor/jobtap: jobtap priorities reach Slurm as the site factor
# (sprio's SITE column), unavailable priorities and jobtap dependencies hold
# jobs with a "jobtap: ..." reason their user cannot lift, and the periodic
# reprioritize applies new answers from job.priority.get.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

prio_file=$(mktemp)
start_policy_cluster "priority-file = \"$prio_file\"" '[slurm-jobtap]
reprioritize-period = 1' || bail_out "cluster did not start"

# Keep the node busy so every other job stays pending.
blocker=$(sbatch --parsable --exclusive -J blocker -o /dev/null -t 10 --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
submit() { sbatch --parsable --exclusive -o /dev/null -t 5 -J "$1" --wrap true; }
site() { sprio -h -j "$1" -o %S | tr -d ' '; }
reason() { squeue -h -j "$1" -o %r; }

p1000=$(submit prio-1000)
p5=$(submit prio-5)
plain=$(submit plain)
cluster_wait_for 10 sh -c "sprio -h -j $p1000 -o %S | grep -q 1000"
is "$(site "$p1000")" 1000 "priority 1000 from job.state.priority is sprio's SITE factor"
is "$(site "$p5")" 5 "priority 5 likewise"
is "$(site "$plain")" 16 "without a plugin answer the priority is the urgency (16)"
is "$(squeue -h -j "$p1000" -o %Q)" 1000 "and the job's Slurm priority follows (other weights are 0)"

# Priority unavailable: held with a jobtap reason until a priority arrives.
un=$(submit unavail-a)
cluster_wait_for 10 sh -c "squeue -h -j $un -o %r | grep -q jobtap"
is "$(reason "$un")" "jobtap: priority unavailable" "an unavailable priority holds the job with its reason"
is "$(squeue -h -j "$un" -o %Q)" 0 "its Slurm priority is 0 (held)"
avail=$(submit avail-a)
cluster_wait_for 10 sh -c "sprio -h -j $un -o %S | grep -q 4242"
is "$(site "$un")" 4242 "reprioritize_job gives it a priority and releases it"
unlike "$(reason "$un")" '^jobtap' "its reason is no longer jobtap's"

# A job whose plugin gave no usable priority (flux-core's test.c
# "priority type error") stays in PRIORITY, as in Flux: the periodic pass
# (every second here) asks only for jobs already in SCHED.
bad=$(submit bad-priority-at-state)
cluster_wait_for 10 sh -c "squeue -h -j $bad -o %r | grep -q jobtap"
sleep 4
is "$(reason "$bad")" "jobtap: priority unavailable" \
	"a priority of the wrong type: the job waits in PRIORITY through the periodic passes"
like "$(JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock "$JOBTAP_BUILD_DIR/src/jobtap/jobtap" job "$bad")" "State +PRIORITY" "jobtap shows it in PRIORITY"

# A jobtap dependency holds the job until the plugin removes it.
w=$(submit wait-x)
cluster_wait_for 10 sh -c "squeue -h -j $w -o %r | grep -q jobtap"
is "$(reason "$w")" "jobtap: wait for release-x" "a jobtap dependency holds the job with its description"
r=$(submit release-x)
cluster_wait_for 10 sh -c "sprio -h -j $w -o %S | grep -q 16"
is "$(site "$w")" 16 "removing the dependency releases the job with its priority"
unlike "$(reason "$w")" '^jobtap' "its reason is no longer jobtap's"

# A Flux dependency scheme given with sbatch -d, as flux submit
# --dependency gives it: one a plugin takes (job.dependency.release here)
# reaches it, alone or beside Slurm's own, which stay Slurm's.
d1=$(sbatch --parsable --exclusive -o /dev/null -t 5 -J dep-a -d release:k1 --wrap true 2>&1)
like "$d1" '^[0-9]+$' "sbatch -d release:k1 is accepted"
cluster_wait_for 10 sh -c "squeue -h -j $d1 -o %r | grep -q jobtap"
is "$(reason "$d1")" "jobtap: wait for release-k1" "the plugin's job.dependency.release holds it"
like "$(scontrol show job "$d1")" "Dependency=\(null\)" "Slurm has no dependency of its own for it"
d2=$(sbatch --parsable --exclusive -o /dev/null -t 5 -J dep-b -d "afterany:$blocker,release:k1" --wrap true 2>&1)
like "$d2" '^[0-9]+$' "-d afterany:JOB,release:k1 is accepted"
like "$(scontrol show job "$d2")" "Dependency=afterany:$blocker" "Slurm keeps its own scheme"
cluster_wait_for 10 sh -c "squeue -h -j $d2 -o %r | grep -q jobtap"
is "$(reason "$d2")" "jobtap: wait for release-k1; also waits on its Slurm dependency" "and the plugin holds it too, its reason says both"
submit release-k1 >/dev/null
cluster_wait_for 10 sh -c "squeue -h -j $d1 -o %r | grep -vq jobtap"
unlike "$(reason "$d1")" '^jobtap' "a release-k1 job lifts the jobtap dependency"
cluster_wait_for 20 sh -c "squeue -h -j $d2 -o %r | grep -qx Dependency"
is "$(reason "$d2")" "Dependency" "the other now waits for Slurm's own dependency alone"
out=$(sbatch -o /dev/null -t 5 -d "afterany:$blocker?release:k2" --wrap true 2>&1)
is "$(head -n 1 <<<"$out")" "sbatch: error: the jobtap dependency scheme release cannot be in a '?' (any of) list" \
	"a jobtap scheme in a '?' (any of) list is refused with why"
out=$(sbatch -o /dev/null -t 5 -d nosuch:1 --wrap true 2>&1)
is "$out" "sbatch: error: Batch job submission failed: Job dependency problem" \
	"a scheme nobody takes gets Slurm's own answer"
scancel "$d1" "$d2"

# The job's user cannot lift a jobtap hold; Slurm's own user holds stay
# theirs. (root is an operator and may override, so use another user.)
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
nw=$(as_nobody sbatch --parsable --exclusive -o /dev/null -t 5 -J wait-y --wrap true)
cluster_wait_for 10 sh -c "squeue -h -j $nw -o %r | grep -q jobtap"
is "$(squeue -h -j "$nw" -o '%u %r')" "nobody jobtap: wait for release-y" "nobody's job is held by jobtap"
out=$(as_nobody scontrol release "$nw" 2>&1)
ok $((!$?)) "its user cannot release it"
like "$out" 'Access/permission denied' "scontrol says access denied"
if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	like "$out" "jobtap: wait for release-y" "and why (24.11)"
fi
like "$(cluster_log)" "jobtap: refusing to release JobId=$nw for uid $(id -u nobody): jobtap: wait for release-y" \
	"slurmctld logs why"
is "$(reason "$nw")" "jobtap: wait for release-y" "the job is still held by jobtap"
uh=$(as_nobody sbatch --parsable --exclusive -o /dev/null -t 5 -H -J user-held --wrap true)
cluster_wait_for 10 sh -c "squeue -h -j $uh -o %r | grep -q JobHeldUser"
as_nobody scontrol release "$uh"
ok $? "a user can still release their own -H hold"
cluster_wait_for 10 sh -c "sprio -h -j $uh -o %S | grep -q 16"
is "$(site "$uh")" 16 "and the released job gets its jobtap priority"

# Periodic reprioritize: job.priority.get answers from the file now.
echo 777 >"$prio_file"
cluster_wait_for 10 sh -c "sprio -h -j $plain -o %S | grep -q 777"
is "$(site "$plain")" 777 "the periodic reprioritize applies job.priority.get's new answer"
is "$(site "$p1000")" 1000 "and leaves jobs whose answer did not change"
rm -f "$prio_file"

cluster_finish
done_testing
