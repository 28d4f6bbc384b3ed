#!/usr/bin/env bash
# Slurm stays Slurm: what a user sees at submit with the three plugins
# loaded (no policy, then the example policies with limits wide enough to
# accept) is what the same cluster shows without them: Slurm's refusals
# with its messages and exit codes, --immediate, srun and salloc silent and
# started inside the request, sprio and EligibleTime at once, the same
# reasons and priorities, holds, releases and requeuehold as before.
# Each observation is made on a fresh cluster per mode and compared with
# the one made without slurm-jobtap.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

node=$(hostname -s)
ex=$(cd "$(dirname "$0")/../../conf/examples" && pwd)
# Both modes compute priorities the same way (sprio needs multifactor).
conf="PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityMaxAge=1-0
KillWait=5"

# Job ids and times differ from run to run: compare their shape. salloc's
# lines on how its end raced the controller's vary run to run with Slurm
# alone too.
norm() {
	grep -Ev 'has been revoked|Waiting for resource configuration|are ready for job' <<<"$1" |
		sed -E 's/[0-9]+/N/g' | tr '\n' '|'
}
state() { squeue -h -j "$1" -t all -o "$2" 2>/dev/null; }
wait_state() { cluster_wait_for "${3:-20}" sh -c "squeue -h -j $1 -t all -o %T | grep -qx $2"; }
# The job before has ended, but its node stays COMPLETING until slurmd
# reports its epilog, and Slurm alone then answers --immediate with "nodes
# are busy" too: an observation "on an idle node" waits for the node.
wait_idle() { cluster_wait_for 20 _cluster_node_idle; }

# One line per observation, "name: what was seen".
observe() {
	local out rc busy pend held run
	out=$(sbatch --mem=5000 -o /dev/null --wrap true 2>&1)
	rc=$?
	echo "impossible memory: exit $rc: $(norm "$out")"
	out=$(salloc --immediate -n1 true 2>&1)
	rc=$?
	echo "salloc --immediate on an idle node: exit $rc: $(norm "$out")"
	wait_idle
	out=$(srun --immediate -n1 true 2>&1)
	rc=$?
	echo "srun --immediate on an idle node: exit $rc: $(norm "$out")"
	wait_idle
	out=$(srun -n1 true 2>&1)
	rc=$?
	echo "srun on an idle node: exit $rc: stderr [$(norm "$out")]"
	wait_idle
	out=$(salloc -n1 true 2>&1)
	rc=$?
	echo "salloc on an idle node: exit $rc: $(norm "$out")"

	# One CPU taken: a job that cannot run waits, seen at once.
	busy=$(sbatch --parsable -n1 -o /dev/null --wrap 'sleep 120')
	wait_state "$busy" RUNNING
	out=$(salloc --no-shell -n1 --immediate=10 2>&1)
	rc=$?
	echo "salloc --no-shell on the free CPU: exit $rc: $(norm "$out")"
	local alloc
	alloc=$(grep -oE 'job allocation [0-9]+' <<<"$out" | grep -oE '[0-9]+$')
	[ -n "$alloc" ] && echo "its state: $(state "$alloc" %T)" && scancel "$alloc"
	pend=$(sbatch --parsable -n2 -o /dev/null --wrap true)
	echo "sprio at once: $(sprio -h -j "$pend" -o '%.8i' 2>&1 | wc -l) line"
	echo "eligible at once: $(scontrol show job "$pend" | grep -oE 'EligibleTime=[^ ]+' | sed -E 's/=[0-9].*/=<time>/')"
	# None until the first scheduler pass that looks at it, Resources
	# after: under load that pass can come before squeue asks, in either
	# mode. A hold or a jobtap reason still differs.
	echo "pending job: $(state "$pend" '%T %r' | sed -E 's/ (None|Resources)$/ None or Resources/')"
	[ "$mode" = policies ] || echo "its priority: $(state "$pend" %Q)"
	held=$(sbatch --parsable -H -o /dev/null --wrap true)
	echo "sbatch -H: $(state "$held" '%T %r %Q')"
	scontrol release "$held"
	echo "released: $(state "$held" '%T %r' | sed -E 's/ (None|Resources)$/ None or Resources/')"
	scancel "$held" "$pend" "$busy"
	wait_state "$busy" CANCELLED

	# requeuehold: back to pending, held by its user, and stays so.
	run=$(sbatch --parsable -n1 -o /dev/null --wrap 'sleep 120')
	wait_state "$run" RUNNING
	scontrol requeuehold "$run"
	wait_state "$run" PENDING 60
	echo "requeuehold: $(state "$run" '%T %r %Q')"
	sleep 3
	echo "3 s later: $(state "$run" '%T %r %Q')"
	scancel "$run"

	# The same with a job that ignores SIGTERM: pending and still
	# completing for KillWait, while the shim's periodic passes run.
	run=$(sbatch --parsable -n1 -o /dev/null --wrap "trap '' TERM; sleep 120")
	wait_state "$run" RUNNING
	scontrol requeuehold "$run"
	wait_state "$run" PENDING 60
	echo "slow requeuehold: $(state "$run" '%T %r %Q')"
	scancel "$run"
}

