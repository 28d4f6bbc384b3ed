#!/usr/bin/env bash
# jobtap-run with conf/examples/jobtap.conf: decisions printed exactly.
. "$(dirname "$0")/../lib/tap.sh"
run=$JOBTAP_BUILD_DIR/src/jobtap-run/jobtap-run
conf=$(cd "$(dirname "$0")/../../conf/examples" && pwd)/jobtap.conf

out=$("$run" -C "$conf" -p short -t 2:00:00 2>&1)
is "$?" 1 "a rejected job exits 1"
is "$out" "job 1: rejected: queue short: duration 7200s exceeds the limit of 3600s" "limits.lua rejects"
out=$("$run" -C "$conf" --default-queue debug -t 10 -n 2 2>&1)
is "$?" 0 "an accepted job exits 0"
is "$out" 'job 1: accepted
job 1: update attributes.system.bank = "general"
job 1: update attributes.system.queue = "batch"
job 1: priority 16020
job 1: state SCHED, priority 16020, dependencies []' "defaults and priority"
script=$(mktemp)
cat >"$script" <<S
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
submit -p batch -t 10 -A ops
run 1
finish 1
inactive 1
S
out=$("$run" -C "$conf" -f "$script" 2>&1)
like "$out" 'job 5: held: jobtap: max-running-jobs' "the fifth job of a user waits"
like "$out" 'job 5: released' "and is released when the first ends"
like "$out" 'job 1: state INACTIVE' "states are printed"
rm -f "$script"
out=$("$run" -C /nonexistent.conf 2>&1)
is "$?" 2 "a bad config exits 2"
done_testing
