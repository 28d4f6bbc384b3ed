-- priority.lua: a priority from urgency and job size.
--
--   { load = "priority.lua", conf = {
--       urgency-weight = 1000,   # per urgency point (0..31, default 16)
--       core-weight = 10,        # per core requested
--       node-weight = 0,         # per node requested
--       base = 0 } }
--
-- priority = base + urgency * urgency-weight + ncores * core-weight
--            + nnodes * node-weight, clamped to 0..4294967295.
-- Urgency 0 (held) and 31 (expedite) are forced to 0 and the maximum by
-- the runtime whatever the policy answers.
local jobtap = require "jobtap"
local conf = jobtap.conf

local function weight (key, default)
    local v = conf[key]
    if v == nil then return default end
    return v
end

local function priority (job)
    local p = weight ("base", 0)
        + job.urgency * weight ("urgency-weight", 1000)
        + job.ncores * weight ("core-weight", 10)
        + job.nnodes * weight ("node-weight", 0)
    p = math.floor (p)
    if p < jobtap.PRIORITY_MIN then p = jobtap.PRIORITY_MIN end
    if p > jobtap.PRIORITY_MAX then p = jobtap.PRIORITY_MAX end
    return p
end

-- when the job first needs a priority, and on every reprioritize
jobtap.on ("job.state.priority", function (job) job:set_priority (priority (job)) end)
jobtap.on ("job.priority.get", function (job) job:set_priority (priority (job)) end)
