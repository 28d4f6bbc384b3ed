#!/usr/bin/env bash
# test/slurm-testsuite/compare.py, which judges Slurm's own tests without
# and with the plugins: equal outcomes pass, a difference fails unless the
# test's second run passes in both modes (a flake, listed), a failure in
# both is listed only, and a mode without results fails.
. "$(dirname "$0")/../lib/tap.sh"
compare=$(cd "$(dirname "$0")/../slurm-testsuite" && pwd)/compare.py

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# result MODE FILE NODEID OUTCOME [MESSAGE]: one line of jobtap_sts.py's file
result() {
	mkdir -p "$out/$1"
	printf '{"nodeid": "%s", "outcome": "%s", "message": "%s", "seconds": 1.0}\n' \
		"$3" "$4" "${5:-}" >>"$out/$1/$2"
}
# run: compare.py's output, and its exit status in $rc
run() {
	got=$(/usr/bin/python3 "$compare" "$out" "Slurm X")
	rc=$?
}

result without results.jsonl tests/t.py::same passed
result with results.jsonl tests/t.py::same passed
result without results.jsonl tests/t.py::both failed "boom"
result with results.jsonl tests/t.py::both failed "boom"
echo 2 >"$out/with/start-attempts"
echo 1 >"$out/without/start-attempts"
run
is "$rc" 0 "equal outcomes: success"
like "$got" "^Slurm X, with plugins: 2 run, .*\(its cluster started at the second try\)$" \
	"a mode whose cluster took a second start says so"
unlike "$got" "^Slurm X, without plugins: .*second try" "one that started at once does not"
like "$got" "^1 passed, 0 failed$" "one equal outcome counted (a failure in both is not)"
like "$got" "^No test's outcome differs between the modes\.$" "and said so"
like "$got" "^  tests/t\.py::both: boom$" "the failure in both is listed"

result without results.jsonl tests/t.py::racy failed "too slow"
result with results.jsonl tests/t.py::racy passed
result without results.jsonl "tests/t.py::real[a b]" passed
result with results.jsonl "tests/t.py::real[a b]" failed "rejected"
is "$(/usr/bin/python3 "$compare" --differing "$out")" "tests/t.py::racy
tests/t.py::real[a b]" "--differing names the two tests that differ, one a line"
run
is "$rc" 1 "a difference not run again: failure"
like "$got" "^1 passed, 2 failed$" "both differences counted"
like "$got" "^  tests/t\.py::real\[a b\] +passed +failed +rejected$" "with the with-plugins message"

result without results-again.jsonl tests/t.py::racy passed
result with results-again.jsonl tests/t.py::racy passed
result without results-again.jsonl "tests/t.py::real[a b]" passed
result with results-again.jsonl "tests/t.py::real[a b]" failed "rejected"
run
is "$rc" 1 "a difference that came back: still a failure"
like "$got" "^1 passed, 1 failed$" "only the difference that came back is counted"
like "$got" "^  tests/t\.py::racy: first without failed, with passed \(too slow\); again without passed, with passed$" \
	"the one that did not is listed as a flake, with both runs"
unlike "$got" "^  tests/t\.py::racy +failed" "and not among the differences"

rm -f "$out"/*/results-again.jsonl
result without results-again.jsonl "tests/t.py::real[a b]" passed
run
like "$got" "^1 passed, 2 failed$" "a test run again in one mode only is still counted"

rm -f "$out"/*/results-again.jsonl
result without results-again.jsonl tests/t.py::racy failed
result with results-again.jsonl tests/t.py::racy failed
run
like "$got" "^1 passed, 2 failed$" "one that fails in both modes when run again is still counted"

rm -rf "$out/with"
run
is "$rc" 1 "a mode that gave no results: failure"
like "$got" "^Slurm X, with plugins: did not run" "named"
like "$got" "^0 passed, 1 failed$" "counted as one failure"
is "$(/usr/bin/python3 "$compare" --differing "$out")" "" "--differing names nothing without both modes"

done_testing
