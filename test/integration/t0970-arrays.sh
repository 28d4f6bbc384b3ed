#!/usr/bin/env bash
# Job arrays are jobs: every task of an array is a jobtap job of its own,
# with job.new and its states, and a plugin's decision for one task is
# that task's alone. Slurm keeps the tasks that agree in the array's
# record (squeue's 7_[3-4]) and the adapter splits off a task whose
# decision differs, as `scontrol hold 7_3` does.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

ex=$(cd "$(dirname "$0")/../../conf/examples" && pwd)
policy=$(mktemp --suffix=.lua)
# holds task 2 of any array whose name is "hold2", raises an exception
# for task 2 of "fail2", gives the tasks of "prio" a priority by index,
# and logs the end of the tasks of arrays named "watch" (one handler per
# topic: the first that matches runs)
cat >"$policy" <<'LUA'
local jobtap = require "jobtap"
jobtap.on ("job.state.depend", function (job)
    local s = job.slurm or {}
    if job.name == "hold2" and s.array_task_id == 2 then
        job:add_dependency ("task-two")
        jobtap.log_info ("holding task %d_%d", s.array_job_id, s.array_task_id)
    elseif job.name == "fail2" and s.array_task_id == 2 then
        job:raise ("test", 0, "task two refused")
    end
end)
local function task_priority (job)
    local s = job.slurm or {}
    if job.name == "prio" then
        job:set_priority (1000 * s.array_task_id)
    end
end
jobtap.on ("job.state.priority", task_priority)
jobtap.on ("job.priority.get", task_priority)
jobtap.on ("job.update.attributes.system.duration", function (job)
    local s = job.slurm or {}
    if job.name == "upd" and s.array_task_id == 3 and job.value > 600 then
        return false, "task three keeps a short limit"
    end
end)
jobtap.on ("job.state.inactive", function (job)
    local s = job.slurm or {}
    if job.name == "watch" then
        jobtap.log_info ("task %d_%d inactive", s.array_job_id, s.array_task_id)
    end
end)
LUA
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [
  { load = "$ex/max-running.lua", conf = { max-running = 1, users = { "65534" = 10000 } } },
  { load = "$policy" },
]
[slurm-jobtap]
reprioritize-period = 3
keep-eventlog = true
TOML
cluster_start --jobtap-conf "$conf" --conf $'MaxArraySize=9001\nMaxJobCount=40000' || bail_out "cluster did not start"
rm -f "$conf"
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
states() { squeue -h -t all -j "$1" -o '%i:%T' | sort | tr '\n' ' ' | sed 's/ $//'; }
# (by uid: 26.05's squeue refuses -u nobody as an invalid user)
running() { squeue -h -t running -u "$(id -u "$1")" -o %i | wc -l; }
# most_running USER ARRAY TASKS SAMPLES: the most of USER's jobs seen
# running at once (every 0.5 s) until the array's TASKS tasks completed
most_running() {
	local most=0 n
	for _ in $(seq 1 "$4"); do
		n=$(running "$1")
		[ "$n" -gt "$most" ] && most=$n
		[ "$(squeue -h -t all -j "$2" -o %T | grep -c COMPLETED)" = "$3" ] && break
		sleep 0.5
	done
	echo "$most"
}

# One running job per user (root here): an array of four tasks on a
# 2-CPU node runs one task at a time, and every task finishes.
arr=$(sbatch --parsable -c 1 -t 5 -o /dev/null --array=1-4 --wrap 'sleep 2')
is "$(most_running root "$arr" 4 60)" 1 "max-running = 1 holds an array to one running task at a time"
is "$(states "$arr")" "${arr}_1:COMPLETED ${arr}_2:COMPLETED ${arr}_3:COMPLETED ${arr}_4:COMPLETED" \
	"and every task ran to completion"
like "$(cluster_log)" "max-running.lua: job [0-9]+ of user 0 waits" "the tasks beyond the limit waited as jobs of their own"
like "$(cluster_log)" "JobId=${arr}_2\\([0-9]+\\) split off its array" \
	"a task held alone was split off its array's record"
out=$("$jobtap" job "${arr}_3")
like "$out" "JobId +${arr}_3 \\([0-9]+\\)" "jobtap job ARRAY_TASK finds the task's own job"
like "$out" "State +INACTIVE" "which went through to inactive"
for ev in submit validate depend priority alloc start finish release free clean; do
	like "$out" "[0-9] $ev" "task 3's eventlog has $ev"
done

