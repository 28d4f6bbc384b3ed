#!/usr/bin/env bash
# Lua errors, wrong return values, runaway loops, memory hogs and
# forbidden functions never hurt slurmctld: the user gets a message that
# leaks nothing, the log has policy, topic, job and traceback.
. "$(dirname "$0")/../../lib/tap.sh"
. "$(dirname "$0")/../../lib/cluster.sh"

pol=$(cd "$(dirname "$0")/policies" && pwd)
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [
  { load = "$pol/lenient.lua", conf = { lua = { on-error = "accept" } } },
  { load = "$pol/faulty.lua", conf = { lua = { instruction-limit = 100000, memory-limit-mb = 16, pattern-step-limit = 50000 } } },
]
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"

msg="job rejected: policy 'faulty.lua' failed; contact your administrator"
submit() { sbatch -o /dev/null -t 5 -J "$1" --wrap true 2>&1 | head -n 1; }
is "$(submit boom)" "sbatch: error: $msg" "a Lua error rejects the job with a plain message"
log=$(cluster_log)
like "$log" "lua: faulty.lua: job.validate: job \(at submit\) [0-9]+: faulty.lua:[0-9]+: boom" \
	"the log names policy, topic, job and the error"
like "$log" "stack traceback:" "with a traceback"
is "$(submit nilidx)" "sbatch: error: $msg" "indexing nil: same"
like "$(cluster_log)" "faulty.lua:[0-9]+: attempt to index a nil value" "logged"
is "$(submit loop)" "sbatch: error: $msg" "a runaway loop is stopped"
like "$(cluster_log)" "instruction limit of 100000 exceeded" "by the instruction budget"
is "$(submit pcall-loop)" "sbatch: error: $msg" "pcall cannot swallow the budget error"
is "$(submit ret)" "sbatch: error: $msg" "a wrong return value rejects"
like "$(cluster_log)" "handler returned a number \(expected nothing, true, or false and a message\)" "and is logged"
is "$(submit exec)" "sbatch: error: $msg" "os.execute is off"
like "$(cluster_log)" "os.execute is disabled in jobtap policies" "and says so in the log"
is "$(submit exit)" "sbatch: error: $msg" "os.exit cannot end slurmctld"
is "$(submit hog)" "sbatch: error: $msg" "a memory hog hits the memory limit"
like "$(cluster_log)" "faulty.lua: job.validate: .*not enough memory" "logged as out of memory"
start=$(date +%s%N)
is "$(submit bigcat)" "sbatch: error: $msg" "a loop of big concatenations is stopped"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -lt 5000 ]
ok $? "at once (sbatch answered in $ms ms)"
like "$(cluster_log)" "faulty.lua: job.validate: .*instruction limit of 100000 exceeded \(memory made counts, an instruction per 16 bytes; see docs/lua.md\)" \
	"by the instruction budget, which counts memory"
is "$(submit pattern)" "sbatch: error: pattern too costly: more than 50000 matching steps on a subject of 30000 bytes" \
	"a backtracking pattern is refused with an error the policy can catch"
is "$(submit badprio)" "sbatch: error: $msg" "a bad argument to a job method"
like "$(cluster_log)" "priority must be an integer 0..4294967295" "is logged"
is "$(submit no)" "sbatch: error: no, thank you" "return false, msg rejects with msg"
is "$(submit reject)" "sbatch: error: rejected on purpose" "job:reject(msg) likewise"
id=$(sbatch --parsable -o /dev/null -t 5 -J lenient-boom --wrap true 2>&1)
like "$id" '^[0-9]+$' "with on-error = accept a failing policy lets the job through"
like "$(cluster_log)" "lua: lenient.lua: job.validate: .*lenient boom" "the error is still logged"
id=$(sbatch --parsable -o /dev/null -t 5 -J fine --wrap true 2>&1)
like "$id" '^[0-9]+$' "slurmctld is alive and accepts a good job"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(squeue -h -j "$id" -t all -o %T)" COMPLETED "which runs"
unlike "$(cluster_log)" "$pol" "no log line leaks the policy's directory"

cluster_finish
done_testing
