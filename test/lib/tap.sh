# Minimal TAP producer for the shell integration tests. Sourced.
# Tests call ok/is/like/unlike and end with done_testing; meson reads the TAP.

_tap_n=0
_tap_failed=0

# ok COND-STATUS DESCRIPTION: pass when the status is 0.
ok() {
	local status=$1
	shift
	_tap_n=$((_tap_n + 1))
	if [ "$status" -eq 0 ]; then
		echo "ok $_tap_n - $*"
	else
		echo "not ok $_tap_n - $*"
		_tap_failed=$((_tap_failed + 1))
	fi
	return "$status"
}

# is GOT EXPECTED DESCRIPTION
is() {
	local got=$1 want=$2
	shift 2
	if [ "$got" = "$want" ]; then
		ok 0 "$@"
	else
		ok 1 "$@"
		diag "got:      '$got'"
		diag "expected: '$want'"
		return 1
	fi
}

# like GOT REGEX DESCRIPTION (extended regex, matched anywhere)
like() {
	local got=$1 re=$2
	shift 2
	if printf '%s\n' "$got" | grep -Eq -- "$re"; then
		ok 0 "$@"
	else
		ok 1 "$@"
		diag "got:            '$got'"
		diag "does not match: '$re'"
		return 1
	fi
}

unlike() {
	local got=$1 re=$2
	shift 2
	if printf '%s\n' "$got" | grep -Eq -- "$re"; then
		ok 1 "$@"
		diag "got:     '$got'"
		diag "matches: '$re'"
		return 1
	else
		ok 0 "$@"
	fi
}

# skip DESCRIPTION: a check that cannot be made this time, said so.
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # skip $*"
}

# Every line of a diagnostic is a TAP comment, even for multi-line values.
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

# bail_out REASON: stop the whole test file now.
bail_out() {
	echo "Bail out! $*"
	exit 1
}

tap_failed() { [ "$_tap_failed" -gt 0 ]; }

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}
