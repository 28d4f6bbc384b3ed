#!/usr/bin/env bash
# Urgency 0 is Flux's hold (flux-core's submit-hold sets it at depend):
# the job is held as its user's hold (JobHeldUser) in the default
# site-factor mode and in authoritative mode, and `scontrol release` (by
# an admin or the job's user) lifts it the way `flux job urgency ID
# default` does; a plugin raising the urgency lifts it as well. And when
# Slurm purges a finished job (MinJobAge), plugins hear
# job.inactive-remove.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/lifecycle.so", conf = { hold-urgency = true } } ]
[slurm-jobtap]
reprioritize-period = 2
TOML
# MinJobAge: Slurm purges finished jobs soon, for job.inactive-remove below
cluster_start --jobtap-conf "$conf" --conf "MinJobAge=2" || bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock
as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
submit() { "$@" sbatch --parsable -o /dev/null -t 5 --wrap true; }
ran() { cluster_wait_for 20 sh -c "squeue -h -t all -j $1 -o %T | grep -Eq 'RUNNING|COMPLETING|COMPLETED'"; }

id=$(submit)
cluster_wait_for 10 sh -c "squeue -h -j $id -o %r | grep -q JobHeldUser"
is "$(squeue -h -j "$id" -o '%r %Q')" "JobHeldUser 0" \
	"a job a plugin sets to urgency 0 is held, in site-factor mode"
sleep 2
is "$(squeue -h -j "$id" -o %T)" PENDING "and stays pending"
like "$("$jobtap" job "$id")" "Urgency +0" "jobtap shows urgency 0"
out=$(scontrol release "$id" 2>&1)
ok $? "an admin's scontrol release" || diag "$out"
ran "$id"
ok $? "lifts the hold: the job runs"
like "$("$jobtap" job "$id")" "Urgency +16" "with the default urgency, as flux job urgency ID default"

id=$(submit as_nobody)
cluster_wait_for 10 sh -c "squeue -h -j $id -o %r | grep -q JobHeldUser"
out=$(as_nobody scontrol release "$id" 2>&1)
ok $? "the job's own user may release it too" || diag "$out"
ran "$id"
ok $? "and it runs"

id=$(submit)
cluster_wait_for 10 sh -c "squeue -h -j $id -o %r | grep -q JobHeldUser"
out=$("$jobtap" rpc lifecycle.urgency "{\"id\": $id, \"urgency\": 16}" 2>&1)
ok $? "a plugin raises the urgency" || diag "$out"
ran "$id"
ok $? "which lifts the hold too"

# When Slurm purges a finished job's record, plugins hear
# job.inactive-remove, as when Flux purges an inactive job. (slurmctld
# purges old jobs once a minute.)
cluster_wait_for 120 sh -c "grep -q 'lifecycle: job $id: inactive-remove' '$CLUSTER_DIR/log/slurmctld.log'"
ok $? "job.inactive-remove once Slurm purged the record (MinJobAge)"
like "$("$jobtap" rpc lifecycle.seen "{\"id\": $id}")" '"removed":true' "the plugin heard it"
like "$("$jobtap" job "$id" 2>&1)" "No such file or directory|not found|unknown" "and jobtap has forgotten the job"

# The same in authoritative mode, where jobtap's priority is Slurm's.
cat >"$CLUSTER_DIR/jobtap.conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/lifecycle.so", conf = { hold-urgency = true } } ]
[slurm-jobtap]
priority-mode = "authoritative"
TOML
before=$(grep -c 'jobtap: configuration reloaded' "$CLUSTER_DIR/log/slurmctld.log")
scontrol reconfigure
cluster_wait_for 30 sh -c "test \$(grep -c 'jobtap: configuration reloaded' '$CLUSTER_DIR/log/slurmctld.log') -gt $before"
cluster_wait_for 20 squeue -h
id=$(submit)
cluster_wait_for 10 sh -c "squeue -h -j $id -o %r | grep -q JobHeldUser"
is "$(squeue -h -j "$id" -o '%r %Q')" "JobHeldUser 0" "in authoritative mode urgency 0 is the user's hold too"
out=$(as_nobody scontrol release "$id" 2>&1)
ok $((!$?)) "nobody else's user may release it" || diag "$out"
out=$(scontrol release "$id" 2>&1)
ok $? "an admin's scontrol release" || diag "$out"
ran "$id"
ok $? "lifts it: the job runs (not only scancel ends it)"

cluster_finish
done_testing