run_mode() {
	mode=$1
	shift
	cluster_start "$@" || bail_out "the $mode cluster did not start"
	cluster_wait_for 30 _cluster_node_idle
	observe >"$CLUSTER_DIR/observed"
	cp "$CLUSTER_DIR/observed" "$results/$mode"
	cluster_stop
}

results=$(mktemp -d)

run_mode slurm --no-jobtap --conf "$conf"

# the shim's periodic passes every second, so that one comes while a
# requeued job is still completing
period='[slurm-jobtap]
reprioritize-period = 1
'
none=$(mktemp)
printf '[job-manager]\nplugins = []\n%s' "$period" >"$none"
run_mode none --jobtap-conf "$none" --conf "$conf"

policies=$(mktemp)
cat >"$policies" <<TOML
[job-manager]
plugins = [
  { load = "$ex/limits.lua", conf = { default = { max-nodes = 64, max-cores = 128 } } },
  { load = "$ex/priority.lua", conf = { urgency-weight = 1000, core-weight = 10 } },
  { load = "$ex/max-running.lua", conf = { max-running = 10 } },
]
$period
TOML
run_mode policies --jobtap-conf "$policies" --conf "$conf"
rm -f "$none" "$policies"

# Slurm's own answers first: the comparison means something only if Slurm
# answered as this test expects.
like "$(grep '^impossible memory' "$results/slurm")" 'exit 1: .*Requested node configuration is not available' \
	"Slurm alone refuses an impossible --mem at submit"
like "$(grep '^srun --immediate' "$results/slurm")" 'exit 0' "Slurm alone runs srun --immediate on an idle node"
like "$(grep '^sprio at once' "$results/slurm")" ': 1 line' "Slurm alone: sprio lists a job at once"
is "$(grep '^slow requeuehold' "$results/slurm")" 'slow requeuehold: PENDING job requeued in held state 0' \
	"Slurm alone: a job requeued held while it is still ending stays held"

for mode in none policies; do
	while IFS= read -r want; do
		name=${want%%:*}
		# the example priority.lua sets priorities: a policy's decision
		[ "$mode" = policies ] && [ "$name" = "its priority" ] && continue
		got=$(grep -F "$name:" "$results/$mode" | head -n 1)
		is "$got" "$want" "$mode: $name as without slurm-jobtap"
	done <"$results/slurm"
	is "$(grep -vc '^its priority' "$results/$mode")" "$(grep -vc '^its priority' "$results/slurm")" \
		"$mode: as many observations"
done
for mode in slurm none policies; do
	diag "$mode:"
	diag "$(cat "$results/$mode")"
done
rm -rf "$results"
done_testing
