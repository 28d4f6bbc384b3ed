-- limits.lua: duration and size limits per queue.
--
--   { load = "limits.lua", conf = {
--       queues = { debug = { max-duration = 3600, max-nodes = 1, max-cores = 2 },
--                  batch = { max-duration = 86400, max-nodes = 4 } },
--       default = { max-duration = 3600 } } }
--
-- A queue without an entry gets "default" (no limits if that is absent).
-- A limit of 0 or an absent key means unlimited.  Jobs without a duration
-- (unlimited) are rejected when the queue has a max-duration.
local jobtap = require "jobtap"

local function limits_for (queue)
    local queues = jobtap.conf.queues or {}
    return queues[queue or ""] or jobtap.conf.default or {}
end

local function check (job)
    local queue = job.queue or "(none)"
    local lim = limits_for (job.queue)
    local maxdur = lim["max-duration"] or 0
    if maxdur > 0 then
        if job.duration == 0 then
            return false, string.format (
                "queue %s: a time limit is required (at most %ds)",
                queue, maxdur)
        end
        if job.duration > maxdur then
            return false, string.format (
                "queue %s: duration %ds exceeds the limit of %ds",
                queue, job.duration, maxdur)
        end
    end
    local maxnodes = lim["max-nodes"] or 0
    if maxnodes > 0 and job.nnodes > maxnodes then
        return false, string.format (
            "queue %s: %d nodes exceeds the limit of %d",
            queue, job.nnodes, maxnodes)
    end
    local maxcores = lim["max-cores"] or 0
    if maxcores > 0 and job.ncores > maxcores then
        return false, string.format (
            "queue %s: %d cores exceeds the limit of %d",
            queue, job.ncores, maxcores)
    end
    return true
end

-- at submit, and again when the job's jobspec is updated
jobtap.on ("job.validate", check)
