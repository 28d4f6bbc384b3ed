-- Runs beside job_submit.lua (Lua 5.1) in the same slurmctld.
local jobtap = require "jobtap"
jobtap.on ("job.validate", function (job)
    if job.name == "bad54" then
        return false, "rejected by a " .. _VERSION .. " policy"
    end
    local comment = job.slurm.comment or ""
    job:update { ["attributes.system.slurm.comment"] = comment .. " then " .. _VERSION }
end)
