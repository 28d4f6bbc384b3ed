#!/usr/bin/env bash
# What squeue shows for a job jobtap holds that is held for other reasons
# too: its user's hold (urgency 0) and an unsatisfied Slurm dependency are
# named after jobtap's reason, and stay current. The user's scontrol
# release lifts only the user's own hold; a stranger's hold or release
# never reaches jobtap (on 22.05 job_modify runs before Slurm's check).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_SOURCE_DIR/conf/examples/max-running.lua", conf = { max-running = 1 } } ]
[slurm-jobtap]
reprioritize-period = 2
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
# the jobs' owner, and a stranger to them
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
as_daemon() { (cd / && setpriv --reuid=daemon --regid=daemon --clear-groups "$@"); }
submit() { as_nobody sbatch --parsable -o /dev/null -t 5 "$@"; }
reason() { squeue -h -j "$1" -o %r; }
urgency() { "$jobtap" job "$1" | awk '$1 == "Urgency" { print $2 }'; }
# wait until the job's reason is the one given, then check it
reason_is() {
	cluster_wait_for 15 sh -c "test \"\$(squeue -h -j $1 -o %r)\" = '$2'"
	is "$(reason "$1")" "$2" "$3"
}

MR="jobtap: max-running-jobs"
first=$(submit --wrap 'sleep 300')
cluster_wait_for 15 sh -c "squeue -h -j $first -o %T | grep -q RUNNING"
waits=$(submit --wrap true)
held=$(submit -H --wrap true)
after=$(submit --dependency="afterany:$first" --wrap true)

reason_is "$waits" "$MR" "jobtap's hold alone: its reason"
reason_is "$held" "$MR; also held by its user" \
	"submitted held (-H) while jobtap holds it: both holds named"
is "$(urgency "$held")" 0 "its urgency is 0"
reason_is "$after" "$MR; also waits on its Slurm dependency" \
	"a Slurm dependency not yet satisfied: named after jobtap's reason"

out=$(as_nobody scontrol release "$held" 2>&1)
ok $? "its user's scontrol release is accepted" || diag "$out"
reason_is "$held" "$MR" "it lifts only the user's hold: jobtap's stays"
is "$(urgency "$held")" 16 "the urgency is the default again"

out=$(as_nobody scontrol release "$waits" 2>&1)
ok $((!$?)) "a release with no hold of the user's to lift is refused" || diag "$out"
is "$(reason "$waits")" "$MR" "and changes nothing"

out=$(as_nobody scontrol hold "$waits" 2>&1)
ok $? "its user's scontrol hold under jobtap's hold" || diag "$out"
reason_is "$waits" "$MR; also held by its user" "names the user's hold"
is "$(urgency "$waits")" 0 "as urgency 0"

out=$(as_daemon scontrol release "$waits" 2>&1)
ok $((!$?)) "a stranger's release is refused" || diag "$out"
is "$(urgency "$waits")" 0 "and leaves the urgency alone"
is "$(reason "$waits")" "$MR; also held by its user" "and the reason"
out=$(as_daemon scontrol hold "$held" 2>&1)
ok $((!$?)) "a stranger's hold is refused" || diag "$out"
is "$(urgency "$held")" 16 "and leaves the urgency alone"
is "$(reason "$held")" "$MR" "and the reason"
uid_daemon=$(id -u daemon)
unlike "$(grep -E "jobtap: .*uid $uid_daemon\b" "$CLUSTER_DIR/log/slurmctld.log")" \
	"urgency" "jobtap never heard of the stranger's requests"

# The first job ends: the oldest waiting job is admitted (still its
# user's hold), and the dependency is met.
scancel "$first"
reason_is "$waits" "JobHeldUser" "admitted by jobtap: its user's hold remains, as Slurm's"
reason_is "$after" "$MR" "the Slurm dependency met: jobtap's reason alone (the sweep)"
is "$(reason "$held")" "$MR" "the third job still waits for jobtap"
out=$(as_nobody scontrol release "$waits" 2>&1)
ok $? "the user releases the admitted job" || diag "$out"
cluster_wait_for 20 sh -c "squeue -h -t all -j $waits -o %T | grep -Eq 'RUNNING|COMPLETING|COMPLETED'"
ok $? "and it runs"

cluster_finish
done_testing
