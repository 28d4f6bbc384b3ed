-- max-running.lua: at most N running jobs per user.
--
--   { load = "max-running.lua", conf = { max-running = 2,
--                                        users = { "1000" = 5 } } }
--
-- A user's jobs beyond the limit wait in DEPEND with the jobtap
-- dependency "max-running-jobs" (squeue shows "jobtap: max-running-jobs",
-- then "; also held by its user" or "; also waits on its Slurm
-- dependency" if that holds the job too) and are released oldest first
-- as that user's jobs end.  A job counts from the moment it is released
-- until it ends, so at most N are ever eligible to run at once.  Each
-- task of a job array is a job here (docs/admin.md, "Job arrays"): an
-- array runs at most N tasks at once, and shares the limit with the
-- user's other jobs; tasks wait and are released oldest first (by id:
-- an array's tasks in order).  Under
-- Slurm the end of a job is seen at the adapter's periodic sweep
-- ([slurm-jobtap] reprioritize-period).
local jobtap = require "jobtap"
local DEP = "max-running-jobs"

-- jobtap.state survives a reload of this file
local S = jobtap.state
S.active = S.active or {}    -- uid -> number of admitted jobs
S.waiting = S.waiting or {}  -- uid -> array of waiting job ids, oldest first

local function limit (uid)
    local users = jobtap.conf.users or {}
    return users[tostring (uid)] or jobtap.conf["max-running"] or 1
end

local function key (uid) return tostring (uid) end

local function admit (job)
    local k = key (job.userid)
    S.active[k] = (S.active[k] or 0) + 1
    job.data.admitted = true
end

jobtap.on ("job.new", function (job)
    -- jobs already past DEPEND when the policy (re)loads, or slurmctld
    -- restarts, count as admitted; after a restart a job still in DEPEND
    -- waits again (job.state.depend is not called twice, as in Flux)
    local st = job.state
    if st == "PRIORITY" or st == "SCHED" or st == "RUN" then
        admit (job)
    elseif st == "DEPEND" and not job.data.waiting then
        local k = key (job.userid)
        S.waiting[k] = S.waiting[k] or {}
        local q, at = S.waiting[k], #S.waiting[k] + 1
        for i, id in ipairs (q) do
            if id > job.id then at = i break end
        end
        table.insert (q, at, job.id)
        job.data.waiting = true
    end
end)

jobtap.on ("job.state.depend", function (job)
    local k = key (job.userid)
    if (S.active[k] or 0) < limit (job.userid) then
        admit (job)
        return
    end
    S.waiting[k] = S.waiting[k] or {}
    table.insert (S.waiting[k], job.id)
    job.data.waiting = true
    job:add_dependency (DEP)
    jobtap.log_info ("job %d of user %d waits: %d of the user's jobs are "
                     .. "admitted (released to run, or running)", job.id,
                     job.userid, S.active[k])
end)

-- release the user's oldest waiting jobs while there is room
local function release (uid)
    local k = key (uid)
    local q = S.waiting[k] or {}
    while #q > 0 and (S.active[k] or 0) < limit (uid) do
        local id = table.remove (q, 1)
        S.active[k] = (S.active[k] or 0) + 1
        if not jobtap.dependency_remove (id, DEP) then
            S.active[k] = S.active[k] - 1 -- gone meanwhile
        end
    end
end

local function ended (job)
    local k = key (job.userid)
    if job.data.admitted then
        job.data.admitted = false
        S.active[k] = math.max ((S.active[k] or 1) - 1, 0)
        release (job.userid)
    elseif job.data.waiting then
        -- canceled while waiting: forget it
        local q = S.waiting[k] or {}
        for i, id in ipairs (q) do
            if id == job.id then table.remove (q, i) break end
        end
    end
    job.data.waiting = false
end

jobtap.on ("job.state.cleanup", ended)
jobtap.on ("job.state.inactive", ended)

-- a released job's data says it is admitted
jobtap.on ("job.state.priority", function (job)
    if job.data.waiting then
        job.data.waiting = false
        job.data.admitted = true
    end
end)
