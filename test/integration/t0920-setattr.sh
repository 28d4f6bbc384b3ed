#!/usr/bin/env bash
# --setattr: sbatch, srun and salloc take Flux's
# `--setattr=KEY=VALUE` through spank_jobtap.so (plugstack.conf), and the
# job's jobspec has attributes.system.KEY, from the submission and from the
# record alike, for a plugin to decide on (setattr-policy.so). A bad option
# stops the command with spank_jobtap's message; a bad set that reaches
# slurmctld anyway is logged and left out, never a rejection.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/setattr-policy.so" } ]

[slurm-jobtap]
log-jobspec = true
TOML
# required: a plugin Slurm cannot load fails the commands loudly. The
# relative name is found in PluginDir (the build's staged copies, or Slurm's
# own dir for JOBTAP_BUILD_DIR=installed); spank-raw.so, a test plugin, comes
# after it and so has the last word.
cluster_start --jobtap-conf "$conf" --plugstack "required spank_jobtap.so
required $JOBTAP_BUILD_DIR/test/integration/spank-raw.so" ||
	bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock

# The jobspec slurmctld logged for job ID from its record, and for the
# submission named NAME (each job here has its own name).
recorded() {
	cluster_wait_for 20 sh -c "grep -q 'JobId=$1 jobspec from record' '$CLUSTER_DIR/log/slurmctld.log'"
	cluster_log | sed -n "s/.*jobtap: JobId=$1 jobspec from record //p" | tail -n 1
}
submitted() {
	cluster_log | sed -n 's/.*jobtap: jobspec of a submission by uid [0-9]*: //p' |
		grep -F "\"name\":\"$1\"" | tail -n 1
}
# attributes.system[KEY] of a jobspec, as JSON ("null" when absent).
attr() {
	python3 -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1])["attributes"]["system"].get(sys.argv[2])))' "$1" "$2"
}
# The same from the runtime (jobtap job ID --json).
spec_attr() {
	"$jobtap" job "$1" --json |
		python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["jobspec"]["attributes"]["system"].get(sys.argv[1])))' "$2"
}

out=$(sbatch --help 2>&1)
like "$out" '--setattr=KEY\[=VALUE\]' "sbatch --help lists --setattr under the plugins' options"

# A policy on the attribute: rejected with the plugin's message.
out=$(sbatch -o /dev/null -J deny-1 --setattr=system.bank-check=deny --wrap true 2>&1)
ok $((!$?)) "sbatch --setattr=system.bank-check=deny is rejected"
like "$out" '^sbatch: error: setattr-policy: bank-check denies this job$' \
	"sbatch shows the plugin's message"

# No prefix means system.KEY; a JSON value arrives typed; a key alone is 1.
id=$(sbatch --parsable -o /dev/null -H -t 5 -J ok-1 --setattr=bank-check=ok \
	--setattr=system.limit=5 --setattr=flag --setattr='tags=["a","b"]' --wrap true)
ok $? "sbatch --setattr=bank-check=ok is accepted" || bail_out "no job to look at"
rec=$(recorded "$id")
sub=$(submitted ok-1)
is "$(attr "$rec" bank-check)" '"ok"' 'the jobspec has attributes.system["bank-check"] = "ok"'
is "$(attr "$rec" limit)" 5 "--setattr=system.limit=5 arrives as the number 5"
is "$(attr "$rec" flag)" 1 "--setattr=flag (no value) is 1, as in flux"
is "$(attr "$rec" tags)" '["a", "b"]' "a JSON array stays an array"
is "$rec" "$sub" "the submission and the job record give the same jobspec"
is "$(spec_attr "$id" bank-check)" '"ok"' "jobtap job --json shows it too"
cluster_wait_for 10 sh -c "grep -q 'setattr-policy: job.new id=$id ' '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "setattr-policy: job.new id=$id limit=5\$" "the plugin sees it in job.new"
is "$(attr "$rec" duration)" 300.0 "the Slurm job's own keys are untouched (-t 5 is duration 300)"

# The batch script's #SBATCH lines, overridden by the command line.
script=$CLUSTER_DIR/setattr-job.sh
printf '#!/bin/sh\n#SBATCH --setattr=bank-check=script\n#SBATCH --setattr=from-script=1\ntrue\n' >"$script"
id=$(sbatch --parsable -o /dev/null -H -J script-1 --setattr=bank-check=cmdline "$script")
rec=$(recorded "$id")
is "$(attr "$rec" from-script)" 1 "#SBATCH --setattr lines count"
is "$(attr "$rec" bank-check)" '"cmdline"' "the command line wins over the script, as for any option"

# ^KEY=FILE: the value is the JSON in FILE.
json=$CLUSTER_DIR/setattr-policy.json
echo '{"max-nodes": 2}' >"$json"
id=$(sbatch --parsable -o /dev/null -H -J file-1 --setattr="^policy=$json" --wrap true)
is "$(attr "$(recorded "$id")" policy)" '{"max-nodes": 2}' "--setattr=^policy=FILE takes the JSON in FILE"

