#!/usr/bin/env bash
# A plugin Slurm cannot load must make the harness fail loudly: slurmctld
# 22.05 only logs "cannot create site_factor context" for a bad site_factor
# name and carries on without it; 24.11 exits.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

out=$( (cluster_start --conf 'PrioritySiteFactorPlugin=site_factor/missing' && cluster_stop) 2>&1)
ok $((!$?)) "cluster_start fails when site_factor plugin is missing"
if [ "$(cluster_slurm_release)" -ge 2411 ]; then
	like "$out" 'slurmctld exited during start-up' "harness reports slurmctld exiting"
	like "$out" 'site_factor/missing' "log tail names the missing plugin"
else
	like "$out" 'slurmctld failed to load a plugin' "harness says a plugin failed to load"
	like "$out" 'cannot create site_factor context for site_factor/missing' "and quotes slurmctld's log line"
fi
like "$out" 'logs kept in ' "logs are kept"
rm -rf "$(sed -n 's/^cluster: logs kept in //p' <<<"$out")"

out=$( (cluster_start --conf 'JobSubmitPlugins=nonexistent' && cluster_stop) 2>&1)
ok $((!$?)) "cluster_start fails when a job_submit plugin is missing"
like "$out" 'slurmctld exited during start-up' "harness reports slurmctld exiting"
like "$out" 'job_submit/nonexistent' "log tail names the missing plugin"
rm -rf "$(sed -n 's/^cluster: logs kept in //p' <<<"$out")"

# A broken jobtap.conf stops slurmctld at start-up, naming file and line.
bad=$(mktemp)
printf '[job-manager]\nplugins = [ { load = "nosuch.so" } ]\n' >"$bad"
out=$( (cluster_start --jobtap-conf "$bad" && cluster_stop) 2>&1)
ok $((!$?)) "cluster_start fails when jobtap.conf names a missing plugin"
like "$out" 'jobtap: /.*/jobtap.conf:2: \[job-manager.plugins\]\[0\]: load: nosuch.so: No such plugin found' \
	"slurmctld logs the file, line and entry"
like "$out" 'fatal: failed to initialize job_submit plugin' "and refuses to start"
rm -rf "$(sed -n 's/^cluster: logs kept in //p' <<<"$out")" "$bad"

done_testing
