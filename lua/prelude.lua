-- Run in every policy state before the script: logging helpers, the
-- computed job fields and text-only chunk loading.
local jobtap = require "jobtap"
local fmt = string.format

local function logger (level)
    return function (f, ...)
        local msg
        if select ("#", ...) > 0 then
            msg = fmt (f, ...)
        else
            msg = tostring (f)
        end
        jobtap._log (level, msg)
    end
end

-- Slurm's levels: error, warning and notice/info/verbose/debug.
jobtap.log_error = logger (jobtap.LOG_ERR)
jobtap.log_warning = logger (jobtap.LOG_WARNING)
jobtap.log_notice = logger (jobtap.LOG_NOTICE)
jobtap.log_info = logger (jobtap.LOG_INFO)
jobtap.log_verbose = logger (jobtap.LOG_DEBUG)
jobtap.log_debug = logger (jobtap.LOG_DEBUG)

-- Binary chunks can crash the VM: text only.
local _load, _loadfile = load, loadfile
load = function (chunk, name, mode, env)
    return _load (chunk, name, "t", env or _ENV)
end
loadfile = function (file, mode, env)
    return _loadfile (file, "t", env or _ENV)
end
dofile = function (file)
    local f, err = loadfile (file)
    if not f then error (err, 2) end
    return f ()
end

-- Computed job fields: job.<name> calls fields.<name>(job) once.  They
-- read single jobspec nodes (jget), not the whole job.jobspec table.
local fields = jobtap._fields
local jget = jobtap._jobspec_get
jobtap._fields = nil
jobtap._jobspec_get = nil

local function system (job, key)
    return jget (job, "attributes", "system", key)
end

-- node count, slot count, slot table of a jobspec
local function shape (job)
    local r = jget (job, "resources", 1)
    if type (r) ~= "table" then return 0, 0, nil end
    if r.type == "node" then
        local slot = r.with and r.with[1]
        local per = slot and slot.count or 1
        return r.count or 1, (r.count or 1) * per, slot
    end
    if r.type == "slot" then return 0, r.count or 1, r end
    return 0, 0, nil
end

local function per_slot (slot, kind)
    for _, w in ipairs (slot and slot.with or {}) do
        if w.type == kind then return w.count or 1 end
    end
    return 0
end

fields.nnodes = function (job) return (shape (job)) end
fields.nslots = function (job) local _, n = shape (job); return n end
fields.ncores = function (job)
    local _, n, slot = shape (job)
    return n * per_slot (slot, "core")
end
fields.ngpus = function (job)
    local _, n, slot = shape (job)
    return n * per_slot (slot, "gpu")
end
fields.ntasks = function (job)
    local c = jget (job, "tasks", 1, "count")
    if type (c) ~= "table" then c = {} end
    if c.total then return c.total end
    local _, n = shape (job)
    return n * (c.per_slot or 1)
end
-- duration, queue, bank, project, cwd and name are single jobspec
-- scalars, read in C (jobtap-lua.c, spec_fields).
fields.dependencies = function (job)
    return system (job, "dependencies") or jobtap.array ()
end
fields.slurm = function (job) return system (job, "slurm") or {} end
