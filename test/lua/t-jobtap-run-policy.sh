#!/usr/bin/env bash
# jobtap-run with Flux's [policy] and [queues]: the same limits, defaults
# and messages as inside slurmctld (t0990), offline, with the GPU cases a
# cluster without GPUs cannot show, and a bad table's error and exit code.
. "$(dirname "$0")/../lib/tap.sh"
run=$JOBTAP_BUILD_DIR/src/jobtap-run/jobtap-run
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
conf=$dir/jobtap.conf
cat >"$conf" <<'EOF'
[policy.jobspec.defaults.system]
duration = "10m"
queue = "batch"

[policy.limits]
duration = "1h"
job-size.max.nnodes = 1
job-size.max.ncores = 2
job-size.max.ngpus = 0

[queues.debug.policy.jobspec.defaults.system]
duration = "5m"

[queues.batch.policy.limits]
duration = "8h"
job-size.max.ngpus = -1

[queues.short.policy.limits]
duration = "1m"
job-size.min.ncores = 2

[queues.sub]
parent = "short"

[resource]
noverify = true
EOF
# exit code and first line of jobtap-run -C conf ARGS
decide() {
	local out rc
	out=$("$run" -C "$conf" "$@" 2>/dev/null)
	rc=$?
	printf '%s: %s' "$rc" "$(head -n 1 <<<"$out")"
}
jobspec() { "$run" -C "$conf" --print-jobspec "$@" 2>/dev/null | sed -n 's/^job 1: jobspec //p'; }

is "$(decide -p debug -t 2:00:00)" \
	"1: job 1: rejected: requested duration (2h) exceeds policy limit of 1h for queue debug" \
	"over the general duration limit: Flux's message, exit 1"
is "$(decide -p debug -t 0)" \
	"1: job 1: rejected: requested duration (unlimited) exceeds policy limit of 1h for queue debug" \
	"unlimited"
is "$(decide -p batch -t 2:00:00)" "0: job 1: accepted" "a queue with a higher limit"
is "$(decide -p batch -t 16:00:00)" \
	"1: job 1: rejected: requested duration (16h) exceeds policy limit of 8h for queue batch" \
	"over that queue's limit"
is "$(decide -p sub -t 2 -n 2)" \
	"1: job 1: rejected: requested duration (2m) exceeds policy limit of 1m for queue sub" \
	"a virtual queue: its parent's limit"
is "$(decide -p debug -t 5 -N 2)" \
	"1: job 1: rejected: requested nnodes (2) exceeds policy limit of 1 for queue debug" \
	"job-size.max.nnodes"
is "$(decide -p debug -t 5 -n 3)" \
	"1: job 1: rejected: requested ncores (3) exceeds policy limit of 2 for queue debug" \
	"job-size.max.ncores"
is "$(decide -p short -t 1 -n 1)" \
	"1: job 1: rejected: requested ncores (1) is under policy limit of 2 for queue short" \
	"a queue's job-size.min.ncores"
is "$(decide -p debug -t 5 -n 1 --gpus-per-task=1)" \
	"1: job 1: rejected: requested ngpus (1) exceeds policy limit of 0 for queue debug" \
	"job-size.max.ngpus"
is "$(decide -p debug -t 5 -N 1 -n 2 --gpus-per-node=2)" \
	"1: job 1: rejected: requested ngpus (2) exceeds policy limit of 0 for queue debug" \
	"GPUs per node are spread over the node's slots, and counted"
is "$(decide -p batch -t 5 -n 1 --gpus-per-task=1)" "0: job 1: accepted" \
	"a queue whose gpu limit is -1 accepts it"

like "$(jobspec)" '"duration":600.0,.*"queue":"batch"' \
	"no -p, no -t: the default queue and the general default duration"
like "$(jobspec -p debug)" '"duration":300.0,.*"queue":"debug"' \
	"a queue's own default duration"
like "$(jobspec -p debug -t 20)" '"duration":1200.0,' "a job's own time limit stays"
like "$(jobspec --default-queue debug)" '"queue":"batch"' \
	"the policy's default queue comes before the partition's"

# Removable like any builtin.
cat "$conf" >"$dir/removed.conf"
printf '[job-manager]\nplugins = [ { remove = ".limit-duration" } ]\n' >>"$dir/removed.conf"
out=$("$run" -C "$dir/removed.conf" -p debug -t 2:00:00 2>/dev/null | head -n 1)
is "$out" "job 1: accepted" "remove = \".limit-duration\" lifts the duration limits"
out=$("$run" -C "$dir/removed.conf" -p debug -t 5 -N 2 2>/dev/null | head -n 1)
is "$out" "job 1: rejected: requested nnodes (2) exceeds policy limit of 1 for queue debug" \
	"and leaves the size limits"

# The example in conf/examples
example=$(cd "$(dirname "$0")/../../conf/examples" && pwd)/flux-policy.conf
out=$("$run" -C "$example" -p short -t 2:00:00 2>&1)
is "$?:$out" "1:job 1: rejected: requested duration (2h) exceeds policy limit of 1h for queue short" \
	"conf/examples/flux-policy.conf: its comment's try-it line"

# A bad table: Flux's message after the file and line, exit 2.
printf '[policy.limits]\nduration = "4h"\n\n[queues.debug.policy.limits]\nduration = "30 minutes"\n' >"$dir/bad.conf"
out=$("$run" -C "$dir/bad.conf" -t 10 2>&1)
is "$?" 2 "a bad [queues] table: exit 2"
is "$out" "jobtap-run: $dir/bad.conf:4: error parsing [queues.debug.policy.limits] config table: 'duration' is not a valid FSD" \
	"with the file, the table's line and Flux's words"
printf '[policy]\njobspec.defaults.system.queue = "batch"\n' >"$dir/bad.conf"
out=$("$run" -C "$dir/bad.conf" -t 10 2>&1)
is "$out" "jobtap-run: $dir/bad.conf:2: the [policy] config table defines a default queue batch that is not in [queues] table" \
	"a default queue [queues] does not list"
# A Flux-only table is named, not refused.
printf '[exec]\nservice = "sdexec"\n' >"$dir/flux.conf"
out=$("$run" -v -C "$dir/flux.conf" -t 10 2>&1 >/dev/null)
like "$out" "jobtap: \\[exec\\] is Flux's own configuration, with no meaning under Slurm: ignored" \
	"a Flux-only table is named at -v"
done_testing
