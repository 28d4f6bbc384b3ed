-- The benchmark policy for Slurm's own job_submit/lua (Lua 5.1): reject
-- time limits over a day, send jobs that named no partition to "batch".
function slurm_job_submit (job_desc, part_list, submit_uid)
    local tl = job_desc.time_limit
    if tl ~= slurm.NO_VAL and tl > 1440 then
        slurm.log_user ("time limit " .. tl .. " minutes exceeds the limit of 1440")
        return slurm.ERROR
    end
    if job_desc.partition == nil then
        job_desc.partition = "batch"
    end
    return slurm.SUCCESS
end

function slurm_job_modify (job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end

return slurm.SUCCESS
