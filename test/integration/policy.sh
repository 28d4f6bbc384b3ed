# Start a private cluster whose jobtap.conf loads the integration test
# plugin slurm-policy.so (test/integration/plugins). Sourced after
# test/lib/tap.sh and test/lib/cluster.sh.
#
#   start_policy_cluster PLUGIN_CONF [SETTINGS [cluster_start options...]]
#
# PLUGIN_CONF is the body of the plugin's TOML conf table
# ('max-duration = 86400.0'), SETTINGS more TOML appended to the file
# (e.g. a [slurm-jobtap] table).
start_policy_cluster() {
	local conf rc
	conf=$(mktemp)
	printf '[job-manager]\nplugins = [ { load = "%s", conf = { %s } } ]\n%s\n' \
		"$JOBTAP_BUILD_DIR/test/integration/slurm-policy.so" "$1" "${2:-}" >"$conf"
	cluster_start --jobtap-conf "$conf" "${@:3}"
	rc=$?
	rm -f "$conf"
	return $rc
}
