#!/usr/bin/env bash
# Restarts that lose nothing: slurmctld is killed with SIGKILL while four
# streams submit jobs that a plugin holds with a jobtap dependency, submit
# the jobs that make it release them, hold and release jobs (urgency) and
# update them; then restarted. Afterwards, for every job Slurm itself
# still has: its jobtap state and Slurm's agree (holds, dependencies,
# urgency, the time limit: an update Slurm had not saved is applied
# again), no job the plugin released is held again and
# every job still waiting is held once, for its own dependency; its
# eventlog goes back to before the kill (kept, not rebuilt); and jobs
# Slurm lost (it saves its own state every few seconds) have no jobtap
# state left. Twice, the second time with the store's files from the
# first restart.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
. "$(dirname "$0")/policy.sh"

start_policy_cluster '' '[slurm-jobtap]
keep-eventlog = true
reprioritize-period = 3600' || bail_out "cluster did not start"
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
W=$CLUSTER_DIR/streams
mkdir -p "$W"

submit() { sbatch --parsable --exclusive -o /dev/null -t 5 -J "$1" "${@:2}" --wrap true 2>/dev/null; }
stamp() { date +%s.%N; }

blocker=$(sbatch --parsable --exclusive -o /dev/null -t 30 -J blocker --wrap 'sleep 600')
cluster_wait_for 15 sh -c "squeue -h -j $blocker -o %T | grep -q RUNNING" ||
	bail_out "the blocker did not start"

# Each stream appends "ID NAME TIME" (or "OP ID TIME") for what Slurm
# acknowledged, until $W/stop exists.
stream_wait() {
	local i=$1 id
	while [ ! -e "$W/stop" ]; do
		id=$(submit "wait-$2$i") && echo "$id wait-$2$i $(stamp)" >>"$W/wait"
		i=$((i + 1))
	done
}
stream_release() {
	local k id
	while [ ! -e "$W/stop" ]; do
		# release every third waiter's key, once
		k=$(awk '{print $2}' "$W/wait" 2>/dev/null | sed -n 's/^wait-\(.*[0369]\)$/\1/p' |
			grep -vxF -f <(awk '{print $2}' "$W/release" 2>/dev/null | sed 's/^release-//') | head -1)
		if [ -z "$k" ]; then sleep 0.05; continue; fi
		id=$(submit "release-$k") && echo "$id release-$k $(stamp)" >>"$W/release"
	done
}
stream_hold() {
	local i=0 id
	while [ ! -e "$W/stop" ]; do
		id=$(submit "plain-$1$i") && echo "$id plain-$1$i $(stamp)" >>"$W/plain"
		if [ -n "$id" ] && [ $((i % 2)) = 1 ]; then
			scontrol hold "$id" 2>/dev/null && echo "hold $id $(stamp)" >>"$W/ops"
		fi
		i=$((i + 1))
	done
}
stream_update() {
	local i=0 id
	while [ ! -e "$W/stop" ]; do
		id=$(awk 'NR % 3 == 0 {print $1}' "$W/plain" 2>/dev/null | tail -n "$((i % 7 + 1))" | head -1)
		if [ -z "$id" ]; then sleep 0.05; continue; fi
		scontrol update jobid="$id" TimeLimit=$((2 + i % 3)) 2>/dev/null &&
			echo "update $id $(stamp)" >>"$W/ops"
		[ $((i % 5)) = 4 ] && scontrol release "$id" 2>/dev/null &&
			echo "release $id $(stamp)" >>"$W/ops"
		i=$((i + 1))
	done
}

info() { "$jobtap" job "$1" --json 2>/dev/null; }