# srun and salloc: the same option, the same policy.
out=$(srun -t 1 -J deny-2 --setattr=bank-check=deny true 2>&1)
ok $((!$?)) "srun --setattr=bank-check=deny is rejected"
like "$out" '^srun: error: setattr-policy: bank-check denies this job$' "srun shows the plugin's message"
# shellcheck disable=SC2016 # $SLURM_JOB_ID is the job's, expanded in it
id=$(srun -t 1 -J ok-2 --setattr=bank-check=ok --setattr=limit=6 sh -c 'echo $SLURM_JOB_ID' 2>/dev/null)
ok $? "srun --setattr=bank-check=ok runs" || diag "srun printed '$id'"
rec=$(recorded "$id")
is "$(attr "$rec" bank-check)" '"ok"' "srun's job has bank-check"
is "$(attr "$rec" limit)" 6 "... and limit as a number"
out=$(salloc -t 1 -J deny-3 --setattr=bank-check=deny true 2>&1 </dev/null)
ok $((!$?)) "salloc --setattr=bank-check=deny is rejected"
like "$out" '^salloc: error: setattr-policy: bank-check denies this job$' "salloc shows the plugin's message"
# shellcheck disable=SC2016
id=$(salloc -t 1 -J ok-3 --setattr=bank-check=ok sh -c 'echo $SLURM_JOB_ID' 2>/dev/null </dev/null)
ok $? "salloc --setattr=bank-check=ok runs" || diag "salloc printed '$id'"
is "$(attr "$(recorded "$id")" bank-check)" '"ok"' "salloc's job has bank-check"

# Options spank_jobtap refuses stop the command before anything is sent.
before=$(cluster_log | grep -c 'jobspec of a submission')
out=$(sbatch -o /dev/null --setattr=user.x=1 --wrap true 2>&1)
ok $((!$?)) "sbatch --setattr=user.x=1 fails"
like "$out" '^sbatch: error: --setattr=user.x=1: only system attributes \(system.KEY, or KEY\) reach the jobspec of a Slurm job$' \
	"with spank_jobtap's message"
out=$(srun -t 1 --setattr=duration=60 true 2>&1)
ok $((!$?)) "srun --setattr=duration=60 fails"
like "$out" "^srun: error: --setattr=duration=60: attributes.system.duration is the Slurm job's own: set it with --time\$" \
	"a key the Slurm job gives names the option to use"
out=$(salloc -t 1 --setattr==5 true 2>&1 </dev/null)
ok $((!$?)) "salloc --setattr==5 fails"
like "$out" '^salloc: error: --setattr==5: an empty key or key part$' "an empty key is refused"
like "$out" '^salloc: error: Invalid --setattr argument: =5$' "(and Slurm names the option)"
is "$(cluster_log | grep -c 'jobspec of a submission')" "$before" "none of them reached slurmctld"

# A set that reaches slurmctld without spank_jobtap's checks (spank-raw.so
# passes --raw-setattr as it is, as a hand-made request could): logged, left
# out, and the job goes on.
id=$(sbatch --parsable -o /dev/null -H -t 1 -J crafted-1 --raw-setattr='not json' --wrap true)
ok $? "a job with a set that is not JSON is accepted"
like "$(cluster_log)" 'jobtap: --setattr of a submission by uid 0: SLURM_JOBTAP_SETATTR is not a JSON object \(.*\): ignored' \
	"slurmctld logs why the set is ignored"
is "$(recorded "$id")" "$(submitted crafted-1)" \
	"its jobspec, without the set, is the same from its record as from its submission"
id=$(sbatch --parsable -o /dev/null -H -t 1 -J crafted-2 --raw-setattr='{"duration":5,"crafted":1}' --wrap true)
rec=$(recorded "$id")
is "$(attr "$rec" duration)" 60.0 "a crafted duration is left out: the job's own stays"
is "$(attr "$rec" crafted)" 1 "the rest of the set is merged"
like "$(cluster_log)" "jobtap: JobId=$id --setattr: SLURM_JOBTAP_SETATTR keys the Slurm job gives or --setattr cannot make, ignored: \"duration\"" \
	"the dropped key is logged with the job"

# A batch job's environment does not pass its options on: an sbatch in it
# submits a job of its own, with no attribute of the parent's.
child=$CLUSTER_DIR/child.id
parent=$(sbatch --parsable -o /dev/null -t 2 -J parent-1 --setattr=limit=7 \
	--wrap "sbatch --parsable -o /dev/null -H -t 1 -J child-1 --wrap true >$child")
cluster_wait_for 30 test -s "$child"
id=$(cat "$child" 2>/dev/null)
ok "$([ -n "$id" ]; echo $?)" "the parent job submitted a child" || diag "parent $parent: $(scontrol show job "$parent" 2>&1)"
is "$(attr "$(recorded "$parent")" limit)" 7 "the parent has limit 7"
is "$(attr "$(recorded "$id")" limit)" null "the child does not inherit it"

ok "$(kill -0 "$(cluster_ctld_pid)"; echo $?)" "slurmctld is alive"
cluster_finish
done_testing
