#!/usr/bin/env bash
# jobtap-run with conf/examples/jobtap.conf: decisions printed exactly.
. "$(dirname "$0")/../lib/tap.sh"
run=$JOBTAP_BUILD_DIR/src/jobtap-run/jobtap-run
conf=$(cd "$(dirname "$0")/../../conf/examples" && pwd)/jobtap.conf

out=$("$run" -C "$conf" -p short -t 2:00:00 2>&1)
is "$?" 1 "a rejected job exits 1"
is "$out" "job 1: rejected: queue short: duration 7200s exceeds the limit of 3600s" "limits.lua rejects"
out=$("$run" -C "$conf" --default-queue debug -t 10 -n 2 2>&1)
is "$?" 0 "an accepted job exits 0"
is "$out" 'job 1: accepted
job 1: update attributes.system.bank = "general"
job 1: update attributes.system.queue = "batch"
job 1: priority 16020
job 1: state SCHED, priority 16020, dependencies []' "defaults and priority"
# The runtime's end reports what the jansson pool held (at info: -v).
out=$("$run" -v -C "$conf" --default-queue debug -t 10 2>&1 >/dev/null)
like "$out" 'jobtap-run: info: jansson pool: (off|holds [0-9]+ KiB \([0-9]+ blocks\) of [0-9]+ MiB reserved; [0-9]+ KiB in use, high-water [0-9]+ KiB; 0 allocations past the range)' \
	"the pool's report at the runtime's end"
script=$(mktemp)
cat >"$script" <<S
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
run 1
finish 1
inactive 1
S
out=$("$run" -C "$conf" -f "$script" 2>&1)
like "$out" 'job 5: held: jobtap: max-running-jobs' "the fifth job of a user waits"
like "$out" 'job 5: released' "and is released when the first ends"
like "$out" 'job 1: state INACTIVE' "states are printed"
rm -f "$script"
# The jobspec is slurmctld's (src/jobspec builds both): duration a real.
out=$(cd /tmp && "$run" --print-jobspec -N 1 -n 2 -t 1:30 -p debug -A MyAcct -D /tmp \
	--exclusive --gpus-per-task=1 -d afterok:5:6 2>&1 | sed -n 's/^job 1: jobspec //p')
is "$out" '{"attributes":{"system":{"bank":"myacct","cwd":"/tmp","dependencies":[{"scheme":"afterok","value":"5"},{"scheme":"afterok","value":"6"}],"duration":120.0,"job":{"name":"wrap"},"queue":"debug","slurm":{"dependency":"afterok:5,afterok:6","exclusive":"node","tres_per_task":"gres:gpu:1"}}},"resources":[{"count":1,"exclusive":true,"type":"node","with":[{"count":2,"label":"task","type":"slot","with":[{"count":1,"type":"core"},{"count":1,"type":"gpu"}]}]}],"tasks":[{"command":["wrap"],"count":{"per_slot":1},"slot":"task"}],"version":1}' \
	"--print-jobspec: the jobspec slurmctld builds (duration in whole minutes, a real)"
out=$(cd /tmp && "$run" --print-jobspec -N 1-2 -n 2 -t 10 --time-min=5 --mem=1G \
	--mail-type=end,begin --mail-user=ops@example.com -o out.txt -e /e --exclusive=user \
	--cpus-per-gpu=2 --mem-per-gpu=1k --gpus-per-socket=1 -D /tmp 2>&1 | sed -n 's/^job 1: jobspec //p')
is "$out" '{"attributes":{"system":{"cwd":"/tmp","duration":600.0,"job":{"name":"wrap"},"shell":{"options":{"output":{"stderr":{"path":"/e","type":"file"},"stdout":{"path":"/tmp/out.txt","type":"file"}}}},"slurm":{"cpus_per_tres":"gres:gpu:2","exclusive":"user","mail_type":"BEGIN,END","mail_user":"ops@example.com","max_nodes":2,"mem_per_node":1024,"mem_per_tres":"gres:gpu:1","time_min":300.0,"tres_per_socket":"gres:gpu:1"}}},"resources":[{"count":1,"type":"node","with":[{"count":2,"label":"task","type":"slot","with":[{"count":1,"type":"core"}]}]}],"tasks":[{"command":["wrap"],"count":{"per_slot":1},"slot":"task"}],"version":1}' \
	"the wider map: a node range, time_min, memory, mail, output under -D, exclusive=user, TRES"
out=$(cd /tmp && "$run" --print-jobspec --mem-per-cpu=0 --mail-type=fail --begin=now+1hour 2>&1 | sed -n 's/^job 1: jobspec //p')
like "$out" '"mem_per_node":0[,}]' "--mem-per-cpu=0 is --mem=0, as slurmctld"
like "$out" "\"mail_type\":\"FAIL\",\"mail_user\":\"$(id -un)\"" "no --mail-user mails the user"
like "$out" '"begin_time":[0-9]{10},' "--begin=now+1hour is epoch seconds"
out=$(cd /tmp && "$run" --print-jobspec --default-time 2:00:00 2>&1 | sed -n 's/^job 1: jobspec //p')
like "$out" '"cwd":"/tmp",' "no -D is the current directory, as sbatch sends it"
like "$out" '"duration":7200.0,' "no -t is --default-time"