# An array and a plain job share the limit.
plain=$(sbatch --parsable -n 1 -t 5 -o /dev/null --wrap 'sleep 4')
cluster_wait_for 15 sh -c "squeue -h -j $plain -o %T | grep -q RUNNING"
arr=$(sbatch --parsable -c 1 -t 5 -o /dev/null --array=1-2 --wrap 'sleep 1')
cluster_wait_for 10 sh -c "squeue -h -j $arr -o %r | grep -q max-running-jobs"
sleep 1
is "$(squeue -h -j "$arr" -o '%T %r' | sort -u)" "PENDING jobtap: max-running-jobs" \
	"while a plain job runs, the array's tasks wait for the same limit"
cluster_wait_for 30 sh -c "[ \$(squeue -h -t all -j $arr -o %T | grep -c COMPLETED) = 2 ]"
is "$(states "$arr")" "${arr}_1:COMPLETED ${arr}_2:COMPLETED" "and run after it"

# nobody has a wide limit: a plugin holding task 2 holds only task 2.
arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null -J hold2 --array=1-3 --wrap 'sleep 30')
cluster_wait_for 15 sh -c "[ \$(squeue -h -t running -j $arr -o %i | wc -l) = 2 ]"
is "$(squeue -h -t all -j "$arr" -o '%i %T %r' | sort | tr '\n' ' ' | sed 's/ $//')" \
	"${arr}_1 RUNNING None ${arr}_2 PENDING jobtap: task-two ${arr}_3 RUNNING None" \
	"a plugin holding task 2 leaves tasks 1 and 3 running"
like "$(cluster_log)" "holding task ${arr}_2" "the plugin saw the task's array id and index"
like "$("$jobtap" job "${arr}_2")" "Dependencies +task-two" "jobtap shows task 2's dependency"
like "$("$jobtap" job "${arr}_1")" "State +RUN" "and task 1 running"
scancel "$arr"
cluster_wait_for 15 sh -c "! squeue -h -j $arr -o %T | grep -q ."
cluster_wait_for 15 sh -c "$jobtap job ${arr}_2 | grep -q INACTIVE"
like "$("$jobtap" job "${arr}_2")" "State +INACTIVE" "scancel of the array ends the held task in jobtap too"

# An exception raised for task 2 cancels task 2 alone.
arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null -J fail2 --array=1-3 --wrap 'sleep 1')
cluster_wait_for 30 sh -c "[ \$(squeue -h -t all -j $arr -o %T | grep -c COMPLETED) = 2 ]"
is "$(states "$arr")" "${arr}_1:COMPLETED ${arr}_2:CANCELLED ${arr}_3:COMPLETED" \
	"an exception for task 2 cancels task 2 alone"
cluster_wait_for 15 sh -c "$jobtap job ${arr}_2 | grep -q INACTIVE"
like "$(scontrol show job "${arr}_2")" "Reason=jobtap:_exception_test:_task_two_refused" \
	"with the exception in its reason"

# A priority per task: each task's own in Slurm (sprio's site factor).
# root's job fills the node, so nobody's tasks wait for resources.
blocker=$(sbatch --parsable -c 2 -t 5 -o /dev/null --wrap 'sleep 60')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null -J prio --array=1-3 --wrap true)
# (-r: 26.05's squeue shows an array's pending records as one range)
cluster_wait_for 15 sh -c "[ \$(squeue -h -r -j $arr -o %i | wc -l) = 3 ]"
is "$(squeue -h -r -j "$arr" -o '%i %Q' | sort | tr '\n' ' ' | sed 's/ $//')" \
	"${arr}_1 1000 ${arr}_2 2000 ${arr}_3 3000" "each task has the priority the plugin gave it"
records=$(squeue -h -r -j "$arr" -o %A | sort -n | paste -sd,)
# sprio lists a job once Slurm's scheduler has found it eligible (its
# -j takes an array's id as the array on 24.11: the records are picked
# from the whole list)
site_factors() { sprio -h -o '%i %S' | awk -v r=",$records," 'index(r, "," $1 ",") { print $2 }' | sort -n | paste -sd' '; }
for _ in $(seq 1 40); do [ "$(site_factors | wc -w)" = 3 ] && break; sleep 1; done
is "$(site_factors)" "1000 2000 3000" \
	"sprio shows each task's own site factor (records $records)" ||
	diag "$(sprio -o '%i %S %Y'; squeue -t all -o '%i %A %T %r %Q'; scontrol show job "$arr")"
scancel "$arr" "$blocker"
# (their ends free nobody's places in max-running before the next array)
cluster_wait_for 15 sh -c "$jobtap job ${arr}_3 | grep -q INACTIVE"

