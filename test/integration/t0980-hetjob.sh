#!/usr/bin/env bash
# Heterogeneous jobs are one jobtap job each: its id is the leader's (the
# first component's, squeue's J+0), job.new and the states run once, and
# a plugin's rejection, hold or priority applies to every component.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

policy=$(mktemp --suffix=.lua)
# rejects a job of exactly 3 tasks, holds jobs named "held", gives jobs
# named "prio" priority 4242, and logs job.new and inactive of the rest
cat >"$policy" <<'LUA'
local jobtap = require "jobtap"
jobtap.on ("job.validate", function (job)
    if job.ntasks == 3 then
        return job:reject ("no job of three tasks here")
    end
end)
jobtap.on ("job.new", function (job)
    jobtap.log_info ("new job %d named %s", job.id, job.name or "")
end)
jobtap.on ("job.state.depend", function (job)
    if job.name == "held" then
        job:add_dependency ("het-hold")
    end
end)
local function prio (job)
    if job.name == "prio" then
        job:set_priority (4242)
    end
end
jobtap.on ("job.state.priority", prio)
jobtap.on ("job.priority.get", prio)
jobtap.on ("job.state.run", function (job)
    jobtap.log_info ("job %d runs", job.id)
end)
jobtap.on ("job.state.inactive", function (job)
    jobtap.log_info ("job %d inactive", job.id)
end)
LUA
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$policy" } ]
[slurm-jobtap]
keep-eventlog = true
reprioritize-period = 3
TOML
# hetjobs start only in backfill passes: one a second
cluster_start --nodes 2 --conf SchedulerParameters=bf_interval=1 --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
components() { squeue -h -t all -j "$1" -o "$2" | sort | tr '\n' ' ' | sed 's/ $//'; }
count_log() { cluster_log | grep -c "$1"; }

# One job through its whole lifecycle: job.new, run and inactive once.
het=$(sbatch --parsable -J plain -n1 -t 5 -o /dev/null : -n1 --wrap 'sleep 1')
cluster_wait_for 30 sh -c "squeue -h -t all -j $het -o %T | grep -q COMPLETED && ! squeue -h -t all -j $het -o %T | grep -vq COMPLETED"
is "$(components "$het" '%i %T')" "${het}+0 COMPLETED ${het}+1 COMPLETED" "a hetjob of two components ran"
cluster_wait_for 15 sh -c "$jobtap job $het | grep -q INACTIVE"
is "$(count_log "new job $het named plain")" 1 "job.new ran once, with the leader's id"
is "$(count_log "new job $((het + 1)) ")" 0 "and never for the other component's record"
is "$(count_log "job $het runs")" 1 "job.state.run once"
is "$(count_log "job $het inactive")" 1 "job.state.inactive once, after both ended"
out=$("$jobtap" job "${het}+1")
like "$out" "JobId +$het\\b" "jobtap job LEADER+1 finds the hetjob's job"
for ev in submit validate depend priority alloc start finish release free clean; do
	like "$out" "[0-9] $ev" "its eventlog has $ev"
done

# Rejected as one: any component the plugin refuses refuses the hetjob.
out=$(sbatch -n1 -t 5 -o /dev/null : -n3 --wrap true 2>&1)
is "$?" 1 "a hetjob whose second component the plugin rejects is refused"
like "$out" "no job of three tasks here" "with the plugin's message"
before=$(squeue -h -t all | wc -l)
out=$(sbatch -n3 -t 5 -o /dev/null : -n1 --wrap true 2>&1)
like "$out" "no job of three tasks here" "the first component's rejection too"
is "$(squeue -h -t all | wc -l)" "$before" "and no component of either was made"

# Held together: a plugin's hold of the job holds every component.
held=$(sbatch --parsable -J held -n1 -t 5 -o /dev/null : -n1 --wrap true)
cluster_wait_for 15 sh -c "[ \$(squeue -h -j $held -o %r | grep -c het-hold) = 2 ]"
sleep 3 # a scheduler pass and a backfill pass
is "$(components "$held" '%i %T %r')" "${held}+0 PENDING jobtap: het-hold ${held}+1 PENDING jobtap: het-hold" \
	"a plugin's hold holds both components"
like "$("$jobtap" job "$held")" "Dependencies +het-hold" "jobtap shows one job with the dependency"
# A restart restores the one job, held as it was.
cluster_restart_slurmctld || bail_out "slurmctld did not come back"
cluster_wait_for 20 sh -c "$jobtap job $held | grep -q het-hold"
like "$("$jobtap" job "$held")" "State +DEPEND" "after a restart jobtap has the hetjob's job, still held"
if "$jobtap" job "$((held + 1))" >/dev/null 2>&1; then status=1; else status=0; fi
ok "$status" "and no job of the second component's own id $((held + 1))"
sleep 2
is "$(components "$held" '%i %T %r')" "${held}+0 PENDING jobtap: het-hold ${held}+1 PENDING jobtap: het-hold" \
	"both components are still held"
scancel "$held"
cluster_wait_for 15 sh -c "$jobtap job $held | grep -q INACTIVE"
like "$("$jobtap" job "$held")" "State +INACTIVE" "scancel ends the held hetjob in jobtap"
is "$(count_log "job $held inactive")" 1 "once"

# A user's hold and release (scontrol on the leader) are the job's urgency.
het=$(sbatch --parsable -H -J plain -n1 -t 5 -o /dev/null : -n1 --wrap true)
cluster_wait_for 15 sh -c "$jobtap job $het | grep -q 'Urgency *0'"
is "$(components "$het" '%i %T %r')" "${het}+0 PENDING JobHeldUser ${het}+1 PENDING JobHeldUser" \
	"sbatch -H holds both components"
scontrol release "$het"
cluster_wait_for 30 sh -c "[ \$(squeue -h -t all -j $het -o %T | grep -c COMPLETED) = 2 ]"
is "$(components "$het" '%i %T')" "${het}+0 COMPLETED ${het}+1 COMPLETED" "scontrol release runs both"
like "$("$jobtap" job "$het")" "Urgency +16" "with the urgency back to 16"

# One priority: the plugin's is every component's in squeue. root's job
# fills the node, so the hetjob waits.
blocker=$(sbatch --parsable -c 2 -t 5 -o /dev/null --wrap 'sleep 60')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
het=$(sbatch --parsable -J prio -n1 -t 5 -o /dev/null : -n1 --wrap true)
cluster_wait_for 15 sh -c "[ \$(squeue -h -j $het -o %i | wc -l) = 2 ]"
is "$(components "$het" '%i %Q')" "${het}+0 4242 ${het}+1 4242" "both components have the plugin's priority"
scancel "$het" "$blocker"

cluster_stop
done_testing
