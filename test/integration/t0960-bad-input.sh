#!/usr/bin/env bash
# Bad input never hurts slurmctld or loses a job (docs/reliability.md,
# "Bad inputs"): a plugin that answers garbage, wrong types and huge values,
# updates keys Slurm has no field for, raises exceptions in its callbacks and
# calls the API from its own thread (bad-input.so); oversized submissions; a
# hostile jobtap.conf and a plugin whose init fails, at reconfigure and at
# `jobtap load`; a runaway Lua priority policy. After each: the exact message
# the user gets, the exact log line, slurmctld up, the earlier jobs intact.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

plugin=$JOBTAP_BUILD_DIR/test/integration/bad-input.so
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
runaway=$(mktemp --suffix=.lua)
cat >"$runaway" <<'LUA'
-- a priority policy that never returns for "spin" jobs
local jobtap = require "jobtap"
local function priority (job)
  if job.name == "spin" then while true do end end
end
jobtap.on ("job.state.priority", priority)
jobtap.on ("job.priority.get", priority)
LUA
chmod a+r "$runaway"
conf=$(mktemp)
good_conf() {
	cat <<TOML
[job-manager]
plugins = [
  { load = "$plugin" },
  { load = "$runaway", conf = { lua = { instruction-limit = 100000 } } },
]
TOML
}
good_conf >"$conf"
cluster_start --jobtap-conf "$conf" --ctld-daemon || bail_out "cluster did not start"
rm -f "$conf"
conf=$CLUSTER_DIR/jobtap.conf
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
restarts=0
[ "$(cluster_slurm_release)" -ge 2411 ] && restarts=1

log() { cluster_log; }
# A log line matching the ERE, shown cut if found; the log is not dumped
# when none is (a failure here must not flood the output).
logged() {
	local hit
	hit=$(cluster_log | grep -E -- "$1" | tail -n 1 | head -c 300)
	ok $([ -n "$hit" ]; echo $?) "$2" || diag "no log line matches: $1"
}
alive() { kill -0 "$(cluster_ctld_pid)" 2>/dev/null; }
submit() { sbatch -o /dev/null -t 5 -J "$1" "${@:2}" --wrap true 2>&1; }
held() { sbatch --parsable -o /dev/null -t 5 -H -J "$1" --wrap true; }
state() { squeue -h -j "$1" -t all -o %T; }

