#!/usr/bin/env bash
# Kills under load: slurmctld is killed with SIGKILL
# KILL_ROUNDS times (10 by default: two of them find jobtap.conf broken;
# KILL_ROUNDS=22 or more for a longer run), each 1 to 5 s into a round of
# streams, and restarted each time:
#   - 3 streams submit jobs slurm-policy.so holds with a jobtap dependency
#     (wait-KEY), 2 submit the jobs that release them (release-KEY, once
#     per key), 3 submit plain jobs and `scontrol hold` every other one;
#   - one updates plain jobs' time limits and releases some of them;
#   - one reconfigures every 1-2 s; on 22.05 every other reconfigure first
#     installs a broken jobtap.conf, which must be refused (file and line
#     logged) while the last good configuration keeps deciding. 24.11's
#     reconfigure restarts slurmctld in place, and one run in the
#     foreground exits on a broken file (docs/admin.md), so there every
#     reconfigure is a good one: a restart under load too.
# Every fifth restart first finds jobtap.conf broken: slurmctld must
# refuse to start, naming the file and line, then start once it is mended.
# After each restart kill_check.py checks every acknowledged job: jobs
# Slurm kept have their jobtap state (holds and dependencies neither lost
# nor doubled, nothing a plugin held released, an acknowledged hold kept,
# jobtap's duration Slurm's time limit, histories kept from before the
# kill); jobs Slurm lost (it saves its state every few seconds) have no
# jobtap state left. The lost jobs and Slurm's window are counted
# (docs/reliability.md, "Kills under load").
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

KILL_ROUNDS=${KILL_ROUNDS:-10}
start_policy_cluster '' '[slurm-jobtap]
keep-eventlog = true
reprioritize-period = 3600' --conf 'MaxJobCount=40000' || bail_out "cluster did not start"
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
release=$(cluster_slurm_release)
here=$(cd "$(dirname "$0")" && pwd)
W=$CLUSTER_DIR/streams
slurm_lost_state="" # the round Slurm started without its job state, if one did
mkdir -p "$W"
conf=$CLUSTER_DIR/jobtap.conf
ctld_log=$CLUSTER_DIR/log/slurmctld.log
# The broken file: the good one and an unclosed table header after it.
cp "$conf" "$W/good.conf"
{ cat "$W/good.conf"; echo '[job-manager'; } >"$W/broken.conf"
broken_line=$(wc -l <"$W/broken.conf")

submit() { sbatch --parsable --exclusive -o /dev/null -t 5 -J "$1" --wrap true 2>/dev/null; }
# Times are bash's own clock: a stream stamps without a fork, so a busy
# machine delays its stamps little (and with a point, for the checker).
LC_NUMERIC=C

blocker=$(sbatch --parsable --exclusive -o /dev/null -t 60 -J blocker --wrap 'sleep 1200')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING" ||
	bail_out "the blocker did not start"
sleep 6 # saved by Slurm (at most 5 s after a change), so no kill loses it

