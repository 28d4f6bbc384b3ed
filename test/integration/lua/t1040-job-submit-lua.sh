#!/usr/bin/env bash
# JobSubmitPlugins=lua,jobtap: Slurm's job_submit/lua (Lua 5.1 in Debian's
# packages; 5.4 where Slurm was built from source here) and a Lua 5.4
# jobtap policy in one slurmctld, each with its own Lua.
. "$(dirname "$0")/../../lib/tap.sh"
. "$(dirname "$0")/../../lib/cluster.sh"

pol=$(cd "$(dirname "$0")/policies" && pwd)
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$pol/coexist.lua" } ]
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"

# job_submit/lua needs job_submit.lua beside slurm.conf at start-up:
# add both, then restart slurmctld.
cat >"$CLUSTER_DIR/job_submit.lua" <<'EOF'
function slurm_job_submit (job_desc, part_list, submit_uid)
    if job_desc.name == "bad51" then
        slurm.log_user ("rejected by job_submit.lua on " .. _VERSION)
        return slurm.ERROR
    end
    job_desc.comment = "set by " .. _VERSION
    return slurm.SUCCESS
end
function slurm_job_modify (job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end
return slurm.SUCCESS
EOF
sed -i 's/^JobSubmitPlugins=.*/JobSubmitPlugins=lua,jobtap/' "$CLUSTER_DIR/slurm.conf"
cluster_restart_slurmctld || bail_out "slurmctld did not restart"
like "$(cluster_log)" 'job_submit/jobtap: init: loaded' "job_submit/jobtap loaded"
unlike "$(cluster_log)" 'cannot create job_submit context' "and job_submit/lua too"

first() { head -n 1 <<<"$1"; }
# The Lua Slurm's job_submit/lua links, as _VERSION names it ("Lua 5.1").
slurm_lua=$(ldd "$(ls /usr/lib/*/slurm*/job_submit_lua.so | head -n 1)" |
	sed -n 's/.*liblua-\{0,1\}\(5\.[0-9]\).*/Lua \1/p' | head -n 1)
like "$slurm_lua" '^Lua 5\.[1-4]$' "Slurm's job_submit/lua links a Lua ($slurm_lua)"
id=$(sbatch --parsable -o /dev/null -t 5 -J both --wrap true 2>&1)
like "$id" '^[0-9]+$' "a job passes both"
like "$(scontrol show job -o "$id")" "Comment=set by $slurm_lua then Lua 5.4" \
	"job_submit.lua ran on $slurm_lua, then the jobtap policy on Lua 5.4"
out=$(sbatch -o /dev/null -t 5 -J bad51 --wrap true 2>&1)
is "$(first "$out")" "sbatch: error: rejected by job_submit.lua on $slurm_lua" "job_submit.lua rejects with its message"
out=$(sbatch -o /dev/null -t 5 -J bad54 --wrap true 2>&1)
is "$(first "$out")" "sbatch: error: rejected by a Lua 5.4 policy" "the Lua 5.4 policy rejects with its message"
cluster_wait_for 15 sh -c "squeue -h -j $id -t all -o %T | grep -q COMPLETED"
is "$(squeue -h -j "$id" -t all -o %T)" COMPLETED "the accepted job runs"
kill -0 "${CLUSTER_PIDS[1]}" 2>/dev/null
ok $? "slurmctld is alive"

cluster_finish
done_testing
