#!/usr/bin/env bash
# The test harness's cluster_start refuses options it cannot honour
# before it starts anything: its message, its status, and no cluster
# directory left behind.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

TMPDIR=$(mktemp -d)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

refused() { # EXPECTED-MESSAGE WHAT OPTIONS...
	local expected=$1 what=$2 out rc
	shift 2
	out=$( (cluster_start "$@") 2>&1)
	rc=$?
	is "$rc/$out" "1/cluster: $expected" "$what is refused, naming why"
	is "$(find "$TMPDIR" -mindepth 1 | wc -l)" 0 "and leaves nothing behind"
}

refused "--conf NodeName=... replaces all 2 nodes; give their resources with --node-conf" \
	"a NodeName line with --nodes 2" --nodes 2 --conf "NodeName=n1 CPUs=1"
refused "--nodes: a number of nodes, not 'two'" "--nodes two" --nodes two
refused "unknown option --twin" "an unknown option" --twin
done_testing
