#!/usr/bin/env bash
# The jobspec plugins see (docs/jobspec.md): built from the submission in
# job_submit and from the job record later, the same job gives the same
# jobspec, with the documented values and no Slurm sentinels.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

conf=$(mktemp)
cat >"$conf" <<'TOML'
[slurm-jobtap]
log-jobspec = true
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"

# named as the next job, so that its singleton stays unmet in the record
first=$(sbatch --parsable -o /dev/null -t 1 -J named --wrap 'sleep 30')
id=$(sbatch --parsable -o /dev/null -N 1 -n 2 -c 1 -t 30 -p debug -A MyAcct -J named \
	-D /tmp --comment=hello --exclusive --nice=5 --begin=now+1hour \
	--dependency="afterok:$first,singleton" --wrap true)
cluster_wait_for 10 sh -c "grep -q 'JobId=$id jobspec from record' '$CLUSTER_DIR/log/slurmctld.log'"

submitted=$(cluster_log | sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p' | tail -n 1)
recorded=$(cluster_log | sed -n "s/.*jobtap: JobId=$id jobspec from record //p")
ok $([ -n "$submitted" ] && [ -n "$recorded" ]; echo $?) "both jobspecs were logged"
is "$recorded" "$submitted" "job_desc and job_record give the same jobspec"

# Field by field, through python's json (a Debian meson dependency).
get() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps(eval(sys.argv[2], {"d": d}), sort_keys=True))' "$submitted" "$1"; }
is "$(get 'd["version"]')" 1 "version 1"
is "$(get 'd["resources"]')" \
	'[{"count": 1, "exclusive": true, "type": "node", "with": [{"count": 2, "label": "task", "type": "slot", "with": [{"count": 1, "type": "core"}]}]}]' \
	"-N 1 -n 2 -c 1 --exclusive is one exclusive node with 2 slots of 1 core"
is "$(get 'd["tasks"][0]["count"]')" '{"per_slot": 1}' "one task per slot"
sys='d["attributes"]["system"]'
is "$(get "$sys[\"duration\"]")" 1800.0 "-t 30 is duration 1800"
is "$(get "$sys[\"queue\"]")" '"debug"' "queue is the partition"
is "$(get "$sys[\"bank\"]")" '"myacct"' "bank is the account, lowercased as Slurm stores it"
is "$(get "$sys[\"job\"]")" '{"name": "named"}' "job.name"
is "$(get "$sys[\"cwd\"]")" '"/tmp"' "cwd"
is "$(get "$sys[\"dependencies\"]")" \
	"[{\"scheme\": \"afterok\", \"value\": \"$first\"}, {\"scheme\": \"singleton\", \"value\": \"\"}]" \
	"dependencies as RFC 26 entries"
is "$(get "$sys[\"slurm\"][\"comment\"]")" '"hello"' "comment under attributes.system.slurm"
is "$(get "$sys[\"slurm\"][\"nice\"]")" 5 "nice under attributes.system.slurm"
like "$(get "$sys[\"slurm\"][\"begin_time\"]")" '^[0-9]{10}$' "begin_time in epoch seconds"
unlike "$submitted" '4294967294|4294967295|65534|18446744073709551614' "no NO_VAL or INFINITE anywhere"
unlike "$submitted" 'environment' "the environment is not included"

# Defaults resolved the way slurmctld does: no -t takes the partition's
# limit (unlimited here: 0), no -p the default partition.
id2=$(sbatch --parsable -o /dev/null --wrap true)
cluster_wait_for 10 sh -c "grep -q 'JobId=$id2 jobspec from record' '$CLUSTER_DIR/log/slurmctld.log'"
submitted=$(cluster_log | sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p' | tail -n 1)
recorded=$(cluster_log | sed -n "s/.*jobtap: JobId=$id2 jobspec from record //p")
is "$recorded" "$submitted" "a job with Slurm's defaults also gives the same jobspec both ways"
is "$(get "$sys[\"duration\"]")" 0.0 "no -t on an unlimited partition is duration 0"
is "$(get "$sys[\"queue\"]")" '"debug"' "no -p is the default partition"
is "$(get 'd["resources"]')" \
	'[{"count": 1, "label": "task", "type": "slot", "with": [{"count": 1, "type": "core"}]}]' \
	"no size options is one slot of one core"

# Jobs of one shape share a resources tree (jobspec.c reuses the last one
# built); each still gets the resources it asked for, from the submission
# and from the record.
# (sizes the 2-CPU node can hold: Slurm refuses others at submit)
a=$(sbatch --parsable -o /dev/null -n 2 -J same-a --wrap true)
b=$(sbatch --parsable -o /dev/null -n 2 -J same-b --wrap true)
c=$(sbatch --parsable -o /dev/null -n 1 -J other --wrap true)
cluster_wait_for 10 sh -c "grep -q 'JobId=$c jobspec from record' '$CLUSTER_DIR/log/slurmctld.log'"
slots() {
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["resources"][0]["count"], d["attributes"]["system"]["job"]["name"])' "$1"
}
for pair in "$a:2 same-a" "$b:2 same-b" "$c:1 other"; do
	jid=${pair%%:*}
	rec=$(cluster_log | sed -n "s/.*jobtap: JobId=$jid jobspec from record //p")
	sub=$(cluster_log | sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p' | grep "\"${pair#* }\"")
	is "$(slots "$sub")" "${pair#*:}" "submission of job ${pair#* }: its slot count and name"
	is "$rec" "$sub" "... the same jobspec from its record"
done

# A job array: its tasks as asked, at submit; each task, a job of its
# own, its array and index. The node is cleared first so the tasks run
# one by one (%1).
scancel "$first" "$id" "$id2" "$a" "$b" "$c" 2>/dev/null
arr=$(sbatch --parsable -o /dev/null --array=1-3%1 -t 1 -J arr --wrap 'sleep 1')
cluster_wait_for 10 sh -c "grep -q 'jobspec of a submission by uid 0: .*\"arr\"' '$CLUSTER_DIR/log/slurmctld.log'"
sub=$(cluster_log | sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p' | grep '"arr"')
slurm_attr() { python3 -c 'import json,sys; d=json.loads(sys.argv[1])["attributes"]["system"]["slurm"]; print(json.dumps([d.get(k) for k in sys.argv[2:]]))' "$@"; }
is "$(slurm_attr "$sub" array array_job_id array_task_id)" '["1-3%1", null, null]' \
	"sbatch --array=1-3%1: attributes.system.slurm.array as asked, no task index"
for t in 1 2; do
	cluster_wait_for 60 sh -c "grep -q 'jobspec from record .*\"array_job_id\":$arr,\"array_task_id\":$t' '$CLUSTER_DIR/log/slurmctld.log'"
	task=$(cluster_log | sed -n "s/.*jobspec from record \(.*\"array_job_id\":$arr,\"array_task_id\":$t.*\)/\1/p" | head -n 1)
	is "$(slurm_attr "$task" array array_job_id array_task_id)" "[null, $arr, $t]" \
		"task $t, a job of its own: its array's id and its index"
done
# jobtap job takes the task as squeue names it: its id is 2^62 + the
# array's id * 2^30 + the task's index (docs/admin.md, "Job arrays")
jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
is "$("$jobtap" job "${arr}_1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')" \
	"$(( (1 << 62) + arr * (1 << 30) + 1 ))" "jobtap job ${arr}_1 is task 1's own job"
out=$("$jobtap" job "${arr}_9" 2>&1)
is "$? $out" "1 jobtap: job ${arr}_9: squeue does not know job ${arr}_9" \
	"a task the array does not have: an error, exit 1"

cluster_finish
done_testing
