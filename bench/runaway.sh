#!/usr/bin/env bash
# A runaway policy across many pending jobs: a policy whose
# job.priority.get fails for every job (runaway.lua: a loop that runs
# into the instruction limit; or fail-priority.so, a C plugin returning
# -1), many pending jobs, and the shim's periodic pass every few seconds.
# Measures what users and admins see while passes run: sbatch's latency
# (median, p99 and max over every call of the measuring loop) and the log
# lines slurmctld writes per pass. Targets: p99 under 100 ms with 10k
# pending jobs, a bounded number of log lines per pass. Needs root.
#
#   bench/runaway.sh [--jobs 10000] [--period 5] [--seconds 30]
#                    [--kind lua|c] [--out FILE]
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/cluster.sh"
. "$top/bench/lib.sh"

jobs=10000 period=5 seconds=30 kind=lua out=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) jobs=$2; shift 2 ;;
	--period) period=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--kind) kind=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--jobs N] [--period S] [--seconds S] [--kind lua|c] [--out FILE]" >&2; exit 2 ;;
	esac
done
case $kind in
lua) load=$top/bench/policies/runaway.lua ;;
c) load=$BENCH_BUILD/bench/fail-priority.so ;;
*) echo "--kind is lua or c" >&2; exit 2 ;;
esac
bench_begin "$out" || exit 1
conf=$(mktemp)
printf '[job-manager]\nplugins = [ { load = "%s" } ]\n[slurm-jobtap]\nreprioritize-period = %d\n' \
	"$load" "$period" >"$conf"
cluster_start --jobtap-conf "$conf" --conf "MaxJobCount=$((jobs + 5000))
MinJobAge=600" || bench_finish 1
rm -f "$conf"
scontrol update nodename="$CLUSTER_NODE" state=drain reason=bench || bench_finish 1
bench_say "submitting $jobs jobs (they stay pending: the node is drained)"
"$BENCH_CLIENT" -q -s -n "$jobs" -t 4 >/dev/null || bench_finish 1
sleep "$period" # a first pass over all of them

log=$CLUSTER_DIR/log/slurmctld.log
before=$(wc -l <"$log")
bench_say "sbatch in a loop for $seconds s ($kind policy, a pass every $period s)"
lat=$CLUSTER_DIR/latency
: >"$lat"
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
	t0=$(date +%s%N)
	sbatch -o /dev/null -t 5 --wrap true >/dev/null 2>&1 || echo "failed" >>"$lat"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000)) >>"$lat"
done
after=$(wc -l <"$log")
summaries=$(tail -n +"$((before + 1))" "$log" | grep -c 'job.priority.get failed for')
# the policy's lines (its errors, tracebacks, the summaries), not sbatch's
policy_lines=$(tail -n +"$((before + 1))" "$log" | grep -v '_slurm_rpc_submit_batch_job' |
	grep -c -E "runaway|fail-priority|stack traceback|^\s|job.priority.get")
python3 - "$lat" "$((after - before))" "$summaries" "$seconds" "$period" "$jobs" "$kind" "$policy_lines" <<'PY' | tee -a "$out"
import sys
path, lines, summaries, seconds, period, jobs, kind, policy = sys.argv[1:]
v = sorted(int(l) for l in open(path) if l.strip().isdigit())
failed = sum(1 for l in open(path) if l.startswith("failed"))
pct = lambda p: v[min(len(v) - 1, int(p * len(v)))] / 1000
passes = max(int(seconds) // int(period), 1)
print(f"kind={kind} jobs={jobs} period={period}s calls={len(v)} failed={failed} "
      f"sbatch_ms_p50={pct(0.5):.1f} p99={pct(0.99):.1f} max={v[-1] / 1000:.1f} "
      f"log_lines={lines} policy_lines={policy} summaries={summaries} "
      f"policy_lines_per_pass={int(policy) / passes:.1f}")
PY
bench_finish 0
