-- runaway.lua: a policy whose job.priority.get never ends, so every call
-- runs into the instruction limit: the Lua side of bench/runaway.sh.
local jobtap = require "jobtap"

jobtap.on ("job.priority.get", function (job)
    local n = 0
    while true do n = n + 1 end
end)