# No decision differs: the tasks stay in the array's record, shown as a
# range, and Slurm's throttle (%1) holds.
arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null --array=1-4%1 --wrap 'sleep 2')
cluster_wait_for 15 sh -c "squeue -h -j $arr -o %T | grep -q RUNNING"
like "$(squeue -h -j "$arr" -t pending -o %i)" "^${arr}_\\[[23]-4%1\\]$" \
	"tasks no plugin treats apart stay one pending range"
is "$(squeue -h -r -j "$arr" -t pending -o %A | sort -u)" "$arr" \
	"in the array's one record"
unlike "$(cluster_log)" "JobId=${arr}_[0-9]+\\([0-9]+\\) split off" "none was split off"
is "$(most_running nobody "$arr" 4 40)" 1 "the array's own throttle %1 still holds"
is "$(squeue -h -t all -j "$arr" -o %T | sort | uniq -c | awk '{print $1, $2}')" "4 COMPLETED" \
	"and all four tasks ran"

# A pending task cancelled alone (it has no record of its own) ends in
# jobtap at the next sweep, and is forgotten with it (Slurm has no record
# of it to purge later).
arr=$(as_nobody sbatch --parsable -c 2 -t 5 -o /dev/null -J watch --array=1-3 --wrap 'sleep 30')
cluster_wait_for 15 sh -c "squeue -h -j $arr -o %T | grep -q RUNNING"
scancel "${arr}_3"
cluster_wait_for 15 sh -c "grep -q 'task ${arr}_3 inactive' '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "task ${arr}_3 inactive" "scancel ARRAY_TASK of a pending task ends it in jobtap"
unlike "$(cluster_log)" "task ${arr}_2 inactive" "its sibling is not ended"
like "$("$jobtap" job "${arr}_2")" "State +SCHED" "and still waits"
scancel "$arr"

# scontrol update of the array is a job.update of each pending task; of
# one task (Slurm splits it off), of that task alone.
blocker=$(sbatch --parsable -c 2 -t 5 -o /dev/null --wrap 'sleep 120')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"
arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null -J upd --array=1-3 --wrap 'sleep 30')
cluster_wait_for 10 sh -c "$jobtap job ${arr}_3 | grep -q SCHED"
duration() { "$jobtap" job "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobspec"]["attributes"]["system"]["duration"])'; }
scontrol update jobid="$arr" TimeLimit=4
is "$(duration "${arr}_1") $(duration "${arr}_2") $(duration "${arr}_3")" "240.0 240.0 240.0" \
	"scontrol update of the array: every pending task's jobspec"
scontrol update jobid="${arr}_2" TimeLimit=3
is "$(duration "${arr}_1") $(duration "${arr}_2") $(duration "${arr}_3")" "240.0 180.0 240.0" \
	"scontrol update of task 2: task 2's alone"
limits() { for t in 1 2 3; do scontrol show job "${arr}_$t" | sed -n 's/.*\(TimeLimit=[^ ]*\).*/\1/p'; done | paste -sd' '; }
is "$(limits)" "TimeLimit=00:04:00 TimeLimit=00:03:00 TimeLimit=00:04:00" \
	"as in Slurm (task 2 split off by scontrol)"

# Across a slurmctld restart every task keeps its jobtap state: the
# tasks still in the array's record, the one split off, and their ids.
cluster_restart_slurmctld || bail_out "slurmctld did not come back"
cluster_wait_for 15 sh -c "$jobtap job ${arr}_3 | grep -q SCHED"
is "$(duration "${arr}_1") $(duration "${arr}_2") $(duration "${arr}_3")" "240.0 180.0 240.0" \
	"after a restart each task is the job it was"
is "$(limits)" "TimeLimit=00:04:00 TimeLimit=00:03:00 TimeLimit=00:04:00" \
	"and Slurm's records are as they were"

# An update of the array that the plugin refuses for task 3 leaves task 1,
# in the same record, unchanged too (each task is asked before any
# changes); task 2, split off, is a record of its own, as in Slurm.
scontrol update jobid="$arr" TimeLimit=20 >/dev/null 2>&1
like "$(cluster_log)" "rejected: .*task three keeps a short limit" "the plugin refused the update for task 3"
is "$(duration "${arr}_1") $(duration "${arr}_3")" "240.0 240.0" \
	"and neither task 1 nor task 3 took it in jobtap"
