#!/usr/bin/env bash
# jobtap-run and slurmctld build the same jobspec (src/jobspec): for each
# set of options, the jobspec slurmctld logs for `sbatch OPTIONS` is the
# one `jobtap-run --print-jobspec OPTIONS` prints. Needs root (a private
# cluster, test/lib/cluster.sh).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"
run=$JOBTAP_BUILD_DIR/src/jobtap-run/jobtap-run

conf=$(mktemp)
cat >"$conf" <<'TOML'
[slurm-jobtap]
log-jobspec = true
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"

submissions() { cluster_log | sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p'; }

first=$(sbatch --parsable -o /dev/null -t 1 --wrap 'sleep 30')

# Both run in /tmp: sbatch and jobtap-run send their directory as cwd.
# A job may be refused after job_submit (qos, reservation, licenses the
# test cluster lacks): its jobspec is logged all the same. GPU requests are
# refused before job_submit on a cluster without GRES: test_slurm_jobspec
# and t-jobtap-run.sh cover them.  Both get -o /dev/null, which is in the
# jobspec (Flux's stdout path).
same() {
	local n before slurm offline
	before=$(submissions | wc -l)
	(cd /tmp && sbatch -o /dev/null "$@" --wrap true >/dev/null 2>&1)
	cluster_wait_for 10 sh -c "[ \$(sed -n 's/.*jobtap: jobspec of a submission by uid 0: //p' '$CLUSTER_DIR/log/slurmctld.log' | wc -l) -gt $before ]"
	n=$(submissions | wc -l)
	slurm=$(submissions | tail -n 1)
	offline=$(cd /tmp && "$run" --default-queue debug --print-jobspec -o /dev/null "$@" 2>&1 |
		sed -n 's/^job 1: jobspec //p')
	ok $([ "$n" -eq $((before + 1)) ] && [ -n "$offline" ]; echo $?) "$*: one jobspec each way"
	is "$offline" "$slurm" "$*: jobtap-run builds slurmctld's jobspec"
}

same
same -N 1 -n 2 -c 1 -t 30 -p debug -A MyAcct -J named -D /tmp --comment=hello --exclusive --nice=5
same -n 3 -c 2 -t 1:30 --wckey=WK -D sub/dir
same -N 2 --ntasks-per-node=2 -t 2-0
same -N 1 -n 3 -c 2 -t 0 --exclusive
same --dependency="afterok:$first:$first,singleton" -q normal --reservation=r1 -L lic:1 --constraint='a&b'
same -d "$first" --constraint='a|b' --nice
# the wider map (memory the node lacks: refused after job_submit)
same -N 1-2 -n 2 -t 10 --time-min=2 --mem=100 --mail-type=END,FAIL --mail-user=ops@example.com
same -n 2 --mem-per-cpu=50 --mail-type=begin -e err.txt --exclusive=user
same -N 1 -D sub/dir -e err.txt --exclusive --mem-per-cpu=0
same --array=1-4%2 -n 1
same -a 0,3,5-7 -t 5

cluster_finish
done_testing
