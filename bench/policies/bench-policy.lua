-- The benchmark policy as a jobtap Lua policy (same as
-- bench/plugins/bench-policy.c): reject durations over a day, send jobs
-- that picked no partition to the default queue.
local jobtap = require "jobtap"
local conf = jobtap.conf
local max_duration = conf["max-duration"] or 86400
local default_queue = conf["default-queue"] or "batch"
local slurm_default = conf["slurm-default"] or "debug"

jobtap.on ("job.validate", function (job)
    local d = job.duration
    if d > max_duration then
        return false, string.format ("duration %ds exceeds the limit of %ds",
                                     d, max_duration)
    end
    local q = job.queue
    if q == nil or q == slurm_default then
        job:update { ["attributes.system.queue"] = default_queue }
    end
end)