# Updates: the runtime keeps the updated jobspec for job.new, and an update
# slurmctld would refuse is refused here with slurmctld's message.
dir=$(mktemp -d)
cat >"$dir/update.lua" <<'LUA'
local jobtap = require "jobtap"
jobtap.on ("job.validate", function (job)
    if jobtap.conf.key then job:update { [jobtap.conf.key] = jobtap.conf.value } end
end)
jobtap.on ("job.state.priority", function (job)
    job:set_priority (job.queue == "batch" and 7 or 3)
end)
LUA
update_run() {
	printf '[job-manager]\nplugins = [ { load = "update.lua", conf = { %s } } ]\n' "$1" >"$dir/jobtap.conf"
	"$run" -C "$dir/jobtap.conf" -p debug -t 10 2>&1
}
out=$(update_run 'key = "attributes.system.queue", value = "batch"')
is "$?" 0 "an update with a Slurm equivalent is accepted"
like "$out" 'job 1: priority 7' "job.new sees the updated jobspec"
out=$(update_run '')
like "$out" 'job 1: priority 3' "... and without the update, the submitted one"
out=$(update_run 'key = "attributes.system.frobnicate", value = "x"')
is "$?" 1 "an update with no Slurm equivalent rejects the job"
is "$out" "job 1: rejected: jobtap: jobspec update of attributes.system.frobnicate has no Slurm equivalent" \
	"with slurmctld's message"
out=$(update_run 'key = "attributes.system.duration", value = "soon"')
is "$out" 'job 1: rejected: jobtap: jobspec update of attributes.system.duration: invalid value "soon"' \
	"a value of the wrong type too"
# resources and tasks: what Slurm can express is a new request, the rest
# is refused with slurmctld's message.
slot='{ type = "slot", count = 2, label = "task", with = [ { type = "core", count = 2 } ] }'
out=$(update_run "key = \"resources\", value = [ $slot ]")
is "$?" 0 "a resources update Slurm can express is accepted (-n 2 -c 2)"
like "$out" 'job 1: update resources = \[\{.*"type":"slot"' "... and applied"
gpu='{ type = "slot", count = 1, label = "task", with = [ { type = "core", count = 1 }, { type = "gpu", count = 1 } ] }'
out=$(update_run "key = \"resources\", value = [ $gpu ]")
is "$?" 1 "a GPU Slurm was not asked for rejects the job"
like "$out" '^job 1: rejected: jobtap: jobspec update of resources: no Slurm request has this shape' \
	"... with slurmctld's message"
# --setattr as spank_jobtap.so reads it, for a policy that decides on it.
cat >"$dir/setattr.lua" <<'LUA'
local jobtap = require "jobtap"
jobtap.on ("job.validate", function (job)
    local v = job.jobspec.attributes.system["bank-check"]
    if v == "deny" then return job:reject ("bank-check denies this job") end
end)
LUA
printf '[job-manager]\nplugins = [ { load = "setattr.lua" } ]\n' >"$dir/jobtap.conf"
out=$("$run" -C "$dir/jobtap.conf" --setattr=bank-check=deny 2>&1)
is "$out" "job 1: rejected: bank-check denies this job" "--setattr=bank-check=deny: a policy decides on it"
out=$(cd /tmp && "$run" -C "$dir/jobtap.conf" --print-jobspec -t 1 --setattr=system.bank-check=ok \
	--setattr=limit=5 --setattr=flag --setattr=a.b='[1]' 2>&1 | sed -n 's/^job 1: jobspec //p')
is "$out" '{"attributes":{"system":{"a":{"b":[1]},"bank-check":"ok","cwd":"/tmp","duration":60.0,"flag":1,"job":{"name":"wrap"},"limit":5}},"resources":[{"count":1,"label":"task","type":"slot","with":[{"count":1,"type":"core"}]}],"tasks":[{"command":["wrap"],"count":{"per_slot":1},"slot":"task"}],"version":1}' \
	"--setattr: attributes.system.KEY, JSON values typed, a key alone 1"
out=$("$run" --setattr=duration=5 2>&1)
is "$?" 2 "--setattr of a key the Slurm job gives is a usage error"
is "$out" "jobtap-run: --setattr=duration=5: attributes.system.duration is the Slurm job's own: set it with --time" \
	"... with spank_jobtap's message"
rm -rf "$dir"
out=$("$run" -C /nonexistent.conf 2>&1)
is "$?" 2 "a bad config exits 2"
done_testing