# Check every acknowledged job after a restart; $1 is the kill's time,
# $3 the previous kill's (jobs lost then are not counted again).
check_jobs() {
	local kill_at=$1 round=$2
	squeue -h -t PD,R -o '%i %j %l %r' >"$W/squeue"
	python3 - "$W" "$kill_at" "$jobtap" "$3" <<'PY' >"$W/check"
import json, subprocess, sys
W, kill_at, jobtap, since = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
def lines(name):
    try:
        return [l.split() for l in open(f"{W}/{name}") if l.strip()]
    except FileNotFoundError:
        return []
slurm = {}
for l in open(f"{W}/squeue"):
    f = l.rstrip("\n").split(" ", 3)
    slurm[f[0]] = (f[1], f[3] if len(f) > 3 else "", f[2])
def minutes(limit):  # squeue's M:SS or H:MM:SS
    parts = [int(x) for x in limit.split(":")]
    return parts[-2] + (60 * parts[-3] if len(parts) > 2 else 0)
# (id, name, time): Slurm gives a lost job's id to a later submission
acked = sorted(((l[0], l[1], float(l[2])) for n in ("wait", "release", "plain")
                for l in lines(n)), key=lambda a: (int(a[0]), a[2]))
def info(i):
    r = subprocess.run([jobtap, "job", i, "--json"], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None
released = {l[1][len("release-"):] for l in lines("release")}
released_kept = {slurm[i][0][len("release-"):] for i in slurm if slurm[i][0].startswith("release-")}
bad = []
lost = []
kept_history = 0
for i, name, t in acked:
    j = info(i)
    if slurm.get(i, ("",))[0] != name:
        if t > since:  # lost at this round's kill
            lost.append((i, kill_at - t))
        if i not in slurm:
            if j is not None and j["state_name"] not in ("INACTIVE",):
                bad.append(f"{i} {name}: Slurm lost it but jobtap has it in {j['state_name']}")
        elif j is None or not j["eventlog"] or j["eventlog"][0]["timestamp"] < t:
            bad.append(f"{i} {name}: lost by Slurm, its id reused, but jobtap "
                       f"shows the lost job's history")
        continue
    if j is None:
        bad.append(f"{i} {name}: Slurm has it, jobtap does not")
        continue
    reason = slurm[i][1]
    deps = j["dependencies"]
    if name.startswith("wait-"):
        key = name[len("wait-"):]
        if key in released_kept:
            if deps or reason.startswith("jobtap"):
                bad.append(f"{i} {name}: released by release-{key}, held again: {deps} {reason}")
        elif key not in released:
            if deps != [f"wait for release-{key}"] or reason != f"jobtap: wait for release-{key}":
                bad.append(f"{i} {name}: should wait once for release-{key}: {deps} / {reason}")
        # the dependency was added before the kill, and kept
        if t < kill_at - 1:
            adds = [e for e in j["eventlog"] if e["name"] == "dependency-add"]
            if not adds or adds[0]["timestamp"] > kill_at:
                bad.append(f"{i} {name}: eventlog rebuilt, not kept: {[e['name'] for e in j['eventlog']]}")
            else:
                kept_history += 1
    duration = j["jobspec"]["attributes"]["system"].get("duration")
    if name.startswith("plain-") and duration != 60.0 * minutes(slurm[i][2]):
        bad.append(f"{i} {name}: jobtap's duration {duration}, Slurm's "
                   f"time limit {slurm[i][2]}")
    held_user = reason in ("JobHeldUser", "JobHeldAdmin")  # root holds as admin
    if (j["urgency"] == 0) != held_user and name.startswith("plain-"):
        bad.append(f"{i} {name}: urgency {j['urgency']} but Slurm's reason is {reason!r}")
    if j["eventlog"] and j["eventlog"][0]["name"] != "submit":
        bad.append(f"{i} {name}: eventlog does not start with submit")
    if sum(1 for e in j["eventlog"] if e["name"] == "submit") != 1:
        bad.append(f"{i} {name}: {sum(1 for e in j['eventlog'] if e['name'] == 'submit')} submit events")
for b in bad:
    print("BAD " + b)
before = [t for (_, _, t) in acked if t < kill_at]
print(f"ACKED {len(acked)} ({len(before)} before the kill, "
      f"{sum(1 for t in before if t > kill_at - 5)} in its last 5 s)")
print(f"LOST {len(lost)}" + (f" (acknowledged {min(a for _, a in lost):.2f} to "
      f"{max(a for _, a in lost):.2f} s before the kill)" if lost else ""))
print(f"KEPT {kept_history}")
PY
	local n_bad
	n_bad=$(grep -c '^BAD' "$W/check")
	is "$n_bad" 0 "round $round: every job Slurm kept has its jobtap state, consistent with Slurm's"
	[ "$n_bad" = 0 ] || grep '^BAD' "$W/check" | head -20 | while read -r l; do diag "$l"; done
	diag "round $round: $(grep '^ACKED' "$W/check"); $(grep '^LOST' "$W/check"); $(grep '^KEPT' "$W/check") waiting jobs with kept history"
	ok "$([ "$(grep '^KEPT' "$W/check" | cut -d' ' -f2)" -gt 0 ]; echo $?)" \
		"round $round: waiting jobs' eventlogs go back to before the kill"
}

for round in 1 2; do
	rm -f "$W/stop"
	stream_wait 0 "r$round-" & p1=$!
	stream_release & p2=$!
	stream_hold "r$round-" & p3=$!
	stream_update & p4=$!
	sleep "$((3 + RANDOM % 3)).$((RANDOM % 10))"
	kill_at=$(stamp)
	marker=$(wc -l <"$CLUSTER_DIR/log/slurmctld.log")
	cluster_restart_slurmctld --kill || bail_out "slurmctld did not come back"
	ok 0 "round $round: slurmctld killed with SIGKILL during 4 streams and restarted"
	cluster_wait_for 20 sh -c "tail -n +$((marker + 1)) '$CLUSTER_DIR/log/slurmctld.log' | grep -q 'jobtap: restored'"
	sleep 2
	touch "$W/stop"
	wait $p1 $p2 $p3 $p4
	sleep 2 # the last submissions bound and settled
	check_jobs "$kill_at" "$round" "${prev_kill:-0}"
	prev_kill=$kill_at
	like "$(tail -n +$((marker + 1)) "$CLUSTER_DIR/log/slurmctld.log")" \
		"jobtap: jobs' state is kept in $CLUSTER_DIR/state/jobtap-state" \
		"round $round: the restarted slurmctld reads the kept state"
done

# The blocker ran through both kills: still RUN in jobtap, run once.
j=$(info "$blocker")
is "$(echo "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state_name"])')" RUN \
	"the running job is still RUN in jobtap"
is "$(echo "$j" | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["eventlog"] if e["name"] == "alloc"))')" 1 \
	"and was allocated once in its eventlog across two restarts"
ls "$CLUSTER_DIR/state/jobtap-state" >"$W/files"
like "$(cat "$W/files")" "snapshot" "the kept state has a snapshot"
like "$(cat "$W/files")" "journal\.[0-9]" "and a journal"

cluster_finish
done_testing
