#!/usr/bin/env bash
# Concurrency: several parallel submission streams, scontrol updates and
# the periodic reprioritize at once. Every decision must be right and
# slurmctld alive at the end. Bounded: 4 streams x 30 submissions.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

prio_file=$(mktemp)
echo 50 >"$prio_file"
start_policy_cluster "max-duration = 86400.0, default-duration = 3600.0, priority-file = \"$prio_file\"" \
	'[slurm-jobtap]
reprioritize-period = 1' || bail_out "cluster did not start"
ctld_pid=${CLUSTER_PIDS[1]}
blocker=$(sbatch --parsable --exclusive -J blocker -o /dev/null -t 10 --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING"

out=$(mktemp -d)
streams=4 per_stream=30
# The jobs and their updates are a user's: an operator's duration update
# skips job.validate (Flux's instance owner, the builtin .update-duration).
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
stream() {
	local s=$1 n
	for ((n = 0; n < per_stream; n++)); do
		if ((n % 2)); then
			as_nobody sbatch --parsable --exclusive -o /dev/null -J "s$s-$n" -t 2-0 --wrap true \
				>>"$out/rejected.$s" 2>&1
		else
			as_nobody sbatch --parsable --exclusive -o /dev/null -J "s$s-$n" -t 10 --wrap true \
				>>"$out/accepted.$s" 2>&1
		fi
	done
}
# a user may only shorten a time limit (Slurm's rule): 10 minutes to 5
updates() {
	local end=$((SECONDS + 60)) id
	while [ $SECONDS -lt $end ] && [ ! -e "$out/done" ]; do
		# (26.05's squeue -u refuses the name nobody)
		for id in $(squeue -h -t PD -o '%i %u' | awk '$2 == "nobody" {print $1}' | head -n 5); do
			echo "$id" >>"$out/updates-tried"
			as_nobody scontrol update job="$id" TimeLimit=3-0 >/dev/null 2>&1 && echo "$id" >>"$out/bad-update-accepted"
			as_nobody scontrol update job="$id" TimeLimit=5 >/dev/null 2>&1 || echo "$id" >>"$out/good-update-refused"
		done
	done
}
updates &
upd=$!
pids=()
for ((s = 0; s < streams; s++)); do
	stream "$s" &
	pids+=("$!")
done
wait "${pids[@]}"
touch "$out/done"
wait "$upd"

accepted=$(cat "$out"/accepted.* | grep -cE '^[0-9]+$')
rejected=$(cat "$out"/rejected.* | grep -c '^sbatch: error: duration 172800s exceeds the limit of 86400s$')
is "$accepted" $((streams * per_stream / 2)) "every valid submission was accepted"
is "$rejected" $((streams * per_stream / 2)) "every invalid submission was rejected with the plugin's message"
ok $(kill -0 "$ctld_pid"; echo $?) "slurmctld is alive"

# Every accepted job: exactly one job.new, and never a time limit over a day.
missing=0 dup=0 long=0
for id in $(cat "$out"/accepted.*); do
	n=$(grep -c "job.new id=$id " "$CLUSTER_DIR/log/slurmctld.log")
	[ "$n" -eq 0 ] && missing=$((missing + 1))
	[ "$n" -gt 1 ] && dup=$((dup + 1))
	scontrol show job -o "$id" | grep -qE 'TimeLimit=[0-9]+-' && long=$((long + 1))
done
is "$missing" 0 "no accepted job is missing its job.new"
is "$dup" 0 "no job got job.new twice"
is "$long" 0 "no job got a time limit over a day through an update"
tried=$(sort -u "$out/updates-tried" 2>/dev/null | wc -l)
ok $([ "$tried" -gt 0 ]; echo $?) "updates were tried during the storm ($tried jobs)"
ok $([ ! -s "$out/bad-update-accepted" ]; echo $?) "no 3-day update was accepted"
ok $([ ! -s "$out/good-update-refused" ]; echo $?) "no 5-minute update was refused"

# The periodic reprioritize still works after the storm.
echo 777 >"$prio_file"
last=$(tail -n 1 "$out/accepted.0")
cluster_wait_for 15 sh -c "sprio -h -j $last -o %S | grep -q 777"
is "$(sprio -h -j "$last" -o %S | tr -d ' ')" 777 "reprioritize applies to the jobs submitted under load"
unlike "$(grep -E 'job.new failed|BUG|fatal' "$CLUSTER_DIR/log/slurmctld.log")" . "no job.new failures in the log"

rm -rf "$out" "$prio_file"
cluster_finish
done_testing
