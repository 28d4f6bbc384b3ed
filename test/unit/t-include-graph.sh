#!/usr/bin/env bash
# No import circle in any source folder: scripts/include-graph finds none
# in src/* and lua/, and does find one it is shown.
#   t-include-graph.sh SOURCE_DIR
. "$(dirname "$0")/../lib/tap.sh"
src=${1:?usage: $0 SOURCE_DIR}
graph=$src/scripts/include-graph

out=$("$graph" "$src"/src/*/ "$src/lua" 2>&1)
rc=$?
is "$rc" 0 "no import circle in src/* and lua/"
[ -z "$out" ] || diag "$out"

# the checker itself: a.c calls b, b.c calls a (through each header)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "b.h"\n' >"$tmp/a.c"
printf '#include "a.h"\n' >"$tmp/b.c"
: >"$tmp/a.h"
: >"$tmp/b.h"
printf '#include "a.h"\n' >"$tmp/c.c"
out=$("$graph" "$tmp" 2>&1)
rc=$?
is "$rc" 1 "a circle is found"
like "$out" "circle: a b \\(a->b, b->a\\)" "and named with its edges"
done_testing