# Jobs submitted first, held, that every later step must leave intact:
# pending in Slurm, still held by their user, and known to jobtap.
keep=()
for i in 1 2 3; do keep+=("$(held keep-$i)"); done
intact() {
	local id n=0
	for id in "${keep[@]}"; do
		# (24.11: a reload is a new slurmctld, whose jobs jobtap learns on
		# the adapter's first pass, within a second)
		cluster_wait_for 10 "$jobtap" job "$id" >/dev/null 2>&1
		[ "$(squeue -h -j "$id" -t all -o '%T %r')" = "PENDING JobHeldUser" ] &&
			"$jobtap" job "$id" >/dev/null 2>&1 && n=$((n + 1))
	done
	ok $((! (n == ${#keep[@]}) )) "$1: slurmctld is up and the held jobs are intact" \
		|| diag "$(squeue -t all; "$jobtap" job "${keep[0]}" 2>&1 | head -c 600)"
	alive
	ok $? "$1: slurmctld's process is alive"
}
like "${keep[*]}" '^[0-9]+ [0-9]+ [0-9]+$' "three held jobs to keep"

# -- a plugin's garbage, wrong types and huge values ----------------------
# (outputs are cut before a check prints them: a failure must not flood)
short() { head -c 400 <<<"$1"; }
out=$(submit huge-update)
like "$(short "$(head -n 1 <<<"$out")")" '^sbatch: error: jobtap: jobspec update of attributes.system.duration: invalid value "x{63}\.\.\. \(102402 bytes\)$' \
	"a 100 kB jobspec update: rejected, its value cut in the user's message"
ok $(( $(wc -c <<<"$out") > 400 )) "the user's whole answer is short ($(wc -c <<<"$out") bytes)"
line=$(log | grep 'rejected a job of user .*jobspec update of attributes.system.duration')
like "$(short "$line")" 'jobtap: rejected a job of user 0: jobtap: jobspec update of attributes.system.duration: invalid value "x{63}\.\.\. \(102402 bytes\)$' \
	"the log line is cut the same way"
intact "huge update"

out=$(submit huge-reject)
like "$(short "$(head -n 1 <<<"$out")")" '^sbatch: error: no: x{154}\+$' \
	"a 10 kB rejection message reaches the user cut to Flux's 160 bytes, marked +"
ok $(( $(wc -c <<<"$out") > 400 )) "the user's whole answer is short ($(wc -c <<<"$out") bytes)"
like "$(short "$(log | grep 'rejected a job of user 0: no: ' | tail -n 1)")" 'rejected a job of user 0: no: x{154}\+$' \
	"and so is its log line"

out=$(submit errmsg-number)
is "$(short "$(head -n 1 <<<"$out")")" "sbatch: error: rejected by job-manager plugin" \
	"an OUT errmsg that is a number: Flux's default message"
out=$(submit errmsg-huge)
like "$(short "$(head -n 1 <<<"$out")")" '^sbatch: error: x+$' "an OUT errmsg of 100 kB packed by hand"
ok $(( $(wc -c <<<"$out") > 700 )) "is cut too ($(wc -c <<<"$out") bytes in all)"

id=$(submit raise-validate --parsable)
like "$id" '^[0-9]+$' "a fatal exception raised in job.validate does not reject the job"
logged "error: jobtap: bad-input: raise in job.validate: Invalid argument" \
	"the call fails (EINVAL: there is no job yet) and the plugin can say so"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "the job runs (rejecting is flux_jobtap_reject_job's job)"

id=$(submit prio-negative --parsable)
like "$id" '^[0-9]+$' "a job whose plugin answers a negative priority is taken"
cluster_wait_for 10 sh -c "squeue -h -j $id -o %r | grep -q jobtap"
is "$(squeue -h -j "$id" -o '%T %r')" "PENDING jobtap: priority unavailable" \
	"and waits as its priority is unavailable"
logged "jobtap: job $id: job.state.priority: priority -5 is out of range \\(0..4294967295\\); ignored" \
	"the negative priority is logged"
intact "negative priority"

id=$(submit prio-huge --parsable)
cluster_wait_for 10 sh -c "'$jobtap' job $id --json | grep -q '\"priority\": 1099511627776'"
like "$("$jobtap" job "$id" --json)" '"priority": 1099511627776' "a priority of 2^40 is the job's jobtap priority"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "and Slurm runs the job (the site factor is clamped: t0210)"

id=$(submit garbage-annotations --parsable)
cluster_wait_for 10 sh -c "grep -q 'job $id: job.state.depend: annotations must be an object' '$CLUSTER_DIR/log/slurmctld.log'"
logged "jobtap: job $id: job.state.depend: annotations must be an object" \
	"annotations that are a number are logged"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "and the job runs"

id=$(submit unknown-key --parsable)
cluster_wait_for 10 sh -c "grep -q 'JobId=$id.*update cannot be made in Slurm' '$CLUSTER_DIR/log/slurmctld.log'"
logged "jobtap: JobId=$id: bad-input.so's update cannot be made in Slurm: jobtap: jobspec update of attributes.system.no-such-key has no Slurm equivalent" \
	"a post-submit update of an unknown key is logged"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "and the job runs unchanged"

id=$(submit huge-comment --parsable)
cluster_wait_for 10 sh -c "grep -q 'JobId=$id: .*bad-input' '$CLUSTER_DIR/log/slurmctld.log'"
line=$(log | grep "JobId=$id: .*bad-input")
like "$(short "$line")" "error: jobtap: JobId=$id: Slurm refused bad-input.so's update \\{\"attributes.system.slurm.comment\":\"x+\\.\\.\\. \\(102438 bytes\\): .+" \
	"a post-submit 100 kB comment Slurm refuses is logged, cut"
ok $(( $(wc -c <<<"$line") > 500 )) "its log line is short ($(wc -c <<<"$line") bytes)"
unlike "$(scontrol show job "$id" | grep -o 'Comment=x*' | head -c 20)" 'Comment=x' "the job keeps no comment"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "and the job runs"
intact "post-submit garbage"

id=$(submit raise-new --parsable)
cluster_wait_for 10 sh -c "grep -q 'job $id: fatal job exception was posted in NEW state' '$CLUSTER_DIR/log/slurmctld.log'"
logged "error: jobtap: job $id: exception type=policy severity=0: raised in job.new" \
	"a fatal exception in job.new is logged"
logged "error: jobtap: job $id: fatal job exception was posted in NEW state" \
	"and refused, as Flux refuses it in NEW"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "the job goes on and runs"

# -- the API from the plugin's own thread ----------------------------------
id=$(submit thread --parsable)
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "a dependency the plugin's thread removes releases the job"
logged "jobtap: job $id: exception type=from-thread severity=1: raised by the plugin's own thread" \
	"an exception raised from that thread is logged"
intact "API from a thread"

# -- a runaway Lua priority policy ----------------------------------------
id=$(submit spin --parsable)
like "$id" '^[0-9]+$' "a job the Lua priority loops on is taken"
cluster_wait_for 10 sh -c "grep -q 'instruction limit of 100000 exceeded' '$CLUSTER_DIR/log/slurmctld.log'"
logged "lua: .*\\.lua: job.state.priority: job $id: .*instruction limit of 100000 exceeded" \
	"the loop is stopped by the instruction budget, logged with job and topic"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(state "$id")" COMPLETED "the job keeps .priority-default's priority (its urgency) and runs"
id2=$(submit after-spin --parsable)
cluster_wait_for 15 sh -c "squeue -h -j $id2 -t all -o %T | grep -q COMPLETED"
is "$(state "$id2")" COMPLETED "the next job is decided and runs"
intact "runaway Lua"

# -- oversized submissions -------------------------------------------------
long=$(head -c 5000 </dev/zero | tr '\0' n)
too_long="sbatch: error: Batch job submission failed: Pathname of a file, directory or other parameter too long"
out=$(submit "$long")
is "$(short "$(tail -n 1 <<<"$out")")" "$too_long" "a 5000-character job name: Slurm's own limit"
out=$(sbatch -o /dev/null -t 5 --comment "$long" --wrap true 2>&1)
is "$(short "$(tail -n 1 <<<"$out")")" "$too_long" "a 5000-character comment: likewise"
id=$(sbatch --parsable -o /dev/null -t 5 -J big-wrap --wrap "true $(head -c 100000 </dev/zero | tr '\0' '#')" 2>&1)
like "$(short "$id")" '^[0-9]+$' "a 100 kB --wrap script is taken (the jobspec does not carry the script)"
big=$(mktemp)
{ echo '#!/bin/sh'; head -c 3000000 </dev/zero | tr '\0' '#' | fold -w 100; echo true; } >"$big"
id2=$(sbatch --parsable -o /dev/null -t 5 -J big-script "$big" 2>&1)
like "$(short "$id2")" '^[0-9]+$' "a 3 MB batch script is taken"
rm -f "$big"
cluster_wait_for 20 sh -c "squeue -h -j $id,$id2 -t all -o %T | grep -vq COMPLETED || false; test \$(squeue -h -j $id,$id2 -t all -o %T | grep -c COMPLETED) = 2"
is "$(squeue -h -j "$id,$id2" -t all -o %T | sort -u)" COMPLETED "both run"
intact "oversized submissions"

# -- a hostile jobtap.conf and a plugin whose init fails -------------------
reconfigure() {
	local before
	before=$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' "$CLUSTER_DIR/log/slurmctld.log")
	scontrol reconfigure
	cluster_wait_for 20 sh -c "test \$(grep -c 'jobtap: reconfigure failed\|jobtap: configuration reloaded' '$CLUSTER_DIR/log/slurmctld.log') -gt $before"
	cluster_wait_for 20 squeue -h
}
failed="jobtap: reconfigure failed, keeping the previous configuration:"
[ "$restarts" = 1 ] && failed="jobtap: reconfigure failed:"
still_decides() {
	is "$(submit huge-reject | head -c 20)" "sbatch: error: no: x" "$1: the previous configuration still decides"
}

printf '[job-manager]\nplugins = "%s"\n' "$plugin" >"$conf"
reconfigure
logged "$failed $conf: \\[job-manager.plugins\\] config must be an array" "plugins that is a string, not an array"
still_decides "plugins a string"

printf '[job-manager]\nplugins = [ { load = 42 } ]\n' >"$conf"
reconfigure
logged "$failed $conf:2: \\[job-manager.plugins\\]\\[0\\]: Expected string, got integer" "load that is a number"
still_decides "load a number"

notelf=$CLUSTER_DIR/not-a-plugin.so
printf 'this is not a shared object\n' >"$notelf"
printf '[job-manager]\nplugins = [ { load = "%s" } ]\n' "$notelf" >"$conf"
reconfigure
logged "$failed $conf:2: \\[job-manager.plugins\\]\\[0\\]: load: dlopen: $notelf: (file too short|invalid ELF header)" \
	"a plugin file that is not a shared object"
still_decides "not a shared object"

printf '[job-manager]\nplugins = [ { lod = "%s" } ]\n' "$plugin" >"$conf"
reconfigure
logged "$failed $conf:2: \\[job-manager.plugins\\]\\[0\\]: unknown key \"lod\" \\(an entry takes load, conf and remove\\)" \
	"an entry with a misspelt key (its plugin would be left out)"
still_decides "misspelt key"

printf '[job-manager]\nplugins = [ { load = "%s", conf = { fail-init = true } } ]\n' "$plugin" >"$conf"
reconfigure
logged "$failed .*\\[job-manager.plugins\\]\\[0\\]: load: .*bad-input.so: flux_plugin_init failed" \
	"a plugin whose init fails at reconfigure"
logged "bad-input: failing init on purpose" "with the plugin's own log line"
still_decides "init fails"
intact "hostile jobtap.conf"

{ good_conf; printf '[slurm-jobtap]\nreprioritize-period = "soon"\npriority-mode = "fastest"\ncontrol-port = 99999\n'; } >"$conf"
reconfigure
logged "jobtap: configuration reloaded" "hostile [slurm-jobtap] settings do not stop a reload"
logged "jobtap: \\[slurm-jobtap\\] priority-mode must be a string, reprioritize-period an integer" \
	"a setting of the wrong type is logged, defaults used"
good_conf >"$conf"
printf '[slurm-jobtap]\npriority-mode = "fastest"\ncontrol-port = 99999\nreprioritize-period = -5\n' >>"$conf"
printf 'priority_mode = "authoritative"\ninactive-max = "many"\n' >>"$conf"
reconfigure
logged 'jobtap: \[slurm-jobtap\] priority-mode "fastest" is not "site-factor" or "authoritative"; using site-factor' \
	"an unknown priority-mode is logged"
logged 'jobtap: \[slurm-jobtap\] control-port 99999 is not a port number; the control port stays closed' \
	"a port out of range is logged"
logged 'jobtap: \[slurm-jobtap\] reprioritize-period -5 is negative; using 30' "a negative period is logged"
logged 'jobtap: \[slurm-jobtap\] unknown setting "priority_mode" ignored' "a misspelt setting is logged"
logged 'jobtap: \[slurm-jobtap\] inactive-max must be an integer; using the default' \
	"a runtime setting of the wrong type is logged"
still_decides "hostile settings"
intact "hostile settings"

good_conf | sed "s|{ load = \"$plugin\" }|{ load = \"$plugin\", cnf = { x = 1 } }|" >"$conf"
reconfigure
is "$(log | grep -oE 'jobtap: (reconfigure failed|configuration reloaded)' | tail -n 1)" \
	"jobtap: configuration reloaded" "a misspelt key beside load does not stop a reload"
logged "jobtap: $conf:[0-9]+: \\[job-manager.plugins\\]\\[0\\]: unknown key \"cnf\" ignored \\(an entry takes load, conf and remove\\)" \
	"... it is logged and ignored, as Flux ignores it"
still_decides "a misspelt key beside load"

# a copy: the loaded bad-input.so's name is taken
copy=$CLUSTER_DIR/failing-init.so
cp "$plugin" "$copy"
before=$(log | grep -c 'bad-input: failing init on purpose')
out=$("$jobtap" load "$copy" fail-init=true 2>&1)
ok $((!$?)) "jobtap load of a plugin whose init fails fails"
is "$out" "jobtap: load $copy: $copy: flux_plugin_init failed" "with the reason"
is "$(( $(log | grep -c 'bad-input: failing init on purpose') - before ))" 1 "and the plugin's own log line"
like "$("$jobtap" list 2>&1)" "bad-input" "the loaded stack is unchanged"
still_decides "jobtap load fails"
intact "jobtap load fails"

cluster_finish
rm -f "$runaway"
done_testing