is "$(limits | cut -d' ' -f1,3)" "TimeLimit=00:04:00 TimeLimit=00:04:00" "nor in Slurm"
scancel "$blocker"
cluster_wait_for 15 sh -c "[ \$(squeue -h -t running -j $arr -o %i | wc -l) = 2 ]"

# scontrol requeue of a running task: the task ends in jobtap and starts
# anew as the same task.
running=$(squeue -h -t running -j "$arr" -o %i | sort | head -n 1)
out=$(scontrol requeue "$running" 2>&1)
ok $? "scontrol requeue $running" || diag "$out"
cluster_wait_for 30 sh -c "grep -q 'jobtap: JobId=$running([0-9]*) was requeued: it starts anew in jobtap' '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "jobtap: JobId=$running\\([0-9]+\\) was requeued: it starts anew in jobtap" \
	"a requeued task starts anew in jobtap"
like "$("$jobtap" job "$running")" "State +(DEPEND|PRIORITY|SCHED)" "as the same task, pending again"
scancel "$arr"

# An array larger than the agent binds in one pass (2000 tasks): fenced
# until every task is a job, then Slurm's again.
blocker=$(sbatch --parsable -c 2 -t 5 -o /dev/null --wrap 'sleep 120')
arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null --array=0-2999 --wrap true)
cluster_wait_for 60 sh -c "$jobtap job ${arr}_2999 >/dev/null 2>&1"
like "$("$jobtap" job "${arr}_2999")" "State +SCHED" "the 3000th task is a job too"
like "$("$jobtap" job "${arr}_0")" "State +SCHED" "as is the first"
cluster_wait_for 10 sh -c "! scontrol show job $arr | grep -q EligibleTime=2038"
unlike "$(scontrol show job "$arr" | grep EligibleTime | head -n 1)" "EligibleTime=2038" \
	"and the array's record is no longer fenced"
is "$(squeue -h -r -j "$arr" -t pending -o %A | sort -u)" "$arr" "its tasks still one record"
scancel "$arr"
# (its 3000 tasks end in jobtap first, or nobody's max-running limit of
# 10000 would hold back the last tasks of the next array)
cluster_wait_for 60 sh -c "$jobtap job ${arr}_2999 | grep -q INACTIVE"

# A restart while the agent is making an array's tasks jobs: the tasks
# bound before it are restored, the rest are made jobs after it, each
# once, and the record is fenced until all are. Whether slurmctld stops
# before the agent has made all 9000 (a second or so of passes) is a race:
# an attempt that loses it is cancelled and made again.
midway=1
for attempt in 1 2 3 4 5; do
	arr=$(as_nobody sbatch --parsable -c 1 -t 5 -o /dev/null --array=0-8999 --wrap true)
	cluster_wait_for 30 sh -c "$jobtap job ${arr}_0 >/dev/null 2>&1"
	if ! "$jobtap" job "${arr}_8999" >/dev/null 2>&1; then
		cluster_restart_slurmctld || bail_out "slurmctld did not come back"
		grep -q "jobtap: JobId=${arr}_\*: slurmctld stopped while its tasks were made jobs" \
			"$CLUSTER_DIR/log/slurmctld.log" && { midway=0; break; }
	fi
	diag "attempt $attempt: the agent made every task a job before slurmctld stopped"
	scancel "$arr"
	cluster_wait_for 60 sh -c "$jobtap job ${arr}_8999 | grep -q INACTIVE"
done
ok $midway "slurmctld stops before the last of 9000 tasks is a job (attempt $attempt)"
like "$(cluster_log)" "jobtap: JobId=${arr}_\*: slurmctld stopped while its tasks were made jobs: the rest are made jobs now" \
	"after the restart the agent goes on with the array"
cluster_wait_for 60 sh -c "$jobtap job ${arr}_8999 >/dev/null 2>&1"
like "$("$jobtap" job "${arr}_8999")" "State +SCHED" "the last task is a job"
events() { "$jobtap" job "$1" --json | python3 -c "import json,sys; print(' '.join(e['name'] for e in json.load(sys.stdin)['eventlog']))"; }
is "$(events "${arr}_0")" "submit validate depend priority flux-restart priority" \
	"the first task, a job before the restart, is restored from its kept events"
is "$(events "${arr}_8999")" "submit validate depend priority" "the last, a job after it, is made one once"
cluster_wait_for 20 sh -c "! scontrol show job $arr | grep -q EligibleTime=2038"
unlike "$(scontrol show job "$arr" | grep EligibleTime | head -n 1)" "EligibleTime=2038" \
	"then the array's record is no longer fenced"
scancel "$arr" "$blocker"

rm -f "$policy"
cluster_finish
done_testing
