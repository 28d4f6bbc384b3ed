-- defaults.lua: a default queue and bank.
--
--   { load = "defaults.lua", conf = {
--       default-queue = "batch",          # for jobs that name no queue
--       replace-queues = ["debug"],       # queues treated as "none given"
--       default-bank = "general",         # for jobs that name no bank
--       user-banks = { "1000" = "physics" } } }   # by uid
--
-- Slurm always fills in its default partition before job_submit, so a
-- job that named none arrives with that partition: list it in
-- replace-queues to route such jobs to default-queue.
local jobtap = require "jobtap"
local conf = jobtap.conf

local replace = {}
for _, q in ipairs (conf["replace-queues"] or {}) do replace[q] = true end

jobtap.on ("job.validate", function (job)
    local updates = {}
    local q = conf["default-queue"]
    if q and (job.queue == nil or replace[job.queue]) and job.queue ~= q then
        updates["attributes.system.queue"] = q
    end
    if job.bank == nil then
        local banks = conf["user-banks"] or {}
        local bank = banks[tostring (job.userid)] or conf["default-bank"]
        if bank then updates["attributes.system.bank"] = bank end
    end
    if next (updates) then
        job:update (updates)
        jobtap.log_debug ("defaults for user %d: queue=%s bank=%s",
                          job.userid,
                          tostring (updates["attributes.system.queue"]),
                          tostring (updates["attributes.system.bank"]))
    end
end)