# Each stream appends "ID NAME SENT ACKED" (or "OP ID SENT ACKED") for
# what Slurm acknowledged, until $W/stop exists: when the request was sent
# and when its reply was seen, so the checker knows what an op on an id
# reused after a kill may have reached. Submissions are paced (0.1 s) so
# that 22 rounds and more stay within slurm-policy.so's 4096 remembered
# waiters.
stream_wait() { # KEY-PREFIX
	local i=0 id sent
	while [ ! -e "$W/stop" ]; do
		sent=$EPOCHREALTIME
		id=$(submit "wait-$1-$i") && echo "$id wait-$1-$i $sent $EPOCHREALTIME" >>"$W/wait"
		i=$((i + 1))
		sleep 0.1
	done
}
stream_release() { # DIGITS: release each waiter whose key ends in one, once
	local k id sent
	while [ ! -e "$W/stop" ]; do
		k=$(awk '{print $2}' "$W/wait" 2>/dev/null | sed -n "s/^wait-\\(.*[$1]\\)\$/\\1/p" |
			grep -vxF -f <(awk '{print $2}' "$W/release" 2>/dev/null | sed 's/^release-//') | head -1)
		if [ -z "$k" ]; then sleep 0.1; continue; fi
		sent=$EPOCHREALTIME
		id=$(submit "release-$k") && echo "$id release-$k $sent $EPOCHREALTIME" >>"$W/release"
	done
}
stream_hold() { # NAME-PREFIX
	local i=0 id sent
	while [ ! -e "$W/stop" ]; do
		sent=$EPOCHREALTIME
		id=$(submit "plain-$1-$i") && echo "$id plain-$1-$i $sent $EPOCHREALTIME" >>"$W/plain"
		if [ -n "$id" ] && [ $((i % 2)) = 1 ]; then
			sent=$EPOCHREALTIME
			scontrol hold "$id" 2>/dev/null && echo "hold $id $sent $EPOCHREALTIME" >>"$W/ops"
		fi
		i=$((i + 1))
		sleep 0.1
	done
}
stream_update() {
	local i=0 id sent
	while [ ! -e "$W/stop" ]; do
		id=$(awk 'NR % 3 == 0 {print $1}' "$W/plain" 2>/dev/null | tail -n "$((i % 7 + 1))" | head -1)
		if [ -z "$id" ]; then sleep 0.05; continue; fi
		sent=$EPOCHREALTIME
		scontrol update jobid="$id" TimeLimit=$((2 + i % 3)) 2>/dev/null &&
			echo "update $id $sent $EPOCHREALTIME" >>"$W/ops"
		# (tried first: a release a kill cuts off may still have been made)
		sent=$EPOCHREALTIME
		[ $((i % 5)) = 4 ] && echo "release $id $sent" >>"$W/tries" &&
			scontrol release "$id" 2>/dev/null &&
			echo "release $id $sent $EPOCHREALTIME" >>"$W/ops"
		i=$((i + 1))
	done
}
refused_text='jobtap: reconfigure failed, keeping the previous configuration: '
refused_lines() { grep -Fc "$refused_text" "$ctld_log"; }
refused_since() { [ "$(refused_lines)" -gt "$1" ]; }
# Reconfigures; a broken one (22.05) holds $W/conf.lock from installing the
# broken file to putting the good one back, so no kill finds it there.
stream_reconfigure() {
	local i=0
	while [ ! -e "$W/stop" ]; do
		sleep "1.$((RANDOM % 10))"
		[ -e "$W/stop" ] && break
		if [ "$release" -lt 2411 ] && [ $((i % 2)) = 1 ]; then
			(
				flock 9
				local refused_before
				refused_before=$(refused_lines)
				cp "$W/broken.conf" "$conf"
				# 22.05 answers before it tells the plugins to reload,
				# so the broken file stays until jobtap has read it
				scontrol reconfigure 2>/dev/null && echo "broken $EPOCHREALTIME" >>"$W/reconf" &&
					cluster_wait_for 20 refused_since "$refused_before"
				cp "$W/good.conf" "$conf"
				# the last good configuration still decides
				"$jobtap" list 2>/dev/null | grep -q slurm-policy ||
					echo "missing $EPOCHREALTIME" >>"$W/reconf"
			) 9>"$W/conf.lock"
		else
			local sent
			sent=$EPOCHREALTIME
			scontrol reconfigure 2>/dev/null && echo "good $EPOCHREALTIME" >>"$W/reconf" &&
				# 24.11: a restart in place, where Slurm can lose jobs too
				{ [ "$release" -lt 2411 ] || echo "$sent $EPOCHREALTIME" >>"$W/restarts"; }
		fi
		i=$((i + 1))
	done
}

# The live slurmctld: the pid it wrote (24.11's reconfigure runs it anew
# in place, with the same pid).
ctld_pid() {
	local pid
	pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmctld ] || pid=${CLUSTER_PIDS[1]}
	echo "$pid"
}
lines_now() { wc -l <"$ctld_log"; }
log_since() { tail -n +$(($1 + 1)) "$ctld_log"; }
out_lines() { wc -l <"$CLUSTER_DIR/log/slurmctld.out" 2>/dev/null || echo 0; }

