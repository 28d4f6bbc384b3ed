#!/usr/bin/env bash
# The submission mark, as slurmctld and a job's prolog see it. The usual
# submission (no SPANK environment) is tied to its record with nothing
# written in its environment: its prolog finds no SPANK_ variable, as
# without slurm-jobtap, and job.new still runs inside the submission, on
# the provisional job (slurm-policy.so's job.new finds what its
# job.validate kept there, which a job made later from the record lacks). A
# submission that needs the mark's text (one held by its user, a job
# array) still carries SLURM_JOBTAP_SUBMIT and is bound as before.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
seen=$(mktemp -d)
chmod 755 "$seen"
prolog=$seen/prolog.sh
# the names of the SPANK_ variables the prolog gets, one file per job,
# whole once it is there
cat >"$prolog" <<SH
#!/bin/sh
env | grep '^SPANK_' | sed 's/=.*//' | sort >"$seen/.job.\$SLURM_JOB_ID"
mv "$seen/.job.\$SLURM_JOB_ID" "$seen/job.\$SLURM_JOB_ID"
exit 0
SH
chmod 755 "$prolog"
conf=$(mktemp)
printf '[job-manager]\nplugins = [ { load = "%s" } ]\n[slurm-jobtap]\nkeep-eventlog = true\n' \
	"$JOBTAP_BUILD_DIR/test/integration/slurm-policy.so" >"$conf"
cluster_start --jobtap-conf "$conf" --conf "Prolog=$prolog" ||
	bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock

# The names of job ID's events, as jobtap keeps them.
events() {
	"$jobtap" job "$1" --json |
		python3 -c 'import json,sys; print(" ".join(e["name"] for e in json.load(sys.stdin).get("eventlog", [])))'
}
# slurm-policy.so's job.new line for job ID: "aux=NAME" on the job of the
# submission named NAME, "aux=(none)" on one made from the record later.
job_new() {
	cluster_wait_for 20 sh -c "grep -q 'job.new id=$1 ' '$CLUSTER_DIR/log/slurmctld.log'"
	cluster_log | grep -o "job.new id=$1 .*" | tail -n 1
}
# What job ID's prolog found, once it ran.
prolog_saw() {
	cluster_wait_for 30 test -e "$seen/job.$1" || echo "(no prolog)"
	tr '\n' ' ' <"$seen/job.$1" 2>/dev/null
}

id=$(sbatch --parsable -n1 -J plain -o /dev/null --wrap true)
ok $? "a plain sbatch is accepted"
like "$(job_new "$id")" ' name=plain aux=plain state=new$' \
	"job.new ran on the submission's provisional job"
# (then alloc, start... once it runs)
like "$(events "$id")" '^submit validate depend priority( |$)' \
	"its events: the submission's, then job.new's cascade"
is "$(prolog_saw "$id")" "" "its prolog finds no SPANK_ variable"

# Held by its user at submit: the record gets its first priority from the
# hold, not in the submission, so the mark's text ties it.
held=$(sbatch --parsable -H -n1 -J held -o /dev/null --wrap true)
like "$(job_new "$held")" ' name=held aux=held state=new$' \
	"a held submission is bound to its provisional job too"
scontrol release "$held"
is "$(prolog_saw "$held")" "SPANK_SLURM_JOBTAP_SUBMIT " \
	"its prolog finds the mark's text"

arr=$(sbatch --parsable -n1 -a 1-2 -J arr -o /dev/null --wrap true)
cluster_wait_for 20 sh -c "'$jobtap' job ${arr}_2 >/dev/null 2>&1"
like "$(events "${arr}_2")" '^submit validate depend priority' \
	"an array's task is a job of its own"
is "$(prolog_saw "$arr")" "SPANK_SLURM_JOBTAP_SUBMIT " \
	"an array task's prolog finds the mark's text"

rm -rf "$seen"
done_testing
