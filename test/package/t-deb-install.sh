#!/usr/bin/env bash
# The .debs of DIR installed as an admin would, in a clean Debian root of the
# release they were built for (scripts/package --check runs this there
# through scripts/release-root --clean): the plugins land in Slurm's
# PluginDir, pkg-config finds the headers, and a private cluster loads the
# plugins from there with the installed example policies.
. "$(dirname "$0")/../lib/tap.sh"

debs=${1:?usage: t-deb-install.sh DIR-WITH-DEBS}
export DEBIAN_FRONTEND=noninteractive
out=$(apt-get install -y -q --no-install-recommends "$debs"/*.deb 2>&1)
ok $? "apt-get installs the packages with their dependencies" || { diag "$out"; bail_out "not installed"; }

slurm_dir=$(dirname "$(find /usr/lib -name libslurmfull.so -print -quit)")
for so in job_submit_jobtap.so site_factor_jobtap.so prep_jobtap.so spank_jobtap.so; do
	is "$(dirname "$(dpkg -L slurm-jobtap | grep -m1 "/$so\$")")" "$slurm_dir" \
		"$so is in Slurm's PluginDir ($slurm_dir)"
done
is "$(dpkg-query -W -f='${Depends}' slurm-jobtap | grep -o 'slurmctld (= [^)]*)')" \
	"slurmctld (= $(dpkg-query -W -f='${Version}' slurmctld))" \
	"slurm-jobtap depends on exactly the installed slurmctld"
flags=$(pkg-config --cflags --libs slurm-jobtap 2>&1)
ok $? "pkg-config --cflags --libs slurm-jobtap works" || diag "$flags"
like "$flags" '-I/usr/include/slurm-jobtap( |$)' "the headers are in the private include dir"
test -f /usr/include/slurm-jobtap/flux/jobtap.h
ok $? "flux/jobtap.h is installed"
like "$flags" '-lslurm-jobtap( |$)' "and the library links with -lslurm-jobtap"

# The installed example policies, as an admin would first try them.
JOBTAP_BUILD_DIR=installed
. "$(dirname "$0")/../lib/cluster.sh"
ex=/usr/share/slurm-jobtap/conf/examples
conf=$(mktemp)
sed "s|load = \"\([a-z-]*\.lua\)\"|load = \"$ex/\1\"|" "$ex/jobtap.conf" >"$conf"
node=$(hostname -s)
cluster_start --jobtap-conf "$conf" --conf "PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
PartitionName=batch Nodes=$node MaxTime=INFINITE State=UP
PartitionName=short Nodes=$node MaxTime=INFINITE State=UP"
ok $? "a private cluster starts with the installed plugins loaded" || bail_out "cluster did not start"
rm -f "$conf"
like "$(cluster_conf_value PluginDir)" "^$slurm_dir\$" "PluginDir is Slurm's own: nothing staged from a build"

out=$(sbatch -p short -t 2:00:00 -o /dev/null --wrap true 2>&1)
is "$(head -n 1 <<<"$out")" "sbatch: error: queue short: duration 7200s exceeds the limit of 3600s" \
	"job_submit/jobtap rejects with the example policy's message"
id=$(sbatch --parsable -p short -t 10 -o /dev/null --wrap 'sleep 30' 2>&1)
ok $? "a job within the limits is accepted" || diag "$id"
cluster_wait_for 15 sh -c "squeue -h -j $id -o %T | grep -q RUNNING"
ok $? "released by the plugins once they decided, it runs"
like "$(cluster_log)" "site_factor/jobtap: init: loaded" "site_factor/jobtap logged that it loaded"
like "$(cluster_log)" "job_submit/jobtap: init: loaded" "job_submit/jobtap logged that it loaded"
like "$(cluster_log)" "prep/jobtap: init: loaded" "prep/jobtap logged that it loaded"

cluster_finish
done_testing
