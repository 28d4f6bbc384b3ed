#!/usr/bin/env bash
# Slurm stays Slurm for heterogeneous jobs: with the three plugins loaded
# and no policy, sbatch, srun and salloc with components answer as the
# same two-node cluster does without them: Slurm's refusals, holds,
# releases, reasons, priorities and ends, for every component.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

# hetjobs start only in backfill passes: one a second
conf="SchedulerParameters=bf_interval=1
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightJobSize=1000
PriorityMaxAge=1-0"

# Job ids and times differ from run to run: compare their shape. salloc's
# lines on how its end raced the controller's and which node was ready
# first vary with Slurm alone too.
norm() { grep -Ev 'has been revoked|are ready for job' <<<"$1" | sed -E 's/[0-9]+/N/g' | tr '\n' '|'; }
# each component's, in component order
components() { squeue -h -t all -j "$1" -o "%i $2" 2>/dev/null | sort | cut -d' ' -f2- | tr '\n' ' '; }
all_done() { ! squeue -h -t all -j "$1" -o %T | grep -qvE 'COMPLETED|CANCELLED|FAILED'; }

# One line per observation, "name: what was seen".
observe() {
	local out rc het busy1 busy2
	out=$(sbatch -n1 -o /dev/null : -n1 --wrap 'sleep 1' 2>&1)
	rc=$?
	echo "sbatch of two components: exit $rc: $(norm "$out")"
	het=$(grep -oE '[0-9]+$' <<<"$out")
	cluster_wait_for 30 all_done "$het"
	echo "its end: $(components "$het" %T)"
	out=$(timeout 60 srun -n1 : -n1 true 2>&1)
	rc=$?
	echo "srun of two components: exit $rc: stderr [$(norm "$out")]"
	out=$(timeout 60 salloc -n1 : -n1 true 2>&1)
	rc=$?
	echo "salloc of two components: exit $rc: $(norm "$out")"
	out=$(sbatch --mem=50000 -n1 -o /dev/null : -n1 --wrap true 2>&1)
	rc=$?
	echo "impossible memory in a component: exit $rc: $(norm "$out")"
	out=$(sbatch -n1 -o /dev/null : -n1 --mem=50000 --wrap true 2>&1)
	rc=$?
	echo "impossible memory in the second: exit $rc: $(norm "$out")"

	het=$(sbatch --parsable -H -n1 -o /dev/null : -n1 --wrap true)
	echo "sbatch -H: $(components "$het" '%T %r %Q')"
	scontrol release "$het"
	cluster_wait_for 30 all_done "$het"
	echo "released: $(components "$het" '%T')"

	# both nodes busy: the hetjob waits, as Slurm shows it
	busy1=$(sbatch --parsable -N1 -c2 -o /dev/null --wrap 'sleep 120')
	busy2=$(sbatch --parsable -N1 -c2 -o /dev/null --wrap 'sleep 120')
	cluster_wait_for 20 sh -c "[ \$(squeue -h -t running -o %i | wc -l) = 2 ]"
	het=$(sbatch --parsable -n1 -o /dev/null : -n2 --wrap true)
	echo "sprio at once: $(sprio -h -o '%.8i' 2>&1 | grep -c .) lines"
	sleep 3 # a few backfill passes
	echo "waiting: $(components "$het" '%T %r')"
	echo "priorities: $(components "$het" '%Q')"
	scontrol hold "$het"
	echo "scontrol hold: $(components "$het" '%T %r %Q')"
	scontrol release "$het"
	# None until the next scheduler pass looks at it, Resources after:
	# whether that pass comes before squeue asks is timing, in either mode
	echo "scontrol release: $(components "$het" '%T %r' | sed -E 's/PENDING (None|Resources)( |$)/PENDING None or Resources\2/g')"
	scancel "$het"
	cluster_wait_for 20 all_done "$het"
	echo "scancel: $(components "$het" %T)"
	scancel "$busy1" "$busy2"
}

run_mode() {
	mode=$1
	shift
	cluster_start --nodes 2 "$@" || bail_out "the $mode cluster did not start"
	observe >"$CLUSTER_DIR/observed"
	cp "$CLUSTER_DIR/observed" "$results/$mode"
	cluster_stop
}

results=$(mktemp -d)
run_mode slurm --no-jobtap --conf "$conf"
none=$(mktemp)
printf '[job-manager]\nplugins = []\n[slurm-jobtap]\nreprioritize-period = 1\n' >"$none"
run_mode none --jobtap-conf "$none" --conf "$conf"
rm -f "$none"

# Slurm's own answers first: the comparison means something only if Slurm
# answered as this test expects.
like "$(grep '^sbatch of two' "$results/slurm")" 'exit 0: Submitted batch job N' "Slurm alone takes a hetjob"
is "$(grep '^its end' "$results/slurm")" 'its end: COMPLETED COMPLETED ' "and runs it on the two nodes"
like "$(grep '^srun of two' "$results/slurm")" 'exit 0' "Slurm alone runs srun with two components"
like "$(grep '^impossible memory in the second' "$results/slurm")" 'exit 1' "and refuses an impossible component"

while IFS= read -r want; do
	name=${want%%:*}
	got=$(grep -F "$name:" "$results/none" | head -n 1)
	is "$got" "$want" "$name as without slurm-jobtap"
done <"$results/slurm"
is "$(wc -l <"$results/none")" "$(wc -l <"$results/slurm")" "as many observations"
for mode in slurm none; do
	diag "$mode:"
	diag "$(cat "$results/$mode")"
done
rm -rf "$results"
done_testing
