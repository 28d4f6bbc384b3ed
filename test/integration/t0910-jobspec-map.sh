#!/usr/bin/env bash
# The wider Slurm <-> jobspec map (docs/jobspec.md):
# memory, node ranges, time_min, mail, output paths, exclusive kinds,
# licenses, features, begin time and nice are in the jobspec, the same
# from the submission and from the job record; a plugin's post-submit
# updates of them reach the Slurm job (scontrol show job); a resources
# or tasks update Slurm can express resizes the job, one it cannot is
# logged and undone; scontrol update of the cpus per task reaches
# jobtap's jobspec as the new resources.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/lifecycle.so" } ]
[slurm-jobtap]
log-jobspec = true
TOML
# Memory, features and licenses for the requests below. No GRES: slurmd
# here does not report a counted GPU (t0800); GPUs and other TRES are in
# test_slurm_jobspec and t-jobtap-run.sh.
cluster_start --jobtap-conf "$conf" --conf "Licenses=lic:4" \
	--node-conf "CPUs=2 RealMemory=300 Features=big,fast" ||
	bail_out "cluster did not start"
rm -f "$conf"
export JOBTAP_CONTROL_SOCKET=$CLUSTER_DIR/state/jobtap.sock

log=$CLUSTER_DIR/log/slurmctld.log
field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s|^$2=||p"; }
# A value of a JSON text, as python's json prints it (sorted keys).
value() {
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps(eval(sys.argv[2], {"d": d}), sort_keys=True))' "$1" "$2"
}
spec() { value "$("$jobtap" job "$1" --json)" "d[\"jobspec\"]$2"; }
update() { "$jobtap" rpc lifecycle.update "{\"id\": $1, \"updates\": $2}" 2>&1; }
submissions() { sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p' "$log"; }
bound() { cluster_wait_for 10 sh -c "grep -q 'JobId=$1 jobspec from record' '$log'"; }
slurm='["attributes"]["system"]["slurm"]'

# --- read: at submit and from the record alike ---------------------------
a=$(sbatch --parsable -H -o '/tmp/t0910-%j.out' -e '/tmp/t0910-%j.err' -N 1-2 -n 2 -t 10 \
	--time-min=5 --mem=100M --mail-type=END,FAIL --mail-user=ops@example.com \
	--exclusive=user -L lic:1 --constraint=fast --begin=now+1hour --nice=7 --wrap true)
ok $? "a job with the wider options is submitted" || bail_out "sbatch failed"
bound "$a" || bail_out "job $a was not bound"
submitted=$(submissions | tail -n 1)
recorded=$(sed -n "s/.*jobtap: JobId=$a jobspec from record //p" "$log")
is "$recorded" "$submitted" "job_desc and job_record give the same jobspec"
is "$(value "$submitted" 'd["resources"]')" \
	'[{"count": 1, "type": "node", "with": [{"count": 2, "label": "task", "type": "slot", "with": [{"count": 1, "type": "core"}]}]}]' \
	"-N 1-2 -n 2: one node (the minimum) of 2 slots, no exclusive node for --exclusive=user"
is "$(value "$submitted" "d$slurm[\"max_nodes\"]")" 2 "-N 1-2 is max_nodes 2"
is "$(value "$submitted" "d$slurm[\"time_min\"]")" 300.0 "--time-min=5 is time_min 300 s"
is "$(value "$submitted" "d$slurm[\"mem_per_node\"]")" 100 "--mem=100M is mem_per_node 100 (MB)"
is "$(value "$submitted" "d$slurm[\"mail_type\"]")" '"END,FAIL"' "mail_type as scontrol shows it"
is "$(value "$submitted" "d$slurm[\"mail_user\"]")" '"ops@example.com"' "mail_user"
is "$(value "$submitted" "d$slurm[\"exclusive\"]")" '"user"' "--exclusive=user"
is "$(value "$submitted" "d$slurm[\"licenses\"]")" '"lic:1"' "licenses"
is "$(value "$submitted" "d$slurm[\"nice\"]")" 7 "nice"
like "$(value "$submitted" "d$slurm[\"begin_time\"]")" '^[0-9]{10}$' "begin_time"
is "$(value "$submitted" 'd["attributes"]["system"]["constraints"]')" '{"properties": ["fast"]}' \
	"--constraint=fast is constraints"
is "$(value "$submitted" 'd["attributes"]["system"]["shell"]["options"]["output"]')" \
	'{"stderr": {"path": "/tmp/t0910-%j.err", "type": "file"}, "stdout": {"path": "/tmp/t0910-%j.out", "type": "file"}}' \
	"-o and -e are Flux's output files, Slurm's patterns kept"
is "$(field "$a" NumNodes)" 1-2 "(scontrol: NumNodes=1-2)"
is "$(field "$a" MinMemoryNode)" 100M "(scontrol: MinMemoryNode=100M)"

c=$(sbatch --parsable -H -o /dev/null -n 2 --mem-per-cpu=20 --wrap true)
ok $? "a job with memory per cpu is submitted" || bail_out "sbatch failed"
bound "$c" || bail_out "job $c was not bound"
submitted=$(submissions | tail -n 1)
recorded=$(sed -n "s/.*jobtap: JobId=$c jobspec from record //p" "$log")
is "$(value "$submitted" "d$slurm[\"mem_per_cpu\"]")" 20 "--mem-per-cpu=20 is mem_per_cpu 20"
is "$recorded" "$submitted" "... the same from the record"

# --- write: a plugin's updates after submit reach the Slurm job ----------
begin=$(($(date +%s) + 7200))
for u in '{"attributes.system.slurm.mem_per_node": 200}' \
	'{"attributes.system.slurm.time_min": 120}' \
	'{"attributes.system.slurm.mail_type": "BEGIN", "attributes.system.slurm.mail_user": "x@example.com"}' \
	'{"attributes.system.slurm.licenses": "lic:2"}' \
	'{"attributes.system.slurm.nice": 3}' \
	'{"attributes.system.slurm.max_nodes": 1}' \
	"{\"attributes.system.slurm.begin_time\": $begin}" \
	'{"attributes.system.slurm.admin_comment": "vip"}' \
	'{"attributes.system.shell.options.output.stdout.path": "/tmp/t0910-new.out"}'; do
	out=$(update "$a" "$u")
	ok $? "a service updates $u" || diag "$out"
done
cluster_wait_for 10 sh -c "scontrol show job $a | grep -q StdOut=/tmp/t0910-new.out"
is "$(field "$a" MinMemoryNode)" 200M "mem_per_node 200 is MinMemoryNode=200M"
is "$(field "$a" TimeMin)" 00:02:00 "time_min 120 is TimeMin=00:02:00"
is "$(field "$a" MailUser)" x@example.com "mail_user is MailUser"
is "$(field "$a" MailType)" BEGIN "mail_type is MailType"
is "$(field "$a" Licenses)" lic:2 "licenses"
is "$(field "$a" Nice)" 3 "nice"
like "$(field "$a" NumNodes)" "^1(-1)?$" "max_nodes 1: no range left (Slurm shows 1 or 1-1)"
is "$(field "$a" StartTime)" "$(date -d "@$begin" +%Y-%m-%dT%H:%M:%S)" \
	"begin_time is when the held job may start"
is "$(field "$a" AdminComment)" vip "admin_comment"
is "$(field "$a" StdOut)" /tmp/t0910-new.out "the stdout path is StdOut"
is "$(spec "$a" "$slurm[\"admin_comment\"]")" '"vip"' "jobtap's jobspec has them too"
is "$(spec "$a" "$slurm[\"mem_per_node\"]")" 200 "... mem_per_node"

if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	out=$(update "$a" '{"attributes.system.shell.options.output.stderr.path": "/tmp/t0910-new.err"}')
	ok $? "the stderr path is updated" || diag "$out"
	cluster_wait_for 10 sh -c "scontrol show job $a | grep -q StdErr=/tmp/t0910-new.err"
	is "$(field "$a" StdErr)" /tmp/t0910-new.err "... and is StdErr (24.11 changes it)"
else
	update "$a" '{"attributes.system.shell.options.output.stderr.path": "/tmp/t0910-new.err"}' >/dev/null
	cluster_wait_for 10 sh -c "grep -q \"JobId=$a: lifecycle.so's update cannot be made in Slurm: .*stderr.path: this Slurm release sets it only at submit\" '$log'"
	ok $? "a stderr path after submit is refused on this release (update_job ignores it), logged"
fi

update "$a" '{"attributes.system.slurm.exclusive": "node"}' >/dev/null
cluster_wait_for 10 sh -c "grep -q \"JobId=$a: lifecycle.so's update cannot be made in Slurm: jobtap: jobspec update of attributes.system.slurm.exclusive: Slurm sets it only at submit\" '$log'"
ok $? "exclusive after submit is refused, logged with the job and the plugin"
cluster_wait_for 10 sh -c "$jobtap job $a --json | grep -q '\"exclusive\": \"user\"'"
is "$(spec "$a" "$slurm[\"exclusive\"]")" '"user"' "and jobtap's jobspec agrees with Slurm again"

# A reservation (no accounting here, so no QOS but the default).
scontrol create reservation ReservationName=t0910 StartTime=now Duration=60 Users=root Nodes=ALL >/dev/null
ok $? "a reservation is created"
out=$(update "$c" '{"attributes.system.slurm.reservation": "t0910"}')
ok $? "a service moves a job into it" || diag "$out"
cluster_wait_for 10 sh -c "scontrol show job $c | grep -q Reservation=t0910"
is "$(field "$c" Reservation)" t0910 "... Reservation=t0910"
is "$(spec "$c" "$slurm[\"reservation\"]")" '"t0910"' "... and jobtap's jobspec has it"

# --- resources and tasks ---------------------------------------------------
d=$(sbatch --parsable -H -o /dev/null -n 2 --wrap true)
bound "$d" || bail_out "job $d was not bound"
res='[{"type": "node", "count": 1, "with": [{"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 2}]}]}]'
out=$(update "$d" "{\"resources\": $res}")
ok $? "a service resizes -n 2 to one node of one slot of 2 cores" || diag "$out"
cluster_wait_for 10 sh -c "scontrol show job $d | grep -q CPUs/Task=2"
like "$(field "$d" NumNodes)" "^1(-1)?$" "... NumNodes=1 (Slurm shows 1 or 1-1)"
is "$(field "$d" NumTasks)" 1 "... NumTasks=1"
is "$(field "$d" CPUs/Task)" 2 "... CPUs/Task=2"
is "$(spec "$d" '["resources"]')" "$(value "$res" d)" "jobtap's jobspec has the new resources"

scontrol update JobId="$d" CPUsPerTask=1
ok $? "scontrol update CPUsPerTask=1"
is "$(field "$d" CPUs/Task)" 1 "... CPUs/Task=1"
is "$(spec "$d" '["resources"][0]["with"][0]["with"]')" '[{"count": 1, "type": "core"}]' \
	"jobtap's jobspec has the new resources: one core a slot"

gpu='[{"type": "node", "count": 1, "with": [{"type": "slot", "count": 2, "label": "task", "with": [{"type": "core", "count": 2}, {"type": "gpu", "count": 1}]}]}]'
update "$d" "{\"resources\": $gpu}" >/dev/null
cluster_wait_for 10 sh -c "grep -q \"JobId=$d: lifecycle.so's update cannot be made in Slurm: jobtap: jobspec update of resources: no Slurm request has this shape\" '$log'"
ok $? "a GPU the job did not ask for is refused, logged"
cluster_wait_for 10 sh -c "! $jobtap job $d --json | grep -q gpu"
unlike "$("$jobtap" job "$d" --json)" '"gpu"' "and jobtap's jobspec has the record's resources again"

e=$(sbatch --parsable -H -o /dev/null -N 1 -n 2 --wrap true)
bound "$e" || bail_out "job $e was not bound"
tasks=$(spec "$e" '["tasks"]' | python3 -c 'import json,sys; t=json.load(sys.stdin); t[0]["count"]={"total": 1}; print(json.dumps(t))')
out=$(update "$e" "{\"tasks\": $tasks}")
ok $? "a service runs one task on the 2 slots of -N 1 -n 2" || diag "$out"
cluster_wait_for 10 sh -c "scontrol show job $e | grep -q NumTasks=1"
is "$(field "$e" NumTasks)" 1 "... NumTasks=1"
is "$(spec "$e" '["tasks"][0]["count"]')" '{"total": 1}' "jobtap's jobspec has the task count"
is "$(spec "$e" '["resources"][0]["with"][0]["count"]')" 2 "... and still 2 slots"

cluster_finish
done_testing
