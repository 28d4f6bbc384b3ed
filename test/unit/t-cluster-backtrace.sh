#!/usr/bin/env bash
# The test harness's crash report: a daemon started through
# cluster_exec_dumpable leaves a core in its working directory, and
# _cluster_backtraces (part of a failed test's log dump) prints where it
# crashed.  Skipped where gdb is missing or cores go to a handler
# (core_pattern a pipe or a path elsewhere).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
if ! command -v gdb >/dev/null || [ -z "$pattern" ] || [[ "$pattern" == *"|"* || "$pattern" == */* ]]; then
	echo "1..0 # SKIP no gdb, or cores do not land in the working directory (core_pattern: $pattern)"
	exit 0
fi
CLUSTER_DIR=$(mktemp -d)
trap 'rm -rf "$CLUSTER_DIR"' EXIT
mkdir "$CLUSTER_DIR/log"
(cd "$CLUSTER_DIR/log" && exec 2>/dev/null && {
	(cluster_exec_dumpable /usr/bin/sleep 100) &
	pid=$!
	sleep 0.3
	kill -SEGV "$pid"
	wait "$pid"
})
ok "$(find "$CLUSTER_DIR/log" -name 'core*' | grep -q .; echo $?)" "the crashed daemon left a core"
out=$(_cluster_backtraces)
like "$out" "^# ---- $CLUSTER_DIR/log/core[^ ]*: /usr/bin/sleep crashed; its backtrace ----" \
	"the dump names the core and the program"
like "$out" "Program terminated with signal SIGSEGV" "with the signal"
like "$out" "^# #0 " "and the faulting thread's frames"
done_testing
