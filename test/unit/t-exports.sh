#!/usr/bin/env bash
# libslurm-jobtap exports exactly its public API: every function the
# public headers declare (the Flux API in include/flux/, the host API in
# src/host_api/host.h), by name in libslurm-jobtap.map, and nothing else
# (nm -D of the library given, the build's or the installed one).
#   t-exports.sh LIBRARY SOURCE_DIR
. "$(dirname "$0")/../lib/tap.sh"
lib=${1:?usage: $0 LIBRARY SOURCE_DIR} src=${2:?usage: $0 LIBRARY SOURCE_DIR}
declared() {
	# function names the headers declare, comments left out
	cat "$src"/include/flux/core.h "$src"/include/flux/plugin.h \
		"$src"/include/flux/jobtap.h "$src"/src/host_api/host.h |
		perl -0777 -pe 's{/\*.*?\*/}{}gs' |
		grep -oE '\b(flux|jobtap)_[A-Za-z0-9_]+[[:space:]]*\(' | tr -d ' (' | sort -u
}
exported() { nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u; }
listed() { sed -n 's/^    \([A-Za-z0-9_]*\);$/\1/p' "$src/src/common/libslurm-jobtap.map" | sort -u; }

d=$(declared) e=$(exported) l=$(listed)
ok $([ -n "$d" ] && [ "$(wc -l <<<"$d")" -gt 100 ]; echo $?) "the headers declare the API ($(wc -l <<<"$d") functions)"
is "$(comm -13 <(echo "$d") <(echo "$e") | tr '\n' ' ')" "" "the library exports nothing the headers do not declare"
is "$(comm -23 <(echo "$d") <(echo "$e") | tr '\n' ' ')" "" "and every function they declare"
is "$(comm -3 <(echo "$d") <(echo "$l") | tr -d '\t' | tr '\n' ' ')" "" "libslurm-jobtap.map lists exactly those names"
done_testing