# A bail-out stops the streams too (they would submit on forever); it waits
# for them alone (a bare wait would wait for the cluster's daemons, for ever).
pids=()
trap 'touch "$W/stop" 2>/dev/null; kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}"; _cluster_on_exit' EXIT
for round in $(seq 1 "$KILL_ROUNDS"); do
	rm -f "$W/stop"
	pids=()
	for s in a b c; do stream_wait "r$round$s" & pids+=($!); done
	stream_release 0-2 & pids+=($!)
	stream_release 3-4 & pids+=($!)
	for s in a b c; do stream_hold "r$round$s" & pids+=($!); done
	stream_update & pids+=($!)
	stream_reconfigure & pids+=($!)
	sleep "$((1 + RANDOM % 4)).$((RANDOM % 10))"

	exec 9>"$W/conf.lock"
	flock 9 # no broken reconfigure in flight
	pid=$(ctld_pid)
	kill_at=$EPOCHREALTIME
	kill -KILL "$pid"
	_cluster_wait_exit "$pid" 20 || bail_out "round $round: slurmctld $pid did not die"
	echo "$kill_at $EPOCHREALTIME" >>"$W/kills" # sent, and slurmctld gone
	marker=$(lines_now) out_marker=$(out_lines)
	if [ $((round % 5)) = 0 ]; then
		cp "$W/broken.conf" "$conf"
		cluster_spawn_slurmctld
		if _cluster_wait_exit "${CLUSTER_PIDS[1]}" 30; then
			ok 0 "round $round: with jobtap.conf broken, slurmctld refuses to start"
		else
			ok 1 "round $round: with jobtap.conf broken, slurmctld refuses to start"
			kill -KILL "${CLUSTER_PIDS[1]}"
			_cluster_wait_exit "${CLUSTER_PIDS[1]}" 20
		fi
		like "$(log_since "$marker"; tail -n +$((out_marker + 1)) "$CLUSTER_DIR/log/slurmctld.out")" \
			"jobtap: $conf:$broken_line:[0-9]+: " \
			"round $round: and logs the file and line"
		cp "$W/good.conf" "$conf"
		marker=$(lines_now)
	fi
	cluster_spawn_slurmctld
	started=$SECONDS
	# (some 4000 jobs by the last rounds, and in scripts/test another
	# release's tests beside it: a restart can take a while)
	if ! cluster_wait_for 180 sh -c "tail -n +$((marker + 1)) '$ctld_log' | grep -q 'jobtap: restored'"; then
		# what it was doing: alive or not, its threads' kernel waits
		# (all in futex_wait: a deadlock), its log since the restart
		pid=$(ctld_pid)
		if [ -d "/proc/$pid" ]; then
			diag "slurmctld $pid is running; its threads (name:wait):" \
				"$(for t in /proc/"$pid"/task/*; do printf '%s:%s ' "$(cat "$t/comm")" "$(cat "$t/wchan")"; done)"
		else
			diag "slurmctld $pid is gone"
		fi
		log_since "$marker" | tail -n 30 | sed 's/^/  /' | while IFS= read -r line; do diag "$line"; done
		bail_out "round $round: slurmctld did not come back"
	fi
	back_in=$((SECONDS - started))
	flock -u 9
	ok 0 "round $round: slurmctld killed with SIGKILL under load and restarted"
	sleep 1 # the streams go on against the restarted slurmctld
	touch "$W/stop"
	wait "${pids[@]}"
	cluster_wait_for 30 squeue -h -j "$blocker" || bail_out "round $round: slurmctld does not answer"
	sleep 2 # the last submissions bound and settled
	# Slurm's own loss, at this kill's restart or a reconfigure's since:
	# 26.05 renames job_state to job_state.old, then job_state.new to
	# job_state, and a kill between the two leaves no job_state to start
	# from; every job goes, the blocker too
	if [ -z "$slurm_lost_state" ] && log_since "$marker" | grep -q 'No job state file .* to recover'; then
		slurm_lost_state=$round
		diag "round $round: Slurm started with no job state file (its own, killed between two renames): it lost every job"
	fi
	squeue -h -t all -o '%i|%j|%l|%r|%T' >"$W/squeue"
	python3 "$here/kill_check.py" "$W" "$JOBTAP_CONTROL_SOCKET" >"$W/check" 2>&1
	n_bad=$(grep -c '^BAD' "$W/check")
	is "$n_bad" 0 "round $round: every acknowledged job checked against Slurm and jobtap"
	[ "$n_bad" = 0 ] || head -20 "$W/check" | while read -r l; do diag "$l"; done
	grep -q '^ACKED' "$W/check" || { diag "$(tail -5 "$W/check")"; bail_out "the checker failed"; }
	diag "round $round: $(grep -E '^(ACKED|LOST|RESTART_LOST|KEPT|ENDED_UNKNOWN)' "$W/check" | tr '\n' ' ')BACK_IN $back_in s"
done

is "$(wc -l <"$W/kills")" "$KILL_ROUNDS" "slurmctld was killed $KILL_ROUNDS times"
ok "$([ "$(grep '^KEPT' "$W/check" | cut -d' ' -f2)" -gt 0 ]; echo $?)" \
	"waiting jobs' eventlogs go back to before the kills"
reconfigures=$(grep -c '^good' "$W/reconf")
ok "$([ "$reconfigures" -gt "$KILL_ROUNDS" ]; echo $?)" "$reconfigures good reconfigures under load"
if [ "$release" -lt 2411 ]; then
	broken=$(grep -c '^broken' "$W/reconf")
	ok "$([ "$broken" -gt 0 ]; echo $?)" "$broken reconfigures with jobtap.conf broken"
	refused=$(grep -Ec "$refused_text$conf:$broken_line:[0-9]+: " "$ctld_log")
	ok "$([ "$refused" -ge "$broken" ]; echo $?)" \
		"each was refused, naming the file and line ($refused log lines)"
	is "$(grep -c '^missing' "$W/reconf")" 0 "and the last good configuration kept deciding"
fi

# The blocker ran through every kill: still RUN in jobtap, allocated once
# (unless Slurm itself lost it, and its id went to a later job).
if [ -n "$slurm_lost_state" ]; then
	diag "the blocker's checks are left out: Slurm lost it at round $slurm_lost_state"
else
	j=$("$jobtap" job "$blocker" --json)
	is "$(echo "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state_name"])')" RUN \
		"the running job is still RUN in jobtap"
	is "$(echo "$j" | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["eventlog"] if e["name"] == "alloc"))')" 1 \
		"and was allocated once in its eventlog across $KILL_ROUNDS kills"
fi
like "$(ls "$CLUSTER_DIR/state/jobtap-state")" "snapshot" "the kept state has a snapshot"
diag "Slurm $release, $KILL_ROUNDS kills: $(grep -E '^(ACKED|LOST|RESTART_LOST)' "$W/check" | tr '\n' ' ')"

cluster_finish
done_testing
